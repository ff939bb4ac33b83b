/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * libkdbus internals of message.c for bus.c: what the library may skip
 * for values it made itself. Not installed.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "message.h"

/*
 * memset(@p, 0, @n) for a struct zeroed per message (@n a constant), as
 * 16-byte stores: GCC makes a memset of a few hundred bytes a rep stos,
 * which costs about one instruction per 8 bytes.
 */
static inline __attribute__((always_inline)) void message_zero(void *p, size_t n)
{
        typedef uint64_t zero_v2 __attribute__((vector_size(16), aligned(1), may_alias));
        zero_v2 *q = p;

#pragma GCC unroll 64
        for (size_t i = 0; i < n / 16; ++i)
                q[i] = (zero_v2){ 0, 0 };
        if (n % 16)
                memset((unsigned char *)p + (n & ~(size_t)15), 0, n % 16);
}

/*
 * The fields of the last received header that the fast parser took whole
 * (every check passed, each field as the marshalling rules write it), as
 * they came: the fields array's bytes in their byte order. A header whose
 * fields array has the same length and bytes, but for the values of its
 * number fields (a REPLY_SERIAL is checked again, UNIX_FDS may be any
 * number), passes the same checks, and its fields lie where the kept
 * one's did. A length of 0 means none; longer arrays are not kept.
 */
#define MESSAGE_FIELDS_CACHE_SIZE 256

struct message_fields_cache {
        uint32_t len;                   /* of the fields array */
        char endian;
        uint8_t n_order;
        uint8_t n_holes;
        uint8_t order[_KDBUS_FIELD_MAX];        /* codes, in header order */
        uint16_t present;                       /* bit per code */
        uint16_t holes[2];              /* offsets of the number values, ascending */
        uint16_t offset[_KDBUS_FIELD_MAX + 1];  /* of each value in the array */
        uint32_t lens[_KDBUS_FIELD_MAX + 1];    /* of each string value (as in the fields) */
        uint8_t bytes[MESSAGE_FIELDS_CACHE_SIZE];
};

/*
 * The header of the last method call message_new_method_call_borrowed()
 * made with a cache and sealed (message_seal_own()), and that of the last
 * reply message_new_method_return_borrowed() made: its bytes up to the
 * body, as message_build() wrote them. A call of the same destination,
 * path, interface and member (compared byte for byte with the kept ones,
 * so they passed their checks before), flags, signature and sender, without
 * descriptors, has the same header but for its serial and body length:
 * it is neither checked nor written field by field again. So has a reply
 * of the same destination, flags, signature and sender (compared when it
 * is sealed) but for its REPLY_SERIAL. A length of 0 means none; longer
 * headers are not kept.
 */
#define MESSAGE_CALL_TEMPLATE_SIZE 512

struct message_call_template {
        uint32_t len;                   /* of the header, with its padding to the body */
        uint32_t gen;                   /* changed with every new header */
        uint8_t flags;
        uint16_t present;                       /* bit per code */
        uint16_t offset[_KDBUS_FIELD_MAX + 1];  /* of each value in bytes (strings, REPLY_SERIAL) */
        uint32_t lens[_KDBUS_FIELD_MAX + 1];    /* of each string value */
        uint8_t bytes[MESSAGE_CALL_TEMPLATE_SIZE];
};

/*
 * The last well-known bus name and the last interface name that passed
 * their checks, kept by the caller (a connection): a name with the same
 * bytes is compared instead of checked again. A length of 0 means none.
 * Only well-known bus names are kept; unique ones are short to check.
 * The fields of the last received header and spare message objects are
 * kept with them: what a connection keeps from one message to the next.
 */
#define MESSAGE_SPARES 2

struct message_name_cache {
        size_t bus_name_len;
        size_t interface_len;
        char bus_name[256];
        char interface[256];    /* never org.freedesktop.DBus.Local */
        struct message_fields_cache fields;     /* of received headers */
        struct message_call_template call;      /* of the calls made */
        struct message_call_template reply;     /* of the replies made */
        /* objects of messages the connection dropped (message_unref_keep()) */
        struct kdbus_message *spares[MESSAGE_SPARES];
        unsigned int n_spares;
};

/*
 * kdbus_message_unref() for the connection of @cache, on its thread: the
 * object of a message left without references is kept for the next
 * message the connection makes or receives (constructors and parsers
 * given @cache), up to MESSAGE_SPARES (one more as the thread's spare, as
 * kdbus_message_unref() keeps it), instead of going back to malloc.
 * message_cache_release() frees the ones kept.
 */
void message_unref_keep(struct kdbus_message *m, struct message_name_cache *cache);
void message_cache_release(struct message_name_cache *cache);
/* whether this thread keeps a dropped message's object (for the tests) */
bool message_thread_spare_held(void);

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
/*
 * the same with @known (may be NULL) for the sender and destination; if
 * @adopt points at @data, a malloc()ed block, the message may take it
 * over instead of copying it (then *@adopt is set to NULL)
 */
int message_parse_received(struct kdbus_message **ret, const void *data, size_t size,
                           struct message_name_cache *cache,
                           const struct message_known_names *known, uint8_t **adopt);

/*
 * kdbus_message_new_method_call() with @cache for the destination and
 * interface and its call template (a call equal to the template's is
 * sealed from it: the message must not change @cache's strings or fields
 * but through the library's setters), and kdbus_message_new_method_return()
 * with @cache's reply template (both take an object @cache kept, if any):
 * the new message's
 * fields point at the caller's strings (@call's sender) instead of copies,
 * so the caller seals the message, which copies them into its bytes, or
 * drops it before those strings go away.
 */
int message_new_method_call_borrowed(struct kdbus_message **ret, const char *destination,
                                     const char *path, const char *interface, const char *member,
                                     struct message_name_cache *cache);
int message_new_method_return_borrowed(struct kdbus_message **ret,
                                       const struct kdbus_message *call,
                                       struct message_name_cache *cache);

/*
 * kdbus_message_seal() with @sender the connection's own unique name
 * (":1.<id>" from HELLO) of @own_unique_len bytes, which is valid by
 * construction and not checked (nor measured) again on every message sent.
 */
int message_seal_own(struct kdbus_message *m, uint32_t serial, const char *own_unique,
                     size_t own_unique_len);

/* the length of the string field @code, which is present (a getter returned it) */
size_t message_field_len(const struct kdbus_message *m, uint8_t code);
