// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * SipHash-2-4, byte-order independent: input and key are read as
 * little-endian words whatever the host byte order.
 */

#include <stddef.h>
#include <stdint.h>

#include "siphash24.h"

static inline uint64_t rotl64(uint64_t x, unsigned int b)
{
        return (x << b) | (x >> (64 - b));
}

static inline uint64_t read_le64(const uint8_t *p)
{
        return (uint64_t)p[0] |
               ((uint64_t)p[1] << 8) |
               ((uint64_t)p[2] << 16) |
               ((uint64_t)p[3] << 24) |
               ((uint64_t)p[4] << 32) |
               ((uint64_t)p[5] << 40) |
               ((uint64_t)p[6] << 48) |
               ((uint64_t)p[7] << 56);
}

static inline void sipround(struct kdbus_siphash24 *s)
{
        s->v0 += s->v1;
        s->v1 = rotl64(s->v1, 13);
        s->v1 ^= s->v0;
        s->v0 = rotl64(s->v0, 32);
        s->v2 += s->v3;
        s->v3 = rotl64(s->v3, 16);
        s->v3 ^= s->v2;
        s->v0 += s->v3;
        s->v3 = rotl64(s->v3, 21);
        s->v3 ^= s->v0;
        s->v2 += s->v1;
        s->v1 = rotl64(s->v1, 17);
        s->v1 ^= s->v2;
        s->v2 = rotl64(s->v2, 32);
}

static inline void compress_word(struct kdbus_siphash24 *s, uint64_t m)
{
        s->v3 ^= m;
        sipround(s);
        sipround(s);
        s->v0 ^= m;
}

/**
 * kdbus_siphash24_init() - start a SipHash-2-4 computation
 * @state:      state to initialise
 * @key:        16-byte key
 */
void kdbus_siphash24_init(struct kdbus_siphash24 *state, const uint8_t key[KDBUS_SIPHASH24_KEY_SIZE])
{
        uint64_t k0 = read_le64(key);
        uint64_t k1 = read_le64(key + 8);

        state->v0 = 0x736f6d6570736575ULL ^ k0;
        state->v1 = 0x646f72616e646f6dULL ^ k1;
        state->v2 = 0x6c7967656e657261ULL ^ k0;
        state->v3 = 0x7465646279746573ULL ^ k1;
        state->padding = 0;
        state->inlen = 0;
}

/**
 * kdbus_siphash24_compress() - feed bytes into a SipHash-2-4 computation
 * @state:      state from kdbus_siphash24_init()
 * @data:       input bytes (may be NULL if @len is 0)
 * @len:        number of bytes
 */
void kdbus_siphash24_compress(struct kdbus_siphash24 *state, const void *data, size_t len)
{
        const uint8_t *in = data;
        size_t left = state->inlen & 7;

        state->inlen += len;

        /* complete a word started by an earlier call */
        if (left > 0) {
                for (; len > 0 && left < 8; ++in, --len, ++left)
                        state->padding |= (uint64_t)*in << (left * 8);
                if (left < 8)
                        return;
                compress_word(state, state->padding);
                state->padding = 0;
        }

        for (; len >= 8; in += 8, len -= 8)
                compress_word(state, read_le64(in));

        for (left = 0; left < len; ++left)
                state->padding |= (uint64_t)in[left] << (left * 8);
}

/**
 * kdbus_siphash24_finalize() - finish a SipHash-2-4 computation
 * @state:      state; it must not be used afterwards without a new init
 *
 * Return: the 64-bit hash value.
 */
uint64_t kdbus_siphash24_finalize(struct kdbus_siphash24 *state)
{
        uint64_t b = state->padding | ((uint64_t)(state->inlen & 0xff) << 56);

        compress_word(state, b);
        state->v2 ^= 0xff;
        sipround(state);
        sipround(state);
        sipround(state);
        sipround(state);

        return state->v0 ^ state->v1 ^ state->v2 ^ state->v3;
}

/**
 * kdbus_siphash24() - SipHash-2-4 of one buffer
 * @data:       input bytes (may be NULL if @len is 0)
 * @len:        number of bytes
 * @key:        16-byte key
 *
 * Return: the 64-bit hash value.
 */
uint64_t kdbus_siphash24(const void *data, size_t len, const uint8_t key[KDBUS_SIPHASH24_KEY_SIZE])
{
        struct kdbus_siphash24 state;

        kdbus_siphash24_init(&state, key);
        kdbus_siphash24_compress(&state, data, len);
        return kdbus_siphash24_finalize(&state);
}
