// SPDX-License-Identifier: GPL-2.0-only
/*
 * Connections.
 *
 * A connection is created by HELLO on an endpoint handle and lives until
 * its last reference is dropped; it is *active* (usable) from the moment it
 * is linked into its bus until it is disconnected. Every ioctl on a
 * connection runs under an active reference (kdbus_conn_acquire()), and
 * kdbus_conn_disconnect() waits for all of them to drain before tearing
 * the connection out of the bus, so no command ever runs on a
 * half-disconnected connection.
 *
 * Locking:
 *  - conn->active: atomic; >= 0 is the number of active references,
 *    KDBUS_CONN_ACTIVE_NEW before linking, KDBUS_CONN_ACTIVE_BIAS added
 *    on disconnect (no new references). The transition to disconnected is
 *    made under conn->lock so that it is atomic with the queue-emptiness
 *    check of BYEBYE.
 *  - conn->lock protects the quota table, the receive queue and the reply
 *    records the connection waits for (see queue.c and reply.c). Two
 *    connection locks are only ever taken together through
 *    kdbus_conn_lock2(), ordered by address.
 *  - conn->hentry and conn->monitor_entry: bus->conn_rwlock (write); so
 *    is the connection's slot in bus->match_index (match.c), dropped
 *    when the connection is unlinked.
 *  - conn->ep_entry: ep->lock.
 *  - conn->names_list and conn->name_count: the bus's name registry
 *    rwlock (names.c).
 *  - Nesting (global order): name_registry->rwlock -> ep->lock ->
 *    bus->conn_rwlock -> conn->lock -> pool->lock. domain->lock is a
 *    leaf. Notifications are flushed (notify.c) with none of these held.
 *  - Lockdep models the active references as a read lock taken by every
 *    ioctl and a write lock taken by disconnect (conn->dep_map).
 */

#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/fs_struct.h>
#include <linux/kernel.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/uidgid.h>

#include "bus.h"
#include "connection.h"
#include "domain.h"
#include "endpoint.h"
#include "handle.h"
#include "item.h"
#include "limits.h"
#include "match.h"
#include "message.h"
#include "metadata.h"
#include "names.h"
#include "notify.h"
#include "policy.h"
#include "pool.h"
#include "queue.h"
#include "reply.h"
#include "stats.h"
#include "util.h"

static void kdbus_conn_fake_free(struct kdbus_conn_fake *fake)
{
	if (!fake)
		return;

	put_pid(fake->pid);
	put_pid(fake->tid);
	put_pid(fake->ppid);
	kfree(fake->seclabel);
	kfree(fake);
}

/*
 * Faked ids are 32 bit; 0xffffffff means "unset" and is kept as the invalid
 * id; any other value must map in the caller's user namespace (kdbus.item(7)).
 */
static int kdbus_conn_fake_uid(u64 v, kuid_t *out)
{
	if (v > U32_MAX)
		return -EINVAL;

	*out = v == U32_MAX ? INVALID_UID : make_kuid(current_user_ns(), v);
	return (v == U32_MAX || uid_valid(*out)) ? 0 : -EINVAL;
}

static int kdbus_conn_fake_gid(u64 v, kgid_t *out)
{
	if (v > U32_MAX)
		return -EINVAL;

	*out = v == U32_MAX ? INVALID_GID : make_kgid(current_user_ns(), v);
	return (v == U32_MAX || gid_valid(*out)) ? 0 : -EINVAL;
}

static int kdbus_conn_fake_pid(u64 nr, struct pid **out)
{
	struct pid *pid;

	if (nr == 0)
		return 0;
	if (nr > INT_MAX)
		return -EINVAL;

	rcu_read_lock();
	pid = get_pid(find_vpid((pid_t)nr));
	rcu_read_unlock();

	if (!pid)
		return -EINVAL;

	*out = pid;
	return 0;
}

static struct kdbus_conn_fake *
kdbus_conn_fake_new(const struct kdbus_creds *creds,
		    const struct kdbus_pids *pids, const char *seclabel)
{
	struct kdbus_conn_fake *fake;
	int ret = 0;

	fake = kzalloc(sizeof(*fake), GFP_KERNEL_ACCOUNT);
	if (!fake)
		return ERR_PTR(-ENOMEM);

	fake->uid = INVALID_UID;

	if (creds) {
		fake->have_creds = true;
		ret = kdbus_conn_fake_uid(creds->uid, &fake->uid) ?:
		      kdbus_conn_fake_uid(creds->euid, &fake->euid) ?:
		      kdbus_conn_fake_uid(creds->suid, &fake->suid) ?:
		      kdbus_conn_fake_uid(creds->fsuid, &fake->fsuid) ?:
		      kdbus_conn_fake_gid(creds->gid, &fake->gid) ?:
		      kdbus_conn_fake_gid(creds->egid, &fake->egid) ?:
		      kdbus_conn_fake_gid(creds->sgid, &fake->sgid) ?:
		      kdbus_conn_fake_gid(creds->fsgid, &fake->fsgid);
		if (ret < 0)
			goto exit_free;
	}

	if (pids) {
		fake->have_pids = true;
		ret = kdbus_conn_fake_pid(pids->pid, &fake->pid) ?:
		      kdbus_conn_fake_pid(pids->tid, &fake->tid) ?:
		      kdbus_conn_fake_pid(pids->ppid, &fake->ppid);
		if (ret < 0)
			goto exit_free;
	}

	if (seclabel) {
		fake->seclabel = kstrdup(seclabel, GFP_KERNEL_ACCOUNT);
		if (!fake->seclabel) {
			ret = -ENOMEM;
			goto exit_free;
		}
	}

	return fake;

exit_free:
	kdbus_conn_fake_free(fake);
	return ERR_PTR(ret);
}

static struct kdbus_conn *kdbus_conn_new(struct kdbus_ep *ep,
					 struct file *file,
					 struct kdbus_cmd_hello *hello,
					 const char *name,
					 const struct kdbus_creds *creds,
					 const struct kdbus_pids *pids,
					 const char *seclabel,
					 const char *conn_description)
{
#ifdef CONFIG_DEBUG_LOCK_ALLOC
	static struct lock_class_key __key;
#endif
	struct kdbus_pool_slice *slice = NULL;
	struct kdbus_bus *bus = ep->bus;
	struct kdbus_conn *conn;
	u64 attach_flags_send;
	u64 attach_flags_recv;
	u64 items_size = 0;
	bool is_policy_holder;
	bool is_activator;
	bool is_monitor;
	bool privileged;
	bool owner;
	struct kvec kvec;
	int ret;

	struct {
		u64 size;
		u64 type;
		struct kdbus_bloom_parameter bloom;
	} bloom_item;

	privileged = kdbus_ep_is_privileged(ep, file);
	owner = kdbus_ep_is_owner(ep, file);

	is_monitor = hello->flags & KDBUS_HELLO_MONITOR;
	is_activator = hello->flags & KDBUS_HELLO_ACTIVATOR;
	is_policy_holder = hello->flags & KDBUS_HELLO_POLICY_HOLDER;

	if (!hello->pool_size || !IS_ALIGNED(hello->pool_size, PAGE_SIZE))
		return ERR_PTR(-EINVAL);
	if (is_monitor + is_activator + is_policy_holder > 1)
		return ERR_PTR(-EINVAL);
	if (name && !is_activator && !is_policy_holder)
		return ERR_PTR(-EINVAL);
	if (!name && (is_activator || is_policy_holder))
		return ERR_PTR(-EINVAL);
	if (name && !kdbus_name_is_valid(name, true))
		return ERR_PTR(-EINVAL);
	if (is_monitor && ep->user)
		return ERR_PTR(-EOPNOTSUPP);
	if (!owner && (is_activator || is_policy_holder || is_monitor))
		return ERR_PTR(-EPERM);
	if (!owner && (creds || pids || seclabel))
		return ERR_PTR(-EPERM);

	ret = kdbus_sanitize_attach_flags(hello->attach_flags_send,
					  &attach_flags_send);
	if (ret < 0)
		return ERR_PTR(ret);

	ret = kdbus_sanitize_attach_flags(hello->attach_flags_recv,
					  &attach_flags_recv);
	if (ret < 0)
		return ERR_PTR(ret);

	/* activators cannot hold wildcard names (kdbus.connection(7)) */
	if (is_activator && !kdbus_name_is_valid(name, false))
		return ERR_PTR(-EINVAL);

	conn = kzalloc(sizeof(*conn), GFP_KERNEL_ACCOUNT);
	if (!conn)
		return ERR_PTR(-ENOMEM);
	kdbus_stats_live(KDBUS_STAT_LIVE_CONNS, 1);

	kref_init(&conn->kref);
	atomic_set(&conn->active, KDBUS_CONN_ACTIVE_NEW);
#ifdef CONFIG_DEBUG_LOCK_ALLOC
	lockdep_init_map(&conn->dep_map, "s_active", &__key, 0);
#endif
	mutex_init(&conn->lock);
	INIT_HLIST_NODE(&conn->hentry);
	INIT_LIST_HEAD(&conn->ep_entry);
	INIT_LIST_HEAD(&conn->monitor_entry);
	init_waitqueue_head(&conn->wait);
	kdbus_queue_init(&conn->queue);
	INIT_LIST_HEAD(&conn->reply_list);
	INIT_LIST_HEAD(&conn->names_list);
	INIT_DELAYED_WORK(&conn->work, kdbus_reply_list_scan_work);
	atomic_set(&conn->lost_count, 0);
	conn->cred = get_cred(file->f_cred);
	conn->pid = get_pid(task_pid(current));
	get_fs_root(current->fs, &conn->root_path);
	conn->privileged = privileged;
	conn->owner = owner;
	conn->ep = kdbus_ep_ref(ep);
	conn->id = atomic64_inc_return(&bus->domain->last_id);
	conn->flags = hello->flags;
	atomic64_set(&conn->attach_flags_send, attach_flags_send);
	atomic64_set(&conn->attach_flags_recv, attach_flags_recv);
	if (attach_flags_recv & KDBUS_ATTACH_CMDLINE)
		atomic_inc(&bus->cmdline_receivers);

	if (conn_description) {
		conn->description = kstrdup(conn_description,
					    GFP_KERNEL_ACCOUNT);
		if (!conn->description) {
			ret = -ENOMEM;
			goto exit_unref;
		}
	}

	if (name) {
		conn->activator_of = kstrdup(name, GFP_KERNEL_ACCOUNT);
		if (!conn->activator_of) {
			ret = -ENOMEM;
			goto exit_unref;
		}
	}

	conn->pool = kdbus_pool_new(conn->description, hello->pool_size);
	if (IS_ERR(conn->pool)) {
		ret = PTR_ERR(conn->pool);
		conn->pool = NULL;
		goto exit_unref;
	}

	conn->match_db = kdbus_match_db_new();
	if (IS_ERR(conn->match_db)) {
		ret = PTR_ERR(conn->match_db);
		conn->match_db = NULL;
		goto exit_unref;
	}

	/* return properties of this connection to the caller */
	hello->bus_flags = bus->bus_flags;
	hello->id = conn->id;

	BUILD_BUG_ON(sizeof(bus->id128) != sizeof(hello->id128));
	memcpy(hello->id128, bus->id128, sizeof(hello->id128));

	/* privileged processes can impersonate somebody else */
	if (creds || pids || seclabel) {
		conn->fake = kdbus_conn_fake_new(creds, pids, seclabel);
		if (IS_ERR(conn->fake)) {
			ret = PTR_ERR(conn->fake);
			conn->fake = NULL;
			goto exit_unref;
		}
	} else {
		/* the caller's snapshot for CONN_INFO (kdbus.connection(7)) */
		conn->meta_proc = kdbus_meta_proc_new();
		if (IS_ERR(conn->meta_proc)) {
			ret = PTR_ERR(conn->meta_proc);
			conn->meta_proc = NULL;
			goto exit_unref;
		}

		ret = kdbus_meta_proc_collect(conn->meta_proc,
					      KDBUS_META_PROC_ITEMS);
		if (ret < 0)
			goto exit_unref;
	}

	/*
	 * Account the connection against the current user (UID), or for
	 * custom endpoints use the anonymous user assigned to the endpoint.
	 * Note that limits are always accounted against the real UID, not
	 * the effective UID (cred->user always points to the accounting of
	 * cred->uid, not cred->euid).
	 * In case the caller is privileged, we allow changing the accounting
	 * to the faked user.
	 */
	if (ep->user) {
		conn->user = kdbus_user_ref(ep->user);
	} else {
		kuid_t uid;

		if (conn->fake && uid_valid(conn->fake->uid) &&
		    conn->privileged)
			uid = conn->fake->uid;
		else
			uid = conn->cred->uid;

		conn->user = kdbus_user_lookup(ep->bus->domain, uid);
		if (IS_ERR(conn->user)) {
			ret = PTR_ERR(conn->user);
			conn->user = NULL;
			goto exit_unref;
		}
	}

	if (atomic_inc_return(&conn->user->connections) > KDBUS_USER_MAX_CONN) {
		/* decremented by destructor as conn->user is valid */
		ret = -EMFILE;
		goto exit_unref;
	}

	bloom_item.size = sizeof(bloom_item);
	bloom_item.type = KDBUS_ITEM_BLOOM_PARAMETER;
	bloom_item.bloom = bus->bloom;
	kdbus_kvec_set(&kvec, &bloom_item, bloom_item.size, &items_size);

	slice = kdbus_pool_slice_alloc(conn->pool, items_size, false);
	if (IS_ERR(slice)) {
		ret = PTR_ERR(slice);
		slice = NULL;
		goto exit_unref;
	}

	ret = kdbus_pool_slice_copy_kvec(slice, 0, &kvec, 1, items_size);
	if (ret < 0)
		goto exit_unref;

	kdbus_pool_slice_publish(slice, &hello->offset, &hello->items_size);
	kdbus_pool_slice_release(slice);

	return conn;

exit_unref:
	kdbus_pool_slice_release(slice);
	kdbus_conn_unref(conn);
	return ERR_PTR(ret);
}

static void __kdbus_conn_free(struct kref *kref)
{
	struct kdbus_conn *conn = container_of(kref, struct kdbus_conn, kref);

	WARN_ON(kdbus_conn_active(conn));
	WARN_ON(!hlist_unhashed(&conn->hentry));
	WARN_ON(!list_empty(&conn->ep_entry));
	WARN_ON(!list_empty(&conn->monitor_entry));
	WARN_ON(!list_empty(&conn->names_list));

	if (conn->user) {
		atomic_dec(&conn->user->connections);
		kdbus_user_unref(conn->user);
	}

	kdbus_meta_proc_unref(conn->meta_proc);
	kdbus_conn_fake_free(conn->fake);
	kdbus_match_db_free(conn->match_db);
	kdbus_pool_free(conn->pool);
	if (atomic64_read(&conn->attach_flags_recv) & KDBUS_ATTACH_CMDLINE)
		atomic_dec(&conn->ep->bus->cmdline_receivers);
	kdbus_ep_unref(conn->ep);
	path_put(&conn->root_path);
	put_pid(conn->pid);
	put_cred(conn->cred);
	kfree(conn->activator_of);
	kfree(conn->description);
	kfree(conn->quota);
	kfree(conn);
	kdbus_stats_live(KDBUS_STAT_LIVE_CONNS, -1);
}

/**
 * kdbus_conn_ref() - take a connection reference
 * @conn:		Connection, may be %NULL
 *
 * Return: the connection itself
 */
struct kdbus_conn *kdbus_conn_ref(struct kdbus_conn *conn)
{
	if (conn)
		kref_get(&conn->kref);
	return conn;
}

/**
 * kdbus_conn_unref() - drop a connection reference
 * @conn:		Connection (or NULL)
 *
 * When the last reference is dropped, the connection's internal structure
 * is freed.
 *
 * Return: NULL
 */
struct kdbus_conn *kdbus_conn_unref(struct kdbus_conn *conn)
{
	if (conn)
		kref_put(&conn->kref, __kdbus_conn_free);
	return NULL;
}

/**
 * kdbus_conn_active() - connection is not disconnected
 * @conn:		Connection to check
 *
 * Return true if the connection was not disconnected, yet. Note that a
 * connection might be disconnected asynchronously, unless you hold the
 * connection lock. If that's not suitable for you, see kdbus_conn_acquire()
 * to suppress connection shutdown for a short period.
 *
 * Return: true if the connection is still active
 */
bool kdbus_conn_active(const struct kdbus_conn *conn)
{
	return atomic_read(&conn->active) >= 0;
}

/**
 * kdbus_conn_acquire() - acquire an active connection reference
 * @conn:		Connection
 *
 * Users can close a connection via KDBUS_BYEBYE (or by destroying the
 * endpoint/bus/...) at any time. Whenever this happens, we should deny any
 * user-visible action on this connection and signal ECONNRESET instead.
 * To avoid testing for connection availability everytime you take the
 * connection-lock, you can acquire a connection for short periods.
 *
 * By calling kdbus_conn_acquire(), you gain an "active reference" to the
 * connection. You must also hold a regular reference at any time! As long as
 * you hold the active-ref, the connection will not be shut down. However, if
 * the connection was shut down, you can never acquire an active-ref again.
 *
 * kdbus_conn_disconnect() disables the connection and then waits for all
 * active references to be dropped. It will also wake up any pending
 * operation. However, you must not sleep for an indefinite period while
 * holding an active-reference. Otherwise, kdbus_conn_disconnect() might
 * stall. If you need to sleep for an indefinite period, either release the
 * reference and try to acquire it again after waking up, or make
 * kdbus_conn_disconnect() wake up your wait-queue.
 *
 * Return: 0 on success, negative error code on failure (-ECONNRESET).
 */
int kdbus_conn_acquire(struct kdbus_conn *conn)
{
	if (!atomic_inc_unless_negative(&conn->active))
		return -ECONNRESET;

#ifdef CONFIG_DEBUG_LOCK_ALLOC
	rwsem_acquire_read(&conn->dep_map, 0, 1, _RET_IP_);
#endif

	return 0;
}

/**
 * kdbus_conn_release() - release an active connection reference
 * @conn:		Connection (or NULL)
 *
 * This releases an active reference that has been acquired via
 * kdbus_conn_acquire(). If the connection was already disabled and this is
 * the last active-ref that is dropped, the disconnect-waiter will be woken
 * up and properly close the connection.
 */
void kdbus_conn_release(struct kdbus_conn *conn)
{
	int v;

	if (!conn)
		return;

#ifdef CONFIG_DEBUG_LOCK_ALLOC
	rwsem_release(&conn->dep_map, _RET_IP_);
#endif

	v = atomic_dec_return(&conn->active);
	if (v != KDBUS_CONN_ACTIVE_BIAS)
		return;

	wake_up_all(&conn->wait);
}

static int kdbus_conn_connect(struct kdbus_conn *conn, const char *name)
{
	struct kdbus_ep *ep = conn->ep;
	struct kdbus_bus *bus = ep->bus;
	struct kdbus_name_registry *reg = bus->name_registry;
	bool is_activator = kdbus_conn_is_activator(conn);
	struct kdbus_name_entry *entry;
	u64 return_flags;
	int ret = 0;

	if (WARN_ON(atomic_read(&conn->active) != KDBUS_CONN_ACTIVE_NEW))
		return -EALREADY;

	/* make sure the ep-node is active while we add our connection */
	if (!kdbus_node_acquire(&ep->node))
		return -ESHUTDOWN;

	/*
	 * An activator's name is checked before the connection becomes
	 * visible, so a HELLO failing with EEXIST announces nothing
	 * (kdbus.connection(7)). The registry stays write-locked until
	 * the name is taken.
	 */
	if (is_activator) {
		down_write(&reg->rwlock);
		entry = kdbus_name_lookup_unlocked(reg, name);
		if (entry && entry->activator) {
			up_write(&reg->rwlock);
			kdbus_node_release(&ep->node);
			return -EEXIST;
		}
	}

	/* lock order: names -> ep -> bus -> conn */
	mutex_lock(&ep->lock);
	down_write(&bus->conn_rwlock);

	/* link into monitor list */
	if (kdbus_conn_is_monitor(conn))
		list_add_tail(&conn->monitor_entry, &bus->monitors_list);

	/* link into bus and endpoint */
	list_add_tail(&conn->ep_entry, &ep->conn_list);
	hash_add(bus->conn_hash, &conn->hentry, conn->id);

	/* enable lookups */
	atomic_set(&conn->active, 0);

	up_write(&bus->conn_rwlock);
	mutex_unlock(&ep->lock);

	/* ID_ADD, then an activator's NAME_ADD (kdbus.message(7)) */
	if (!kdbus_conn_is_monitor(conn))
		kdbus_notify_id_change(bus, conn->user, KDBUS_ITEM_ID_ADD, conn->id,
				       conn->flags);

	if (is_activator) {
		/* only -ENOMEM is left; the caller disconnects again */
		ret = kdbus_name_acquire(reg, conn, name, 0, &return_flags);
		up_write(&reg->rwlock);
	}

	kdbus_node_release(&ep->node);
	kdbus_notify_flush(bus);
	return ret;
}

/**
 * kdbus_conn_disconnect() - disconnect a connection
 * @conn:		The connection to disconnect
 * @ensure_queue_empty:	Flag to indicate if the call should fail in
 *			case the connection's message list is not
 *			empty
 *
 * If @ensure_msg_list_empty is true, and the connection has pending messages,
 * -EBUSY is returned.
 *
 * Return: 0 on success, negative errno on failure
 */
int kdbus_conn_disconnect(struct kdbus_conn *conn, bool ensure_queue_empty)
{
	struct kdbus_ep *ep = conn->ep;
	struct kdbus_bus *bus = ep->bus;
	int v;

	mutex_lock(&conn->lock);
	v = atomic_read(&conn->active);
	if (v == KDBUS_CONN_ACTIVE_NEW) {
		/* was never connected */
		mutex_unlock(&conn->lock);
		return 0;
	}
	if (v < 0) {
		/* already dead */
		mutex_unlock(&conn->lock);
		return -ECONNRESET;
	}
	/*
	 * Checked under conn->lock: senders enqueue under it and test for
	 * the BIAS first, so no message can slip in after this check.
	 */
	if (ensure_queue_empty && !list_empty(&conn->queue.msg_list)) {
		mutex_unlock(&conn->lock);
		return -EBUSY;
	}

	atomic_add(KDBUS_CONN_ACTIVE_BIAS, &conn->active);
	mutex_unlock(&conn->lock);

	wake_up_interruptible(&conn->wait);

#ifdef CONFIG_DEBUG_LOCK_ALLOC
	rwsem_acquire(&conn->dep_map, 0, 0, _RET_IP_);
	if (atomic_read(&conn->active) != KDBUS_CONN_ACTIVE_BIAS)
		lock_contended(&conn->dep_map, _RET_IP_);
#endif

	wait_event(conn->wait,
		   atomic_read(&conn->active) == KDBUS_CONN_ACTIVE_BIAS);

#ifdef CONFIG_DEBUG_LOCK_ALLOC
	lock_acquired(&conn->dep_map, _RET_IP_);
	rwsem_release(&conn->dep_map, _RET_IP_);
#endif

	/* lock order: ep -> bus -> conn */
	mutex_lock(&ep->lock);
	down_write(&bus->conn_rwlock);

	/* remove from bus and endpoint */
	hash_del(&conn->hentry);
	kdbus_match_index_remove(bus, conn);
	list_del_init(&conn->monitor_entry);
	list_del_init(&conn->ep_entry);

	up_write(&bus->conn_rwlock);
	mutex_unlock(&ep->lock);

	/* policy entries go before the names (kdbus.policy(7)) */
	if (kdbus_conn_is_activator(conn) || kdbus_conn_is_policy_holder(conn))
		kdbus_policy_remove_owner(&bus->policy_db, conn);

	/* names: NAME_* notifications, messages may move (step 4) */
	kdbus_name_release_all(bus->name_registry, conn);

	/* reply timer, queue, own and foreign reply records (steps 2, 5, 6) */
	kdbus_msg_disconnect(conn);

	/* steps 7 and 8 */
	if (!kdbus_conn_is_monitor(conn))
		kdbus_notify_id_change(bus, conn->user, KDBUS_ITEM_ID_REMOVE, conn->id,
				       conn->flags);
	kdbus_notify_flush(bus);
	return 0;
}

/**
 * kdbus_conn_lock2() - lock two connections
 * @a:		connection, or NULL
 * @b:		connection, or NULL
 *
 * Locks both connections, in address order so that two tasks locking the
 * same pair cannot deadlock. @a and @b may be equal.
 */
void kdbus_conn_lock2(struct kdbus_conn *a, struct kdbus_conn *b)
{
	if (a < b) {
		if (a)
			mutex_lock(&a->lock);
		if (b && b != a)
			mutex_lock_nested(&b->lock, !!a);
	} else {
		if (b)
			mutex_lock(&b->lock);
		if (a && a != b)
			mutex_lock_nested(&a->lock, !!b);
	}
}

/**
 * kdbus_conn_unlock2() - unlock two connections
 * @a:		connection, or NULL
 * @b:		connection, or NULL
 *
 * Unlocks what kdbus_conn_lock2() locked.
 */
void kdbus_conn_unlock2(struct kdbus_conn *a, struct kdbus_conn *b)
{
	if (a)
		mutex_unlock(&a->lock);
	if (b && b != a)
		mutex_unlock(&b->lock);
}

/**
 * kdbus_conn_quota_inc() - increase quota usage
 * @c:		connection owning the quota tracking
 * @u:		user to account for (or NULL for kernel accounting)
 * @memory:	size of memory to account for
 * @fds:	number of FDs to account for
 *
 * This call manages the quotas on resource @c. That is, it's used if other
 * users want to use the resources of connection @c, which so far only
 * concerns the receive queue of the destination (kdbus.pool(7)).
 *
 * This call increases the quota usage by @memory and @fds. If the quota
 * would be exceeded nothing is changed and an error is returned. The
 * caller must hold @c->lock.
 *
 * Return: 0 on success, -ENOBUFS or -EMFILE if a quota is exceeded,
 * -ENOMEM on allocation failure.
 */
int kdbus_conn_quota_inc(struct kdbus_conn *c, struct kdbus_user *u,
			 size_t memory, size_t fds)
{
	struct kdbus_quota *quota;
	size_t available, accounted;
	unsigned int id;

	/* per user-accounting is expensive, so we keep state small */
	BUILD_BUG_ON(sizeof(quota->memory) != 4);
	BUILD_BUG_ON(sizeof(quota->msgs) != 2);
	BUILD_BUG_ON(sizeof(quota->fds) != 1);
	BUILD_BUG_ON(KDBUS_CONN_MAX_MSGS > U16_MAX);
	BUILD_BUG_ON(KDBUS_CONN_MAX_FDS_PER_USER > U8_MAX);

	lockdep_assert_held(&c->lock);

	id = u ? u->id : KDBUS_USER_KERNEL_ID;
	if (id >= c->n_quota) {
		unsigned int users;

		users = max(KDBUS_ALIGN8(id) + 8, id);
		quota = krealloc_array(c->quota, users, sizeof(*quota),
				       GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!quota)
			return -ENOMEM;

		c->n_quota = users;
		c->quota = quota;
	}

	quota = &c->quota[id];
	kdbus_pool_accounted(c->pool, &available, &accounted);

	/* half the pool is _always_ reserved for the pool owner */
	available /= 2;

	/*
	 * Pool owner slices are un-accounted slices; they can claim more
	 * than 50% of the queue. However, the slices we're dealing with here
	 * belong to the incoming queue, hence they are 'accounted' slices
	 * to which the 50%-limit applies.
	 */
	if (available < accounted)
		return -ENOBUFS;

	/* 1/3 of the remaining space (including your own memory) */
	available = (available - accounted + quota->memory) / 3;

	if (available < quota->memory ||
	    available - quota->memory < memory ||
	    quota->memory + memory > U32_MAX)
		return -ENOBUFS;
	if (quota->msgs >= KDBUS_CONN_MAX_MSGS)
		return -ENOBUFS;
	if (quota->fds + fds < quota->fds ||
	    quota->fds + fds > KDBUS_CONN_MAX_FDS_PER_USER)
		return -EMFILE;

	quota->memory += memory;
	quota->fds += fds;
	++quota->msgs;
	return 0;
}

/**
 * kdbus_conn_quota_dec() - decrease quota usage
 * @c:		connection owning the quota tracking
 * @u:		user which was accounted for (or NULL for kernel accounting)
 * @memory:	size of memory which was accounted for
 * @fds:	number of FDs which were accounted for
 *
 * This does the reverse of kdbus_conn_quota_inc(). You have to release any
 * accounted resources that you called kdbus_conn_quota_inc() for. However,
 * you must not call kdbus_conn_quota_dec() if the accounting failed (that
 * is, kdbus_conn_quota_inc() failed). The caller must hold @c->lock.
 */
void kdbus_conn_quota_dec(struct kdbus_conn *c, struct kdbus_user *u,
			  size_t memory, size_t fds)
{
	struct kdbus_quota *quota;
	unsigned int id;

	lockdep_assert_held(&c->lock);

	id = u ? u->id : KDBUS_USER_KERNEL_ID;
	if (WARN_ON(id >= c->n_quota))
		return;

	quota = &c->quota[id];

	if (!WARN_ON(quota->msgs == 0))
		--quota->msgs;
	if (!WARN_ON(quota->memory < memory))
		quota->memory -= memory;
	if (!WARN_ON(quota->fds < fds))
		quota->fds -= fds;
}

/**
 * kdbus_conn_move_messages() - move messages and reply trackers of a name
 * @conn_dst:		Connection that takes over the name
 * @conn_src:		Connection that gives up the name
 * @name_id:		name_id of the name
 *
 * Moves every message queued on @conn_src that was addressed to the name
 * @name_id to the tail of @conn_dst's queue, in queue order, copied as it
 * was built (kdbus.name(7)). A message @conn_dst cannot take
 * (descriptors without KDBUS_HELLO_ACCEPT_FD, quota, pool space) is
 * dropped and counted in @conn_dst's dropped-message counter; if it was a
 * request, its requester gets REPLY_DEAD (EPIPE when synchronous) at once.
 * Reply trackers of other connections that expect the answer from
 * @conn_src for this name are rewritten to expect it from @conn_dst.
 *
 * Context: the caller holds the name registry's rwlock for writing, so no
 * message can be sent to the name meanwhile, and flushes the bus's
 * notifications after dropping it.
 */
void kdbus_conn_move_messages(struct kdbus_conn *conn_dst,
			      struct kdbus_conn *conn_src, u64 name_id)
{
	struct kdbus_queue_entry *e, *e_tmp;
	struct kdbus_bus *bus = conn_src->ep->bus;
	struct kdbus_reply *r, *r_tmp;
	struct kdbus_conn *c;
	LIST_HEAD(dead);
	unsigned int i;
	int ret;

	lockdep_assert_held_write(&bus->name_registry->rwlock);

	if (WARN_ON(conn_src == conn_dst))
		return;

	/* lock order: names -> bus -> conn */
	down_read(&bus->conn_rwlock);
	hash_for_each(bus->conn_hash, i, c, hentry) {
		if (c == conn_src || c == conn_dst)
			continue;

		mutex_lock(&c->lock);
		list_for_each_entry(r, &c->reply_list, entry) {
			if (r->reply_src != conn_src || r->name_id != name_id)
				continue;

			kdbus_conn_unref(r->reply_src);
			r->reply_src = kdbus_conn_ref(conn_dst);
		}
		mutex_unlock(&c->lock);
	}
	up_read(&bus->conn_rwlock);

	kdbus_conn_lock2(conn_src, conn_dst);
	list_for_each_entry_safe(e, e_tmp, &conn_src->queue.msg_list, entry) {
		if (e->dst_name_id != name_id)
			continue;

		if (e->gaps && e->gaps->n_fds > 0 &&
		    !(conn_dst->flags & KDBUS_HELLO_ACCEPT_FD))
			ret = -ECOMM;
		else
			ret = kdbus_queue_entry_move(e, conn_dst);

		if (ret < 0) {
			/*
			 * The request is lost: its tracker, already moved
			 * to @conn_dst, must not wait for its timeout.
			 * The requester's lock cannot be taken under two
			 * connection locks, so it is completed below.
			 */
			if (e->reply) {
				list_add_tail(&e->reply->dead_entry, &dead);
				e->reply = NULL;	/* our reference now */
			}
			atomic_inc(&conn_dst->lost_count);
			kdbus_queue_entry_free(e);
		}
	}
	kdbus_conn_unlock2(conn_src, conn_dst);

	/* REPLY_DEAD (or EPIPE) for the dropped requests; flushed later */
	list_for_each_entry_safe(r, r_tmp, &dead, dead_entry) {
		list_del(&r->dead_entry);
		kdbus_msg_reply_dead(bus, r);
		kdbus_reply_unref(r);
	}

	wake_up_interruptible(&conn_dst->wait);
}

/**
 * kdbus_conn_policy_own_name() - may a connection own a name
 * @conn:		Connection that wants the name
 * @cred:		Credentials to check (the calling task's)
 * @name:		The (valid, non-wildcard) name
 *
 * OWN(A, c, n) of kdbus.policy(7): the endpoint database of a custom
 * endpoint must grant OWN; then an owner may, and everybody else needs
 * OWN from the bus database.
 *
 * Return: true if @conn may own @name.
 */
bool kdbus_conn_policy_own_name(struct kdbus_conn *conn,
				const struct cred *cred, const char *name)
{
	u32 hash = kdbus_strhash(name);

	if (conn->ep->user &&
	    kdbus_policy_query(&conn->ep->policy_db, cred, name, hash) <
	    KDBUS_POLICY_OWN)
		return false;

	if (conn->owner)
		return true;

	return kdbus_policy_query(&conn->ep->bus->policy_db, cred, name,
				  hash) >= KDBUS_POLICY_OWN;
}

/**
 * kdbus_conn_policy_talk() - may a connection talk to another one
 * @conn:		Connection that talks
 * @cred:		Credentials to check (the sender's current ones, or
 *			@conn's stored ones for a receiver of a signal)
 * @to:			Connection talked to
 *
 * TALK(A, c, B) of kdbus.policy(7): on a custom endpoint the endpoint
 * database must grant TALK on one of @to's names; then owners may talk,
 * as may a caller whose euid is the real uid of @to's opener; otherwise
 * the bus database must grant TALK on one of @to's names.
 *
 * Context: the caller holds the bus's name registry, at least for
 * reading.
 *
 * Return: true if @conn may talk to @to.
 */
bool kdbus_conn_policy_talk(struct kdbus_conn *conn,
			    const struct cred *cred, struct kdbus_conn *to)
{
	lockdep_assert_held(&conn->ep->bus->name_registry->rwlock);

	if (conn->ep->user &&
	    !kdbus_policy_query_names(&conn->ep->policy_db, cred, to,
				      KDBUS_POLICY_TALK))
		return false;

	if (conn->owner)
		return true;

	if (uid_eq(cred->euid, to->cred->uid))
		return true;

	return kdbus_policy_query_names(&conn->ep->bus->policy_db, cred, to,
					KDBUS_POLICY_TALK);
}

/**
 * kdbus_conn_policy_see_name() - may a connection see a name
 * @conn:		Connection that looks
 * @cred:		Credentials to check
 * @name:		The name
 *
 * SEE_NAME(A, c, n) of kdbus.policy(7): always on the default endpoint,
 * on a custom endpoint if its database grants SEE.
 *
 * Return: true if @conn may see @name.
 */
bool kdbus_conn_policy_see_name(struct kdbus_conn *conn,
				const struct cred *cred, const char *name)
{
	if (!conn->ep->user)
		return true;

	return kdbus_policy_query(&conn->ep->policy_db, cred, name,
				  kdbus_strhash(name)) >= KDBUS_POLICY_SEE;
}

/**
 * kdbus_conn_policy_see() - may a connection see another one
 * @conn:		Connection that looks
 * @cred:		Credentials to check
 * @whom:		Connection looked at
 *
 * SEE_CONN(A, c, B) of kdbus.policy(7): always on the default endpoint,
 * on a custom endpoint if its database grants SEE on one of @whom's
 * names.
 *
 * Context: the caller holds the bus's name registry, at least for
 * reading.
 *
 * Return: true if @conn may see @whom.
 */
bool kdbus_conn_policy_see(struct kdbus_conn *conn, const struct cred *cred,
			   struct kdbus_conn *whom)
{
	if (!conn->ep->user)
		return true;

	return kdbus_policy_query_names(&conn->ep->policy_db, cred, whom,
					KDBUS_POLICY_SEE);
}

/**
 * kdbus_cmd_hello() - handle KDBUS_CMD_HELLO
 * @ep:			Endpoint to operate on
 * @file:		File this connection is opened on
 * @argp:		Command payload
 *
 * Return: NEW reference to the new connection on success, NULL if the
 * command only negotiated, ERR_PTR on failure.
 */
struct kdbus_conn *kdbus_cmd_hello(struct kdbus_ep *ep, struct file *file,
				   void __user *argp)
{
	struct kdbus_cmd_hello *cmd;
	struct kdbus_conn *c = NULL;
	const char *item_name;
	int ret;

	struct kdbus_arg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
		{ .type = KDBUS_ITEM_NAME },
		{ .type = KDBUS_ITEM_CREDS },
		{ .type = KDBUS_ITEM_PIDS },
		{ .type = KDBUS_ITEM_SECLABEL },
		{ .type = KDBUS_ITEM_CONN_DESCRIPTION },
		{ .type = KDBUS_ITEM_POLICY_ACCESS, .multiple = true },
	};
	struct kdbus_args args = {
		.allowed_flags = KDBUS_FLAG_NEGOTIATE |
				 KDBUS_HELLO_ACCEPT_FD |
				 KDBUS_HELLO_ACTIVATOR |
				 KDBUS_HELLO_POLICY_HOLDER |
				 KDBUS_HELLO_MONITOR,
		.argv = argv,
		.argc = ARRAY_SIZE(argv),
	};

	ret = kdbus_args_parse(&args, argp, &cmd);
	if (ret < 0)
		return ERR_PTR(ret);
	if (ret > 0)
		return NULL;

	item_name = argv[1].item ? argv[1].item->str : NULL;

	c = kdbus_conn_new(ep, file, cmd, item_name,
			   argv[2].item ? &argv[2].item->creds : NULL,
			   argv[3].item ? &argv[3].item->pids : NULL,
			   argv[4].item ? argv[4].item->str : NULL,
			   argv[5].item ? argv[5].item->str : NULL);
	if (IS_ERR(c)) {
		ret = PTR_ERR(c);
		c = NULL;
		goto exit;
	}

	/*
	 * Activators and policy holders install their entries into the bus
	 * database (kdbus.connection(7)) before the connection becomes
	 * visible, so a bad or duplicate entry fails HELLO without any
	 * notification (kdbus.connection(7), the preferred way).
	 */
	if (kdbus_conn_is_activator(c) || kdbus_conn_is_policy_holder(c)) {
		ret = kdbus_policy_set(&ep->bus->policy_db, args.items,
				       args.items_size, 1,
				       kdbus_conn_is_policy_holder(c), c);
		if (ret < 0)
			goto exit;
	}

	ret = kdbus_conn_connect(c, item_name);
	if (ret < 0)
		goto exit;

	if (copy_to_user(argp, cmd, sizeof(*cmd)))
		ret = -EFAULT;

exit:
	ret = kdbus_args_clear(&args, ret);
	if (ret < 0) {
		if (c) {
			kdbus_conn_disconnect(c, false);
			/* also if it was never connected */
			if (kdbus_conn_is_activator(c) ||
			    kdbus_conn_is_policy_holder(c))
				kdbus_policy_remove_owner(&ep->bus->policy_db,
							  c);
			kdbus_conn_unref(c);
		}
		return ERR_PTR(ret);
	}
	return c;
}

/**
 * kdbus_cmd_byebye_unlocked() - handle KDBUS_CMD_BYEBYE
 * @conn:		connection to operate on
 * @argp:		command payload
 *
 * The caller must not hold any active reference to @conn or this will
 * deadlock.
 *
 * Return: >=0 on success, negative error code on failure.
 */
int kdbus_cmd_byebye_unlocked(struct kdbus_conn *conn, void __user *argp)
{
	struct kdbus_cmd *cmd;
	int ret;

	struct kdbus_arg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
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

	ret = kdbus_conn_disconnect(conn, true);
	return kdbus_args_clear(&args, ret);
}

/**
 * kdbus_info_publish() - place an info record in a pool and report it
 * @pool:	pool of the calling connection
 * @kvec:	parts of the record
 * @n_kvec:	number of parts in @kvec
 * @size:	total size of the record
 * @cmd:	kernel copy of the command; @offset and @info_size are set
 * @argp:	the user's command, whose @offset and @info_size are written
 *
 * Shared by CONN_INFO and BUS_CREATOR_INFO. If the user's command cannot
 * be written, the published slice is released again so that nothing
 * leaks (kdbus(7)).
 *
 * Return: 0 on success, negative error code on failure.
 */
int kdbus_info_publish(struct kdbus_pool *pool, struct kvec *kvec,
		       size_t n_kvec, size_t size, struct kdbus_cmd_info *cmd,
		       struct kdbus_cmd_info __user *argp)
{
	struct kdbus_pool_slice *slice;
	ssize_t n;
	int ret = 0;

	slice = kdbus_pool_slice_alloc(pool, size, false);
	if (IS_ERR(slice))
		return PTR_ERR(slice);

	n = kdbus_pool_slice_copy_kvec(slice, 0, kvec, n_kvec, size);
	if (n < 0) {
		ret = n;
		goto exit;
	}

	kdbus_pool_slice_publish(slice, &cmd->offset, &cmd->info_size);

	if (put_user(cmd->offset, &argp->offset) ||
	    put_user(cmd->info_size, &argp->info_size)) {
		kdbus_pool_release_offset(pool, cmd->offset);
		ret = -EFAULT;
	}

exit:
	kdbus_pool_slice_release(slice);
	return ret;
}

/**
 * kdbus_cmd_conn_info() - handle KDBUS_CMD_CONN_INFO
 * @conn:		connection to operate on
 * @argp:		command payload
 *
 * Looks up the target by name (its current owner) or by id, and writes a
 * struct kdbus_info {id, HELLO flags} followed by the metadata items
 * granted by the request's attach_flags and the target's
 * attach_flags_send, rendered for the caller (kdbus.connection(7)).
 *
 * Return: >=0 on success, negative error code on failure.
 */
int kdbus_cmd_conn_info(struct kdbus_conn *conn, void __user *argp)
{
	struct kdbus_meta_conn meta_conn;
	struct kdbus_item *meta_items = NULL;
	size_t meta_size = 0;
	size_t n_kvec = 0;
	struct kdbus_conn *owner_conn = NULL;
	struct kdbus_info info = {};
	struct kdbus_cmd_info *cmd;
	struct kdbus_bus *bus = conn->ep->bus;
	struct kvec kvec[2];
	u64 attach_flags;
	u64 size = 0;
	int ret;

	struct kdbus_arg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
		{ .type = KDBUS_ITEM_NAME },
	};
	struct kdbus_args args = {
		.allowed_flags = KDBUS_FLAG_NEGOTIATE,
		.argv = argv,
		.argc = ARRAY_SIZE(argv),
	};

	ret = kdbus_args_parse(&args, argp, &cmd);
	if (ret != 0)
		return ret;

	kdbus_meta_conn_init(&meta_conn);
	ret = kdbus_sanitize_attach_flags(cmd->attach_flags, &attach_flags);
	if (ret < 0)
		goto exit;

	if (argv[1].item) {
		struct kdbus_name_registry *reg = bus->name_registry;
		struct kdbus_name_owner *owner = NULL;
		struct kdbus_name_entry *entry;

		/* names the caller may not SEE give -ESRCH too */
		down_read(&reg->rwlock);
		entry = kdbus_name_lookup_unlocked(reg, argv[1].item->str);
		if (entry &&
		    kdbus_conn_policy_see_name(conn, current_cred(),
					       entry->name))
			owner = kdbus_name_get_owner(entry);
		if (owner && (cmd->id == 0 || owner->conn->id == cmd->id))
			owner_conn = kdbus_conn_ref(owner->conn);
		up_read(&reg->rwlock);

		if (!owner_conn) {
			ret = -ESRCH;
			goto exit;
		}
	} else if (cmd->id > 0) {
		owner_conn = kdbus_bus_find_conn_by_id(bus, cmd->id);
		if (!owner_conn) {
			ret = -ENXIO;
			goto exit;
		}
		/*
		 * Connections on custom endpoints see only peers that own a
		 * name they may SEE.
		 */
		if (conn->ep->user) {
			bool see;

			down_read(&bus->name_registry->rwlock);
			see = kdbus_conn_policy_see(conn, current_cred(),
						    owner_conn);
			up_read(&bus->name_registry->rwlock);
			if (!see) {
				ret = -ENXIO;
				goto exit;
			}
		}
	} else {
		ret = -EINVAL;
		goto exit;
	}

	/*
	 * CONN_INFO reveals what the target allows in its send mask: its
	 * HELLO-time snapshot (or faked identity), its names and
	 * description now (kdbus.connection(7)).
	 */
	attach_flags = kdbus_meta_info_mask(owner_conn, attach_flags);

	down_read(&bus->name_registry->rwlock);
	ret = kdbus_meta_conn_collect(&meta_conn, owner_conn, NULL,
				      attach_flags);
	up_read(&bus->name_registry->rwlock);
	if (ret < 0)
		goto exit;

	ret = kdbus_meta_emit(owner_conn->meta_proc, owner_conn->fake,
			      &meta_conn, conn, attach_flags, &meta_items,
			      &meta_size);
	if (ret < 0)
		goto exit;

	info.id = owner_conn->id;
	info.flags = owner_conn->flags;

	kdbus_kvec_set(&kvec[n_kvec++], &info, sizeof(info), &size);
	if (meta_size > 0)
		kdbus_kvec_set(&kvec[n_kvec++], meta_items, meta_size, &size);
	info.size = size;

	ret = kdbus_info_publish(conn->pool, kvec, n_kvec,
				 info.size, cmd, argp);

exit:
	kfree(meta_items);
	kdbus_meta_conn_destroy(&meta_conn);
	kdbus_conn_unref(owner_conn);
	return kdbus_args_clear(&args, ret);
}

/**
 * kdbus_cmd_update() - handle KDBUS_CMD_UPDATE
 * @conn:		connection to operate on
 * @argp:		command payload
 *
 * All checks happen before anything is changed (kdbus.connection(7)).
 *
 * Return: >=0 on success, negative error code on failure.
 */
int kdbus_cmd_update(struct kdbus_conn *conn, void __user *argp)
{
	struct kdbus_item *item_policy;
	u64 *item_attach_send = NULL;
	u64 *item_attach_recv = NULL;
	struct kdbus_cmd *cmd;
	u64 attach_send;
	u64 attach_recv;
	int ret;

	struct kdbus_arg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
		{ .type = KDBUS_ITEM_ATTACH_FLAGS_SEND },
		{ .type = KDBUS_ITEM_ATTACH_FLAGS_RECV },
		{ .type = KDBUS_ITEM_NAME, .multiple = true },
		{ .type = KDBUS_ITEM_POLICY_ACCESS, .multiple = true },
	};
	struct kdbus_args args = {
		.allowed_flags = KDBUS_FLAG_NEGOTIATE,
		.argv = argv,
		.argc = ARRAY_SIZE(argv),
	};

	ret = kdbus_args_parse(&args, argp, &cmd);
	if (ret != 0)
		return ret;

	item_attach_send = argv[1].item ? &argv[1].item->data64[0] : NULL;
	item_attach_recv = argv[2].item ? &argv[2].item->data64[0] : NULL;
	item_policy = argv[3].item ? : argv[4].item;

	if (item_attach_send) {
		if (!kdbus_conn_is_ordinary(conn) &&
		    !kdbus_conn_is_monitor(conn)) {
			ret = -EOPNOTSUPP;
			goto exit;
		}

		ret = kdbus_sanitize_attach_flags(*item_attach_send,
						  &attach_send);
		if (ret < 0)
			goto exit;
	}

	if (item_attach_recv) {
		if (!kdbus_conn_is_ordinary(conn) &&
		    !kdbus_conn_is_monitor(conn) &&
		    !kdbus_conn_is_activator(conn)) {
			ret = -EOPNOTSUPP;
			goto exit;
		}

		ret = kdbus_sanitize_attach_flags(*item_attach_recv,
						  &attach_recv);
		if (ret < 0)
			goto exit;
	}

	if (item_policy && !kdbus_conn_is_policy_holder(conn)) {
		ret = -EOPNOTSUPP;
		goto exit;
	}

	/*
	 * A policy holder's NAME/POLICY_ACCESS items atomically replace its
	 * policy, before anything else changes; if that fails, nothing
	 * changes (kdbus.policy(7), at most one name).
	 */
	if (item_policy) {
		ret = kdbus_policy_set(&conn->ep->bus->policy_db, args.items,
				       args.items_size, 1, true, conn);
		if (ret < 0)
			goto exit;
	}

	if (item_attach_send)
		atomic64_set(&conn->attach_flags_send, attach_send);

	if (item_attach_recv) {
		u64 old = atomic64_xchg(&conn->attach_flags_recv, attach_recv);

		if ((old ^ attach_recv) & KDBUS_ATTACH_CMDLINE) {
			if (attach_recv & KDBUS_ATTACH_CMDLINE)
				atomic_inc(&conn->ep->bus->cmdline_receivers);
			else
				atomic_dec(&conn->ep->bus->cmdline_receivers);
		}
	}

exit:
	return kdbus_args_clear(&args, ret);
}

/**
 * kdbus_cmd_free() - handle KDBUS_CMD_FREE
 * @conn:		connection to operate on
 * @argp:		command payload
 *
 * Return: >=0 on success, negative error code on failure.
 */
int kdbus_cmd_free(struct kdbus_conn *conn, void __user *argp)
{
	struct kdbus_cmd_free *cmd;
	int ret;

	struct kdbus_arg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
	};
	struct kdbus_args args = {
		.allowed_flags = KDBUS_FLAG_NEGOTIATE,
		.argv = argv,
		.argc = ARRAY_SIZE(argv),
	};

	if (!kdbus_conn_is_ordinary(conn) &&
	    !kdbus_conn_is_monitor(conn) &&
	    !kdbus_conn_is_activator(conn))
		return -EOPNOTSUPP;

	ret = kdbus_args_parse(&args, argp, &cmd);
	if (ret != 0)
		return ret;

	if (cmd->offset > SIZE_MAX)
		ret = -ENXIO;
	else
		ret = kdbus_pool_release_offset(conn->pool, cmd->offset);

	return kdbus_args_clear(&args, ret);
}
