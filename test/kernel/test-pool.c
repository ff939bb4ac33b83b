// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The pool: KDBUS_CMD_FREE errnos (kdbus.pool(7)), slice placement and
 * best-fit reuse (kdbus.pool(7)), EXFULL when the own pool is full
 * (kdbus.pool(7)).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

KDBUS_TEST(pool, free_errors, 0)
{
	struct kdbus_cmd_free f = { .size = sizeof(f) };
	struct kdbus_conn *c;
	uint64_t off;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &c));
	/* pool_size itself: no-op success */
	ASSERT_OK(kdbus_free(c, c->pool_size));
	ASSERT_OK(kdbus_free(c, c->pool_size));
	/* never handed out */
	ASSERT_ERR(kdbus_free(c, 0), ENXIO);
	ASSERT_ERR(kdbus_free(c, 8), ENXIO);
	ASSERT_ERR(kdbus_free(c, 4), ENXIO);
	ASSERT_ERR(kdbus_free(c, c->pool_size + 8), ENXIO);
	ASSERT_ERR(kdbus_free(c, ~0ULL), ENXIO);
	/* a real slice: freed once, then ENXIO */
	ASSERT_OK(kdbus_conn_info(c, c->id, NULL, 0, NULL, &off));
	ASSERT_ERR(kdbus_free(c, off + 8), ENXIO);
	ASSERT_OK(kdbus_free(c, off));
	ASSERT_ERR(kdbus_free(c, off), ENXIO);
	/* flags */
	f.offset = c->pool_size;
	f.flags = 1;
	ASSERT_ERR(kdbus_ioctl(c->fd, KDBUS_CMD_FREE, &f), EINVAL);
	f.flags = KDBUS_FLAG_NEGOTIATE;
	ASSERT_OK(kdbus_ioctl(c->fd, KDBUS_CMD_FREE, &f));
	ASSERT_EQ(f.flags, 0);
	f.size = sizeof(f) - 8;
	f.flags = 0;
	ASSERT_ERR(kdbus_ioctl(c->fd, KDBUS_CMD_FREE, &f), EINVAL);
	kdbus_conn_free(c);
	return TEST_OK;
}

/* FREE of one connection's slice through another connection */
KDBUS_TEST(pool, free_foreign_offset, 0)
{
	struct kdbus_conn *a, *b;
	uint64_t off;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 2, &b));
	ASSERT_OK(kdbus_conn_info(a, a->id, NULL, 0, NULL, &off));
	ASSERT_OK(kdbus_conn_info(b, b->id, NULL, 0, NULL, NULL));
	ASSERT_EQ(off, 0);
	ASSERT_OK(kdbus_free(b, 0));
	ASSERT_ERR(kdbus_free(b, 0), ENXIO);
	ASSERT_OK(kdbus_free(a, 0));
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* slices are 8-aligned, do not overlap and are reused best-fit */
KDBUS_TEST(pool, slices, 0)
{
	struct kdbus_conn *c;
	struct kdbus_cmd_info *cmd = cmd_new(sizeof(*cmd));
	uint64_t off[3], size[3];
	int i;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &c));
	for (i = 0; i < 3; i++) {
		cmd->size = sizeof(*cmd);
		cmd->id = c->id;
		cmd->attach_flags = 0;
		ASSERT_OK(kdbus_ioctl(c->fd, KDBUS_CMD_CONN_INFO, cmd));
		off[i] = cmd->offset;
		size[i] = cmd->info_size;
		ASSERT_EQ(off[i] % 8, 0);
		ASSERT_EQ(size[i] % 8, 0);
		ASSERT(size[i] >= sizeof(struct kdbus_info));
		ASSERT(off[i] + size[i] <= c->pool_size);
	}
	/* in a fresh pool (the HELLO slice freed) the first is at 0 */
	ASSERT_EQ(off[0], 0);
	ASSERT(off[1] >= off[0] + size[0]);
	ASSERT(off[2] >= off[1] + size[1]);
	/* the freed hole is the best fit for a same-size request */
	ASSERT_OK(kdbus_free(c, off[1]));
	cmd->size = sizeof(*cmd);
	ASSERT_OK(kdbus_ioctl(c->fd, KDBUS_CMD_CONN_INFO, cmd));
	ASSERT_EQ(cmd->offset, off[1]);
	kdbus_conn_free(c);
	cmd_free(cmd);
	return TEST_OK;
}

/* own results that do not fit: EXFULL; freeing makes room again */
KDBUS_TEST(pool, exfull, 0)
{
	struct kdbus_conn *c;
	uint64_t first = ~0ULL, off;
	int i, r = 0;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	for (i = 0; i < 1000; i++) {
		r = kdbus_conn_info(c, c->id, NULL, 0, NULL, &off);
		if (r < 0)
			break;
		if (first == ~0ULL)
			first = off;
	}
	ASSERT_ERR(r, EXFULL);
	ASSERT(i > 10 && i <= (int)(KDBUS_PAGE / sizeof(struct kdbus_info)));
	ASSERT_OK(kdbus_free(c, first));
	ASSERT_OK(kdbus_conn_info(c, c->id, NULL, 0, NULL, &off));
	ASSERT_EQ(off, first);
	kdbus_conn_free(c);
	return TEST_OK;
}

/* data the kernel writes is visible through every mapping of the pool */
KDBUS_TEST(pool, shared_mappings, 0)
{
	struct kdbus_conn *c;
	struct kdbus_info *info;
	uint8_t *p2;
	uint64_t off;

	ASSERT_OK(kdbus_hello(env->bus_path, KDBUS_HELLO_ACCEPT_FD, 0,
			      KDBUS_PAGE * 2, &c));
	p2 = mmap(NULL, c->pool_size, PROT_READ, MAP_SHARED, c->fd, 0);
	ASSERT(p2 != MAP_FAILED);
	ASSERT_OK(kdbus_conn_info(c, c->id, NULL, 0, &info, &off));
	ASSERT_EQ(info->id, c->id);
	ASSERT_EQ(((struct kdbus_info *)(p2 + off))->id, c->id);
	ASSERT_EQ(((struct kdbus_info *)(p2 + off))->flags,
		  KDBUS_HELLO_ACCEPT_FD);
	munmap(p2, c->pool_size);
	kdbus_conn_free(c);
	return TEST_OK;
}
