/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Bloom filters and masks for kdbus signals, following the user-space
 * convention every D-Bus peer on kdbus uses (kdbus.match(7)): each
 * element string "label:value" sets n_hash bits chosen from SipHash-2-4 outputs
 * under eight fixed keys.
 *
 * A struct kdbus_bloom describes one generation of bloom bits in caller
 * storage (size bytes, as 64-bit native words, as the kernel compares
 * them). The same object is used for the filter of an outgoing signal
 * (kdbus_bloom_add_*) and for the mask of a match rule
 * (kdbus_bloom_add_message_type/_interface/_member and kdbus_bloom_mask_*).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KDBUS_BLOOM_DEFAULT_SIZE        64      /* bytes, m = 512 bits */
#define KDBUS_BLOOM_DEFAULT_N_HASH      8
#define KDBUS_BLOOM_MAX_ARG             63      /* arg0 ... arg63 */

struct kdbus_bloom {
        uint64_t *data;         /* size / 8 words, owned by the caller */
        uint64_t size;          /* bytes, non-zero multiple of 8 */
        uint64_t n_hash;        /* bits set per element */
};

int kdbus_bloom_check_parameter(uint64_t size, uint64_t n_hash);
int kdbus_bloom_init(struct kdbus_bloom *bloom, uint64_t *data, uint64_t size, uint64_t n_hash);
void kdbus_bloom_clear(struct kdbus_bloom *bloom);

int kdbus_bloom_bits(uint64_t size, uint64_t n_hash, const void *element, size_t len, uint64_t *bits);

/* raw elements */
void kdbus_bloom_add_data(struct kdbus_bloom *bloom, const void *element, size_t len);
void kdbus_bloom_add_str(struct kdbus_bloom *bloom, const char *element);
void kdbus_bloom_add_pair(struct kdbus_bloom *bloom, const char *label, const char *value);
void kdbus_bloom_add_prefixes(struct kdbus_bloom *bloom, const char *label, const char *value, char sep);

/* message properties; used for both filters and masks */
void kdbus_bloom_add_message_type(struct kdbus_bloom *bloom, const char *type);
void kdbus_bloom_add_interface(struct kdbus_bloom *bloom, const char *interface);
void kdbus_bloom_add_member(struct kdbus_bloom *bloom, const char *member);

/* filter of a broadcast signal */
void kdbus_bloom_add_path(struct kdbus_bloom *bloom, const char *path);
int kdbus_bloom_add_arg(struct kdbus_bloom *bloom, unsigned int index, const char *value);
int kdbus_bloom_add_arg_has(struct kdbus_bloom *bloom, unsigned int index, const char *element);

/* mask of a match rule */
void kdbus_bloom_mask_path(struct kdbus_bloom *bloom, const char *path);
void kdbus_bloom_mask_path_namespace(struct kdbus_bloom *bloom, const char *path);
int kdbus_bloom_mask_arg(struct kdbus_bloom *bloom, unsigned int index, const char *value);
int kdbus_bloom_mask_arg_namespace(struct kdbus_bloom *bloom, unsigned int index, const char *value);
int kdbus_bloom_mask_arg_has(struct kdbus_bloom *bloom, unsigned int index, const char *value);
int kdbus_bloom_mask_arg_slash_prefix(struct kdbus_bloom *bloom, unsigned int index, const char *value);

bool kdbus_bloom_match(const uint64_t *filter, uint64_t generation,
                       const uint64_t *mask, uint64_t n_generations, uint64_t size);
