// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Synchronous calls, KDBUS_SEND_SYNC_REPLY (kdbus.message(7)): answered,
 * timed out, deadline already past, peer closing or dropping mid-call,
 * interrupted by a signal with and without SA_RESTART (resume without a
 * second copy), own connection shut down, cancel fd, fds refused.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/time.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

#define MSEC 1000000ULL

static int pair(struct kdbus_test_env *env, struct kdbus_conn **a,
		struct kdbus_conn **b)
{
	int r = kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, a);

	if (r < 0)
		return r;
	return kdbus_hello(env->bus_path, KDBUS_HELLO_ACCEPT_FD, 0,
			   KDBUS_DEFAULT_POOL, b);
}

/*
 * Fork a peer that owns b from now on (the parent drops its copy).
 * Returns the pid in the parent; in the child runs fn and exits.
 */
static pid_t peer(struct kdbus_conn **b, int (*fn)(struct kdbus_conn *b,
						   void *arg), void *arg)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(fn(*b, arg));
	kdbus_conn_free(*b);
	*b = NULL;
	return pid;
}

/* receive one request; return its cookie (0 on failure) */
static uint64_t take_request(struct kdbus_conn *b, uint64_t *src)
{
	struct kdbus_msg *m;
	uint64_t off, cookie;

	if (kdbus_wait_recv(b, 10000, &m, &off) < 0)
		return 0;
	cookie = m->cookie;
	if (src)
		*src = m->src_id;
	kdbus_free(b, off);
	return cookie;
}

static int peer_answer(struct kdbus_conn *b, void *arg)
{
	uint64_t src, cookie = take_request(b, &src);
	unsigned int delay = arg ? *(unsigned int *)arg : 0;

	if (!cookie)
		return TEST_FAIL;
	kdbus_msleep(delay);
	if (kdbus_send(b, src, 1, 0, cookie, 0, "answer", 6) < 0)
		return TEST_FAIL;
	return TEST_OK;
}

KDBUS_TEST(sync, answered, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_msg *reply;
	const uint8_t *p;
	uint64_t off, sz, bid;
	pid_t pid;

	ASSERT_OK(pair(env, &a, &b));
	bid = b->id;
	pid = peer(&b, peer_answer, NULL);
	ASSERT(pid > 0);
	ASSERT_OK(kdbus_call_sync(a, bid, 0x5151, kdbus_now_ns() + 10000 * MSEC,
				  "question", 8, &reply, &off));
	ASSERT_EQ(kdbus_wait_child(pid), TEST_OK);
	ASSERT_EQ(reply->src_id, bid);
	ASSERT_EQ(reply->cookie_reply, 0x5151);
	p = kdbus_msg_payload(reply, 0, &sz);
	ASSERT(p && sz == 6 && !memcmp(p, "answer", 6));
	ASSERT_OK(kdbus_free(a, off));
	/* the reply never shows up in the queue */
	ASSERT_ERR(kdbus_recv(a, 0, 0, NULL), EAGAIN);
	kdbus_conn_free(a);
	return TEST_OK;
}

struct late_arg {
	int pipe_rd;
	uint64_t a_id;
};

static int peer_late(struct kdbus_conn *b, void *arg)
{
	struct late_arg *la = arg;
	uint64_t src, cookie = take_request(b, &src);
	char c;
	int r;

	if (!cookie)
		return TEST_FAIL;
	if (read(la->pipe_rd, &c, 1) != 1)
		return TEST_FAIL;
	r = kdbus_send(b, src, 1, 0, cookie, 0, "late", 4);
	if (r != -EBADSLT) {
		DIAG("late reply: expected EBADSLT, got %s",
		     r ? kdbus_errname(-r) : "success");
		return TEST_FAIL;
	}
	return TEST_OK;
}

KDBUS_TEST(sync, timeout, 0)
{
	struct kdbus_conn *a, *b;
	struct late_arg la;
	uint64_t t0, bid;
	int p[2];
	pid_t pid;

	ASSERT_OK(pair(env, &a, &b));
	ASSERT(pipe(p) == 0);
	la.pipe_rd = p[0];
	la.a_id = a->id;
	bid = b->id;
	pid = peer(&b, peer_late, &la);
	t0 = kdbus_now_ns();
	ASSERT_ERR(kdbus_call_sync(a, bid, 0x77, t0 + 300 * MSEC, "q", 1,
				   NULL, NULL), ETIMEDOUT);
	ASSERT(kdbus_now_ns() >= t0 + 300 * MSEC);
	ASSERT(write(p[1], "x", 1) == 1);
	ASSERT_EQ(kdbus_wait_child(pid), TEST_OK);
	/* no REPLY_TIMEOUT notification for a synchronous call */
	ASSERT_EQ(kdbus_wait_readable(a->fd, 500), 0);
	kdbus_conn_free(a);
	return TEST_OK;
}

KDBUS_TEST(sync, deadline_passed, 0)
{
	struct kdbus_conn *a, *b;

	ASSERT_OK(pair(env, &a, &b));
	ASSERT_ERR(kdbus_call_sync(a, b->id, 1, 1, "q", 1, NULL, NULL),
		   ETIMEDOUT);
	ASSERT_ERR(kdbus_call_sync(a, b->id, 2, kdbus_now_ns() - MSEC, "q", 1,
				   NULL, NULL), ETIMEDOUT);
	/* nothing was sent */
	ASSERT_ERR(kdbus_recv(b, 0, 0, NULL), EAGAIN);
	ASSERT_EQ(kdbus_wait_readable(a->fd, 200), 0);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

static int peer_close_after_recv(struct kdbus_conn *b, void *arg)
{
	(void)arg;
	return take_request(b, NULL) ? TEST_OK : TEST_FAIL;
}

static int peer_drop(struct kdbus_conn *b, void *arg)
{
	(void)arg;
	if (kdbus_wait_readable(b->fd, 10000) != 1)
		return TEST_FAIL;
	return kdbus_recv(b, KDBUS_RECV_DROP, 0, NULL) ? TEST_FAIL : TEST_OK;
}

static int peer_close_unreceived(struct kdbus_conn *b, void *arg)
{
	(void)arg;
	if (kdbus_wait_readable(b->fd, 10000) != 1)
		return TEST_FAIL;
	kdbus_msleep(100);
	return TEST_OK;
}

static int sync_peer_gone(struct kdbus_test_env *env,
			  int (*fn)(struct kdbus_conn *, void *))
{
	struct kdbus_conn *a, *b;
	uint64_t bid;
	pid_t pid;

	ASSERT_OK(pair(env, &a, &b));
	bid = b->id;
	pid = peer(&b, fn, NULL);
	ASSERT_ERR(kdbus_call_sync(a, bid, 0x99, kdbus_now_ns() + 10000 * MSEC,
				   "q", 1, NULL, NULL), EPIPE);
	ASSERT_EQ(kdbus_wait_child(pid), TEST_OK);
	/* the synchronous record is gone: at most REPLY_DEAD notifications
	 * may follow (kdbus.message(7)), no reply */
	while (kdbus_wait_readable(a->fd, 300) == 1) {
		struct kdbus_msg *m;
		uint64_t off;

		ASSERT_OK(kdbus_recv_msg(a, 0, 0, &m, &off));
		ASSERT_EQ(m->src_id, KDBUS_SRC_ID_KERNEL);
		ASSERT_EQ(m->items[0].type, KDBUS_ITEM_REPLY_DEAD);
		ASSERT_OK(kdbus_free(a, off));
	}
	kdbus_conn_free(a);
	return TEST_OK;
}

KDBUS_TEST(sync, peer_closes_mid_call, 0)
{
	return sync_peer_gone(env, peer_close_after_recv);
}

KDBUS_TEST(sync, peer_closes_before_receive, 0)
{
	return sync_peer_gone(env, peer_close_unreceived);
}

KDBUS_TEST(sync, peer_drops_request, 0)
{
	return sync_peer_gone(env, peer_drop);
}

static volatile sig_atomic_t got_signal;

static void on_alarm(int sig)
{
	(void)sig;
	got_signal++;
}

static void arm_alarm(unsigned int ms, int restart)
{
	struct sigaction sa;
	struct itimerval it = { .it_value = { .tv_sec = ms / 1000,
					      .tv_usec = (ms % 1000) * 1000 } };

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigaction(SIGALRM, &sa, NULL);
	got_signal = 0;
	setitimer(ITIMER_REAL, &it, NULL);
}

/* answer after a delay, and make sure only one copy arrived */
static int peer_answer_once(struct kdbus_conn *b, void *arg)
{
	unsigned int delay = *(unsigned int *)arg;
	uint64_t src, cookie = take_request(b, &src);

	if (!cookie)
		return TEST_FAIL;
	kdbus_msleep(delay);
	if (kdbus_recv(b, 0, 0, NULL) != -EAGAIN) {
		DIAG("the interrupted call was sent a second time");
		return TEST_FAIL;
	}
	if (kdbus_send(b, src, 1, 0, cookie, 0, "answer", 6) < 0)
		return TEST_FAIL;
	kdbus_msleep(300);
	if (kdbus_recv(b, 0, 0, NULL) != -EAGAIN) {
		DIAG("a second copy arrived after the reply");
		return TEST_FAIL;
	}
	return TEST_OK;
}

/* without SA_RESTART: EINTR, then the same SEND resumes (kdbus.message(7)) */
KDBUS_TEST(sync, signal_eintr_resume, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_msg *reply;
	unsigned int delay = 800;
	uint64_t off, bid, dl = kdbus_now_ns() + 20000 * MSEC;
	pid_t pid;

	ASSERT_OK(pair(env, &a, &b));
	bid = b->id;
	pid = peer(&b, peer_answer_once, &delay);
	arm_alarm(200, 0);
	ASSERT_ERR(kdbus_call_sync(a, bid, 0xabc, dl, "q", 1, NULL, NULL),
		   EINTR);
	ASSERT_EQ(got_signal, 1);
	ASSERT_OK(kdbus_call_sync(a, bid, 0xabc, dl, "q", 1, &reply, &off));
	ASSERT_EQ(reply->cookie_reply, 0xabc);
	ASSERT_OK(kdbus_free(a, off));
	ASSERT_EQ(kdbus_wait_child(pid), TEST_OK);
	ASSERT_ERR(kdbus_recv(a, 0, 0, NULL), EAGAIN);
	kdbus_conn_free(a);
	return TEST_OK;
}

/* the reply arrives while the caller is interrupted: the resumed call
 * returns it (intended behaviour, kdbus.message(7), kdbus(7) e) */
KDBUS_TEST(sync, signal_reply_while_interrupted, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_msg *reply;
	unsigned int delay = 300;
	uint64_t off, bid, dl = kdbus_now_ns() + 20000 * MSEC;
	pid_t pid;

	ASSERT_OK(pair(env, &a, &b));
	bid = b->id;
	pid = peer(&b, peer_answer, &delay);
	arm_alarm(100, 0);
	ASSERT_ERR(kdbus_call_sync(a, bid, 0xdef, dl, "q", 1, NULL, NULL),
		   EINTR);
	ASSERT_EQ(kdbus_wait_child(pid), TEST_OK);	/* replied by now */
	ASSERT_OK(kdbus_call_sync(a, bid, 0xdef, dl, "q", 1, &reply, &off));
	ASSERT_EQ(reply->cookie_reply, 0xdef);
	ASSERT_OK(kdbus_free(a, off));
	ASSERT_ERR(kdbus_recv(a, 0, 0, NULL), EAGAIN);
	kdbus_conn_free(a);
	return TEST_OK;
}

/* with SA_RESTART the interruption is invisible */
KDBUS_TEST(sync, signal_restart, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_msg *reply;
	unsigned int delay = 800;
	uint64_t off, bid;
	pid_t pid;

	ASSERT_OK(pair(env, &a, &b));
	bid = b->id;
	pid = peer(&b, peer_answer_once, &delay);
	arm_alarm(200, 1);
	ASSERT_OK(kdbus_call_sync(a, bid, 0x123, kdbus_now_ns() + 20000 * MSEC,
				  "q", 1, &reply, &off));
	ASSERT_EQ(got_signal, 1);
	ASSERT_EQ(reply->cookie_reply, 0x123);
	ASSERT_OK(kdbus_free(a, off));
	ASSERT_EQ(kdbus_wait_child(pid), TEST_OK);
	kdbus_conn_free(a);
	return TEST_OK;
}

/* an interrupted call that is never resumed is dropped silently at its
 * deadline (no REPLY_TIMEOUT) */
KDBUS_TEST(sync, interrupted_not_resumed, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_msg *m;
	uint64_t off;

	ASSERT_OK(pair(env, &a, &b));
	arm_alarm(100, 0);
	ASSERT_ERR(kdbus_call_sync(a, b->id, 0x31, kdbus_now_ns() + 400 * MSEC,
				   "q", 1, NULL, NULL), EINTR);
	ASSERT_OK(kdbus_recv_msg(b, 0, 0, &m, &off));
	ASSERT_EQ(m->cookie, 0x31);
	ASSERT_EQ(kdbus_wait_readable(a->fd, 1000), 0);
	kdbus_msleep(200);
	/* the record is gone: a reply is refused */
	ASSERT_ERR(kdbus_send(b, a->id, 1, 0, 0x31, 0, "r", 1), EBADSLT);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* own connection shut down (BYEBYE from another process) */
KDBUS_TEST(sync, own_byebye, 0)
{
	struct kdbus_conn *a, *b;
	pid_t pid;

	ASSERT_OK(pair(env, &a, &b));
	fflush(stdout);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		kdbus_msleep(300);
		_exit(kdbus_byebye(a->fd) == 0 ? TEST_OK : TEST_FAIL);
	}
	ASSERT_ERR(kdbus_call_sync(a, b->id, 7, kdbus_now_ns() + 10000 * MSEC,
				   "q", 1, NULL, NULL), ECONNRESET);
	ASSERT_EQ(kdbus_wait_child(pid), TEST_OK);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* the bus is torn down during the call */
KDBUS_TEST(sync, bus_teardown, 0)
{
	struct kdbus_conn *a, *b;
	pid_t pid;

	ASSERT_OK(pair(env, &a, &b));
	fflush(stdout);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		kdbus_msleep(300);
		close(env->bus_owner_fd);
		_exit(TEST_OK);
	}
	close(env->bus_owner_fd);
	ASSERT_ERR(kdbus_call_sync(a, b->id, 7, kdbus_now_ns() + 10000 * MSEC,
				   "q", 1, NULL, NULL), ECONNRESET);
	ASSERT_EQ(kdbus_wait_child(pid), TEST_OK);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

static int call_cancel(struct kdbus_conn *a, uint64_t dst, int cancel_fd,
		       uint64_t deadline)
{
	struct kdbus_msg *m = kdbus_msg_new(dst, 0x44, KDBUS_MSG_EXPECT_REPLY,
					    deadline, "q", 1);
	struct kdbus_cmd_send *cmd = cmd_new(sizeof(*cmd));
	int r;

	cmd->flags = KDBUS_SEND_SYNC_REPLY;
	cmd->msg_address = (uintptr_t)m;
	cmd_add_item(cmd, KDBUS_ITEM_CANCEL_FD, &cancel_fd, sizeof(int));
	r = kdbus_ioctl(a->fd, KDBUS_CMD_SEND, cmd);
	cmd_free(cmd);
	cmd_free(m);
	return r;
}

KDBUS_TEST(sync, cancel_fd, 0)
{
	struct kdbus_conn *a, *b;
	int efd = eventfd(0, EFD_CLOEXEC), mfd;
	uint64_t one = 1, t0;
	pid_t pid;

	ASSERT(efd >= 0);
	ASSERT_OK(pair(env, &a, &b));
	/* bad cancel fds */
	ASSERT_ERR(call_cancel(a, b->id, 9999, kdbus_now_ns() + 10000 * MSEC),
		   EBADF);
	mfd = memfd_create("nopoll", MFD_CLOEXEC);
	ASSERT(mfd >= 0);
	ASSERT_ERR(call_cancel(a, b->id, mfd, kdbus_now_ns() + 10000 * MSEC),
		   EINVAL);
	ASSERT_ERR(kdbus_recv(b, 0, 0, NULL), EAGAIN);
	fflush(stdout);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		kdbus_msleep(300);
		_exit(write(efd, &one, 8) == 8 ? TEST_OK : TEST_FAIL);
	}
	t0 = kdbus_now_ns();
	ASSERT_ERR(call_cancel(a, b->id, efd, kdbus_now_ns() + 10000 * MSEC),
		   ECANCELED);
	ASSERT(kdbus_now_ns() - t0 < 5000 * MSEC);
	ASSERT_EQ(kdbus_wait_child(pid), TEST_OK);
	/* the request was delivered (kdbus(7)) */
	ASSERT_OK(kdbus_recv(b, KDBUS_RECV_DROP, 0, NULL));
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

struct fdreply_arg {
	int fd;
};

static int peer_reply_fds(struct kdbus_conn *b, void *arg)
{
	struct fdreply_arg *fa = arg;
	uint64_t src, cookie = take_request(b, &src);
	struct kdbus_msg *m;
	int r;

	if (!cookie)
		return TEST_FAIL;
	m = kdbus_msg_new(src, 1, 0, cookie, "f", 1);
	cmd_add_item(m, KDBUS_ITEM_FDS, &fa->fd, sizeof(int));
	r = kdbus_send_msg(b->fd, 0, m, NULL);
	cmd_free(m);
	if (r != -ECOMM) {
		DIAG("replier: expected ECOMM, got %s",
		     r ? kdbus_errname(-r) : "success");
		return TEST_FAIL;
	}
	return TEST_OK;
}

/* the waiter does not accept fds: replier ECOMM, waiter EREMOTEIO */
KDBUS_TEST(sync, reply_with_refused_fds, 0)
{
	struct kdbus_conn *a, *b;
	struct fdreply_arg fa;
	uint64_t bid;
	int p[2];
	pid_t pid;

	ASSERT(pipe(p) == 0);
	fa.fd = p[0];
	ASSERT_OK(pair(env, &a, &b));
	bid = b->id;
	pid = peer(&b, peer_reply_fds, &fa);
	ASSERT_ERR(kdbus_call_sync(a, bid, 0x66, kdbus_now_ns() + 10000 * MSEC,
				   "q", 1, NULL, NULL), EREMOTEIO);
	ASSERT_EQ(kdbus_wait_child(pid), TEST_OK);
	kdbus_conn_free(a);
	return TEST_OK;
}

/* sync to an unknown id fails at once, nothing pending afterwards */
KDBUS_TEST(sync, unknown_destination, 0)
{
	struct kdbus_conn *a, *b;

	ASSERT_OK(pair(env, &a, &b));
	ASSERT_ERR(kdbus_call_sync(a, b->id + 100, 1,
				   kdbus_now_ns() + 1000 * MSEC, "q", 1, NULL,
				   NULL), ENXIO);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}
