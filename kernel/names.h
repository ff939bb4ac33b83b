/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The name registry of a bus: well-known names, their owner queues and
 * activators (kdbus.name(7)).
 */

#ifndef __KDBUS_NAMES_H
#define __KDBUS_NAMES_H

#include <linux/list.h>
#include <linux/rwsem.h>
#include <linux/types.h>

struct kdbus_conn;
struct kdbus_name_entry;

/**
 * struct kdbus_name_registry - names registered for a bus
 * @rwlock:		Protects everything below, all name entries and
 *			owner records, and every conn->names_list and
 *			conn->name_count of the bus
 * @buckets:		Hash table of name entries, 1 << @n_bits buckets
 * @n_bits:		Order of the hash table size
 * @n_entries:		Number of name entries in the table
 * @name_seq_last:	Last used name_id
 *
 * The table doubles its size (by four) when it holds more than two
 * entries per bucket, so a lookup costs the same for ten names as for ten
 * thousand.
 */
struct kdbus_name_registry {
	struct rw_semaphore rwlock;
	struct hlist_head *buckets;
	unsigned int n_bits;
	unsigned int n_entries;
	u64 name_seq_last;
};

/**
 * struct kdbus_name_owner - one ownership record: a connection that owns,
 *			     waits for, or activates a name
 * @conn_entry:		Entry in conn->names_list, creation order
 * @name_entry:		Entry in name->queue (ordinary connections only)
 * @conn:		Owning connection (invariant, not pinned: a record
 *			never outlives the link of its connection)
 * @name:		Name entry (invariant)
 * @flags:		KDBUS_NAME_* flags of the record
 *
 * All fields are protected by the registry's rwlock.
 */
struct kdbus_name_owner {
	struct list_head conn_entry;
	struct list_head name_entry;
	struct kdbus_conn *conn;
	struct kdbus_name_entry *name;
	u64 flags;
};

/**
 * struct kdbus_name_entry - a well-known name in use
 * @hentry:		Entry in the registry's hash table
 * @hash:		Hash of @name (invariant)
 * @name_id:		Sequence number of this entry (invariant)
 * @queue:		Ownership records of ordinary connections; the first
 *			one is the primary owner
 * @activator:		Record of the activator of this name, or NULL
 * @name:		The name (invariant)
 *
 * All fields are protected by the registry's rwlock.
 */
struct kdbus_name_entry {
	struct hlist_node hentry;
	u32 hash;
	u64 name_id;
	struct list_head queue;
	struct kdbus_name_owner *activator;
	char name[];
};

bool kdbus_name_is_valid(const char *p, bool allow_wildcard);

struct kdbus_name_registry *kdbus_name_registry_new(void);
void kdbus_name_registry_free(struct kdbus_name_registry *reg);

struct kdbus_name_entry *
kdbus_name_lookup_unlocked(struct kdbus_name_registry *reg, const char *name);
struct kdbus_name_owner *kdbus_name_get_owner(struct kdbus_name_entry *name);

int kdbus_name_acquire(struct kdbus_name_registry *reg,
		       struct kdbus_conn *conn, const char *name,
		       u64 flags, u64 *return_flags);
void kdbus_name_release_all(struct kdbus_name_registry *reg,
			    struct kdbus_conn *conn);

int kdbus_cmd_name_acquire(struct kdbus_conn *conn, void __user *argp);
int kdbus_cmd_name_release(struct kdbus_conn *conn, void __user *argp);
int kdbus_cmd_list(struct kdbus_conn *conn, void __user *argp);

#endif
