/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kdbus reply tracking: records of expected replies
 */

#ifndef __KDBUS_REPLY_H
#define __KDBUS_REPLY_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/types.h>

struct kdbus_bus;
struct kdbus_conn;
struct kdbus_queue_entry;
struct work_struct;

/**
 * struct kdbus_reply - an expected reply
 * @kref:		reference count
 * @entry:		entry in reply_dst->reply_list (reply_dst->lock)
 * @dead_entry:		entry in a local list of records whose request
 *			was dropped (kdbus_conn_move_messages())
 * @reply_src:		connection expected to reply (reference held;
 *			reply_dst->lock, changed only when a name moves
 *			between an activator and its implementer)
 * @reply_dst:		connection waiting for the reply, the requester
 *			(reference held, invariant)
 * @queue_entry:	synchronous calls: the reply, already placed in
 *			the requester's pool (reply_dst->lock)
 * @cookie:		cookie of the request (invariant)
 * @name_id:		name-generation the request was sent to, or 0
 * @deadline_ns:	absolute CLOCK_MONOTONIC deadline (invariant)
 * @err:		synchronous calls: result for the waiter
 *			(reply_dst->lock)
 * @sync:		synchronous call (invariant)
 * @waiting:		synchronous calls: not yet completed (written under
 *			reply_dst->lock; the waiter re-reads it without the
 *			lock before sleeping, so not a bitfield)
 * @interrupted:	synchronous calls: the waiter was interrupted by a
 *			signal and may resume (reply_dst->lock)
 * @linked:		@entry is linked (reply_dst->lock)
 */
struct kdbus_reply {
	struct kref kref;
	struct list_head entry;
	struct list_head dead_entry;
	struct kdbus_conn *reply_src;
	struct kdbus_conn *reply_dst;
	struct kdbus_queue_entry *queue_entry;
	u64 cookie;
	u64 name_id;
	u64 deadline_ns;
	int err;
	bool waiting;
	bool sync:1;
	bool interrupted:1;
	bool linked:1;
};

struct kdbus_reply *kdbus_reply_new(struct kdbus_conn *reply_src,
				    struct kdbus_conn *reply_dst,
				    u64 cookie, u64 deadline_ns, u64 name_id,
				    bool sync);
struct kdbus_reply *kdbus_reply_ref(struct kdbus_reply *r);
struct kdbus_reply *kdbus_reply_unref(struct kdbus_reply *r);
void kdbus_reply_schedule_scan(struct kdbus_conn *conn, u64 deadline_ns);
void kdbus_reply_link(struct kdbus_reply *r);
void kdbus_reply_unlink(struct kdbus_reply *r);
void kdbus_sync_reply_wakeup(struct kdbus_reply *r, int err);
bool kdbus_sync_reply_complete(struct kdbus_reply *r, int err);
struct kdbus_reply *kdbus_reply_find(struct kdbus_conn *replying,
				     struct kdbus_conn *reply_dst,
				     u64 cookie);
void kdbus_reply_list_scan_work(struct work_struct *work);

#endif
