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

bool kdbus_type_is_basic(char type);
bool kdbus_type_is_fixed(char type);
bool kdbus_type_is_container(char type);
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
