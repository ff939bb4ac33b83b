// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * D-Bus messages: construction, sealing into wire bytes, validated parsing.
 *
 * A message owns its header fields as C strings (kept in header order), its
 * body, and its descriptors. While it is built the body lives in a writer;
 * sealing (or parsing) produces m->data, the complete message bytes, which
 * are never modified afterwards except by rewriting the header as a whole
 * (set_sender / set_destination on a sealed message). A reader over
 * m->data serves the read calls; its strings point into m->data. It is
 * made on the first read; a parsed message keeps the reader that
 * validated its body, and a parsed header already in the form sealing
 * writes is kept as it came instead of being written again.
 *
 * Untrusted bytes are validated completely in kdbus_message_parse() before
 * a message object exists, so later reads cannot meet malformed data; they
 * still check every bound, because a check is cheaper than a doubt.
 */

#define _GNU_SOURCE     /* memfd seals */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "marshal.h"
#include "message-internal.h"
#include "message.h"
#include "signature.h"
#include "thread-cache.h"

#define LOCAL_PATH      "/org/freedesktop/DBus/Local"
#define LOCAL_INTERFACE "org.freedesktop.DBus.Local"

struct message_fields {
        char *strings[_KDBUS_FIELD_MAX + 1];    /* string-typed fields, by code */
        uint32_t lens[_KDBUS_FIELD_MAX + 1];    /* their lengths: sealing measures none */
        uint16_t borrowed;      /* bit per code: the string is not the field's own */
        uint32_t reply_serial;
        uint32_t unix_fds;
        uint8_t order[_KDBUS_FIELD_MAX];        /* codes present, in header order */
        uint8_t n_order;
        uint16_t present;       /* bit per code in order[]: a test, not a search */
};

struct kdbus_message {
        unsigned int n_ref;
        bool sealed;
        char endian;
        uint8_t type;
        uint8_t flags;
        uint32_t serial;
        uint32_t tmpl_gen;      /* of tmpl when the constructor's names were its, else 0 */
        struct message_fields fields;

        char *strings;                  /* the constructor's fields (message_set_strings()) */
        bool strings_owned;             /* strings is an allocation, not the tail */
        int *fds;                       /* owned, in index order */
        size_t n_fds;

        uint8_t *data;                  /* once sealed: the whole message */
        size_t size;
        size_t body_offset;
        bool has_writer;                /* body: the message is being built */
        bool has_reader;                /* reader: sealed, and read */

        /* made by message_new_method_call/return_borrowed(): its cache's template */
        struct message_call_template *tmpl;

        /*
         * A body outside data (kdbus_message_parse_external): data holds
         * the header only, the body is a read-only mapping of a sealed memfd.
         */
        bool has_ext;
        int ext_fd;
        void *ext_map;
        size_t ext_map_size;
        const uint8_t *ext_body;
        size_t ext_size;

        /*
         * Last: message_new() leaves them to kdbus_writer_init() and
         * kdbus_reader_init(). A message is built through its writer and
         * read, once sealed, through its reader: never both at a time, so
         * they share the memory (the object stays small enough for
         * malloc's per-thread cache with each one's first frame inside).
         */
        union {
                struct kdbus_writer body;       /* has_writer */
                struct kdbus_reader reader;     /* has_reader */
        };

        /*
         * The rest of the object's allocation (MESSAGE_ALLOC_SIZE): the
         * bytes of a small message, so that they need no allocation of
         * their own (message_bytes_alloc()), or before sealing the
         * constructor's strings (message_set_strings()).
         */
        uint8_t tail[];
};

/*
 * glibc's per-thread cache serves requests up to 1032 bytes as fast as
 * small ones: every message object takes 1024, and what its members leave
 * holds the bytes of a message that fits.
 */
#define MESSAGE_ALLOC_SIZE      1024
#define MESSAGE_TAIL_SIZE       (MESSAGE_ALLOC_SIZE - offsetof(struct kdbus_message, tail))
_Static_assert(offsetof(struct kdbus_message, tail) <= MESSAGE_ALLOC_SIZE - 256,
               "a message object leaves too little room for the bytes of a small message");

static char field_type(uint8_t code)
{
        static const char types[_KDBUS_FIELD_MAX + 1] = {
                [KDBUS_FIELD_PATH] = 'o',
                [KDBUS_FIELD_INTERFACE] = 's',
                [KDBUS_FIELD_MEMBER] = 's',
                [KDBUS_FIELD_ERROR_NAME] = 's',
                [KDBUS_FIELD_REPLY_SERIAL] = 'u',
                [KDBUS_FIELD_DESTINATION] = 's',
                [KDBUS_FIELD_SENDER] = 's',
                [KDBUS_FIELD_SIGNATURE] = 'g',
                [KDBUS_FIELD_UNIX_FDS] = 'u',
        };

        return code <= _KDBUS_FIELD_MAX ? types[code] : 0;
}

static bool field_present(const struct message_fields *f, uint8_t code)
{
        return f->present & (1U << code);
}

static void field_add(struct message_fields *f, uint8_t code)
{
        if (!field_present(f, code)) {
                f->order[f->n_order++] = code;
                f->present |= 1U << code;
        }
}

static void field_remove(struct message_fields *f, uint8_t code)
{
        uint8_t *p;

        if (!field_present(f, code))
                return;
        f->present &= ~(1U << code);
        p = memchr(f->order, code, f->n_order);
        memmove(p, p + 1, f->n_order - (size_t)(p - f->order) - 1);
        --f->n_order;
}

static void field_drop_string(struct message_fields *f, uint8_t code)
{
        if (f->strings[code] && !(f->borrowed & (1U << code)))
                free(f->strings[code]);
        f->borrowed &= ~(1U << code);
        f->strings[code] = NULL;
}

/* set (copying value) or, with NULL, remove a string field */
static int field_set_string(struct message_fields *f, uint8_t code, const char *value)
{
        size_t len = 0;
        char *s = NULL;

        if (value) {
                len = strlen(value);
                if (len > UINT32_MAX)
                        return -EMSGSIZE;
                s = malloc(len + 1);
                if (!s)
                        return -ENOMEM;
                memcpy(s, value, len + 1);
        }
        field_drop_string(f, code);
        f->strings[code] = s;
        f->lens[code] = (uint32_t)len;
        if (s)
                field_add(f, code);
        else
                field_remove(f, code);
        return 0;
}

/*
 * Add a string field the message does not have yet, set to @value without
 * a copy: @value lives in memory the message owns (its bytes, its
 * constructor's strings) or, until sealing, in the caller's. Whatever
 * replaces the bytes replaces the fields first (fields_copy(),
 * message_build()).
 */
static void field_put_new(struct message_fields *f, uint8_t code, const char *value, size_t len)
{
        f->strings[code] = (char *)value;
        f->lens[code] = (uint32_t)len;
        f->borrowed |= 1U << code;
        f->order[f->n_order++] = code;
        f->present |= 1U << code;
}

/* the SIGNATURE field; a message without one has an empty body */
static const char *field_signature(const struct message_fields *f)
{
        return f->strings[KDBUS_FIELD_SIGNATURE] ? f->strings[KDBUS_FIELD_SIGNATURE] : "";
}

/* the codes of the string-typed fields (the others are numbers) */
#define STRING_FIELDS   ((1U << KDBUS_FIELD_PATH) | (1U << KDBUS_FIELD_INTERFACE) | \
                         (1U << KDBUS_FIELD_MEMBER) | (1U << KDBUS_FIELD_ERROR_NAME) | \
                         (1U << KDBUS_FIELD_DESTINATION) | (1U << KDBUS_FIELD_SENDER) | \
                         (1U << KDBUS_FIELD_SIGNATURE))

/*
 * Free the strings the fields own. A string field is set exactly when it
 * is present, and most messages own none (they point into their bytes):
 * then the presence bits say so without a look at the strings.
 */
static void fields_release(struct message_fields *f)
{
        uint8_t i;

        if (!(f->present & ~f->borrowed & STRING_FIELDS))
                return;
        for (i = 0; i <= _KDBUS_FIELD_MAX; ++i)
                if (f->strings[i] && !(f->borrowed & (1U << i)))
                        free(f->strings[i]);
}

static void fields_free(struct message_fields *f)
{
        fields_release(f);
        memset(f, 0, sizeof(*f));
}

static int fields_copy(struct message_fields *dst, const struct message_fields *src)
{
        size_t i;

        *dst = *src;
        dst->borrowed = 0;
        memset(dst->strings, 0, sizeof(dst->strings));
        for (i = 0; i <= _KDBUS_FIELD_MAX; ++i) {
                if (!src->strings[i])
                        continue;
                dst->strings[i] = strdup(src->strings[i]);
                if (!dst->strings[i]) {
                        fields_free(dst);
                        return -ENOMEM;
                }
        }
        return 0;
}

/*
 * Once sealed the body and the fields are in m->data: the writer's memory
 * becomes the reader's, and the constructor's strings are not needed.
 */
static void message_drop_writer(struct kdbus_message *m)
{
        if (m->has_writer)
                kdbus_writer_deinit(&m->body);
        m->has_writer = false;
        if (!m->strings_owned)
                m->strings = NULL;
}

static void close_fds(int *fds, size_t n)
{
        size_t i;

        for (i = 0; i < n; ++i)
                if (fds[i] >= 0)
                        close(fds[i]);
}

/*
 * Memory for @size bytes of message data: the object's tail when they fit
 * and the tail is not in use (the current data or the constructor's
 * strings, either the source of a copy into the new bytes), else an
 * allocation; message_bytes_free() releases.
 */
static uint8_t *message_bytes_alloc(struct kdbus_message *m, size_t size)
{
        if (size <= MESSAGE_TAIL_SIZE && m->data != m->tail && m->strings != (char *)m->tail)
                return m->tail;
        return thread_cache_get(size, NULL);
}

static void message_bytes_free(struct kdbus_message *m, uint8_t *data)
{
        if (data != m->tail)
                thread_cache_put(data);
}

/*
 * A kept object (a connection's spares, the thread's spare) is poisoned for
 * AddressSanitizer while it waits: a use of a dropped message is still
 * reported, as it would be after free().
 */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define SPARE_POISON(m)         ASAN_POISON_MEMORY_REGION((m), MESSAGE_ALLOC_SIZE)
#define SPARE_UNPOISON(m)       ASAN_UNPOISON_MEMORY_REGION((m), MESSAGE_ALLOC_SIZE)
#else
#define SPARE_POISON(m)         ((void)(m))
#define SPARE_UNPOISON(m)       ((void)(m))
#endif

/* keep the object of @m (released) for this thread's next message, or free it */
static void thread_spare_keep(struct kdbus_message *m)
{
        if (thread_cache_keep_spare(m))
                SPARE_POISON(m);
        else
                free(m);
}

bool message_thread_spare_held(void)
{
        return thread_cache_has_spare();
}

/*
 * @with_writer: a message to build (parsed ones have no body writer); its
 * object is one the connection of @cache (may be NULL) kept, or the
 * thread's spare, if any.
 */
static int message_new(struct kdbus_message **ret, uint8_t type, char endian, bool with_writer,
                       struct message_name_cache *cache)
{
        struct kdbus_message *m;
        int r = 0;

        /*
         * Not calloc(): glibc serves it past the per-thread cache, and the
         * reader (half the object) is initialised when it is made.
         */
        if (cache && cache->n_spares) {
                m = cache->spares[--cache->n_spares];
                SPARE_UNPOISON(m);
        } else if ((m = thread_cache_take_spare())) {
                SPARE_UNPOISON(m);
        } else {
                m = malloc(MESSAGE_ALLOC_SIZE);
                if (!m)
                        return -ENOMEM;
        }
        message_zero(m, offsetof(struct kdbus_message, body));
        m->n_ref = 1;
        m->type = type;
        m->endian = endian;
        if (with_writer)
                r = kdbus_writer_init(&m->body, endian);
        if (r < 0) {
                free(m);
                return r;
        }
        m->has_writer = with_writer;
        *ret = m;
        return 0;
}

/*
 * The string fields a constructor sets on a new message (NULL values
 * skipped; @lens are their lengths), in one allocation the message owns
 * instead of one per field; the fields borrow them until sealing points
 * them into the message's bytes. With @borrow the fields point at @values themselves
 * (message-internal.h: the caller seals or drops the message before they
 * go away).
 */
static int message_set_strings(struct kdbus_message *m, const uint8_t *codes,
                               const char *const *values, const size_t *lens, size_t n,
                               bool borrow)
{
        size_t i, total = 0;
        char *p;

        /* a new message: the fields are put, none replaced */
        if (borrow) {
                /* the caller's strings outlive the message until it is sealed */
                for (i = 0; i < n; ++i)
                        if (values[i])
                                field_put_new(&m->fields, codes[i], values[i], lens[i]);
                return 0;
        }

        for (i = 0; i < n; ++i)
                total += values[i] ? lens[i] + 1 : 0;
        if (total <= MESSAGE_TAIL_SIZE && !m->data) {
                p = (char *)m->tail;
        } else {
                p = malloc(total ? total : 1);
                if (!p)
                        return -ENOMEM;
                m->strings_owned = true;
        }
        m->strings = p;
        for (i = 0; i < n; ++i) {
                if (!values[i])
                        continue;
                memcpy(p, values[i], lens[i] + 1);
                field_put_new(&m->fields, codes[i], p, lens[i]);
                p += lens[i] + 1;
        }
        return 0;
}

struct kdbus_message *kdbus_message_ref(struct kdbus_message *m)
{
        if (m)
                ++m->n_ref;
        return m;
}

/* what a message without references holds, but its object */
static void message_release(struct kdbus_message *m)
{
        fields_release(&m->fields);
        if (m->strings_owned)
                free(m->strings);
        if (m->fds) {
                close_fds(m->fds, m->n_fds);
                free(m->fds);
        }
        message_drop_writer(m);
        if (m->has_reader)
                kdbus_reader_deinit(&m->reader);
        if (m->has_ext) {
                munmap(m->ext_map, m->ext_map_size);
                close(m->ext_fd);
        }
        message_bytes_free(m, m->data);
}

struct kdbus_message *kdbus_message_unref(struct kdbus_message *m)
{
        if (!m || --m->n_ref > 0)
                return NULL;
        message_release(m);
        thread_spare_keep(m);
        return NULL;
}

void message_unref_keep(struct kdbus_message *m, struct message_name_cache *cache)
{
        if (!m || --m->n_ref > 0)
                return;
        message_release(m);
        if (cache->n_spares < MESSAGE_SPARES) {
                SPARE_POISON(m);
                cache->spares[cache->n_spares++] = m;
        } else {
                thread_spare_keep(m);
        }
}

void message_cache_release(struct message_name_cache *cache)
{
        while (cache->n_spares)
                free(cache->spares[--cache->n_spares]);
}

void kdbus_message_unrefp(struct kdbus_message **m)
{
        kdbus_message_unref(*m);
}

static void message_freep(struct kdbus_message **m)
{
        kdbus_message_unref(*m);
}

#define _cleanup_message_ __attribute__((cleanup(message_freep)))

/* one store (and a byte swap for the other order), not four byte stores */
static void put_u32(uint8_t *p, uint32_t v, char endian)
{
        if (endian != KDBUS_NATIVE_ENDIAN)
                v = __builtin_bswap32(v);
        memcpy(p, &v, 4);
}

/*
 * The end of field @code's (yv) struct starting at the 8-aligned @pos;
 * @len is the length of a string value.
 */
static size_t field_end(uint8_t code, size_t len, size_t pos)
{
        char type = field_type(code);

        /* code, variant signature (length, type, NUL), then the value */
        pos += 4;
        if (type == 'u')
                return pos + 4;
        if (type == 'g')
                return pos + 1 + len + 1;
        return pos + 4 + len + 1;
}

/*
 * Make the bytes of the current fields and @body the message's data
 * (@body may point into the old data). The header is written directly,
 * not through a writer: every field was validated when it was set, and
 * the bytes are those the marshalling rules give (the writer's and
 * kdbus_message_parse()'s), each (yv) struct 8-aligned, padding zero.
 */
static int message_build(struct kdbus_message *m, const void *body, size_t body_size)
{
        struct message_fields *f = &m->fields;
        size_t i, pos = KDBUS_MESSAGE_HEADER_SIZE, array_len, body_offset, size;
        uint8_t *data, *p;

        if (body_size + m->ext_size > KDBUS_MESSAGE_MAX_SIZE)
                return -EMSGSIZE;
        for (i = 0; i < f->n_order; ++i) {
                uint8_t code = f->order[i];

                pos = field_end(code, f->lens[code], (pos + 7) & ~(size_t)7);
        }
        array_len = pos - KDBUS_MESSAGE_HEADER_SIZE;
        body_offset = (pos + 7) & ~(size_t)7;
        if (array_len > KDBUS_ARRAY_MAX_SIZE ||
            body_size + m->ext_size > KDBUS_MESSAGE_MAX_SIZE - body_offset)
                return -EMSGSIZE;
        size = body_offset + body_size;
        /* the body is copied over; only the header's padding needs zeroes */
        data = message_bytes_alloc(m, body_offset + (body_size ? body_size : 1));
        if (!data)
                return -ENOMEM;
        memset(data, 0, body_offset);

        data[0] = (uint8_t)m->endian;
        data[1] = m->type;
        data[2] = m->flags;
        data[3] = 1;    /* protocol version */
        put_u32(data + 4, (uint32_t)(body_size + m->ext_size), m->endian);
        put_u32(data + 8, m->serial, m->endian);
        put_u32(data + 12, (uint32_t)array_len, m->endian);
        pos = KDBUS_MESSAGE_HEADER_SIZE;
        for (i = 0; i < f->n_order; ++i) {
                uint8_t code = f->order[i];
                char type = field_type(code);
                uint32_t len = f->lens[code];

                pos = (pos + 7) & ~(size_t)7;
                p = data + pos;
                /* code, and the variant's signature: length 1, the type, NUL (zeroed) */
                p[0] = code;
                p[1] = 1;
                p[2] = (uint8_t)type;
                if (type == 'u') {
                        put_u32(p + 4, code == KDBUS_FIELD_REPLY_SERIAL ? f->reply_serial
                                                                        : f->unix_fds, m->endian);
                        pos += 8;
                        continue;
                }
                if (type == 'g') {
                        p[4] = (uint8_t)len;
                        p += 5;
                } else {
                        put_u32(p + 4, len, m->endian);
                        p += 8;
                }
                memcpy(p, f->strings[code], len);
                pos = (size_t)(p - data) + len + 1;
                /* from now on the field is its bytes in the message (it is present already) */
                if (!(f->borrowed & (1U << code)))
                        free(f->strings[code]);
                f->strings[code] = (char *)p;
        }
        f->borrowed |= f->present & STRING_FIELDS;
        if (body_size)
                memcpy(data + body_offset, body, body_size);

        /* the reader is made when the message is first read (message_reader()) */
        if (m->has_reader)
                kdbus_reader_deinit(&m->reader);
        m->has_reader = false;
        message_bytes_free(m, m->data);
        m->data = data;
        m->size = size;
        m->body_offset = body_offset;
        return 0;
}

/*
 * Replace the header fields by @next and rebuild; on failure @next is
 * freed and the message keeps its old fields.
 */
static int message_commit_fields(struct kdbus_message *m, struct message_fields *next,
                                 const void *body, size_t body_size)
{
        struct message_fields old = m->fields;
        int r;

        m->fields = *next;
        r = message_build(m, body, body_size);
        if (r < 0) {
                m->fields = old;
                fields_free(next);
                return r;
        }
        fields_free(&old);
        return 0;
}

/* ---- names checked before (message-internal.h) ---- */

/*
 * A bus name of @len bytes (maybe with a NUL inside, which fails the
 * check): compared with the cache's (which may be NULL), else checked and,
 * when well-known and valid, remembered.
 */
static bool bus_name_ok(const char *s, size_t len, struct message_name_cache *c,
                        const struct message_known_names *known)
{
        if (c && len && len == c->bus_name_len && !memcmp(s, c->bus_name, len))
                return true;
        if (known && len && s[0] == ':')
                for (size_t i = 0; i < 2; ++i)
                        if (known->unique[i] && len == known->unique_len[i] &&
                            !memcmp(s, known->unique[i], len))
                                return true;
        if (!kdbus_bus_name_valid_len(s, len))
                return false;
        if (c && s[0] != ':') {
                memcpy(c->bus_name, s, len);    /* valid: at most 255 bytes */
                c->bus_name[len] = 0;
                c->bus_name_len = len;
        }
        return true;
}

/* the same for an interface name, which must not be the reserved Local one */
static bool interface_ok(const char *s, size_t len, struct message_name_cache *c)
{
        if (c && len && len == c->interface_len && !memcmp(s, c->interface, len))
                return true;
        if (!kdbus_interface_name_valid_len(s, len) ||
            (len == strlen(LOCAL_INTERFACE) && !memcmp(s, LOCAL_INTERFACE, len)))
                return false;
        if (c) {
                memcpy(c->interface, s, len);
                c->interface[len] = 0;
                c->interface_len = len;
        }
        return true;
}

/* ---- construction ---- */

static int message_new_method_call(struct kdbus_message **ret, const char *destination,
                                   const char *path, const char *interface, const char *member,
                                   struct message_name_cache *cache, bool borrow);

int kdbus_message_new_method_call(struct kdbus_message **ret, const char *destination,
                                  const char *path, const char *interface, const char *member)
{
        return message_new_method_call(ret, destination, path, interface, member, NULL, false);
}

int message_new_method_call_borrowed(struct kdbus_message **ret, const char *destination,
                                     const char *path, const char *interface, const char *member,
                                     struct message_name_cache *cache)
{
        return message_new_method_call(ret, destination, path, interface, member, cache, true);
}

static int message_new_method_call(struct kdbus_message **ret, const char *destination,
                                   const char *path, const char *interface, const char *member,
                                   struct message_name_cache *cache, bool borrow)
{
        static const uint8_t codes[] = { KDBUS_FIELD_PATH, KDBUS_FIELD_DESTINATION,
                                         KDBUS_FIELD_INTERFACE, KDBUS_FIELD_MEMBER };
        const char *values[] = { path, destination, interface, member };
        _cleanup_message_ struct kdbus_message *m = NULL;
        size_t lens[4];
        int r;

        if (!ret || !path || !member)
                return -EINVAL;
        if (borrow && cache && cache->call.len) {
                /* the names of the template's call: checked when it was made */
                const struct message_call_template *t = &cache->call;
                size_t i;

                for (i = 0; i < 4; ++i)
                        if (!values[i] ? (t->present & (1U << codes[i])) != 0 :
                            !(t->present & (1U << codes[i])) ||
                            strcmp(values[i], (const char *)t->bytes + t->offset[codes[i]]) != 0)
                                break;
                if (i == 4) {
                        struct message_fields *f;

                        r = message_new(&m, KDBUS_MESSAGE_METHOD_CALL, KDBUS_LITTLE_ENDIAN, true,
                                        cache);
                        if (r < 0)
                                return r;
                        /* message_set_strings() borrowing, with the template's lengths */
                        f = &m->fields;
                        field_put_new(f, KDBUS_FIELD_PATH, path, t->lens[KDBUS_FIELD_PATH]);
                        if (destination)
                                field_put_new(f, KDBUS_FIELD_DESTINATION, destination,
                                              t->lens[KDBUS_FIELD_DESTINATION]);
                        if (interface)
                                field_put_new(f, KDBUS_FIELD_INTERFACE, interface,
                                              t->lens[KDBUS_FIELD_INTERFACE]);
                        field_put_new(f, KDBUS_FIELD_MEMBER, member, t->lens[KDBUS_FIELD_MEMBER]);
                        m->tmpl = &cache->call;
                        m->tmpl_gen = t->gen;
                        *ret = m;
                        m = NULL;
                        return 0;
                }
        }
        /* each length measured once, for the checks and the copies */
        for (size_t i = 0; i < 4; ++i)
                lens[i] = values[i] ? strlen(values[i]) : 0;
        if (!kdbus_object_path_valid(path, lens[0]) || !kdbus_member_name_valid_len(member, lens[3]))
                return -EINVAL;
        if (interface && !interface_ok(interface, lens[2], cache))
                return -EINVAL;         /* also the reserved Local interface */
        if (destination && !bus_name_ok(destination, lens[1], cache, NULL))
                return -EINVAL;
        if (lens[0] == strlen(LOCAL_PATH) && !memcmp(path, LOCAL_PATH, lens[0]))
                return -EINVAL;

        r = message_new(&m, KDBUS_MESSAGE_METHOD_CALL, KDBUS_LITTLE_ENDIAN, true, cache);
        if (r < 0)
                return r;
        r = message_set_strings(m, codes, values, lens, 4, borrow);
        if (r < 0)
                return r;
        if (borrow && cache)
                m->tmpl = &cache->call;         /* its header becomes the template */
        *ret = m;
        m = NULL;
        return 0;
}

int kdbus_message_new_signal(struct kdbus_message **ret, const char *path,
                             const char *interface, const char *member)
{
        static const uint8_t codes[] = { KDBUS_FIELD_PATH, KDBUS_FIELD_INTERFACE,
                                         KDBUS_FIELD_MEMBER };
        const char *values[] = { path, interface, member };
        _cleanup_message_ struct kdbus_message *m = NULL;
        size_t lens[3];
        int r;

        if (!ret || !path || !interface || !member)
                return -EINVAL;
        for (size_t i = 0; i < 3; ++i)
                lens[i] = strlen(values[i]);
        if (!kdbus_object_path_valid(path, lens[0]) ||
            !kdbus_interface_name_valid_len(interface, lens[1]) ||
            !kdbus_member_name_valid_len(member, lens[2]))
                return -EINVAL;
        if (!strcmp(path, LOCAL_PATH) || !strcmp(interface, LOCAL_INTERFACE))
                return -EINVAL;

        r = message_new(&m, KDBUS_MESSAGE_SIGNAL, KDBUS_LITTLE_ENDIAN, true, NULL);
        if (r < 0)
                return r;
        m->flags = KDBUS_MESSAGE_NO_REPLY_EXPECTED;
        r = message_set_strings(m, codes, values, lens, 3, false);
        if (r < 0)
                return r;
        *ret = m;
        m = NULL;
        return 0;
}

static int message_new_reply(struct kdbus_message **ret, const struct kdbus_message *call,
                             uint8_t type, bool borrow, struct message_name_cache *cache)
{
        _cleanup_message_ struct kdbus_message *m = NULL;
        int r;

        if (!ret || !call)
                return -EINVAL;
        if (!call->sealed)
                return -EPERM;
        if (call->type != KDBUS_MESSAGE_METHOD_CALL)
                return -EINVAL;

        r = message_new(&m, type, KDBUS_LITTLE_ENDIAN, true, cache);
        if (r < 0)
                return r;
        /* replies expect no reply themselves (libdbus and sd-bus agree) */
        m->flags = KDBUS_MESSAGE_NO_REPLY_EXPECTED;
        {
                static const uint8_t codes[] = { KDBUS_FIELD_DESTINATION };
                const char *values[] = { call->fields.strings[KDBUS_FIELD_SENDER] };
                size_t lens[] = { call->fields.lens[KDBUS_FIELD_SENDER] };

                r = message_set_strings(m, codes, values, lens, 1, borrow);
        }
        if (r < 0)
                return r;
        m->fields.reply_serial = call->serial;
        field_add(&m->fields, KDBUS_FIELD_REPLY_SERIAL);
        if (borrow && cache && type == KDBUS_MESSAGE_METHOD_RETURN) {
                /* its header is compared with the template's when sealed */
                m->tmpl = &cache->reply;
                m->tmpl_gen = cache->reply.len ? cache->reply.gen : 0;
        }
        *ret = m;
        m = NULL;
        return 0;
}

int kdbus_message_new_method_return(struct kdbus_message **ret, const struct kdbus_message *call)
{
        return message_new_reply(ret, call, KDBUS_MESSAGE_METHOD_RETURN, false, NULL);
}

int message_new_method_return_borrowed(struct kdbus_message **ret,
                                       const struct kdbus_message *call,
                                       struct message_name_cache *cache)
{
        return message_new_reply(ret, call, KDBUS_MESSAGE_METHOD_RETURN, true, cache);
}

int kdbus_message_new_error(struct kdbus_message **ret, const struct kdbus_message *call,
                            const char *name, const char *text)
{
        _cleanup_message_ struct kdbus_message *m = NULL;
        int r;

        if (!kdbus_interface_name_valid(name))
                return -EINVAL;
        if (text && !kdbus_utf8_valid(text, strlen(text)))
                return -EINVAL;
        r = message_new_reply(&m, call, KDBUS_MESSAGE_ERROR, false, NULL);
        if (r < 0)
                return r;
        r = field_set_string(&m->fields, KDBUS_FIELD_ERROR_NAME, name);
        if (r < 0)
                return r;
        if (text) {
                r = kdbus_writer_append_basic(&m->body, 's', text);
                if (r < 0)
                        return r;
        }
        *ret = m;
        m = NULL;
        return 0;
}

/* ---- header ---- */

uint8_t kdbus_message_get_type(const struct kdbus_message *m)
{
        return m->type;
}

uint8_t kdbus_message_get_flags(const struct kdbus_message *m)
{
        return m->flags;
}

char kdbus_message_get_endian(const struct kdbus_message *m)
{
        return m->endian;
}

uint32_t kdbus_message_get_serial(const struct kdbus_message *m)
{
        return m->serial;
}

int kdbus_message_get_reply_serial(const struct kdbus_message *m, uint32_t *serial)
{
        if (!field_present(&m->fields, KDBUS_FIELD_REPLY_SERIAL))
                return -ENODATA;
        *serial = m->fields.reply_serial;
        return 0;
}

uint32_t kdbus_message_get_unix_fds(const struct kdbus_message *m)
{
        return m->sealed ? m->fields.unix_fds : (uint32_t)m->n_fds;
}

const char *kdbus_message_get_path(const struct kdbus_message *m)
{
        return m->fields.strings[KDBUS_FIELD_PATH];
}

const char *kdbus_message_get_interface(const struct kdbus_message *m)
{
        return m->fields.strings[KDBUS_FIELD_INTERFACE];
}

const char *kdbus_message_get_member(const struct kdbus_message *m)
{
        return m->fields.strings[KDBUS_FIELD_MEMBER];
}

const char *kdbus_message_get_error_name(const struct kdbus_message *m)
{
        return m->fields.strings[KDBUS_FIELD_ERROR_NAME];
}

const char *kdbus_message_get_destination(const struct kdbus_message *m)
{
        return m->fields.strings[KDBUS_FIELD_DESTINATION];
}

const char *kdbus_message_get_sender(const struct kdbus_message *m)
{
        return m->fields.strings[KDBUS_FIELD_SENDER];
}

const char *kdbus_message_get_signature(const struct kdbus_message *m)
{
        if (!m->sealed)
                return kdbus_writer_signature(&m->body);
        return field_signature(&m->fields);
}

bool kdbus_message_is_sealed(const struct kdbus_message *m)
{
        return m->sealed;
}

size_t kdbus_message_get_fields(const struct kdbus_message *m, uint8_t *codes, size_t n)
{
        size_t i;

        for (i = 0; i < m->fields.n_order && i < n; ++i)
                codes[i] = m->fields.order[i];
        return m->fields.n_order;
}

int kdbus_message_set_flags(struct kdbus_message *m, uint8_t flags)
{
        if (m->sealed)
                return -EPERM;
        if (flags & ~(KDBUS_MESSAGE_NO_REPLY_EXPECTED | KDBUS_MESSAGE_NO_AUTO_START |
                      KDBUS_MESSAGE_ALLOW_INTERACTIVE_AUTHORIZATION))
                return -EINVAL;
        m->flags = flags;
        return 0;
}

static int message_set_name(struct kdbus_message *m, uint8_t code, const char *name)
{
        struct message_fields next;
        int r;

        if (name && !kdbus_bus_name_valid(name))
                return -EINVAL;
        if (!m->sealed) {
                m->tmpl = NULL;         /* no longer the header of its template */
                return field_set_string(&m->fields, code, name);
        }
        {
                const char *have = m->fields.strings[code];

                /* unchanged: the bytes stay where they are (others may point at them) */
                if (!have == !name && (!name || strcmp(have, name) == 0))
                        return 0;
        }

        r = fields_copy(&next, &m->fields);
        if (r < 0)
                return r;
        r = field_set_string(&next, code, name);
        if (r < 0) {
                fields_free(&next);
                return r;
        }
        return message_commit_fields(m, &next, m->data + m->body_offset,
                                     m->size - m->body_offset);
}

int kdbus_message_set_destination(struct kdbus_message *m, const char *destination)
{
        return message_set_name(m, KDBUS_FIELD_DESTINATION, destination);
}

int kdbus_message_set_sender(struct kdbus_message *m, const char *sender)
{
        return message_set_name(m, KDBUS_FIELD_SENDER, sender);
}

/* ---- sealing and bytes ---- */

/* string field @code, present in both @f and @t or in neither, is the same in both */
static bool template_string_same(const struct message_fields *f,
                                 const struct message_call_template *t, uint8_t code)
{
        return !(f->present & (1U << code)) ||
               (f->lens[code] == t->lens[code] &&
                memcmp(f->strings[code], t->bytes + t->offset[code], f->lens[code]) == 0);
}

/*
 * Whether @m, made on its template and about to be sealed, has the
 * template's header but for the serial, the body's length and a
 * REPLY_SERIAL: the same template (not replaced since), fields, flags,
 * signature and sender, and no descriptors, which the template has none
 * of either. A call's other names were the template's when it was made
 * (message_new_method_call()); a reply's destination is compared here.
 * The fields' order follows from the fields present: the constructors
 * add theirs in a fixed order, sealing adds the signature and the sender
 * after them, and a setter that could reorder them drops the template
 * (message_set_name()).
 */
static bool template_matches(const struct kdbus_message *m)
{
        const struct message_call_template *t = m->tmpl;
        const struct message_fields *f = &m->fields;

        if (t->gen != m->tmpl_gen || f->present != t->present || m->flags != t->flags ||
            m->n_fds || m->ext_size)
                return false;
        return template_string_same(f, t, KDBUS_FIELD_SIGNATURE) &&
               template_string_same(f, t, KDBUS_FIELD_SENDER) &&
               (m->type == KDBUS_MESSAGE_METHOD_CALL ||
                template_string_same(f, t, KDBUS_FIELD_DESTINATION));
}

/* message_build() for a message template_matches() */
static int message_build_from_template(struct kdbus_message *m, const void *body, size_t body_size)
{
        const struct message_call_template *t = m->tmpl;
        struct message_fields *f = &m->fields;
        uint8_t *data;

        if (body_size > KDBUS_MESSAGE_MAX_SIZE - t->len)
                return -EMSGSIZE;
        data = message_bytes_alloc(m, t->len + (body_size ? body_size : 1));
        if (!data)
                return -ENOMEM;
        memcpy(data, t->bytes, t->len);
        put_u32(data + 4, (uint32_t)body_size, m->endian);
        put_u32(data + 8, m->serial, m->endian);
        if (f->present & (1U << KDBUS_FIELD_REPLY_SERIAL))
                put_u32(data + t->offset[KDBUS_FIELD_REPLY_SERIAL], f->reply_serial, m->endian);
        /* the strings the fields own (none when made by the templates' constructors) */
        if (f->present & ~f->borrowed & STRING_FIELDS)
                fields_release(f);
        for (unsigned int bits = f->present & STRING_FIELDS; bits; bits &= bits - 1) {
                unsigned int code = (unsigned int)__builtin_ctz(bits);

                f->strings[code] = (char *)data + t->offset[code];
        }
        f->borrowed |= f->present & STRING_FIELDS;
        if (body_size)
                memcpy(data + t->len, body, body_size);
        if (m->has_reader)
                kdbus_reader_deinit(&m->reader);
        m->has_reader = false;
        message_bytes_free(m, m->data);
        m->data = data;
        m->size = t->len + body_size;
        m->body_offset = t->len;
        return 0;
}

/* the header of @m, just built, as its template (if it fits) */
static void template_keep(const struct kdbus_message *m)
{
        struct message_call_template *t = m->tmpl;
        const struct message_fields *f = &m->fields;

        t->len = 0;
        if (m->body_offset > sizeof(t->bytes) || m->n_fds || m->ext_size ||
            m->endian != KDBUS_LITTLE_ENDIAN ||
            (m->type != KDBUS_MESSAGE_METHOD_CALL && m->type != KDBUS_MESSAGE_METHOD_RETURN))
                return;
        memcpy(t->bytes, m->data, m->body_offset);
        for (unsigned int bits = f->present & STRING_FIELDS; bits; bits &= bits - 1) {
                unsigned int code = (unsigned int)__builtin_ctz(bits);

                t->offset[code] = (uint16_t)((const uint8_t *)f->strings[code] - m->data);
                t->lens[code] = f->lens[code];
        }
        if (f->present & (1U << KDBUS_FIELD_REPLY_SERIAL)) {
                /* the number's place, as message_build() laid the fields out */
                size_t pos = KDBUS_MESSAGE_HEADER_SIZE;

                for (size_t i = 0; i < f->n_order; ++i) {
                        uint8_t code = f->order[i];

                        pos = (pos + 7) & ~(size_t)7;
                        if (code == KDBUS_FIELD_REPLY_SERIAL)
                                t->offset[code] = (uint16_t)(pos + 4);
                        pos = field_end(code, f->lens[code], pos);
                }
        }
        t->present = f->present;
        t->flags = m->flags;
        if (++t->gen == 0)
                t->gen = 1;
        t->len = (uint32_t)m->body_offset;
}

/* @sender_len: strlen(@sender), or SIZE_MAX when not known (then @sender is checked) */
static int message_seal(struct kdbus_message *m, uint32_t serial, const char *sender,
                        size_t sender_len)
{
        struct message_fields old = m->fields;
        const uint16_t sig_bit = 1U << KDBUS_FIELD_SIGNATURE, sender_bit = 1U << KDBUS_FIELD_SENDER;
        const char *sig;
        int r;

        if (m->sealed)
                return -EPERM;
        if (serial == 0 || (sender && sender_len == SIZE_MAX && !kdbus_bus_name_valid(sender)))
                return -EINVAL;
        if (m->body.depth != 0)
                return -EBUSY;          /* a container is still open */
        if (m->n_fds > UINT32_MAX)
                return -E2BIG;

        /*
         * The fields change in place; @old restores them on failure. The
         * signature and @sender are borrowed, not copied: message_build()
         * points every string field into the bytes it writes.
         */
        sig = kdbus_writer_signature(&m->body);
        m->fields.strings[KDBUS_FIELD_SIGNATURE] = *sig ? (char *)sig : NULL;
        m->fields.lens[KDBUS_FIELD_SIGNATURE] = (uint32_t)m->body.frames[0].sig_len; /* sig's */
        if (*sig) {
                m->fields.borrowed |= sig_bit;
                field_add(&m->fields, KDBUS_FIELD_SIGNATURE);
        } else {
                m->fields.borrowed &= ~sig_bit;
                field_remove(&m->fields, KDBUS_FIELD_SIGNATURE);
        }
        m->fields.unix_fds = (uint32_t)m->n_fds;
        if (m->n_fds)
                field_add(&m->fields, KDBUS_FIELD_UNIX_FDS);
        else if (field_present(&m->fields, KDBUS_FIELD_UNIX_FDS))
                field_remove(&m->fields, KDBUS_FIELD_UNIX_FDS);
        if (sender) {
                if (sender_len == SIZE_MAX)
                        sender_len = strlen(sender);    /* a valid name: <= 255 */
                m->fields.strings[KDBUS_FIELD_SENDER] = (char *)sender;
                m->fields.lens[KDBUS_FIELD_SENDER] = (uint32_t)sender_len;
                m->fields.borrowed |= sender_bit;
                field_add(&m->fields, KDBUS_FIELD_SENDER);
        }

        m->serial = serial;
        if (m->tmpl && m->tmpl_gen && template_matches(m)) {
                r = message_build_from_template(m, m->body.data, m->body.size);
        } else {
                r = message_build(m, m->body.data, m->body.size);
                if (r >= 0 && m->tmpl)
                        template_keep(m);
        }
        if (r < 0) {
                m->serial = 0;
                m->fields = old;
                return r;
        }
        m->tmpl = NULL;
        /* what the borrowed ones replaced (the rest moved into the bytes), if anything */
        if (old.strings[KDBUS_FIELD_SIGNATURE] && !(old.borrowed & sig_bit))
                free(old.strings[KDBUS_FIELD_SIGNATURE]);
        if (sender && old.strings[KDBUS_FIELD_SENDER] && !(old.borrowed & sender_bit))
                free(old.strings[KDBUS_FIELD_SENDER]);
        message_drop_writer(m);
        m->sealed = true;
        return 0;
}

int kdbus_message_seal(struct kdbus_message *m, uint32_t serial, const char *sender)
{
        return message_seal(m, serial, sender, SIZE_MAX);
}

int message_seal_own(struct kdbus_message *m, uint32_t serial, const char *own_unique,
                     size_t own_unique_len)
{
        return message_seal(m, serial, own_unique, own_unique_len);
}

size_t message_field_len(const struct kdbus_message *m, uint8_t code)
{
        return m->fields.lens[code];
}

int kdbus_message_get_data(const struct kdbus_message *m, const void **data, size_t *size)
{
        if (!m->sealed)
                return -EPERM;
        *data = m->data;
        *size = m->size;
        return 0;
}

int kdbus_message_get_body(const struct kdbus_message *m, const void **data, size_t *size)
{
        if (!m->sealed)
                return -EPERM;
        *data = m->data + m->body_offset;
        *size = m->size - m->body_offset;
        return 0;
}

/* ---- parsing ---- */

/* @endian is a valid byte-order mark ('l' or 'B') */
static uint32_t get_u32(const uint8_t *p, char endian)
{
        uint32_t v;

        memcpy(&v, p, 4);
        return endian == KDBUS_NATIVE_ENDIAN ? v : __builtin_bswap32(v);
}

int kdbus_message_peek_size(const void *data, size_t size, size_t *total)
{
        const uint8_t *p = data;
        uint32_t fields_len, body_len;
        uint64_t t;

        if (size < KDBUS_MESSAGE_HEADER_SIZE)
                return -EBADMSG;
        if (p[0] != KDBUS_LITTLE_ENDIAN && p[0] != KDBUS_BIG_ENDIAN)
                return -EPROTONOSUPPORT;
        if (p[3] != 1)
                return -EPROTONOSUPPORT;
        body_len = get_u32(p + 4, (char)p[0]);
        fields_len = get_u32(p + 12, (char)p[0]);
        if (fields_len > KDBUS_ARRAY_MAX_SIZE)
                return -EMSGSIZE;
        t = (((uint64_t)KDBUS_MESSAGE_HEADER_SIZE + fields_len + 7) & ~(uint64_t)7) + body_len;
        if (t > KDBUS_MESSAGE_MAX_SIZE)
                return -EMSGSIZE;
        *total = (size_t)t;
        return 0;
}

/*
 * The checks of a known header field's value beyond its D-Bus type; @len
 * is the length of a string value. Every string ('s') field is a name,
 * and a name is ASCII without NUL: its check is stricter than UTF-8's.
 * @cache (may be NULL) holds names that passed before.
 */
static bool field_value_ok(uint8_t code, const char *s, size_t len, uint32_t u,
                           struct message_name_cache *cache,
                           const struct message_known_names *known)
{
        switch (code) {
        case KDBUS_FIELD_PATH:
                return !(len == strlen(LOCAL_PATH) && !memcmp(s, LOCAL_PATH, len));
        case KDBUS_FIELD_INTERFACE:
                return interface_ok(s, len, cache);
        case KDBUS_FIELD_MEMBER:
                return kdbus_member_name_valid_len(s, len);
        case KDBUS_FIELD_ERROR_NAME:
                return kdbus_interface_name_valid_len(s, len);
        case KDBUS_FIELD_DESTINATION:
        case KDBUS_FIELD_SENDER:
                return bus_name_ok(s, len, cache, known);
        case KDBUS_FIELD_REPLY_SERIAL:
                return u != 0;
        default: /* UNIX_FDS; SIGNATURE: checked with its type */
                return true;
        }
}

static int parse_field(struct kdbus_message *m, struct kdbus_reader *r, uint8_t code)
{
        struct message_fields *f = &m->fields;
        char type = field_type(code), expected[2] = { type, 0 };
        const char *contents, *s = NULL;
        uint32_t u = 0;
        char vtype;
        bool ok;
        int ret;

        if (code == 0)
                return -EBADMSG;
        if (!type) {
                ret = kdbus_reader_skip(r);     /* unknown: validated, ignored */
                return ret < 0 ? ret : 0;
        }
        if (field_present(f, code))
                return -EBADMSG;
        ret = kdbus_reader_peek(r, &vtype, &contents);
        if (ret < 0)
                return ret;
        if (ret == 0 || vtype != 'v' || strcmp(contents, expected))
                return -EBADMSG;
        ret = kdbus_reader_enter(r, 'v', expected);
        if (ret > 0)
                ret = kdbus_reader_read_basic(r, type, type == 'u' ? (void *)&u : (void *)&s);
        if (ret > 0)
                ret = kdbus_reader_exit(r);
        if (ret < 0)
                return ret;

        ok = field_value_ok(code, s, s ? strlen(s) : 0, u, NULL, NULL);
        if (code == KDBUS_FIELD_REPLY_SERIAL)
                f->reply_serial = u;
        else if (code == KDBUS_FIELD_UNIX_FDS)
                f->unix_fds = u;
        if (!ok)
                return -EBADMSG;
        if (type == 'u') {
                field_add(f, code);
                return 0;
        }
        return field_set_string(f, code, s);
}

static int parse_header(struct kdbus_message *m, const uint8_t *data, size_t header_end)
{
        struct kdbus_reader r;
        uint8_t code;
        int ret;

        ret = kdbus_reader_init(&r, data, header_end, 12, m->endian, "a(yv)", UINT32_MAX);
        if (ret < 0)
                return ret;
        ret = kdbus_reader_enter(&r, 'a', "(yv)");
        while (ret > 0) {
                ret = kdbus_reader_enter(&r, '(', "yv");
                if (ret <= 0)
                        break;
                ret = kdbus_reader_read_basic(&r, 'y', &code);
                if (ret > 0)
                        ret = parse_field(m, &r, code);
                if (ret >= 0)
                        ret = kdbus_reader_exit(&r);
                if (ret >= 0)
                        ret = 1;
        }
        if (ret >= 0)
                ret = kdbus_reader_exit(&r);
        if (ret >= 0 && r.pos != header_end)
                ret = -EBADMSG;
        kdbus_reader_deinit(&r);
        return ret;
}

/*
 * The @n (0-7) bytes before the 8-aligned offset @end of @data are zero:
 * one load, not a loop. When @n is not 0, @end is at least 8.
 */
static bool padding_zero(const uint8_t *data, size_t end, size_t n)
{
        uint64_t w;

        if (!n)
                return true;
        memcpy(&w, data + end - 8, 8);
        /* the last @n bytes of the word */
        if (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
                return !(w >> (8 * (8 - n)));
        return !(w << (8 * (8 - n)));
}

/* ---- the last header taken whole (message-internal.h) ---- */

/*
 * The fields array of @len bytes at @fields has the kept one's bytes but
 * for the number values: then its fields are set as the kept ones, the
 * strings pointing into @fields, and true returned; else nothing is set.
 * A REPLY_SERIAL of 0 is no hit (the parsers refuse it). The message has
 * no fields yet.
 */
static bool fields_cache_take(struct message_fields *f, const struct message_fields_cache *c,
                              const uint8_t *fields, size_t len, char endian)
{
        size_t pos = 0;

        if (len != c->len || endian != c->endian || !len)
                return false;
        for (size_t i = 0; i < c->n_holes; ++i) {
                if (memcmp(fields + pos, c->bytes + pos, c->holes[i] - pos))
                        return false;
                pos = c->holes[i] + 4u;
        }
        if (memcmp(fields + pos, c->bytes + pos, len - pos))
                return false;
        if (c->present & (1U << KDBUS_FIELD_REPLY_SERIAL)) {
                f->reply_serial = get_u32(fields + c->offset[KDBUS_FIELD_REPLY_SERIAL], endian);
                if (!f->reply_serial)
                        return false;
        }
        if (c->present & (1U << KDBUS_FIELD_UNIX_FDS))
                f->unix_fds = get_u32(fields + c->offset[KDBUS_FIELD_UNIX_FDS], endian);
        /* the strings by their presence bits; the other arrays whole (lengths 0 where absent) */
        for (unsigned int bits = c->present & STRING_FIELDS; bits; bits &= bits - 1) {
                unsigned int code = (unsigned int)__builtin_ctz(bits);

                f->strings[code] = (char *)fields + c->offset[code];
        }
        memcpy(f->lens, c->lens, sizeof(f->lens));
        memcpy(f->order, c->order, sizeof(f->order));
        f->n_order = c->n_order;
        f->present = c->present;
        f->borrowed = c->present & STRING_FIELDS;
        return true;
}

/* keep the fields @f that the fast parser took whole from the array at @fields */
static void fields_cache_keep(struct message_fields_cache *c, const struct message_fields *f,
                              const uint8_t *fields, size_t len, char endian)
{
        size_t pos = 0;

        c->len = 0;
        if (len > sizeof(c->bytes))
                return;
        c->n_holes = 0;
        memcpy(c->lens, f->lens, sizeof(c->lens));
        for (size_t i = 0; i < f->n_order; ++i) {
                uint8_t code = f->order[i];

                /* each (yv) struct 8-aligned (the array is), the value after 4 bytes */
                pos = (pos + 7) & ~(size_t)7;
                if (code == KDBUS_FIELD_REPLY_SERIAL || code == KDBUS_FIELD_UNIX_FDS) {
                        c->offset[code] = (uint16_t)(pos + 4);
                        c->holes[c->n_holes++] = (uint16_t)(pos + 4);
                        pos += 8;
                } else {
                        c->offset[code] = (uint16_t)((const uint8_t *)f->strings[code] - fields);
                        pos = c->offset[code] + (size_t)f->lens[code] + 1;
                }
        }
        memcpy(c->order, f->order, sizeof(c->order));
        c->n_order = (uint8_t)f->n_order;
        c->present = f->present;
        c->endian = endian;
        memcpy(c->bytes, fields, len);
        c->len = (uint32_t)len;
}

/*
 * The header fields read directly, without the general reader: the common
 * header (known fields, each once, well formed) costs a few comparisons a
 * field. Returns 1 when every field was taken; 0 when the header needs
 * parse_header() (unknown or repeated fields, anything malformed: the
 * general reader then finds the error), with the fields taken so far
 * dropped; -ENOMEM. With @borrow, @data is m->data and the string fields
 * point into it. The message has no fields yet.
 */
static int parse_header_fast(struct kdbus_message *m, const uint8_t *data, size_t header_end,
                             bool borrow, struct message_name_cache *cache,
                             const struct message_known_names *known)
{
        struct message_fields *f = &m->fields;
        size_t pos = KDBUS_MESSAGE_HEADER_SIZE;
        const uint8_t *fields = data + KDBUS_MESSAGE_HEADER_SIZE;

        if (header_end - pos > KDBUS_ARRAY_MAX_SIZE)
                goto slow;
        /* the fields array of the last header taken whole: valid by comparison */
        if (borrow && cache &&
            fields_cache_take(f, &cache->fields, fields, header_end - pos, m->endian))
                return 1;
        while (pos < header_end) {
                size_t start = (pos + 7) & ~(size_t)7;
                const char *s = NULL;
                uint32_t u = 0, len = 0;
                uint16_t bit;
                uint8_t code, head[4];
                char type;

                if (start > header_end || header_end - start < 8 ||
                    !padding_zero(data, start, start - pos))
                        goto slow;
                pos = start;
                code = data[pos];
                type = field_type(code);
                bit = (uint16_t)(1U << (code & 15));
                /* the code, and the variant's signature: length 1, the type, NUL */
                head[0] = code;
                head[1] = 1;
                head[2] = (uint8_t)type;
                head[3] = 0;
                if (!type || (f->present & bit) || memcmp(data + pos, head, 4))
                        goto slow;
                pos += 4;
                if (type == 'u') {
                        u = get_u32(data + pos, m->endian);
                        pos += 4;
                } else {
                        if (type == 'g') {
                                len = data[pos];
                                pos += 1;
                        } else {
                                len = get_u32(data + pos, m->endian);
                                pos += 4;
                        }
                        if (len >= header_end - pos)
                                goto slow;
                        s = (const char *)data + pos;
                        if (s[len])
                                goto slow;
                        /*
                         * The path and signature checks refuse a NUL
                         * inside; a string field is a name, checked by
                         * field_value_ok() (ASCII: valid UTF-8, no NUL).
                         */
                        if (type == 'o' && !kdbus_object_path_valid(s, len))
                                goto slow;
                        if (type == 'g' && kdbus_signature_validate_nested(s, len, false, 0, 0) < 0)
                                goto slow;
                        pos += (size_t)len + 1;
                }
                if (!field_value_ok(code, s, len, u, cache, known))
                        goto slow;
                if (type == 'u') {
                        if (code == KDBUS_FIELD_REPLY_SERIAL)
                                f->reply_serial = u;
                        else
                                f->unix_fds = u;
                } else if (borrow) {
                        f->strings[code] = (char *)s;
                        f->lens[code] = len;
                        f->borrowed |= bit;
                } else {
                        f->strings[code] = strdup(s);
                        if (!f->strings[code]) {
                                fields_free(f);
                                return -ENOMEM;
                        }
                        f->lens[code] = len;
                }
                f->order[f->n_order++] = code;
                f->present |= bit;
        }
        if (borrow && cache)
                fields_cache_keep(&cache->fields, f, fields, header_end - KDBUS_MESSAGE_HEADER_SIZE,
                                  m->endian);
        return 1;
slow:
        fields_free(f);
        return 0;
}

static bool required_fields_present(const struct kdbus_message *m)
{
        const struct message_fields *f = &m->fields;

        switch (m->type) {
        case KDBUS_MESSAGE_METHOD_CALL:
                return field_present(f, KDBUS_FIELD_PATH) && field_present(f, KDBUS_FIELD_MEMBER);
        case KDBUS_MESSAGE_METHOD_RETURN:
                return field_present(f, KDBUS_FIELD_REPLY_SERIAL);
        case KDBUS_MESSAGE_ERROR:
                return field_present(f, KDBUS_FIELD_REPLY_SERIAL) &&
                       field_present(f, KDBUS_FIELD_ERROR_NAME);
        case KDBUS_MESSAGE_SIGNAL:
                return field_present(f, KDBUS_FIELD_PATH) &&
                       field_present(f, KDBUS_FIELD_INTERFACE) &&
                       field_present(f, KDBUS_FIELD_MEMBER);
        default:
                return true;    /* unknown types are valid; callers drop them */
        }
}

/*
 * The header fields (the fast reader, or the general one for anything
 * unusual), zero padding up to the body and the fields the type requires.
 */
static int parse_header_checked(struct kdbus_message *m, const uint8_t *p, size_t header_end,
                                size_t body_offset, bool borrow, bool *canonical,
                                struct message_name_cache *cache,
                                const struct message_known_names *known)
{
        int r;

        r = parse_header_fast(m, p, header_end, borrow, cache, known);
        if (canonical)
                *canonical = r > 0;
        if (r == 0)
                r = parse_header(m, p, header_end);
        if (r < 0)
                return r;
        if (!padding_zero(p, body_offset, body_offset - header_end))
                return -EBADMSG;
        return required_fields_present(m) ? 0 : -EBADMSG;
}

/* a received message from the fixed part of its header @p (checked by the caller) */
static int message_new_received(struct kdbus_message **ret, const uint8_t *p,
                                struct message_name_cache *cache)
{
        _cleanup_message_ struct kdbus_message *m = NULL;
        int r;

        r = message_new(&m, p[1], (char)p[0], false, cache);
        if (r < 0)
                return r;
        m->flags = p[2];
        m->serial = get_u32(p + 8, m->endian);
        if (m->serial == 0)
                return -EBADMSG;
        *ret = m;
        m = NULL;
        return 0;
}

int kdbus_message_parse(struct kdbus_message **ret, const void *data, size_t size)
{
        return message_parse_received(ret, data, size, NULL, NULL, NULL);
}

int message_parse_cached(struct kdbus_message **ret, const void *data, size_t size,
                         struct message_name_cache *cache)
{
        return message_parse_received(ret, data, size, cache, NULL, NULL);
}

int message_parse_received(struct kdbus_message **ret, const void *data, size_t size,
                           struct message_name_cache *cache,
                           const struct message_known_names *known, uint8_t **adopt)
{
        _cleanup_message_ struct kdbus_message *m = NULL;
        const uint8_t *p = data;
        size_t total, header_end, body_offset;
        const char *sig;
        bool canonical;
        int r;

        if (!ret || (!data && size))
                return -EINVAL;
        r = kdbus_message_peek_size(data, size, &total);
        if (r < 0)
                return r;
        if (size != total)
                return -EBADMSG;
        if (p[1] == 0)
                return -EBADMSG;        /* invalid message type */

        r = message_new_received(&m, p, cache);
        if (r < 0)
                return r;

        header_end = KDBUS_MESSAGE_HEADER_SIZE + get_u32(p + 12, m->endian);
        body_offset = (header_end + 7) & ~(size_t)7;

        /* parsed and validated in the message's own copy of the bytes */
        if (adopt && *adopt == p && size > MESSAGE_TAIL_SIZE) {
                m->data = *adopt;
                *adopt = NULL;
        } else {
                m->data = message_bytes_alloc(m, size);
                if (!m->data)
                        return -ENOMEM;
                memcpy(m->data, p, size);
        }
        m->size = size;
        m->body_offset = body_offset;
        r = parse_header_checked(m, m->data, header_end, body_offset, true, &canonical, cache,
                                 known);
        if (r < 0)
                return r;

        /*
         * The body is validated by the reader that later serves the reads;
         * the signature was checked with the header (either parser).
         */
        sig = field_signature(&m->fields);
        r = kdbus_reader_init_checked(&m->reader, m->data, size, body_offset, m->endian, sig,
                                      strlen(sig), m->fields.unix_fds);
        if (r < 0)
                return r == -EINVAL ? -EBADMSG : r;
        m->has_reader = true;
        r = kdbus_reader_validate(&m->reader);  /* leaves it at the first value */
        if (r < 0)
                return r;

        /*
         * Known fields only, each as the marshalling rules write it, padding
         * zero (parse_header_fast()): message_build() would write these very
         * bytes, so they stay as they came, and the fields point into them.
         * Anything else is written again from the fields the general parser
         * took (copies), unknown fields dropped.
         */
        if (!canonical) {
                r = message_build(m, m->data + body_offset, size - body_offset);
                if (r < 0)
                        return r;
        }
        message_drop_writer(m);
        m->sealed = true;
        *ret = m;
        m = NULL;
        return 0;
}

int kdbus_message_attach_fds(struct kdbus_message *m, int *fds, size_t n_fds)
{
        int *copy;

        if (!m->sealed)
                return -EPERM;
        if (m->n_fds)
                return -EBUSY;
        if (n_fds != m->fields.unix_fds)
                return -EBADMSG;
        if (!n_fds)
                return 0;
        copy = malloc(n_fds * sizeof(*copy));
        if (!copy)
                return -ENOMEM;
        memcpy(copy, fds, n_fds * sizeof(*copy));
        m->fds = copy;
        m->n_fds = n_fds;
        return 0;
}

int kdbus_message_set_serial(struct kdbus_message *m, uint32_t serial)
{
        if (!m->sealed || !m->data || m->size < KDBUS_MESSAGE_HEADER_SIZE)
                return -EPERM;
        if (serial == 0)
                return -EINVAL;
        for (int i = 0; i < 4; i++)
                m->data[8 + i] = m->endian == 'l' ? (uint8_t)(serial >> (8 * i))
                                                  : (uint8_t)(serial >> (8 * (3 - i)));
        m->serial = serial;
        return 0;
}

size_t kdbus_message_get_fds(const struct kdbus_message *m, const int **fds)
{
        *fds = m->fds;
        return m->n_fds;
}

int kdbus_message_steal_fds(struct kdbus_message *m, int **fds, size_t *n_fds)
{
        *fds = m->fds;
        *n_fds = m->n_fds;
        m->fds = NULL;
        m->n_fds = 0;
        return 0;
}

/* ---- appending ---- */

static int message_append_fd(struct kdbus_message *m, int fd)
{
        uint32_t index = (uint32_t)m->n_fds;
        int *fds, copy, r;

        if (fd < 0)
                return -EBADF;
        if (m->n_fds >= UINT32_MAX)
                return -E2BIG;
        fds = realloc(m->fds, (m->n_fds + 1) * sizeof(*fds));
        if (!fds)
                return -ENOMEM;
        m->fds = fds;
        copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (copy < 0)
                return -errno;
        r = kdbus_writer_append_basic(&m->body, 'h', &index);
        if (r < 0) {
                close(copy);
                return r;
        }
        m->fds[m->n_fds++] = copy;
        return 0;
}

int kdbus_message_append_basic(struct kdbus_message *m, char type, const void *value)
{
        if (m->sealed)
                return -EPERM;
        if (type == 'h')
                return value ? message_append_fd(m, *(const int *)value) : -EINVAL;
        return kdbus_writer_append_basic(&m->body, type, value);
}

int kdbus_message_open_container(struct kdbus_message *m, char type, const char *contents)
{
        if (m->sealed)
                return -EPERM;
        return kdbus_writer_open(&m->body, type, contents);
}

int kdbus_message_close_container(struct kdbus_message *m)
{
        if (m->sealed)
                return -EPERM;
        return kdbus_writer_close(&m->body);
}

int kdbus_message_append_array(struct kdbus_message *m, char type, const void *ptr, size_t size)
{
        if (m->sealed)
                return -EPERM;
        return kdbus_writer_append_array(&m->body, type, ptr, size);
}

/* copy the contents of the container type at t (length tlen) into buf */
static void contents_of(const char *t, size_t tlen, char *buf)
{
        size_t clen = t[0] == 'a' ? tlen - 1 : tlen - 2;

        memcpy(buf, t + 1, clen);
        buf[clen] = 0;
}

static int append_one(struct kdbus_message *m, const char **types, va_list *ap)
{
        const char *t = *types, *p;
        char contents[KDBUS_SIGNATURE_MAX + 1];
        size_t len;
        unsigned int i, n;
        int r;

        /* a basic type is a complete type of one byte */
        if (kdbus_type_is_basic(t[0])) {
                len = 1;
        } else {
                r = kdbus_signature_next(t, 0, 0, &len);
                if (r < 0)
                        return r;
        }

        switch (t[0]) {
        case 'y': {
                uint8_t v = (uint8_t)va_arg(*ap, int);

                r = kdbus_writer_append_basic(&m->body, 'y', &v);
                break;
        }
        case 'b': {
                int v = va_arg(*ap, int);

                r = kdbus_writer_append_basic(&m->body, 'b', &v);
                break;
        }
        case 'n':
        case 'q': {
                uint16_t v = (uint16_t)va_arg(*ap, int);

                r = kdbus_writer_append_basic(&m->body, t[0], &v);
                break;
        }
        case 'i':
        case 'u': {
                uint32_t v = va_arg(*ap, unsigned int);

                r = kdbus_writer_append_basic(&m->body, t[0], &v);
                break;
        }
        case 'x':
        case 't': {
                uint64_t v = va_arg(*ap, uint64_t);

                r = kdbus_writer_append_basic(&m->body, t[0], &v);
                break;
        }
        case 'd': {
                double v = va_arg(*ap, double);

                r = kdbus_writer_append_basic(&m->body, 'd', &v);
                break;
        }
        case 's':
        case 'o':
        case 'g':
                r = kdbus_writer_append_basic(&m->body, t[0], va_arg(*ap, const char *));
                break;
        case 'h':
                r = message_append_fd(m, va_arg(*ap, int));
                break;
        case 'a':
                n = va_arg(*ap, unsigned int);
                contents_of(t, len, contents);
                r = kdbus_writer_open(&m->body, 'a', contents);
                for (i = 0; r >= 0 && i < n; ++i) {
                        p = contents;
                        r = append_one(m, &p, ap);
                }
                if (r >= 0)
                        r = kdbus_writer_close(&m->body);
                break;
        case 'v':
                p = va_arg(*ap, const char *);
                r = kdbus_writer_open(&m->body, 'v', p);
                while (r >= 0 && *p)
                        r = append_one(m, &p, ap);
                if (r >= 0)
                        r = kdbus_writer_close(&m->body);
                break;
        default: /* '(' or '{' */
                contents_of(t, len, contents);
                r = kdbus_writer_open(&m->body, t[0], contents);
                p = contents;
                while (r >= 0 && *p)
                        r = append_one(m, &p, ap);
                if (r >= 0)
                        r = kdbus_writer_close(&m->body);
                break;
        }
        if (r < 0)
                return r;
        *types += len;
        return 0;
}

int kdbus_message_appendv(struct kdbus_message *m, const char *types, va_list ap)
{
        struct kdbus_writer_state saved;
        size_t n_fds = m->n_fds;
        va_list aq;
        int r = 0;

        if (m->sealed)
                return -EPERM;
        if (!types)
                return -EINVAL;

        kdbus_writer_save(&m->body, &saved);
        va_copy(aq, ap);
        while (r >= 0 && *types)
                r = append_one(m, &types, &aq);
        va_end(aq);
        if (r < 0) {
                kdbus_writer_restore(&m->body, &saved);
                close_fds(m->fds + n_fds, m->n_fds - n_fds);
                m->n_fds = n_fds;
        }
        return r;
}

int kdbus_message_append(struct kdbus_message *m, const char *types, ...)
{
        va_list ap;
        int r;

        va_start(ap, types);
        r = kdbus_message_appendv(m, types, ap);
        va_end(ap);
        return r;
}

int kdbus_message_append_strv(struct kdbus_message *m, char *const *strv)
{
        struct kdbus_writer_state saved;
        int r;

        if (m->sealed)
                return -EPERM;
        kdbus_writer_save(&m->body, &saved);
        r = kdbus_writer_open(&m->body, 'a', "s");
        for (; r >= 0 && strv && *strv; ++strv)
                r = kdbus_writer_append_basic(&m->body, 's', *strv);
        if (r >= 0)
                r = kdbus_writer_close(&m->body);
        if (r < 0)
                kdbus_writer_restore(&m->body, &saved);
        return r;
}

/* ---- reading ---- */

/*
 * The reader over the body, made on the first read of a sealed message:
 * most messages a program builds are sent and never read back.
 */
static int message_reader(struct kdbus_message *m)
{
        const char *sig;
        int r;

        if (!m->sealed)
                return -EPERM;
        if (m->has_reader)
                return 0;
        sig = field_signature(&m->fields);
        /* a memfd body is read from its mapping (8-aligned: the same padding) */
        if (m->has_ext)
                r = kdbus_reader_init(&m->reader, m->ext_body, m->ext_size, 0, m->endian, sig,
                                      m->fields.unix_fds);
        else
                r = kdbus_reader_init(&m->reader, m->data, m->size, m->body_offset, m->endian,
                                      sig, m->fields.unix_fds);
        if (r < 0)
                return r;
        m->has_reader = true;
        return 0;
}

int kdbus_message_read_basic(struct kdbus_message *m, char type, void *value)
{
        struct kdbus_reader_state saved;
        uint32_t index;
        int r;

        r = message_reader(m);
        if (r < 0)
                return r;
        if (type != 'h')
                return kdbus_reader_read_basic(&m->reader, type, value);

        kdbus_reader_save(&m->reader, &saved);
        r = kdbus_reader_read_basic(&m->reader, 'h', &index);
        if (r <= 0)
                return r;
        if (index >= m->n_fds || m->fds[index] < 0) {
                kdbus_reader_restore(&m->reader, &saved);
                return -EBADF;
        }
        if (value)
                *(int *)value = m->fds[index];
        return 1;
}

int kdbus_message_read_array(struct kdbus_message *m, char type, const void **ptr, size_t *size)
{
        int r;

        r = message_reader(m);
        if (r < 0)
                return r;
        return kdbus_reader_read_array(&m->reader, type, ptr, size);
}

int kdbus_message_enter_container(struct kdbus_message *m, char type, const char *contents)
{
        int r;

        r = message_reader(m);
        if (r < 0)
                return r;
        return kdbus_reader_enter(&m->reader, type, contents);
}

int kdbus_message_exit_container(struct kdbus_message *m)
{
        int r;

        r = message_reader(m);
        if (r < 0)
                return r;
        return kdbus_reader_exit(&m->reader);
}

int kdbus_message_peek_type(struct kdbus_message *m, char *type, const char **contents)
{
        int r;

        r = message_reader(m);
        if (r < 0)
                return r;
        return kdbus_reader_peek(&m->reader, type, contents);
}

int kdbus_message_rewind(struct kdbus_message *m)
{
        struct kdbus_frame *f;

        if (!m->sealed)
                return -EPERM;
        if (!m->has_reader)
                return 0;       /* the first read starts at the first value */
        f = &m->reader.frames[0];
        m->reader.depth = 0;
        m->reader.pos = f->begin;
        f->sig_pos = 0;
        return 0;
}

bool kdbus_message_at_end(struct kdbus_message *m)
{
        /* a reader that cannot be made has nothing left to read */
        return message_reader(m) < 0 || kdbus_reader_at_end(&m->reader);
}

/* one complete type of *types: 1 when read, or a negative errno */
static int read_one(struct kdbus_message *m, const char **types, va_list *ap)
{
        const char *t = *types, *p;
        char contents[KDBUS_SIGNATURE_MAX + 1];
        size_t len;
        unsigned int i, n;
        int r;

        /* a basic type is a complete type of one byte */
        if (kdbus_type_is_basic(t[0])) {
                len = 1;
                /* kdbus_message_readv() made the reader; h is an index into the fds */
                r = t[0] == 'h' ? kdbus_message_read_basic(m, 'h', va_arg(*ap, void *))
                                : kdbus_reader_read_basic(&m->reader, t[0], va_arg(*ap, void *));
                if (r == 0)
                        return -ENXIO;
                if (r < 0)
                        return r;
                *types += len;
                return 1;
        }

        r = kdbus_signature_next(t, 0, 0, &len);
        if (r < 0)
                return r;
        if (t[0] == 'a') {
                n = va_arg(*ap, unsigned int);
                contents_of(t, len, contents);
                p = contents;
        } else if (t[0] == 'v') {
                n = 1;
                p = va_arg(*ap, const char *);
                if (!p)
                        return -EINVAL;
                r = kdbus_signature_validate_single(p);
                if (r < 0)
                        return r;
        } else {
                n = 1;
                contents_of(t, len, contents);
                p = contents;
        }

        r = kdbus_message_enter_container(m, t[0], p);
        if (r == 0)
                return -ENXIO;
        if (r < 0)
                return r;
        if (t[0] == 'a') {
                for (i = 0; i < n; ++i) {
                        const char *e = contents;

                        r = read_one(m, &e, ap);
                        if (r < 0)
                                return r;
                }
        } else {
                while (*p) {
                        r = read_one(m, &p, ap);
                        if (r < 0)
                                return r;
                }
        }
        r = kdbus_message_exit_container(m);
        if (r < 0)
                return r;
        *types += len;
        return 1;
}

int kdbus_message_readv(struct kdbus_message *m, const char *types, va_list ap)
{
        struct kdbus_reader_state saved;
        va_list aq;
        int r = 1;

        r = message_reader(m);
        if (r < 0)
                return r;
        if (!types)
                return -EINVAL;

        kdbus_reader_save(&m->reader, &saved);
        va_copy(aq, ap);
        r = 1;
        while (r > 0 && *types)
                r = read_one(m, &types, &aq);
        va_end(aq);
        if (r < 0)
                kdbus_reader_restore(&m->reader, &saved);
        return r < 0 ? r : 0;
}

int kdbus_message_read(struct kdbus_message *m, const char *types, ...)
{
        va_list ap;
        int r;

        va_start(ap, types);
        r = kdbus_message_readv(m, types, ap);
        va_end(ap);
        return r;
}

/* the complete type of a peeked value */
static void complete_type(char type, const char *contents, char *buf)
{
        size_t n = 0;

        buf[n++] = type;
        if (type != 'v' && contents) {
                strcpy(buf + n, contents);
                n += strlen(contents);
                if (type == '(')
                        buf[n++] = ')';
                else if (type == '{')
                        buf[n++] = '}';
        }
        buf[n] = 0;
}

int kdbus_message_skip(struct kdbus_message *m, const char *types)
{
        char want[KDBUS_SIGNATURE_MAX + 1], have[KDBUS_SIGNATURE_MAX + 3];
        struct kdbus_reader_state saved;
        const char *contents;
        char type;
        size_t len;
        int r;

        r = message_reader(m);
        if (r < 0)
                return r;
        if (!types) {
                r = kdbus_reader_skip(&m->reader);
                return r == 0 ? -ENXIO : r < 0 ? r : 0;
        }

        kdbus_reader_save(&m->reader, &saved);
        while (*types) {
                r = kdbus_signature_next(types, 0, 0, &len);
                if (r < 0)
                        goto fail;
                memcpy(want, types, len);
                want[len] = 0;
                r = kdbus_reader_peek(&m->reader, &type, &contents);
                if (r == 0)
                        r = -ENXIO;
                if (r < 0)
                        goto fail;
                complete_type(type, contents, have);
                if (strcmp(want, have)) {
                        r = -ENXIO;
                        goto fail;
                }
                r = kdbus_reader_skip(&m->reader);
                if (r < 0)
                        goto fail;
                types += len;
        }
        return 0;

fail:
        kdbus_reader_restore(&m->reader, &saved);
        return r;
}

/* ---- conversion ---- */

static int copy_values(struct kdbus_reader *r, struct kdbus_writer *w)
{
        char contents[KDBUS_SIGNATURE_MAX + 1];
        const char *c;
        char type;
        int ret;

        for (;;) {
                ret = kdbus_reader_peek(r, &type, &c);
                if (ret <= 0)
                        return ret;
                if (kdbus_type_is_basic(type)) {
                        union {
                                uint8_t y;
                                int b;
                                uint16_t q;
                                uint32_t u;
                                uint64_t t;
                                const char *s;
                        } v;

                        ret = kdbus_reader_read_basic(r, type, &v);
                        if (ret < 0)
                                return ret;
                        if (type == 's' || type == 'o' || type == 'g')
                                ret = kdbus_writer_append_basic(w, type, v.s);
                        else
                                ret = kdbus_writer_append_basic(w, type, &v);
                        if (ret < 0)
                                return ret;
                        continue;
                }
                strcpy(contents, c);
                ret = kdbus_reader_enter(r, type, contents);
                if (ret < 0)
                        return ret;
                ret = kdbus_writer_open(w, type, contents);
                if (ret < 0)
                        return ret;
                ret = copy_values(r, w);
                if (ret < 0)
                        return ret;
                ret = kdbus_reader_exit(r);
                if (ret < 0)
                        return ret;
                ret = kdbus_writer_close(w);
                if (ret < 0)
                        return ret;
        }
}

int kdbus_message_convert(struct kdbus_message **ret, struct kdbus_message *m, char endian)
{
        _cleanup_message_ struct kdbus_message *c = NULL;
        struct message_fields fields;
        struct kdbus_reader r;
        size_t i;
        int e;

        if (!ret || !m || (endian != KDBUS_LITTLE_ENDIAN && endian != KDBUS_BIG_ENDIAN))
                return -EINVAL;
        if (!m->sealed)
                return -EPERM;

        e = message_new(&c, m->type, endian, true, NULL);
        if (e < 0)
                return e;
        c->flags = m->flags;
        c->serial = m->serial;

        e = kdbus_reader_init(&r, m->data, m->size, m->body_offset, m->endian,
                              kdbus_message_get_signature(m), m->fields.unix_fds);
        if (e < 0)
                return e;
        e = copy_values(&r, &c->body);
        kdbus_reader_deinit(&r);
        if (e < 0)
                return e;

        if (m->n_fds) {
                c->fds = calloc(m->n_fds, sizeof(*c->fds));
                if (!c->fds)
                        return -ENOMEM;
                for (i = 0; i < m->n_fds; ++i) {
                        c->fds[i] = m->fds[i] < 0 ? -1 : fcntl(m->fds[i], F_DUPFD_CLOEXEC, 3);
                        c->n_fds = i + 1;
                        if (m->fds[i] >= 0 && c->fds[i] < 0)
                                return -errno;
                }
        }

        e = fields_copy(&fields, &m->fields);
        if (e < 0)
                return e;
        e = message_commit_fields(c, &fields, c->body.data, c->body.size);
        if (e < 0)
                return e;
        message_drop_writer(c);
        c->sealed = true;
        *ret = c;
        c = NULL;
        return 0;
}

/*
 * A validated message whose body stays in a sealed memfd: @header is the
 * header and fields (padded to 8), the body is [@body_start, +@body_size)
 * of @body_fd, validated through a read-only mapping and never copied. On
 * success the message owns @body_fd; the read calls read the mapping.
 */
int kdbus_message_parse_external(struct kdbus_message **ret, const void *header,
                                 size_t header_size, int body_fd, uint64_t body_start,
                                 size_t body_size)
{
        _cleanup_message_ struct kdbus_message *m = NULL;
        const uint8_t *p = header;
        size_t total, header_end, body_offset, map_size;
        struct kdbus_reader body;
        const char *sig;
        struct stat st;
        void *map;
        int seals, r;

        if (!ret || !header || body_fd < 0 || body_size == 0)
                return -EINVAL;
        r = kdbus_message_peek_size(header, header_size, &total);
        if (r < 0)
                return r;
        if (p[1] == 0)
                return -EBADMSG;
        header_end = KDBUS_MESSAGE_HEADER_SIZE + get_u32(p + 12, (char)p[0]);
        body_offset = (header_end + 7) & ~(size_t)7;
        if (header_size != body_offset || total != body_offset + body_size)
                return -EBADMSG;
        /* the body must not change under the validation */
        seals = fcntl(body_fd, F_GET_SEALS);
        if (seals < 0 || (seals & (F_SEAL_WRITE | F_SEAL_SHRINK)) != (F_SEAL_WRITE | F_SEAL_SHRINK))
                return -EBADMSG;
        if (fstat(body_fd, &st) < 0)
                return -errno;
        if (body_start > (uint64_t)st.st_size || body_size > (uint64_t)st.st_size - body_start)
                return -EBADMSG;

        r = message_new_received(&m, p, NULL);
        if (r < 0)
                return r;
        r = parse_header_checked(m, p, header_end, body_offset, false, NULL, NULL, NULL);
        if (r < 0)
                return r;

        map_size = (size_t)body_start + body_size;
        map = mmap(NULL, map_size, PROT_READ, MAP_SHARED, body_fd, 0);
        if (map == MAP_FAILED)
                return -errno;
        m->has_ext = true;
        m->ext_fd = -1;
        m->ext_map = map;
        m->ext_map_size = map_size;
        m->ext_body = (const uint8_t *)map + body_start;
        m->ext_size = body_size;

        /* the body starts 8-aligned, so it validates as a buffer of its own */
        sig = field_signature(&m->fields);
        r = kdbus_reader_init(&body, m->ext_body, body_size, 0, m->endian, sig, m->fields.unix_fds);
        if (r < 0)
                return r == -EINVAL ? -EBADMSG : r;
        r = kdbus_reader_validate(&body);
        kdbus_reader_deinit(&body);
        if (r < 0)
                return r;

        r = message_build(m, "", 0);
        if (r < 0)
                return r;
        message_drop_writer(m);
        m->sealed = true;
        m->ext_fd = body_fd;
        *ret = m;
        m = NULL;
        return 0;
}

int kdbus_message_get_external_body(const struct kdbus_message *m, const void **data,
                                    size_t *size, int *fd)
{
        if (!m->has_ext)
                return -ENODATA;
        if (data)
                *data = m->ext_body;
        if (size)
                *size = m->ext_size;
        if (fd)
                *fd = m->ext_fd;
        return 0;
}
