// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-caller: a native caller for the activation tests. Sends N calls
 * Echo(i) to NAME at once (asynchronously, so they queue while the
 * service starts), optionally preceded by Quit(), waits for every answer
 * and prints one summary line:
 *
 *   replies=R errors=E dup=D order=ok|bad pids=P error=NAME
 *
 * R: calls answered by the service, E: calls answered with an error,
 * D: answers for a call already answered, order: replies came in the
 * order of the calls, P: distinct service pids, NAME: the first error.
 *
 *   test-caller BUS NAME N [quit-first] [timeout=SEC]
 */

#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kdbus.h"

#define DBUS_MESSAGE_TYPE_ERROR 3

static unsigned int n_calls, n_replies, n_errors, n_dup, next_expected, n_answered;
static unsigned char *answered;
static bool in_order = true;
static uint32_t pids[16];
static unsigned int n_pids;
static char first_error[256];

static int on_reply(struct kdbus_bus *bus, struct kdbus_message *m, void *userdata)
{
        unsigned int i = (unsigned int)(uintptr_t)userdata;
        uint32_t n, pid;

        (void)bus;
        if (i < n_calls) {
                if (answered[i]++)
                        n_dup++;
                else
                        n_answered++;
        }
        if (kdbus_message_get_type(m) == DBUS_MESSAGE_TYPE_ERROR) {
                n_errors++;
                if (!first_error[0])
                        snprintf(first_error, sizeof(first_error), "%s",
                                 kdbus_message_get_error_name(m) ?: "?");
                return 1;
        }
        if (i >= n_calls)
                return 1;       /* the Quit reply */
        if (kdbus_message_read(m, "uu", &n, &pid) < 0 || n != i) {
                n_errors++;
                return 1;
        }
        n_replies++;
        if (i != next_expected)
                in_order = false;
        next_expected = i + 1;
        bool seen = false;

        for (unsigned int k = 0; k < n_pids; k++)
                seen |= pids[k] == pid;
        if (!seen && n_pids < 16)
                pids[n_pids++] = pid;
        return 1;
}

int main(int argc, char **argv)
{
        struct kdbus_bus *bus = NULL;
        bool quit_first = false, done = false;
        uint64_t timeout = 30ULL * 1000 * 1000;
        int r;

        if (argc < 4) {
                fprintf(stderr, "usage: test-caller BUS NAME N [quit-first] [timeout=SEC]\n");
                return 2;
        }
        n_calls = strtoul(argv[3], NULL, 10);
        for (int i = 4; i < argc; i++) {
                if (!strcmp(argv[i], "quit-first"))
                        quit_first = true;
                else if (!strncmp(argv[i], "timeout=", 8))
                        timeout = strtoull(argv[i] + 8, NULL, 10) * 1000 * 1000;
        }
        answered = calloc(n_calls + 1, 1);
        r = kdbus_bus_open(&bus, argv[1]);
        if (r < 0 || !answered) {
                fprintf(stderr, "test-caller: %s\n", strerror(-r));
                return 1;
        }
        for (unsigned int i = 0; i <= n_calls; i++) {
                struct kdbus_message *m;
                bool is_quit = i == 0 && quit_first;
                unsigned int idx = quit_first ? i - 1 : i;

                if (!quit_first && i == n_calls)
                        break;
                if (is_quit)
                        idx = n_calls;  /* out of range: not counted */
                r = kdbus_message_new_method_call(&m, argv[2], "/t", "org.kdbus.Test",
                                                  is_quit ? "Quit" : "Echo");
                if (r == 0 && !is_quit)
                        r = kdbus_message_append(m, "u", (uint32_t)idx);
                if (r == 0)
                        r = kdbus_bus_call_async(bus, NULL, m, on_reply,
                                                 (void *)(uintptr_t)idx, timeout);
                kdbus_message_unref(m);
                if (r < 0) {
                        /* a send error counts as an error answer for that call */
                        if (idx < n_calls) {
                                answered[idx]++;
                                n_answered++;
                                n_errors++;
                        }
                        if (!first_error[0])
                                snprintf(first_error, sizeof(first_error), "send:%s",
                                         strerror(-r));
                }
        }
        while (!done) {
                r = kdbus_bus_process(bus);
                if (r < 0)
                        break;
                done = n_answered >= n_calls && (!quit_first || true);
                if (r == 0 && !done && kdbus_bus_wait(bus, timeout + 5000000) == 0)
                        break;  /* every call has a reply window: nothing can hang */
        }
        printf("replies=%u errors=%u dup=%u order=%s pids=%u error=%s\n", n_replies, n_errors,
               n_dup, in_order ? "ok" : "bad", n_pids, first_error[0] ? first_error : "none");
        kdbus_bus_unref(bus);
        return 0;
}
