// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KDBUS_CMD_HELLO: every check of kdbus.connection(7) in order, flags, attach
 * negotiation, pool size rules, outputs (kdbus.connection(7)), the read-only
 * mmap of the pool (kdbus.pool(7)), poll (kdbus(7)), handle state errors.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

/* HELLO on a fresh fd of path; the fd is closed unless kept */
static long hello_raw(const char *path, struct kdbus_cmd_hello *h, int *keep)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	long r;

	if (fd < 0)
		return -errno;
	r = kdbus_ioctl(fd, KDBUS_CMD_HELLO, h);
	if (r == 0 && keep)
		*keep = fd;
	else
		close(fd);
	return r;
}

static struct kdbus_cmd_hello *hello_new(uint64_t flags, uint64_t pool)
{
	struct kdbus_cmd_hello *h = cmd_new(sizeof(*h));

	h->flags = flags;
	h->pool_size = pool;
	return h;
}

KDBUS_TEST(hello, basic, 0)
{
	struct kdbus_cmd_hello *h = hello_new(KDBUS_HELLO_ACCEPT_FD,
					      KDBUS_PAGE * 16);
	struct kdbus_item *it;
	uint8_t *pool;
	int fd = -1;

	h->return_flags = 0xdead;
	h->attach_flags_send = KDBUS_ATTACH_CREDS;
	h->attach_flags_recv = KDBUS_ATTACH_TIMESTAMP;
	ASSERT_OK(hello_raw(env->bus_path, h, &fd));
	ASSERT_EQ(h->return_flags, 0);
	ASSERT(h->id != 0 && h->id != ~0ULL);
	ASSERT_EQ(h->bus_flags, KDBUS_MAKE_ACCESS_WORLD);
	/* inputs echoed */
	ASSERT_EQ(h->flags, KDBUS_HELLO_ACCEPT_FD);
	ASSERT_EQ(h->attach_flags_send, KDBUS_ATTACH_CREDS);
	ASSERT_EQ(h->attach_flags_recv, KDBUS_ATTACH_TIMESTAMP);
	ASSERT_EQ(h->pool_size, KDBUS_PAGE * 16);
	/* the reply slice: at 0 in a fresh pool, one 32-byte bloom item */
	ASSERT_EQ(h->offset, 0);
	ASSERT_EQ(h->items_size, 32);
	/* id128: RFC 4122 version 4, DCE variant */
	ASSERT_EQ(h->id128[6] >> 4, 4);
	ASSERT_EQ(h->id128[8] >> 6, 2);

	pool = mmap(NULL, h->pool_size, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT(pool != MAP_FAILED);
	it = (struct kdbus_item *)(pool + h->offset);
	ASSERT_EQ(it->size, 32);
	ASSERT_EQ(it->type, KDBUS_ITEM_BLOOM_PARAMETER);
	ASSERT_EQ(it->bloom_parameter.size, KDBUS_DEFAULT_BLOOM);
	ASSERT_EQ(it->bloom_parameter.n_hash, 1);
	ASSERT_OK(kdbus_free_fd(fd, h->offset));
	/* freed once: a second FREE of the same offset fails */
	ASSERT_ERR(kdbus_free_fd(fd, h->offset), ENXIO);
	munmap(pool, h->pool_size);
	close(fd);
	cmd_free(h);
	return TEST_OK;
}

KDBUS_TEST(hello, ids_and_uuid, 0)
{
	struct kdbus_conn *a, *b;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &b));
	ASSERT(a->id != b->id);
	ASSERT(b->id > a->id);
	/* the bus UUID is the same for all connections of a bus */
	ASSERT(!memcmp(a->hello.id128, b->hello.id128, 16));
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

KDBUS_TEST(hello, negotiate, 0)
{
	struct kdbus_cmd_hello *h = hello_new(KDBUS_FLAG_NEGOTIATE, 0);
	uint64_t neg[] = { KDBUS_ITEM_NAME, KDBUS_ITEM_CREDS, KDBUS_ITEM_PIDS,
			   KDBUS_ITEM_SECLABEL, KDBUS_ITEM_CONN_DESCRIPTION,
			   KDBUS_ITEM_POLICY_ACCESS, KDBUS_ITEM_NEGOTIATE,
			   KDBUS_ITEM_MAKE_NAME, KDBUS_ITEM_PAYLOAD_VEC, 0x7777 };
	struct kdbus_item *it;
	int fd = open(env->bus_path, O_RDWR);

	ASSERT(fd >= 0);
	it = cmd_add_item(h, KDBUS_ITEM_NEGOTIATE, neg, sizeof(neg));
	/* pool_size 0 is not checked: negotiation stops before */
	ASSERT_OK(kdbus_ioctl(fd, KDBUS_CMD_HELLO, h));
	ASSERT_EQ(h->flags, 0xf);
	ASSERT_EQ(it->data64[0], KDBUS_ITEM_NAME);
	ASSERT_EQ(it->data64[1], KDBUS_ITEM_CREDS);
	ASSERT_EQ(it->data64[2], KDBUS_ITEM_PIDS);
	ASSERT_EQ(it->data64[3], KDBUS_ITEM_SECLABEL);
	ASSERT_EQ(it->data64[4], KDBUS_ITEM_CONN_DESCRIPTION);
	ASSERT_EQ(it->data64[5], KDBUS_ITEM_POLICY_ACCESS);
	ASSERT_EQ(it->data64[6], KDBUS_ITEM_NEGOTIATE);
	ASSERT_EQ(it->data64[7], 0);
	ASSERT_EQ(it->data64[8], 0);
	ASSERT_EQ(it->data64[9], 0);
	ASSERT_EQ(h->id, 0);
	cmd_free(h);
	/* the handle is still fresh: a real HELLO works */
	h = hello_new(0, KDBUS_PAGE);
	ASSERT_OK(kdbus_ioctl(fd, KDBUS_CMD_HELLO, h));
	ASSERT(h->id != 0);
	close(fd);
	cmd_free(h);
	return TEST_OK;
}

KDBUS_TEST(hello, unknown_flags, 0)
{
	struct kdbus_cmd_hello *h = hello_new(1ULL << 4, KDBUS_PAGE);

	ASSERT_ERR(hello_raw(env->bus_path, h, NULL), EINVAL);
	h->flags = 1ULL << 62;
	ASSERT_ERR(hello_raw(env->bus_path, h, NULL), EINVAL);
	h->flags = KDBUS_FLAG_NEGOTIATE | (1ULL << 4);
	ASSERT_ERR(hello_raw(env->bus_path, h, NULL), EINVAL);
	cmd_free(h);
	return TEST_OK;
}

/* kdbus.connection(7) */
KDBUS_TEST(hello, pool_size, 0)
{
	static const uint64_t bad[] = { 0, 1, 8, 4095, 4097, 4096 + 2048,
					(1ULL << 63) + 4096 };
	struct kdbus_cmd_hello *h = hello_new(0, 0);
	size_t i;
	int fd = -1;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		long r;

		h->pool_size = bad[i];
		r = hello_raw(env->bus_path, h, NULL);
		if (r == -ENOTTY)
			SKIP("HELLO: ENOTTY");
		if (bad[i] == ((1ULL << 63) + 4096)) {
			/* multiple of the page size: beyond what shmem
			 * accepts, any errno but no success */
			if (r == 0)
				FAIL("pool_size 2^63+4096 accepted");
			continue;
		}
		if (r != -EINVAL)
			FAIL("pool_size %llu: expected EINVAL, got %s",
			     (unsigned long long)bad[i],
			     r ? kdbus_errname(-r) : "success");
	}
	/* pool checks come before flag checks (step 2 before 3) */
	h->pool_size = 0;
	h->flags = KDBUS_HELLO_MONITOR | KDBUS_HELLO_ACTIVATOR;
	ASSERT_ERR(hello_raw(env->bus_path, h, NULL), EINVAL);
	h->flags = 0;
	h->pool_size = KDBUS_PAGE;
	ASSERT_OK(hello_raw(env->bus_path, h, &fd));
	close(fd);
	h->pool_size = 64ULL * 1024 * 1024;
	ASSERT_OK(hello_raw(env->bus_path, h, &fd));
	close(fd);
	cmd_free(h);
	return TEST_OK;
}

/* kdbus.connection(7) */
KDBUS_TEST(hello, role_flags_and_name, 0)
{
	struct kdbus_cmd_hello *h;
	static const uint64_t combos[] = {
		KDBUS_HELLO_MONITOR | KDBUS_HELLO_ACTIVATOR,
		KDBUS_HELLO_MONITOR | KDBUS_HELLO_POLICY_HOLDER,
		KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_POLICY_HOLDER,
		KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_POLICY_HOLDER |
			KDBUS_HELLO_MONITOR,
	};
	size_t i;

	/* step 3: more than one role, with a valid name */
	for (i = 0; i < sizeof(combos) / sizeof(combos[0]); i++) {
		h = hello_new(combos[i], KDBUS_PAGE);
		cmd_add_str(h, KDBUS_ITEM_NAME, "org.example.foo");
		ASSERT_ERR(hello_raw(env->bus_path, h, NULL), EINVAL);
		cmd_free(h);
	}
	/* step 4: NAME without a role */
	h = hello_new(0, KDBUS_PAGE);
	cmd_add_str(h, KDBUS_ITEM_NAME, "org.example.foo");
	ASSERT_ERR(hello_raw(env->bus_path, h, NULL), EINVAL);
	cmd_free(h);
	h = hello_new(KDBUS_HELLO_MONITOR, KDBUS_PAGE);
	cmd_add_str(h, KDBUS_ITEM_NAME, "org.example.foo");
	ASSERT_ERR(hello_raw(env->bus_path, h, NULL), EINVAL);
	cmd_free(h);
	/* step 5: role without NAME */
	h = hello_new(KDBUS_HELLO_ACTIVATOR, KDBUS_PAGE);
	ASSERT_ERR(hello_raw(env->bus_path, h, NULL), EINVAL);
	h->flags = KDBUS_HELLO_POLICY_HOLDER;
	ASSERT_ERR(hello_raw(env->bus_path, h, NULL), EINVAL);
	cmd_free(h);
	/* step 6: invalid well-known names */
	{
		const char *bad[] = { "foo", ".foo.bar", "foo.bar.", "foo..bar",
				      "foo.1bar", "foo.b ar", "", "foo.*.bar" };

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			long r;

			h = hello_new(KDBUS_HELLO_ACTIVATOR, KDBUS_PAGE);
			cmd_add_str(h, KDBUS_ITEM_NAME, bad[i]);
			r = hello_raw(env->bus_path, h, NULL);
			cmd_free(h);
			if (r == -ENOTTY)
				SKIP("HELLO: ENOTTY");
			if (r != -EINVAL)
				FAIL("activator name \"%s\": expected EINVAL, got %s",
				     bad[i], r ? kdbus_errname(-r) : "success");
		}
	}
	/* second NAME item: rejected by the parser */
	h = hello_new(KDBUS_HELLO_POLICY_HOLDER, KDBUS_PAGE);
	cmd_add_str(h, KDBUS_ITEM_NAME, "org.example.foo");
	cmd_add_str(h, KDBUS_ITEM_NAME, "org.example.bar");
	ASSERT_ERR(hello_raw(env->bus_path, h, NULL), EINVAL);
	cmd_free(h);
	return TEST_OK;
}

/* kdbus.connection(7): privileged roles and faked identity need the owner */
KDBUS_TEST(hello, privileged_by_non_owner, 0)
{
	pid_t pid = kdbus_fork_as(4401, 4401);

	ASSERT(pid >= 0);
	if (pid == 0) {
		struct kdbus_cmd_hello *h;
		struct kdbus_pids pids = { 0 };
		struct kdbus_creds creds;
		long r;

#define EXPECT(expr, err) do {						\
		r = (expr);						\
		if (r != -(err)) {					\
			DIAG("%s:%d: expected %s, got %s", __FILE__, __LINE__, \
			     kdbus_errname(err), r ? kdbus_errname(-r) : "success"); \
			_exit(r == -ENOTTY ? TEST_SKIP : TEST_FAIL);	\
		}							\
	} while (0)
		h = hello_new(KDBUS_HELLO_MONITOR, KDBUS_PAGE);
		EXPECT(hello_raw(env->bus_path, h, NULL), EPERM);
		h->flags = KDBUS_HELLO_ACTIVATOR;
		cmd_add_str(h, KDBUS_ITEM_NAME, "org.example.act");
		EXPECT(hello_raw(env->bus_path, h, NULL), EPERM);
		h->flags = KDBUS_HELLO_POLICY_HOLDER;
		EXPECT(hello_raw(env->bus_path, h, NULL), EPERM);
		/* a bad name is found before the privilege check (6 < 8) */
		cmd_free(h);
		h = hello_new(KDBUS_HELLO_ACTIVATOR, KDBUS_PAGE);
		cmd_add_str(h, KDBUS_ITEM_NAME, "nodots");
		EXPECT(hello_raw(env->bus_path, h, NULL), EINVAL);
		cmd_free(h);
		/* faked identity */
		memset(&creds, 0xff, sizeof(creds));
		for (int i = 0; i < 8; i++)
			((uint64_t *)&creds)[i] = 0xffffffffULL;
		h = hello_new(0, KDBUS_PAGE);
		cmd_add_item(h, KDBUS_ITEM_CREDS, &creds, sizeof(creds));
		EXPECT(hello_raw(env->bus_path, h, NULL), EPERM);
		cmd_free(h);
		h = hello_new(0, KDBUS_PAGE);
		cmd_add_item(h, KDBUS_ITEM_PIDS, &pids, sizeof(pids));
		EXPECT(hello_raw(env->bus_path, h, NULL), EPERM);
		cmd_free(h);
		h = hello_new(0, KDBUS_PAGE);
		cmd_add_str(h, KDBUS_ITEM_SECLABEL, "label");
		EXPECT(hello_raw(env->bus_path, h, NULL), EPERM);
		/* privilege (9) before attach flags (10) */
		h->attach_flags_send = 1ULL << 40;
		EXPECT(hello_raw(env->bus_path, h, NULL), EPERM);
		cmd_free(h);
		/* an ordinary connection works */
		h = hello_new(0, KDBUS_PAGE);
		EXPECT(hello_raw(env->bus_path, h, NULL), 0);
#undef EXPECT
		_exit(TEST_OK);
	}
	return kdbus_wait_child(pid);
}

/* kdbus.connection(7) and kdbus.fs(7) */
KDBUS_TEST(hello, attach_flags, 0)
{
	struct kdbus_cmd_hello *h = hello_new(0, KDBUS_PAGE);
	int fd = -1;

	h->attach_flags_send = 1ULL << 14;
	ASSERT_ERR(hello_raw(env->bus_path, h, NULL), EINVAL);
	h->attach_flags_send = 0;
	h->attach_flags_recv = 1ULL << 14;
	ASSERT_ERR(hello_raw(env->bus_path, h, NULL), EINVAL);
	h->attach_flags_recv = _KDBUS_ATTACH_ALL | (1ULL << 63);
	ASSERT_ERR(hello_raw(env->bus_path, h, NULL), EINVAL);
	/* ~0 is ALL; echoed unchanged */
	h->attach_flags_send = _KDBUS_ATTACH_ANY;
	h->attach_flags_recv = _KDBUS_ATTACH_ANY;
	ASSERT_OK(hello_raw(env->bus_path, h, &fd));
	ASSERT_EQ(h->attach_flags_send, _KDBUS_ATTACH_ANY);
	ASSERT_EQ(h->attach_flags_recv, _KDBUS_ATTACH_ANY);
	close(fd);
	cmd_free(h);
	return TEST_OK;
}

/* item validation specific to HELLO */
KDBUS_TEST(hello, items, 0)
{
	struct kdbus_cmd_hello *h;
	struct kdbus_pids pids = { 0 };
	struct kdbus_creds creds;
	char longdesc[80];
	int fd = -1;

	/* description: sysname rule */
	h = hello_new(0, KDBUS_PAGE);
	memset(longdesc, 'd', 64);
	longdesc[64] = 0;
	cmd_add_str(h, KDBUS_ITEM_CONN_DESCRIPTION, longdesc);
	ASSERT_ERR(hello_raw(env->bus_path, h, NULL), ENAMETOOLONG);
	cmd_free(h);
	h = hello_new(0, KDBUS_PAGE);
	cmd_add_str(h, KDBUS_ITEM_CONN_DESCRIPTION, "bad desc");
	ASSERT_ERR(hello_raw(env->bus_path, h, NULL), EINVAL);
	cmd_free(h);
	h = hello_new(0, KDBUS_PAGE);
	cmd_add_str(h, KDBUS_ITEM_CONN_DESCRIPTION, "");
	ASSERT_ERR(hello_raw(env->bus_path, h, NULL), EINVAL);
	cmd_free(h);
	h = hello_new(0, KDBUS_PAGE);
	longdesc[63] = 0;
	cmd_add_str(h, KDBUS_ITEM_CONN_DESCRIPTION, longdesc);
	ASSERT_OK(hello_raw(env->bus_path, h, &fd));
	close(fd);
	cmd_free(h);
	/* items HELLO does not take */
	h = hello_new(0, KDBUS_PAGE);
	cmd_add_str(h, KDBUS_ITEM_MAKE_NAME, "0-foo");
	ASSERT_ERR(hello_raw(env->bus_path, h, NULL), EINVAL);
	cmd_free(h);
	h = hello_new(0, KDBUS_PAGE);
	cmd_add_u64(h, KDBUS_ITEM_ATTACH_FLAGS_SEND, 0);
	ASSERT_ERR(hello_raw(env->bus_path, h, NULL), EINVAL);
	cmd_free(h);
	/* PIDS must be 24 bytes (hardening, kdbus(7)) */
	h = hello_new(0, KDBUS_PAGE);
	cmd_add_item(h, KDBUS_ITEM_PIDS, &pids, 16);
	ASSERT_ERR(hello_raw(env->bus_path, h, NULL), EINVAL);
	cmd_free(h);
	/* CREDS must be 64 bytes */
	memset(&creds, 0, sizeof(creds));
	h = hello_new(0, KDBUS_PAGE);
	cmd_add_item(h, KDBUS_ITEM_CREDS, &creds, 32);
	ASSERT_ERR(hello_raw(env->bus_path, h, NULL), EINVAL);
	cmd_free(h);
	/* faked credentials: a 64-bit all-ones id is invalid
	 * (kdbus.connection(7)) */
	memset(&creds, 0, sizeof(creds));
	creds.uid = ~0ULL;
	h = hello_new(0, KDBUS_PAGE);
	cmd_add_item(h, KDBUS_ITEM_CREDS, &creds, sizeof(creds));
	ASSERT_ERR(hello_raw(env->bus_path, h, NULL), EINVAL);
	cmd_free(h);
	/* faked pid that does not exist */
	pids.pid = 0x3ffffff0;
	h = hello_new(0, KDBUS_PAGE);
	cmd_add_item(h, KDBUS_ITEM_PIDS, &pids, sizeof(pids));
	ASSERT_ERR(hello_raw(env->bus_path, h, NULL), EINVAL);
	cmd_free(h);
	/* valid faked identity by the owner */
	pids.pid = getpid();
	pids.tid = getpid();
	h = hello_new(0, KDBUS_PAGE);
	cmd_add_item(h, KDBUS_ITEM_PIDS, &pids, sizeof(pids));
	ASSERT_OK(hello_raw(env->bus_path, h, &fd));
	close(fd);
	cmd_free(h);
	return TEST_OK;
}

KDBUS_TEST(hello, twice, 0)
{
	struct kdbus_cmd_hello *h = hello_new(0, KDBUS_PAGE);
	struct kdbus_cmd *cmd = cmd_new(sizeof(*cmd));
	int fd = -1;

	ASSERT_OK(hello_raw(env->bus_path, h, &fd));
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_HELLO, h), EBADFD);
	/* BUS_MAKE on a connection */
	cmd_add_str(cmd, KDBUS_ITEM_MAKE_NAME, "0-ep");
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_BUS_MAKE, cmd), EBADFD);
	/* the endpoint setup/owner codes on a connection */
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_ENDPOINT_MAKE, cmd), EBADFD);
	cmd->size = sizeof(*cmd);
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_ENDPOINT_UPDATE, cmd), EBADFD);
	close(fd);
	cmd_free(cmd);
	cmd_free(h);
	return TEST_OK;
}

KDBUS_TEST(hello, failed_hello_keeps_handle_fresh, 0)
{
	struct kdbus_cmd_hello *h = hello_new(0, 0);
	int fd = open(env->bus_path, O_RDWR);

	ASSERT(fd >= 0);
	h->return_flags = 0x55;
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_HELLO, h), EINVAL);
	/* return_flags written back on failure too (kdbus(7)) */
	ASSERT_EQ(h->return_flags, 0);
	/* not a connection */
	ASSERT(mmap(NULL, KDBUS_PAGE, PROT_READ, MAP_SHARED, fd, 0) ==
	       MAP_FAILED && errno == EBADFD);
	h->pool_size = KDBUS_PAGE;
	ASSERT_OK(kdbus_ioctl(fd, KDBUS_CMD_HELLO, h));
	close(fd);
	cmd_free(h);
	return TEST_OK;
}

KDBUS_TEST(hello, mmap_rules, 0)
{
	struct kdbus_conn *c;
	void *p;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &c));
	/* writable: EPERM, shared or private */
	p = mmap(NULL, KDBUS_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 c->fd, 0);
	ASSERT(p == MAP_FAILED && errno == EPERM);
	p = mmap(NULL, KDBUS_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE,
		 c->fd, 0);
	ASSERT(p == MAP_FAILED && errno == EPERM);
	/* longer than the pool: EFAULT */
	p = mmap(NULL, KDBUS_PAGE * 5, PROT_READ, MAP_SHARED, c->fd, 0);
	ASSERT(p == MAP_FAILED && errno == EFAULT);
	/* read-only: fine; cannot be made writable later */
	p = mmap(NULL, KDBUS_PAGE * 4, PROT_READ, MAP_SHARED, c->fd, 0);
	ASSERT(p != MAP_FAILED);
	ASSERT(mprotect(p, KDBUS_PAGE, PROT_READ | PROT_WRITE) < 0 &&
	       errno == EACCES);
	/* same memory as the helper's mapping */
	ASSERT(!memcmp(p, c->pool, KDBUS_PAGE));
	munmap(p, KDBUS_PAGE * 4);
	/* page-aligned offset inside the pool */
	p = mmap(NULL, KDBUS_PAGE, PROT_READ, MAP_SHARED, c->fd, KDBUS_PAGE);
	ASSERT(p != MAP_FAILED);
	munmap(p, KDBUS_PAGE);
	kdbus_conn_free(c);
	return TEST_OK;
}

KDBUS_TEST(hello, mmap_not_connected, 0)
{
	void *p;
	int fd = open(env->bus_path, O_RDWR);

	ASSERT(fd >= 0);
	p = mmap(NULL, KDBUS_PAGE, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT(p == MAP_FAILED && errno == EBADFD);
	close(fd);
	p = mmap(NULL, KDBUS_PAGE, PROT_READ, MAP_SHARED, env->control_fd, 0);
	ASSERT(p == MAP_FAILED && errno == EBADFD);
	p = mmap(NULL, KDBUS_PAGE, PROT_READ, MAP_SHARED, env->bus_owner_fd, 0);
	ASSERT(p == MAP_FAILED && errno == EBADFD);
	return TEST_OK;
}

KDBUS_TEST(hello, poll, 0)
{
	struct pollfd p = { .events = POLLIN | POLLOUT };
	struct kdbus_conn *c;
	int fd = open(env->bus_path, O_RDWR);

	ASSERT(fd >= 0);
	/* not a connection */
	p.fd = fd;
	ASSERT_EQ(poll(&p, 1, 0), 1);
	ASSERT_EQ(p.revents & (POLLERR | POLLHUP), POLLERR | POLLHUP);
	close(fd);
	p.fd = env->control_fd;
	ASSERT_EQ(poll(&p, 1, 0), 1);
	ASSERT_EQ(p.revents & (POLLERR | POLLHUP), POLLERR | POLLHUP);
	/* idle connection: writable, not readable */
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	p.fd = c->fd;
	p.events = POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM;
	ASSERT_EQ(poll(&p, 1, 0), 1);
	ASSERT_EQ(p.revents, POLLOUT | POLLWRNORM);
	kdbus_conn_free(c);
	return TEST_OK;
}

/* HELLO on a bus whose owner is gone: the node is dead */
KDBUS_TEST(hello, dead_bus, 0)
{
	struct kdbus_cmd_hello *h = hello_new(0, KDBUS_PAGE);
	int fd = open(env->bus_path, O_RDWR);

	ASSERT(fd >= 0);
	close(env->bus_owner_fd);
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_HELLO, h), ESHUTDOWN);
	close(fd);
	ASSERT(open(env->bus_path, O_RDWR) < 0 && errno == ENOENT);
	cmd_free(h);
	return TEST_OK;
}

/* an opener without rw access to the endpoint cannot even open it */
KDBUS_TEST(hello, endpoint_access, KDBUS_TEST_NO_BUS)
{
	char name[64], path[320];
	int bus = kdbus_bus_new(0, name, sizeof(name));
	pid_t pid;

	ASSERT_OK(bus);
	snprintf(path, sizeof(path), "%s/%s/bus", KDBUS_MOUNT, name);
	pid = kdbus_fork_as(4402, 4402);
	ASSERT(pid >= 0);
	if (pid == 0) {
		int fd = open(path, O_RDWR);

		_exit(fd < 0 && errno == EACCES ?
		      TEST_OK : TEST_FAIL);
	}
	ASSERT_EQ(kdbus_wait_child(pid), TEST_OK);
	close(bus);
	return TEST_OK;
}

/* what each connection kind may do (kdbus.connection(7)); checked first */
static int conn_kind(struct kdbus_test_env *env, uint64_t flags,
		     const char *name, struct kdbus_conn **out)
{
	struct kdbus_cmd_hello *h = hello_new(flags, KDBUS_PAGE * 4);
	struct kdbus_conn *c;
	int fd = -1;
	long r;

	if (name)
		cmd_add_str(h, KDBUS_ITEM_NAME, name);
	r = hello_raw(env->bus_path, h, &fd);
	if (r < 0) {
		cmd_free(h);
		return r;
	}
	c = calloc(1, sizeof(*c));
	c->fd = fd;
	c->id = h->id;
	c->pool_size = h->pool_size;
	c->hello = *h;
	c->pool = mmap(NULL, c->pool_size, PROT_READ, MAP_SHARED, fd, 0);
	cmd_free(h);
	*out = c;
	return c->pool == MAP_FAILED ? -errno : 0;
}

KDBUS_TEST(hello, monitor_kind, 0)
{
	struct kdbus_cmd_send garbage = { .size = 1 };
	struct kdbus_cmd bb = { .size = sizeof(bb) };
	struct kdbus_conn *m, *o;
	struct kdbus_info *info;
	uint64_t off;

	ASSERT_OK(conn_kind(env, KDBUS_HELLO_MONITOR, NULL, &m));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &o));
	ASSERT_OK(kdbus_free(m, m->hello.offset));
	/* SEND and BYEBYE: EOPNOTSUPP, before the argument is parsed */
	ASSERT_ERR(kdbus_ioctl(m->fd, KDBUS_CMD_BYEBYE, &bb), EOPNOTSUPP);
	bb.flags = KDBUS_FLAG_NEGOTIATE;
	ASSERT_ERR(kdbus_ioctl(m->fd, KDBUS_CMD_BYEBYE, &bb), EOPNOTSUPP);
	/* UPDATE of both masks, CONN_INFO, FREE are fine */
	ASSERT_OK(kdbus_update_attach(m, 0, _KDBUS_ATTACH_ALL));
	ASSERT_OK(kdbus_conn_info(m, o->id, NULL, 0, NULL, &off));
	ASSERT_OK(kdbus_free(m, off));
	/* CONN_INFO by id also finds monitors (kdbus(7)) */
	ASSERT_OK(kdbus_conn_info(o, m->id, NULL, 0, &info, &off));
	ASSERT_EQ(info->flags, KDBUS_HELLO_MONITOR);
	ASSERT_OK(kdbus_free(o, off));
	ASSERT_ERR(kdbus_ioctl(m->fd, KDBUS_CMD_SEND, &garbage), EOPNOTSUPP);
	kdbus_conn_free(m);
	kdbus_conn_free(o);
	return TEST_OK;
}

KDBUS_TEST(hello, policy_holder_kind, 0)
{
	struct kdbus_cmd_recv garbage = { .size = 1 };
	struct kdbus_cmd_free fgarbage = { .size = 1 };
	struct kdbus_cmd_send sgarbage = { .size = 1 };
	struct kdbus_cmd bb = { .size = sizeof(bb) };
	struct kdbus_conn *p, *o;
	struct kdbus_info *info;
	struct kdbus_cmd *cmd;
	uint64_t off;

	ASSERT_OK(conn_kind(env, KDBUS_HELLO_POLICY_HOLDER, "org.example.ph",
			    &p));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &o));
	ASSERT_ERR(kdbus_ioctl(p->fd, KDBUS_CMD_BYEBYE, &bb), EOPNOTSUPP);
	/* attach masks cannot be updated on a policy holder */
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_u64(cmd, KDBUS_ITEM_ATTACH_FLAGS_SEND, 0);
	ASSERT_ERR(kdbus_ioctl(p->fd, KDBUS_CMD_UPDATE, cmd), EOPNOTSUPP);
	cmd_free(cmd);
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_u64(cmd, KDBUS_ITEM_ATTACH_FLAGS_RECV, 0);
	ASSERT_ERR(kdbus_ioctl(p->fd, KDBUS_CMD_UPDATE, cmd), EOPNOTSUPP);
	cmd_free(cmd);
	/* CONN_INFO works for it and about it */
	ASSERT_OK(kdbus_conn_info(p, o->id, NULL, 0, NULL, NULL));
	ASSERT_OK(kdbus_conn_info(o, p->id, NULL, 0, &info, &off));
	ASSERT_EQ(info->flags, KDBUS_HELLO_POLICY_HOLDER);
	ASSERT_ERR(kdbus_ioctl(p->fd, KDBUS_CMD_FREE, &fgarbage), EOPNOTSUPP);
	ASSERT_ERR(kdbus_ioctl(p->fd, KDBUS_CMD_RECV, &garbage), EOPNOTSUPP);
	ASSERT_ERR(kdbus_ioctl(p->fd, KDBUS_CMD_SEND, &sgarbage), EOPNOTSUPP);
	kdbus_conn_free(p);
	kdbus_conn_free(o);
	return TEST_OK;
}
