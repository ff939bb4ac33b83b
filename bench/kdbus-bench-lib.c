// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kdbus-bench-lib: what libkdbus adds to a call. A method call with one
 * string argument from a libkdbus client (kdbus_bus_call()) to a libkdbus
 * service answering in its event loop, against the raw-ioctl synchronous
 * call of kdbus-bench (8-byte payload, raw service) in the same boot.
 * Rounds interleave the two; each round's raw figure is a kdbus-bench
 * run of its own (--only kdbus_sync --json), so nothing is measured twice
 * with two codes.
 *
 *   kdbus-bench-lib [--time S] [--rounds N] [--bench PATH] [--root DIR]
 *   kdbus-bench-lib --calls N [--root DIR]
 *
 * --calls N makes exactly N timed libkdbus calls after the warm-up and
 * prints their median, without raw rounds: a fixed workload for strace
 * and perf (Documentation/performance.md).
 *
 * Not pinned: the scheduler places the two processes, as for real
 * programs.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bus.h"
#include "message.h"

#define SERVICE_NAME "org.kdbus.BenchLib"
#define MAX_ROUNDS 20

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

static double median(double *v, size_t n)
{
        qsort(v, n, sizeof(*v), cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int on_echo(struct kdbus_bus *bus, struct kdbus_message *m, void *userdata)
{
        const char *s;
        int r;

        (void)userdata;
        r = kdbus_message_read(m, "s", &s);
        if (r < 0)
                return r;
        r = kdbus_bus_reply(bus, m, "s", s);
        return r < 0 ? r : 1;
}

/* the libkdbus service: an object, a name, the event loop */
static int service(const char *path)
{
        struct kdbus_bus *bus = NULL;
        int r;

        r = kdbus_bus_open(&bus, path);
        if (r < 0)
                return 1;
        kdbus_bus_add_object(bus, NULL, "/b", on_echo, NULL);
        r = kdbus_bus_request_name(bus, SERVICE_NAME, 0);
        if (r != KDBUS_REQUEST_NAME_PRIMARY_OWNER)
                return 1;
        for (;;) {
                r = kdbus_bus_process(bus);
                if (r < 0)
                        break;
                if (r == 0)
                        kdbus_bus_wait(bus, UINT64_MAX);
        }
        kdbus_bus_unref(bus);
        return 0;
}

static int call_once(struct kdbus_bus *bus, const char *arg)
{
        struct kdbus_message *reply = NULL;
        struct kdbus_error err = KDBUS_ERROR_NULL;
        int r;

        r = kdbus_bus_call_method(bus, SERVICE_NAME, "/b", "org.kdbus.BenchLib", "Echo",
                                  &err, &reply, "s", arg);
        kdbus_error_free(&err);
        kdbus_message_unref(reply);
        return r;
}

/* the raw-ioctl figure of one round: a kdbus-bench run of its own */
static int raw_round(const char *bench, double seconds, double *median_us)
{
        char cmd[512], line[4096];
        const char *key = "\"kdbus_sync\": {\"iterations\": ";
        int found = 0;
        FILE *f;

        snprintf(cmd, sizeof(cmd),
                 "%s --pin none --sizes 8 --only kdbus_sync --rounds 1 --time %.3f --json",
                 bench, seconds);
        f = popen(cmd, "r");
        if (!f)
                return -errno;
        while (fgets(line, sizeof(line), f)) {
                char *p = strstr(line, key);
                unsigned long long iters;

                if (p && sscanf(p + strlen(key), "%llu, \"median_us\": %lf", &iters,
                                median_us) == 2)
                        found = 1;
        }
        if (pclose(f) != 0 || !found)
                return -EIO;
        return 0;
}

int main(int argc, char **argv)
{
        const char *bench = "kdbus-bench", *root = "/sys/fs/kdbus";
        double seconds = 2, lib_med[MAX_ROUNDS], raw_med[MAX_ROUNDS], ratio[MAX_ROUNDS];
        struct kdbus_bus *bus = NULL;
        unsigned int rounds = 5;
        long calls = 0;
        char name[64], *path = NULL;
        size_t cap = 1 << 16;
        double *samples;
        int bus_fd, r;
        pid_t pid;

        for (int i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--time") && i + 1 < argc)
                        seconds = atof(argv[++i]);
                else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
                        rounds = atoi(argv[++i]);
                else if (!strcmp(argv[i], "--bench") && i + 1 < argc)
                        bench = argv[++i];
                else if (!strcmp(argv[i], "--root") && i + 1 < argc)
                        root = argv[++i];
                else if (!strcmp(argv[i], "--calls") && i + 1 < argc)
                        calls = atol(argv[++i]);
                else {
                        fprintf(stderr, "usage: kdbus-bench-lib [--time S] [--rounds N] [--bench PATH] [--root DIR] [--calls N]\n");
                        return 2;
                }
        }
        if (rounds < 1 || rounds > MAX_ROUNDS || seconds <= 0 || calls < 0 ||
            (size_t)calls > cap) {
                fprintf(stderr, "kdbus-bench-lib: --rounds 1..%d, --time > 0, --calls 0..%zu\n",
                        MAX_ROUNDS, cap);
                return 2;
        }

        snprintf(name, sizeof(name), "benchlib%d", (int)getpid());
        r = kdbus_bus_make(root, name, false, &bus_fd, &path);
        if (r < 0) {
                fprintf(stderr, "kdbus-bench-lib: cannot make a bus under %s: %s\n", root,
                        strerror(-r));
                return 1;
        }
        pid = fork();
        if (pid < 0)
                return 1;
        if (pid == 0)
                _exit(service(path));

        r = kdbus_bus_open(&bus, path);
        samples = malloc(cap * sizeof(*samples));
        if (r < 0 || !samples) {
                fprintf(stderr, "kdbus-bench-lib: cannot connect: %s\n", strerror(-r));
                kill(pid, SIGKILL);
                return 1;
        }
        /* until the service owns its name, then a warm-up */
        for (int i = 0; i < 500 && call_once(bus, "warm-up") < 0; i++)
                usleep(10000);
        for (int i = 0; i < 200; i++)
                call_once(bus, "warm-up");

        if (calls) {
                for (long n = 0; n < calls; n++) {
                        double t0 = now_us();

                        r = call_once(bus, "8 bytes!");
                        samples[n] = now_us() - t0;
                        if (r < 0)
                                break;
                }
                kill(pid, SIGTERM);
                waitpid(pid, NULL, 0);
                if (r < 0) {
                        fprintf(stderr, "kdbus-bench-lib: a call failed\n");
                        return 1;
                }
                {
                        double med = median(samples, calls);    /* sorts */

                        printf("libkdbus call: %ld calls, median %.2f us, min %.2f us\n", calls,
                               med, samples[0]);
                }
                return 0;
        }
        for (unsigned int k = 0; k < rounds; k++) {
                double budget = seconds / rounds, start = now_us();
                size_t n = 0;

                while (n < cap && now_us() - start < budget * 1e6) {
                        double t0 = now_us();

                        if (call_once(bus, "8 bytes!") < 0) {
                                fprintf(stderr, "kdbus-bench-lib: a call failed\n");
                                kill(pid, SIGKILL);
                                return 1;
                        }
                        samples[n++] = now_us() - t0;
                }
                lib_med[k] = median(samples, n);
                if (raw_round(bench, budget, &raw_med[k]) < 0) {
                        fprintf(stderr, "kdbus-bench-lib: %s did not run\n", bench);
                        kill(pid, SIGKILL);
                        return 1;
                }
                ratio[k] = lib_med[k] / raw_med[k];
        }
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
        kdbus_bus_unref(bus);
        close(bus_fd);
        free(path);
        free(samples);

        printf("libkdbus call vs raw-ioctl sync call (not pinned, %u interleaved rounds)\n"
               "  libkdbus: kdbus_bus_call_method(\"s\") answered by a libkdbus service in its event loop\n"
               "  raw:      kdbus-bench --only kdbus_sync, 8-byte payload, raw service\n",
               rounds);
        printf("  round  libkdbus us    raw us   ratio\n");
        for (unsigned int k = 0; k < rounds; k++)
                printf("  %5u  %11.2f  %8.2f  %5.2fx\n", k + 1, lib_med[k], raw_med[k], ratio[k]);
        {
                double lo, mid, hi;

                qsort(ratio, rounds, sizeof(*ratio), cmp_double);
                lo = ratio[0];
                hi = ratio[rounds - 1];
                mid = median(ratio, rounds);
                printf("  libkdbus / raw: %.2fx (min %.2fx, max %.2fx)\n", mid, lo, hi);
        }
        return 0;
}
