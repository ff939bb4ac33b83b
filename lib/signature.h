/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * D-Bus type signatures (the D-Bus Specification): type codes, alignment,
 * and validation of signature strings with the nesting limits of the D-Bus
 * specification (32 nested arrays, 32 nested structs or dict entries).
 *
 * Validators return 0, -EINVAL for a syntax error, -ELOOP when a nesting
 * limit is exceeded and -E2BIG when the signature is longer than 255 bytes.
 */

#include <stdbool.h>
#include <stddef.h>

#define KDBUS_SIGNATURE_MAX             255
#define KDBUS_SIGNATURE_MAX_ARRAYS      32
#define KDBUS_SIGNATURE_MAX_STRUCTS     32

/*
 * Type classes by code (signature.c): a lookup, asked for every value, so
 * the predicates are inline here (signature.c has their external
 * definitions).
 */
#define KDBUS_TC_FIXED          0x1
#define KDBUS_TC_BASIC          0x2
#define KDBUS_TC_CONTAINER      0x4

extern const unsigned char signature_type_class[256];

inline bool kdbus_type_is_basic(char type)
{
        return signature_type_class[(unsigned char)type] & KDBUS_TC_BASIC;
}

inline bool kdbus_type_is_fixed(char type)
{
        return signature_type_class[(unsigned char)type] & KDBUS_TC_FIXED;
}

inline bool kdbus_type_is_container(char type)
{
        return signature_type_class[(unsigned char)type] & KDBUS_TC_CONTAINER;
}
size_t kdbus_type_alignment(char type);
size_t kdbus_type_fixed_size(char type);

int kdbus_signature_validate(const char *signature);
int kdbus_signature_validate_single(const char *signature);

/*
 * Length of the complete type that starts at @signature, validated with
 * @n_arrays arrays and @n_structs structs already enclosing it. A dict
 * entry is accepted here too, as the element type of an array.
 */
int kdbus_signature_next(const char *signature, unsigned int n_arrays,
                         unsigned int n_structs, size_t *len);

/*
 * Validate the @len bytes at @signature (no NUL inside) as a sequence of
 * complete types (or exactly one if @single), nested inside @n_arrays
 * arrays and @n_structs structs.
 */
int kdbus_signature_validate_nested(const char *signature, size_t len, bool single,
                                    unsigned int n_arrays, unsigned int n_structs);
