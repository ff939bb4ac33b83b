// SPDX-License-Identifier: GPL-2.0-only
/*
 * kdbus receive queues: the messages waiting in a connection, in arrival
 * order and by priority, and the per-user quotas charged for them.
 *
 * Locking:
 *  - A struct kdbus_queue, the linkage fields of its entries and the
 *    connection's quota table (kdbus_conn_quota_inc()) are protected by the
 *    lock of the connection that owns the queue (conn->lock). Every
 *    function taking a queue or a linked or charged entry expects that lock
 *    held; lockdep asserts say so.
 *  - Lock order: conn->lock -> pool->lock (taken inside the pool API).
 *    Moving an entry to another connection (activator hand-over) holds
 *    both connection locks, taken through kdbus_conn_lock2().
 *  - Entries that are neither linked nor charged belong to their holder and
 *    may be freed without any lock.
 *  - Linking and unlinking an entry changes the queued_messages count of
 *    the receiver's bus (a percpu_counter, no lock); moving an entry keeps
 *    it on the same bus.
 */

#include <linux/list.h>
#include <linux/rbtree.h>
#include <linux/slab.h>

#include "bus.h"
#include "connection.h"
#include "domain.h"
#include "endpoint.h"
#include "item.h"
#include "limits.h"
#include "message.h"
#include "pool.h"
#include "queue.h"
#include "reply.h"
#include "stats.h"

/**
 * kdbus_queue_init() - initialize a queue
 * @queue:	queue to initialize
 */
void kdbus_queue_init(struct kdbus_queue *queue)
{
	INIT_LIST_HEAD(&queue->msg_list);
	queue->msg_prio_queue = RB_ROOT_CACHED;
}

/**
 * kdbus_queue_peek() - find the next message to receive
 * @queue:		queue
 * @priority:		highest priority value to accept, with @use_priority
 * @use_priority:	select by priority instead of arrival order
 *
 * Without @use_priority the oldest entry is returned. With it, the oldest
 * entry of the numerically lowest priority value is returned if that value
 * is not larger than @priority.
 *
 * Return: the entry, or NULL if there is none.
 */
struct kdbus_queue_entry *kdbus_queue_peek(struct kdbus_queue *queue,
					   s64 priority, bool use_priority)
{
	struct kdbus_queue_entry *e;
	struct rb_node *node;

	if (list_empty(&queue->msg_list))
		return NULL;

	if (!use_priority)
		return list_first_entry(&queue->msg_list,
					struct kdbus_queue_entry, entry);

	node = rb_first_cached(&queue->msg_prio_queue);
	if (!node)
		return NULL;

	e = rb_entry(node, struct kdbus_queue_entry, prio_node);
	return e->priority <= priority ? e : NULL;
}

static size_t kdbus_queue_entry_fds(const struct kdbus_queue_entry *entry)
{
	return entry->gaps ? entry->gaps->n_fds : 0;
}

/* memfd payload bytes a receiver gets by reference, never copied */
static u64 kdbus_queue_memfd_bytes(const struct kdbus_staging *staging)
{
	const struct kdbus_item *item;
	u64 n = 0;

	if (!staging->gaps || staging->gaps->n_memfds == 0)
		return 0;

	KDBUS_ITEMS_FOREACH(item, staging->msg->items,
			    staging->msg_size -
			    offsetof(struct kdbus_msg, items))
		if (item->type == KDBUS_ITEM_PAYLOAD_MEMFD)
			n += item->memfd.size;

	return n;
}

static bool kdbus_queue_is_reply_notification(const struct kdbus_staging *s)
{
	u64 type = s->msg->items[0].type;

	return s->kernel && (type == KDBUS_ITEM_REPLY_TIMEOUT ||
			     type == KDBUS_ITEM_REPLY_DEAD);
}

/**
 * kdbus_queue_entry_new() - place a message into a receiver's pool
 * @src:	sending connection, NULL for kernel notifications
 * @dst:	receiving connection
 * @staging:	the message
 * @pull:	leave the payload for the receiver to pull (a synchronous
 *		call, see kdbus_queue_entry_pull())
 *
 * Charges the message to the sender's user in @dst (ENOBUFS, EMFILE),
 * allocates an accounted slice in @dst's pool (EXFULL) and copies the
 * message into it, payload straight from the sender's memory (EFAULT);
 * with @pull the payload is not copied yet and @entry->pull is set.
 * The entry is not queued yet; see kdbus_queue_entry_enqueue().
 *
 * Context: dst->lock must be held.
 * Return: the new entry, or ERR_PTR on failure (nothing is charged then).
 */
struct kdbus_queue_entry *kdbus_queue_entry_new(struct kdbus_conn *src,
						struct kdbus_conn *dst,
						struct kdbus_staging *staging,
						bool pull)
{
	struct kdbus_queue_entry *entry;
	bool reserved;
	size_t size;
	int ret;

	lockdep_assert_held(&dst->lock);

	entry = kzalloc(sizeof(*entry), GFP_KERNEL_ACCOUNT);
	if (!entry)
		return ERR_PTR(-ENOMEM);
	kdbus_stats_live(KDBUS_STAT_LIVE_ENTRIES, 1);

	INIT_LIST_HEAD(&entry->entry);
	INIT_LIST_HEAD(&entry->prio_entry);
	RB_CLEAR_NODE(&entry->prio_node);
	entry->priority = staging->msg->priority;
	entry->seq = staging->seq;
	entry->conn = kdbus_conn_ref(dst);
	/* a notification is charged to the user who caused it */
	entry->user = kdbus_user_ref(src ? src->user : staging->charge);
	entry->gaps = kdbus_gaps_ref(staging->gaps);

	ret = kdbus_staging_size(staging, dst, &size);
	if (ret < 0)
		goto error;

	/*
	 * REPLY_TIMEOUT and REPLY_DEAD answer the receiver's own requests
	 * (at most KDBUS_CONN_MAX_REQUESTS_PENDING of them, twice for a
	 * dying replier): they are not charged to anybody and take space
	 * from the half of the pool reserved for its owner, so no other
	 * user's traffic can make them get lost.
	 */
	reserved = !src && kdbus_queue_is_reply_notification(staging);
	if (!reserved) {
		ret = kdbus_conn_quota_inc(dst, entry->user, size,
					   kdbus_queue_entry_fds(entry));
		if (ret < 0)
			goto error;
		entry->charged = true;
		entry->charged_size = size;
	}

	entry->slice = kdbus_pool_slice_alloc(dst->pool, size, !reserved);
	if (IS_ERR(entry->slice)) {
		ret = PTR_ERR(entry->slice);
		entry->slice = NULL;
		goto error;
	}

	ret = kdbus_staging_emit(staging, dst, entry->slice,
				 pull ? &entry->pull_off : NULL);
	if (ret < 0)
		goto error;
	if (pull)
		entry->pull = staging;

	kdbus_stats_add(KDBUS_STAT_MSGS, 1);
	kdbus_stats_add(KDBUS_STAT_MEMFD_PASSED,
			kdbus_queue_memfd_bytes(staging));
	return entry;

error:
	kdbus_queue_entry_free(entry);
	return ERR_PTR(ret);
}

static void kdbus_queue_entry_link(struct kdbus_queue_entry *entry)
{
	struct kdbus_queue *queue = &entry->conn->queue;
	struct rb_node **n, *pn = NULL;
	bool leftmost = true;

	n = &queue->msg_prio_queue.rb_root.rb_node;
	while (*n) {
		struct kdbus_queue_entry *e;

		pn = *n;
		e = rb_entry(pn, struct kdbus_queue_entry, prio_node);

		/* same priority: append to the chain of the tree node */
		if (entry->priority == e->priority) {
			list_add_tail(&entry->prio_entry, &e->prio_entry);
			goto prio_done;
		}

		if (entry->priority < e->priority) {
			n = &pn->rb_left;
		} else {
			n = &pn->rb_right;
			leftmost = false;
		}
	}

	rb_link_node(&entry->prio_node, pn, n);
	rb_insert_color_cached(&entry->prio_node, &queue->msg_prio_queue,
			       leftmost);

prio_done:
	list_add_tail(&entry->entry, &queue->msg_list);
	kdbus_bus_count_queued(entry->conn->ep->bus, 1);
}

/**
 * kdbus_queue_entry_enqueue() - queue an entry in its receiver
 * @entry:	entry from kdbus_queue_entry_new()
 * @reply:	reply record expected for this message, or NULL
 *
 * Context: entry->conn->lock must be held.
 */
void kdbus_queue_entry_enqueue(struct kdbus_queue_entry *entry,
			       struct kdbus_reply *reply)
{
	lockdep_assert_held(&entry->conn->lock);

	entry->reply = kdbus_reply_ref(reply);
	kdbus_queue_entry_link(entry);
}

/**
 * kdbus_queue_entry_unlink() - remove an entry from its queue
 * @entry:	entry
 *
 * Removes the entry from the queue (if queued) and releases its quota
 * charges. The slice stays allocated until the entry is freed.
 *
 * Context: entry->conn->lock must be held.
 */
void kdbus_queue_entry_unlink(struct kdbus_queue_entry *entry)
{
	struct kdbus_queue *queue = &entry->conn->queue;

	lockdep_assert_held(&entry->conn->lock);

	if (!list_empty(&entry->entry)) {
		list_del_init(&entry->entry);

		if (RB_EMPTY_NODE(&entry->prio_node)) {
			/* a chained entry of some priority */
			list_del(&entry->prio_entry);
		} else if (list_empty(&entry->prio_entry)) {
			/* the only entry of its priority */
			rb_erase_cached(&entry->prio_node,
					&queue->msg_prio_queue);
		} else {
			/* promote the next entry of the same priority */
			struct kdbus_queue_entry *q;

			q = list_first_entry(&entry->prio_entry,
					     struct kdbus_queue_entry,
					     prio_entry);
			list_del(&entry->prio_entry);
			rb_replace_node_cached(&entry->prio_node,
					       &q->prio_node,
					       &queue->msg_prio_queue);
		}

		RB_CLEAR_NODE(&entry->prio_node);
		INIT_LIST_HEAD(&entry->prio_entry);
		kdbus_bus_count_queued(entry->conn->ep->bus, -1);
	}

	if (entry->charged) {
		kdbus_conn_quota_dec(entry->conn, entry->user,
				     entry->charged_size,
				     kdbus_queue_entry_fds(entry));
		entry->charged = false;
	}
}

/**
 * kdbus_queue_entry_move() - move a queued entry to another connection
 * @e:		queued entry
 * @dst:	connection to move it to
 *
 * The message is copied, as it was built for its current receiver (its
 * payload pulled first if still pending), into
 * a new slice of @dst's pool (through a bounce buffer),
 * charged to the same user in @dst, and appended to @dst's queue. On
 * failure nothing changes.
 *
 * Context: e->conn->lock and dst->lock must be held.
 * Return: 0 on success, negative error code on failure.
 */
int kdbus_queue_entry_move(struct kdbus_queue_entry *e,
			   struct kdbus_conn *dst)
{
	struct kdbus_conn *src = e->conn;
	struct kdbus_pool_slice *slice;
	size_t size;
	int ret;

	lockdep_assert_held(&src->lock);
	lockdep_assert_held(&dst->lock);

	if (src == dst)
		return 0;

	ret = kdbus_queue_entry_pull(e);
	if (ret < 0)
		return ret;

	size = kdbus_pool_slice_size(e->slice);
	ret = kdbus_conn_quota_inc(dst, e->user, e->charged_size,
				   kdbus_queue_entry_fds(e));
	if (ret < 0)
		return ret;

	slice = kdbus_pool_slice_alloc(dst->pool, size, true);
	if (IS_ERR(slice)) {
		ret = PTR_ERR(slice);
		goto exit_quota;
	}

	ret = kdbus_pool_slice_copy(slice, e->slice);
	if (ret < 0)
		goto exit_slice;

	kdbus_queue_entry_unlink(e);
	kdbus_pool_slice_release(e->slice);
	kdbus_conn_unref(e->conn);

	e->slice = slice;
	e->conn = kdbus_conn_ref(dst);
	e->charged = true;
	kdbus_queue_entry_link(e);
	return 0;

exit_slice:
	kdbus_pool_slice_release(slice);
exit_quota:
	kdbus_conn_quota_dec(dst, e->user, e->charged_size,
			     kdbus_queue_entry_fds(e));
	return ret;
}

/**
 * kdbus_queue_entry_free() - free an entry
 * @entry:	entry, or NULL
 *
 * Unlinks the entry if needed, drops the kernel reference of its slice (the
 * slice stays allocated while user space holds it), and frees it.
 *
 * Context: entry->conn->lock must be held unless the entry is neither
 * queued nor charged.
 */
void kdbus_queue_entry_free(struct kdbus_queue_entry *entry)
{
	if (!entry)
		return;

	if (!list_empty(&entry->entry) || entry->charged)
		kdbus_queue_entry_unlink(entry);

	/* a payload never pulled: its sender no longer waits for the copy */
	if (entry->pull)
		kdbus_staging_pull_detach(entry);

	if (entry->slice)
		kdbus_pool_slice_release(entry->slice);

	kdbus_reply_unref(entry->reply);
	kdbus_gaps_unref(entry->gaps);
	kdbus_user_unref(entry->user);
	kdbus_conn_unref(entry->conn);
	kfree(entry);
	kdbus_stats_live(KDBUS_STAT_LIVE_ENTRIES, -1);
}

/**
 * kdbus_queue_entry_install() - install the descriptors of a message
 * @entry:		entry
 * @return_flags:	KDBUS_RECV_RETURN_INCOMPLETE_FDS is or-ed in if a
 *			descriptor could not be installed
 * @install_fds:	install the regular descriptors (FDS item) too; memfds
 *			are always installed
 *
 * Called exactly once per received message, never for a PEEK.
 *
 * Return: 0 on success, negative error code on failure.
 */
int kdbus_queue_entry_install(struct kdbus_queue_entry *entry,
			      u64 *return_flags, bool install_fds)
{
	bool incomplete = false;
	int ret;

	if (!entry->gaps)
		return 0;

	ret = kdbus_gaps_install(entry->gaps, entry->slice, install_fds,
				 &incomplete);
	if (ret < 0)
		return ret;

	if (incomplete)
		*return_flags |= KDBUS_RECV_RETURN_INCOMPLETE_FDS;

	return 0;
}
