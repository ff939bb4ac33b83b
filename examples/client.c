// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * client: calls org.example.Demo.Hello on the service example and prints
 * the answer with the round-trip time; "client --quit" stops the service.
 *
 *   client [--quit] [BUS-NODE] [NAME]   (default: $KDBUS_BUS_PATH, else
 *                                        the system bus; NAME "world")
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

int main(int argc, char **argv)
{
        struct kdbus_error err = KDBUS_ERROR_NULL;
        struct kdbus_message *reply = NULL;
        struct kdbus_bus *bus = NULL;
        const char *path = getenv("KDBUS_BUS_PATH"), *name = "world", *greeting;
        bool quit = false;
        double t0;
        int i = 1, r;

        if (i < argc && strcmp(argv[i], "--quit") == 0) {
                quit = true;
                i++;
        }
        if (i < argc)
                path = argv[i++];
        if (i < argc)
                name = argv[i++];

        r = path ? kdbus_bus_open(&bus, path) : kdbus_bus_open_system(&bus);
        if (r < 0) {
                fprintf(stderr, "client: cannot connect: %s\n", strerror(-r));
                return 1;
        }
        t0 = now_us();
        if (quit)
                r = kdbus_bus_call_method(bus, "org.example.Demo", "/org/example/Demo",
                                          "org.example.Demo", "Quit", &err, NULL, "");
        else
                r = kdbus_bus_call_method(bus, "org.example.Demo", "/org/example/Demo",
                                          "org.example.Demo", "Hello", &err, &reply, "s", name);
        if (r < 0) {
                fprintf(stderr, "client: %s: %s\n", err.name, err.message ? err.message : "");
                kdbus_error_free(&err);
                kdbus_bus_unref(bus);
                return 1;
        }
        if (reply && kdbus_message_read(reply, "s", &greeting) >= 0)
                printf("client: %s replied \"%s\" in %.0f us\n", kdbus_message_get_sender(reply),
                       greeting, now_us() - t0);
        kdbus_message_unref(reply);
        kdbus_bus_unref(bus);
        return 0;
}
