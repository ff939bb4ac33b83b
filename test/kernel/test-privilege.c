// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Privileged connections (kdbus.connection(7)): who is bus
 * owner or privileged, decided from the credentials that opened the
 * endpoint; only owners make monitors, activators and policy holders or
 * fake credentials, and nobody is owner on a custom endpoint.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kdbus-test.h"
#include "kdbus-util.h"
#include "test-policy.h"

#define UID_A	1000
#define GID_A	1000
#define UID_B	1001
#define GID_B	1001

enum {
	P_MONITOR,
	P_ACTIVATOR,
	P_HOLDER,
	P_CREDS,
	P_PIDS,
	P_SECLABEL,
	P_N,
};

static const char *const p_names[P_N] = {
	"monitor", "activator", "policy holder", "creds", "pids", "seclabel",
};

/* HELLO of kind k on the handle fd; 0 or -errno */
static int hello_kind(int fd, int k)
{
	struct kdbus_cmd_hello *h = cmd_new(sizeof(*h));
	int r;

	h->pool_size = KDBUS_DEFAULT_POOL;
	switch (k) {
	case P_MONITOR:
		h->flags = KDBUS_HELLO_MONITOR;
		break;
	case P_ACTIVATOR:
		h->flags = KDBUS_HELLO_ACTIVATOR;
		cmd_add_str(h, KDBUS_ITEM_NAME, "org.kp.priv.act");
		break;
	case P_HOLDER:
		h->flags = KDBUS_HELLO_POLICY_HOLDER;
		cmd_add_str(h, KDBUS_ITEM_NAME, "org.kp.priv.*");
		kp_add_access(h, KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_SEE,
			      0);
		break;
	case P_CREDS: {
		struct kdbus_creds c;

		memset(&c, 0, sizeof(c));
		c.uid = c.euid = c.suid = c.fsuid = getuid();
		c.gid = c.egid = c.sgid = c.fsgid = getgid();
		cmd_add_item(h, KDBUS_ITEM_CREDS, &c, sizeof(c));
		break;
	}
	case P_PIDS: {
		struct kdbus_pids p = { .pid = getpid(), .tid = getpid() };

		cmd_add_item(h, KDBUS_ITEM_PIDS, &p, sizeof(p));
		break;
	}
	case P_SECLABEL:
		cmd_add_str(h, KDBUS_ITEM_SECLABEL, "kp_label_t");
		break;
	}
	r = kdbus_ioctl(fd, KDBUS_CMD_HELLO, h);
	cmd_free(h);
	return r;
}

/*
 * Try every special kind on fresh handles of path; each must give
 * expect (0 or -errno). Returns TEST_OK or TEST_FAIL; usable in
 * children.
 */
static int try_kinds(const char *path, int expect, const char *who)
{
	for (int k = 0; k < P_N; k++) {
		int fd = open(path, O_RDWR | O_CLOEXEC);
		int r;

		if (fd < 0) {
			DIAG("%s: open %s: %m", who, path);
			return TEST_FAIL;
		}
		r = hello_kind(fd, k);
		if (r != expect) {
			DIAG("%s: %s: expected %s, got %s", who, p_names[k],
			     expect ? kdbus_errname(-expect) : "success",
			     r ? kdbus_errname(-r) : "success");
			close(fd);
			return TEST_FAIL;
		}
		/* a refused HELLO leaves the handle fresh */
		if (r < 0) {
			struct kdbus_cmd_hello h = {
				.size = sizeof(h),
				.pool_size = KDBUS_DEFAULT_POOL,
			};

			r = kdbus_ioctl(fd, KDBUS_CMD_HELLO, &h);
			if (r < 0) {
				DIAG("%s: plain HELLO after %s: %s", who,
				     p_names[k], kdbus_errname(-r));
				close(fd);
				return TEST_FAIL;
			}
		}
		close(fd);
	}
	return TEST_OK;
}

/* set effective and permitted capabilities to exactly caps */
static int set_caps(uint64_t caps)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	data[0].effective = data[0].permitted = (uint32_t)caps;
	data[1].effective = data[1].permitted = (uint32_t)(caps >> 32);
	return syscall(SYS_capset, &hdr, data) < 0 ? -errno : 0;
}

/* a child as uid/gid keeping only the capabilities caps */
static pid_t fork_with_caps(uid_t uid, gid_t gid, uint64_t caps)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid != 0)
		return pid;
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 ||
	    setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
	    setresuid(uid, uid, uid) < 0 || set_caps(caps) < 0) {
		DIAG("dropping to %u with caps %llx: %m", (unsigned int)uid,
		     (unsigned long long)caps);
		_exit(TEST_FAIL);
	}
	return 0;
}

/* an unprivileged user on root's bus: every special kind is EPERM */
KDBUS_TEST(privilege, unprivileged_refused, KDBUS_TEST_NO_BUS)
{
	char path[256];
	int bus_fd;
	pid_t pid;

	bus_fd = kp_bus_world(path, sizeof(path));
	ASSERT_OK(bus_fd);

	pid = kdbus_fork_as(UID_A, GID_A);
	ASSERT(pid >= 0);
	if (pid == 0)
		_exit(try_kinds(path, -EPERM, "uid 1000"));
	RUN(kdbus_wait_child(pid));

	/* root, the owner, may do all of it */
	RUN(try_kinds(path, 0, "root"));

	close(bus_fd);
	return TEST_OK;
}

/*
 * Owner by uid: the creator's euid owns its bus without any capability;
 * another user does not, and root without CAP_IPC_OWNER does not either.
 */
KDBUS_TEST(privilege, owner_by_uid, KDBUS_TEST_NO_BUS)
{
	int p[2];
	pid_t pid;
	char path[256];

	ASSERT(pipe(p) == 0);
	pid = kdbus_fork_as(UID_A, GID_A);
	ASSERT(pid >= 0);
	if (pid == 0) {
		int fd;

		close(p[0]);
		fd = kp_bus_world(path, sizeof(path));
		if (fd < 0 || write(p[1], path, sizeof(path)) != sizeof(path))
			_exit(TEST_FAIL);
		close(p[1]);
		/* keep the bus alive until the parent kills us */
		for (;;)
			pause();
	}
	close(p[1]);
	ASSERT(read(p[0], path, sizeof(path)) == sizeof(path));
	close(p[0]);

	{
		pid_t c = kdbus_fork_as(UID_A, GID_A);
		int r;

		ASSERT(c >= 0);
		if (c == 0)
			_exit(try_kinds(path, 0, "creator uid 1000"));
		r = kdbus_wait_child(c);
		if (r == TEST_OK) {
			c = kdbus_fork_as(UID_B, GID_B);
			ASSERT(c >= 0);
			if (c == 0)
				_exit(try_kinds(path, -EPERM, "uid 1001"));
			r = kdbus_wait_child(c);
		}
		if (r == TEST_OK) {
			/* root without CAP_IPC_OWNER is nobody here */
			c = fork_with_caps(0, 0, 0);
			ASSERT(c >= 0);
			if (c == 0)
				_exit(try_kinds(path, -EPERM,
						"root without caps"));
			r = kdbus_wait_child(c);
		}
		if (r == TEST_OK) {
			/* CAP_IPC_OWNER alone makes a user privileged */
			c = fork_with_caps(UID_B, GID_B,
					   1ULL << CAP_IPC_OWNER);
			ASSERT(c >= 0);
			if (c == 0)
				_exit(try_kinds(path, 0,
						"uid 1001 + CAP_IPC_OWNER"));
			r = kdbus_wait_child(c);
		}
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return r;
	}
}

/*
 * Privilege comes from the credentials that opened the endpoint, not
 * from the task that says HELLO (kdbus.connection(7)).
 */
KDBUS_TEST(privilege, opener_credentials, KDBUS_TEST_NO_BUS)
{
	char path[256];
	int bus_fd, fd;
	pid_t pid;

	bus_fd = kp_bus_world(path, sizeof(path));
	ASSERT_OK(bus_fd);

	/* opened by root, HELLO by uid 1000: privileged */
	fd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT(fd >= 0);
	pid = kdbus_fork_as(UID_A, GID_A);
	ASSERT(pid >= 0);
	if (pid == 0) {
		int r = hello_kind(fd, P_MONITOR);

		if (r < 0)
			DIAG("monitor on root's handle: %s", kdbus_errname(-r));
		_exit(r == -ENOTTY ? TEST_SKIP : r ? TEST_FAIL : TEST_OK);
	}
	RUN(kdbus_wait_child(pid));
	close(fd);

	/* opened by uid 1000, HELLO by root: not privileged */
	ASSERT(setresuid(UID_A, UID_A, 0) == 0);
	fd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT(setresuid(0, 0, 0) == 0);
	ASSERT(fd >= 0);
	for (int k = 0; k < P_N; k++)
		ASSERT_ERR(hello_kind(fd, k), EPERM);
	ASSERT_OK(kdbus_ioctl(fd, KDBUS_CMD_HELLO,
			      &(struct kdbus_cmd_hello){
				.size = sizeof(struct kdbus_cmd_hello),
				.pool_size = KDBUS_DEFAULT_POOL }));
	close(fd);

	close(bus_fd);
	return TEST_OK;
}

/*
 * Nobody is owner on a custom endpoint, not even root (kdbus.endpoint(7)):
 * monitors are EOPNOTSUPP, everything else EPERM.
 */
KDBUS_TEST(privilege, custom_endpoint_never_owner, KDBUS_TEST_NO_BUS)
{
	char path[256], name[64], epp[320];
	int bus_fd, ep_fd;
	const char *slash;

	bus_fd = kp_bus_world(path, sizeof(path));
	ASSERT_OK(bus_fd);
	kdbus_unique_name(name, sizeof(name), "ep");
	ep_fd = kp_ep_make(path, KDBUS_MAKE_ACCESS_WORLD, name);
	ASSERT_OK(ep_fd);
	slash = strrchr(path, '/');
	snprintf(epp, sizeof(epp), "%.*s/%s", (int)(slash - path), path, name);

	for (int k = 0; k < P_N; k++) {
		int fd = open(epp, O_RDWR | O_CLOEXEC);

		ASSERT(fd >= 0);
		ASSERT_ERR(hello_kind(fd, k),
			   k == P_MONITOR ? EOPNOTSUPP : EPERM);
		close(fd);
	}

	close(ep_fd);
	close(bus_fd);
	return TEST_OK;
}

/*
 * Order of the HELLO checks (kdbus.connection(7)): format errors come
 * before the privilege test, the privilege test before attach flags.
 */
KDBUS_TEST(privilege, check_order, KDBUS_TEST_NO_BUS)
{
	char path[256];
	int bus_fd;
	pid_t pid;

	bus_fd = kp_bus_world(path, sizeof(path));
	ASSERT_OK(bus_fd);

	pid = kdbus_fork_as(UID_A, GID_A);
	ASSERT(pid >= 0);
	if (pid == 0) {
		struct kdbus_cmd_hello *h = cmd_new(sizeof(*h));
		int fd = open(path, O_RDWR | O_CLOEXEC);
		int r;

#define EXPECT(expr, err) do {						\
		r = (expr);						\
		if (r != -(err)) {					\
			DIAG("%s:%d: expected %s, got %s", __FILE__,	\
			     __LINE__, kdbus_errname(err),		\
			     r ? kdbus_errname(-r) : "success");	\
			_exit(TEST_FAIL);				\
		}							\
	} while (0)
		if (fd < 0)
			_exit(TEST_FAIL);
		/* bad pool size (1) before the privilege test (7) */
		h->flags = KDBUS_HELLO_MONITOR;
		h->pool_size = 100;
		EXPECT(kdbus_ioctl(fd, KDBUS_CMD_HELLO, h), EINVAL);
		/* two kinds (2) */
		h->pool_size = KDBUS_DEFAULT_POOL;
		h->flags = KDBUS_HELLO_MONITOR | KDBUS_HELLO_POLICY_HOLDER;
		EXPECT(kdbus_ioctl(fd, KDBUS_CMD_HELLO, h), EINVAL);
		/* a policy holder without name (4), with a bad one (5) */
		h->flags = KDBUS_HELLO_POLICY_HOLDER;
		EXPECT(kdbus_ioctl(fd, KDBUS_CMD_HELLO, h), EINVAL);
		cmd_add_str(h, KDBUS_ITEM_NAME, "org..x");
		EXPECT(kdbus_ioctl(fd, KDBUS_CMD_HELLO, h), EINVAL);
		cmd_free(h);
		/* a valid wildcard name: now the privilege test (7) */
		h = cmd_new(sizeof(*h));
		h->flags = KDBUS_HELLO_POLICY_HOLDER;
		h->pool_size = KDBUS_DEFAULT_POOL;
		cmd_add_str(h, KDBUS_ITEM_NAME, "org.x.*");
		EXPECT(kdbus_ioctl(fd, KDBUS_CMD_HELLO, h), EPERM);
		/* privilege (7) before attach flags (9) */
		h->attach_flags_recv = 1ULL << 60;
		EXPECT(kdbus_ioctl(fd, KDBUS_CMD_HELLO, h), EPERM);
		cmd_free(h);
#undef EXPECT
		close(fd);
		_exit(TEST_OK);
	}
	RUN(kdbus_wait_child(pid));

	close(bus_fd);
	return TEST_OK;
}
