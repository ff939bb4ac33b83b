// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Conformance audit of CONN_INFO, BUS_CREATOR_INFO (kdbus.connection(7))
 * and UPDATE: record layout and sizes, attach masks at HELLO,
 * negotiation that performs no lookup, and UPDATE's all-or-nothing rule.
 */
#include <stdlib.h>
#include <unistd.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

#define CONFORM_TEST(_name, _flags)						\
	static int conform_info_fn_##_name(struct kdbus_test_env *env);	\
	static const struct kdbus_test conform_info_t_##_name = {		\
		.group = "conform-info", .name = #_name,				\
		.fn = conform_info_fn_##_name, .flags = (_flags),		\
		.file = __FILE__, .line = __LINE__,				\
	};									\
	static const struct kdbus_test *conform_info_p_##_name			\
	__attribute__((used, section("kdbus_tests"), aligned(sizeof(void *)))) = \
		&conform_info_t_##_name;						\
	static int conform_info_fn_##_name(					\
		struct kdbus_test_env *env __attribute__((unused)))

/* the items of a record cover it exactly, each 8-aligned, zero padded */
static int check_chain(struct kdbus_info *info)
{
	uint8_t *p = (uint8_t *)info->items, *end = (uint8_t *)info + info->size;

	ASSERT_EQ(info->size % 8, 0);
	while (p < end) {
		struct kdbus_item *it = (struct kdbus_item *)p;
		uint64_t i;

		ASSERT(it->size >= KDBUS_ITEM_HDR);
		ASSERT(p + KDBUS_ALIGN8(it->size) <= end);
		ASSERT(it->type != KDBUS_ITEM_TIMESTAMP);
		for (i = it->size; i < KDBUS_ALIGN8(it->size); i++)
			ASSERT_EQ(p[i], 0);
		p += KDBUS_ALIGN8(it->size);
	}
	ASSERT(p == end);
	return TEST_OK;
}

/* kdbus.connection(7): exact record layout */
CONFORM_TEST(conn_info_layout, 0)
{
	struct kdbus_cmd_info *cmd = cmd_new(sizeof(*cmd));
	struct kdbus_conn *a, *b;
	struct kdbus_info *info;
	struct kdbus_item *it;

	ASSERT_OK(kdbus_hello_desc(env->bus_path, "abc", KDBUS_HELLO_ACCEPT_FD,
				   _KDBUS_ATTACH_ALL, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &b));
	cmd->id = a->id;
	cmd->attach_flags = KDBUS_ATTACH_CONN_DESCRIPTION;
	ASSERT_OK(kdbus_ioctl(b->fd, KDBUS_CMD_CONN_INFO, cmd));
	info = (struct kdbus_info *)(b->pool + cmd->offset);
	ASSERT_EQ(info->size, 24 + 24);
	ASSERT_EQ(cmd->info_size, 48);
	ASSERT_EQ(info->id, a->id);
	ASSERT_EQ(info->flags, KDBUS_HELLO_ACCEPT_FD);
	it = info->items;
	ASSERT_EQ(it->size, 20);
	ASSERT_EQ(it->type, KDBUS_ITEM_CONN_DESCRIPTION);
	ASSERT(!memcmp(it->str, "abc", 4));
	RUN(check_chain(info));
	ASSERT_OK(kdbus_free(b, cmd->offset));
	/* everything: never a TIMESTAMP, chain well-formed */
	cmd->size = sizeof(*cmd);
	cmd->attach_flags = _KDBUS_ATTACH_ANY;
	ASSERT_OK(kdbus_ioctl(b->fd, KDBUS_CMD_CONN_INFO, cmd));
	info = (struct kdbus_info *)(b->pool + cmd->offset);
	ASSERT_EQ(cmd->info_size, info->size);
	RUN(check_chain(info));
	ASSERT(kdbus_info_find(info, KDBUS_ITEM_CONN_DESCRIPTION));
	ASSERT_OK(kdbus_free(b, cmd->offset));
	cmd_free(cmd);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* kdbus.connection(7): the target's HELLO attach_flags_send limits it */
CONFORM_TEST(attach_send_at_hello, 0)
{
	struct kdbus_conn *a, *a2, *b;
	struct kdbus_info *info;
	uint64_t off;

	ASSERT_OK(kdbus_hello_desc(env->bus_path, "hidden", 0, 0, &a));
	ASSERT_OK(kdbus_hello_desc(env->bus_path, "shown", 0,
				   KDBUS_ATTACH_CONN_DESCRIPTION, &a2));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &b));
	ASSERT_OK(kdbus_conn_info(b, a->id, NULL, _KDBUS_ATTACH_ANY, &info,
				  &off));
	ASSERT(!kdbus_info_find(info, KDBUS_ITEM_CONN_DESCRIPTION));
	ASSERT_OK(kdbus_free(b, off));
	ASSERT_OK(kdbus_conn_info(b, a2->id, NULL, _KDBUS_ATTACH_ANY, &info,
				  &off));
	ASSERT(kdbus_info_find(info, KDBUS_ITEM_CONN_DESCRIPTION));
	ASSERT_OK(kdbus_free(b, off));
	/* ... and the request's mask too */
	ASSERT_OK(kdbus_conn_info(b, a2->id, NULL, KDBUS_ATTACH_CREDS, &info,
				  &off));
	ASSERT(!kdbus_info_find(info, KDBUS_ITEM_CONN_DESCRIPTION));
	ASSERT_OK(kdbus_free(b, off));
	kdbus_conn_free(a);
	kdbus_conn_free(a2);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* kdbus.bus(7): record layout of BUS_CREATOR_INFO, flags verbatim */
CONFORM_TEST(bus_creator_info_layout, KDBUS_TEST_NO_BUS)
{
	struct kdbus_cmd_info *cmd = cmd_new(sizeof(*cmd));
	char name[64], path[320];
	struct kdbus_conn *c;
	struct kdbus_info *info;
	struct kdbus_item *it;
	int bus;

	bus = kdbus_bus_new(KDBUS_MAKE_ACCESS_GROUP | KDBUS_MAKE_ACCESS_WORLD,
			    name, sizeof(name));
	ASSERT_OK(bus);
	snprintf(path, sizeof(path), "%s/%s/bus", KDBUS_MOUNT, name);
	ASSERT_OK(kdbus_hello(path, 0, 0, KDBUS_PAGE * 4, &c));
	ASSERT_OK(kdbus_ioctl(c->fd, KDBUS_CMD_BUS_CREATOR_INFO, cmd));
	info = (struct kdbus_info *)(c->pool + cmd->offset);
	ASSERT_EQ(info->size, 24 + KDBUS_ALIGN8(16 + strlen(name) + 1));
	ASSERT_EQ(cmd->info_size, info->size);
	ASSERT_EQ(info->flags, 3);
	ASSERT(info->id < c->id);
	it = info->items;
	ASSERT_EQ(it->type, KDBUS_ITEM_MAKE_NAME);
	ASSERT_EQ(it->size, 16 + strlen(name) + 1);
	RUN(check_chain(info));
	ASSERT_OK(kdbus_free(c, cmd->offset));
	/* ~0 is a valid mask */
	cmd->attach_flags = _KDBUS_ATTACH_ANY;
	ASSERT_OK(kdbus_ioctl(c->fd, KDBUS_CMD_BUS_CREATOR_INFO, cmd));
	ASSERT_OK(kdbus_free(c, cmd->offset));
	/* negotiation: no slice, no output */
	cmd->flags = KDBUS_FLAG_NEGOTIATE;
	cmd->offset = 0x777;
	ASSERT_OK(kdbus_ioctl(c->fd, KDBUS_CMD_BUS_CREATOR_INFO, cmd));
	ASSERT_EQ(cmd->flags, 0);
	ASSERT_EQ(cmd->offset, 0x777);
	cmd_free(cmd);
	kdbus_conn_free(c);
	close(bus);
	return TEST_OK;
}

/* kdbus(7): a negotiating CONN_INFO performs no lookup (id 0, no name) */
CONFORM_TEST(conn_info_negotiate_no_lookup, 0)
{
	struct kdbus_cmd_info ci = { .size = sizeof(ci),
				     .flags = KDBUS_FLAG_NEGOTIATE };
	struct kdbus_conn *c;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	ci.offset = 0x777;
	ASSERT_OK(kdbus_ioctl(c->fd, KDBUS_CMD_CONN_INFO, &ci));
	ASSERT_EQ(ci.offset, 0x777);
	ci.flags = KDBUS_FLAG_NEGOTIATE;
	ci.id = 123456789;
	ASSERT_OK(kdbus_ioctl(c->fd, KDBUS_CMD_CONN_INFO, &ci));
	kdbus_conn_free(c);
	return TEST_OK;
}

static int desc_visible(struct kdbus_conn *b, uint64_t id)
{
	struct kdbus_info *info;
	uint64_t off;
	int r;

	r = kdbus_conn_info(b, id, NULL, _KDBUS_ATTACH_ANY, &info, &off);
	if (r < 0)
		return r;
	r = kdbus_info_find(info, KDBUS_ITEM_CONN_DESCRIPTION) != NULL;
	kdbus_free(b, off);
	return r;
}

/* kdbus.connection(7): all checks happen before any change */
CONFORM_TEST(update_all_or_nothing, 0)
{
	struct kdbus_policy_access pa = { KDBUS_POLICY_ACCESS_WORLD,
					  KDBUS_POLICY_SEE, 0 };
	struct kdbus_conn *a, *b;
	struct kdbus_cmd *cmd;

	ASSERT_OK(kdbus_hello_desc(env->bus_path, "atom", 0, _KDBUS_ATTACH_ALL,
				   &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &b));
	ASSERT_EQ(desc_visible(b, a->id), 1);
	/* valid SEND, invalid RECV */
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_u64(cmd, KDBUS_ITEM_ATTACH_FLAGS_SEND, 0);
	cmd_add_u64(cmd, KDBUS_ITEM_ATTACH_FLAGS_RECV, 1ULL << 40);
	ASSERT_ERR(kdbus_ioctl(a->fd, KDBUS_CMD_UPDATE, cmd), EINVAL);
	cmd_free(cmd);
	ASSERT_EQ(desc_visible(b, a->id), 1);
	/* valid SEND, policy items an ordinary connection may not set */
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_u64(cmd, KDBUS_ITEM_ATTACH_FLAGS_SEND, 0);
	cmd_add_str(cmd, KDBUS_ITEM_NAME, "org.example.atom");
	cmd_add_item(cmd, KDBUS_ITEM_POLICY_ACCESS, &pa, sizeof(pa));
	ASSERT_ERR(kdbus_ioctl(a->fd, KDBUS_CMD_UPDATE, cmd), EOPNOTSUPP);
	cmd_free(cmd);
	ASSERT_EQ(desc_visible(b, a->id), 1);
	/* either policy item alone */
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_u64(cmd, KDBUS_ITEM_ATTACH_FLAGS_SEND, 0);
	cmd_add_item(cmd, KDBUS_ITEM_POLICY_ACCESS, &pa, sizeof(pa));
	ASSERT_ERR(kdbus_ioctl(a->fd, KDBUS_CMD_UPDATE, cmd), EOPNOTSUPP);
	cmd_free(cmd);
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_str(cmd, KDBUS_ITEM_NAME, "org.example.atom");
	ASSERT_ERR(kdbus_ioctl(a->fd, KDBUS_CMD_UPDATE, cmd), EOPNOTSUPP);
	cmd_free(cmd);
	ASSERT_EQ(desc_visible(b, a->id), 1);
	/* a negotiating UPDATE changes nothing */
	cmd = cmd_new(sizeof(*cmd));
	cmd->flags = KDBUS_FLAG_NEGOTIATE;
	cmd_add_u64(cmd, KDBUS_ITEM_ATTACH_FLAGS_SEND, 0);
	ASSERT_OK(kdbus_ioctl(a->fd, KDBUS_CMD_UPDATE, cmd));
	cmd_free(cmd);
	ASSERT_EQ(desc_visible(b, a->id), 1);
	/* now for real */
	ASSERT_OK(kdbus_update_attach(a, 0, 0));
	ASSERT_EQ(desc_visible(b, a->id), 0);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* kdbus.connection(7): policy items on a monitor: EOPNOTSUPP */
CONFORM_TEST(update_monitor_policy, 0)
{
	struct kdbus_conn *m;
	struct kdbus_cmd *cmd = cmd_new(sizeof(*cmd));

	ASSERT_OK(kdbus_hello(env->bus_path, KDBUS_HELLO_MONITOR, 0,
			      KDBUS_PAGE, &m));
	cmd_add_str(cmd, KDBUS_ITEM_NAME, "org.example.mon");
	ASSERT_ERR(kdbus_ioctl(m->fd, KDBUS_CMD_UPDATE, cmd), EOPNOTSUPP);
	cmd_free(cmd);
	kdbus_conn_free(m);
	return TEST_OK;
}
