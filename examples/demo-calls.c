// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * demo-calls: call org.example.Demo.Hello on the service example N times
 * over one connection and print the round-trip time of each call, then
 * the minimum and the median. Exit status 1 if any call fails.
 *
 *   demo-calls [N] [BUS-NODE]   (default 5 calls, $KDBUS_BUS_PATH)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kdbus.h"

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

int main(int argc, char **argv)
{
        int n = argc > 1 ? atoi(argv[1]) : 5;
        const char *path = argc > 2 ? argv[2] : getenv("KDBUS_BUS_PATH");
        struct kdbus_bus *bus = NULL;
        double rtt[100];
        int r;

        if (n < 1 || n > 100) {
                fprintf(stderr, "demo-calls: N must be 1..100\n");
                return 2;
        }
        r = path ? kdbus_bus_open(&bus, path) : kdbus_bus_open_system(&bus);
        if (r < 0) {
                fprintf(stderr, "demo-calls: cannot connect: %s\n", strerror(-r));
                return 1;
        }
        printf("client %s calls org.example.Demo.Hello %d times:\n",
               kdbus_bus_get_unique_name(bus), n);
        for (int i = 0; i < n; i++) {
                struct kdbus_error err = KDBUS_ERROR_NULL;
                struct kdbus_message *reply = NULL;
                const char *greeting = "";
                char who[32];
                double t0;

                snprintf(who, sizeof(who), "call %d", i + 1);
                t0 = now_us();
                r = kdbus_bus_call_method(bus, "org.example.Demo", "/org/example/Demo",
                                          "org.example.Demo", "Hello", &err, &reply, "s", who);
                rtt[i] = now_us() - t0;
                if (r < 0) {
                        fprintf(stderr, "demo-calls: %s: %s\n", err.name ? err.name : "error",
                                err.message ? err.message : strerror(-r));
                        kdbus_error_free(&err);
                        kdbus_bus_unref(bus);
                        return 1;
                }
                kdbus_message_read(reply, "s", &greeting);
                printf("  %-7s -> %s replied \"%s\" in %.0f us\n", who,
                       kdbus_message_get_sender(reply), greeting, rtt[i]);
                kdbus_message_unref(reply);
        }
        qsort(rtt, (size_t)n, sizeof(rtt[0]), cmp_double);
        printf("round trip: min %.0f us, median %.0f us (emulated CPU: slower than real hardware)\n",
               rtt[0], n % 2 ? rtt[n / 2] : (rtt[n / 2 - 1] + rtt[n / 2]) / 2);
        kdbus_bus_unref(bus);
        return 0;
}
