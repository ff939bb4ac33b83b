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

#include "match-rule.h"
#include "proxy.h"

void proxy_monitor_free_rules(struct proxy_client *c)
{
        for (size_t i = 0; i < c->n_monitor_rules; i++)
                kdbus_match_rule_free(c->monitor_rules[i]);
        free(c->monitor_rules);
        c->monitor_rules = NULL;
        c->n_monitor_rules = 0;
}

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
        proxy_monitor_free_rules(c);
        if (n) {
                c->monitor_rules = calloc(n, sizeof(*c->monitor_rules));
                if (!c->monitor_rules) {
                        kdbus_bus_unref(mon);
                        free(rules);
                        return -ENOMEM;
                }
        }
        for (uint32_t i = 0; i < n; i++) {
                r = kdbus_bus_add_match(mon, NULL, rules[i], NULL, NULL);
                if (r >= 0)
                        r = kdbus_match_rule_parse(&c->monitor_rules[i], rules[i], false);
                if (r >= 0)
                        c->n_monitor_rules = i + 1;
                if (r < 0) {
                        char text[128];

                        snprintf(text, sizeof(text), "Invalid match rule %u", i);
                        proxy_monitor_free_rules(c);
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

/* does one of @mon's rules select the driver message @m? (as if eavesdrop='true') */
static bool monitor_wants(struct proxy *p, struct proxy_client *mon, struct kdbus_message *m)
{
        const char *sender = kdbus_message_get_sender(m);
        struct kdbus_match_context ctx = { 0 };

        if (mon->monitor_all)
                return true;
        if (sender && strcmp(sender, KDBUS_DRIVER_NAME) == 0) {
                ctx.from_driver = true;
        } else if (sender) {
                /* a client's call: its well-known names count for sender='...' */
                for (struct proxy_client *c = p->clients; c; c = c->next) {
                        if (c->bus && !c->monitor &&
                            strcmp(kdbus_bus_get_unique_name(c->bus), sender) == 0) {
                                const char *const *names;

                                ctx.n_sender_names = kdbus_bus_get_owned_names(c->bus, &names);
                                ctx.sender_names = names;
                                break;
                        }
                }
        }
        for (size_t i = 0; i < mon->n_monitor_rules; i++)
                if (kdbus_match_rule_matches(mon->monitor_rules[i], m, &ctx))
                        return true;
        return false;
}

/*
 * Calls to the driver, its replies and its unicast signals never reach the
 * kernel, so kdbus monitors cannot see them: the proxy copies those of its
 * own clients to its monitors, filtered by their rules as dbus-daemon does
 * (dbus-monitor shows Hello, AddMatch and their replies as on dbus-daemon).
 */
void proxy_monitors_copy(struct proxy *p, struct kdbus_message *m)
{
        if (kdbus_message_get_unix_fds(m) || !kdbus_message_is_sealed(m))
                return;
        for (struct proxy_client *c = p->clients; c; c = c->next)
                if (c->monitor && !c->dead && monitor_wants(p, c, m))
                        proxy_client_queue(c, m, NULL, 0);
}
