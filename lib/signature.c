// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * D-Bus signatures. The validator is a recursive descent over one complete
 * type at a time; its depth is bounded by the nesting limits it enforces,
 * so hostile signatures cannot exhaust the stack.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "signature.h"

/* type classes by code, a lookup instead of a search (signature.h) */
const unsigned char signature_type_class[256] = {
        ['y'] = KDBUS_TC_FIXED | KDBUS_TC_BASIC, ['b'] = KDBUS_TC_FIXED | KDBUS_TC_BASIC,
        ['n'] = KDBUS_TC_FIXED | KDBUS_TC_BASIC, ['q'] = KDBUS_TC_FIXED | KDBUS_TC_BASIC,
        ['i'] = KDBUS_TC_FIXED | KDBUS_TC_BASIC, ['u'] = KDBUS_TC_FIXED | KDBUS_TC_BASIC,
        ['x'] = KDBUS_TC_FIXED | KDBUS_TC_BASIC, ['t'] = KDBUS_TC_FIXED | KDBUS_TC_BASIC,
        ['d'] = KDBUS_TC_FIXED | KDBUS_TC_BASIC, ['h'] = KDBUS_TC_FIXED | KDBUS_TC_BASIC,
        ['s'] = KDBUS_TC_BASIC, ['o'] = KDBUS_TC_BASIC, ['g'] = KDBUS_TC_BASIC,
        ['a'] = KDBUS_TC_CONTAINER, ['('] = KDBUS_TC_CONTAINER, ['{'] = KDBUS_TC_CONTAINER,
        ['v'] = KDBUS_TC_CONTAINER,
};

/* the external definitions of the inline predicates */
extern inline bool kdbus_type_is_basic(char type);
extern inline bool kdbus_type_is_fixed(char type);
extern inline bool kdbus_type_is_container(char type);

size_t kdbus_type_alignment(char type)
{
        switch (type) {
        case 'y':
        case 'g':
        case 'v':
                return 1;
        case 'n':
        case 'q':
                return 2;
        case 'b':
        case 'i':
        case 'u':
        case 'h':
        case 's':
        case 'o':
        case 'a':
                return 4;
        case 'x':
        case 't':
        case 'd':
        case '(':
        case '{':
                return 8;
        default:
                return 0;
        }
}

size_t kdbus_type_fixed_size(char type)
{
        return kdbus_type_is_fixed(type) ? kdbus_type_alignment(type) : 0;
}

static int signature_complete(const char *sig, size_t len, size_t *pos,
                              unsigned int n_arrays, unsigned int n_structs);

/* a dict entry at sig[*pos] == '{', inside n_arrays arrays (its own included) */
static int signature_dict(const char *sig, size_t len, size_t *pos,
                          unsigned int n_arrays, unsigned int n_structs)
{
        int r;

        if (n_structs + 1 > KDBUS_SIGNATURE_MAX_STRUCTS)
                return -ELOOP;
        ++*pos;
        if (*pos >= len || !kdbus_type_is_basic(sig[*pos]))
                return -EINVAL;
        ++*pos;
        r = signature_complete(sig, len, pos, n_arrays, n_structs + 1);
        if (r < 0)
                return r;
        if (*pos >= len || sig[*pos] != '}')
                return -EINVAL;
        ++*pos;
        return 0;
}

/* parse one complete type at sig[*pos], which is within sig[0..len) */
static int signature_complete(const char *sig, size_t len, size_t *pos,
                              unsigned int n_arrays, unsigned int n_structs)
{
        int r;

        if (*pos >= len)
                return -EINVAL;

        switch (sig[*pos]) {
        case 'a':
                if (n_arrays + 1 > KDBUS_SIGNATURE_MAX_ARRAYS)
                        return -ELOOP;
                ++*pos;
                if (*pos < len && sig[*pos] == '{')
                        return signature_dict(sig, len, pos, n_arrays + 1, n_structs);
                return signature_complete(sig, len, pos, n_arrays + 1, n_structs);
        case '(':
                if (n_structs + 1 > KDBUS_SIGNATURE_MAX_STRUCTS)
                        return -ELOOP;
                ++*pos;
                if (*pos < len && sig[*pos] == ')')
                        return -EINVAL;
                while (*pos < len && sig[*pos] != ')') {
                        r = signature_complete(sig, len, pos, n_arrays, n_structs + 1);
                        if (r < 0)
                                return r;
                }
                if (*pos >= len)
                        return -EINVAL;
                ++*pos;
                return 0;
        case 'v':
                ++*pos;
                return 0;
        default:
                if (!kdbus_type_is_basic(sig[*pos]))
                        return -EINVAL;
                ++*pos;
                return 0;
        }
}

int kdbus_signature_validate_nested(const char *signature, size_t len, bool single,
                                    unsigned int n_arrays, unsigned int n_structs)
{
        size_t pos = 0;
        int r;

        if (len > KDBUS_SIGNATURE_MAX)
                return -E2BIG;
        /* the common case, basic types only: each is one complete type */
        while (pos < len && kdbus_type_is_basic(signature[pos]))
                ++pos;
        if (pos == len)
                return single && len != 1 ? -EINVAL : 0;
        pos = 0;
        if (memchr(signature, 0, len))
                return -EINVAL;
        if (single && len == 0)
                return -EINVAL;

        while (pos < len) {
                r = signature_complete(signature, len, &pos, n_arrays, n_structs);
                if (r < 0)
                        return r;
                if (single && pos != len)
                        return -EINVAL;
        }
        return 0;
}

int kdbus_signature_validate(const char *signature)
{
        if (!signature)
                return -EINVAL;
        return kdbus_signature_validate_nested(signature, strnlen(signature, KDBUS_SIGNATURE_MAX + 1),
                                               false, 0, 0);
}

int kdbus_signature_validate_single(const char *signature)
{
        if (!signature)
                return -EINVAL;
        return kdbus_signature_validate_nested(signature, strnlen(signature, KDBUS_SIGNATURE_MAX + 1),
                                               true, 0, 0);
}

int kdbus_signature_next(const char *signature, unsigned int n_arrays,
                         unsigned int n_structs, size_t *len)
{
        size_t pos = 0, n;
        int r;

        if (!signature)
                return -EINVAL;
        /* a basic type or a variant is one character, whatever follows */
        if (kdbus_type_is_basic(signature[0]) || signature[0] == 'v') {
                *len = 1;
                return 0;
        }
        n = strnlen(signature, KDBUS_SIGNATURE_MAX + 1);
        if (signature[0] == '{')
                r = signature_dict(signature, n, &pos, n_arrays, n_structs);
        else
                r = signature_complete(signature, n, &pos, n_arrays, n_structs);
        if (r < 0)
                return r;
        *len = pos;
        return 0;
}
