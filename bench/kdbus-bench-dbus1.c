// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kdbus-bench-dbus1: a method call (Echo(ay) -> ay) from a client to a
 * service through one or more buses, for a list of payload sizes.
 *
 *   kdbus-bench-dbus1 [options] LABEL=ADDRESS...
 *   kdbus-bench-dbus1 [options] [--label L] (ADDRESS | --native BUS-NODE)
 *
 * ADDRESS is either unix:path=SOCK, a D-Bus 1 bus (dbus-daemon,
 * dbus-broker, kdbus-proxy): a classic client calls a classic service,
 * both speaking the real protocol (SASL EXTERNAL, Hello, messages
 * marshalled by libkdbus's lib/message.h, framed by test/proxy/dbus1.h);
 * or kdbus:BUS-NODE, the same call between two libkdbus connections on a
 * kdbus bus. One service is forked per bus. With several buses the cells
 * (bus x size) are measured in interleaved rounds, so that a change of
 * the host's load (an emulated VM on a shared machine) hits every bus
 * alike; the samples of a cell's rounds are pooled.
 *
 * Options:
 *   --sizes LIST     payload sizes, e.g. 8,64,512,4K,1M (default 8,8K)
 *   --time S         seconds per cell, over all rounds (default 1)
 *   --rounds N       rounds (default 1; with several buses 3)
 *   --min-calls N    at least N calls per cell, however slow (default 6)
 *   --tsv            print LABEL<TAB>SIZE<TAB>MEDIAN<TAB>P10<TAB>P90<TAB>CALLS
 *                    (bench/plot.sh's input) instead of the text lines
 *
 * Text output, one line per cell, times in microseconds:
 *
 *   LABEL SIZE MEDIAN (N calls, p10 X, p90 Y)
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/wait.h>

#include "dbus1.h"
#include "kdbus.h"

#define NAME            "org.t.Bench"    /* + the target's index */
#define MAX_TARGETS     8
#define MAX_SIZES       16
#define MAX_SAMPLES     (1 << 16)
#define MAX_PAYLOAD     (32u << 20)

struct target {
        const char *label;
        const char *addr;       /* unix:path=... (classic), or NULL */
        const char *node;       /* kdbus bus node (native), or NULL */
        char name[32];          /* the service's name: targets may share a bus */
        pid_t service;
        struct d1 c;
        struct kdbus_bus *bus;
};

struct cell {
        double *samples;
        size_t n;
};

static double now_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return x < y ? -1 : x > y;
}

static void fail(const char *who, const char *what, int r)
{
        fprintf(stderr, "kdbus-bench-dbus1: %s: %s: %s\n", who, what, strerror(r < 0 ? -r : r));
        exit(1);
}

static size_t parse_size(const char *s)
{
        char *end;
        unsigned long long v = strtoull(s, &end, 10);

        if (end == s)
                return 0;
        if (*end == 'K' || *end == 'k')
                v <<= 10, end++;
        else if (*end == 'M' || *end == 'm')
                v <<= 20, end++;
        if (!strcmp(end, "iB") || !strcmp(end, "B"))
                end += strlen(end);
        return *end || v > MAX_PAYLOAD ? 0 : (size_t)v;
}

/* --- classic: the service and the client over a socket --- */

static void classic_service(const char *addr, const char *name, int ready_fd)
{
        struct d1 c;
        struct kdbus_message *m = NULL;
        uint32_t v;
        int r;

        r = d1_open(&c, addr, D1_AUTH_IR, 30000);
        if (r < 0)
                fail(addr, "service connect", r);
        r = d1_driver_call(&c, "RequestName", &m, 30000, "su", name, 4);
        if (r < 0 || kdbus_message_read(m, "u", &v) < 0 || v != 1)
                fail(addr, "RequestName", r < 0 ? r : EEXIST);
        kdbus_message_unref(m);
        if (write(ready_fd, "r", 1) != 1)
                exit(1);
        close(ready_fd);
        for (;;) {
                struct kdbus_message *reply = NULL;
                const void *p;
                size_t n;

                if (d1_next(&c, &m, -1) < 0)
                        exit(0);
                if (kdbus_message_get_type(m) == KDBUS_MESSAGE_METHOD_CALL) {
                        if (strcmp(kdbus_message_get_member(m), "Quit") == 0)
                                exit(0);
                        if (kdbus_message_read_array(m, 'y', &p, &n) >= 0 &&
                            kdbus_message_new_method_return(&reply, m) >= 0 &&
                            kdbus_message_append_array(reply, 'y', p, n) >= 0)
                                d1_send(&c, reply);
                        kdbus_message_unref(reply);
                }
                kdbus_message_unref(m);
        }
}

/* --- native: libkdbus on both sides --- */

static int native_on_call(struct kdbus_bus *bus, struct kdbus_message *m, void *userdata)
{
        struct kdbus_message *reply = NULL;
        const void *p;
        size_t n;
        int r;

        (void)userdata;
        r = kdbus_message_read_array(m, 'y', &p, &n);
        if (r >= 0)
                r = kdbus_message_new_method_return(&reply, m);
        if (r >= 0)
                r = kdbus_message_append_array(reply, 'y', p, n);
        if (r >= 0)
                r = kdbus_bus_send(bus, reply, NULL);
        kdbus_message_unref(reply);
        return r < 0 ? -EIO : 1;
}

static void native_service(const char *node, const char *name, int ready_fd)
{
        struct kdbus_bus *bus = NULL;
        int r;

        r = kdbus_bus_open(&bus, node);
        if (r < 0)
                fail(node, "native service connect", r);
        kdbus_bus_add_object(bus, NULL, "/org/t/Bench", native_on_call, NULL);
        if (kdbus_bus_request_name(bus, name, KDBUS_NAME_FLAG_DO_NOT_QUEUE) != 1)
                fail(node, "native RequestName", EEXIST);
        if (write(ready_fd, "r", 1) != 1)
                exit(1);
        close(ready_fd);
        for (;;) {
                r = kdbus_bus_process(bus);
                if (r < 0)
                        exit(0);
                if (r == 0)
                        kdbus_bus_wait(bus, UINT64_MAX);
        }
}

/* one Echo of @payload, natively (libkdbus) or classically (D-Bus 1 socket) */
static double call(struct target *t, const uint8_t *payload, size_t size)
{
        struct kdbus_message *m = NULL, *reply = NULL;
        const void *p;
        size_t n;
        double t0;
        int r;

        t0 = now_us();
        r = kdbus_message_new_method_call(&m, t->name, "/org/t/Bench", "org.t.Bench", "Echo");
        if (r >= 0)
                r = kdbus_message_append_array(m, 'y', payload, size);
        if (r >= 0)
                r = t->node ? kdbus_bus_call(t->bus, m, 0, NULL, &reply)
                            : d1_call(&t->c, m, &reply, 30000);
        if (r < 0)
                fail(t->label, t->node ? "native call" : "call", r);
        if (kdbus_message_read_array(reply, 'y', &p, &n) < 0 || n != size)
                fail(t->label, t->node ? "native reply" : "reply", EPROTO);
        kdbus_message_unref(m);
        kdbus_message_unref(reply);
        return now_us() - t0;
}

/* fork the service of @t, wait until it owns the name, connect the client */
static void start(struct target *t)
{
        int pipefd[2], r;
        char b;

        if (pipe(pipefd) < 0)
                fail(t->label, "pipe", errno);
        fflush(stdout);
        t->service = fork();
        if (t->service < 0)
                fail(t->label, "fork", errno);
        if (t->service == 0) {
                close(pipefd[0]);
                if (t->node)
                        native_service(t->node, t->name, pipefd[1]);
                else
                        classic_service(t->addr, t->name, pipefd[1]);
                _exit(0);
        }
        close(pipefd[1]);
        if (read(pipefd[0], &b, 1) != 1)
                fail(t->label, "the service did not start", EPIPE);
        close(pipefd[0]);
        if (t->node)
                r = kdbus_bus_open(&t->bus, t->node);
        else
                r = d1_open(&t->c, t->addr, D1_AUTH_IR, 30000);
        if (r < 0)
                fail(t->label, "client connect", r);
}

static void usage(FILE *f)
{
        fprintf(f, "usage: kdbus-bench-dbus1 [--sizes LIST] [--time S] [--rounds N] [--min-calls N] [--tsv]\n"
                   "                         (LABEL=ADDRESS... | [--label L] (ADDRESS | --native BUS-NODE))\n"
                   "ADDRESS: unix:path=SOCK (a D-Bus 1 bus) or kdbus:BUS-NODE (libkdbus on both sides)\n");
}

int main(int argc, char **argv)
{
        static struct target targets[MAX_TARGETS];
        static struct cell cells[MAX_TARGETS][MAX_SIZES];
        size_t sizes[MAX_SIZES] = { 8, 8192 }, n_sizes = 2, max_size = 8192;
        const char *label = "dbus1 call";
        unsigned int n_targets = 0, rounds = 0, min_calls = 6;
        double seconds = 1;
        bool tsv = false;
        uint8_t *payload;

        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *eq;

                if (!strcmp(a, "--time") && i + 1 < argc) {
                        seconds = atof(argv[++i]);
                } else if (!strcmp(a, "--rounds") && i + 1 < argc) {
                        rounds = (unsigned int)atoi(argv[++i]);
                } else if (!strcmp(a, "--min-calls") && i + 1 < argc) {
                        min_calls = (unsigned int)atoi(argv[++i]);
                } else if (!strcmp(a, "--label") && i + 1 < argc) {
                        label = argv[++i];
                } else if (!strcmp(a, "--tsv")) {
                        tsv = true;
                } else if (!strcmp(a, "--sizes") && i + 1 < argc) {
                        char *list = strdup(argv[++i]), *save = NULL;

                        n_sizes = 0;
                        max_size = 0;
                        for (char *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
                                if (n_sizes == MAX_SIZES || !(sizes[n_sizes] = parse_size(s))) {
                                        fprintf(stderr, "kdbus-bench-dbus1: bad size list %s\n", argv[i]);
                                        return 2;
                                }
                                if (sizes[n_sizes] > max_size)
                                        max_size = sizes[n_sizes];
                                n_sizes++;
                        }
                        free(list);
                } else if (n_targets < MAX_TARGETS && !strcmp(a, "--native") && i + 1 < argc) {
                        targets[n_targets].label = label;
                        targets[n_targets++].node = argv[++i];
                } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
                        usage(stdout);
                        return 0;
                } else if (n_targets < MAX_TARGETS && a[0] != '-') {
                        struct target *t = &targets[n_targets++];

                        /* LABEL=ADDRESS, or a bare address after --label */
                        eq = strchr(a, '=');
                        if (eq && strncmp(a, "unix:", 5) && strncmp(a, "kdbus:", 6)) {
                                t->label = strndup(a, (size_t)(eq - a));
                                a = eq + 1;
                        } else {
                                t->label = label;
                        }
                        if (!strncmp(a, "kdbus:", 6))
                                t->node = a + 6;
                        else
                                t->addr = a;
                } else {
                        usage(stderr);
                        return 2;
                }
        }
        if (!n_targets || n_sizes == 0 || !(seconds > 0)) {
                usage(stderr);
                return 2;
        }
        if (!rounds)
                rounds = n_targets > 1 ? 3 : 1;
        signal(SIGPIPE, SIG_IGN);
        payload = calloc(1, max_size);
        if (!payload)
                fail("payload", "calloc", ENOMEM);
        for (size_t k = 0; k < max_size; k++)
                payload[k] = (uint8_t)k;

        for (unsigned int t = 0; t < n_targets; t++) {
                snprintf(targets[t].name, sizeof(targets[t].name), "%s%u", NAME, t);
                start(&targets[t]);
                for (int w = 0; w < 20; w++)    /* warm up: first calls set up buffers and caches */
                        call(&targets[t], payload, 8);
                for (size_t k = 0; k < n_sizes; k++) {
                        cells[t][k].samples = malloc(MAX_SAMPLES * sizeof(double));
                        if (!cells[t][k].samples)
                                fail("samples", "malloc", ENOMEM);
                }
        }

        /*
         * Round by round, size by size, bus by bus: each cell gets
         * seconds / rounds per round, and at least its share of
         * --min-calls; the first call of a cell in a round (new buffer
         * sizes) is not counted.
         */
        for (unsigned int r = 0; r < rounds; r++) {
                unsigned int want = (min_calls + rounds - 1) / rounds;

                for (size_t k = 0; k < n_sizes; k++) {
                        for (unsigned int t = 0; t < n_targets; t++) {
                                struct cell *c = &cells[t][k];
                                double end;
                                unsigned int done = 0;

                                call(&targets[t], payload, sizes[k]);
                                end = now_us() + seconds * 1e6 / rounds;
                                while (c->n < MAX_SAMPLES && (now_us() < end || done < want)) {
                                        c->samples[c->n++] = call(&targets[t], payload, sizes[k]);
                                        done++;
                                }
                        }
                }
        }

        for (unsigned int t = 0; t < n_targets; t++) {
                for (size_t k = 0; k < n_sizes; k++) {
                        struct cell *c = &cells[t][k];
                        double med, p10, p90;

                        qsort(c->samples, c->n, sizeof(double), cmp_double);
                        med = c->samples[c->n / 2];
                        p10 = c->samples[c->n / 10];
                        p90 = c->samples[c->n * 9 / 10];
                        if (tsv)
                                printf("%s\t%zu\t%.2f\t%.2f\t%.2f\t%zu\n", targets[t].label, sizes[k], med,
                                       p10, p90, c->n);
                        else
                                printf("%s %zu %.1f (%zu calls, p10 %.1f, p90 %.1f)\n", targets[t].label,
                                       sizes[k], med, c->n, p10, p90);
                        free(c->samples);
                }
        }
        fflush(stdout);
        for (unsigned int t = 0; t < n_targets; t++) {
                kill(targets[t].service, SIGTERM);
                waitpid(targets[t].service, NULL, 0);
        }
        free(payload);
        return 0;
}
