// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Conformance audit of the command protocol (kdbus(7), kdbus.item(7),
 * kdbus(7), kdbus.item(7), kdbus(7)): the NEGOTIATE item answer of every
 * command's item set, the order of the copy-in steps, the sysname sub-rules,
 * item payload sizes, duplicates, foreign items, return_flags write-back
 * (including the EFAULT it can produce) and the size field changing
 * while it is copied in.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

/* tests of group "conform-cmd" (the group name has a dash) */
#define CONFORM_TEST(_name, _flags)						\
	static int conform_cmd_fn_##_name(struct kdbus_test_env *env);	\
	static const struct kdbus_test conform_cmd_t_##_name = {		\
		.group = "conform-cmd", .name = #_name,				\
		.fn = conform_cmd_fn_##_name, .flags = (_flags),		\
		.file = __FILE__, .line = __LINE__,				\
	};									\
	static const struct kdbus_test *conform_cmd_p_##_name			\
	__attribute__((used, section("kdbus_tests"), aligned(sizeof(void *)))) = \
		&conform_cmd_t_##_name;						\
	static int conform_cmd_fn_##_name(					\
		struct kdbus_test_env *env __attribute__((unused)))

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* every item type of kdbus.item(7) plus a few unknown ones */
static const uint64_t all_types[] = {
	KDBUS_ITEM_NEGOTIATE, KDBUS_ITEM_PAYLOAD_VEC, KDBUS_ITEM_PAYLOAD_OFF,
	KDBUS_ITEM_PAYLOAD_MEMFD, KDBUS_ITEM_FDS, KDBUS_ITEM_CANCEL_FD,
	KDBUS_ITEM_BLOOM_PARAMETER, KDBUS_ITEM_BLOOM_FILTER,
	KDBUS_ITEM_BLOOM_MASK, KDBUS_ITEM_DST_NAME, KDBUS_ITEM_MAKE_NAME,
	KDBUS_ITEM_ATTACH_FLAGS_SEND, KDBUS_ITEM_ATTACH_FLAGS_RECV,
	KDBUS_ITEM_ID, KDBUS_ITEM_NAME, KDBUS_ITEM_DST_ID,
	KDBUS_ITEM_TIMESTAMP, KDBUS_ITEM_CREDS, KDBUS_ITEM_PIDS,
	KDBUS_ITEM_AUXGROUPS, KDBUS_ITEM_OWNED_NAME, KDBUS_ITEM_TID_COMM,
	KDBUS_ITEM_PID_COMM, KDBUS_ITEM_EXE, KDBUS_ITEM_CMDLINE,
	KDBUS_ITEM_CGROUP, KDBUS_ITEM_CAPS, KDBUS_ITEM_SECLABEL,
	KDBUS_ITEM_AUDIT, KDBUS_ITEM_CONN_DESCRIPTION,
	KDBUS_ITEM_POLICY_ACCESS, KDBUS_ITEM_NAME_ADD,
	KDBUS_ITEM_NAME_REMOVE, KDBUS_ITEM_NAME_CHANGE, KDBUS_ITEM_ID_ADD,
	KDBUS_ITEM_ID_REMOVE, KDBUS_ITEM_REPLY_TIMEOUT,
	KDBUS_ITEM_REPLY_DEAD,
	0, 0x11, 0x100e, 0x2001, 0x8007, 0xdead, ~0ULL,
};

static bool in_set(uint64_t t, const uint64_t *set, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (set[i] == t)
			return true;
	return false;
}

/*
 * Negotiate (flag + item listing every type) on fd with a command of the
 * given fixed size; check the flags answer and that exactly the types
 * outside the accepted set were zeroed. Returns 0, 1 (ENOTTY) or -1.
 */
static int negotiate_set(int fd, unsigned long req, const char *name,
			 size_t fixed, uint64_t allowed, const uint64_t *set,
			 size_t nset)
{
	uint64_t *cmd = cmd_new(fixed);
	struct kdbus_item *it;
	size_t i;
	long r;
	int ret = 0;

	cmd[1] = KDBUS_FLAG_NEGOTIATE;
	it = cmd_add_item(cmd, KDBUS_ITEM_NEGOTIATE, all_types,
			  sizeof(all_types));
	r = kdbus_ioctl(fd, req, cmd);
	if (r == -ENOTTY) {
		DIAG("%s: ENOTTY (not implemented yet)", name);
		cmd_free(cmd);
		return 1;
	}
	if (r != 0) {
		DIAG("%s: negotiation failed: %s", name, kdbus_errname(-r));
		cmd_free(cmd);
		return -1;
	}
	if (cmd[1] != allowed) {
		DIAG("%s: flags answer 0x%llx, expected 0x%llx", name,
		     (unsigned long long)cmd[1], (unsigned long long)allowed);
		ret = -1;
	}
	for (i = 0; i < N(all_types); i++) {
		uint64_t want = in_set(all_types[i], set, nset) ?
				all_types[i] : 0;

		if (it->data64[i] != want) {
			DIAG("%s: entry %zu (type 0x%llx) reads 0x%llx, expected 0x%llx",
			     name, i, (unsigned long long)all_types[i],
			     (unsigned long long)it->data64[i],
			     (unsigned long long)want);
			ret = -1;
		}
	}
	cmd_free(cmd);
	return ret;
}

/* kdbus.item(7) / kdbus(7): the accepted item set of every command */
CONFORM_TEST(negotiate_item_sets, 0)
{
	static const uint64_t bus_make[] = { KDBUS_ITEM_NEGOTIATE,
		KDBUS_ITEM_MAKE_NAME, KDBUS_ITEM_BLOOM_PARAMETER,
		KDBUS_ITEM_ATTACH_FLAGS_SEND };
	static const uint64_t hello[] = { KDBUS_ITEM_NEGOTIATE,
		KDBUS_ITEM_NAME, KDBUS_ITEM_CREDS, KDBUS_ITEM_PIDS,
		KDBUS_ITEM_SECLABEL, KDBUS_ITEM_CONN_DESCRIPTION,
		KDBUS_ITEM_POLICY_ACCESS };
	static const uint64_t update[] = { KDBUS_ITEM_NEGOTIATE,
		KDBUS_ITEM_ATTACH_FLAGS_SEND, KDBUS_ITEM_ATTACH_FLAGS_RECV,
		KDBUS_ITEM_NAME, KDBUS_ITEM_POLICY_ACCESS };
	static const uint64_t only_neg[] = { KDBUS_ITEM_NEGOTIATE };
	static const uint64_t conn_info[] = { KDBUS_ITEM_NEGOTIATE,
		KDBUS_ITEM_NAME };
	static const uint64_t send[] = { KDBUS_ITEM_NEGOTIATE,
		KDBUS_ITEM_CANCEL_FD };
	struct kdbus_conn *c;
	int fd, bad = 0, notty = 0, r;

	fd = open(KDBUS_CONTROL, O_RDWR);
	ASSERT(fd >= 0);
	r = negotiate_set(fd, KDBUS_CMD_BUS_MAKE, "BUS_MAKE",
			  sizeof(struct kdbus_cmd), 3, bus_make, N(bus_make));
	bad |= r < 0;
	notty |= r > 0;
	close(fd);
	fd = open(env->bus_path, O_RDWR);
	ASSERT(fd >= 0);
	r = negotiate_set(fd, KDBUS_CMD_HELLO, "HELLO",
			  sizeof(struct kdbus_cmd_hello), 0xf, hello,
			  N(hello));
	bad |= r < 0;
	notty |= r > 0;
	close(fd);

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &c));
#define NEG(req, fixed, allowed, set) do {				\
		r = negotiate_set(c->fd, req, #req, fixed, allowed, set,	\
				  N(set));				\
		bad |= r < 0;						\
		notty |= r > 0;						\
	} while (0)
	NEG(KDBUS_CMD_UPDATE, sizeof(struct kdbus_cmd), 0, update);
	NEG(KDBUS_CMD_BYEBYE, sizeof(struct kdbus_cmd), 0, only_neg);
	NEG(KDBUS_CMD_FREE, sizeof(struct kdbus_cmd_free), 0, only_neg);
	NEG(KDBUS_CMD_CONN_INFO, sizeof(struct kdbus_cmd_info), 0, conn_info);
	NEG(KDBUS_CMD_BUS_CREATOR_INFO, sizeof(struct kdbus_cmd_info), 0,
	    only_neg);
	NEG(KDBUS_CMD_RECV, sizeof(struct kdbus_cmd_recv), 7, only_neg);
	NEG(KDBUS_CMD_SEND, sizeof(struct kdbus_cmd_send), 1, send);
	NEG(KDBUS_CMD_LIST, sizeof(struct kdbus_cmd_list), 0xf, only_neg);
	NEG(KDBUS_CMD_MATCH_REMOVE, sizeof(struct kdbus_cmd_match), 0,
	    only_neg);
#undef NEG
	/* nothing was executed: still connected, queue untouched */
	ASSERT_OK(kdbus_conn_info(c, c->id, NULL, 0, NULL, NULL));
	kdbus_conn_free(c);
	if (bad)
		return TEST_FAIL;
	if (notty)
		SKIP("some command is not implemented (ENOTTY)");
	return TEST_OK;
}

/* kdbus(7): the NEGOTIATE item without the flag: answered, command runs */
CONFORM_TEST(negotiate_item_without_flag, 0)
{
	uint64_t v[] = { KDBUS_ITEM_CONN_DESCRIPTION, KDBUS_ITEM_MAKE_NAME,
			 KDBUS_ITEM_ATTACH_FLAGS_RECV };
	struct kdbus_cmd_hello *h = cmd_new(sizeof(*h));
	struct kdbus_cmd *cmd;
	struct kdbus_item *it;
	struct kdbus_conn *c;
	char name[64];
	int fd;

	h->pool_size = KDBUS_PAGE;
	it = cmd_add_item(h, KDBUS_ITEM_NEGOTIATE, v, sizeof(v));
	fd = open(env->bus_path, O_RDWR);
	ASSERT(fd >= 0);
	ASSERT_OK(kdbus_ioctl(fd, KDBUS_CMD_HELLO, h));
	ASSERT(h->id != 0);
	ASSERT_EQ(it->data64[0], KDBUS_ITEM_CONN_DESCRIPTION);
	ASSERT_EQ(it->data64[1], 0);
	ASSERT_EQ(it->data64[2], 0);
	/* it is a connection now */
	ASSERT_OK(kdbus_free_fd(fd, h->offset));
	close(fd);
	cmd_free(h);

	/* BUS_MAKE with a NEGOTIATE item makes the bus */
	cmd = cmd_new(sizeof(*cmd));
	{
		struct kdbus_bloom_parameter bp = { 8, 1 };

		kdbus_unique_name(name, sizeof(name), "ni");
		cmd_add_str(cmd, KDBUS_ITEM_MAKE_NAME, name);
		cmd_add_item(cmd, KDBUS_ITEM_BLOOM_PARAMETER, &bp, sizeof(bp));
	}
	it = cmd_add_item(cmd, KDBUS_ITEM_NEGOTIATE, v, sizeof(v));
	fd = open(KDBUS_CONTROL, O_RDWR);
	ASSERT(fd >= 0);
	ASSERT_OK(kdbus_ioctl(fd, KDBUS_CMD_BUS_MAKE, cmd));
	ASSERT_EQ(it->data64[0], 0);
	ASSERT_EQ(it->data64[1], KDBUS_ITEM_MAKE_NAME);
	ASSERT_EQ(it->data64[2], 0);
	{
		char path[320];

		snprintf(path, sizeof(path), "%s/%s/bus", KDBUS_MOUNT, name);
		ASSERT(access(path, F_OK) == 0);
	}
	close(fd);
	cmd_free(cmd);

	/* BYEBYE with a NEGOTIATE item disconnects */
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	cmd = cmd_new(sizeof(*cmd));
	it = cmd_add_item(cmd, KDBUS_ITEM_NEGOTIATE, v, sizeof(v));
	ASSERT_OK(kdbus_ioctl(c->fd, KDBUS_CMD_BYEBYE, cmd));
	ASSERT_EQ(it->data64[0], 0);
	ASSERT_ERR(kdbus_conn_info(c, c->id, NULL, 0, NULL, NULL), ECONNRESET);
	cmd_free(cmd);
	kdbus_conn_free(c);
	return TEST_OK;
}

/* kdbus(7) step 1-2 for HELLO (the only _IOWR command) */
CONFORM_TEST(hello_copy_in, 0)
{
	struct kdbus_cmd_hello *h = cmd_new(sizeof(*h) + 64);
	int fd = open(env->bus_path, O_RDWR);

	ASSERT(fd >= 0);
	h->pool_size = KDBUS_PAGE;
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_HELLO, (uint8_t *)h + 4), EFAULT);
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_HELLO, NULL), EFAULT);
	h->size = sizeof(*h) - 8;
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_HELLO, h), EINVAL);
	h->size = 0;
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_HELLO, h), EINVAL);
	h->size = KDBUS_CMD_MAX_SIZE + 1;
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_HELLO, h), EMSGSIZE);
	/* alignment is checked before the size */
	memmove((uint8_t *)h + 4, h, sizeof(*h));
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_HELLO, (uint8_t *)h + 4), EFAULT);
	memset(h, 0, sizeof(*h) + 8);
	h->size = sizeof(*h);
	h->pool_size = KDBUS_PAGE;
	/* handle still fresh */
	ASSERT_OK(kdbus_ioctl(fd, KDBUS_CMD_HELLO, h));
	close(fd);
	cmd_free(h);
	return TEST_OK;
}

static char long64[65];

static void init_long64(void)
{
	memset(long64, 'n', 64);
	long64[64] = 0;
}

static long hello_items(struct kdbus_test_env *env,
			struct kdbus_cmd_hello *h)
{
	int fd = open(env->bus_path, O_RDWR);
	long r;

	if (fd < 0)
		return -errno;
	r = kdbus_ioctl(fd, KDBUS_CMD_HELLO, h);
	close(fd);
	return r;
}

static long bus_make_cmd(struct kdbus_cmd *cmd)
{
	int fd = kdbus_open_control();
	long r;

	if (fd < 0)
		return fd;
	r = kdbus_ioctl(fd, KDBUS_CMD_BUS_MAKE, cmd);
	close(fd);
	return r;
}

/* kdbus(7) order: flags (5) < items (6) < negotiation (7) < mandatory (8) */
CONFORM_TEST(step_order, 0)
{
	struct kdbus_bloom_parameter bp = { 8, 1 };
	struct kdbus_cmd_hello *h;
	struct kdbus_cmd *cmd;
	uint64_t junk[2] = { 0, 0 };

	init_long64();
	/* unknown flag and an overlong name: the flag wins */
	cmd = cmd_new(sizeof(*cmd));
	cmd->flags = 4;
	cmd_add_str(cmd, KDBUS_ITEM_MAKE_NAME, long64);
	cmd_add_item(cmd, KDBUS_ITEM_BLOOM_PARAMETER, &bp, sizeof(bp));
	ASSERT_ERR(bus_make_cmd(cmd), EINVAL);
	/* negotiating: items are still validated */
	cmd->flags = KDBUS_FLAG_NEGOTIATE;
	ASSERT_ERR(bus_make_cmd(cmd), ENAMETOOLONG);
	cmd_free(cmd);
	/* item errors before the missing mandatory BLOOM_PARAMETER */
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_str(cmd, KDBUS_ITEM_MAKE_NAME, long64);
	ASSERT_ERR(bus_make_cmd(cmd), ENAMETOOLONG);
	cmd_free(cmd);

	/* HELLO: parse (step 1) before the pool size (step 2) */
	h = cmd_new(sizeof(*h));
	h->pool_size = 0;
	cmd_add_str(h, KDBUS_ITEM_CONN_DESCRIPTION, long64);
	ASSERT_ERR(hello_items(env, h), ENAMETOOLONG);
	cmd_free(h);
	/* payload check (3) before the duplicate check (4) */
	h = cmd_new(sizeof(*h));
	h->pool_size = KDBUS_PAGE;
	cmd_add_str(h, KDBUS_ITEM_CONN_DESCRIPTION, "ok");
	cmd_add_str(h, KDBUS_ITEM_CONN_DESCRIPTION, long64);
	ASSERT_ERR(hello_items(env, h), ENAMETOOLONG);
	cmd_free(h);
	/* items are walked in order: the first bad one decides */
	h = cmd_new(sizeof(*h));
	h->pool_size = KDBUS_PAGE;
	cmd_add_str(h, KDBUS_ITEM_CONN_DESCRIPTION, long64);
	cmd_add_item(h, 0x4242, junk, sizeof(junk));
	ASSERT_ERR(hello_items(env, h), ENAMETOOLONG);
	cmd_free(h);
	h = cmd_new(sizeof(*h));
	h->pool_size = KDBUS_PAGE;
	cmd_add_item(h, 0x4242, junk, sizeof(junk));
	cmd_add_str(h, KDBUS_ITEM_CONN_DESCRIPTION, long64);
	ASSERT_ERR(hello_items(env, h), EINVAL);
	cmd_free(h);
	/* unknown flag before an item error on HELLO */
	h = cmd_new(sizeof(*h));
	h->pool_size = KDBUS_PAGE;
	h->flags = 1ULL << 5;
	cmd_add_str(h, KDBUS_ITEM_CONN_DESCRIPTION, long64);
	ASSERT_ERR(hello_items(env, h), EINVAL);
	cmd_free(h);
	return TEST_OK;
}

/* kdbus.connection(7): item validation precedes the privilege checks */
CONFORM_TEST(parse_before_privilege, 0)
{
	pid_t pid = kdbus_fork_as(4411, 4411);

	ASSERT(pid >= 0);
	if (pid == 0) {
		struct kdbus_creds creds;
		struct kdbus_cmd_hello *h;
		long r;
		int i;

		init_long64();
		for (i = 0; i < 8; i++)
			((uint64_t *)&creds)[i] = 0xffffffffULL;
#define EXPECT(expr, err) do {						\
		r = (expr);						\
		if (r != -(err)) {					\
			DIAG("%s:%d: expected %s, got %s", __FILE__, __LINE__, \
			     kdbus_errname(err), r ? kdbus_errname(-r) : "success"); \
			_exit(r == -ENOTTY ? TEST_SKIP : TEST_FAIL);	\
		}							\
	} while (0)
		/* a SECLABEL that is no proper string: EINVAL, not EPERM */
		h = cmd_new(sizeof(*h));
		h->pool_size = KDBUS_PAGE;
		cmd_add_item(h, KDBUS_ITEM_SECLABEL, "abc", 3);
		EXPECT(hello_items(env, h), EINVAL);
		cmd_free(h);
		/* faked creds plus an overlong description */
		h = cmd_new(sizeof(*h));
		h->pool_size = KDBUS_PAGE;
		cmd_add_item(h, KDBUS_ITEM_CREDS, &creds, sizeof(creds));
		cmd_add_str(h, KDBUS_ITEM_CONN_DESCRIPTION, long64);
		EXPECT(hello_items(env, h), ENAMETOOLONG);
		cmd_free(h);
		/* monitor flag with a bad pool size: EINVAL (2 before 8) */
		h = cmd_new(sizeof(*h));
		h->flags = KDBUS_HELLO_MONITOR;
		h->pool_size = 100;
		EXPECT(hello_items(env, h), EINVAL);
		cmd_free(h);
#undef EXPECT
		_exit(TEST_OK);
	}
	return kdbus_wait_child(pid);
}

/* HELLO with one CONN_DESCRIPTION item built from raw bytes */
static long desc_raw(struct kdbus_test_env *env, const void *data,
		     size_t len)
{
	struct kdbus_cmd_hello *h = cmd_new(sizeof(*h));
	long r;

	h->pool_size = KDBUS_PAGE;
	cmd_add_item(h, KDBUS_ITEM_CONN_DESCRIPTION, data, len);
	r = hello_items(env, h);
	cmd_free(h);
	return r;
}

static long desc(struct kdbus_test_env *env, const char *s)
{
	return desc_raw(env, s, strlen(s) + 1);
}

/* kdbus.item(7) sysname rule, sub-rule by sub-rule, on CONN_DESCRIPTION */
CONFORM_TEST(sysname_rules, 0)
{
	char buf[96];
	static const char *bad[] = { "-a", "a-", ".a", "a.", "-", ".",
				     "a b", "a/b", "a*", "a:b", "a\tb",
				     "a\x7f", "a\x80", "a\xd7y", "a\xa0y",
				     "a\xaay", "a\xf7y" };
	static const char *good[] = { "a", "9", "_", "_a_", "a-b", "a.b",
				      "a--..b", "A_z-0.9" };
	size_t i;

	init_long64();
	/* 1: need at least one character */
	ASSERT_ERR(desc_raw(env, "", 0), EINVAL);
	ASSERT_ERR(desc_raw(env, "", 1), EINVAL);
	/* 2: longer than 63 characters, whatever else is wrong */
	ASSERT_ERR(desc(env, long64), ENAMETOOLONG);
	memcpy(buf, long64, 64);
	buf[10] = ' ';
	buf[0] = '-';
	buf[64] = 0;
	ASSERT_ERR(desc(env, buf), ENAMETOOLONG);
	memset(buf, 'x', sizeof(buf));
	ASSERT_ERR(desc_raw(env, buf, 65), ENAMETOOLONG);	/* no NUL */
	memset(buf, 0, sizeof(buf));
	memcpy(buf, "abc", 3);
	ASSERT_ERR(desc_raw(env, buf, 66), ENAMETOOLONG);	/* NUL padded */
	/* 63 characters exactly */
	ASSERT_OK(desc(env, long64 + 1));
	/* 3: string rule */
	ASSERT_ERR(desc_raw(env, "ab", 2), EINVAL);
	ASSERT_ERR(desc_raw(env, "ab\0\0", 4), EINVAL);
	ASSERT_ERR(desc_raw(env, "a\0b\0", 4), EINVAL);
	ASSERT_OK(desc_raw(env, "abcdefg\0", 8));
	ASSERT_ERR(desc_raw(env, "abcdefg\0\0", 9), EINVAL);
	/* 4: character set */
	for (i = 0; i < N(bad); i++) {
		long r = desc(env, bad[i]);

		if (r != -EINVAL)
			FAIL("description \"%s\": expected EINVAL, got %s",
			     bad[i], r ? kdbus_errname(-r) : "success");
	}
	for (i = 0; i < N(good); i++) {
		long r = desc(env, good[i]);

		if (r == -ENOTTY)
			SKIP("HELLO: ENOTTY");
		if (r != 0)
			FAIL("description \"%s\": expected success, got %s",
			     good[i], kdbus_errname(-r));
	}
	return TEST_OK;
}

/*
 * kdbus.item(7) sysname rule 4: "use the kernel's own isalpha()", whose table
 * classifies Latin-1 letters (0xc0-0xd6, 0xd8-0xf6, 0xf8-0xff) as
 * letters. A module using an ASCII-only test rejects these.
 */
CONFORM_TEST(sysname_kernel_isalpha, 0)
{
	ASSERT_OK(desc(env, "x\xc0\xdf\xff"));
	ASSERT_OK(desc(env, "\xe9t\xe9"));
	ASSERT_ERR(desc(env, "x\xd7y"), EINVAL);
	ASSERT_ERR(desc(env, "x\xbfy"), EINVAL);
	return TEST_OK;
}

/* kdbus.item(7) payload sizes of the items the foundation commands take */
CONFORM_TEST(item_payload_sizes, 0)
{
	struct kdbus_bloom_parameter bp = { 8, 1 };
	uint64_t zero[8] = { 0 };
	struct kdbus_cmd_hello *h;
	struct kdbus_cmd *cmd;
	struct kdbus_conn *c;
	char name[64];

	kdbus_unique_name(name, sizeof(name), "ps");
	/* BUS_MAKE: ATTACH_FLAGS_SEND payload 8, BLOOM_PARAMETER 16 */
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_str(cmd, KDBUS_ITEM_MAKE_NAME, name);
	cmd_add_item(cmd, KDBUS_ITEM_BLOOM_PARAMETER, &bp, sizeof(bp));
	cmd_add_item(cmd, KDBUS_ITEM_ATTACH_FLAGS_SEND, zero, 16);
	ASSERT_ERR(bus_make_cmd(cmd), EINVAL);
	cmd_free(cmd);
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_str(cmd, KDBUS_ITEM_MAKE_NAME, name);
	cmd_add_item(cmd, KDBUS_ITEM_BLOOM_PARAMETER, &bp, sizeof(bp));
	cmd_add_item(cmd, KDBUS_ITEM_ATTACH_FLAGS_SEND, zero, 4);
	ASSERT_ERR(bus_make_cmd(cmd), EINVAL);
	cmd_free(cmd);
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_str(cmd, KDBUS_ITEM_MAKE_NAME, name);
	cmd_add_item(cmd, KDBUS_ITEM_BLOOM_PARAMETER, zero, 24);
	ASSERT_ERR(bus_make_cmd(cmd), EINVAL);
	cmd_free(cmd);

	/* HELLO: PIDS 24, CREDS 64, POLICY_ACCESS 24, SECLABEL string */
#define HELLO_ITEM(type, data, len, err) do {				\
		h = cmd_new(sizeof(*h));				\
		h->pool_size = KDBUS_PAGE;				\
		cmd_add_item(h, type, data, len);			\
		ASSERT_ERR(hello_items(env, h), err);			\
		cmd_free(h);						\
	} while (0)
	HELLO_ITEM(KDBUS_ITEM_PIDS, zero, 32, EINVAL);
	HELLO_ITEM(KDBUS_ITEM_PIDS, zero, 8, EINVAL);
	HELLO_ITEM(KDBUS_ITEM_PIDS, zero, 0, EINVAL);
	HELLO_ITEM(KDBUS_ITEM_PIDS, zero, 24, 0);
	HELLO_ITEM(KDBUS_ITEM_CREDS, zero, 56, EINVAL);
	HELLO_ITEM(KDBUS_ITEM_CREDS, zero, 0, EINVAL);
	HELLO_ITEM(KDBUS_ITEM_POLICY_ACCESS, zero, 16, EINVAL);
	HELLO_ITEM(KDBUS_ITEM_POLICY_ACCESS, zero, 32, EINVAL);
	HELLO_ITEM(KDBUS_ITEM_SECLABEL, "abc", 3, EINVAL);
	HELLO_ITEM(KDBUS_ITEM_SECLABEL, "", 0, EINVAL);
	HELLO_ITEM(KDBUS_ITEM_SECLABEL, "ab\0\0", 4, EINVAL);
	HELLO_ITEM(KDBUS_ITEM_NEGOTIATE, zero, 0, 0);
	HELLO_ITEM(KDBUS_ITEM_NEGOTIATE, zero, 4, EINVAL);
#undef HELLO_ITEM
	/* a NAME that is no proper string, on a policy holder */
	h = cmd_new(sizeof(*h));
	h->flags = KDBUS_HELLO_POLICY_HOLDER;
	h->pool_size = KDBUS_PAGE;
	cmd_add_item(h, KDBUS_ITEM_NAME, "org.example.a\0\0", 15);
	ASSERT_ERR(hello_items(env, h), EINVAL);
	cmd_free(h);

	/* UPDATE: ATTACH_FLAGS_RECV payload 8 */
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_item(cmd, KDBUS_ITEM_ATTACH_FLAGS_RECV, zero, 16);
	ASSERT_ERR(kdbus_ioctl(c->fd, KDBUS_CMD_UPDATE, cmd), EINVAL);
	cmd_free(cmd);
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_item(cmd, KDBUS_ITEM_ATTACH_FLAGS_SEND, zero, 0);
	ASSERT_ERR(kdbus_ioctl(c->fd, KDBUS_CMD_UPDATE, cmd), EINVAL);
	cmd_free(cmd);
	/* CONN_INFO: NAME with NUL padding counted in its size */
	{
		struct kdbus_cmd_info *ci = cmd_new(sizeof(*ci));

		cmd_add_item(ci, KDBUS_ITEM_NAME, "org.example.x\0\0\0", 16);
		ASSERT_ERR(kdbus_ioctl(c->fd, KDBUS_CMD_CONN_INFO, ci), EINVAL);
		cmd_free(ci);
	}
	kdbus_conn_free(c);
	return TEST_OK;
}

/* kdbus.item(7): single-use items appearing twice; repeatable ones */
CONFORM_TEST(duplicates, 0)
{
	struct kdbus_bloom_parameter bp = { 8, 1 };
	struct kdbus_policy_access pa = { KDBUS_POLICY_ACCESS_WORLD,
					  KDBUS_POLICY_SEE, 0 };
	uint64_t unset[8];
	struct kdbus_pids pids = { 0 };
	struct kdbus_cmd_hello *h;
	struct kdbus_cmd *cmd;
	struct kdbus_conn *c;
	char name[64];
	int i, fd = -1;

	for (i = 0; i < 8; i++)
		unset[i] = 0xffffffffULL;
#define HELLO_TWICE(type, data, len) do {				\
		h = cmd_new(sizeof(*h));				\
		h->pool_size = KDBUS_PAGE;				\
		cmd_add_item(h, type, data, len);			\
		ASSERT_OK(hello_items(env, h));				\
		cmd_add_item(h, type, data, len);			\
		ASSERT_ERR(hello_items(env, h), EINVAL);		\
		cmd_free(h);						\
	} while (0)
	HELLO_TWICE(KDBUS_ITEM_CONN_DESCRIPTION, "d1", 3);
	HELLO_TWICE(KDBUS_ITEM_PIDS, &pids, sizeof(pids));
	HELLO_TWICE(KDBUS_ITEM_CREDS, unset, sizeof(unset));
	HELLO_TWICE(KDBUS_ITEM_SECLABEL, "lbl", 4);
#undef HELLO_TWICE
	/* POLICY_ACCESS repeats; ordinary connections ignore it
	 * (kdbus.connection(7)) */
	h = cmd_new(sizeof(*h));
	h->pool_size = KDBUS_PAGE;
	cmd_add_item(h, KDBUS_ITEM_POLICY_ACCESS, &pa, sizeof(pa));
	cmd_add_item(h, KDBUS_ITEM_POLICY_ACCESS, &pa, sizeof(pa));
	fd = open(env->bus_path, O_RDWR);
	ASSERT(fd >= 0);
	ASSERT_OK(kdbus_ioctl(fd, KDBUS_CMD_HELLO, h));
	close(fd);
	cmd_free(h);

	/* BUS_MAKE: BLOOM_PARAMETER and ATTACH_FLAGS_SEND twice */
	kdbus_unique_name(name, sizeof(name), "du");
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_str(cmd, KDBUS_ITEM_MAKE_NAME, name);
	cmd_add_item(cmd, KDBUS_ITEM_BLOOM_PARAMETER, &bp, sizeof(bp));
	cmd_add_item(cmd, KDBUS_ITEM_BLOOM_PARAMETER, &bp, sizeof(bp));
	ASSERT_ERR(bus_make_cmd(cmd), EINVAL);
	cmd_free(cmd);
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_str(cmd, KDBUS_ITEM_MAKE_NAME, name);
	cmd_add_item(cmd, KDBUS_ITEM_BLOOM_PARAMETER, &bp, sizeof(bp));
	cmd_add_u64(cmd, KDBUS_ITEM_ATTACH_FLAGS_SEND, 0);
	cmd_add_u64(cmd, KDBUS_ITEM_ATTACH_FLAGS_SEND, 0);
	ASSERT_ERR(bus_make_cmd(cmd), EINVAL);
	cmd_free(cmd);

	/* UPDATE: ATTACH_FLAGS_SEND twice */
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_u64(cmd, KDBUS_ITEM_ATTACH_FLAGS_SEND, 0);
	cmd_add_u64(cmd, KDBUS_ITEM_ATTACH_FLAGS_SEND, 0);
	ASSERT_ERR(kdbus_ioctl(c->fd, KDBUS_CMD_UPDATE, cmd), EINVAL);
	cmd_free(cmd);
	kdbus_conn_free(c);
	return TEST_OK;
}

/* kdbus.item(7): item types outside each command's set */
CONFORM_TEST(foreign_items, 0)
{
	struct kdbus_bloom_parameter bp = { 8, 1 };
	struct kdbus_conn *c;
	uint64_t *cmd;
	char name[64];
	struct {
		const char *what;
		unsigned long req;
		size_t fixed;
		uint64_t type;
	} conn_cases[] = {
		{ "UPDATE+MAKE_NAME", KDBUS_CMD_UPDATE, 24, KDBUS_ITEM_MAKE_NAME },
		{ "UPDATE+CREDS", KDBUS_CMD_UPDATE, 24, KDBUS_ITEM_CREDS },
		{ "UPDATE+ID", KDBUS_CMD_UPDATE, 24, KDBUS_ITEM_ID },
		{ "BYEBYE+NAME", KDBUS_CMD_BYEBYE, 24, KDBUS_ITEM_NAME },
		{ "BYEBYE+ATTACH_FLAGS_SEND", KDBUS_CMD_BYEBYE, 24,
		  KDBUS_ITEM_ATTACH_FLAGS_SEND },
		{ "FREE+NAME", KDBUS_CMD_FREE, 32, KDBUS_ITEM_NAME },
		{ "CONN_INFO+ATTACH_FLAGS_SEND", KDBUS_CMD_CONN_INFO, 56,
		  KDBUS_ITEM_ATTACH_FLAGS_SEND },
		{ "CONN_INFO+ID", KDBUS_CMD_CONN_INFO, 56, KDBUS_ITEM_ID },
		{ "BUS_CREATOR_INFO+ATTACH_FLAGS_RECV",
		  KDBUS_CMD_BUS_CREATOR_INFO, 56, KDBUS_ITEM_ATTACH_FLAGS_RECV },
		{ "RECV+NAME", KDBUS_CMD_RECV, 64, KDBUS_ITEM_NAME },
	};
	size_t i;

	/* BUS_MAKE */
	kdbus_unique_name(name, sizeof(name), "fi");
	cmd = cmd_new(sizeof(struct kdbus_cmd));
	cmd_add_str(cmd, KDBUS_ITEM_MAKE_NAME, name);
	cmd_add_item(cmd, KDBUS_ITEM_BLOOM_PARAMETER, &bp, sizeof(bp));
	cmd_add_str(cmd, KDBUS_ITEM_CONN_DESCRIPTION, "x");
	ASSERT_ERR(bus_make_cmd((struct kdbus_cmd *)cmd), EINVAL);
	cmd_free(cmd);
	cmd = cmd_new(sizeof(struct kdbus_cmd));
	cmd_add_str(cmd, KDBUS_ITEM_MAKE_NAME, name);
	cmd_add_item(cmd, KDBUS_ITEM_BLOOM_PARAMETER, &bp, sizeof(bp));
	cmd_add_u64(cmd, KDBUS_ITEM_ATTACH_FLAGS_RECV, 0);
	ASSERT_ERR(bus_make_cmd((struct kdbus_cmd *)cmd), EINVAL);
	cmd_free(cmd);
	/* HELLO */
	cmd = cmd_new(sizeof(struct kdbus_cmd_hello));
	((struct kdbus_cmd_hello *)cmd)->pool_size = KDBUS_PAGE;
	cmd_add_u64(cmd, KDBUS_ITEM_ATTACH_FLAGS_RECV, 0);
	ASSERT_ERR(hello_items(env, (void *)cmd), EINVAL);
	cmd_free(cmd);
	cmd = cmd_new(sizeof(struct kdbus_cmd_hello));
	((struct kdbus_cmd_hello *)cmd)->pool_size = KDBUS_PAGE;
	cmd_add_item(cmd, KDBUS_ITEM_BLOOM_PARAMETER, &bp, sizeof(bp));
	ASSERT_ERR(hello_items(env, (void *)cmd), EINVAL);
	cmd_free(cmd);

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	for (i = 0; i < N(conn_cases); i++) {
		uint64_t data[2] = { 0, 0 };
		long r;

		cmd = cmd_new(conn_cases[i].fixed);
		if (conn_cases[i].req == KDBUS_CMD_FREE)
			cmd[3] = c->pool_size;
		if (conn_cases[i].req == KDBUS_CMD_CONN_INFO)
			cmd[3] = c->id;
		if (conn_cases[i].type == KDBUS_ITEM_NAME ||
		    conn_cases[i].type == KDBUS_ITEM_MAKE_NAME)
			cmd_add_str(cmd, conn_cases[i].type, "0-org.example.x");
		else if (conn_cases[i].type == KDBUS_ITEM_CREDS)
			cmd_add_item(cmd, conn_cases[i].type, NULL, 64);
		else
			cmd_add_item(cmd, conn_cases[i].type, data, 8);
		r = kdbus_ioctl(c->fd, conn_cases[i].req, cmd);
		cmd_free(cmd);
		if (r != -EINVAL)
			FAIL("%s: expected EINVAL, got %s", conn_cases[i].what,
			     r ? kdbus_errname(-r) : "success");
	}
	/* BYEBYE with a foreign item did not disconnect */
	ASSERT_OK(kdbus_conn_info(c, c->id, NULL, 0, NULL, NULL));
	kdbus_conn_free(c);
	return TEST_OK;
}

/* kdbus.item(7) rule 5: the container size may end anywhere between the
 * unpadded end of the last item and its 8-aligned end */
CONFORM_TEST(size_between_pad, 0)
{
	struct kdbus_cmd_info *cmd = cmd_new(sizeof(*cmd));
	struct kdbus_conn *c;
	uint64_t end, s;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	cmd_add_str(cmd, KDBUS_ITEM_NAME, "org.example.abcd");
	end = cmd->size;
	ASSERT(end % 8 == 1);
	for (s = end; s <= KDBUS_ALIGN8(end); s++) {
		cmd->size = s;
		ASSERT_ERR(kdbus_ioctl(c->fd, KDBUS_CMD_CONN_INFO, cmd), ESRCH);
	}
	cmd->size = KDBUS_ALIGN8(end) + 1;
	ASSERT_ERR(kdbus_ioctl(c->fd, KDBUS_CMD_CONN_INFO, cmd), EINVAL);
	cmd_free(cmd);
	kdbus_conn_free(c);
	return TEST_OK;
}

/* kdbus(7): return_flags reset and written back on success and error */
CONFORM_TEST(return_flags_written, 0)
{
	struct kdbus_bloom_parameter bp = { 8, 1 };
	struct kdbus_cmd_info *ci;
	struct kdbus_cmd *cmd;
	struct kdbus_conn *c;
	int fd;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &c));
	/* UPDATE: success, EINVAL (bad mask), EOPNOTSUPP (policy) */
	cmd = cmd_new(sizeof(*cmd));
	cmd->return_flags = ~0ULL;
	ASSERT_OK(kdbus_ioctl(c->fd, KDBUS_CMD_UPDATE, cmd));
	ASSERT_EQ(cmd->return_flags, 0);
	cmd_add_u64(cmd, KDBUS_ITEM_ATTACH_FLAGS_RECV, 1ULL << 40);
	cmd->return_flags = ~0ULL;
	ASSERT_ERR(kdbus_ioctl(c->fd, KDBUS_CMD_UPDATE, cmd), EINVAL);
	ASSERT_EQ(cmd->return_flags, 0);
	cmd_free(cmd);
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_str(cmd, KDBUS_ITEM_NAME, "org.example.p");
	cmd->return_flags = 5;
	ASSERT_ERR(kdbus_ioctl(c->fd, KDBUS_CMD_UPDATE, cmd), EOPNOTSUPP);
	ASSERT_EQ(cmd->return_flags, 0);
	cmd_free(cmd);
	/* CONN_INFO: ENXIO and EINVAL (no id, no name) */
	ci = cmd_new(sizeof(*ci));
	ci->id = c->id + 999;
	ci->return_flags = 3;
	ASSERT_ERR(kdbus_ioctl(c->fd, KDBUS_CMD_CONN_INFO, ci), ENXIO);
	ASSERT_EQ(ci->return_flags, 0);
	ci->id = 0;
	ci->return_flags = 3;
	ASSERT_ERR(kdbus_ioctl(c->fd, KDBUS_CMD_CONN_INFO, ci), EINVAL);
	ASSERT_EQ(ci->return_flags, 0);
	/* BUS_CREATOR_INFO: success, bad attach mask */
	ci->return_flags = 3;
	ASSERT_OK(kdbus_ioctl(c->fd, KDBUS_CMD_BUS_CREATOR_INFO, ci));
	ASSERT_EQ(ci->return_flags, 0);
	ASSERT_OK(kdbus_free(c, ci->offset));
	ci->attach_flags = 1ULL << 50;
	ci->return_flags = 3;
	ASSERT_ERR(kdbus_ioctl(c->fd, KDBUS_CMD_BUS_CREATOR_INFO, ci), EINVAL);
	ASSERT_EQ(ci->return_flags, 0);
	cmd_free(ci);
	/* BYEBYE: success */
	cmd = cmd_new(sizeof(*cmd));
	cmd->return_flags = 9;
	ASSERT_OK(kdbus_ioctl(c->fd, KDBUS_CMD_BYEBYE, cmd));
	ASSERT_EQ(cmd->return_flags, 0);
	cmd_free(cmd);
	kdbus_conn_free(c);

	/* BUS_MAKE: EEXIST, EINVAL (bad bloom) and success */
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_str(cmd, KDBUS_ITEM_MAKE_NAME, env->bus_name);
	cmd_add_item(cmd, KDBUS_ITEM_BLOOM_PARAMETER, &bp, sizeof(bp));
	fd = kdbus_open_control();
	ASSERT(fd >= 0);
	cmd->return_flags = 7;
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_BUS_MAKE, cmd), EEXIST);
	ASSERT_EQ(cmd->return_flags, 0);
	close(env->bus_owner_fd);
	env->bus_owner_fd = -1;
	cmd->return_flags = 7;
	ASSERT_OK(kdbus_ioctl(fd, KDBUS_CMD_BUS_MAKE, cmd));
	ASSERT_EQ(cmd->return_flags, 0);
	close(fd);
	cmd_free(cmd);
	return TEST_OK;
}

/* kdbus.bus(7): on success BUS_MAKE writes back nothing but return_flags */
CONFORM_TEST(bus_make_writes_nothing_else, KDBUS_TEST_NO_BUS)
{
	struct kdbus_bloom_parameter bp = { 64, 3 };
	struct kdbus_cmd *cmd = cmd_new(sizeof(*cmd));
	uint8_t *copy;
	char name[64];
	int fd;

	kdbus_unique_name(name, sizeof(name), "wb");
	cmd->flags = KDBUS_MAKE_ACCESS_GROUP;
	cmd_add_str(cmd, KDBUS_ITEM_MAKE_NAME, name);
	cmd_add_item(cmd, KDBUS_ITEM_BLOOM_PARAMETER, &bp, sizeof(bp));
	cmd_add_u64(cmd, KDBUS_ITEM_ATTACH_FLAGS_SEND, _KDBUS_ATTACH_ANY);
	cmd->return_flags = 0x55;
	copy = malloc(cmd->size);
	ASSERT(copy);
	memcpy(copy, cmd, cmd->size);
	((struct kdbus_cmd *)copy)->return_flags = 0;
	fd = kdbus_open_control();
	ASSERT(fd >= 0);
	ASSERT_OK(kdbus_ioctl(fd, KDBUS_CMD_BUS_MAKE, cmd));
	ASSERT(!memcmp(copy, cmd, cmd->size));
	close(fd);
	free(copy);
	cmd_free(cmd);
	return TEST_OK;
}

/* a page holding a copy of cmd at its start, then made read-only */
static void *ro_copy(const void *cmd, size_t size)
{
	void *p = mmap(NULL, KDBUS_PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memcpy(p, cmd, size);
	if (mprotect(p, KDBUS_PAGE, PROT_READ) < 0) {
		munmap(p, KDBUS_PAGE);
		return NULL;
	}
	return p;
}

/*
 * kdbus(7): failure to write return_flags back turns the result into EFAULT;
 * kdbus(7): a slice published before the copy-out fault is released.
 */
CONFORM_TEST(return_flags_efault, 0)
{
	struct kdbus_cmd_free f = { .size = sizeof(f) };
	struct kdbus_cmd_info ci = { .size = sizeof(ci) };
	struct kdbus_conn *c;
	void *ro;
	uint64_t off;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	/* FREE of the "no slice" offset succeeds, but cannot be written */
	f.offset = c->pool_size;
	ro = ro_copy(&f, sizeof(f));
	ASSERT(ro);
	ASSERT_ERR(kdbus_ioctl(c->fd, KDBUS_CMD_FREE, ro), EFAULT);
	munmap(ro, KDBUS_PAGE);
	/* CONN_INFO: the result cannot be written back */
	ci.id = c->id;
	ro = ro_copy(&ci, sizeof(ci));
	ASSERT(ro);
	ASSERT_ERR(kdbus_ioctl(c->fd, KDBUS_CMD_CONN_INFO, ro), EFAULT);
	ASSERT_ERR(kdbus_ioctl(c->fd, KDBUS_CMD_BUS_CREATOR_INFO, ro), EFAULT);
	munmap(ro, KDBUS_PAGE);
	/* no slice leaked: the pool is empty, the next result is at 0 */
	ASSERT_OK(kdbus_conn_info(c, c->id, NULL, 0, NULL, &off));
	ASSERT_EQ(off, 0);
	ASSERT_OK(kdbus_free(c, off));
	ASSERT_ERR(kdbus_free(c, 24), ENXIO);
	kdbus_conn_free(c);
	return TEST_OK;
}

/* kdbus(7) step 3: the size field changing between the first read and the
 * copy is EINVAL. Racy by nature: a flipping thread; any errno other than
 * EINVAL is a failure; never hitting the window is a skip. */
static _Atomic int race_stop;

static void *size_flipper(void *arg)
{
	volatile uint64_t *size = arg;

	while (!atomic_load_explicit(&race_stop, memory_order_relaxed)) {
		*size = sizeof(struct kdbus_cmd_free);
		*size = sizeof(struct kdbus_cmd_free) + 24;
	}
	return NULL;
}

CONFORM_TEST(size_changed_during_copy, 0)
{
	struct kdbus_cmd_free *f = cmd_new(sizeof(*f));
	struct kdbus_conn *c;
	pthread_t th;
	uint64_t start;
	long hits = 0, ok = 0, other = 0, last = 0, n = 0;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	f->offset = c->pool_size;
	cmd_add_u64(f, KDBUS_ITEM_NEGOTIATE, 0);
	ASSERT_OK(kdbus_ioctl(c->fd, KDBUS_CMD_FREE, f));
	ASSERT(pthread_create(&th, NULL, size_flipper, &f->size) == 0);
	start = kdbus_now_ns();
	while (kdbus_now_ns() - start < 3000000000ULL && hits < 3) {
		long r = kdbus_ioctl(c->fd, KDBUS_CMD_FREE, f);

		n++;
		if (r == 0)
			ok++;
		else if (r == -EINVAL)
			hits++;
		else {
			other++;
			last = r;
		}
	}
	atomic_store(&race_stop, 1);
	pthread_join(th, NULL);
	DIAG("%ld calls: %ld ok, %ld EINVAL, %ld other", n, ok, hits, other);
	if (other)
		FAIL("unexpected %s", kdbus_errname(-last));
	cmd_free(f);
	kdbus_conn_free(c);
	if (!hits)
		SKIP("the race window was never hit");
	return TEST_OK;
}

/* kdbus(7): setup ioctls on one handle are serialised: of two concurrent
 * HELLOs exactly one wins, the other sees EBADFD */
struct setup_race {
	pthread_barrier_t *bar;
	int fd;
	long r;
};

static void *hello_thread(void *arg)
{
	struct setup_race *s = arg;
	struct kdbus_cmd_hello h = { .size = sizeof(h),
				     .pool_size = KDBUS_PAGE };

	pthread_barrier_wait(s->bar);
	s->r = kdbus_ioctl(s->fd, KDBUS_CMD_HELLO, &h);
	return NULL;
}

CONFORM_TEST(setup_serialised, 0)
{
	pthread_barrier_t bar;
	int i;

	ASSERT(pthread_barrier_init(&bar, NULL, 2) == 0);
	for (i = 0; i < 40; i++) {
		struct setup_race s[2];
		pthread_t th[2];
		int fd = open(env->bus_path, O_RDWR), k;

		ASSERT(fd >= 0);
		for (k = 0; k < 2; k++) {
			s[k].bar = &bar;
			s[k].fd = fd;
			ASSERT(pthread_create(&th[k], NULL, hello_thread,
					      &s[k]) == 0);
		}
		for (k = 0; k < 2; k++)
			pthread_join(th[k], NULL);
		if (!((s[0].r == 0 && s[1].r == -EBADFD) ||
		      (s[1].r == 0 && s[0].r == -EBADFD)))
			FAIL("round %d: concurrent HELLOs returned %s and %s", i,
			     s[0].r ? kdbus_errname(-s[0].r) : "success",
			     s[1].r ? kdbus_errname(-s[1].r) : "success");
		close(fd);
	}
	pthread_barrier_destroy(&bar);
	return TEST_OK;
}

/* kdbus(7): allowed flags next to NEGOTIATE are fine; the answer is the full
 * set and the handle stays NONE */
CONFORM_TEST(negotiate_with_allowed_flags, KDBUS_TEST_NO_BUS)
{
	struct kdbus_cmd *cmd = cmd_new(sizeof(*cmd));
	char name[64];
	int fd = kdbus_open_control();

	ASSERT(fd >= 0);
	cmd->flags = KDBUS_FLAG_NEGOTIATE | KDBUS_MAKE_ACCESS_GROUP;
	ASSERT_OK(kdbus_ioctl(fd, KDBUS_CMD_BUS_MAKE, cmd));
	ASSERT_EQ(cmd->flags, 3);
	kdbus_unique_name(name, sizeof(name), "na");
	ASSERT_OK(kdbus_bus_make(fd, 0, name, 8, 1, NULL));
	close(fd);
	cmd_free(cmd);
	return TEST_OK;
}
