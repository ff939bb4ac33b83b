// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * D-Bus service files (the D-Bus specification's .service files). See service-file.h.
 */

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "service-file.h"

#define SERVICE_GROUP           "D-BUS Service"
#define SERVICE_SUFFIX          ".service"
#define SERVICE_FILE_MAX        (64 * 1024)     /* dbus-daemon reads no more either */
#define BUS_NAME_MAX            255

void service_strv_free(char **strv)
{
        if (!strv)
                return;
        for (char **s = strv; *s; s++)
                free(*s);
        free(strv);
}

static bool name_element_char(char c, bool first)
{
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == '-')
                return true;
        return !first && c >= '0' && c <= '9';
}

bool service_name_is_valid(const char *name)
{
        size_t len = strlen(name), elements = 1;
        bool element_start = true;

        if (len == 0 || len > BUS_NAME_MAX)
                return false;
        for (const char *p = name; *p; p++) {
                if (*p == '.') {
                        if (element_start)
                                return false;
                        element_start = true;
                        elements++;
                        continue;
                }
                if (!name_element_char(*p, element_start))
                        return false;
                element_start = false;
        }
        return !element_start && elements >= 2;
}

/* a growable string and vector for the word splitter */
struct word {
        char *s;
        size_t len, cap;
};

static int word_add(struct word *w, char c)
{
        if (w->len + 2 > w->cap) {
                size_t cap = w->cap ? w->cap * 2 : 32;
                char *s = realloc(w->s, cap);

                if (!s)
                        return -ENOMEM;
                w->s = s;
                w->cap = cap;
        }
        w->s[w->len++] = c;
        w->s[w->len] = '\0';
        return 0;
}

static int strv_push(char ***v, size_t *n, char *s)
{
        char **nv = realloc(*v, (*n + 2) * sizeof(**v));

        if (!nv)
                return -ENOMEM;
        nv[(*n)++] = s;
        nv[*n] = NULL;
        *v = nv;
        return 0;
}

static bool is_space(char c)
{
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

int service_exec_split(const char *value, char ***ret_argv)
{
        enum { PLAIN, SINGLE, DOUBLE } mode = PLAIN;
        struct word w = { 0 };
        bool in_word = false;
        char **argv = NULL;
        size_t argc = 0;
        int r = 0;

        for (const char *p = value; *p && r == 0; p++) {
                char c = *p;

                switch (mode) {
                case PLAIN:
                        if (is_space(c)) {
                                if (in_word) {
                                        r = word_add(&w, '\0') ?: strv_push(&argv, &argc, w.s);
                                        if (r == 0)
                                                w = (struct word){ 0 };
                                        in_word = false;
                                }
                                continue;
                        }
                        in_word = true;
                        if (c == '\'') {
                                mode = SINGLE;
                                r = word_add(&w, '\0'); /* '' is a word */
                                w.len--;
                        } else if (c == '"') {
                                mode = DOUBLE;
                                r = word_add(&w, '\0');
                                w.len--;
                        } else if (c == '\\') {
                                if (!p[1]) {
                                        r = -EINVAL;
                                        break;
                                }
                                r = word_add(&w, *++p);
                        } else {
                                r = word_add(&w, c);
                        }
                        break;
                case SINGLE:
                        if (c == '\'')
                                mode = PLAIN;
                        else
                                r = word_add(&w, c);
                        break;
                case DOUBLE:
                        if (c == '"') {
                                mode = PLAIN;
                        } else if (c == '\\' && p[1] && strchr("\"\\$`", p[1])) {
                                r = word_add(&w, *++p);
                        } else {
                                r = word_add(&w, c);
                        }
                        break;
                }
        }
        if (r == 0 && mode != PLAIN)
                r = -EINVAL;
        if (r == 0 && in_word) {
                r = w.s ? 0 : word_add(&w, '\0');
                if (r == 0)
                        r = strv_push(&argv, &argc, w.s);
                if (r == 0)
                        w = (struct word){ 0 };
        }
        if (r == 0 && argc == 0)
                r = -EINVAL;
        free(w.s);
        if (r < 0) {
                service_strv_free(argv);
                return r;
        }
        *ret_argv = argv;
        return 0;
}

static bool utf8_valid(const unsigned char *s, size_t len)
{
        size_t i = 0;

        while (i < len) {
                unsigned char c = s[i];
                size_t n;
                uint32_t cp;

                if (c == 0)
                        return false;
                if (c < 0x80) {
                        i++;
                        continue;
                }
                if ((c & 0xe0) == 0xc0) {
                        n = 1;
                        cp = c & 0x1f;
                } else if ((c & 0xf0) == 0xe0) {
                        n = 2;
                        cp = c & 0x0f;
                } else if ((c & 0xf8) == 0xf0) {
                        n = 3;
                        cp = c & 0x07;
                } else {
                        return false;
                }
                if (i + n >= len)
                        return false;
                for (size_t k = 1; k <= n; k++) {
                        if ((s[i + k] & 0xc0) != 0x80)
                                return false;
                        cp = (cp << 6) | (s[i + k] & 0x3f);
                }
                if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) ||
                    (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
                    (cp >= 0xd800 && cp <= 0xdfff))
                        return false;
                i += n + 1;
        }
        return true;
}

static char *trim(char *s)
{
        char *e;

        while (is_space(*s))
                s++;
        e = s + strlen(s);
        while (e > s && is_space(e[-1]))
                *--e = '\0';
        return s;
}

static int set_str(char **dst, const char *v)
{
        char *s = strdup(v);

        if (!s)
                return -ENOMEM;
        free(*dst);
        *dst = s;
        return 0;
}

void service_entry_free(struct service_entry *e)
{
        free(e->name);
        service_strv_free(e->argv);
        free(e->user);
        free(e->systemd_service);
        free(e->path);
        *e = (struct service_entry){ 0 };
}

int service_file_parse(const char *text, size_t len, const char *filename,
                       enum service_bus_type type, bool systemd_activation,
                       struct service_entry *ret, const char **why)
{
        struct service_entry e = { 0 };
        char *buf, *line, *next, *exec = NULL;
        bool in_group = false, seen_group = false;
        int r = 0;

        *why = NULL;
        if (!utf8_valid((const unsigned char *)text, len)) {
                *why = "not valid UTF-8 text";
                return -EINVAL;
        }
        buf = strndup(text, len);
        if (!buf)
                return -ENOMEM;
        for (line = buf; line && r == 0; line = next) {
                char *eq, *key, *val;

                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                line = trim(line);
                if (!*line || *line == '#')
                        continue;
                if (*line == '[') {
                        size_t l = strlen(line);

                        if (line[l - 1] != ']' || l < 3 || memchr(line + 1, '[', l - 2) ||
                            memchr(line + 1, ']', l - 2)) {
                                *why = "malformed group header";
                                r = -EINVAL;
                                break;
                        }
                        line[l - 1] = '\0';
                        in_group = !strcmp(line + 1, SERVICE_GROUP);
                        if (in_group && seen_group) {
                                *why = "[" SERVICE_GROUP "] appears twice";
                                r = -EINVAL;
                        }
                        seen_group |= in_group;
                        continue;
                }
                eq = strchr(line, '=');
                if (!eq || eq == line) {
                        *why = "a line is neither a group, a key=value pair nor a comment";
                        r = -EINVAL;
                        break;
                }
                *eq = '\0';
                key = trim(line);
                val = trim(eq + 1);
                if (!in_group)
                        continue;       /* other groups (and none) are ignored */
                if (!strcmp(key, "Name"))
                        r = set_str(&e.name, val);
                else if (!strcmp(key, "Exec"))
                        r = set_str(&exec, val);
                else if (!strcmp(key, "User"))
                        r = set_str(&e.user, val);
                else if (!strcmp(key, "SystemdService"))
                        r = set_str(&e.systemd_service, val);
                /* AssumedAppArmorLabel= and unknown keys are ignored */
        }
        free(buf);
        if (r < 0)
                goto fail;
        r = -EINVAL;
        if (!seen_group) {
                *why = "no [" SERVICE_GROUP "] group";
                goto fail;
        }
        if (!e.name) {
                *why = "Name= is missing";
                goto fail;
        }
        if (!service_name_is_valid(e.name) || !strcmp(e.name, "org.freedesktop.DBus")) {
                *why = "Name= is not a valid well-known bus name";
                goto fail;
        }
        if (type == SERVICE_BUS_SYSTEM) {
                size_t nl = strlen(e.name);

                if (!e.user || !*e.user) {
                        *why = "User= is required on the system bus";
                        goto fail;
                }
                if (strncmp(filename, e.name, nl) || strcmp(filename + nl, SERVICE_SUFFIX)) {
                        *why = "on the system bus the file must be called <Name>.service";
                        goto fail;
                }
        } else {
                free(e.user);   /* ignored on a user bus */
                e.user = NULL;
        }
        if (!exec && !e.systemd_service) {
                *why = "Exec= is missing";
                goto fail;
        }
        if (exec) {
                r = service_exec_split(exec, &e.argv);
                if (r == -EINVAL)
                        *why = "Exec= has an unterminated quote, a trailing backslash or no word";
                if (r < 0)
                        goto fail;
                r = -EINVAL;
                if (e.argv[0][0] != '/') {
                        *why = "the first word of Exec= is not an absolute path";
                        goto fail;
                }
        }
        if (!systemd_activation && e.systemd_service &&
            (!e.argv || (!strcmp(e.argv[0], "/bin/false") && !e.argv[1]))) {
                *why = "only SystemdService= and systemd activation is off";
                r = -ENOENT;
                goto fail;
        }
        free(exec);
        *ret = e;
        return 0;
fail:
        free(exec);
        service_entry_free(&e);
        return r;
}

static int strv_push_dup(char ***v, size_t *n, const char *a, const char *b)
{
        char *s;

        if (asprintf(&s, "%s%s", a, b ?: "") < 0)
                return -ENOMEM;
        if (strv_push(v, n, s) < 0) {
                free(s);
                return -ENOMEM;
        }
        return 0;
}

int service_dirs(enum service_bus_type type, char *const *extra, char ***ret_dirs)
{
        char **v = NULL;
        size_t n = 0;
        int r = 0;

        if (type == SERVICE_BUS_SYSTEM) {
                r = strv_push_dup(&v, &n, "/usr/local/share/dbus-1/system-services", NULL) ?:
                    strv_push_dup(&v, &n, "/usr/share/dbus-1/system-services", NULL) ?:
                    strv_push_dup(&v, &n, "/lib/dbus-1/system-services", NULL);
        } else {
                const char *runtime = getenv("XDG_RUNTIME_DIR");
                const char *data_home = getenv("XDG_DATA_HOME");
                const char *data_dirs = getenv("XDG_DATA_DIRS");
                const char *home = getenv("HOME");

                if (runtime && *runtime)
                        r = strv_push_dup(&v, &n, runtime, "/dbus-1/services");
                if (r == 0 && data_home && *data_home) {
                        r = strv_push_dup(&v, &n, data_home, "/dbus-1/services");
                } else if (r == 0 && home && *home) {
                        r = strv_push_dup(&v, &n, home, "/.local/share/dbus-1/services");
                }
                if (!data_dirs || !*data_dirs)
                        data_dirs = "/usr/local/share:/usr/share";
                for (const char *p = data_dirs; r == 0 && *p;) {
                        size_t l = strcspn(p, ":");
                        char *d = strndup(p, l);

                        if (!d)
                                r = -ENOMEM;
                        else if (l)
                                r = strv_push_dup(&v, &n, d, "/dbus-1/services");
                        free(d);
                        p += l + (p[l] == ':');
                }
        }
        for (; r == 0 && extra && *extra; extra++)
                r = strv_push_dup(&v, &n, *extra, NULL);
        if (r < 0) {
                service_strv_free(v);
                return r;
        }
        *ret_dirs = v;
        return 0;
}

static int cmp_entry(const void *a, const void *b)
{
        return strcmp(((const struct service_entry *)a)->name,
                      ((const struct service_entry *)b)->name);
}

static int cmp_dirent(const struct dirent **a, const struct dirent **b)
{
        return strcmp((*a)->d_name, (*b)->d_name);
}

static int filter_service(const struct dirent *d)
{
        size_t l = strlen(d->d_name), sl = strlen(SERVICE_SUFFIX);

        return l > sl && !strcmp(d->d_name + l - sl, SERVICE_SUFFIX);
}

static int read_file(int dirfd, const char *name, char **ret, size_t *ret_len)
{
        char *buf;
        ssize_t n;
        size_t len = 0;
        int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

        if (fd < 0)
                return -errno;
        buf = malloc(SERVICE_FILE_MAX + 1);
        if (!buf) {
                close(fd);
                return -ENOMEM;
        }
        while ((n = read(fd, buf + len, SERVICE_FILE_MAX + 1 - len)) > 0)
                len += n;
        close(fd);
        if (n < 0 || len > SERVICE_FILE_MAX) {
                free(buf);
                return n < 0 ? -errno : -EFBIG;
        }
        *ret = buf;
        *ret_len = len;
        return 0;
}

static struct service_entry *table_lookup(struct service_entry *v, size_t n, const char *name)
{
        for (size_t i = 0; i < n; i++)
                if (!strcmp(v[i].name, name))
                        return &v[i];
        return NULL;
}

int service_table_load(enum service_bus_type type, char *const *dirs,
                       bool systemd_activation, struct service_table *ret)
{
        struct service_entry *v = NULL;
        size_t n = 0;
        int r = 0;

        for (unsigned int prio = 0; dirs && dirs[prio] && r == 0; prio++) {
                struct dirent **list = NULL;
                int dfd, count;

                dfd = open(dirs[prio], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dfd < 0)
                        continue;       /* a missing directory is normal */
                count = scandirat(dfd, ".", &list, filter_service, cmp_dirent);
                for (int i = 0; i < count; i++) {
                        const char *fn = list[i]->d_name;
                        struct service_entry e, *old;
                        const char *why = NULL;
                        size_t len = 0;
                        char *text = NULL;
                        int q;

                        if (r == 0) {
                                q = read_file(dfd, fn, &text, &len);
                                if (q == -ENOMEM) {
                                        r = q;
                                } else if (q < 0) {
                                        fprintf(stderr, "kdbus-launcher: %s/%s: skipped: %s\n",
                                                dirs[prio], fn, strerror(-q));
                                } else {
                                        q = service_file_parse(text, len, fn, type,
                                                               systemd_activation, &e, &why);
                                        free(text);
                                        if (q == -ENOMEM) {
                                                r = q;
                                        } else if (q < 0) {
                                                fprintf(stderr,
                                                        "kdbus-launcher: %s/%s: skipped: %s\n",
                                                        dirs[prio], fn, why);
                                        } else if ((old = table_lookup(v, n, e.name))) {
                                                fprintf(stderr,
                                                        "kdbus-launcher: %s/%s: skipped: %s is already provided by %s\n",
                                                        dirs[prio], fn, e.name, old->path);
                                                service_entry_free(&e);
                                        } else {
                                                struct service_entry *nv;

                                                e.priority = prio;
                                                if (asprintf(&e.path, "%s/%s", dirs[prio], fn) < 0)
                                                        e.path = NULL;
                                                nv = e.path ? realloc(v, (n + 1) * sizeof(*v)) : NULL;
                                                if (!nv) {
                                                        service_entry_free(&e);
                                                        r = -ENOMEM;
                                                } else {
                                                        v = nv;
                                                        v[n++] = e;
                                                }
                                        }
                                }
                        }
                        free(list[i]);
                }
                free(list);
                close(dfd);
        }
        if (r < 0) {
                struct service_table t = { v, n };

                service_table_free(&t);
                return r;
        }
        if (n)
                qsort(v, n, sizeof(*v), cmp_entry);
        ret->entries = v;
        ret->n_entries = n;
        return 0;
}

const struct service_entry *service_table_find(const struct service_table *t, const char *name)
{
        size_t lo = 0, hi = t->n_entries;

        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                int c = strcmp(name, t->entries[mid].name);

                if (c == 0)
                        return &t->entries[mid];
                if (c < 0)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        return NULL;
}

void service_table_free(struct service_table *t)
{
        for (size_t i = 0; i < t->n_entries; i++)
                service_entry_free(&t->entries[i]);
        free(t->entries);
        t->entries = NULL;
        t->n_entries = 0;
}
