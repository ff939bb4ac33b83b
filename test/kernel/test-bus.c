// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KDBUS_CMD_BUS_MAKE: every check of kdbus.bus(7) in order with its errno,
 * name rules (kdbus.item(7) sysname rule), bloom parameters, attach flags,
 * access modes, lifetime bound to the owner fd, per-user bus limit (kdbus(7)).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

static int make_on_fresh(uint64_t flags, const char *name, uint64_t bsize,
			 uint64_t nhash, const uint64_t *attach, int *keep_fd)
{
	int fd = kdbus_open_control(), r;

	if (fd < 0)
		return fd;
	r = kdbus_bus_make(fd, flags, name, bsize, nhash, attach);
	if (r == 0 && keep_fd)
		*keep_fd = fd;
	else
		close(fd);
	return r;
}

static void uname_(char *buf, size_t len, const char *suffix)
{
	snprintf(buf, len, "%u-%s%d", (unsigned int)geteuid(), suffix,
		 (int)getpid());
}

KDBUS_TEST(bus, make_ok, KDBUS_TEST_NO_BUS)
{
	char name[64], path[320];
	int fd = -1;

	uname_(name, sizeof(name), "ok");
	ASSERT_OK(make_on_fresh(0, name, 8, 1, NULL, &fd));
	snprintf(path, sizeof(path), "%s/%s/bus", KDBUS_MOUNT, name);
	ASSERT(access(path, F_OK) == 0);
	close(fd);
	return TEST_OK;
}

KDBUS_TEST(bus, negotiate, KDBUS_TEST_NO_BUS)
{
	struct kdbus_cmd *cmd = cmd_new(sizeof(*cmd));
	uint64_t neg[4] = { KDBUS_ITEM_MAKE_NAME, KDBUS_ITEM_NAME,
			    KDBUS_ITEM_BLOOM_PARAMETER, KDBUS_ITEM_PAYLOAD_VEC };
	struct kdbus_item *it;
	char name[64];
	int fd = kdbus_open_control();

	ASSERT(fd >= 0);
	cmd->flags = KDBUS_FLAG_NEGOTIATE;
	cmd->return_flags = 0x1234;
	it = cmd_add_item(cmd, KDBUS_ITEM_NEGOTIATE, neg, sizeof(neg));
	/* no mandatory items: not checked when negotiating */
	ASSERT_OK(kdbus_ioctl(fd, KDBUS_CMD_BUS_MAKE, cmd));
	ASSERT_EQ(cmd->flags, KDBUS_MAKE_ACCESS_GROUP | KDBUS_MAKE_ACCESS_WORLD);
	ASSERT_EQ(it->data64[0], KDBUS_ITEM_MAKE_NAME);
	ASSERT_EQ(it->data64[1], 0);
	ASSERT_EQ(it->data64[2], KDBUS_ITEM_BLOOM_PARAMETER);
	ASSERT_EQ(it->data64[3], 0);
	/* return_flags is not written by a negotiation stop */
	ASSERT_EQ(cmd->return_flags, 0x1234);
	/* the handle stays fresh */
	uname_(name, sizeof(name), "neg");
	ASSERT_OK(kdbus_bus_make(fd, 0, name, 8, 1, NULL));
	close(fd);
	cmd_free(cmd);
	return TEST_OK;
}

KDBUS_TEST(bus, cmd_size, KDBUS_TEST_NO_BUS)
{
	struct kdbus_cmd *cmd = cmd_new(sizeof(*cmd));
	int fd = kdbus_open_control();

	ASSERT(fd >= 0);
	cmd->size = sizeof(*cmd) - 8;
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_BUS_MAKE, cmd), EINVAL);
	cmd->size = KDBUS_CMD_MAX_SIZE + 8;
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_BUS_MAKE, cmd), EMSGSIZE);
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_BUS_MAKE, (void *)8), EFAULT);
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_BUS_MAKE, (uint8_t *)cmd + 4),
		   EFAULT);
	close(fd);
	cmd_free(cmd);
	return TEST_OK;
}

KDBUS_TEST(bus, unknown_flags, KDBUS_TEST_NO_BUS)
{
	char name[64];

	uname_(name, sizeof(name), "fl");
	ASSERT_ERR(make_on_fresh(1ULL << 2, name, 8, 1, NULL, NULL), EINVAL);
	ASSERT_ERR(make_on_fresh(1ULL << 62, name, 8, 1, NULL, NULL), EINVAL);
	/* unknown bit with NEGOTIATE is still refused */
	ASSERT_ERR(make_on_fresh(KDBUS_FLAG_NEGOTIATE | 4, name, 8, 1, NULL,
				 NULL), EINVAL);
	return TEST_OK;
}

KDBUS_TEST(bus, mandatory_items, KDBUS_TEST_NO_BUS)
{
	struct kdbus_cmd *cmd = cmd_new(sizeof(*cmd));
	struct kdbus_bloom_parameter bp = { 8, 1 };
	char name[64];
	int fd = kdbus_open_control();

	ASSERT(fd >= 0);
	uname_(name, sizeof(name), "mi");
	/* no name */
	cmd_add_item(cmd, KDBUS_ITEM_BLOOM_PARAMETER, &bp, sizeof(bp));
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_BUS_MAKE, cmd), EINVAL);
	cmd_free(cmd);
	/* no bloom parameter */
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_str(cmd, KDBUS_ITEM_MAKE_NAME, name);
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_BUS_MAKE, cmd), EINVAL);
	/* duplicate name item */
	cmd_add_item(cmd, KDBUS_ITEM_BLOOM_PARAMETER, &bp, sizeof(bp));
	cmd_add_str(cmd, KDBUS_ITEM_MAKE_NAME, name);
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_BUS_MAKE, cmd), EINVAL);
	cmd_free(cmd);
	/* an item BUS_MAKE does not accept */
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_str(cmd, KDBUS_ITEM_MAKE_NAME, name);
	cmd_add_item(cmd, KDBUS_ITEM_BLOOM_PARAMETER, &bp, sizeof(bp));
	cmd_add_str(cmd, KDBUS_ITEM_NAME, "foo.bar");
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_BUS_MAKE, cmd), EINVAL);
	cmd_free(cmd);
	/* bloom parameter item of the wrong size */
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_str(cmd, KDBUS_ITEM_MAKE_NAME, name);
	cmd_add_item(cmd, KDBUS_ITEM_BLOOM_PARAMETER, &bp, 8);
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_BUS_MAKE, cmd), EINVAL);
	cmd_free(cmd);
	/* the handle is still fresh after all these failures */
	ASSERT_OK(kdbus_bus_make(fd, 0, name, 8, 1, NULL));
	close(fd);
	return TEST_OK;
}

KDBUS_TEST(bus, bloom_parameters, KDBUS_TEST_NO_BUS)
{
	static const uint64_t bad[][2] = {
		{ 0, 1 }, { 4, 1 }, { 7, 1 }, { 12, 1 }, { 4097, 1 },
		{ 4104, 1 }, { 8192, 1 }, { 8, 0 }, { 64, 0 },
	};
	char name[64];
	size_t i;
	int fd = -1;

	uname_(name, sizeof(name), "bl");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		long r = make_on_fresh(0, name, bad[i][0], bad[i][1], NULL,
				       NULL);
		if (r != -EINVAL) {
			if (r == -ENOTTY)
				SKIP("BUS_MAKE: ENOTTY");
			FAIL("bloom {%llu, %llu}: expected EINVAL, got %s",
			     (unsigned long long)bad[i][0],
			     (unsigned long long)bad[i][1],
			     r ? kdbus_errname(-r) : "success");
		}
	}
	ASSERT_OK(make_on_fresh(0, name, 8, 1, NULL, &fd));
	close(fd);
	ASSERT_OK(make_on_fresh(0, name, 4096, 64, NULL, &fd));
	close(fd);
	return TEST_OK;
}

KDBUS_TEST(bus, attach_flags, KDBUS_TEST_NO_BUS)
{
	uint64_t a;
	char name[64];
	int fd = -1;

	uname_(name, sizeof(name), "at");
	a = 1ULL << 14;
	ASSERT_ERR(make_on_fresh(0, name, 8, 1, &a, NULL), EINVAL);
	a = _KDBUS_ATTACH_ALL | (1ULL << 63);
	ASSERT_ERR(make_on_fresh(0, name, 8, 1, &a, NULL), EINVAL);
	a = ~0ULL - 1;
	ASSERT_ERR(make_on_fresh(0, name, 8, 1, &a, NULL), EINVAL);
	a = _KDBUS_ATTACH_ANY;
	ASSERT_OK(make_on_fresh(0, name, 8, 1, &a, &fd));
	close(fd);
	a = _KDBUS_ATTACH_ALL;
	ASSERT_OK(make_on_fresh(0, name, 8, 1, &a, &fd));
	close(fd);
	a = 0;
	ASSERT_OK(make_on_fresh(0, name, 8, 1, &a, &fd));
	close(fd);
	return TEST_OK;
}

KDBUS_TEST(bus, name_rules, KDBUS_TEST_NO_BUS)
{
	char ok63[80], long64[80], buf[80];
	const char *bad[] = {
		"foo", "1-foo", "00-foo", "0foo", "-0-foo", "0-", "0-foo-",
		"0-foo.", "0-fo o", "0-foo/bar", "0-f\xc3\xa4", "0-foo*",
		"", "0-foo\n",
	};
	unsigned int uid = geteuid();
	size_t i;
	int fd = -1;

	if (uid != 0)
		SKIP("needs to run as root (names are written for uid 0)");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		long r = make_on_fresh(0, bad[i], 8, 1, NULL, NULL);

		if (r == -ENOTTY)
			SKIP("BUS_MAKE: ENOTTY");
		if (r != -EINVAL)
			FAIL("name \"%s\": expected EINVAL, got %s", bad[i],
			     r ? kdbus_errname(-r) : "success");
	}
	/* 63 characters is the maximum, 64 is ENAMETOOLONG */
	snprintf(buf, sizeof(buf), "0-n%d-", (int)getpid());
	memset(ok63, 'x', 63);
	memcpy(ok63, buf, strlen(buf));
	ok63[63] = 0;
	memset(long64, 'x', 64);
	memcpy(long64, buf, strlen(buf));
	long64[64] = 0;
	ASSERT_ERR(make_on_fresh(0, long64, 8, 1, NULL, NULL), ENAMETOOLONG);
	ASSERT_OK(make_on_fresh(0, ok63, 8, 1, NULL, &fd));
	close(fd);
	/* '-', '.', '_' allowed inside */
	snprintf(buf, sizeof(buf), "0-a.b-c_d%d", (int)getpid());
	ASSERT_OK(make_on_fresh(0, buf, 8, 1, NULL, &fd));
	close(fd);
	snprintf(buf, sizeof(buf), "0-_%d", (int)getpid());
	ASSERT_OK(make_on_fresh(0, buf, 8, 1, NULL, &fd));
	close(fd);
	return TEST_OK;
}

/* the string rule: size must be exactly 16 + strlen + 1 */
KDBUS_TEST(bus, name_string_rule, KDBUS_TEST_NO_BUS)
{
	struct kdbus_cmd *cmd = cmd_new(sizeof(*cmd));
	struct kdbus_bloom_parameter bp = { 8, 1 };
	char name[64], padded[72];
	struct kdbus_item *it;
	int fd = kdbus_open_control();

	ASSERT(fd >= 0);
	uname_(name, sizeof(name), "sr");
	memset(padded, 0, sizeof(padded));
	strcpy(padded, name);
	cmd_add_item(cmd, KDBUS_ITEM_BLOOM_PARAMETER, &bp, sizeof(bp));
	/* NUL padding counted in size */
	it = cmd_add_item(cmd, KDBUS_ITEM_MAKE_NAME, padded,
			  KDBUS_ALIGN8(strlen(name) + 1) + 8);
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_BUS_MAKE, cmd), EINVAL);
	/* no NUL terminator at all */
	it->size = KDBUS_ITEM_HDR + strlen(name);
	cmd->size = (uint8_t *)it - (uint8_t *)cmd + it->size;
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_BUS_MAKE, cmd), EINVAL);
	/* one character is too short for the uid prefix, a payload of a
	 * single NUL is shorter than the sysname minimum */
	it->size = KDBUS_ITEM_HDR + 1;
	it->data[0] = 0;
	cmd->size = (uint8_t *)it - (uint8_t *)cmd + it->size;
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_BUS_MAKE, cmd), EINVAL);
	close(fd);
	cmd_free(cmd);
	return TEST_OK;
}

KDBUS_TEST(bus, name_exists, 0)
{
	char path[320];
	uint64_t bad_attach = 1ULL << 20;

	/* EEXIST for the test's own bus name */
	ASSERT_ERR(make_on_fresh(0, env->bus_name, 8, 1, NULL, NULL), EEXIST);
	/* check order: bloom (1) and attach flags (2) before the name (4) */
	ASSERT_ERR(make_on_fresh(0, env->bus_name, 7, 1, NULL, NULL), EINVAL);
	ASSERT_ERR(make_on_fresh(0, env->bus_name, 8, 1, &bad_attach, NULL),
		   EINVAL);
	/* the existing bus is unharmed */
	snprintf(path, sizeof(path), "%s/bus", env->bus_dir);
	ASSERT(access(path, F_OK) == 0);
	/* the name is reusable at once after the owner fd is closed */
	close(env->bus_owner_fd);
	ASSERT_OK(make_on_fresh(0, env->bus_name, 8, 1, NULL,
				&env->bus_owner_fd));
	return TEST_OK;
}

KDBUS_TEST(bus, owner_handle_state, 0)
{
	struct kdbus_cmd_hello hello = { .size = sizeof(hello),
					 .pool_size = KDBUS_PAGE };
	struct kdbus_cmd_info info = { .size = sizeof(info) };
	struct kdbus_cmd cmd = { .size = sizeof(cmd) };
	char name[64];

	uname_(name, sizeof(name), "two");
	/* second BUS_MAKE on the owner handle, even with a new name */
	ASSERT_ERR(kdbus_bus_make(env->bus_owner_fd, 0, name, 8, 1, NULL),
		   EBADFD);
	ASSERT_ERR(kdbus_ioctl(env->bus_owner_fd, KDBUS_CMD_HELLO, &hello),
		   EBADFD);
	ASSERT_ERR(kdbus_ioctl(env->bus_owner_fd, KDBUS_CMD_CONN_INFO, &info),
		   EBADFD);
	ASSERT_ERR(kdbus_ioctl(env->bus_owner_fd, KDBUS_CMD_BYEBYE, &cmd),
		   EBADFD);
	/* HELLO and ENDPOINT_MAKE on a control handle */
	ASSERT_ERR(kdbus_ioctl(env->control_fd, KDBUS_CMD_HELLO, &hello),
		   EBADFD);
	/* connection commands on a fresh control handle */
	ASSERT_ERR(kdbus_ioctl(env->control_fd, KDBUS_CMD_CONN_INFO, &info),
		   EBADFD);
	/* BUS_MAKE on an endpoint */
	{
		int fd = open(env->bus_path, O_RDWR);

		ASSERT(fd >= 0);
		ASSERT_ERR(kdbus_bus_make(fd, 0, name, 8, 1, NULL), EBADFD);
		close(fd);
	}
	return TEST_OK;
}

/* the bus lives exactly as long as the owner's open file description */
KDBUS_TEST(bus, dies_with_fd, 0)
{
	int dupfd = dup(env->bus_owner_fd);

	ASSERT(dupfd >= 0);
	close(env->bus_owner_fd);
	/* still alive through the dup */
	ASSERT(access(env->bus_path, F_OK) == 0);
	close(dupfd);
	ASSERT(access(env->bus_dir, F_OK) < 0 && errno == ENOENT);
	return TEST_OK;
}

/* bus flags reach HELLO's bus_flags */
KDBUS_TEST(bus, flags_in_hello, 0)
{
	struct kdbus_conn *c;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &c));
	ASSERT_EQ(c->hello.bus_flags, KDBUS_MAKE_ACCESS_WORLD);
	kdbus_conn_free(c);
	return TEST_OK;
}

/* KDBUS_USER_MAX_BUSES per user; EEXIST is checked before the limit */
KDBUS_TEST(bus, per_user_limit, KDBUS_TEST_NO_BUS)
{
	pid_t pid = kdbus_fork_as(4301, 4301);

	ASSERT(pid >= 0);
	if (pid == 0) {
		int fds[KDBUS_USER_MAX_BUSES + 1], i, r;
		char name[64], first[64];

		for (i = 0; i < KDBUS_USER_MAX_BUSES; i++) {
			snprintf(name, sizeof(name), "4301-lim%d-%d",
				 (int)getpid(), i);
			if (i == 0)
				strcpy(first, name);
			r = make_on_fresh(0, name, 8, 1, NULL, &fds[i]);
			if (r == -ENOTTY) {
				kdbus_test_skip_reason("BUS_MAKE: ENOTTY");
				_exit(TEST_SKIP);
			}
			if (r < 0) {
				DIAG("bus %d: %s", i, kdbus_errname(-r));
				_exit(TEST_FAIL);
			}
		}
		snprintf(name, sizeof(name), "4301-lim%d-x", (int)getpid());
		r = make_on_fresh(0, name, 8, 1, NULL, NULL);
		if (r != -EMFILE) {
			DIAG("bus %d: expected EMFILE, got %s", i,
			     r ? kdbus_errname(-r) : "success");
			_exit(TEST_FAIL);
		}
		/* at the limit, a duplicate name is still EEXIST */
		r = make_on_fresh(0, first, 8, 1, NULL, NULL);
		if (r != -EEXIST) {
			DIAG("duplicate at limit: expected EEXIST, got %s",
			     r ? kdbus_errname(-r) : "success");
			_exit(TEST_FAIL);
		}
		/* closing one frees a slot */
		close(fds[0]);
		r = make_on_fresh(0, name, 8, 1, NULL, &fds[0]);
		if (r < 0) {
			DIAG("after close: %s", kdbus_errname(-r));
			_exit(TEST_FAIL);
		}
		_exit(TEST_OK);
	}
	return kdbus_wait_child(pid);
}

/* the name prefix is the effective uid, the bus is owned by it */
KDBUS_TEST(bus, name_prefix_euid, KDBUS_TEST_NO_BUS)
{
	pid_t pid = kdbus_fork_as(4302, 4302);

	ASSERT(pid >= 0);
	if (pid == 0) {
		char name[64];
		int r;

		snprintf(name, sizeof(name), "0-pf%d", (int)getpid());
		r = make_on_fresh(0, name, 8, 1, NULL, NULL);
		if (r != -EINVAL) {
			DIAG("uid 4302 making \"%s\": expected EINVAL, got %s",
			     name, r ? kdbus_errname(-r) : "success");
			_exit(r == -ENOTTY ? TEST_SKIP : TEST_FAIL);
		}
		snprintf(name, sizeof(name), "4302-pf%d", (int)getpid());
		r = make_on_fresh(0, name, 8, 1, NULL, NULL);
		if (r < 0) {
			DIAG("uid 4302 making \"%s\": %s", name,
			     kdbus_errname(-r));
			_exit(TEST_FAIL);
		}
		_exit(TEST_OK);
	}
	return kdbus_wait_child(pid);
}

/* endpoint codes on handles that are no endpoint (kdbus(7)) */
KDBUS_TEST(bus, endpoint_codes_wrong_handle, 0)
{
	struct kdbus_cmd cmd = { .size = sizeof(cmd) };

	ASSERT_ERR(kdbus_ioctl(env->control_fd, KDBUS_CMD_ENDPOINT_MAKE, &cmd),
		   EBADFD);
	ASSERT_ERR(kdbus_ioctl(env->bus_owner_fd, KDBUS_CMD_ENDPOINT_MAKE, &cmd),
		   EBADFD);
	ASSERT_ERR(kdbus_ioctl(env->control_fd, KDBUS_CMD_ENDPOINT_UPDATE, &cmd),
		   EBADFD);
	ASSERT_ERR(kdbus_ioctl(env->bus_owner_fd, KDBUS_CMD_ENDPOINT_UPDATE,
			       &cmd), EBADFD);
	return TEST_OK;
}
