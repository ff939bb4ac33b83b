/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Module-wide counters of the work the message path really did: bytes
 * written into pools by kind of source, messages placed into pools, and
 * memfd payload passed by reference (see stats.c).
 */

#ifndef __KDBUS_STATS_H
#define __KDBUS_STATS_H

#include <linux/types.h>

/**
 * enum kdbus_stat - one module-wide counter
 * @KDBUS_STAT_COPY_USER:	bytes copied from user memory into a pool
 *				(PAYLOAD_VEC data)
 * @KDBUS_STAT_COPY_KERNEL:	bytes copied from kernel buffers into a pool
 *				(headers, items, metadata, padding, command
 *				results, installed descriptor numbers)
 * @KDBUS_STAT_COPY_POOL:	bytes copied from one pool into another
 *				(activator hand-over)
 * @KDBUS_STAT_MSGS:		messages placed into a receiver's pool
 * @KDBUS_STAT_MEMFD_PASSED:	memfd payload bytes handed to receivers
 *				by reference, without a copy
 * @KDBUS_STAT_MAX:		number of counters
 */
enum kdbus_stat {
	KDBUS_STAT_COPY_USER,
	KDBUS_STAT_COPY_KERNEL,
	KDBUS_STAT_COPY_POOL,
	KDBUS_STAT_MSGS,
	KDBUS_STAT_MEMFD_PASSED,
	KDBUS_STAT_MAX,
};

void kdbus_stats_add(enum kdbus_stat stat, u64 n);
int kdbus_stats_init(void);
void kdbus_stats_exit(void);

#endif
