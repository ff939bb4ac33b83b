/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * D-Bus messages in the classic marshalling (libkdbus(3), the D-Bus
 * Specification): build them, seal them into the bytes a kdbus PAYLOAD_VEC
 * carries, and parse such bytes from an untrusted peer with full validation.
 *
 * A message is built (constructor, setters, append), then sealed, which
 * assigns the serial, adds SIGNATURE, UNIX_FDS and SENDER to the header and
 * freezes the body; only sealed messages are read. Header fields are kept
 * in the order they were set (parsed messages: wire order, unknown fields
 * dropped), so the bytes of a parsed message come back unchanged.
 *
 * Errors: EINVAL for bad arguments (names, paths, signatures, UTF-8),
 * ENXIO for a value that does not fit the signature, EPERM for appending
 * to a sealed or reading an unsealed message, EMSGSIZE / E2BIG / ELOOP for
 * the limits of the D-Bus Specification, EBADF for an unusable fd. Parsing
 * fails with EBADMSG for malformed data (plus EILSEQ for bad strings, EMSGSIZE
 * for sizes over the limits, ELOOP for nesting, EPROTONOSUPPORT for an
 * unknown endianness or protocol version).
 *
 * The parser accepts both byte orders because the proxy must read classic
 * big-endian clients; the kdbus receive path additionally drops payloads
 * whose first byte is not 'l' (libkdbus(3)).
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
        KDBUS_MESSAGE_METHOD_CALL       = 1,
        KDBUS_MESSAGE_METHOD_RETURN     = 2,
        KDBUS_MESSAGE_ERROR             = 3,
        KDBUS_MESSAGE_SIGNAL            = 4,
};

enum {
        KDBUS_MESSAGE_NO_REPLY_EXPECTED                 = 0x1,
        KDBUS_MESSAGE_NO_AUTO_START                     = 0x2,
        KDBUS_MESSAGE_ALLOW_INTERACTIVE_AUTHORIZATION   = 0x4,
};

enum {
        KDBUS_FIELD_PATH                = 1,
        KDBUS_FIELD_INTERFACE           = 2,
        KDBUS_FIELD_MEMBER              = 3,
        KDBUS_FIELD_ERROR_NAME          = 4,
        KDBUS_FIELD_REPLY_SERIAL        = 5,
        KDBUS_FIELD_DESTINATION         = 6,
        KDBUS_FIELD_SENDER              = 7,
        KDBUS_FIELD_SIGNATURE           = 8,
        KDBUS_FIELD_UNIX_FDS            = 9,
        _KDBUS_FIELD_MAX                = 9,
};

#define KDBUS_MESSAGE_HEADER_SIZE 16

struct kdbus_message;

int kdbus_message_new_method_call(struct kdbus_message **ret, const char *destination,
                                  const char *path, const char *interface, const char *member);
int kdbus_message_new_signal(struct kdbus_message **ret, const char *path,
                             const char *interface, const char *member);
/* replies to a sealed method call; its SENDER becomes the DESTINATION */
int kdbus_message_new_method_return(struct kdbus_message **ret, const struct kdbus_message *call);
/* @text may be NULL; the body is then empty, otherwise one string */
int kdbus_message_new_error(struct kdbus_message **ret, const struct kdbus_message *call,
                            const char *name, const char *text);
/* parse and validate @size bytes (copied) as one complete message */
int kdbus_message_parse(struct kdbus_message **ret, const void *data, size_t size);
/*
 * The total size of the message starting with the 16 header bytes at @data
 * (for reading streams); EBADMSG / EMSGSIZE / EPROTONOSUPPORT as parse.
 */
int kdbus_message_peek_size(const void *data, size_t size, size_t *total);
/*
 * parse and validate a message whose body stays in a sealed memfd (the
 * message owns @body_fd on success); @header is header and fields padded
 * to 8. Its data is the header only; the read calls read the body's mapping.
 */
int kdbus_message_parse_external(struct kdbus_message **ret, const void *header,
                                 size_t header_size, int body_fd, uint64_t body_start,
                                 size_t body_size);
/* the memfd body of such a message (-ENODATA when the body is in data) */
int kdbus_message_get_external_body(const struct kdbus_message *m, const void **data,
                                    size_t *size, int *fd);
/* a sealed copy re-marshalled in byte order @endian ('l' or 'B') */
int kdbus_message_convert(struct kdbus_message **ret, struct kdbus_message *m, char endian);

struct kdbus_message *kdbus_message_ref(struct kdbus_message *m);
struct kdbus_message *kdbus_message_unref(struct kdbus_message *m);
void kdbus_message_unrefp(struct kdbus_message **m);

/* header */
uint8_t kdbus_message_get_type(const struct kdbus_message *m);
uint8_t kdbus_message_get_flags(const struct kdbus_message *m);
char kdbus_message_get_endian(const struct kdbus_message *m);
uint32_t kdbus_message_get_serial(const struct kdbus_message *m);
int kdbus_message_get_reply_serial(const struct kdbus_message *m, uint32_t *serial);
uint32_t kdbus_message_get_unix_fds(const struct kdbus_message *m);
const char *kdbus_message_get_path(const struct kdbus_message *m);
const char *kdbus_message_get_interface(const struct kdbus_message *m);
const char *kdbus_message_get_member(const struct kdbus_message *m);
const char *kdbus_message_get_error_name(const struct kdbus_message *m);
const char *kdbus_message_get_destination(const struct kdbus_message *m);
const char *kdbus_message_get_sender(const struct kdbus_message *m);
const char *kdbus_message_get_signature(const struct kdbus_message *m); /* never NULL */
bool kdbus_message_is_sealed(const struct kdbus_message *m);
/* header field codes in header order */
size_t kdbus_message_get_fields(const struct kdbus_message *m, uint8_t *codes, size_t n);

int kdbus_message_set_flags(struct kdbus_message *m, uint8_t flags);
/*
 * DESTINATION and SENDER may also be changed on a sealed message: the
 * header is rewritten (receiver-side normalisation, libkdbus(3)) and
 * the body stays as it is; reading restarts at the first value. NULL
 * removes the field.
 */
int kdbus_message_set_destination(struct kdbus_message *m, const char *destination);
int kdbus_message_set_sender(struct kdbus_message *m, const char *sender);

/* give a sealed message another serial (a proxy numbering its driver's messages) */
int kdbus_message_set_serial(struct kdbus_message *m, uint32_t serial);
/* freeze; @sender (may be NULL) is written last, as the bus would */
int kdbus_message_seal(struct kdbus_message *m, uint32_t serial, const char *sender);
/* the bytes of a sealed message, valid while it is referenced and unchanged */
int kdbus_message_get_data(const struct kdbus_message *m, const void **data, size_t *size);
int kdbus_message_get_body(const struct kdbus_message *m, const void **data, size_t *size);

/*
 * Append values per signature (libkdbus(3)): y int, b int,
 * n q i u int / unsigned, x t 64-bit, d double, s o g const char *, h int
 * (duplicated close-on-exec), a<T> an unsigned count then the elements,
 * v a signature string then the value, ( ) and { } the fields in order.
 * On failure nothing is appended.
 */
int kdbus_message_append(struct kdbus_message *m, const char *types, ...);
int kdbus_message_appendv(struct kdbus_message *m, const char *types, va_list ap);
int kdbus_message_append_basic(struct kdbus_message *m, char type, const void *value);
int kdbus_message_append_array(struct kdbus_message *m, char type, const void *ptr, size_t size);
int kdbus_message_append_strv(struct kdbus_message *m, char *const *strv);
int kdbus_message_open_container(struct kdbus_message *m, char type, const char *contents);
int kdbus_message_close_container(struct kdbus_message *m);

/*
 * Read values per signature into pointers: y uint8_t, b int, n int16_t,
 * q uint16_t, i int32_t, u uint32_t, x int64_t, t uint64_t, d double,
 * s o g const char * (into the message), h int (borrowed; EBADF if the fd
 * is missing), a<T> an unsigned count (the array must have exactly that
 * many elements) then the element pointers, v the expected signature then
 * the pointers. Returns 0; ENXIO for another type or too few elements,
 * EBUSY for too many. On failure nothing is consumed.
 */
int kdbus_message_read(struct kdbus_message *m, const char *types, ...);
int kdbus_message_readv(struct kdbus_message *m, const char *types, va_list ap);
/* these return 1 when read or entered, 0 at the end of the container */
int kdbus_message_read_basic(struct kdbus_message *m, char type, void *value);
int kdbus_message_read_array(struct kdbus_message *m, char type, const void **ptr, size_t *size);
int kdbus_message_enter_container(struct kdbus_message *m, char type, const char *contents);
int kdbus_message_exit_container(struct kdbus_message *m);
int kdbus_message_peek_type(struct kdbus_message *m, char *type, const char **contents);
/* skip values of @types (NULL: one value of whatever type comes next) */
int kdbus_message_skip(struct kdbus_message *m, const char *types);
int kdbus_message_rewind(struct kdbus_message *m);
bool kdbus_message_at_end(struct kdbus_message *m);

/* descriptors that arrived with a received message; taken over on success */
int kdbus_message_attach_fds(struct kdbus_message *m, int *fds, size_t n_fds);
/* the attached descriptors in index order (borrowed); returns their number */
size_t kdbus_message_get_fds(const struct kdbus_message *m, const int **fds);
/* take the attached descriptors over (*fds malloc'ed, NULL when none) */
int kdbus_message_steal_fds(struct kdbus_message *m, int **fds, size_t *n_fds);
