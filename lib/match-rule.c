// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * D-Bus match rules: parser (dbus-daemon's grammar, the D-Bus
 * Specification), equality, userspace evaluation, bloom mask and the
 * kernel match entries a rule needs (kdbus.match(7)).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/kdbus.h>

#include "bloom.h"
#include "marshal.h"
#include "match-rule.h"

#define ALIGN8(x)               (((x) + 7) & ~(size_t)7)
#define ITEM_HEADER_SIZE        16
#define DRIVER_NAME             "org.freedesktop.DBus"
#define DRIVER_PATH             "/org/freedesktop/DBus"

static const char *const type_words[] = {
        [KDBUS_MESSAGE_METHOD_CALL] = "method_call",
        [KDBUS_MESSAGE_METHOD_RETURN] = "method_return",
        [KDBUS_MESSAGE_ERROR] = "error",
        [KDBUS_MESSAGE_SIGNAL] = "signal",
};

bool kdbus_unique_name_parse(const char *name, uint64_t *id)
{
        uint64_t v = 0;
        const char *p;

        if (!name || name[0] != ':' || name[1] != '1' || name[2] != '.' || !name[3])
                return false;
        for (p = name + 3; *p; p++) {
                if (*p < '0' || *p > '9')
                        return false;
                uint64_t d = (uint64_t)(*p - '0');

                /* v * 10 + d overflows (compared with constants: no division a digit) */
                if (v > UINT64_MAX / 10 || (v == UINT64_MAX / 10 && d > UINT64_MAX % 10))
                        return false;
                v = v * 10 + d;
        }
        if (v == 0 || v > UINT64_MAX - 1)
                return false;
        if (id)
                *id = v;
        return true;
}

void kdbus_match_rule_free(struct kdbus_match_rule *rule)
{
        if (!rule)
                return;
        free(rule->sender);
        free(rule->interface);
        free(rule->member);
        free(rule->path);
        free(rule->destination);
        free(rule->arg0namespace);
        for (size_t i = 0; i < KDBUS_MATCH_RULE_MAX_ARGS; i++)
                free(rule->arg[i]);
        free(rule);
}

void kdbus_match_rule_freep(struct kdbus_match_rule **rule)
{
        kdbus_match_rule_free(*rule);
        *rule = NULL;
}

static bool is_space(char c)
{
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* a bus-name prefix for arg0namespace: elements of [A-Za-z0-9_-], no digit first */
static bool namespace_valid(const char *s)
{
        bool start = true;

        if (!*s || strlen(s) > 255)
                return false;
        for (; *s; s++) {
                char c = *s;

                if (c == '.') {
                        if (start)
                                return false;
                        start = true;
                        continue;
                }
                if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == '-' ||
                      (c >= '0' && c <= '9')))
                        return false;
                if (start && c >= '0' && c <= '9')
                        return false;
                start = false;
        }
        return !start;
}

static bool path_valid(const char *s)
{
        return kdbus_object_path_valid(s, strlen(s));
}

/* argN, argNpath, arg0namespace, argNhas; returns the index or -1 */
static int parse_arg_key(const char *key, const char **suffix)
{
        const char *p = key + 3;
        unsigned int n = 0;

        if (strncmp(key, "arg", 3) != 0 || *p < '0' || *p > '9')
                return -1;
        for (; *p >= '0' && *p <= '9'; p++) {
                n = n * 10 + (unsigned int)(*p - '0');
                if (n >= KDBUS_MATCH_RULE_MAX_ARGS)
                        return -1;
        }
        *suffix = p;
        return (int)n;
}

static int rule_set(struct kdbus_match_rule *rule, const char *key, const char *value,
                    bool allow_has)
{
        char **target = NULL;
        uint32_t bit = 0;

        if (strcmp(key, "type") == 0) {
                bit = KDBUS_MATCH_TYPE;
                if (rule->keys & bit)
                        return -EINVAL;
                for (uint8_t t = 1; t <= KDBUS_MESSAGE_SIGNAL; t++)
                        if (strcmp(value, type_words[t]) == 0)
                                rule->type = t;
                if (!rule->type)
                        return -EINVAL;
                rule->keys |= bit;
                return 0;
        } else if (strcmp(key, "eavesdrop") == 0) {
                bit = KDBUS_MATCH_EAVESDROP;
                if (rule->keys & bit)
                        return -EINVAL;
                if (strcmp(value, "true") == 0)
                        rule->eavesdrop = true;
                else if (strcmp(value, "false") != 0)
                        return -EINVAL;
                rule->keys |= bit;
                return 0;
        } else if (strcmp(key, "sender") == 0) {
                bit = KDBUS_MATCH_SENDER;
                target = &rule->sender;
                if (!kdbus_bus_name_valid(value))
                        return -EINVAL;
        } else if (strcmp(key, "interface") == 0) {
                bit = KDBUS_MATCH_INTERFACE;
                target = &rule->interface;
                if (!kdbus_interface_name_valid(value))
                        return -EINVAL;
        } else if (strcmp(key, "member") == 0) {
                bit = KDBUS_MATCH_MEMBER;
                target = &rule->member;
                if (!kdbus_member_name_valid(value))
                        return -EINVAL;
        } else if (strcmp(key, "path") == 0 || strcmp(key, "path_namespace") == 0) {
                bit = key[4] ? KDBUS_MATCH_PATH_NAMESPACE : KDBUS_MATCH_PATH;
                target = &rule->path;
                if (rule->keys & (KDBUS_MATCH_PATH | KDBUS_MATCH_PATH_NAMESPACE))
                        return -EINVAL;
                if (!path_valid(value))
                        return -EINVAL;
        } else if (strcmp(key, "destination") == 0) {
                bit = KDBUS_MATCH_DESTINATION;
                target = &rule->destination;
                if (!kdbus_bus_name_valid(value))
                        return -EINVAL;
        } else {
                const char *suffix;
                int n = parse_arg_key(key, &suffix);
                uint8_t kind;

                if (n < 0)
                        return -EINVAL;
                if (!*suffix) {
                        kind = KDBUS_MATCH_ARG_STRING;
                } else if (strcmp(suffix, "path") == 0) {
                        kind = KDBUS_MATCH_ARG_PATH;
                } else if (strcmp(suffix, "has") == 0 && allow_has) {
                        kind = KDBUS_MATCH_ARG_HAS;
                } else if (strcmp(suffix, "namespace") == 0 && n == 0) {
                        bit = KDBUS_MATCH_ARG0NAMESPACE;
                        if (rule->keys & bit)
                                return -EINVAL;
                        if (!namespace_valid(value))
                                return -EINVAL;
                        rule->arg0namespace = strdup(value);
                        if (!rule->arg0namespace)
                                return -ENOMEM;
                        rule->keys |= bit;
                        return 0;
                } else {
                        return -EINVAL;
                }
                if (rule->arg_kind[n] != KDBUS_MATCH_ARG_NONE)
                        return -EINVAL;
                rule->arg[n] = strdup(value);
                if (!rule->arg[n])
                        return -ENOMEM;
                rule->arg_kind[n] = kind;
                return 0;
        }

        if (rule->keys & bit)
                return -EINVAL;
        *target = strdup(value);
        if (!*target)
                return -ENOMEM;
        rule->keys |= bit;
        return 0;
}

/**
 * kdbus_match_rule_parse() - parse a D-Bus match rule
 * @ret:        the new rule
 * @text:       rule text, at most 1024 bytes
 * @allow_has:  accept arg<N>has keys
 *
 * Return: 0, -E2BIG for a rule over the length limit, -EINVAL for a rule
 * that does not parse or validate, -ENOMEM.
 */
int kdbus_match_rule_parse(struct kdbus_match_rule **ret, const char *text, bool allow_has)
{
        struct kdbus_match_rule *rule;
        size_t len = strlen(text);
        char *key = NULL, *value = NULL;
        const char *p = text;
        int r = -EINVAL;

        if (len > KDBUS_MATCH_RULE_MAX_SIZE)
                return -E2BIG;
        rule = calloc(1, sizeof(*rule));
        key = malloc(len + 1);
        value = malloc(len + 1);
        if (!rule || !key || !value) {
                r = -ENOMEM;
                goto fail;
        }

        for (;;) {
                size_t k = 0, v = 0;

                while (is_space(*p))
                        p++;
                if (!*p)
                        break;
                while (*p && *p != '=' && !is_space(*p))
                        key[k++] = *p++;
                key[k] = 0;
                while (is_space(*p))
                        p++;
                if (*p != '=' || k == 0) {
                        r = -EINVAL;
                        goto fail;
                }
                p++;
                for (;;) {
                        if (*p == '\'') {
                                const char *end = strchr(p + 1, '\'');

                                if (!end) {
                                        r = -EINVAL;
                                        goto fail;
                                }
                                memcpy(value + v, p + 1, (size_t)(end - p - 1));
                                v += (size_t)(end - p - 1);
                                p = end + 1;
                        } else if (*p == '\\' && p[1] == '\'') {
                                value[v++] = '\'';
                                p += 2;
                        } else if (*p == ',' || !*p) {
                                break;
                        } else {
                                value[v++] = *p++;
                        }
                }
                value[v] = 0;
                r = rule_set(rule, key, value, allow_has);
                if (r < 0)
                        goto fail;
                if (*p == ',')
                        p++;
        }

        free(key);
        free(value);
        *ret = rule;
        return 0;

fail:
        free(key);
        free(value);
        kdbus_match_rule_free(rule);
        return r;
}

static bool str_eq(const char *a, const char *b)
{
        if (!a || !b)
                return a == b;
        return strcmp(a, b) == 0;
}

/**
 * kdbus_match_rule_equal() - semantic equality of two rules
 * @a:  rule
 * @b:  rule
 *
 * Return: whether both have the same keys with the same unquoted values;
 * eavesdrop='false' equals an absent eavesdrop.
 */
bool kdbus_match_rule_equal(const struct kdbus_match_rule *a, const struct kdbus_match_rule *b)
{
        uint32_t ka = a->keys & ~(uint32_t)KDBUS_MATCH_EAVESDROP;
        uint32_t kb = b->keys & ~(uint32_t)KDBUS_MATCH_EAVESDROP;

        if (ka != kb || a->eavesdrop != b->eavesdrop || a->type != b->type)
                return false;
        if (!str_eq(a->sender, b->sender) || !str_eq(a->interface, b->interface) ||
            !str_eq(a->member, b->member) || !str_eq(a->path, b->path) ||
            !str_eq(a->destination, b->destination) ||
            !str_eq(a->arg0namespace, b->arg0namespace))
                return false;
        for (size_t i = 0; i < KDBUS_MATCH_RULE_MAX_ARGS; i++)
                if (a->arg_kind[i] != b->arg_kind[i] || !str_eq(a->arg[i], b->arg[i]))
                        return false;
        return true;
}

/* append key='value' with apostrophes written as '\'' */
static int format_pair(char **buf, size_t *len, size_t *cap, const char *key, const char *value)
{
        size_t need = strlen(key) + 4 + strlen(value) * 4 + 1;
        char *p;

        if (*len + need >= *cap) {
                size_t ncap = (*len + need) * 2;
                char *n = realloc(*buf, ncap);

                if (!n)
                        return -ENOMEM;
                *buf = n;
                *cap = ncap;
        }
        p = *buf + *len;
        if (*len)
                *p++ = ',';
        p += sprintf(p, "%s='", key);
        for (const char *v = value; *v; v++) {
                if (*v == '\'') {
                        memcpy(p, "'\\''", 4);
                        p += 4;
                } else {
                        *p++ = *v;
                }
        }
        *p++ = '\'';
        *p = 0;
        *len = (size_t)(p - *buf);
        return 0;
}

/**
 * kdbus_match_rule_format() - canonical text of a rule
 * @rule:       rule
 * @ret:        malloc'ed string
 *
 * Return: 0 or -ENOMEM.
 */
int kdbus_match_rule_format(const struct kdbus_match_rule *rule, char **ret)
{
        size_t len = 0, cap = 64;
        char *buf = malloc(cap);
        char key[32];
        int r = 0;

        if (!buf)
                return -ENOMEM;
        buf[0] = 0;
        if (rule->keys & KDBUS_MATCH_TYPE)
                r = format_pair(&buf, &len, &cap, "type", type_words[rule->type]);
        if (!r && rule->sender)
                r = format_pair(&buf, &len, &cap, "sender", rule->sender);
        if (!r && rule->interface)
                r = format_pair(&buf, &len, &cap, "interface", rule->interface);
        if (!r && rule->member)
                r = format_pair(&buf, &len, &cap, "member", rule->member);
        if (!r && rule->path)
                r = format_pair(&buf, &len, &cap,
                                (rule->keys & KDBUS_MATCH_PATH) ? "path" : "path_namespace",
                                rule->path);
        if (!r && rule->destination)
                r = format_pair(&buf, &len, &cap, "destination", rule->destination);
        if (!r && rule->arg0namespace)
                r = format_pair(&buf, &len, &cap, "arg0namespace", rule->arg0namespace);
        for (unsigned int i = 0; !r && i < KDBUS_MATCH_RULE_MAX_ARGS; i++) {
                static const char *const suffix[] = { "", "", "path", "has" };

                if (rule->arg_kind[i] == KDBUS_MATCH_ARG_NONE)
                        continue;
                snprintf(key, sizeof(key), "arg%u%s", i, suffix[rule->arg_kind[i]]);
                r = format_pair(&buf, &len, &cap, key, rule->arg[i]);
        }
        if (!r && rule->eavesdrop)
                r = format_pair(&buf, &len, &cap, "eavesdrop", "true");
        if (r) {
                free(buf);
                return r;
        }
        *ret = buf;
        return 0;
}

/* top-level arguments of a body, as far as a rule needs them */
struct match_arg {
        char type;                      /* 0: absent */
        const char *str;                /* s, o, g */
        const char **elements;          /* arrays of s, o, g */
        size_t n_elements;
};

static void args_free(struct match_arg *args, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(args[i].elements);
}

static int args_collect(struct kdbus_message *m, struct match_arg *args, size_t n)
{
        kdbus_message_rewind(m);
        for (size_t i = 0; i < n; i++) {
                const char *contents = NULL;
                char type;
                int r;

                r = kdbus_message_peek_type(m, &type, &contents);
                if (r <= 0)
                        return 0;
                if (type == 's' || type == 'o' || type == 'g') {
                        r = kdbus_message_read_basic(m, type, &args[i].str);
                        if (r <= 0)
                                return r < 0 ? r : 0;
                        args[i].type = type;
                        continue;
                }
                if (type == 'a' && contents && strlen(contents) == 1 &&
                    strchr("sog", contents[0])) {
                        const char *s;

                        r = kdbus_message_enter_container(m, 'a', contents);
                        if (r <= 0)
                                return r < 0 ? r : 0;
                        while ((r = kdbus_message_read_basic(m, contents[0], &s)) > 0) {
                                const char **n2 = realloc(args[i].elements,
                                                          (args[i].n_elements + 1) * sizeof(*n2));

                                if (!n2)
                                        return -ENOMEM;
                                args[i].elements = n2;
                                args[i].elements[args[i].n_elements++] = s;
                        }
                        if (r < 0)
                                return r;
                        kdbus_message_exit_container(m);
                        args[i].type = 'a';
                        continue;
                }
                args[i].type = type;
                r = kdbus_message_skip(m, NULL);
                if (r < 0)
                        return r;
        }
        return 0;
}

static bool in_list(const char *s, const char *const *list, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (list[i] && strcmp(list[i], s) == 0)
                        return true;
        return false;
}

static bool addressed_to_us(const char *dest, const struct kdbus_match_context *ctx)
{
        return (ctx->own_unique && strcmp(dest, ctx->own_unique) == 0) ||
               in_list(dest, ctx->own_names, ctx->n_own_names);
}

static bool arg_matches(const struct kdbus_match_rule *rule, unsigned int i,
                        const struct match_arg *a)
{
        const char *v = rule->arg[i];
        size_t lv = strlen(v);

        switch (rule->arg_kind[i]) {
        case KDBUS_MATCH_ARG_STRING:
                return a->type == 's' && strcmp(a->str, v) == 0;
        case KDBUS_MATCH_ARG_PATH: {
                size_t la;

                if (a->type != 's' && a->type != 'o')
                        return false;
                la = strlen(a->str);
                if (strcmp(a->str, v) == 0)
                        return true;
                if (lv && v[lv - 1] == '/' && strncmp(a->str, v, lv) == 0)
                        return true;
                return la && a->str[la - 1] == '/' && strncmp(v, a->str, la) == 0;
        }
        case KDBUS_MATCH_ARG_HAS:
                if (a->type != 'a')
                        return false;
                for (size_t k = 0; k < a->n_elements; k++)
                        if (strcmp(a->elements[k], v) == 0)
                                return true;
                return false;
        default:
                return true;
        }
}

/**
 * kdbus_match_rule_matches() - evaluate a rule against a message
 * @rule:       rule
 * @m:          sealed message
 * @ctx:        what the receiver knows about it
 *
 * Return: whether every key of @rule matches (the D-Bus Specification).
 */
bool kdbus_match_rule_matches(const struct kdbus_match_rule *rule, struct kdbus_message *m,
                              const struct kdbus_match_context *ctx)
{
        struct match_arg args[KDBUS_MATCH_RULE_MAX_ARGS] = { 0 };
        const char *dest = kdbus_message_get_destination(m);
        const char *path = kdbus_message_get_path(m);
        size_t n_args = 0;
        bool ok = false;

        if ((rule->keys & KDBUS_MATCH_TYPE) && kdbus_message_get_type(m) != rule->type)
                return false;
        if (rule->sender) {
                if (strcmp(rule->sender, DRIVER_NAME) == 0) {
                        if (!ctx->from_driver)
                                return false;
                } else if (ctx->from_driver) {
                        return false;
                } else if (rule->sender[0] == ':') {
                        if (!str_eq(kdbus_message_get_sender(m), rule->sender))
                                return false;
                } else if (!in_list(rule->sender, ctx->sender_names, ctx->n_sender_names)) {
                        return false;
                }
        }
        if (rule->interface && !str_eq(kdbus_message_get_interface(m), rule->interface))
                return false;
        if (rule->member && !str_eq(kdbus_message_get_member(m), rule->member))
                return false;
        if (rule->keys & KDBUS_MATCH_PATH && !str_eq(path, rule->path))
                return false;
        if (rule->keys & KDBUS_MATCH_PATH_NAMESPACE) {
                size_t l = strlen(rule->path);

                if (!path)
                        return false;
                if (strcmp(rule->path, "/") != 0 &&
                    !(strncmp(path, rule->path, l) == 0 && (path[l] == 0 || path[l] == '/')))
                        return false;
        }
        if (rule->destination) {
                if (!dest)
                        return false;
                if (strcmp(dest, rule->destination) != 0 &&
                    !(addressed_to_us(dest, ctx) && addressed_to_us(rule->destination, ctx)))
                        return false;
        }
        /* monitors (no own name) see everything their rules select */
        if (!rule->eavesdrop && dest && ctx->own_unique && !addressed_to_us(dest, ctx))
                return false;

        for (size_t i = 0; i < KDBUS_MATCH_RULE_MAX_ARGS; i++)
                if (rule->arg_kind[i] != KDBUS_MATCH_ARG_NONE)
                        n_args = i + 1;
        if (rule->arg0namespace && n_args == 0)
                n_args = 1;
        if (n_args == 0)
                return true;

        if (args_collect(m, args, n_args) < 0)
                goto out;
        if (rule->arg0namespace) {
                size_t l = strlen(rule->arg0namespace);

                if (args[0].type != 's' || strncmp(args[0].str, rule->arg0namespace, l) != 0 ||
                    (args[0].str[l] != 0 && args[0].str[l] != '.'))
                        goto out;
        }
        for (unsigned int i = 0; i < n_args; i++)
                if (rule->arg_kind[i] != KDBUS_MATCH_ARG_NONE && !arg_matches(rule, i, &args[i]))
                        goto out;
        ok = true;
out:
        args_free(args, n_args);
        kdbus_message_rewind(m);
        return ok;
}

/**
 * kdbus_match_rule_bloom_mask() - the bloom mask of a rule
 * @rule:       rule
 * @mask:       initialised, cleared bloom object
 *
 * Return: 1 when the mask holds any string, 0 when it stays empty.
 */
int kdbus_match_rule_bloom_mask(const struct kdbus_match_rule *rule, struct kdbus_bloom *mask)
{
        int any = 0;

        if (rule->keys & KDBUS_MATCH_TYPE) {
                kdbus_bloom_add_message_type(mask, type_words[rule->type]);
                any = 1;
        }
        if (rule->interface) {
                kdbus_bloom_add_interface(mask, rule->interface);
                any = 1;
        }
        if (rule->member) {
                kdbus_bloom_add_member(mask, rule->member);
                any = 1;
        }
        if (rule->keys & KDBUS_MATCH_PATH) {
                kdbus_bloom_mask_path(mask, rule->path);
                any = 1;
        }
        if (rule->keys & KDBUS_MATCH_PATH_NAMESPACE) {
                kdbus_bloom_mask_path_namespace(mask, rule->path);
                any = 1;
        }
        if (rule->arg0namespace) {
                kdbus_bloom_mask_arg_namespace(mask, 0, rule->arg0namespace);
                any = 1;
        }
        for (unsigned int i = 0; i < KDBUS_MATCH_RULE_MAX_ARGS; i++) {
                if (rule->arg_kind[i] == KDBUS_MATCH_ARG_STRING) {
                        kdbus_bloom_mask_arg(mask, i, rule->arg[i]);
                        any = 1;
                } else if (rule->arg_kind[i] == KDBUS_MATCH_ARG_HAS) {
                        kdbus_bloom_mask_arg_has(mask, i, rule->arg[i]);
                        any = 1;
                }
        }
        return any;
}

/* growing list of match commands */
struct entries {
        struct kdbus_cmd_match **v;
        size_t n;
        uint64_t cookie;
};

static struct kdbus_cmd_match *entry_new(struct entries *e, size_t items_size)
{
        struct kdbus_cmd_match *cmd, **nv;

        nv = realloc(e->v, (e->n + 1) * sizeof(*nv));
        if (!nv)
                return NULL;
        e->v = nv;
        cmd = calloc(1, sizeof(*cmd) + items_size);
        if (!cmd)
                return NULL;
        cmd->size = sizeof(*cmd) + items_size;
        cmd->cookie = e->cookie;
        e->v[e->n++] = cmd;
        return cmd;
}

static int entry_name_change(struct entries *e, uint64_t type, uint64_t old_id,
                             uint64_t new_id, const char *name)
{
        size_t nlen = name && *name ? strlen(name) + 1 : 0;
        size_t isize = ITEM_HEADER_SIZE + sizeof(struct kdbus_notify_name_change) + nlen;
        struct kdbus_cmd_match *cmd = entry_new(e, ALIGN8(isize));
        struct kdbus_item *item;

        if (!cmd)
                return -ENOMEM;
        item = cmd->items;
        item->size = isize;
        item->type = type;
        item->name_change.old_id.id = old_id;
        item->name_change.new_id.id = new_id;
        if (nlen)
                memcpy(item->name_change.name, name, nlen);
        return 0;
}

static int entry_id_change(struct entries *e, uint64_t type, uint64_t id)
{
        size_t isize = ITEM_HEADER_SIZE + sizeof(struct kdbus_notify_id_change);
        struct kdbus_cmd_match *cmd = entry_new(e, ALIGN8(isize));

        if (!cmd)
                return -ENOMEM;
        cmd->items[0].size = isize;
        cmd->items[0].type = type;
        cmd->items[0].id_change.id = id;
        return 0;
}

/* owner filter from arg1/arg2: any, none, an ID, or impossible */
enum { OWNER_ANY, OWNER_NONE, OWNER_ID, OWNER_IMPOSSIBLE };

static int owner_filter(const struct kdbus_match_rule *rule, unsigned int i, uint64_t *id)
{
        if (rule->arg_kind[i] != KDBUS_MATCH_ARG_STRING)
                return OWNER_ANY;
        if (!rule->arg[i][0])
                return OWNER_NONE;
        if (kdbus_unique_name_parse(rule->arg[i], id))
                return OWNER_ID;
        return OWNER_IMPOSSIBLE;
}

static bool path_namespace_covers_driver(const char *ns)
{
        return !strcmp(ns, "/") || !strcmp(ns, "/org") || !strcmp(ns, "/org/freedesktop") ||
               !strcmp(ns, DRIVER_PATH);
}

static bool rule_wants_notifications(const struct kdbus_match_rule *rule)
{
        if ((rule->keys & KDBUS_MATCH_TYPE) && rule->type != KDBUS_MESSAGE_SIGNAL)
                return false;
        if (rule->sender && strcmp(rule->sender, DRIVER_NAME) != 0)
                return false;
        if (rule->interface && strcmp(rule->interface, DRIVER_NAME) != 0)
                return false;
        if (rule->member && strcmp(rule->member, "NameOwnerChanged") != 0)
                return false;
        if ((rule->keys & KDBUS_MATCH_PATH) && strcmp(rule->path, DRIVER_PATH) != 0)
                return false;
        if ((rule->keys & KDBUS_MATCH_PATH_NAMESPACE) && !path_namespace_covers_driver(rule->path))
                return false;
        if (rule->destination)
                return false;
        for (unsigned int i = 3; i < KDBUS_MATCH_RULE_MAX_ARGS; i++)
                if (rule->arg_kind[i] != KDBUS_MATCH_ARG_NONE)
                        return false;
        return true;
}

static int entries_notify(struct entries *e, const struct kdbus_match_rule *rule)
{
        uint64_t name_id = 0, old_id = 0, new_id = 0;
        int old_f, new_f, r;
        bool id_kind = true, name_kind = true;
        const char *a0 = rule->arg_kind[0] == KDBUS_MATCH_ARG_STRING ? rule->arg[0] : NULL;

        if (a0) {
                if (kdbus_unique_name_parse(a0, &name_id))
                        name_kind = false;
                else if (a0[0] == ':')
                        return 0;
                else
                        id_kind = false;
        }
        old_f = owner_filter(rule, 1, &old_id);
        new_f = owner_filter(rule, 2, &new_id);
        if (old_f == OWNER_IMPOSSIBLE || new_f == OWNER_IMPOSSIBLE)
                return 0;

        if (name_kind) {
                uint64_t o = old_f == OWNER_ID ? old_id : KDBUS_MATCH_ID_ANY;
                uint64_t n = new_f == OWNER_ID ? new_id : KDBUS_MATCH_ID_ANY;

                if (old_f == OWNER_ANY || old_f == OWNER_NONE) {
                        r = entry_name_change(e, KDBUS_ITEM_NAME_ADD, o, n, a0);
                        if (r < 0)
                                return r;
                }
                if (new_f == OWNER_ANY || new_f == OWNER_NONE) {
                        r = entry_name_change(e, KDBUS_ITEM_NAME_REMOVE, o, n, a0);
                        if (r < 0)
                                return r;
                }
                r = entry_name_change(e, KDBUS_ITEM_NAME_CHANGE, o, n, a0);
                if (r < 0)
                        return r;
        }
        if (id_kind) {
                if ((old_f == OWNER_ANY || old_f == OWNER_NONE) &&
                    !(a0 && new_f == OWNER_ID && new_id != name_id)) {
                        uint64_t id = a0 ? name_id : new_f == OWNER_ID ? new_id : KDBUS_MATCH_ID_ANY;

                        r = entry_id_change(e, KDBUS_ITEM_ID_ADD, id);
                        if (r < 0)
                                return r;
                }
                if ((new_f == OWNER_ANY || new_f == OWNER_NONE) &&
                    !(a0 && old_f == OWNER_ID && old_id != name_id)) {
                        uint64_t id = a0 ? name_id : old_f == OWNER_ID ? old_id : KDBUS_MATCH_ID_ANY;

                        r = entry_id_change(e, KDBUS_ITEM_ID_REMOVE, id);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static int entry_signals(struct entries *e, const struct kdbus_match_rule *rule,
                         uint64_t bloom_size, uint64_t bloom_n_hash)
{
        uint64_t sender_id = 0, dst_id = 0;
        bool sender_unique = false, dst_unique = false;
        size_t size = 0;
        uint64_t *mask_data = NULL;
        struct kdbus_bloom mask;
        struct kdbus_cmd_match *cmd;
        struct kdbus_item *item;
        int any = 0, r;

        if ((rule->keys & KDBUS_MATCH_TYPE) && rule->type != KDBUS_MESSAGE_SIGNAL)
                return 0;
        if (rule->sender) {
                if (strcmp(rule->sender, DRIVER_NAME) == 0)
                        return 0;
                if (rule->sender[0] == ':') {
                        if (!kdbus_unique_name_parse(rule->sender, &sender_id))
                                return 0;
                        sender_unique = true;
                        size += ALIGN8(ITEM_HEADER_SIZE + 8);
                } else {
                        size += ALIGN8(ITEM_HEADER_SIZE + strlen(rule->sender) + 1);
                }
        }
        if (rule->destination && rule->destination[0] == ':') {
                if (!kdbus_unique_name_parse(rule->destination, &dst_id))
                        return 0;
                dst_unique = true;
                size += ALIGN8(ITEM_HEADER_SIZE + 8);
        }

        r = kdbus_bloom_check_parameter(bloom_size, bloom_n_hash);
        if (r < 0)
                return r;
        mask_data = calloc(1, bloom_size);
        if (!mask_data)
                return -ENOMEM;
        r = kdbus_bloom_init(&mask, mask_data, bloom_size, bloom_n_hash);
        if (r < 0)
                goto out;
        any = kdbus_match_rule_bloom_mask(rule, &mask);
        if (any)
                size += ALIGN8(ITEM_HEADER_SIZE + bloom_size);

        cmd = entry_new(e, size);
        if (!cmd) {
                r = -ENOMEM;
                goto out;
        }
        item = cmd->items;
        if (rule->sender) {
                if (sender_unique) {
                        item->size = ITEM_HEADER_SIZE + 8;
                        item->type = KDBUS_ITEM_ID;
                        item->id = sender_id;
                } else {
                        item->size = ITEM_HEADER_SIZE + strlen(rule->sender) + 1;
                        item->type = KDBUS_ITEM_NAME;
                        memcpy(item->str, rule->sender, strlen(rule->sender) + 1);
                }
                item = (void *)((uint8_t *)item + ALIGN8(item->size));
        }
        if (dst_unique) {
                item->size = ITEM_HEADER_SIZE + 8;
                item->type = KDBUS_ITEM_DST_ID;
                item->id = dst_id;
                item = (void *)((uint8_t *)item + ALIGN8(item->size));
        }
        if (any) {
                item->size = ITEM_HEADER_SIZE + bloom_size;
                item->type = KDBUS_ITEM_BLOOM_MASK;
                memcpy(item->data64, mask_data, bloom_size);
        }
        r = 0;
out:
        free(mask_data);
        return r;
}

void kdbus_match_entries_free(struct kdbus_cmd_match **entries, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(entries[i]);
        free(entries);
}

/**
 * kdbus_match_rule_to_kernel() - the kernel match entries of a rule
 * @rule:               rule
 * @bloom_size:         the bus's bloom size in bytes
 * @bloom_n_hash:       the bus's number of hash functions
 * @cookie:             cookie of every entry
 * @ret:                array of malloc'ed commands
 * @n_ret:              number of commands
 *
 * Return: 0, -EINVAL for bad bloom parameters, -ENOMEM.
 */
int kdbus_match_rule_to_kernel(const struct kdbus_match_rule *rule, uint64_t bloom_size,
                               uint64_t bloom_n_hash, uint64_t cookie,
                               struct kdbus_cmd_match ***ret, size_t *n_ret)
{
        struct entries e = { .cookie = cookie };
        int r;

        r = entry_signals(&e, rule, bloom_size, bloom_n_hash);
        if (r >= 0 && rule_wants_notifications(rule))
                r = entries_notify(&e, rule);
        if (r < 0) {
                kdbus_match_entries_free(e.v, e.n);
                return r;
        }
        *ret = e.v;
        *n_ret = e.n;
        return 0;
}
