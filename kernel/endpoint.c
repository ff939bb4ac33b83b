// SPDX-License-Identifier: GPL-2.0-only
/*
 * Endpoints.
 *
 * Locking:
 *  - ep->lock protects ep->conn_list (and the ep_entry of connections).
 *  - ep->policy_db has its own locks (policy.c); ENDPOINT_UPDATE is
 *    issued only on the EP_OWNER handle, whose setup is serialised.
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
#include "handle.h"
#include "policy.h"
#include "util.h"

static void kdbus_ep_free(struct kdbus_node *node)
{
	struct kdbus_ep *ep = container_of(node, struct kdbus_ep, node);

	WARN_ON(!list_empty(&ep->conn_list));

	kdbus_policy_db_clear(&ep->policy_db);
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
	kdbus_policy_db_init(&e->policy_db);
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

/**
 * kdbus_cmd_ep_make() - handle KDBUS_CMD_ENDPOINT_MAKE
 * @bus:		bus to operate on
 * @argp:		command payload
 *
 * The caller has checked that the handle's opener owns the bus (EPERM,
 * before parsing). Creates a custom endpoint with an empty policy, owned
 * by the caller's effective uid and gid (kdbus.endpoint(7)).
 *
 * Return: NEW reference to the new endpoint on success, NULL if the
 * command only negotiated, ERR_PTR on failure.
 */
struct kdbus_ep *kdbus_cmd_ep_make(struct kdbus_bus *bus, void __user *argp)
{
	struct kdbus_ep *ep = NULL;
	struct kdbus_cmd *cmd;
	const char *name;
	int ret;

	struct kdbus_arg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
		{ .type = KDBUS_ITEM_MAKE_NAME, .mandatory = true },
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

	name = argv[1].item->str;

	ret = kdbus_verify_uid_prefix(name, bus->domain->user_namespace,
				      current_euid());
	if (ret < 0)
		goto exit;

	ep = kdbus_ep_new(bus, name, cmd->flags, current_euid(),
			  current_egid(), true);
	if (IS_ERR(ep)) {
		ret = PTR_ERR(ep);
		ep = NULL;
		goto exit;
	}

	if (!kdbus_node_activate(&ep->node)) {
		ret = -ESHUTDOWN;
		goto exit;
	}

exit:
	ret = kdbus_args_clear(&args, ret);
	if (ret < 0) {
		if (ep) {
			kdbus_node_deactivate(&ep->node);
			kdbus_ep_unref(ep);
		}
		return ERR_PTR(ret);
	}
	return ep;
}

/**
 * kdbus_cmd_ep_update() - handle KDBUS_CMD_ENDPOINT_UPDATE
 * @ep:			endpoint to operate on
 * @argp:		command payload
 *
 * The NAME and POLICY_ACCESS items form the complete new policy of the
 * endpoint, which atomically replaces the old one; no items clear it
 * (kdbus.endpoint(7), kdbus.policy(7)).
 *
 * Return: >=0 on success, negative error code on failure.
 */
int kdbus_cmd_ep_update(struct kdbus_ep *ep, void __user *argp)
{
	struct kdbus_cmd *cmd;
	int ret;

	struct kdbus_arg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
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

	ret = kdbus_policy_set(&ep->policy_db, args.items, args.items_size,
			       0, true, ep);

	return kdbus_args_clear(&args, ret);
}
