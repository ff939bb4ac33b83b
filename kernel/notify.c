// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kernel notifications: ID_ADD/ID_REMOVE, NAME_ADD/NAME_REMOVE/NAME_CHANGE
 * (broadcasts) and REPLY_TIMEOUT/REPLY_DEAD (unicasts to a requester).
 *
 * Producers stage a notification on the bus's list; they may hold any lock
 * (the registry lock in particular, so notifications are ordered like the
 * changes that caused them). kdbus_notify_flush() delivers the list in
 * generation order; the operation that produced a notification flushes it
 * before its ioctl returns, with no lock held.
 *
 * Locking:
 *  - bus->notify_lock (spinlock) protects bus->notify_list. Nothing else
 *    is taken under it.
 *  - bus->notify_flush_lock serialises flushing per bus, so every receiver
 *    sees the notifications in the same relative order.
 *  - Nesting: notify_flush_lock -> reg->rwlock (read) -> bus->conn_rwlock
 *    (read; it also protects bus->match_index, the connections walked) ->
 *    match_db->mdb_rwlock (read, released before delivering) ->
 *    conn->lock -> pool->lock.
 */

#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "bus.h"
#include "connection.h"
#include "domain.h"
#include "item.h"
#include "match.h"
#include "message.h"
#include "names.h"
#include "notify.h"

static void kdbus_notify_add_tail(struct kdbus_staging *s,
				  struct kdbus_bus *bus)
{
	spin_lock(&bus->notify_lock);
	list_add_tail(&s->notify_entry, &bus->notify_list);
	spin_unlock(&bus->notify_lock);
}

static int kdbus_notify_reply(struct kdbus_bus *bus, u64 id, u64 cookie,
			      u64 msg_type)
{
	struct kdbus_staging *s;

	s = kdbus_staging_new_kernel(bus, id, cookie, 0, msg_type);
	if (IS_ERR(s))
		return PTR_ERR(s);

	kdbus_notify_add_tail(s, bus);
	return 0;
}

/**
 * kdbus_notify_reply_timeout() - queue a REPLY_TIMEOUT notification
 * @bus:		Bus to queue the notification on
 * @id:			The requester the notification goes to
 * @cookie:		The cookie of the request that timed out
 *
 * Return: 0 on success, negative errno on failure (the notification is
 * lost then, like one that does not fit into its receiver).
 */
int kdbus_notify_reply_timeout(struct kdbus_bus *bus, u64 id, u64 cookie)
{
	return kdbus_notify_reply(bus, id, cookie, KDBUS_ITEM_REPLY_TIMEOUT);
}

/**
 * kdbus_notify_reply_dead() - queue a REPLY_DEAD notification
 * @bus:		Bus to queue the notification on
 * @id:			The requester the notification goes to
 * @cookie:		The cookie of the request that cannot be answered
 *
 * Return: 0 on success, negative errno on failure.
 */
int kdbus_notify_reply_dead(struct kdbus_bus *bus, u64 id, u64 cookie)
{
	return kdbus_notify_reply(bus, id, cookie, KDBUS_ITEM_REPLY_DEAD);
}

/**
 * kdbus_notify_name_change() - queue a NAME_ADD/REMOVE/CHANGE notification
 * @bus:		Bus to queue the notification on
 * @cause:		User whose connection caused the change: each
 *			receiver's quota charges the notification to it
 * @type:		KDBUS_ITEM_NAME_ADD, _REMOVE or _CHANGE
 * @old_id:		Former owner, 0 for NAME_ADD
 * @new_id:		New owner, 0 for NAME_REMOVE
 * @old_flags:		Record flags of the former owner before the change
 * @new_flags:		Record flags of the new owner after the change
 * @name:		The well-known name
 *
 * Return: 0 on success, negative errno on failure.
 */
int kdbus_notify_name_change(struct kdbus_bus *bus, struct kdbus_user *cause,
			     u64 type, u64 old_id, u64 new_id,
			     u64 old_flags, u64 new_flags,
			     const char *name)
{
	struct kdbus_notify_name_change *nc;
	struct kdbus_staging *s;
	size_t name_len;

	name_len = strlen(name) + 1;
	s = kdbus_staging_new_kernel(bus, KDBUS_DST_ID_BROADCAST, 0,
				     sizeof(*nc) + name_len, type);
	if (IS_ERR(s))
		return PTR_ERR(s);

	nc = &s->msg->items[0].name_change;
	nc->old_id.id = old_id;
	nc->old_id.flags = old_flags;
	nc->new_id.id = new_id;
	nc->new_id.flags = new_flags;
	memcpy(nc->name, name, name_len);
	s->charge = kdbus_user_ref(cause);

	kdbus_notify_add_tail(s, bus);
	return 0;
}

/**
 * kdbus_notify_id_change() - queue an ID_ADD/ID_REMOVE notification
 * @bus:		Bus to queue the notification on
 * @cause:		User of the connection that came or went, charged
 *			in each receiver's quota
 * @type:		KDBUS_ITEM_ID_ADD or KDBUS_ITEM_ID_REMOVE
 * @id:			The connection that came or went
 * @flags:		Its HELLO flags
 *
 * Return: 0 on success, negative errno on failure.
 */
int kdbus_notify_id_change(struct kdbus_bus *bus, struct kdbus_user *cause,
			   u64 type, u64 id, u64 flags)
{
	struct kdbus_staging *s;

	s = kdbus_staging_new_kernel(bus, KDBUS_DST_ID_BROADCAST, 0,
				     sizeof(struct kdbus_notify_id_change),
				     type);
	if (IS_ERR(s))
		return PTR_ERR(s);

	s->msg->items[0].id_change.id = id;
	s->msg->items[0].id_change.flags = flags;
	s->charge = kdbus_user_ref(cause);

	kdbus_notify_add_tail(s, bus);
	return 0;
}

/* every monitor gets a copy of every notification (kdbus.message(7)) */
static void kdbus_notify_monitors(struct kdbus_bus *bus,
				  struct kdbus_staging *s)
{
	struct kdbus_conn *m;

	down_read(&bus->conn_rwlock);
	list_for_each_entry(m, &bus->monitors_list, monitor_entry)
		if (kdbus_msg_deliver_kernel(m, s) < 0)
			atomic_inc(&m->lost_count);
	up_read(&bus->conn_rwlock);
}

/*
 * Broadcast notifications reach ordinary connections only through their
 * match rules (kdbus.name(7), kdbus.match(7)); a connection without matches
 * receives none. A receiver that cannot take one loses it and counts the
 * loss. NAME_* notifications reach only receivers that may SEE the name,
 * judged with the receiver's stored credentials (kdbus.policy(7)).
 */
static bool kdbus_notify_may_see(struct kdbus_conn *conn,
				 const struct kdbus_staging *s)
{
	const struct kdbus_item *item = &s->msg->items[0];

	switch (item->type) {
	case KDBUS_ITEM_NAME_ADD:
	case KDBUS_ITEM_NAME_REMOVE:
	case KDBUS_ITEM_NAME_CHANGE:
		return kdbus_conn_policy_see_name(conn, conn->cred,
						  item->name_change.name);
	default:
		return true;
	}
}

/*
 * Only connections with matches (the bus's match index) are visited, and
 * the slot's summary skips those none of whose matches takes this type of
 * notification (match.c).
 */
static void kdbus_notify_broadcast(struct kdbus_bus *bus,
				   struct kdbus_staging *s)
{
	const struct kdbus_match_slot *slot;
	struct kdbus_match_probe probe;
	struct kdbus_conn *conn;
	unsigned int i;

	kdbus_notify_monitors(bus, s);
	kdbus_match_probe_init(&probe, NULL, s);

	down_read(&bus->conn_rwlock);
	for (i = 0; i < bus->match_index.n; i++) {
		slot = &bus->match_index.slots[i];
		if (!kdbus_match_slot_may_pass(slot, &probe))
			continue;
		conn = slot->conn;
		if (!kdbus_conn_is_ordinary(conn))
			continue;
		if (!kdbus_match_db_match_msg(conn->match_db, NULL, s))
			continue;
		if (!kdbus_notify_may_see(conn, s))
			continue;
		if (kdbus_msg_deliver_kernel(conn, s) < 0)
			atomic_inc(&conn->lost_count);
	}
	up_read(&bus->conn_rwlock);
}

static void kdbus_notify_unicast(struct kdbus_bus *bus,
				 struct kdbus_staging *s)
{
	struct kdbus_conn *conn;

	kdbus_notify_monitors(bus, s);

	/* a target that no longer exists, or cannot take it, misses it */
	conn = kdbus_bus_find_conn_by_id(bus, s->msg->dst_id);
	if (conn) {
		kdbus_msg_deliver_kernel(conn, s);
		kdbus_conn_unref(conn);
	}
}

/**
 * kdbus_notify_flush() - deliver the queued notifications of a bus
 * @bus:		Bus whose notifications to deliver
 *
 * Delivers every queued notification, in the order they were queued.
 *
 * Context: no kdbus lock may be held.
 */
void kdbus_notify_flush(struct kdbus_bus *bus)
{
	LIST_HEAD(notify_list);
	struct kdbus_staging *s, *tmp;

	mutex_lock(&bus->notify_flush_lock);
	down_read(&bus->name_registry->rwlock);

	spin_lock(&bus->notify_lock);
	list_splice_init(&bus->notify_list, &notify_list);
	spin_unlock(&bus->notify_lock);

	list_for_each_entry_safe(s, tmp, &notify_list, notify_entry) {
		if (s->msg->dst_id == KDBUS_DST_ID_BROADCAST)
			kdbus_notify_broadcast(bus, s);
		else
			kdbus_notify_unicast(bus, s);

		list_del(&s->notify_entry);
		kdbus_staging_free(s);
	}

	up_read(&bus->name_registry->rwlock);
	mutex_unlock(&bus->notify_flush_lock);
}

/**
 * kdbus_notify_free() - discard the queued notifications of a bus
 * @bus:		Bus to clean up
 */
void kdbus_notify_free(struct kdbus_bus *bus)
{
	struct kdbus_staging *s, *tmp;

	list_for_each_entry_safe(s, tmp, &bus->notify_list, notify_entry) {
		list_del(&s->notify_entry);
		kdbus_staging_free(s);
	}
}
