// SPDX-License-Identifier: GPL-2.0-only
/*
 * Buses.
 *
 * A bus lives exactly as long as the handle that created it (BUS_OWNER).
 * Its node is a directory below the domain root; its default endpoint
 * "bus" (and custom endpoints) are children of that node, so deactivating
 * the bus tears down all endpoints and thereby all connections.
 *
 * Locking:
 *  - bus->conn_rwlock protects bus->conn_hash, bus->monitors_list and
 *    bus->match_index; readers look up connections, writers link/unlink
 *    them (and change the match index, match.c).
 *  - bus->notify_lock and bus->notify_flush_lock: see notify.c; the name
 *    registry has its own lock (names.c).
 *  - kdbus_buses_lock (a mutex) protects the module-wide list kdbus_buses
 *    (bus->bus_entry) of buses not yet released. A bus is on it from the
 *    end of kdbus_bus_new() until its release; kdbus_buses_show() holds
 *    the lock while it prints, so no bus on the list can be freed under
 *    it. Only seq_file buffers are written under it, no user memory.
 *  - bus->queued_messages is a percpu_counter (no lock of ours).
 *  - Nesting (global order): domain->lock is a leaf; ep->lock ->
 *    bus->conn_rwlock -> conn->lock -> pool->lock; notify_flush_lock ->
 *    name_registry->rwlock -> bus->conn_rwlock; kdbus_buses_lock ->
 *    bus->conn_rwlock.
 */

#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/kernel.h>
#include <linux/kdev_t.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/uuid.h>

#include "bus.h"
#include "connection.h"
#include "domain.h"
#include "endpoint.h"
#include "handle.h"
#include "item.h"
#include "limits.h"
#include "match.h"
#include "metadata.h"
#include "names.h"
#include "notify.h"
#include "pool.h"
#include "util.h"

/* live buses of all domains, for /sys/kernel/debug/kdbus/buses */
static LIST_HEAD(kdbus_buses);
static DEFINE_MUTEX(kdbus_buses_lock);

static void kdbus_buses_unlink(struct kdbus_bus *bus)
{
	mutex_lock(&kdbus_buses_lock);
	list_del_init(&bus->bus_entry);
	mutex_unlock(&kdbus_buses_lock);
}

static void kdbus_bus_free(struct kdbus_node *node)
{
	struct kdbus_bus *bus = container_of(node, struct kdbus_bus, node);

	/* only a bus that failed before its release is still listed */
	if (!list_empty(&bus->bus_entry))
		kdbus_buses_unlink(bus);

	WARN_ON(!list_empty(&bus->monitors_list));
	WARN_ON(!hash_empty(bus->conn_hash));
	/* every queue entry pins its connection, hence the bus */
	WARN_ON(percpu_counter_sum(&bus->queued_messages) != 0);
	percpu_counter_destroy(&bus->queued_messages);

	kdbus_match_index_free(&bus->match_index);

	kdbus_notify_free(bus);
	kdbus_name_registry_free(bus->name_registry);
	kdbus_policy_db_clear(&bus->policy_db);

	kdbus_meta_proc_unref(bus->creator_meta);
	kdbus_user_unref(bus->creator);
	kdbus_domain_unref(bus->domain);
	kfree(bus);
}

static void kdbus_bus_release(struct kdbus_node *node, bool was_active)
{
	struct kdbus_bus *bus = container_of(node, struct kdbus_bus, node);

	kdbus_buses_unlink(bus);

	/* the bus count was only charged for an activated bus */
	if (was_active)
		atomic_dec(&bus->creator->buses);
}

static struct kdbus_bus *kdbus_bus_new(struct kdbus_domain *domain,
				       const char *name,
				       struct kdbus_bloom_parameter *bloom,
				       const u64 *pattach_owner,
				       u64 flags, kuid_t uid, kgid_t gid)
{
	struct kdbus_bus *b;
	u64 attach_owner;
	int ret;

	if (bloom->size < 8 || bloom->size > KDBUS_BUS_BLOOM_MAX_SIZE ||
	    !KDBUS_IS_ALIGNED8(bloom->size) || bloom->n_hash < 1)
		return ERR_PTR(-EINVAL);

	ret = kdbus_sanitize_attach_flags(pattach_owner ? *pattach_owner : 0,
					  &attach_owner);
	if (ret < 0)
		return ERR_PTR(ret);

	ret = kdbus_verify_uid_prefix(name, domain->user_namespace, uid);
	if (ret < 0)
		return ERR_PTR(ret);

	b = kzalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);
	if (!b)
		return ERR_PTR(-ENOMEM);

	ret = percpu_counter_init(&b->queued_messages, 0, GFP_KERNEL_ACCOUNT);
	if (ret < 0) {
		kfree(b);
		return ERR_PTR(ret);
	}
	INIT_LIST_HEAD(&b->bus_entry);

	b->name_registry = kdbus_name_registry_new();
	if (IS_ERR(b->name_registry)) {
		ret = PTR_ERR(b->name_registry);
		percpu_counter_destroy(&b->queued_messages);
		kfree(b);
		return ERR_PTR(ret);
	}

	kdbus_node_init(&b->node, KDBUS_NODE_BUS);

	b->node.free_cb = kdbus_bus_free;
	b->node.release_cb = kdbus_bus_release;
	b->node.uid = uid;
	b->node.gid = gid;
	b->node.mode = S_IFDIR | 0500;
	if (flags & (KDBUS_MAKE_ACCESS_GROUP | KDBUS_MAKE_ACCESS_WORLD))
		b->node.mode |= 0050;
	if (flags & KDBUS_MAKE_ACCESS_WORLD)
		b->node.mode |= 0005;

	b->id = atomic64_inc_return(&domain->last_id);
	b->bus_flags = flags;
	b->attach_flags_owner = attach_owner;
	generate_random_uuid(b->id128);
	b->bloom = *bloom;
	b->domain = kdbus_domain_ref(domain);
	atomic64_set(&b->last_message_id, 0);

	kdbus_policy_db_init(&b->policy_db);
	init_rwsem(&b->conn_rwlock);
	hash_init(b->conn_hash);
	INIT_LIST_HEAD(&b->monitors_list);
	spin_lock_init(&b->notify_lock);
	INIT_LIST_HEAD(&b->notify_list);
	mutex_init(&b->notify_flush_lock);
	atomic_set(&b->cmdline_receivers, 0);

	ret = kdbus_node_link(&b->node, &domain->node, name);
	if (ret < 0)
		goto exit_unref;

	/*
	 * Bus-limits of the creator are accounted on its real UID, just like
	 * all other per-user limits.
	 */
	b->creator = kdbus_user_lookup(domain, current_uid());
	if (IS_ERR(b->creator)) {
		ret = PTR_ERR(b->creator);
		b->creator = NULL;
		goto exit_unref;
	}

	/* creator metadata for BUS_CREATOR_INFO, never refreshed */
	b->creator_meta = kdbus_meta_proc_new();
	if (IS_ERR(b->creator_meta)) {
		ret = PTR_ERR(b->creator_meta);
		b->creator_meta = NULL;
		goto exit_unref;
	}

	ret = kdbus_meta_proc_collect(b->creator_meta, KDBUS_META_PROC_ITEMS);
	if (ret < 0)
		goto exit_unref;

	/* kdbus_bus_release() unlinks it, also if it is never activated */
	mutex_lock(&kdbus_buses_lock);
	list_add_tail(&b->bus_entry, &kdbus_buses);
	mutex_unlock(&kdbus_buses_lock);

	return b;

exit_unref:
	kdbus_node_deactivate(&b->node);
	kdbus_node_unref(&b->node);
	return ERR_PTR(ret);
}

/**
 * kdbus_bus_ref() - increase the reference counter of a kdbus_bus
 * @bus:		The bus to reference
 *
 * Every user of a bus, except for its creator, must add a reference to the
 * kdbus_bus using this function.
 *
 * Return: the bus itself
 */
struct kdbus_bus *kdbus_bus_ref(struct kdbus_bus *bus)
{
	if (bus)
		kdbus_node_ref(&bus->node);
	return bus;
}

/**
 * kdbus_bus_unref() - decrease the reference counter of a kdbus_bus
 * @bus:		The bus to unref
 *
 * Release a reference. If the reference count drops to 0, the bus will be
 * freed.
 *
 * Return: NULL
 */
struct kdbus_bus *kdbus_bus_unref(struct kdbus_bus *bus)
{
	if (bus)
		kdbus_node_unref(&bus->node);
	return NULL;
}

/**
 * kdbus_bus_find_conn_by_id() - find a connection with a given id
 * @bus:		The bus to look for the connection
 * @id:			The 64-bit connection id
 *
 * Looks up a connection with a given id. The returned connection
 * is ref'ed, and needs to be unref'ed by the user. Returns NULL if
 * the connection can't be found (it is no longer found once it is
 * being disconnected).
 *
 * Return: the connection with a new reference, or NULL.
 */
struct kdbus_conn *kdbus_bus_find_conn_by_id(struct kdbus_bus *bus, u64 id)
{
	struct kdbus_conn *conn, *found = NULL;

	down_read(&bus->conn_rwlock);
	hash_for_each_possible(bus->conn_hash, conn, hentry, id)
		if (conn->id == id) {
			found = kdbus_conn_ref(conn);
			break;
		}
	up_read(&bus->conn_rwlock);

	return found;
}

/**
 * kdbus_cmd_bus_make() - handle KDBUS_CMD_BUS_MAKE
 * @domain:		domain to operate on
 * @argp:		command payload
 *
 * Runs the checks of kdbus.bus(7) in order, creates the bus and its
 * default endpoint and activates both.
 *
 * Return: NEW reference to the new bus on success, NULL if the command
 * only negotiated, ERR_PTR on failure.
 */
struct kdbus_bus *kdbus_cmd_bus_make(struct kdbus_domain *domain,
				     void __user *argp)
{
	struct kdbus_bus *bus = NULL;
	struct kdbus_cmd *cmd;
	struct kdbus_ep *ep = NULL;
	bool charged = false;
	int ret;

	struct kdbus_arg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
		{ .type = KDBUS_ITEM_MAKE_NAME, .mandatory = true },
		{ .type = KDBUS_ITEM_BLOOM_PARAMETER, .mandatory = true },
		{ .type = KDBUS_ITEM_ATTACH_FLAGS_SEND },
	};
	struct kdbus_args args = {
		.allowed_flags = KDBUS_FLAG_NEGOTIATE |
				 KDBUS_MAKE_ACCESS_GROUP |
				 KDBUS_MAKE_ACCESS_WORLD,
		.argv = argv,
		.argc = ARRAY_SIZE(argv),
	};

	ret = kdbus_args_parse(&args, argp, &cmd);
	if (ret < 0)
		return ERR_PTR(ret);
	if (ret > 0)
		return NULL;

	bus = kdbus_bus_new(domain,
			    argv[1].item->str, &argv[2].item->bloom_parameter,
			    argv[3].item ? argv[3].item->data64 : NULL,
			    cmd->flags, current_euid(), current_egid());
	if (IS_ERR(bus)) {
		ret = PTR_ERR(bus);
		bus = NULL;
		goto exit;
	}

	if (atomic_inc_return(&bus->creator->buses) > KDBUS_USER_MAX_BUSES) {
		atomic_dec(&bus->creator->buses);
		ret = -EMFILE;
		goto exit;
	}
	charged = true;

	if (!kdbus_node_activate(&bus->node)) {
		ret = -ESHUTDOWN;
		goto exit;
	}
	/* from here on kdbus_bus_release() uncharges the bus */
	charged = false;

	ep = kdbus_ep_new(bus, "bus", cmd->flags, bus->node.uid, bus->node.gid,
			  false);
	if (IS_ERR(ep)) {
		ret = PTR_ERR(ep);
		ep = NULL;
		goto exit;
	}

	if (!kdbus_node_activate(&ep->node)) {
		ret = -ESHUTDOWN;
		goto exit;
	}

	/*
	 * Drop our own reference, effectively causing the endpoint to be
	 * deactivated and released when the parent bus is.
	 */
	ep = kdbus_ep_unref(ep);

exit:
	ret = kdbus_args_clear(&args, ret);
	if (ret < 0) {
		if (ep) {
			kdbus_node_deactivate(&ep->node);
			kdbus_ep_unref(ep);
		}
		if (bus) {
			if (charged)
				atomic_dec(&bus->creator->buses);
			kdbus_node_deactivate(&bus->node);
			kdbus_bus_unref(bus);
		}
		return ERR_PTR(ret);
	}
	return bus;
}

/**
 * kdbus_cmd_bus_creator_info() - handle KDBUS_CMD_BUS_CREATOR_INFO
 * @conn:		connection to operate on
 * @argp:		command payload
 *
 * Writes a struct kdbus_info {bus id, bus flags} followed by a
 * KDBUS_ITEM_MAKE_NAME item with the bus name and the creator metadata
 * captured at BUS_MAKE that both the request and the creator's
 * ATTACH_FLAGS_SEND item allow (kdbus.bus(7)), rendered for the caller.
 *
 * Return: >=0 on success, negative error code on failure.
 */
int kdbus_cmd_bus_creator_info(struct kdbus_conn *conn, void __user *argp)
{
	struct kdbus_cmd_info *cmd;
	struct kdbus_bus *bus = conn->ep->bus;
	struct kdbus_item *name_item = NULL;
	struct kdbus_item *meta_items = NULL;
	struct kdbus_info info = {};
	size_t name_len, name_size;
	size_t meta_size = 0;
	struct kvec kvec[3];
	size_t n_kvec = 0;
	u64 attach_flags;
	u64 size = 0;
	int ret;

	struct kdbus_arg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
	};
	struct kdbus_args args = {
		.allowed_flags = KDBUS_FLAG_NEGOTIATE,
		.argv = argv,
		.argc = ARRAY_SIZE(argv),
	};

	ret = kdbus_args_parse(&args, argp, &cmd);
	if (ret != 0)
		return ret;

	ret = kdbus_sanitize_attach_flags(cmd->attach_flags, &attach_flags);
	if (ret < 0)
		goto exit;

	ret = kdbus_meta_emit(bus->creator_meta, NULL, NULL, conn,
			      attach_flags & bus->attach_flags_owner,
			      &meta_items, &meta_size);
	if (ret < 0)
		goto exit;

	name_len = strlen(bus->node.name) + 1;
	name_size = KDBUS_ITEM_SIZE(name_len);
	name_item = kzalloc(name_size, GFP_KERNEL_ACCOUNT);
	if (!name_item) {
		ret = -ENOMEM;
		goto exit;
	}
	kdbus_item_set(name_item, KDBUS_ITEM_MAKE_NAME, bus->node.name,
		       name_len);

	info.id = bus->id;
	info.flags = bus->bus_flags;

	kdbus_kvec_set(&kvec[n_kvec++], &info, sizeof(info), &size);
	kdbus_kvec_set(&kvec[n_kvec++], name_item, name_size, &size);
	if (meta_size > 0)
		kdbus_kvec_set(&kvec[n_kvec++], meta_items, meta_size, &size);
	info.size = size;

	ret = kdbus_info_publish(conn->pool, kvec, n_kvec, info.size, cmd,
				 argp);

exit:
	kfree(meta_items);
	kfree(name_item);
	return kdbus_args_clear(&args, ret);
}

/**
 * kdbus_buses_show() - print the live buses of all domains
 * @m:		seq_file of /sys/kernel/debug/kdbus/buses
 * @unused:	unused
 *
 * One line per active bus: "dev MAJOR:MINOR ino INODE name NAME" naming the
 * bus as stat(2) on its directory does (the device number of the domain's
 * superblock, the inode number of the bus directory) plus its name, then
 * "connections N" (every connection on the bus: ordinary ones, activators,
 * policy holders and monitors) and "queued_messages N" (messages waiting
 * in the queues of those connections).
 *
 * Return: 0.
 */
int kdbus_buses_show(struct seq_file *m, void *unused)
{
	struct kdbus_conn *conn;
	struct kdbus_bus *bus;
	unsigned int i, n_conns;

	mutex_lock(&kdbus_buses_lock);
	list_for_each_entry(bus, &kdbus_buses, bus_entry) {
		if (!kdbus_node_is_active(&bus->node))
			continue;

		n_conns = 0;
		down_read(&bus->conn_rwlock);
		hash_for_each(bus->conn_hash, i, conn, hentry)
			n_conns++;
		up_read(&bus->conn_rwlock);

		seq_printf(m, "dev %u:%u ino %u name %s connections %u queued_messages %lld\n",
			   MAJOR(bus->domain->dev), MINOR(bus->domain->dev),
			   bus->node.id, bus->node.name, n_conns,
			   percpu_counter_sum(&bus->queued_messages));
	}
	mutex_unlock(&kdbus_buses_lock);

	return 0;
}
