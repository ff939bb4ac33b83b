// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The local org.freedesktop.DBus driver of libkdbus (libkdbus(3)): calls
 * to the driver are answered in the process, from the kernel's name
 * registry and connection metadata, with dbus-daemon's replies and
 * errors. Used by native clients and by kdbus-proxy for its clients.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/kdbus.h>

#include "bloom.h"
#include "bus.h"
#include "marshal.h"
#include "match-rule.h"
#include "bus-internal.h"

/* ------------------------------------------------------------------ */
/* the local org.freedesktop.DBus driver (libkdbus(3)) */

/**
 * bus_driver_seal() - finish a message the local driver sends
 * @m:          the message (consumed)
 * @r:          the result of building it so far (negative: give up)
 * @dest:       destination to set, or NULL
 * @ret:        the sealed message
 *
 * Driver messages expect no reply and are sealed with the local serial
 * and the driver's name as their sender.
 *
 * Return: 0, or a negative errno (@m is freed then).
 */
int bus_driver_seal(struct kdbus_message *m, int r, const char *dest,
                    struct kdbus_message **ret)
{
        if (r >= 0)
                r = kdbus_message_set_flags(m, KDBUS_MESSAGE_NO_REPLY_EXPECTED);
        if (r >= 0 && dest)
                r = kdbus_message_set_destination(m, dest);
        if (r >= 0)
                r = kdbus_message_seal(m, KDBUS_LOCAL_SERIAL, KDBUS_DRIVER_NAME);
        if (r < 0) {
                kdbus_message_unref(m);
                return r;
        }
        *ret = m;
        return 0;
}

static int driver_reply_error(struct kdbus_message *call, struct kdbus_message **reply,
                              const char *name, const char *text)
{
        struct kdbus_message *m = NULL;
        int r;

        r = kdbus_message_new_error(&m, call, name, text);
        return bus_driver_seal(m, r, NULL, reply);
}

/* a failed lookup of @arg: NameHasNoOwner for -ENXIO, Failed for any other errno */
static int driver_reply_lookup_error(struct kdbus_message *call, struct kdbus_message **reply,
                                     int err, const char *what, const char *arg)
{
        char text[600];

        if (err != -ENXIO)
                return driver_reply_error(call, reply, "org.freedesktop.DBus.Error.Failed",
                                          strerror(-err));
        snprintf(text, sizeof(text), "Could not get %s of name '%s': no such name", what, arg);
        return driver_reply_error(call, reply, "org.freedesktop.DBus.Error.NameHasNoOwner", text);
}

static int driver_reply(struct kdbus_message *call, struct kdbus_message **reply,
                        const char *types, ...)
{
        struct kdbus_message *m = NULL;
        va_list ap;
        int r;

        r = kdbus_message_new_method_return(&m, call);
        if (r < 0)
                return r;
        if (types && *types) {
                va_start(ap, types);
                r = kdbus_message_appendv(m, types, ap);
                va_end(ap);
        }
        return bus_driver_seal(m, r, NULL, reply);
}

static int driver_reply_strv(struct kdbus_message *call, struct kdbus_message **reply,
                             char *const *strv)
{
        struct kdbus_message *m = NULL;
        int r;

        r = kdbus_message_new_method_return(&m, call);
        if (r >= 0)
                r = kdbus_message_append_strv(m, strv);
        return bus_driver_seal(m, r, NULL, reply);
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

        return x < y ? -1 : x > y;
}

static int cmp_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

        return x < y ? -1 : x > y;
}

/**
 * bus_groups_sort_unique() - a GetConnectionCredentials group list as D-Bus gives it
 * @groups:     group IDs, sorted in place
 * @n:          how many
 *
 * Return: how many are left at the front of @groups, sorted, each once.
 */
size_t bus_groups_sort_unique(uint32_t *groups, size_t n)
{
        size_t j = 0;

        qsort(groups, n, sizeof(*groups), cmp_u32);
        for (size_t i = 0; i < n; i++)
                if (j == 0 || groups[i] != groups[j - 1])
                        groups[j++] = groups[i];
        return j;
}

/*
 * ListQueuedOwners of a well-known name: the primary owner first, then the
 * queued connections by ascending ID (LIST does not reveal queue order).
 * Activator records are skipped. -ENXIO when there is no primary owner.
 */
static int driver_queued_owners(struct kdbus_bus *bus, const char *name, char ***ret)
{
        struct kdbus_name_entry *e = NULL;
        uint64_t *queued = NULL, primary = 0;
        size_t n = 0, n_queued = 0, k = 0;
        bool has_primary = false;
        char **v = NULL, u[32];
        int r;

        r = kdbus_bus_list(bus, KDBUS_LIST_NAMES | KDBUS_LIST_QUEUED, &e, &n);
        if (r < 0)
                return r;
        queued = calloc(n ? n : 1, sizeof(*queued));
        if (!queued) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t i = 0; i < n; i++) {
                if (!e[i].name || strcmp(e[i].name, name) != 0 ||
                    (e[i].conn_flags & KDBUS_HELLO_ACTIVATOR) ||
                    (e[i].name_flags & KDBUS_NAME_ACTIVATOR))
                        continue;
                if (e[i].name_flags & KDBUS_NAME_IN_QUEUE) {
                        queued[n_queued++] = e[i].id;
                } else {
                        primary = e[i].id;
                        has_primary = true;
                }
        }
        if (!has_primary) {
                r = -ENXIO;
                goto out;
        }
        qsort(queued, n_queued, sizeof(*queued), cmp_u64);
        snprintf(u, sizeof(u), ":1.%llu", (unsigned long long)primary);
        r = bus_strv_push(&v, &k, u);
        for (size_t i = 0; r >= 0 && i < n_queued; i++) {
                snprintf(u, sizeof(u), ":1.%llu", (unsigned long long)queued[i]);
                r = bus_strv_push(&v, &k, u);
        }
out:
        free(queued);
        kdbus_name_entries_free(e, n);
        if (r < 0) {
                kdbus_strv_free(v);
                return r;
        }
        *ret = v;
        return 0;
}

/* ListActivatableNames: org.freedesktop.DBus and every activator's name */
static int driver_activatable_names(struct kdbus_bus *bus, char ***ret)
{
        struct kdbus_name_entry *e = NULL;
        char **v = NULL;
        size_t n = 0, k = 0;
        int r;

        r = kdbus_bus_list(bus, KDBUS_LIST_ACTIVATORS, &e, &n);
        if (r < 0)
                return r;
        r = bus_strv_push(&v, &k, KDBUS_DRIVER_NAME);
        for (size_t i = 0; r >= 0 && i < n; i++)
                if (e[i].name && (e[i].name_flags & KDBUS_NAME_ACTIVATOR) &&
                    !bus_strv_contains(v, k, e[i].name))
                        r = bus_strv_push(&v, &k, e[i].name);
        kdbus_name_entries_free(e, n);
        if (r < 0) {
                kdbus_strv_free(v);
                return r;
        }
        *ret = v;
        return 0;
}

static int dict_append_u32(struct kdbus_message *m, const char *key, uint32_t value)
{
        return kdbus_message_append(m, "{sv}", key, "u", value);
}

static int dict_append_array(struct kdbus_message *m, const char *key, const char *sig,
                             const void *ptr, size_t size)
{
        int r;

        r = kdbus_message_open_container(m, '{', "sv");
        if (r >= 0)
                r = kdbus_message_append_basic(m, 's', key);
        if (r >= 0)
                r = kdbus_message_open_container(m, 'v', sig);
        if (r >= 0)
                r = kdbus_message_append_array(m, sig[1], ptr, size);
        if (r >= 0)
                r = kdbus_message_close_container(m);
        if (r >= 0)
                r = kdbus_message_close_container(m);
        return r;
}

/*
 * GetConnectionCredentials body (libkdbus(3)): each entry only when
 * the kernel supplied the data. UnixGroupIDs = egid plus AUXGROUPS, sorted
 * and unique, and only when AUXGROUPS came; the label carries a NUL.
 */
static int driver_credentials(struct kdbus_message *m, const struct kdbus_metadata *md)
{
        uint32_t *groups = NULL;
        size_t n = 0;
        int r;

        r = kdbus_message_open_container(m, 'a', "{sv}");
        if (r >= 0 && md->has_creds && md->euid < 0xFFFFFFFFu)
                r = dict_append_u32(m, "UnixUserID", (uint32_t)md->euid);
        if (r >= 0 && md->auxgroups) {
                groups = calloc(md->n_auxgroups + 1, sizeof(*groups));
                if (!groups)
                        return -ENOMEM;
                if (md->has_creds && md->egid < 0xFFFFFFFFu)
                        groups[n++] = (uint32_t)md->egid;
                for (size_t i = 0; i < md->n_auxgroups; i++)
                        if (md->auxgroups[i] < 0xFFFFFFFFu)
                                groups[n++] = (uint32_t)md->auxgroups[i];
                n = bus_groups_sort_unique(groups, n);
                r = dict_append_array(m, "UnixGroupIDs", "au", groups, n * sizeof(*groups));
                free(groups);
        }
        if (r >= 0 && md->has_pids && md->pid && md->pid < 0xFFFFFFFFu)
                r = dict_append_u32(m, "ProcessID", (uint32_t)md->pid);
        if (r >= 0 && md->seclabel)
                r = dict_append_array(m, "LinuxSecurityLabel", "ay", md->seclabel,
                                      strlen(md->seclabel) + 1);
        if (r >= 0)
                r = kdbus_message_close_container(m);
        return r;
}

/* the XML of org.freedesktop.DBus.Introspectable.Introspect (libkdbus(3)) */
static const char driver_xml_head[] =
        "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\"\n"
        "\"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">\n"
        "<node>\n";

static const char driver_xml_dbus[] =
        "  <interface name=\"org.freedesktop.DBus\">\n"
        "    <method name=\"Hello\">\n"
        "      <arg direction=\"out\" type=\"s\"/>\n"
        "    </method>\n"
        "    <method name=\"RequestName\">\n"
        "      <arg direction=\"in\" type=\"s\"/>\n"
        "      <arg direction=\"in\" type=\"u\"/>\n"
        "      <arg direction=\"out\" type=\"u\"/>\n"
        "    </method>\n"
        "    <method name=\"ReleaseName\">\n"
        "      <arg direction=\"in\" type=\"s\"/>\n"
        "      <arg direction=\"out\" type=\"u\"/>\n"
        "    </method>\n"
        "    <method name=\"StartServiceByName\">\n"
        "      <arg direction=\"in\" type=\"s\"/>\n"
        "      <arg direction=\"in\" type=\"u\"/>\n"
        "      <arg direction=\"out\" type=\"u\"/>\n"
        "    </method>\n"
        "    <method name=\"UpdateActivationEnvironment\">\n"
        "      <arg direction=\"in\" type=\"a{ss}\"/>\n"
        "    </method>\n"
        "    <method name=\"NameHasOwner\">\n"
        "      <arg direction=\"in\" type=\"s\"/>\n"
        "      <arg direction=\"out\" type=\"b\"/>\n"
        "    </method>\n"
        "    <method name=\"ListNames\">\n"
        "      <arg direction=\"out\" type=\"as\"/>\n"
        "    </method>\n"
        "    <method name=\"ListActivatableNames\">\n"
        "      <arg direction=\"out\" type=\"as\"/>\n"
        "    </method>\n"
        "    <method name=\"AddMatch\">\n"
        "      <arg direction=\"in\" type=\"s\"/>\n"
        "    </method>\n"
        "    <method name=\"RemoveMatch\">\n"
        "      <arg direction=\"in\" type=\"s\"/>\n"
        "    </method>\n"
        "    <method name=\"GetNameOwner\">\n"
        "      <arg direction=\"in\" type=\"s\"/>\n"
        "      <arg direction=\"out\" type=\"s\"/>\n"
        "    </method>\n"
        "    <method name=\"ListQueuedOwners\">\n"
        "      <arg direction=\"in\" type=\"s\"/>\n"
        "      <arg direction=\"out\" type=\"as\"/>\n"
        "    </method>\n"
        "    <method name=\"GetConnectionUnixUser\">\n"
        "      <arg direction=\"in\" type=\"s\"/>\n"
        "      <arg direction=\"out\" type=\"u\"/>\n"
        "    </method>\n"
        "    <method name=\"GetConnectionUnixProcessID\">\n"
        "      <arg direction=\"in\" type=\"s\"/>\n"
        "      <arg direction=\"out\" type=\"u\"/>\n"
        "    </method>\n"
        "    <method name=\"GetAdtAuditSessionData\">\n"
        "      <arg direction=\"in\" type=\"s\"/>\n"
        "      <arg direction=\"out\" type=\"ay\"/>\n"
        "    </method>\n"
        "    <method name=\"GetConnectionSELinuxSecurityContext\">\n"
        "      <arg direction=\"in\" type=\"s\"/>\n"
        "      <arg direction=\"out\" type=\"ay\"/>\n"
        "    </method>\n"
        "    <method name=\"GetConnectionCredentials\">\n"
        "      <arg direction=\"in\" type=\"s\"/>\n"
        "      <arg direction=\"out\" type=\"a{sv}\"/>\n"
        "    </method>\n"
        "    <method name=\"ReloadConfig\">\n"
        "    </method>\n"
        "    <method name=\"GetId\">\n"
        "      <arg direction=\"out\" type=\"s\"/>\n"
        "    </method>\n"
        "    <property name=\"Features\" type=\"as\" access=\"read\">\n"
        "      <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" value=\"const\"/>\n"
        "    </property>\n"
        "    <property name=\"Interfaces\" type=\"as\" access=\"read\">\n"
        "      <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" value=\"const\"/>\n"
        "    </property>\n"
        "    <signal name=\"NameOwnerChanged\">\n"
        "      <arg type=\"s\"/>\n"
        "      <arg type=\"s\"/>\n"
        "      <arg type=\"s\"/>\n"
        "    </signal>\n"
        "    <signal name=\"NameLost\">\n"
        "      <arg type=\"s\"/>\n"
        "    </signal>\n"
        "    <signal name=\"NameAcquired\">\n"
        "      <arg type=\"s\"/>\n"
        "    </signal>\n"
        "  </interface>\n";

static const char driver_xml_properties[] =
        "  <interface name=\"org.freedesktop.DBus.Properties\">\n"
        "    <method name=\"Get\">\n"
        "      <arg direction=\"in\" type=\"s\"/>\n"
        "      <arg direction=\"in\" type=\"s\"/>\n"
        "      <arg direction=\"out\" type=\"v\"/>\n"
        "    </method>\n"
        "    <method name=\"GetAll\">\n"
        "      <arg direction=\"in\" type=\"s\"/>\n"
        "      <arg direction=\"out\" type=\"a{sv}\"/>\n"
        "    </method>\n"
        "    <method name=\"Set\">\n"
        "      <arg direction=\"in\" type=\"s\"/>\n"
        "      <arg direction=\"in\" type=\"s\"/>\n"
        "      <arg direction=\"in\" type=\"v\"/>\n"
        "    </method>\n"
        "    <signal name=\"PropertiesChanged\">\n"
        "      <arg type=\"s\" name=\"interface_name\"/>\n"
        "      <arg type=\"a{sv}\" name=\"changed_properties\"/>\n"
        "      <arg type=\"as\" name=\"invalidated_properties\"/>\n"
        "    </signal>\n"
        "  </interface>\n";

static const char driver_xml_introspectable[] =
        "  <interface name=\"org.freedesktop.DBus.Introspectable\">\n"
        "    <method name=\"Introspect\">\n"
        "      <arg direction=\"out\" type=\"s\"/>\n"
        "    </method>\n"
        "  </interface>\n";

static const char driver_xml_monitoring[] =
        "  <interface name=\"org.freedesktop.DBus.Monitoring\">\n"
        "    <method name=\"BecomeMonitor\">\n"
        "      <arg direction=\"in\" type=\"as\"/>\n"
        "      <arg direction=\"in\" type=\"u\"/>\n"
        "    </method>\n"
        "  </interface>\n";

static const char driver_xml_peer[] =
        "  <interface name=\"org.freedesktop.DBus.Peer\">\n"
        "    <method name=\"GetMachineId\">\n"
        "      <arg direction=\"out\" type=\"s\"/>\n"
        "    </method>\n"
        "    <method name=\"Ping\">\n"
        "    </method>\n"
        "  </interface>\n";

/*
 * Introspect on @path: everything on /org/freedesktop/DBus; elsewhere the
 * interfaces served on every path, plus a child node leading towards
 * /org/freedesktop/DBus when @path is a proper prefix of it.
 */
static int driver_introspect(struct kdbus_message *call, struct kdbus_message **reply)
{
        const char *path = kdbus_message_get_path(call);
        bool driver = path && strcmp(path, KDBUS_DRIVER_PATH) == 0;
        const char *child = NULL;
        char *xml;
        size_t len;
        int r;

        if (path && !driver) {
                size_t plen = strlen(path);

                if (strcmp(path, "/") == 0)
                        child = KDBUS_DRIVER_PATH + 1;
                else if (strncmp(KDBUS_DRIVER_PATH, path, plen) == 0 &&
                         KDBUS_DRIVER_PATH[plen] == '/')
                        child = KDBUS_DRIVER_PATH + plen + 1;
        }
        len = sizeof(driver_xml_head) + sizeof(driver_xml_dbus) + sizeof(driver_xml_properties) +
              sizeof(driver_xml_introspectable) + sizeof(driver_xml_monitoring) +
              sizeof(driver_xml_peer) + sizeof(KDBUS_DRIVER_PATH) + 64;
        xml = malloc(len);
        if (!xml)
                return -ENOMEM;
        snprintf(xml, len, "%s%s%s%s%s%s%s%s%s%s</node>\n", driver_xml_head, driver_xml_dbus,
                 driver ? driver_xml_properties : "", driver_xml_introspectable,
                 driver ? driver_xml_monitoring : "", driver_xml_peer,
                 child ? "  <node name=\"" : "", child ? child : "", child ? "\"/>\n" : "", "");
        r = driver_reply(call, reply, "s", xml);
        free(xml);
        return r;
}

/* org.freedesktop.DBus.Properties on /org/freedesktop/DBus */
static int driver_properties(struct kdbus_message *call, struct kdbus_message **reply)
{
        static const char *const features[] = { "HeaderFiltering", NULL };
        static const char *const interfaces[] = { "org.freedesktop.DBus.Monitoring", NULL };
        const char *member = kdbus_message_get_member(call);
        const char *sig = kdbus_message_get_signature(call);
        const char *want = strcmp(member, "Get") == 0 ? "ss" : strcmp(member, "GetAll") == 0 ? "s" :
                           strcmp(member, "Set") == 0 ? "ssv" : NULL;
        const char *iface = NULL, *prop = NULL;
        struct kdbus_message *m = NULL;
        char text[600];
        int r;

        if (!want) {
                snprintf(text, sizeof(text), "org.freedesktop.DBus does not understand message %s",
                         member);
                return driver_reply_error(call, reply, "org.freedesktop.DBus.Error.UnknownMethod",
                                          text);
        }
        if (strcmp(sig, want) != 0) {
                snprintf(text, sizeof(text), "Call to %s has wrong args (%s, expected %s)", member,
                         sig, want);
                return driver_reply_error(call, reply, "org.freedesktop.DBus.Error.InvalidArgs", text);
        }
        r = kdbus_message_read_basic(call, 's', &iface);
        if (r > 0 && want[1])
                r = kdbus_message_read_basic(call, 's', &prop);
        if (r <= 0)
                return r < 0 ? r : -EBADMSG;
        if (strcmp(iface, KDBUS_DRIVER_NAME) != 0 &&
            !(strcmp(member, "GetAll") == 0 &&
              strcmp(iface, "org.freedesktop.DBus.Monitoring") == 0)) {
                snprintf(text, sizeof(text), "Interface \"%s\" not found", iface);
                return driver_reply_error(call, reply, "org.freedesktop.DBus.Error.UnknownInterface",
                                          text);
        }
        if (prop && strcmp(prop, "Features") != 0 && strcmp(prop, "Interfaces") != 0) {
                snprintf(text, sizeof(text), "Property \"%s.%s\" not found", iface, prop);
                return driver_reply_error(call, reply, "org.freedesktop.DBus.Error.UnknownProperty",
                                          text);
        }
        if (strcmp(member, "Set") == 0) {
                snprintf(text, sizeof(text), "Property '%s.%s' cannot be set", iface, prop);
                return driver_reply_error(call, reply, "org.freedesktop.DBus.Error.PropertyReadOnly",
                                          text);
        }
        r = kdbus_message_new_method_return(&m, call);
        if (r < 0)
                return r;
        if (strcmp(member, "Get") == 0) {
                r = kdbus_message_open_container(m, 'v', "as");
                if (r >= 0)
                        r = kdbus_message_append_strv(m, (char *const *)(strcmp(prop, "Features") == 0 ?
                                                                         features : interfaces));
                if (r >= 0)
                        r = kdbus_message_close_container(m);
        } else {
                bool all = strcmp(iface, KDBUS_DRIVER_NAME) == 0;

                r = kdbus_message_open_container(m, 'a', "{sv}");
                for (int i = 0; all && i < 2 && r >= 0; i++) {
                        r = kdbus_message_open_container(m, '{', "sv");
                        if (r >= 0)
                                r = kdbus_message_append_basic(m, 's', i ? "Interfaces" : "Features");
                        if (r >= 0)
                                r = kdbus_message_open_container(m, 'v', "as");
                        if (r >= 0)
                                r = kdbus_message_append_strv(m, (char *const *)(i ? interfaces :
                                                                                 features));
                        if (r >= 0)
                                r = kdbus_message_close_container(m);
                        if (r >= 0)
                                r = kdbus_message_close_container(m);
                }
                if (r >= 0)
                        r = kdbus_message_close_container(m);
        }
        return bus_driver_seal(m, r, NULL, reply);
}

int bus_driver_call(struct kdbus_bus *bus, struct kdbus_message *call,
                       struct kdbus_message **reply)
{
        const char *member = kdbus_message_get_member(call);
        const char *iface = kdbus_message_get_interface(call);
        const char *sig = kdbus_message_get_signature(call);
        const char *arg = NULL;
        char text[600];
        int r;

        kdbus_message_rewind(call);
        if (iface && strcmp(iface, "org.freedesktop.DBus.Peer") == 0) {
                char id[33];

                if (strcmp(member, "Ping") == 0)
                        return driver_reply(call, reply, "");
                if (strcmp(member, "GetMachineId") == 0 && bus_read_machine_id(id) >= 0)
                        return driver_reply(call, reply, "s", id);
        } else if ((iface && strcmp(iface, "org.freedesktop.DBus.Introspectable") == 0) ||
                   (!iface && strcmp(member, "Introspect") == 0)) {
                if (strcmp(member, "Introspect") != 0)
                        goto unknown;
                if (*sig) {
                        snprintf(text, sizeof(text),
                                 "Call to %s has wrong args (%s, expected )", member, sig);
                        return driver_reply_error(call, reply,
                                                  "org.freedesktop.DBus.Error.InvalidArgs", text);
                }
                return driver_introspect(call, reply);
        } else if (iface && (strcmp(iface, "org.freedesktop.DBus.Properties") == 0 ||
                             strcmp(iface, "org.freedesktop.DBus.Monitoring") == 0) &&
                   strcmp(kdbus_message_get_path(call), KDBUS_DRIVER_PATH) != 0) {
                goto unknown;
        } else if (iface && strcmp(iface, "org.freedesktop.DBus.Properties") == 0) {
                return driver_properties(call, reply);
        } else if (!iface || strcmp(iface, KDBUS_DRIVER_NAME) == 0) {
                static const struct {
                        const char *member, *sig;
                } methods[] = {
                        { "Hello", "" }, { "GetId", "" }, { "ListNames", "" },
                        { "RequestName", "su" }, { "ReleaseName", "s" },
                        { "GetNameOwner", "s" }, { "NameHasOwner", "s" },
                        { "AddMatch", "s" }, { "RemoveMatch", "s" },
                        { "GetConnectionUnixUser", "s" }, { "GetConnectionUnixProcessID", "s" },
                        { "ListQueuedOwners", "s" }, { "ListActivatableNames", "" },
                        { "GetConnectionCredentials", "s" }, { "StartServiceByName", "su" },
                        { "GetAdtAuditSessionData", "s" },
                        { "GetConnectionSELinuxSecurityContext", "s" },
                        { "UpdateActivationEnvironment", "a{ss}" }, { "ReloadConfig", "" },
                };
                size_t i;

                for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
                        if (strcmp(member, methods[i].member) == 0)
                                break;
                if (i == sizeof(methods) / sizeof(methods[0]))
                        goto unknown;
                if (strcmp(sig, methods[i].sig) != 0) {
                        snprintf(text, sizeof(text), "Call to %s has wrong args (%s, expected %s)",
                                 member, sig, methods[i].sig);
                        return driver_reply_error(call, reply,
                                                  "org.freedesktop.DBus.Error.InvalidArgs", text);
                }
                if (*sig == 's') {
                        r = kdbus_message_read_basic(call, 's', &arg);
                        if (r <= 0)
                                return r < 0 ? r : -EBADMSG;
                }

                if (strcmp(member, "Hello") == 0)
                        return driver_reply_error(call, reply, "org.freedesktop.DBus.Error.Failed",
                                                  "Already handled an Hello message");
                if (strcmp(member, "UpdateActivationEnvironment") == 0 ||
                    strcmp(member, "ReloadConfig") == 0) {
                        uint32_t uid = bus->faked ? bus->fake_uid : (uint32_t)geteuid();

                        if (uid != 0 && uid != (uint32_t)geteuid()) {
                                snprintf(text, sizeof(text),
                                         "Connection \"%s\" (uid=%u) is not allowed to call %s",
                                         bus->unique, uid, member);
                                return driver_reply_error(call, reply,
                                                          "org.freedesktop.DBus.Error.AccessDenied",
                                                          text);
                        }
                        return driver_reply(call, reply, "");
                }
                if (strcmp(member, "GetId") == 0) {
                        char id[33];

                        kdbus_bus_get_bus_id(bus, id);
                        return driver_reply(call, reply, "s", id);
                }
                if (strcmp(member, "ListNames") == 0 || strcmp(member, "ListActivatableNames") == 0) {
                        char **names = NULL;

                        r = member[4] == 'N' ? kdbus_bus_list_names(bus, &names)
                                             : driver_activatable_names(bus, &names);
                        if (r < 0)
                                return driver_reply_error(call, reply, kdbus_errno_to_error_name(r),
                                                          strerror(-r));
                        r = driver_reply_strv(call, reply, names);
                        kdbus_strv_free(names);
                        return r;
                }
                if (strcmp(member, "ListQueuedOwners") == 0) {
                        char **owners = NULL;
                        char *one[2] = { (char *)arg, NULL };
                        struct kdbus_metadata md;

                        if (strcmp(arg, KDBUS_DRIVER_NAME) == 0)
                                return driver_reply_strv(call, reply, one);
                        if (arg[0] == ':') {
                                r = bus_resolve_owner(bus, arg, 0, &md);
                                if (r >= 0) {
                                        kdbus_metadata_free(&md);
                                        return driver_reply_strv(call, reply, one);
                                }
                        } else {
                                r = kdbus_bus_name_valid(arg) ?
                                    driver_queued_owners(bus, arg, &owners) : -ENXIO;
                                if (r >= 0) {
                                        r = driver_reply_strv(call, reply, owners);
                                        kdbus_strv_free(owners);
                                        return r;
                                }
                        }
                        return driver_reply_lookup_error(call, reply, r, "owners", arg);
                }
                if (strcmp(member, "StartServiceByName") == 0) {
                        struct kdbus_metadata md;
                        char **names = NULL;
                        bool activatable;

                        r = driver_activatable_names(bus, &names);
                        if (r < 0)
                                return driver_reply_error(call, reply,
                                                          "org.freedesktop.DBus.Error.Failed", strerror(-r));
                        /* names[0] is org.freedesktop.DBus itself, never started */
                        activatable = false;
                        for (size_t i = 1; names[i]; i++)
                                if (strcmp(names[i], arg) == 0)
                                        activatable = true;
                        kdbus_strv_free(names);
                        if (!activatable) {
                                snprintf(text, sizeof(text),
                                         "The name %s was not provided by any .service files", arg);
                                return driver_reply_error(call, reply,
                                                          "org.freedesktop.DBus.Error.ServiceUnknown", text);
                        }
                        r = bus_resolve_owner(bus, arg, 0, &md);
                        if (r >= 0) {
                                kdbus_metadata_free(&md);
                                return driver_reply(call, reply, "u", (uint32_t)2);
                        }
                        if (r != -ENXIO)
                                return driver_reply_error(call, reply,
                                                          "org.freedesktop.DBus.Error.Failed", strerror(-r));
                        r = bus_driver_activate(bus, arg, KDBUS_BUS_DEFAULT_TIMEOUT_USEC);
                        if (r < 0) {
                                snprintf(text, sizeof(text), "Activation of %s failed: %s", arg,
                                         strerror(-r));
                                return driver_reply_error(call, reply,
                                                          "org.freedesktop.DBus.Error.Spawn.Failed", text);
                        }
                        return driver_reply(call, reply, "u", (uint32_t)1);
                }
                if (strcmp(member, "GetConnectionCredentials") == 0) {
                        struct kdbus_message *m = NULL;
                        struct kdbus_metadata md;

                        if (strcmp(arg, KDBUS_DRIVER_NAME) == 0) {
                                memset(&md, 0, sizeof(md));
                                md.has_creds = md.has_pids = true;
                                md.euid = geteuid();
                                md.pid = (uint64_t)getpid();
                        } else {
                                r = bus_resolve_owner(bus, arg, KDBUS_ATTACH_CREDS | KDBUS_ATTACH_PIDS |
                                                   KDBUS_ATTACH_AUXGROUPS | KDBUS_ATTACH_SECLABEL,
                                                   &md);
                                if (r < 0)
                                        return driver_reply_lookup_error(call, reply, r,
                                                                         "credentials", arg);
                        }
                        r = kdbus_message_new_method_return(&m, call);
                        if (r >= 0)
                                r = driver_credentials(m, &md);
                        kdbus_metadata_free(&md);
                        return bus_driver_seal(m, r, NULL, reply);
                }
                if (strcmp(member, "GetAdtAuditSessionData") == 0 ||
                    strcmp(member, "GetConnectionSELinuxSecurityContext") == 0) {
                        bool adt = member[0] == 'G' && member[3] == 'A';
                        struct kdbus_metadata md;
                        bool selinux = access("/sys/fs/selinux/enforce", F_OK) == 0;

                        if (strcmp(arg, KDBUS_DRIVER_NAME) == 0) {
                                memset(&md, 0, sizeof(md));
                                r = 0;
                        } else {
                                r = bus_resolve_owner(bus, arg, adt ? 0 : KDBUS_ATTACH_SECLABEL, &md);
                        }
                        if (r < 0)
                                return driver_reply_lookup_error(call, reply, r,
                                                                 adt ? "audit session data" :
                                                                 "security context", arg);
                        if (!adt && selinux && md.seclabel) {
                                struct kdbus_message *m = NULL;

                                r = kdbus_message_new_method_return(&m, call);
                                if (r >= 0)
                                        r = kdbus_message_append_array(m, 'y', md.seclabel,
                                                                       strlen(md.seclabel));
                                kdbus_metadata_free(&md);
                                return bus_driver_seal(m, r, NULL, reply);
                        }
                        kdbus_metadata_free(&md);
                        snprintf(text, sizeof(text), "Could not determine %s for '%s'",
                                 adt ? "audit session data" : "security context", arg);
                        return driver_reply_error(call, reply, adt ?
                                                  "org.freedesktop.DBus.Error.AdtAuditDataUnknown" :
                                                  "org.freedesktop.DBus.Error.SELinuxSecurityContextUnknown",
                                                  text);
                }
                if (strcmp(member, "RequestName") == 0 || strcmp(member, "ReleaseName") == 0) {
                        bool req = member[1] == 'e' && member[2] == 'q';
                        uint32_t flags = 0;

                        if (req)
                                kdbus_message_read_basic(call, 'u', &flags);
                        if (!bus_name_ownable(arg)) {
                                snprintf(text, sizeof(text), "Requested bus name \"%s\" is not valid", arg);
                                return driver_reply_error(call, reply,
                                                          "org.freedesktop.DBus.Error.InvalidArgs", text);
                        }
                        r = req ? kdbus_bus_request_name(bus, arg, flags)
                                : kdbus_bus_release_name(bus, arg);
                        if (r == -EPERM) {
                                snprintf(text, sizeof(text),
                                         "Connection \"%s\" is not allowed to own the service \"%s\" due to security policies in the configuration file",
                                         bus->unique, arg);
                                return driver_reply_error(call, reply,
                                                          "org.freedesktop.DBus.Error.AccessDenied", text);
                        }
                        if (r == -E2BIG)
                                return driver_reply_error(call, reply,
                                                          "org.freedesktop.DBus.Error.LimitsExceeded",
                                                          "Too many names");
                        if (r < 0)
                                return driver_reply_error(call, reply,
                                                          "org.freedesktop.DBus.Error.Failed", strerror(-r));
                        return driver_reply(call, reply, "u", (uint32_t)r);
                }
                if (strcmp(member, "GetNameOwner") == 0 || strcmp(member, "NameHasOwner") == 0) {
                        char *owner = NULL;
                        bool has = member[0] == 'N';

                        r = kdbus_bus_get_name_owner(bus, arg, &owner);
                        if (r == -ENXIO && has)
                                return driver_reply(call, reply, "b", 0);
                        if (r < 0)
                                return driver_reply_lookup_error(call, reply, r, "owner", arg);
                        r = has ? driver_reply(call, reply, "b", 1)
                                : driver_reply(call, reply, "s", owner);
                        free(owner);
                        return r;
                }
                if (strcmp(member, "GetConnectionUnixUser") == 0 ||
                    strcmp(member, "GetConnectionUnixProcessID") == 0) {
                        bool user = strcmp(member, "GetConnectionUnixUser") == 0;
                        struct kdbus_metadata md;

                        if (strcmp(arg, KDBUS_DRIVER_NAME) == 0)
                                return driver_reply(call, reply, "u",
                                                    user ? (uint32_t)geteuid() : (uint32_t)getpid());
                        r = bus_resolve_owner(bus, arg,
                                           user ? KDBUS_ATTACH_CREDS : KDBUS_ATTACH_PIDS, &md);
                        if (r < 0)
                                return driver_reply_lookup_error(call, reply, r,
                                                                 user ? "UID" : "PID", arg);
                        if (user ? !md.has_creds || md.euid == 0xFFFFFFFFu
                                 : !md.has_pids || md.pid == 0) {
                                kdbus_metadata_free(&md);
                                snprintf(text, sizeof(text), "Could not determine %s for '%s'",
                                         user ? "UID" : "PID", arg);
                                return driver_reply_error(call, reply, user ?
                                                          "org.freedesktop.DBus.Error.Failed" :
                                                          "org.freedesktop.DBus.Error.UnixProcessIdUnknown",
                                                          text);
                        }
                        r = driver_reply(call, reply, "u", (uint32_t)(user ? md.euid : md.pid));
                        kdbus_metadata_free(&md);
                        return r;
                }
                if (strcmp(member, "AddMatch") == 0) {
                        struct kdbus_match_rule *rule;

                        if (strlen(arg) > KDBUS_MATCH_RULE_MAX_SIZE) {
                                snprintf(text, sizeof(text),
                                         "Match rule text is %zu bytes, maximum is 1024", strlen(arg));
                                return driver_reply_error(call, reply,
                                                          "org.freedesktop.DBus.Error.LimitsExceeded", text);
                        }
                        r = kdbus_match_rule_parse(&rule, arg, false);
                        if (r < 0)
                                return driver_reply_error(call, reply,
                                                          "org.freedesktop.DBus.Error.MatchRuleInvalid",
                                                          "Invalid match rule");
                        r = bus_add_match_rule(bus, NULL, rule, NULL, NULL, true);
                        if (r == -EMFILE)
                                return driver_reply_error(call, reply,
                                                          "org.freedesktop.DBus.Error.LimitsExceeded",
                                                          "Too many matches");
                        if (r < 0)
                                return driver_reply_error(call, reply,
                                                          "org.freedesktop.DBus.Error.Failed", strerror(-r));
                        return driver_reply(call, reply, "");
                }
                if (strcmp(member, "RemoveMatch") == 0) {
                        struct kdbus_match_rule *rule;
                        struct kdbus_slot *found = NULL;

                        r = kdbus_match_rule_parse(&rule, arg, false);
                        if (r < 0)
                                return driver_reply_error(call, reply,
                                                          "org.freedesktop.DBus.Error.MatchRuleInvalid",
                                                          "Invalid match rule");
                        for (struct kdbus_slot *s = bus->slots; s; s = s->next)
                                if (s->type == SLOT_MATCH && s->driver_match && !s->dead &&
                                    kdbus_match_rule_equal(s->rule, rule))
                                        found = s;      /* the most recent one */
                        kdbus_match_rule_free(rule);
                        if (!found)
                                return driver_reply_error(call, reply,
                                                          "org.freedesktop.DBus.Error.MatchRuleNotFound",
                                                          "The given match rule wasn't found and can't be removed");
                        kdbus_slot_unref(found);
                        return driver_reply(call, reply, "");
                }
        }
unknown:
        snprintf(text, sizeof(text), "org.freedesktop.DBus does not understand message %s", member);
        return driver_reply_error(call, reply,
                                  iface && strcmp(iface, KDBUS_DRIVER_NAME) != 0 &&
                                  strcmp(iface, "org.freedesktop.DBus.Peer") != 0 &&
                                  strcmp(iface, "org.freedesktop.DBus.Introspectable") != 0 ?
                                  "org.freedesktop.DBus.Error.UnknownInterface" :
                                  "org.freedesktop.DBus.Error.UnknownMethod", text);
}

