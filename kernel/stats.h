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
 * @KDBUS_STAT_PULLED_USER:	of @KDBUS_STAT_COPY_USER, the bytes the
 *				receiving side copied itself (a large
 *				synchronous call, or its answer, pulled)
 * @KDBUS_STAT_MSGS:		messages placed into a receiver's pool
 * @KDBUS_STAT_MEMFD_PASSED:	memfd payload bytes handed to receivers
 *				by reference, without a copy
 * @KDBUS_STAT_LIVE_NODES:	live nodes (domains, control files, buses,
 *				endpoints)
 * @KDBUS_STAT_LIVE_HANDLES:	live file handles (open kdbus files)
 * @KDBUS_STAT_LIVE_CONNS:	live connections (struct kdbus_conn)
 * @KDBUS_STAT_LIVE_POOLS:	live pools
 * @KDBUS_STAT_LIVE_MESSAGES:	live staged messages (in a SEND, or shared
 *				by queue entries)
 * @KDBUS_STAT_LIVE_ENTRIES:	live queue entries
 * @KDBUS_STAT_LIVE_REPLIES:	live reply records
 * @KDBUS_STAT_LIVE_NAMES:	live well-known name entries
 * @KDBUS_STAT_LIVE_OWNERS:	live name ownership/queue records
 * @KDBUS_STAT_LIVE_MATCHES:	live match entries
 * @KDBUS_STAT_LIVE_USERS:	live per-user accounting objects
 * @KDBUS_STAT_MAX:		number of counters
 *
 * The LIVE counters are gauges (created minus freed): with no kdbus file
 * open and no mount they are 0, and a test that leaves the module as it
 * found it leaves them at their previous values.
 */
enum kdbus_stat {
	KDBUS_STAT_COPY_USER,
	KDBUS_STAT_COPY_KERNEL,
	KDBUS_STAT_COPY_POOL,
	KDBUS_STAT_PULLED_USER,
	KDBUS_STAT_MSGS,
	KDBUS_STAT_MEMFD_PASSED,
	KDBUS_STAT_LIVE_NODES,
	KDBUS_STAT_LIVE_HANDLES,
	KDBUS_STAT_LIVE_CONNS,
	KDBUS_STAT_LIVE_POOLS,
	KDBUS_STAT_LIVE_MESSAGES,
	KDBUS_STAT_LIVE_ENTRIES,
	KDBUS_STAT_LIVE_REPLIES,
	KDBUS_STAT_LIVE_NAMES,
	KDBUS_STAT_LIVE_OWNERS,
	KDBUS_STAT_LIVE_MATCHES,
	KDBUS_STAT_LIVE_USERS,
	KDBUS_STAT_MAX,
};

void kdbus_stats_add(enum kdbus_stat stat, u64 n);
void kdbus_stats_live(enum kdbus_stat stat, int delta);
int kdbus_stats_init(void);
void kdbus_stats_exit(void);

#endif
