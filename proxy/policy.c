// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The dbus-daemon XML configuration and policy (Documentation/policy.md). See
 * policy.h and Documentation/policy.md.
 *
 * Every file is parsed into a policy of its own and merged into the
 * including one at the point of inclusion, so the rules keep the order in
 * which dbus-daemon sees them, and a file of an <includedir> that fails to
 * parse contributes nothing (dbus-daemon logs and skips it), while any
 * other error fails the whole load.
 */

#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <expat.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"

#define POLICY_FILE_MAX         (1024 * 1024)   /* bytes per configuration file */
#define POLICY_INCLUDE_DEPTH    16              /* nested <include>/<includedir> levels */
#define POLICY_FILES_MAX        4096            /* files read in one load */
#define POLICY_TEXT_MAX         4096            /* text content of one element */
#define POLICY_ELEM_DEPTH       8               /* the format nests 3 deep at most */
#define POLICY_MAX_FDS          16              /* dbus-daemon's DBUS_MAXIMUM_MESSAGE_UNIX_FDS */

enum rule_kind {
        RULE_USER,              /* connect: user= */
        RULE_GROUP,             /* connect: group= */
        RULE_OWN,
        RULE_SEND,
        RULE_RECEIVE,
};

enum tristate { TRI_ANY = -1, TRI_FALSE = 0, TRI_TRUE = 1 };

struct rule {
        enum rule_kind kind;
        bool allow;
        bool any_id;            /* user="*" / group="*" */
        uint32_t id;            /* uid or gid of a connect rule */
        char *name;             /* own, send_destination, receive_sender; NULL = any */
        bool prefix;            /* own_prefix, send_destination_prefix */
        char *path, *interface, *member, *error;        /* NULL = any */
        uint8_t type;           /* 0 = any */
        bool requested_reply;
        bool eavesdrop;
        enum tristate broadcast;
        unsigned int min_fds, max_fds;
};

struct rule_list {
        struct rule *v;
        size_t n, cap;
};

struct keyed_list {
        uint32_t id;
        struct rule_list rules;
};

struct keyed_lists {
        struct keyed_list *v;
        size_t n, cap;
};

struct proxy_policy {
        struct rule_list def, mandatory, console_yes, console_no;
        struct keyed_lists users, groups;
        char **servicedirs;     /* NULL-terminated */
        size_t n_servicedirs;
        bool has_connect_rules; /* a user=/group= rule in default or mandatory */
};

/* ------------------------------------------------------------------ */
/* containers */

static void rule_clear(struct rule *r)
{
        free(r->name);
        free(r->path);
        free(r->interface);
        free(r->member);
        free(r->error);
}

static void rule_list_clear(struct rule_list *l)
{
        for (size_t i = 0; i < l->n; ++i)
                rule_clear(&l->v[i]);
        free(l->v);
        *l = (struct rule_list){ 0 };
}

static void keyed_lists_clear(struct keyed_lists *k)
{
        for (size_t i = 0; i < k->n; ++i)
                rule_list_clear(&k->v[i].rules);
        free(k->v);
        *k = (struct keyed_lists){ 0 };
}

void proxy_policy_free(struct proxy_policy *p)
{
        if (!p)
                return;
        rule_list_clear(&p->def);
        rule_list_clear(&p->mandatory);
        rule_list_clear(&p->console_yes);
        rule_list_clear(&p->console_no);
        keyed_lists_clear(&p->users);
        keyed_lists_clear(&p->groups);
        for (size_t i = 0; i < p->n_servicedirs; ++i)
                free(p->servicedirs[i]);
        free(p->servicedirs);
        free(p);
}

static struct proxy_policy *policy_new(void)
{
        struct proxy_policy *p = calloc(1, sizeof(*p));

        if (!p)
                return NULL;
        p->servicedirs = calloc(1, sizeof(char *));
        if (!p->servicedirs) {
                free(p);
                return NULL;
        }
        return p;
}

/* moves *r into the list (r is cleared on success) */
static int rule_list_push(struct rule_list *l, struct rule *r)
{
        if (l->n == l->cap) {
                size_t cap = l->cap ? 2 * l->cap : 8;
                struct rule *v = reallocarray(l->v, cap, sizeof(*v));

                if (!v)
                        return -ENOMEM;
                l->v = v;
                l->cap = cap;
        }
        l->v[l->n++] = *r;
        memset(r, 0, sizeof(*r));
        return 0;
}

static const struct rule_list *keyed_find(const struct keyed_lists *k, uint32_t id)
{
        for (size_t i = 0; i < k->n; ++i)
                if (k->v[i].id == id)
                        return &k->v[i].rules;
        return NULL;
}

static struct rule_list *keyed_get(struct keyed_lists *k, uint32_t id)
{
        for (size_t i = 0; i < k->n; ++i)
                if (k->v[i].id == id)
                        return &k->v[i].rules;
        if (k->n == k->cap) {
                size_t cap = k->cap ? 2 * k->cap : 4;
                struct keyed_list *v = reallocarray(k->v, cap, sizeof(*v));

                if (!v)
                        return NULL;
                k->v = v;
                k->cap = cap;
        }
        k->v[k->n] = (struct keyed_list){ .id = id };
        return &k->v[k->n++].rules;
}

/* takes ownership of dir */
static int servicedir_add(struct proxy_policy *p, char *dir)
{
        char **v;

        for (size_t i = 0; i < p->n_servicedirs; ++i) {
                if (strcmp(p->servicedirs[i], dir) == 0) {
                        free(dir);
                        return 0;
                }
        }
        v = reallocarray(p->servicedirs, p->n_servicedirs + 2, sizeof(char *));
        if (!v) {
                free(dir);
                return -ENOMEM;
        }
        p->servicedirs = v;
        v[p->n_servicedirs++] = dir;
        v[p->n_servicedirs] = NULL;
        return 0;
}

static int rule_list_merge(struct rule_list *dst, struct rule_list *src)
{
        for (size_t i = 0; i < src->n; ++i)
                if (rule_list_push(dst, &src->v[i]) < 0)
                        return -ENOMEM;
        src->n = 0;
        return 0;
}

static int keyed_merge(struct keyed_lists *dst, struct keyed_lists *src)
{
        for (size_t i = 0; i < src->n; ++i) {
                struct rule_list *l = keyed_get(dst, src->v[i].id);

                if (!l || rule_list_merge(l, &src->v[i].rules) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* appends everything of src to dst; src keeps only what was not moved */
static int policy_merge(struct proxy_policy *dst, struct proxy_policy *src)
{
        if (rule_list_merge(&dst->def, &src->def) < 0 ||
            rule_list_merge(&dst->mandatory, &src->mandatory) < 0 ||
            rule_list_merge(&dst->console_yes, &src->console_yes) < 0 ||
            rule_list_merge(&dst->console_no, &src->console_no) < 0 ||
            keyed_merge(&dst->users, &src->users) < 0 ||
            keyed_merge(&dst->groups, &src->groups) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < src->n_servicedirs; ++i) {
                char *d = src->servicedirs[i];

                src->servicedirs[i] = NULL;
                if (servicedir_add(dst, d) < 0)
                        return -ENOMEM;
        }
        src->n_servicedirs = 0;
        dst->has_connect_rules |= src->has_connect_rules;
        return 0;
}

/* ------------------------------------------------------------------ */
/* loading */

struct loader {
        char *err;
        size_t err_size;
        int error;                      /* first -errno, 0 while all is well */
        struct {
                dev_t dev;
                ino_t ino;
        } stack[POLICY_INCLUDE_DEPTH + 1];
        unsigned int depth;             /* files being parsed */
        unsigned int files;             /* files read so far */
};

enum elem {
        EL_BUSCONFIG,
        EL_POLICY,
        EL_RULE,                /* allow, deny */
        EL_INCLUDE,
        EL_INCLUDEDIR,
        EL_SERVICEDIR,
        EL_STD_SYSTEM,
        EL_STD_SESSION,
        EL_IGNORED,             /* accepted and ignored, text allowed */
        EL_SELINUX,
        EL_ASSOCIATE,
};

enum block {
        BLOCK_IGNORED,          /* unknown user or group: rules checked, then dropped */
        BLOCK_DEFAULT,
        BLOCK_MANDATORY,
        BLOCK_USER,
        BLOCK_GROUP,
        BLOCK_CONSOLE_YES,
        BLOCK_CONSOLE_NO,
};

struct file_ctx {
        struct loader *ld;
        struct proxy_policy *p;         /* this file's rules */
        const char *file;
        char *dir;
        XML_Parser parser;
        enum elem stack[POLICY_ELEM_DEPTH];
        unsigned int depth;
        enum block block;
        uint32_t block_id;
        char text[POLICY_TEXT_MAX + 1];
        size_t text_len;
        bool include_ignore_missing, include_skip;
        bool failed;
};

static int load_file(struct loader *ld, const char *path, struct proxy_policy *p);

static void set_error(struct loader *ld, int error, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void set_error(struct loader *ld, int error, const char *fmt, ...)
{
        va_list ap;

        if (ld->error)
                return;
        ld->error = error;
        if (ld->err && ld->err_size) {
                va_start(ap, fmt);
                vsnprintf(ld->err, ld->err_size, fmt, ap);
                va_end(ap);
        }
}

static unsigned long ctx_line(struct file_ctx *c)
{
        return (unsigned long)XML_GetCurrentLineNumber(c->parser);
}

static void ctx_fail(struct file_ctx *c, int error, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void ctx_fail(struct file_ctx *c, int error, const char *fmt, ...)
{
        char msg[512];
        va_list ap;

        if (c->failed)
                return;
        c->failed = true;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        set_error(c->ld, error, "%s:%lu: %s", c->file, ctx_line(c), msg);
        XML_StopParser(c->parser, XML_FALSE);
}

static void ctx_warn(struct file_ctx *c, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
static void ctx_warn(struct file_ctx *c, const char *fmt, ...)
{
        va_list ap;

        fprintf(stderr, "kdbus-proxy: %s:%lu: warning: ", c->file, ctx_line(c));
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
}

static char *path_join(const char *dir, const char *name)
{
        char *s;

        if (name[0] == '/' || !dir)
                return strdup(name);
        if (asprintf(&s, "%s/%s", dir, name) < 0)
                return NULL;
        return s;
}

static bool parse_u32(const char *s, uint32_t *ret)
{
        unsigned long v;
        char *end;

        if (!*s || !isdigit((unsigned char)*s))
                return false;
        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || *end || v > UINT32_MAX - 1)
                return false;
        *ret = (uint32_t)v;
        return true;
}

/*
 * One getpw*_r() or getgr*_r() call into @buf: 0 and *out set when found,
 * ERANGE when @buf is too small, another errno (ENOENT: no such entry).
 */
typedef int (*id_lookup_fn)(const char *s, bool numeric, uint32_t id,
                            char *buf, size_t size, uint32_t *out);

static int lookup_user(const char *s, bool numeric, uint32_t id,
                       char *buf, size_t size, uint32_t *out)
{
        struct passwd pw, *res = NULL;
        int r;

        r = numeric ? getpwuid_r(id, &pw, buf, size, &res) : getpwnam_r(s, &pw, buf, size, &res);
        if (r == 0 && !res)
                return ENOENT;
        if (r == 0)
                *out = res->pw_uid;
        return r;
}

static int lookup_group(const char *s, bool numeric, uint32_t id,
                        char *buf, size_t size, uint32_t *out)
{
        struct group gr, *res = NULL;
        int r;

        r = numeric ? getgrgid_r(id, &gr, buf, size, &res) : getgrnam_r(s, &gr, buf, size, &res);
        if (r == 0 && !res)
                return ENOENT;
        if (r == 0)
                *out = res->gr_gid;
        return r;
}

/*
 * A name or a number through @lookup, growing the buffer from @size up to
 * @max while the entry does not fit (groups with many members need more);
 * false if unknown. Like dbus-daemon, a number must name an existing entry.
 */
static bool resolve_id(const char *s, uint32_t *id, id_lookup_fn lookup, size_t size, size_t max)
{
        bool numeric = parse_u32(s, id);
        uint32_t found;
        char *buf;
        int r;

        for (;;) {
                buf = malloc(size);
                if (!buf)
                        return false;
                r = lookup(s, numeric, *id, buf, size, &found);
                free(buf);
                if (r != ERANGE || size >= max)
                        break;
                size *= 2;
        }
        if (r != 0)
                return false;
        *id = found;
        return true;
}

/* a user name or a numeric uid; false if unknown */
static bool resolve_user(const char *s, uint32_t *uid)
{
        return resolve_id(s, uid, lookup_user, 4096, 1024 * 1024);
}

/* a group name or a numeric gid; false if unknown */
static bool resolve_group(const char *s, uint32_t *gid)
{
        return resolve_id(s, gid, lookup_group, 16384, 16 * 1024 * 1024);
}

static bool is_wildcard(const char *s)
{
        return s && strcmp(s, "*") == 0;
}

static int parse_bool(const char *s, bool *ret)
{
        if (strcmp(s, "true") == 0)
                *ret = true;
        else if (strcmp(s, "false") == 0)
                *ret = false;
        else
                return -1;
        return 0;
}

static int parse_type(const char *s, uint8_t *ret)
{
        static const char *const names[] = { "method_call", "method_return", "error", "signal" };

        if (is_wildcard(s)) {
                *ret = 0;
                return 0;
        }
        for (unsigned int i = 0; i < 4; ++i) {
                if (strcmp(s, names[i]) == 0) {
                        *ret = (uint8_t)(i + 1);
                        return 0;
                }
        }
        return -1;
}

/* a strdup of an attribute value, "*" becomes NULL (any) */
static int dup_value(const char *s, char **ret)
{
        *ret = NULL;
        if (!s || is_wildcard(s))
                return 0;
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

enum attr {
        A_SEND_INTERFACE, A_SEND_MEMBER, A_SEND_ERROR, A_SEND_DESTINATION,
        A_SEND_DESTINATION_PREFIX, A_SEND_PATH, A_SEND_TYPE, A_SEND_REQUESTED_REPLY,
        A_SEND_BROADCAST,
        A_RECEIVE_INTERFACE, A_RECEIVE_MEMBER, A_RECEIVE_ERROR, A_RECEIVE_SENDER,
        A_RECEIVE_PATH, A_RECEIVE_TYPE, A_RECEIVE_REQUESTED_REPLY,
        A_OWN, A_OWN_PREFIX, A_USER, A_GROUP,
        A_EAVESDROP, A_LOG, A_MIN_FDS, A_MAX_FDS,
        A_COUNT,
        A_FIRST_SEND = A_SEND_INTERFACE, A_LAST_SEND = A_SEND_BROADCAST,
        A_FIRST_RECEIVE = A_RECEIVE_INTERFACE, A_LAST_RECEIVE = A_RECEIVE_REQUESTED_REPLY,
};

static const char *const attr_names[A_COUNT] = {
        [A_SEND_INTERFACE] = "send_interface",
        [A_SEND_MEMBER] = "send_member",
        [A_SEND_ERROR] = "send_error",
        [A_SEND_DESTINATION] = "send_destination",
        [A_SEND_DESTINATION_PREFIX] = "send_destination_prefix",
        [A_SEND_PATH] = "send_path",
        [A_SEND_TYPE] = "send_type",
        [A_SEND_REQUESTED_REPLY] = "send_requested_reply",
        [A_SEND_BROADCAST] = "send_broadcast",
        [A_RECEIVE_INTERFACE] = "receive_interface",
        [A_RECEIVE_MEMBER] = "receive_member",
        [A_RECEIVE_ERROR] = "receive_error",
        [A_RECEIVE_SENDER] = "receive_sender",
        [A_RECEIVE_PATH] = "receive_path",
        [A_RECEIVE_TYPE] = "receive_type",
        [A_RECEIVE_REQUESTED_REPLY] = "receive_requested_reply",
        [A_OWN] = "own",
        [A_OWN_PREFIX] = "own_prefix",
        [A_USER] = "user",
        [A_GROUP] = "group",
        [A_EAVESDROP] = "eavesdrop",
        [A_LOG] = "log",
        [A_MIN_FDS] = "min_fds",
        [A_MAX_FDS] = "max_fds",
};

static bool any_in(const char *const *a, enum attr first, enum attr last)
{
        for (unsigned int i = first; i <= last; ++i)
                if (a[i])
                        return true;
        return false;
}

static struct rule_list *block_list(struct file_ctx *c)
{
        switch (c->block) {
        case BLOCK_DEFAULT:
                return &c->p->def;
        case BLOCK_MANDATORY:
                return &c->p->mandatory;
        case BLOCK_CONSOLE_YES:
                return &c->p->console_yes;
        case BLOCK_CONSOLE_NO:
                return &c->p->console_no;
        case BLOCK_USER:
                return keyed_get(&c->p->users, c->block_id);
        case BLOCK_GROUP:
                return keyed_get(&c->p->groups, c->block_id);
        case BLOCK_IGNORED:
                break;
        }
        return NULL;
}

/* <allow>, <deny> inside <policy>; the checks of dbus-daemon's config-parser.c */
static void start_rule(struct file_ctx *c, const char *el, const XML_Char **atts)
{
        const char *a[A_COUNT] = { 0 };
        struct rule r = { .broadcast = TRI_ANY, .max_fds = POLICY_MAX_FDS };
        bool send, receive;
        unsigned int exclusive;
        struct rule_list *l;
        int e = 0;

        r.allow = strcmp(el, "allow") == 0;

        for (size_t i = 0; atts[i]; i += 2) {
                unsigned int k;

                for (k = 0; k < A_COUNT; ++k)
                        if (strcmp(atts[i], attr_names[k]) == 0)
                                break;
                if (k == A_COUNT) {
                        ctx_fail(c, -EINVAL, "attribute \"%s\" is invalid on <%s> element in this context",
                                 atts[i], el);
                        return;
                }
                a[k] = atts[i + 1];
        }
        /* dbus-daemon refuses these: not all messages have an interface */
        if ((a[A_SEND_MEMBER] && !a[A_SEND_INTERFACE] && !a[A_SEND_PATH]) ||
            (a[A_RECEIVE_MEMBER] && !a[A_RECEIVE_INTERFACE] && !a[A_RECEIVE_PATH])) {
                ctx_fail(c, -EINVAL, "on element <%s>, if you specify a member you must specify an interface or a path",
                         el);
                return;
        }

        send = any_in(a, A_FIRST_SEND, A_LAST_SEND);
        receive = any_in(a, A_FIRST_RECEIVE, A_LAST_RECEIVE);
        exclusive = !!a[A_OWN] + !!a[A_OWN_PREFIX] + !!a[A_USER] + !!a[A_GROUP];
        if ((a[A_SEND_INTERFACE] && a[A_SEND_ERROR]) ||
            (a[A_SEND_MEMBER] && a[A_SEND_ERROR]) ||
            (a[A_RECEIVE_INTERFACE] && a[A_RECEIVE_ERROR]) ||
            (a[A_RECEIVE_MEMBER] && a[A_RECEIVE_ERROR]) ||
            (a[A_SEND_DESTINATION] && a[A_SEND_DESTINATION_PREFIX]) ||
            (send && receive) || exclusive > 1 ||
            (exclusive && (send || receive || a[A_EAVESDROP]))) {
                ctx_fail(c, -EINVAL, "invalid combination of attributes on element <%s>", el);
                return;
        }

        if (a[A_USER] || a[A_GROUP]) {
                const char *v = a[A_USER] ? a[A_USER] : a[A_GROUP];

                r.kind = a[A_USER] ? RULE_USER : RULE_GROUP;
                if (is_wildcard(v)) {
                        r.any_id = true;
                } else if (!(a[A_USER] ? resolve_user(v, &r.id) : resolve_group(v, &r.id))) {
                        ctx_warn(c, "unknown %s \"%s\" on element <%s>, rule ignored",
                                 a[A_USER] ? "username" : "group", v, el);
                        return;
                }
        } else if (a[A_OWN] || a[A_OWN_PREFIX]) {
                r.kind = RULE_OWN;
                if (a[A_OWN]) {
                        e = dup_value(a[A_OWN], &r.name);
                } else {
                        r.prefix = true;
                        r.name = strdup(a[A_OWN_PREFIX]);
                        e = r.name ? 0 : -ENOMEM;
                }
        } else if (send || receive || a[A_EAVESDROP]) {
                const char *type = a[send ? A_SEND_TYPE : A_RECEIVE_TYPE];
                const char *rr = a[send ? A_SEND_REQUESTED_REPLY : A_RECEIVE_REQUESTED_REPLY];
                bool b;

                r.kind = send ? RULE_SEND : RULE_RECEIVE;
                /* allow rules default to requested replies only, deny rules to unrequested only */
                r.requested_reply = r.allow;
                if (type && parse_type(type, &r.type) < 0) {
                        ctx_fail(c, -EINVAL, "bad message type \"%s\"", type);
                        return;
                }
                if (rr) {
                        if (parse_bool(rr, &b) < 0) {
                                ctx_fail(c, -EINVAL, "%s_requested_reply attribute must have value \"true\" or \"false\"",
                                         send ? "send" : "receive");
                                return;
                        }
                        r.requested_reply = b;
                }
                if (a[A_EAVESDROP]) {
                        if (parse_bool(a[A_EAVESDROP], &b) < 0) {
                                ctx_fail(c, -EINVAL, "eavesdrop attribute must have value \"true\" or \"false\"");
                                return;
                        }
                        r.eavesdrop = b;
                }
                if (a[A_SEND_BROADCAST]) {
                        if (parse_bool(a[A_SEND_BROADCAST], &b) < 0) {
                                ctx_fail(c, -EINVAL, "send_broadcast attribute must have value \"true\" or \"false\"");
                                return;
                        }
                        r.broadcast = b ? TRI_TRUE : TRI_FALSE;
                }
                if (a[A_MIN_FDS] || a[A_MAX_FDS]) {
                        uint32_t v;

                        if (a[A_MIN_FDS]) {
                                if (!parse_u32(a[A_MIN_FDS], &v)) {
                                        ctx_fail(c, -EINVAL, "bad min_fds value \"%s\"", a[A_MIN_FDS]);
                                        return;
                                }
                                r.min_fds = v;
                        }
                        if (a[A_MAX_FDS]) {
                                if (!parse_u32(a[A_MAX_FDS], &v)) {
                                        ctx_fail(c, -EINVAL, "bad max_fds value \"%s\"", a[A_MAX_FDS]);
                                        return;
                                }
                                r.max_fds = v < POLICY_MAX_FDS ? v : POLICY_MAX_FDS;
                        }
                }
                if (send) {
                        if (a[A_SEND_DESTINATION_PREFIX]) {
                                r.prefix = true;
                                r.name = strdup(a[A_SEND_DESTINATION_PREFIX]);
                                e = r.name ? 0 : -ENOMEM;
                        } else {
                                e = dup_value(a[A_SEND_DESTINATION], &r.name);
                        }
                        if (!e)
                                e = dup_value(a[A_SEND_PATH], &r.path);
                        if (!e)
                                e = dup_value(a[A_SEND_INTERFACE], &r.interface);
                        if (!e)
                                e = dup_value(a[A_SEND_MEMBER], &r.member);
                        if (!e)
                                e = dup_value(a[A_SEND_ERROR], &r.error);
                } else {
                        e = dup_value(a[A_RECEIVE_SENDER], &r.name);
                        if (!e)
                                e = dup_value(a[A_RECEIVE_PATH], &r.path);
                        if (!e)
                                e = dup_value(a[A_RECEIVE_INTERFACE], &r.interface);
                        if (!e)
                                e = dup_value(a[A_RECEIVE_MEMBER], &r.member);
                        if (!e)
                                e = dup_value(a[A_RECEIVE_ERROR], &r.error);
                }
        } else {
                ctx_fail(c, -EINVAL, "element <%s> must have one or more attributes", el);
                return;
        }
        if (e < 0) {
                rule_clear(&r);
                ctx_fail(c, e, "out of memory");
                return;
        }

        if (c->block == BLOCK_IGNORED) {
                rule_clear(&r);
                return;
        }
        if ((r.kind == RULE_USER || r.kind == RULE_GROUP) &&
            (c->block == BLOCK_DEFAULT || c->block == BLOCK_MANDATORY))
                c->p->has_connect_rules = true;
        l = block_list(c);
        if (!l || rule_list_push(l, &r) < 0) {
                rule_clear(&r);
                ctx_fail(c, -ENOMEM, "out of memory");
        }
}

static void start_policy(struct file_ctx *c, const XML_Char **atts)
{
        const char *context = NULL, *user = NULL, *group = NULL, *console = NULL;

        for (size_t i = 0; atts[i]; i += 2) {
                if (strcmp(atts[i], "context") == 0)
                        context = atts[i + 1];
                else if (strcmp(atts[i], "user") == 0)
                        user = atts[i + 1];
                else if (strcmp(atts[i], "group") == 0)
                        group = atts[i + 1];
                else if (strcmp(atts[i], "at_console") == 0)
                        console = atts[i + 1];
                else {
                        ctx_fail(c, -EINVAL, "attribute \"%s\" is invalid on <policy> element in this context",
                                 atts[i]);
                        return;
                }
        }
        if (!!context + !!user + !!group + !!console != 1) {
                ctx_fail(c, -EINVAL,
                         "<policy> element must have exactly one of the attributes context, user, group, at_console");
                return;
        }
        c->block = BLOCK_IGNORED;
        if (context) {
                if (strcmp(context, "default") == 0)
                        c->block = BLOCK_DEFAULT;
                else if (strcmp(context, "mandatory") == 0)
                        c->block = BLOCK_MANDATORY;
                else
                        ctx_fail(c, -EINVAL, "context attribute on <policy> must have the value \"default\" or \"mandatory\", not \"%s\"",
                                 context);
        } else if (console) {
                bool b;

                if (parse_bool(console, &b) < 0)
                        ctx_fail(c, -EINVAL, "at_console attribute must have value \"true\" or \"false\"");
                else
                        c->block = b ? BLOCK_CONSOLE_YES : BLOCK_CONSOLE_NO;
        } else if (user) {
                /* dbus-daemon has no wildcard here: "*" is an unknown user too */
                if (resolve_user(user, &c->block_id))
                        c->block = BLOCK_USER;
                else
                        ctx_warn(c, "unknown username \"%s\" in <policy>, its rules are ignored", user);
        } else {
                if (resolve_group(group, &c->block_id))
                        c->block = BLOCK_GROUP;
                else
                        ctx_warn(c, "unknown group \"%s\" in <policy>, its rules are ignored", group);
        }
}

/* only the listed attributes, each "yes" or "no" (dbus-daemon's <include>, <includedir>, <servicedir>) */
static bool check_yes_no_attrs(struct file_ctx *c, const char *el, const XML_Char **atts,
                               const char *const *allowed)
{
        for (size_t i = 0; atts[i]; i += 2) {
                const char *const *a;

                for (a = allowed; *a; ++a)
                        if (strcmp(atts[i], *a) == 0)
                                break;
                if (!*a) {
                        ctx_fail(c, -EINVAL, "attribute \"%s\" is invalid on <%s> element in this context",
                                 atts[i], el);
                        return false;
                }
                if (strcmp(atts[i + 1], "yes") != 0 && strcmp(atts[i + 1], "no") != 0) {
                        ctx_fail(c, -EINVAL, "%s attribute must have value \"yes\" or \"no\"", atts[i]);
                        return false;
                }
        }
        return true;
}

static bool attr_true(const XML_Char **atts, const char *name)
{
        for (size_t i = 0; atts[i]; i += 2)
                if (strcmp(atts[i], name) == 0)
                        return strcmp(atts[i + 1], "yes") == 0;
        return false;
}

static void XMLCALL on_start(void *data, const XML_Char *el, const XML_Char **atts)
{
        struct file_ctx *c = data;
        enum elem parent = c->depth ? c->stack[c->depth - 1] : EL_BUSCONFIG;
        enum elem e;

        if (c->failed)
                return;
        if (c->depth >= POLICY_ELEM_DEPTH) {
                ctx_fail(c, -EINVAL, "elements nested too deeply");
                return;
        }
        c->text_len = 0;

        if (c->depth == 0) {
                if (strcmp(el, "busconfig") != 0) {
                        ctx_fail(c, -EINVAL, "unknown element <%s> at root of configuration file", el);
                        return;
                }
                e = EL_BUSCONFIG;
        } else if (parent == EL_BUSCONFIG) {
                static const char *const ignored[] = {
                        "user", "type", "fork", "keep_umask", "syslog", "pidfile", "listen",
                        "auth", "servicehelper", "allow_anonymous", "apparmor", "limit",
                };

                e = EL_IGNORED;
                if (strcmp(el, "policy") == 0) {
                        e = EL_POLICY;
                        start_policy(c, atts);
                } else if (strcmp(el, "include") == 0) {
                        static const char *const include_attrs[] = {
                                "ignore_missing", "if_selinux_enabled", "selinux_root_relative", NULL,
                        };

                        if (!check_yes_no_attrs(c, el, atts, include_attrs))
                                return;
                        e = EL_INCLUDE;
                        c->include_ignore_missing = attr_true(atts, "ignore_missing");
                        /* no SELinux support: behave as dbus-daemon with SELinux disabled */
                        c->include_skip = attr_true(atts, "if_selinux_enabled");
                } else if (strcmp(el, "includedir") == 0 || strcmp(el, "servicedir") == 0) {
                        static const char *const no_attrs[] = { NULL };

                        if (!check_yes_no_attrs(c, el, atts, no_attrs))
                                return;
                        e = strcmp(el, "includedir") == 0 ? EL_INCLUDEDIR : EL_SERVICEDIR;
                } else if (strcmp(el, "standard_system_servicedirs") == 0) {
                        e = EL_STD_SYSTEM;
                } else if (strcmp(el, "standard_session_servicedirs") == 0) {
                        e = EL_STD_SESSION;
                } else if (strcmp(el, "selinux") == 0) {
                        e = EL_SELINUX;
                } else {
                        size_t i;

                        for (i = 0; i < sizeof(ignored) / sizeof(ignored[0]); ++i)
                                if (strcmp(el, ignored[i]) == 0)
                                        break;
                        if (i == sizeof(ignored) / sizeof(ignored[0])) {
                                ctx_fail(c, -EINVAL, "element <%s> not allowed inside <busconfig> in configuration file",
                                         el);
                                return;
                        }
                }
        } else if (parent == EL_POLICY) {
                if (strcmp(el, "allow") != 0 && strcmp(el, "deny") != 0) {
                        ctx_fail(c, -EINVAL, "element <%s> not allowed inside <policy> in configuration file", el);
                        return;
                }
                e = EL_RULE;
                start_rule(c, el, atts);
        } else if (parent == EL_SELINUX && strcmp(el, "associate") == 0) {
                e = EL_ASSOCIATE;
        } else {
                ctx_fail(c, -EINVAL, "element <%s> not allowed in this context in configuration file", el);
                return;
        }
        c->stack[c->depth++] = e;
}

static void XMLCALL on_text(void *data, const XML_Char *s, int len)
{
        struct file_ctx *c = data;
        enum elem e;

        if (c->failed || c->depth == 0 || len <= 0)
                return;
        e = c->stack[c->depth - 1];
        if (e == EL_INCLUDE || e == EL_INCLUDEDIR || e == EL_SERVICEDIR) {
                if (c->text_len + (size_t)len > POLICY_TEXT_MAX) {
                        ctx_fail(c, -EINVAL, "text content too long");
                        return;
                }
                memcpy(c->text + c->text_len, s, (size_t)len);
                c->text_len += (size_t)len;
                return;
        }
        if (e == EL_IGNORED)
                return;
        for (int i = 0; i < len; ++i) {
                if (!isspace((unsigned char)s[i])) {
                        ctx_fail(c, -EINVAL, "no text allowed inside this element");
                        return;
                }
        }
}

/* the trimmed text of the element just closed; NULL (and failed) if empty */
static const char *ctx_text(struct file_ctx *c, const char *el)
{
        char *s = c->text;
        size_t n = c->text_len;

        while (n && isspace((unsigned char)*s)) {
                ++s;
                --n;
        }
        while (n && isspace((unsigned char)s[n - 1]))
                --n;
        s[n] = '\0';
        if (!n || memchr(s, '\0', n)) {
                ctx_fail(c, -EINVAL, "<%s> needs a file or directory name", el);
                return NULL;
        }
        return s;
}

static int add_env_dir(struct proxy_policy *p, const char *base, const char *suffix)
{
        char *d;

        if (!base || base[0] != '/')
                return 0;
        if (asprintf(&d, "%s%s", base, suffix) < 0)
                return -ENOMEM;
        return servicedir_add(p, d);
}

/* dbus-daemon's _dbus_get_standard_session_servicedirs */
static int add_session_dirs(struct proxy_policy *p)
{
        const char *home = getenv("XDG_DATA_HOME");
        const char *dirs = getenv("XDG_DATA_DIRS");
        char *copy, *tok, *save = NULL;
        int r;

        r = add_env_dir(p, getenv("XDG_RUNTIME_DIR"), "/dbus-1/services");
        if (!r) {
                if (home && home[0] == '/')
                        r = add_env_dir(p, home, "/dbus-1/services");
                else
                        r = add_env_dir(p, getenv("HOME"), "/.local/share/dbus-1/services");
        }
        if (r)
                return r;
        copy = strdup(dirs && *dirs ? dirs : "/usr/local/share:/usr/share");
        if (!copy)
                return -ENOMEM;
        for (tok = strtok_r(copy, ":", &save); tok && !r; tok = strtok_r(NULL, ":", &save)) {
                size_t n = strlen(tok);

                while (n > 1 && tok[n - 1] == '/')
                        tok[--n] = '\0';
                r = add_env_dir(p, tok, "/dbus-1/services");
        }
        free(copy);
        if (!r)
                r = add_env_dir(p, "/usr/share", "/dbus-1/services");
        return r;
}

static int add_system_dirs(struct proxy_policy *p)
{
        static const char *const dirs[] = {
                "/usr/local/share/dbus-1/system-services",
                "/usr/share/dbus-1/system-services",
                "/lib/dbus-1/system-services",
        };

        for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); ++i) {
                char *d = strdup(dirs[i]);

                if (!d || servicedir_add(p, d) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int name_cmp(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* *.conf of a directory, sorted by name; a file that fails is skipped with a warning */
static void include_dir(struct file_ctx *c, const char *dirname)
{
        char *dir = path_join(c->dir, dirname);
        char **names = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;
        DIR *d;

        if (!dir) {
                ctx_fail(c, -ENOMEM, "out of memory");
                return;
        }
        d = opendir(dir);
        if (!d) {
                if (errno != ENOENT && errno != ENOTDIR)
                        ctx_fail(c, -errno, "cannot open directory %s: %s", dir, strerror(errno));
                free(dir);
                return;
        }
        while ((de = readdir(d))) {
                size_t len = strlen(de->d_name);

                if (len <= 5 || strcmp(de->d_name + len - 5, ".conf") != 0)
                        continue;
                if (n == cap) {
                        size_t ncap = cap ? 2 * cap : 16;
                        char **v = reallocarray(names, ncap, sizeof(char *));

                        if (!v)
                                goto oom;
                        names = v;
                        cap = ncap;
                }
                names[n] = strdup(de->d_name);
                if (!names[n])
                        goto oom;
                ++n;
        }
        closedir(d);
        d = NULL;
        if (n)
                qsort(names, n, sizeof(char *), name_cmp);

        for (size_t i = 0; i < n && !c->failed; ++i) {
                char *file = path_join(dir, names[i]);
                struct proxy_policy *sub = policy_new();
                int r;

                if (!file || !sub) {
                        free(file);
                        proxy_policy_free(sub);
                        goto oom;
                }
                r = load_file(c->ld, file, sub);
                if (r == -ENOMEM) {
                        ctx_fail(c, r, "out of memory");
                } else if (r < 0) {
                        /* dbus-daemon: "Encountered error ... while parsing ...", and goes on */
                        fprintf(stderr, "kdbus-proxy: warning: %s, file skipped\n", c->ld->err ? c->ld->err : file);
                        c->ld->error = 0;
                        if (c->ld->err && c->ld->err_size)
                                c->ld->err[0] = '\0';
                } else if (policy_merge(c->p, sub) < 0) {
                        ctx_fail(c, -ENOMEM, "out of memory");
                }
                proxy_policy_free(sub);
                free(file);
        }
        goto out;
oom:
        ctx_fail(c, -ENOMEM, "out of memory");
out:
        if (d)
                closedir(d);
        for (size_t i = 0; i < n; ++i)
                free(names[i]);
        free(names);
        free(dir);
}

static void include_file(struct file_ctx *c, const char *name)
{
        char *file = path_join(c->dir, name);
        struct proxy_policy *sub = policy_new();
        int r;

        if (!file || !sub) {
                ctx_fail(c, -ENOMEM, "out of memory");
                goto out;
        }
        if (c->include_ignore_missing && access(file, F_OK) < 0 && errno == ENOENT)
                goto out;
        r = load_file(c->ld, file, sub);
        if (r < 0) {
                /* the message is already set; mark this level failed too */
                c->failed = true;
                XML_StopParser(c->parser, XML_FALSE);
        } else if (policy_merge(c->p, sub) < 0) {
                ctx_fail(c, -ENOMEM, "out of memory");
        }
out:
        proxy_policy_free(sub);
        free(file);
}

static void XMLCALL on_end(void *data, const XML_Char *el)
{
        struct file_ctx *c = data;
        const char *s;
        enum elem e;
        int r = 0;

        if (c->failed || c->depth == 0)
                return;
        e = c->stack[--c->depth];
        switch (e) {
        case EL_INCLUDE:
                if ((s = ctx_text(c, el)) && !c->include_skip)
                        include_file(c, s);
                break;
        case EL_INCLUDEDIR:
                if ((s = ctx_text(c, el)))
                        include_dir(c, s);
                break;
        case EL_SERVICEDIR:
                if ((s = ctx_text(c, el))) {
                        char *d = path_join(c->dir, s);

                        r = d ? servicedir_add(c->p, d) : -ENOMEM;
                }
                break;
        case EL_STD_SYSTEM:
                r = add_system_dirs(c->p);
                break;
        case EL_STD_SESSION:
                r = add_session_dirs(c->p);
                break;
        default:
                break;
        }
        if (r < 0)
                ctx_fail(c, r, "out of memory");
        c->text_len = 0;
}

static void XMLCALL on_entity_decl(void *data, const XML_Char *name, int is_param,
                                   const XML_Char *value, int value_len, const XML_Char *base,
                                   const XML_Char *system_id, const XML_Char *public_id,
                                   const XML_Char *notation)
{
        struct file_ctx *c = data;

        (void)is_param;
        (void)value;
        (void)value_len;
        (void)base;
        (void)system_id;
        (void)public_id;
        (void)notation;
        ctx_fail(c, -EINVAL, "entity declarations are not allowed (\"%s\")", name);
}

static int read_file(struct loader *ld, const char *path, char **ret, size_t *ret_len)
{
        struct stat st;
        char *buf = NULL;
        size_t len = 0, cap;
        int fd, r = 0;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                r = -errno;
                set_error(ld, r, "%s: %s", path, strerror(-r));
                return r;
        }
        if (fstat(fd, &st) < 0) {
                r = -errno;
                set_error(ld, r, "%s: %s", path, strerror(-r));
                goto out;
        }
        if (!S_ISREG(st.st_mode)) {
                r = -EINVAL;
                set_error(ld, r, "%s: not a regular file", path);
                goto out;
        }
        if (st.st_size > POLICY_FILE_MAX) {
                r = -EFBIG;
                set_error(ld, r, "%s: larger than %d bytes", path, POLICY_FILE_MAX);
                goto out;
        }
        for (unsigned int i = 0; i < ld->depth; ++i) {
                if (ld->stack[i].dev == st.st_dev && ld->stack[i].ino == st.st_ino) {
                        r = -ELOOP;
                        set_error(ld, r, "%s: circular inclusion of the file", path);
                        goto out;
                }
        }
        if (ld->depth >= POLICY_INCLUDE_DEPTH) {
                r = -ELOOP;
                set_error(ld, r, "%s: includes nested deeper than %d", path, POLICY_INCLUDE_DEPTH);
                goto out;
        }
        ld->stack[ld->depth].dev = st.st_dev;
        ld->stack[ld->depth].ino = st.st_ino;

        cap = (size_t)st.st_size + 1;
        buf = malloc(cap);
        if (!buf) {
                r = -ENOMEM;
                set_error(ld, r, "out of memory");
                goto out;
        }
        for (;;) {
                ssize_t n;

                if (len == cap) {
                        /* the file grew since fstat() */
                        size_t ncap = cap * 2 < POLICY_FILE_MAX + 1 ? cap * 2 : POLICY_FILE_MAX + 1;
                        char *nbuf;

                        if (ncap <= cap) {
                                r = -EFBIG;
                                set_error(ld, r, "%s: larger than %d bytes", path, POLICY_FILE_MAX);
                                goto out;
                        }
                        nbuf = realloc(buf, ncap);
                        if (!nbuf) {
                                r = -ENOMEM;
                                set_error(ld, r, "out of memory");
                                goto out;
                        }
                        buf = nbuf;
                        cap = ncap;
                }
                n = read(fd, buf + len, cap - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        r = -errno;
                        set_error(ld, r, "%s: %s", path, strerror(-r));
                        goto out;
                }
                if (n == 0)
                        break;
                len += (size_t)n;
                if (len > POLICY_FILE_MAX) {
                        r = -EFBIG;
                        set_error(ld, r, "%s: larger than %d bytes", path, POLICY_FILE_MAX);
                        goto out;
                }
        }
        *ret = buf;
        *ret_len = len;
        buf = NULL;
out:
        free(buf);
        close(fd);
        return r;
}

/* parses path into p (a fresh policy) */
static int load_file(struct loader *ld, const char *path, struct proxy_policy *p)
{
        struct file_ctx *c = NULL;
        char *buf = NULL, *slash;
        size_t len = 0;
        int r;

        if (ld->files >= POLICY_FILES_MAX) {
                set_error(ld, -E2BIG, "%s: more than %d configuration files", path, POLICY_FILES_MAX);
                return -E2BIG;
        }
        ++ld->files;
        r = read_file(ld, path, &buf, &len);
        if (r < 0)
                return r;

        c = calloc(1, sizeof(*c));
        if (!c)
                goto oom;
        c->ld = ld;
        c->p = p;
        c->file = path;
        c->dir = strdup(path);
        if (!c->dir)
                goto oom;
        slash = strrchr(c->dir, '/');
        if (!slash) {
                free(c->dir);
                c->dir = NULL;          /* relative to the working directory */
        } else if (slash == c->dir) {
                slash[1] = '\0';
        } else {
                *slash = '\0';
        }
        c->parser = XML_ParserCreate(NULL);
        if (!c->parser)
                goto oom;
        XML_SetUserData(c->parser, c);
        XML_SetElementHandler(c->parser, on_start, on_end);
        XML_SetCharacterDataHandler(c->parser, on_text);
        XML_SetEntityDeclHandler(c->parser, on_entity_decl);

        ++ld->depth;
        if (XML_Parse(c->parser, buf, (int)len, XML_TRUE) == XML_STATUS_ERROR && !c->failed) {
                c->failed = true;
                set_error(ld, -EINVAL, "%s:%lu: %s", path, ctx_line(c),
                          XML_ErrorString(XML_GetErrorCode(c->parser)));
        }
        --ld->depth;
        if (!c->failed && len == 0) {
                c->failed = true;
                set_error(ld, -EINVAL, "%s: empty file", path);
        }
        r = c->failed ? (ld->error ? ld->error : -EINVAL) : 0;
        goto out;
oom:
        set_error(ld, -ENOMEM, "out of memory");
        r = -ENOMEM;
out:
        if (c) {
                if (c->parser)
                        XML_ParserFree(c->parser);
                free(c->dir);
                free(c);
        }
        free(buf);
        return r;
}

static int keyed_cmp(const void *a, const void *b)
{
        const struct keyed_list *x = a, *y = b;

        return x->id < y->id ? -1 : x->id > y->id;
}

int proxy_policy_load(struct proxy_policy **ret, const char *config_file, char *err, size_t err_size)
{
        struct loader ld = { .err = err, .err_size = err_size };
        struct proxy_policy *p;
        int r;

        if (err && err_size)
                err[0] = '\0';
        *ret = NULL;
        if (!config_file || !*config_file) {
                set_error(&ld, -EINVAL, "no configuration file");
                return -EINVAL;
        }
        p = policy_new();
        if (!p) {
                set_error(&ld, -ENOMEM, "out of memory");
                return -ENOMEM;
        }
        r = load_file(&ld, config_file, p);
        if (r < 0) {
                proxy_policy_free(p);
                return r;
        }
        if (p->groups.n)
                qsort(p->groups.v, p->groups.n, sizeof(p->groups.v[0]), keyed_cmp);
        *ret = p;
        return 0;
}

/* ------------------------------------------------------------------ */
/* decisions */

const char *const *proxy_policy_servicedirs(const struct proxy_policy *p)
{
        static const char *const none[] = { NULL };

        if (!p || !p->servicedirs)
                return none;
        return (const char *const *)p->servicedirs;
}

/* a user is at the console when logind lists a seat for it (dbus-daemon's _dbus_is_console_user) */
static bool at_console(uid_t uid)
{
        char path[64], line[512];
        bool yes = false;
        FILE *f;

        if (access("/run/systemd/seats/", F_OK) < 0)
                return false;
        snprintf(path, sizeof(path), "/run/systemd/users/%lu", (unsigned long)uid);
        f = fopen(path, "re");
        if (!f)
                return false;
        while (fgets(line, sizeof(line), f)) {
                if (strncmp(line, "ONLINE_SEATS=", 13) == 0) {
                        const char *v = line + 13;

                        yes = *v && *v != '\n';
                        break;
                }
        }
        fclose(f);
        return yes;
}

/* name equals prefix, or starts with prefix followed by '.' */
static bool has_word_prefix(const char *name, const char *prefix)
{
        size_t n = strlen(prefix);

        return strncmp(name, prefix, n) == 0 && (name[n] == '\0' || name[n] == '.');
}

static bool names_match(const char *const *names, const char *name, bool prefix)
{
        if (!names)
                return false;
        for (; *names; ++names) {
                if (prefix ? has_word_prefix(*names, name) : strcmp(*names, name) == 0)
                        return true;
        }
        return false;
}

struct check {
        enum rule_kind kind;            /* RULE_OWN, RULE_SEND or RULE_RECEIVE */
        const char *own_name;
        const char *const *names;       /* the other side's */
        const struct proxy_policy_message *m;
};

static bool str_differs(const char *rule, const char *msg)
{
        return rule && msg && strcmp(rule, msg) != 0;
}

/* dbus-daemon's bus_client_policy_check_can_send/_receive/_own for one rule */
static bool rule_applies(const struct rule *r, const struct check *k)
{
        const struct proxy_policy_message *m = k->m;

        if (r->kind != k->kind)
                return false;
        if (k->kind == RULE_OWN) {
                if (!r->name)
                        return true;
                return r->prefix ? has_word_prefix(k->own_name, r->name) : strcmp(k->own_name, r->name) == 0;
        }

        if (r->type && r->type != m->type)
                return false;
        /* the proxy never eavesdrops: deny rules with eavesdrop="true" only apply to eavesdropping */
        if (k->kind == RULE_RECEIVE && !r->allow && r->eavesdrop)
                return false;
        if (m->type == 2 || m->type == 3) {
                /* allow rules with requested_reply (their default) skip unrequested replies */
                if (!m->requested_reply && r->allow && r->requested_reply && !r->eavesdrop)
                        return false;
                /* deny rules with requested_reply="false" (their default) skip requested replies */
                if (m->requested_reply && !r->allow && !r->requested_reply)
                        return false;
        }
        if (str_differs(r->path, m->path))
                return false;
        if (r->interface) {
                /* a message without interface: allow rules do not apply, deny rules do */
                if (!m->interface ? r->allow : strcmp(m->interface, r->interface) != 0)
                        return false;
        }
        if (str_differs(r->member, m->member) || str_differs(r->error, m->error_name))
                return false;
        if (k->kind == RULE_SEND && r->broadcast != TRI_ANY) {
                bool bcast = m->broadcast && m->type == 4;

                if (bcast != (r->broadcast == TRI_TRUE))
                        return false;
        }
        if (r->name && !names_match(k->names, r->name, r->prefix))
                return false;
        /* the message's fds are not known here: taken as none */
        if (r->min_fds > 0)
                return false;
        return true;
}

static void walk(const struct rule_list *l, const struct check *k, bool *allowed)
{
        if (!l)
                return;
        for (size_t i = 0; i < l->n; ++i)
                if (rule_applies(&l->v[i], k))
                        *allowed = l->v[i].allow;
}

static bool peer_in_group(const struct proxy_policy_peer *peer, uint32_t gid)
{
        if (peer->gid == gid)
                return true;
        for (size_t i = 0; i < peer->n_groups; ++i)
                if (peer->groups[i] == gid)
                        return true;
        return false;
}

/* default, groups, user, console, mandatory; the last rule that applies decides */
static bool evaluate(const struct proxy_policy *p, const struct proxy_policy_peer *peer, const struct check *k)
{
        bool allowed = false;

        walk(&p->def, k, &allowed);
        /* dbus-daemon 1.14 walks the peer's groups (primary included) sorted by gid */
        for (size_t i = 0; i < p->groups.n; ++i)
                if (peer_in_group(peer, p->groups.v[i].id))
                        walk(&p->groups.v[i].rules, k, &allowed);
        walk(keyed_find(&p->users, peer->uid), k, &allowed);
        if (p->console_yes.n && at_console(peer->uid))
                walk(&p->console_yes, k, &allowed);
        else
                walk(&p->console_no, k, &allowed);
        walk(&p->mandatory, k, &allowed);
        return allowed;
}

static void walk_connect(const struct rule_list *l, const struct proxy_policy_peer *peer, bool *allowed)
{
        for (size_t i = 0; i < l->n; ++i) {
                const struct rule *r = &l->v[i];

                if (r->kind == RULE_USER && (r->any_id || r->id == peer->uid))
                        *allowed = r->allow;
                else if (r->kind == RULE_GROUP && (r->any_id || peer_in_group(peer, r->id)))
                        *allowed = r->allow;
        }
}

bool proxy_policy_may_connect(const struct proxy_policy *p, const struct proxy_policy_peer *peer)
{
        bool allowed;

        if (!p)
                return true;
        if (!peer)
                return false;
        if (peer->uid == 0 || peer->uid == getuid())
                return true;
        /* like dbus-daemon, only the default and mandatory blocks hold connect rules */
        allowed = !p->has_connect_rules;
        walk_connect(&p->def, peer, &allowed);
        walk_connect(&p->mandatory, peer, &allowed);
        return allowed;
}

bool proxy_policy_may_own(const struct proxy_policy *p, const struct proxy_policy_peer *peer, const char *name)
{
        struct check k = { .kind = RULE_OWN, .own_name = name };

        if (!p)
                return true;
        if (!peer || !name)
                return false;
        return evaluate(p, peer, &k);
}

bool proxy_policy_may_send(const struct proxy_policy *p, const struct proxy_policy_peer *sender,
                           const char *const *dest_names, const struct proxy_policy_message *m)
{
        struct check k = { .kind = RULE_SEND, .names = dest_names, .m = m };

        if (!p)
                return true;
        if (!sender || !m)
                return false;
        return evaluate(p, sender, &k);
}

bool proxy_policy_may_receive(const struct proxy_policy *p, const struct proxy_policy_peer *receiver,
                              const char *const *sender_names, const struct proxy_policy_message *m)
{
        struct check k = { .kind = RULE_RECEIVE, .names = sender_names, .m = m };

        if (!p)
                return true;
        if (!receiver || !m)
                return false;
        return evaluate(p, receiver, &k);
}
