/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * libkdbus internals shared by bus.c (the connection: HELLO, pool, send,
 * receive, dispatch, matches, names) and driver.c (the local
 * org.freedesktop.DBus driver). Not installed; kdbus-proxy, which links
 * libkdbus's sources in, includes it for bus_groups_sort_unique().
 */

#include <stdbool.h>
#include <stdint.h>

#include <linux/kdbus.h>

#include "bus.h"
#include "match-rule.h"
#include "message-internal.h"

#define ALIGN8(x)               (((x) + 7) & ~(uint64_t)7)
#define ITEM_HEADER_SIZE        16
#define MAX_PAYLOAD_VEC         0x200000ULL     /* KDBUS_MSG_MAX_PAYLOAD_VEC_SIZE */
#define MAX_FDS                 16              /* KDBUS_CONN_MAX_FDS_PER_USER */
#define MAX_PARTS               64              /* payload items accepted on receive */
#define ITEM_NEXT(i)            ((struct kdbus_item *)((uint8_t *)(i) + ALIGN8((i)->size)))

enum slot_type {
        SLOT_CALL,
        SLOT_MATCH,
        SLOT_OBJECT,
        SLOT_FILTER,
};

struct kdbus_slot {
        struct kdbus_bus *bus;
        enum slot_type type;
        kdbus_message_handler_t handler;
        void *userdata;
        bool floating;
        bool dead;
        bool driver_match;              /* added through the driver's AddMatch */
        struct kdbus_slot *next;
        /* SLOT_CALL */
        uint32_t serial;
        struct kdbus_message *call;
        /* SLOT_MATCH */
        struct kdbus_match_rule *rule;
        uint64_t cookie;
        bool kernel_entries;
        /* SLOT_OBJECT */
        char *path;
};

struct local_item {
        struct kdbus_message *m;
        bool from_driver;
        struct local_item *next;
};

struct kdbus_bus {
        unsigned int n_ref;
        int fd;
        uint8_t *pool;
        uint64_t pool_size;
        bool started;

        /* settings */
        char *path;
        char *description;
        uint64_t pool_size_req;
        bool accept_fd;
        bool external_bodies;           /* kdbus_bus_set_external_bodies */
        bool monitor;
        bool name_signals;
        uint64_t attach_recv;           /* what the kernel attaches for us */
        uint64_t attach_user;           /* kdbus_bus_set_attach_recv() */
        bool names_needed;              /* a match rule on a well-known sender */
        uint64_t timeout_usec;
        /* faked identity (kdbus_bus_set_faked_identity) */
        bool faked;
        uint32_t fake_uid, fake_gid, fake_pid;
        char *fake_seclabel;
        /* forwarding mode (kdbus_bus_set_forward) */
        kdbus_forward_handler_t forward;
        void *forward_userdata;

        /* from HELLO */
        uint64_t id;
        char unique[32];
        size_t unique_len;
        uint8_t id128[16];
        uint64_t bus_flags;
        uint64_t bloom_size;
        uint64_t bloom_n_hash;

        /* names checked before: compared, not checked again */
        struct message_name_cache names_checked;
        /* the unique name of the last message's sender (src_id 0: none) */
        uint64_t last_src_id;
        char last_src[24];
        size_t last_src_len;

        uint32_t serial;
        uint64_t match_cookie;
        struct kdbus_slot *slots;
        struct kdbus_slot *graveyard;
        unsigned int dispatch_depth;
        struct local_item *local_head, *local_tail;
        char **names;                   /* primary names we know we own */
        size_t n_names;
        const struct kdbus_metadata *current_md;
        uint64_t n_invalid;
        uint64_t n_dropped;
};

/* bus.c helpers for driver.c */
int bus_strv_push(char ***strv, size_t *n, const char *s);
void bus_strv_remove(char **strv, size_t *n, const char *s);
bool bus_strv_contains(char *const *strv, size_t n, const char *s);
bool bus_name_ownable(const char *name);
int bus_resolve_owner(struct kdbus_bus *bus, const char *name, uint64_t attach_flags,
                      struct kdbus_metadata *md);
int bus_read_machine_id(char out[33]);
int bus_add_match_rule(struct kdbus_bus *bus, struct kdbus_slot **slot,
                       struct kdbus_match_rule *rule, kdbus_message_handler_t handler,
                       void *userdata, bool driver_match);
/* StartServiceByName: wake an activator and wait for the name's owner */
int bus_driver_activate(struct kdbus_bus *bus, const char *name, uint64_t timeout_usec);

/* driver.c */
int bus_driver_seal(struct kdbus_message *m, int r, const char *dest,
                    struct kdbus_message **ret);
int bus_driver_call(struct kdbus_bus *bus, struct kdbus_message *call, struct kdbus_message **reply);
/* also kdbus-proxy's, for the credentials of its own clients */
size_t bus_groups_sort_unique(uint32_t *groups, size_t n);
