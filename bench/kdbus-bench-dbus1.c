// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kdbus-bench-dbus1: a small method call (Echo(ay) -> ay) from a classic
 * D-Bus 1 client to a classic service through a bus daemon at ADDRESS
 * (dbus-daemon or kdbus-proxy), or, with --native BUS-NODE, the same call
 * between two libkdbus connections on a kdbus bus. The service is forked;
 * both sides speak the real protocol (SASL EXTERNAL + Hello, marshalled by
 * libkdbus's lib/message.h). Prints, per payload size, the median round
 * trip in microseconds:
 *
 *   LABEL 8 MEDIAN_US
 *   LABEL 8192 MEDIAN_US
 *
 *   kdbus-bench-dbus1 [--time S] [--label L] (ADDRESS | --native BUS-NODE)
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/wait.h>

#include "dbus1.h"
#include "kdbus.h"

#define NAME "org.t.Bench"

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

static void fail(const char *what, int r)
{
        fprintf(stderr, "kdbus-bench-dbus1: %s: %s\n", what, strerror(r < 0 ? -r : r));
        exit(1);
}

/* --- classic: the service and the client over a socket --- */

static void classic_service(const char *addr, int ready_fd)
{
        struct d1 c;
        struct kdbus_message *m = NULL;
        uint32_t v;
        int r;

        r = d1_open(&c, addr, D1_AUTH_IR, 30000);
        if (r < 0)
                fail("service connect", r);
        r = d1_driver_call(&c, "RequestName", &m, 30000, "su", NAME, 4);
        if (r < 0 || kdbus_message_read(m, "u", &v) < 0 || v != 1)
                fail("RequestName", r < 0 ? r : EEXIST);
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

static double classic_call(struct d1 *c, const uint8_t *payload, size_t size)
{
        struct kdbus_message *m = NULL, *reply = NULL;
        const void *p;
        size_t n;
        double t0;
        int r;

        t0 = now_us();
        kdbus_message_new_method_call(&m, NAME, "/org/t/Bench", "org.t.Bench", "Echo");
        kdbus_message_append_array(m, 'y', payload, size);
        r = d1_call(c, m, &reply, 30000);
        if (r < 0)
                fail("call", r);
        if (kdbus_message_read_array(reply, 'y', &p, &n) < 0 || n != size)
                fail("reply", EPROTO);
        kdbus_message_unref(m);
        kdbus_message_unref(reply);
        return now_us() - t0;
}

/* --- native: libkdbus on both sides --- */

static int native_on_call(struct kdbus_bus *bus, struct kdbus_message *m, void *userdata)
{
        struct kdbus_message *reply = NULL;
        const void *p;
        size_t n;

        (void)userdata;
        if (kdbus_message_read_array(m, 'y', &p, &n) < 0 ||
            kdbus_message_new_method_return(&reply, m) < 0 ||
            kdbus_message_append_array(reply, 'y', p, n) < 0 || kdbus_bus_send(bus, reply, NULL) < 0)
                return -EIO;
        kdbus_message_unref(reply);
        return 1;
}

static void native_service(const char *node, int ready_fd)
{
        struct kdbus_bus *bus = NULL;
        int r;

        r = kdbus_bus_open(&bus, node);
        if (r < 0)
                fail("native service connect", r);
        kdbus_bus_add_object(bus, NULL, "/org/t/Bench", native_on_call, NULL);
        if (kdbus_bus_request_name(bus, NAME, KDBUS_NAME_FLAG_DO_NOT_QUEUE) != 1)
                fail("native RequestName", EEXIST);
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

static double native_call(struct kdbus_bus *bus, const uint8_t *payload, size_t size)
{
        struct kdbus_message *m = NULL, *reply = NULL;
        const void *p;
        size_t n;
        double t0;
        int r;

        t0 = now_us();
        kdbus_message_new_method_call(&m, NAME, "/org/t/Bench", "org.t.Bench", "Echo");
        kdbus_message_append_array(m, 'y', payload, size);
        r = kdbus_bus_call(bus, m, 0, NULL, &reply);
        if (r < 0)
                fail("native call", r);
        if (kdbus_message_read_array(reply, 'y', &p, &n) < 0 || n != size)
                fail("native reply", EPROTO);
        kdbus_message_unref(m);
        kdbus_message_unref(reply);
        return now_us() - t0;
}

int main(int argc, char **argv)
{
        static const size_t sizes[] = { 8, 8192 };
        const char *label = "dbus1 call", *addr = NULL, *node = NULL;
        double seconds = 1;
        struct kdbus_bus *bus = NULL;
        struct d1 c;
        int pipefd[2], r;
        pid_t pid;
        char b;

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--time") == 0 && i + 1 < argc)
                        seconds = atof(argv[++i]);
                else if (strcmp(argv[i], "--label") == 0 && i + 1 < argc)
                        label = argv[++i];
                else if (strcmp(argv[i], "--native") == 0 && i + 1 < argc)
                        node = argv[++i];
                else if (argv[i][0] != '-')
                        addr = argv[i];
                else {
                        fprintf(stderr, "usage: kdbus-bench-dbus1 [--time S] [--label L] "
                                        "(ADDRESS | --native BUS-NODE)\n");
                        return 2;
                }
        }
        if (!addr && !node)
                return 2;
        signal(SIGPIPE, SIG_IGN);
        if (pipe(pipefd) < 0)
                fail("pipe", errno);
        pid = fork();
        if (pid < 0)
                fail("fork", errno);
        if (pid == 0) {
                close(pipefd[0]);
                if (node)
                        native_service(node, pipefd[1]);
                else
                        classic_service(addr, pipefd[1]);
                _exit(0);
        }
        close(pipefd[1]);
        if (read(pipefd[0], &b, 1) != 1)
                fail("the service did not start", EPIPE);
        if (node)
                r = kdbus_bus_open(&bus, node);
        else
                r = d1_open(&c, addr, D1_AUTH_IR, 30000);
        if (r < 0)
                fail("client connect", r);

        for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
                uint8_t *payload = calloc(1, sizes[k]);
                size_t cap = 1 << 16, n = 0;
                double *samples = malloc(cap * sizeof(double)), end;

                for (int w = 0; w < 20; w++)    /* warm up */
                        node ? native_call(bus, payload, sizes[k]) :
                               classic_call(&c, payload, sizes[k]);
                end = now_us() + seconds * 1e6;
                while (now_us() < end && n < cap)
                        samples[n++] = node ? native_call(bus, payload, sizes[k]) :
                                              classic_call(&c, payload, sizes[k]);
                qsort(samples, n, sizeof(double), cmp_double);
                printf("%s %zu %.1f (%zu calls, max %.0f)\n", label, sizes[k], samples[n / 2], n, samples[n - 1]);
                fflush(stdout);
                free(samples);
                free(payload);
        }
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
        return 0;
}
