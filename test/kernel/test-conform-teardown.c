// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Conformance audit of teardown (kdbus(7) dispatch, kdbus.connection(7)): every
 * kdbus request on a connection after BYEBYE and after bus teardown, handles in
 * state NONE on a dead bus, poll wake-ups on disconnect, IDs that are
 * never reused.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

#define CONFORM_TEST(_name, _flags)						\
	static int conform_teardown_fn_##_name(struct kdbus_test_env *env);	\
	static const struct kdbus_test conform_teardown_t_##_name = {		\
		.group = "conform-teardown", .name = #_name,				\
		.fn = conform_teardown_fn_##_name, .flags = (_flags),		\
		.file = __FILE__, .line = __LINE__,				\
	};									\
	static const struct kdbus_test *conform_teardown_p_##_name			\
	__attribute__((used, section("kdbus_tests"), aligned(sizeof(void *)))) = \
		&conform_teardown_t_##_name;						\
	static int conform_teardown_fn_##_name(					\
		struct kdbus_test_env *env __attribute__((unused)))

static const struct {
	const char *name;
	unsigned long req;
	size_t fixed;
} conn_cmds[] = {
	{ "UPDATE", KDBUS_CMD_UPDATE, 24 },
	{ "BYEBYE", KDBUS_CMD_BYEBYE, 24 },
	{ "FREE", KDBUS_CMD_FREE, 32 },
	{ "CONN_INFO", KDBUS_CMD_CONN_INFO, 56 },
	{ "BUS_CREATOR_INFO", KDBUS_CMD_BUS_CREATOR_INFO, 56 },
	{ "LIST", KDBUS_CMD_LIST, 40 },
	{ "SEND", KDBUS_CMD_SEND, 56 },
	{ "RECV", KDBUS_CMD_RECV, 64 },
	{ "NAME_ACQUIRE", KDBUS_CMD_NAME_ACQUIRE, 24 },
	{ "NAME_RELEASE", KDBUS_CMD_NAME_RELEASE, 24 },
	{ "MATCH_ADD", KDBUS_CMD_MATCH_ADD, 32 },
	{ "MATCH_REMOVE", KDBUS_CMD_MATCH_REMOVE, 32 },
	{ "ENDPOINT_UPDATE", KDBUS_CMD_ENDPOINT_UPDATE, 24 },
};

/*
 * kdbus(7) / kdbus.connection(7): on a disconnected connection every
 * non-setup kdbus request fails with ECONNRESET before its argument is
 * even looked at; setup requests fail with EBADFD (rule 2); unknown
 * requests with ENOTTY (rule 1).
 */
static int check_dead_conn(int fd)
{
	uint64_t *buf = cmd_new(64);
	int bad = 0;
	size_t i;

	for (i = 0; i < sizeof(conn_cmds) / sizeof(conn_cmds[0]); i++) {
		long r;

		memset(buf, 0, 128);
		buf[0] = conn_cmds[i].fixed;
		r = kdbus_ioctl(fd, conn_cmds[i].req, buf);
		if (r != -ECONNRESET) {
			DIAG("%s: expected ECONNRESET, got %s", conn_cmds[i].name,
			     r ? kdbus_errname(-r) : "success");
			bad = 1;
		}
		r = kdbus_ioctl(fd, conn_cmds[i].req, NULL);
		if (r != -ECONNRESET) {
			DIAG("%s (NULL argument): expected ECONNRESET, got %s",
			     conn_cmds[i].name, r ? kdbus_errname(-r) : "success");
			bad = 1;
		}
	}
	{
		struct kdbus_cmd_hello h = { .size = sizeof(h),
					     .pool_size = KDBUS_PAGE };
		long r = kdbus_ioctl(fd, KDBUS_CMD_HELLO, &h);

		if (r != -EBADFD) {
			DIAG("HELLO: expected EBADFD, got %s",
			     r ? kdbus_errname(-r) : "success");
			bad = 1;
		}
		buf[0] = 24;
		r = kdbus_ioctl(fd, KDBUS_CMD_BUS_MAKE, buf);
		if (r != -EBADFD) {
			DIAG("BUS_MAKE: expected EBADFD, got %s",
			     r ? kdbus_errname(-r) : "success");
			bad = 1;
		}
		r = kdbus_ioctl(fd, KDBUS_CMD_ENDPOINT_MAKE, buf);
		if (r != -EBADFD) {
			DIAG("ENDPOINT_MAKE: expected EBADFD, got %s",
			     r ? kdbus_errname(-r) : "success");
			bad = 1;
		}
		r = kdbus_ioctl(fd, _IOW(KDBUS_IOCTL_MAGIC, 0x87,
					 struct kdbus_cmd), buf);
		if (r != -ENOTTY) {
			DIAG("unknown request: expected ENOTTY, got %s",
			     r ? kdbus_errname(-r) : "success");
			bad = 1;
		}
	}
	cmd_free(buf);
	return bad ? TEST_FAIL : TEST_OK;
}

CONFORM_TEST(every_request_after_byebye, 0)
{
	struct kdbus_conn *c;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	ASSERT_OK(kdbus_byebye(c->fd));
	RUN(check_dead_conn(c->fd));
	kdbus_conn_free(c);
	return TEST_OK;
}

CONFORM_TEST(every_request_after_bus_teardown, 0)
{
	struct kdbus_conn *c, *m;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	ASSERT_OK(kdbus_hello(env->bus_path, KDBUS_HELLO_MONITOR, 0,
			      KDBUS_PAGE, &m));
	close(env->bus_owner_fd);
	env->bus_owner_fd = -1;
	RUN(check_dead_conn(c->fd));
	/* a monitor, which may not BYEBYE, is disconnected all the same */
	RUN(check_dead_conn(m->fd));
	kdbus_conn_free(c);
	kdbus_conn_free(m);
	return TEST_OK;
}

/* kdbus(7) / kdbus.connection(7): a NONE handle on a dead bus */
CONFORM_TEST(none_handle_on_dead_bus, 0)
{
	struct kdbus_cmd_hello h = { .size = sizeof(h), .pool_size = KDBUS_PAGE };
	struct kdbus_cmd_info ci = { .size = sizeof(ci) };
	struct pollfd p = { .events = POLLIN | POLLOUT };
	struct kdbus_cmd *cmd = cmd_new(sizeof(*cmd));
	char name[64];
	int fd = open(env->bus_path, O_RDWR);

	ASSERT(fd >= 0);
	close(env->bus_owner_fd);
	env->bus_owner_fd = -1;
	/* setup requests: the liveness check comes before everything else */
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_HELLO, &h), ESHUTDOWN);
	kdbus_unique_name(name, sizeof(name), "ep");
	cmd_add_str(cmd, KDBUS_ITEM_MAKE_NAME, name);
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_ENDPOINT_MAKE, cmd), ESHUTDOWN);
	/* BUS_MAKE is the wrong setup code for an endpoint, but the node is
	 * checked first (rule 2: liveness, then the node type) */
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_BUS_MAKE, cmd), ESHUTDOWN);
	/* other requests on a NONE handle: EBADFD */
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_CONN_INFO, &ci), EBADFD);
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_ENDPOINT_UPDATE, cmd), EBADFD);
	p.fd = fd;
	ASSERT_EQ(poll(&p, 1, 0), 1);
	ASSERT_EQ(p.revents & (POLLERR | POLLHUP), POLLERR | POLLHUP);
	ASSERT(mmap(NULL, KDBUS_PAGE, PROT_READ, MAP_SHARED, fd, 0) ==
	       MAP_FAILED && errno == EBADFD);
	close(fd);
	cmd_free(cmd);
	return TEST_OK;
}

/* poll fd for up to 5 s; the revents, elapsed ms in *ms */
static int poll_for(int fd, long *ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLOUT };
	uint64_t t0 = kdbus_now_ns();
	int r;

	/* first the live state: writable only, so poll with POLLIN */
	p.events = POLLIN;
	do {
		r = poll(&p, 1, 5000);
	} while (r < 0 && errno == EINTR);
	*ms = (long)((kdbus_now_ns() - t0) / 1000000);
	return r <= 0 ? 0 : p.revents;
}

/* kdbus(7): a poll sleeping on a connection wakes up on its disconnect */
CONFORM_TEST(poll_wakes_on_byebye, 0)
{
	struct kdbus_conn *c;
	pid_t pid;
	long ms;
	int rev;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	fflush(stdout);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		kdbus_msleep(300);
		_exit(kdbus_byebye(c->fd) == 0 ? TEST_OK : TEST_FAIL);
	}
	rev = poll_for(c->fd, &ms);
	ASSERT_EQ(kdbus_wait_child(pid), TEST_OK);
	DIAG("poll returned 0x%x after %ld ms", rev, ms);
	ASSERT_EQ(rev & (POLLERR | POLLHUP), POLLERR | POLLHUP);
	ASSERT(ms < 4000);
	kdbus_conn_free(c);
	return TEST_OK;
}

CONFORM_TEST(poll_wakes_on_bus_teardown, 0)
{
	struct kdbus_conn *c;
	pid_t pid;
	long ms;
	int rev;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	fflush(stdout);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		/* holds the last reference of the bus owner handle */
		kdbus_msleep(300);
		_exit(TEST_OK);
	}
	close(env->bus_owner_fd);
	env->bus_owner_fd = -1;
	rev = poll_for(c->fd, &ms);
	ASSERT_EQ(kdbus_wait_child(pid), TEST_OK);
	DIAG("poll returned 0x%x after %ld ms", rev, ms);
	ASSERT_EQ(rev & (POLLERR | POLLHUP), POLLERR | POLLHUP);
	ASSERT(ms < 4000);
	kdbus_conn_free(c);
	return TEST_OK;
}

/* kdbus.fs(7) / kdbus.connection(7): IDs are never reused within the domain */
CONFORM_TEST(ids_never_reused, 0)
{
	struct kdbus_conn *a, *b;
	uint64_t old;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &a));
	old = a->id;
	kdbus_conn_free(a);
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &a));
	ASSERT(a->id > old);
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &b));
	ASSERT_OK(kdbus_byebye(b->fd));
	kdbus_conn_free(b);
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &b));
	ASSERT(b->id > a->id);
	ASSERT_ERR(kdbus_conn_info(a, old, NULL, 0, NULL, NULL), ENXIO);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* kdbus.connection(7): BYEBYE is refused while a message is queued, nothing
 * changes */
CONFORM_TEST(byebye_busy_changes_nothing, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_cmd cmd = { .size = sizeof(cmd), .return_flags = 5 };

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &b));
	ASSERT_OK(kdbus_send(b, a->id, 1, 0, 0, 0, "x", 1));
	ASSERT_ERR(kdbus_ioctl(a->fd, KDBUS_CMD_BYEBYE, &cmd), EBUSY);
	ASSERT_EQ(cmd.return_flags, 0);
	ASSERT_OK(kdbus_conn_info(b, a->id, NULL, 0, NULL, NULL));
	ASSERT_OK(kdbus_recv(a, 0, 0, NULL));
	/* a received-but-unfreed slice does not count */
	ASSERT_OK(kdbus_ioctl(a->fd, KDBUS_CMD_BYEBYE, &cmd));
	ASSERT_ERR(kdbus_conn_info(b, a->id, NULL, 0, NULL, NULL), ENXIO);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}
