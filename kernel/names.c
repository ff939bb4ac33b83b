// SPDX-License-Identifier: GPL-2.0-only
/*
 * Well-known names: syntax rules (abi.md §4.3, registry.md §2.1).
 *
 * Locking: none so far (pure functions).
 */

#include <linux/ctype.h>
#include <linux/kernel.h>
#include <linux/string.h>

#include "limits.h"
#include "names.h"

/**
 * kdbus_name_is_valid() - check if a name is valid
 * @p:			The name to check
 * @allow_wildcard:	Whether or not to allow a wildcard name
 *
 * A name is valid if all of the following criteria are met:
 *
 *  - The name has two or more elements separated by a period ('.')
 *  - All elements must contain at least one character
 *  - Each element must only contain the ASCII characters "[A-Z][a-z][0-9]_-"
 *    and must not begin with a digit
 *  - The name must not exceed KDBUS_NAME_MAX_LEN
 *  - If @allow_wildcard is true, the name may end in '.*', which counts
 *    as the last element
 *
 * Return: true if the name is valid
 */
bool kdbus_name_is_valid(const char *p, bool allow_wildcard)
{
	bool dot, found_dot = false;
	const char *q;

	for (dot = true, q = p; *q; q++) {
		if (*q == '.') {
			if (dot)
				return false;

			found_dot = true;
			dot = true;
		} else {
			bool good;

			/* "x.y.*": the wildcard counts as the last element */
			if (allow_wildcard && dot && found_dot &&
			    q[0] == '*' && !q[1]) {
				dot = false;
				q++;
				break;
			}

			good = isalpha(*q) || (!dot && isdigit(*q)) ||
				*q == '_' || *q == '-';

			if (!good)
				return false;

			dot = false;
		}
	}

	if (q - p > KDBUS_NAME_MAX_LEN)
		return false;

	if (dot)
		return false;

	if (!found_dot)
		return false;

	return true;
}
