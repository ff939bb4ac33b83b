// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * BecomeMonitor (org.freedesktop.DBus.Monitoring): the client's ordinary
 * kdbus connection is replaced by a kdbus monitor connection with the same
 * faked identity; its rules filter in user space what the monitor passes
 * on. As on dbus-daemon, the client gets the reply, then NameLost for its
 * unique name, and is disconnected if it sends anything afterwards.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proxy.h"

int proxy_monitor_become(struct proxy_client *c, struct kdbus_message *call)
{
        struct kdbus_bus *mon = NULL;
        const char *unique;
        char old_unique[32];
        uint32_t n = 0, flags = 0;
        const char **rules = NULL;
        int r;

        unique = kdbus_bus_get_unique_name(c->bus);
        snprintf(old_unique, sizeof(old_unique), "%s", unique);
        r = kdbus_message_set_sender(call, unique);
        if (r < 0)
                return r;
        kdbus_message_rewind(call);
        if (strcmp(kdbus_message_get_signature(call), "asu") != 0)
                return proxy_client_reply_error(c, call, "org.freedesktop.DBus.Error.InvalidArgs",
                                                "Call to BecomeMonitor has wrong args (expected asu)");
        r = kdbus_message_enter_container(call, 'a', "s");
        if (r < 0)
                return r;
        for (;;) {
                const char *s, **v;

                r = kdbus_message_read_basic(call, 's', &s);
                if (r <= 0)
                        break;
                v = realloc(rules, (n + 1) * sizeof(*v));
                if (!v) {
                        free(rules);
                        return -ENOMEM;
                }
                rules = v;
                rules[n++] = s;
        }
        kdbus_message_exit_container(call);
        kdbus_message_read_basic(call, 'u', &flags);
        if (flags != 0) {
                free(rules);
                return proxy_client_reply_error(c, call, "org.freedesktop.DBus.Error.InvalidArgs",
                                                "BecomeMonitor does not support any flags yet");
        }

        if (c->uid != 0 && c->uid != geteuid()) {
                free(rules);
                return proxy_client_reply_error(c, call, "org.freedesktop.DBus.Error.AccessDenied",
                                                "Only root or the bus's user may become a monitor");
        }
        r = proxy_client_open_bus(c, true, &mon);
        if (r < 0) {
                free(rules);
                fprintf(stderr, "kdbus-proxy: client %u: monitor connection: %s\n", c->id,
                        strerror(-r));
                return proxy_client_reply_error(c, call, r == -EPERM ?
                                                "org.freedesktop.DBus.Error.AccessDenied" :
                                                "org.freedesktop.DBus.Error.Failed",
                                                strerror(-r));
        }
        for (uint32_t i = 0; i < n; i++) {
                r = kdbus_bus_add_match(mon, NULL, rules[i], NULL, NULL);
                if (r < 0) {
                        char text[128];

                        snprintf(text, sizeof(text), "Invalid match rule %u", i);
                        kdbus_bus_unref(mon);
                        free(rules);
                        return proxy_client_reply_error(c, call,
                                                        "org.freedesktop.DBus.Error.MatchRuleInvalid",
                                                        text);
                }
        }
        free(rules);
        r = proxy_client_reply(c, call, "");
        if (r < 0) {
                kdbus_bus_unref(mon);
                return r;
        }
        {
                const char *const *names;
                size_t n_names = kdbus_bus_get_owned_names(c->bus, &names);

                for (size_t i = 0; i < n_names && r >= 0; i++)
                        r = proxy_client_driver_signal(c, "NameLost", "s", names[i]);
        }
        if (r >= 0)
                r = proxy_client_driver_signal(c, "NameLost", "s", old_unique);
        c->monitor = true;
        c->monitor_all = n == 0;
        proxy_client_attach_bus(c, mon);
        fprintf(stderr, "kdbus-proxy: client %u (uid %u pid %d %s) became a monitor\n", c->id,
                (unsigned int)c->uid, (int)c->pid, old_unique);
        return r < 0 ? r : 0;
}

/*
 * Calls to the driver, its replies and its unicast signals never reach the
 * kernel, so kdbus monitors cannot see them: the proxy copies those of its
 * own clients to its monitors without rules (dbus-monitor shows Hello,
 * AddMatch and their replies as on dbus-daemon).
 */
void proxy_monitors_copy(struct proxy *p, struct kdbus_message *m)
{
        if (kdbus_message_get_unix_fds(m) || !kdbus_message_is_sealed(m))
                return;
        for (struct proxy_client *c = p->clients; c; c = c->next)
                if (c->monitor && c->monitor_all && !c->dead)
                        proxy_client_queue(c, m, NULL, 0);
}
