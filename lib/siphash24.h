/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * SipHash-2-4 (Aumasson, Bernstein): 2 compression rounds, 4 finalisation
 * rounds, 64-bit output. The 16-byte key is read as two little-endian
 * 64-bit halves; the result is returned as a host integer whose
 * little-endian serialisation is the canonical output byte string.
 *
 * The streaming interface lets callers hash a string made of several
 * pieces (e.g. "label" ":" "value") without concatenating them first.
 */

#include <stddef.h>
#include <stdint.h>

#define KDBUS_SIPHASH24_KEY_SIZE 16

struct kdbus_siphash24 {
        uint64_t v0;
        uint64_t v1;
        uint64_t v2;
        uint64_t v3;
        uint64_t padding;       /* pending input bytes, little-endian */
        size_t inlen;           /* total bytes fed so far */
};

void kdbus_siphash24_init(struct kdbus_siphash24 *state, const uint8_t key[KDBUS_SIPHASH24_KEY_SIZE]);
void kdbus_siphash24_compress(struct kdbus_siphash24 *state, const void *data, size_t len);
uint64_t kdbus_siphash24_finalize(struct kdbus_siphash24 *state);

uint64_t kdbus_siphash24(const void *data, size_t len, const uint8_t key[KDBUS_SIPHASH24_KEY_SIZE]);
