/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A libkdbus bus connection (libkdbus(3)): HELLO and the pool,
 * sending and receiving D-Bus messages through kdbus with the payload
 * convention, method calls (synchronous and asynchronous), replies and
 * D-Bus errors, signals with bloom filters, match rules, names, kernel
 * notifications translated into driver signals, and event-loop hooks.
 *
 * Ownership: a connection is used from one thread. Functions return a
 * negative errno; D-Bus errors come back in struct kdbus_error.
 *
 * Received messages are copied out of the pool and the slice is freed at
 * once (the "detach" of libkdbus(3) is the default), so holding
 * messages never exhausts the pool. Memfd parts are read and closed.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "message.h"

#define KDBUS_BUS_DEFAULT_TIMEOUT_USEC  (25ULL * 1000 * 1000)
#define KDBUS_BUS_DEFAULT_POOL_SIZE     (16ULL * 1024 * 1024)
#define KDBUS_BUS_MEMFD_THRESHOLD       (512 * 1024)
#define KDBUS_BUS_DEFAULT_ROOT          "/sys/fs/kdbus"
#define KDBUS_DRIVER_NAME               "org.freedesktop.DBus"
#define KDBUS_DRIVER_PATH               "/org/freedesktop/DBus"
#define KDBUS_LOCAL_SERIAL              0xFFFFFFFFu

/* RequestName flags and results (libkdbus(3)) */
enum {
        KDBUS_NAME_FLAG_ALLOW_REPLACEMENT       = 0x1,
        KDBUS_NAME_FLAG_REPLACE_EXISTING        = 0x2,
        KDBUS_NAME_FLAG_DO_NOT_QUEUE            = 0x4,
};
enum {
        KDBUS_REQUEST_NAME_PRIMARY_OWNER        = 1,
        KDBUS_REQUEST_NAME_IN_QUEUE             = 2,
        KDBUS_REQUEST_NAME_EXISTS               = 3,
        KDBUS_REQUEST_NAME_ALREADY_OWNER        = 4,
};
enum {
        KDBUS_RELEASE_NAME_RELEASED             = 1,
        KDBUS_RELEASE_NAME_NON_EXISTENT         = 2,
        KDBUS_RELEASE_NAME_NOT_OWNER            = 3,
};

struct kdbus_bus;
struct kdbus_slot;

/* a D-Bus error: both strings malloc'ed, NULL when unset */
struct kdbus_error {
        char *name;
        char *message;
};

#define KDBUS_ERROR_NULL ((struct kdbus_error){ NULL, NULL })

void kdbus_error_free(struct kdbus_error *e);
bool kdbus_error_is_set(const struct kdbus_error *e);
int kdbus_error_set(struct kdbus_error *e, const char *name, const char *message);
/* sets the error from a negative or positive errno; returns -|err| */
int kdbus_error_set_errno(struct kdbus_error *e, int err);
/* errno for an error name (libkdbus(3)), positive */
int kdbus_error_name_to_errno(const char *name);
const char *kdbus_errno_to_error_name(int err);
/* from a received ERROR message; returns -errno of its name */
int kdbus_error_from_message(struct kdbus_error *e, struct kdbus_message *m);

/* metadata the kernel attached to a received message (absent: has_* false) */
struct kdbus_metadata {
        uint64_t src_id;
        uint64_t dst_id;
        bool has_creds, has_pids, has_timestamp, has_audit;
        uint64_t uid, euid, suid, fsuid, gid, egid, sgid, fsgid;
        uint64_t pid, tid, ppid;
        uint64_t seqnum, monotonic_ns, realtime_ns;
        uint32_t audit_sessionid, audit_loginuid;
        char *pid_comm, *tid_comm, *exe, *cgroup, *seclabel, *description;
        char *cmdline;          /* arguments joined with spaces */
        size_t n_cmdline;
        char **names;           /* OWNED_NAME items (primary names), NULL-terminated */
        uint64_t *name_flags;
        size_t n_names;
        uint64_t *auxgroups;
        size_t n_auxgroups;
        uint64_t info_flags;    /* kdbus_info.flags for CONN_INFO */
};

void kdbus_metadata_free(struct kdbus_metadata *md);

/*
 * Handlers. For method calls, a negative return is answered with the
 * matching D-Bus error when the caller expects a reply; 0 means "not
 * handled" (the next handler, then UnknownMethod); > 0 handled.
 */
typedef int (*kdbus_message_handler_t)(struct kdbus_bus *bus, struct kdbus_message *m,
                                       void *userdata);

/* --- connection --- */

int kdbus_bus_new(struct kdbus_bus **ret);
/* "kernel:path=NODE[;...]" or a plain path to a bus node */
int kdbus_bus_set_address(struct kdbus_bus *bus, const char *address);
int kdbus_bus_set_description(struct kdbus_bus *bus, const char *description);
int kdbus_bus_set_pool_size(struct kdbus_bus *bus, uint64_t size);
int kdbus_bus_set_accept_fd(struct kdbus_bus *bus, bool accept);
/*
 * unicast messages received as header + memfd body keep the body in the
 * memfd (kdbus_message_get_external_body), read through a read-only mapping
 */
int kdbus_bus_set_external_bodies(struct kdbus_bus *bus, bool enable);
int kdbus_bus_set_attach_recv(struct kdbus_bus *bus, uint64_t attach_flags);
int kdbus_bus_set_monitor(struct kdbus_bus *bus, bool monitor);
/* synthesise NameAcquired/NameLost for own names (libkdbus(3)) */
int kdbus_bus_set_name_signals(struct kdbus_bus *bus, bool enable);
/* HELLO with KDBUS_ITEM_CREDS/PIDS/SECLABEL of a proxied peer (owners only) */
int kdbus_bus_set_faked_identity(struct kdbus_bus *bus, uint32_t uid, uint32_t gid, uint32_t pid,
                                 const char *seclabel);
/*
 * Forwarding mode (kdbus-proxy): @handler gets every message the peer a
 * connection stands for would get from a D-Bus message bus (unicasts,
 * replies, driver replies and signals, broadcasts its rules select), with
 * its descriptors attached (kdbus_message_steal_fds()).
 */
typedef void (*kdbus_forward_handler_t)(struct kdbus_bus *bus, struct kdbus_message *m,
                                        void *userdata);
int kdbus_bus_set_forward(struct kdbus_bus *bus, kdbus_forward_handler_t handler, void *userdata);
int kdbus_bus_start(struct kdbus_bus *bus);

int kdbus_bus_open(struct kdbus_bus **ret, const char *address);
/* $DBUS_SYSTEM_BUS_ADDRESS, else <root>/0-system/bus */
int kdbus_bus_open_system(struct kdbus_bus **ret);
/* $DBUS_SESSION_BUS_ADDRESS, else <root>/<uid>-user/bus */
int kdbus_bus_open_user(struct kdbus_bus **ret);

struct kdbus_bus *kdbus_bus_ref(struct kdbus_bus *bus);
struct kdbus_bus *kdbus_bus_unref(struct kdbus_bus *bus);
void kdbus_bus_unrefp(struct kdbus_bus **bus);
/* BYEBYE (-EBUSY while messages are queued, then nothing changes) */
int kdbus_bus_byebye(struct kdbus_bus *bus);

uint64_t kdbus_bus_get_id(const struct kdbus_bus *bus);
const char *kdbus_bus_get_unique_name(const struct kdbus_bus *bus);
/* 32 lower-case hex digits and NUL */
void kdbus_bus_get_bus_id(const struct kdbus_bus *bus, char out[33]);
const char *kdbus_bus_get_path(const struct kdbus_bus *bus);
void kdbus_bus_get_bloom(const struct kdbus_bus *bus, uint64_t *size, uint64_t *n_hash);
/* invalid messages dropped / messages the kernel reported lost */
uint64_t kdbus_bus_get_n_invalid(const struct kdbus_bus *bus);
uint64_t kdbus_bus_get_n_dropped(const struct kdbus_bus *bus);
int kdbus_bus_set_default_timeout(struct kdbus_bus *bus, uint64_t usec);
/* the well-known names owned as primary owner (from the name notifications) */
size_t kdbus_bus_get_owned_names(const struct kdbus_bus *bus, const char *const **names);

/* --- event loop --- */

int kdbus_bus_get_fd(const struct kdbus_bus *bus);
int kdbus_bus_get_events(const struct kdbus_bus *bus);
/* 0 when local work is queued, else UINT64_MAX (kernel enforces deadlines) */
int kdbus_bus_get_timeout(const struct kdbus_bus *bus, uint64_t *usec);
/* handle one item; 1 if something was done, 0 if idle */
int kdbus_bus_process(struct kdbus_bus *bus);
/* poll the descriptor; 1 readable/work, 0 timeout (UINT64_MAX: forever) */
int kdbus_bus_wait(struct kdbus_bus *bus, uint64_t timeout_usec);
/* process until @done becomes true or the timeout passes (-ETIMEDOUT) */
int kdbus_bus_run_until(struct kdbus_bus *bus, const bool *done, uint64_t timeout_usec);
/* the metadata of the message being dispatched (inside a handler) */
const struct kdbus_metadata *kdbus_bus_get_current_metadata(const struct kdbus_bus *bus);

/* --- messages --- */

/* seal if needed (next serial, SENDER = own unique name) and send */
int kdbus_bus_send(struct kdbus_bus *bus, struct kdbus_message *m, uint32_t *serial);
/*
 * Synchronous call (KDBUS_SEND_SYNC_REPLY). Returns 0 with *reply for a
 * METHOD_RETURN; for an ERROR reply or a failure, a negative errno and
 * @error (may be NULL) set. timeout 0: the connection default.
 */
/* a proxied client's sealed message (SENDER set here); see libkdbus(3) */
int kdbus_bus_forward_send(struct kdbus_bus *bus, struct kdbus_message *m);
int kdbus_bus_call(struct kdbus_bus *bus, struct kdbus_message *m, uint64_t timeout_usec,
                   struct kdbus_error *error, struct kdbus_message **reply);
/* the handler receives the reply, an error or a synthesised NoReply error */
int kdbus_bus_call_async(struct kdbus_bus *bus, struct kdbus_slot **slot,
                         struct kdbus_message *m, kdbus_message_handler_t handler,
                         void *userdata, uint64_t timeout_usec);
int kdbus_bus_call_method(struct kdbus_bus *bus, const char *destination, const char *path,
                          const char *interface, const char *member, struct kdbus_error *error,
                          struct kdbus_message **reply, const char *types, ...);
/* broadcast with a bloom filter (destination NULL) or unicast signal */
int kdbus_bus_emit_signal(struct kdbus_bus *bus, const char *destination, const char *path,
                          const char *interface, const char *member, const char *types, ...);
/* the bloom filter of a signal (kdbus.match(7)) */
int kdbus_bus_signal_bloom(struct kdbus_message *m, uint64_t size, uint64_t n_hash,
                           uint64_t *filter);

int kdbus_bus_reply(struct kdbus_bus *bus, struct kdbus_message *call, const char *types, ...);
int kdbus_bus_reply_error(struct kdbus_bus *bus, struct kdbus_message *call, const char *name,
                          const char *text);
int kdbus_bus_reply_errno(struct kdbus_bus *bus, struct kdbus_message *call, int err);

/* --- handlers --- */

/* calls every message of a match rule text (arg<N>has accepted) */
int kdbus_bus_add_match(struct kdbus_bus *bus, struct kdbus_slot **slot, const char *rule,
                        kdbus_message_handler_t handler, void *userdata);
/* method calls on @path (NULL: every path) */
int kdbus_bus_add_object(struct kdbus_bus *bus, struct kdbus_slot **slot, const char *path,
                         kdbus_message_handler_t handler, void *userdata);
/* every valid incoming message before dispatch (monitors: everything) */
int kdbus_bus_add_filter(struct kdbus_bus *bus, struct kdbus_slot **slot,
                         kdbus_message_handler_t handler, void *userdata);

/* cancels a pending call / removes the match or handler */
struct kdbus_slot *kdbus_slot_unref(struct kdbus_slot *slot);
void kdbus_slot_unrefp(struct kdbus_slot **slot);

/* --- names and peers --- */

/* returns KDBUS_REQUEST_NAME_* or a negative errno (-EPERM, -E2BIG, -EINVAL) */
int kdbus_bus_request_name(struct kdbus_bus *bus, const char *name, uint64_t flags);
/* returns KDBUS_RELEASE_NAME_* or a negative errno */
int kdbus_bus_release_name(struct kdbus_bus *bus, const char *name);

struct kdbus_name_entry {
        uint64_t id;
        uint64_t conn_flags;    /* HELLO flags */
        uint64_t name_flags;    /* KDBUS_NAME_* of the record */
        char *name;             /* NULL for a bare connection entry */
};

/* KDBUS_CMD_LIST with KDBUS_LIST_* flags; entries in kernel order */
int kdbus_bus_list(struct kdbus_bus *bus, uint64_t flags, struct kdbus_name_entry **ret,
                   size_t *n_ret);
void kdbus_name_entries_free(struct kdbus_name_entry *e, size_t n);
/* D-Bus ListNames: unique and primary names, plus org.freedesktop.DBus */
int kdbus_bus_list_names(struct kdbus_bus *bus, char ***ret);
int kdbus_bus_get_name_owner(struct kdbus_bus *bus, const char *name, char **owner);
/* KDBUS_CMD_CONN_INFO by unique or well-known name */
int kdbus_bus_get_conn_info(struct kdbus_bus *bus, const char *name, uint64_t attach_flags,
                            struct kdbus_metadata *ret);
int kdbus_bus_get_creator_info(struct kdbus_bus *bus, uint64_t attach_flags,
                               struct kdbus_metadata *ret, char **bus_name);

/* --- buses and endpoints --- */

/*
 * Create a bus "<euid>-<name>" (the prefix is added when missing) under
 * @root (NULL: /sys/fs/kdbus) with bloom 64/8. The bus lives while *ret_fd
 * stays open. @world: KDBUS_MAKE_ACCESS_WORLD.
 */
int kdbus_bus_make(const char *root, const char *name, bool world, int *ret_fd, char **ret_path);
/* custom endpoint "<euid>-<name>" on the bus node @bus_path */
int kdbus_endpoint_make(const char *bus_path, const char *name, bool world, int *ret_fd,
                        char **ret_path);

void kdbus_strv_free(char **strv);
