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
#include <sys/epoll.h>
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
        /* the monitor sees everything its eavesdrop rules would have added */
        proxy_eavesdrop_stop(c);
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

/* is @name the client's unique name or one of its well-known names? */
static bool is_client_name(struct proxy_client *c, const char *name)
{
        const char *const *names;
        size_t n;

        if (!name || !c->bus)
                return false;
        if (strcmp(name, kdbus_bus_get_unique_name(c->bus)) == 0)
                return true;
        n = kdbus_bus_get_owned_names(c->bus, &names);
        for (size_t i = 0; i < n; i++)
                if (strcmp(names[i], name) == 0)
                        return true;
        return false;
}

/*
 * A copy for an eavesdropper: unicasts between others that one of its
 * eavesdrop rules selects. What is addressed to it, what it sent, and
 * broadcasts reach it through its own connection already.
 */
static bool eavesdropper_wants(struct proxy *p, struct proxy_client *c, struct kdbus_message *m)
{
        const char *dest = kdbus_message_get_destination(m);
        const char *sender = kdbus_message_get_sender(m);
        struct kdbus_match_context ctx = { 0 };

        if (!dest || is_client_name(c, dest) || is_client_name(c, sender))
                return false;
        if (sender && strcmp(sender, KDBUS_DRIVER_NAME) == 0) {
                ctx.from_driver = true;
        } else if (sender) {
                for (struct proxy_client *o = p->clients; o; o = o->next) {
                        if (o->bus && !o->monitor &&
                            strcmp(kdbus_bus_get_unique_name(o->bus), sender) == 0) {
                                const char *const *names;

                                ctx.n_sender_names = kdbus_bus_get_owned_names(o->bus, &names);
                                ctx.sender_names = names;
                                break;
                        }
                }
        }
        for (size_t i = 0; i < c->n_eavesdrop_rules; i++)
                if (kdbus_match_rule_matches(c->eavesdrop_rules[i], m, &ctx))
                        return true;
        return false;
}

/* the hidden monitor's forwarding handler */
static void eavesdrop_forward(struct kdbus_bus *bus, struct kdbus_message *m, void *userdata)
{
        struct proxy_client *c = userdata;
        int *fds = NULL;
        size_t n_fds = 0;

        (void)bus;
        kdbus_message_steal_fds(m, &fds, &n_fds);
        if (c->dead || !eavesdropper_wants(c->proxy, c, m) || (n_fds && !c->sasl.unix_fd)) {
                for (size_t i = 0; i < n_fds; i++)
                        close(fds[i]);
                free(fds);
                return;
        }
        proxy_client_queue(c, m, fds, n_fds);
}

void proxy_eavesdrop_stop(struct proxy_client *c)
{
        if (c->eavesdrop_bus) {
                if (c->eavesw.fd >= 0)
                        epoll_ctl(c->proxy->epoll_fd, EPOLL_CTL_DEL, c->eavesw.fd, NULL);
                kdbus_bus_set_forward(c->eavesdrop_bus, NULL, NULL);
                kdbus_bus_unref(c->eavesdrop_bus);
        }
        c->eavesdrop_bus = NULL;
        c->eavesw.fd = -1;
        for (size_t i = 0; i < c->n_eavesdrop_rules; i++)
                kdbus_match_rule_free(c->eavesdrop_rules[i]);
        free(c->eavesdrop_rules);
        c->eavesdrop_rules = NULL;
        c->n_eavesdrop_rules = 0;
}

/*
 * eavesdrop='true' works for the clients that may become monitors (root
 * and the proxy's uid); for the others such a rule acts as if eavesdrop
 * were absent, which is all the ordinary AddMatch gives.
 */
void proxy_eavesdrop_add(struct proxy_client *c, const char *text)
{
        struct kdbus_match_rule *rule = NULL, **v;
        int r;

        if (c->uid != 0 && c->uid != geteuid())
                return;
        if (kdbus_match_rule_parse(&rule, text, false) < 0 || !rule->eavesdrop) {
                kdbus_match_rule_free(rule);
                return;
        }
        v = realloc(c->eavesdrop_rules, (c->n_eavesdrop_rules + 1) * sizeof(*v));
        if (!v) {
                kdbus_match_rule_free(rule);
                return;
        }
        c->eavesdrop_rules = v;
        c->eavesdrop_rules[c->n_eavesdrop_rules++] = rule;
        if (c->eavesdrop_bus)
                return;
        r = proxy_client_open_bus(c, true, &c->eavesdrop_bus);
        if (r >= 0) {
                kdbus_bus_set_forward(c->eavesdrop_bus, eavesdrop_forward, c);
                c->eavesw.kind = WATCH_CLIENT_EAVESDROP;
                c->eavesw.ptr = c;
                c->eavesw.fd = kdbus_bus_get_fd(c->eavesdrop_bus);
                r = proxy_epoll_set(c->proxy, &c->eavesw, EPOLLIN, true);
        }
        if (r < 0) {
                fprintf(stderr, "kdbus-proxy: client %u: eavesdropping connection: %s\n", c->id,
                        strerror(-r));
                proxy_eavesdrop_stop(c);
        }
}

void proxy_eavesdrop_remove(struct proxy_client *c, const char *text)
{
        struct kdbus_match_rule *rule = NULL;

        if (!c->n_eavesdrop_rules || kdbus_match_rule_parse(&rule, text, false) < 0)
                return;
        for (size_t i = 0; i < c->n_eavesdrop_rules; i++) {
                if (kdbus_match_rule_equal(c->eavesdrop_rules[i], rule)) {
                        kdbus_match_rule_free(c->eavesdrop_rules[i]);
                        memmove(c->eavesdrop_rules + i, c->eavesdrop_rules + i + 1,
                                (c->n_eavesdrop_rules - i - 1) * sizeof(*c->eavesdrop_rules));
                        c->n_eavesdrop_rules--;
                        break;
                }
        }
        kdbus_match_rule_free(rule);
        if (!c->n_eavesdrop_rules)
                proxy_eavesdrop_stop(c);
}

void proxy_eavesdrop_event(struct proxy_client *c, uint32_t events)
{
        (void)events;
        /* over the output limit the kernel drops the copies, not the proxy */
        while (!c->dead && c->eavesdrop_bus && c->out_bytes < c->proxy->output_limit) {
                int r = kdbus_bus_process(c->eavesdrop_bus);

                if (r == 0)
                        break;
                if (r < 0 && r != -ENOMEM) {
                        fprintf(stderr, "kdbus-proxy: client %u: eavesdropping connection: %s\n",
                                c->id, strerror(-r));
                        proxy_eavesdrop_stop(c);
                        break;
                }
        }
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
        for (struct proxy_client *c = p->clients; c; c = c->next) {
                if (c->dead)
                        continue;
                if (c->monitor ? monitor_wants(p, c, m) :
                    c->n_eavesdrop_rules && eavesdropper_wants(p, c, m))
                        proxy_client_queue(c, m, NULL, 0);
        }
}
