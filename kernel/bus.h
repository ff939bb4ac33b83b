/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Buses: a bus directory in kdbusfs with its endpoints and connections.
 */

#ifndef __KDBUS_BUS_H
#define __KDBUS_BUS_H

#include <linux/atomic.h>
#include <linux/hashtable.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/percpu_counter.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <uapi/linux/kdbus.h>

#include "match.h"
#include "node.h"
#include "policy.h"

struct kdbus_conn;
struct kdbus_domain;
struct kdbus_meta_proc;
struct kdbus_name_registry;
struct kdbus_user;
struct seq_file;

/**
 * struct kdbus_bus - bus in a domain
 * @node:		kdbus_node (directory <uid>-<name>)
 * @id:			ID of this bus in the domain (invariant)
 * @bus_flags:		Flags of BUS_MAKE, handed to connections (invariant)
 * @attach_flags_owner:	KDBUS_ATTACH_* creator metadata BUS_CREATOR_INFO
 *			may reveal (invariant)
 * @id128:		Unique random 128 bit ID of this bus (invariant)
 * @bloom:		Bloom parameters (invariant)
 * @domain:		Domain of this bus, pinned (invariant)
 * @creator:		Accounting user of the creator (real uid), pinned
 *			(invariant)
 * @creator_meta:	Process metadata of the creator, captured at
 *			BUS_MAKE (invariant)
 * @last_message_id:	Last used message sequence number (atomic)
 * @conn_rwlock:	Protects @conn_hash and @monitors_list
 * @conn_hash:		Map of connection IDs to live connections
 * @monitors_list:	Live monitor connections
 * @match_index:	Live connections that have matches, with a summary
 *			of them (match.c); protected by @conn_rwlock
 * @name_registry:	The name registry of this bus (invariant pointer)
 * @policy_db:		Policy of the bus: entries of activators and policy
 *			holders (kdbus.policy(7))
 * @notify_lock:	Protects @notify_list
 * @notify_list:	Kernel notifications waiting to be flushed
 * @notify_flush_lock:	Serialises kdbus_notify_flush()
 * @cmdline_receivers:	Connections whose attach_flags_recv include
 *			KDBUS_ATTACH_CMDLINE (atomic): senders read their
 *			command line before taking any lock only if non-zero
 * @bus_entry:		Entry in the module-wide list of live buses
 *			(kdbus_buses_lock, bus.c)
 * @queued_messages:	Queue entries linked into the queues of this bus's
 *			connections, activators' included (queue.c)
 */
struct kdbus_bus {
	struct kdbus_node node;

	u64 id;
	u64 bus_flags;
	u64 attach_flags_owner;
	u8 id128[16];
	struct kdbus_bloom_parameter bloom;
	struct kdbus_domain *domain;
	struct kdbus_user *creator;
	struct kdbus_meta_proc *creator_meta;

	atomic64_t last_message_id;

	struct rw_semaphore conn_rwlock;
	DECLARE_HASHTABLE(conn_hash, 8);
	struct list_head monitors_list;
	struct kdbus_match_index match_index;

	struct kdbus_name_registry *name_registry;
	struct kdbus_policy_db policy_db;

	spinlock_t notify_lock; /* protects notify_list */
	struct list_head notify_list;
	struct mutex notify_flush_lock; /* serialises flushes */
	atomic_t cmdline_receivers;

	struct list_head bus_entry;
	struct percpu_counter queued_messages;
};

#define kdbus_bus_from_node(_node) \
	container_of((_node), struct kdbus_bus, node)

struct kdbus_bus *kdbus_bus_ref(struct kdbus_bus *bus);
struct kdbus_bus *kdbus_bus_unref(struct kdbus_bus *bus);

struct kdbus_conn *kdbus_bus_find_conn_by_id(struct kdbus_bus *bus, u64 id);

struct kdbus_bus *kdbus_cmd_bus_make(struct kdbus_domain *domain,
				     void __user *argp);
int kdbus_cmd_bus_creator_info(struct kdbus_conn *conn, void __user *argp);

/**
 * kdbus_bus_count_queued() - count entries linked into or out of a queue
 * @bus:	bus of the receiving connection
 * @delta:	1 when an entry is linked, -1 when one is unlinked
 *
 * A large batch keeps every change on the local CPU: the count is read
 * only by the debugfs file "buses", which sums it exactly.
 */
static inline void kdbus_bus_count_queued(struct kdbus_bus *bus, s32 delta)
{
	percpu_counter_add_batch(&bus->queued_messages, delta, S32_MAX);
}

int kdbus_buses_show(struct seq_file *m, void *unused);

#endif
