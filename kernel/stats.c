// SPDX-License-Identifier: GPL-2.0-only
/*
 * Module-wide counters that show what the message path really did, for
 * tests and benchmarks: a PAYLOAD_VEC is copied exactly once into each
 * receiver's pool, a memfd payload not at all; and gauges of the live
 * objects of each kind, so that a test can see them back at its baseline.
 * They are exposed read-only as /sys/kernel/debug/kdbus/stats, one
 * "name value" line per counter; the live buses with their connections
 * and queued messages as /sys/kernel/debug/kdbus/buses (bus.c).
 * Without debugfs the counters still run and nothing is exposed.
 *
 * Locking: the counters are percpu_counters; adds touch only the local
 * CPU's share (folded under the counter's own raw spinlock at most once
 * per 2 GiB), reads sum all shares under that lock. No other lock is
 * taken, so the counters may be updated from any context that may use
 * percpu_counter_add_batch() (every caller here sleeps anyway).
 */

#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/limits.h>
#include <linux/percpu_counter.h>
#include <linux/seq_file.h>

#include "bus.h"
#include "stats.h"

static const char * const kdbus_stat_names[KDBUS_STAT_MAX] = {
	[KDBUS_STAT_COPY_USER]		= "copied_user_bytes",
	[KDBUS_STAT_COPY_KERNEL]	= "copied_kernel_bytes",
	[KDBUS_STAT_COPY_POOL]		= "copied_pool_bytes",
	[KDBUS_STAT_PULLED_USER]	= "pulled_user_bytes",
	[KDBUS_STAT_MSGS]		= "messages_delivered",
	[KDBUS_STAT_MEMFD_PASSED]	= "memfd_passed_bytes",
	[KDBUS_STAT_LIVE_NODES]		= "live_nodes",
	[KDBUS_STAT_LIVE_HANDLES]	= "live_handles",
	[KDBUS_STAT_LIVE_CONNS]		= "live_connections",
	[KDBUS_STAT_LIVE_POOLS]		= "live_pools",
	[KDBUS_STAT_LIVE_MESSAGES]	= "live_messages",
	[KDBUS_STAT_LIVE_ENTRIES]	= "live_queue_entries",
	[KDBUS_STAT_LIVE_REPLIES]	= "live_replies",
	[KDBUS_STAT_LIVE_NAMES]		= "live_names",
	[KDBUS_STAT_LIVE_OWNERS]	= "live_name_owners",
	[KDBUS_STAT_LIVE_MATCHES]	= "live_matches",
	[KDBUS_STAT_LIVE_USERS]		= "live_users",
};

static struct percpu_counter kdbus_stats[KDBUS_STAT_MAX];
static struct dentry *kdbus_stats_dir;

/**
 * kdbus_stats_add() - add to a module-wide counter
 * @stat:	the counter
 * @n:		amount to add
 *
 * A large batch keeps every add on the local CPU: the counters are read
 * rarely (and then summed exactly), but written on every copy.
 */
void kdbus_stats_add(enum kdbus_stat stat, u64 n)
{
	if (n > 0)
		percpu_counter_add_batch(&kdbus_stats[stat], n, S32_MAX);
}

/**
 * kdbus_stats_live() - count an object of a kind created or freed
 * @stat:	the LIVE gauge of the object's kind
 * @delta:	1 when one is created, -1 when one is freed
 *
 * Context: any (percpu_counter_add_batch() disables interrupts as needed).
 */
void kdbus_stats_live(enum kdbus_stat stat, int delta)
{
	percpu_counter_add_batch(&kdbus_stats[stat], delta, S32_MAX);
}

static int kdbus_stats_show(struct seq_file *m, void *unused)
{
	unsigned int i;

	for (i = 0; i < KDBUS_STAT_MAX; i++)
		seq_printf(m, "%s %lld\n", kdbus_stat_names[i],
			   percpu_counter_sum(&kdbus_stats[i]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kdbus_stats);
DEFINE_SHOW_ATTRIBUTE(kdbus_buses);

/**
 * kdbus_stats_init() - set up the counters and their debugfs files
 *
 * A missing debugfs (not built, or locked down) is not an error: the
 * module works without the file.
 *
 * Return: 0 on success, negative error code on failure.
 */
int kdbus_stats_init(void)
{
	unsigned int i;
	int ret;

	for (i = 0; i < KDBUS_STAT_MAX; i++) {
		ret = percpu_counter_init(&kdbus_stats[i], 0, GFP_KERNEL);
		if (ret < 0)
			goto exit_destroy;
	}

	/* debugfs errors are deliberately ignored, see debugfs_create_dir() */
	kdbus_stats_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("stats", 0444, kdbus_stats_dir, NULL,
			    &kdbus_stats_fops);
	debugfs_create_file("buses", 0444, kdbus_stats_dir, NULL,
			    &kdbus_buses_fops);
	return 0;

exit_destroy:
	while (i-- > 0)
		percpu_counter_destroy(&kdbus_stats[i]);
	return ret;
}

/**
 * kdbus_stats_exit() - remove the debugfs files and free the counters
 *
 * Context: no copies may run any more (all kdbus files are closed).
 */
void kdbus_stats_exit(void)
{
	unsigned int i;

	debugfs_remove_recursive(kdbus_stats_dir);
	for (i = 0; i < KDBUS_STAT_MAX; i++)
		percpu_counter_destroy(&kdbus_stats[i]);
}
