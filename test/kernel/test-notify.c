// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Kernel notifications (kdbus.message(7), kdbus.name(7)): layout of ID and
 * NAME notifications, exactly one per transition, their order within one
 * HELLO and one disconnect, and who receives them.
 *
 * The observer is a monitor, which gets every notification regardless of
 * match rules; ordinary connections get them only through matches.
 */
#include <stdlib.h>
#include <unistd.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

#define P KDBUS_NAME_PRIMARY
#define Q KDBUS_NAME_QUEUE
#define FD KDBUS_HELLO_ACCEPT_FD

/* the exact layout of an ID_ADD and a NAME_ADD as delivered */
KDBUS_TEST(notify, layout, 0)
{
	struct kdbus_conn *mon, *a;
	struct kdbus_msg *m;
	struct kdbus_item *it;
	uint64_t off, rf;
	size_t len;

	ASSERT_OK(kn_monitor(env->bus_path, &mon));
	ASSERT_OK(kdbus_hello(env->bus_path, FD, 0, KDBUS_DEFAULT_POOL, &a));

	ASSERT_OK(kdbus_recv_msg(mon, 0, 0, &m, &off));
	ASSERT_EQ(m->src_id, KDBUS_SRC_ID_KERNEL);
	ASSERT_EQ(m->dst_id, KDBUS_DST_ID_BROADCAST);
	ASSERT_EQ(m->flags, KDBUS_MSG_SIGNAL);
	ASSERT_EQ(m->payload_type, KDBUS_PAYLOAD_KERNEL);
	ASSERT_EQ(m->cookie, 0);
	ASSERT_EQ(m->cookie_reply, 0);
	ASSERT_EQ(m->priority, 0);
	it = m->items;
	ASSERT_EQ(it->type, KDBUS_ITEM_ID_ADD);
	ASSERT_EQ(it->size, KDBUS_ITEM_HDR + 16);
	ASSERT_EQ(it->id_change.id, a->id);
	ASSERT_EQ(it->id_change.flags, FD);
	it = KDBUS_ITEM_NEXT(it);
	ASSERT_EQ(it->type, KDBUS_ITEM_TIMESTAMP);
	ASSERT((uint8_t *)KDBUS_ITEM_NEXT(it) ==
	       (uint8_t *)m + KDBUS_ALIGN8(m->size));
	ASSERT_OK(kdbus_free(mon, off));

	ASSERT_OK(kn_acquire(a, "org.notify.Layout", Q, &rf));
	ASSERT_OK(kdbus_recv_msg(mon, 0, 0, &m, &off));
	it = m->items;
	len = strlen("org.notify.Layout") + 1;
	ASSERT_EQ(it->type, KDBUS_ITEM_NAME_ADD);
	ASSERT_EQ(it->size, KDBUS_ITEM_HDR + 32 + len);
	ASSERT_EQ(it->name_change.old_id.id, 0);
	ASSERT_EQ(it->name_change.old_id.flags, 0);
	ASSERT_EQ(it->name_change.new_id.id, a->id);
	ASSERT_EQ(it->name_change.new_id.flags, Q | P);
	ASSERT(!strcmp(it->name_change.name, "org.notify.Layout"));
	ASSERT(kdbus_msg_find(m, KDBUS_ITEM_TIMESTAMP));
	ASSERT_OK(kdbus_free(mon, off));
	ASSERT_OK(kn_no_notify(mon));

	kdbus_conn_free(a);
	kdbus_conn_free(mon);
	return TEST_OK;
}

/* monitors cause no ID notifications; every other kind does */
KDBUS_TEST(notify, id_add_remove, 0)
{
	struct kdbus_conn *mon, *mon2, *a, *act, *ph;
	uint64_t id_a, id_act, id_ph;

	ASSERT_OK(kn_monitor(env->bus_path, &mon));
	ASSERT_OK(kn_monitor(env->bus_path, &mon2));
	ASSERT_OK(kn_no_notify(mon));

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	ASSERT_OK(kn_hello_named(env->bus_path, KDBUS_HELLO_POLICY_HOLDER,
				 "org.notify.Policy", KDBUS_DEFAULT_POOL, &ph));
	ASSERT_OK(kn_hello_named(env->bus_path, KDBUS_HELLO_ACTIVATOR,
				 "org.notify.Act", KDBUS_DEFAULT_POOL, &act));
	id_a = a->id;
	id_act = act->id;
	id_ph = ph->id;

	RUN(kn_expect_id(mon, KDBUS_ITEM_ID_ADD, id_a, 0));
	/* a policy holder's name is no registry name */
	RUN(kn_expect_id(mon, KDBUS_ITEM_ID_ADD, id_ph,
			 KDBUS_HELLO_POLICY_HOLDER));
	RUN(kn_expect_id(mon, KDBUS_ITEM_ID_ADD, id_act,
			 KDBUS_HELLO_ACTIVATOR));
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_ADD, "org.notify.Act", 0, 0,
			   id_act, KDBUS_NAME_ACTIVATOR | P));
	ASSERT_OK(kn_no_notify(mon));

	kdbus_conn_free(mon2);
	ASSERT_OK(kn_no_notify(mon));

	kdbus_conn_free(a);
	RUN(kn_expect_id(mon, KDBUS_ITEM_ID_REMOVE, id_a, 0));
	kdbus_conn_free(ph);
	RUN(kn_expect_id(mon, KDBUS_ITEM_ID_REMOVE, id_ph,
			 KDBUS_HELLO_POLICY_HOLDER));
	kdbus_conn_free(act);
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_REMOVE, "org.notify.Act",
			   id_act, KDBUS_NAME_ACTIVATOR | P, 0, 0));
	RUN(kn_expect_id(mon, KDBUS_ITEM_ID_REMOVE, id_act,
			 KDBUS_HELLO_ACTIVATOR));
	ASSERT_OK(kn_no_notify(mon));

	kdbus_conn_free(mon);
	return TEST_OK;
}

/*
 * One disconnect: the released names in creation order (a waiting
 * record silently), then REPLY_DEAD for the requests it did not answer,
 * then ID_REMOVE; sequence numbers increase.
 */
KDBUS_TEST(notify, disconnect_order, 0)
{
	struct kdbus_conn *mon, *a, *b, *c;
	struct kn_notify n;
	uint64_t rf, id_a, seq = 0;
	int i;

	ASSERT_OK(kdbus_hello(env->bus_path, FD, 0, KDBUS_DEFAULT_POOL, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, FD, 0, KDBUS_DEFAULT_POOL, &b));
	ASSERT_OK(kdbus_hello(env->bus_path, FD, 0, KDBUS_DEFAULT_POOL, &c));
	id_a = a->id;

	ASSERT_OK(kn_acquire(a, "org.notify.N2", 0, &rf));
	ASSERT_OK(kn_acquire(c, "org.notify.N3", 0, &rf));
	ASSERT_OK(kn_acquire(a, "org.notify.N3", Q, &rf));
	ASSERT_OK(kn_acquire(a, "org.notify.N1", Q, &rf));
	ASSERT_OK(kn_acquire(b, "org.notify.N1", Q, &rf));

	/* an unanswered request of b to a */
	ASSERT_OK(kdbus_send(b, a->id, 5, KDBUS_MSG_EXPECT_REPLY,
			     kdbus_now_ns() + 60000000000ULL, 0, NULL, 0));

	ASSERT_OK(kn_monitor(env->bus_path, &mon));
	kdbus_conn_free(a);

	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_REMOVE, "org.notify.N2",
			   id_a, P, 0, 0));
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_CHANGE, "org.notify.N1",
			   id_a, Q | P, b->id, Q | P));

	/* the REPLY_DEAD notifications go to b (monitors get copies) */
	ASSERT_OK(kn_next_notify(mon, &n));
	ASSERT_EQ(n.type, KDBUS_ITEM_REPLY_DEAD);
	ASSERT_EQ(n.dst_id, b->id);
	ASSERT_EQ(n.cookie_reply, 5);
	for (i = 0; i < 2; i++) {
		ASSERT_OK(kn_next_notify(mon, &n));
		if (n.type != KDBUS_ITEM_REPLY_DEAD)
			break;
	}
	ASSERT_EQ(n.type, KDBUS_ITEM_ID_REMOVE);
	ASSERT_EQ(n.old_id, id_a);
	ASSERT_OK(kn_no_notify(mon));

	/* b got its REPLY_DEAD (possibly twice, kdbus.message(7)) and nothing
	 * else */
	ASSERT_OK(kn_next_notify(b, &n));
	ASSERT_EQ(n.type, KDBUS_ITEM_REPLY_DEAD);
	ASSERT_EQ(n.cookie_reply, 5);
	seq = n.seq;
	while (kn_next_notify(b, &n) == 0) {
		ASSERT_EQ(n.type, KDBUS_ITEM_REPLY_DEAD);
		ASSERT(n.seq > seq);
	}

	kdbus_conn_free(b);
	kdbus_conn_free(c);
	kdbus_conn_free(mon);
	return TEST_OK;
}

/* ordinary connections without match rules receive no notifications */
KDBUS_TEST(notify, not_without_matches, 0)
{
	struct kdbus_conn *a, *b, *act;
	uint64_t rf;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	ASSERT_OK(kn_hello_named(env->bus_path, KDBUS_HELLO_ACTIVATOR,
				 "org.notify.Quiet", KDBUS_DEFAULT_POOL, &act));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &b));
	ASSERT_OK(kn_acquire(b, "org.notify.Quiet", 0, &rf));
	ASSERT_OK(kn_acquire(b, "org.notify.Other", 0, &rf));
	ASSERT_OK(kn_release(b, "org.notify.Other"));
	kdbus_conn_free(b);

	ASSERT_OK(kn_no_notify(a));
	/* activators never receive notifications */
	ASSERT_OK(kn_no_notify(act));

	kdbus_conn_free(a);
	kdbus_conn_free(act);
	return TEST_OK;
}

/* each transition yields exactly one notification, in order, and their
 * sequence numbers increase */
KDBUS_TEST(notify, exactly_once_in_order, 0)
{
	struct kdbus_conn *mon, *a, *b;
	struct kn_notify n;
	uint64_t rf, last = 0;
	int i;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &b));
	ASSERT_OK(kn_monitor(env->bus_path, &mon));

	for (i = 0; i < 20; i++) {
		ASSERT_OK(kn_acquire(a, "org.notify.Flip",
				     KDBUS_NAME_ALLOW_REPLACEMENT | Q, &rf));
		ASSERT_OK(kn_acquire(b, "org.notify.Flip",
				     KDBUS_NAME_ALLOW_REPLACEMENT | Q |
				     KDBUS_NAME_REPLACE_EXISTING, &rf));
		ASSERT_OK(kn_release(b, "org.notify.Flip"));
		ASSERT_OK(kn_release(a, "org.notify.Flip"));
	}

	for (i = 0; i < 20; i++) {
		static const uint64_t types[] = {
			KDBUS_ITEM_NAME_ADD, KDBUS_ITEM_NAME_CHANGE,
			KDBUS_ITEM_NAME_CHANGE, KDBUS_ITEM_NAME_REMOVE,
		};
		int j;

		for (j = 0; j < 4; j++) {
			ASSERT_OK(kn_next_notify(mon, &n));
			ASSERT_EQ(n.type, types[j]);
			ASSERT(n.seq > last);
			last = n.seq;
		}
	}
	ASSERT_OK(kn_no_notify(mon));

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	kdbus_conn_free(mon);
	return TEST_OK;
}
