// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Per-user limits (kdbus(7), kdbus.connection(7), kdbus(7)): connections per
 * user per domain, command size limit, sysname length.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

static int hello_fd(const char *path, size_t pool, int *out)
{
	struct kdbus_cmd_hello h = { .size = sizeof(h), .pool_size = pool };
	int fd = open(path, O_RDWR | O_CLOEXEC), r;

	if (fd < 0)
		return -errno;
	r = kdbus_ioctl(fd, KDBUS_CMD_HELLO, &h);
	if (r < 0) {
		close(fd);
		return r;
	}
	*out = fd;
	return 0;
}

/* KDBUS_USER_MAX_CONN per user; another user is not affected */
KDBUS_TEST_FULL(limits, conn_per_user, 0, 300)
{
	int full[2], go[2];
	pid_t pid, other;
	char c;

	ASSERT_OK(kdbus_raise_nofile(KDBUS_USER_MAX_CONN + 64));
	ASSERT(pipe(full) == 0 && pipe(go) == 0);
	pid = kdbus_fork_as(4601, 4601);
	ASSERT(pid >= 0);
	if (pid == 0) {
		static int fds[KDBUS_USER_MAX_CONN];
		int i, r, fd;

		for (i = 0; i < KDBUS_USER_MAX_CONN; i++) {
			r = hello_fd(env->bus_path, KDBUS_PAGE, &fds[i]);
			if (r < 0) {
				DIAG("connection %d: %s", i, kdbus_errname(-r));
				_exit(r == -ENOTTY ? TEST_SKIP : TEST_FAIL);
			}
		}
		r = hello_fd(env->bus_path, KDBUS_PAGE, &fd);
		if (r != -EMFILE) {
			DIAG("connection %d: expected EMFILE, got %s", i,
			     r ? kdbus_errname(-r) : "success");
			_exit(TEST_FAIL);
		}
		/* let the other user try while we are at the limit */
		if (write(full[1], "x", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(TEST_FAIL);
		/* closing one makes room */
		close(fds[0]);
		r = hello_fd(env->bus_path, KDBUS_PAGE, &fds[0]);
		if (r < 0) {
			DIAG("after close: %s", kdbus_errname(-r));
			_exit(TEST_FAIL);
		}
		_exit(TEST_OK);
	}
	close(full[1]);
	if (read(full[0], &c, 1) != 1)
		return kdbus_wait_child(pid);
	other = kdbus_fork_as(4602, 4602);
	ASSERT(other >= 0);
	if (other == 0) {
		int fd, r = hello_fd(env->bus_path, KDBUS_PAGE, &fd);

		if (r < 0)
			DIAG("other user: %s", kdbus_errname(-r));
		_exit(r < 0 ? TEST_FAIL : TEST_OK);
	}
	ASSERT_EQ(kdbus_wait_child(other), TEST_OK);
	ASSERT(write(go[1], "x", 1) == 1);
	return kdbus_wait_child(pid);
}

/* a failed HELLO (EMFILE) must not be counted; the failure is atomic */
KDBUS_TEST_FULL(limits, conn_limit_failure_atomic, 0, 300)
{
	pid_t pid;

	ASSERT_OK(kdbus_raise_nofile(KDBUS_USER_MAX_CONN + 64));
	pid = kdbus_fork_as(4603, 4603);
	ASSERT(pid >= 0);
	if (pid == 0) {
		static int fds[KDBUS_USER_MAX_CONN];
		int i, r, fd;

		for (i = 0; i < KDBUS_USER_MAX_CONN; i++) {
			r = hello_fd(env->bus_path, KDBUS_PAGE, &fds[i]);
			if (r < 0)
				_exit(r == -ENOTTY ? TEST_SKIP : TEST_FAIL);
		}
		for (i = 0; i < 20; i++) {
			r = hello_fd(env->bus_path, KDBUS_PAGE, &fd);
			if (r != -EMFILE)
				_exit(TEST_FAIL);
		}
		/* freeing exactly one slot allows exactly one more */
		close(fds[5]);
		if (hello_fd(env->bus_path, KDBUS_PAGE, &fds[5]) < 0)
			_exit(TEST_FAIL);
		r = hello_fd(env->bus_path, KDBUS_PAGE, &fd);
		if (r != -EMFILE) {
			DIAG("expected EMFILE, got %s",
			     r ? kdbus_errname(-r) : "success");
			_exit(TEST_FAIL);
		}
		_exit(TEST_OK);
	}
	return kdbus_wait_child(pid);
}

/* KDBUS_CMD_MAX_SIZE: 32768 is accepted, 32769 is EMSGSIZE */
KDBUS_TEST(limits, cmd_max_size, 0)
{
	struct kdbus_cmd_info *cmd = cmd_new(sizeof(*cmd));
	struct kdbus_conn *c;
	struct kdbus_item *it;
	uint64_t n;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	cmd->id = c->id;
	/* one NEGOTIATE item filling the command up to exactly 32768 */
	n = (KDBUS_CMD_MAX_SIZE - sizeof(*cmd) - KDBUS_ITEM_HDR) / 8;
	it = cmd_add_item(cmd, KDBUS_ITEM_NEGOTIATE, NULL, n * 8);
	ASSERT_EQ(cmd->size, KDBUS_CMD_MAX_SIZE);
	memset(it->data64, 0, n * 8);
	ASSERT_OK(kdbus_ioctl(c->fd, KDBUS_CMD_CONN_INFO, cmd));
	ASSERT_OK(kdbus_free(c, cmd->offset));
	/* one more byte: EMSGSIZE (size checked before the items) */
	cmd->size = KDBUS_CMD_MAX_SIZE + 1;
	ASSERT_ERR(kdbus_ioctl(c->fd, KDBUS_CMD_CONN_INFO, cmd), EMSGSIZE);
	cmd_free(cmd);
	kdbus_conn_free(c);
	return TEST_OK;
}
