// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Focused checks of the unicast data path written alongside the kernel
 * side (kernel/message.c, queue.c, reply.c): the delivered layout of
 * kdbus.message(7) byte by byte, priorities, PEEK/DROP/FREE, fd passing,
 * reply tracking (timeouts, dead peers, the pending limit), synchronous
 * calls and the receive-queue quota (kdbus.pool(7), kdbus.message(7)).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

#define MS (1000ULL * 1000ULL)

static int two_conns(struct kdbus_test_env *env, uint64_t flags_b,
		     uint64_t attach_b, size_t pool_b,
		     struct kdbus_conn **a, struct kdbus_conn **b)
{
	int r;

	r = kdbus_hello(env->bus_path, KDBUS_HELLO_ACCEPT_FD, 0,
			KDBUS_DEFAULT_POOL, a);
	if (r < 0)
		return r;
	return kdbus_hello(env->bus_path, flags_b, attach_b, pool_b, b);
}

/* kdbus.message(7) worked example, with and without the padding chunk */
KDBUS_TEST(msgk, layout, 0)
{
	static const char data[5] = "hello";
	struct kdbus_conn *a, *b;
	struct kdbus_cmd_recv recv;
	struct kdbus_vec v;
	struct kdbus_item *it;
	struct kdbus_msg *m, *r;
	uint64_t seq1;
	uint8_t *p;

	ASSERT_OK(two_conns(env, 0, KDBUS_ATTACH_TIMESTAMP, KDBUS_DEFAULT_POOL,
			    &a, &b));

	/* 1: one 5-byte vec */
	m = kdbus_msg_new(b->id, 1, 0, 0, data, sizeof(data));
	ASSERT_EQ(m->size, 96);
	ASSERT_OK(kdbus_send_msg(a->fd, 0, m, NULL));
	cmd_free(m);
	ASSERT_OK(kdbus_recv(b, 0, 0, &recv));
	ASSERT_EQ(recv.msg.msg_size, 144);
	r = (struct kdbus_msg *)(b->pool + recv.msg.offset);
	ASSERT_EQ(r->size, 136);
	ASSERT_EQ(r->src_id, a->id);
	ASSERT_EQ(r->dst_id, b->id);
	ASSERT_EQ(r->cookie, 1);
	it = r->items;
	ASSERT_EQ(it->type, KDBUS_ITEM_PAYLOAD_OFF);
	ASSERT_EQ(it->size, 32);
	ASSERT_EQ(it->vec.size, 5);
	ASSERT_EQ(it->vec.offset, 136);
	it = KDBUS_ITEM_NEXT(it);
	ASSERT_EQ(it->type, KDBUS_ITEM_TIMESTAMP);
	ASSERT_EQ(it->size, 40);
	ASSERT(it->timestamp.seqnum > 0);
	ASSERT(it->timestamp.monotonic_ns > 0 &&
	       it->timestamp.monotonic_ns <= kdbus_now_ns());
	seq1 = it->timestamp.seqnum;
	p = (uint8_t *)r;
	ASSERT(memcmp(p + 136, "hello\0\0\0", 8) == 0);
	ASSERT_OK(kdbus_free(b, recv.msg.offset));

	/* 2: plus a padding-only chunk of size 3 */
	m = kdbus_msg_new(b->id, 2, 0, 0, data, sizeof(data));
	v.size = 3;
	v.address = 0;
	cmd_add_item(m, KDBUS_ITEM_PAYLOAD_VEC, &v, sizeof(v));
	ASSERT_OK(kdbus_send_msg(a->fd, 0, m, NULL));
	cmd_free(m);
	ASSERT_OK(kdbus_recv(b, 0, 0, &recv));
	ASSERT_EQ(recv.msg.msg_size, 176);
	r = (struct kdbus_msg *)(b->pool + recv.msg.offset);
	ASSERT_EQ(r->size, 168);
	it = r->items;
	ASSERT_EQ(it->vec.offset, 168);
	it = KDBUS_ITEM_NEXT(it);
	ASSERT_EQ(it->type, KDBUS_ITEM_PAYLOAD_OFF);
	ASSERT_EQ(it->vec.size, 3);
	ASSERT_EQ(it->vec.offset, ~0ULL);
	it = KDBUS_ITEM_NEXT(it);
	ASSERT_EQ(it->type, KDBUS_ITEM_TIMESTAMP);
	/* sequence numbers increase per bus */
	ASSERT(it->timestamp.seqnum > seq1);
	p = (uint8_t *)r;
	ASSERT(memcmp(p + 168, "hello\0\0\0", 8) == 0);
	ASSERT_OK(kdbus_free(b, recv.msg.offset));

	/* 3: no metadata wanted, no payload: size is the trimmed size */
	ASSERT_OK(kdbus_update_attach(b, _KDBUS_ATTACH_ALL, 0));
	ASSERT_OK(kdbus_send(a, b->id, 3, 0, 0, 0, NULL, 0));
	ASSERT_OK(kdbus_recv(b, 0, 0, &recv));
	r = (struct kdbus_msg *)(b->pool + recv.msg.offset);
	ASSERT_EQ(r->size, 64);
	ASSERT_EQ(recv.msg.msg_size, 64);
	ASSERT_OK(kdbus_free(b, recv.msg.offset));

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

static int recv_cookie(struct kdbus_conn *c, uint64_t flags, int64_t prio,
		       uint64_t *cookie)
{
	struct kdbus_msg *m;
	uint64_t off;
	int r;

	r = kdbus_recv_msg(c, flags, prio, &m, &off);
	if (r < 0)
		return r;
	*cookie = m->cookie;
	return kdbus_free(c, off);
}

KDBUS_TEST(msgk, priority, 0)
{
	static const int64_t prio[] = { 3, -1, 5, -1, 0 };
	static const uint64_t by_prio[] = { 2, 4, 5, 1, 3 };
	struct kdbus_conn *a, *b;
	uint64_t cookie;
	unsigned int i;

	ASSERT_OK(two_conns(env, 0, 0, KDBUS_DEFAULT_POOL, &a, &b));

	for (i = 0; i < 5; i++)
		ASSERT_OK(kdbus_send(a, b->id, i + 1, 0, 0, prio[i], NULL, 0));

	/* nothing as urgent as -2 */
	ASSERT_ERR(kdbus_recv(b, KDBUS_RECV_USE_PRIORITY, -2, NULL), EAGAIN);
	for (i = 0; i < 5; i++) {
		ASSERT_OK(recv_cookie(b, KDBUS_RECV_USE_PRIORITY, 10,
				      &cookie));
		ASSERT_EQ(cookie, by_prio[i]);
	}
	ASSERT_ERR(kdbus_recv(b, 0, 0, NULL), EAGAIN);

	/* without USE_PRIORITY: arrival order */
	for (i = 0; i < 5; i++)
		ASSERT_OK(kdbus_send(a, b->id, i + 1, 0, 0, prio[i], NULL, 0));
	/* a priority receive in the middle must keep the rest consistent */
	ASSERT_OK(recv_cookie(b, KDBUS_RECV_USE_PRIORITY, 0, &cookie));
	ASSERT_EQ(cookie, 2);
	for (i = 0; i < 5; i++) {
		if (i == 1)
			continue;
		ASSERT_OK(recv_cookie(b, 0, 0, &cookie));
		ASSERT_EQ(cookie, i + 1);
	}
	ASSERT_ERR(kdbus_recv(b, 0, 0, NULL), EAGAIN);
	ASSERT_ERR(kdbus_recv(b, KDBUS_RECV_DROP | KDBUS_RECV_USE_PRIORITY,
			      0, NULL), EINVAL);

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

KDBUS_TEST(msgk, peek_drop_free, 0)
{
	struct kdbus_cmd_recv r1, r2;
	struct kdbus_conn *a, *b;
	uint64_t cookie;

	ASSERT_OK(two_conns(env, 0, 0, KDBUS_DEFAULT_POOL, &a, &b));
	ASSERT_OK(kdbus_send(a, b->id, 7, 0, 0, 0, "x", 1));
	ASSERT_OK(kdbus_send(a, b->id, 8, 0, 0, 0, "y", 1));

	ASSERT_OK(kdbus_recv(b, KDBUS_RECV_PEEK, 0, &r1));
	ASSERT_OK(kdbus_recv(b, KDBUS_RECV_PEEK, 0, &r2));
	ASSERT_EQ(r1.msg.offset, r2.msg.offset);
	/* FREE of a peeked slice succeeds, the message stays queued */
	ASSERT_OK(kdbus_free(b, r1.msg.offset));
	ASSERT_ERR(kdbus_free(b, r1.msg.offset), ENXIO);
	ASSERT_OK(kdbus_recv(b, KDBUS_RECV_PEEK, 0, &r2));
	ASSERT_EQ(r1.msg.offset, r2.msg.offset);
	/* DROP: gone, and the "no slice" values are returned */
	ASSERT_OK(kdbus_recv(b, KDBUS_RECV_DROP, 0, &r2));
	ASSERT_EQ(r2.msg.offset, b->pool_size);
	ASSERT_EQ(r2.msg.msg_size, 0);
	/* the peeked slice stays allocated until freed */
	ASSERT_OK(kdbus_free(b, r1.msg.offset));
	ASSERT_OK(recv_cookie(b, 0, 0, &cookie));
	ASSERT_EQ(cookie, 8);
	ASSERT_ERR(kdbus_recv(b, 0, 0, &r2), EAGAIN);
	ASSERT_EQ(r2.msg.offset, b->pool_size);
	/* FREE of garbage */
	ASSERT_ERR(kdbus_free(b, 8), ENXIO);
	ASSERT_OK(kdbus_free(b, b->pool_size));

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

static struct kdbus_msg *msg_with_fds(uint64_t dst, const int *fds,
				      unsigned int n)
{
	struct kdbus_msg *m = kdbus_msg_new(dst, 1, 0, 0, NULL, 0);

	cmd_add_item(m, KDBUS_ITEM_FDS, fds, n * sizeof(int));
	return m;
}

KDBUS_TEST(msgk, fds, 0)
{
	struct kdbus_conn *a, *b, *nofd;
	struct kdbus_cmd_recv recv;
	struct kdbus_msg *m, *r;
	struct kdbus_item *it;
	int p[2], fds[17], i;
	char c = 0;

	ASSERT_OK(two_conns(env, KDBUS_HELLO_ACCEPT_FD, 0, KDBUS_DEFAULT_POOL,
			    &a, &b));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &nofd));
	ASSERT(pipe(p) == 0);

	/* refused by a receiver without ACCEPT_FD, nothing queued */
	m = msg_with_fds(nofd->id, &p[0], 1);
	ASSERT_ERR(kdbus_send_msg(a->fd, 0, m, NULL), ECOMM);
	cmd_free(m);
	ASSERT_ERR(kdbus_recv(nofd, 0, 0, NULL), EAGAIN);

	/* a kdbus handle or a bad fd is refused */
	m = msg_with_fds(b->id, &a->fd, 1);
	ASSERT_ERR(kdbus_send_msg(a->fd, 0, m, NULL), EOPNOTSUPP);
	cmd_free(m);
	fds[0] = 1000;
	m = msg_with_fds(b->id, fds, 1);
	ASSERT_ERR(kdbus_send_msg(a->fd, 0, m, NULL), EBADF);
	cmd_free(m);
	for (i = 0; i < 17; i++)
		fds[i] = p[0];
	m = msg_with_fds(b->id, fds, 17);
	ASSERT_ERR(kdbus_send_msg(a->fd, 0, m, NULL), EMFILE);
	cmd_free(m);

	/* accepted; the sender may close its copy right away */
	m = msg_with_fds(b->id, &p[0], 1);
	ASSERT_OK(kdbus_send_msg(a->fd, 0, m, NULL));
	cmd_free(m);
	close(p[0]);

	/* PEEK installs nothing */
	ASSERT_OK(kdbus_recv(b, KDBUS_RECV_PEEK, 0, &recv));
	r = (struct kdbus_msg *)(b->pool + recv.msg.offset);
	it = kdbus_msg_find(r, KDBUS_ITEM_FDS);
	ASSERT(it);
	ASSERT_EQ(it->fds[0], -1);

	ASSERT_OK(kdbus_recv(b, 0, 0, &recv));
	ASSERT_EQ(recv.msg.return_flags, 0);
	r = (struct kdbus_msg *)(b->pool + recv.msg.offset);
	it = kdbus_msg_find(r, KDBUS_ITEM_FDS);
	ASSERT(it);
	ASSERT(it->fds[0] >= 0);
	ASSERT(fcntl(it->fds[0], F_GETFD) == FD_CLOEXEC);
	ASSERT(write(p[1], "z", 1) == 1);
	ASSERT(read(it->fds[0], &c, 1) == 1 && c == 'z');
	close(it->fds[0]);
	ASSERT_OK(kdbus_free(b, recv.msg.offset));

	close(p[1]);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	kdbus_conn_free(nofd);
	return TEST_OK;
}

KDBUS_TEST(msgk, bad_vec, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_msg *m;

	ASSERT_OK(two_conns(env, 0, 0, KDBUS_DEFAULT_POOL, &a, &b));

	/* unmapped: faults at copy time */
	m = kdbus_msg_new(b->id, 1, 0, 0, (void *)0x1000, 16);
	ASSERT_ERR(kdbus_send_msg(a->fd, 0, m, NULL), EFAULT);
	cmd_free(m);
	/* kernel address: fails the range check */
	m = kdbus_msg_new(b->id, 1, 0, 0, (void *)0xffffffff81000000ULL, 16);
	ASSERT_ERR(kdbus_send_msg(a->fd, 0, m, NULL), EFAULT);
	cmd_free(m);
	ASSERT_ERR(kdbus_recv(b, 0, 0, NULL), EAGAIN);

	/* unknown destination, kernel id */
	ASSERT_ERR(kdbus_send(a, 0x7fffffff, 1, 0, 0, 0, NULL, 0), ENXIO);
	/* a reply nobody waits for */
	ASSERT_ERR(kdbus_send(a, b->id, 1, 0, 99, 0, NULL, 0), EBADSLT);

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

static int expect_notification(struct kdbus_conn *c, uint64_t type,
			       uint64_t cookie)
{
	struct kdbus_msg *m;
	uint64_t off;
	int r;

	r = kdbus_wait_recv(c, 3000, &m, &off);
	if (r < 0)
		return r;
	if (m->src_id != KDBUS_SRC_ID_KERNEL ||
	    m->payload_type != KDBUS_PAYLOAD_KERNEL ||
	    m->items[0].type != type || m->cookie_reply != cookie ||
	    KDBUS_ITEM_NEXT(m->items)->type != KDBUS_ITEM_TIMESTAMP) {
		DIAG("unexpected notification: src %llu type %llu cookie %llu",
		     (unsigned long long)m->src_id,
		     (unsigned long long)m->items[0].type,
		     (unsigned long long)m->cookie_reply);
		return -EBADMSG;
	}
	return kdbus_free(c, off);
}

KDBUS_TEST(msgk, reply_timeout, 0)
{
	struct kdbus_conn *a, *b;
	uint64_t cookie;

	ASSERT_OK(two_conns(env, 0, 0, KDBUS_DEFAULT_POOL, &a, &b));
	ASSERT_OK(kdbus_send(a, b->id, 42, KDBUS_MSG_EXPECT_REPLY,
			     kdbus_now_ns() + 100 * MS, 0, NULL, 0));
	ASSERT_OK(expect_notification(a, KDBUS_ITEM_REPLY_TIMEOUT, 42));
	/* the late reply is refused */
	ASSERT_OK(recv_cookie(b, 0, 0, &cookie));
	ASSERT_EQ(cookie, 42);
	ASSERT_ERR(kdbus_send(b, a->id, 1, 0, 42, 0, NULL, 0), EBADSLT);

	/* a deadline already in the past times out at once */
	ASSERT_OK(kdbus_send(a, b->id, 43, KDBUS_MSG_EXPECT_REPLY, 1, 0,
			     NULL, 0));
	ASSERT_OK(expect_notification(a, KDBUS_ITEM_REPLY_TIMEOUT, 43));

	/* answered in time: the reply arrives, no timeout follows */
	ASSERT_OK(kdbus_send(a, b->id, 44, KDBUS_MSG_EXPECT_REPLY,
			     kdbus_now_ns() + 200 * MS, 0, NULL, 0));
	ASSERT_OK(kdbus_send(b, a->id, 2, 0, 44, 0, "r", 1));
	ASSERT_OK(recv_cookie(a, 0, 0, &cookie));
	ASSERT_EQ(cookie, 2);
	/* only once */
	ASSERT_ERR(kdbus_send(b, a->id, 3, 0, 44, 0, NULL, 0), EBADSLT);
	kdbus_msleep(400);
	ASSERT_ERR(kdbus_recv(a, 0, 0, NULL), EAGAIN);

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

KDBUS_TEST(msgk, reply_dead, 0)
{
	struct kdbus_conn *a, *b;
	uint64_t cookie;

	ASSERT_OK(two_conns(env, 0, 0, KDBUS_DEFAULT_POOL, &a, &b));

	/* received but unanswered: one REPLY_DEAD when the peer leaves */
	ASSERT_OK(kdbus_send(a, b->id, 5, KDBUS_MSG_EXPECT_REPLY,
			     kdbus_now_ns() + 10000 * MS, 0, NULL, 0));
	ASSERT_OK(recv_cookie(b, 0, 0, &cookie));
	/* still queued: REPLY_DEAD twice (kdbus.message(7)) */
	ASSERT_OK(kdbus_send(a, b->id, 6, KDBUS_MSG_EXPECT_REPLY,
			     kdbus_now_ns() + 10000 * MS, 0, NULL, 0));
	kdbus_conn_free(b);

	ASSERT_OK(expect_notification(a, KDBUS_ITEM_REPLY_DEAD, 6));
	/* the rest, in any order of cookies: 5 and 6 */
	ASSERT_OK(kdbus_wait_readable(a->fd, 1000));
	{
		struct kdbus_msg *m;
		uint64_t off, seen = 0;
		int i;

		for (i = 0; i < 2; i++) {
			ASSERT_OK(kdbus_recv_msg(a, 0, 0, &m, &off));
			ASSERT_EQ(m->items[0].type, KDBUS_ITEM_REPLY_DEAD);
			seen |= 1ULL << m->cookie_reply;
			ASSERT_OK(kdbus_free(a, off));
		}
		ASSERT_EQ(seen, (1ULL << 5) | (1ULL << 6));
	}
	ASSERT_ERR(kdbus_recv(a, 0, 0, NULL), EAGAIN);

	/* DROP of a request: REPLY_DEAD at once */
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &b));
	ASSERT_OK(kdbus_send(a, b->id, 7, KDBUS_MSG_EXPECT_REPLY,
			     kdbus_now_ns() + 10000 * MS, 0, NULL, 0));
	ASSERT_OK(kdbus_recv(b, KDBUS_RECV_DROP, 0, NULL));
	ASSERT_OK(expect_notification(a, KDBUS_ITEM_REPLY_DEAD, 7));

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

KDBUS_TEST(msgk, pending_limit, 0)
{
	struct kdbus_conn *a, *b;
	uint64_t deadline = kdbus_now_ns() + 60000 * MS;
	unsigned int i;

	ASSERT_OK(two_conns(env, 0, 0, KDBUS_DEFAULT_POOL, &a, &b));
	for (i = 0; i < KDBUS_CONN_MAX_REQUESTS_PENDING; i++)
		ASSERT_OK(kdbus_send(a, b->id, i + 1, KDBUS_MSG_EXPECT_REPLY,
				     deadline, 0, NULL, 0));
	ASSERT_ERR(kdbus_send(a, b->id, 1000, KDBUS_MSG_EXPECT_REPLY,
			      deadline, 0, NULL, 0), EMLINK);
	/* replies do not count */
	ASSERT_OK(kdbus_send(b, a->id, 1, 0, 1, 0, NULL, 0));
	ASSERT_OK(kdbus_send(a, b->id, 1001, KDBUS_MSG_EXPECT_REPLY,
			     deadline, 0, NULL, 0));
	ASSERT_ERR(kdbus_send(a, b->id, 1002, KDBUS_MSG_EXPECT_REPLY,
			      deadline, 0, NULL, 0), EMLINK);

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* child: answer one call on c (or close c if close_instead) */
static void serve_one(struct kdbus_conn *c, int delay_ms, bool close_instead)
{
	struct kdbus_msg *m;
	uint64_t off, cookie, src;

	if (kdbus_wait_recv(c, 5000, &m, &off) < 0)
		_exit(2);
	cookie = m->cookie;
	src = m->src_id;
	kdbus_free(c, off);
	if (delay_ms)
		kdbus_msleep(delay_ms);
	if (close_instead) {
		kdbus_conn_free(c);
		_exit(0);
	}
	if (kdbus_send(c, src, 99, 0, cookie, 0, "pong", 4) < 0)
		_exit(3);
	_exit(0);
}

KDBUS_TEST(msgk, sync, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_msg *reply;
	const uint8_t *data;
	uint64_t off, size, bid;
	pid_t pid;

	ASSERT_OK(two_conns(env, 0, 0, KDBUS_DEFAULT_POOL, &a, &b));
	bid = b->id;

	/* answered */
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0)
		serve_one(b, 50, false);
	ASSERT_OK(kdbus_call_sync(a, b->id, 11, kdbus_now_ns() + 5000 * MS,
				  "ping", 4, &reply, &off));
	ASSERT_EQ(reply->cookie_reply, 11);
	ASSERT_EQ(reply->src_id, b->id);
	data = kdbus_msg_payload(reply, 0, &size);
	ASSERT(data && size == 4 && memcmp(data, "pong", 4) == 0);
	ASSERT_OK(kdbus_free(a, off));
	ASSERT_EQ(kdbus_wait_child(pid), 0);
	/* the reply never shows up in the queue */
	ASSERT_ERR(kdbus_recv(a, 0, 0, NULL), EAGAIN);

	/* timed out; the late reply is refused */
	ASSERT_ERR(kdbus_call_sync(a, b->id, 12, kdbus_now_ns() + 100 * MS,
				   NULL, 0, NULL, NULL), ETIMEDOUT);
	ASSERT_OK(kdbus_recv(b, KDBUS_RECV_DROP, 0, NULL));
	ASSERT_ERR(kdbus_send(b, a->id, 1, 0, 12, 0, NULL, 0), EBADSLT);
	/* deadline already passed: nothing is sent */
	ASSERT_ERR(kdbus_call_sync(a, b->id, 13, 1, NULL, 0, NULL, NULL),
		   ETIMEDOUT);
	ASSERT_ERR(kdbus_recv(b, 0, 0, NULL), EAGAIN);

	/* the peer closes mid-call */
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0)
		serve_one(b, 50, true);
	kdbus_conn_free(b);
	ASSERT_ERR(kdbus_call_sync(a, bid, 14, kdbus_now_ns() + 5000 * MS,
				   NULL, 0, NULL, NULL), EPIPE);
	ASSERT_EQ(kdbus_wait_child(pid), 0);

	kdbus_conn_free(a);
	return TEST_OK;
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* an interrupted call returns EINTR; re-issuing it resumes the wait */
KDBUS_TEST(msgk, sync_interrupted, 0)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct kdbus_conn *a, *b;
	struct kdbus_msg *reply;
	uint64_t off, deadline;
	pid_t pid;

	ASSERT_OK(two_conns(env, 0, 0, KDBUS_DEFAULT_POOL, &a, &b));
	ASSERT(sigaction(SIGALRM, &sa, NULL) == 0);	/* no SA_RESTART */

	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0)
		serve_one(b, 400, false);

	deadline = kdbus_now_ns() + 5000 * MS;
	ualarm(100 * 1000, 0);
	ASSERT_ERR(kdbus_call_sync(a, b->id, 21, deadline, NULL, 0, NULL,
				   NULL), EINTR);
	/* resume: the reply arrives (or arrived) and is returned */
	ASSERT_OK(kdbus_call_sync(a, b->id, 21, deadline, NULL, 0, &reply,
				  &off));
	ASSERT_EQ(reply->cookie_reply, 21);
	ASSERT_OK(kdbus_free(a, off));
	ASSERT_EQ(kdbus_wait_child(pid), 0);
	/* the request was sent once only */
	ASSERT_ERR(kdbus_recv(b, 0, 0, NULL), EAGAIN);

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* a receiver that never receives: ENOBUFS; one that never frees: EXFULL */
KDBUS_TEST(msgk, quota, 0)
{
	static uint8_t buf[8192];
	struct kdbus_conn *a, *b;
	struct kdbus_cmd_recv recv;
	unsigned int i;
	int r = 0;

	ASSERT_OK(two_conns(env, 0, 0, KDBUS_PAGE * 64, &a, &b));

	/* 256 KiB pool: one user may take about a sixth of it */
	for (i = 0; i < 1000; i++) {
		r = kdbus_send(a, b->id, i + 1, 0, 0, 0, buf, sizeof(buf));
		if (r < 0)
			break;
	}
	ASSERT_EQ(r, -ENOBUFS);
	ASSERT(i > 3 && i < 16);

	/* small messages: the per-user message count */
	ASSERT_OK(kdbus_recv(b, KDBUS_RECV_DROP, 0, NULL));
	while (kdbus_recv(b, KDBUS_RECV_DROP, 0, NULL) == 0)
		;
	for (i = 0; i < 1000; i++) {
		r = kdbus_send(a, b->id, i + 1, 0, 0, 0, NULL, 0);
		if (r < 0)
			break;
	}
	ASSERT_EQ(r, -ENOBUFS);
	ASSERT_EQ(i, KDBUS_CONN_MAX_MSGS);
	while (kdbus_recv(b, KDBUS_RECV_DROP, 0, NULL) == 0)
		;

	/* receive without freeing until the pool is full */
	for (i = 0; i < 1000; i++) {
		r = kdbus_send(a, b->id, i + 1, 0, 0, 0, buf, sizeof(buf));
		if (r < 0)
			break;
		ASSERT_OK(kdbus_recv(b, 0, 0, &recv));
	}
	/* 31 slices of 8288 bytes fit into 256 KiB */
	ASSERT_EQ(r, -EXFULL);
	ASSERT_EQ(i, 31);

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/*
 * Per-user quotas under the default TALK policy (kdbus.policy(7)): an
 * unprivileged user may only talk to connections of its own uid, owners
 * to everybody. A flooding user fills its share of a receiver of its own
 * uid; the bus owner (a second user) still gets its messages through, a
 * third, unprivileged user is refused with EPERM.
 */
KDBUS_TEST(msgk, flood_and_talk, 0)
{
	static uint8_t buf[8192];
	int to_parent[2], to_child[2];
	struct kdbus_conn *s;
	uint64_t rid;
	pid_t pid, other;
	char c;
	int i;

	ASSERT(pipe(to_parent) == 0 && pipe(to_child) == 0);
	pid = kdbus_fork_as(4711, 4711);
	ASSERT(pid >= 0);
	if (pid == 0) {
		struct kdbus_conn *r, *flooder;
		struct kdbus_msg *m;
		uint64_t off;
		int n = 0, mine = 0, r_ok;

		close(to_parent[0]);
		close(to_child[1]);
		if (kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &r) ||
		    kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL,
				&flooder))
			_exit(TEST_FAIL);
		while ((r_ok = kdbus_send(flooder, r->id, 1, 0, 0, 0, buf,
					  sizeof(buf))) == 0)
			n++;
		if (r_ok != -ENOBUFS || n < 3) {
			DIAG("flooder: %d sent, then %d", n, r_ok);
			_exit(TEST_FAIL);
		}
		if (write(to_parent[1], &r->id, sizeof(r->id)) != 8 ||
		    read(to_child[0], &c, 1) != 1)
			_exit(TEST_FAIL);
		/* still refused after the others got through */
		if (kdbus_send(flooder, r->id, 1, 0, 0, 0, buf,
			       sizeof(buf)) != -ENOBUFS)
			_exit(TEST_FAIL);
		while (kdbus_recv_msg(r, 0, 0, &m, &off) == 0) {
			if (m->cookie == 0x7007)
				mine++;
			kdbus_free(r, off);
		}
		_exit(mine == 3 ? TEST_OK : TEST_FAIL);
	}
	close(to_parent[1]);
	close(to_child[0]);
	if (read(to_parent[0], &rid, sizeof(rid)) != sizeof(rid)) {
		int t = kdbus_wait_child(pid);

		return t == TEST_OK ? TEST_FAIL : t;
	}

	/* a different unprivileged user: TALK denied */
	other = kdbus_fork_as(4712, 4712);
	ASSERT(other >= 0);
	if (other == 0) {
		struct kdbus_conn *x;

		if (kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &x))
			_exit(TEST_FAIL);
		_exit(kdbus_send(x, rid, 1, 0, 0, 0, "x", 1) == -EPERM ?
		      TEST_OK : TEST_FAIL);
	}
	ASSERT_EQ(kdbus_wait_child(other), TEST_OK);

	/* the bus owner: its own share of the receiver */
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &s));
	for (i = 0; i < 3; i++)
		ASSERT_OK(kdbus_send(s, rid, 0x7007, 0, 0, 0, buf,
				     sizeof(buf)));
	kdbus_conn_free(s);

	ASSERT(write(to_child[1], "x", 1) == 1);
	ASSERT_EQ(kdbus_wait_child(pid), TEST_OK);
	return TEST_OK;
}
