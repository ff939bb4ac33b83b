/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Domains (one per kdbusfs mount) and per-user accounting objects.
 */

#ifndef __KDBUS_DOMAIN_H
#define __KDBUS_DOMAIN_H

#include <linux/atomic.h>
#include <linux/hashtable.h>
#include <linux/idr.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/uidgid.h>
#include <linux/user_namespace.h>

#include "node.h"

/**
 * struct kdbus_domain - domain for buses
 * @node:		Underlying API node (root directory of the mount)
 * @lock:		Protects @user_idr and @user_hash
 * @last_id:		Last used ID, shared by buses and connections (atomic)
 * @dev:		Device number of the superblock (invariant once mounted;
 *			names the domain in /sys/kernel/debug/kdbus/buses)
 * @user_namespace:	User namespace of the mounting task, pinned
 *			(invariant)
 * @user_idr:		Map of all users; small numbers for quota lookup
 * @user_hash:		Accounting of user resources, by uid
 */
struct kdbus_domain {
	struct kdbus_node node;
	struct mutex lock; /* user_idr, user_hash */
	atomic64_t last_id;
	dev_t dev;
	struct user_namespace *user_namespace;
	struct idr user_idr;
	DECLARE_HASHTABLE(user_hash, 6);
};

/**
 * struct kdbus_user - resource accounting for users
 * @kref:		Reference counter
 * @domain:		Domain of the user, pinned (invariant)
 * @hentry:		Entry in domain user map (domain->lock)
 * @id:		Index of this user in @domain's idr, >= 1 (invariant)
 * @uid:		UID of the user; INVALID_UID for anonymous users
 *			of custom endpoints (invariant)
 * @buses:		Number of buses the user has created (atomic)
 * @connections:	Number of connections the user has created (atomic)
 * @match_bytes:	Memory of the matches of all its connections (atomic)
 */
struct kdbus_user {
	struct kref kref;
	struct kdbus_domain *domain;
	struct hlist_node hentry;
	unsigned int id;
	kuid_t uid;
	atomic_t buses;
	atomic_t connections;
	atomic_long_t match_bytes;
};

/* quota slot of kernel-generated messages; users start at 1 */
#define KDBUS_USER_KERNEL_ID 0

#define kdbus_domain_from_node(_node) \
	container_of((_node), struct kdbus_domain, node)

struct kdbus_domain *kdbus_domain_new(unsigned int access);
struct kdbus_domain *kdbus_domain_ref(struct kdbus_domain *domain);
struct kdbus_domain *kdbus_domain_unref(struct kdbus_domain *domain);
int kdbus_domain_populate(struct kdbus_domain *domain, unsigned int access);

struct kdbus_user *kdbus_user_lookup(struct kdbus_domain *domain, kuid_t uid);
struct kdbus_user *kdbus_user_ref(struct kdbus_user *u);
struct kdbus_user *kdbus_user_unref(struct kdbus_user *u);

#endif
