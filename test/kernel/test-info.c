// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KDBUS_CMD_CONN_INFO, KDBUS_CMD_BUS_CREATOR_INFO (kdbus.connection(7)) and
 * KDBUS_CMD_UPDATE (kdbus.connection(7)).
 */
#include <stdlib.h>
#include <unistd.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

KDBUS_TEST(info, conn_info_basic, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_info *info;
	struct kdbus_cmd_info *cmd = cmd_new(sizeof(*cmd));
	uint64_t off;

	ASSERT_OK(kdbus_hello(env->bus_path, KDBUS_HELLO_ACCEPT_FD, 0,
			      KDBUS_PAGE * 4, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &b));
	/* a asks about b and itself */
	ASSERT_OK(kdbus_conn_info(a, b->id, NULL, 0, &info, &off));
	ASSERT_EQ(info->id, b->id);
	ASSERT_EQ(info->flags, 0);
	ASSERT_EQ(info->size % 8, 0);
	ASSERT_OK(kdbus_free(a, off));
	ASSERT_OK(kdbus_conn_info(b, a->id, NULL, 0, &info, &off));
	ASSERT_EQ(info->id, a->id);
	ASSERT_EQ(info->flags, KDBUS_HELLO_ACCEPT_FD);
	ASSERT_OK(kdbus_free(b, off));

	/* info_size equals the record size; return_flags zeroed */
	cmd->id = a->id;
	cmd->return_flags = 77;
	ASSERT_OK(kdbus_ioctl(a->fd, KDBUS_CMD_CONN_INFO, cmd));
	info = (struct kdbus_info *)(a->pool + cmd->offset);
	ASSERT_EQ(cmd->info_size, info->size);
	ASSERT_EQ(cmd->return_flags, 0);
	ASSERT_OK(kdbus_free(a, cmd->offset));
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	cmd_free(cmd);
	return TEST_OK;
}

KDBUS_TEST(info, conn_info_errors, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_cmd_info *cmd = cmd_new(sizeof(*cmd));
	uint64_t gone;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &b));
	gone = b->id;
	kdbus_conn_free(b);
	/* unknown id, gone id: ENXIO */
	ASSERT_ERR(kdbus_conn_info(a, gone, NULL, 0, NULL, NULL), ENXIO);
	ASSERT_ERR(kdbus_conn_info(a, a->id + 1000, NULL, 0, NULL, NULL), ENXIO);
	ASSERT_ERR(kdbus_conn_info(a, ~0ULL, NULL, 0, NULL, NULL), ENXIO);
	/* id 0 and no name: EINVAL */
	ASSERT_ERR(kdbus_conn_info(a, 0, NULL, 0, NULL, NULL), EINVAL);
	/* a name nobody owns: ESRCH */
	ASSERT_ERR(kdbus_conn_info(a, 0, "org.example.nobody", 0, NULL, NULL),
		   ESRCH);
	ASSERT_ERR(kdbus_conn_info(a, a->id, "org.example.nobody", 0, NULL,
				   NULL), ESRCH);
	/* invalid attach flags (sanitised first, step 2) */
	ASSERT_ERR(kdbus_conn_info(a, a->id, NULL, 1ULL << 14, NULL, NULL),
		   EINVAL);
	ASSERT_ERR(kdbus_conn_info(a, gone, NULL, 1ULL << 14, NULL, NULL),
		   EINVAL);
	ASSERT_OK(kdbus_conn_info(a, a->id, NULL, _KDBUS_ATTACH_ANY, NULL,
				  NULL));
	/* flags: only NEGOTIATE */
	cmd->id = a->id;
	cmd->flags = 1;
	ASSERT_ERR(kdbus_ioctl(a->fd, KDBUS_CMD_CONN_INFO, cmd), EINVAL);
	cmd->flags = KDBUS_FLAG_NEGOTIATE;
	ASSERT_OK(kdbus_ioctl(a->fd, KDBUS_CMD_CONN_INFO, cmd));
	ASSERT_EQ(cmd->flags, 0);
	/* two NAME items */
	cmd->flags = 0;
	cmd_add_str(cmd, KDBUS_ITEM_NAME, "org.example.a");
	cmd_add_str(cmd, KDBUS_ITEM_NAME, "org.example.b");
	ASSERT_ERR(kdbus_ioctl(a->fd, KDBUS_CMD_CONN_INFO, cmd), EINVAL);
	kdbus_conn_free(a);
	cmd_free(cmd);
	return TEST_OK;
}

KDBUS_TEST(info, description, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_info *info;
	struct kdbus_item *it;
	uint64_t off;

	ASSERT_OK(kdbus_hello_desc(env->bus_path, "my-desc.1", 0,
				   _KDBUS_ATTACH_ALL, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &b));
	ASSERT_OK(kdbus_conn_info(b, a->id, NULL,
				  KDBUS_ATTACH_CONN_DESCRIPTION, &info, &off));
	it = kdbus_info_find(info, KDBUS_ITEM_CONN_DESCRIPTION);
	ASSERT(it);
	ASSERT_EQ(it->size, KDBUS_ITEM_HDR + strlen("my-desc.1") + 1);
	ASSERT(!strcmp(it->str, "my-desc.1"));
	ASSERT_OK(kdbus_free(b, off));
	/* not asked for: not there */
	ASSERT_OK(kdbus_conn_info(b, a->id, NULL, 0, &info, &off));
	ASSERT(!kdbus_info_find(info, KDBUS_ITEM_CONN_DESCRIPTION));
	ASSERT(!kdbus_info_find(info, KDBUS_ITEM_TIMESTAMP));
	ASSERT_EQ(info->size, sizeof(struct kdbus_info));
	ASSERT_OK(kdbus_free(b, off));
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* UPDATE of attach_flags_send changes what CONN_INFO reveals */
KDBUS_TEST(info, update_attach_flags, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_info *info;
	uint64_t off;

	ASSERT_OK(kdbus_hello_desc(env->bus_path, "upd", 0,
				   _KDBUS_ATTACH_ALL, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &b));
	ASSERT_OK(kdbus_update_attach(a, 0, 0));
	ASSERT_OK(kdbus_conn_info(b, a->id, NULL, _KDBUS_ATTACH_ALL, &info,
				  &off));
	ASSERT(!kdbus_info_find(info, KDBUS_ITEM_CONN_DESCRIPTION));
	ASSERT_OK(kdbus_free(b, off));
	ASSERT_OK(kdbus_update_attach(a, _KDBUS_ATTACH_ANY, _KDBUS_ATTACH_ANY));
	ASSERT_OK(kdbus_conn_info(b, a->id, NULL, _KDBUS_ATTACH_ALL, &info,
				  &off));
	ASSERT(kdbus_info_find(info, KDBUS_ITEM_CONN_DESCRIPTION));
	ASSERT_OK(kdbus_free(b, off));
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

KDBUS_TEST(info, update_errors, 0)
{
	struct kdbus_conn *a;
	struct kdbus_cmd *cmd;
	struct kdbus_policy_access pa = { KDBUS_POLICY_ACCESS_WORLD,
					  KDBUS_POLICY_SEE, 0 };

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &a));
	/* no items: success, nothing */
	cmd = cmd_new(sizeof(*cmd));
	ASSERT_OK(kdbus_ioctl(a->fd, KDBUS_CMD_UPDATE, cmd));
	/* unknown flags */
	cmd->flags = 1;
	ASSERT_ERR(kdbus_ioctl(a->fd, KDBUS_CMD_UPDATE, cmd), EINVAL);
	cmd->flags = KDBUS_FLAG_NEGOTIATE;
	ASSERT_OK(kdbus_ioctl(a->fd, KDBUS_CMD_UPDATE, cmd));
	ASSERT_EQ(cmd->flags, 0);
	cmd_free(cmd);
	/* invalid masks */
	ASSERT_ERR(kdbus_update_attach(a, 1ULL << 14, 0), EINVAL);
	ASSERT_ERR(kdbus_update_attach(a, 0, 1ULL << 20), EINVAL);
	/* wrong payload size */
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_item(cmd, KDBUS_ITEM_ATTACH_FLAGS_SEND, &pa, 4);
	ASSERT_ERR(kdbus_ioctl(a->fd, KDBUS_CMD_UPDATE, cmd), EINVAL);
	cmd_free(cmd);
	/* duplicate */
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_u64(cmd, KDBUS_ITEM_ATTACH_FLAGS_RECV, 0);
	cmd_add_u64(cmd, KDBUS_ITEM_ATTACH_FLAGS_RECV, 0);
	ASSERT_ERR(kdbus_ioctl(a->fd, KDBUS_CMD_UPDATE, cmd), EINVAL);
	cmd_free(cmd);
	/* policy items on an ordinary connection: EOPNOTSUPP */
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_str(cmd, KDBUS_ITEM_NAME, "org.example.pol");
	cmd_add_item(cmd, KDBUS_ITEM_POLICY_ACCESS, &pa, sizeof(pa));
	ASSERT_ERR(kdbus_ioctl(a->fd, KDBUS_CMD_UPDATE, cmd), EOPNOTSUPP);
	cmd_free(cmd);
	/* an item UPDATE never takes */
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_str(cmd, KDBUS_ITEM_CONN_DESCRIPTION, "x");
	ASSERT_ERR(kdbus_ioctl(a->fd, KDBUS_CMD_UPDATE, cmd), EINVAL);
	cmd_free(cmd);
	kdbus_conn_free(a);
	return TEST_OK;
}

KDBUS_TEST(info, bus_creator_info, 0)
{
	struct kdbus_cmd_info *cmd = cmd_new(sizeof(*cmd));
	struct kdbus_conn *a;
	struct kdbus_info *info;
	struct kdbus_item *it;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4, &a));
	cmd->id = 12345;	/* ignored */
	ASSERT_OK(kdbus_ioctl(a->fd, KDBUS_CMD_BUS_CREATOR_INFO, cmd));
	info = (struct kdbus_info *)(a->pool + cmd->offset);
	ASSERT_EQ(cmd->info_size, info->size);
	ASSERT_EQ(info->size % 8, 0);
	ASSERT_EQ(info->flags, KDBUS_MAKE_ACCESS_WORLD);
	/* bus and connection ids come from one domain counter */
	ASSERT(info->id != 0 && info->id != a->id);
	ASSERT(info->id < a->id);
	it = kdbus_info_find(info, KDBUS_ITEM_MAKE_NAME);
	ASSERT(it);
	ASSERT(!strcmp(it->str, env->bus_name));
	ASSERT_EQ(it->size, KDBUS_ITEM_HDR + strlen(env->bus_name) + 1);
	/* no ATTACH_FLAGS_SEND at BUS_MAKE: no creator metadata */
	ASSERT(!kdbus_info_find(info, KDBUS_ITEM_CREDS));
	ASSERT_OK(kdbus_free(a, cmd->offset));
	/* flags/attach errors */
	cmd->size = sizeof(*cmd);
	cmd->attach_flags = 1ULL << 30;
	ASSERT_ERR(kdbus_ioctl(a->fd, KDBUS_CMD_BUS_CREATOR_INFO, cmd), EINVAL);
	cmd->attach_flags = 0;
	cmd->flags = 2;
	ASSERT_ERR(kdbus_ioctl(a->fd, KDBUS_CMD_BUS_CREATOR_INFO, cmd), EINVAL);
	cmd->flags = 0;
	cmd_add_str(cmd, KDBUS_ITEM_NAME, "org.example.x");
	ASSERT_ERR(kdbus_ioctl(a->fd, KDBUS_CMD_BUS_CREATOR_INFO, cmd), EINVAL);
	kdbus_conn_free(a);
	cmd_free(cmd);
	return TEST_OK;
}
