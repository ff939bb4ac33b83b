// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Per-user quotas under a storm (issue 7; kdbus(7), kdbus.connection(7),
 * kdbus.pool(7), kdbus.name(7)): an unprivileged
 * user (UA, a forked child) drives each limit to its errno while a second user
 * (UB, and root) still sends and receives; after UA's connections are gone the
 * budget is usable again and the memory is given back.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "kdbus-test.h"
#include "kdbus-util.h"
#include "test-policy.h"

/* tests of group "quota-storm" (the group name has a dash) */
#define STORM_TEST(_name, _timeout)					\
	static int storm_fn_##_name(struct kdbus_test_env *env);	\
	static const struct kdbus_test storm_t_##_name = {		\
		.group = "quota-storm", .name = #_name,			\
		.fn = storm_fn_##_name, .timeout = (_timeout),		\
		.file = __FILE__, .line = __LINE__,			\
	};								\
	static const struct kdbus_test *storm_p_##_name			\
	__attribute__((used, section("kdbus_tests"), aligned(sizeof(void *)))) = \
		&storm_t_##_name;					\
	static int storm_fn_##_name(					\
		struct kdbus_test_env *env __attribute__((unused)))

/* limits of kdbus(7) that kdbus-util.h does not carry */
#define KDBUS_CONN_MAX_NAMES	256
#define KDBUS_MATCH_MAX		256

#define UA		4901	/* the storming user */
#define UB		4902	/* the second user */
#define COOKIE_B	0x4902
#define SHARE_PAYLOAD	16384
#define SHARE_SLICE	(96 + SHARE_PAYLOAD)	/* no metadata attached */

/* ---- a storming child and its handshake ---------------------------- */

struct storm {
	pid_t pid;
	int full[2];	/* child -> parent: "at the limit" */
	int go[2];	/* parent -> child: "you may finish" */
};

/* fork the storm as UA; returns 0 in the child, 1 in the parent, <0 */
static int storm_start(struct storm *s)
{
	if (pipe(s->full) < 0 || pipe(s->go) < 0)
		return -errno;
	s->pid = kdbus_fork_as(UA, UA);
	if (s->pid < 0)
		return s->pid;
	if (s->pid == 0) {
		close(s->full[0]);
		close(s->go[1]);
		return 0;
	}
	close(s->full[1]);
	close(s->go[0]);
	return 1;
}

/* child: report the limit reached and hold it until the parent is done */
static void storm_hold(struct storm *s)
{
	char c;

	if (write(s->full[1], "x", 1) != 1 || read(s->go[0], &c, 1) != 1)
		_exit(TEST_FAIL);
}

/* parent: wait for the limit; false if the child ended first */
static bool storm_full(struct storm *s)
{
	char c;

	return read(s->full[0], &c, 1) == 1;
}

/* parent: release the child and collect its result */
static int storm_finish(struct storm *s)
{
	int r;

	if (write(s->go[1], "x", 1) != 1)
		return TEST_FAIL;
	r = kdbus_wait_child(s->pid);
	close(s->full[0]);
	close(s->go[1]);
	return r;
}

/* child: an errno that must be the expected one, else exit */
static void storm_expect(long r, long expected, const char *what, int i)
{
	if (r == expected)
		return;
	DIAG("%s #%d: expected %ld (%s), got %ld (%s)", what, i, expected,
	     expected < 0 ? kdbus_errname(-expected) : "ok", r,
	     r < 0 ? kdbus_errname(-r) : "ok");
	_exit(r == -ENOTTY ? TEST_SKIP : TEST_FAIL);
}

/* ---- the other users' traffic --------------------------------------- */

enum {
	FLOW_UNICAST,
	FLOW_NAME,	/* to a well-known name the receiver acquires */
	FLOW_BROADCAST,	/* a signal through a match */
};

/* one message between two fresh connections of the calling user */
static int flow_pair(const char *path, int how, const char *name)
{
	struct kdbus_conn *a, *b;
	struct kdbus_msg *m;
	uint64_t off;
	int r;

	r = kdbus_hello(path, 0, 0, KDBUS_DEFAULT_POOL, &a);
	if (r < 0)
		return r;
	r = kdbus_hello(path, 0, 0, KDBUS_DEFAULT_POOL, &b);
	if (r < 0)
		goto out_a;
	if (how == FLOW_NAME) {
		r = kp_acquire(b, name, 0);
		if (r < 0)
			goto out;
		m = kdbus_msg_new(KDBUS_DST_ID_NAME, COOKIE_B, 0, 0, "b", 1);
		cmd_add_str(m, KDBUS_ITEM_DST_NAME, name);
		r = kdbus_send_msg(a->fd, 0, m, NULL);
		cmd_free(m);
	} else if (how == FLOW_BROADCAST) {
		r = kp_match_all(b);
		if (r == 0)
			r = kp_broadcast(a, COOKIE_B);
	} else {
		r = kdbus_send(a, b->id, COOKIE_B, 0, 0, 0, "b", 1);
	}
	if (r < 0)
		goto out;
	r = kdbus_wait_recv(b, 5000, &m, &off);
	if (r < 0)
		goto out;
	if (m->cookie != COOKIE_B || m->src_id != a->id)
		r = -EBADMSG;
	kdbus_free(b, off);
out:
	kdbus_conn_free(b);
out_a:
	kdbus_conn_free(a);
	return r;
}

/* UB (unprivileged, other uid) and root both still get their traffic */
static int others_flow(const char *path, int how, const char *name)
{
	pid_t pid;
	int r;

	pid = kdbus_fork_as(UB, UB);
	if (pid < 0)
		return TEST_FAIL;
	if (pid == 0) {
		char bname[64];

		snprintf(bname, sizeof(bname), "%s.ub", name ?: "");
		r = flow_pair(path, how, bname);
		if (r < 0)
			DIAG("second user: %s", kdbus_errname(-r));
		_exit(r < 0 ? TEST_FAIL : TEST_OK);
	}
	r = kdbus_wait_child(pid);
	if (r != TEST_OK)
		return r;
	if (name) {
		char rname[64];

		snprintf(rname, sizeof(rname), "%s.root", name);
		r = flow_pair(path, how, rname);
	} else {
		r = flow_pair(path, how, NULL);
	}
	if (r < 0) {
		DIAG("root: %s", kdbus_errname(-r));
		return TEST_FAIL;
	}
	return TEST_OK;
}

/*
 * Receive and free everything queued at r (closing received fds); returns
 * the number of messages, and in *n_cookie how many carried cookie (the
 * storm's senders are gone, so they are told apart by cookie).
 */
static int drain(struct kdbus_conn *r, uint64_t cookie, int *n_cookie)
{
	struct kdbus_item *it;
	struct kdbus_msg *m;
	uint64_t off;
	int n = 0, k;

	*n_cookie = 0;
	while (kdbus_recv_msg(r, 0, 0, &m, &off) == 0) {
		if (m->cookie == cookie)
			(*n_cookie)++;
		it = kdbus_msg_find(m, KDBUS_ITEM_FDS);
		if (it)
			for (k = 0; k < (int)((it->size - KDBUS_ITEM_HDR) /
					      sizeof(int)); k++)
				if (it->fds[k] >= 0)
					close(it->fds[k]);
		kdbus_free(r, off);
		n++;
	}
	return n;
}

/* ---- memory ----------------------------------------------------------- */

struct mem_snap {
	long shmem;	/* kB */
	long slab;	/* SUnreclaim, kB, -1 if unreadable */
};

static void mem_snap(struct mem_snap *m)
{
	m->shmem = kdbus_meminfo_kb("Shmem");
	m->slab = kdbus_meminfo_kb("SUnreclaim");
}

/*
 * Wait up to 10 s (deferred fput, RCU) for Shmem and unreclaimable slab
 * to come back within the tolerances of the baseline.
 */
static int mem_back(const struct mem_snap *base, long shmem_tol,
		    long slab_tol)
{
	struct mem_snap now;
	int i;

	for (i = 0; i < 100; i++) {
		mem_snap(&now);
		if (now.shmem <= base->shmem + shmem_tol &&
		    (base->slab < 0 || now.slab <= base->slab + slab_tol))
			return TEST_OK;
		kdbus_msleep(100);
	}
	DIAG("not freed: Shmem %ld -> %ld kB, SUnreclaim %ld -> %ld kB",
	     base->shmem, now.shmem, base->slab, now.slab);
	return TEST_FAIL;
}

/* ---- the limits --------------------------------------------------------- */

/* make buses as UA until EMFILE; returns the number made */
static int make_buses(int *fds, int max, int *err)
{
	int i, fd;

	for (i = 0; i < max; i++) {
		fd = kdbus_bus_new(0, NULL, 0);
		if (fd < 0) {
			*err = fd;
			return i;
		}
		fds[i] = fd;
	}
	*err = 0;
	return i;
}

/* KDBUS_USER_MAX_BUSES: EMFILE for UA, others still make buses and talk */
STORM_TEST(buses_per_user, 300)
{
	struct storm s;
	int fds[KDBUS_USER_MAX_BUSES + 1], err, n, round;

	for (round = 0; round < 2; round++) {
		ASSERT(storm_start(&s) >= 0);
		if (s.pid == 0) {
			n = make_buses(fds, KDBUS_USER_MAX_BUSES + 1, &err);
			storm_expect(n, KDBUS_USER_MAX_BUSES, "buses", 0);
			storm_expect(err, -EMFILE, "bus", n);
			storm_hold(&s);
			/* closing one makes room for exactly one */
			close(fds[0]);
			storm_expect(kdbus_bus_new(0, NULL, 0) >= 0 ? 0 : -1,
				     0, "bus after close", 0);
			_exit(TEST_OK);
		}
		if (!storm_full(&s))
			return kdbus_wait_child(s.pid);
		/* UB can make a bus; UB and root still talk on ours */
		{
			pid_t pid = kdbus_fork_as(UB, UB);

			ASSERT(pid >= 0);
			if (pid == 0) {
				int fd = kdbus_bus_new(0, NULL, 0);

				if (fd < 0)
					DIAG("UB bus: %s", kdbus_errname(-fd));
				_exit(fd < 0 ? TEST_FAIL : TEST_OK);
			}
			ASSERT_EQ(kdbus_wait_child(pid), TEST_OK);
		}
		ASSERT_EQ(others_flow(env->bus_path, FLOW_UNICAST, NULL),
			  TEST_OK);
		/* round 1 proves the count went back to zero */
		ASSERT_EQ(storm_finish(&s), TEST_OK);
	}
	return TEST_OK;
}

/* open HELLO'd handles until EMFILE; returns the number opened */
static int open_conns(const char *path, int *fds, int max, int *err)
{
	int i, fd;

	for (i = 0; i < max; i++) {
		struct kdbus_cmd_hello h = {
			.size = sizeof(h), .pool_size = KDBUS_PAGE,
		};

		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			*err = -errno;
			return i;
		}
		*err = kdbus_ioctl(fd, KDBUS_CMD_HELLO, &h);
		if (*err < 0) {
			close(fd);
			return i;
		}
		fds[i] = fd;
	}
	*err = 0;
	return i;
}

/* KDBUS_USER_MAX_CONN: EMFILE for UA while UB and root connect and talk */
STORM_TEST(conns_per_user, 400)
{
	static int fds[KDBUS_USER_MAX_CONN + 1];
	struct storm s;
	int err, n, round;

	ASSERT_OK(kdbus_raise_nofile(KDBUS_USER_MAX_CONN + 64));
	for (round = 0; round < 2; round++) {
		ASSERT(storm_start(&s) >= 0);
		if (s.pid == 0) {
			n = open_conns(env->bus_path, fds,
				       KDBUS_USER_MAX_CONN + 1, &err);
			storm_expect(n, KDBUS_USER_MAX_CONN, "connections", 0);
			storm_expect(err, -EMFILE, "connection", n);
			storm_hold(&s);
			_exit(TEST_OK);
		}
		if (!storm_full(&s))
			return kdbus_wait_child(s.pid);
		ASSERT_EQ(others_flow(env->bus_path, FLOW_UNICAST, NULL),
			  TEST_OK);
		ASSERT_EQ(storm_finish(&s), TEST_OK);
	}
	return TEST_OK;
}

/* KDBUS_CONN_MAX_NAMES: E2BIG per connection; others acquire and talk */
STORM_TEST(names_per_conn, 300)
{
	static const uint64_t world_own[][3] = {
		{ KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_OWN, 0 },
	};
	struct kdbus_conn *holder, *c;
	struct storm s;
	char name[64];
	int i;

	ASSERT_OK(kp_hello_policy(env->bus_path, KDBUS_HELLO_POLICY_HOLDER,
				  "storm.*", world_own, 1, &holder));
	ASSERT(storm_start(&s) >= 0);
	if (s.pid == 0) {
		struct kdbus_conn *a, *a2;

		storm_expect(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &a),
			     0, "hello", 0);
		for (i = 0; i < KDBUS_CONN_MAX_NAMES; i++) {
			snprintf(name, sizeof(name), "storm.n%d", i);
			storm_expect(kp_acquire(a, name, 0), 0, "acquire", i);
		}
		storm_expect(kp_acquire(a, "storm.more", 0), -E2BIG,
			     "acquire", i);
		/* the limit is per connection */
		storm_expect(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &a2),
			     0, "hello", 1);
		storm_expect(kp_acquire(a2, "storm.more", 0), 0, "acquire",
			     -1);
		storm_hold(&s);
		_exit(TEST_OK);
	}
	if (!storm_full(&s))
		return kdbus_wait_child(s.pid);
	ASSERT_EQ(others_flow(env->bus_path, FLOW_NAME, "storm"), TEST_OK);
	ASSERT_EQ(storm_finish(&s), TEST_OK);
	/* every name of the storm was released with its connection */
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	for (i = 0; i < KDBUS_CONN_MAX_NAMES; i++) {
		uint64_t flags;
		struct kdbus_cmd *cmd = cmd_new(sizeof(*cmd));

		snprintf(name, sizeof(name), "storm.n%d", i);
		kp_add_name(cmd, name);
		ASSERT_OK(kdbus_ioctl(c->fd, KDBUS_CMD_NAME_ACQUIRE, cmd));
		flags = cmd->return_flags;
		cmd_free(cmd);
		/* owned at once, not queued behind a leftover owner */
		ASSERT(!(flags & KDBUS_NAME_IN_QUEUE));
	}
	ASSERT_ERR(kp_acquire(c, "storm.more", 0), E2BIG);
	kdbus_conn_free(c);
	kdbus_conn_free(holder);
	return TEST_OK;
}

/* KDBUS_MATCH_MAX: EMFILE per connection; others' signals still arrive */
STORM_TEST(matches_per_conn, 300)
{
	struct storm s;
	int i;

	ASSERT(storm_start(&s) >= 0);
	if (s.pid == 0) {
		struct kdbus_conn *a, *a2;

		storm_expect(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &a),
			     0, "hello", 0);
		for (i = 0; i < KDBUS_MATCH_MAX; i++)
			storm_expect(kp_match_all(a), 0, "match", i);
		storm_expect(kp_match_all(a), -EMFILE, "match", i);
		storm_expect(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &a2),
			     0, "hello", 1);
		storm_expect(kp_match_all(a2), 0, "match on 2nd conn", 0);
		storm_hold(&s);
		_exit(TEST_OK);
	}
	if (!storm_full(&s))
		return kdbus_wait_child(s.pid);
	ASSERT_EQ(others_flow(env->bus_path, FLOW_BROADCAST, NULL), TEST_OK);
	return storm_finish(&s);
}

/*
 * The receive-queue quotas share one shape: a receiver R of UA's (so UA
 * may talk to it without policy), UA's sender fills its quota in R from
 * the storm child, root's messages still enter R and UB's traffic flows;
 * after the storm R is drained and a new UA sender gets the same budget.
 */
enum q_kind { Q_MSGS, Q_SHARE, Q_FDS };

/* fill UA's quota in R; the expected errno at the end */
static long q_fill(struct kdbus_conn *s, uint64_t rid, enum q_kind kind,
		   int *count)
{
	static uint8_t buf[SHARE_PAYLOAD];
	int fds[KDBUS_CONN_MAX_FDS_PER_USER + 1], i;
	struct kdbus_msg *m;
	long r = 0;

	*count = 0;
	if (kind == Q_FDS) {
		for (i = 0; i <= KDBUS_CONN_MAX_FDS_PER_USER; i++)
			fds[i] = STDERR_FILENO;
		/* too many in one message */
		m = kdbus_msg_new(rid, 0x4901, 0, 0, "f", 1);
		cmd_add_item(m, KDBUS_ITEM_FDS, fds, sizeof(fds));
		r = kdbus_send_msg(s->fd, 0, m, NULL);
		cmd_free(m);
		if (r != -EMFILE)
			return r ?: -EPROTO;
		/* half, half, then one more is over the in-flight budget */
		for (i = 0; i < 3; i++) {
			m = kdbus_msg_new(rid, 0x4901, 0, 0, "f", 1);
			cmd_add_item(m, KDBUS_ITEM_FDS, fds,
				     (i < 2 ? KDBUS_CONN_MAX_FDS_PER_USER / 2 :
				      1) * sizeof(int));
			r = kdbus_send_msg(s->fd, 0, m, NULL);
			cmd_free(m);
			if (r < 0)
				return r;
			(*count)++;
		}
		return 0;
	}
	for (i = 0; i < 1000; i++) {
		if (kind == Q_SHARE)
			r = kdbus_send(s, rid, 0x4901, 0, 0, 0, buf,
				       SHARE_PAYLOAD);
		else
			r = kdbus_send(s, rid, 0x4901, 0, 0, 0, "m", 1);
		if (r < 0)
			break;
		(*count)++;
	}
	return r;
}

static int q_expected(enum q_kind kind, long *err)
{
	switch (kind) {
	case Q_MSGS:
		*err = -ENOBUFS;
		return KDBUS_CONN_MAX_MSGS;
	case Q_SHARE:
		*err = -ENOBUFS;
		return (KDBUS_DEFAULT_POOL / 2 / 3) / SHARE_SLICE;
	default:
		*err = -EMFILE;
		return 2;
	}
}

static int queue_storm(struct kdbus_test_env *env, enum q_kind kind)
{
	struct kdbus_conn *r, *root;
	struct storm s;
	long want_err, err;
	int want_n, n, n_ua;
	uint64_t rid;

	want_n = q_expected(kind, &want_err);
	ASSERT_OK(kdbus_hello_as_uid(env->bus_path, UA, KDBUS_HELLO_ACCEPT_FD,
				     0, KDBUS_DEFAULT_POOL, &r));
	rid = r->id;
	ASSERT(storm_start(&s) >= 0);
	if (s.pid == 0) {
		struct kdbus_conn *a, *a2;

		storm_expect(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &a),
			     0, "hello", 0);
		err = q_fill(a, rid, kind, &n);
		storm_expect(n, want_n, "queued", 0);
		storm_expect(err, want_err, "send", n);
		/* a second connection of the same user: same budget */
		storm_expect(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &a2),
			     0, "hello", 1);
		if (kind == Q_FDS) {
			int fd = STDERR_FILENO;
			struct kdbus_msg *m = kdbus_msg_new(rid, 0x4901, 0, 0,
							    "f", 1);

			cmd_add_item(m, KDBUS_ITEM_FDS, &fd, sizeof(fd));
			storm_expect(kdbus_send_msg(a2->fd, 0, m, NULL),
				     -EMFILE, "fd from 2nd conn", 0);
			cmd_free(m);
		} else {
			static uint8_t buf[SHARE_PAYLOAD];

			storm_expect(kdbus_send(a2, rid, 0x4901, 0, 0, 0, buf,
						kind == Q_SHARE ?
						SHARE_PAYLOAD : 1),
				     -ENOBUFS, "send from 2nd conn", 0);
		}
		storm_hold(&s);
		_exit(TEST_OK);
	}
	if (!storm_full(&s))
		return kdbus_wait_child(s.pid);
	/* root's messages (with fds for Q_FDS) still enter R */
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &root));
	if (kind == Q_FDS) {
		int fds[KDBUS_CONN_MAX_FDS_PER_USER], i;
		struct kdbus_msg *m = kdbus_msg_new(rid, 0x0, 0, 0, "f", 1);

		for (i = 0; i < KDBUS_CONN_MAX_FDS_PER_USER; i++)
			fds[i] = STDERR_FILENO;
		cmd_add_item(m, KDBUS_ITEM_FDS, fds, sizeof(fds));
		ASSERT_OK(kdbus_send_msg(root->fd, 0, m, NULL));
		cmd_free(m);
	} else {
		static uint8_t buf[SHARE_PAYLOAD];
		int i;

		for (i = 0; i < 3; i++)
			ASSERT_OK(kdbus_send(root, rid, 0x0, 0, 0, 0, buf,
					     kind == Q_SHARE ?
					     SHARE_PAYLOAD : 1));
	}
	ASSERT_EQ(others_flow(env->bus_path, FLOW_UNICAST, NULL), TEST_OK);
	ASSERT_EQ(storm_finish(&s), TEST_OK);
	/* the storm's messages outlive its connections until received */
	n = drain(r, 0x4901, &n_ua);
	ASSERT_EQ(n_ua, want_n);
	ASSERT_EQ(n, want_n + (kind == Q_FDS ? 1 : 3));
	/* received: UA's budget in R is whole again, for a new process */
	s.pid = kdbus_fork_as(UA, UA);
	ASSERT(s.pid >= 0);
	if (s.pid == 0) {
		struct kdbus_conn *a;

		storm_expect(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &a),
			     0, "hello", 0);
		err = q_fill(a, rid, kind, &n);
		storm_expect(n, want_n, "queued after the storm", 0);
		storm_expect(err, want_err, "send after the storm", n);
		_exit(TEST_OK);
	}
	ASSERT_EQ(kdbus_wait_child(s.pid), TEST_OK);
	drain(r, 0x4901, &n_ua);
	ASSERT_EQ(n_ua, want_n);
	kdbus_conn_free(root);
	kdbus_conn_free(r);
	return TEST_OK;
}

/* KDBUS_CONN_MAX_MSGS per sending user in one receiver: ENOBUFS */
STORM_TEST(msgs_per_user, 300)
{
	return queue_storm(env, Q_MSGS);
}

/* pool share of one sending user in one receiver: ENOBUFS */
STORM_TEST(pool_share_per_user, 300)
{
	return queue_storm(env, Q_SHARE);
}

/* in-flight fds per sending user in one receiver: EMFILE */
STORM_TEST(fds_per_user, 300)
{
	return queue_storm(env, Q_FDS);
}

/*
 * Everything at once from UA, with big pools: Shmem rises by the queued
 * slices, and after UA's process is gone Shmem and unreclaimable slab are
 * back near the baseline.
 */
#define STORM_RECEIVERS	16
#define STORM_POOL	(4ULL * 1024 * 1024)

STORM_TEST(memory_freed, 300)
{
	struct mem_snap base, peak;
	struct storm s;

	mem_snap(&base);
	ASSERT(base.shmem >= 0);
	ASSERT(storm_start(&s) >= 0);
	if (s.pid == 0) {
		static uint8_t buf[SHARE_PAYLOAD];
		struct kdbus_conn *r[STORM_RECEIVERS], *a;
		int i, k, n;
		long err;

		storm_expect(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &a),
			     0, "hello", 0);
		for (i = 0; i < STORM_RECEIVERS; i++) {
			storm_expect(kdbus_hello(env->bus_path, 0, 0,
						 STORM_POOL, &r[i]),
				     0, "hello", i);
			for (k = 0; k < KDBUS_MATCH_MAX; k++)
				storm_expect(kp_match_all(r[i]), 0, "match",
					     k);
			for (n = 0, err = 0; n < 1000 && !err; n++)
				err = kdbus_send(a, r[i]->id, n + 1, 0, 0, 0,
						 buf, SHARE_PAYLOAD);
			storm_expect(err, -ENOBUFS, "share", n);
		}
		/* signals to everybody: every receiver's queue is full */
		storm_expect(kp_broadcast(a, 1), 0, "broadcast", 0);
		storm_hold(&s);
		_exit(TEST_OK);
	}
	if (!storm_full(&s))
		return kdbus_wait_child(s.pid);
	mem_snap(&peak);
	DIAG("Shmem %ld -> %ld kB, SUnreclaim %ld -> %ld kB", base.shmem,
	     peak.shmem, base.slab, peak.slab);
	/* 16 x 42 slices of 16 KiB: the measurement sees the storm */
	ASSERT(peak.shmem >= base.shmem + 8 * 1024);
	ASSERT_EQ(others_flow(env->bus_path, FLOW_BROADCAST, NULL), TEST_OK);
	ASSERT_EQ(storm_finish(&s), TEST_OK);
	return mem_back(&base, 1024, 2048);
}
