// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Monitors (kdbus.connection(7), kdbus.message(7)): privileged only; a copy of
 * every unicast, reply, unicast signal and broadcast, regardless of
 * matches; no SEND, names, matches or BYEBYE; invisible in notifications,
 * LIST and as a destination; a full monitor counts what it lost.
 */
#include <stdlib.h>
#include <unistd.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

#define BLOOM_WORDS (KDBUS_DEFAULT_BLOOM / 8)

/* a signal with an all-zero Bloom filter */
static int send_signal(struct kdbus_conn *c, uint64_t dst, uint64_t cookie)
{
	static const uint64_t zero[BLOOM_WORDS];

	return kdbus_send_bloom_signal(c, dst, cookie, zero, 0);
}

/* the next message in c: from src to dst with this cookie */
static int expect_msg(struct kdbus_conn *c, uint64_t src, uint64_t dst,
		      uint64_t cookie)
{
	struct kdbus_msg *msg;
	uint64_t off;

	ASSERT_OK(kdbus_recv_msg(c, 0, 0, &msg, &off));
	ASSERT_EQ(msg->src_id, src);
	ASSERT_EQ(msg->dst_id, dst);
	ASSERT_EQ(msg->cookie, cookie);
	ASSERT_OK(kdbus_free(c, off));
	return TEST_OK;
}

static int expect_none(struct kdbus_conn *c)
{
	ASSERT_ERR(kdbus_recv(c, 0, 0, NULL), EAGAIN);
	return TEST_OK;
}

static int add_empty_match(struct kdbus_conn *c)
{
	struct kdbus_cmd_match m = { .size = sizeof(m), .cookie = 1 };

	return kdbus_ioctl(c->fd, KDBUS_CMD_MATCH_ADD, &m);
}

/*
 * Monitor copies come with matches (the signals issue): a module without
 * MATCH_ADD answers ENOTTY here and the test is skipped.
 */
static int probe_signals(struct kdbus_conn *c)
{
	struct kdbus_cmd_match m = { .size = sizeof(m), .cookie = 1 };

	ASSERT_OK(kdbus_ioctl(c->fd, KDBUS_CMD_MATCH_ADD, &m));
	ASSERT_OK(kdbus_ioctl(c->fd, KDBUS_CMD_MATCH_REMOVE, &m));
	return TEST_OK;
}

/* unicasts, replies, signals and broadcasts are all copied */
KDBUS_TEST(monitor, sees_all_traffic, 0)
{
	struct kdbus_conn *a, *b, *mon;

	ASSERT_OK(kdbus_hello(env->bus_path, KDBUS_HELLO_MONITOR, 0,
			      KDBUS_DEFAULT_POOL, &mon));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &b));
	RUN(probe_signals(a));
	/* the two ID_ADD notifications */
	RUN(expect_msg(mon, KDBUS_SRC_ID_KERNEL, KDBUS_DST_ID_BROADCAST, 0));
	RUN(expect_msg(mon, KDBUS_SRC_ID_KERNEL, KDBUS_DST_ID_BROADCAST, 0));
	RUN(expect_none(mon));

	/* a method call and its reply */
	ASSERT_OK(kdbus_send(a, b->id, 10, KDBUS_MSG_EXPECT_REPLY,
			     kdbus_now_ns() + 10000000000ULL, 0, "call", 4));
	RUN(expect_msg(mon, a->id, b->id, 10));
	RUN(expect_msg(b, a->id, b->id, 10));
	ASSERT_OK(kdbus_send(b, a->id, 11, 0, 10, 0, "reply", 5));
	RUN(expect_msg(mon, b->id, a->id, 11));
	RUN(expect_msg(a, b->id, a->id, 11));

	/* a unicast signal b has no match for: dropped, but copied */
	ASSERT_OK(send_signal(a, b->id, 12));
	RUN(expect_none(b));
	RUN(expect_msg(mon, a->id, b->id, 12));

	/* a broadcast nobody subscribed to */
	ASSERT_OK(send_signal(a, KDBUS_DST_ID_BROADCAST, 13));
	RUN(expect_none(b));
	RUN(expect_none(a));
	RUN(expect_msg(mon, a->id, KDBUS_DST_ID_BROADCAST, 13));

	/* one that b takes: still exactly one copy for the monitor */
	ASSERT_OK(add_empty_match(b));
	ASSERT_OK(send_signal(a, KDBUS_DST_ID_BROADCAST, 14));
	RUN(expect_msg(mon, a->id, KDBUS_DST_ID_BROADCAST, 14));
	RUN(expect_msg(b, a->id, KDBUS_DST_ID_BROADCAST, 14));
	RUN(expect_none(mon));

	kdbus_conn_free(b);
	kdbus_conn_free(a);
	kdbus_conn_free(mon);
	return TEST_OK;
}

/* what a monitor may not do, and who may not create one */
KDBUS_TEST(monitor, restrictions, 0)
{
	struct kdbus_conn *a, *mon, *x = NULL;
	struct kdbus_cmd *cmd;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, KDBUS_HELLO_MONITOR, 0,
			      KDBUS_DEFAULT_POOL, &mon));

	ASSERT_ERR(kdbus_send(mon, a->id, 1, 0, 0, 0, "x", 1), EOPNOTSUPP);
	ASSERT_ERR(send_signal(mon, KDBUS_DST_ID_BROADCAST, 1), EOPNOTSUPP);
	ASSERT_ERR(add_empty_match(mon), EOPNOTSUPP);
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_str(cmd, KDBUS_ITEM_NAME, "org.example.Monitor");
	ASSERT_ERR(kdbus_ioctl(mon->fd, KDBUS_CMD_NAME_ACQUIRE, cmd),
		   EOPNOTSUPP);
	cmd_free(cmd);
	ASSERT_ERR(kdbus_byebye(mon->fd), EOPNOTSUPP);

	/* nobody can send to it */
	ASSERT_ERR(kdbus_send(a, mon->id, 1, 0, 0, 0, "x", 1), ENXIO);
	ASSERT_ERR(send_signal(a, mon->id, 2), ENXIO);

	/* only a bus owner may create one */
	ASSERT_ERR(kdbus_hello_as_uid(env->bus_path, 4501,
				      KDBUS_HELLO_MONITOR, 0,
				      KDBUS_DEFAULT_POOL, &x), EPERM);

	/* the monitor is still alive and can receive */
	ASSERT_ERR(kdbus_recv(mon, 0, 0, NULL), EAGAIN);

	kdbus_conn_free(mon);
	kdbus_conn_free(a);
	return TEST_OK;
}

/* no ID notifications for monitors, not in LIST */
KDBUS_TEST(monitor, invisible, 0)
{
	struct kdbus_conn *w, *mon, *c;
	struct kdbus_cmd_list list = { .size = sizeof(list),
				       .flags = KDBUS_LIST_UNIQUE };
	struct kdbus_info *info;
	uint64_t c_id, off;
	int found_w = 0, found_mon = 0;
	uint8_t *p, *end;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &w));
	ASSERT_OK(add_empty_match(w));

	ASSERT_OK(kdbus_hello(env->bus_path, KDBUS_HELLO_MONITOR, 0,
			      KDBUS_DEFAULT_POOL, &mon));
	RUN(expect_none(w));

	/* an ordinary connection is announced (the match works) */
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &c));
	c_id = c->id;
	{
		struct kdbus_msg *msg;

		ASSERT_OK(kdbus_recv_msg(w, 0, 0, &msg, &off));
		ASSERT_EQ(msg->items[0].type, KDBUS_ITEM_ID_ADD);
		ASSERT_EQ(msg->items[0].id_change.id, c_id);
		ASSERT_OK(kdbus_free(w, off));
	}
	kdbus_conn_free(c);
	{
		struct kdbus_msg *msg;

		ASSERT_OK(kdbus_recv_msg(w, 0, 0, &msg, &off));
		ASSERT_EQ(msg->items[0].type, KDBUS_ITEM_ID_REMOVE);
		ASSERT_EQ(msg->items[0].id_change.id, c_id);
		ASSERT_OK(kdbus_free(w, off));
	}

	/* LIST shows w but not the monitor */
	ASSERT_OK(kdbus_ioctl(w->fd, KDBUS_CMD_LIST, &list));
	p = w->pool + list.offset;
	end = p + list.list_size;
	while (p < end) {
		info = (struct kdbus_info *)p;
		ASSERT(info->size >= sizeof(*info));
		if (info->id == w->id)
			found_w = 1;
		if (info->id == mon->id)
			found_mon = 1;
		p += KDBUS_ALIGN8(info->size);
	}
	ASSERT_OK(kdbus_free(w, list.offset));
	ASSERT(found_w);
	ASSERT(!found_mon);

	/* and its departure is not announced either */
	kdbus_conn_free(mon);
	RUN(expect_none(w));

	kdbus_conn_free(w);
	return TEST_OK;
}

#define N_FLOOD 40

/* a monitor that cannot take a copy loses it and counts it */
KDBUS_TEST(monitor, full_monitor_drops, 0)
{
	struct kdbus_conn *a, *b, *mon;
	struct kdbus_cmd_recv rc;
	unsigned int i, n = 0;
	uint64_t dropped;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &b));
	ASSERT_OK(kdbus_hello(env->bus_path, KDBUS_HELLO_MONITOR, 0,
			      KDBUS_PAGE, &mon));
	RUN(probe_signals(a));

	/* the sender never notices */
	for (i = 1; i <= N_FLOOD; i++)
		ASSERT_OK(kdbus_send(a, b->id, i, 0, 0, 0, "unicast", 7));

	for (i = 1; i <= N_FLOOD; i++)
		RUN(expect_msg(b, a->id, b->id, i));

	ASSERT_OK(kdbus_recv(mon, 0, 0, &rc));
	ASSERT(rc.dropped_msgs > 0);
	ASSERT(rc.return_flags & KDBUS_RECV_RETURN_DROPPED_MSGS);
	dropped = rc.dropped_msgs;
	ASSERT_OK(kdbus_free(mon, rc.msg.offset));
	n = 1;
	while (kdbus_recv(mon, 0, 0, &rc) == 0) {
		ASSERT_OK(kdbus_free(mon, rc.msg.offset));
		n++;
	}
	ASSERT_EQ(rc.dropped_msgs, 0);
	ASSERT_EQ(n + dropped, N_FLOOD);

	kdbus_conn_free(mon);
	kdbus_conn_free(b);
	kdbus_conn_free(a);
	return TEST_OK;
}
