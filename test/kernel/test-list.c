// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KDBUS_CMD_LIST (kdbus.name(7)): the records for UNIQUE, NAMES,
 * ACTIVATORS and QUEUED against a known set of connections, the record
 * format, the empty result, errors.
 */
#include <stdlib.h>
#include <unistd.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

#define P KDBUS_NAME_PRIMARY
#define Q KDBUS_NAME_QUEUE
#define AR KDBUS_NAME_ALLOW_REPLACEMENT
#define INQ KDBUS_NAME_IN_QUEUE
#define ACT KDBUS_NAME_ACTIVATOR

/* one expected record: a name (or NULL for a bare record) */
struct rec {
	uint64_t id;
	uint64_t flags;		/* HELLO flags of the connection */
	const char *name;
	uint64_t name_flags;
	int seen;
};

static int do_list(struct kdbus_conn *c, uint64_t flags,
		   struct kdbus_cmd_list *cmd)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->size = sizeof(*cmd);
	cmd->flags = flags;
	return kdbus_ioctl(c->fd, KDBUS_CMD_LIST, cmd);
}

/*
 * LIST with @flags from @c must produce exactly the records in @want (in
 * any order; records of one connection in creation order).
 */
static int check_list(struct kdbus_conn *c, uint64_t flags,
		      struct rec *want, size_t n_want)
{
	struct kdbus_cmd_list cmd;
	struct kdbus_info *info;
	uint8_t *end;
	size_t i, n = 0;

	for (i = 0; i < n_want; i++)
		want[i].seen = 0;

	ASSERT_OK(do_list(c, flags, &cmd));
	if (n_want == 0) {
		ASSERT_EQ(cmd.list_size, 0);
		ASSERT_EQ(cmd.offset, c->pool_size);
		/* FREE of "no slice" is a harmless no-op */
		ASSERT_OK(kdbus_free(c, cmd.offset));
		return TEST_OK;
	}

	ASSERT(cmd.offset + cmd.list_size <= c->pool_size);
	end = c->pool + cmd.offset + cmd.list_size;
	for (info = (void *)(c->pool + cmd.offset); (uint8_t *)info < end;
	     info = (void *)((uint8_t *)info + info->size)) {
		const char *name = NULL;
		uint64_t name_flags = 0;

		ASSERT(info->size >= sizeof(*info));
		ASSERT_EQ(info->size % 8, 0);
		if (info->size > sizeof(*info)) {
			struct kdbus_item *it = info->items;

			ASSERT_EQ(it->type, KDBUS_ITEM_OWNED_NAME);
			ASSERT_EQ(info->size,
				  sizeof(*info) + KDBUS_ALIGN8(it->size));
			ASSERT_EQ(it->size, KDBUS_ITEM_HDR + 8 +
				  strlen(it->name.name) + 1);
			name = it->name.name;
			name_flags = it->name.flags;
		}

		for (i = 0; i < n_want; i++) {
			if (want[i].seen || want[i].id != info->id)
				continue;
			if (!!want[i].name != !!name)
				continue;
			if (name && strcmp(name, want[i].name))
				continue;
			break;
		}
		if (i == n_want)
			FAIL("unexpected record id %llu flags 0x%llx name %s",
			     (unsigned long long)info->id,
			     (unsigned long long)info->flags,
			     name ? name : "(none)");
		ASSERT_EQ(info->flags, want[i].flags);
		ASSERT_EQ(name_flags, want[i].name_flags);
		want[i].seen = 1;
		n++;
	}
	ASSERT((uint8_t *)info == end);
	ASSERT_EQ(n, n_want);
	ASSERT_OK(kdbus_free(c, cmd.offset));
	return TEST_OK;
}

#define AFLAGS (KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_ACCEPT_FD)
#define FD KDBUS_HELLO_ACCEPT_FD

KDBUS_TEST(list, known_set, 0)
{
	struct kdbus_conn *me, *a, *b, *act, *mon;
	uint64_t rf;

	ASSERT_OK(kdbus_hello(env->bus_path, FD, 0, KDBUS_DEFAULT_POOL, &me));
	ASSERT_OK(kdbus_hello(env->bus_path, FD, 0, KDBUS_DEFAULT_POOL, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &b));
	ASSERT_OK(kn_hello_named(env->bus_path, AFLAGS, "list.act",
				 KDBUS_DEFAULT_POOL, &act));
	ASSERT_OK(kn_monitor(env->bus_path, &mon));

	/* a owns list.a2 and list.a1 (creation order), b waits for list.a1 */
	ASSERT_OK(kn_acquire(a, "list.a2", AR, &rf));
	ASSERT_OK(kn_acquire(a, "list.a1", 0, &rf));
	ASSERT_OK(kn_acquire(b, "list.a1", Q, &rf));

	{
		/* monitors are never listed */
		struct rec w[] = {
			{ me->id, FD, NULL, 0, 0 },
			{ a->id, FD, NULL, 0, 0 },
			{ b->id, 0, NULL, 0, 0 },
			{ act->id, AFLAGS, NULL, 0, 0 },
		};
		RUN(check_list(me, KDBUS_LIST_UNIQUE, w, 4));
	}
	{
		struct rec w[] = {
			{ a->id, FD, "list.a2", AR | P, 0 },
			{ a->id, FD, "list.a1", P, 0 },
		};
		RUN(check_list(me, KDBUS_LIST_NAMES, w, 2));
	}
	{
		/* owners appear once per name, others as bare records */
		struct rec w[] = {
			{ me->id, FD, NULL, 0, 0 },
			{ a->id, FD, "list.a2", AR | P, 0 },
			{ a->id, FD, "list.a1", P, 0 },
			{ b->id, 0, NULL, 0, 0 },
			{ act->id, AFLAGS, NULL, 0, 0 },
		};
		RUN(check_list(me, KDBUS_LIST_UNIQUE | KDBUS_LIST_NAMES, w, 5));
	}
	{
		struct rec w[] = {
			{ b->id, 0, "list.a1", Q | INQ, 0 },
		};
		RUN(check_list(me, KDBUS_LIST_QUEUED, w, 1));
	}
	{
		struct rec w[] = {
			{ act->id, AFLAGS, "list.act", ACT | P, 0 },
		};
		RUN(check_list(act, KDBUS_LIST_ACTIVATORS, w, 1));
	}
	{
		struct rec w[] = {
			{ me->id, FD, NULL, 0, 0 },
			{ a->id, FD, "list.a2", AR | P, 0 },
			{ a->id, FD, "list.a1", P, 0 },
			{ b->id, 0, "list.a1", Q | INQ, 0 },
			{ act->id, AFLAGS, "list.act", ACT | P, 0 },
		};
		RUN(check_list(mon, KDBUS_LIST_UNIQUE | KDBUS_LIST_NAMES |
			       KDBUS_LIST_QUEUED | KDBUS_LIST_ACTIVATORS,
			       w, 5));
	}

	/* the service takes over: the activator record waits now */
	ASSERT_OK(kn_acquire(b, "list.act", 0, &rf));
	{
		struct rec w[] = {
			{ a->id, FD, "list.a2", AR | P, 0 },
			{ a->id, FD, "list.a1", P, 0 },
			{ b->id, 0, "list.act", P, 0 },
			{ act->id, AFLAGS, "list.act", ACT | INQ, 0 },
			{ b->id, 0, "list.a1", Q | INQ, 0 },
		};
		RUN(check_list(me, KDBUS_LIST_NAMES | KDBUS_LIST_QUEUED |
			       KDBUS_LIST_ACTIVATORS, w, 5));
	}

	/* a leaves: b is promoted, the flags follow */
	kdbus_conn_free(a);
	{
		struct rec w[] = {
			{ b->id, 0, "list.a1", Q | P, 0 },
			{ b->id, 0, "list.act", P, 0 },
		};
		RUN(check_list(me, KDBUS_LIST_NAMES, w, 2));
	}

	kdbus_conn_free(me);
	kdbus_conn_free(b);
	kdbus_conn_free(act);
	kdbus_conn_free(mon);
	return TEST_OK;
}

KDBUS_TEST(list, empty, 0)
{
	struct kdbus_conn *me;
	struct kdbus_cmd_list cmd;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &me));

	/* no flags: nothing is allocated */
	RUN(check_list(me, 0, NULL, 0));
	/* nobody owns a name */
	RUN(check_list(me, KDBUS_LIST_NAMES | KDBUS_LIST_QUEUED |
		       KDBUS_LIST_ACTIVATORS, NULL, 0));

	/* unknown flags */
	ASSERT_ERR(do_list(me, 1ULL << 10, &cmd), EINVAL);
	/* items other than NEGOTIATE */
	{
		struct kdbus_cmd_list *c = cmd_new(sizeof(*c));

		c->flags = KDBUS_LIST_UNIQUE;
		cmd_add_str(c, KDBUS_ITEM_NAME, "a.b");
		ASSERT_ERR(kdbus_ioctl(me->fd, KDBUS_CMD_LIST, c), EINVAL);
		cmd_free(c);
	}

	kdbus_conn_free(me);
	return TEST_OK;
}

/* a listing that does not fit into the pool fails and leaves nothing */
KDBUS_TEST(list, pool_too_small, 0)
{
	struct kdbus_conn *me, *a;
	struct kdbus_cmd_list cmd;
	char name[64];
	uint64_t rf;
	int i, r;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &me));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	for (i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "org.small.pool.name%d", i);
		ASSERT_OK(kn_acquire(a, name, 0, &rf));
	}

	r = do_list(me, KDBUS_LIST_NAMES, &cmd);
	if (r != -EXFULL && r != -ENOMEM)
		FAIL("LIST into a full pool: %s", kdbus_errname(-r));

	/* the whole pool is still free */
	{
		struct rec w[] = {
			{ a->id, 0, NULL, 0, 0 },
			{ me->id, 0, NULL, 0, 0 },
		};
		RUN(check_list(me, KDBUS_LIST_UNIQUE, w, 2));
	}

	kdbus_conn_free(me);
	kdbus_conn_free(a);
	return TEST_OK;
}
