// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the message parser: arbitrary bytes are parsed as a
 * D-Bus message; whatever parses must survive every round trip unchanged:
 *
 *   - its bytes parse again to the same bytes;
 *   - they equal the input unless unknown header fields were dropped (then
 *     they are strictly shorter);
 *   - re-marshalling the body value by value (kdbus_message_convert) in the
 *     same byte order reproduces the bytes exactly (the marshalling is
 *     canonical), and a trip through the other byte order does too;
 *   - a connection's parse (message_parse_cached(), with the names, the
 *     last header's fields and the objects a connection keeps, carried
 *     from input to input as bus.c carries them from message to message)
 *     judges every input as kdbus_message_parse() does, with the same
 *     bytes and fields.
 *
 * Any violation calls __builtin_trap() so libFuzzer records the input.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "message-internal.h"
#include "message.h"

/* what a connection keeps across messages, here across inputs */
static struct message_name_cache conn;

static void check(int cond)
{
        if (!cond)
                __builtin_trap();
}

static void same_data(struct kdbus_message *a, struct kdbus_message *b)
{
        const void *da, *db;
        size_t na, nb;

        check(kdbus_message_get_data(a, &da, &na) == 0);
        check(kdbus_message_get_data(b, &db, &nb) == 0);
        check(na == nb && memcmp(da, db, na) == 0);
}

static int same_string(const char *a, const char *b)
{
        return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void same_fields(const struct kdbus_message *a, const struct kdbus_message *b)
{
        uint32_t ra = 0, rb = 0;

        check(kdbus_message_get_reply_serial(a, &ra) == kdbus_message_get_reply_serial(b, &rb));
        check(ra == rb && kdbus_message_get_unix_fds(a) == kdbus_message_get_unix_fds(b));
        check(same_string(kdbus_message_get_path(a), kdbus_message_get_path(b)));
        check(same_string(kdbus_message_get_interface(a), kdbus_message_get_interface(b)));
        check(same_string(kdbus_message_get_member(a), kdbus_message_get_member(b)));
        check(same_string(kdbus_message_get_error_name(a), kdbus_message_get_error_name(b)));
        check(same_string(kdbus_message_get_destination(a), kdbus_message_get_destination(b)));
        check(same_string(kdbus_message_get_sender(a), kdbus_message_get_sender(b)));
        check(same_string(kdbus_message_get_signature(a), kdbus_message_get_signature(b)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct kdbus_message *m = NULL, *again = NULL, *same = NULL, *other = NULL, *back = NULL;
        const void *bytes;
        size_t n;
        char endian, foreign;

        struct kdbus_message *c = NULL;
        int r;

        r = kdbus_message_parse(&m, data, size);
        check(message_parse_cached(&c, data, size, &conn) == r);
        if (r == 0) {
                same_data(m, c);
                same_fields(m, c);
        }
        message_unref_keep(c, &conn);
        if (r < 0)
                return 0;

        check(kdbus_message_get_data(m, &bytes, &n) == 0);
        check(n <= size);
        if (n == size)
                check(memcmp(bytes, data, size) == 0);

        check(kdbus_message_parse(&again, bytes, n) == 0);
        same_data(m, again);

        endian = kdbus_message_get_endian(m);
        foreign = endian == 'l' ? 'B' : 'l';
        check(kdbus_message_convert(&same, m, endian) == 0);
        same_data(m, same);
        check(kdbus_message_convert(&other, m, foreign) == 0);
        check(kdbus_message_convert(&back, other, endian) == 0);
        same_data(m, back);
        kdbus_message_unref(again);
        again = NULL;
        check(kdbus_message_get_data(other, &bytes, &n) == 0);
        check(kdbus_message_parse(&again, bytes, n) == 0);
        same_data(other, again);

        /* walking the body by hand must agree with the validator */
        while (kdbus_message_skip(m, NULL) == 0)
                ;
        check(kdbus_message_at_end(m));

        kdbus_message_unref(back);
        kdbus_message_unref(other);
        kdbus_message_unref(same);
        kdbus_message_unref(again);
        kdbus_message_unref(m);
        return 0;
}
