// SPDX-License-Identifier: GPL-2.0-only
/*
 * File handles of kdbusfs nodes: open/release, ioctl dispatch by handle
 * state (kdbus(7)), poll, mmap, and the generic command parser shared
 * by all ioctls (kdbus(7)).
 *
 * Locking:
 *  - handle->lock serialises the setup ioctls (BUS_MAKE, ENDPOINT_MAKE,
 *    HELLO) of one handle and protects the NONE -> final state transition.
 *  - handle->type is written once, under handle->lock, with release
 *    semantics after the owned object (bus/ep/conn) is set; lock-free
 *    readers use acquire semantics and then may use the object.
 *  - Connection commands run under an active connection reference
 *    (kdbus_conn_acquire()) and without handle->lock.
 */

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "bus.h"
#include "connection.h"
#include "domain.h"
#include "endpoint.h"
#include "fs.h"
#include "handle.h"
#include "item.h"
#include "limits.h"
#include "match.h"
#include "message.h"
#include "names.h"
#include "pool.h"
#include "stats.h"
#include "util.h"

static int kdbus_args_verify(struct kdbus_args *args)
{
	struct kdbus_item *item;
	size_t pos = 0;
	size_t i;
	int ret;

	while (pos < args->items_size) {
		struct kdbus_arg *arg = NULL;

		/* 1: bounds; never read a header that is not in the buffer */
		if (args->items_size - pos < KDBUS_ITEM_HEADER_SIZE)
			return -EINVAL;

		item = (void *)((u8 *)args->items + pos);
		if (item->size < KDBUS_ITEM_HEADER_SIZE ||
		    item->size > args->items_size - pos)
			return -EINVAL;

		/* 2: type accepted by this command */
		for (i = 0; i < args->argc; ++i)
			if (args->argv[i].type == item->type)
				break;
		if (i >= args->argc)
			return -EINVAL;

		arg = &args->argv[i];

		/* 3: type-specific payload rules */
		ret = kdbus_item_validate(item);
		if (ret < 0)
			return ret;

		/* 4: single-use types */
		if (arg->item && !arg->multiple)
			return -EINVAL;

		if (!arg->item)
			arg->item = item;

		pos += KDBUS_ALIGN8(item->size);
	}

	if (pos != KDBUS_ALIGN8(args->items_size))
		return -EINVAL;

	return 0;
}

static int kdbus_args_negotiate(struct kdbus_args *args)
{
	struct kdbus_item __user *user;
	struct kdbus_item *negotiation;
	size_t i, j, num;

	/*
	 * If KDBUS_FLAG_NEGOTIATE is set, we overwrite the flags field with
	 * the set of supported flags.
	 */
	if (args->cmd->flags & KDBUS_FLAG_NEGOTIATE) {
		if (put_user(args->allowed_flags & ~KDBUS_FLAG_NEGOTIATE,
			     &args->user->flags))
			return -EFAULT;
	}

	/*
	 * Iterate the list of provided item types in the NEGOTIATE item and
	 * clear every type this command does not support.
	 */
	negotiation = NULL;
	for (i = 0; i < args->argc; ++i)
		if (args->argv[i].type == KDBUS_ITEM_NEGOTIATE)
			negotiation = args->argv[i].item;
	if (!negotiation)
		return 0;

	user = (struct kdbus_item __user *)
		((u8 __user *)args->user +
		 ((u8 *)negotiation - (u8 *)args->cmd));
	num = KDBUS_ITEM_PAYLOAD_SIZE(negotiation) / sizeof(u64);

	for (i = 0; i < num; ++i) {
		for (j = 0; j < args->argc; ++j)
			if (negotiation->data64[i] == args->argv[j].type)
				break;

		if (j < args->argc)
			continue;

		/* this item is not supported, clear it out */
		negotiation->data64[i] = 0;
		if (put_user(negotiation->data64[i], &user->data64[i]))
			return -EFAULT;
	}

	return 0;
}

static void kdbus_args_free(struct kdbus_args *args)
{
	if (args->cmd != (void *)args->cmd_buf)
		kfree(args->cmd);
	args->cmd = NULL;
}

/**
 * __kdbus_args_parse() - parse payload of kdbus command
 * @args:		object to parse data into
 * @is_cmd:		whether this is a command or msg payload
 * @argp:		user-space location of command payload to parse
 * @type_size:		overall size of command payload to parse
 * @items_offset:	offset of items array in command payload
 * @out:		output variable to store pointer to copied payload
 *
 * This parses the ioctl payload at user-space location @argp into @args,
 * following kdbus(7) steps 1-8 in order. @args must be pre-initialized
 * by the caller to reflect the supported flags and items of this command.
 *
 * If this function returns 0, the caller must call kdbus_args_clear()
 * afterwards, which writes return_flags back (commands) and frees the copy.
 * On errors and on negotiation nothing is left to clear.
 *
 * Return: 0 if the command must be executed, 1 if it only negotiated,
 * negative error code on failure.
 */
int __kdbus_args_parse(struct kdbus_args *args, bool is_cmd, void __user *argp,
		       size_t type_size, size_t items_offset, void **out)
{
	u64 user_size;
	int ret, i;

	/* 1: aligned and readable */
	if (!KDBUS_IS_ALIGNED8((uintptr_t)argp))
		return -EFAULT;
	if (get_user(user_size, (u64 __user *)argp))
		return -EFAULT;

	/* 2: size bounds */
	if (user_size < type_size)
		return -EINVAL;
	if (user_size > KDBUS_CMD_MAX_SIZE)
		return -EMSGSIZE;

	/* 3: copy in, size must not change meanwhile */
	if (user_size <= sizeof(args->cmd_buf)) {
		if (copy_from_user(args->cmd_buf, argp, user_size))
			return -EFAULT;
		args->cmd = (void *)args->cmd_buf;
	} else {
		/* charged to the caller, unlike memdup_user()'s GFP_USER */
		args->cmd = kmalloc(user_size, GFP_KERNEL_ACCOUNT);
		if (!args->cmd)
			return -ENOMEM;
		if (copy_from_user(args->cmd, argp, user_size)) {
			kfree(args->cmd);
			args->cmd = NULL;
			return -EFAULT;
		}
	}

	if (args->cmd->size != user_size) {
		kdbus_args_free(args);
		return -EINVAL;
	}

	/* 4: return_flags are the kernel's from here on */
	if (is_cmd)
		args->cmd->return_flags = 0;
	args->user = argp;
	args->items = (void *)((u8 *)args->cmd + items_offset);
	args->items_size = args->cmd->size - items_offset;
	args->is_cmd = is_cmd;

	/* 5: flags */
	if (args->cmd->flags & ~args->allowed_flags) {
		ret = -EINVAL;
		goto error;
	}

	/* 6: items */
	ret = kdbus_args_verify(args);
	if (ret < 0)
		goto error;

	/* 7: negotiation */
	ret = kdbus_args_negotiate(args);
	if (ret < 0)
		goto error;

	if (args->cmd->flags & KDBUS_FLAG_NEGOTIATE) {
		/* negotiation stops here and leaves return_flags alone */
		kdbus_args_free(args);
		return 1;
	}

	/* 8: mandatory items */
	for (i = 0; i < args->argc; ++i) {
		if (args->argv[i].mandatory && !args->argv[i].item) {
			ret = -EINVAL;
			goto error;
		}
	}

	*out = args->cmd;
	return 0;

error:
	return kdbus_args_clear(args, ret);
}

/**
 * kdbus_args_clear() - release allocated command resources
 * @args:	object to release resources of
 * @ret:	return value of this command
 *
 * This frees all allocated resources on @args and copies the command
 * result back into user-space. For commands, return_flags is written back
 * whatever @ret is; a fault turns the result into -EFAULT.
 *
 * Return: The return value @ret, or -EFAULT if the write back failed.
 */
int kdbus_args_clear(struct kdbus_args *args, int ret)
{
	if (!args || !args->cmd)
		return ret;

	if (args->is_cmd) {
		if (put_user(args->cmd->return_flags,
			     &args->user->return_flags))
			ret = -EFAULT;
	}

	kdbus_args_free(args);
	return ret;
}

/**
 * enum kdbus_handle_type - type an handle can be of
 * @KDBUS_HANDLE_NONE:		no type set, yet
 * @KDBUS_HANDLE_BUS_OWNER:	bus owner
 * @KDBUS_HANDLE_EP_OWNER:	endpoint owner
 * @KDBUS_HANDLE_CONNECTED:	endpoint connection after HELLO
 */
enum kdbus_handle_type {
	KDBUS_HANDLE_NONE,
	KDBUS_HANDLE_BUS_OWNER,
	KDBUS_HANDLE_EP_OWNER,
	KDBUS_HANDLE_CONNECTED,
};

/**
 * struct kdbus_handle - handle to the kdbus system
 * @lock:		handle lock
 * @type:		type of this handle (KDBUS_HANDLE_*)
 * @bus_owner:		bus this handle owns
 * @ep_owner:		endpoint this handle owns
 * @conn:		connection this handle owns
 */
struct kdbus_handle {
	struct mutex lock; /* serialises setup ioctls */

	enum kdbus_handle_type type;
	union {
		struct kdbus_bus *bus_owner;
		struct kdbus_ep *ep_owner;
		struct kdbus_conn *conn;
	};
};

static enum kdbus_handle_type kdbus_handle_type(struct kdbus_handle *handle)
{
	/* pairs with smp_store_release() in the setup ioctls */
	return smp_load_acquire(&handle->type);
}

static int kdbus_handle_open(struct inode *inode, struct file *file)
{
	struct kdbus_handle *handle;
	struct kdbus_node *node;
	int ret;

	node = kdbus_node_from_inode(inode);
	if (!kdbus_node_acquire(node))
		return -ESHUTDOWN;

	handle = kzalloc(sizeof(*handle), GFP_KERNEL_ACCOUNT);
	if (!handle) {
		ret = -ENOMEM;
		goto exit;
	}

	mutex_init(&handle->lock);
	handle->type = KDBUS_HANDLE_NONE;
	kdbus_stats_live(KDBUS_STAT_LIVE_HANDLES, 1);

	file->private_data = handle;
	ret = 0;

exit:
	kdbus_node_release(node);
	return ret;
}

static int kdbus_handle_release(struct inode *inode, struct file *file)
{
	struct kdbus_handle *handle = file->private_data;

	switch (handle->type) {
	case KDBUS_HANDLE_BUS_OWNER:
		kdbus_node_deactivate(&handle->bus_owner->node);
		kdbus_bus_unref(handle->bus_owner);
		break;
	case KDBUS_HANDLE_EP_OWNER:
		kdbus_node_deactivate(&handle->ep_owner->node);
		kdbus_ep_unref(handle->ep_owner);
		break;
	case KDBUS_HANDLE_CONNECTED:
		kdbus_conn_disconnect(handle->conn, false);
		kdbus_conn_unref(handle->conn);
		break;
	case KDBUS_HANDLE_NONE:
		/* nothing to clean up */
		break;
	}

	kfree(handle);
	kdbus_stats_live(KDBUS_STAT_LIVE_HANDLES, -1);

	return 0;
}

static long kdbus_handle_ioctl_control(struct file *file, unsigned int cmd,
				       void __user *argp)
{
	struct kdbus_handle *handle = file->private_data;
	struct kdbus_node *node = kdbus_node_from_inode(file_inode(file));
	struct kdbus_domain *domain;
	struct kdbus_bus *bus;
	long ret = 0;

	/* the control node and its domain must both be live */
	if (!kdbus_node_acquire(node))
		return -ESHUTDOWN;
	if (!kdbus_node_acquire(node->parent)) {
		kdbus_node_release(node);
		return -ESHUTDOWN;
	}

	domain = kdbus_domain_from_node(node->parent);

	switch (cmd) {
	case KDBUS_CMD_BUS_MAKE:
		bus = kdbus_cmd_bus_make(domain, argp);
		if (IS_ERR_OR_NULL(bus)) {
			ret = PTR_ERR_OR_ZERO(bus);
			break;
		}

		handle->bus_owner = bus;
		/* publish bus_owner before the type (lock-free readers) */
		smp_store_release(&handle->type, KDBUS_HANDLE_BUS_OWNER);
		break;

	default:
		ret = -EBADFD;
		break;
	}

	kdbus_node_release(node->parent);
	kdbus_node_release(node);
	return ret;
}

static long kdbus_handle_ioctl_ep(struct file *file, unsigned int cmd,
				  void __user *buf)
{
	struct kdbus_handle *handle = file->private_data;
	struct kdbus_node *node = kdbus_node_from_inode(file_inode(file));
	struct kdbus_ep *file_ep = kdbus_ep_from_node(node);
	struct kdbus_conn *conn;
	struct kdbus_ep *ep;
	long ret = 0;

	if (!kdbus_node_acquire(node))
		return -ESHUTDOWN;

	switch (cmd) {
	case KDBUS_CMD_HELLO:
		conn = kdbus_cmd_hello(file_ep, file, buf);
		if (IS_ERR_OR_NULL(conn)) {
			ret = PTR_ERR_OR_ZERO(conn);
			break;
		}

		handle->conn = conn;
		/* publish conn before the type (lock-free readers) */
		smp_store_release(&handle->type, KDBUS_HANDLE_CONNECTED);
		break;

	case KDBUS_CMD_ENDPOINT_MAKE:
		/* owner test before parsing, also for negotiation */
		if (!kdbus_ep_is_owner(file_ep, file)) {
			ret = -EPERM;
			break;
		}

		ep = kdbus_cmd_ep_make(file_ep->bus, buf);
		if (IS_ERR_OR_NULL(ep)) {
			ret = PTR_ERR_OR_ZERO(ep);
			break;
		}

		handle->ep_owner = ep;
		/* publish ep_owner before the type (lock-free readers) */
		smp_store_release(&handle->type, KDBUS_HANDLE_EP_OWNER);
		break;

	default:
		ret = -EBADFD;
		break;
	}

	kdbus_node_release(node);
	return ret;
}

static long kdbus_handle_ioctl_ep_owner(struct file *file, unsigned int cmd,
					void __user *buf)
{
	struct kdbus_handle *handle = file->private_data;
	struct kdbus_ep *ep = handle->ep_owner;
	long ret;

	/* a torn down endpoint comes first, then the command check */
	if (!kdbus_node_acquire(&ep->node))
		return -ESHUTDOWN;

	switch (cmd) {
	case KDBUS_CMD_ENDPOINT_UPDATE:
		ret = kdbus_cmd_ep_update(ep, buf);
		break;
	default:
		ret = -EBADFD;
		break;
	}

	kdbus_node_release(&ep->node);
	return ret;
}

static long kdbus_handle_ioctl_connected(struct file *file,
					 unsigned int cmd, void __user *buf)
{
	struct kdbus_handle *handle = file->private_data;
	struct kdbus_conn *conn = handle->conn;
	struct kdbus_conn *release_conn = NULL;
	int ret;

	/* a disconnected connection answers everything with ECONNRESET */
	release_conn = conn;
	ret = kdbus_conn_acquire(release_conn);
	if (ret < 0)
		return ret;

	switch (cmd) {
	case KDBUS_CMD_BYEBYE:
		/*
		 * BYEBYE is special; we must not acquire a connection when
		 * calling into kdbus_conn_disconnect() as we need to wait for
		 * all active connection references to vanish. Therefore, we
		 * release the connection ourselves. We still need to ensure
		 * the connection is active when we're called.
		 */
		kdbus_conn_release(release_conn);
		release_conn = NULL;
		ret = kdbus_cmd_byebye_unlocked(conn, buf);
		break;
	case KDBUS_CMD_CONN_INFO:
		ret = kdbus_cmd_conn_info(conn, buf);
		break;
	case KDBUS_CMD_BUS_CREATOR_INFO:
		ret = kdbus_cmd_bus_creator_info(conn, buf);
		break;
	case KDBUS_CMD_UPDATE:
		ret = kdbus_cmd_update(conn, buf);
		break;
	case KDBUS_CMD_FREE:
		ret = kdbus_cmd_free(conn, buf);
		break;
	case KDBUS_CMD_SEND:
		ret = kdbus_cmd_send(conn, file, buf);
		break;
	case KDBUS_CMD_RECV:
		ret = kdbus_cmd_recv(conn, buf);
		break;
	case KDBUS_CMD_NAME_ACQUIRE:
		ret = kdbus_cmd_name_acquire(conn, buf);
		break;
	case KDBUS_CMD_NAME_RELEASE:
		ret = kdbus_cmd_name_release(conn, buf);
		break;
	case KDBUS_CMD_LIST:
		ret = kdbus_cmd_list(conn, buf);
		break;
	case KDBUS_CMD_MATCH_ADD:
		ret = kdbus_cmd_match_add(conn, buf);
		break;
	case KDBUS_CMD_MATCH_REMOVE:
		ret = kdbus_cmd_match_remove(conn, buf);
		break;
	case KDBUS_CMD_ENDPOINT_UPDATE:
		ret = -EBADFD;
		break;
	default:
		/* not reached: every known code is handled above */
		ret = -EBADFD;
		break;
	}

	kdbus_conn_release(release_conn);
	return ret;
}

static bool kdbus_handle_cmd_is_kdbus(unsigned int cmd)
{
	switch (cmd) {
	case KDBUS_CMD_BUS_MAKE:
	case KDBUS_CMD_ENDPOINT_MAKE:
	case KDBUS_CMD_ENDPOINT_UPDATE:
	case KDBUS_CMD_HELLO:
	case KDBUS_CMD_UPDATE:
	case KDBUS_CMD_BYEBYE:
	case KDBUS_CMD_FREE:
	case KDBUS_CMD_CONN_INFO:
	case KDBUS_CMD_BUS_CREATOR_INFO:
	case KDBUS_CMD_LIST:
	case KDBUS_CMD_SEND:
	case KDBUS_CMD_RECV:
	case KDBUS_CMD_NAME_ACQUIRE:
	case KDBUS_CMD_NAME_RELEASE:
	case KDBUS_CMD_MATCH_ADD:
	case KDBUS_CMD_MATCH_REMOVE:
		return true;
	}

	return false;
}

static long kdbus_handle_ioctl(struct file *file, unsigned int cmd,
			       unsigned long arg)
{
	struct kdbus_handle *handle = file->private_data;
	struct kdbus_node *node = kdbus_node_from_inode(file_inode(file));
	void __user *argp = (void __user *)arg;
	long ret = -EBADFD;

	if (!kdbus_handle_cmd_is_kdbus(cmd))
		return -ENOTTY;

	switch (cmd) {
	case KDBUS_CMD_BUS_MAKE:
	case KDBUS_CMD_ENDPOINT_MAKE:
	case KDBUS_CMD_HELLO:
		mutex_lock(&handle->lock);
		if (handle->type == KDBUS_HANDLE_NONE) {
			if (node->type == KDBUS_NODE_CONTROL)
				ret = kdbus_handle_ioctl_control(file, cmd,
								 argp);
			else if (node->type == KDBUS_NODE_ENDPOINT)
				ret = kdbus_handle_ioctl_ep(file, cmd, argp);
		}
		mutex_unlock(&handle->lock);
		break;

	default:
		switch (kdbus_handle_type(handle)) {
		case KDBUS_HANDLE_EP_OWNER:
			ret = kdbus_handle_ioctl_ep_owner(file, cmd, argp);
			break;
		case KDBUS_HANDLE_CONNECTED:
			ret = kdbus_handle_ioctl_connected(file, cmd, argp);
			break;
		default:
			ret = -EBADFD;
			break;
		}
		break;
	}

	return ret < 0 ? ret : 0;
}

static __poll_t kdbus_handle_poll(struct file *file,
				  struct poll_table_struct *wait)
{
	struct kdbus_handle *handle = file->private_data;
	struct kdbus_conn *conn;
	__poll_t mask = EPOLLERR | EPOLLHUP;

	if (kdbus_handle_type(handle) != KDBUS_HANDLE_CONNECTED)
		return mask;

	conn = handle->conn;

	poll_wait(file, &conn->wait, wait);

	/*
	 * Verify the connection hasn't been deactivated _after_ adding the
	 * wait-queue. This guarantees, that if the connection is deactivated
	 * after we checked it, the waitqueue is signaled and we're called
	 * again.
	 */
	if (!kdbus_conn_active(conn))
		return mask;

	mask = EPOLLOUT | EPOLLWRNORM;

	mutex_lock(&conn->lock);
	if (!list_empty(&conn->queue.msg_list) ||
	    atomic_read(&conn->lost_count) > 0)
		mask |= EPOLLIN | EPOLLRDNORM;
	mutex_unlock(&conn->lock);

	return mask;
}

static int kdbus_handle_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct kdbus_handle *handle = file->private_data;

	if (kdbus_handle_type(handle) != KDBUS_HANDLE_CONNECTED)
		return -EBADFD;

	return kdbus_pool_mmap(handle->conn->pool, vma);
}

const struct file_operations kdbus_handle_ops = {
	.owner =		THIS_MODULE,
	.open =			kdbus_handle_open,
	.release =		kdbus_handle_release,
	.poll =			kdbus_handle_poll,
	.llseek =		noop_llseek,
	.unlocked_ioctl =	kdbus_handle_ioctl,
	.compat_ioctl =		compat_ptr_ioctl,
	.mmap =			kdbus_handle_mmap,
};
