// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * demo-signal: a signal subscriber for the demo. It installs RULE (a D-Bus
 * match rule, turned into a kernel match with a Bloom mask) plus a rule
 * for org.example.Demo.End, touches READY-FILE once both are in place,
 * and runs until End arrives (the emitter sends it after the signals it
 * wants to test, so everything before it has been delivered).
 *
 * It then prints how many org.example.Demo.Alert signals its rule
 * accepted and how many the kernel delivered to it at all: a subscriber
 * whose rule does not match gets none, because the kernel filters by
 * Bloom mask before queueing anything.
 *
 *   demo-signal LABEL RULE READY-FILE [BUS-NODE]   (exit 1 on timeout)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kdbus.h"

struct state {
        bool end;
        int matched, delivered;
        char last[128];
};

static int on_alert(struct kdbus_bus *bus, struct kdbus_message *m, void *userdata)
{
        struct state *st = userdata;
        const char *arg = "";

        (void)bus;
        if (strcmp(kdbus_message_get_member(m), "Alert") == 0) {
                kdbus_message_read(m, "s", &arg);
                snprintf(st->last, sizeof(st->last), "%s", arg);
                st->matched++;
        }
        return 1;
}

static int on_end(struct kdbus_bus *bus, struct kdbus_message *m, void *userdata)
{
        (void)bus;
        (void)m;
        ((struct state *)userdata)->end = true;
        return 1;
}

/* every message the kernel delivered, before match dispatch */
static int on_any(struct kdbus_bus *bus, struct kdbus_message *m, void *userdata)
{
        struct state *st = userdata;
        const char *member = kdbus_message_get_member(m);

        (void)bus;
        if (kdbus_message_get_type(m) == KDBUS_MESSAGE_SIGNAL && member &&
            strcmp(member, "Alert") == 0)
                st->delivered++;
        return 0;
}

int main(int argc, char **argv)
{
        struct state st = { 0 };
        struct kdbus_bus *bus = NULL;
        const char *path;
        FILE *f;
        int r;

        if (argc < 4) {
                fprintf(stderr, "usage: demo-signal LABEL RULE READY-FILE [BUS-NODE]\n");
                return 2;
        }
        path = argc > 4 ? argv[4] : getenv("KDBUS_BUS_PATH");
        r = path ? kdbus_bus_open(&bus, path) : kdbus_bus_open_system(&bus);
        if (r < 0) {
                fprintf(stderr, "demo-signal: cannot connect: %s\n", strerror(-r));
                return 1;
        }
        if (kdbus_bus_add_filter(bus, NULL, on_any, &st) < 0 ||
            kdbus_bus_add_match(bus, NULL, argv[2], on_alert, &st) < 0 ||
            kdbus_bus_add_match(bus, NULL,
                                "type='signal',interface='org.example.Demo',member='End'",
                                on_end, &st) < 0) {
                fprintf(stderr, "demo-signal: cannot add match rules\n");
                kdbus_bus_unref(bus);
                return 1;
        }
        f = fopen(argv[3], "we");
        if (!f || fclose(f) != 0) {
                fprintf(stderr, "demo-signal: %s: %s\n", argv[3], strerror(errno));
                kdbus_bus_unref(bus);
                return 1;
        }
        r = kdbus_bus_run_until(bus, &st.end, 60ULL * 1000 * 1000);
        if (r < 0) {
                fprintf(stderr, "demo-signal: %s: no End signal: %s\n", argv[1], strerror(-r));
                kdbus_bus_unref(bus);
                return 1;
        }
        if (st.matched)
                printf("  %-12s %s  rule %s\n      -> RECEIVED Alert(\"%s\"); the kernel delivered %d Alert signal(s)\n",
                       argv[1], kdbus_bus_get_unique_name(bus), argv[2], st.last, st.delivered);
        else
                printf("  %-12s %s  rule %s\n      -> nothing; the kernel delivered %d Alert signal(s)\n",
                       argv[1], kdbus_bus_get_unique_name(bus), argv[2], st.delivered);
        kdbus_bus_unref(bus);
        return 0;
}
