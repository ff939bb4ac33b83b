// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Teardown: KDBUS_CMD_BYEBYE (kdbus.connection(7)), disconnect as seen by peers
 * (kdbus.connection(7)), bus teardown with live handles (kdbus.connection(7)),
 * mappings that outlive the connection (kdbus.pool(7)), and many connections
 * opened and closed with no leak of pool memory.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

KDBUS_TEST(teardown, byebye, 0)
{
	struct kdbus_cmd cmd = { .size = sizeof(cmd) };
	struct pollfd p = { .events = POLLIN | POLLOUT };
	struct kdbus_conn *a, *b;
	struct kdbus_info *info;
	uint64_t off;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &b));
	/* leave a published slice in a's pool: does not block BYEBYE */
	ASSERT_OK(kdbus_conn_info(a, a->id, NULL, 0, &info, &off));
	/* flags: only NEGOTIATE; a negotiation does not disconnect */
	cmd.flags = 1;
	ASSERT_ERR(kdbus_ioctl(a->fd, KDBUS_CMD_BYEBYE, &cmd), EINVAL);
	cmd.flags = KDBUS_FLAG_NEGOTIATE;
	ASSERT_OK(kdbus_ioctl(a->fd, KDBUS_CMD_BYEBYE, &cmd));
	ASSERT_EQ(cmd.flags, 0);
	ASSERT_OK(kdbus_conn_info(b, a->id, NULL, 0, NULL, NULL));

	ASSERT_OK(kdbus_byebye(a->fd));
	/* every ioctl now: ECONNRESET, a second BYEBYE too */
	ASSERT_ERR(kdbus_byebye(a->fd), ECONNRESET);
	ASSERT_ERR(kdbus_free(a, off), ECONNRESET);
	ASSERT_ERR(kdbus_conn_info(a, a->id, NULL, 0, NULL, NULL), ECONNRESET);
	/* poll: POLLERR|POLLHUP */
	p.fd = a->fd;
	ASSERT_EQ(poll(&p, 1, 0), 1);
	ASSERT_EQ(p.revents & (POLLERR | POLLHUP), POLLERR | POLLHUP);
	/* peers no longer find it */
	ASSERT_ERR(kdbus_conn_info(b, a->id, NULL, 0, NULL, NULL), ENXIO);
	/* the mapping stays readable */
	ASSERT_EQ(info->id, a->id);
	/* even for codes this state never accepts (kdbus(7)) */
	cmd.flags = 0;
	ASSERT_ERR(kdbus_ioctl(a->fd, KDBUS_CMD_ENDPOINT_UPDATE, &cmd),
		   ECONNRESET);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* closing the bus owner fd tears everything down (kdbus.connection(7)) */
KDBUS_TEST(teardown, bus_close_with_connections, 0)
{
	struct kdbus_cmd_hello h = { .size = sizeof(h),
				     .pool_size = KDBUS_PAGE };
	struct pollfd p = { .events = POLLIN | POLLOUT };
	struct kdbus_conn *a;
	struct kdbus_info *info;
	uint64_t off;
	int fresh;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &a));
	ASSERT_OK(kdbus_conn_info(a, a->id, NULL, 0, &info, &off));
	fresh = open(env->bus_path, O_RDWR);
	ASSERT(fresh >= 0);

	close(env->bus_owner_fd);
	env->bus_owner_fd = -1;
	ASSERT(access(env->bus_dir, F_OK) < 0 && errno == ENOENT);
	ASSERT_ERR(kdbus_conn_info(a, a->id, NULL, 0, NULL, NULL), ECONNRESET);
	ASSERT_ERR(kdbus_free(a, off), ECONNRESET);
	p.fd = a->fd;
	ASSERT_EQ(poll(&p, 1, 0), 1);
	ASSERT_EQ(p.revents & (POLLERR | POLLHUP), POLLERR | POLLHUP);
	ASSERT_ERR(kdbus_ioctl(fresh, KDBUS_CMD_HELLO, &h), ESHUTDOWN);
	/* the pool mapping is still readable */
	ASSERT_EQ(info->id, a->id);
	/* and the name is free again */
	{
		int ctl = kdbus_open_control();

		ASSERT(ctl >= 0);
		ASSERT_OK(kdbus_bus_make(ctl, 0, env->bus_name, 8, 1, NULL));
		close(ctl);
	}
	close(fresh);
	kdbus_conn_free(a);
	return TEST_OK;
}

/* close() of a connection fd while its pool is mapped */
KDBUS_TEST(teardown, close_while_mapped, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_info *info;
	uint64_t off, id;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &b));
	ASSERT_OK(kdbus_conn_info(a, b->id, NULL, 0, &info, &off));
	id = a->id;
	close(a->fd);
	a->fd = -1;
	/* mapping readable after close */
	ASSERT_EQ(info->id, b->id);
	ASSERT_ERR(kdbus_conn_info(b, id, NULL, 0, NULL, NULL), ENXIO);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* dup()ed connection fd: the connection lives until the last close */
KDBUS_TEST(teardown, dup_fd, 0)
{
	struct kdbus_conn *a, *b;
	int d;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &b));
	d = dup(a->fd);
	ASSERT(d >= 0);
	close(a->fd);
	a->fd = -1;
	ASSERT_OK(kdbus_conn_info(b, a->id, NULL, 0, NULL, NULL));
	close(d);
	ASSERT_ERR(kdbus_conn_info(b, a->id, NULL, 0, NULL, NULL), ENXIO);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

#define LOOP_CONNS 400

static int open_many(const char *path, int *fds, int n, size_t pool)
{
	struct kdbus_cmd_hello h;
	int i;

	for (i = 0; i < n; i++) {
		memset(&h, 0, sizeof(h));
		h.size = sizeof(h);
		h.pool_size = pool;
		fds[i] = open(path, O_RDWR | O_CLOEXEC);
		if (fds[i] < 0)
			return -errno;
		if (kdbus_ioctl(fds[i], KDBUS_CMD_HELLO, &h) < 0)
			return -errno ? -errno : -EIO;
		/* the HELLO slice stays published: it is pool memory */
	}
	return 0;
}

static void close_many(int *fds, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/*
 * Many connections opened and closed: the pool memory (shmem) goes back
 * to where it was. Each HELLO writes a slice into its pool, so each live
 * connection holds at least one shmem page; a leaked pool keeps it.
 */
KDBUS_TEST_FULL(teardown, conn_loop_no_leak, 0, 300)
{
	static int fds[LOOP_CONNS];
	long base, peak, after, round;
	int r, i;

	ASSERT_OK(kdbus_raise_nofile(LOOP_CONNS + 64));
	/* warm-up round: caches, slabs */
	memset(fds, -1, sizeof(fds));
	r = open_many(env->bus_path, fds, LOOP_CONNS, KDBUS_PAGE * 4);
	close_many(fds, LOOP_CONNS);
	ASSERT_OK(r);
	kdbus_msleep(300);

	base = kdbus_meminfo_kb("Shmem");
	ASSERT(base >= 0);
	memset(fds, -1, sizeof(fds));
	ASSERT_OK(open_many(env->bus_path, fds, LOOP_CONNS, KDBUS_PAGE * 4));
	peak = kdbus_meminfo_kb("Shmem");
	close_many(fds, LOOP_CONNS);
	DIAG("Shmem: base %ld kB, with %d connections %ld kB", base,
	     LOOP_CONNS, peak);
	/* the measurement must see the pools, or it proves nothing */
	ASSERT(peak - base >= LOOP_CONNS * 4 / 2);

	for (round = 0; round < 3; round++) {
		memset(fds, -1, sizeof(fds));
		r = open_many(env->bus_path, fds, LOOP_CONNS, KDBUS_PAGE * 4);
		close_many(fds, LOOP_CONNS);
		ASSERT_OK(r);
	}
	/* freeing may be deferred a little (RCU, task work) */
	for (i = 0; i < 50; i++) {
		after = kdbus_meminfo_kb("Shmem");
		if (after - base < (peak - base) / 4)
			break;
		kdbus_msleep(100);
	}
	DIAG("Shmem after 4 x %d connections closed: %ld kB", LOOP_CONNS,
	     after);
	ASSERT(after - base < (peak - base) / 4);
	return TEST_OK;
}

/*
 * Unprivileged variant: a user's connection count goes back to zero after
 * close, so the per-user limit never fills up from closed connections.
 */
KDBUS_TEST_FULL(teardown, conn_count_released, 0, 300)
{
	pid_t pid;

	ASSERT_OK(kdbus_raise_nofile(KDBUS_USER_MAX_CONN + 64));
	pid = kdbus_fork_as(4501, 4501);
	ASSERT(pid >= 0);
	if (pid == 0) {
		static int fds[KDBUS_USER_MAX_CONN];
		int round, r;

		for (round = 0; round < 2; round++) {
			memset(fds, -1, sizeof(fds));
			r = open_many(env->bus_path, fds, KDBUS_USER_MAX_CONN,
				      KDBUS_PAGE);
			close_many(fds, KDBUS_USER_MAX_CONN);
			if (r < 0) {
				DIAG("round %d: %s", round, kdbus_errname(-r));
				_exit(r == -ENOTTY ? TEST_SKIP : TEST_FAIL);
			}
		}
		_exit(TEST_OK);
	}
	return kdbus_wait_child(pid);
}

/* SEND and RECV after BYEBYE: ECONNRESET (kdbus.connection(7)) */
KDBUS_TEST(teardown, send_recv_after_byebye, 0)
{
	struct kdbus_conn *a, *b;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &b));
	ASSERT_OK(kdbus_byebye(a->fd));
	ASSERT_ERR(kdbus_recv(a, 0, 0, NULL), ECONNRESET);
	ASSERT_ERR(kdbus_send(a, b->id, 1, 0, 0, 0, "x", 1), ECONNRESET);
	/* and the peer cannot reach it */
	ASSERT_ERR(kdbus_send(b, a->id, 1, 0, 0, 0, "x", 1), ENXIO);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}
