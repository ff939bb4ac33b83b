// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Conformance audit of KDBUS_CMD_HELLO (kdbus.connection(7)): privilege from
 * the opener credentials, ownership by effective uid, bus flags stored
 * verbatim, HELLO flags reported as passed, a HELLO that fails after the
 * connection became visible (copy-back EFAULT), connection-type checks
 * that precede argument parsing and negotiation (kdbus(7),
 * kdbus.connection(7)), and bus accounting by real uid (kdbus.connection(7)).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

#define CONFORM_TEST(_name, _flags)						\
	static int conform_hello_fn_##_name(struct kdbus_test_env *env);	\
	static const struct kdbus_test conform_hello_t_##_name = {		\
		.group = "conform-hello", .name = #_name,				\
		.fn = conform_hello_fn_##_name, .flags = (_flags),		\
		.file = __FILE__, .line = __LINE__,				\
	};									\
	static const struct kdbus_test *conform_hello_p_##_name			\
	__attribute__((used, section("kdbus_tests"), aligned(sizeof(void *)))) = \
		&conform_hello_t_##_name;						\
	static int conform_hello_fn_##_name(					\
		struct kdbus_test_env *env __attribute__((unused)))

static long hello_fd(int fd, uint64_t flags, const char *name,
		     struct kdbus_cmd_hello *out)
{
	struct kdbus_cmd_hello *h = cmd_new(sizeof(*h));
	long r;

	h->flags = flags;
	h->pool_size = KDBUS_PAGE * 4;
	if (name)
		cmd_add_str(h, KDBUS_ITEM_NAME, name);
	r = kdbus_ioctl(fd, KDBUS_CMD_HELLO, h);
	if (out)
		*out = *h;
	cmd_free(h);
	return r;
}

/* an fd of path opened with the given real and effective uid */
static int open_as(const char *path, uid_t uid)
{
	int fd;

	if (setresuid(uid, uid, 0) < 0)
		return -errno;
	fd = open(path, O_RDWR);
	if (fd < 0)
		fd = -errno;
	if (setresuid(0, 0, 0) < 0)
		abort();
	return fd;
}

/* kdbus.connection(7): privilege is judged by the opener credentials, not the
 * caller */
CONFORM_TEST(opener_credentials, 0)
{
	struct kdbus_pids pids = { 0 };
	struct kdbus_cmd_hello *h;
	pid_t pid;
	int fd;

	/* opened by uid 4810, HELLO issued by root: not privileged */
	fd = open_as(env->bus_path, 4810);
	ASSERT_OK(fd);
	ASSERT_ERR(hello_fd(fd, KDBUS_HELLO_MONITOR, NULL, NULL), EPERM);
	h = cmd_new(sizeof(*h));
	h->pool_size = KDBUS_PAGE;
	cmd_add_item(h, KDBUS_ITEM_PIDS, &pids, sizeof(pids));
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_HELLO, h), EPERM);
	cmd_free(h);
	close(fd);

	/* opened by root, HELLO issued by uid 4811: privileged */
	fd = open(env->bus_path, O_RDWR);
	ASSERT(fd >= 0);
	pid = kdbus_fork_as(4811, 4811);
	ASSERT(pid >= 0);
	if (pid == 0) {
		long r = hello_fd(fd, KDBUS_HELLO_MONITOR, NULL, NULL);

		if (r < 0)
			DIAG("monitor HELLO on a root-opened fd: %s",
			     kdbus_errname(-r));
		_exit(r == 0 ? TEST_OK : r == -ENOTTY ? TEST_SKIP : TEST_FAIL);
	}
	ASSERT_EQ(kdbus_wait_child(pid), TEST_OK);
	close(fd);
	return TEST_OK;
}

/* kdbus.connection(7): the bus creator's euid makes a connection owner (no
 * caps) */
CONFORM_TEST(owner_by_euid, KDBUS_TEST_NO_BUS)
{
	pid_t pid = kdbus_fork_as(4812, 4812);

	ASSERT(pid >= 0);
	if (pid == 0) {
		struct kdbus_pids pids = { 0 };
		struct kdbus_cmd_hello *h;
		char name[64], path[320];
		long r;
		int bus, fd;

		bus = kdbus_bus_new(0, name, sizeof(name));
		if (bus < 0)
			_exit(TEST_FAIL);
		snprintf(path, sizeof(path), "%s/%s/bus", KDBUS_MOUNT, name);
		fd = open(path, O_RDWR);
		r = hello_fd(fd, KDBUS_HELLO_MONITOR, NULL, NULL);
		if (r < 0) {
			DIAG("owner monitor: %s", kdbus_errname(-r));
			_exit(TEST_FAIL);
		}
		close(fd);
		fd = open(path, O_RDWR);
		h = cmd_new(sizeof(*h));
		h->pool_size = KDBUS_PAGE;
		pids.pid = getpid();
		cmd_add_item(h, KDBUS_ITEM_PIDS, &pids, sizeof(pids));
		r = kdbus_ioctl(fd, KDBUS_CMD_HELLO, h);
		if (r < 0) {
			DIAG("owner faked PIDS: %s", kdbus_errname(-r));
			_exit(TEST_FAIL);
		}
		_exit(TEST_OK);
	}
	return kdbus_wait_child(pid);
}

/* kdbus.bus(7): the BUS_MAKE flags are stored verbatim */
CONFORM_TEST(bus_flags_verbatim, KDBUS_TEST_NO_BUS)
{
	uint64_t flags;

	for (flags = 0; flags < 4; flags++) {
		struct kdbus_cmd_info ci = { .size = sizeof(ci) };
		char name[64], path[320];
		struct kdbus_conn *c;
		int bus = kdbus_bus_new(flags, name, sizeof(name));

		ASSERT_OK(bus);
		snprintf(path, sizeof(path), "%s/%s/bus", KDBUS_MOUNT, name);
		ASSERT_OK(kdbus_hello(path, 0, 0, KDBUS_PAGE, &c));
		ASSERT_EQ(c->hello.bus_flags, flags);
		ASSERT_OK(kdbus_ioctl(c->fd, KDBUS_CMD_BUS_CREATOR_INFO, &ci));
		ASSERT_EQ(((struct kdbus_info *)(c->pool + ci.offset))->flags,
			  flags);
		kdbus_conn_free(c);
		close(bus);
	}
	return TEST_OK;
}

/* kdbus.connection(7): flags exactly as passed, reported by CONN_INFO */
CONFORM_TEST(flags_as_passed, 0)
{
	struct kdbus_conn *c, *m;
	struct kdbus_info *info;
	uint64_t off;

	ASSERT_OK(kdbus_hello(env->bus_path,
			      KDBUS_HELLO_ACCEPT_FD | KDBUS_HELLO_MONITOR, 0,
			      KDBUS_PAGE, &m));
	ASSERT_EQ(m->hello.flags, KDBUS_HELLO_ACCEPT_FD | KDBUS_HELLO_MONITOR);
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	ASSERT_OK(kdbus_conn_info(c, m->id, NULL, 0, &info, &off));
	ASSERT_EQ(info->flags, KDBUS_HELLO_ACCEPT_FD | KDBUS_HELLO_MONITOR);
	kdbus_conn_free(c);
	kdbus_conn_free(m);
	return TEST_OK;
}

/*
 * kdbus.connection(7) / kdbus(7): the fixed part cannot be copied back
 * (read-only argument): EFAULT, the connection is gone again, the handle stays
 * NONE.
 */
CONFORM_TEST(copy_back_fault, 0)
{
	struct kdbus_cmd_hello h = { .size = sizeof(h), .pool_size = KDBUS_PAGE };
	struct kdbus_conn *a;
	uint64_t id;
	void *ro;
	int fd;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &a));
	ro = mmap(NULL, KDBUS_PAGE, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT(ro != MAP_FAILED);
	memcpy(ro, &h, sizeof(h));
	ASSERT(mprotect(ro, KDBUS_PAGE, PROT_READ) == 0);
	fd = open(env->bus_path, O_RDWR);
	ASSERT(fd >= 0);
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_HELLO, ro), EFAULT);
	/* not a connection */
	ASSERT(mmap(NULL, KDBUS_PAGE, PROT_READ, MAP_SHARED, fd, 0) ==
	       MAP_FAILED && errno == EBADFD);
	ASSERT_OK(kdbus_ioctl(fd, KDBUS_CMD_HELLO, &h));
	ASSERT(h.id > a->id);
	/* whatever id the failed HELLO had, nobody can find it */
	for (id = a->id + 1; id < h.id; id++)
		ASSERT_ERR(kdbus_conn_info(a, id, NULL, 0, NULL, NULL), ENXIO);
	ASSERT_OK(kdbus_conn_info(a, h.id, NULL, 0, NULL, NULL));
	munmap(ro, KDBUS_PAGE);
	close(fd);
	kdbus_conn_free(a);
	return TEST_OK;
}

/*
 * kdbus(7) / kdbus.connection(7): the connection-type checks of SEND, RECV,
 * FREE and BYEBYE precede parsing and therefore apply to negotiating calls too.
 */
CONFORM_TEST(kind_checks_before_negotiation, 0)
{
	struct kdbus_cmd_send s = { .size = sizeof(s),
				    .flags = KDBUS_FLAG_NEGOTIATE };
	struct kdbus_cmd_recv rv = { .size = sizeof(rv),
				     .flags = KDBUS_FLAG_NEGOTIATE };
	struct kdbus_cmd_free f = { .size = sizeof(f),
				    .flags = KDBUS_FLAG_NEGOTIATE };
	struct kdbus_cmd_hello out;
	int ph, mon;

	ph = open(env->bus_path, O_RDWR);
	ASSERT(ph >= 0);
	ASSERT_OK(hello_fd(ph, KDBUS_HELLO_POLICY_HOLDER, "org.example.ph",
			   &out));
	ASSERT_ERR(kdbus_ioctl(ph, KDBUS_CMD_FREE, &f), EOPNOTSUPP);
	ASSERT_ERR(kdbus_ioctl(ph, KDBUS_CMD_RECV, &rv), EOPNOTSUPP);
	ASSERT_ERR(kdbus_ioctl(ph, KDBUS_CMD_SEND, &s), EOPNOTSUPP);
	/* also with a NULL argument: nothing is read */
	ASSERT_ERR(kdbus_ioctl(ph, KDBUS_CMD_FREE, NULL), EOPNOTSUPP);
	ASSERT_ERR(kdbus_ioctl(ph, KDBUS_CMD_BYEBYE, NULL), EOPNOTSUPP);

	mon = open(env->bus_path, O_RDWR);
	ASSERT(mon >= 0);
	ASSERT_OK(hello_fd(mon, KDBUS_HELLO_MONITOR, NULL, &out));
	ASSERT_ERR(kdbus_ioctl(mon, KDBUS_CMD_SEND, &s), EOPNOTSUPP);
	ASSERT_ERR(kdbus_ioctl(mon, KDBUS_CMD_SEND, NULL), EOPNOTSUPP);
	ASSERT_ERR(kdbus_ioctl(mon, KDBUS_CMD_BYEBYE, NULL), EOPNOTSUPP);
	/* RECV and FREE are allowed for monitors */
	ASSERT_OK(kdbus_ioctl(mon, KDBUS_CMD_RECV, &rv));
	ASSERT_EQ(rv.flags, 7);
	ASSERT_OK(kdbus_ioctl(mon, KDBUS_CMD_FREE, &f));
	close(ph);
	close(mon);
	return TEST_OK;
}

/* kdbus.connection(7): what an activator may do (needs the name registry) */
CONFORM_TEST(activator_kind, 0)
{
	struct kdbus_cmd_hello out;
	struct kdbus_cmd *cmd;
	struct kdbus_conn *o;
	struct kdbus_info *info;
	uint64_t off;
	long r;
	int act;

	act = open(env->bus_path, O_RDWR);
	ASSERT(act >= 0);
	r = hello_fd(act, KDBUS_HELLO_ACTIVATOR, "org.example.act", &out);
	if (r < 0)
		SKIP("activator HELLO: %s (name registry not there yet?)",
		     kdbus_errname(-r));
	ASSERT_ERR(kdbus_ioctl(act, KDBUS_CMD_SEND, NULL), EOPNOTSUPP);
	ASSERT_ERR(kdbus_ioctl(act, KDBUS_CMD_BYEBYE, NULL), EOPNOTSUPP);
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_u64(cmd, KDBUS_ITEM_ATTACH_FLAGS_SEND, 0);
	ASSERT_ERR(kdbus_ioctl(act, KDBUS_CMD_UPDATE, cmd), EOPNOTSUPP);
	cmd_free(cmd);
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_u64(cmd, KDBUS_ITEM_ATTACH_FLAGS_RECV, 0);
	ASSERT_OK(kdbus_ioctl(act, KDBUS_CMD_UPDATE, cmd));
	cmd_free(cmd);
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_str(cmd, KDBUS_ITEM_NAME, "org.example.act");
	ASSERT_ERR(kdbus_ioctl(act, KDBUS_CMD_UPDATE, cmd), EOPNOTSUPP);
	cmd_free(cmd);
	ASSERT_OK(kdbus_free_fd(act, out.offset));
	ASSERT_ERR(kdbus_ioctl(act, KDBUS_CMD_RECV,
			       &(struct kdbus_cmd_recv){ .size = 64 }), EAGAIN);
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &o));
	ASSERT_OK(kdbus_conn_info(o, out.id, NULL, 0, &info, &off));
	ASSERT_EQ(info->flags, KDBUS_HELLO_ACTIVATOR);
	kdbus_conn_free(o);
	close(act);
	return TEST_OK;
}

/* kdbus.connection(7) / kdbus.bus(7): a bus is charged to the creator's real
 * uid */
CONFORM_TEST(bus_charged_to_real_uid, KDBUS_TEST_NO_BUS)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		int fds[KDBUS_USER_MAX_BUSES], i, r, ctl;
		char name[64];

		if (setresuid(4820, 0, 0) < 0)
			_exit(TEST_FAIL);
		for (i = 0; i < KDBUS_USER_MAX_BUSES; i++) {
			fds[i] = kdbus_bus_new(0, name, sizeof(name));
			if (fds[i] < 0) {
				DIAG("bus %d: %s", i, kdbus_errname(-fds[i]));
				_exit(TEST_FAIL);
			}
		}
		ctl = kdbus_open_control();
		kdbus_unique_name(name, sizeof(name), "ru");
		r = kdbus_bus_make(ctl, 0, name, 8, 1, NULL);
		if (r != -EMFILE) {
			DIAG("bus %d with real uid 4820: expected EMFILE, got %s",
			     i, r ? kdbus_errname(-r) : "success");
			_exit(TEST_FAIL);
		}
		/* real uid 0 has its own budget */
		if (setresuid(0, 0, 0) < 0)
			_exit(TEST_FAIL);
		r = kdbus_bus_make(ctl, 0, name, 8, 1, NULL);
		if (r < 0) {
			DIAG("as real uid 0: %s", kdbus_errname(-r));
			_exit(TEST_FAIL);
		}
		_exit(TEST_OK);
	}
	return kdbus_wait_child(pid);
}

/* kdbus.connection(7): POLICY_ACCESS items of ordinary connections are accepted
 * and ignored, also for a non-owner (no EPERM) */
CONFORM_TEST(policy_items_ignored_for_ordinary, 0)
{
	pid_t pid = kdbus_fork_as(4814, 4814);

	ASSERT(pid >= 0);
	if (pid == 0) {
		struct kdbus_policy_access pa = { KDBUS_POLICY_ACCESS_WORLD,
						  KDBUS_POLICY_OWN, 0 };
		struct kdbus_cmd_hello *h = cmd_new(sizeof(*h));
		int fd = open(env->bus_path, O_RDWR);
		long r;

		h->pool_size = KDBUS_PAGE;
		cmd_add_item(h, KDBUS_ITEM_POLICY_ACCESS, &pa, sizeof(pa));
		cmd_add_item(h, KDBUS_ITEM_POLICY_ACCESS, &pa, sizeof(pa));
		r = kdbus_ioctl(fd, KDBUS_CMD_HELLO, h);
		if (r < 0)
			DIAG("HELLO with POLICY_ACCESS: %s", kdbus_errname(-r));
		_exit(r == 0 ? TEST_OK : TEST_FAIL);
	}
	return kdbus_wait_child(pid);
}
