// SPDX-License-Identifier: GPL-2.0-only
/*
 * Endpoints.
 *
 * Locking:
 *  - ep->lock protects ep->conn_list (and the ep_entry of connections).
 *  - Nesting (global order): ep->lock -> bus->conn_rwlock -> conn->lock.
 *  - The release callback takes ep->lock only to pick the next connection
 *    and disconnects it without holding any lock.
 */

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/slab.h>

#include <uapi/linux/kdbus.h>

#include "bus.h"
#include "connection.h"
#include "domain.h"
#include "endpoint.h"

static void kdbus_ep_free(struct kdbus_node *node)
{
	struct kdbus_ep *ep = container_of(node, struct kdbus_ep, node);

	WARN_ON(!list_empty(&ep->conn_list));

	kdbus_user_unref(ep->user);
	kdbus_bus_unref(ep->bus);
	kfree(ep);
}

static void kdbus_ep_release(struct kdbus_node *node, bool was_active)
{
	struct kdbus_ep *ep = container_of(node, struct kdbus_ep, node);

	/* disconnect all connections to this endpoint */
	for (;;) {
		struct kdbus_conn *conn;

		mutex_lock(&ep->lock);
		conn = list_first_entry_or_null(&ep->conn_list,
						struct kdbus_conn,
						ep_entry);
		if (!conn) {
			mutex_unlock(&ep->lock);
			break;
		}

		/* take reference, release lock, disconnect without lock */
		kdbus_conn_ref(conn);
		mutex_unlock(&ep->lock);

		kdbus_conn_disconnect(conn, false);
		kdbus_conn_unref(conn);
	}
}

/**
 * kdbus_ep_new() - create a new endpoint
 * @bus:		The bus this endpoint will be created for
 * @name:		The name of the endpoint
 * @access:		The access flags for this node (KDBUS_MAKE_ACCESS_*)
 * @uid:		The uid of the node
 * @gid:		The gid of the node
 * @is_custom:		Whether this is a custom endpoint
 *
 * This function will create a new endpoint with the given
 * name and properties for a given bus, linked but not yet active.
 *
 * Return: a new kdbus_ep on success, ERR_PTR on failure.
 */
struct kdbus_ep *kdbus_ep_new(struct kdbus_bus *bus, const char *name,
			      unsigned int access, kuid_t uid, kgid_t gid,
			      bool is_custom)
{
	struct kdbus_ep *e;
	int ret;

	e = kzalloc(sizeof(*e), GFP_KERNEL_ACCOUNT);
	if (!e)
		return ERR_PTR(-ENOMEM);

	kdbus_node_init(&e->node, KDBUS_NODE_ENDPOINT);

	e->node.free_cb = kdbus_ep_free;
	e->node.release_cb = kdbus_ep_release;
	e->node.uid = uid;
	e->node.gid = gid;
	e->node.mode = S_IFREG | 0600;
	if (access & (KDBUS_MAKE_ACCESS_GROUP | KDBUS_MAKE_ACCESS_WORLD))
		e->node.mode |= 0060;
	if (access & KDBUS_MAKE_ACCESS_WORLD)
		e->node.mode |= 0006;

	mutex_init(&e->lock);
	INIT_LIST_HEAD(&e->conn_list);
	e->bus = kdbus_bus_ref(bus);

	ret = kdbus_node_link(&e->node, &bus->node, name);
	if (ret < 0)
		goto exit_unref;

	/*
	 * Transactions on custom endpoints are never accounted on the global
	 * user limits. Instead, for each custom endpoint, we create a custom,
	 * unique user, which all transactions are accounted on.
	 */
	if (is_custom) {
		e->user = kdbus_user_lookup(bus->domain, INVALID_UID);
		if (IS_ERR(e->user)) {
			ret = PTR_ERR(e->user);
			e->user = NULL;
			goto exit_unref;
		}
	}

	return e;

exit_unref:
	kdbus_node_deactivate(&e->node);
	kdbus_node_unref(&e->node);
	return ERR_PTR(ret);
}

/**
 * kdbus_ep_ref() - increase the reference counter of a kdbus_ep
 * @ep:			The endpoint to reference
 *
 * Return: the ep itself
 */
struct kdbus_ep *kdbus_ep_ref(struct kdbus_ep *ep)
{
	if (ep)
		kdbus_node_ref(&ep->node);
	return ep;
}

/**
 * kdbus_ep_unref() - decrease the reference counter of a kdbus_ep
 * @ep:		The ep to unref
 *
 * Return: NULL
 */
struct kdbus_ep *kdbus_ep_unref(struct kdbus_ep *ep)
{
	if (ep)
		kdbus_node_unref(&ep->node);
	return NULL;
}

/**
 * kdbus_ep_is_privileged() - check whether a file is privileged
 * @ep:		endpoint to operate on
 * @file:	file to test
 *
 * Privileged means: opened on the default endpoint with CAP_IPC_OWNER in
 * the domain's user namespace (opener credentials).
 *
 * Return: True if @file is privileged in the domain of @ep.
 */
bool kdbus_ep_is_privileged(struct kdbus_ep *ep, struct file *file)
{
	return !ep->user &&
		file_ns_capable(file, ep->bus->domain->user_namespace,
				CAP_IPC_OWNER);
}

/**
 * kdbus_ep_is_owner() - check whether a file should be treated as bus owner
 * @ep:		endpoint to operate on
 * @file:	file to test
 *
 * Owner means: opened on the default endpoint, and either privileged or
 * the opener's effective uid is the bus creator's.
 *
 * Return: True if @file should be treated as bus owner on @ep
 */
bool kdbus_ep_is_owner(struct kdbus_ep *ep, struct file *file)
{
	return !ep->user &&
		(uid_eq(file->f_cred->euid, ep->bus->node.uid) ||
		 kdbus_ep_is_privileged(ep, file));
}
