// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The command protocol common to all ioctls (kdbus(7)):
 * argument pointer rules, bad sizes, misaligned/overlong/trailing items,
 * unknown and duplicate items, unknown flags with and without
 * KDBUS_FLAG_NEGOTIATE, the NEGOTIATE item, return_flags, unknown request
 * codes, wrong handle states, garbage and closed fds.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

/* connection commands, their fixed size and allowed flags */
static const struct {
	const char *name;
	unsigned long req;
	size_t fixed;
	uint64_t allowed;
} conn_cmds[] = {
	{ "UPDATE", KDBUS_CMD_UPDATE, sizeof(struct kdbus_cmd), 0 },
	{ "FREE", KDBUS_CMD_FREE, sizeof(struct kdbus_cmd_free), 0 },
	{ "CONN_INFO", KDBUS_CMD_CONN_INFO, sizeof(struct kdbus_cmd_info), 0 },
	{ "BUS_CREATOR_INFO", KDBUS_CMD_BUS_CREATOR_INFO,
	  sizeof(struct kdbus_cmd_info), 0 },
	{ "RECV", KDBUS_CMD_RECV, sizeof(struct kdbus_cmd_recv), 0x7 },
	{ "SEND", KDBUS_CMD_SEND, sizeof(struct kdbus_cmd_send), 0x1 },
	{ "BYEBYE", KDBUS_CMD_BYEBYE, sizeof(struct kdbus_cmd), 0 },
};
#define N_CONN_CMDS (sizeof(conn_cmds) / sizeof(conn_cmds[0]))

static long ioc(int fd, unsigned long req, void *arg)
{
	return kdbus_ioctl(fd, req, arg);
}

/*
 * Loops over all commands go on past a command the module does not
 * implement (ENOTTY) and report SKIP at the end if nothing failed.
 */
static char notty[256];

static void note_notty(const char *name)
{
	if (strstr(notty, name))
		return;
	strncat(notty, " ", sizeof(notty) - strlen(notty) - 1);
	strncat(notty, name, sizeof(notty) - strlen(notty) - 1);
}

#define END_LOOP_TEST() do {						\
		if (notty[0])						\
			SKIP("ENOTTY (not implemented):%s", notty);	\
		return TEST_OK;						\
	} while (0)

KDBUS_TEST(protocol, bad_argument_pointer, 0)
{
	struct kdbus_conn *c;
	uint64_t *buf;
	size_t i;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	buf = cmd_new(64);
	for (i = 0; i < N_CONN_CMDS; i++) {
		long r;

		/* unaligned */
		buf[1] = conn_cmds[i].fixed;
		r = ioc(c->fd, conn_cmds[i].req, (uint8_t *)buf + 4);
		if (r == -ENOTTY) {
			note_notty(conn_cmds[i].name);
			continue;
		}
		if (r != -EFAULT)
			FAIL("%s unaligned: expected EFAULT, got %s",
			     conn_cmds[i].name, r ? kdbus_errname(-r) : "success");
		/* unmapped */
		r = ioc(c->fd, conn_cmds[i].req, (void *)8);
		if (r != -EFAULT)
			FAIL("%s at 0x8: expected EFAULT, got %s",
			     conn_cmds[i].name, r ? kdbus_errname(-r) : "success");
		r = ioc(c->fd, conn_cmds[i].req, NULL);
		if (r != -EFAULT)
			FAIL("%s NULL: expected EFAULT, got %s",
			     conn_cmds[i].name, r ? kdbus_errname(-r) : "success");
	}
	/* size field readable, rest beyond a mapping: EFAULT */
	{
		uint8_t *page = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uint64_t *arg;

		ASSERT(page != MAP_FAILED);
		ASSERT(munmap(page + 4096, 4096) == 0);
		arg = (uint64_t *)(page + 4096 - 16);
		arg[0] = sizeof(struct kdbus_cmd_info);
		ASSERT_ERR(ioc(c->fd, KDBUS_CMD_CONN_INFO, arg), EFAULT);
		munmap(page, 4096);
	}
	/* the connection survived all that */
	ASSERT_OK(kdbus_conn_info(c, c->id, NULL, 0, NULL, NULL));
	cmd_free(buf);
	kdbus_conn_free(c);
	END_LOOP_TEST();
}

KDBUS_TEST(protocol, bad_sizes, 0)
{
	struct kdbus_conn *c;
	uint64_t *buf;
	size_t i;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	buf = cmd_new(64);
	for (i = 0; i < N_CONN_CMDS; i++) {
		static const uint64_t small[] = { 0, 8, 16 };
		size_t k;
		long r;

		for (k = 0; k < 3; k++) {
			memset(buf, 0, 128);
			buf[0] = small[k];
			r = ioc(c->fd, conn_cmds[i].req, buf);
			if (r == -ENOTTY) {
				note_notty(conn_cmds[i].name);
				break;
			}
			if (r != -EINVAL)
				FAIL("%s size %llu: expected EINVAL, got %s",
				     conn_cmds[i].name,
				     (unsigned long long)small[k],
				     r ? kdbus_errname(-r) : "success");
		}
		memset(buf, 0, 128);
		buf[0] = conn_cmds[i].fixed - 1;
		r = ioc(c->fd, conn_cmds[i].req, buf);
		if (r != -EINVAL && r != -ENOTTY)
			FAIL("%s size fixed-1: expected EINVAL, got %s",
			     conn_cmds[i].name, r ? kdbus_errname(-r) : "success");
		buf[0] = KDBUS_CMD_MAX_SIZE + 1;
		r = ioc(c->fd, conn_cmds[i].req, buf);
		if (r != -EMSGSIZE && r != -ENOTTY)
			FAIL("%s size 32769: expected EMSGSIZE, got %s",
			     conn_cmds[i].name, r ? kdbus_errname(-r) : "success");
		buf[0] = ~0ULL;
		r = ioc(c->fd, conn_cmds[i].req, buf);
		if (r != -EMSGSIZE && r != -ENOTTY)
			FAIL("%s size ~0: expected EMSGSIZE, got %s",
			     conn_cmds[i].name, r ? kdbus_errname(-r) : "success");
	}
	cmd_free(buf);
	kdbus_conn_free(c);
	END_LOOP_TEST();
}

/* item chain rules (kdbus.item(7)), checked on CONN_INFO */
KDBUS_TEST(protocol, item_chain, 0)
{
	struct kdbus_cmd_info *cmd;
	struct kdbus_item *it;
	struct kdbus_conn *c;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &c));

	/* item size below the header */
	cmd = cmd_new(sizeof(*cmd));
	cmd->id = c->id;
	it = cmd_add_str(cmd, KDBUS_ITEM_NAME, "org.example.x");
	it->size = 15;
	ASSERT_ERR(ioc(c->fd, KDBUS_CMD_CONN_INFO, cmd), EINVAL);
	it->size = 0;
	ASSERT_ERR(ioc(c->fd, KDBUS_CMD_CONN_INFO, cmd), EINVAL);
	/* item extends beyond the command */
	it->size = 16 + 14 + 8;
	ASSERT_ERR(ioc(c->fd, KDBUS_CMD_CONN_INFO, cmd), EINVAL);
	/* huge item size (wrap-around) */
	it->size = ~0ULL - 7;
	ASSERT_ERR(ioc(c->fd, KDBUS_CMD_CONN_INFO, cmd), EINVAL);
	cmd_free(cmd);

	/* trailing garbage after the last item */
	cmd = cmd_new(sizeof(*cmd));
	cmd->id = c->id;
	cmd_add_u64(cmd, KDBUS_ITEM_NEGOTIATE, 0);
	cmd->size += 8;
	ASSERT_ERR(ioc(c->fd, KDBUS_CMD_CONN_INFO, cmd), EINVAL);
	/* a short tail that cannot hold an item header */
	cmd->size -= 4;
	ASSERT_ERR(ioc(c->fd, KDBUS_CMD_CONN_INFO, cmd), EINVAL);
	/* exact and padded ends are both fine */
	cmd->size -= 4;
	ASSERT_OK(ioc(c->fd, KDBUS_CMD_CONN_INFO, cmd));
	ASSERT_OK(kdbus_free(c, cmd->offset));
	cmd_free(cmd);

	/* unpadded end of a last string item */
	cmd = cmd_new(sizeof(*cmd));
	cmd->id = 0;
	cmd_add_str(cmd, KDBUS_ITEM_NAME, "org.example.abcd");
	ASSERT(cmd->size % 8 != 0);
	ASSERT_ERR(ioc(c->fd, KDBUS_CMD_CONN_INFO, cmd), ESRCH);
	cmd->size = KDBUS_ALIGN8(cmd->size);
	ASSERT_ERR(ioc(c->fd, KDBUS_CMD_CONN_INFO, cmd), ESRCH);
	cmd_free(cmd);

	/* empty chain on a size that is not 8-aligned: tail too short */
	cmd = cmd_new(sizeof(*cmd));
	cmd->id = c->id;
	cmd->size = sizeof(*cmd) + 4;
	ASSERT_ERR(ioc(c->fd, KDBUS_CMD_CONN_INFO, cmd), EINVAL);
	cmd_free(cmd);
	kdbus_conn_free(c);
	return TEST_OK;
}

KDBUS_TEST(protocol, unknown_and_duplicate_items, 0)
{
	struct kdbus_cmd_info *cmd;
	struct kdbus_conn *c;
	static const uint64_t bad_types[] = {
		0, 0x11, 0x999, 0x100e, 0x2001, 0x8007, 0xffff, ~0ULL,
		KDBUS_ITEM_PAYLOAD_VEC, KDBUS_ITEM_MAKE_NAME,
	};
	size_t i;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &c));
	for (i = 0; i < sizeof(bad_types) / sizeof(bad_types[0]); i++) {
		uint64_t data[2] = { 0, 0 };
		long r;

		cmd = cmd_new(sizeof(*cmd));
		cmd->id = c->id;
		cmd_add_item(cmd, bad_types[i], data, sizeof(data));
		r = ioc(c->fd, KDBUS_CMD_CONN_INFO, cmd);
		if (r != -EINVAL)
			FAIL("item type 0x%llx: expected EINVAL, got %s",
			     (unsigned long long)bad_types[i],
			     r ? kdbus_errname(-r) : "success");
		/* also when negotiating */
		cmd->flags = KDBUS_FLAG_NEGOTIATE;
		r = ioc(c->fd, KDBUS_CMD_CONN_INFO, cmd);
		if (r != -EINVAL)
			FAIL("item type 0x%llx negotiating: expected EINVAL, got %s",
			     (unsigned long long)bad_types[i],
			     r ? kdbus_errname(-r) : "success");
		cmd_free(cmd);
	}
	/* two NEGOTIATE items */
	cmd = cmd_new(sizeof(*cmd));
	cmd->id = c->id;
	cmd_add_u64(cmd, KDBUS_ITEM_NEGOTIATE, KDBUS_ITEM_NAME);
	cmd_add_u64(cmd, KDBUS_ITEM_NEGOTIATE, KDBUS_ITEM_NAME);
	ASSERT_ERR(ioc(c->fd, KDBUS_CMD_CONN_INFO, cmd), EINVAL);
	cmd_free(cmd);
	/* NEGOTIATE payload not a multiple of 8 */
	cmd = cmd_new(sizeof(*cmd));
	cmd->id = c->id;
	{
		uint64_t v[2] = { KDBUS_ITEM_NAME, 0 };

		cmd_add_item(cmd, KDBUS_ITEM_NEGOTIATE, v, 12);
	}
	ASSERT_ERR(ioc(c->fd, KDBUS_CMD_CONN_INFO, cmd), EINVAL);
	cmd_free(cmd);
	/* invalid name string in NAME: embedded NUL */
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_item(cmd, KDBUS_ITEM_NAME, "org.ex\0ample.x", 15);
	ASSERT_ERR(ioc(c->fd, KDBUS_CMD_CONN_INFO, cmd), EINVAL);
	cmd_free(cmd);
	kdbus_conn_free(c);
	return TEST_OK;
}

KDBUS_TEST(protocol, flags_negotiation, 0)
{
	struct kdbus_conn *c;
	uint64_t *buf = cmd_new(64);
	size_t i;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	for (i = 0; i < N_CONN_CMDS; i++) {
		uint64_t bad = conn_cmds[i].allowed + 1;
		long r;

		/* lowest bit outside the allowed set */
		while (bad & conn_cmds[i].allowed)
			bad <<= 1;
		memset(buf, 0, 256);
		buf[0] = conn_cmds[i].fixed;
		buf[1] = bad;
		r = ioc(c->fd, conn_cmds[i].req, buf);
		if (r == -ENOTTY) {
			note_notty(conn_cmds[i].name);
			continue;
		}
		if (r != -EINVAL)
			FAIL("%s flags 0x%llx: expected EINVAL, got %s",
			     conn_cmds[i].name, (unsigned long long)bad,
			     r ? kdbus_errname(-r) : "success");
		buf[1] = bad | KDBUS_FLAG_NEGOTIATE;
		r = ioc(c->fd, conn_cmds[i].req, buf);
		if (r != -EINVAL)
			FAIL("%s flags 0x%llx|NEGOTIATE: expected EINVAL, got %s",
			     conn_cmds[i].name, (unsigned long long)bad,
			     r ? kdbus_errname(-r) : "success");
		/* pure negotiation: allowed set without bit 63, return_flags
		 * untouched, nothing executed (BYEBYE, FREE) */
		memset(buf, 0, 256);
		buf[0] = conn_cmds[i].fixed;
		buf[1] = KDBUS_FLAG_NEGOTIATE;
		buf[2] = 0xabcd;
		r = ioc(c->fd, conn_cmds[i].req, buf);
		if (r != 0)
			FAIL("%s NEGOTIATE: expected success, got %s",
			     conn_cmds[i].name, kdbus_errname(-r));
		if (buf[1] != conn_cmds[i].allowed)
			FAIL("%s NEGOTIATE: flags 0x%llx, expected 0x%llx",
			     conn_cmds[i].name, (unsigned long long)buf[1],
			     (unsigned long long)conn_cmds[i].allowed);
		if (buf[2] != 0xabcd)
			FAIL("%s NEGOTIATE: return_flags written (0x%llx)",
			     conn_cmds[i].name, (unsigned long long)buf[2]);
	}
	/* still connected after a negotiated BYEBYE */
	ASSERT_OK(kdbus_conn_info(c, c->id, NULL, 0, NULL, NULL));
	cmd_free(buf);
	kdbus_conn_free(c);
	END_LOOP_TEST();
}

/* the NEGOTIATE item: unknown entries zeroed, known kept, with and
 * without the flag; without the flag the command runs */
KDBUS_TEST(protocol, negotiate_item, 0)
{
	struct kdbus_cmd_info *cmd = cmd_new(sizeof(*cmd));
	uint64_t v[] = { KDBUS_ITEM_NAME, KDBUS_ITEM_MAKE_NAME,
			 KDBUS_ITEM_NEGOTIATE, 0x4242, KDBUS_ITEM_CREDS };
	struct kdbus_item *it;
	struct kdbus_conn *c;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	cmd->id = c->id;
	cmd->flags = KDBUS_FLAG_NEGOTIATE;
	it = cmd_add_item(cmd, KDBUS_ITEM_NEGOTIATE, v, sizeof(v));
	ASSERT_OK(ioc(c->fd, KDBUS_CMD_CONN_INFO, cmd));
	ASSERT_EQ(it->data64[0], KDBUS_ITEM_NAME);
	ASSERT_EQ(it->data64[1], 0);
	ASSERT_EQ(it->data64[2], KDBUS_ITEM_NEGOTIATE);
	ASSERT_EQ(it->data64[3], 0);
	ASSERT_EQ(it->data64[4], 0);
	ASSERT_EQ(cmd->offset, 0);	/* not executed */
	memcpy(it->data64, v, sizeof(v));
	cmd->flags = 0;
	cmd->offset = 0x777;
	ASSERT_OK(ioc(c->fd, KDBUS_CMD_CONN_INFO, cmd));
	ASSERT_EQ(it->data64[1], 0);
	ASSERT_EQ(it->data64[3], 0);
	ASSERT_EQ(it->data64[0], KDBUS_ITEM_NAME);
	ASSERT(cmd->offset != 0x777);
	ASSERT_OK(kdbus_free(c, cmd->offset));
	cmd_free(cmd);
	kdbus_conn_free(c);
	return TEST_OK;
}

/* return_flags: input ignored, always written back except on negotiation */
KDBUS_TEST(protocol, return_flags, 0)
{
	struct kdbus_cmd_free f = { .size = sizeof(f) };
	struct kdbus_conn *c;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	f.offset = c->pool_size;
	f.return_flags = ~0ULL;
	ASSERT_OK(ioc(c->fd, KDBUS_CMD_FREE, &f));
	ASSERT_EQ(f.return_flags, 0);
	f.offset = 8;
	f.return_flags = ~0ULL;
	ASSERT_ERR(ioc(c->fd, KDBUS_CMD_FREE, &f), ENXIO);
	ASSERT_EQ(f.return_flags, 0);
	kdbus_conn_free(c);
	return TEST_OK;
}

KDBUS_TEST(protocol, unknown_request, 0)
{
	struct kdbus_conn *c;
	uint64_t *buf = cmd_new(64);
	static const unsigned long bad[] = {
		_IOW(KDBUS_IOCTL_MAGIC, 0x01, struct kdbus_cmd),
		_IOW(KDBUS_IOCTL_MAGIC, 0x92, struct kdbus_cmd_send),
		_IOWR(KDBUS_IOCTL_MAGIC, 0x80, struct kdbus_cmd),   /* HELLO nr, wrong size */
		_IOR(KDBUS_IOCTL_MAGIC, 0x84, struct kdbus_cmd),    /* CONN_INFO nr, wrong size */
		_IOW(KDBUS_IOCTL_MAGIC, 0x84, struct kdbus_cmd_info), /* wrong dir */
		0x80309584,	/* stale published number of CONN_INFO */
		0x40209551,	/* stale published number of UPDATE */
		_IOW(0x96, 0x80, struct kdbus_cmd_hello),
		0x5401,		/* TCGETS */
	};
	size_t i;
	int fresh;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	fresh = open(env->bus_path, O_RDWR);
	ASSERT(fresh >= 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int fds[4] = { c->fd, fresh, env->control_fd,
			       env->bus_owner_fd };
		int k;

		for (k = 0; k < 4; k++) {
			long r;

			buf[0] = 24;
			r = ioc(fds[k], bad[i], buf);
			if (r != -ENOTTY)
				FAIL("request 0x%lx on handle %d: expected ENOTTY, got %s",
				     bad[i], k, r ? kdbus_errname(-r) : "success");
		}
	}
	close(fresh);
	cmd_free(buf);
	kdbus_conn_free(c);
	return TEST_OK;
}

/* known requests on a handle in the wrong state (kdbus(7)) */
KDBUS_TEST(protocol, wrong_handle_state, 0)
{
	uint64_t *buf = cmd_new(64);
	size_t i;
	int fresh = open(env->bus_path, O_RDWR);

	ASSERT(fresh >= 0);
	for (i = 0; i < N_CONN_CMDS; i++) {
		int fds[3] = { fresh, env->control_fd, env->bus_owner_fd };
		int k;

		for (k = 0; k < 3; k++) {
			long r;

			memset(buf, 0, 256);
			buf[0] = conn_cmds[i].fixed;
			r = ioc(fds[k], conn_cmds[i].req, buf);
			if (r == -ENOTTY) {
				note_notty(conn_cmds[i].name);
				continue;
			}
			if (r != -EBADFD)
				FAIL("%s on handle %d: expected EBADFD, got %s",
				     conn_cmds[i].name, k,
				     r ? kdbus_errname(-r) : "success");
		}
	}
	/* the fresh handle is still usable for HELLO */
	{
		struct kdbus_cmd_hello h = { .size = sizeof(h),
					     .pool_size = KDBUS_PAGE };

		ASSERT_OK(ioc(fresh, KDBUS_CMD_HELLO, &h));
	}
	close(fresh);
	/* ENDPOINT_UPDATE on a fresh endpoint handle */
	fresh = open(env->bus_path, O_RDWR);
	ASSERT(fresh >= 0);
	buf[0] = sizeof(struct kdbus_cmd);
	ASSERT_ERR(ioc(fresh, KDBUS_CMD_ENDPOINT_UPDATE, buf), EBADFD);
	close(fresh);
	cmd_free(buf);
	END_LOOP_TEST();
}

/* fds that are not kdbus handles, or closed */
KDBUS_TEST(protocol, garbage_fds, 0)
{
	struct kdbus_cmd_info info = { .size = sizeof(info) };
	struct pollfd p = { .events = POLLIN };
	int fd = open("/dev/null", O_RDWR), closed_fd;

	ASSERT(fd >= 0);
	ASSERT_ERR(ioc(fd, KDBUS_CMD_CONN_INFO, &info), ENOTTY);
	closed_fd = dup(fd);
	close(closed_fd);
	ASSERT_ERR(ioc(closed_fd, KDBUS_CMD_CONN_INFO, &info), EBADF);
	close(fd);
	/* llseek is a no-op */
	fd = open(env->bus_path, O_RDWR);
	ASSERT(fd >= 0);
	ASSERT(lseek(fd, 100, SEEK_SET) >= 0 || errno == ESPIPE);
	p.fd = fd;
	ASSERT_EQ(poll(&p, 1, 0), 1);
	close(fd);
	return TEST_OK;
}

/* RECV on an empty queue: EAGAIN with its outputs written (kdbus.message(7)) */
KDBUS_TEST(protocol, recv_empty_outputs, 0)
{
	struct kdbus_cmd_recv r = { .size = sizeof(r) };
	struct kdbus_conn *c;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	/* RECV on an empty queue: EAGAIN with outputs written */
	r.return_flags = ~0ULL;
	r.dropped_msgs = 99;
	r.msg.offset = 5;
	r.msg.msg_size = 5;
	r.msg.return_flags = 5;
	ASSERT_ERR(ioc(c->fd, KDBUS_CMD_RECV, &r), EAGAIN);
	ASSERT_EQ(r.return_flags, 0);
	ASSERT_EQ(r.dropped_msgs, 0);
	ASSERT_EQ(r.msg.offset, c->pool_size);
	ASSERT_EQ(r.msg.msg_size, 0);
	ASSERT_EQ(r.msg.return_flags, 0);
	kdbus_conn_free(c);
	return TEST_OK;
}
