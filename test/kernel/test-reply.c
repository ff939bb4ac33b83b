// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Reply tracking (kdbus.message(7)): replies matched by cookie,
 * EBADSLT for unexpected replies, REPLY_TIMEOUT and REPLY_DEAD
 * notifications, the pending-request limit.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

#define MSEC 1000000ULL

static int pair(struct kdbus_test_env *env, struct kdbus_conn **a,
		struct kdbus_conn **b)
{
	int r = kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, a);

	if (r < 0)
		return r;
	return kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, b);
}

static int request(struct kdbus_conn *a, uint64_t dst, uint64_t cookie,
		   uint64_t deadline)
{
	return kdbus_send(a, dst, cookie, KDBUS_MSG_EXPECT_REPLY, deadline, 0,
			  "req", 3);
}

/* check a REPLY_TIMEOUT / REPLY_DEAD notification (kdbus.message(7)) */
static int check_notification(struct kdbus_conn *c, struct kdbus_msg *m,
			      uint64_t type, uint64_t cookie)
{
	struct kdbus_item *it = m->items;

	ASSERT_EQ(m->src_id, KDBUS_SRC_ID_KERNEL);
	ASSERT_EQ(m->dst_id, c->id);
	ASSERT_EQ(m->payload_type, KDBUS_PAYLOAD_KERNEL);
	ASSERT_EQ(m->flags, 0);
	ASSERT_EQ(m->priority, 0);
	ASSERT_EQ(m->cookie, 0);
	ASSERT_EQ(m->cookie_reply, cookie);
	ASSERT_EQ(it->type, type);
	ASSERT_EQ(it->size, KDBUS_ITEM_HDR);
	it = KDBUS_ITEM_NEXT(it);
	ASSERT_EQ(it->type, KDBUS_ITEM_TIMESTAMP);
	ASSERT_EQ(it->size, 40);
	ASSERT_EQ(m->size, sizeof(*m) + 16 + 40);
	return TEST_OK;
}

KDBUS_TEST(reply, matched_once, 0)
{
	struct kdbus_conn *a, *b, *c;
	struct kdbus_msg *m;
	uint64_t off;

	ASSERT_OK(pair(env, &a, &b));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &c));
	ASSERT_OK(request(a, b->id, 100, kdbus_now_ns() + 10000 * MSEC));
	ASSERT_OK(kdbus_recv_msg(b, 0, 0, &m, &off));
	ASSERT_OK(kdbus_free(b, off));
	/* a third party cannot answer */
	ASSERT_ERR(kdbus_send(c, a->id, 1, 0, 100, 0, "r", 1), EBADSLT);
	/* wrong cookie */
	ASSERT_ERR(kdbus_send(b, a->id, 1, 0, 101, 0, "r", 1), EBADSLT);
	/* the right answer, once */
	ASSERT_OK(kdbus_send(b, a->id, 1, 0, 100, 0, "r", 1));
	ASSERT_ERR(kdbus_send(b, a->id, 1, 0, 100, 0, "r", 1), EBADSLT);
	ASSERT_OK(kdbus_recv_msg(a, 0, 0, &m, &off));
	ASSERT_EQ(m->cookie_reply, 100);
	ASSERT_EQ(m->src_id, b->id);
	ASSERT_OK(kdbus_free(a, off));
	ASSERT_ERR(kdbus_recv(a, 0, 0, NULL), EAGAIN);
	/* a reply without any request */
	ASSERT_ERR(kdbus_send(a, b->id, 1, 0, 555, 0, "r", 1), EBADSLT);
	/* cookie 0 is allowed with EXPECT_REPLY */
	ASSERT_OK(request(a, b->id, 0, kdbus_now_ns() + 10000 * MSEC));
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	kdbus_conn_free(c);
	return TEST_OK;
}

KDBUS_TEST(reply, timeout_notification, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_msg *m;
	uint64_t off, t0 = kdbus_now_ns();

	ASSERT_OK(pair(env, &a, &b));
	ASSERT_OK(request(a, b->id, 200, t0 + 300 * MSEC));
	/* nothing before the deadline */
	ASSERT_EQ(kdbus_wait_readable(a->fd, 100), 0);
	ASSERT_OK(kdbus_wait_recv(a, 5000, &m, &off));
	ASSERT(kdbus_now_ns() >= t0 + 300 * MSEC);
	RUN(check_notification(a, m, KDBUS_ITEM_REPLY_TIMEOUT, 200));
	ASSERT_OK(kdbus_free(a, off));
	/* a reply after the timeout is refused */
	ASSERT_OK(kdbus_recv_msg(b, 0, 0, &m, &off));
	ASSERT_OK(kdbus_free(b, off));
	ASSERT_ERR(kdbus_send(b, a->id, 1, 0, 200, 0, "late", 4), EBADSLT);
	ASSERT_ERR(kdbus_recv(a, 0, 0, NULL), EAGAIN);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* an async request whose deadline already passed: accepted, times out */
KDBUS_TEST(reply, past_deadline_async, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_msg *m;
	uint64_t off;

	ASSERT_OK(pair(env, &a, &b));
	ASSERT_OK(request(a, b->id, 300, 1));
	ASSERT_OK(kdbus_wait_recv(a, 5000, &m, &off));
	RUN(check_notification(a, m, KDBUS_ITEM_REPLY_TIMEOUT, 300));
	ASSERT_OK(kdbus_free(a, off));
	/* the request itself was delivered */
	ASSERT_OK(kdbus_recv_msg(b, 0, 0, &m, &off));
	ASSERT_EQ(m->cookie, 300);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* the replier disconnects after receiving: REPLY_DEAD */
KDBUS_TEST(reply, dead_after_receive, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_msg *m;
	uint64_t off;

	ASSERT_OK(pair(env, &a, &b));
	ASSERT_OK(request(a, b->id, 400, kdbus_now_ns() + 10000 * MSEC));
	ASSERT_OK(kdbus_recv_msg(b, 0, 0, &m, &off));
	kdbus_conn_free(b);
	ASSERT_OK(kdbus_wait_recv(a, 5000, &m, &off));
	RUN(check_notification(a, m, KDBUS_ITEM_REPLY_DEAD, 400));
	ASSERT_OK(kdbus_free(a, off));
	/* exactly one: the request had been received */
	ASSERT_ERR(kdbus_recv(a, 0, 0, NULL), EAGAIN);
	/* no timeout notification later either */
	kdbus_conn_free(a);
	return TEST_OK;
}

/* the replier disconnects with the request still queued: REPLY_DEAD
 * (possibly twice, kdbus.message(7)) and nothing else */
KDBUS_TEST(reply, dead_unreceived, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_msg *m;
	uint64_t off;
	int n = 0;

	ASSERT_OK(pair(env, &a, &b));
	ASSERT_OK(request(a, b->id, 500, kdbus_now_ns() + 10000 * MSEC));
	kdbus_conn_free(b);
	while (kdbus_wait_recv(a, n ? 200 : 5000, &m, &off) == 0) {
		RUN(check_notification(a, m, KDBUS_ITEM_REPLY_DEAD, 500));
		ASSERT_OK(kdbus_free(a, off));
		n++;
	}
	ASSERT(n >= 1 && n <= 2);
	kdbus_conn_free(a);
	return TEST_OK;
}

/* the replier drops the request: REPLY_DEAD */
KDBUS_TEST(reply, dead_on_drop, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_msg *m;
	uint64_t off;

	ASSERT_OK(pair(env, &a, &b));
	ASSERT_OK(request(a, b->id, 600, kdbus_now_ns() + 10000 * MSEC));
	ASSERT_OK(kdbus_recv(b, KDBUS_RECV_DROP, 0, NULL));
	ASSERT_OK(kdbus_wait_recv(a, 5000, &m, &off));
	RUN(check_notification(a, m, KDBUS_ITEM_REPLY_DEAD, 600));
	ASSERT_OK(kdbus_free(a, off));
	/* the record is gone */
	ASSERT_ERR(kdbus_send(b, a->id, 1, 0, 600, 0, "r", 1), EBADSLT);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* the requester disconnects: its records vanish silently */
KDBUS_TEST(reply, requester_gone, 0)
{
	struct kdbus_conn *a, *b, *c;
	struct kdbus_msg *m;
	uint64_t off;

	ASSERT_OK(pair(env, &a, &b));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &c));
	ASSERT_OK(request(a, b->id, 700, kdbus_now_ns() + 300 * MSEC));
	ASSERT_OK(kdbus_recv_msg(b, 0, 0, &m, &off));
	ASSERT_OK(kdbus_free(b, off));
	kdbus_conn_free(a);
	kdbus_msleep(600);
	/* b gets nothing (no notification is addressed to it) */
	ASSERT_ERR(kdbus_recv(b, 0, 0, NULL), EAGAIN);
	kdbus_conn_free(b);
	kdbus_conn_free(c);
	return TEST_OK;
}

/* KDBUS_CONN_MAX_REQUESTS_PENDING: the 129th request is EMLINK */
KDBUS_TEST(reply, pending_limit, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_msg *m;
	uint64_t off, dl = kdbus_now_ns() + 60000 * MSEC;
	int i, n = 0;

	ASSERT_OK(pair(env, &a, &b));
	for (i = 0; i < KDBUS_CONN_MAX_REQUESTS_PENDING; i++)
		ASSERT_OK(request(a, b->id, 1000 + i, dl));
	ASSERT_ERR(request(a, b->id, 5000, dl), EMLINK);
	/* nothing was sent by the refused call */
	while (kdbus_recv_msg(b, KDBUS_RECV_PEEK, 0, &m, &off) == 0) {
		ASSERT(m->cookie != 5000);
		ASSERT_OK(kdbus_recv(b, KDBUS_RECV_DROP, 0, NULL));
		ASSERT_OK(kdbus_free(b, off));
		n++;
	}
	ASSERT_EQ(n, KDBUS_CONN_MAX_REQUESTS_PENDING);
	/* dropping consumed the records (REPLY_DEAD each); room again */
	ASSERT_OK(request(a, b->id, 5001, dl));
	/* plain messages are never limited by it */
	ASSERT_OK(kdbus_send(a, b->id, 5002, 0, 0, 0, "x", 1));
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* answered requests free their slot */
KDBUS_TEST(reply, pending_released_by_reply, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_msg *m;
	uint64_t off, dl = kdbus_now_ns() + 60000 * MSEC;
	int i;

	ASSERT_OK(pair(env, &a, &b));
	for (i = 0; i < KDBUS_CONN_MAX_REQUESTS_PENDING * 2; i++) {
		uint64_t cookie;

		ASSERT_OK(request(a, b->id, 1 + i, dl));
		ASSERT_OK(kdbus_recv_msg(b, 0, 0, &m, &off));
		cookie = m->cookie;
		ASSERT_OK(kdbus_free(b, off));
		ASSERT_OK(kdbus_send(b, a->id, 0, 0, cookie, 0, "r", 1));
		ASSERT_OK(kdbus_recv_msg(a, 0, 0, &m, &off));
		ASSERT_EQ(m->cookie_reply, cookie);
		ASSERT_OK(kdbus_free(a, off));
	}
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}
