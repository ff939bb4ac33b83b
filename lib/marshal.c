// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Classic D-Bus marshalling: typed writer and validating reader.
 *
 * Both keep a stack of frames, one per open container, holding the
 * signature of the container's contents. The reader never reads beyond the
 * end of the innermost enclosing array (frame->end), so an element that
 * would cross its array's end is an error, not an overread. Every failing
 * operation leaves the reader or writer as it was before the call.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "marshal.h"
#include "signature.h"
#include "thread-cache.h"

/* ---- syntax checks ---- */

static inline __attribute__((always_inline)) bool utf8_valid(const char *str, size_t len)
{
        const uint8_t *s = (const uint8_t *)str;
        size_t i = 0;

        while (i < len) {
                uint32_t c;
                size_t n, k;

                /* names and most strings are ASCII: eight bytes at a time */
                while (len - i >= 8) {
                        uint64_t w;

                        memcpy(&w, s + i, 8);
                        /* no byte with its high bit set, no byte zero */
                        if ((w & 0x8080808080808080ULL) ||
                            ((w - 0x0101010101010101ULL) & ~w & 0x8080808080808080ULL))
                                break;
                        i += 8;
                }
                if (i >= len)
                        break;
                c = s[i];
                if (c < 0x80) {
                        if (c == 0)
                                return false;
                        ++i;
                        continue;
                } else if ((c & 0xe0) == 0xc0) {
                        n = 1;
                        c &= 0x1f;
                } else if ((c & 0xf0) == 0xe0) {
                        n = 2;
                        c &= 0x0f;
                } else if ((c & 0xf8) == 0xf0) {
                        n = 3;
                        c &= 0x07;
                } else {
                        return false;
                }
                if (n > len - i - 1)
                        return false;
                for (k = 1; k <= n; ++k) {
                        if ((s[i + k] & 0xc0) != 0x80)
                                return false;
                        c = (c << 6) | (s[i + k] & 0x3f);
                }
                /* overlong forms, surrogates, beyond U+10FFFF */
                if ((n == 1 && c < 0x80) || (n == 2 && c < 0x800) || (n == 3 && c < 0x10000))
                        return false;
                if ((c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
                        return false;
                i += n + 1;
        }
        return true;
}

bool kdbus_utf8_valid(const char *str, size_t len)
{
        return utf8_valid(str, len);
}

static bool char_is_name(char c)
{
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
               (c >= '0' && c <= '9') || c == '_';
}

bool kdbus_object_path_valid(const char *s, size_t len)
{
        size_t i;

        if (len == 0 || s[0] != '/')
                return false;
        if (len == 1)
                return true;
        for (i = 1; i < len; ++i) {
                if (s[i] == '/') {
                        if (s[i - 1] == '/')
                                return false;
                } else if (!char_is_name(s[i])) {
                        return false;
                }
        }
        return s[len - 1] != '/';
}

/*
 * Character classes of names, one table lookup a character: a name is
 * checked on every message (header fields, destinations, senders).
 */
#define NC_NAME         0x1     /* A-Z a-z 0-9 _ */
#define NC_DIGIT        0x2
#define NC_DASH         0x4     /* '-': bus names only */

static const uint8_t name_class[256] = {
        ['0' ... '9'] = NC_NAME | NC_DIGIT,
        ['A' ... 'Z'] = NC_NAME,
        ['a' ... 'z'] = NC_NAME,
        ['_'] = NC_NAME,
        ['-'] = NC_DASH,
};

/*
 * Dot-separated elements, at least two, none empty, of the characters in
 * @allowed; an element starts with a digit only if @digit_first. Checks
 * @len characters, or with @len SIZE_MAX up to the NUL; at most @max.
 * The inner loop runs over an element's characters, the rest is per dot.
 */
static bool dotted_name_check(const char *s, size_t len, size_t max, unsigned int allowed,
                              bool digit_first)
{
        unsigned int forbidden_first = digit_first ? 0 : NC_DIGIT;
        size_t i = 0, n_dots = 0;

        for (;;) {
                uint8_t cls;

                /* an element's first character (a NUL or a dot: empty) */
                if (i == len)
                        return false;
                cls = name_class[(uint8_t)s[i]];
                if (!(cls & allowed) || (cls & forbidden_first))
                        return false;
                ++i;
                while (i < len && (name_class[(uint8_t)s[i]] & allowed))
                        ++i;
                if (i > max)
                        return false;
                if (i == len || (s[i] == 0 && len == SIZE_MAX))
                        break;
                if (s[i] != '.')
                        return false;
                ++n_dots;
                ++i;
        }
        return n_dots > 0;
}

static bool bus_name_check(const char *s, size_t len)
{
        if (s[0] == ':')
                return dotted_name_check(s + 1, len == SIZE_MAX ? len : len - 1, 254,
                                         NC_NAME | NC_DASH, true);
        return dotted_name_check(s, len, 255, NC_NAME | NC_DASH, false);
}

static bool member_name_check(const char *s, size_t len)
{
        size_t i = 0;

        if (name_class[(uint8_t)s[0]] & NC_DIGIT)
                return false;
        while (i < len && (name_class[(uint8_t)s[i]] & NC_NAME))
                ++i;
        if (i == 0 || i > 255)
                return false;
        return i == len || (s[i] == 0 && len == SIZE_MAX);
}

bool kdbus_bus_name_valid(const char *s)
{
        return s && bus_name_check(s, SIZE_MAX);
}

bool kdbus_interface_name_valid(const char *s)
{
        return s && dotted_name_check(s, SIZE_MAX, 255, NC_NAME, false);
}

bool kdbus_member_name_valid(const char *s)
{
        return s && member_name_check(s, SIZE_MAX);
}

bool kdbus_bus_name_valid_len(const char *s, size_t len)
{
        return len > 0 && bus_name_check(s, len);
}

bool kdbus_interface_name_valid_len(const char *s, size_t len)
{
        return dotted_name_check(s, len, 255, NC_NAME, false);
}

bool kdbus_member_name_valid_len(const char *s, size_t len)
{
        return len > 0 && member_name_check(s, len);
}

/* ---- shared helpers ---- */

static size_t align_up(size_t pos, size_t align)
{
        return (pos + align - 1) & ~(align - 1);
}

static void copy_value(void *dst, const void *src, size_t n, bool swap)
{
        const uint8_t *s = src;
        uint8_t *d = dst;
        size_t i;

        if (!swap || n == 1) {
                memcpy(d, s, n);
                return;
        }
        for (i = 0; i < n; ++i)
                d[i] = s[n - 1 - i];
}

/*
 * Room for @n frames. The first is @frame0, inside the reader or writer:
 * a flat body (most are) needs no allocation. Containers move the frames
 * to the heap and grow them by doubling.
 */
static int frames_ensure(struct kdbus_frame **frames, unsigned int *n_frames, unsigned int n,
                         struct kdbus_frame *frame0)
{
        struct kdbus_frame *f;
        unsigned int want;

        if (n <= *n_frames)
                return 0;
        want = *n_frames ? *n_frames * 2 : n;
        if (want < n)
                want = n;
        if (want > KDBUS_CONTAINER_DEPTH_MAX + 1)
                want = KDBUS_CONTAINER_DEPTH_MAX + 1;
        if (want < n)
                return -ELOOP;
        if (*frames == frame0) {
                f = malloc(want * sizeof(*f));
                if (f)
                        memcpy(f, frame0, *n_frames * sizeof(*f));
        } else {
                f = realloc(*frames, want * sizeof(*f));
        }
        if (!f)
                return -ENOMEM;
        *frames = f;
        *n_frames = want;
        return 0;
}

/*
 * The outermost frame: member by member, not a memset of the whole frame,
 * whose signature buffer is only read up to its NUL.
 */
static void frame_init_outer(struct kdbus_frame *f, const char *signature, size_t len,
                             size_t begin, size_t end)
{
        f->type = 0;
        memcpy(f->signature, signature, len);
        f->signature[len] = 0;
        f->sig_len = len;
        f->sig_pos = 0;
        f->begin = begin;
        f->end = end;
        f->length_offset = 0;
        f->n_arrays = 0;
        f->n_structs = 0;
}

static bool endian_valid(char endian)
{
        return endian == KDBUS_LITTLE_ENDIAN || endian == KDBUS_BIG_ENDIAN;
}

/* ---- writer ---- */

int kdbus_writer_init(struct kdbus_writer *w, char endian)
{
        if (!endian_valid(endian))
                return -EINVAL;
        /* member by member: frame0 is initialised as the outermost frame */
        w->data = w->inline_data;
        w->size = 0;
        w->allocated = sizeof(w->inline_data);
        w->swap = endian != KDBUS_NATIVE_ENDIAN;
        w->endian = endian;
        w->depth = 0;
        w->frames = &w->frame0;
        w->n_frames = 1;
        frame_init_outer(&w->frame0, "", 0, 0, 0);
        return 0;
}

void kdbus_writer_deinit(struct kdbus_writer *w)
{
        if (w->data != w->inline_data)
                thread_cache_put(w->data);
        if (w->frames != &w->frame0)
                free(w->frames);
        w->data = NULL;
        w->size = 0;
        w->allocated = 0;
        w->depth = 0;
        w->frames = NULL;
        w->n_frames = 0;
}

const char *kdbus_writer_signature(const struct kdbus_writer *w)
{
        return w->frames[0].signature;
}

void kdbus_writer_save(const struct kdbus_writer *w, struct kdbus_writer_state *s)
{
        s->size = w->size;
        s->depth = w->depth;
        s->sig_len = w->frames[w->depth].sig_len;
        s->sig_pos = w->frames[w->depth].sig_pos;
}

/*
 * Writing into a container changes only its position in the signature,
 * or (the outermost) appends to its signature; opening one writes the
 * frame above it. So these two, and the cut signature, restore it.
 */
void kdbus_writer_restore(struct kdbus_writer *w, const struct kdbus_writer_state *s)
{
        struct kdbus_frame *f = &w->frames[s->depth];

        w->size = s->size;
        w->depth = s->depth;
        f->sig_len = s->sig_len;
        f->sig_pos = s->sig_pos;
        f->signature[s->sig_len] = 0;
}

/* room for @n more bytes than the writer has (writer_reserve()) */
static int writer_grow(struct kdbus_writer *w, size_t n)
{
        size_t want = w->allocated ? w->allocated * 2 : 256;
        uint8_t *d;

        if (want < w->size + n)
                want = w->size + n;
        if (want >= THREAD_CACHE_KEEP_MIN / 2) {
                /* a large body: a block kept from an earlier message, used whole */
                size_t usable;

                d = thread_cache_get(want, &usable);
                if (!d)
                        return -ENOMEM;
                memcpy(d, w->data, w->size);
                if (w->data != w->inline_data)
                        thread_cache_put(w->data);
                want = usable;
        } else if (w->data == w->inline_data) {
                d = malloc(want);
                if (d)
                        memcpy(d, w->data, w->size);
        } else {
                d = realloc(w->data, want);
        }
        if (!d)
                return -ENOMEM;
        w->data = d;
        w->allocated = want;
        return 0;
}

/* @n bytes at the end, at *@p; small enough to be inlined where bytes are written */
static inline int writer_reserve(struct kdbus_writer *w, size_t n, uint8_t **p)
{
        if (n > KDBUS_MESSAGE_MAX_SIZE - w->size)
                return -EMSGSIZE;
        if (w->size + n > w->allocated) {
                int r = writer_grow(w, n);

                if (r < 0)
                        return r;
        }
        *p = w->data + w->size;
        w->size += n;
        return 0;
}

int kdbus_writer_pad(struct kdbus_writer *w, size_t align)
{
        size_t n = align_up(w->size, align) - w->size;
        uint8_t *p;
        int r;

        if (!n)
                return 0;
        r = writer_reserve(w, n, &p);
        if (r < 0)
                return r;
        memset(p, 0, n);
        return 0;
}

int kdbus_writer_put_raw(struct kdbus_writer *w, const void *data, size_t size)
{
        uint8_t *p;
        int r;

        if (!size)
                return 0;
        r = writer_reserve(w, size, &p);
        if (r < 0)
                return r;
        memcpy(p, data, size);
        return 0;
}

static int writer_put(struct kdbus_writer *w, size_t align, const void *v, size_t n)
{
        uint8_t *p;
        int r;

        r = kdbus_writer_pad(w, align);
        if (r < 0)
                return r;
        r = writer_reserve(w, n, &p);
        if (r < 0)
                return r;
        copy_value(p, v, n, w->swap);
        return 0;
}

/*
 * Account for the complete type t in the current container's signature.
 * Inlined: every value appended passes here, and a basic value's constant
 * length of 1 leaves little of it.
 */
static inline __attribute__((always_inline)) int
writer_expect(struct kdbus_writer *w, const char *t, size_t tlen)
{
        struct kdbus_frame *f = &w->frames[w->depth];

        switch (f->type) {
        case 0:
                if (tlen > KDBUS_SIGNATURE_MAX - f->sig_len)
                        return -E2BIG;
                if (tlen == 1)
                        f->signature[f->sig_len] = t[0];        /* a basic type: no memcpy() call */
                else
                        memcpy(f->signature + f->sig_len, t, tlen);
                f->sig_len += tlen;
                f->signature[f->sig_len] = 0;
                return 0;
        case 'a':
                if (tlen != f->sig_len || memcmp(f->signature, t, tlen))
                        return -ENXIO;
                return 0;
        default:
                /* complete types are prefix-free: a match is the whole next type */
                if (tlen > f->sig_len - f->sig_pos || memcmp(f->signature + f->sig_pos, t, tlen))
                        return -ENXIO;
                f->sig_pos += tlen;
                return 0;
        }
}

/*
 * Padding, length (u32, or a byte for a signature), the bytes and a NUL:
 * one reservation. Inlined into its two callers (every string appended,
 * a variant's signature).
 */
static inline __attribute__((always_inline)) int
writer_put_string(struct kdbus_writer *w, char type, const char *s, size_t len)
{
        size_t pad = type == 'g' ? 0 : align_up(w->size, 4) - w->size;
        size_t head = type == 'g' ? 1 : 4;
        uint8_t *p;
        int r;

        r = writer_reserve(w, pad + head + len + 1, &p);
        if (r < 0)
                return r;
        /* the padding of a string or path (0-3 bytes) in one store: 5 or more were reserved */
        if (type != 'g')
                memset(p, 0, 4);
        p += pad;
        if (type == 'g') {
                p[0] = (uint8_t)len;
        } else {
                uint32_t l32 = (uint32_t)len;

                if (w->swap)
                        l32 = __builtin_bswap32(l32);
                memcpy(p, &l32, 4);
        }
        memcpy(p + head, s, len);
        p[head + len] = 0;
        return 0;
}

int kdbus_writer_append_basic(struct kdbus_writer *w, char type, const void *value)
{
        struct kdbus_writer_state saved;
        const char *s = value;
        size_t len = 0;
        uint32_t u32;
        int r;

        if (!kdbus_type_is_basic(type) || !value)
                return -EINVAL;

        switch (type) {
        case 's':
                len = strlen(s);
                if (len > UINT32_MAX)
                        return -EMSGSIZE;
                if (!utf8_valid(s, len))
                        return -EINVAL;
                break;
        case 'o':
                len = strlen(s);
                if (!kdbus_object_path_valid(s, len))
                        return -EINVAL;
                break;
        case 'g':
                r = kdbus_signature_validate(s);
                if (r < 0)
                        return r;
                len = strlen(s);
                break;
        }

        kdbus_writer_save(w, &saved);
        r = writer_expect(w, &type, 1);
        if (r < 0)
                return r;

        switch (type) {
        case 's':
        case 'o':
        case 'g':
                r = writer_put_string(w, type, s, len);
                break;
        case 'b':
                u32 = *(const int *)value ? 1 : 0;
                r = writer_put(w, 4, &u32, 4);
                break;
        default:
                r = writer_put(w, kdbus_type_alignment(type), value,
                               kdbus_type_fixed_size(type));
                break;
        }
        if (r < 0)
                kdbus_writer_restore(w, &saved);
        return r;
}

int kdbus_writer_open(struct kdbus_writer *w, char type, const char *contents)
{
        struct kdbus_writer_state saved;
        char t[KDBUS_SIGNATURE_MAX + 3];
        struct kdbus_frame *f, *nf;
        size_t clen, tlen;
        uint32_t zero = 0;
        int r;

        if (!contents || !kdbus_type_is_container(type))
                return -EINVAL;
        clen = strnlen(contents, KDBUS_SIGNATURE_MAX + 1);
        if (clen > KDBUS_SIGNATURE_MAX)
                return -E2BIG;
        if (w->depth + 1 > KDBUS_CONTAINER_DEPTH_MAX)
                return -ELOOP;
        r = frames_ensure(&w->frames, &w->n_frames, w->depth + 2, &w->frame0);
        if (r < 0)
                return r;
        f = &w->frames[w->depth];

        switch (type) {
        case 'a':
        case '(':
                t[0] = type;
                memcpy(t + 1, contents, clen);
                tlen = clen + 1;
                if (type == '(')
                        t[tlen++] = ')';
                if (tlen > KDBUS_SIGNATURE_MAX)
                        return -E2BIG;
                r = kdbus_signature_validate_nested(t, tlen, true, f->n_arrays, f->n_structs);
                if (r < 0)
                        return r;
                break;
        case '{':
                if (f->type != 'a')
                        return -ENXIO;
                if (clen < 2 || !kdbus_type_is_basic(contents[0]))
                        return -EINVAL;
                r = kdbus_signature_validate_nested(contents + 1, clen - 1, true,
                                                    f->n_arrays, f->n_structs + 1);
                if (r < 0)
                        return r;
                t[0] = '{';
                memcpy(t + 1, contents, clen);
                t[clen + 1] = '}';
                tlen = clen + 2;
                break;
        default: /* 'v' */
                r = kdbus_signature_validate_nested(contents, clen, true, f->n_arrays, f->n_structs);
                if (r < 0)
                        return r;
                t[0] = 'v';
                tlen = 1;
                break;
        }

        kdbus_writer_save(w, &saved);
        r = writer_expect(w, t, tlen);
        if (r < 0)
                return r;

        switch (type) {
        case 'a':
                r = writer_put(w, 4, &zero, 4);
                if (r >= 0)
                        r = kdbus_writer_pad(w, kdbus_type_alignment(contents[0]));
                break;
        case '(':
        case '{':
                r = kdbus_writer_pad(w, 8);
                break;
        default:
                r = writer_put_string(w, 'g', contents, clen);
                break;
        }
        if (r < 0) {
                kdbus_writer_restore(w, &saved);
                return r;
        }

        nf = &w->frames[w->depth + 1];
        nf->type = type;
        memcpy(nf->signature, contents, clen);
        nf->signature[clen] = 0;
        nf->sig_len = clen;
        nf->sig_pos = 0;
        nf->begin = w->size;
        nf->end = 0;
        nf->length_offset = type == 'a' ? align_up(saved.size, 4) : 0;
        nf->n_arrays = f->n_arrays + (type == 'a');
        nf->n_structs = f->n_structs + (type == '(' || type == '{');
        ++w->depth;
        return 0;
}

int kdbus_writer_close(struct kdbus_writer *w)
{
        struct kdbus_frame *f;
        uint32_t len;

        if (w->depth == 0)
                return -EINVAL;
        f = &w->frames[w->depth];
        if (f->type == 'a') {
                if (w->size - f->begin > KDBUS_ARRAY_MAX_SIZE)
                        return -EMSGSIZE;
                len = (uint32_t)(w->size - f->begin);
                copy_value(w->data + f->length_offset, &len, 4, w->swap);
        } else if (f->sig_pos != f->sig_len) {
                return -ENXIO;
        }
        --w->depth;
        return 0;
}

int kdbus_writer_append_array(struct kdbus_writer *w, char type, const void *ptr, size_t size)
{
        struct kdbus_writer_state saved;
        size_t n = kdbus_type_fixed_size(type), i;
        const char contents[2] = { type, 0 };
        uint8_t *p;
        int r;

        if (!n || type == 'h' || size % n || (size && !ptr))
                return -EINVAL;
        if (size > KDBUS_ARRAY_MAX_SIZE)
                return -EMSGSIZE;
        if (type == 'b') {
                for (i = 0; i < size; i += 4) {
                        uint32_t v;

                        memcpy(&v, (const uint8_t *)ptr + i, 4);
                        if (v > 1)
                                return -EINVAL;
                }
        }

        kdbus_writer_save(w, &saved);
        r = kdbus_writer_open(w, 'a', contents);
        if (r < 0)
                return r;
        r = writer_reserve(w, size, &p);
        if (r < 0)
                goto fail;
        /* one memcpy unless every element needs its bytes swapped */
        if (size && (!w->swap || n == 1))
                memcpy(p, ptr, size);
        else
                for (i = 0; i < size; i += n)
                        copy_value(p + i, (const uint8_t *)ptr + i, n, true);
        r = kdbus_writer_close(w);
        if (r < 0)
                goto fail;
        return 0;

fail:
        kdbus_writer_restore(w, &saved);
        return r;
}

/* ---- reader ---- */

int kdbus_reader_init(struct kdbus_reader *r, const void *data, size_t size, size_t pos,
                      char endian, const char *signature, uint32_t n_fds)
{
        size_t len;
        int ret;

        if (!signature)
                return -EINVAL;
        len = strnlen(signature, KDBUS_SIGNATURE_MAX + 1);
        ret = kdbus_signature_validate_nested(signature, len, false, 0, 0);
        if (ret < 0)
                return ret;
        return kdbus_reader_init_checked(r, data, size, pos, endian, signature, len, n_fds);
}

int kdbus_reader_init_checked(struct kdbus_reader *r, const void *data, size_t size, size_t pos,
                              char endian, const char *signature, size_t sig_len, uint32_t n_fds)
{
        if (!endian_valid(endian) || pos > size || (size && !data) || sig_len > KDBUS_SIGNATURE_MAX)
                return -EINVAL;
        /* member by member */
        r->data = data;
        r->size = size;
        r->swap = endian != KDBUS_NATIVE_ENDIAN;
        r->endian = endian;
        r->pos = pos;
        r->n_fds = n_fds;
        r->depth = 0;
        r->frames = &r->frame0;
        r->n_frames = 1;
        r->validated = false;
        r->peek = NULL;
        frame_init_outer(&r->frame0, signature, sig_len, pos, size);
        return 0;
}

void kdbus_reader_deinit(struct kdbus_reader *r)
{
        if (r->frames != &r->frame0)
                free(r->frames);
        if (r->peek)
                free(r->peek);
        r->peek = NULL;
        r->frames = NULL;
        r->n_frames = 0;
}

void kdbus_reader_save(const struct kdbus_reader *r, struct kdbus_reader_state *s)
{
        s->pos = r->pos;
        s->depth = r->depth;
        s->sig_pos = r->frames[r->depth].sig_pos;
}

/* reading in a container changes only its position in the signature */
void kdbus_reader_restore(struct kdbus_reader *r, const struct kdbus_reader_state *s)
{
        r->pos = s->pos;
        r->depth = s->depth;
        r->frames[r->depth].sig_pos = s->sig_pos;
}

static size_t reader_limit(const struct kdbus_reader *r)
{
        return r->frames[r->depth].end;
}

/* skip zero padding up to align, within the current limit */
static int reader_align(struct kdbus_reader *r, size_t align)
{
        size_t p = align_up(r->pos, align), i;

        if (p > reader_limit(r))
                return -EBADMSG;
        for (i = r->pos; i < p; ++i)
                if (r->data[i])
                        return -EBADMSG;
        r->pos = p;
        return 0;
}

static int reader_get(struct kdbus_reader *r, size_t align, void *out, size_t n)
{
        int ret;

        ret = reader_align(r, align);
        if (ret < 0)
                return ret;
        if (n > reader_limit(r) - r->pos)
                return -EBADMSG;
        copy_value(out, r->data + r->pos, n, r->swap);
        r->pos += n;
        return 0;
}

/* the complete type expected next, or 0 at the end of the container */
static int reader_next(struct kdbus_reader *r, const char **t, size_t *tlen)
{
        struct kdbus_frame *f = &r->frames[r->depth];
        int ret;

        if (f->type == 'a') {
                if (r->pos >= f->end)
                        return 0;
                *t = f->signature;
                *tlen = f->sig_len;
                return 1;
        }
        if (f->sig_pos >= f->sig_len)
                return 0;
        ret = kdbus_signature_next(f->signature + f->sig_pos, f->n_arrays, f->n_structs, tlen);
        if (ret < 0)
                return ret;
        *t = f->signature + f->sig_pos;
        return 1;
}

static void reader_advance(struct kdbus_reader *r, size_t tlen)
{
        struct kdbus_frame *f = &r->frames[r->depth];

        if (f->type != 'a')
                f->sig_pos += tlen;
}

/*
 * A string, path or signature at the current position: its length (4-aligned
 * u32, or a byte for a signature), the bytes and their NUL, read in place
 * with the checks of reader_get(). The reader moves only on success.
 * Inlined: every string value is read and validated through it, and the
 * variants' callers pass the constant 'g', which leaves little of it.
 */
static inline __attribute__((always_inline)) int
reader_get_string(struct kdbus_reader *r, char type, const char **out, size_t *out_len)
{
        size_t limit = reader_limit(r), pos = r->pos;
        const char *s;
        uint32_t len;

        if (type == 'g') {
                if (pos >= limit)
                        return -EBADMSG;
                len = r->data[pos++];
        } else {
                size_t p = align_up(pos, 4);

                if (p > limit || limit - p < 4)
                        return -EBADMSG;
                /* the padding of a validated reader's bytes was checked then */
                if (!r->validated)
                        for (; pos < p; ++pos)
                                if (r->data[pos])
                                        return -EBADMSG;
                memcpy(&len, r->data + p, 4);
                if (r->swap)
                        len = __builtin_bswap32(len);
                pos = p + 4;
        }
        if (len >= limit - pos)
                return -EBADMSG;        /* no room for the terminating NUL */
        s = (const char *)r->data + pos;
        if (s[len] != 0)
                return -EBADMSG;
        /*
         * The bytes do not change after validation: each string is checked
         * once. The UTF-8 check refuses a NUL itself (with the same errno).
         */
        if (!r->validated) {
                if (type != 's' && memchr(s, 0, len))
                        return -EILSEQ;
                if (type == 's' && !utf8_valid(s, len))
                        return -EILSEQ;
                if (type == 'o' && !kdbus_object_path_valid(s, len))
                        return -EBADMSG;
        }
        r->pos = pos + (size_t)len + 1;
        *out = s;
        *out_len = len;
        return 0;
}

/*
 * The basic value of @type that the signature has next: 1, or an error.
 * Inlined into its three callers (reading, validating a flat body,
 * skipping): every value received passes here at least once.
 */
static inline __attribute__((always_inline)) int
reader_basic(struct kdbus_reader *r, char type, void *value)
{
        size_t saved_pos = r->pos;      /* reading a value moves only the position */
        const char *s = NULL;
        size_t len;
        uint32_t u32;
        int ret;

        switch (type) {
        case 's':
        case 'o':
        case 'g':
                ret = reader_get_string(r, type, &s, &len);
                if (ret >= 0 && type == 'g') {
                        ret = kdbus_signature_validate_nested(s, len, false, 0, 0);
                        if (ret == -EINVAL)
                                ret = -EBADMSG;
                }
                if (ret >= 0 && value)
                        *(const char **)value = s;
                break;
        case 'b':
                ret = reader_get(r, 4, &u32, 4);
                if (ret >= 0 && u32 > 1)
                        ret = -EBADMSG;
                if (ret >= 0 && value)
                        *(int *)value = (int)u32;
                break;
        case 'h':
                ret = reader_get(r, 4, &u32, 4);
                if (ret >= 0 && u32 >= r->n_fds)
                        ret = -EBADMSG;
                if (ret >= 0 && value)
                        *(uint32_t *)value = u32;
                break;
        default: {
                uint64_t buf;

                ret = reader_get(r, kdbus_type_alignment(type), &buf, kdbus_type_fixed_size(type));
                if (ret >= 0 && value)
                        memcpy(value, &buf, kdbus_type_fixed_size(type));
                break;
        }
        }
        if (ret < 0) {
                r->pos = saved_pos;
                return ret;
        }
        reader_advance(r, 1);
        return 1;
}

int kdbus_reader_read_basic(struct kdbus_reader *r, char type, void *value)
{
        const struct kdbus_frame *f = &r->frames[r->depth];
        const char *t;
        size_t tlen;
        int ret;

        if (!kdbus_type_is_basic(type))
                return -EINVAL;
        /* outside an array: the next type is @type exactly when its first byte is */
        if (f->type != 'a') {
                if (f->sig_pos >= f->sig_len)
                        return 0;
                if (f->signature[f->sig_pos] != type)
                        return -ENXIO;
                return reader_basic(r, type, value);
        }
        ret = reader_next(r, &t, &tlen);
        if (ret <= 0)
                return ret;
        if (tlen != 1 || t[0] != type)
                return -ENXIO;
        return reader_basic(r, type, value);
}

/* contents signature of the container type t (not for variants) */
static void container_contents(const char *t, size_t tlen, const char **c, size_t *clen)
{
        *c = t + 1;
        *clen = t[0] == 'a' ? tlen - 1 : tlen - 2;
}

int kdbus_reader_enter(struct kdbus_reader *r, char type, const char *contents)
{
        struct kdbus_reader_state saved;
        struct kdbus_frame *f, *nf;
        size_t tlen, clen, sig_off = 0, end;
        const char *t, *c;
        uint32_t n;
        int ret;

        if (!kdbus_type_is_container(type))
                return -EINVAL;
        /* frames may move: ensure room before taking pointers into them */
        if (r->depth + 1 > KDBUS_CONTAINER_DEPTH_MAX) {
                ret = reader_next(r, &t, &tlen);
                if (ret <= 0)
                        return ret;
                return t[0] == type ? -ELOOP : -ENXIO;
        }
        ret = frames_ensure(&r->frames, &r->n_frames, r->depth + 2, &r->frame0);
        if (ret < 0)
                return ret;
        ret = reader_next(r, &t, &tlen);
        if (ret <= 0)
                return ret;
        if (t[0] != type)
                return -ENXIO;

        kdbus_reader_save(r, &saved);
        f = &r->frames[r->depth];
        end = f->end;

        if (type == 'v') {
                ret = reader_get_string(r, 'g', &c, &clen);
                if (ret >= 0) {
                        ret = kdbus_signature_validate_nested(c, clen, true,
                                                              f->n_arrays, f->n_structs);
                        if (ret == -EINVAL)
                                ret = -EBADMSG;
                }
                if (ret < 0)
                        goto fail;
        } else {
                container_contents(t, tlen, &c, &clen);
                sig_off = (size_t)(c - f->signature);
        }

        if (contents && (strlen(contents) != clen || memcmp(contents, c, clen))) {
                ret = -ENXIO;
                goto fail;
        }

        switch (type) {
        case 'a':
                ret = reader_get(r, 4, &n, 4);
                if (ret < 0)
                        goto fail;
                if (n > KDBUS_ARRAY_MAX_SIZE) {
                        ret = -EMSGSIZE;
                        goto fail;
                }
                ret = reader_align(r, kdbus_type_alignment(c[0]));
                if (ret < 0)
                        goto fail;
                if (n > f->end - r->pos) {
                        ret = -EBADMSG;
                        goto fail;
                }
                end = r->pos + n;
                break;
        case '(':
        case '{':
                ret = reader_align(r, 8);
                if (ret < 0)
                        goto fail;
                break;
        }

        nf = &r->frames[r->depth + 1];
        nf->type = type;
        memcpy(nf->signature, type == 'v' ? c : f->signature + sig_off, clen);
        nf->signature[clen] = 0;
        nf->sig_len = clen;
        nf->sig_pos = 0;
        nf->begin = r->pos;
        nf->end = end;
        nf->length_offset = 0;
        nf->n_arrays = f->n_arrays + (type == 'a');
        nf->n_structs = f->n_structs + (type == '(' || type == '{');
        reader_advance(r, tlen);
        ++r->depth;
        return 1;

fail:
        kdbus_reader_restore(r, &saved);
        return ret;
}

int kdbus_reader_exit(struct kdbus_reader *r)
{
        struct kdbus_frame *f;

        if (r->depth == 0)
                return -EINVAL;
        f = &r->frames[r->depth];
        if (f->type == 'a' ? r->pos != f->end : f->sig_pos != f->sig_len)
                return -EBUSY;
        --r->depth;
        return 0;
}

int kdbus_reader_peek(struct kdbus_reader *r, char *type, const char **contents)
{
        const char *t, *c = NULL;
        size_t tlen, clen = 0;
        int ret;

        ret = reader_next(r, &t, &tlen);
        if (ret <= 0)
                return ret;
        if (t[0] == 'v') {
                struct kdbus_reader_state saved;
                struct kdbus_frame *f = &r->frames[r->depth];

                kdbus_reader_save(r, &saved);
                ret = reader_get_string(r, 'g', &c, &clen);
                kdbus_reader_restore(r, &saved);
                if (ret < 0)
                        return ret;
                ret = kdbus_signature_validate_nested(c, clen, true, f->n_arrays, f->n_structs);
                if (ret < 0)
                        return ret == -EINVAL ? -EBADMSG : ret;
        } else if (kdbus_type_is_container(t[0])) {
                container_contents(t, tlen, &c, &clen);
        }
        if (type)
                *type = t[0];
        if (contents) {
                if (c) {
                        /* most readers never peek: the buffer is not part of every message */
                        if (!r->peek) {
                                r->peek = malloc(KDBUS_SIGNATURE_MAX + 1);
                                if (!r->peek)
                                        return -ENOMEM;
                        }
                        memcpy(r->peek, c, clen);
                        r->peek[clen] = 0;
                        *contents = r->peek;
                } else {
                        *contents = NULL;
                }
        }
        return 1;
}

bool kdbus_reader_at_end(const struct kdbus_reader *r)
{
        const struct kdbus_frame *f = &r->frames[r->depth];

        return f->type == 'a' ? r->pos >= f->end : f->sig_pos >= f->sig_len;
}

static int reader_skip_one(struct kdbus_reader *r)
{
        const char *t;
        size_t tlen;
        char type, elem = 0;
        int ret;

        ret = reader_next(r, &t, &tlen);
        if (ret <= 0)
                return ret;
        type = t[0];
        if (kdbus_type_is_basic(type)) {
                union {
                        uint64_t u64;
                        const char *s;
                } buf;

                return reader_basic(r, type, &buf);     /* reader_next() found it */
        }
        if (type == 'a' && tlen == 2)
                elem = t[1];

        ret = kdbus_reader_enter(r, type, NULL);
        if (ret < 0)
                return ret;

        if (kdbus_type_is_fixed(elem) && elem != 'b' && elem != 'h') {
                /* no value of these types is invalid: check the size only */
                struct kdbus_frame *f = &r->frames[r->depth];

                if ((f->end - r->pos) % kdbus_type_fixed_size(elem))
                        return -EBADMSG;
                r->pos = f->end;
        } else {
                while ((ret = reader_skip_one(r)) > 0)
                        ;
                if (ret < 0)
                        return ret;
        }
        ret = kdbus_reader_exit(r);
        if (ret < 0)
                return ret;
        return 1;
}

int kdbus_reader_skip(struct kdbus_reader *r)
{
        struct kdbus_reader_state saved;
        int ret;

        kdbus_reader_save(r, &saved);
        ret = reader_skip_one(r);
        if (ret < 0)
                kdbus_reader_restore(r, &saved);
        return ret;
}

/* the signature left in the outermost frame has basic types only */
static bool reader_rest_basic(const struct kdbus_reader *r)
{
        const struct kdbus_frame *f = &r->frames[0];

        for (size_t i = f->sig_pos; i < f->sig_len; ++i)
                if (!kdbus_type_is_basic(f->signature[i]))
                        return false;
        return true;
}

int kdbus_reader_validate(struct kdbus_reader *r)
{
        struct kdbus_reader_state saved;
        int ret;

        if (r->depth != 0)
                return -EINVAL;
        kdbus_reader_save(r, &saved);
        if (reader_rest_basic(r)) {
                /* a flat body (most are): each type is one value, no descent */
                struct kdbus_frame *f = &r->frames[0];
                union {
                        uint64_t u64;
                        const char *s;
                } buf;

                ret = 0;
                while (ret >= 0 && f->sig_pos < f->sig_len)
                        ret = reader_basic(r, f->signature[f->sig_pos], &buf);
        } else {
                while ((ret = reader_skip_one(r)) > 0)
                        ;
        }
        if (ret >= 0 && r->pos != r->frames[0].end)
                ret = -EBADMSG;         /* bytes beyond the signature */
        kdbus_reader_restore(r, &saved);
        /*
         * Callers validate bytes nobody else can change (a private copy, a
         * sealed memfd); later reads of strings skip their checks.
         */
        if (ret >= 0)
                r->validated = true;
        return ret < 0 ? ret : 0;
}

int kdbus_reader_read_array(struct kdbus_reader *r, char type, const void **ptr, size_t *size)
{
        struct kdbus_reader_state saved;
        size_t n = kdbus_type_fixed_size(type), i, len;
        const char contents[2] = { type, 0 };
        struct kdbus_frame *f;
        int ret;

        if (!n || type == 'h')
                return -EINVAL;
        if (r->swap && n > 1)
                return -EOPNOTSUPP;

        kdbus_reader_save(r, &saved);
        ret = kdbus_reader_enter(r, 'a', contents);
        if (ret <= 0)
                return ret;
        f = &r->frames[r->depth];
        len = f->end - r->pos;
        if (len % n) {
                ret = -EBADMSG;
                goto fail;
        }
        if (type == 'b') {
                for (i = 0; i < len; i += 4) {
                        uint32_t v;

                        memcpy(&v, r->data + r->pos + i, 4);
                        if (v > 1) {
                                ret = -EBADMSG;
                                goto fail;
                        }
                }
        }
        *ptr = r->data + r->pos;
        *size = len;
        r->pos = f->end;
        ret = kdbus_reader_exit(r);
        if (ret < 0)
                goto fail;
        return 1;

fail:
        kdbus_reader_restore(r, &saved);
        return ret;
}
