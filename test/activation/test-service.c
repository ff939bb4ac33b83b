// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-service: an activatable libkdbus service for the activation tests.
 *
 *   test-service BUS NAME [slow=MSEC] [daemon] [log=FILE]
 *
 * slow=: waits before taking the name (a slow start); daemon: daemonises
 * the classic way (fork, setsid, fork again): the started process exits 0
 * at once, the grandchild takes the name. On NAME, path /t,
 * interface org.kdbus.Test: Echo(u) -> (u n, u pid); Quit() replies and
 * exits at once, leaving anything still queued to the kernel (which
 * moves it back to the activator). log= appends "pid start" lines.
 * With $KDBUS_BENCH_TRACE set (bench/kdbus-bench-connect --verbose), prints
 * "trace service STEP US" (CLOCK_MONOTONIC) at its start-up steps.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kdbus.h"

static bool quit;

static void trace(const char *what)
{
        static int on = -1;
        struct timespec ts;

        if (on < 0)
                on = getenv("KDBUS_BENCH_TRACE") != NULL;
        if (!on)
                return;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        fprintf(stderr, "trace service %s %.0f\n", what, ts.tv_sec * 1e6 + ts.tv_nsec / 1e3);
}

static int on_call(struct kdbus_bus *bus, struct kdbus_message *m, void *userdata)
{
        const char *member = kdbus_message_get_member(m);
        uint32_t n;

        (void)userdata;
        trace(member);
        if (!strcmp(member, "Echo")) {
                if (kdbus_message_read(m, "u", &n) < 0)
                        return -EINVAL;
                return kdbus_bus_reply(bus, m, "uu", n, (uint32_t)getpid()) < 0 ? -EIO : 1;
        }
        if (!strcmp(member, "Quit")) {
                quit = true;
                return kdbus_bus_reply(bus, m, "") < 0 ? -EIO : 1;
        }
        return 0;
}

int main(int argc, char **argv)
{
        struct kdbus_bus *bus = NULL;
        unsigned long slow = 0;
        bool daemonise = false;
        const char *log = NULL;
        int r;

        trace("main");
        if (argc < 3) {
                fprintf(stderr, "usage: test-service BUS NAME [slow=MSEC] [daemon] [log=FILE]\n");
                return 2;
        }
        for (int i = 3; i < argc; i++) {
                if (!strncmp(argv[i], "slow=", 5))
                        slow = strtoul(argv[i] + 5, NULL, 10);
                else if (!strcmp(argv[i], "daemon"))
                        daemonise = true;
                else if (!strncmp(argv[i], "log=", 4))
                        log = argv[i] + 4;
        }
        if (daemonise) {
                pid_t pid = fork();

                if (pid < 0)
                        return 1;
                if (pid > 0)
                        return 0;
                setsid();
                /* the session leader exits too: the grandchild is no child of the launcher */
                pid = fork();
                if (pid < 0)
                        _exit(1);
                if (pid > 0)
                        _exit(0);
        }
        if (log) {
                FILE *f = fopen(log, "a");

                if (f) {
                        fprintf(f, "%d start %s %s\n", (int)getpid(),
                                getenv("DBUS_STARTER_BUS_TYPE") ?: "-",
                                getenv("TEST_ENV") ?: "-");
                        fclose(f);
                }
        }
        if (slow) {
                struct timespec ts = { slow / 1000, (slow % 1000) * 1000000L };

                nanosleep(&ts, NULL);
        }
        r = kdbus_bus_open(&bus, argv[1]);
        trace("hello");
        if (r < 0)
                return 1;
        kdbus_bus_add_object(bus, NULL, "/t", on_call, NULL);
        r = kdbus_bus_request_name(bus, argv[2], KDBUS_NAME_FLAG_DO_NOT_QUEUE);
        trace("name");
        if (r != KDBUS_REQUEST_NAME_PRIMARY_OWNER) {
                fprintf(stderr, "test-service: cannot own %s (%d)\n", argv[2], r);
                return 1;
        }
        while (!quit) {
                r = kdbus_bus_process(bus);
                if (r < 0)
                        break;
                if (r == 0)
                        kdbus_bus_wait(bus, UINT64_MAX);
        }
        /* no BYEBYE: exit with the queue as it is, the kernel hands it back */
        _exit(0);
}
