// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * native-service: a libkdbus service for the proxy tests. It owns NAME
 * (default org.t.Native) and answers on /org/t/Native, interface
 * org.t.Native:
 *   Echo(s) -> s            the same string
 *   Emit(s)                 broadcasts org.t.Native.Sig(s), then replies
 *   Quit()                  replies, then exits
 * Signals org.t.Py.Sig(s) from anyone are printed as "got Sig ARG".
 *
 *   native-service BUS-NODE [NAME]
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
        const char *s;

        (void)userdata;
        if (strcmp(member, "Echo") == 0) {
                if (kdbus_message_read(m, "s", &s) < 0)
                        return -EINVAL;
                return kdbus_bus_reply(bus, m, "s", s) < 0 ? -EIO : 1;
        }
        if (strcmp(member, "Emit") == 0) {
                if (kdbus_message_read(m, "s", &s) < 0)
                        return -EINVAL;
                if (kdbus_bus_emit_signal(bus, NULL, "/org/t/Native", "org.t.Native", "Sig", "s",
                                          s) < 0)
                        return -EIO;
                return kdbus_bus_reply(bus, m, "") < 0 ? -EIO : 1;
        }
        if (strcmp(member, "Quit") == 0) {
                done = true;
                return kdbus_bus_reply(bus, m, "") < 0 ? -EIO : 1;
        }
        return 0;
}

static int on_signal(struct kdbus_bus *bus, struct kdbus_message *m, void *userdata)
{
        const char *s;

        (void)bus;
        (void)userdata;
        if (kdbus_message_read(m, "s", &s) >= 0) {
                printf("got %s %s\n", kdbus_message_get_member(m), s);
                fflush(stdout);
        }
        return 1;
}

int main(int argc, char **argv)
{
        const char *name = argc > 2 ? argv[2] : "org.t.Native";
        struct kdbus_bus *bus = NULL;
        int r;

        if (argc < 2) {
                fprintf(stderr, "usage: native-service BUS-NODE [NAME]\n");
                return 2;
        }
        r = kdbus_bus_open(&bus, argv[1]);
        if (r < 0) {
                fprintf(stderr, "native-service: cannot connect: %s\n", strerror(-r));
                return 1;
        }
        r = kdbus_bus_add_match(bus, NULL, "type='signal',interface='org.t.Py',member='Sig'",
                                on_signal, NULL);
        if (r < 0) {
                fprintf(stderr, "native-service: AddMatch: %s\n", strerror(-r));
                return 1;
        }
        kdbus_bus_add_object(bus, NULL, "/org/t/Native", on_call, NULL);
        r = kdbus_bus_request_name(bus, name, KDBUS_NAME_FLAG_DO_NOT_QUEUE);
        if (r != KDBUS_REQUEST_NAME_PRIMARY_OWNER) {
                fprintf(stderr, "native-service: cannot own %s (%d)\n", name, r);
                return 1;
        }
        printf("ready %s %s\n", name, kdbus_bus_get_unique_name(bus));
        fflush(stdout);
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
