// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libkdbus bus connections: HELLO and the pool, the payload convention of
 * libkdbus(3) on send and receive, calls, replies, signals, matches,
 * names, notification translation, forwarding for kdbus-proxy and the
 * event-loop hooks of libkdbus(3). The local org.freedesktop.DBus driver
 * is driver.c; bus-internal.h has what both share.
 *
 * Pool discipline: every offset the kernel hands out (HELLO, RECV, sync
 * replies, CONN_INFO, BUS_CREATOR_INFO, LIST) is released with FREE
 * exactly once by the function that obtained it, after the data was
 * copied out. Descriptors installed with a message (FDS, memfds) are
 * closed on every path unless a message object took them over.
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
#include "thread-cache.h"

#include "bus-internal.h"

/* a message or notification taken from the pool */
struct incoming {
        bool kernel;
        struct kdbus_message *m;
        struct kdbus_metadata md;
        bool broadcast;
        uint64_t notify_type;
        uint64_t cookie_reply;
        uint64_t id, id_flags;                  /* ID_ADD / ID_REMOVE */
        uint64_t old_id, old_flags, new_id, new_flags;
        char *name;                             /* NAME_* */
        uint64_t slice;                         /* pool offset still to free */
        bool slice_held;
        bool md_items;                          /* md holds items (allocations) */
};

static void incoming_clear(struct kdbus_bus *bus, struct incoming *in)
{
        message_unref_keep(in->m, &bus->names_checked);
        /* most messages carry no metadata: nothing to free (ten free(NULL)s) */
        if (in->md_items)
                kdbus_metadata_free(&in->md);
        free(in->name);
        /* what the next clear would free; the rest is set by bus_take_slice() */
        in->m = NULL;
        in->name = NULL;
        in->md_items = false;
}

/* ------------------------------------------------------------------ */
/* errors */

static const struct {
        int err;
        const char *name;
} error_map[] = {
        { ENOMEM, "org.freedesktop.DBus.Error.NoMemory" },
        { EPERM, "org.freedesktop.DBus.Error.AccessDenied" },
        { EACCES, "org.freedesktop.DBus.Error.AccessDenied" },
        { EINVAL, "org.freedesktop.DBus.Error.InvalidArgs" },
        { ESRCH, "org.freedesktop.DBus.Error.ServiceUnknown" },
        { ENXIO, "org.freedesktop.DBus.Error.ServiceUnknown" },
        { ETIMEDOUT, "org.freedesktop.DBus.Error.NoReply" },
        { EOPNOTSUPP, "org.freedesktop.DBus.Error.NotSupported" },
        { ENOBUFS, "org.freedesktop.DBus.Error.LimitsExceeded" },
        { EMSGSIZE, "org.freedesktop.DBus.Error.LimitsExceeded" },
        { E2BIG, "org.freedesktop.DBus.Error.LimitsExceeded" },
        { EMFILE, "org.freedesktop.DBus.Error.LimitsExceeded" },
        { EMLINK, "org.freedesktop.DBus.Error.LimitsExceeded" },
        { EXFULL, "org.freedesktop.DBus.Error.LimitsExceeded" },
        { EBADMSG, "org.freedesktop.DBus.Error.InconsistentMessage" },
        { ENOTCONN, "org.freedesktop.DBus.Error.Disconnected" },
        { ECONNRESET, "org.freedesktop.DBus.Error.Disconnected" },
        { ENOENT, "org.freedesktop.DBus.Error.FileNotFound" },
        { EEXIST, "org.freedesktop.DBus.Error.FileExists" },
};

static const struct {
        const char *name;
        int err;
} name_map_extra[] = {
        { "org.freedesktop.DBus.Error.NameHasNoOwner", ENXIO },
        { "org.freedesktop.DBus.Error.Timeout", ETIMEDOUT },
        { "org.freedesktop.DBus.Error.TimedOut", ETIMEDOUT },
};

const char *kdbus_errno_to_error_name(int err)
{
        if (err < 0)
                err = -err;
        for (size_t i = 0; i < sizeof(error_map) / sizeof(error_map[0]); i++)
                if (error_map[i].err == err)
                        return error_map[i].name;
        return "org.freedesktop.DBus.Error.Failed";
}

int kdbus_error_name_to_errno(const char *name)
{
        if (!name)
                return EIO;
        for (size_t i = 0; i < sizeof(name_map_extra) / sizeof(name_map_extra[0]); i++)
                if (strcmp(name_map_extra[i].name, name) == 0)
                        return name_map_extra[i].err;
        for (size_t i = 0; i < sizeof(error_map) / sizeof(error_map[0]); i++)
                if (strcmp(error_map[i].name, name) == 0)
                        return error_map[i].err;
        return EIO;
}

void kdbus_error_free(struct kdbus_error *e)
{
        if (!e)
                return;
        free(e->name);
        free(e->message);
        e->name = e->message = NULL;
}

bool kdbus_error_is_set(const struct kdbus_error *e)
{
        return e && e->name;
}

int kdbus_error_set(struct kdbus_error *e, const char *name, const char *message)
{
        int err = kdbus_error_name_to_errno(name);

        if (!e)
                return -err;
        kdbus_error_free(e);
        e->name = strdup(name);
        e->message = message ? strdup(message) : NULL;
        if (!e->name || (message && !e->message)) {
                kdbus_error_free(e);
                return -ENOMEM;
        }
        return -err;
}

int kdbus_error_set_errno(struct kdbus_error *e, int err)
{
        if (err < 0)
                err = -err;
        if (e) {
                kdbus_error_set(e, kdbus_errno_to_error_name(err), strerror(err));
        }
        return -err;
}

int kdbus_error_from_message(struct kdbus_error *e, struct kdbus_message *m)
{
        const char *name = kdbus_message_get_error_name(m);
        const char *text = NULL;
        int r;

        if (kdbus_message_get_type(m) != KDBUS_MESSAGE_ERROR || !name)
                return -EINVAL;
        kdbus_message_rewind(m);
        if (kdbus_message_peek_type(m, NULL, NULL) > 0)
                kdbus_message_read_basic(m, 's', &text);
        r = kdbus_error_set(e, name, text);
        kdbus_message_rewind(m);
        return r;
}

/* the D-Bus error for a failed send (libkdbus(3)) */
static int send_error(struct kdbus_error *e, int err, const char *dest)
{
        char text[512];

        if (err < 0)
                err = -err;
        switch (err) {
        case ESRCH:
        case ENXIO:
                snprintf(text, sizeof(text), "The name %s was not provided by any .service files",
                         dest ? dest : "(null)");
                kdbus_error_set(e, "org.freedesktop.DBus.Error.ServiceUnknown", text);
                break;
        case EADDRNOTAVAIL:
                snprintf(text, sizeof(text), "Name \"%s\" does not exist", dest ? dest : "(null)");
                kdbus_error_set(e, "org.freedesktop.DBus.Error.NameHasNoOwner", text);
                break;
        case EPERM:
                kdbus_error_set(e, "org.freedesktop.DBus.Error.AccessDenied", strerror(err));
                break;
        case ECONNRESET:
                kdbus_error_set(e, "org.freedesktop.DBus.Error.NoReply",
                                "Message recipient disconnected from message bus without replying");
                break;
        case ENOBUFS: case EXFULL: case EMLINK: case EMFILE: case EMSGSIZE: case E2BIG:
                kdbus_error_set(e, "org.freedesktop.DBus.Error.LimitsExceeded", strerror(err));
                break;
        case ECOMM: case EOPNOTSUPP:
                kdbus_error_set(e, "org.freedesktop.DBus.Error.NotSupported", strerror(err));
                break;
        case ENOMEM:
                kdbus_error_set(e, "org.freedesktop.DBus.Error.NoMemory", strerror(err));
                break;
        default:
                kdbus_error_set(e, "org.freedesktop.DBus.Error.Failed", strerror(err));
                break;
        }
        return -err;
}

/* ------------------------------------------------------------------ */
/* small helpers */

void kdbus_strv_free(char **strv)
{
        if (!strv)
                return;
        for (char **s = strv; *s; s++)
                free(*s);
        free(strv);
}

/* append @s, which the vector takes over (NULL: out of memory, left as it was) */
static int bus_strv_take(char ***strv, size_t *n, char *s)
{
        char **v;

        if (!s)
                return -ENOMEM;
        v = realloc(*strv, (*n + 2) * sizeof(*v));
        if (!v) {
                free(s);
                return -ENOMEM;
        }
        *strv = v;
        v[*n] = s;
        v[++*n] = NULL;
        return 0;
}

int bus_strv_push(char ***strv, size_t *n, const char *s)
{
        return bus_strv_take(strv, n, strdup(s));
}

void bus_strv_remove(char **strv, size_t *n, const char *s)
{
        for (size_t i = 0; i < *n; i++) {
                if (strcmp(strv[i], s) == 0) {
                        free(strv[i]);
                        memmove(strv + i, strv + i + 1, (*n - i) * sizeof(*strv));
                        --*n;
                        return;
                }
        }
}

bool bus_strv_contains(char *const *strv, size_t n, const char *s)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(strv[i], s) == 0)
                        return true;
        return false;
}

/* a well-known name a connection may own: not unique, not the driver's */
bool bus_name_ownable(const char *name)
{
        return name[0] != ':' && kdbus_bus_name_valid(name) &&
               strcmp(name, KDBUS_DRIVER_NAME) != 0;
}

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int bus_free_slice(struct kdbus_bus *bus, uint64_t offset)
{
        struct kdbus_cmd_free cmd = { .size = sizeof(cmd), .offset = offset };

        if (offset >= bus->pool_size)
                return 0;
        if (ioctl(bus->fd, KDBUS_CMD_FREE, &cmd) < 0)
                return -errno;
        return 0;
}

static struct kdbus_item *item_put(struct kdbus_item *item, uint64_t type, const void *data,
                                   size_t size)
{
        item->size = ITEM_HEADER_SIZE + size;
        item->type = type;
        if (size)
                memcpy(item->data, data, size);
        return ITEM_NEXT(item);
}

static int sysname_sanitize(const char *in, char *out, size_t outsz)
{
        size_t n = 0;

        for (; *in && n + 1 < outsz && n < 63; in++) {
                unsigned char c = (unsigned char)*in;

                out[n++] = (isalnum(c) || c == '_' || c == '-' || c == '.') ? (char)c : '_';
        }
        out[n] = 0;
        /* '-' and '.' are not allowed first or last */
        if (n && (out[0] == '-' || out[0] == '.'))
                out[0] = '_';
        if (n && (out[n - 1] == '-' || out[n - 1] == '.'))
                out[n - 1] = '_';
        if (!n)
                snprintf(out, outsz, "libkdbus");
        return 0;
}

/* ------------------------------------------------------------------ */
/* metadata */

void kdbus_metadata_free(struct kdbus_metadata *md)
{
        if (!md)
                return;
        free(md->pid_comm);
        free(md->tid_comm);
        free(md->exe);
        free(md->cgroup);
        free(md->seclabel);
        free(md->description);
        free(md->cmdline);
        kdbus_strv_free(md->names);
        free(md->name_flags);
        free(md->auxgroups);
        memset(md, 0, sizeof(*md));
}

static char *item_strdup(const struct kdbus_item *item)
{
        size_t len = item->size - ITEM_HEADER_SIZE;

        return strndup(item->str, strnlen(item->str, len));
}

/* parse one metadata item; unknown items are ignored */
static int metadata_add_item(struct kdbus_metadata *md, const struct kdbus_item *item)
{
        size_t len = item->size - ITEM_HEADER_SIZE;
        char **target = NULL;

        switch (item->type) {
        case KDBUS_ITEM_CREDS:
                if (len < sizeof(struct kdbus_creds))
                        return -EBADMSG;
                md->has_creds = true;
                md->uid = item->creds.uid;
                md->euid = item->creds.euid;
                md->suid = item->creds.suid;
                md->fsuid = item->creds.fsuid;
                md->gid = item->creds.gid;
                md->egid = item->creds.egid;
                md->sgid = item->creds.sgid;
                md->fsgid = item->creds.fsgid;
                return 0;
        case KDBUS_ITEM_PIDS:
                if (len < sizeof(struct kdbus_pids))
                        return -EBADMSG;
                md->has_pids = true;
                md->pid = item->pids.pid;
                md->tid = item->pids.tid;
                md->ppid = item->pids.ppid;
                return 0;
        case KDBUS_ITEM_TIMESTAMP:
                if (len < sizeof(struct kdbus_timestamp))
                        return -EBADMSG;
                md->has_timestamp = true;
                md->seqnum = item->timestamp.seqnum;
                md->monotonic_ns = item->timestamp.monotonic_ns;
                md->realtime_ns = item->timestamp.realtime_ns;
                return 0;
        case KDBUS_ITEM_AUDIT:
                if (len < sizeof(struct kdbus_audit))
                        return -EBADMSG;
                md->has_audit = true;
                md->audit_sessionid = item->audit.sessionid;
                md->audit_loginuid = item->audit.loginuid;
                return 0;
        case KDBUS_ITEM_AUXGROUPS: {
                uint64_t *g = malloc(len + 8);

                if (!g)
                        return -ENOMEM;
                memcpy(g, item->data64, len / 8 * 8);
                free(md->auxgroups);
                md->auxgroups = g;
                md->n_auxgroups = len / 8;
                return 0;
        }
        case KDBUS_ITEM_OWNED_NAME: {
                size_t nlen;
                uint64_t *f;

                if (len <= sizeof(struct kdbus_name))
                        return -EBADMSG;
                nlen = strnlen(item->name.name, len - sizeof(struct kdbus_name));
                f = realloc(md->name_flags, (md->n_names + 1) * sizeof(*f));
                if (!f)
                        return -ENOMEM;
                md->name_flags = f;
                f[md->n_names] = item->name.flags;
                return bus_strv_take(&md->names, &md->n_names, strndup(item->name.name, nlen));
        }
        case KDBUS_ITEM_CMDLINE: {
                char *s = malloc(len + 1);

                if (!s)
                        return -ENOMEM;
                memcpy(s, item->str, len);
                s[len] = 0;
                while (len > 0 && s[len - 1] == 0)
                        len--;
                for (size_t i = 0; i < len; i++)
                        if (!s[i])
                                s[i] = ' ';
                free(md->cmdline);
                md->cmdline = s;
                md->n_cmdline = len;
                return 0;
        }
        case KDBUS_ITEM_PID_COMM:
                target = &md->pid_comm;
                break;
        case KDBUS_ITEM_TID_COMM:
                target = &md->tid_comm;
                break;
        case KDBUS_ITEM_EXE:
                target = &md->exe;
                break;
        case KDBUS_ITEM_CGROUP:
                target = &md->cgroup;
                break;
        case KDBUS_ITEM_SECLABEL:
                target = &md->seclabel;
                break;
        case KDBUS_ITEM_CONN_DESCRIPTION:
                target = &md->description;
                break;
        default:
                return 0;
        }
        free(*target);
        *target = item_strdup(item);
        return *target ? 0 : -ENOMEM;
}

/* validate the item chain in [start, start + size) */
static bool items_valid(const uint8_t *start, uint64_t size)
{
        uint64_t off = 0;

        while (off < size) {
                const struct kdbus_item *item = (const void *)(start + off);

                if (size - off < ITEM_HEADER_SIZE || item->size < ITEM_HEADER_SIZE ||
                    item->size > size - off)
                        return false;
                off += ALIGN8(item->size);
        }
        return true;
}

/* ------------------------------------------------------------------ */
/* connection setup */

int kdbus_bus_new(struct kdbus_bus **ret)
{
        struct kdbus_bus *bus = calloc(1, sizeof(*bus));

        if (!bus)
                return -ENOMEM;
        bus->n_ref = 1;
        bus->fd = -1;
        bus->accept_fd = true;
        bus->pool_size_req = KDBUS_BUS_DEFAULT_POOL_SIZE;
        /*
         * Nothing until something needs it: the kernel collects and
         * renders every item a receiver asks for on every message (NAMES
         * alone is about a tenth of a small library call). The library
         * asks for the sender's well-known names once a match rule on a
         * well-known sender needs them (bus_add_match_rule()); a program
         * asks for more with kdbus_bus_set_attach_recv(), as sd-bus asks
         * with sd_bus_negotiate_creds().
         */
        bus->attach_recv = 0;
        bus->timeout_usec = KDBUS_BUS_DEFAULT_TIMEOUT_USEC;
        *ret = bus;
        return 0;
}

static int percent_unescape(const char *in, size_t len, char **ret)
{
        char *out = malloc(len + 1), *o = out;

        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < len; i++) {
                if (in[i] == '%') {
                        unsigned int v;

                        if (i + 2 >= len + 0 || sscanf(in + i + 1, "%2x", &v) != 1) {
                                free(out);
                                return -EINVAL;
                        }
                        *o++ = (char)v;
                        i += 2;
                } else {
                        *o++ = in[i];
                }
        }
        *o = 0;
        *ret = out;
        return 0;
}

/* the path of the first "kernel:path=" entry of a D-Bus address */
static int address_to_path(const char *address, char **ret)
{
        const char *p = address;

        if (address[0] == '/') {
                *ret = strdup(address);
                return *ret ? 0 : -ENOMEM;
        }
        while (*p) {
                const char *end = strchr(p, ';');
                size_t len = end ? (size_t)(end - p) : strlen(p);

                if (len > 7 && strncmp(p, "kernel:", 7) == 0) {
                        const char *kv = p + 7, *stop = p + len;

                        while (kv < stop) {
                                const char *comma = memchr(kv, ',', (size_t)(stop - kv));
                                size_t kvlen = comma ? (size_t)(comma - kv) : (size_t)(stop - kv);

                                if (kvlen > 5 && strncmp(kv, "path=", 5) == 0)
                                        return percent_unescape(kv + 5, kvlen - 5, ret);
                                kv += kvlen + (comma ? 1 : 0);
                        }
                }
                p += len + (end ? 1 : 0);
        }
        return -EADDRNOTAVAIL;
}

int kdbus_bus_set_address(struct kdbus_bus *bus, const char *address)
{
        char *path;
        int r;

        if (bus->started)
                return -EBUSY;
        r = address_to_path(address, &path);
        if (r < 0)
                return r;
        free(bus->path);
        bus->path = path;
        return 0;
}

int kdbus_bus_set_description(struct kdbus_bus *bus, const char *description)
{
        char buf[64];

        if (bus->started)
                return -EBUSY;
        sysname_sanitize(description, buf, sizeof(buf));
        free(bus->description);
        bus->description = strdup(buf);
        return bus->description ? 0 : -ENOMEM;
}

int kdbus_bus_set_pool_size(struct kdbus_bus *bus, uint64_t size)
{
        uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

        if (bus->started)
                return -EBUSY;
        if (!size || size % page)
                return -EINVAL;
        bus->pool_size_req = size;
        return 0;
}

int kdbus_bus_set_accept_fd(struct kdbus_bus *bus, bool accept)
{
        if (bus->started)
                return -EBUSY;
        bus->accept_fd = accept;
        return 0;
}

int kdbus_bus_set_external_bodies(struct kdbus_bus *bus, bool enable)
{
        bus->external_bodies = enable;
        return 0;
}

/* what the program asked for, plus the names the match rules need */
static int bus_update_attach_recv(struct kdbus_bus *bus)
{
        uint64_t want = bus->attach_user | (bus->names_needed ? KDBUS_ATTACH_NAMES : 0);

        if (bus->started && want != bus->attach_recv) {
                _Alignas(8) uint8_t buf[sizeof(struct kdbus_cmd) + sizeof(struct kdbus_item)];
                struct kdbus_cmd *cmd = (void *)buf;

                memset(buf, 0, sizeof(buf));
                cmd->size = sizeof(struct kdbus_cmd) + ITEM_HEADER_SIZE + 8;
                item_put(cmd->items, KDBUS_ITEM_ATTACH_FLAGS_RECV, &want, 8);
                if (ioctl(bus->fd, KDBUS_CMD_UPDATE, cmd) < 0)
                        return -errno;
        }
        bus->attach_recv = want;
        return 0;
}

int kdbus_bus_set_attach_recv(struct kdbus_bus *bus, uint64_t attach_flags)
{
        uint64_t old = bus->attach_user;
        int r;

        bus->attach_user = attach_flags;
        r = bus_update_attach_recv(bus);
        if (r < 0)
                bus->attach_user = old;
        return r;
}

int kdbus_bus_set_monitor(struct kdbus_bus *bus, bool monitor)
{
        if (bus->started)
                return -EBUSY;
        bus->monitor = monitor;
        return 0;
}

static int install_name_subscriptions(struct kdbus_bus *bus);

int kdbus_bus_set_name_signals(struct kdbus_bus *bus, bool enable)
{
        bool was = bus->name_signals;

        bus->name_signals = enable;
        if (bus->started && enable && !was)
                return install_name_subscriptions(bus);
        return 0;
}

int kdbus_bus_set_default_timeout(struct kdbus_bus *bus, uint64_t usec)
{
        bus->timeout_usec = usec ? usec : KDBUS_BUS_DEFAULT_TIMEOUT_USEC;
        return 0;
}

/* cookie reserved for the NameAcquired/NameLost subscriptions */
#define NAME_SIGNALS_COOKIE     0

/**
 * kdbus_bus_set_faked_identity() - credentials HELLO claims for the peer
 * @bus:        not yet started connection
 * @uid:        uid, euid, suid and fsuid
 * @gid:        gid, egid, sgid and fsgid
 * @pid:        pid (tid and ppid stay unset)
 * @seclabel:   security label or NULL
 *
 * For a proxy serving a client: HELLO carries KDBUS_ITEM_CREDS, _PIDS and
 * _SECLABEL, which the kernel accepts from an owner of the bus only.
 *
 * Return: 0, -EBUSY when started, -ENOMEM.
 */
int kdbus_bus_set_faked_identity(struct kdbus_bus *bus, uint32_t uid, uint32_t gid, uint32_t pid,
                                 const char *seclabel)
{
        char *label = NULL;

        if (bus->started)
                return -EBUSY;
        if (seclabel && (strlen(seclabel) == 0 || strlen(seclabel) >= 4096))
                seclabel = NULL;
        if (seclabel) {
                label = strdup(seclabel);
                if (!label)
                        return -ENOMEM;
        }
        free(bus->fake_seclabel);
        bus->fake_seclabel = label;
        bus->fake_uid = uid;
        bus->fake_gid = gid;
        bus->fake_pid = pid;
        bus->faked = true;
        return 0;
}

/**
 * kdbus_bus_set_forward() - hand every message for the peer to @handler
 * @bus:        connection
 * @handler:    receives unicasts, replies (also the local driver's), and
 *              broadcasts that one of the connection's match rules selects;
 *              NULL ends forwarding
 * @userdata:   for @handler
 *
 * In forwarding mode no handler, object or pending call of the connection is
 * used: the connection stands for a remote D-Bus client (kdbus-proxy).
 * Reply notifications of the kernel become NoReply errors; name changes
 * become NameOwnerChanged (through the rules) and NameAcquired/NameLost.
 *
 * Return: 0.
 */
int kdbus_bus_set_forward(struct kdbus_bus *bus, kdbus_forward_handler_t handler, void *userdata)
{
        bus->forward = handler;
        bus->forward_userdata = userdata;
        return 0;
}

static int match_add_raw(struct kdbus_bus *bus, struct kdbus_cmd_match *cmd)
{
        if (ioctl(bus->fd, KDBUS_CMD_MATCH_ADD, cmd) < 0)
                return -errno;
        return 0;
}

static int install_name_subscriptions(struct kdbus_bus *bus)
{
        static const uint64_t types[] = {
                KDBUS_ITEM_NAME_ADD, KDBUS_ITEM_NAME_CHANGE,
                KDBUS_ITEM_NAME_REMOVE, KDBUS_ITEM_NAME_CHANGE,
        };
        _Alignas(8) uint8_t buf[sizeof(struct kdbus_cmd_match) + sizeof(struct kdbus_item)];
        struct kdbus_cmd_match *cmd = (void *)buf;
        int r;

        if (bus->monitor)
                return 0;
        for (size_t i = 0; i < 4; i++) {
                struct kdbus_item *item = cmd->items;

                memset(buf, 0, sizeof(buf));
                cmd->size = sizeof(struct kdbus_cmd_match) + ITEM_HEADER_SIZE +
                            sizeof(struct kdbus_notify_name_change);
                cmd->cookie = NAME_SIGNALS_COOKIE;
                item->size = ITEM_HEADER_SIZE + sizeof(struct kdbus_notify_name_change);
                item->type = types[i];
                item->name_change.old_id.id = i < 2 ? KDBUS_MATCH_ID_ANY : bus->id;
                item->name_change.new_id.id = i < 2 ? bus->id : KDBUS_MATCH_ID_ANY;
                r = match_add_raw(bus, cmd);
                if (r < 0)
                        return r;
        }
        return 0;
}

/**
 * kdbus_bus_start() - open the bus node, HELLO, map the pool
 * @bus:        connection with its address set
 *
 * Return: 0; -ESOCKTNOSUPPORT for an incompatible kernel ABI or bus,
 * -EOPNOTSUPP for unusable bloom parameters, or the errno of open/HELLO.
 */
int kdbus_bus_start(struct kdbus_bus *bus)
{
        _Alignas(8) uint8_t buf[sizeof(struct kdbus_cmd_hello) + ITEM_HEADER_SIZE + 64 + 8 +
                                3 * ITEM_HEADER_SIZE + sizeof(struct kdbus_creds) +
                                sizeof(struct kdbus_pids) + 4096 + 8];
        struct kdbus_cmd_hello *hello = (void *)buf;
        const struct kdbus_item *item;
        char desc[64];
        int r;

        if (bus->started)
                return -EBUSY;
        if (!bus->path)
                return -EADDRNOTAVAIL;

        bus->fd = open(bus->path, O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (bus->fd < 0)
                return -errno;

        memset(buf, 0, sizeof(buf));
        if (bus->description)
                snprintf(desc, sizeof(desc), "%s", bus->description);
        else
                sysname_sanitize(program_invocation_short_name, desc, sizeof(desc));
        hello->flags = (bus->accept_fd ? KDBUS_HELLO_ACCEPT_FD : 0) |
                       (bus->monitor ? KDBUS_HELLO_MONITOR : 0);
        hello->attach_flags_send = _KDBUS_ATTACH_ANY;
        hello->attach_flags_recv = bus->attach_recv | (bus->monitor ? KDBUS_ATTACH_TIMESTAMP : 0);
        hello->pool_size = bus->pool_size_req;
        {
                struct kdbus_item *it;

                it = item_put(hello->items, KDBUS_ITEM_CONN_DESCRIPTION, desc, strlen(desc) + 1);
                if (bus->faked) {
                        struct kdbus_creds creds = {
                                .uid = bus->fake_uid, .euid = bus->fake_uid,
                                .suid = bus->fake_uid, .fsuid = bus->fake_uid,
                                .gid = bus->fake_gid, .egid = bus->fake_gid,
                                .sgid = bus->fake_gid, .fsgid = bus->fake_gid,
                        };
                        struct kdbus_pids pids = { .pid = bus->fake_pid };

                        it = item_put(it, KDBUS_ITEM_CREDS, &creds, sizeof(creds));
                        it = item_put(it, KDBUS_ITEM_PIDS, &pids, sizeof(pids));
                        if (bus->fake_seclabel)
                                it = item_put(it, KDBUS_ITEM_SECLABEL, bus->fake_seclabel,
                                              strlen(bus->fake_seclabel) + 1);
                }
                hello->size = (uint8_t *)it - buf;
        }

        if (ioctl(bus->fd, KDBUS_CMD_HELLO, hello) < 0) {
                r = errno == ENOTTY ? -ESOCKTNOSUPPORT : -errno;
                goto fail;
        }
        if (hello->bus_flags >> 32) {
                r = -ESOCKTNOSUPPORT;
                goto fail;
        }
        bus->pool_size = hello->pool_size;
        bus->pool = mmap(NULL, bus->pool_size, PROT_READ, MAP_SHARED, bus->fd, 0);
        if (bus->pool == MAP_FAILED) {
                bus->pool = NULL;
                r = -errno;
                goto fail;
        }
        bus->id = hello->id;
        bus->bus_flags = hello->bus_flags;
        memcpy(bus->id128, hello->id128, sizeof(bus->id128));
        snprintf(bus->unique, sizeof(bus->unique), ":1.%llu", (unsigned long long)bus->id);
        bus->unique_len = strlen(bus->unique);

        r = -EOPNOTSUPP;
        if (hello->offset < bus->pool_size && hello->items_size >= ITEM_HEADER_SIZE + 16 &&
            hello->items_size <= bus->pool_size - hello->offset &&
            items_valid(bus->pool + hello->offset, hello->items_size)) {
                for (item = (const void *)(bus->pool + hello->offset);
                     (const uint8_t *)item < bus->pool + hello->offset + hello->items_size;
                     item = ITEM_NEXT(item)) {
                        if (item->type == KDBUS_ITEM_BLOOM_PARAMETER &&
                            item->size >= ITEM_HEADER_SIZE + sizeof(struct kdbus_bloom_parameter)) {
                                bus->bloom_size = item->bloom_parameter.size;
                                bus->bloom_n_hash = item->bloom_parameter.n_hash;
                                r = kdbus_bloom_check_parameter(bus->bloom_size,
                                                                bus->bloom_n_hash) < 0 ?
                                    -EOPNOTSUPP : 0;
                        }
                }
        }
        bus_free_slice(bus, hello->offset);
        if (r < 0)
                goto fail;

        bus->started = true;
        if (bus->name_signals) {
                r = install_name_subscriptions(bus);
                if (r < 0)
                        goto fail;
        }
        return 0;

fail:
        if (bus->pool)
                munmap(bus->pool, bus->pool_size);
        bus->pool = NULL;
        close(bus->fd);
        bus->fd = -1;
        bus->started = false;
        return r;
}

int kdbus_bus_open(struct kdbus_bus **ret, const char *address)
{
        struct kdbus_bus *bus;
        int r;

        r = kdbus_bus_new(&bus);
        if (r < 0)
                return r;
        r = kdbus_bus_set_address(bus, address);
        if (r >= 0)
                r = kdbus_bus_start(bus);
        if (r < 0) {
                kdbus_bus_unref(bus);
                return r;
        }
        *ret = bus;
        return 0;
}

static int open_default(struct kdbus_bus **ret, const char *env, const char *dir)
{
        const char *e = getenv(env);
        char path[256];

        if (e && *e) {
                char *p;

                if (address_to_path(e, &p) >= 0) {
                        int r = kdbus_bus_open(ret, p);

                        free(p);
                        return r;
                }
        }
        snprintf(path, sizeof(path), "%s/%s/bus", KDBUS_BUS_DEFAULT_ROOT, dir);
        return kdbus_bus_open(ret, path);
}

int kdbus_bus_open_system(struct kdbus_bus **ret)
{
        return open_default(ret, "DBUS_SYSTEM_BUS_ADDRESS", "0-system");
}

int kdbus_bus_open_user(struct kdbus_bus **ret)
{
        char dir[32];

        snprintf(dir, sizeof(dir), "%u-user", (unsigned int)getuid());
        return open_default(ret, "DBUS_SESSION_BUS_ADDRESS", dir);
}

static void slot_free(struct kdbus_slot *slot)
{
        kdbus_message_unref(slot->call);
        kdbus_match_rule_free(slot->rule);
        free(slot->path);
        free(slot);
}

struct kdbus_bus *kdbus_bus_ref(struct kdbus_bus *bus)
{
        if (bus)
                bus->n_ref++;
        return bus;
}

struct kdbus_bus *kdbus_bus_unref(struct kdbus_bus *bus)
{
        if (!bus || --bus->n_ref > 0)
                return NULL;
        while (bus->slots) {
                struct kdbus_slot *s = bus->slots;

                bus->slots = s->next;
                slot_free(s);
        }
        while (bus->graveyard) {
                struct kdbus_slot *s = bus->graveyard;

                bus->graveyard = s->next;
                slot_free(s);
        }
        while (bus->local_head) {
                struct local_item *l = bus->local_head;

                bus->local_head = l->next;
                kdbus_message_unref(l->m);
                free(l);
        }
        if (bus->pool)
                munmap(bus->pool, bus->pool_size);
        if (bus->fd >= 0)
                close(bus->fd);
        for (size_t i = 0; i < bus->n_names; i++)
                free(bus->names[i]);
        free(bus->names);
        free(bus->path);
        free(bus->description);
        free(bus->fake_seclabel);
        message_cache_release(&bus->names_checked);
        free(bus);
        return NULL;
}

void kdbus_bus_unrefp(struct kdbus_bus **bus)
{
        kdbus_bus_unref(*bus);
}

int kdbus_bus_byebye(struct kdbus_bus *bus)
{
        struct kdbus_cmd cmd = { .size = sizeof(cmd) };

        if (!bus->started)
                return -ENOTCONN;
        if (ioctl(bus->fd, KDBUS_CMD_BYEBYE, &cmd) < 0)
                return -errno;
        return 0;
}

uint64_t kdbus_bus_get_id(const struct kdbus_bus *bus)
{
        return bus->id;
}

const char *kdbus_bus_get_unique_name(const struct kdbus_bus *bus)
{
        return bus->started ? bus->unique : NULL;
}

void kdbus_bus_get_bus_id(const struct kdbus_bus *bus, char out[33])
{
        for (size_t i = 0; i < 16; i++)
                sprintf(out + 2 * i, "%02x", bus->id128[i]);
}

const char *kdbus_bus_get_path(const struct kdbus_bus *bus)
{
        return bus->path;
}

void kdbus_bus_get_bloom(const struct kdbus_bus *bus, uint64_t *size, uint64_t *n_hash)
{
        *size = bus->bloom_size;
        *n_hash = bus->bloom_n_hash;
}

size_t kdbus_bus_get_owned_names(const struct kdbus_bus *bus, const char *const **names)
{
        *names = (const char *const *)bus->names;
        return bus->n_names;
}

uint64_t kdbus_bus_get_n_invalid(const struct kdbus_bus *bus)
{
        return bus->n_invalid;
}

uint64_t kdbus_bus_get_n_dropped(const struct kdbus_bus *bus)
{
        return bus->n_dropped;
}

int kdbus_bus_get_fd(const struct kdbus_bus *bus)
{
        return bus->fd;
}

int kdbus_bus_get_events(const struct kdbus_bus *bus)
{
        (void)bus;
        return POLLIN;
}

int kdbus_bus_get_timeout(const struct kdbus_bus *bus, uint64_t *usec)
{
        *usec = bus->local_head ? 0 : UINT64_MAX;
        return bus->local_head ? 1 : 0;
}

const struct kdbus_metadata *kdbus_bus_get_current_metadata(const struct kdbus_bus *bus)
{
        return bus->current_md;
}

/* ------------------------------------------------------------------ */
/* sending */

/*
 * Descriptors of a message in index order. message.h has no accessor for
 * them, so walk the body: append assigns indexes in value order, which is
 * the order in which the walk finds the 'h' values.
 */
static int collect_fds_walk(struct kdbus_message *m, int *fds, size_t *n, size_t max)
{
        for (;;) {
                const char *contents = NULL;
                char type;
                int r;

                r = kdbus_message_peek_type(m, &type, &contents);
                if (r <= 0)
                        return r;
                if (type == 'h') {
                        int fd;

                        r = kdbus_message_read_basic(m, 'h', &fd);
                        if (r < 0)
                                return r;
                        if (*n < max)
                                fds[*n] = fd;
                        ++*n;
                } else if (type == 'a' || type == 'v' || type == '(' || type == '{' ||
                           type == 'r' || type == 'e') {
                        char ctype = type == 'r' ? '(' : type == 'e' ? '{' : type;

                        if (!contents || !strchr(contents, 'h')) {
                                r = kdbus_message_skip(m, NULL);
                                if (r < 0)
                                        return r;
                                continue;
                        }
                        r = kdbus_message_enter_container(m, ctype, contents);
                        if (r < 0)
                                return r;
                        r = collect_fds_walk(m, fds, n, max);
                        if (r < 0)
                                return r;
                        r = kdbus_message_exit_container(m);
                        if (r < 0)
                                return r;
                } else {
                        r = kdbus_message_skip(m, NULL);
                        if (r < 0)
                                return r;
                }
        }
}

static int message_fds(struct kdbus_message *m, int **ret, size_t *n_ret)
{
        uint32_t n = kdbus_message_get_unix_fds(m);
        size_t got = 0;
        int *fds;
        int r;

        *ret = NULL;
        *n_ret = 0;
        if (!n)
                return 0;
        if (n > MAX_FDS)
                return -EMFILE;
        fds = calloc(n, sizeof(*fds));
        if (!fds)
                return -ENOMEM;
        {
                const int *attached;

                if (kdbus_message_get_fds(m, &attached) == n) {
                        memcpy(fds, attached, n * sizeof(*fds));
                        *ret = fds;
                        *n_ret = n;
                        return 0;
                }
        }
        kdbus_message_rewind(m);
        r = collect_fds_walk(m, fds, &got, n);
        kdbus_message_rewind(m);
        if (r < 0 || got != n) {
                free(fds);
                return r < 0 ? r : -EBADF;
        }
        *ret = fds;
        *n_ret = n;
        return 0;
}

/**
 * kdbus_bus_signal_bloom() - the bloom filter of a broadcast signal
 * @m:          sealed signal
 * @size:       bloom size in bytes
 * @n_hash:     number of hash functions
 * @filter:     @size bytes, overwritten
 *
 * Return: 0 or -EINVAL for bad parameters.
 */
int kdbus_bus_signal_bloom(struct kdbus_message *m, uint64_t size, uint64_t n_hash,
                           uint64_t *filter)
{
        static const char *const words[] = { "", "method_call", "method_return", "error", "signal" };
        struct kdbus_bloom bloom;
        uint8_t type = kdbus_message_get_type(m);
        int r;

        r = kdbus_bloom_init(&bloom, filter, size, n_hash);
        if (r < 0)
                return r;
        kdbus_bloom_clear(&bloom);
        if (type >= 1 && type <= 4)
                kdbus_bloom_add_message_type(&bloom, words[type]);
        if (kdbus_message_get_interface(m))
                kdbus_bloom_add_interface(&bloom, kdbus_message_get_interface(m));
        if (kdbus_message_get_member(m))
                kdbus_bloom_add_member(&bloom, kdbus_message_get_member(m));
        if (kdbus_message_get_path(m))
                kdbus_bloom_add_path(&bloom, kdbus_message_get_path(m));

        kdbus_message_rewind(m);
        for (unsigned int i = 0; i <= KDBUS_BLOOM_MAX_ARG; i++) {
                const char *contents = NULL, *s;
                char t;

                if (kdbus_message_peek_type(m, &t, &contents) <= 0)
                        break;
                if (t == 's' || t == 'o' || t == 'g') {
                        if (kdbus_message_read_basic(m, t, &s) <= 0)
                                break;
                        kdbus_bloom_add_arg(&bloom, i, s);
                } else if (t == 'a' && contents && strlen(contents) == 1 &&
                           strchr("sog", contents[0])) {
                        if (kdbus_message_enter_container(m, 'a', contents) <= 0)
                                break;
                        while (kdbus_message_read_basic(m, contents[0], &s) > 0)
                                kdbus_bloom_add_arg_has(&bloom, i, s);
                        kdbus_message_exit_container(m);
                } else {
                        break;
                }
        }
        kdbus_message_rewind(m);
        return 0;
}

static int memfd_for(const void *data, size_t size)
{
        const uint8_t *p = data;
        size_t done = 0;
        int fd;

        fd = memfd_create("kdbus-payload", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return -errno;
        while (done < size) {
                ssize_t n = write(fd, p + done, size - done);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        goto fail;
                }
                done += (size_t)n;
        }
        if (ftruncate(fd, (off_t)size) < 0 ||
            fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
                goto fail;
        return fd;
fail:
        {
                int r = -errno;

                close(fd);
                return r;
        }
}

/*
 * The absolute deadline of a call that expects a reply, 0 for everything
 * else: replies and signals have no reply window, and the clock read is a
 * system call where no vDSO clock exists (an HPET clocksource).
 */
static uint64_t reply_deadline(struct kdbus_bus *bus, struct kdbus_message *m, uint64_t timeout_usec)
{
        if (kdbus_message_get_type(m) != KDBUS_MESSAGE_METHOD_CALL ||
            (kdbus_message_get_flags(m) & KDBUS_MESSAGE_NO_REPLY_EXPECTED))
                return 0;
        return now_ns() + (timeout_usec ? timeout_usec : bus->timeout_usec) * 1000ULL;
}

static int bus_seal(struct kdbus_bus *bus, struct kdbus_message *m)
{
        if (kdbus_message_is_sealed(m))
                return 0;
        if (++bus->serial == 0)
                bus->serial = 1;
        return message_seal_own(m, bus->serial, bus->unique, bus->unique_len);
}

static bool is_driver_call(struct kdbus_message *m)
{
        const char *dest = kdbus_message_get_destination(m);

        /* the destination's length is kept: most are not the driver's */
        return kdbus_message_get_type(m) == KDBUS_MESSAGE_METHOD_CALL &&
               (!dest || (message_field_len(m, KDBUS_FIELD_DESTINATION) == strlen(KDBUS_DRIVER_NAME) &&
                          memcmp(dest, KDBUS_DRIVER_NAME, strlen(KDBUS_DRIVER_NAME)) == 0));
}

/*
 * KDBUS_CMD_SEND of a sealed message. @deadline_ns is used for calls that
 * expect a reply; @reply receives the sync reply slice (@sync).
 */
/* resends to a name whose owner is disconnecting, 2 ms apart (bus_send_raw) */
#define KDBUS_SEND_HANDOVER_RETRIES 50

static int bus_send_raw(struct kdbus_bus *bus, struct kdbus_message *m, uint64_t deadline_ns,
                        bool sync, struct kdbus_msg_info *reply)
{
        _Alignas(8) struct kdbus_cmd_send cmd;
        _Alignas(8) uint8_t small_msg[512];
        const uint8_t *data;
        const char *dest = kdbus_message_get_destination(m);
        uint8_t type = kdbus_message_get_type(m);
        uint8_t mflags = kdbus_message_get_flags(m);
        uint64_t dst_id = KDBUS_DST_ID_NAME, size, hlen, body;
        uint32_t fields_len, reply_serial = 0;
        bool broadcast = false, use_memfd;
        int *fds = NULL, memfd = -1, ext_fd = -1;
        const void *ext_body;
        size_t ext_size = 0;
        size_t n_fds = 0, msize, dest_len = 0;
        struct kdbus_msg *msg = NULL;
        struct kdbus_item *item;
        int r;

        if (!bus->started)
                return -ENOTCONN;
        if (bus->monitor)
                return -EOPNOTSUPP;
        if (!kdbus_message_is_sealed(m) || kdbus_message_get_endian(m) != 'l')
                return -EINVAL;
        r = kdbus_message_get_data(m, (const void **)&data, &msize);
        if (r < 0)
                return r;
        size = msize;
        memcpy(&fields_len, data + 12, 4);
        hlen = ALIGN8(16 + (uint64_t)fields_len);
        if (hlen > size)
                return -EINVAL;
        body = size - hlen;
        /* a body kept in its memfd (kdbus_message_parse_external) goes as it is */
        if (kdbus_message_get_external_body(m, &ext_body, &ext_size, &ext_fd) >= 0)
                body = ext_size;

        if (!dest) {
                if (type == KDBUS_MESSAGE_SIGNAL)
                        broadcast = true;
                else
                        return -EINVAL;
                dst_id = KDBUS_DST_ID_BROADCAST;
        } else if (dest[0] == ':') {
                size_t len = message_field_len(m, KDBUS_FIELD_DESTINATION);

                /* a reply goes to the last sender, whose name is kept with its id */
                if (bus->last_src_id && len == bus->last_src_len && !memcmp(dest, bus->last_src, len))
                        dst_id = bus->last_src_id;
                else if (!kdbus_unique_name_parse(dest, &dst_id))
                        return -ENXIO;
        }
        if (type == KDBUS_MESSAGE_METHOD_RETURN || type == KDBUS_MESSAGE_ERROR) {
                if (kdbus_message_get_reply_serial(m, &reply_serial) < 0)
                        return -EINVAL;
        }

        r = message_fds(m, &fds, &n_fds);
        if (r < 0)
                return r;
        if (broadcast && n_fds) {
                r = -ENOTUNIQ;
                goto out;
        }

        use_memfd = body > 0 && ((!broadcast && body >= KDBUS_BUS_MEMFD_THRESHOLD) ||
                                 size > MAX_PAYLOAD_VEC || ext_fd >= 0);
        if (use_memfd && ext_fd < 0) {
                memfd = memfd_for(data + hlen, body);
                if (memfd < 0) {
                        r = memfd;
                        goto out;
                }
        }

        {
                size_t isize = sizeof(*msg);

                if (dst_id == KDBUS_DST_ID_NAME) {
                        dest_len = message_field_len(m, KDBUS_FIELD_DESTINATION);
                        isize += ALIGN8(ITEM_HEADER_SIZE + dest_len + 1);
                }
                isize += ALIGN8(ITEM_HEADER_SIZE + sizeof(struct kdbus_vec));
                if (use_memfd)
                        isize += ALIGN8(ITEM_HEADER_SIZE + sizeof(struct kdbus_memfd));
                if (broadcast)
                        isize += ALIGN8(ITEM_HEADER_SIZE + 8 + bus->bloom_size);
                if (n_fds)
                        isize += ALIGN8(ITEM_HEADER_SIZE + n_fds * sizeof(int));
                /* a small message's command lives on the stack */
                if (ALIGN8(isize) <= sizeof(small_msg))
                        msg = (struct kdbus_msg *)small_msg;
                else
                        msg = aligned_alloc(8, ALIGN8(isize));
                if (!msg) {
                        r = -ENOMEM;
                        goto out;
                }
                /* the usual items (destination name, vector) are written whole below */
                if (use_memfd || broadcast || n_fds)
                        memset(msg, 0, ALIGN8(isize));
                else
                        message_zero(msg, sizeof(*msg));
                msg->size = isize;
        }

        msg->payload_type = KDBUS_PAYLOAD_DBUS;
        msg->dst_id = dst_id;
        msg->cookie = kdbus_message_get_serial(m);
        if (mflags & KDBUS_MESSAGE_NO_AUTO_START)
                msg->flags |= KDBUS_MSG_NO_AUTO_START;
        if (type == KDBUS_MESSAGE_METHOD_CALL && !(mflags & KDBUS_MESSAGE_NO_REPLY_EXPECTED)) {
                msg->flags |= KDBUS_MSG_EXPECT_REPLY;
                msg->timeout_ns = deadline_ns;
        } else if (type == KDBUS_MESSAGE_METHOD_RETURN || type == KDBUS_MESSAGE_ERROR) {
                msg->cookie_reply = reply_serial;
        }
        if (broadcast)
                msg->flags |= KDBUS_MSG_SIGNAL;
        if (sync && !(msg->flags & KDBUS_MSG_EXPECT_REPLY)) {
                r = -EINVAL;
                goto out;
        }

        item = msg->items;
        if (dst_id == KDBUS_DST_ID_NAME) {
                /* the padding after the name zeroed, as the rest of the command */
                memset((uint8_t *)item + ALIGN8(ITEM_HEADER_SIZE + dest_len + 1) - 8, 0, 8);
                item = item_put(item, KDBUS_ITEM_DST_NAME, dest, dest_len + 1);
        }
        item->size = ITEM_HEADER_SIZE + sizeof(struct kdbus_vec);
        item->type = KDBUS_ITEM_PAYLOAD_VEC;
        item->vec.address = (uintptr_t)data;
        item->vec.size = use_memfd ? hlen : size;
        item = ITEM_NEXT(item);
        if (use_memfd) {
                item->size = ITEM_HEADER_SIZE + sizeof(struct kdbus_memfd);
                item->type = KDBUS_ITEM_PAYLOAD_MEMFD;
                item->memfd.start = 0;
                item->memfd.size = body;
                item->memfd.fd = ext_fd >= 0 ? ext_fd : memfd;
                item = ITEM_NEXT(item);
        }
        if (broadcast) {
                item->size = ITEM_HEADER_SIZE + 8 + bus->bloom_size;
                item->type = KDBUS_ITEM_BLOOM_FILTER;
                item->bloom_filter.generation = 0;
                r = kdbus_bus_signal_bloom(m, bus->bloom_size, bus->bloom_n_hash,
                                           (uint64_t *)item->bloom_filter.data);
                if (r < 0)
                        goto out;
                item = ITEM_NEXT(item);
        }
        if (n_fds)
                item_put(item, KDBUS_ITEM_FDS, fds, n_fds * sizeof(int));

        memset(&cmd, 0, sizeof(cmd));
        cmd.size = sizeof(cmd);
        cmd.flags = sync ? KDBUS_SEND_SYNC_REPLY : 0;
        cmd.msg_address = (uintptr_t)msg;
        for (unsigned int attempt = 0; ioctl(bus->fd, KDBUS_CMD_SEND, &cmd) < 0; attempt++) {
                static const struct timespec pause = { 0, 2000000 };

                r = -errno;
                /*
                 * ECONNRESET for a well-known name: its owner was found but
                 * is disconnecting, and the kernel refused before queuing
                 * anything. A moment later the name belongs to the next
                 * queued owner or its activator, so resending (bounded)
                 * keeps a call made during a service's exit from failing.
                 */
                if (r != -ECONNRESET || dst_id != KDBUS_DST_ID_NAME ||
                    attempt >= KDBUS_SEND_HANDOVER_RETRIES)
                        goto out;
                nanosleep(&pause, NULL);
        }
        if (reply)
                *reply = cmd.reply;
        r = 0;
out:
        if (msg != (struct kdbus_msg *)small_msg)
                free(msg);
        free(fds);
        if (memfd >= 0)
                close(memfd);
        return r;
}


static int local_enqueue(struct kdbus_bus *bus, struct kdbus_message *m, bool from_driver)
{
        struct local_item *l = calloc(1, sizeof(*l));

        if (!l)
                return -ENOMEM;
        l->m = kdbus_message_ref(m);
        l->from_driver = from_driver;
        if (bus->local_tail)
                bus->local_tail->next = l;
        else
                bus->local_head = l;
        bus->local_tail = l;
        return 0;
}

/**
 * kdbus_bus_send() - send a message
 * @bus:        connection
 * @m:          message; sealed here when it is not yet
 * @serial:     its serial (may be NULL)
 *
 * Calls to org.freedesktop.DBus are answered locally (the answer arrives
 * through kdbus_bus_process()). A reply nobody waits for any more
 * (EBADSLT) is dropped silently.
 *
 * Return: 0 or the negative errno of the send (libkdbus(3)).
 */
int kdbus_bus_send(struct kdbus_bus *bus, struct kdbus_message *m, uint32_t *serial)
{
        uint8_t type;
        int r;

        if (!bus->started)
                return -ENOTCONN;
        r = bus_seal(bus, m);
        if (r < 0)
                return r;
        if (serial)
                *serial = kdbus_message_get_serial(m);
        type = kdbus_message_get_type(m);
        if (is_driver_call(m)) {
                struct kdbus_message *reply = NULL;

                r = bus_driver_call(bus, m, &reply);
                if (r >= 0 && reply &&
                    !(kdbus_message_get_flags(m) & KDBUS_MESSAGE_NO_REPLY_EXPECTED))
                        r = local_enqueue(bus, reply, true);
                kdbus_message_unref(reply);
                return r < 0 ? r : 0;
        }
        {
                const char *dest = kdbus_message_get_destination(m);

                if (dest && dest[0] != ':' && strcmp(dest, KDBUS_DRIVER_NAME) == 0)
                        return 0;       /* other types to the driver are dropped */
        }
        r = bus_send_raw(bus, m, reply_deadline(bus, m, bus->timeout_usec), false, NULL);
        if (r == -EBADSLT && (type == KDBUS_MESSAGE_METHOD_RETURN || type == KDBUS_MESSAGE_ERROR))
                return 0;
        return r;
}

static int bus_recv_one(struct kdbus_bus *bus);

static int local_error_reply(struct kdbus_bus *bus, struct kdbus_message *call, const char *name,
                             const char *text)
{
        struct kdbus_message *e = NULL;
        int r;

        r = kdbus_message_new_error(&e, call, name, text);
        r = bus_driver_seal(e, r, NULL, &e);
        if (r < 0)
                return r;
        r = local_enqueue(bus, e, true);
        kdbus_message_unref(e);
        return r;
}

/**
 * kdbus_bus_forward_send() - send a message a proxied client wrote
 * @bus:        started connection in forwarding mode
 * @m:          sealed, validated message with its descriptors attached;
 *              SENDER is set to the connection's unique name here
 *
 * Calls to the driver are answered locally; a failed send of a method call
 * that expects a reply is answered with the D-Bus error of the failure
 * (libkdbus(3)); both arrive through the forward handler.
 *
 * Return: 0, or the negative errno of a failed send that nobody is told
 * about (signals, replies, NO_REPLY_EXPECTED calls), -ECONNRESET when the
 * connection is gone.
 */
int kdbus_bus_forward_send(struct kdbus_bus *bus, struct kdbus_message *m)
{
        uint8_t type = kdbus_message_get_type(m);
        bool expect = type == KDBUS_MESSAGE_METHOD_CALL &&
                      !(kdbus_message_get_flags(m) & KDBUS_MESSAGE_NO_REPLY_EXPECTED);
        const char *dest;
        int r;

        if (!bus->started)
                return -ENOTCONN;
        if (!kdbus_message_is_sealed(m))
                return -EINVAL;
        r = kdbus_message_set_sender(m, bus->unique);
        if (r < 0)
                return r;
        if (is_driver_call(m)) {
                struct kdbus_message *reply = NULL;

                r = bus_driver_call(bus, m, &reply);
                if (r >= 0 && reply && expect) {
                        const char *member = kdbus_message_get_member(m);

                        /*
                         * dbus-daemon's order: the name signals the
                         * request caused (the kernel queued them before
                         * the ioctl returned), then the reply
                         */
                        if (strcmp(member, "RequestName") == 0 ||
                            strcmp(member, "ReleaseName") == 0)
                                while (bus_recv_one(bus) > 0)
                                        ;
                        r = local_enqueue(bus, reply, true);
                }
                kdbus_message_unref(reply);
                return r < 0 ? r : 0;
        }
        dest = kdbus_message_get_destination(m);
        if (dest && strcmp(dest, KDBUS_DRIVER_NAME) == 0)
                return 0;
        r = bus_send_raw(bus, m, reply_deadline(bus, m, bus->timeout_usec), false, NULL);
        if (r >= 0)
                return 0;
        if (r == -EBADSLT && (type == KDBUS_MESSAGE_METHOD_RETURN || type == KDBUS_MESSAGE_ERROR))
                return 0;
        if (expect) {
                struct kdbus_error e = KDBUS_ERROR_NULL;
                int q;

                send_error(&e, r, dest);
                q = local_error_reply(bus, m, e.name, e.message);
                kdbus_error_free(&e);
                return q < 0 ? q : 0;
        }
        return r;
}

/* ------------------------------------------------------------------ */
/* receiving */

struct part {
        bool memfd;
        const uint8_t *ptr;
        int fd;
        uint64_t start, size;
};

static void close_fds(int *fds, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (fds[i] >= 0)
                        close(fds[i]);
}

static int reassemble(const struct part *parts, size_t n_parts, uint8_t **ret, size_t *ret_size)
{
        uint64_t total = 0;
        uint8_t *buf, *p;

        for (size_t i = 0; i < n_parts; i++) {
                if (parts[i].size > (1ULL << 28) || total + parts[i].size > (1ULL << 28))
                        return -EMSGSIZE;
                total += parts[i].size;
        }
        buf = thread_cache_get(total, NULL);
        if (!buf)
                return -ENOMEM;
        p = buf;
        for (size_t i = 0; i < n_parts; i++) {
                if (!parts[i].memfd) {
                        memcpy(p, parts[i].ptr, parts[i].size);
                } else {
                        uint64_t done = 0;

                        while (done < parts[i].size) {
                                ssize_t n = pread(parts[i].fd, p + done, parts[i].size - done,
                                                  (off_t)(parts[i].start + done));

                                if (n < 0 && errno == EINTR)
                                        continue;
                                if (n <= 0) {
                                        free(buf);
                                        return -EBADMSG;
                                }
                                done += (uint64_t)n;
                        }
                }
                p += parts[i].size;
        }
        *ret = buf;
        *ret_size = total;
        return 0;
}

/* the consistency checks of libkdbus(3) */
static bool dbus_consistent(const struct kdbus_msg *msg, struct kdbus_message *m)
{
        uint8_t type = kdbus_message_get_type(m);
        uint8_t flags = kdbus_message_get_flags(m);
        bool expect = msg->flags & KDBUS_MSG_EXPECT_REPLY;
        uint32_t rs;

        if (msg->cookie != kdbus_message_get_serial(m))
                return false;
        if (!!(msg->flags & KDBUS_MSG_NO_AUTO_START) != !!(flags & KDBUS_MESSAGE_NO_AUTO_START))
                return false;
        if (msg->dst_id == KDBUS_DST_ID_BROADCAST && type != KDBUS_MESSAGE_SIGNAL)
                return false;
        switch (type) {
        case KDBUS_MESSAGE_METHOD_CALL:
                return expect == !(flags & KDBUS_MESSAGE_NO_REPLY_EXPECTED);
        case KDBUS_MESSAGE_METHOD_RETURN:
        case KDBUS_MESSAGE_ERROR:
                return !expect && kdbus_message_get_reply_serial(m, &rs) >= 0 &&
                       rs == msg->cookie_reply;
        case KDBUS_MESSAGE_SIGNAL:
                return !expect;
        default:
                return false;   /* unknown types are dropped */
        }
}

/*
 * ":1.<id>" into @buf (at least 24 bytes), returning its length: snprintf
 * costs more than the rest of the check
 */
static size_t unique_name_format(char *buf, uint64_t id)
{
        char digits[20];
        size_t n = 0;

        do {
                digits[n++] = (char)('0' + id % 10);
                id /= 10;
        } while (id);
        memcpy(buf, ":1.", 3);
        for (size_t i = 0; i < n; i++)
                buf[3 + i] = digits[n - 1 - i];
        buf[3 + n] = 0;
        return 3 + n;
}

/*
 * Take the message in the slice [offset, offset + slice_size) out of the
 * pool into @in, validating everything; descriptors are closed unless the
 * message took them over. The slice is freed here, except that of a valid
 * message with @defer_free: then @in->slice is the caller's to free.
 */
static int bus_take_slice(struct kdbus_bus *bus, uint64_t offset, uint64_t slice_size,
                          struct incoming *in, bool defer_free)
{
        const struct kdbus_msg *msg;
        const struct kdbus_item *item;
        struct part parts[MAX_PARTS];
        size_t n_parts = 0, n_fds = 0, n_memfds = 0;
        int *fds = NULL, memfds[MAX_PARTS];
        const char *dst_name = NULL;
        size_t dst_name_len = 0;
        char dest[32];                  /* a unique name by the kernel's id */
        struct message_known_names known = { { NULL, NULL }, { 0, 0 } };
        uint8_t *bytes = NULL;
        size_t n_bytes = 0;
        bool valid = false;
        int r = -EBADMSG;

        message_zero(in, sizeof(*in));
        if (offset >= bus->pool_size || slice_size > bus->pool_size - offset ||
            slice_size < sizeof(struct kdbus_msg))
                goto out;
        msg = (const void *)(bus->pool + offset);
        if (msg->size < sizeof(*msg) || msg->size > slice_size)
                goto out;
        if (!items_valid((const uint8_t *)msg->items, msg->size - sizeof(*msg)))
                goto out;

        in->md.src_id = msg->src_id;
        in->md.dst_id = msg->dst_id;
        in->broadcast = msg->dst_id == KDBUS_DST_ID_BROADCAST;
        in->cookie_reply = msg->cookie_reply;

        /* first pass: collect every descriptor so that all get closed */
        for (item = msg->items; (const uint8_t *)item < (const uint8_t *)msg + msg->size;
             item = ITEM_NEXT(item)) {
                size_t len = item->size - ITEM_HEADER_SIZE;

                if (item->type == KDBUS_ITEM_FDS && !fds) {
                        n_fds = len / sizeof(int);
                        fds = malloc((n_fds ? n_fds : 1) * sizeof(int));
                        if (!fds) {
                                r = -ENOMEM;
                                goto out;
                        }
                        memcpy(fds, item->fds, n_fds * sizeof(int));
                } else if (item->type == KDBUS_ITEM_PAYLOAD_MEMFD &&
                           len >= sizeof(struct kdbus_memfd) && n_memfds < MAX_PARTS) {
                        memfds[n_memfds++] = item->memfd.fd;
                }
        }

        for (item = msg->items; (const uint8_t *)item < (const uint8_t *)msg + msg->size;
             item = ITEM_NEXT(item)) {
                size_t len = item->size - ITEM_HEADER_SIZE;

                switch (item->type) {
                case KDBUS_ITEM_PAYLOAD_OFF:
                        if (len < sizeof(struct kdbus_vec) || item->vec.offset == ~0ULL ||
                            item->vec.offset > slice_size ||
                            item->vec.size > slice_size - item->vec.offset ||
                            n_parts >= MAX_PARTS)
                                goto out;
                        parts[n_parts++] = (struct part){
                                .ptr = (const uint8_t *)msg + item->vec.offset,
                                .size = item->vec.size,
                        };
                        break;
                case KDBUS_ITEM_PAYLOAD_MEMFD:
                        if (len < sizeof(struct kdbus_memfd) || item->memfd.fd < 0 ||
                            n_parts >= MAX_PARTS)
                                goto out;
                        parts[n_parts++] = (struct part){
                                .memfd = true,
                                .fd = item->memfd.fd,
                                .start = item->memfd.start,
                                .size = item->memfd.size,
                        };
                        break;
                case KDBUS_ITEM_DST_NAME:
                        if (!len)
                                goto out;
                        dst_name_len = strnlen(item->str, len);
                        if (dst_name_len == len)
                                goto out;
                        dst_name = item->str;
                        break;
                case KDBUS_ITEM_ID_ADD:
                case KDBUS_ITEM_ID_REMOVE:
                        if (len < sizeof(struct kdbus_notify_id_change) || in->notify_type)
                                goto out;
                        in->notify_type = item->type;
                        in->id = item->id_change.id;
                        in->id_flags = item->id_change.flags;
                        break;
                case KDBUS_ITEM_NAME_ADD:
                case KDBUS_ITEM_NAME_REMOVE:
                case KDBUS_ITEM_NAME_CHANGE: {
                        size_t nlen;

                        if (len <= sizeof(struct kdbus_notify_name_change) || in->notify_type)
                                goto out;
                        nlen = len - sizeof(struct kdbus_notify_name_change);
                        if (strnlen(item->name_change.name, nlen) == nlen)
                                goto out;
                        in->notify_type = item->type;
                        in->old_id = item->name_change.old_id.id;
                        in->old_flags = item->name_change.old_id.flags;
                        in->new_id = item->name_change.new_id.id;
                        in->new_flags = item->name_change.new_id.flags;
                        in->name = strdup(item->name_change.name);
                        if (!in->name) {
                                r = -ENOMEM;
                                goto out;
                        }
                        break;
                }
                case KDBUS_ITEM_REPLY_TIMEOUT:
                case KDBUS_ITEM_REPLY_DEAD:
                        if (in->notify_type)
                                goto out;
                        in->notify_type = item->type;
                        break;
                default:
                        if (item->type >= _KDBUS_ITEM_ATTACH_BASE &&
                            item->type < _KDBUS_ITEM_POLICY_BASE) {
                                in->md_items = true;
                                r = metadata_add_item(&in->md, item);
                                if (r == -ENOMEM)
                                        goto out;
                                r = -EBADMSG;
                        }
                        break;
                }
        }

        if (msg->payload_type == KDBUS_PAYLOAD_KERNEL) {
                if (msg->src_id != KDBUS_SRC_ID_KERNEL || !in->notify_type || n_parts)
                        goto out;
                in->kernel = true;
                valid = true;
                r = 0;
                goto out;
        }
        if (msg->payload_type != KDBUS_PAYLOAD_DBUS || msg->src_id == 0 || in->notify_type ||
            n_parts == 0 || parts[0].memfd || parts[0].size < 16)
                goto out;
        {
                uint32_t flen;
                uint64_t hlen;

                if (parts[0].ptr[0] != 'l' || parts[0].ptr[3] != 1)
                        goto out;
                memcpy(&flen, parts[0].ptr + 12, 4);
                hlen = ALIGN8(16 + (uint64_t)flen);
                if (hlen > parts[0].size)
                        goto out;
        }
        /*
         * The sender's unique name, and the destination's when no name was
         * asked for: the header normalised to them below, and fields of
         * the same bytes need no check of their own while parsed.
         */
        if (msg->src_id != bus->last_src_id) {
                bus->last_src_len = unique_name_format(bus->last_src, msg->src_id);
                bus->last_src_id = msg->src_id;
        }
        known.unique_len[0] = bus->last_src_len;
        known.unique[0] = bus->last_src;
        if (!dst_name && !in->broadcast) {
                /* nearly always to us: our own name since HELLO */
                if (msg->dst_id == bus->id) {
                        known.unique_len[1] = bus->unique_len;
                        known.unique[1] = bus->unique;
                } else {
                        known.unique_len[1] = unique_name_format(dest, msg->dst_id);
                        known.unique[1] = dest;
                }
        }
        if (bus->external_bodies && !in->broadcast && n_parts == 2 && parts[1].memfd &&
            parts[1].size && kdbus_message_peek_size(parts[0].ptr, parts[0].size, &n_bytes) >= 0 &&
            n_bytes == parts[0].size + parts[1].size) {
                /* header + memfd body: the body stays in the memfd, never copied */
                int fd = fcntl(parts[1].fd, F_DUPFD_CLOEXEC, 3);

                n_bytes = 0;
                r = fd < 0 ? -errno :
                    kdbus_message_parse_external(&in->m, parts[0].ptr, parts[0].size, fd,
                                                 parts[1].start, parts[1].size);
                if (r < 0 && fd >= 0)
                        close(fd);
        } else if (n_parts == 1) {
                r = message_parse_received(&in->m, parts[0].ptr, parts[0].size,
                                           &bus->names_checked, &known, NULL);
        } else {
                r = reassemble(parts, n_parts, &bytes, &n_bytes);
                if (r >= 0)
                        r = message_parse_received(&in->m, bytes, n_bytes, &bus->names_checked,
                                                   &known, &bytes);
        }
        if (r < 0)
                goto out;
        r = -EBADMSG;
        if (!dbus_consistent(msg, in->m))
                goto out;
        if (kdbus_message_get_unix_fds(in->m) != n_fds)
                goto out;
        if (n_fds) {
                r = kdbus_message_attach_fds(in->m, fds, n_fds);
                if (r < 0)
                        goto out;
                free(fds);
                fds = NULL;
                n_fds = 0;
        }

        /* header normalisation (libkdbus(3)); the names compared by their lengths first */
        {
                const char *want = NULL, *have;
                size_t want_len = 0;

                have = kdbus_message_get_sender(in->m);
                if (!have || message_field_len(in->m, KDBUS_FIELD_SENDER) != known.unique_len[0] ||
                    memcmp(have, known.unique[0], known.unique_len[0]) != 0) {
                        r = kdbus_message_set_sender(in->m, known.unique[0]);
                        if (r < 0)
                                goto out;
                }
                if (dst_name) {
                        want = dst_name;
                        want_len = dst_name_len;
                } else if (!in->broadcast) {
                        want = known.unique[1];
                        want_len = known.unique_len[1];
                }
                have = kdbus_message_get_destination(in->m);
                if (!want != !have ||
                    (want && (message_field_len(in->m, KDBUS_FIELD_DESTINATION) != want_len ||
                              memcmp(want, have, want_len) != 0))) {
                        r = kdbus_message_set_destination(in->m, want);
                        if (r < 0)
                                goto out;
                }
        }
        valid = true;
        r = 0;
out:
        thread_cache_put(bytes);
        if (fds) {
                close_fds(fds, n_fds);
                free(fds);
        }
        close_fds(memfds, n_memfds);
        if (valid && defer_free) {
                in->slice = offset;
                in->slice_held = true;
        } else {
                bus_free_slice(bus, offset);
        }
        if (!valid) {
                bus->n_invalid++;
                incoming_clear(bus, in);
                return r < 0 ? r : -EBADMSG;
        }
        return 0;
}

/* ------------------------------------------------------------------ */
/* dispatch */

static void slot_unlink(struct kdbus_slot *slot)
{
        struct kdbus_bus *bus = slot->bus;
        struct kdbus_slot **p;

        for (p = &bus->slots; *p; p = &(*p)->next) {
                if (*p == slot) {
                        *p = slot->next;
                        break;
                }
        }
        slot->dead = true;
        if (bus->dispatch_depth > 0) {
                slot->next = bus->graveyard;
                bus->graveyard = slot;
        } else {
                slot_free(slot);
        }
}

static void slot_remove_kernel(struct kdbus_slot *slot)
{
        if (slot->type == SLOT_MATCH && slot->kernel_entries && slot->bus->started) {
                struct kdbus_cmd_match cmd = { .size = sizeof(cmd), .cookie = slot->cookie };

                ioctl(slot->bus->fd, KDBUS_CMD_MATCH_REMOVE, &cmd);
        }
}

struct kdbus_slot *kdbus_slot_unref(struct kdbus_slot *slot)
{
        if (!slot || slot->dead)
                return NULL;
        slot_remove_kernel(slot);
        slot_unlink(slot);
        return NULL;
}

void kdbus_slot_unrefp(struct kdbus_slot **slot)
{
        kdbus_slot_unref(*slot);
}

static void bus_dispatch_end(struct kdbus_bus *bus)
{
        if (--bus->dispatch_depth > 0)
                return;
        while (bus->graveyard) {
                struct kdbus_slot *s = bus->graveyard;

                bus->graveyard = s->next;
                slot_free(s);
        }
}

/* a few slots of a type (most programs have one object) are snapshot on the stack */
#define SLOTS_ON_STACK 8

/*
 * Snapshot the live slots of one type, for iteration while handlers run:
 * into @stack (SLOTS_ON_STACK entries) when they fit; slots_release() ends it.
 */
static size_t slots_snapshot(struct kdbus_bus *bus, enum slot_type type,
                             struct kdbus_slot **stack, struct kdbus_slot ***ret)
{
        size_t n = 0, i = 0;
        struct kdbus_slot *s, **v;

        for (s = bus->slots; s; s = s->next)
                if (s->type == type)
                        n++;
        *ret = NULL;
        if (!n)
                return 0;
        v = n <= SLOTS_ON_STACK ? stack : malloc(n * sizeof(*v));
        if (!v)
                return 0;
        for (s = bus->slots; s; s = s->next)
                if (s->type == type)
                        v[i++] = s;
        *ret = v;
        return n;
}

static void slots_release(struct kdbus_slot **v, struct kdbus_slot **stack)
{
        if (v != stack)
                free(v);
}

static int call_handler(struct kdbus_slot *s, struct kdbus_message *m)
{
        kdbus_message_rewind(m);
        return s->handler ? s->handler(s->bus, m, s->userdata) : 0;
}

static void dispatch_matches(struct kdbus_bus *bus, struct kdbus_message *m, bool from_driver,
                             const struct kdbus_metadata *md, bool *matched)
{
        const char *dest = kdbus_message_get_destination(m);
        const char *own[2] = { NULL, NULL };
        struct kdbus_match_context ctx = {
                .from_driver = from_driver,
                .own_unique = bus->monitor ? NULL : bus->unique,
        };
        struct kdbus_slot **v, *stack[SLOTS_ON_STACK];
        size_t n = slots_snapshot(bus, SLOT_MATCH, stack, &v);
        const char **own_names = NULL;

        if (md && !from_driver) {
                ctx.sender_names = (const char *const *)md->names;
                ctx.n_sender_names = md->n_names;
        }
        /* a unicast the kernel gave us was addressed to us, whatever the name */
        own_names = calloc(bus->n_names + 2, sizeof(*own_names));
        if (own_names) {
                size_t k = 0;

                for (size_t i = 0; i < bus->n_names; i++)
                        own_names[k++] = bus->names[i];
                if (dest && md && md->dst_id != KDBUS_DST_ID_BROADCAST && !bus->monitor)
                        own_names[k++] = dest;
                ctx.own_names = own_names;
                ctx.n_own_names = k;
        } else {
                ctx.own_names = own;
        }
        for (size_t i = 0; i < n; i++) {
                if (v[i]->dead || !v[i]->rule)
                        continue;
                if (kdbus_match_rule_matches(v[i]->rule, m, &ctx)) {
                        if (matched) {
                                *matched = true;
                                break;
                        }
                        call_handler(v[i], m);
                }
        }
        free(own_names);
        slots_release(v, stack);
}

static void dispatch_filters(struct kdbus_bus *bus, struct kdbus_message *m)
{
        struct kdbus_slot **v, *stack[SLOTS_ON_STACK];
        size_t n = slots_snapshot(bus, SLOT_FILTER, stack, &v);

        for (size_t i = 0; i < n; i++)
                if (!v[i]->dead)
                        call_handler(v[i], m);
        slots_release(v, stack);
}

static struct kdbus_slot *find_call(struct kdbus_bus *bus, uint32_t serial)
{
        for (struct kdbus_slot *s = bus->slots; s; s = s->next)
                if (s->type == SLOT_CALL && s->serial == serial && !s->dead)
                        return s;
        return NULL;
}

int bus_read_machine_id(char out[33])
{
        static const char *const files[] = { "/etc/machine-id", "/var/lib/dbus/machine-id" };

        for (size_t i = 0; i < 2; i++) {
                FILE *f = fopen(files[i], "re");
                char buf[64];

                if (!f)
                        continue;
                if (fgets(buf, sizeof(buf), f) && strlen(buf) >= 32) {
                        memcpy(out, buf, 32);
                        out[32] = 0;
                        fclose(f);
                        return 0;
                }
                fclose(f);
        }
        return -ENOENT;
}

#define PEER_INTERFACE "org.freedesktop.DBus.Peer"

static void dispatch_method_call(struct kdbus_bus *bus, struct kdbus_message *m)
{
        const char *iface = kdbus_message_get_interface(m);
        const char *member = kdbus_message_get_member(m);
        const char *path = kdbus_message_get_path(m);
        bool expect = !(kdbus_message_get_flags(m) & KDBUS_MESSAGE_NO_REPLY_EXPECTED);
        bool found_object = false;
        struct kdbus_slot **v, *stack[SLOTS_ON_STACK];
        size_t n;
        char text[512];

        if (!iface || (message_field_len(m, KDBUS_FIELD_INTERFACE) == strlen(PEER_INTERFACE) &&
                       memcmp(iface, PEER_INTERFACE, strlen(PEER_INTERFACE)) == 0)) {
                if (strcmp(member, "Ping") == 0 && !strcmp(kdbus_message_get_signature(m), "")) {
                        kdbus_bus_reply(bus, m, "");
                        return;
                }
                if (strcmp(member, "GetMachineId") == 0 &&
                    !strcmp(kdbus_message_get_signature(m), "")) {
                        char id[33];

                        if (bus_read_machine_id(id) < 0)
                                kdbus_bus_reply_errno(bus, m, ENOENT);
                        else
                                kdbus_bus_reply(bus, m, "s", id);
                        return;
                }
        }

        n = slots_snapshot(bus, SLOT_OBJECT, stack, &v);
        for (size_t i = 0; i < n; i++) {
                int r;

                if (v[i]->dead || (v[i]->path && strcmp(v[i]->path, path) != 0))
                        continue;
                found_object = true;
                r = call_handler(v[i], m);
                if (r > 0) {
                        slots_release(v, stack);
                        return;
                }
                if (r < 0) {
                        if (expect)
                                kdbus_bus_reply_errno(bus, m, r);
                        slots_release(v, stack);
                        return;
                }
        }
        slots_release(v, stack);
        if (!expect)
                return;
        if (!found_object) {
                snprintf(text, sizeof(text), "Unknown object '%s'.", path);
                kdbus_bus_reply_error(bus, m, "org.freedesktop.DBus.Error.UnknownObject", text);
        } else {
                snprintf(text, sizeof(text), "Unknown method '%s' or interface '%s'.", member,
                         iface ? iface : "");
                kdbus_bus_reply_error(bus, m, "org.freedesktop.DBus.Error.UnknownMethod", text);
        }
}

/* forwarding mode: what a D-Bus client of a message bus would receive */
static void forward_message(struct kdbus_bus *bus, struct kdbus_message *m, bool from_driver,
                            const struct kdbus_metadata *md)
{
        uint8_t type = kdbus_message_get_type(m);
        const char *dest = kdbus_message_get_destination(m);
        bool deliver = false;

        if (bus->monitor) {
                bool any = false;

                for (struct kdbus_slot *s = bus->slots; s; s = s->next)
                        if (s->type == SLOT_MATCH && !s->dead && s->rule)
                                any = true;
                if (!any)
                        deliver = true;
                else
                        dispatch_matches(bus, m, from_driver, md, &deliver);
        } else if (type != KDBUS_MESSAGE_SIGNAL) {
                deliver = true;
        } else if (from_driver ? (dest && strcmp(dest, bus->unique) == 0)
                               : (md && md->dst_id != KDBUS_DST_ID_BROADCAST)) {
                deliver = true;
        } else {
                dispatch_matches(bus, m, from_driver, md, &deliver);
        }
        if (!deliver)
                return;
        kdbus_message_rewind(m);
        bus->current_md = md;
        bus->forward(bus, m, bus->forward_userdata);
        bus->current_md = NULL;
}

static void dispatch_message(struct kdbus_bus *bus, struct kdbus_message *m, bool from_driver,
                             const struct kdbus_metadata *md)
{
        uint8_t type = kdbus_message_get_type(m);

        if (bus->forward) {
                bus->dispatch_depth++;
                forward_message(bus, m, from_driver, md);
                bus_dispatch_end(bus);
                return;
        }
        bus->dispatch_depth++;
        bus->current_md = md;
        dispatch_filters(bus, m);
        if (bus->monitor) {
                dispatch_matches(bus, m, from_driver, md, NULL);
                goto out;
        }
        switch (type) {
        case KDBUS_MESSAGE_METHOD_RETURN:
        case KDBUS_MESSAGE_ERROR: {
                uint32_t rs = 0;
                struct kdbus_slot *s;

                if (kdbus_message_get_reply_serial(m, &rs) < 0)
                        break;
                s = find_call(bus, rs);
                if (!s)
                        break;  /* late or cancelled: dropped */
                /* complete exactly once: unlink before calling */
                slot_unlink(s);
                call_handler(s, m);
                break;
        }
        case KDBUS_MESSAGE_SIGNAL:
                dispatch_matches(bus, m, from_driver, md, NULL);
                break;
        case KDBUS_MESSAGE_METHOD_CALL:
                dispatch_method_call(bus, m);
                break;
        default:
                break;
        }
out:
        bus->current_md = NULL;
        bus_dispatch_end(bus);
}

static int driver_signal(struct kdbus_message **ret, const char *member, const char *dest,
                         const char *types, ...)
{
        struct kdbus_message *m;
        va_list ap;
        int r;

        r = kdbus_message_new_signal(&m, KDBUS_DRIVER_PATH, KDBUS_DRIVER_NAME, member);
        if (r < 0)
                return r;
        va_start(ap, types);
        r = kdbus_message_appendv(m, types, ap);
        va_end(ap);
        return bus_driver_seal(m, r, dest, ret);
}

static void owner_string(char *buf, size_t size, uint64_t id, uint64_t flags)
{
        if (id == 0 || (flags & (KDBUS_NAME_ACTIVATOR | KDBUS_NAME_IN_QUEUE)))
                buf[0] = 0;
        else
                snprintf(buf, size, ":1.%llu", (unsigned long long)id);
}

/* translate a kernel notification (libkdbus(3)) into local messages */
static int handle_notification(struct kdbus_bus *bus, struct incoming *in)
{
        char name[32], old_owner[32], new_owner[32];
        const char *nname = name;
        struct kdbus_message *m = NULL;
        int r = 0;

        switch (in->notify_type) {
        case KDBUS_ITEM_REPLY_TIMEOUT:
        case KDBUS_ITEM_REPLY_DEAD: {
                struct kdbus_slot *s;

                if (in->cookie_reply > UINT32_MAX)
                        return 0;
                s = find_call(bus, (uint32_t)in->cookie_reply);
                if (!s && bus->forward && in->cookie_reply) {
                        struct kdbus_message *call = NULL;

                        /* a call the proxied client made: a stand-in to answer */
                        r = kdbus_message_new_method_call(&call, NULL, "/", NULL, "Call");
                        if (r >= 0)
                                r = kdbus_message_seal(call, (uint32_t)in->cookie_reply,
                                                       bus->unique);
                        if (r >= 0)
                                r = local_error_reply(bus, call, "org.freedesktop.DBus.Error.NoReply",
                                                      in->notify_type == KDBUS_ITEM_REPLY_TIMEOUT ?
                                                      "Did not receive a reply. Possible causes include: the remote application did not send a reply, the message bus security policy blocked the reply, the reply timeout expired, or the network connection was broken." :
                                                      "Message recipient disconnected from message bus without replying");
                        kdbus_message_unref(call);
                        return r;
                }
                if (!s || !s->call)
                        return 0;       /* duplicates and late ones are ignored */
                return local_error_reply(bus, s->call, "org.freedesktop.DBus.Error.NoReply",
                                         in->notify_type == KDBUS_ITEM_REPLY_TIMEOUT ?
                                         "Method call timed out" :
                                         "Message recipient disconnected from message bus without replying");
        }
        case KDBUS_ITEM_ID_ADD:
        case KDBUS_ITEM_ID_REMOVE:
                if (in->id_flags & (KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_POLICY_HOLDER))
                        return 0;
                snprintf(name, sizeof(name), ":1.%llu", (unsigned long long)in->id);
                if (in->notify_type == KDBUS_ITEM_ID_ADD) {
                        old_owner[0] = 0;
                        snprintf(new_owner, sizeof(new_owner), "%s", name);
                } else {
                        snprintf(old_owner, sizeof(old_owner), "%s", name);
                        new_owner[0] = 0;
                }
                break;
        case KDBUS_ITEM_NAME_ADD:
        case KDBUS_ITEM_NAME_REMOVE:
        case KDBUS_ITEM_NAME_CHANGE:
                nname = in->name;
                owner_string(old_owner, sizeof(old_owner),
                             in->notify_type == KDBUS_ITEM_NAME_ADD ? 0 : in->old_id,
                             in->old_flags);
                owner_string(new_owner, sizeof(new_owner),
                             in->notify_type == KDBUS_ITEM_NAME_REMOVE ? 0 : in->new_id,
                             in->new_flags);
                if (!old_owner[0] && !new_owner[0])
                        return 0;
                break;
        default:
                return 0;
        }

        /* NameLost, NameOwnerChanged, NameAcquired: dbus-daemon's order */
        if (in->name && strcmp(old_owner, bus->unique) == 0) {
                bus_strv_remove(bus->names, &bus->n_names, in->name);
                if (bus->name_signals) {
                        r = driver_signal(&m, "NameLost", bus->unique, "s", in->name);
                        if (r >= 0)
                                r = local_enqueue(bus, m, true);
                        m = kdbus_message_unref(m);
                }
        }
        if (r >= 0) {
                r = driver_signal(&m, "NameOwnerChanged", NULL, "sss", nname, old_owner,
                                  new_owner);
                if (r >= 0)
                        r = local_enqueue(bus, m, true);
                m = kdbus_message_unref(m);
        }
        if (r >= 0 && in->name && strcmp(new_owner, bus->unique) == 0) {
                if (!bus_strv_contains(bus->names, bus->n_names, in->name))
                        bus_strv_push(&bus->names, &bus->n_names, in->name);
                if (bus->name_signals) {
                        r = driver_signal(&m, "NameAcquired", bus->unique, "s", in->name);
                        if (r >= 0)
                                r = local_enqueue(bus, m, true);
                        kdbus_message_unref(m);
                }
        }
        return r;
}

/*
 * NameOwnerChanged goes through the rules; NameAcquired/NameLost are
 * delivered unconditionally (to the matches and filters of this process).
 */
static void dispatch_local(struct kdbus_bus *bus, struct kdbus_message *m, bool from_driver)
{
        const char *member = kdbus_message_get_member(m);

        if (from_driver && kdbus_message_get_type(m) == KDBUS_MESSAGE_SIGNAL && member &&
            (strcmp(member, "NameAcquired") == 0 || strcmp(member, "NameLost") == 0)) {
                /* a unicast from the driver: every match sees it as addressed to us */
                dispatch_message(bus, m, true, NULL);
                return;
        }
        dispatch_message(bus, m, from_driver, NULL);
}

static int bus_recv_one(struct kdbus_bus *bus)
{
        struct kdbus_cmd_recv recv = { .size = sizeof(recv) };
        struct incoming in;
        int r;

        if (ioctl(bus->fd, KDBUS_CMD_RECV, &recv) < 0) {
                r = -errno;
                if (r == -EAGAIN) {
                        if (recv.return_flags & KDBUS_RECV_RETURN_DROPPED_MSGS)
                                bus->n_dropped += recv.dropped_msgs;
                        return 0;
                }
                return r;
        }
        if (recv.return_flags & KDBUS_RECV_RETURN_DROPPED_MSGS)
                bus->n_dropped += recv.dropped_msgs;
        /*
         * Everything is copied out of the slice, but it is freed only after
         * the handlers ran: a handler that answers a call sends its reply
         * first, and the FREE no longer delays it (sd-bus freed a kdbus
         * slice when the message was dropped after dispatch, too).
         */
        r = bus_take_slice(bus, recv.msg.offset, recv.msg.msg_size, &in, true);
        if (r < 0)
                return r == -ENOMEM ? r : 1;    /* dropped and counted */
        if (in.kernel) {
                if (bus->monitor) {
                        /* monitors see the translated form of name changes */
                        handle_notification(bus, &in);
                } else {
                        r = handle_notification(bus, &in);
                }
        } else {
                dispatch_message(bus, in.m, false, &in.md);
        }
        if (in.slice_held)
                bus_free_slice(bus, in.slice);
        incoming_clear(bus, &in);
        return r < 0 ? r : 1;
}

/**
 * kdbus_bus_process() - handle one queued item
 * @bus:        connection
 *
 * Return: 1 if a local message or one received message was handled, 0 if
 * there was nothing to do, or a negative errno (-ECONNRESET: the
 * connection is gone).
 */
int kdbus_bus_process(struct kdbus_bus *bus)
{
        struct local_item *l = bus->local_head;

        if (!bus->started)
                return -ENOTCONN;
        if (l) {
                bus->local_head = l->next;
                if (!bus->local_head)
                        bus->local_tail = NULL;
                dispatch_local(bus, l->m, l->from_driver);
                kdbus_message_unref(l->m);
                free(l);
                return 1;
        }
        return bus_recv_one(bus);
}

int kdbus_bus_wait(struct kdbus_bus *bus, uint64_t timeout_usec)
{
        struct pollfd p = { .fd = bus->fd, .events = POLLIN };
        int ms, r;

        if (bus->local_head)
                return 1;
        if (timeout_usec == UINT64_MAX)
                ms = -1;
        else
                ms = (int)((timeout_usec + 999) / 1000 > INT32_MAX ? INT32_MAX
                                                                    : (timeout_usec + 999) / 1000);
        r = poll(&p, 1, ms);
        if (r < 0)
                return errno == EINTR ? 0 : -errno;
        if (r > 0 && (p.revents & (POLLHUP | POLLERR)) && !(p.revents & POLLIN))
                return -ECONNRESET;
        return r > 0 ? 1 : 0;
}

int kdbus_bus_run_until(struct kdbus_bus *bus, const bool *done, uint64_t timeout_usec)
{
        uint64_t deadline = timeout_usec == UINT64_MAX ? UINT64_MAX
                                                       : now_ns() + timeout_usec * 1000ULL;
        int r;

        while (!*done) {
                uint64_t now;

                r = kdbus_bus_process(bus);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                now = now_ns();
                if (now >= deadline)
                        return -ETIMEDOUT;
                r = kdbus_bus_wait(bus, deadline == UINT64_MAX ? UINT64_MAX
                                                               : (deadline - now) / 1000);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ------------------------------------------------------------------ */
/* calls and replies */

/**
 * kdbus_bus_call() - synchronous method call
 * @bus:                connection
 * @m:                  method call (sealed here if needed)
 * @timeout_usec:       0 for the connection default
 * @error:              D-Bus error on failure (may be NULL)
 * @reply:              the METHOD_RETURN (may be NULL)
 *
 * Messages arriving meanwhile stay queued for kdbus_bus_process().
 *
 * Return: 0, or a negative errno with @error set (ETIMEDOUT for NoReply,
 * the errno of the error name for an ERROR reply, ENOTCONN when the own
 * connection went away).
 */
int kdbus_bus_call(struct kdbus_bus *bus, struct kdbus_message *m, uint64_t timeout_usec,
                   struct kdbus_error *error, struct kdbus_message **reply)
{
        struct kdbus_message *answer = NULL;
        struct kdbus_msg_info info;
        uint64_t deadline;
        struct incoming in;
        int r;

        if (reply)
                *reply = NULL;
        if (!bus->started)
                return kdbus_error_set_errno(error, ENOTCONN);
        if (kdbus_message_get_type(m) != KDBUS_MESSAGE_METHOD_CALL ||
            (kdbus_message_get_flags(m) & KDBUS_MESSAGE_NO_REPLY_EXPECTED))
                return kdbus_error_set_errno(error, EINVAL);
        r = bus_seal(bus, m);
        if (r < 0)
                return kdbus_error_set_errno(error, r);

        if (is_driver_call(m)) {
                r = bus_driver_call(bus, m, &answer);
                if (r < 0)
                        return kdbus_error_set_errno(error, r);
        } else {
                deadline = now_ns() + (timeout_usec ? timeout_usec : bus->timeout_usec) * 1000ULL;
                do {
                        /* EINTR: the identical SEND resumes the wait
                         * (kdbus.message(7)) */
                        r = bus_send_raw(bus, m, deadline, true, &info);
                } while (r == -EINTR);
                if (r == -ETIMEDOUT)
                        return kdbus_error_set(error, "org.freedesktop.DBus.Error.NoReply",
                                               "Method call timed out") < 0 ? -ETIMEDOUT
                                                                            : -ETIMEDOUT;
                if (r == -EPIPE) {
                        kdbus_error_set(error, "org.freedesktop.DBus.Error.NoReply",
                                        "Message recipient disconnected from message bus without replying");
                        return -EPIPE;
                }
                if (r == -EREMOTEIO) {
                        kdbus_error_set(error, "org.freedesktop.DBus.Error.NotSupported",
                                        "The reply carries file descriptors this connection does not accept");
                        return -EREMOTEIO;
                }
                if (r == -ECONNRESET)
                        return kdbus_error_set_errno(error, ENOTCONN);
                if (r < 0)
                        return send_error(error, r, kdbus_message_get_destination(m));
                r = bus_take_slice(bus, info.offset, info.msg_size, &in, false);
                if (r < 0)
                        return kdbus_error_set_errno(error, r == -ENOMEM ? ENOMEM : EBADMSG);
                if (in.kernel) {
                        incoming_clear(bus, &in);
                        return kdbus_error_set_errno(error, EBADMSG);
                }
                answer = in.m;          /* the reference moves to answer */
                in.m = NULL;
                incoming_clear(bus, &in);
        }

        if (kdbus_message_get_type(answer) == KDBUS_MESSAGE_ERROR) {
                struct kdbus_error tmp = KDBUS_ERROR_NULL;

                r = kdbus_error_from_message(error ? error : &tmp, answer);
                kdbus_error_free(&tmp);
                kdbus_message_unref(answer);
                return r < 0 ? r : -EIO;
        }
        if (reply)
                *reply = answer;
        else
                kdbus_message_unref(answer);
        return 0;
}

static int slot_new(struct kdbus_bus *bus, struct kdbus_slot **ret, enum slot_type type,
                    kdbus_message_handler_t handler, void *userdata, struct kdbus_slot **out)
{
        struct kdbus_slot *s = calloc(1, sizeof(*s));

        if (!s)
                return -ENOMEM;
        s->bus = bus;
        s->type = type;
        s->handler = handler;
        s->userdata = userdata;
        s->floating = !ret;
        *out = s;
        return 0;
}

static void slot_link(struct kdbus_bus *bus, struct kdbus_slot *s, struct kdbus_slot **ret)
{
        struct kdbus_slot **p = &bus->slots;

        /* keep installation order: matches are tried in order */
        while (*p)
                p = &(*p)->next;
        *p = s;
        if (ret)
                *ret = s;
}

/**
 * kdbus_bus_call_async() - asynchronous method call
 * @bus:                connection
 * @slot:               handle to cancel the call (NULL: owned by the bus)
 * @m:                  method call expecting a reply
 * @handler:            gets the reply, an error, or a NoReply error
 * @userdata:           for @handler
 * @timeout_usec:       0 for the connection default
 *
 * Return: 0 or the negative errno of the send (nothing pending then).
 */
int kdbus_bus_call_async(struct kdbus_bus *bus, struct kdbus_slot **slot,
                         struct kdbus_message *m, kdbus_message_handler_t handler,
                         void *userdata, uint64_t timeout_usec)
{
        struct kdbus_slot *s;
        int r;

        if (!bus->started)
                return -ENOTCONN;
        if (kdbus_message_get_type(m) != KDBUS_MESSAGE_METHOD_CALL ||
            (kdbus_message_get_flags(m) & KDBUS_MESSAGE_NO_REPLY_EXPECTED))
                return -EINVAL;
        r = bus_seal(bus, m);
        if (r < 0)
                return r;
        r = slot_new(bus, slot, SLOT_CALL, handler, userdata, &s);
        if (r < 0)
                return r;
        s->serial = kdbus_message_get_serial(m);
        s->call = kdbus_message_ref(m);

        if (is_driver_call(m)) {
                struct kdbus_message *reply = NULL;

                r = bus_driver_call(bus, m, &reply);
                if (r >= 0)
                        r = local_enqueue(bus, reply, true);
                kdbus_message_unref(reply);
        } else {
                uint64_t t = timeout_usec ? timeout_usec : bus->timeout_usec;

                r = bus_send_raw(bus, m, now_ns() + t * 1000ULL, false, NULL);
        }
        if (r < 0) {
                slot_free(s);
                return r;
        }
        slot_link(bus, s, slot);
        return 0;
}

int kdbus_bus_call_method(struct kdbus_bus *bus, const char *destination, const char *path,
                          const char *interface, const char *member, struct kdbus_error *error,
                          struct kdbus_message **reply, const char *types, ...)
{
        struct kdbus_message *m = NULL;
        va_list ap;
        int r;

        /* sealed by kdbus_bus_call() (or dropped) before returning: the strings stay ours */
        r = message_new_method_call_borrowed(&m, destination, path, interface, member,
                                             &bus->names_checked);
        if (r < 0)
                return kdbus_error_set_errno(error, r);
        if (types && *types) {
                va_start(ap, types);
                r = kdbus_message_appendv(m, types, ap);
                va_end(ap);
                if (r < 0) {
                        message_unref_keep(m, &bus->names_checked);
                        return kdbus_error_set_errno(error, r);
                }
        }
        r = kdbus_bus_call(bus, m, 0, error, reply);
        message_unref_keep(m, &bus->names_checked);
        return r;
}

int kdbus_bus_emit_signal(struct kdbus_bus *bus, const char *destination, const char *path,
                          const char *interface, const char *member, const char *types, ...)
{
        struct kdbus_message *m = NULL;
        va_list ap;
        int r;

        r = kdbus_message_new_signal(&m, path, interface, member);
        if (r < 0)
                return r;
        if (destination)
                r = kdbus_message_set_destination(m, destination);
        if (r >= 0 && types && *types) {
                va_start(ap, types);
                r = kdbus_message_appendv(m, types, ap);
                va_end(ap);
        }
        if (r >= 0)
                r = kdbus_bus_send(bus, m, NULL);
        kdbus_message_unref(m);
        return r;
}

static bool call_expects_reply(struct kdbus_message *call)
{
        return kdbus_message_get_type(call) == KDBUS_MESSAGE_METHOD_CALL &&
               !(kdbus_message_get_flags(call) & KDBUS_MESSAGE_NO_REPLY_EXPECTED);
}

int kdbus_bus_reply(struct kdbus_bus *bus, struct kdbus_message *call, const char *types, ...)
{
        struct kdbus_message *m = NULL;
        va_list ap;
        int r;

        if (!call_expects_reply(call))
                return 0;
        /* sealed by kdbus_bus_send() (or dropped) while @call is ours */
        r = message_new_method_return_borrowed(&m, call, &bus->names_checked);
        if (r < 0)
                return r;
        if (types && *types) {
                va_start(ap, types);
                r = kdbus_message_appendv(m, types, ap);
                va_end(ap);
        }
        if (r >= 0)
                r = kdbus_bus_send(bus, m, NULL);
        message_unref_keep(m, &bus->names_checked);
        return r;
}

int kdbus_bus_reply_error(struct kdbus_bus *bus, struct kdbus_message *call, const char *name,
                          const char *text)
{
        struct kdbus_message *m = NULL;
        int r;

        if (!call_expects_reply(call))
                return 0;
        r = kdbus_message_new_error(&m, call, name, text ? text : "");
        if (r < 0)
                return r;
        r = kdbus_bus_send(bus, m, NULL);
        kdbus_message_unref(m);
        return r;
}

int kdbus_bus_reply_errno(struct kdbus_bus *bus, struct kdbus_message *call, int err)
{
        if (err < 0)
                err = -err;
        return kdbus_bus_reply_error(bus, call, kdbus_errno_to_error_name(err), strerror(err));
}

/* ------------------------------------------------------------------ */
/* matches, objects, filters */

static int match_install(struct kdbus_bus *bus, struct kdbus_slot *s)
{
        struct kdbus_cmd_match **entries = NULL;
        size_t n = 0;
        int r;

        if (bus->monitor)
                return 0;       /* monitors see everything; rules only filter locally */
        r = kdbus_match_rule_to_kernel(s->rule, bus->bloom_size, bus->bloom_n_hash, s->cookie,
                                       &entries, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                r = match_add_raw(bus, entries[i]);
                if (r < 0)
                        break;
                s->kernel_entries = true;
        }
        if (r < 0 && s->kernel_entries) {
                struct kdbus_cmd_match cmd = { .size = sizeof(cmd), .cookie = s->cookie };

                ioctl(bus->fd, KDBUS_CMD_MATCH_REMOVE, &cmd);
                s->kernel_entries = false;
        }
        kdbus_match_entries_free(entries, n);
        return r < 0 ? r : 0;
}

int bus_add_match_rule(struct kdbus_bus *bus, struct kdbus_slot **slot,
                          struct kdbus_match_rule *rule, kdbus_message_handler_t handler,
                          void *userdata, bool driver_match)
{
        struct kdbus_slot *s;
        int r;

        /*
         * A rule on a well-known sender is matched against the names the
         * sender owned (OWNED_NAME items): ask for them before the kernel
         * match exists, so every message it lets through carries them.
         * They stay asked for (a rule removed meanwhile costs nothing
         * wrong). The bus driver's messages are matched by its name.
         */
        if (rule->sender && rule->sender[0] != ':' && strcmp(rule->sender, KDBUS_DRIVER_NAME) &&
            !bus->names_needed) {
                bus->names_needed = true;
                r = bus_update_attach_recv(bus);
                if (r < 0) {
                        bus->names_needed = false;
                        kdbus_match_rule_free(rule);
                        return r;
                }
        }
        r = slot_new(bus, slot, SLOT_MATCH, handler, userdata, &s);
        if (r < 0) {
                kdbus_match_rule_free(rule);
                return r;
        }
        s->rule = rule;
        s->driver_match = driver_match;
        s->cookie = ++bus->match_cookie;
        r = match_install(bus, s);
        if (r < 0) {
                slot_free(s);
                return r;
        }
        slot_link(bus, s, slot);
        return 0;
}

/**
 * kdbus_bus_add_match() - subscribe to messages matching a rule
 * @bus:        started connection
 * @slot:       handle that removes the match (NULL: owned by the bus)
 * @rule:       D-Bus match rule text (arg<N>has accepted)
 * @handler:    called for every matching message
 * @userdata:   for @handler
 *
 * Return: 0, -EINVAL for a bad rule, -E2BIG for a rule over 1024 bytes,
 * -EMFILE when the kernel's match limit is reached (nothing installed).
 */
int kdbus_bus_add_match(struct kdbus_bus *bus, struct kdbus_slot **slot, const char *rule,
                        kdbus_message_handler_t handler, void *userdata)
{
        struct kdbus_match_rule *parsed;
        int r;

        if (!bus->started)
                return -ENOTCONN;
        r = kdbus_match_rule_parse(&parsed, rule, true);
        if (r < 0)
                return r;
        return bus_add_match_rule(bus, slot, parsed, handler, userdata, false);
}

int kdbus_bus_add_object(struct kdbus_bus *bus, struct kdbus_slot **slot, const char *path,
                         kdbus_message_handler_t handler, void *userdata)
{
        struct kdbus_slot *s;
        int r;

        if (path && !kdbus_object_path_valid(path, strlen(path)))
                return -EINVAL;
        r = slot_new(bus, slot, SLOT_OBJECT, handler, userdata, &s);
        if (r < 0)
                return r;
        if (path) {
                s->path = strdup(path);
                if (!s->path) {
                        slot_free(s);
                        return -ENOMEM;
                }
        }
        slot_link(bus, s, slot);
        return 0;
}

int kdbus_bus_add_filter(struct kdbus_bus *bus, struct kdbus_slot **slot,
                         kdbus_message_handler_t handler, void *userdata)
{
        struct kdbus_slot *s;
        int r;

        r = slot_new(bus, slot, SLOT_FILTER, handler, userdata, &s);
        if (r < 0)
                return r;
        slot_link(bus, s, slot);
        return 0;
}

/* ------------------------------------------------------------------ */
/* names and peers */

static int name_cmd(struct kdbus_bus *bus, unsigned long request, const char *name,
                    uint64_t flags, uint64_t *return_flags)
{
        size_t len = strlen(name) + 1;
        size_t size = sizeof(struct kdbus_cmd) + ALIGN8(ITEM_HEADER_SIZE + len);
        struct kdbus_cmd *cmd = aligned_alloc(8, ALIGN8(size));
        int r = 0;

        if (!cmd)
                return -ENOMEM;
        memset(cmd, 0, ALIGN8(size));
        cmd->size = size;
        cmd->flags = flags;
        item_put(cmd->items, KDBUS_ITEM_NAME, name, len);
        if (ioctl(bus->fd, request, cmd) < 0)
                r = -errno;
        if (return_flags)
                *return_flags = cmd->return_flags;
        free(cmd);
        return r;
}

/**
 * kdbus_bus_request_name() - RequestName with the D-Bus semantics
 * @bus:        connection
 * @name:       well-known name
 * @flags:      KDBUS_NAME_FLAG_*
 *
 * Return: a KDBUS_REQUEST_NAME_* code; -EINVAL for invalid, unique or
 * reserved names, -EPERM (policy), -E2BIG (too many names), or another
 * negative errno.
 */
int kdbus_bus_request_name(struct kdbus_bus *bus, const char *name, uint64_t flags)
{
        uint64_t kflags = 0, ret_flags = 0;
        int r;

        if (!bus->started)
                return -ENOTCONN;
        if (!name || !bus_name_ownable(name))
                return -EINVAL;
        if (flags & KDBUS_NAME_FLAG_ALLOW_REPLACEMENT)
                kflags |= KDBUS_NAME_ALLOW_REPLACEMENT;
        if (flags & KDBUS_NAME_FLAG_REPLACE_EXISTING)
                kflags |= KDBUS_NAME_REPLACE_EXISTING;
        if (!(flags & KDBUS_NAME_FLAG_DO_NOT_QUEUE))
                kflags |= KDBUS_NAME_QUEUE;

        r = name_cmd(bus, KDBUS_CMD_NAME_ACQUIRE, name, kflags, &ret_flags);
        if (r == -EEXIST)
                return KDBUS_REQUEST_NAME_EXISTS;
        if (r == -EALREADY)
                return KDBUS_REQUEST_NAME_ALREADY_OWNER;
        if (r < 0)
                return r;
        if (ret_flags & KDBUS_NAME_IN_QUEUE)
                return KDBUS_REQUEST_NAME_IN_QUEUE;
        if (ret_flags & KDBUS_NAME_PRIMARY) {
                if (!bus_strv_contains(bus->names, bus->n_names, name)) {
                        r = bus_strv_push(&bus->names, &bus->n_names, name);
                        if (r < 0)
                                return r;
                }
                return (ret_flags & KDBUS_NAME_ACQUIRED) ? KDBUS_REQUEST_NAME_PRIMARY_OWNER
                                                         : KDBUS_REQUEST_NAME_ALREADY_OWNER;
        }
        return KDBUS_REQUEST_NAME_EXISTS;
}

int kdbus_bus_release_name(struct kdbus_bus *bus, const char *name)
{
        int r;

        if (!bus->started)
                return -ENOTCONN;
        if (!name || !bus_name_ownable(name))
                return -EINVAL;
        r = name_cmd(bus, KDBUS_CMD_NAME_RELEASE, name, 0, NULL);
        if (r == -ESRCH)
                return KDBUS_RELEASE_NAME_NON_EXISTENT;
        if (r == -EADDRINUSE)
                return KDBUS_RELEASE_NAME_NOT_OWNER;
        if (r < 0)
                return r;
        bus_strv_remove(bus->names, &bus->n_names, name);
        return KDBUS_RELEASE_NAME_RELEASED;
}

void kdbus_name_entries_free(struct kdbus_name_entry *e, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(e[i].name);
        free(e);
}

int kdbus_bus_list(struct kdbus_bus *bus, uint64_t flags, struct kdbus_name_entry **ret,
                   size_t *n_ret)
{
        struct kdbus_cmd_list cmd = { .size = sizeof(cmd), .flags = flags };
        struct kdbus_name_entry *v = NULL;
        size_t n = 0;
        uint64_t off;
        int r = 0;

        if (!bus->started)
                return -ENOTCONN;
        if (ioctl(bus->fd, KDBUS_CMD_LIST, &cmd) < 0)
                return -errno;
        if (cmd.list_size && (cmd.offset >= bus->pool_size ||
                              cmd.list_size > bus->pool_size - cmd.offset)) {
                r = -EBADMSG;
                goto out;
        }
        for (off = 0; off < cmd.list_size;) {
                const struct kdbus_info *info = (const void *)(bus->pool + cmd.offset + off);
                struct kdbus_name_entry *nv;
                const struct kdbus_item *item;

                if (cmd.list_size - off < sizeof(*info) || info->size < sizeof(*info) ||
                    info->size > cmd.list_size - off ||
                    !items_valid((const uint8_t *)info->items, info->size - sizeof(*info))) {
                        r = -EBADMSG;
                        goto out;
                }
                nv = realloc(v, (n + 1) * sizeof(*v));
                if (!nv) {
                        r = -ENOMEM;
                        goto out;
                }
                v = nv;
                memset(&v[n], 0, sizeof(v[n]));
                v[n].id = info->id;
                v[n].conn_flags = info->flags;
                for (item = info->items; (const uint8_t *)item < (const uint8_t *)info + info->size;
                     item = ITEM_NEXT(item)) {
                        size_t len = item->size - ITEM_HEADER_SIZE;

                        if (item->type == KDBUS_ITEM_OWNED_NAME && len > sizeof(struct kdbus_name) &&
                            !v[n].name) {
                                v[n].name_flags = item->name.flags;
                                v[n].name = strndup(item->name.name,
                                                    strnlen(item->name.name,
                                                            len - sizeof(struct kdbus_name)));
                                if (!v[n].name) {
                                        n++;
                                        r = -ENOMEM;
                                        goto out;
                                }
                        }
                }
                n++;
                off += ALIGN8(info->size);
        }
out:
        bus_free_slice(bus, cmd.list_size ? cmd.offset : bus->pool_size);
        if (r < 0) {
                kdbus_name_entries_free(v, n);
                return r;
        }
        *ret = v;
        *n_ret = n;
        return 0;
}

int kdbus_bus_list_names(struct kdbus_bus *bus, char ***ret)
{
        struct kdbus_name_entry *e = NULL;
        char **names = NULL;
        size_t n = 0, k = 0;
        int r;

        r = kdbus_bus_list(bus, KDBUS_LIST_UNIQUE | KDBUS_LIST_NAMES, &e, &n);
        if (r < 0)
                return r;
        r = bus_strv_push(&names, &k, KDBUS_DRIVER_NAME);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                char u[32];

                if (e[i].conn_flags & (KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_POLICY_HOLDER))
                        continue;
                snprintf(u, sizeof(u), ":1.%llu", (unsigned long long)e[i].id);
                if (!bus_strv_contains(names, k, u))
                        r = bus_strv_push(&names, &k, u);
                if (r >= 0 && e[i].name &&
                    !(e[i].name_flags & (KDBUS_NAME_ACTIVATOR | KDBUS_NAME_IN_QUEUE)))
                        r = bus_strv_push(&names, &k, e[i].name);
        }
        kdbus_name_entries_free(e, n);
        if (r < 0) {
                kdbus_strv_free(names);
                return r;
        }
        *ret = names;
        return 0;
}

static int info_cmd(struct kdbus_bus *bus, unsigned long request, const char *name,
                    uint64_t attach_flags, struct kdbus_metadata *md, char **make_name)
{
        uint64_t id = 0;
        size_t len = 0, size = sizeof(struct kdbus_cmd_info);
        struct kdbus_cmd_info *cmd;
        const struct kdbus_info *info;
        const struct kdbus_item *item;
        int r = 0;

        memset(md, 0, sizeof(*md));
        if (!bus->started)
                return -ENOTCONN;
        if (name) {
                if (name[0] == ':') {
                        if (!kdbus_unique_name_parse(name, &id))
                                return -ENXIO;
                } else {
                        if (!kdbus_bus_name_valid(name))
                                return -EINVAL;
                        len = strlen(name) + 1;
                        size += ALIGN8(ITEM_HEADER_SIZE + len);
                }
        }
        cmd = aligned_alloc(8, ALIGN8(size));
        if (!cmd)
                return -ENOMEM;
        memset(cmd, 0, ALIGN8(size));
        cmd->size = size;
        cmd->id = id;
        cmd->attach_flags = attach_flags;
        if (len)
                item_put(cmd->items, KDBUS_ITEM_NAME, name, len);
        if (ioctl(bus->fd, request, cmd) < 0) {
                r = -errno;
                free(cmd);
                return r;
        }
        if (cmd->offset >= bus->pool_size || cmd->info_size > bus->pool_size - cmd->offset ||
            cmd->info_size < sizeof(*info)) {
                r = -EBADMSG;
                goto out;
        }
        info = (const void *)(bus->pool + cmd->offset);
        if (info->size < sizeof(*info) || info->size > cmd->info_size ||
            !items_valid((const uint8_t *)info->items, info->size - sizeof(*info))) {
                r = -EBADMSG;
                goto out;
        }
        md->src_id = info->id;
        md->info_flags = info->flags;
        for (item = info->items; (const uint8_t *)item < (const uint8_t *)info + info->size;
             item = ITEM_NEXT(item)) {
                if (item->type == KDBUS_ITEM_MAKE_NAME && make_name && !*make_name) {
                        *make_name = item_strdup(item);
                        continue;
                }
                r = metadata_add_item(md, item);
                if (r == -ENOMEM)
                        goto out;
                r = 0;
        }
out:
        bus_free_slice(bus, cmd->offset);
        free(cmd);
        if (r < 0)
                kdbus_metadata_free(md);
        return r;
}

int kdbus_bus_get_conn_info(struct kdbus_bus *bus, const char *name, uint64_t attach_flags,
                            struct kdbus_metadata *ret)
{
        if (!name)
                return -EINVAL;
        return info_cmd(bus, KDBUS_CMD_CONN_INFO, name, attach_flags, ret, NULL);
}

int kdbus_bus_get_creator_info(struct kdbus_bus *bus, uint64_t attach_flags,
                               struct kdbus_metadata *ret, char **bus_name)
{
        if (bus_name)
                *bus_name = NULL;
        return info_cmd(bus, KDBUS_CMD_BUS_CREATOR_INFO, NULL, attach_flags, ret, bus_name);
}

/*
 * "Resolve X" (libkdbus(3)) with CONN_INFO and @attach_flags: -ENXIO
 * when X has no owner in D-Bus terms (invalid, unknown, or held by an
 * activator, policy holder or monitor); @md is filled only on success.
 */
int bus_resolve_owner(struct kdbus_bus *bus, const char *name, uint64_t attach_flags,
                      struct kdbus_metadata *md)
{
        int r;

        memset(md, 0, sizeof(*md));
        if (name[0] == ':' ? !kdbus_unique_name_parse(name, NULL) : !kdbus_bus_name_valid(name))
                return -ENXIO;
        r = kdbus_bus_get_conn_info(bus, name, attach_flags, md);
        if (r == -ESRCH || r == -ENXIO || r == -EINVAL)
                return -ENXIO;
        if (r < 0)
                return r;
        if (md->info_flags & (KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_POLICY_HOLDER |
                              KDBUS_HELLO_MONITOR)) {
                kdbus_metadata_free(md);
                return -ENXIO;
        }
        return 0;
}

int kdbus_bus_get_name_owner(struct kdbus_bus *bus, const char *name, char **owner)
{
        struct kdbus_metadata md;
        char buf[32];
        int r;

        if (strcmp(name, KDBUS_DRIVER_NAME) == 0) {
                *owner = strdup(KDBUS_DRIVER_NAME);
                return *owner ? 0 : -ENOMEM;
        }
        r = bus_resolve_owner(bus, name, 0, &md);
        if (r < 0)
                return r;
        snprintf(buf, sizeof(buf), ":1.%llu", (unsigned long long)md.src_id);
        kdbus_metadata_free(&md);
        *owner = strdup(buf);
        return *owner ? 0 : -ENOMEM;
}

/*
 * StartServiceByName for a name held by its activator: a Peer.Ping to the
 * name, waited for synchronously. The kernel queues it in the activator,
 * which makes the launcher start the service; the ping moves to the
 * service when it takes the name. Any METHOD_RETURN or ERROR proves it runs.
 */
int bus_driver_activate(struct kdbus_bus *bus, const char *name, uint64_t timeout_usec)
{
        struct kdbus_message *ping = NULL;
        struct kdbus_msg_info info;
        struct incoming in;
        uint64_t deadline = now_ns() + timeout_usec * 1000ULL;
        int r;

        r = kdbus_message_new_method_call(&ping, name, "/", "org.freedesktop.DBus.Peer", "Ping");
        if (r >= 0)
                r = bus_seal(bus, ping);
        if (r >= 0) {
                do {
                        r = bus_send_raw(bus, ping, deadline, true, &info);
                } while (r == -EINTR);
        }
        kdbus_message_unref(ping);
        if (r < 0)
                return r;
        r = bus_take_slice(bus, info.offset, info.msg_size, &in, false);
        if (r < 0)
                return r;
        r = !in.kernel && in.m ? 0 : -EBADMSG;
        incoming_clear(bus, &in);
        return r;
}

/* ------------------------------------------------------------------ */
/* buses and endpoints */

/* open @parent and make @name there: the new node's owner fd, or -errno */
static int make_node(const char *parent, unsigned long request, const char *name, bool with_bloom,
                     bool world)
{
        _Alignas(8) uint8_t buf[sizeof(struct kdbus_cmd) + 3 * ITEM_HEADER_SIZE + 16 + 8 + 80];
        struct kdbus_cmd *cmd = (void *)buf;
        struct kdbus_item *item = cmd->items;
        int fd;

        if (strlen(name) > 63)
                return -ENAMETOOLONG;
        memset(buf, 0, sizeof(buf));
        if (with_bloom) {
                struct kdbus_bloom_parameter bp = {
                        .size = KDBUS_BLOOM_DEFAULT_SIZE,
                        .n_hash = KDBUS_BLOOM_DEFAULT_N_HASH,
                };
                uint64_t attach = _KDBUS_ATTACH_ALL;

                item = item_put(item, KDBUS_ITEM_BLOOM_PARAMETER, &bp, sizeof(bp));
                item = item_put(item, KDBUS_ITEM_ATTACH_FLAGS_SEND, &attach, sizeof(attach));
        }
        item = item_put(item, KDBUS_ITEM_MAKE_NAME, name, strlen(name) + 1);
        cmd->size = (uint64_t)((uint8_t *)item - buf);
        cmd->flags = world ? KDBUS_MAKE_ACCESS_WORLD : 0;
        fd = open(parent, O_RDWR | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (ioctl(fd, request, cmd) < 0) {
                int r = -errno;

                close(fd);
                return r;
        }
        return fd;
}

/* hand the made node's fd and path to the caller */
static int make_done(int fd, const char *path, int *ret_fd, char **ret_path)
{
        if (ret_path) {
                *ret_path = strdup(path);
                if (!*ret_path) {
                        close(fd);
                        return -ENOMEM;
                }
        }
        *ret_fd = fd;
        return 0;
}

static int prefixed_name(const char *name, char *out, size_t size)
{
        char prefix[24];

        snprintf(prefix, sizeof(prefix), "%u-", (unsigned int)geteuid());
        if (strncmp(name, prefix, strlen(prefix)) == 0)
                snprintf(out, size, "%s", name);
        else
                snprintf(out, size, "%s%s", prefix, name);
        return strlen(out) > 63 ? -ENAMETOOLONG : 0;
}

int kdbus_bus_make(const char *root, const char *name, bool world, int *ret_fd, char **ret_path)
{
        char full[128], path[512];
        int fd, r;

        if (!root)
                root = KDBUS_BUS_DEFAULT_ROOT;
        r = prefixed_name(name, full, sizeof(full));
        if (r < 0)
                return r;
        snprintf(path, sizeof(path), "%s/control", root);
        fd = make_node(path, KDBUS_CMD_BUS_MAKE, full, true, world);
        if (fd < 0)
                return fd;
        snprintf(path, sizeof(path), "%s/%s/bus", root, full);
        return make_done(fd, path, ret_fd, ret_path);
}

int kdbus_endpoint_make(const char *bus_path, const char *name, bool world, int *ret_fd,
                        char **ret_path)
{
        char full[128], path[512];
        const char *slash;
        int fd, r;

        r = prefixed_name(name, full, sizeof(full));
        if (r < 0)
                return r;
        fd = make_node(bus_path, KDBUS_CMD_ENDPOINT_MAKE, full, false, world);
        if (fd < 0)
                return fd;
        slash = strrchr(bus_path, '/');
        snprintf(path, sizeof(path), "%.*s/%s", slash ? (int)(slash - bus_path) : 1,
                 slash ? bus_path : ".", full);
        return make_done(fd, path, ret_fd, ret_path);
}
