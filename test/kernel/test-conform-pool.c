// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Conformance audit of the pool (kdbus.pool(7)): mmap ranges beyond
 * the pool, private mappings that cannot be made writable, mappings that
 * outlive BYEBYE, close and bus teardown, the allocator (lower address on
 * split, merge with both neighbours, best fit) and FREE negotiation.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

#define CONFORM_TEST(_name, _flags)						\
	static int conform_pool_fn_##_name(struct kdbus_test_env *env);	\
	static const struct kdbus_test conform_pool_t_##_name = {		\
		.group = "conform-pool", .name = #_name,				\
		.fn = conform_pool_fn_##_name, .flags = (_flags),		\
		.file = __FILE__, .line = __LINE__,				\
	};									\
	static const struct kdbus_test *conform_pool_p_##_name			\
	__attribute__((used, section("kdbus_tests"), aligned(sizeof(void *)))) = \
		&conform_pool_t_##_name;						\
	static int conform_pool_fn_##_name(					\
		struct kdbus_test_env *env __attribute__((unused)))

/* kdbus.pool(7): mapping beyond the pool (recommended: offset + length too) */
CONFORM_TEST(mmap_beyond_pool, 0)
{
	struct kdbus_conn *c;
	void *p;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &c));
	p = mmap(NULL, KDBUS_PAGE, PROT_READ, MAP_SHARED, c->fd,
		 KDBUS_PAGE * 4);
	ASSERT(p == MAP_FAILED && errno == EFAULT);
	p = mmap(NULL, KDBUS_PAGE * 2, PROT_READ, MAP_SHARED, c->fd,
		 KDBUS_PAGE * 3);
	ASSERT(p == MAP_FAILED && errno == EFAULT);
	p = mmap(NULL, KDBUS_PAGE * 4, PROT_READ, MAP_SHARED, c->fd,
		 KDBUS_PAGE);
	ASSERT(p == MAP_FAILED && errno == EFAULT);
	p = mmap(NULL, KDBUS_PAGE, PROT_READ, MAP_SHARED, c->fd,
		 KDBUS_PAGE * 3);
	ASSERT(p != MAP_FAILED);
	munmap(p, KDBUS_PAGE);
	kdbus_conn_free(c);
	return TEST_OK;
}

/* kdbus.pool(7): "may write" is removed from private mappings too */
CONFORM_TEST(mprotect_private, 0)
{
	struct kdbus_conn *c;
	void *p;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 2, &c));
	p = mmap(NULL, KDBUS_PAGE * 2, PROT_READ, MAP_PRIVATE, c->fd, 0);
	ASSERT(p != MAP_FAILED);
	ASSERT(mprotect(p, KDBUS_PAGE, PROT_READ | PROT_WRITE) < 0 &&
	       errno == EACCES);
	munmap(p, KDBUS_PAGE * 2);
	p = mmap(NULL, KDBUS_PAGE, PROT_WRITE, MAP_SHARED, c->fd, 0);
	ASSERT(p == MAP_FAILED && errno == EPERM);
	kdbus_conn_free(c);
	return TEST_OK;
}

/* kdbus.pool(7) / kdbus.connection(7): mappings stay valid after BYEBYE, close
 * and teardown */
CONFORM_TEST(mapping_outlives_everything, 0)
{
	struct kdbus_conn *c;
	struct kdbus_info *info;
	uint64_t off;
	uint8_t *p2;

	ASSERT_OK(kdbus_hello(env->bus_path, KDBUS_HELLO_ACCEPT_FD, 0,
			      KDBUS_PAGE * 2, &c));
	ASSERT_OK(kdbus_conn_info(c, c->id, NULL, 0, &info, &off));
	p2 = mmap(NULL, KDBUS_PAGE, PROT_READ, MAP_SHARED, c->fd, 0);
	ASSERT(p2 != MAP_FAILED);
	ASSERT_OK(kdbus_byebye(c->fd));
	ASSERT_EQ(info->id, c->id);
	close(c->fd);
	c->fd = -1;
	ASSERT_EQ(info->id, c->id);
	close(env->bus_owner_fd);
	env->bus_owner_fd = -1;
	ASSERT_EQ(info->id, c->id);
	ASSERT_EQ(info->flags, KDBUS_HELLO_ACCEPT_FD);
	ASSERT_EQ(((struct kdbus_info *)(p2 + off))->id, c->id);
	ASSERT(munmap(p2, KDBUS_PAGE) == 0);
	kdbus_conn_free(c);
	return TEST_OK;
}

struct pool_env {
	struct kdbus_conn *c, *t48, *t72;
};

/* a slice of 24, 48 or 72 bytes (a kdbus_info, with a description) */
static int slice(struct pool_env *pe, int size, uint64_t *off)
{
	struct kdbus_cmd_info ci = { .size = sizeof(ci) };
	int r;

	ci.id = size == 24 ? pe->c->id : size == 48 ? pe->t48->id : pe->t72->id;
	ci.attach_flags = size == 24 ? 0 : KDBUS_ATTACH_CONN_DESCRIPTION;
	r = kdbus_ioctl(pe->c->fd, KDBUS_CMD_CONN_INFO, &ci);
	if (r < 0)
		return r;
	if ((int)ci.info_size != size) {
		DIAG("slice of %llu bytes, wanted %d",
		     (unsigned long long)ci.info_size, size);
		return -EPROTO;
	}
	*off = ci.offset;
	return 0;
}

static int pool_env_init(struct kdbus_test_env *env, struct pool_env *pe)
{
	struct kdbus_cmd_hello *h;
	struct kdbus_conn **t[2] = { &pe->t48, &pe->t72 };
	const char *desc[2] = { "x", "abcdefghijklmnopqrstuvwxyz" };
	int i, r;

	r = kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &pe->c);
	if (r < 0)
		return r;
	for (i = 0; i < 2; i++) {
		int fd = open(env->bus_path, O_RDWR);

		h = cmd_new(sizeof(*h));
		h->pool_size = KDBUS_PAGE;
		h->attach_flags_send = _KDBUS_ATTACH_ALL;
		cmd_add_str(h, KDBUS_ITEM_CONN_DESCRIPTION, desc[i]);
		r = kdbus_ioctl(fd, KDBUS_CMD_HELLO, h);
		if (r < 0)
			return r;
		*t[i] = calloc(1, sizeof(**t[i]));
		(*t[i])->fd = fd;
		(*t[i])->id = h->id;
		cmd_free(h);
	}
	return 0;
}

static void pool_env_free(struct pool_env *pe)
{
	kdbus_conn_free(pe->c);
	kdbus_conn_free(pe->t48);
	kdbus_conn_free(pe->t72);
}

/* kdbus.pool(7): a split keeps the lower address; frees merge both sides */
CONFORM_TEST(allocator_split_and_merge, 0)
{
	struct pool_env pe = { 0 };
	uint64_t a, b, c, d;

	ASSERT_OK(pool_env_init(env, &pe));
	ASSERT_OK(slice(&pe, 24, &a));
	ASSERT_OK(slice(&pe, 24, &b));
	ASSERT_OK(slice(&pe, 24, &c));
	ASSERT_EQ(a, 0);
	ASSERT_EQ(b, 24);
	ASSERT_EQ(c, 48);
	/* free a then b: b merges with its free left neighbour */
	ASSERT_OK(kdbus_free(pe.c, a));
	ASSERT_OK(kdbus_free(pe.c, b));
	ASSERT_OK(slice(&pe, 48, &d));
	ASSERT_EQ(d, 0);
	/* free d then c: c merges left and right, the pool is whole again */
	ASSERT_OK(kdbus_free(pe.c, d));
	ASSERT_OK(kdbus_free(pe.c, c));
	ASSERT_OK(slice(&pe, 72, &d));
	ASSERT_EQ(d, 0);
	ASSERT_OK(kdbus_free(pe.c, d));
	/* free b then a: a merges with its free right neighbour */
	ASSERT_OK(slice(&pe, 24, &a));
	ASSERT_OK(slice(&pe, 24, &b));
	ASSERT_OK(slice(&pe, 24, &c));
	ASSERT_EQ(c, 48);
	ASSERT_OK(kdbus_free(pe.c, b));
	ASSERT_OK(kdbus_free(pe.c, a));
	ASSERT_OK(slice(&pe, 48, &d));
	ASSERT_EQ(d, 0);
	pool_env_free(&pe);
	return TEST_OK;
}

/* kdbus.pool(7): the smallest free slice that fits wins, not the first one */
CONFORM_TEST(allocator_best_fit, 0)
{
	struct pool_env pe = { 0 };
	uint64_t x, y, z, w, o;

	ASSERT_OK(pool_env_init(env, &pe));
	ASSERT_OK(slice(&pe, 48, &x));
	ASSERT_OK(slice(&pe, 24, &y));
	ASSERT_OK(slice(&pe, 24, &z));
	ASSERT_OK(slice(&pe, 24, &w));
	ASSERT_EQ(x, 0);
	ASSERT_EQ(z, 72);
	/* holes: 48 at 0, 24 at 72, and the tail */
	ASSERT_OK(kdbus_free(pe.c, x));
	ASSERT_OK(kdbus_free(pe.c, z));
	ASSERT_OK(slice(&pe, 24, &o));
	ASSERT_EQ(o, 72);
	/* now the 48-byte hole is the best fit, split at its low end */
	ASSERT_OK(slice(&pe, 24, &o));
	ASSERT_EQ(o, 0);
	ASSERT_OK(slice(&pe, 24, &o));
	ASSERT_EQ(o, 24);
	(void)y;
	(void)w;
	pool_env_free(&pe);
	return TEST_OK;
}

/* kdbus(7) / kdbus.pool(7): a negotiating FREE frees nothing; the item alone
 * does */
CONFORM_TEST(free_negotiation, 0)
{
	struct kdbus_cmd_free *f = cmd_new(sizeof(*f));
	struct kdbus_conn *c;
	uint64_t off;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	ASSERT_OK(kdbus_conn_info(c, c->id, NULL, 0, NULL, &off));
	f->flags = KDBUS_FLAG_NEGOTIATE;
	f->offset = off;
	ASSERT_OK(kdbus_ioctl(c->fd, KDBUS_CMD_FREE, f));
	ASSERT_EQ(f->flags, 0);
	/* still allocated: a real FREE works once */
	f->flags = 0;
	cmd_add_u64(f, KDBUS_ITEM_NEGOTIATE, KDBUS_ITEM_NAME);
	ASSERT_OK(kdbus_ioctl(c->fd, KDBUS_CMD_FREE, f));
	ASSERT_ERR(kdbus_ioctl(c->fd, KDBUS_CMD_FREE, f), ENXIO);
	/* FREE of a slice-interior offset and of the HELLO-sized range */
	ASSERT_OK(kdbus_conn_info(c, c->id, NULL, 0, NULL, &off));
	ASSERT_ERR(kdbus_free(c, off + 16), ENXIO);
	ASSERT_ERR(kdbus_free(c, off + 24), ENXIO);
	ASSERT_ERR(kdbus_free(c, c->pool_size - 8), ENXIO);
	ASSERT_OK(kdbus_free(c, off));
	cmd_free(f);
	kdbus_conn_free(c);
	return TEST_OK;
}

/* does /proc/self/maps have a line for addr containing str? */
static int maps_line_has(void *addr, const char *str)
{
	char line[512];
	unsigned long lo, hi;
	FILE *f = fopen("/proc/self/maps", "re");
	int found = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		if ((unsigned long)addr >= lo && (unsigned long)addr < hi) {
			found = strstr(line, str) != NULL;
			if (!found)
				DIAG("maps: %s", line);
			break;
		}
	}
	fclose(f);
	return found;
}

/* the pool file is named kdbus-conn:<description> or kdbus-conn */
CONFORM_TEST(pool_file_name, 0)
{
	struct kdbus_cmd_hello *h = cmd_new(sizeof(*h));
	struct kdbus_conn *c;
	void *p;
	int fd = open(env->bus_path, O_RDWR);

	ASSERT(fd >= 0);
	h->pool_size = KDBUS_PAGE;
	cmd_add_str(h, KDBUS_ITEM_CONN_DESCRIPTION, "pool-name.x");
	ASSERT_OK(kdbus_ioctl(fd, KDBUS_CMD_HELLO, h));
	p = mmap(NULL, KDBUS_PAGE, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT(p != MAP_FAILED);
	ASSERT_EQ(maps_line_has(p, "kdbus-conn:pool-name.x"), 1);
	munmap(p, KDBUS_PAGE);
	close(fd);
	cmd_free(h);
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	ASSERT_EQ(maps_line_has(c->pool, "kdbus-conn"), 1);
	ASSERT_EQ(maps_line_has(c->pool, "kdbus-conn:"), 0);
	kdbus_conn_free(c);
	return TEST_OK;
}
