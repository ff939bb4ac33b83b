// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Bloom filters for kdbus signal matching (user-space convention of
 * kdbus.match(7), i.e. sd-bus's scheme
 * of the kdbus era). The kernel never interprets these bits; peers agree
 * on them so that a mask built by one finds a filter built by another.
 *
 * Bit selection for an element s under {size, n_hash}: m = 8 * size bits,
 * w = (floor(log2 m) + 7) / 8 bytes per index. The byte stream is the
 * little-endian serialisation of SipHash-2-4(key_0, s), then key_1, ...,
 * each hash computed only when needed. Index i is stream bytes
 * [i*w, i*w + w) read big-endian, masked with m - 1.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bloom.h"
#include "siphash24.h"

static const uint8_t bloom_keys[8][KDBUS_SIPHASH24_KEY_SIZE] = {
        { 0xb9, 0x66, 0x0b, 0xf0, 0x46, 0x70, 0x47, 0xc1, 0x88, 0x75, 0xc4, 0x9c, 0x54, 0xb9, 0xbd, 0x15 },
        { 0xaa, 0xa1, 0x54, 0xa2, 0xe0, 0x71, 0x4b, 0x39, 0xbf, 0xe1, 0xdd, 0x2e, 0x9f, 0xc5, 0x4a, 0x3b },
        { 0x63, 0xfd, 0xae, 0xbe, 0xcd, 0x82, 0x48, 0x12, 0xa1, 0x6e, 0x41, 0x26, 0xcb, 0xfa, 0xa0, 0xc8 },
        { 0x23, 0xbe, 0x45, 0x29, 0x32, 0xd2, 0x46, 0x2d, 0x82, 0x03, 0x52, 0x28, 0xfe, 0x37, 0x17, 0xf5 },
        { 0x56, 0x3b, 0xbf, 0xee, 0x5a, 0x4f, 0x43, 0x39, 0xaf, 0xaa, 0x94, 0x08, 0xdf, 0xf0, 0xfc, 0x10 },
        { 0x31, 0x80, 0xc8, 0x73, 0xc7, 0xea, 0x46, 0xd3, 0xaa, 0x25, 0x75, 0x0f, 0x9e, 0x4c, 0x09, 0x29 },
        { 0x7d, 0xf7, 0x18, 0x4b, 0x7b, 0xa4, 0x44, 0xd5, 0x85, 0x3c, 0x06, 0xe0, 0x65, 0x53, 0x96, 0x6d },
        { 0xf2, 0x77, 0xe9, 0x6f, 0x93, 0xb5, 0x4e, 0x71, 0x9a, 0x0c, 0x34, 0x88, 0x39, 0x25, 0xbf, 0x35 },
};

/* longest label we build: "arg63-slash-prefix" */
#define BLOOM_LABEL_MAX 32

/*
 * An element is hashed from up to three pieces without concatenating them:
 * label, ":", value[0..value_len). A NULL label means the value alone.
 */
struct bloom_element {
        const char *label;
        const void *value;
        size_t value_len;
};

/* number of hash bytes consumed per bit index */
static unsigned int bloom_index_bytes(uint64_t size)
{
        uint64_t m = size * 8;
        unsigned int log2m = 0;

        while (m > 1) {
                m >>= 1;
                ++log2m;
        }

        return (log2m + 7) / 8;
}

/**
 * kdbus_bloom_check_parameter() - can these bus bloom parameters be served
 * @size:       bloom size in bytes, from KDBUS_ITEM_BLOOM_PARAMETER
 * @n_hash:     number of hash functions, from KDBUS_ITEM_BLOOM_PARAMETER
 *
 * Return: 0 if usable, -EOPNOTSUPP if size or n_hash is 0, size is not a
 * multiple of 8 (the kernel never reports one), or more than the 64 bytes
 * of hash output the eight keys provide would be needed.
 */
int kdbus_bloom_check_parameter(uint64_t size, uint64_t n_hash)
{
        unsigned int w;

        if (size == 0 || n_hash == 0 || size % 8 != 0)
                return -EOPNOTSUPP;
        /* size * 8 must not overflow when computing m */
        if (size > UINT64_MAX / 8)
                return -EOPNOTSUPP;

        w = bloom_index_bytes(size);
        if (w > 8 || n_hash > 64 / w)
                return -EOPNOTSUPP;

        return 0;
}

/**
 * kdbus_bloom_init() - set up an empty bloom generation in caller storage
 * @bloom:      object to initialise
 * @data:       storage of @size bytes (size / 8 words)
 * @size:       bloom size in bytes
 * @n_hash:     number of hash functions
 *
 * Return: 0 on success, -EOPNOTSUPP if the parameters cannot be served
 * (see kdbus_bloom_check_parameter()); @bloom is untouched then.
 */
int kdbus_bloom_init(struct kdbus_bloom *bloom, uint64_t *data, uint64_t size, uint64_t n_hash)
{
        int r;

        r = kdbus_bloom_check_parameter(size, n_hash);
        if (r < 0)
                return r;

        bloom->data = data;
        bloom->size = size;
        bloom->n_hash = n_hash;
        kdbus_bloom_clear(bloom);
        return 0;
}

/**
 * kdbus_bloom_clear() - reset all bits of a bloom generation to zero
 * @bloom:      initialised bloom object
 */
void kdbus_bloom_clear(struct kdbus_bloom *bloom)
{
        memset(bloom->data, 0, bloom->size);
}

static uint64_t bloom_hash(const struct bloom_element *e, unsigned int key)
{
        struct kdbus_siphash24 state;

        kdbus_siphash24_init(&state, bloom_keys[key]);
        if (e->label) {
                kdbus_siphash24_compress(&state, e->label, strlen(e->label));
                kdbus_siphash24_compress(&state, ":", 1);
        }
        kdbus_siphash24_compress(&state, e->value, e->value_len);
        return kdbus_siphash24_finalize(&state);
}

/* parameters must have passed kdbus_bloom_check_parameter() */
static void bloom_element_bits(uint64_t size, uint64_t n_hash,
                               const struct bloom_element *e, uint64_t *bits)
{
        unsigned int w = bloom_index_bytes(size);
        uint64_t m = size * 8;
        unsigned int key = 0, used = 8;
        uint64_t hash = 0;
        uint64_t i;

        for (i = 0; i < n_hash; ++i) {
                uint64_t p = 0;
                unsigned int j;

                for (j = 0; j < w; ++j) {
                        if (used == 8) {
                                hash = bloom_hash(e, key++);
                                used = 0;
                        }
                        /* little-endian serialisation: byte n is bits 8n.. */
                        p = (p << 8) | ((hash >> (used * 8)) & 0xff);
                        ++used;
                }

                bits[i] = p & (m - 1);
        }
}

static void bloom_add_element(struct kdbus_bloom *bloom, const struct bloom_element *e)
{
        uint64_t bits[64];
        uint64_t i;

        /* n_hash <= 64 / w <= 64 by kdbus_bloom_check_parameter() */
        bloom_element_bits(bloom->size, bloom->n_hash, e, bits);
        for (i = 0; i < bloom->n_hash; ++i)
                bloom->data[bits[i] / 64] |= 1ULL << (bits[i] % 64);
}

/**
 * kdbus_bloom_bits() - bit indexes an element sets
 * @size:       bloom size in bytes
 * @n_hash:     number of hash functions
 * @element:    element bytes (no terminating NUL)
 * @len:        length of @element
 * @bits:       output, @n_hash indexes in hash order
 *
 * Return: 0 on success, -EOPNOTSUPP for unusable parameters.
 */
int kdbus_bloom_bits(uint64_t size, uint64_t n_hash, const void *element, size_t len, uint64_t *bits)
{
        struct bloom_element e = { .label = NULL, .value = element, .value_len = len };
        int r;

        r = kdbus_bloom_check_parameter(size, n_hash);
        if (r < 0)
                return r;

        bloom_element_bits(size, n_hash, &e, bits);
        return 0;
}

/**
 * kdbus_bloom_add_data() - add one raw element
 * @bloom:      bloom object
 * @element:    element bytes (no terminating NUL)
 * @len:        length of @element
 */
void kdbus_bloom_add_data(struct kdbus_bloom *bloom, const void *element, size_t len)
{
        struct bloom_element e = { .label = NULL, .value = element, .value_len = len };

        bloom_add_element(bloom, &e);
}

/**
 * kdbus_bloom_add_str() - add one raw element given as a C string
 * @bloom:      bloom object
 * @element:    the element, without its NUL
 */
void kdbus_bloom_add_str(struct kdbus_bloom *bloom, const char *element)
{
        kdbus_bloom_add_data(bloom, element, strlen(element));
}

static void bloom_add_pair_len(struct kdbus_bloom *bloom, const char *label, const char *value, size_t len)
{
        struct bloom_element e = { .label = label, .value = value, .value_len = len };

        bloom_add_element(bloom, &e);
}

/**
 * kdbus_bloom_add_pair() - add the element "label:value"
 * @bloom:      bloom object
 * @label:      prefix word
 * @value:      value (may be empty)
 */
void kdbus_bloom_add_pair(struct kdbus_bloom *bloom, const char *label, const char *value)
{
        bloom_add_pair_len(bloom, label, value, strlen(value));
}

/**
 * kdbus_bloom_add_prefixes() - add "label:value" and its separator expansion
 * @bloom:      bloom object
 * @label:      prefix word, e.g. "path-slash-prefix"
 * @value:      value to expand
 * @sep:        separator, '/' or '.'
 *
 * Adds label:value; then, with t = value, repeatedly: find the last @sep
 * in t (stop if none), add t up to and including it, stop if it is the
 * first character of t, otherwise add t up to but excluding it and
 * continue with that shorter string. "/a/b" gives "/a/b", "/a/", "/a", "/".
 */
void kdbus_bloom_add_prefixes(struct kdbus_bloom *bloom, const char *label, const char *value, char sep)
{
        size_t len = strlen(value);

        bloom_add_pair_len(bloom, label, value, len);

        for (;;) {
                size_t i = len;

                /* last separator in value[0..len) */
                while (i > 0 && value[i - 1] != sep)
                        --i;
                if (i == 0)
                        break;

                bloom_add_pair_len(bloom, label, value, i);
                if (i == 1)
                        break;

                len = i - 1;
                bloom_add_pair_len(bloom, label, value, len);
        }
}

/**
 * kdbus_bloom_add_message_type() - add "message-type:<type>"
 * @bloom:      filter or mask
 * @type:       "signal", "method_call", "method_return" or "error"
 */
void kdbus_bloom_add_message_type(struct kdbus_bloom *bloom, const char *type)
{
        kdbus_bloom_add_pair(bloom, "message-type", type);
}

/**
 * kdbus_bloom_add_interface() - add "interface:<interface>"
 * @bloom:      filter or mask
 * @interface:  D-Bus interface name
 */
void kdbus_bloom_add_interface(struct kdbus_bloom *bloom, const char *interface)
{
        kdbus_bloom_add_pair(bloom, "interface", interface);
}

/**
 * kdbus_bloom_add_member() - add "member:<member>"
 * @bloom:      filter or mask
 * @member:     D-Bus member name
 */
void kdbus_bloom_add_member(struct kdbus_bloom *bloom, const char *member)
{
        kdbus_bloom_add_pair(bloom, "member", member);
}

/**
 * kdbus_bloom_add_path() - add a signal's PATH to its filter
 * @bloom:      filter
 * @path:       object path
 *
 * Adds "path:P", "path-slash-prefix:P" and the slash expansion of P under
 * "path-slash-prefix".
 */
void kdbus_bloom_add_path(struct kdbus_bloom *bloom, const char *path)
{
        kdbus_bloom_add_pair(bloom, "path", path);
        kdbus_bloom_add_pair(bloom, "path-slash-prefix", path);
        kdbus_bloom_add_prefixes(bloom, "path-slash-prefix", path, '/');
}

static int bloom_arg_label(char *buf, unsigned int index, const char *suffix)
{
        if (index > KDBUS_BLOOM_MAX_ARG)
                return -EINVAL;

        snprintf(buf, BLOOM_LABEL_MAX, "arg%u%s", index, suffix);
        return 0;
}

/**
 * kdbus_bloom_add_arg() - add a string-like body argument to a filter
 * @bloom:      filter
 * @index:      argument index, 0..63
 * @value:      value of an argument of type 's', 'o' or 'g'
 *
 * Adds "argI:v" and the dot and slash expansions of v under
 * "argI-dot-prefix" and "argI-slash-prefix". The caller walks the body's
 * top-level arguments in order and stops at the first one that is neither
 * such a string nor an array of them (see kdbus_bloom_add_arg_has()).
 *
 * Return: 0, or -EINVAL if @index > 63 (nothing is added).
 */
int kdbus_bloom_add_arg(struct kdbus_bloom *bloom, unsigned int index, const char *value)
{
        char label[BLOOM_LABEL_MAX];
        int r;

        r = bloom_arg_label(label, index, "");
        if (r < 0)
                return r;
        kdbus_bloom_add_pair(bloom, label, value);

        bloom_arg_label(label, index, "-dot-prefix");
        kdbus_bloom_add_prefixes(bloom, label, value, '.');

        bloom_arg_label(label, index, "-slash-prefix");
        kdbus_bloom_add_prefixes(bloom, label, value, '/');
        return 0;
}

/**
 * kdbus_bloom_add_arg_has() - add one element of a string-array argument
 * @bloom:      filter
 * @index:      argument index, 0..63
 * @element:    one element of an argument of type "as", "ao" or "ag"
 *
 * Return: 0, or -EINVAL if @index > 63 (nothing is added).
 */
int kdbus_bloom_add_arg_has(struct kdbus_bloom *bloom, unsigned int index, const char *element)
{
        char label[BLOOM_LABEL_MAX];
        int r;

        r = bloom_arg_label(label, index, "-has");
        if (r < 0)
                return r;
        kdbus_bloom_add_pair(bloom, label, element);
        return 0;
}

/**
 * kdbus_bloom_mask_path() - mask bits of a rule's path=P
 * @bloom:      mask
 * @path:       object path
 */
void kdbus_bloom_mask_path(struct kdbus_bloom *bloom, const char *path)
{
        kdbus_bloom_add_pair(bloom, "path", path);
}

/**
 * kdbus_bloom_mask_path_namespace() - mask bits of a rule's path_namespace=P
 * @bloom:      mask
 * @path:       object path ("/" allowed)
 */
void kdbus_bloom_mask_path_namespace(struct kdbus_bloom *bloom, const char *path)
{
        kdbus_bloom_add_pair(bloom, "path-slash-prefix", path);
}

static int bloom_mask_arg(struct kdbus_bloom *bloom, unsigned int index,
                          const char *suffix, const char *value)
{
        char label[BLOOM_LABEL_MAX];
        int r;

        r = bloom_arg_label(label, index, suffix);
        if (r < 0)
                return r;
        kdbus_bloom_add_pair(bloom, label, value);
        return 0;
}

/**
 * kdbus_bloom_mask_arg() - mask bits of a rule's argN=V
 * @bloom:      mask
 * @index:      N, 0..63
 * @value:      V (may be empty)
 *
 * Return: 0, or -EINVAL if @index > 63.
 */
int kdbus_bloom_mask_arg(struct kdbus_bloom *bloom, unsigned int index, const char *value)
{
        return bloom_mask_arg(bloom, index, "", value);
}

/**
 * kdbus_bloom_mask_arg_namespace() - mask bits of a rule's argNnamespace=V
 * @bloom:      mask
 * @index:      N (D-Bus only defines arg0namespace), 0..63
 * @value:      V
 *
 * Return: 0, or -EINVAL if @index > 63.
 */
int kdbus_bloom_mask_arg_namespace(struct kdbus_bloom *bloom, unsigned int index, const char *value)
{
        return bloom_mask_arg(bloom, index, "-dot-prefix", value);
}

/**
 * kdbus_bloom_mask_arg_has() - mask bits of a rule's argNhas=V (libkdbus)
 * @bloom:      mask
 * @index:      N, 0..63
 * @value:      V
 *
 * Return: 0, or -EINVAL if @index > 63.
 */
int kdbus_bloom_mask_arg_has(struct kdbus_bloom *bloom, unsigned int index, const char *value)
{
        return bloom_mask_arg(bloom, index, "-has", value);
}

/**
 * kdbus_bloom_mask_arg_slash_prefix() - mask bits "argN-slash-prefix:V"
 * @bloom:      mask
 * @index:      N, 0..63
 * @value:      V
 *
 * What early-2015 clients used for argNpath=V. The current convention adds
 * nothing to the mask for argNpath and checks it in user space; this is
 * only for peers that want the old, narrower kernel-side match.
 *
 * Return: 0, or -EINVAL if @index > 63.
 */
int kdbus_bloom_mask_arg_slash_prefix(struct kdbus_bloom *bloom, unsigned int index, const char *value)
{
        return bloom_mask_arg(bloom, index, "-slash-prefix", value);
}

/**
 * kdbus_bloom_match() - the kernel's bloom test, in user space
 * @filter:             filter words of a signal (@size bytes)
 * @generation:         the filter's generation
 * @mask:               @n_generations masks of @size bytes, oldest first
 * @n_generations:      number of mask generations, at least 1
 * @size:               bloom size in bytes, multiple of 8
 *
 * Uses mask generation min(@generation, @n_generations - 1) and passes if
 * every bit set in it is also set in @filter.
 *
 * Return: true if the filter passes the mask.
 */
bool kdbus_bloom_match(const uint64_t *filter, uint64_t generation,
                       const uint64_t *mask, uint64_t n_generations, uint64_t size)
{
        uint64_t words = size / 8, k, i;
        const uint64_t *m;

        if (n_generations == 0)
                return false;

        k = generation < n_generations - 1 ? generation : n_generations - 1;
        m = mask + k * words;
        for (i = 0; i < words; ++i)
                if ((filter[i] & m[i]) != m[i])
                        return false;

        return true;
}
