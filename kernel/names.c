// SPDX-License-Identifier: GPL-2.0-only
/*
 * The name registry: well-known names, their owner queues, activators,
 * NAME_ACQUIRE, NAME_RELEASE and LIST (kdbus.name(7)).
 *
 * Every bus has one registry. A name in use has a name entry, which holds
 * an ordered queue of ownership records of ordinary connections (the first
 * one is the primary owner) and at most one activator record, kept apart.
 * Each connection keeps its own records in creation order on
 * conn->names_list.
 *
 * Locking:
 *  - reg->rwlock protects the hash table, all name entries, all ownership
 *    records, and conn->names_list / conn->name_count of every connection
 *    of the bus. Changes take it for writing, lookups (SEND by name,
 *    CONN_INFO, LIST, notification delivery) for reading.
 *  - Nesting (global order): reg->rwlock -> bus->conn_rwlock -> conn->lock
 *    -> pool->lock. Moving messages between an activator and an
 *    implementer takes the connection locks under the write lock.
 *  - Notifications are queued on the bus while the write lock is held, so
 *    they are ordered like the changes, and flushed by the caller after
 *    the lock is dropped (kdbus_notify_flush()).
 */

#include <linux/ctype.h>
#include <linux/hash.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/uio.h>

#include "bus.h"
#include "connection.h"
#include "endpoint.h"
#include "handle.h"
#include "item.h"
#include "limits.h"
#include "names.h"
#include "notify.h"
#include "policy.h"
#include "pool.h"
#include "stats.h"
#include "util.h"

/* the request flags that are stored in a record (kdbus.name(7)) */
#define KDBUS_NAME_SAVED_MASK (KDBUS_NAME_ALLOW_REPLACEMENT | KDBUS_NAME_QUEUE)

/* initial and largest order of the hash table */
#define KDBUS_NAME_HASH_BITS_MIN	6
#define KDBUS_NAME_HASH_BITS_MAX	20

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
 *    (plus what isalpha() counts as letters) and must not begin with a
 *    digit
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

static struct hlist_head *kdbus_name_alloc_buckets(unsigned int bits)
{
	struct hlist_head *b;
	size_t i, n = 1UL << bits;

	b = kvmalloc_array(n, sizeof(*b), GFP_KERNEL_ACCOUNT);
	if (!b)
		return NULL;

	for (i = 0; i < n; i++)
		INIT_HLIST_HEAD(&b[i]);

	return b;
}

/**
 * kdbus_name_registry_new() - create a new name registry
 *
 * Return: a new kdbus_name_registry on success, ERR_PTR on failure.
 */
struct kdbus_name_registry *kdbus_name_registry_new(void)
{
	struct kdbus_name_registry *r;

	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		return ERR_PTR(-ENOMEM);

	r->n_bits = KDBUS_NAME_HASH_BITS_MIN;
	r->buckets = kdbus_name_alloc_buckets(r->n_bits);
	if (!r->buckets) {
		kfree(r);
		return ERR_PTR(-ENOMEM);
	}

	init_rwsem(&r->rwlock);
	return r;
}

/**
 * kdbus_name_registry_free() - free a name registry
 * @reg:		The registry to free, or NULL
 *
 * The registry must be empty: every connection of the bus released its
 * names when it was disconnected.
 */
void kdbus_name_registry_free(struct kdbus_name_registry *reg)
{
	if (!reg)
		return;

	WARN_ON(reg->n_entries);
	kvfree(reg->buckets);
	kfree(reg);
}

static struct hlist_head *kdbus_name_bucket(struct kdbus_name_registry *r,
					    u32 hash)
{
	return &r->buckets[hash_32(hash, r->n_bits)];
}

/* grow the table when it holds more than two entries per bucket */
static void kdbus_name_registry_grow(struct kdbus_name_registry *r)
{
	struct kdbus_name_entry *e;
	struct hlist_head *old, *b;
	struct hlist_node *tmp;
	unsigned int bits, old_bits;
	size_t i;

	lockdep_assert_held_write(&r->rwlock);

	if (r->n_entries <= (2U << r->n_bits) ||
	    r->n_bits >= KDBUS_NAME_HASH_BITS_MAX)
		return;

	bits = min(r->n_bits + 2, (unsigned int)KDBUS_NAME_HASH_BITS_MAX);
	b = kdbus_name_alloc_buckets(bits);
	if (!b)
		return; /* keep the smaller table; lookups stay correct */

	old = r->buckets;
	old_bits = r->n_bits;
	r->buckets = b;
	r->n_bits = bits;

	for (i = 0; i < (1UL << old_bits); i++)
		hlist_for_each_entry_safe(e, tmp, &old[i], hentry) {
			hlist_del(&e->hentry);
			hlist_add_head(&e->hentry,
				       kdbus_name_bucket(r, e->hash));
		}

	kvfree(old);
}

static struct kdbus_name_entry *
kdbus_name_find(struct kdbus_name_registry *r, u32 hash, const char *name)
{
	struct kdbus_name_entry *e;

	lockdep_assert_held(&r->rwlock);

	hlist_for_each_entry(e, kdbus_name_bucket(r, hash), hentry)
		if (e->hash == hash && !strcmp(e->name, name))
			return e;

	return NULL;
}

/**
 * kdbus_name_lookup_unlocked() - look up a name in a registry
 * @reg:		The name registry
 * @name:		The name to look up
 *
 * The caller must hold the registry's rwlock.
 *
 * Return: the name entry, or NULL if the name is not in use.
 */
struct kdbus_name_entry *
kdbus_name_lookup_unlocked(struct kdbus_name_registry *reg, const char *name)
{
	return kdbus_name_find(reg, kdbus_strhash(name), name);
}

/**
 * kdbus_name_get_owner() - the current owner of a name
 * @name:		The name entry
 *
 * The current owner is the primary owner, or the activator while the queue
 * is empty (kdbus.name(7)). The caller must hold the registry's rwlock.
 *
 * Return: the owner's record, or NULL if the name has no owner.
 */
struct kdbus_name_owner *kdbus_name_get_owner(struct kdbus_name_entry *name)
{
	if (!list_empty(&name->queue))
		return list_first_entry(&name->queue, struct kdbus_name_owner,
					name_entry);

	return name->activator;
}

static struct kdbus_name_entry *
kdbus_name_entry_new(struct kdbus_name_registry *r, u32 hash,
		     const char *name)
{
	struct kdbus_name_entry *e;
	size_t len = strlen(name) + 1;

	lockdep_assert_held_write(&r->rwlock);

	e = kmalloc(sizeof(*e) + len, GFP_KERNEL_ACCOUNT);
	if (!e)
		return ERR_PTR(-ENOMEM);
	kdbus_stats_live(KDBUS_STAT_LIVE_NAMES, 1);

	e->hash = hash;
	e->name_id = ++r->name_seq_last;
	e->activator = NULL;
	INIT_LIST_HEAD(&e->queue);
	memcpy(e->name, name, len);

	hlist_add_head(&e->hentry, kdbus_name_bucket(r, hash));
	r->n_entries++;
	kdbus_name_registry_grow(r);
	return e;
}

/* delete a name entry if no record refers to it any more */
static void kdbus_name_entry_put(struct kdbus_name_registry *r,
				 struct kdbus_name_entry *e)
{
	lockdep_assert_held_write(&r->rwlock);

	if (!list_empty(&e->queue) || e->activator)
		return;

	hlist_del(&e->hentry);
	r->n_entries--;
	kfree(e);
	kdbus_stats_live(KDBUS_STAT_LIVE_NAMES, -1);
}

static struct kdbus_name_owner *
kdbus_name_owner_new(struct kdbus_conn *conn, struct kdbus_name_entry *name,
		     u64 flags)
{
	struct kdbus_name_owner *o;

	o = kmalloc(sizeof(*o), GFP_KERNEL_ACCOUNT);
	if (!o)
		return ERR_PTR(-ENOMEM);
	kdbus_stats_live(KDBUS_STAT_LIVE_OWNERS, 1);

	o->conn = conn;
	o->name = name;
	o->flags = flags;
	INIT_LIST_HEAD(&o->name_entry);
	list_add_tail(&o->conn_entry, &conn->names_list);
	conn->name_count++;
	return o;
}

/* unlink a record from its connection and its queue, and free it */
static void kdbus_name_owner_free(struct kdbus_name_owner *o)
{
	list_del(&o->name_entry);
	list_del(&o->conn_entry);
	o->conn->name_count--;
	kfree(o);
	kdbus_stats_live(KDBUS_STAT_LIVE_OWNERS, -1);
}

/* the record of an ordinary connection for a name, or NULL */
static struct kdbus_name_owner *
kdbus_name_owner_find(struct kdbus_name_entry *name, struct kdbus_conn *conn)
{
	struct kdbus_name_owner *o;

	list_for_each_entry(o, &name->queue, name_entry)
		if (o->conn == conn)
			return o;

	return NULL;
}

static void kdbus_name_notify(struct kdbus_conn *conn, u64 type,
			      struct kdbus_name_owner *old, u64 old_flags,
			      struct kdbus_name_owner *new,
			      struct kdbus_name_entry *name)
{
	kdbus_notify_name_change(conn->ep->bus, conn->user, type,
				 old ? old->conn->id : 0,
				 new ? new->conn->id : 0,
				 old ? old_flags : 0,
				 new ? new->flags : 0,
				 name->name);
}

/*
 * An activator takes its name (kdbus.name(7)). Primary while the queue
 * is empty, waiting otherwise.
 */
static int kdbus_name_acquire_activator(struct kdbus_name_registry *r,
					struct kdbus_conn *conn,
					struct kdbus_name_entry *name)
{
	struct kdbus_name_owner *o;

	if (name->activator)
		return -EEXIST;

	if (conn->name_count >= KDBUS_CONN_MAX_NAMES)
		return -E2BIG;

	o = kdbus_name_owner_new(conn, name, KDBUS_NAME_ACTIVATOR);
	if (IS_ERR(o))
		return PTR_ERR(o);

	name->activator = o;

	if (list_empty(&name->queue)) {
		o->flags |= KDBUS_NAME_PRIMARY;
		kdbus_name_notify(conn, KDBUS_ITEM_NAME_ADD, NULL, 0, o, name);
	} else {
		o->flags |= KDBUS_NAME_IN_QUEUE;
	}

	return 0;
}

/**
 * kdbus_name_acquire() - acquire a name
 * @reg:		The name registry
 * @conn:		The connection acquiring (or activating) the name
 * @name_str:		The name, already checked for validity
 * @flags:		KDBUS_NAME_* request flags
 * @return_flags:	Set to the flags to return to user space, also on
 *			failure (kdbus.name(7))
 *
 * Implements the outcome table of kdbus.name(7) for ordinary
 * connections and the name taking of an activator. Notifications
 * are queued on the bus; the caller flushes them after dropping the lock.
 * A takeover from an activator moves its queued messages and reply
 * trackers for this name to @conn (kdbus.name(7), ACTIVATION).
 *
 * The caller must hold the registry's rwlock for writing.
 *
 * Return: 0 on success, negative error code on failure (nothing changed).
 */
int kdbus_name_acquire(struct kdbus_name_registry *reg,
		       struct kdbus_conn *conn, const char *name_str,
		       u64 flags, u64 *return_flags)
{
	struct kdbus_name_owner *owner, *primary;
	struct kdbus_name_entry *name;
	u64 saved = flags & KDBUS_NAME_SAVED_MASK;
	u32 hash = kdbus_strhash(name_str);
	u64 old_flags;
	int ret = 0;

	lockdep_assert_held_write(&reg->rwlock);

	*return_flags = 0;

	name = kdbus_name_find(reg, hash, name_str);
	if (!name) {
		name = kdbus_name_entry_new(reg, hash, name_str);
		if (IS_ERR(name))
			return PTR_ERR(name);
	}

	if (kdbus_conn_is_activator(conn)) {
		ret = kdbus_name_acquire_activator(reg, conn, name);
		goto exit_put;
	}

	/*
	 * The OWN check of kdbus.name(7), with the calling task's
	 * credentials, before anything about the owners is looked at.
	 */
	if (!kdbus_conn_policy_own_name(conn, current_cred(), name_str)) {
		ret = -EPERM;
		goto exit_put;
	}

	owner = kdbus_name_owner_find(name, conn);
	if (!owner && conn->name_count >= KDBUS_CONN_MAX_NAMES) {
		ret = -E2BIG;
		goto exit_put;
	}

	primary = list_first_entry_or_null(&name->queue,
					   struct kdbus_name_owner,
					   name_entry);

	if (owner && owner == primary) {
		/* row 3: only the stored flags change */
		owner->flags = saved | KDBUS_NAME_PRIMARY;
		*return_flags = owner->flags;
		goto exit_put;
	}

	if (!primary) {
		struct kdbus_name_owner *act = name->activator;

		/* rows 1 and 2: the caller becomes primary */
		owner = kdbus_name_owner_new(conn, name,
					     saved | KDBUS_NAME_PRIMARY);
		if (IS_ERR(owner)) {
			ret = PTR_ERR(owner);
			goto exit_put;
		}
		list_add(&owner->name_entry, &name->queue);

		if (act) {
			old_flags = act->flags;
			act->flags = KDBUS_NAME_ACTIVATOR | KDBUS_NAME_IN_QUEUE;
			kdbus_conn_move_messages(conn, act->conn,
						 name->name_id);
			kdbus_name_notify(conn, KDBUS_ITEM_NAME_CHANGE,
					  act, old_flags, owner, name);
		} else {
			kdbus_name_notify(conn, KDBUS_ITEM_NAME_ADD,
					  NULL, 0, owner, name);
		}

		*return_flags = owner->flags | KDBUS_NAME_ACQUIRED;
		return 0;
	}

	if ((primary->flags & KDBUS_NAME_ALLOW_REPLACEMENT) &&
	    (flags & KDBUS_NAME_REPLACE_EXISTING)) {
		/* row 4: replace the primary owner */
		if (!owner) {
			owner = kdbus_name_owner_new(conn, name, 0);
			if (IS_ERR(owner)) {
				ret = PTR_ERR(owner);
				goto exit_put;
			}
		} else {
			list_del(&owner->name_entry);
		}

		owner->flags = saved | KDBUS_NAME_PRIMARY;
		list_add(&owner->name_entry, &name->queue);

		old_flags = primary->flags;
		kdbus_name_notify(conn, KDBUS_ITEM_NAME_CHANGE,
				  primary, old_flags, owner, name);

		if (primary->flags & KDBUS_NAME_QUEUE)
			primary->flags = (primary->flags & ~KDBUS_NAME_PRIMARY) |
					 KDBUS_NAME_IN_QUEUE;
		else
			kdbus_name_owner_free(primary);

		*return_flags = owner->flags | KDBUS_NAME_ACQUIRED;
		return 0;
	}

	if (flags & KDBUS_NAME_QUEUE) {
		if (owner) {
			/* row 6: keep the position, update the flags */
			owner->flags = saved | KDBUS_NAME_IN_QUEUE;
			*return_flags = owner->flags;
		} else {
			/* row 5: join the queue */
			owner = kdbus_name_owner_new(conn, name,
						     saved | KDBUS_NAME_IN_QUEUE);
			if (IS_ERR(owner)) {
				ret = PTR_ERR(owner);
				goto exit_put;
			}
			list_add_tail(&owner->name_entry, &name->queue);
			*return_flags = owner->flags | KDBUS_NAME_ACQUIRED;
		}
		return 0;
	}

	*return_flags = saved;
	if (owner) {
		/* row 7: leave the queue silently */
		kdbus_name_owner_free(owner);
		return 0;
	}

	/* row 8 */
	ret = -EEXIST;

exit_put:
	kdbus_name_entry_put(reg, name);
	return ret;
}

/* release one record (kdbus.name(7)) */
static void kdbus_name_release_unlocked(struct kdbus_name_registry *r,
					struct kdbus_name_owner *owner)
{
	struct kdbus_name_entry *name = owner->name;
	struct kdbus_conn *conn = owner->conn;
	struct kdbus_name_owner *next;

	lockdep_assert_held_write(&r->rwlock);

	if (owner == name->activator) {
		name->activator = NULL;
		if (owner->flags & KDBUS_NAME_PRIMARY)
			kdbus_name_notify(conn, KDBUS_ITEM_NAME_REMOVE,
					  owner, owner->flags, NULL, name);
		goto exit_free;
	}

	if (!(owner->flags & KDBUS_NAME_PRIMARY))
		goto exit_free; /* waiting: leave silently */

	list_del_init(&owner->name_entry);

	next = list_first_entry_or_null(&name->queue, struct kdbus_name_owner,
					name_entry);
	if (next) {
		/* queue promotion; nothing moves */
		next->flags = (next->flags & ~KDBUS_NAME_IN_QUEUE) |
			      KDBUS_NAME_PRIMARY;
	} else if (name->activator) {
		/* hand-back to the activator (kdbus.name(7)) */
		next = name->activator;
		next->flags = KDBUS_NAME_ACTIVATOR | KDBUS_NAME_PRIMARY;
		kdbus_conn_move_messages(next->conn, conn, name->name_id);
	}

	if (next)
		kdbus_name_notify(conn, KDBUS_ITEM_NAME_CHANGE,
				  owner, owner->flags, next, name);
	else
		kdbus_name_notify(conn, KDBUS_ITEM_NAME_REMOVE,
				  owner, owner->flags, NULL, name);

exit_free:
	kdbus_name_owner_free(owner);
	kdbus_name_entry_put(r, name);
}

/**
 * kdbus_name_release_all() - release all names of a connection
 * @reg:		The name registry
 * @conn:		The connection, already unlinked from the bus
 *
 * Releases the records of @conn in creation order (kdbus.name(7)).
 * Notifications are queued on the bus; the caller flushes them.
 */
void kdbus_name_release_all(struct kdbus_name_registry *reg,
			    struct kdbus_conn *conn)
{
	struct kdbus_name_owner *o;

	down_write(&reg->rwlock);
	while ((o = list_first_entry_or_null(&conn->names_list,
					     struct kdbus_name_owner,
					     conn_entry)))
		kdbus_name_release_unlocked(reg, o);
	up_write(&reg->rwlock);
}

/**
 * kdbus_cmd_name_acquire() - handle KDBUS_CMD_NAME_ACQUIRE
 * @conn:		connection to operate on
 * @argp:		command payload
 *
 * Return: >=0 on success, negative error code on failure.
 */
int kdbus_cmd_name_acquire(struct kdbus_conn *conn, void __user *argp)
{
	struct kdbus_name_registry *reg = conn->ep->bus->name_registry;
	const char *item_name;
	struct kdbus_cmd *cmd;
	int ret;

	struct kdbus_arg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
		{ .type = KDBUS_ITEM_NAME, .mandatory = true },
	};
	struct kdbus_args args = {
		.allowed_flags = KDBUS_FLAG_NEGOTIATE |
				 KDBUS_NAME_REPLACE_EXISTING |
				 KDBUS_NAME_ALLOW_REPLACEMENT |
				 KDBUS_NAME_QUEUE,
		.argv = argv,
		.argc = ARRAY_SIZE(argv),
	};

	if (!kdbus_conn_is_ordinary(conn))
		return -EOPNOTSUPP;

	ret = kdbus_args_parse(&args, argp, &cmd);
	if (ret != 0)
		return ret;

	item_name = argv[1].item->str;
	if (!kdbus_name_is_valid(item_name, false)) {
		ret = -EINVAL;
		goto exit;
	}

	down_write(&reg->rwlock);
	ret = kdbus_name_acquire(reg, conn, item_name, cmd->flags,
				 &cmd->return_flags);
	up_write(&reg->rwlock);

	kdbus_notify_flush(conn->ep->bus);

exit:
	return kdbus_args_clear(&args, ret);
}

/**
 * kdbus_cmd_name_release() - handle KDBUS_CMD_NAME_RELEASE
 * @conn:		connection to operate on
 * @argp:		command payload
 *
 * Return: >=0 on success, negative error code on failure.
 */
int kdbus_cmd_name_release(struct kdbus_conn *conn, void __user *argp)
{
	struct kdbus_name_registry *reg = conn->ep->bus->name_registry;
	struct kdbus_name_owner *owner;
	struct kdbus_name_entry *name;
	struct kdbus_cmd *cmd;
	int ret;

	struct kdbus_arg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
		{ .type = KDBUS_ITEM_NAME, .mandatory = true },
	};
	struct kdbus_args args = {
		.allowed_flags = KDBUS_FLAG_NEGOTIATE,
		.argv = argv,
		.argc = ARRAY_SIZE(argv),
	};

	if (!kdbus_conn_is_ordinary(conn))
		return -EOPNOTSUPP;

	ret = kdbus_args_parse(&args, argp, &cmd);
	if (ret != 0)
		return ret;

	down_write(&reg->rwlock);
	name = kdbus_name_lookup_unlocked(reg, argv[1].item->str);
	if (!name) {
		ret = -ESRCH;
	} else {
		owner = kdbus_name_owner_find(name, conn);
		if (owner)
			kdbus_name_release_unlocked(reg, owner);
		else
			ret = -EADDRINUSE;
	}
	up_write(&reg->rwlock);

	kdbus_notify_flush(conn->ep->bus);

	return kdbus_args_clear(&args, ret);
}

/*
 * LIST (kdbus.name(7)). Records are collected into a kernel buffer first
 * (@buf NULL: only the size is computed), then copied into one slice.
 */
static size_t kdbus_list_write(void *buf, size_t pos, u64 id, u64 conn_flags,
			       const struct kdbus_name_owner *o)
{
	struct kdbus_info info = {
		.size = sizeof(info),
		.id = id,
		.flags = conn_flags,
	};
	size_t len = 0;

	if (o) {
		len = strlen(o->name->name) + 1;
		info.size += KDBUS_ITEM_SIZE(sizeof(struct kdbus_name) + len);
	}

	if (!buf)
		return pos + info.size;

	memset(buf + pos, 0, info.size);
	memcpy(buf + pos, &info, sizeof(info));
	if (o) {
		struct kdbus_item *item = buf + pos + sizeof(info);

		item->size = KDBUS_ITEM_HEADER_SIZE + sizeof(struct kdbus_name) +
			     len;
		item->type = KDBUS_ITEM_OWNED_NAME;
		item->name.flags = o->flags;
		memcpy(item->name.name, o->name->name, len);
	}

	return pos + info.size;
}

/*
 * SEE_NAME for LIST with the caller's current credentials; the caller
 * holds the endpoint's policy for reading across both passes, so they
 * agree on the size.
 */
static bool kdbus_list_may_see(struct kdbus_conn *conn,
			       const struct kdbus_name_entry *name)
{
	if (!conn->ep->user)
		return true;

	return kdbus_policy_query_unlocked(&conn->ep->policy_db,
					   current_cred(), name->name,
					   name->hash) >= KDBUS_POLICY_SEE;
}

static size_t kdbus_list_all(struct kdbus_conn *conn, u64 flags, void *buf)
{
	struct kdbus_bus *bus = conn->ep->bus;
	struct kdbus_name_owner *o;
	struct kdbus_conn *c;
	size_t pos = 0;
	unsigned int i;

	hash_for_each(bus->conn_hash, i, c, hentry) {
		bool counted = false;

		if (kdbus_conn_is_monitor(c))
			continue;

		list_for_each_entry(o, &c->names_list, conn_entry) {
			if (o->flags & KDBUS_NAME_ACTIVATOR) {
				if (!(flags & KDBUS_LIST_ACTIVATORS))
					continue;
			} else if (o->flags & KDBUS_NAME_IN_QUEUE) {
				if (!(flags & KDBUS_LIST_QUEUED))
					continue;
			} else if (!(flags & KDBUS_LIST_NAMES)) {
				continue;
			}

			/*
			 * Without SEE access to the name nothing is written,
			 * but the record still counts as listed.
			 */
			counted = true;
			if (kdbus_list_may_see(conn, o->name))
				pos = kdbus_list_write(buf, pos, c->id,
						       c->flags, o);
		}

		if ((flags & KDBUS_LIST_UNIQUE) && !counted)
			pos = kdbus_list_write(buf, pos, c->id, c->flags, NULL);
	}

	return pos;
}

/**
 * kdbus_cmd_list() - handle KDBUS_CMD_LIST
 * @conn:		connection to operate on
 * @argp:		command payload
 *
 * Return: >=0 on success, negative error code on failure.
 */
int kdbus_cmd_list(struct kdbus_conn *conn, void __user *argp)
{
	struct kdbus_cmd_list __user *ulist = argp;
	struct kdbus_name_registry *reg = conn->ep->bus->name_registry;
	struct kdbus_bus *bus = conn->ep->bus;
	struct kdbus_pool_slice *slice = NULL;
	struct kdbus_cmd_list *cmd;
	void *buf = NULL;
	struct kvec kvec;
	size_t size;
	int ret;

	struct kdbus_arg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
	};
	struct kdbus_args args = {
		.allowed_flags = KDBUS_FLAG_NEGOTIATE |
				 KDBUS_LIST_UNIQUE |
				 KDBUS_LIST_NAMES |
				 KDBUS_LIST_ACTIVATORS |
				 KDBUS_LIST_QUEUED,
		.argv = argv,
		.argc = ARRAY_SIZE(argv),
	};

	ret = kdbus_args_parse(&args, argp, &cmd);
	if (ret != 0)
		return ret;

	/* one consistent snapshot: registry, connections, endpoint policy */
	down_read(&reg->rwlock);
	down_read(&bus->conn_rwlock);
	if (conn->ep->user)
		down_read(&conn->ep->policy_db.entries_rwlock);

	size = kdbus_list_all(conn, cmd->flags, NULL);
	if (size == 0) {
		kdbus_pool_publish_empty(conn->pool, &cmd->offset,
					 &cmd->list_size);
		goto exit_unlock;
	}

	buf = kvmalloc(size, GFP_KERNEL_ACCOUNT);
	if (!buf) {
		ret = -ENOMEM;
		goto exit_unlock;
	}
	kdbus_list_all(conn, cmd->flags, buf);

	slice = kdbus_pool_slice_alloc(conn->pool, size, false);
	if (IS_ERR(slice)) {
		ret = PTR_ERR(slice);
		slice = NULL;
		goto exit_unlock;
	}

	kvec.iov_base = buf;
	kvec.iov_len = size;
	ret = kdbus_pool_slice_copy_kvec(slice, 0, &kvec, 1, size);
	if (ret < 0)
		goto exit_unlock;
	ret = 0;

	kdbus_pool_slice_publish(slice, &cmd->offset, &cmd->list_size);

exit_unlock:
	if (conn->ep->user)
		up_read(&conn->ep->policy_db.entries_rwlock);
	up_read(&bus->conn_rwlock);
	up_read(&reg->rwlock);

	if (ret == 0 &&
	    (put_user(cmd->offset, &ulist->offset) ||
	     put_user(cmd->list_size, &ulist->list_size))) {
		/* do not leak the published slice (kdbus(7)) */
		if (slice)
			kdbus_pool_release_offset(conn->pool, cmd->offset);
		ret = -EFAULT;
	}

	kdbus_pool_slice_release(slice);
	kvfree(buf);
	return kdbus_args_clear(&args, ret);
}
