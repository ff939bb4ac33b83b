// SPDX-License-Identifier: GPL-2.0-only
/*
 * Domains and per-user accounting objects.
 *
 * A domain is created for every kdbusfs mount and lives as long as the
 * superblock. It owns the ID counter shared by buses and connections and
 * the table of accounting users.
 *
 * Locking:
 *  - domain->lock protects domain->user_idr, domain->user_hash and the
 *    hentry of every user. The last kdbus_user_unref() takes it to unhash
 *    the user, so it must never be called with domain->lock held.
 *  - user->buses / user->connections are atomics.
 *  - Nesting: domain->lock is a leaf lock (no other kdbus lock is taken
 *    while holding it).
 */

#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/idr.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/user_namespace.h>

#include "domain.h"
#include "node.h"
#include "stats.h"
#include "util.h"

static void kdbus_domain_control_free(struct kdbus_node *node)
{
	kfree(node);
}

static struct kdbus_node *kdbus_domain_control_new(struct kdbus_domain *domain,
						   unsigned int access)
{
	struct kdbus_node *node;
	int ret;

	node = kzalloc(sizeof(*node), GFP_KERNEL_ACCOUNT);
	if (!node)
		return ERR_PTR(-ENOMEM);

	kdbus_node_init(node, KDBUS_NODE_CONTROL);

	node->free_cb = kdbus_domain_control_free;
	node->mode = S_IFREG | 0666;
	node->uid = GLOBAL_ROOT_UID;
	node->gid = GLOBAL_ROOT_GID;

	ret = kdbus_node_link(node, &domain->node, "control");
	if (ret < 0)
		goto exit_free;

	return node;

exit_free:
	kdbus_node_deactivate(node);
	kdbus_node_unref(node);
	return ERR_PTR(ret);
}

static void kdbus_domain_free(struct kdbus_node *node)
{
	struct kdbus_domain *domain = kdbus_domain_from_node(node);

	put_user_ns(domain->user_namespace);
	idr_destroy(&domain->user_idr);
	kfree(domain);
}

/**
 * kdbus_domain_new() - create a new domain
 * @access:		The access mode for this node (unused so far)
 *
 * The new domain pins the user namespace of the calling (mounting) task.
 *
 * Return: a new kdbus_domain on success, ERR_PTR on failure
 */
struct kdbus_domain *kdbus_domain_new(unsigned int access)
{
	struct kdbus_domain *d;
	int ret;

	d = kzalloc(sizeof(*d), GFP_KERNEL_ACCOUNT);
	if (!d)
		return ERR_PTR(-ENOMEM);

	kdbus_node_init(&d->node, KDBUS_NODE_DOMAIN);

	d->node.free_cb = kdbus_domain_free;
	d->node.mode = S_IFDIR | 0555;
	d->node.uid = GLOBAL_ROOT_UID;
	d->node.gid = GLOBAL_ROOT_GID;

	mutex_init(&d->lock);
	atomic64_set(&d->last_id, 0);
	idr_init(&d->user_idr);
	hash_init(d->user_hash);

	/* pin user-ns of the mounting task */
	d->user_namespace = get_user_ns(current_user_ns());

	ret = kdbus_node_link(&d->node, NULL, NULL);
	if (ret < 0)
		goto exit_unref;

	return d;

exit_unref:
	kdbus_node_deactivate(&d->node);
	kdbus_node_unref(&d->node);
	return ERR_PTR(ret);
}

/**
 * kdbus_domain_ref() - take a domain reference
 * @domain:		Domain
 *
 * Return: the domain itself
 */
struct kdbus_domain *kdbus_domain_ref(struct kdbus_domain *domain)
{
	if (domain)
		kdbus_node_ref(&domain->node);
	return domain;
}

/**
 * kdbus_domain_unref() - drop a domain reference
 * @domain:		Domain
 *
 * When the last reference is dropped, the domain internal structure
 * is freed.
 *
 * Return: NULL
 */
struct kdbus_domain *kdbus_domain_unref(struct kdbus_domain *domain)
{
	if (domain)
		kdbus_node_unref(&domain->node);
	return NULL;
}

/**
 * kdbus_domain_populate() - populate static domain nodes
 * @domain:	domain to populate
 * @access:	KDBUS_MAKE_ACCESS_* access restrictions for new nodes
 *
 * Allocate and activate static sub-nodes of the given domain. This will
 * fail if you call it on a domain that is already populated.
 *
 * Return: 0 on success, negative error code on failure.
 */
int kdbus_domain_populate(struct kdbus_domain *domain, unsigned int access)
{
	struct kdbus_node *control;

	control = kdbus_domain_control_new(domain, access);
	if (IS_ERR(control))
		return PTR_ERR(control);

	/*
	 * An active node owns a reference of its own, dropped when the node
	 * is deactivated together with the domain; ours is not needed.
	 */
	if (!kdbus_node_activate(control)) {
		kdbus_node_unref(control);
		return -ESHUTDOWN;
	}

	kdbus_node_unref(control);
	return 0;
}

static void __kdbus_user_free(struct kref *kref)
{
	struct kdbus_user *user = container_of(kref, struct kdbus_user, kref);

	WARN_ON(atomic_read(&user->buses) > 0);
	WARN_ON(atomic_read(&user->connections) > 0);

	mutex_lock(&user->domain->lock);
	idr_remove(&user->domain->user_idr, user->id);
	hash_del(&user->hentry);
	mutex_unlock(&user->domain->lock);

	kdbus_domain_unref(user->domain);
	kfree(user);
	kdbus_stats_live(KDBUS_STAT_LIVE_USERS, -1);
}

/**
 * kdbus_user_lookup() - Get a kdbus_user object for a uid
 * @domain:		Domain of the user
 * @uid:		uid of the user; INVALID_UID for an anon user
 *
 * Lookup the kdbus user accounting object for the given domain. If
 * INVALID_UID is passed, a new anonymous user is created which is not
 * shared with anybody (used by custom endpoints).
 *
 * Return: The user object with a new reference, or an ERR_PTR on failure.
 */
struct kdbus_user *kdbus_user_lookup(struct kdbus_domain *domain, kuid_t uid)
{
	struct kdbus_user *u = NULL, *old = NULL;
	int ret;

	mutex_lock(&domain->lock);

	if (uid_valid(uid)) {
		hash_for_each_possible(domain->user_hash, old, hentry,
				       __kuid_val(uid)) {
			if (!uid_eq(old->uid, uid))
				continue;

			/*
			 * If the ref-count is already 0, the destructor is
			 * about to unlink and destroy the object. Continue
			 * looking for a next one or create one, if none found.
			 */
			if (kref_get_unless_zero(&old->kref)) {
				mutex_unlock(&domain->lock);
				return old;
			}
		}
	}

	u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);
	if (!u) {
		ret = -ENOMEM;
		goto exit;
	}
	kdbus_stats_live(KDBUS_STAT_LIVE_USERS, 1);

	kref_init(&u->kref);
	u->domain = kdbus_domain_ref(domain);
	u->uid = uid;
	atomic_set(&u->buses, 0);
	atomic_set(&u->connections, 0);
	atomic_long_set(&u->match_bytes, 0);
	INIT_HLIST_NODE(&u->hentry);

	/* id 0 is the kernel's quota slot */
	ret = idr_alloc(&domain->user_idr, u, KDBUS_USER_KERNEL_ID + 1, 0,
			GFP_KERNEL);
	if (ret < 0)
		goto exit;
	u->id = ret;

	if (uid_valid(uid))
		hash_add(domain->user_hash, &u->hentry, __kuid_val(uid));

	mutex_unlock(&domain->lock);
	return u;

exit:
	mutex_unlock(&domain->lock);
	if (u) {
		kdbus_domain_unref(u->domain);
		kfree(u);
		kdbus_stats_live(KDBUS_STAT_LIVE_USERS, -1);
	}
	return ERR_PTR(ret);
}

/**
 * kdbus_user_ref() - take a user reference
 * @u:		User
 *
 * Return: @u is returned
 */
struct kdbus_user *kdbus_user_ref(struct kdbus_user *u)
{
	if (u)
		kref_get(&u->kref);
	return u;
}

/**
 * kdbus_user_unref() - drop a user reference
 * @u:		User
 *
 * Must not be called with the domain lock held.
 *
 * Return: NULL
 */
struct kdbus_user *kdbus_user_unref(struct kdbus_user *u)
{
	if (u)
		kref_put(&u->kref, __kdbus_user_free);
	return NULL;
}
