/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Well-known names. So far only their syntax; the registry comes with
 * the names issue.
 */

#ifndef __KDBUS_NAMES_H
#define __KDBUS_NAMES_H

#include <linux/types.h>

bool kdbus_name_is_valid(const char *p, bool allow_wildcard);

#endif
