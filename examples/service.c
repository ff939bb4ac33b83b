// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * service: a minimal libkdbus service. It takes the name org.example.Demo
 * and answers on /org/example/Demo, interface org.example.Demo:
 *   Hello(s name) -> s greeting   (and broadcasts Greeted(s name))
 *   Quit()                        (replies, then exits)
 *
 *   service [BUS-NODE]   (default: $KDBUS_BUS_PATH, else the system bus)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kdbus.h"

static bool done;

static int on_call(struct kdbus_bus *bus, struct kdbus_message *m, void *userdata)
{
        const char *member = kdbus_message_get_member(m);
        const char *name;
        char greeting[300];

        (void)userdata;
        if (strcmp(member, "Hello") == 0) {
                if (kdbus_message_read(m, "s", &name) < 0)
                        return -EINVAL;
                snprintf(greeting, sizeof(greeting), "Hello, %s!", name);
                kdbus_bus_emit_signal(bus, NULL, "/org/example/Demo", "org.example.Demo",
                                      "Greeted", "s", name);
                return kdbus_bus_reply(bus, m, "s", greeting) < 0 ? -EIO : 1;
        }
        if (strcmp(member, "Quit") == 0) {
                done = true;
                return kdbus_bus_reply(bus, m, "") < 0 ? -EIO : 1;
        }
        return 0;       /* UnknownMethod */
}

int main(int argc, char **argv)
{
        const char *path = argc > 1 ? argv[1] : getenv("KDBUS_BUS_PATH");
        struct kdbus_bus *bus = NULL;
        int r;

        r = path ? kdbus_bus_open(&bus, path) : kdbus_bus_open_system(&bus);
        if (r < 0) {
                fprintf(stderr, "service: cannot connect: %s\n", strerror(-r));
                return 1;
        }
        r = kdbus_bus_request_name(bus, "org.example.Demo", KDBUS_NAME_FLAG_DO_NOT_QUEUE);
        if (r != KDBUS_REQUEST_NAME_PRIMARY_OWNER) {
                fprintf(stderr, "service: cannot own org.example.Demo (%d)\n", r);
                kdbus_bus_unref(bus);
                return 1;
        }
        kdbus_bus_add_object(bus, NULL, "/org/example/Demo", on_call, NULL);
        printf("service: %s owns org.example.Demo\n", kdbus_bus_get_unique_name(bus));
        fflush(stdout);

        /* a plain poll loop: process until idle, then wait on the fd */
        while (!done) {
                r = kdbus_bus_process(bus);
                if (r < 0)
                        break;
                if (r == 0)
                        kdbus_bus_wait(bus, UINT64_MAX);
        }
        kdbus_bus_unref(bus);
        return r < 0 ? 1 : 0;
}
