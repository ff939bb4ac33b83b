/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kdbus receive queues
 */

#ifndef __KDBUS_QUEUE_H
#define __KDBUS_QUEUE_H

#include <linux/list.h>
#include <linux/rbtree.h>
#include <linux/types.h>

struct kdbus_conn;
struct kdbus_pool_slice;
struct kdbus_reply;
struct kdbus_staging;
struct kdbus_user;

/**
 * struct kdbus_queue - a connection's message queue
 * @msg_list:		all queued entries, in arrival order
 * @msg_prio_queue:	tree of the first entries of each priority value,
 *			leftmost = numerically lowest (most urgent)
 *
 * All fields are protected by the owning connection's lock.
 */
struct kdbus_queue {
	struct list_head msg_list;
	struct rb_root_cached msg_prio_queue;
};

/**
 * struct kdbus_queue_entry - one message in a receive queue
 * @entry:		entry in kdbus_queue::msg_list (conn->lock)
 * @prio_node:		node in kdbus_queue::msg_prio_queue, if this entry
 *			is the first of its priority (conn->lock)
 * @prio_entry:		list of further entries of the same priority
 *			(conn->lock)
 * @priority:		queueing priority (invariant)
 * @seq:		bus sequence number of the message (invariant)
 * @slice:		slice in the receiver's pool holding the message
 * @conn:		receiving connection (reference held; conn->lock,
 *			changed only by kdbus_queue_entry_move())
 * @user:		user the entry is charged to, NULL for the kernel
 *			(reference held, invariant)
 * @gaps:		file descriptors to install at RECV, or NULL
 * @reply:		reply record this message expects, or NULL
 * @dst_name_id:	name-generation the message was sent to, or 0
 * @charged:		the entry is charged to @user in @conn (conn->lock)
 * @charged_size:	bytes charged, the slice size (invariant)
 * @pull:		staging object of a synchronous call whose payload is
 *			not in @slice yet, or NULL (conn->lock); see
 *			kdbus_queue_entry_pull()
 * @pull_off:		offset of that payload in @slice (invariant)
 */
struct kdbus_queue_entry {
	struct list_head entry;
	struct rb_node prio_node;
	struct list_head prio_entry;
	s64 priority;
	u64 seq;
	struct kdbus_pool_slice *slice;
	struct kdbus_conn *conn;
	struct kdbus_user *user;
	struct kdbus_gaps *gaps;
	struct kdbus_reply *reply;
	u64 dst_name_id;
	bool charged;
	size_t charged_size;
	struct kdbus_staging *pull;
	u64 pull_off;
};

void kdbus_queue_init(struct kdbus_queue *queue);
struct kdbus_queue_entry *kdbus_queue_peek(struct kdbus_queue *queue,
					   s64 priority, bool use_priority);

struct kdbus_queue_entry *kdbus_queue_entry_new(struct kdbus_conn *src,
						struct kdbus_conn *dst,
						struct kdbus_staging *staging,
						bool pull);
void kdbus_queue_entry_free(struct kdbus_queue_entry *entry);
int kdbus_queue_entry_install(struct kdbus_queue_entry *entry,
			      u64 *return_flags, bool install_fds);
void kdbus_queue_entry_enqueue(struct kdbus_queue_entry *entry,
			       struct kdbus_reply *reply);
void kdbus_queue_entry_unlink(struct kdbus_queue_entry *entry);
int kdbus_queue_entry_move(struct kdbus_queue_entry *entry,
			   struct kdbus_conn *dst);

#endif
