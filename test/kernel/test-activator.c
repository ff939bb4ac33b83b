// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Activation (kdbus.name(7)): activator HELLO, messages queued on the
 * activator, takeover by the implementing service with its queued
 * messages and reply trackers, hand-back when the service goes away,
 * NO_AUTO_START.
 */
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

#define P KDBUS_NAME_PRIMARY
#define Q KDBUS_NAME_QUEUE
#define AR KDBUS_NAME_ALLOW_REPLACEMENT
#define INQ KDBUS_NAME_IN_QUEUE
#define ACQ KDBUS_NAME_ACQUIRED
#define ACT KDBUS_NAME_ACTIVATOR
#define AFLAGS (KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_ACCEPT_FD)

static int hello(struct kdbus_test_env *env, struct kdbus_conn **c)
{
	return kdbus_hello(env->bus_path, KDBUS_HELLO_ACCEPT_FD, 0,
			   KDBUS_DEFAULT_POOL, c);
}

static int activator(struct kdbus_test_env *env, const char *name,
		     struct kdbus_conn **c)
{
	return kn_hello_named(env->bus_path, AFLAGS, name, KDBUS_DEFAULT_POOL,
			      c);
}

KDBUS_TEST(activator, hello, 0)
{
	struct kdbus_conn *mon, *act, *act2;
	uint64_t id;

	ASSERT_OK(kn_monitor(env->bus_path, &mon));

	/* a name is mandatory, and it may not be a wildcard */
	ASSERT_ERR(kn_hello_named(env->bus_path, AFLAGS, NULL,
				  KDBUS_DEFAULT_POOL, &act), EINVAL);
	ASSERT_ERR(kn_hello_named(env->bus_path, AFLAGS, "act.*",
				  KDBUS_DEFAULT_POOL, &act), EINVAL);
	ASSERT_ERR(kn_hello_named(env->bus_path, AFLAGS, "act",
				  KDBUS_DEFAULT_POOL, &act), EINVAL);
	ASSERT_OK(kn_no_notify(mon));

	/* ID_ADD, then NAME_ADD */
	ASSERT_OK(activator(env, "act.svc", &act));
	RUN(kn_expect_id(mon, KDBUS_ITEM_ID_ADD, act->id, AFLAGS));
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_ADD, "act.svc", 0, 0,
			   act->id, ACT | P));
	ASSERT_OK(kn_no_notify(mon));

	/* one activator per name; the failed HELLO announces nothing */
	ASSERT_ERR(activator(env, "act.svc", &act2), EEXIST);
	ASSERT_OK(kn_no_notify(mon));

	/* an activator cannot send */
	ASSERT_ERR(kdbus_send(act, mon->id, 1, 0, 0, 0, NULL, 0), EOPNOTSUPP);

	/* closing the current owner removes the name */
	id = act->id;
	kdbus_conn_free(act);
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_REMOVE, "act.svc",
			   id, ACT | P, 0, 0));
	RUN(kn_expect_id(mon, KDBUS_ITEM_ID_REMOVE, id, AFLAGS));
	ASSERT_OK(kn_no_notify(mon));

	kdbus_conn_free(mon);
	return TEST_OK;
}

KDBUS_TEST(activator, not_addressable_by_id, 0)
{
	struct kdbus_conn *act, *b;

	ASSERT_OK(activator(env, "act.id", &act));
	ASSERT_OK(hello(env, &b));
	ASSERT_ERR(kdbus_send(b, act->id, 1, 0, 0, 0, NULL, 0), ENXIO);
	/* but by name, with or without its id */
	ASSERT_OK(kn_send_name(b, "act.id", 0, 2, 0, 0));
	ASSERT_OK(kn_send_name(b, "act.id", act->id, 3, 0, 0));
	ASSERT_ERR(kn_send_name(b, "act.id", b->id, 4, 0, 0), EREMCHG);
	kdbus_conn_free(act);
	kdbus_conn_free(b);
	return TEST_OK;
}

/*
 * Messages wait on the activator (POLLIN, PEEK); NO_AUTO_START refuses.
 * The service takes over and reads them all, in order, behind its own
 * older messages; the activator's queue is empty afterwards.
 */
KDBUS_TEST(activator, takeover, 0)
{
	struct kdbus_conn *act, *svc, *cli, *mon;
	struct kdbus_cmd_recv r;
	char dst[256];
	uint64_t rf, cookie;
	struct kdbus_msg *m;
	int i;

	ASSERT_OK(activator(env, "org.example.Svc", &act));
	ASSERT_OK(hello(env, &svc));
	ASSERT_OK(hello(env, &cli));
	ASSERT_OK(kn_monitor(env->bus_path, &mon));

	ASSERT_EQ(kdbus_wait_readable(act->fd, 0), 0);
	for (i = 1; i <= 5; i++)
		ASSERT_OK(kn_send_name(cli, "org.example.Svc", 0, i, 0, 0));
	ASSERT_ERR(kn_send_name(cli, "org.example.Svc", 0, 99,
				KDBUS_MSG_NO_AUTO_START, 0), EADDRNOTAVAIL);

	/* the "please start the service" trigger */
	ASSERT_EQ(kdbus_wait_readable(act->fd, 0), 1);
	ASSERT_OK(kdbus_recv_msg(act, KDBUS_RECV_PEEK, 0, &m, NULL));
	ASSERT_EQ(m->cookie, 1);
	ASSERT_EQ(m->src_id, cli->id);
	ASSERT_OK(kdbus_free(act, (uint8_t *)m - act->pool));

	/* a message the service already had, by ID */
	ASSERT_OK(kdbus_send(cli, svc->id, 100, 0, 0, 0, NULL, 0));

	ASSERT_OK(kn_acquire(svc, "org.example.Svc", 0, &rf));
	ASSERT_EQ(rf, P | ACQ);
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_CHANGE, "org.example.Svc",
			   act->id, ACT | P, svc->id, P));

	ASSERT_ERR(kdbus_recv(act, 0, 0, &r), EAGAIN);
	ASSERT_EQ(kdbus_wait_readable(act->fd, 0), 0);

	ASSERT_OK(kn_recv_cookie(svc, &cookie, dst, sizeof(dst)));
	ASSERT_EQ(cookie, 100);
	ASSERT_EQ(dst[0], 0);
	for (i = 1; i <= 5; i++) {
		ASSERT_OK(kn_recv_cookie(svc, &cookie, dst, sizeof(dst)));
		ASSERT_EQ(cookie, i);
		ASSERT(!strcmp(dst, "org.example.Svc"));
	}
	ASSERT_ERR(kdbus_recv(svc, 0, 0, NULL), EAGAIN);

	/* new messages go to the service, NO_AUTO_START is fine now */
	ASSERT_OK(kn_send_name(cli, "org.example.Svc", 0, 6,
			       KDBUS_MSG_NO_AUTO_START, 0));
	ASSERT_OK(kn_recv_cookie(svc, &cookie, NULL, 0));
	ASSERT_EQ(cookie, 6);
	ASSERT_ERR(kdbus_recv(act, 0, 0, NULL), EAGAIN);

	kdbus_conn_free(act);
	kdbus_conn_free(svc);
	kdbus_conn_free(cli);
	kdbus_conn_free(mon);
	return TEST_OK;
}

/* a method call sent before the service existed is answered by it */
KDBUS_TEST(activator, takeover_reply_tracker, 0)
{
	struct kdbus_conn *act, *svc, *cli;
	struct kdbus_msg *m;
	uint64_t rf, off;

	ASSERT_OK(activator(env, "org.example.Call", &act));
	ASSERT_OK(hello(env, &svc));
	ASSERT_OK(hello(env, &cli));

	ASSERT_OK(kn_send_name(cli, "org.example.Call", 0, 42,
			       KDBUS_MSG_EXPECT_REPLY,
			       kdbus_now_ns() + 10000000000ULL));
	ASSERT_OK(kn_acquire(svc, "org.example.Call", 0, &rf));

	ASSERT_OK(kdbus_recv_msg(svc, 0, 0, &m, &off));
	ASSERT_EQ(m->cookie, 42);
	ASSERT_EQ(m->flags & KDBUS_MSG_EXPECT_REPLY, KDBUS_MSG_EXPECT_REPLY);
	ASSERT_OK(kdbus_free(svc, off));

	ASSERT_OK(kdbus_send(svc, cli->id, 43, 0, 42, 0, "ok", 2));
	ASSERT_OK(kdbus_recv_msg(cli, 0, 0, &m, &off));
	ASSERT_EQ(m->src_id, svc->id);
	ASSERT_EQ(m->cookie_reply, 42);
	ASSERT_OK(kdbus_free(cli, off));

	/* the tracker was consumed: a second answer is refused */
	ASSERT_ERR(kdbus_send(svc, cli->id, 44, 0, 42, 0, NULL, 0), EBADSLT);

	kdbus_conn_free(act);
	kdbus_conn_free(svc);
	kdbus_conn_free(cli);
	return TEST_OK;
}

/*
 * The service releases the name (then: disconnects) with unread messages
 * addressed to it: they go back to the activator, and the next service
 * instance reads them. Messages it got by ID stay with it.
 */
static int handback(struct kdbus_test_env *env, bool by_close)
{
	struct kdbus_conn *act, *svc, *svc2, *cli, *mon;
	uint64_t rf, cookie, svc_id;
	int i;

	ASSERT_OK(activator(env, "org.example.Back", &act));
	ASSERT_OK(hello(env, &svc));
	ASSERT_OK(hello(env, &cli));
	svc_id = svc->id;
	ASSERT_OK(kn_acquire(svc, "org.example.Back", 0, &rf));
	ASSERT_OK(kn_monitor(env->bus_path, &mon));

	ASSERT_OK(kn_send_name(cli, "org.example.Back", 0, 1, 0, 0));
	ASSERT_OK(kdbus_send(cli, svc->id, 2, 0, 0, 0, NULL, 0));
	ASSERT_OK(kn_send_name(cli, "org.example.Back", 0, 3, 0, 0));
	ASSERT_ERR(kdbus_recv(act, 0, 0, NULL), EAGAIN);

	if (by_close) {
		kdbus_conn_free(svc);
		svc = NULL;
	} else {
		ASSERT_OK(kn_release(svc, "org.example.Back"));
	}
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_CHANGE, "org.example.Back",
			   svc_id, P, act->id, ACT | P));
	if (by_close)
		RUN(kn_expect_id(mon, KDBUS_ITEM_ID_REMOVE, svc_id,
				 KDBUS_HELLO_ACCEPT_FD));
	ASSERT_OK(kn_no_notify(mon));

	ASSERT_EQ(kdbus_wait_readable(act->fd, 0), 1);

	if (svc) {
		/* the message by ID stayed */
		ASSERT_OK(kn_recv_cookie(svc, &cookie, NULL, 0));
		ASSERT_EQ(cookie, 2);
		ASSERT_ERR(kdbus_recv(svc, 0, 0, NULL), EAGAIN);
	}

	ASSERT_OK(hello(env, &svc2));
	ASSERT_OK(kn_acquire(svc2, "org.example.Back", 0, &rf));
	ASSERT_EQ(rf, P | ACQ);
	RUN(kn_expect_id(mon, KDBUS_ITEM_ID_ADD, svc2->id,
			 KDBUS_HELLO_ACCEPT_FD));
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_CHANGE, "org.example.Back",
			   act->id, ACT | P, svc2->id, P));
	for (i = 1; i <= 3; i += 2) {
		ASSERT_OK(kn_recv_cookie(svc2, &cookie, NULL, 0));
		ASSERT_EQ(cookie, i);
	}
	ASSERT_ERR(kdbus_recv(svc2, 0, 0, NULL), EAGAIN);
	ASSERT_ERR(kdbus_recv(act, 0, 0, NULL), EAGAIN);

	kdbus_conn_free(act);
	kdbus_conn_free(svc);
	kdbus_conn_free(svc2);
	kdbus_conn_free(cli);
	kdbus_conn_free(mon);
	return TEST_OK;
}

KDBUS_TEST(activator, handback_release, 0)
{
	return handback(env, false);
}

KDBUS_TEST(activator, handback_disconnect, 0)
{
	return handback(env, true);
}

/*
 * An activator for a name that already has an ordinary owner waits
 * silently and gets the name (and NAME_CHANGE) when the owner leaves; a
 * waiting ordinary connection comes first.
 */
KDBUS_TEST(activator, behind_owner, 0)
{
	struct kdbus_conn *act, *a, *b, *mon;
	uint64_t rf, id;

	ASSERT_OK(hello(env, &a));
	ASSERT_OK(hello(env, &b));
	ASSERT_OK(kn_acquire(a, "org.example.Own", Q, &rf));
	ASSERT_OK(kn_acquire(b, "org.example.Own", Q, &rf));
	ASSERT_OK(kn_monitor(env->bus_path, &mon));

	ASSERT_OK(activator(env, "org.example.Own", &act));
	RUN(kn_expect_id(mon, KDBUS_ITEM_ID_ADD, act->id, AFLAGS));
	ASSERT_OK(kn_no_notify(mon));

	ASSERT_OK(kn_release(a, "org.example.Own"));
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_CHANGE, "org.example.Own",
			   a->id, Q | P, b->id, Q | P));
	ASSERT_OK(kn_release(b, "org.example.Own"));
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_CHANGE, "org.example.Own",
			   b->id, Q | P, act->id, ACT | P));

	/* an ordinary connection takes it without REPLACE_EXISTING (row 2) */
	ASSERT_OK(kn_acquire(a, "org.example.Own", AR, &rf));
	ASSERT_EQ(rf, AR | P | ACQ);
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_CHANGE, "org.example.Own",
			   act->id, ACT | P, a->id, AR | P));

	/* the waiting activator leaves silently */
	id = act->id;
	kdbus_conn_free(act);
	RUN(kn_expect_id(mon, KDBUS_ITEM_ID_REMOVE, id, AFLAGS));
	ASSERT_OK(kn_no_notify(mon));

	ASSERT_OK(kn_release(a, "org.example.Own"));
	RUN(kn_expect_name(mon, KDBUS_ITEM_NAME_REMOVE, "org.example.Own",
			   a->id, AR | P, 0, 0));

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	kdbus_conn_free(mon);
	return TEST_OK;
}

/* CONN_INFO by name returns the current owner, activator included */
KDBUS_TEST(activator, conn_info_by_name, 0)
{
	struct kdbus_conn *act, *svc;
	struct kdbus_info *info;
	uint64_t rf, off;

	ASSERT_OK(activator(env, "org.example.Info", &act));
	ASSERT_OK(hello(env, &svc));

	ASSERT_OK(kdbus_conn_info(svc, 0, "org.example.Info", 0, &info, &off));
	ASSERT_EQ(info->id, act->id);
	ASSERT_EQ(info->flags, AFLAGS);
	ASSERT_OK(kdbus_free(svc, off));

	ASSERT_OK(kn_acquire(svc, "org.example.Info", 0, &rf));
	ASSERT_OK(kdbus_conn_info(act, 0, "org.example.Info", 0, &info, &off));
	ASSERT_EQ(info->id, svc->id);
	ASSERT_OK(kdbus_free(act, off));

	/* id and name must agree */
	ASSERT_ERR(kdbus_conn_info(svc, act->id, "org.example.Info", 0, &info,
				   &off), ESRCH);
	ASSERT_ERR(kdbus_conn_info(svc, 0, "org.example.None", 0, &info,
				   &off), ESRCH);

	kdbus_conn_free(act);
	kdbus_conn_free(svc);
	return TEST_OK;
}

/*
 * Messages carrying descriptors are dropped, and counted, for a service
 * that does not accept descriptors; the takeover itself succeeds.
 */
KDBUS_TEST(activator, takeover_drops_fds, 0)
{
	struct kdbus_conn *act, *svc, *cli;
	struct kdbus_cmd_recv r;
	struct kdbus_msg *m;
	uint64_t rf;
	int p[2];

	ASSERT_OK(activator(env, "org.example.Fd", &act));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &svc));
	ASSERT_OK(hello(env, &cli));

	ASSERT(pipe(p) == 0);
	m = kdbus_msg_new(0, 1, 0, 0, NULL, 0);
	cmd_add_str(m, KDBUS_ITEM_DST_NAME, "org.example.Fd");
	cmd_add_item(m, KDBUS_ITEM_FDS, &p[0], sizeof(int));
	ASSERT_OK(kdbus_send_msg(cli->fd, 0, m, NULL));
	cmd_free(m);
	ASSERT_OK(kn_send_name(cli, "org.example.Fd", 0, 2, 0, 0));

	ASSERT_OK(kn_acquire(svc, "org.example.Fd", 0, &rf));
	ASSERT_EQ(rf, P | ACQ);

	ASSERT_OK(kdbus_recv(svc, 0, 0, &r));
	ASSERT_EQ(r.dropped_msgs, 1);
	ASSERT_EQ(r.return_flags & KDBUS_RECV_RETURN_DROPPED_MSGS,
		  KDBUS_RECV_RETURN_DROPPED_MSGS);
	m = (struct kdbus_msg *)(svc->pool + r.msg.offset);
	ASSERT_EQ(m->cookie, 2);
	ASSERT_OK(kdbus_free(svc, r.msg.offset));
	ASSERT_ERR(kdbus_recv(svc, 0, 0, NULL), EAGAIN);
	ASSERT_ERR(kdbus_recv(act, 0, 0, NULL), EAGAIN);

	close(p[0]);
	close(p[1]);
	kdbus_conn_free(act);
	kdbus_conn_free(svc);
	kdbus_conn_free(cli);
	return TEST_OK;
}

/*
 * A synchronous call to the activatable name blocks while the service is
 * started; the service takes over and answers, and the blocked caller
 * gets that answer.
 */
KDBUS_TEST_FULL(activator, takeover_sync_call, 0, 60)
{
	struct kdbus_conn *act, *svc, *cli;
	struct kdbus_msg *m;
	uint64_t rf, off;
	pid_t pid;

	ASSERT_OK(activator(env, "org.example.Sync", &act));
	ASSERT_OK(hello(env, &svc));
	ASSERT_OK(hello(env, &cli));

	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		struct kdbus_cmd_send cmd;
		struct kdbus_msg *req, *rep;

		req = kdbus_msg_new(0, 77, KDBUS_MSG_EXPECT_REPLY,
				    kdbus_now_ns() + 30000000000ULL, NULL, 0);
		cmd_add_str(req, KDBUS_ITEM_DST_NAME, "org.example.Sync");
		if (kdbus_send_msg(cli->fd, KDBUS_SEND_SYNC_REPLY, req,
				   &cmd) < 0)
			_exit(1);
		rep = (struct kdbus_msg *)(cli->pool + cmd.reply.offset);
		if (rep->cookie_reply != 77 || rep->src_id != svc->id)
			_exit(2);
		_exit(0);
	}

	/* the call arrives at the activator */
	ASSERT_EQ(kdbus_wait_readable(act->fd, 10000), 1);

	ASSERT_OK(kn_acquire(svc, "org.example.Sync", 0, &rf));
	ASSERT_OK(kdbus_recv_msg(svc, 0, 0, &m, &off));
	ASSERT_EQ(m->cookie, 77);
	ASSERT_OK(kdbus_free(svc, off));
	ASSERT_OK(kdbus_send(svc, cli->id, 78, 0, 77, 0, NULL, 0));

	ASSERT_EQ(kdbus_wait_child(pid), 0);

	kdbus_conn_free(act);
	kdbus_conn_free(svc);
	kdbus_conn_free(cli);
	return TEST_OK;
}

/*
 * A sender keeps sending to the name while the service takes it over
 * from the activator: the service ends up with every message exactly
 * once and in send order (moved ones first, then the direct ones), and
 * nothing is left on the activator.
 */
#define RACE_MSGS 200

KDBUS_TEST_FULL(activator, takeover_race, 0, 120)
{
	struct kdbus_conn *act, *svc, *cli;
	uint64_t rf, cookie;
	int i;
	pid_t pid;

	ASSERT_OK(activator(env, "org.example.Race", &act));
	ASSERT_OK(hello(env, &svc));
	ASSERT_OK(hello(env, &cli));

	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		for (i = 1; i <= RACE_MSGS; i++)
			if (kn_send_name(cli, "org.example.Race", 0, i, 0,
					 0) < 0)
				_exit(1);
		_exit(0);
	}

	/* take over while the sender is busy */
	ASSERT_EQ(kdbus_wait_readable(act->fd, 10000), 1);
	ASSERT_OK(kn_acquire(svc, "org.example.Race", 0, &rf));
	ASSERT_EQ(rf, P | ACQ);
	ASSERT_EQ(kdbus_wait_child(pid), 0);

	for (i = 1; i <= RACE_MSGS; i++) {
		ASSERT_OK(kn_recv_cookie(svc, &cookie, NULL, 0));
		ASSERT_EQ(cookie, i);
	}
	ASSERT_ERR(kdbus_recv(svc, 0, 0, NULL), EAGAIN);
	ASSERT_ERR(kdbus_recv(act, 0, 0, NULL), EAGAIN);

	kdbus_conn_free(act);
	kdbus_conn_free(svc);
	kdbus_conn_free(cli);
	return TEST_OK;
}
