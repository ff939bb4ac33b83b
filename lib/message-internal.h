/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * libkdbus internals of message.c for bus.c: what the library may skip
 * for values it made itself. Not installed.
 */

#include <stddef.h>
#include <stdint.h>

#include "message.h"

/*
 * The last well-known bus name and the last interface name that passed
 * their checks, kept by the caller (a connection): a name with the same
 * bytes is compared instead of checked again. A length of 0 means none.
 * Only well-known bus names are kept; unique ones are short to check.
 */
struct message_name_cache {
        size_t bus_name_len;
        size_t interface_len;
        char bus_name[256];
        char interface[256];    /* never org.freedesktop.DBus.Local */
};

/*
 * Unique names a receiver formatted itself from the kernel's ids of one
 * message (":1.<src_id>", ":1.<dst_id>"): valid by construction, so a
 * sender or destination field of the same bytes is compared, not checked.
 * A NULL name is none.
 */
struct message_known_names {
        const char *unique[2];
        size_t unique_len[2];
};

/* kdbus_message_parse() with @cache for the destination, sender and interface */
int message_parse_cached(struct kdbus_message **ret, const void *data, size_t size,
                         struct message_name_cache *cache);
/* the same with @known (may be NULL) for the sender and destination */
int message_parse_received(struct kdbus_message **ret, const void *data, size_t size,
                           struct message_name_cache *cache,
                           const struct message_known_names *known);

/*
 * kdbus_message_new_method_call() with @cache for the destination and
 * interface, and kdbus_message_new_method_return(): the new message's
 * fields point at the caller's strings (@call's sender) instead of copies,
 * so the caller seals the message, which copies them into its bytes, or
 * drops it before those strings go away.
 */
int message_new_method_call_borrowed(struct kdbus_message **ret, const char *destination,
                                     const char *path, const char *interface, const char *member,
                                     struct message_name_cache *cache);
int message_new_method_return_borrowed(struct kdbus_message **ret,
                                       const struct kdbus_message *call);

/*
 * kdbus_message_seal() with @sender the connection's own unique name
 * (":1.<id>" from HELLO) of @own_unique_len bytes, which is valid by
 * construction and not checked (nor measured) again on every message sent.
 */
int message_seal_own(struct kdbus_message *m, uint32_t serial, const char *own_unique,
                     size_t own_unique_len);

/* the length of the string field @code, which is present (a getter returned it) */
size_t message_field_len(const struct kdbus_message *m, uint8_t code);
