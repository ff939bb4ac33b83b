// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Which files may travel in an FDS item (kernel/fds.c, kdbus.message(7)):
 * leaf objects pass, anything that can hold references to other files is
 * refused with EOPNOTSUPP, and the io_uring reference cycle of issue 12
 * cannot keep a connection alive after its owner exits.
 */

#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif

static int send_fd(struct kdbus_conn *c, uint64_t dst, int fd)
{
	struct kdbus_msg *m = kdbus_msg_new(dst, 7, 0, 0, "f", 1);
	int r;

	cmd_add_item(m, KDBUS_ITEM_FDS, &fd, sizeof(fd));
	r = kdbus_send_msg(c->fd, 0, m, NULL);
	cmd_free(m);
	return r;
}

/* an io_uring whose fixed-file table holds @fd, or -errno */
static int io_uring_holding(int fd)
{
	struct io_uring_params p;
	int ring;

	memset(&p, 0, sizeof(p));
	ring = (int)syscall(__NR_io_uring_setup, 4, &p);
	if (ring < 0)
		return -errno;
	if (syscall(__NR_io_uring_register, ring, IORING_REGISTER_FILES, &fd, 1) < 0) {
		int e = -errno;

		close(ring);
		return e;
	}
	return ring;
}

/* receive one message with one fd, check it is a working descriptor */
static int recv_one_fd(struct kdbus_conn *c)
{
	struct kdbus_msg *m;
	struct kdbus_item *it;
	uint64_t off;

	ASSERT_OK(kdbus_recv_msg(c, 0, 0, &m, &off));
	it = kdbus_msg_find(m, KDBUS_ITEM_FDS);
	ASSERT(it && it->fds[0] >= 0);
	ASSERT(fcntl(it->fds[0], F_GETFD) >= 0);
	close(it->fds[0]);
	ASSERT_OK(kdbus_free(c, off));
	return TEST_OK;
}

KDBUS_TEST(fds, allow_list, 0)
{
	struct kdbus_conn *a, *b;
	int fd, sp[2], p[2];
	sigset_t mask;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, KDBUS_HELLO_ACCEPT_FD, 0,
			      KDBUS_DEFAULT_POOL, &b));

#define PASSES(expr) do {						\
		fd = (expr);						\
		ASSERT(fd >= 0);					\
		ASSERT_OK(send_fd(a, b->id, fd));			\
		close(fd);						\
		RUN(recv_one_fd(b));				\
	} while (0)
#define REFUSED(expr) do {						\
		fd = (expr);						\
		ASSERT(fd >= 0);					\
		ASSERT_ERR(send_fd(a, b->id, fd), EOPNOTSUPP);		\
		close(fd);						\
	} while (0)

	/* leaf objects */
	PASSES(open("/proc/self/status", O_RDONLY));	/* regular file */
	PASSES(open("/", O_RDONLY | O_DIRECTORY));	/* directory */
	PASSES(open("/dev/null", O_RDWR));		/* character device */
	PASSES(memfd_create("kdbus-test", MFD_CLOEXEC));
	PASSES(eventfd(0, EFD_CLOEXEC));
	PASSES(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC));
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR2);
	PASSES(signalfd(-1, &mask, SFD_CLOEXEC));
	PASSES((int)syscall(__NR_pidfd_open, getpid(), 0));
	PASSES(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
	ASSERT(pipe(p) == 0);
	close(p[0]);
	PASSES(p[1]);
	PASSES(open(KDBUS_CONTROL, O_PATH));		/* O_PATH: anything */

	/* files that can hold references to other files */
	REFUSED(epoll_create1(EPOLL_CLOEXEC));
	/* a kernel without CONFIG_INOTIFY_USER (the tinyconfig-based debug
	 * kernel) has no inotify to refuse */
	fd = inotify_init1(IN_CLOEXEC);
	if (fd >= 0 || errno != ENOSYS)
		REFUSED(fd);
	REFUSED(dup(a->fd));				/* a kdbus handle */
	REFUSED(open(KDBUS_CONTROL, O_RDWR));
	ASSERT(socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == 0);
	close(sp[1]);
	REFUSED(sp[0]);
	fd = io_uring_holding(a->fd);
	if (fd != -ENOSYS && fd != -EPERM)
		REFUSED(fd);
#undef PASSES
#undef REFUSED

	/* nothing refused was queued */
	ASSERT_ERR(kdbus_recv(b, 0, 0, NULL), EAGAIN);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/*
 * The cycle of issue 12: a connection queues, to itself, an io_uring
 * whose fixed-file table holds the connection's own handle, and exits.
 * If the io_uring were accepted, the connection would reference itself
 * and survive its process forever (a ghost counted against its uid).
 */
KDBUS_TEST(fds, io_uring_cycle_no_ghost, 0)
{
	struct kdbus_conn *observer;
	struct kdbus_info *info;
	uint64_t id, off, deadline;
	int r, p[2];
	pid_t pid;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL,
			      &observer));
	ASSERT(pipe(p) == 0);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		struct kdbus_conn *c;
		int ring;

		close(p[0]);
		if (kdbus_hello(env->bus_path, KDBUS_HELLO_ACCEPT_FD, 0,
				KDBUS_DEFAULT_POOL, &c) < 0)
			_exit(1);
		if (write(p[1], &c->id, sizeof(c->id)) != sizeof(c->id))
			_exit(1);
		ring = io_uring_holding(c->fd);
		if (ring < 0)
			_exit(ring == -ENOSYS || ring == -EPERM ? 77 : 1);
		r = send_fd(c, c->id, ring);
		/* exit without closing anything: the kernel closes it all */
		_exit(r == -EOPNOTSUPP ? 0 : 2);
	}
	close(p[1]);
	ASSERT(read(p[0], &id, sizeof(id)) == sizeof(id));
	close(p[0]);
	r = kdbus_wait_child(pid);
	if (r == TEST_SKIP) {
		kdbus_test_skip_reason("io_uring is not available");
		kdbus_conn_free(observer);
		return TEST_SKIP;
	}
	if (r == 2)
		kdbus_diag("the io_uring holding the handle was accepted");
	ASSERT_EQ(r, 0);

	/* the connection goes away with its process (io_uring frees late) */
	deadline = kdbus_now_ns() + 3000000000ULL;
	for (;;) {
		r = kdbus_conn_info(observer, id, NULL, 0, &info, &off);
		if (r == -ENXIO)	/* no connection with that id */
			break;
		ASSERT_OK(r);
		ASSERT_OK(kdbus_free(observer, off));
		if (kdbus_now_ns() > deadline) {
			kdbus_diag("connection %llu outlived its process",
				   (unsigned long long)id);
			return TEST_FAIL;
		}
		kdbus_msleep(20);
	}
	kdbus_conn_free(observer);
	return TEST_OK;
}
