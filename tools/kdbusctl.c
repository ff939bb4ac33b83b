// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kdbusctl: inspect and drive a kdbus bus, in the manner of busctl.
 *
 * Verbs: list, status, call, emit, monitor (--pcap), pcap-dump, wait,
 * make-bus, make-endpoint. Exit codes: 0 success, 1 the operation failed
 * (D-Bus error, kernel refusal), 2 usage error, 3 no such name or peer,
 * 4 timeout. See Documentation/kdbusctl.1.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/kdbus.h>

#include "kdbus.h"
#include "signature.h"

enum {
        EXIT_OK = 0,
        EXIT_FAIL = 1,
        EXIT_USAGE = 2,
        EXIT_NOTFOUND = 3,
        EXIT_TIMEOUT = 4,
};

#define ARRAY_SIZE(a)           (sizeof(a) / sizeof((a)[0]))

#define KDBUS_DEBUGFS_BUSES     "/sys/kernel/debug/kdbus/buses"
#define KDBUS_DEBUGFS_STATS     "/sys/kernel/debug/kdbus/stats"

#define PCAP_LINKTYPE_DBUS      231
#define PCAP_SNAPLEN            134217728u

static const char *arg_bus;
static const char *arg_root = KDBUS_BUS_DEFAULT_ROOT;
static bool arg_user;
static bool arg_json;
static bool arg_quiet;
static bool arg_world;
static const char *arg_pcap;
static const char *arg_destination;
static uint64_t arg_timeout_usec;
static volatile sig_atomic_t quit;

static void help(void)
{
        printf("kdbusctl [OPTIONS...] COMMAND ...\n\n"
               "Introspect and drive a kdbus bus.\n\n"
               "Commands:\n"
               "  list                         List connections and names\n"
               "  status                       Every bus: connections, names, activatable names\n"
               "                               and their states, queued messages; the kernel's\n"
               "                               counters\n"
               "  status BUS                   The same for one bus (a directory below --root,\n"
               "                               e.g. 0-system)\n"
               "  status NAME|ID               Show everything known about a peer\n"
               "  call DEST PATH IFACE METHOD [SIGNATURE [ARGS...]]\n"
               "                               Call a method and print the reply\n"
               "  emit PATH IFACE SIGNAL [SIGNATURE [ARGS...]]\n"
               "                               Emit a signal (broadcast unless --destination)\n"
               "  monitor [RULE...]            Show bus traffic (needs bus ownership)\n"
               "  pcap-dump FILE               Print the messages of a pcap from monitor --pcap\n"
               "  wait NAME                    Wait until NAME has an owner\n"
               "  make-bus NAME [-- CMD...]    Create a bus; keep it while CMD runs or until killed\n"
               "  make-endpoint NAME [-- CMD...]\n"
               "                               Create a custom endpoint on the bus\n\n"
               "Options:\n"
               "  -h --help                    Show this help\n"
               "     --bus=PATH|ADDRESS        Bus node or kernel:path= address\n"
               "     --system                  The system bus (default)\n"
               "     --user                    The calling user's bus\n"
               "     --root=DIR                kdbusfs mount (default /sys/fs/kdbus)\n"
               "     --json                    Machine-readable output\n"
               "  -q --quiet                   Print nothing on success (call, emit)\n"
               "     --timeout=SECS            Call and wait timeout\n"
               "     --destination=NAME        Unicast signal for emit\n"
               "     --pcap=FILE               monitor: write pcap (link type 231)\n"
               "     --world                   make-bus/make-endpoint: world-accessible\n\n"
               "Exit status: 0 success, 1 failure, 2 usage, 3 no such name, 4 timeout.\n");
}

static int fail(int code, const char *fmt, ...)
{
        va_list ap;

        fprintf(stderr, "kdbusctl: ");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\n");
        return code;
}

static int errno_exit(int r)
{
        r = r < 0 ? -r : r;
        if (r == ENXIO || r == ESRCH || r == EADDRNOTAVAIL || r == ENOENT)
                return EXIT_NOTFOUND;
        if (r == ETIMEDOUT)
                return EXIT_TIMEOUT;
        return EXIT_FAIL;
}

/* the bus node: --bus, else the user's or the system bus below --root */
static void bus_node_path(char *path, size_t size)
{
        if (arg_bus)
                snprintf(path, size, "%s", arg_bus);
        else if (arg_user)
                snprintf(path, size, "%s/%u-user/bus", arg_root, (unsigned int)getuid());
        else
                snprintf(path, size, "%s/0-system/bus", arg_root);
}

static int connect_bus(struct kdbus_bus **ret, bool monitor)
{
        struct kdbus_bus *bus = NULL;
        char path[512];
        int r;

        bus_node_path(path, sizeof(path));

        r = kdbus_bus_new(&bus);
        if (r >= 0)
                r = kdbus_bus_set_address(bus, path);
        if (r >= 0)
                r = kdbus_bus_set_description(bus, "kdbusctl");
        if (r >= 0 && monitor)
                r = kdbus_bus_set_monitor(bus, true);
        if (r >= 0 && monitor)
                r = kdbus_bus_set_attach_recv(bus, KDBUS_ATTACH_TIMESTAMP | KDBUS_ATTACH_NAMES);
        if (r >= 0)
                r = kdbus_bus_start(bus);
        if (r < 0) {
                kdbus_bus_unref(bus);
                return fail(errno_exit(r), "cannot connect to %s: %s", path, strerror(-r));
        }
        *ret = bus;
        return 0;
}

/* ------------------------------------------------------------------ */
/* JSON and text output of values */

static void json_string(FILE *f, const char *s)
{
        fputc('"', f);
        for (; *s; s++) {
                unsigned char c = (unsigned char)*s;

                if (c == '"' || c == '\\')
                        fprintf(f, "\\%c", c);
                else if (c < 0x20)
                        fprintf(f, "\\u%04x", c);
                else
                        fputc(c, f);
        }
        fputc('"', f);
}

static void text_string(FILE *f, const char *s)
{
        fputc('"', f);
        for (; *s; s++) {
                if (*s == '"' || *s == '\\')
                        fputc('\\', f);
                fputc(*s, f);
        }
        fputc('"', f);
}

/*
 * monitor and pcap-dump abbreviate long arrays (@brief), so that a 100 MiB
 * payload is not printed as 400 MB of text: byte arrays longer than
 * BRIEF_MAX_BYTES show their first BRIEF_HEAD_BYTES, other arrays longer
 * than BRIEF_MAX_ELEMENTS their first BRIEF_MAX_ELEMENTS elements. call
 * prints replies in full.
 */
#define BRIEF_MAX_BYTES         32
#define BRIEF_HEAD_BYTES        16
#define BRIEF_MAX_ELEMENTS      16

static int print_any(FILE *f, struct kdbus_message *m, bool brief);

static int print_basic(FILE *f, struct kdbus_message *m, char type)
{
        union {
                uint8_t y; int b; int16_t n; uint16_t q; int32_t i; uint32_t u;
                int64_t x; uint64_t t; double d; const char *s; int h;
        } v;
        int r;

        if (!strchr("ybnqiuxtdhsog", type))
                return kdbus_message_skip(m, NULL);
        r = kdbus_message_read_basic(m, type, &v);
        if (r == -EBADF && type == 'h') {
                kdbus_message_skip(m, "h");
                v.h = -1;
                r = 1;
        }
        if (r < 0)
                return r;
        switch (type) {
        case 'y': fprintf(f, "%u", v.y); break;
        case 'b': fprintf(f, "%s", v.b ? "true" : "false"); break;
        case 'n': fprintf(f, "%d", v.n); break;
        case 'q': fprintf(f, "%u", v.q); break;
        case 'i': fprintf(f, "%" PRId32, v.i); break;
        case 'u': fprintf(f, "%" PRIu32, v.u); break;
        case 'x': fprintf(f, "%" PRId64, v.x); break;
        case 't': fprintf(f, "%" PRIu64, v.t); break;
        case 'd': fprintf(f, "%.17g", v.d); break;
        case 'h': fprintf(f, "%d", v.h); break;
        default:
                if (arg_json)
                        json_string(f, v.s);
                else
                        text_string(f, v.s);
                break;
        }
        return 0;
}

/*
 * The values up to the end of the current container, separated as the
 * output mode wants, the first @limit of them printed and the others
 * skipped. Returns how many values there were.
 */
static long print_values(FILE *f, struct kdbus_message *m, bool brief, size_t limit)
{
        size_t n = 0;
        int r;

        while ((r = kdbus_message_peek_type(m, NULL, NULL)) > 0) {
                if (n < limit) {
                        if (n)
                                fputs(arg_json ? "," : " ", f);
                        r = print_any(f, m, brief);
                } else {
                        r = kdbus_message_skip(m, NULL);
                }
                if (r < 0)
                        return r;
                n++;
        }
        return r < 0 ? r : (long)n;
}

/* a byte array in one read, printed in full or as its first bytes */
static int print_bytes(FILE *f, struct kdbus_message *m)
{
        const void *data;
        const uint8_t *p;
        size_t size;
        int r = kdbus_message_read_array(m, 'y', &data, &size);

        if (r < 0)
                return r;
        p = data;
        if (size <= BRIEF_MAX_BYTES) {
                fputc('[', f);
                for (size_t i = 0; i < size; i++)
                        fprintf(f, "%s%u", i ? (arg_json ? "," : " ") : "", p[i]);
                fputc(']', f);
        } else if (arg_json) {
                fprintf(f, "{\"bytes\":%zu,\"first\":[", size);
                for (size_t i = 0; i < BRIEF_HEAD_BYTES; i++)
                        fprintf(f, "%s%u", i ? "," : "", p[i]);
                fputs("]}", f);
        } else {
                fprintf(f, "[%zu bytes:", size);
                for (size_t i = 0; i < BRIEF_HEAD_BYTES; i++)
                        fprintf(f, " %02x", p[i]);
                fputs(" ... ]", f);
        }
        return 0;
}

/*
 * Arrays print as "[ elements ]"; abbreviated, in text as "[ first
 * elements ... (N elements)]", in JSON as {"elements":N,"first":[...]},
 * which needs the count before the elements: they go to a buffer first.
 */
static int print_array(FILE *f, struct kdbus_message *m, const char *contents, bool brief)
{
        FILE *out = f;
        char *buf = NULL;
        size_t len = 0;
        long n;
        int r;

        if (brief && strcmp(contents, "y") == 0)
                return print_bytes(f, m);
        r = kdbus_message_enter_container(m, 'a', contents);
        if (r < 0)
                return r;
        if (brief && arg_json) {
                out = open_memstream(&buf, &len);
                if (!out)
                        return -ENOMEM;
        } else {
                fputc('[', f);
        }
        n = print_values(out, m, brief, brief ? BRIEF_MAX_ELEMENTS : SIZE_MAX);
        if (out != f) {
                fclose(out);
                if (n > BRIEF_MAX_ELEMENTS)
                        fprintf(f, "{\"elements\":%ld,\"first\":[%s]}", n, buf);
                else
                        fprintf(f, "[%s]", buf);
                free(buf);
        } else {
                if (brief && n > BRIEF_MAX_ELEMENTS)
                        fprintf(f, " ... (%ld elements)", n);
                fputc(']', f);
        }
        return n < 0 ? (int)n : kdbus_message_exit_container(m);
}

/*
 * Structs print as "( fields )" in text, dict entries as "{ key value }",
 * variants as "SIGNATURE value"; in JSON structs and dict entries are
 * arrays and variants {"type":SIGNATURE,"data":value}.
 */
static int print_container(FILE *f, struct kdbus_message *m, char type, const char *contents,
                           bool brief)
{
        long n;
        int r;

        if (type == 'v' && arg_json) {
                fprintf(f, "{\"type\":");
                json_string(f, contents);
                fprintf(f, ",\"data\":");
        } else if (type == 'v') {
                fprintf(f, "%s ", contents);
        } else {
                fputs(arg_json ? "[" : type == '(' ? "(" : "{", f);
        }
        r = kdbus_message_enter_container(m, type, contents);
        if (r < 0)
                return r;
        n = print_values(f, m, brief, SIZE_MAX);
        if (n < 0)
                return (int)n;
        if (type != 'v')
                fputs(arg_json ? "]" : type == '(' ? ")" : "}", f);
        else if (arg_json)
                fputc('}', f);
        return kdbus_message_exit_container(m);
}

static int print_any(FILE *f, struct kdbus_message *m, bool brief)
{
        const char *contents = NULL;
        char type, *c;
        int r;

        r = kdbus_message_peek_type(m, &type, &contents);
        if (r <= 0)
                return r;
        if (!(type == 'a' || type == '(' || type == '{' || type == 'v'))
                return print_basic(f, m, type);
        /* the contents point into the reader's state, which entering changes */
        c = strdup(contents);
        if (!c)
                return -ENOMEM;
        if (type == 'a')
                r = print_array(f, m, c, brief);
        else
                r = print_container(f, m, type, c, brief);
        free(c);
        return r;
}

static int print_body(FILE *f, struct kdbus_message *m, bool brief)
{
        const char *sig = kdbus_message_get_signature(m);
        long n;

        kdbus_message_rewind(m);
        if (arg_json) {
                fprintf(f, "{\"type\":");
                json_string(f, sig);
                fprintf(f, ",\"data\":[");
                n = print_values(f, m, brief, SIZE_MAX);
                fprintf(f, "]}");
        } else {
                fprintf(f, "%s", sig);
                if (kdbus_message_peek_type(m, NULL, NULL) > 0)
                        fputc(' ', f);
                n = print_values(f, m, brief, SIZE_MAX);
        }
        fputc('\n', f);
        kdbus_message_rewind(m);
        return n < 0 ? (int)n : 0;
}

/* ------------------------------------------------------------------ */
/* building a body from command-line words */

static int append_words(struct kdbus_message *m, const char *sig, size_t sig_len, char **words,
                        int n_words, int *pos);

static int append_one(struct kdbus_message *m, const char *t, size_t tlen, char **words, int n_words,
                      int *pos)
{
        char contents[256];
        const char *w;
        int r;

        if (t[0] == 'a') {
                unsigned long n;
                char *end;

                if (*pos >= n_words)
                        return -EINVAL;
                n = strtoul(words[(*pos)++], &end, 10);
                if (*end)
                        return -EINVAL;
                memcpy(contents, t + 1, tlen - 1);
                contents[tlen - 1] = 0;
                r = kdbus_message_open_container(m, 'a', contents);
                if (r < 0)
                        return r;
                for (unsigned long i = 0; i < n; i++) {
                        r = append_one(m, contents, tlen - 1, words, n_words, pos);
                        if (r < 0)
                                return r;
                }
                return kdbus_message_close_container(m);
        }
        if (t[0] == '(' || t[0] == '{') {
                memcpy(contents, t + 1, tlen - 2);
                contents[tlen - 2] = 0;
                r = kdbus_message_open_container(m, t[0], contents);
                if (r < 0)
                        return r;
                r = append_words(m, contents, tlen - 2, words, n_words, pos);
                if (r < 0)
                        return r;
                return kdbus_message_close_container(m);
        }
        if (*pos >= n_words)
                return -EINVAL;
        w = words[(*pos)++];
        if (t[0] == 'v') {
                r = kdbus_message_open_container(m, 'v', w);
                if (r < 0)
                        return r;
                r = append_words(m, w, strlen(w), words, n_words, pos);
                if (r < 0)
                        return r;
                return kdbus_message_close_container(m);
        }
        switch (t[0]) {
        case 's': case 'o': case 'g':
                return kdbus_message_append_basic(m, t[0], w);
        case 'b': {
                int b = !strcmp(w, "true") || !strcmp(w, "yes") || !strcmp(w, "1");

                if (!b && strcmp(w, "false") && strcmp(w, "no") && strcmp(w, "0"))
                        return -EINVAL;
                return kdbus_message_append_basic(m, 'b', &b);
        }
        case 'd': {
                char *end;
                double d = strtod(w, &end);

                if (*end || end == w)
                        return -EINVAL;
                return kdbus_message_append_basic(m, 'd', &d);
        }
        case 'h': {
                int fd = open(w, O_RDONLY | O_CLOEXEC);

                if (fd < 0)
                        return -errno;
                r = kdbus_message_append_basic(m, 'h', &fd);
                close(fd);
                return r;
        }
        default: {
                char *end;
                long long sv = 0;
                unsigned long long uv = 0;
                bool is_signed = strchr("nix", t[0]) != NULL;
                union { uint8_t y; int16_t n; uint16_t q; int32_t i; uint32_t u; int64_t x; uint64_t t; } v;

                errno = 0;
                if (is_signed)
                        sv = strtoll(w, &end, 0);
                else
                        uv = strtoull(w, &end, 0);
                if (*end || end == w || errno)
                        return -EINVAL;
                switch (t[0]) {
                case 'y': v.y = (uint8_t)uv; break;
                case 'n': v.n = (int16_t)sv; break;
                case 'q': v.q = (uint16_t)uv; break;
                case 'i': v.i = (int32_t)sv; break;
                case 'u': v.u = (uint32_t)uv; break;
                case 'x': v.x = (int64_t)sv; break;
                case 't': v.t = (uint64_t)uv; break;
                default: return -EINVAL;
                }
                return kdbus_message_append_basic(m, t[0], &v);
        }
        }
}

static int append_words(struct kdbus_message *m, const char *sig, size_t sig_len, char **words,
                        int n_words, int *pos)
{
        size_t off = 0;

        while (off < sig_len) {
                size_t len;
                char buf[256];
                int r;

                memcpy(buf, sig + off, sig_len - off);
                buf[sig_len - off] = 0;
                r = kdbus_signature_next(buf, 0, 0, &len);
                if (r < 0)
                        return r;
                r = append_one(m, buf, len, words, n_words, pos);
                if (r < 0)
                        return r;
                off += len;
        }
        return 0;
}

static int append_args(struct kdbus_message *m, int argc, char **argv)
{
        int pos = 1, r;

        if (argc == 0)
                return 0;
        if (strlen(argv[0]) > 255 || kdbus_signature_validate(argv[0]) < 0)
                return fail(EXIT_USAGE, "invalid signature '%s'", argv[0]);
        r = append_words(m, argv[0], strlen(argv[0]), argv, argc, &pos);
        if (r < 0)
                return fail(EXIT_USAGE, "arguments do not fit signature '%s': %s", argv[0],
                            strerror(-r));
        if (pos != argc)
                return fail(EXIT_USAGE, "too many arguments for signature '%s'", argv[0]);
        return 0;
}

/* ------------------------------------------------------------------ */
/* verbs */

static int verb_call(int argc, char **argv)
{
        struct kdbus_error err = KDBUS_ERROR_NULL;
        struct kdbus_message *m = NULL, *reply = NULL;
        struct kdbus_bus *bus = NULL;
        int r;

        if (argc < 5)
                return fail(EXIT_USAGE, "call needs DEST PATH IFACE METHOD");
        r = connect_bus(&bus, false);
        if (r)
                return r;
        r = kdbus_message_new_method_call(&m, argv[1], argv[2], argv[3], argv[4]);
        if (r < 0) {
                r = fail(EXIT_USAGE, "invalid destination, path, interface or method: %s",
                         strerror(-r));
                goto out;
        }
        r = append_args(m, argc - 5, argv + 5);
        if (r)
                goto out;
        r = kdbus_bus_call(bus, m, arg_timeout_usec, &err, &reply);
        if (r < 0) {
                r = fail(errno_exit(r), "call failed: %s: %s", err.name ? err.name : "?",
                         err.message ? err.message : strerror(-r));
                goto out;
        }
        if (!arg_quiet && (arg_json || strcmp(kdbus_message_get_signature(reply), "") != 0))
                print_body(stdout, reply, false);
        r = EXIT_OK;
out:
        kdbus_error_free(&err);
        kdbus_message_unref(m);
        kdbus_message_unref(reply);
        kdbus_bus_unref(bus);
        return r;
}

static int verb_emit(int argc, char **argv)
{
        struct kdbus_message *m = NULL;
        struct kdbus_bus *bus = NULL;
        int r;

        if (argc < 4)
                return fail(EXIT_USAGE, "emit needs PATH IFACE SIGNAL");
        r = connect_bus(&bus, false);
        if (r)
                return r;
        r = kdbus_message_new_signal(&m, argv[1], argv[2], argv[3]);
        if (r >= 0 && arg_destination)
                r = kdbus_message_set_destination(m, arg_destination);
        if (r < 0) {
                r = fail(EXIT_USAGE, "invalid path, interface, signal or destination");
                goto out;
        }
        r = append_args(m, argc - 4, argv + 4);
        if (r)
                goto out;
        r = kdbus_bus_send(bus, m, NULL);
        r = r < 0 ? fail(errno_exit(r), "emit failed: %s", strerror(-r)) : EXIT_OK;
out:
        kdbus_message_unref(m);
        kdbus_bus_unref(bus);
        return r;
}

static const char *user_name(uint64_t uid, char *buf, size_t size)
{
        snprintf(buf, size, "%" PRIu64, uid);
        return buf;
}

static int verb_list(int argc, char **argv)
{
        struct kdbus_name_entry *e = NULL;
        struct kdbus_bus *bus = NULL;
        size_t n = 0;
        bool first = true;
        int r;

        (void)argc;
        (void)argv;
        r = connect_bus(&bus, false);
        if (r)
                return r;
        r = kdbus_bus_list(bus, KDBUS_LIST_UNIQUE | KDBUS_LIST_NAMES | KDBUS_LIST_ACTIVATORS |
                           KDBUS_LIST_QUEUED, &e, &n);
        if (r < 0) {
                kdbus_bus_unref(bus);
                return fail(EXIT_FAIL, "KDBUS_CMD_LIST failed: %s", strerror(-r));
        }
        if (arg_json)
                printf("[");
        else
                printf("%-32s %7s %-15s %-6s %-10s %-20s %s\n", "NAME", "PID", "PROCESS", "USER",
                       "CONNECTION", "DESCRIPTION", "FLAGS");
        for (size_t pass = 0; pass < 2; pass++) {
                /* unique names first (one per connection), then the names */
                for (size_t i = 0; i < n; i++) {
                        struct kdbus_metadata md;
                        char unique[32], uid[24], flags[64] = "";
                        const char *name;

                        snprintf(unique, sizeof(unique), ":1.%" PRIu64, e[i].id);
                        if (pass == 0) {
                                bool seen = false;

                                for (size_t k = 0; k < i; k++)
                                        if (e[k].id == e[i].id)
                                                seen = true;
                                if (seen)
                                        continue;
                                name = unique;
                        } else {
                                if (!e[i].name)
                                        continue;
                                name = e[i].name;
                        }
                        if (kdbus_bus_get_conn_info(bus, unique, KDBUS_ATTACH_PIDS |
                                                    KDBUS_ATTACH_CREDS | KDBUS_ATTACH_PID_COMM |
                                                    KDBUS_ATTACH_CONN_DESCRIPTION, &md) < 0)
                                memset(&md, 0, sizeof(md));
                        if (e[i].conn_flags & KDBUS_HELLO_ACTIVATOR)
                                strcat(flags, "activator ");
                        if (e[i].conn_flags & KDBUS_HELLO_POLICY_HOLDER)
                                strcat(flags, "policy-holder ");
                        if (pass && (e[i].name_flags & KDBUS_NAME_IN_QUEUE))
                                strcat(flags, "queued ");
                        if (pass && (e[i].name_flags & KDBUS_NAME_ALLOW_REPLACEMENT))
                                strcat(flags, "replaceable ");
                        if (flags[0])
                                flags[strlen(flags) - 1] = 0;
                        if (arg_json) {
                                printf("%s{\"name\":", first ? "" : ",");
                                json_string(stdout, name);
                                printf(",\"id\":%" PRIu64 ",\"connection\":\"%s\"", e[i].id, unique);
                                if (md.has_pids)
                                        printf(",\"pid\":%" PRIu64, md.pid);
                                if (md.has_creds)
                                        printf(",\"uid\":%" PRIu64, md.euid);
                                if (md.pid_comm) {
                                        printf(",\"process\":");
                                        json_string(stdout, md.pid_comm);
                                }
                                if (md.description) {
                                        printf(",\"description\":");
                                        json_string(stdout, md.description);
                                }
                                printf(",\"flags\":");
                                json_string(stdout, flags);
                                printf("}");
                        } else {
                                char pid[24] = "-";

                                if (md.has_pids)
                                        snprintf(pid, sizeof(pid), "%" PRIu64, md.pid);
                                printf("%-32s %7s %-15s %-6s %-10s %-20s %s\n", name, pid,
                                       md.pid_comm ? md.pid_comm : "-",
                                       md.has_creds ? user_name(md.euid, uid, sizeof(uid)) : "-",
                                       unique, md.description ? md.description : "-",
                                       flags[0] ? flags : "-");
                        }
                        first = false;
                        kdbus_metadata_free(&md);
                }
        }
        if (arg_json)
                printf("]\n");
        kdbus_name_entries_free(e, n);
        kdbus_bus_unref(bus);
        return EXIT_OK;
}

static void status_field_u(const char *key, uint64_t v, bool *first)
{
        if (arg_json)
                printf("%s\"%s\":%" PRIu64, *first ? "" : ",", key, v);
        else
                printf("%s=%" PRIu64 "\n", key, v);
        *first = false;
}

static void status_field_s(const char *key, const char *v, bool *first)
{
        if (!v)
                return;
        if (arg_json) {
                printf("%s\"%s\":", *first ? "" : ",", key);
                json_string(stdout, v);
        } else {
                printf("%s=%s\n", key, v);
        }
        *first = false;
}

/* ------------------------------------------------------------------ */
/* status without arguments: an overview of every bus */

/*
 * The launcher publishes its name states (kdbus-launcher --state-file):
 * /run/kdbus/launcher-<bus>.state for system units,
 * $XDG_RUNTIME_DIR/kdbus/launcher-<bus>.state for user units. Returns the
 * state of @name there, or NULL.
 */
static const char *launcher_state_of(const char *bus_dir, const char *name, char *buf,
                                     size_t size, bool *have_file)
{
        const char *runtime = getenv("XDG_RUNTIME_DIR");
        char path[2][600];
        const char *state = NULL;

        snprintf(path[0], sizeof(path[0]), "/run/kdbus/launcher-%s.state", bus_dir);
        snprintf(path[1], sizeof(path[1]), "%s/kdbus/launcher-%s.state", runtime ?: "/nonexistent",
                 bus_dir);
        for (int i = 0; i < 2 && !state; i++) {
                FILE *f = fopen(path[i], "re");
                char line[600], n[300], st[32];

                if (!f)
                        continue;
                *have_file = true;
                while (fgets(line, sizeof(line), f)) {
                        if (sscanf(line, "%299s %31s", n, st) == 2 && !strcmp(n, name)) {
                                snprintf(buf, size, "%s", st);
                                state = buf;
                                break;
                        }
                }
                fclose(f);
        }
        return state;
}

/*
 * The messages queued on the bus in directory bus_dir below --root, from
 * the kernel's debugfs file (one line per live bus, named by the device
 * and inode numbers of its directory, which stat(2) matches even when two
 * kdbusfs mounts have a bus of the same name): 0 and *n on success,
 * -errno if the file or the bus's line is missing.
 */
static int queued_messages_of(const char *bus_dir, unsigned long long *n)
{
        unsigned long long ino, conns, queued;
        unsigned int maj, min;
        char path[600], line[512], name[256];
        struct stat st;
        int r = -ESRCH;
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", arg_root, bus_dir);
        if (stat(path, &st) < 0)
                return -errno;
        f = fopen(KDBUS_DEBUGFS_BUSES, "re");
        if (!f)
                return -errno;
        while (fgets(line, sizeof(line), f)) {
                if (sscanf(line, "dev %u:%u ino %llu name %255s connections %llu queued_messages %llu",
                           &maj, &min, &ino, name, &conns, &queued) != 6)
                        continue;
                if (makedev(maj, min) == st.st_dev && ino == st.st_ino) {
                        *n = queued;
                        r = 0;
                        break;
                }
        }
        fclose(f);
        return r;
}

static void status_queued(const char *bus_dir)
{
        unsigned long long n;
        int r = queued_messages_of(bus_dir, &n);

        if (r == 0)
                printf("  queued messages %llu\n", n);
        else if (r == -ENOENT || r == -EACCES || r == -EPERM)
                printf("  queued messages ? (needs debugfs: %s)\n", KDBUS_DEBUGFS_BUSES);
        else if (r == -ESRCH)
                printf("  queued messages ? (bus not in %s)\n", KDBUS_DEBUGFS_BUSES);
        else
                printf("  queued messages ? (%s: %s)\n", KDBUS_DEBUGFS_BUSES, strerror(-r));
}

static void status_bus(const char *bus_dir)
{
        struct kdbus_name_entry *e = NULL;
        struct kdbus_bus *bus = NULL;
        size_t n = 0, n_conn = 0, n_names = 0, n_act = 0, n_queued = 0;
        bool have_state_file = false;
        char path[600];
        int r;

        snprintf(path, sizeof(path), "%s/%s/bus", arg_root, bus_dir);
        printf("bus %s\n", path);
        r = kdbus_bus_open(&bus, path);
        if (r >= 0)
                r = kdbus_bus_list(bus, KDBUS_LIST_UNIQUE | KDBUS_LIST_NAMES |
                                   KDBUS_LIST_ACTIVATORS | KDBUS_LIST_QUEUED, &e, &n);
        if (r < 0) {
                printf("  (cannot read: %s)\n", strerror(-r));
                status_queued(bus_dir);
                kdbus_bus_unref(bus);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                bool seen = false;

                for (size_t k = 0; k < i; k++)
                        seen |= e[k].id == e[i].id;
                if (!seen && !(e[i].conn_flags & KDBUS_HELLO_ACTIVATOR))
                        n_conn++;
                if (!e[i].name)
                        continue;
                if (e[i].name_flags & KDBUS_NAME_ACTIVATOR)
                        n_act++;
                else if (e[i].name_flags & KDBUS_NAME_IN_QUEUE)
                        n_queued++;
                else
                        n_names++;
        }
        printf("  connections %zu (own: %s), names %zu, queued owners %zu, activatable %zu\n",
               n_conn, kdbus_bus_get_unique_name(bus), n_names, n_queued, n_act);
        status_queued(bus_dir);
        if (n_act)
                printf("  %-40s %-9s %s\n", "ACTIVATABLE NAME", "STATE", "OWNER");
        for (size_t i = 0; i < n; i++) {
                char owner[32] = "-", buf[32];
                const char *state;

                if (!e[i].name || !(e[i].name_flags & KDBUS_NAME_ACTIVATOR))
                        continue;
                state = "idle";
                for (size_t k = 0; k < n; k++) {
                        if (e[k].name && !strcmp(e[k].name, e[i].name) &&
                            !(e[k].name_flags & (KDBUS_NAME_ACTIVATOR | KDBUS_NAME_IN_QUEUE))) {
                                snprintf(owner, sizeof(owner), ":1.%" PRIu64, e[k].id);
                                state = "running";
                        }
                }
                state = launcher_state_of(bus_dir, e[i].name, buf, sizeof(buf),
                                          &have_state_file) ?: state;
                printf("  %-40s %-9s %s\n", e[i].name, state, owner);
        }
        if (n_act && !have_state_file)
                printf("  (no launcher state file: states are idle/running as the kernel shows them)\n");
        kdbus_name_entries_free(e, n);
        kdbus_bus_unref(bus);
}

static int cmp_dirent_name(const struct dirent **a, const struct dirent **b)
{
        return strcmp((*a)->d_name, (*b)->d_name);
}

static int verb_status_all(void)
{
        struct dirent **list = NULL;
        char line[256];
        int count;
        FILE *f;

        count = scandir(arg_root, &list, NULL, cmp_dirent_name);
        if (count < 0)
                return fail(EXIT_FAIL, "%s: %s", arg_root, strerror(errno));
        for (int i = 0; i < count; i++) {
                char node[600];

                snprintf(node, sizeof(node), "%s/%s/bus", arg_root, list[i]->d_name);
                if (list[i]->d_name[0] != '.' && access(node, F_OK) == 0)
                        status_bus(list[i]->d_name);
                free(list[i]);
        }
        free(list);
        f = fopen(KDBUS_DEBUGFS_STATS, "re");
        if (f) {
                printf("counters (%s)\n", KDBUS_DEBUGFS_STATS);
                while (fgets(line, sizeof(line), f))
                        printf("  %s", line);
                fclose(f);
        } else {
                printf("counters: %s: %s\n", KDBUS_DEBUGFS_STATS, strerror(errno));
        }
        return 0;
}

/* a bus directory name: <uid>-<name>, which no peer name or ID can be */
static bool is_bus_dir_name(const char *s)
{
        size_t digits = strspn(s, "0123456789");

        return digits > 0 && s[digits] == '-' && !strchr(s, '/');
}

static int verb_status(int argc, char **argv)
{
        struct kdbus_metadata md;
        struct kdbus_bus *bus = NULL;
        char name[300], unique[32];
        bool first = true;
        int r;

        if (argc == 1)
                return verb_status_all();
        if (argc != 2)
                return fail(EXIT_USAGE, "status takes at most one BUS, NAME or ID");
        if (is_bus_dir_name(argv[1])) {
                char node[600];

                snprintf(node, sizeof(node), "%s/%s/bus", arg_root, argv[1]);
                if (access(node, F_OK) < 0)
                        return fail(EXIT_NOTFOUND, "%s: no such bus", node);
                status_bus(argv[1]);
                return EXIT_OK;
        }
        if (argv[1][0] >= '0' && argv[1][0] <= '9')
                snprintf(name, sizeof(name), ":1.%s", argv[1]);
        else
                snprintf(name, sizeof(name), "%s", argv[1]);
        r = connect_bus(&bus, false);
        if (r)
                return r;
        r = kdbus_bus_get_conn_info(bus, name, _KDBUS_ATTACH_ALL, &md);
        if (r < 0) {
                kdbus_bus_unref(bus);
                return fail(errno_exit(r == -ESRCH ? -ENXIO : r), "%s: %s", name,
                            r == -ESRCH || r == -ENXIO ? "no such name or connection" : strerror(-r));
        }
        snprintf(unique, sizeof(unique), ":1.%" PRIu64, md.src_id);
        if (arg_json)
                printf("{");
        status_field_s("Name", name, &first);
        status_field_s("UniqueName", unique, &first);
        status_field_u("ID", md.src_id, &first);
        status_field_u("ConnectionFlags", md.info_flags, &first);
        if (md.has_pids) {
                status_field_u("PID", md.pid, &first);
                status_field_u("TID", md.tid, &first);
                status_field_u("PPID", md.ppid, &first);
        }
        if (md.has_creds) {
                status_field_u("UID", md.uid, &first);
                status_field_u("EUID", md.euid, &first);
                status_field_u("SUID", md.suid, &first);
                status_field_u("FSUID", md.fsuid, &first);
                status_field_u("GID", md.gid, &first);
                status_field_u("EGID", md.egid, &first);
                status_field_u("SGID", md.sgid, &first);
                status_field_u("FSGID", md.fsgid, &first);
        }
        if (md.n_auxgroups) {
                char buf[1024] = "";

                for (size_t i = 0; i < md.n_auxgroups && strlen(buf) < 1000; i++)
                        snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%" PRIu64,
                                 i ? " " : "", md.auxgroups[i]);
                status_field_s("SupplementaryGIDs", buf, &first);
        }
        status_field_s("Comm", md.pid_comm, &first);
        status_field_s("TIDComm", md.tid_comm, &first);
        status_field_s("Exe", md.exe, &first);
        status_field_s("CommandLine", md.cmdline, &first);
        status_field_s("CGroup", md.cgroup, &first);
        status_field_s("Label", md.seclabel, &first);
        status_field_s("Description", md.description, &first);
        if (md.has_audit) {
                status_field_u("AuditSessionID", md.audit_sessionid, &first);
                status_field_u("AuditLoginUID", md.audit_loginuid, &first);
        }
        if (md.n_names) {
                char buf[4096] = "";

                for (size_t i = 0; i < md.n_names && strlen(buf) < 3800; i++)
                        snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s",
                                 i ? " " : "", md.names[i]);
                status_field_s("OwnedNames", buf, &first);
        }
        if (arg_json)
                printf("}\n");
        kdbus_metadata_free(&md);
        kdbus_bus_unref(bus);
        return EXIT_OK;
}

static const char *type_word(uint8_t t)
{
        static const char *const w[] = { "invalid", "method_call", "method_return", "error", "signal" };

        return t <= 4 ? w[t] : "unknown";
}

/* the string header fields, named in JSON and in text output */
static const struct {
        const char *json, *text;
        const char *(*get)(const struct kdbus_message *m);
} header_fields[] = {
        { "sender", "Sender", kdbus_message_get_sender },
        { "destination", "Destination", kdbus_message_get_destination },
        { "path", "Path", kdbus_message_get_path },
        { "interface", "Interface", kdbus_message_get_interface },
        { "member", "Member", kdbus_message_get_member },
        { "error_name", "ErrorName", kdbus_message_get_error_name },
};

static void print_message(struct kdbus_message *m, const struct kdbus_metadata *md)
{
        uint32_t rs = 0;
        bool has_rs = kdbus_message_get_reply_serial(m, &rs) >= 0;

        if (arg_json) {
                printf("{\"type\":\"%s\",\"serial\":%" PRIu32, type_word(kdbus_message_get_type(m)),
                       kdbus_message_get_serial(m));
                if (has_rs)
                        printf(",\"reply_serial\":%" PRIu32, rs);
                if (md && md->has_timestamp)
                        printf(",\"timestamp_ns\":%" PRIu64, md->realtime_ns);
                for (size_t i = 0; i < ARRAY_SIZE(header_fields); i++) {
                        const char *v = header_fields[i].get(m);

                        if (v) {
                                printf(",\"%s\":", header_fields[i].json);
                                json_string(stdout, v);
                        }
                }
                printf(",\"payload\":");
                print_body(stdout, m, true);
                printf("}\n");
        } else {
                printf("> Type=%s Flags=0x%x Serial=%" PRIu32, type_word(kdbus_message_get_type(m)),
                       kdbus_message_get_flags(m), kdbus_message_get_serial(m));
                if (has_rs)
                        printf(" ReplySerial=%" PRIu32, rs);
                if (md && md->has_timestamp)
                        printf(" Timestamp=%" PRIu64 ".%06" PRIu64, md->realtime_ns / 1000000000,
                               (md->realtime_ns / 1000) % 1000000);
                printf("\n ");
                for (size_t i = 0; i < ARRAY_SIZE(header_fields); i++) {
                        const char *v = header_fields[i].get(m);

                        if (v)
                                printf(" %s=%s", header_fields[i].text, v);
                }
                printf("\n  ");
                print_body(stdout, m, true);
        }
        fflush(stdout);
}

static FILE *pcap;

static void pcap_write(struct kdbus_message *m, const struct kdbus_metadata *md)
{
        const void *data;
        size_t size;
        uint32_t rec[4];
        uint64_t ns;

        if (kdbus_message_get_data(m, &data, &size) < 0)
                return;
        if (md && md->has_timestamp) {
                ns = md->realtime_ns;
        } else {
                struct timespec ts;

                clock_gettime(CLOCK_REALTIME, &ts);
                ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
        }
        rec[0] = (uint32_t)(ns / 1000000000ULL);
        rec[1] = (uint32_t)((ns / 1000ULL) % 1000000ULL);
        rec[2] = (uint32_t)(size < PCAP_SNAPLEN ? size : PCAP_SNAPLEN);
        rec[3] = (uint32_t)size;
        fwrite(rec, sizeof(rec), 1, pcap);
        fwrite(data, rec[2], 1, pcap);
        fflush(pcap);
}

static int on_monitor(struct kdbus_bus *bus, struct kdbus_message *m, void *userdata)
{
        const struct kdbus_metadata *md = kdbus_bus_get_current_metadata(bus);

        (void)userdata;
        if (pcap)
                pcap_write(m, md);
        else
                print_message(m, md);
        return 1;
}

static void on_quit(int sig)
{
        (void)sig;
        quit = 1;
}

static int verb_monitor(int argc, char **argv)
{
        struct kdbus_bus *bus = NULL;
        int r;

        r = connect_bus(&bus, true);
        if (r)
                return r;
        if (arg_pcap) {
                uint32_t hdr[6] = { 0xa1b2c3d4, 2 | (4u << 16), 0, 0, PCAP_SNAPLEN,
                                    PCAP_LINKTYPE_DBUS };

                pcap = strcmp(arg_pcap, "-") == 0 ? stdout : fopen(arg_pcap, "we");
                if (!pcap) {
                        kdbus_bus_unref(bus);
                        return fail(EXIT_FAIL, "%s: %s", arg_pcap, strerror(errno));
                }
                fwrite(hdr, sizeof(hdr), 1, pcap);
                fflush(pcap);
        }
        if (argc > 1) {
                for (int i = 1; i < argc; i++) {
                        r = kdbus_bus_add_match(bus, NULL, argv[i], on_monitor, NULL);
                        if (r < 0) {
                                kdbus_bus_unref(bus);
                                return fail(EXIT_USAGE, "invalid match rule '%s'", argv[i]);
                        }
                }
        } else {
                kdbus_bus_add_filter(bus, NULL, on_monitor, NULL);
        }
        signal(SIGINT, on_quit);
        signal(SIGTERM, on_quit);
        if (!arg_quiet && !pcap)
                fprintf(stderr, "Monitoring bus %s as %s.\n", kdbus_bus_get_path(bus),
                        kdbus_bus_get_unique_name(bus));
        /* unbuffered start marker for scripts that wait for readiness */
        if (pcap && pcap != stdout)
                fprintf(stderr, "Monitoring bus %s, writing %s.\n", kdbus_bus_get_path(bus), arg_pcap);
        while (!quit) {
                r = kdbus_bus_process(bus);
                if (r < 0)
                        break;
                if (r == 0)
                        kdbus_bus_wait(bus, 200 * 1000);
        }
        if (pcap && pcap != stdout)
                fclose(pcap);
        kdbus_bus_unref(bus);
        return r < 0 && !quit ? fail(EXIT_FAIL, "monitor: %s", strerror(-r)) : EXIT_OK;
}

static int verb_pcap_dump(int argc, char **argv)
{
        uint32_t hdr[6], rec[4];
        FILE *f;
        int n = 0, r = EXIT_OK;

        if (argc != 2)
                return fail(EXIT_USAGE, "pcap-dump needs FILE");
        f = fopen(argv[1], "re");
        if (!f)
                return fail(EXIT_NOTFOUND, "%s: %s", argv[1], strerror(errno));
        if (fread(hdr, sizeof(hdr), 1, f) != 1 || hdr[0] != 0xa1b2c3d4 ||
            hdr[5] != PCAP_LINKTYPE_DBUS) {
                fclose(f);
                return fail(EXIT_FAIL, "%s: not a pcap with link type %d", argv[1], PCAP_LINKTYPE_DBUS);
        }
        while (fread(rec, sizeof(rec), 1, f) == 1) {
                struct kdbus_metadata md = { 0 };
                struct kdbus_message *m = NULL;
                uint8_t *buf;

                if (rec[2] > PCAP_SNAPLEN) {
                        r = fail(EXIT_FAIL, "record %d too large", n);
                        break;
                }
                buf = malloc(rec[2] ? rec[2] : 1);
                if (!buf || fread(buf, 1, rec[2], f) != rec[2]) {
                        free(buf);
                        r = fail(EXIT_FAIL, "truncated record %d", n);
                        break;
                }
                md.has_timestamp = true;
                md.realtime_ns = (uint64_t)rec[0] * 1000000000ULL + (uint64_t)rec[1] * 1000ULL;
                if (kdbus_message_parse(&m, buf, rec[2]) < 0) {
                        r = fail(EXIT_FAIL, "record %d is not a valid D-Bus message", n);
                        free(buf);
                        break;
                }
                print_message(m, &md);
                kdbus_message_unref(m);
                free(buf);
                n++;
        }
        fclose(f);
        if (!arg_json && !arg_quiet)
                fprintf(stderr, "%d messages\n", n);
        return r;
}

static int on_owner_changed(struct kdbus_bus *bus, struct kdbus_message *m, void *userdata)
{
        const char *name, *old_owner, *new_owner;
        bool *done = userdata;

        (void)bus;
        if (kdbus_message_read(m, "sss", &name, &old_owner, &new_owner) >= 0 && new_owner[0])
                *done = true;
        return 1;
}

static int verb_wait(int argc, char **argv)
{
        struct kdbus_bus *bus = NULL;
        char rule[600], *owner = NULL;
        bool done = false;
        int r;

        if (argc != 2)
                return fail(EXIT_USAGE, "wait needs NAME");
        r = connect_bus(&bus, false);
        if (r)
                return r;
        snprintf(rule, sizeof(rule),
                 "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                 "member='NameOwnerChanged',arg0='%s'", argv[1]);
        r = kdbus_bus_add_match(bus, NULL, rule, on_owner_changed, &done);
        if (r < 0) {
                kdbus_bus_unref(bus);
                return fail(r == -EINVAL ? EXIT_USAGE : EXIT_FAIL, "cannot watch '%s': %s", argv[1],
                            strerror(-r));
        }
        /* the match is in place first, so an owner appearing now is not missed */
        if (kdbus_bus_get_name_owner(bus, argv[1], &owner) >= 0)
                done = true;
        signal(SIGINT, on_quit);
        r = kdbus_bus_run_until(bus, &done, arg_timeout_usec ? arg_timeout_usec : UINT64_MAX);
        if (!owner)
                kdbus_bus_get_name_owner(bus, argv[1], &owner);
        if (r == 0 && !arg_quiet)
                printf("%s\n", owner ? owner : argv[1]);
        free(owner);
        kdbus_bus_unref(bus);
        if (r == -ETIMEDOUT)
                return fail(EXIT_TIMEOUT, "timed out waiting for %s", argv[1]);
        return r < 0 ? fail(EXIT_FAIL, "wait: %s", strerror(-r)) : EXIT_OK;
}

/* keep @fd (the bus or endpoint) alive while [--] CMD runs, or until a signal */
static int hold(int fd, const char *path, int argc, char **argv)
{
        int status;
        pid_t pid;

        if (argc > 0 && strcmp(argv[0], "--") == 0) {
                argc--;
                argv++;
        }
        if (argc == 0) {
                printf("%s\n", path);
                fflush(stdout);
                signal(SIGINT, on_quit);
                signal(SIGTERM, on_quit);
                while (!quit)
                        pause();
                close(fd);
                return EXIT_OK;
        }
        pid = fork();
        if (pid < 0)
                return fail(EXIT_FAIL, "fork: %s", strerror(errno));
        if (pid == 0) {
                char addr[600];

                snprintf(addr, sizeof(addr), "kernel:path=%s", path);
                setenv("KDBUS_BUS_PATH", path, 1);
                setenv("DBUS_SESSION_BUS_ADDRESS", addr, 1);
                execvp(argv[0], argv);
                fprintf(stderr, "kdbusctl: %s: %s\n", argv[0], strerror(errno));
                _exit(127);
        }
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        close(fd);
        return WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_FAIL;
}

static int verb_make_bus(int argc, char **argv)
{
        char *path = NULL;
        int fd, r;

        if (argc < 2)
                return fail(EXIT_USAGE, "make-bus needs NAME");
        r = kdbus_bus_make(arg_root, argv[1], arg_world, &fd, &path);
        if (r < 0)
                return fail(r == -EEXIST ? EXIT_FAIL : errno_exit(r), "cannot create bus %s: %s",
                            argv[1], strerror(-r));
        r = hold(fd, path, argc - 2, argv + 2);
        free(path);
        return r;
}

static int verb_make_endpoint(int argc, char **argv)
{
        char bus_path[512], *path = NULL;
        int fd, r;

        if (argc < 2)
                return fail(EXIT_USAGE, "make-endpoint needs NAME");
        bus_node_path(bus_path, sizeof(bus_path));
        r = kdbus_endpoint_make(bus_path, argv[1], arg_world, &fd, &path);
        if (r < 0)
                return fail(errno_exit(r), "cannot create endpoint %s on %s: %s", argv[1], bus_path,
                            strerror(-r));
        r = hold(fd, path, argc - 2, argv + 2);
        free(path);
        return r;
}

int main(int argc, char **argv)
{
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "bus", required_argument, NULL, 'B' },
                { "system", no_argument, NULL, 'S' },
                { "user", no_argument, NULL, 'U' },
                { "root", required_argument, NULL, 'R' },
                { "json", no_argument, NULL, 'j' },
                { "quiet", no_argument, NULL, 'q' },
                { "timeout", required_argument, NULL, 't' },
                { "destination", required_argument, NULL, 'd' },
                { "pcap", required_argument, NULL, 'p' },
                { "world", no_argument, NULL, 'w' },
                {}
        };
        static const struct {
                const char *name;
                int (*fn)(int, char **);
        } verbs[] = {
                { "list", verb_list }, { "status", verb_status }, { "call", verb_call },
                { "emit", verb_emit }, { "monitor", verb_monitor }, { "pcap-dump", verb_pcap_dump },
                { "wait", verb_wait }, { "make-bus", verb_make_bus },
                { "make-endpoint", verb_make_endpoint },
        };
        int c;

        /* stop at the verb so that "-- CMD" and negative numbers reach it */
        while ((c = getopt_long(argc, argv, "+hq", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help();
                        return EXIT_OK;
                case 'B':
                        arg_bus = optarg;
                        break;
                case 'S':
                        arg_user = false;
                        break;
                case 'U':
                        arg_user = true;
                        break;
                case 'R':
                        arg_root = optarg;
                        break;
                case 'j':
                        arg_json = true;
                        break;
                case 'q':
                        arg_quiet = true;
                        break;
                case 't': {
                        char *end;
                        double s = strtod(optarg, &end);

                        if (*end || s <= 0)
                                return fail(EXIT_USAGE, "invalid timeout '%s'", optarg);
                        arg_timeout_usec = (uint64_t)(s * 1e6);
                        break;
                }
                case 'd':
                        arg_destination = optarg;
                        break;
                case 'p':
                        arg_pcap = optarg;
                        break;
                case 'w':
                        arg_world = true;
                        break;
                default:
                        return EXIT_USAGE;
                }
        }
        if (optind >= argc) {
                help();
                return EXIT_USAGE;
        }
        for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
                if (strcmp(argv[optind], verbs[i].name) == 0)
                        return verbs[i].fn(argc - optind, argv + optind);
        return fail(EXIT_USAGE, "unknown command '%s' (see --help)", argv[optind]);
}
