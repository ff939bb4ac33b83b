// SPDX-License-Identifier: GPL-2.0-only
/*
 * kdbus reply tracking: a record per request that expects a reply, the
 * per-connection timer that turns passed deadlines into REPLY_TIMEOUT
 * notifications (produced and delivered by notify.c).
 *
 * Locking:
 *  - A record lives on the reply_list of its requester (reply_dst) and
 *    its mutable fields (entry, queue_entry, err, waiting, interrupted,
 *    linked) are protected by reply_dst->lock. The requester's
 *    request_count and reply_scan_deadline are protected by the same lock.
 *  - The timeout work of a connection takes conn->lock; it is cancelled
 *    (synchronously) on disconnect, never while conn->lock is held.
 *  - Notifications are queued on the bus under locks and delivered by
 *    kdbus_notify_flush() with no lock held, as delivering takes the
 *    receiver's lock.
 */

#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>

#include "bus.h"
#include "connection.h"
#include "endpoint.h"
#include "item.h"
#include "message.h"
#include "notify.h"
#include "queue.h"
#include "reply.h"
#include "stats.h"

/**
 * kdbus_reply_new() - create a reply record
 * @reply_src:		connection expected to send the reply
 * @reply_dst:		connection waiting for the reply (the requester)
 * @cookie:		cookie of the request
 * @deadline_ns:	absolute CLOCK_MONOTONIC deadline
 * @name_id:		name-generation the request was sent to, or 0
 * @sync:		synchronous call
 *
 * The record is not linked yet; see kdbus_reply_link().
 *
 * Return: new record, or ERR_PTR on failure.
 */
struct kdbus_reply *kdbus_reply_new(struct kdbus_conn *reply_src,
				    struct kdbus_conn *reply_dst,
				    u64 cookie, u64 deadline_ns, u64 name_id,
				    bool sync)
{
	struct kdbus_reply *r;

	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		return ERR_PTR(-ENOMEM);
	kdbus_stats_live(KDBUS_STAT_LIVE_REPLIES, 1);

	kref_init(&r->kref);
	INIT_LIST_HEAD(&r->entry);
	INIT_LIST_HEAD(&r->dead_entry);
	r->reply_src = kdbus_conn_ref(reply_src);
	r->reply_dst = kdbus_conn_ref(reply_dst);
	r->cookie = cookie;
	r->name_id = name_id;
	r->deadline_ns = deadline_ns;
	r->sync = sync;
	r->waiting = sync;
	return r;
}

static void kdbus_reply_free(struct kref *kref)
{
	struct kdbus_reply *r = container_of(kref, struct kdbus_reply, kref);

	kdbus_conn_unref(r->reply_src);
	kdbus_conn_unref(r->reply_dst);
	kfree(r);
	kdbus_stats_live(KDBUS_STAT_LIVE_REPLIES, -1);
}

/**
 * kdbus_reply_ref() - acquire a reference to a record
 * @r:		record, or NULL
 *
 * Return: @r
 */
struct kdbus_reply *kdbus_reply_ref(struct kdbus_reply *r)
{
	if (r)
		kref_get(&r->kref);
	return r;
}

/**
 * kdbus_reply_unref() - drop a reference to a record
 * @r:		record, or NULL
 *
 * Return: NULL
 */
struct kdbus_reply *kdbus_reply_unref(struct kdbus_reply *r)
{
	if (r)
		kref_put(&r->kref, kdbus_reply_free);
	return NULL;
}

/**
 * kdbus_reply_schedule_scan() - make sure the timeout scan runs in time
 * @conn:		requester
 * @deadline_ns:	deadline the scan must handle
 *
 * Context: conn->lock must be held.
 */
void kdbus_reply_schedule_scan(struct kdbus_conn *conn, u64 deadline_ns)
{
	unsigned long delay;
	u64 now;

	lockdep_assert_held(&conn->lock);

	if (conn->reply_scan_deadline &&
	    conn->reply_scan_deadline <= deadline_ns)
		return;

	now = ktime_get_ns();
	conn->reply_scan_deadline = deadline_ns;
	delay = deadline_ns > now ? nsecs_to_jiffies(deadline_ns - now) : 0;
	mod_delayed_work(system_wq, &conn->work, delay);
}

/**
 * kdbus_reply_link() - link a record on its requester
 * @r:		record
 *
 * Counts the record against the requester's pending request limit and,
 * for asynchronous requests, arms the timeout scan.
 *
 * Context: r->reply_dst->lock must be held.
 */
void kdbus_reply_link(struct kdbus_reply *r)
{
	struct kdbus_conn *conn = r->reply_dst;

	lockdep_assert_held(&conn->lock);

	if (r->linked)
		return;

	list_add_tail(&r->entry, &conn->reply_list);
	kdbus_reply_ref(r);
	r->linked = true;
	++conn->request_count;

	if (!r->sync)
		kdbus_reply_schedule_scan(conn, r->deadline_ns);
}

/**
 * kdbus_reply_unlink() - unlink a record from its requester
 * @r:		record
 *
 * Frees a reply still attached to the record and drops the list's
 * reference.
 *
 * Context: r->reply_dst->lock must be held.
 */
void kdbus_reply_unlink(struct kdbus_reply *r)
{
	struct kdbus_conn *conn = r->reply_dst;

	lockdep_assert_held(&conn->lock);

	if (!r->linked)
		return;

	if (r->queue_entry) {
		kdbus_queue_entry_free(r->queue_entry);
		r->queue_entry = NULL;
	}

	list_del_init(&r->entry);
	r->linked = false;
	--conn->request_count;
	kdbus_reply_unref(r);
}

/**
 * kdbus_sync_reply_wakeup() - complete a synchronous call
 * @r:		record of the synchronous call
 * @err:	result for the waiter
 *
 * The record stays linked until the waiter collects the result.
 *
 * Context: r->reply_dst->lock must be held.
 */
void kdbus_sync_reply_wakeup(struct kdbus_reply *r, int err)
{
	if (kdbus_sync_reply_complete(r, err))
		kdbus_conn_wake_sync(r->reply_dst);
}

/**
 * kdbus_sync_reply_complete() - give a synchronous call its result
 * @r:		record of the synchronous call
 * @err:	result for the waiter
 *
 * Like kdbus_sync_reply_wakeup() without the wake-up, which the caller
 * does after dropping the locks (r->reply_dst->wait), so that the waiter
 * does not wake into a lock still held.
 *
 * Context: r->reply_dst->lock must be held.
 * Return: true if the record was waiting and now has its result.
 */
bool kdbus_sync_reply_complete(struct kdbus_reply *r, int err)
{
	lockdep_assert_held(&r->reply_dst->lock);

	if (!r->sync || !r->waiting)
		return false;

	r->err = err;
	WRITE_ONCE(r->waiting, false);
	return true;
}

/**
 * kdbus_reply_find() - find a pending record a reply answers
 * @replying:	connection sending the reply
 * @reply_dst:	requester the reply goes to
 * @cookie:	cookie_reply of the reply
 *
 * Only records still waiting for an answer are found: completed,
 * timed-out and unlinked records are not.
 *
 * Context: reply_dst->lock must be held.
 * Return: the record (no reference taken), or NULL.
 */
struct kdbus_reply *kdbus_reply_find(struct kdbus_conn *replying,
				     struct kdbus_conn *reply_dst,
				     u64 cookie)
{
	struct kdbus_reply *r;

	lockdep_assert_held(&reply_dst->lock);

	list_for_each_entry(r, &reply_dst->reply_list, entry) {
		if (r->cookie != cookie || r->reply_src != replying)
			continue;
		if (r->sync && !r->waiting)
			continue;
		return r;
	}

	return NULL;
}

/**
 * kdbus_reply_list_scan_work() - timeout scan of a connection's records
 * @work:	the connection's delayed work
 *
 * Removes asynchronous records whose deadline passed and queues a
 * REPLY_TIMEOUT notification for each; removes interrupted synchronous
 * records whose deadline passed silently. Re-arms itself for the next
 * deadline.
 */
void kdbus_reply_list_scan_work(struct work_struct *work)
{
	struct kdbus_conn *conn =
		container_of(work, struct kdbus_conn, work.work);
	struct kdbus_bus *bus = conn->ep->bus;
	struct kdbus_reply *r, *tmp;
	u64 now, next = 0;

	mutex_lock(&conn->lock);

	conn->reply_scan_deadline = 0;
	if (!kdbus_conn_active(conn)) {
		mutex_unlock(&conn->lock);
		return;
	}

	now = ktime_get_ns();
	list_for_each_entry_safe(r, tmp, &conn->reply_list, entry) {
		/* a synchronous waiter handles its own deadline */
		if (r->sync && !r->interrupted)
			continue;

		if (r->deadline_ns > now) {
			if (!next || r->deadline_ns < next)
				next = r->deadline_ns;
			continue;
		}

		if (!r->sync)
			kdbus_notify_reply_timeout(bus, conn->id, r->cookie);
		kdbus_reply_unlink(r);
	}

	if (next)
		kdbus_reply_schedule_scan(conn, next);

	mutex_unlock(&conn->lock);

	kdbus_notify_flush(bus);
}
