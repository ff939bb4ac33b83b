/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Classic D-Bus marshalling (the D-Bus Specification): a typed writer and a
 * typed, validating reader for values in either byte order. Offsets, and thus
 * alignment, count from the start of the buffer, which is the start of the
 * message (header) or of the body (the body starts 8-aligned).
 *
 * Both sides keep a stack of open containers with the signature of their
 * contents, so a value that does not fit the signature is refused (ENXIO)
 * and limits are enforced as values are written (EMSGSIZE for arrays over
 * 64 MiB and buffers over 128 MiB, ELOOP for nesting beyond 32 arrays, 32
 * structs or 64 containers in total, E2BIG for signatures over 255 bytes).
 *
 * Reader errors for malformed data: EBADMSG (structure: padding, lengths,
 * truncation, booleans, fd indexes, invalid paths or signatures), EILSEQ
 * (strings that are not UTF-8 or contain NUL), EMSGSIZE (array length over
 * 64 MiB), ELOOP (nesting limits).
 *
 * Basic values are passed by pointer: y uint8_t, b int (written as 0/1),
 * n int16_t, q uint16_t, i int32_t, u uint32_t, x int64_t, t uint64_t,
 * d double, h uint32_t (an index into the message's fd array); for s, o
 * and g the writer takes the const char * itself and the reader stores a
 * const char * pointing into the buffer.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "signature.h"

#define KDBUS_LITTLE_ENDIAN     'l'
#define KDBUS_BIG_ENDIAN        'B'
#define KDBUS_NATIVE_ENDIAN     (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 'l' : 'B')

#define KDBUS_ARRAY_MAX_SIZE    (64U * 1024U * 1024U)   /* 2^26 */
#define KDBUS_MESSAGE_MAX_SIZE  (128U * 1024U * 1024U)  /* 2^27 */
#define KDBUS_CONTAINER_DEPTH_MAX 64

/* syntax checks of the D-Bus Specification */
bool kdbus_utf8_valid(const char *s, size_t len);
bool kdbus_object_path_valid(const char *s, size_t len);
bool kdbus_bus_name_valid(const char *s);
bool kdbus_interface_name_valid(const char *s);  /* also error names */
bool kdbus_member_name_valid(const char *s);
/* the same for @len bytes that need no NUL (a NUL among them is invalid) */
bool kdbus_bus_name_valid_len(const char *s, size_t len);
bool kdbus_interface_name_valid_len(const char *s, size_t len);
bool kdbus_member_name_valid_len(const char *s, size_t len);

struct kdbus_frame {
        char type;              /* 0 (outermost), 'a', '(', '{' or 'v' */
        char signature[KDBUS_SIGNATURE_MAX + 1]; /* of the contents */
        size_t sig_len;
        size_t sig_pos;         /* next type in signature (not for 'a') */
        size_t begin;           /* 'a': offset of the first element */
        size_t end;             /* reader: limit of this container's data */
        size_t length_offset;   /* writer 'a': offset of the length word */
        unsigned int n_arrays;  /* arrays enclosing the contents */
        unsigned int n_structs; /* structs and dict entries enclosing them */
};

/* a small body is written into the writer itself (no allocation) */
#define KDBUS_WRITER_INLINE_SIZE 128

struct kdbus_writer {
        uint8_t *data;          /* inline_data until it outgrows it */
        size_t size;
        size_t allocated;
        bool swap;              /* byte order differs from the host's */
        char endian;
        unsigned int depth;     /* open containers; frames[depth] is current */
        struct kdbus_frame *frames; /* frame0 until a container is opened */
        unsigned int n_frames;  /* allocated */
        struct kdbus_frame frame0; /* no allocation for a flat body; never copy a writer */
        uint8_t inline_data[KDBUS_WRITER_INLINE_SIZE];
};

int kdbus_writer_init(struct kdbus_writer *w, char endian);
void kdbus_writer_deinit(struct kdbus_writer *w);
/* the signature of everything written at the outermost level */
const char *kdbus_writer_signature(const struct kdbus_writer *w);
int kdbus_writer_append_basic(struct kdbus_writer *w, char type, const void *value);
int kdbus_writer_open(struct kdbus_writer *w, char type, const char *contents);
int kdbus_writer_close(struct kdbus_writer *w);
/* an array of fixed-size elements (not h) from host-order memory */
int kdbus_writer_append_array(struct kdbus_writer *w, char type, const void *ptr, size_t size);
/* raw access for the message header: zero padding and unchecked bytes */
int kdbus_writer_pad(struct kdbus_writer *w, size_t align);
int kdbus_writer_put_raw(struct kdbus_writer *w, const void *data, size_t size);

/*
 * Undo everything written after a save (nothing above the saved depth).
 * The saved container must not have been closed in between: its frame is
 * restored only in what writing into it changes.
 */
struct kdbus_writer_state {
        size_t size;
        unsigned int depth;
        size_t sig_len;
        size_t sig_pos;
};

void kdbus_writer_save(const struct kdbus_writer *w, struct kdbus_writer_state *s);
void kdbus_writer_restore(struct kdbus_writer *w, const struct kdbus_writer_state *s);

/* like kdbus_writer_state: the saved container must not have been left in between */
struct kdbus_reader_state {
        size_t pos;
        unsigned int depth;
        size_t sig_pos;
};

struct kdbus_reader {
        const uint8_t *data;
        size_t size;
        bool swap;
        char endian;
        size_t pos;
        uint32_t n_fds;         /* h values must be below this */
        unsigned int depth;
        struct kdbus_frame *frames; /* frame0 until a container is entered */
        unsigned int n_frames;
        bool validated;         /* kdbus_reader_validate() passed: strings are known good */
        char *peek;             /* kdbus_reader_peek()'s contents, allocated on first use */
        struct kdbus_frame frame0; /* never copy a reader */
};

/*
 * Read the values of @signature from @data, starting at offset @pos and
 * ending at @size. The reader does not copy @data.
 */
int kdbus_reader_init(struct kdbus_reader *r, const void *data, size_t size, size_t pos,
                      char endian, const char *signature, uint32_t n_fds);
/*
 * The same for a @signature of @sig_len bytes that already passed
 * kdbus_signature_validate_nested(signature, sig_len, false, 0, 0): a
 * received message's, checked with its header.
 */
int kdbus_reader_init_checked(struct kdbus_reader *r, const void *data, size_t size, size_t pos,
                              char endian, const char *signature, size_t sig_len, uint32_t n_fds);
void kdbus_reader_deinit(struct kdbus_reader *r);
/* 1 and the next type (contents: valid until the next call), 0 at the end */
int kdbus_reader_peek(struct kdbus_reader *r, char *type, const char **contents);
/* 1 when read, 0 at the end of the container, ENXIO for another type */
int kdbus_reader_read_basic(struct kdbus_reader *r, char type, void *value);
int kdbus_reader_enter(struct kdbus_reader *r, char type, const char *contents);
/* EBUSY when a struct, dict entry or variant was not read completely */
int kdbus_reader_exit(struct kdbus_reader *r);
/* skip and validate one complete value: 1, or 0 at the end */
int kdbus_reader_skip(struct kdbus_reader *r);
/* all values left in the current container, which must be the outermost */
int kdbus_reader_validate(struct kdbus_reader *r);
/* array of fixed-size elements, in place; EOPNOTSUPP if not host order */
int kdbus_reader_read_array(struct kdbus_reader *r, char type, const void **ptr, size_t *size);
bool kdbus_reader_at_end(const struct kdbus_reader *r);
void kdbus_reader_save(const struct kdbus_reader *r, struct kdbus_reader_state *s);
void kdbus_reader_restore(struct kdbus_reader *r, const struct kdbus_reader_state *s);
