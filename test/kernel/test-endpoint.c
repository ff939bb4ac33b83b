// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Custom endpoints (kdbus.endpoint(7), kdbus.policy(7)): ENDPOINT_MAKE and
 * ENDPOINT_UPDATE with every errno, file modes honoured by open(), a
 * sandboxed client confined to what the endpoint grants, and the
 * endpoint's death with its owner's descriptor.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "kdbus-test.h"
#include "kdbus-util.h"
#include "test-policy.h"

#define UID_A	1000
#define GID_A	1000
#define UID_B	1001
#define GID_B	1001

#define KP_DO(w, op, id, name, arg) kp_do((w), (op), (id), (name), (arg), \
				       NULL, NULL, NULL, 0)

/* "<bus dir>/<name>" for an endpoint called name */
static void ep_path(char *buf, size_t len, const char *bus_path,
		    const char *name)
{
	const char *slash = strrchr(bus_path, '/');

	snprintf(buf, len, "%.*s/%s", (int)(slash - bus_path), bus_path,
		 name);
}

static int ep_update_one(int fd, const char *name, uint64_t type,
			 uint64_t access, uint64_t id)
{
	struct kdbus_cmd *cmd = cmd_new(sizeof(*cmd));
	int r;

	if (name)
		kp_add_name(cmd, name);
	kp_add_access(cmd, type, access, id);
	r = kp_ep_update(fd, cmd);
	cmd_free(cmd);
	return r;
}

/* the errnos of ENDPOINT_MAKE, in the order of kdbus.endpoint(7) */
KDBUS_TEST(endpoint, make_errors, KDBUS_TEST_NO_BUS)
{
	char path[256], name[64], epp[320], longname[80];
	struct kdbus_cmd *cmd;
	int bus_fd, ep_fd, fd;
	pid_t pid;

	bus_fd = kp_bus_world(path, sizeof(path));
	ASSERT_OK(bus_fd);

	kdbus_unique_name(name, sizeof(name), "ep");
	ep_fd = kp_ep_make(path, 0, name);
	ASSERT_OK(ep_fd);

	/* non-owner: EPERM, before parsing and also for negotiation */
	pid = kdbus_fork_as(UID_A, GID_A);
	ASSERT(pid >= 0);
	if (pid == 0) {
		char n2[64];

		snprintf(n2, sizeof(n2), "%u-x", UID_A);
		KP_ASSERT_RES(kp_ep_make(path, 0, n2), -EPERM);
		KP_ASSERT_RES(kp_ep_make(path, KDBUS_FLAG_NEGOTIATE, NULL), -EPERM);
		KP_ASSERT_RES(kp_ep_make(path, 1ULL << 20, NULL), -EPERM);
		_exit(TEST_OK);
	}
	ASSERT_EQ(kdbus_wait_child(pid), TEST_OK);

	/* on a custom endpoint it always fails, even for root */
	ep_path(epp, sizeof(epp), path, name);
	{
		char n2[64];

		kdbus_unique_name(n2, sizeof(n2), "ep");
		ASSERT_ERR(kp_ep_make(epp, 0, n2), EPERM);
	}

	/* negotiation answers with the two access flags */
	fd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT(fd >= 0);
	cmd = cmd_new(sizeof(*cmd));
	cmd->flags = KDBUS_FLAG_NEGOTIATE;
	ASSERT_OK(kdbus_ioctl(fd, KDBUS_CMD_ENDPOINT_MAKE, cmd));
	ASSERT_EQ(cmd->flags, KDBUS_MAKE_ACCESS_GROUP | KDBUS_MAKE_ACCESS_WORLD);
	cmd_free(cmd);
	close(fd);

	/* parser: unknown flag, missing name, policy items */
	ASSERT_ERR(kp_ep_make(path, 1ULL << 5, name), EINVAL);
	ASSERT_ERR(kp_ep_make(path, 0, NULL), EINVAL);
	fd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT(fd >= 0);
	cmd = cmd_new(sizeof(*cmd));
	{
		char n2[64];

		kdbus_unique_name(n2, sizeof(n2), "ep");
		cmd_add_str(cmd, KDBUS_ITEM_MAKE_NAME, n2);
	}
	kp_add_name(cmd, "org.kp.x");
	kp_add_access(cmd, KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_SEE, 0);
	ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_ENDPOINT_MAKE, cmd), EINVAL);
	cmd_free(cmd);
	close(fd);

	/* name rules: uid prefix, length, charset, collision */
	ASSERT_ERR(kp_ep_make(path, 0, "bus"), EINVAL);
	ASSERT_ERR(kp_ep_make(path, 0, "1000-notmine"), EINVAL);
	ASSERT_ERR(kp_ep_make(path, 0, "0-bad/slash"), EINVAL);
	memset(longname, 'a', sizeof(longname));
	memcpy(longname, "0-", 2);
	longname[64] = 0;
	ASSERT_ERR(kp_ep_make(path, 0, longname), ENAMETOOLONG);
	ASSERT_ERR(kp_ep_make(path, 0, name), EEXIST);

	/* the EP_OWNER handle: a state of its own */
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_str(cmd, KDBUS_ITEM_MAKE_NAME, name);
	ASSERT_ERR(kdbus_ioctl(ep_fd, KDBUS_CMD_ENDPOINT_MAKE, cmd), EBADFD);
	cmd_free(cmd);
	{
		struct kdbus_cmd_hello h = {
			.size = sizeof(h), .pool_size = KDBUS_PAGE,
		};
		struct kdbus_cmd_list l = { .size = sizeof(l) };

		ASSERT_ERR(kdbus_ioctl(ep_fd, KDBUS_CMD_HELLO, &h), EBADFD);
		ASSERT_ERR(kdbus_ioctl(ep_fd, KDBUS_CMD_LIST, &l), EBADFD);
	}
	/* ENDPOINT_UPDATE on anything but an EP_OWNER handle: EBADFD */
	{
		struct kdbus_cmd c = { .size = sizeof(c) };
		struct kdbus_conn *conn;

		fd = open(path, O_RDWR | O_CLOEXEC);
		ASSERT(fd >= 0);
		ASSERT_ERR(kdbus_ioctl(fd, KDBUS_CMD_ENDPOINT_UPDATE, &c),
			   EBADFD);
		close(fd);
		ASSERT_OK(kdbus_hello(path, 0, 0, KDBUS_DEFAULT_POOL, &conn));
		ASSERT_ERR(kdbus_ioctl(conn->fd, KDBUS_CMD_ENDPOINT_UPDATE,
				       &c), EBADFD);
		kdbus_conn_free(conn);
		ASSERT_OK(kdbus_ioctl(ep_fd, KDBUS_CMD_ENDPOINT_UPDATE, &c));
	}

	close(ep_fd);
	close(bus_fd);
	return TEST_OK;
}

/* ENDPOINT_UPDATE errors (kdbus.policy(7)); the old policy stays */
KDBUS_TEST(endpoint, update_errors, KDBUS_TEST_NO_BUS)
{
	char path[256], name[64], epp[320];
	struct kdbus_conn *svc;
	struct kdbus_cmd *cmd;
	struct kp_worker w;
	int bus_fd, ep_fd;
	uint64_t val;

	bus_fd = kp_bus_world(path, sizeof(path));
	ASSERT_OK(bus_fd);
	ASSERT_OK(kdbus_hello(path, 0, 0, KDBUS_DEFAULT_POOL, &svc));
	ASSERT_OK(kp_acquire(svc, "org.kp.svc", 0));

	kdbus_unique_name(name, sizeof(name), "ep");
	ep_fd = kp_ep_make(path, KDBUS_MAKE_ACCESS_WORLD, name);
	ASSERT_OK(ep_fd);
	ep_path(epp, sizeof(epp), path, name);

	/* negotiation: no flags; items NAME, POLICY_ACCESS */
	cmd = cmd_new(sizeof(*cmd));
	cmd->flags = KDBUS_FLAG_NEGOTIATE;
	ASSERT_OK(kp_ep_update(ep_fd, cmd));
	ASSERT_EQ(cmd->flags, 0);
	cmd_free(cmd);

	ASSERT_OK(ep_update_one(ep_fd, "org.kp.svc", KDBUS_POLICY_ACCESS_WORLD,
				KDBUS_POLICY_SEE, 0));
	ASSERT_OK(kp_worker_start(&w, epp, 0, 0, KP_NO_GROUP, 0));
	ASSERT_EQ(kp_do(&w, KP_INFO, 0, "org.kp.svc", 0, &val, NULL, NULL, 0),
		  0);

	ASSERT_ERR(ep_update_one(ep_fd, NULL, KDBUS_POLICY_ACCESS_WORLD,
				 KDBUS_POLICY_SEE, 0), EINVAL);
	ASSERT_ERR(ep_update_one(ep_fd, "org.kp.svc", 0, KDBUS_POLICY_SEE, 0),
		   EINVAL);
	ASSERT_ERR(ep_update_one(ep_fd, "org.kp.svc", 9, KDBUS_POLICY_SEE, 0),
		   EINVAL);
	ASSERT_ERR(ep_update_one(ep_fd, "org.kp.svc",
				 KDBUS_POLICY_ACCESS_WORLD, 3, 0), EINVAL);
	ASSERT_ERR(ep_update_one(ep_fd, "org.kp.svc", KDBUS_POLICY_ACCESS_USER,
				 KDBUS_POLICY_SEE, 0xffffffffULL), EINVAL);
	ASSERT_ERR(ep_update_one(ep_fd, "org.kp.svc",
				 KDBUS_POLICY_ACCESS_GROUP, KDBUS_POLICY_SEE,
				 0xffffffffULL), EINVAL);
	ASSERT_ERR(ep_update_one(ep_fd, "org", KDBUS_POLICY_ACCESS_WORLD,
				 KDBUS_POLICY_SEE, 0), EINVAL);
	ASSERT_ERR(ep_update_one(ep_fd, "org.*.x", KDBUS_POLICY_ACCESS_WORLD,
				 KDBUS_POLICY_SEE, 0), EINVAL);

	/* the same name twice in one upload: EEXIST */
	cmd = cmd_new(sizeof(*cmd));
	kp_add_name(cmd, "org.kp.other");
	kp_add_name(cmd, "org.kp.other");
	ASSERT_ERR(kp_ep_update(ep_fd, cmd), EEXIST);
	cmd_free(cmd);

	/* items other than NAME and POLICY_ACCESS: EINVAL */
	cmd = cmd_new(sizeof(*cmd));
	cmd_add_u64(cmd, KDBUS_ITEM_ATTACH_FLAGS_SEND, 0);
	ASSERT_ERR(kp_ep_update(ep_fd, cmd), EINVAL);
	cmd_free(cmd);

	/* after all of that the old policy is still in force */
	ASSERT_EQ(kp_do(&w, KP_INFO, 0, "org.kp.svc", 0, &val, NULL, NULL, 0),
		  0);
	ASSERT_EQ(val, svc->id);

	/* many names, wildcards and a name and its wildcard: all fine */
	cmd = cmd_new(sizeof(*cmd));
	kp_add_name(cmd, "org.kp.svc");
	kp_add_access(cmd, KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_SEE, 0);
	kp_add_name(cmd, "org.kp.*");
	kp_add_access(cmd, KDBUS_POLICY_ACCESS_USER, KDBUS_POLICY_OWN, 0);
	kp_add_name(cmd, "org.kp");
	kp_add_name(cmd, "com.example.a");
	kp_add_name(cmd, "com.example.b");
	kp_add_access(cmd, KDBUS_POLICY_ACCESS_GROUP, KDBUS_POLICY_TALK, 0);
	ASSERT_OK(kp_ep_update(ep_fd, cmd));
	cmd_free(cmd);
	ASSERT_EQ(kp_do(&w, KP_INFO, 0, "org.kp.svc", 0, NULL, NULL, NULL, 0),
		  0);

	/* an empty upload clears the policy */
	cmd = cmd_new(sizeof(*cmd));
	ASSERT_OK(kp_ep_update(ep_fd, cmd));
	cmd_free(cmd);
	ASSERT_EQ(kp_do(&w, KP_INFO, 0, "org.kp.svc", 0, NULL, NULL, NULL, 0),
		  -ESRCH);

	RUN(kp_worker_stop(&w));
	kdbus_conn_free(svc);
	close(ep_fd);
	close(bus_fd);
	return TEST_OK;
}

/* modes and owners of endpoint files (kdbus.fs(7)), checked by open() */
KDBUS_TEST(endpoint, access_modes, KDBUS_TEST_NO_BUS)
{
	static const struct {
		uint64_t flags;
		mode_t mode;
	} cases[] = {
		{ 0, 0600 },
		{ KDBUS_MAKE_ACCESS_GROUP, 0660 },
		{ KDBUS_MAKE_ACCESS_WORLD, 0666 },
		{ KDBUS_MAKE_ACCESS_GROUP | KDBUS_MAKE_ACCESS_WORLD, 0666 },
	};
	char path[256];
	int bus_fd;

	/* on a bus of uid 1000, its endpoints belong to 1000/1000 */
	{
		pid_t pid = kdbus_fork_as(UID_A, GID_A);

		ASSERT(pid >= 0);
		if (pid == 0) {
			char bp[256], n[64], epp[320];
			struct stat st;
			int fd, ep;

			fd = kp_bus_world(bp, sizeof(bp));
			if (fd < 0)
				_exit(TEST_FAIL);
			kdbus_unique_name(n, sizeof(n), "m");
			ep = kp_ep_make(bp, KDBUS_MAKE_ACCESS_GROUP, n);
			if (ep < 0) {
				DIAG("ENDPOINT_MAKE as 1000: %s",
				     kdbus_errname(-ep));
				_exit(ep == -ENOTTY ? TEST_SKIP : TEST_FAIL);
			}
			ep_path(epp, sizeof(epp), bp, n);
			if (stat(epp, &st) < 0 || !S_ISREG(st.st_mode) ||
			    (st.st_mode & 07777) != 0660 ||
			    st.st_uid != UID_A || st.st_gid != GID_A) {
				DIAG("%s: mode %o uid %u gid %u", epp,
				     st.st_mode, st.st_uid, st.st_gid);
				_exit(TEST_FAIL);
			}
			close(ep);
			close(fd);
			_exit(TEST_OK);
		}
		RUN(kdbus_wait_child(pid));
	}

	/* root makes the endpoints; users 1000/1001 try to open them */
	bus_fd = kp_bus_world(path, sizeof(path));
	ASSERT_OK(bus_fd);
	for (size_t i = 0; i < 4; i++) {
		bool grp = cases[i].mode & 0060, world = cases[i].mode & 0006;
		char n[64], epp[320];
		struct kp_worker w;
		struct stat st;
		int ep;

		kdbus_unique_name(n, sizeof(n), "m");
		ep = kp_ep_make(path, cases[i].flags, n);
		ASSERT_OK(ep);
		ep_path(epp, sizeof(epp), path, n);
		ASSERT(stat(epp, &st) == 0);
		ASSERT_EQ(st.st_mode & 07777, cases[i].mode);
		ASSERT_EQ(st.st_uid, 0);
		ASSERT_EQ(st.st_gid, 0);

		/* group 0 as a supplementary group */
		KP_ASSERT_RES(kp_worker_start(&w, epp, UID_A, GID_A, 0, 0),
			   grp ? 0 : -EACCES);
		RUN(kp_worker_stop(&w));
		KP_ASSERT_RES(kp_worker_start(&w, epp, UID_B, GID_B, KP_NO_GROUP,
					   0), world ? 0 : -EACCES);
		RUN(kp_worker_stop(&w));
		close(ep);
	}

	close(bus_fd);
	return TEST_OK;
}

/*
 * A new endpoint grants nothing: its clients see no name and no named
 * peer, talk to nobody and own nothing, whatever the bus allows and
 * whoever they are (even root is no owner there).
 */
KDBUS_TEST(endpoint, empty_policy, KDBUS_TEST_NO_BUS)
{
	char path[256], name[64], epp[320];
	struct kdbus_conn *svc, *plain;
	struct kp_worker w, peer;
	int bus_fd, ep_fd;
	uint64_t val, bare;

	bus_fd = kp_bus_world(path, sizeof(path));
	ASSERT_OK(bus_fd);
	ASSERT_OK(kdbus_hello(path, 0, 0, KDBUS_DEFAULT_POOL, &svc));
	ASSERT_OK(kp_acquire(svc, "org.kp.svc", 0));
	ASSERT_OK(kdbus_hello(path, 0, 0, KDBUS_DEFAULT_POOL, &plain));

	kdbus_unique_name(name, sizeof(name), "ep");
	ep_fd = kp_ep_make(path, KDBUS_MAKE_ACCESS_WORLD, name);
	ASSERT_OK(ep_fd);
	ep_path(epp, sizeof(epp), path, name);

	/* root through the endpoint */
	ASSERT_OK(kp_worker_start(&w, epp, 0, 0, KP_NO_GROUP, 0));
	ASSERT_OK(kp_worker_start(&peer, epp, 0, 0, KP_NO_GROUP, 0));

	KP_ASSERT_RES(KP_DO(&w, KP_SEND, 0, "org.kp.svc", 1), -EPERM);
	KP_ASSERT_RES(KP_DO(&w, KP_SEND, svc->id, NULL, 2), -EPERM);
	/* not even to a nameless peer of its own uid */
	KP_ASSERT_RES(KP_DO(&w, KP_SEND, plain->id, NULL, 3), -EPERM);
	KP_ASSERT_RES(KP_DO(&w, KP_SEND, peer.id, NULL, 4), -EPERM);
	/* destination errors still come first */
	KP_ASSERT_RES(KP_DO(&w, KP_SEND, 0, "org.kp.none", 5), -ESRCH);
	KP_ASSERT_RES(KP_DO(&w, KP_ACQUIRE, 0, "org.kp.mine", 0), -EPERM);

	/* invisible: ESRCH by name, ENXIO by id, omitted from LIST */
	KP_ASSERT_RES(KP_DO(&w, KP_INFO, 0, "org.kp.svc", 0), -ESRCH);
	KP_ASSERT_RES(KP_DO(&w, KP_INFO, svc->id, NULL, 0), -ENXIO);
	KP_ASSERT_RES(KP_DO(&w, KP_INFO, plain->id, NULL, 0), -ENXIO);
	KP_ASSERT_RES(kp_do(&w, KP_LIST, 0, "org.kp.svc", 0, &val, &bare, NULL,
			 0), 0);
	ASSERT_EQ(val, 0);
	/* bare records are not filtered; svc (named) is not listed */
	ASSERT_EQ(bare, 3);

	/* the endpoint's clients are reachable from the default endpoint */
	ASSERT_OK(kdbus_send(svc, w.id, 6, 0, 0, 0, "x", 1));
	KP_ASSERT_RES(KP_DO(&w, KP_COUNT, 0, NULL, 0), 1);

	/* special kinds through a custom endpoint */
	{
		struct kdbus_conn *c;

		ASSERT_ERR(kdbus_hello(epp, KDBUS_HELLO_MONITOR, 0,
				       KDBUS_DEFAULT_POOL, &c), EOPNOTSUPP);
		ASSERT_ERR(kp_hello_policy(epp, KDBUS_HELLO_POLICY_HOLDER,
					   "org.kp.x", NULL, 0, &c), EPERM);
		ASSERT_ERR(kp_hello_policy(epp, KDBUS_HELLO_ACTIVATOR,
					   "org.kp.x", NULL, 0, &c), EPERM);
	}

	RUN(kp_worker_stop(&peer));
	RUN(kp_worker_stop(&w));
	kdbus_conn_free(plain);
	kdbus_conn_free(svc);
	close(ep_fd);
	close(bus_fd);
	return TEST_OK;
}

/*
 * A sandboxed client (uid 1000) on an endpoint that grants TALK on one
 * name and OWN on another: it reaches and sees only those, and both
 * levels (bus and endpoint) must agree for TALK and OWN.
 */
KDBUS_TEST(endpoint, confine_to_one_name, KDBUS_TEST_NO_BUS)
{
	static const uint64_t bus_world_own[][3] = {
		{ KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_OWN, 0 },
	};
	char path[256], name[64], epp[320], str[256];
	struct kdbus_conn *allowed, *hidden, *holder, *late;
	struct kp_worker w, outside;
	struct kdbus_cmd *cmd;
	uint64_t val, val2;
	int bus_fd, ep_fd;

	bus_fd = kp_bus_world(path, sizeof(path));
	ASSERT_OK(bus_fd);
	/* the bus lets everybody own and talk to org.kp.* */
	ASSERT_OK(kp_hello_policy(path, KDBUS_HELLO_POLICY_HOLDER, "org.kp.*",
				  bus_world_own, 1, &holder));
	ASSERT_OK(kdbus_hello(path, 0, 0, KDBUS_DEFAULT_POOL, &allowed));
	ASSERT_OK(kdbus_hello(path, 0, 0, KDBUS_DEFAULT_POOL, &hidden));
	ASSERT_OK(kp_acquire(allowed, "org.kp.allowed", 0));
	ASSERT_OK(kp_acquire(hidden, "org.kp.hidden", 0));
	ASSERT_OK(kp_match_all(allowed));

	kdbus_unique_name(name, sizeof(name), "sandbox");
	ep_fd = kp_ep_make(path, KDBUS_MAKE_ACCESS_WORLD, name);
	ASSERT_OK(ep_fd);
	ep_path(epp, sizeof(epp), path, name);
	cmd = cmd_new(sizeof(*cmd));
	kp_add_name(cmd, "org.kp.allowed");
	kp_add_access(cmd, KDBUS_POLICY_ACCESS_USER, KDBUS_POLICY_TALK, UID_A);
	kp_add_name(cmd, "org.kp.mine");
	kp_add_access(cmd, KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_OWN, 0);
	kp_add_name(cmd, "com.kp.mine");
	kp_add_access(cmd, KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_OWN, 0);
	ASSERT_OK(kp_ep_update(ep_fd, cmd));
	cmd_free(cmd);

	ASSERT_OK(kp_worker_start(&w, epp, UID_A, GID_A, KP_NO_GROUP, 0));
	ASSERT_OK(kp_worker_start(&outside, path, UID_A, GID_A, KP_NO_GROUP,
				  0));
	KP_ASSERT_RES(KP_DO(&w, KP_MATCH_ALL, 0, NULL, 0), 0);
	KP_DO(&w, KP_COUNT, 0, NULL, 0);

	/* TALK: only to the allowed name's owner, by name or id */
	KP_ASSERT_RES(KP_DO(&w, KP_SEND, 0, "org.kp.allowed", 1), 0);
	KP_ASSERT_RES(KP_DO(&w, KP_SEND, allowed->id, NULL, 2), 0);
	KP_ASSERT_RES(KP_DO(&w, KP_SEND, 0, "org.kp.hidden", 3), -EPERM);
	KP_ASSERT_RES(KP_DO(&w, KP_SEND, hidden->id, NULL, 4), -EPERM);
	/* a nameless peer of the same uid, outside: denied (no name) */
	KP_ASSERT_RES(KP_DO(&w, KP_SEND, outside.id, NULL, 5), -EPERM);

	/* SEE: the allowed name only */
	KP_ASSERT_RES(kp_do(&w, KP_INFO, 0, "org.kp.allowed", 0, &val, NULL,
			 NULL, 0), 0);
	ASSERT_EQ(val, allowed->id);
	KP_ASSERT_RES(KP_DO(&w, KP_INFO, allowed->id, NULL, 0), 0);
	KP_ASSERT_RES(KP_DO(&w, KP_INFO, 0, "org.kp.hidden", 0), -ESRCH);
	KP_ASSERT_RES(KP_DO(&w, KP_INFO, hidden->id, NULL, 0), -ENXIO);
	KP_ASSERT_RES(kp_do(&w, KP_LIST, 0, "org.kp.allowed", 0, &val, NULL,
			 NULL, 0), 1);
	ASSERT_EQ(val, 1);
	KP_ASSERT_RES(kp_do(&w, KP_LIST, 0, "org.kp.hidden", 0, &val, NULL,
			 NULL, 0), 1);
	ASSERT_EQ(val, 0);

	/* OWN: both databases must grant it */
	KP_ASSERT_RES(KP_DO(&w, KP_ACQUIRE, 0, "org.kp.mine", 0), 0);
	KP_ASSERT_RES(KP_DO(&w, KP_ACQUIRE, 0, "org.kp.other", 0), -EPERM);
	KP_ASSERT_RES(KP_DO(&w, KP_ACQUIRE, 0, "com.kp.mine", 0), -EPERM);
	/* the outside client of the same user may own what the bus allows */
	KP_ASSERT_RES(KP_DO(&outside, KP_ACQUIRE, 0, "org.kp.other", 0), 0);

	/* notifications: NAME_* only for visible names, ID_* always */
	KP_DO(&w, KP_COUNT, 0, NULL, 0);
	ASSERT_OK(kdbus_hello(path, 0, 0, KDBUS_DEFAULT_POOL, &late));
	ASSERT_OK(kp_acquire(late, "org.kp.late", 0));
	KP_ASSERT_RES(kp_do(&w, KP_RECV, 0, NULL, 0, &val, &val2, str,
			 sizeof(str)), 0);
	ASSERT_EQ(val, KDBUS_SRC_ID_KERNEL);
	ASSERT_EQ(val2, KDBUS_ITEM_ID_ADD);
	KP_ASSERT_RES(KP_DO(&w, KP_RECV, 0, NULL, 0), -EAGAIN);
	ASSERT_OK(kp_release(allowed, "org.kp.allowed"));
	KP_ASSERT_RES(kp_do(&w, KP_RECV, 0, NULL, 0, &val, &val2, str,
			 sizeof(str)), 0);
	ASSERT_EQ(val2, KDBUS_ITEM_NAME_REMOVE);
	ASSERT(!strcmp(str, "org.kp.allowed"));
	ASSERT_OK(kp_acquire(allowed, "org.kp.allowed", 0));
	KP_ASSERT_RES(kp_do(&w, KP_RECV, 0, NULL, 0, &val, &val2, str,
			 sizeof(str)), 0);
	ASSERT_EQ(val2, KDBUS_ITEM_NAME_ADD);
	ASSERT(!strcmp(str, "org.kp.allowed"));

	/* broadcasts: from the allowed name's owner only */
	KP_DO(&w, KP_COUNT, 0, NULL, 0);
	KP_ASSERT_RES(kp_broadcast(hidden, 0x41), 0);
	KP_ASSERT_RES(KP_DO(&w, KP_COUNT, 0, NULL, 0), 0);
	KP_ASSERT_RES(kp_broadcast(allowed, 0x42), 0);
	KP_ASSERT_RES(kp_do(&w, KP_RECV, 0, NULL, 0, &val, NULL, NULL, 0), 0);
	ASSERT_EQ(val, allowed->id);

	/* the sandbox's broadcast reaches the root peer (judged by its
	 * own, default endpoint: root is owner) */
	KP_ASSERT_RES(KP_DO(&w, KP_BROADCAST, 0, NULL, 7), 0);
	{
		struct kdbus_msg *msg;
		uint64_t off;
		bool seen = false;

		while (kdbus_recv_msg(allowed, 0, 0, &msg, &off) == 0) {
			if (msg->src_id == w.id)
				seen = true;
			kdbus_free(allowed, off);
		}
		ASSERT(seen);
	}

	RUN(kp_worker_stop(&outside));
	RUN(kp_worker_stop(&w));
	kdbus_conn_free(late);
	kdbus_conn_free(hidden);
	kdbus_conn_free(allowed);
	kdbus_conn_free(holder);
	close(ep_fd);
	close(bus_fd);
	return TEST_OK;
}

/*
 * The endpoint dies with its owner's descriptor: the file disappears,
 * its connections are disconnected, fresh handles get ESHUTDOWN, and
 * the name is free again.
 */
KDBUS_TEST(endpoint, dies_with_owner, KDBUS_TEST_NO_BUS)
{
	char path[256], name[64], epp[320];
	struct kdbus_conn *c;
	struct kdbus_cmd_hello h;
	struct pollfd pfd;
	int bus_fd, ep_fd, fresh;

	bus_fd = kp_bus_world(path, sizeof(path));
	ASSERT_OK(bus_fd);
	kdbus_unique_name(name, sizeof(name), "ep");
	ep_fd = kp_ep_make(path, 0, name);
	ASSERT_OK(ep_fd);
	ep_path(epp, sizeof(epp), path, name);

	ASSERT_OK(kdbus_hello(epp, 0, 0, KDBUS_DEFAULT_POOL, &c));
	fresh = open(epp, O_RDWR | O_CLOEXEC);
	ASSERT(fresh >= 0);

	close(ep_fd);

	ASSERT(open(epp, O_RDWR | O_CLOEXEC) < 0 && errno == ENOENT);
	ASSERT_ERR(kdbus_byebye(c->fd), ECONNRESET);
	pfd = (struct pollfd){ .fd = c->fd, .events = POLLIN };
	ASSERT(poll(&pfd, 1, 0) == 1);
	ASSERT(pfd.revents & (POLLERR | POLLHUP));
	memset(&h, 0, sizeof(h));
	h.size = sizeof(h);
	h.pool_size = KDBUS_PAGE;
	ASSERT_ERR(kdbus_ioctl(fresh, KDBUS_CMD_HELLO, &h), ESHUTDOWN);
	close(fresh);
	kdbus_conn_free(c);

	/* the name can be used again at once */
	ep_fd = kp_ep_make(path, 0, name);
	ASSERT_OK(ep_fd);
	close(ep_fd);

	/* and the bus owner's close takes the endpoints along */
	kdbus_unique_name(name, sizeof(name), "ep");
	ep_fd = kp_ep_make(path, 0, name);
	ASSERT_OK(ep_fd);
	close(bus_fd);
	{
		struct kdbus_cmd cmd = { .size = sizeof(cmd) };

		ASSERT_ERR(kp_ep_update(ep_fd, &cmd), ESHUTDOWN);
	}
	close(ep_fd);
	return TEST_OK;
}

/*
 * The matrix on a custom endpoint: one grant at a time (uid, gid,
 * supplementary gid, world; each also for somebody else) × SEE, TALK,
 * OWN, checked by name and by id. The bus itself allows everything on
 * org.kp.*, so only the endpoint decides. One worker sees every row.
 */
KDBUS_TEST_FULL(endpoint, matrix, KDBUS_TEST_NO_BUS, 120)
{
	static const struct {
		uint64_t type;
		uint64_t id;
		bool applies;
	} subjects[] = {
		{ KDBUS_POLICY_ACCESS_USER, UID_A, true },
		{ KDBUS_POLICY_ACCESS_USER, UID_B, false },
		{ KDBUS_POLICY_ACCESS_GROUP, GID_A, true },
		{ KDBUS_POLICY_ACCESS_GROUP, 2000, true },
		{ KDBUS_POLICY_ACCESS_GROUP, 3000, false },
		{ KDBUS_POLICY_ACCESS_WORLD, 0, true },
	};
	static const uint64_t bus_world_own[][3] = {
		{ KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_OWN, 0 },
	};
	char path[256], name[64], epp[320];
	struct kdbus_conn *svc, *holder;
	struct kp_worker w;
	int bus_fd, ep_fd;
	uint64_t val;

	bus_fd = kp_bus_world(path, sizeof(path));
	ASSERT_OK(bus_fd);
	ASSERT_OK(kp_hello_policy(path, KDBUS_HELLO_POLICY_HOLDER, "org.kp.*",
				  bus_world_own, 1, &holder));
	ASSERT_OK(kdbus_hello(path, 0, 0, KDBUS_DEFAULT_POOL, &svc));
	ASSERT_OK(kp_acquire(svc, "org.kp.svc", 0));

	kdbus_unique_name(name, sizeof(name), "ep");
	ep_fd = kp_ep_make(path, KDBUS_MAKE_ACCESS_WORLD, name);
	ASSERT_OK(ep_fd);
	ep_path(epp, sizeof(epp), path, name);
	ASSERT_OK(kp_worker_start(&w, epp, UID_A, GID_A, 2000, 0));

	for (size_t s = 0; s < sizeof(subjects) / sizeof(subjects[0]); s++) {
		for (uint64_t level = KDBUS_POLICY_SEE;
		     level <= KDBUS_POLICY_OWN; level++) {
			bool see = subjects[s].applies;
			bool talk = see && level >= KDBUS_POLICY_TALK;
			bool own = see && level >= KDBUS_POLICY_OWN;
			struct kdbus_cmd *cmd = cmd_new(sizeof(*cmd));

			kp_add_name(cmd, "org.kp.svc");
			kp_add_access(cmd, subjects[s].type, level,
				      subjects[s].id);
			kp_add_name(cmd, "org.kp.own");
			kp_add_access(cmd, subjects[s].type, level,
				      subjects[s].id);
			ASSERT_OK(kp_ep_update(ep_fd, cmd));
			cmd_free(cmd);

			/* SEE: by name ESRCH, by id ENXIO, LIST omits */
			KP_ASSERT_RES(KP_DO(&w, KP_INFO, 0, "org.kp.svc", 0),
				   see ? 0 : -ESRCH);
			KP_ASSERT_RES(KP_DO(&w, KP_INFO, svc->id, NULL, 0),
				   see ? 0 : -ENXIO);
			KP_ASSERT_RES(kp_do(&w, KP_LIST, 0, "org.kp.svc", 0, &val,
					 NULL, NULL, 0), see ? 1 : 0);
			ASSERT_EQ(val, see);

			/* TALK by name and by id: EPERM, not ESRCH */
			KP_ASSERT_RES(KP_DO(&w, KP_SEND, 0, "org.kp.svc", 1),
				   talk ? 0 : -EPERM);
			KP_ASSERT_RES(KP_DO(&w, KP_SEND, svc->id, NULL, 2),
				   talk ? 0 : -EPERM);

			/* OWN */
			KP_ASSERT_RES(KP_DO(&w, KP_ACQUIRE, 0, "org.kp.own", 0),
				   own ? 0 : -EPERM);
			if (own)
				KP_ASSERT_RES(KP_DO(&w, KP_RELEASE, 0, "org.kp.own",
					      0), 0);

			while (kdbus_recv_msg(svc, 0, 0, NULL, &val) == 0)
				kdbus_free(svc, val);
		}
	}

	RUN(kp_worker_stop(&w));
	kdbus_conn_free(svc);
	kdbus_conn_free(holder);
	close(ep_fd);
	close(bus_fd);
	return TEST_OK;
}

/*
 * Every connection through a custom endpoint is charged to the
 * endpoint's own anonymous user (kdbus.connection(7)): its 1024 connections
 * are the endpoint's budget, whoever makes them, and using it up costs
 * the real users nothing on the default endpoint.
 */
KDBUS_TEST_FULL(endpoint, own_accounting, KDBUS_TEST_NO_BUS, 300)
{
	char path[256], name[64], epp[320];
	int bus_fd, ep_fd, up[2], down[2];
	pid_t pid;

	bus_fd = kp_bus_world(path, sizeof(path));
	ASSERT_OK(bus_fd);
	kdbus_unique_name(name, sizeof(name), "ep");
	ep_fd = kp_ep_make(path, KDBUS_MAKE_ACCESS_WORLD, name);
	ASSERT_OK(ep_fd);
	ep_path(epp, sizeof(epp), path, name);
	ASSERT_OK(kdbus_raise_nofile(KDBUS_USER_MAX_CONN + 64));

	ASSERT(pipe(up) == 0 && pipe(down) == 0);
	pid = kdbus_fork_as(UID_A, GID_A);
	ASSERT(pid >= 0);
	if (pid == 0) {
		struct kdbus_conn **c = calloc(KDBUS_USER_MAX_CONN,
					       sizeof(*c));
		struct kdbus_conn *extra;
		char ok = 1;
		int r;

		if (!c)
			_exit(TEST_FAIL);
		for (int i = 0; i < KDBUS_USER_MAX_CONN; i++) {
			r = kdbus_hello(epp, 0, 0, KDBUS_PAGE, &c[i]);
			if (r < 0) {
				DIAG("connection %d: %s", i, kdbus_errname(-r));
				_exit(TEST_FAIL);
			}
		}
		r = kdbus_hello(epp, 0, 0, KDBUS_PAGE, &extra);
		if (r != -EMFILE) {
			DIAG("connection %d: expected EMFILE, got %s",
			     KDBUS_USER_MAX_CONN,
			     r ? kdbus_errname(-r) : "success");
			_exit(TEST_FAIL);
		}
		/* uid 1000 itself is not charged */
		r = kdbus_hello(path, 0, 0, KDBUS_PAGE, &extra);
		if (r < 0) {
			DIAG("default endpoint: %s", kdbus_errname(-r));
			_exit(TEST_FAIL);
		}
		kdbus_conn_free(extra);
		/* hold the connections while the test tries as root */
		if (write(up[1], &ok, 1) != 1 || read(down[0], &ok, 1) != 1)
			_exit(TEST_FAIL);
		for (int i = 0; i < KDBUS_USER_MAX_CONN; i++)
			kdbus_conn_free(c[i]);
		free(c);
		_exit(TEST_OK);
	}
	close(up[1]);
	close(down[0]);
	{
		struct kdbus_conn *c;
		char ok;
		int r = -EPIPE;

		/* the budget is the endpoint's, whoever connects */
		if (read(up[0], &ok, 1) == 1)
			r = kdbus_hello(epp, 0, 0, KDBUS_PAGE, &c);
		ok = 1;
		if (write(down[1], &ok, 1) != 1)
			r = -EPIPE;
		close(up[0]);
		close(down[1]);
		RUN(kdbus_wait_child(pid));
		ASSERT_ERR(r, EMFILE);
	}

	/* all closed: the endpoint's budget is back */
	{
		struct kdbus_conn *c;

		ASSERT_OK(kdbus_hello(epp, 0, 0, KDBUS_PAGE, &c));
		kdbus_conn_free(c);
	}

	close(ep_fd);
	close(bus_fd);
	return TEST_OK;
}

/* the OWNED_NAME items of a metadata item list, as "a,b," into buf */
static void owned_names(const struct kdbus_item *it, const uint8_t *end,
			char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (; (const uint8_t *)it < end;
	     it = (const void *)((const uint8_t *)it + KDBUS_ALIGN8(it->size)))
		if (it->type == KDBUS_ITEM_OWNED_NAME && n < len)
			n += snprintf(buf + n, len - n, "%s,", it->name.name);
}

/*
 * A confined client must not learn the names its endpoint hides through
 * metadata: neither in CONN_INFO by id nor in the OWNED_NAME items of a
 * reply from a peer that owns a visible and a hidden name (issue 12,
 * defect 5). Runs as uid 1000 in a child.
 */
KDBUS_TEST(endpoint, owned_names_confined, KDBUS_TEST_NO_BUS)
{
	static const uint64_t bus_world_own[][3] = {
		{ KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_OWN, 0 },
	};
	char path[256], name[64], epp[320];
	struct kdbus_conn *svc, *holder;
	struct kdbus_cmd *cmd;
	struct kdbus_msg *m;
	uint64_t off, svc_id;
	int bus_fd, ep_fd, p[2];
	pid_t pid;

	bus_fd = kp_bus_world(path, sizeof(path));
	ASSERT_OK(bus_fd);
	ASSERT_OK(kp_hello_policy(path, KDBUS_HELLO_POLICY_HOLDER, "org.kp.*",
				  bus_world_own, 1, &holder));
	ASSERT_OK(kdbus_hello(path, 0, 0, KDBUS_DEFAULT_POOL, &svc));
	ASSERT_OK(kp_acquire(svc, "org.kp.visible", 0));
	ASSERT_OK(kp_acquire(svc, "org.kp.secret", 0));
	svc_id = svc->id;

	kdbus_unique_name(name, sizeof(name), "sandbox");
	ep_fd = kp_ep_make(path, KDBUS_MAKE_ACCESS_WORLD, name);
	ASSERT_OK(ep_fd);
	ep_path(epp, sizeof(epp), path, name);
	cmd = cmd_new(sizeof(*cmd));
	kp_add_name(cmd, "org.kp.visible");
	kp_add_access(cmd, KDBUS_POLICY_ACCESS_WORLD, KDBUS_POLICY_TALK, 0);
	ASSERT_OK(kp_ep_update(ep_fd, cmd));
	cmd_free(cmd);

	ASSERT(pipe(p) == 0);
	pid = kdbus_fork_as(UID_A, GID_A);
	ASSERT(pid >= 0);
	if (pid == 0) {
		struct kdbus_conn *c;
		struct kdbus_info *info;
		char names[256];
		int r;

		close(p[0]);
		if (kdbus_hello(epp, 0, KDBUS_ATTACH_NAMES, KDBUS_DEFAULT_POOL,
				&c) < 0)
			_exit(TEST_FAIL);
		/* CONN_INFO by id: the peer is visible, its secret is not */
		if (kdbus_conn_info(c, svc_id, NULL, KDBUS_ATTACH_NAMES, &info,
				    &off) < 0)
			_exit(TEST_FAIL);
		owned_names(info->items, (const uint8_t *)info + info->size,
			    names, sizeof(names));
		if (strcmp(names, "org.kp.visible,")) {
			DIAG("CONN_INFO by id gave names \"%s\"", names);
			_exit(TEST_FAIL);
		}
		kdbus_free(c, off);
		/* by the hidden name: as if it did not exist */
		r = kdbus_conn_info(c, 0, "org.kp.secret", KDBUS_ATTACH_NAMES,
				    &info, &off);
		if (r != -ESRCH)
			_exit(TEST_FAIL);
		/* a call by name; the reply's metadata carries the names */
		if (kn_send_name(c, "org.kp.visible", KDBUS_DST_ID_NAME, 77,
				 KDBUS_MSG_EXPECT_REPLY,
				 kdbus_now_ns() + 5000000000ULL) < 0)
			_exit(TEST_FAIL);
		if (write(p[1], &c->id, sizeof(c->id)) != sizeof(c->id))
			_exit(TEST_FAIL);
		if (kdbus_wait_recv(c, 5000, &m, &off) < 0)
			_exit(TEST_FAIL);
		owned_names(m->items, (const uint8_t *)m + m->size, names,
			    sizeof(names));
		if (m->src_id != svc_id || strcmp(names, "org.kp.visible,")) {
			DIAG("reply from %llu carried names \"%s\"",
			     (unsigned long long)m->src_id, names);
			_exit(TEST_FAIL);
		}
		_exit(TEST_OK);
	}
	close(p[1]);
	{
		uint64_t cid;
		struct kdbus_msg *call;

		ASSERT(read(p[0], &cid, sizeof(cid)) == sizeof(cid));
		ASSERT_OK(kdbus_wait_recv(svc, 5000, &call, &off));
		ASSERT_EQ(call->src_id, cid);
		ASSERT_EQ(call->cookie, 77);
		ASSERT_OK(kdbus_free(svc, off));
		ASSERT_OK(kdbus_send(svc, cid, 78, 0, 77, 0, "r", 1));
	}
	close(p[0]);
	RUN(kdbus_wait_child(pid));

	kdbus_conn_free(svc);
	kdbus_conn_free(holder);
	close(ep_fd);
	close(bus_fd);
	return TEST_OK;
}
