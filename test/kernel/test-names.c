// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Well-known names (kdbus.name(7)): validity, every cell of the
 * NAME_ACQUIRE outcome table (kdbus.name(7)) with its return flags and
 * notifications, NAME_RELEASE (kdbus.name(7)), queue promotion on release and
 * disconnect (kdbus.name(7)), the per-connection limit, sending by name
 * (kdbus.message(7)), and a bus with 10,000 names on 1,000 connections.
 *
 * The third party watching notifications is a monitor: monitors get every
 * kernel notification regardless of match rules (kdbus.message(7)), so these
 * tests do not depend on the match database.
 */
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

#define P KDBUS_NAME_PRIMARY
#define Q KDBUS_NAME_QUEUE
#define AR KDBUS_NAME_ALLOW_REPLACEMENT
#define RE KDBUS_NAME_REPLACE_EXISTING
#define INQ KDBUS_NAME_IN_QUEUE
#define ACQ KDBUS_NAME_ACQUIRED

static int hello(struct kdbus_test_env *env, struct kdbus_conn **c)
{
	return kdbus_hello(env->bus_path, KDBUS_HELLO_ACCEPT_FD, 0,
			   KDBUS_DEFAULT_POOL, c);
}

KDBUS_TEST(names, validity, 0)
{
	static const char *const bad[] = {
		"", "a", "a.", ".a", "a..b", "a.b.", "1a.b", "a.1b", "a.b*",
		"a.b.*", "a.*.c", "*", ":1.5", "a b.c", "a.b/c", "a.b$",
		"a.\x7f",
	};
	static const char *const good[] = {
		"a.b", "_a.-b", "a1.b2", "a.b.c.d", "A-.B_9", "\xc0x.y\xff",
		"a._1",
	};
	struct kdbus_conn *a;
	uint64_t rf;
	char longname[300];
	size_t i;

	ASSERT_OK(hello(env, &a));

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (kn_acquire(a, bad[i], 0, &rf) != -EINVAL)
			FAIL("name \"%s\" was not refused with EINVAL", bad[i]);
		ASSERT_EQ(rf, 0);
		/* NAME_RELEASE does not check validity: just ESRCH */
		ASSERT_ERR(kn_release(a, bad[i]), ESRCH);
	}

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ASSERT_OK(kn_acquire(a, good[i], 0, &rf));
		ASSERT_EQ(rf, P | ACQ);
		ASSERT_OK(kn_release(a, good[i]));
	}

	/* 255 characters are fine, 256 are not */
	memset(longname, 'x', sizeof(longname));
	longname[1] = '.';
	longname[255] = 0;
	ASSERT_OK(kn_acquire(a, longname, 0, &rf));
	longname[255] = 'x';
	longname[256] = 0;
	ASSERT_ERR(kn_acquire(a, longname, 0, &rf), EINVAL);

	kdbus_conn_free(a);
	return TEST_OK;
}

KDBUS_TEST(names, parse_errors, 0)
{
	struct kdbus_conn *a;
	struct kdbus_cmd *cmd;

	ASSERT_OK(hello(env, &a));

	/* no name item */
	cmd = cmd_new(sizeof(*cmd));
	ASSERT_ERR(kdbus_ioctl(a->fd, KDBUS_CMD_NAME_ACQUIRE, cmd), EINVAL);
	ASSERT_ERR(kdbus_ioctl(a->fd, KDBUS_CMD_NAME_RELEASE, cmd), EINVAL);
	cmd_free(cmd);

	/* two name items */
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_str(cmd, KDBUS_ITEM_NAME, "a.b");
	cmd_add_str(cmd, KDBUS_ITEM_NAME, "a.c");
	ASSERT_ERR(kdbus_ioctl(a->fd, KDBUS_CMD_NAME_ACQUIRE, cmd), EINVAL);
	cmd_free(cmd);

	/* output-only flags are not accepted as input */
	cmd = cmd_new(sizeof(*cmd));
	cmd->flags = KDBUS_NAME_IN_QUEUE;
	cmd_add_str(cmd, KDBUS_ITEM_NAME, "a.b");
	ASSERT_ERR(kdbus_ioctl(a->fd, KDBUS_CMD_NAME_ACQUIRE, cmd), EINVAL);
	cmd_free(cmd);

	/* NAME_RELEASE takes no name flags */
	cmd = cmd_new(sizeof(*cmd));
	cmd->flags = KDBUS_NAME_QUEUE;
	cmd_add_str(cmd, KDBUS_ITEM_NAME, "a.b");
	ASSERT_ERR(kdbus_ioctl(a->fd, KDBUS_CMD_NAME_RELEASE, cmd), EINVAL);
	cmd_free(cmd);

	/* nothing was acquired by any of this */
	ASSERT_ERR(kn_release(a, "a.b"), ESRCH);
	kdbus_conn_free(a);
	return TEST_OK;
}

KDBUS_TEST(names, special_kinds_refused, 0)
{
	struct kdbus_conn *act, *mon, *ph;
	uint64_t rf;

	ASSERT_OK(kn_hello_named(env->bus_path, KDBUS_HELLO_ACTIVATOR,
				 "act.name", KDBUS_DEFAULT_POOL, &act));
	ASSERT_OK(kn_monitor(env->bus_path, &mon));
	ASSERT_OK(kn_hello_named(env->bus_path, KDBUS_HELLO_POLICY_HOLDER,
				 "ph.name", KDBUS_DEFAULT_POOL, &ph));

	ASSERT_ERR(kn_acquire(act, "x.y", 0, &rf), EOPNOTSUPP);
	ASSERT_ERR(kn_release(act, "act.name"), EOPNOTSUPP);
	ASSERT_ERR(kn_acquire(mon, "x.y", 0, &rf), EOPNOTSUPP);
	ASSERT_ERR(kn_release(mon, "x.y"), EOPNOTSUPP);
	ASSERT_ERR(kn_acquire(ph, "x.y", 0, &rf), EOPNOTSUPP);
	ASSERT_ERR(kn_release(ph, "x.y"), EOPNOTSUPP);

	kdbus_conn_free(act);
	kdbus_conn_free(mon);
	kdbus_conn_free(ph);
	return TEST_OK;
}

/* row 1: free name; NAME_ADD with the stored flags */
KDBUS_TEST(names, acquire_row1_free, 0)
{
	struct kdbus_conn *a, *b, *mon;
	uint64_t rf;

	ASSERT_OK(kn_monitor(env->bus_path, &mon));
	ASSERT_OK(hello(env, &a));
	ASSERT_OK(hello(env, &b));
	RUN(kn_expect_id(mon, KDBUS_ITEM_ID_ADD, a->id, KDBUS_HELLO_ACCEPT_FD));
	RUN(kn_expect_id(mon, KDBUS_ITEM_ID_ADD, b->id, KDBUS_HELLO_ACCEPT_FD));

	ASSERT_OK(kn_acquire(a, "row.one", 0, &rf));
	ASSERT_EQ(rf, P | ACQ);
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_ADD, "row.one", 0, 0, a->id, P));

	/* REPLACE_EXISTING is never stored; the others are */
	ASSERT_OK(kn_acquire(b, "row.two", AR | Q | RE, &rf));
	ASSERT_EQ(rf, AR | Q | P | ACQ);
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_ADD, "row.two", 0, 0,
			   b->id, AR | Q | P));
	ASSERT_OK(kn_no_notify(mon));

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	kdbus_conn_free(mon);
	return TEST_OK;
}

/* row 3: re-acquire by the primary owner changes only the flags */
KDBUS_TEST(names, acquire_row3_reacquire, 0)
{
	struct kdbus_conn *a, *b, *mon;
	uint64_t rf;

	ASSERT_OK(hello(env, &a));
	ASSERT_OK(hello(env, &b));
	ASSERT_OK(kn_acquire(a, "re.acq", 0, &rf));
	ASSERT_OK(kn_monitor(env->bus_path, &mon));

	ASSERT_OK(kn_acquire(a, "re.acq", AR, &rf));
	ASSERT_EQ(rf, AR | P);
	ASSERT_OK(kn_no_notify(mon));

	/* now replaceable */
	ASSERT_OK(kn_acquire(a, "re.acq", AR | Q, &rf));
	ASSERT_EQ(rf, AR | Q | P);

	/* dropping ALLOW_REPLACEMENT again protects the name */
	ASSERT_OK(kn_acquire(a, "re.acq", 0, &rf));
	ASSERT_EQ(rf, P);
	ASSERT_ERR(kn_acquire(b, "re.acq", RE, &rf), EEXIST);
	ASSERT_EQ(rf, 0);
	ASSERT_OK(kn_no_notify(mon));

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	kdbus_conn_free(mon);
	return TEST_OK;
}

/* row 4: replacement; P with QUEUE stays queued right behind the caller */
KDBUS_TEST(names, acquire_row4_replace_queue, 0)
{
	struct kdbus_conn *a, *b, *mon;
	uint64_t rf;

	ASSERT_OK(hello(env, &a));
	ASSERT_OK(hello(env, &b));
	ASSERT_OK(kn_acquire(a, "rep.q", AR | Q, &rf));
	ASSERT_OK(kn_monitor(env->bus_path, &mon));

	ASSERT_OK(kn_acquire(b, "rep.q", RE, &rf));
	ASSERT_EQ(rf, P | ACQ);
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_CHANGE, "rep.q",
			   a->id, AR | Q | P, b->id, P));
	ASSERT_OK(kn_no_notify(mon));

	/* a waits now: re-acquire with QUEUE reports IN_QUEUE */
	ASSERT_OK(kn_acquire(a, "rep.q", AR | Q, &rf));
	ASSERT_EQ(rf, AR | Q | INQ);

	/* b goes away: a gets the name back */
	ASSERT_OK(kn_release(b, "rep.q"));
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_CHANGE, "rep.q",
			   b->id, P, a->id, AR | Q | P));
	ASSERT_OK(kn_no_notify(mon));

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	kdbus_conn_free(mon);
	return TEST_OK;
}

/* row 4: replacement; P without QUEUE loses its record */
KDBUS_TEST(names, acquire_row4_replace_drop, 0)
{
	struct kdbus_conn *a, *b, *mon;
	uint64_t rf;

	ASSERT_OK(hello(env, &a));
	ASSERT_OK(hello(env, &b));
	ASSERT_OK(kn_acquire(a, "rep.d", AR, &rf));
	ASSERT_OK(kn_monitor(env->bus_path, &mon));

	ASSERT_OK(kn_acquire(b, "rep.d", RE | AR, &rf));
	ASSERT_EQ(rf, AR | P | ACQ);
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_CHANGE, "rep.d",
			   a->id, AR | P, b->id, AR | P));

	/* a has no record any more */
	ASSERT_ERR(kn_release(a, "rep.d"), EADDRINUSE);

	/* b releases: nobody follows */
	ASSERT_OK(kn_release(b, "rep.d"));
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_REMOVE, "rep.d",
			   b->id, AR | P, 0, 0));
	ASSERT_OK(kn_no_notify(mon));
	ASSERT_ERR(kn_release(b, "rep.d"), ESRCH);

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	kdbus_conn_free(mon);
	return TEST_OK;
}

/* row 4: a waiting caller moves to the head of the queue */
KDBUS_TEST(names, acquire_row4_waiting_caller, 0)
{
	struct kdbus_conn *a, *b, *c, *mon;
	uint64_t rf;

	ASSERT_OK(hello(env, &a));
	ASSERT_OK(hello(env, &b));
	ASSERT_OK(hello(env, &c));
	ASSERT_OK(kn_acquire(a, "rep.w", AR, &rf));
	ASSERT_OK(kn_acquire(c, "rep.w", Q, &rf));
	ASSERT_EQ(rf, Q | INQ | ACQ);
	ASSERT_OK(kn_acquire(b, "rep.w", Q, &rf));
	ASSERT_EQ(rf, Q | INQ | ACQ);
	ASSERT_OK(kn_monitor(env->bus_path, &mon));

	/* queue: a (primary), c, b; b replaces a, jumping over c */
	ASSERT_OK(kn_acquire(b, "rep.w", RE | Q, &rf));
	ASSERT_EQ(rf, Q | P | ACQ);
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_CHANGE, "rep.w",
			   a->id, AR | P, b->id, Q | P));

	ASSERT_OK(kn_release(b, "rep.w"));
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_CHANGE, "rep.w",
			   b->id, Q | P, c->id, Q | P));
	ASSERT_OK(kn_no_notify(mon));

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	kdbus_conn_free(c);
	kdbus_conn_free(mon);
	return TEST_OK;
}

/* REPLACE_EXISTING without ALLOW_REPLACEMENT on P falls through to 5-8 */
KDBUS_TEST(names, acquire_replace_not_allowed, 0)
{
	struct kdbus_conn *a, *b, *mon;
	uint64_t rf;

	ASSERT_OK(hello(env, &a));
	ASSERT_OK(hello(env, &b));
	ASSERT_OK(kn_acquire(a, "no.rep", Q, &rf));
	ASSERT_OK(kn_monitor(env->bus_path, &mon));

	/* row 8 with S = ALLOW_REPLACEMENT: EEXIST reports S */
	ASSERT_ERR(kn_acquire(b, "no.rep", RE | AR, &rf), EEXIST);
	ASSERT_EQ(rf, AR);
	ASSERT_ERR(kn_acquire(b, "no.rep", RE, &rf), EEXIST);
	ASSERT_EQ(rf, 0);

	/* row 5 */
	ASSERT_OK(kn_acquire(b, "no.rep", RE | Q, &rf));
	ASSERT_EQ(rf, Q | INQ | ACQ);
	ASSERT_OK(kn_no_notify(mon));

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	kdbus_conn_free(mon);
	return TEST_OK;
}

/* rows 5-8: queueing, re-queueing, leaving the queue, refusal */
KDBUS_TEST(names, acquire_rows5to8_queue, 0)
{
	struct kdbus_conn *a, *b, *c, *mon;
	uint64_t rf;

	ASSERT_OK(hello(env, &a));
	ASSERT_OK(hello(env, &b));
	ASSERT_OK(hello(env, &c));
	ASSERT_OK(kn_acquire(a, "q.name", 0, &rf));
	ASSERT_OK(kn_monitor(env->bus_path, &mon));

	/* row 5 */
	ASSERT_OK(kn_acquire(b, "q.name", Q, &rf));
	ASSERT_EQ(rf, Q | INQ | ACQ);

	/* row 6: flags change, position kept, no ACQUIRED */
	ASSERT_OK(kn_acquire(b, "q.name", Q | AR, &rf));
	ASSERT_EQ(rf, AR | Q | INQ);

	/* row 8 */
	ASSERT_ERR(kn_acquire(c, "q.name", 0, &rf), EEXIST);
	ASSERT_EQ(rf, 0);

	/* row 7: b leaves the queue silently */
	ASSERT_OK(kn_acquire(b, "q.name", AR, &rf));
	ASSERT_EQ(rf, AR);
	ASSERT_ERR(kn_release(b, "q.name"), EADDRINUSE);
	ASSERT_OK(kn_no_notify(mon));

	/* with b gone from the queue, a's release removes the name */
	ASSERT_OK(kn_release(a, "q.name"));
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_REMOVE, "q.name",
			   a->id, P, 0, 0));
	ASSERT_OK(kn_no_notify(mon));

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	kdbus_conn_free(c);
	kdbus_conn_free(mon);
	return TEST_OK;
}

KDBUS_TEST(names, release_errors, 0)
{
	struct kdbus_conn *a, *b, *mon;
	uint64_t rf;

	ASSERT_OK(hello(env, &a));
	ASSERT_OK(hello(env, &b));
	ASSERT_OK(kn_monitor(env->bus_path, &mon));

	ASSERT_ERR(kn_release(a, "not.there"), ESRCH);
	ASSERT_OK(kn_acquire(a, "rel.name", 0, &rf));
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_ADD, "rel.name", 0, 0,
			   a->id, P));

	/* somebody else's name */
	ASSERT_ERR(kn_release(b, "rel.name"), EADDRINUSE);

	/* only queued: released silently, the owner keeps the name */
	ASSERT_OK(kn_acquire(b, "rel.name", Q, &rf));
	ASSERT_OK(kn_release(b, "rel.name"));
	ASSERT_OK(kn_no_notify(mon));
	ASSERT_ERR(kn_release(b, "rel.name"), EADDRINUSE);

	ASSERT_OK(kn_release(a, "rel.name"));
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_REMOVE, "rel.name",
			   a->id, P, 0, 0));
	ASSERT_ERR(kn_release(a, "rel.name"), ESRCH);
	ASSERT_OK(kn_no_notify(mon));

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	kdbus_conn_free(mon);
	return TEST_OK;
}

/* four connections in the queue, promoted one by one by releases */
KDBUS_TEST(names, queue_order_release, 0)
{
	struct kdbus_conn *c[4], *mon;
	uint64_t rf;
	int i;

	for (i = 0; i < 4; i++)
		ASSERT_OK(hello(env, &c[i]));
	ASSERT_OK(kn_monitor(env->bus_path, &mon));

	ASSERT_OK(kn_acquire(c[0], "q.order", 0, &rf));
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_ADD, "q.order", 0, 0,
			   c[0]->id, P));
	for (i = 1; i < 4; i++) {
		ASSERT_OK(kn_acquire(c[i], "q.order", Q, &rf));
		ASSERT_EQ(rf, Q | INQ | ACQ);
	}

	/* c[0] has no QUEUE: it is not stored as such */
	for (i = 0; i < 3; i++) {
		ASSERT_OK(kn_release(c[i], "q.order"));
		RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_CHANGE, "q.order",
				   c[i]->id, (i ? Q : 0) | P,
				   c[i + 1]->id, Q | P));
		ASSERT_OK(kn_no_notify(mon));
	}
	ASSERT_OK(kn_release(c[3], "q.order"));
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_REMOVE, "q.order",
			   c[3]->id, Q | P, 0, 0));
	ASSERT_OK(kn_no_notify(mon));

	for (i = 0; i < 4; i++)
		kdbus_conn_free(c[i]);
	kdbus_conn_free(mon);
	return TEST_OK;
}

/* the same by disconnects, with a waiter that left in the middle */
KDBUS_TEST(names, queue_order_disconnect, 0)
{
	struct kdbus_conn *c[4], *mon;
	uint64_t rf, id[4];
	int i;

	for (i = 0; i < 4; i++) {
		ASSERT_OK(hello(env, &c[i]));
		id[i] = c[i]->id;
	}
	ASSERT_OK(kn_acquire(c[0], "d.order", Q, &rf));
	for (i = 1; i < 4; i++)
		ASSERT_OK(kn_acquire(c[i], "d.order", Q, &rf));
	ASSERT_OK(kn_monitor(env->bus_path, &mon));

	/* c[2] disconnects while waiting: silent apart from ID_REMOVE */
	kdbus_conn_free(c[2]);
	RUN(kn_expect_id(mon, KDBUS_ITEM_ID_REMOVE, id[2],
			 KDBUS_HELLO_ACCEPT_FD));
	ASSERT_OK(kn_no_notify(mon));

	kdbus_conn_free(c[0]);
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_CHANGE, "d.order",
			   id[0], Q | P, id[1], Q | P));
	RUN(kn_expect_id(mon, KDBUS_ITEM_ID_REMOVE, id[0],
			 KDBUS_HELLO_ACCEPT_FD));

	kdbus_conn_free(c[1]);
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_CHANGE, "d.order",
			   id[1], Q | P, id[3], Q | P));
	RUN(kn_expect_id(mon, KDBUS_ITEM_ID_REMOVE, id[1],
			 KDBUS_HELLO_ACCEPT_FD));

	kdbus_conn_free(c[3]);
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_REMOVE, "d.order",
			   id[3], Q | P, 0, 0));
	RUN(kn_expect_id(mon, KDBUS_ITEM_ID_REMOVE, id[3],
			 KDBUS_HELLO_ACCEPT_FD));
	ASSERT_OK(kn_no_notify(mon));

	kdbus_conn_free(mon);
	return TEST_OK;
}

/* 256 records per connection; owned, waiting all count */
KDBUS_TEST(names, limit, 0)
{
	struct kdbus_conn *a, *b;
	char name[64];
	uint64_t rf;
	int i;

	ASSERT_OK(hello(env, &a));
	ASSERT_OK(hello(env, &b));
	ASSERT_OK(kn_acquire(b, "other.name", 0, &rf));

	ASSERT_OK(kn_acquire(a, "other.name", Q, &rf));
	for (i = 1; i < 256; i++) {
		snprintf(name, sizeof(name), "lim.n%d", i);
		ASSERT_OK(kn_acquire(a, name, 0, &rf));
	}
	ASSERT_ERR(kn_acquire(a, "lim.toomany", 0, &rf), E2BIG);
	ASSERT_EQ(rf, 0);
	/* the failed call left no entry behind */
	ASSERT_ERR(kn_release(b, "lim.toomany"), ESRCH);

	/* records it has may still be re-acquired */
	ASSERT_OK(kn_acquire(a, "lim.n1", AR, &rf));
	ASSERT_EQ(rf, AR | P);
	ASSERT_OK(kn_acquire(a, "other.name", Q | AR, &rf));
	ASSERT_EQ(rf, AR | Q | INQ);

	/* leaving the queue frees a slot */
	ASSERT_OK(kn_release(a, "other.name"));
	ASSERT_OK(kn_acquire(a, "lim.toomany", 0, &rf));

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

KDBUS_TEST(names, send_by_name, 0)
{
	struct kdbus_conn *a, *b;
	char dst[256];
	uint64_t rf, cookie;
	struct kdbus_msg *m;
	uint64_t off;

	ASSERT_OK(hello(env, &a));
	ASSERT_OK(hello(env, &b));
	ASSERT_OK(kn_acquire(a, "send.target", 0, &rf));

	ASSERT_ERR(kn_send_name(b, "no.owner", 0, 1, 0, 0), ESRCH);
	ASSERT_ERR(kn_send_name(b, "bad..name", 0, 1, 0, 0), EINVAL);
	ASSERT_ERR(kn_send_name(b, "send.target", b->id, 1, 0, 0), EREMCHG);
	/* NO_AUTO_START only matters for activators */
	ASSERT_OK(kn_send_name(b, "send.target", 0, 7,
			       KDBUS_MSG_NO_AUTO_START, 0));
	ASSERT_OK(kn_send_name(b, "send.target", a->id, 8, 0, 0));

	/* the receiver sees the name the message was addressed to */
	ASSERT_OK(kdbus_recv_msg(a, 0, 0, &m, &off));
	ASSERT_EQ(m->cookie, 7);
	ASSERT_EQ(m->dst_id, 0);
	ASSERT_EQ(m->src_id, b->id);
	ASSERT(kdbus_msg_find(m, KDBUS_ITEM_DST_NAME));
	ASSERT(!strcmp(kdbus_msg_find(m, KDBUS_ITEM_DST_NAME)->str,
		       "send.target"));
	ASSERT_OK(kdbus_free(a, off));
	ASSERT_OK(kn_recv_cookie(a, &cookie, dst, sizeof(dst)));
	ASSERT_EQ(cookie, 8);
	ASSERT(!strcmp(dst, "send.target"));
	ASSERT_ERR(kdbus_recv(a, 0, 0, NULL), EAGAIN);

	/* a waiting connection is not the owner */
	ASSERT_OK(kn_acquire(b, "send.target", Q, &rf));
	ASSERT_ERR(kn_send_name(a, "send.target", b->id, 9, 0, 0), EREMCHG);

	/* after release the name follows the queue */
	ASSERT_OK(kn_release(a, "send.target"));
	ASSERT_OK(kn_send_name(a, "send.target", b->id, 10, 0, 0));
	ASSERT_OK(kn_recv_cookie(b, &cookie, dst, sizeof(dst)));
	ASSERT_EQ(cookie, 10);
	ASSERT_OK(kn_release(b, "send.target"));
	ASSERT_ERR(kn_send_name(a, "send.target", 0, 11, 0, 0), ESRCH);

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* a method call by name is answered by whoever got it */
KDBUS_TEST(names, call_by_name, 0)
{
	struct kdbus_conn *a, *b;
	uint64_t rf, off;
	struct kdbus_msg *m;

	ASSERT_OK(hello(env, &a));
	ASSERT_OK(hello(env, &b));
	ASSERT_OK(kn_acquire(a, "call.target", 0, &rf));
	ASSERT_OK(kn_send_name(b, "call.target", 0, 55,
			       KDBUS_MSG_EXPECT_REPLY,
			       kdbus_now_ns() + 5000000000ULL));
	ASSERT_OK(kdbus_recv_msg(a, 0, 0, &m, &off));
	ASSERT_EQ(m->cookie, 55);
	ASSERT_OK(kdbus_free(a, off));
	ASSERT_OK(kdbus_send(a, b->id, 56, 0, 55, 0, NULL, 0));
	ASSERT_OK(kdbus_recv_msg(b, 0, 0, &m, &off));
	ASSERT_EQ(m->cookie_reply, 55);
	ASSERT_EQ(m->src_id, a->id);
	ASSERT_OK(kdbus_free(b, off));

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/*
 * A sender keeps sending to a name while two connections take it from
 * each other (replacement, both with QUEUE). Every message must reach
 * exactly one of them: none lost, none duplicated.
 */
#define RACE_MSGS 200

KDBUS_TEST_FULL(names, owner_change_race, 0, 120)
{
	struct kdbus_conn *a, *b, *s;
	unsigned char seen[RACE_MSGS + 1] = { 0 };
	uint64_t rf, cookie;
	int i, status, n = 0;
	pid_t pid;

	ASSERT_OK(hello(env, &a));
	ASSERT_OK(hello(env, &b));
	ASSERT_OK(hello(env, &s));
	ASSERT_OK(kn_acquire(a, "race.name", AR | Q, &rf));

	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		for (i = 1; i <= RACE_MSGS; i++)
			if (kn_send_name(s, "race.name", 0, i, 0, 0) < 0)
				_exit(1);
		_exit(0);
	}

	for (i = 0; i < 400; i++) {
		struct kdbus_conn *x = (i & 1) ? a : b;

		ASSERT_OK(kn_acquire(x, "race.name", AR | Q | RE, &rf));
		ASSERT_EQ(rf, AR | Q | P | ACQ);
		if (waitpid(pid, &status, WNOHANG) == pid) {
			pid = 0;
			break;
		}
	}
	if (pid)
		ASSERT(waitpid(pid, &status, 0) == pid);
	ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	for (i = 0; i < 2; i++) {
		struct kdbus_conn *x = i ? b : a;

		while (kn_recv_cookie(x, &cookie, NULL, 0) == 0) {
			ASSERT(cookie >= 1 && cookie <= RACE_MSGS);
			if (seen[cookie]++)
				FAIL("message %llu delivered twice",
				     (unsigned long long)cookie);
			n++;
		}
	}
	ASSERT_EQ(n, RACE_MSGS);

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	kdbus_conn_free(s);
	return TEST_OK;
}

/*
 * 10,000 names on 1,000 connections of one bus: every name is found by
 * LIST and reachable by SEND.
 */
#define MANY_CONNS 1000
#define NAMES_PER_CONN 10

KDBUS_TEST_FULL(names, ten_thousand, 0, 600)
{
	static struct kdbus_conn *c[MANY_CONNS];
	struct kdbus_cmd_list cmd = { .size = sizeof(cmd) };
	struct kdbus_conn *lister;
	struct kdbus_info *info;
	unsigned int n_names = 0;
	const char *nm;
	char name[64];
	uint64_t rf, cookie;
	int i, j;

	ASSERT_OK(kdbus_raise_nofile(MANY_CONNS + 64));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, 16ULL * 1024 * 1024,
			      &lister));

	for (i = 0; i < MANY_CONNS; i++) {
		ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, 4 * KDBUS_PAGE,
				      &c[i]));
		for (j = 0; j < NAMES_PER_CONN; j++) {
			snprintf(name, sizeof(name), "org.many.c%d.n%d", i, j);
			ASSERT_OK(kn_acquire(c[i], name, 0, &rf));
			ASSERT_EQ(rf, P | ACQ);
		}
	}

	cmd.flags = KDBUS_LIST_NAMES;
	ASSERT_OK(kdbus_ioctl(lister->fd, KDBUS_CMD_LIST, &cmd));
	for (info = (void *)(lister->pool + cmd.offset);
	     (uint8_t *)info < lister->pool + cmd.offset + cmd.list_size;
	     info = (void *)((uint8_t *)info + info->size)) {
		ASSERT(info->size > sizeof(*info));
		ASSERT_EQ(info->items[0].type, KDBUS_ITEM_OWNED_NAME);
		nm = (const char *)info->items[0].data + sizeof(uint64_t);
		ASSERT(!strncmp(nm, "org.many.c", 10));
		n_names++;
	}
	ASSERT_EQ(n_names, MANY_CONNS * NAMES_PER_CONN);
	ASSERT_OK(kdbus_free(lister, cmd.offset));

	/* a few lookups across the table */
	for (i = 0; i < MANY_CONNS; i += 97) {
		snprintf(name, sizeof(name), "org.many.c%d.n%d", i, i % 10);
		ASSERT_OK(kn_send_name(lister, name, c[i]->id, i + 1, 0, 0));
		ASSERT_OK(kn_recv_cookie(c[i], &cookie, NULL, 0));
		ASSERT_EQ(cookie, i + 1);
	}

	/* releasing all of them by disconnect leaves an empty registry */
	for (i = 0; i < MANY_CONNS; i++)
		kdbus_conn_free(c[i]);
	cmd.flags = KDBUS_LIST_NAMES;
	ASSERT_OK(kdbus_ioctl(lister->fd, KDBUS_CMD_LIST, &cmd));
	ASSERT_EQ(cmd.list_size, 0);
	ASSERT_EQ(cmd.offset, lister->pool_size);

	kdbus_conn_free(lister);
	return TEST_OK;
}

/* CONN_INFO with KDBUS_ATTACH_NAMES: owned names in creation order */
KDBUS_TEST(names, conn_info_owned_names, 0)
{
	static const char *const want[] = { "info.b", "info.a" };
	struct kdbus_conn *a, *b;
	struct kdbus_info *info;
	struct kdbus_item *it;
	uint64_t rf, off;
	int n = 0;

	ASSERT_OK(hello(env, &a));
	ASSERT_OK(hello(env, &b));
	ASSERT_OK(kn_acquire(a, "info.b", AR, &rf));
	ASSERT_OK(kn_acquire(b, "info.q", 0, &rf));
	ASSERT_OK(kn_acquire(a, "info.q", Q, &rf));	/* only waiting */
	ASSERT_OK(kn_acquire(a, "info.a", 0, &rf));

	ASSERT_OK(kdbus_conn_info(b, a->id, NULL, KDBUS_ATTACH_NAMES, &info,
				  &off));
	KDBUS_ITEM_FOREACH(it, info->items, KDBUS_INFO_ITEMS_LEN(info)) {
		if (it->type != KDBUS_ITEM_OWNED_NAME)
			continue;
		ASSERT(n < 2);
		ASSERT(!strcmp(it->name.name, want[n]));
		ASSERT_EQ(it->name.flags, n == 0 ? (AR | P) : P);
		n++;
	}
	ASSERT_EQ(n, 2);
	ASSERT_OK(kdbus_free(b, off));

	/* not asked for: not attached */
	ASSERT_OK(kdbus_conn_info(b, a->id, NULL, 0, &info, &off));
	ASSERT_EQ(info->size, sizeof(*info));
	ASSERT_OK(kdbus_free(b, off));

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}
