// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The driver calls kdbus-proxy answers itself instead of libkdbus's driver:
 * StartServiceByName, asynchronously (the proxy never waits for a service
 * to start), and GetConnectionCredentials for the proxy's own clients,
 * whose supplementary groups (SO_PEERGROUPS) the kernel does not know: a
 * connection with a faked identity carries only CREDS, PIDS and SECLABEL.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/kdbus.h>

#include "bus-internal.h"         /* libkdbus's sources are linked in */
#include "proxy.h"

/* dbus-daemon's default activation timeout */
#define PROXY_ACTIVATION_TIMEOUT_USEC (25ULL * 1000000)

/* a StartServiceByName waiting for the Peer.Ping it sent to be answered */
struct proxy_start {
        struct proxy *proxy;
        uint32_t client_id;             /* the client may be gone by then */
        struct kdbus_message *call;
        char name[256];
};

static struct proxy_client *find_client(struct proxy *p, uint32_t id)
{
        for (struct proxy_client *c = p->clients; c; c = c->next)
                if (c->id == id)
                        return c->dead ? NULL : c;
        return NULL;
}

static int start_done(struct kdbus_bus *bus, struct kdbus_message *m, void *userdata)
{
        struct proxy_start *s = userdata;
        struct proxy_client *c = find_client(s->proxy, s->client_id);
        uint8_t type = kdbus_message_get_type(m);
        const char *sender = kdbus_message_get_sender(m);

        (void)bus;
        if (c) {
                /*
                 * Any answer of the service proves it runs (an UnknownMethod
                 * too); errors of the local driver stand for REPLY_DEAD,
                 * REPLY_TIMEOUT or a failed send.
                 */
                if (type == KDBUS_MESSAGE_METHOD_RETURN ||
                    (type == KDBUS_MESSAGE_ERROR && (!sender || strcmp(sender, KDBUS_DRIVER_NAME) != 0))) {
                        proxy_client_reply(c, s->call, "u", (uint32_t)1);
                } else {
                        const char *why = NULL;
                        char text[512];

                        kdbus_message_rewind(m);
                        if (kdbus_message_read_basic(m, 's', &why) <= 0)
                                why = kdbus_message_get_error_name(m);
                        snprintf(text, sizeof(text), "Activation of %s failed: %s", s->name,
                                 why ? why : "no reply");
                        proxy_client_reply_error(c, s->call, "org.freedesktop.DBus.Error.Spawn.Failed",
                                                 text);
                }
        }
        kdbus_message_unref(s->call);
        free(s);
        return 0;
}

static bool is_activatable(struct kdbus_bus *bus, const char *name, int *err)
{
        struct kdbus_name_entry *e = NULL;
        size_t n = 0;
        bool found = false;

        *err = kdbus_bus_list(bus, KDBUS_LIST_ACTIVATORS, &e, &n);
        if (*err < 0)
                return false;
        for (size_t i = 0; i < n; i++)
                if (e[i].name && (e[i].name_flags & KDBUS_NAME_ACTIVATOR) &&
                    strcmp(e[i].name, name) == 0)
                        found = true;
        kdbus_name_entries_free(e, n);
        return found;
}

/* StartServiceByName(s name, u flags): answered later, by start_done() */
static int start_service(struct proxy_client *c, struct kdbus_message *call)
{
        struct proxy *p = c->proxy;
        struct kdbus_message *ping = NULL;
        struct kdbus_metadata md;
        struct proxy_start *s;
        const char *name = NULL;
        uint32_t flags = 0;
        char text[512];
        int r, err;

        kdbus_message_rewind(call);
        if (kdbus_message_read(call, "su", &name, &flags) < 0)
                return proxy_client_reply_error(c, call, "org.freedesktop.DBus.Error.InvalidArgs",
                                                "Call to StartServiceByName has wrong args (expected su)");
        if (!is_activatable(p->internal, name, &err)) {
                if (err < 0)
                        return proxy_client_reply_error(c, call, "org.freedesktop.DBus.Error.Failed",
                                                        strerror(-err));
                snprintf(text, sizeof(text), "The name %s was not provided by any .service files",
                         name);
                return proxy_client_reply_error(c, call, "org.freedesktop.DBus.Error.ServiceUnknown",
                                                text);
        }
        /* owned by a real connection, not by its activator: running */
        r = kdbus_bus_get_conn_info(p->internal, name, 0, &md);
        if (r >= 0) {
                bool running = !(md.info_flags & KDBUS_HELLO_ACTIVATOR);

                kdbus_metadata_free(&md);
                if (running)
                        return proxy_client_reply(c, call, "u", (uint32_t)2);
        }
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->proxy = p;
        s->client_id = c->id;
        s->call = kdbus_message_ref(call);
        snprintf(s->name, sizeof(s->name), "%s", name);
        /* the ping waits in the activator, wakes the launcher, moves to the service */
        r = kdbus_message_new_method_call(&ping, s->name, "/", "org.freedesktop.DBus.Peer", "Ping");
        if (r >= 0)
                r = kdbus_bus_call_async(p->internal, NULL, ping, start_done, s,
                                         PROXY_ACTIVATION_TIMEOUT_USEC);
        kdbus_message_unref(ping);
        if (r < 0) {
                kdbus_message_unref(s->call);
                free(s);
                snprintf(text, sizeof(text), "Activation of %s failed: %s", name, strerror(-r));
                return proxy_client_reply_error(c, call, "org.freedesktop.DBus.Error.Spawn.Failed",
                                                text);
        }
        return 0;
}

/* the identity of one of our clients as dbus-daemon gives it (SO_PEER*) */
static int client_credentials(struct proxy_client *c, struct kdbus_message *call,
                              struct proxy_client *who)
{
        struct kdbus_message *m = NULL;
        uint32_t *groups;
        size_t n = 0;
        int r;

        if (kdbus_message_get_flags(call) & KDBUS_MESSAGE_NO_REPLY_EXPECTED)
                return 0;
        groups = calloc(who->n_groups + 1, sizeof(*groups));
        if (!groups)
                return -ENOMEM;
        groups[n++] = (uint32_t)who->gid;
        for (size_t i = 0; i < who->n_groups; i++)
                groups[n++] = (uint32_t)who->groups[i];
        n = bus_groups_sort_unique(groups, n);
        r = kdbus_message_new_method_return(&m, call);
        if (r >= 0)
                r = kdbus_message_open_container(m, 'a', "{sv}");
        if (r >= 0)
                r = kdbus_message_append(m, "{sv}", "UnixUserID", "u", (uint32_t)who->uid);
        if (r >= 0)
                r = kdbus_message_open_container(m, '{', "sv");
        if (r >= 0)
                r = kdbus_message_append_basic(m, 's', "UnixGroupIDs");
        if (r >= 0)
                r = kdbus_message_open_container(m, 'v', "au");
        if (r >= 0)
                r = kdbus_message_append_array(m, 'u', groups, n * sizeof(*groups));
        if (r >= 0)
                r = kdbus_message_close_container(m);
        if (r >= 0)
                r = kdbus_message_close_container(m);
        if (r >= 0 && who->pid > 0)
                r = kdbus_message_append(m, "{sv}", "ProcessID", "u", (uint32_t)who->pid);
        if (r >= 0 && who->seclabel) {
                r = kdbus_message_open_container(m, '{', "sv");
                if (r >= 0)
                        r = kdbus_message_append_basic(m, 's', "LinuxSecurityLabel");
                if (r >= 0)
                        r = kdbus_message_open_container(m, 'v', "ay");
                if (r >= 0)
                        r = kdbus_message_append_array(m, 'y', who->seclabel,
                                                       strlen(who->seclabel) + 1);
                if (r >= 0)
                        r = kdbus_message_close_container(m);
                if (r >= 0)
                        r = kdbus_message_close_container(m);
        }
        if (r >= 0)
                r = kdbus_message_close_container(m);
        free(groups);
        if (r >= 0)
                r = proxy_client_queue_driver(c, m);
        kdbus_message_unref(m);
        return r;
}

/* GetConnectionCredentials(s name) for a name one of our clients owns */
static int credentials(struct proxy_client *c, struct kdbus_message *call)
{
        struct proxy *p = c->proxy;
        const char *name = NULL;
        char *owner = NULL;
        int r;

        kdbus_message_rewind(call);
        if (kdbus_message_read(call, "s", &name) < 0 || strcmp(name, KDBUS_DRIVER_NAME) == 0) {
                kdbus_message_rewind(call);
                return 0;
        }
        if (name[0] == ':')
                owner = strdup(name);
        else if (kdbus_bus_get_name_owner(c->bus, name, &owner) < 0)
                owner = NULL;
        kdbus_message_rewind(call);
        if (!owner)
                return 0;               /* libkdbus's driver has the errors */
        r = 0;
        for (struct proxy_client *who = p->clients; who; who = who->next) {
                if (!who->dead && who->bus && !who->monitor &&
                    strcmp(kdbus_bus_get_unique_name(who->bus), owner) == 0) {
                        r = client_credentials(c, call, who);
                        r = r < 0 ? r : 1;
                        break;
                }
        }
        free(owner);
        return r;
}

int proxy_driver_call(struct proxy_client *c, struct kdbus_message *m)
{
        const char *iface = kdbus_message_get_interface(m);
        const char *member = kdbus_message_get_member(m);
        const char *sig = kdbus_message_get_signature(m);

        if (!member || (iface && strcmp(iface, KDBUS_DRIVER_NAME) != 0))
                return 0;
        if (strcmp(member, "StartServiceByName") == 0 && strcmp(sig, "su") == 0) {
                int r = start_service(c, m);

                return r < 0 ? r : 1;
        }
        if (strcmp(member, "GetConnectionCredentials") == 0 && strcmp(sig, "s") == 0)
                return credentials(c, m);
        if ((strcmp(member, "AddMatch") == 0 || strcmp(member, "RemoveMatch") == 0) &&
            strcmp(sig, "s") == 0) {
                const char *rule = NULL;

                /* libkdbus's driver installs the rule and replies */
                kdbus_message_rewind(m);
                if (kdbus_message_read(m, "s", &rule) >= 0 && strstr(rule, "eavesdrop")) {
                        if (member[0] == 'A')
                                proxy_eavesdrop_add(c, rule);
                        else
                                proxy_eavesdrop_remove(c, rule);
                }
                kdbus_message_rewind(m);
        }
        return 0;
}

void proxy_internal_event(struct proxy *p)
{
        int r;

        while ((r = kdbus_bus_process(p->internal)) > 0)
                ;
        if (r < 0 && r != -EAGAIN)
                fprintf(stderr, "kdbus-proxy: internal connection: %s\n", strerror(-r));
}
