/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Policy databases: SEE, TALK and OWN grants per well-known name, for a
 * bus (installed by activators and policy holders) and for each custom
 * endpoint (installed by ENDPOINT_UPDATE), kdbus.policy(7).
 */

#ifndef __KDBUS_POLICY_H
#define __KDBUS_POLICY_H

#include <linux/bits.h>
#include <linux/hashtable.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/types.h>

struct cred;
struct kdbus_conn;
struct kdbus_item;
struct kdbus_policy_db_entry;

/* number of slots of the per-database access cache (a power of two) */
#define KDBUS_POLICY_CACHE_BITS		6
#define KDBUS_POLICY_CACHE_SLOTS	BIT(KDBUS_POLICY_CACHE_BITS)

/**
 * struct kdbus_policy_cache_slot - one cached access decision
 * @cred:	Credentials the decision was made for, pinned, or NULL if the
 *		slot is empty
 * @entry:	Entry the decision was made on
 * @access:	Highest KDBUS_POLICY_* level @entry grants @cred, or -EPERM
 */
struct kdbus_policy_cache_slot {
	const struct cred *cred;
	const struct kdbus_policy_db_entry *entry;
	int access;
};

/**
 * struct kdbus_policy_db - policy database
 * @entries_rwlock:	Protects @entries_hash and every entry in it
 * @entries_hash:	Entries, hashed by key (the name, without the ".*"
 *			of a wildcard entry)
 * @cache_lock:		Protects @cache
 * @cache:		Direct-mapped cache of access decisions, indexed by
 *			(credentials, entry); emptied on every change of
 *			@entries_hash
 */
struct kdbus_policy_db {
	struct rw_semaphore entries_rwlock;
	DECLARE_HASHTABLE(entries_hash, 6);
	spinlock_t cache_lock; /* protects cache */
	struct kdbus_policy_cache_slot cache[KDBUS_POLICY_CACHE_SLOTS];
};

void kdbus_policy_db_init(struct kdbus_policy_db *db);
void kdbus_policy_db_clear(struct kdbus_policy_db *db);

int kdbus_policy_query_unlocked(struct kdbus_policy_db *db,
				const struct cred *cred, const char *name,
				u32 hash);
int kdbus_policy_query(struct kdbus_policy_db *db, const struct cred *cred,
		       const char *name, u32 hash);
bool kdbus_policy_query_names(struct kdbus_policy_db *db,
			      const struct cred *cred,
			      const struct kdbus_conn *whom,
			      unsigned int access);

void kdbus_policy_remove_owner(struct kdbus_policy_db *db,
			       const void *owner);
int kdbus_policy_validate(const struct kdbus_item *items, size_t items_size,
			  size_t max_policies, bool allow_wildcards);
int kdbus_policy_set(struct kdbus_policy_db *db,
		     const struct kdbus_item *items, size_t items_size,
		     size_t max_policies, bool allow_wildcards,
		     const void *owner);

#endif
