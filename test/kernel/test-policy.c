// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Policy (kdbus.policy(7)): the bus database filled by policy holders and
 * activators, checked for OWN at NAME_ACQUIRE, TALK on unicasts (by name
 * and by id) and TALK of the receiver for broadcasts and signals. Every
 * check runs in a worker process with its own uid, gid and supplementary
 * group, so the credentials are real ones, not the test's root.
 *
 * Also home of the worker and policy helpers of test-policy.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kdbus-test.h"
#include "kdbus-util.h"
#include "test-policy.h"

#define UID_A	1000	/* the checked user */
#define GID_A	1000
#define SUPP_A	2000	/* its supplementary group */
#define UID_B	1001	/* another user */
#define GID_B	1001

#define SEE	KDBUS_POLICY_SEE
#define TALK	KDBUS_POLICY_TALK
#define OWN	KDBUS_POLICY_OWN
#define USER	KDBUS_POLICY_ACCESS_USER
#define GROUP	KDBUS_POLICY_ACCESS_GROUP
#define WORLD	KDBUS_POLICY_ACCESS_WORLD

/* ---- helpers (test-policy.h) ---------------------------------------- */

struct kp_req {
	int op;
	uint64_t id;
	uint64_t arg;
	char name[256];
};

struct kp_res {
	long ret;
	uint64_t val;
	uint64_t val2;
	char str[256];
};

static int kp_read_full(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t r = read(fd, p, len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -EPIPE;
		p += r;
		len -= r;
	}
	return 0;
}

static int kp_write_full(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t r = write(fd, p, len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -EPIPE;
		p += r;
		len -= r;
	}
	return 0;
}

void kp_add_name(void *cmd, const char *name)
{
	cmd_add_str(cmd, KDBUS_ITEM_NAME, name);
}

void kp_add_access(void *cmd, uint64_t type, uint64_t access, uint64_t id)
{
	struct kdbus_policy_access pa = {
		.type = type, .access = access, .id = id,
	};

	cmd_add_item(cmd, KDBUS_ITEM_POLICY_ACCESS, &pa, sizeof(pa));
}

int kp_acquire(struct kdbus_conn *c, const char *name, uint64_t flags)
{
	struct kdbus_cmd *cmd = cmd_new(sizeof(*cmd));
	int r;

	cmd->flags = flags;
	kp_add_name(cmd, name);
	r = kdbus_ioctl(c->fd, KDBUS_CMD_NAME_ACQUIRE, cmd);
	cmd_free(cmd);
	return r;
}

int kp_release(struct kdbus_conn *c, const char *name)
{
	struct kdbus_cmd *cmd = cmd_new(sizeof(*cmd));
	int r;

	kp_add_name(cmd, name);
	r = kdbus_ioctl(c->fd, KDBUS_CMD_NAME_RELEASE, cmd);
	cmd_free(cmd);
	return r;
}

int kp_match_all(struct kdbus_conn *c)
{
	struct kdbus_cmd_match *m = cmd_new(sizeof(*m));
	int r;

	m->cookie = 1;
	r = kdbus_ioctl(c->fd, KDBUS_CMD_MATCH_ADD, m);
	cmd_free(m);
	return r;
}

/* a unicast (signal or not) or broadcast with a zero bloom filter */
static int kp_send_msg(struct kdbus_conn *c, uint64_t dst, const char *name,
		       uint64_t cookie, uint64_t flags, uint64_t word56)
{
	struct kdbus_msg *m = kdbus_msg_new(dst, cookie, flags, word56,
					    "kp", 2);
	int r;

	if (name && *name)
		cmd_add_str(m, KDBUS_ITEM_DST_NAME, name);
	if (flags & KDBUS_MSG_SIGNAL) {
		uint8_t bloom[8 + KDBUS_DEFAULT_BLOOM] = { 0 };

		cmd_add_item(m, KDBUS_ITEM_BLOOM_FILTER, bloom, sizeof(bloom));
	}
	r = kdbus_send_msg(c->fd, 0, m, NULL);
	cmd_free(m);
	return r;
}

int kp_broadcast(struct kdbus_conn *c, uint64_t cookie)
{
	return kp_send_msg(c, KDBUS_DST_ID_BROADCAST, NULL, cookie,
			   KDBUS_MSG_SIGNAL, 0);
}

static long kp_recv_one(struct kdbus_conn *c, struct kp_res *res)
{
	struct kdbus_msg *msg;
	struct kdbus_item *it;
	uint64_t off;
	int r;

	r = kdbus_recv_msg(c, 0, 0, &msg, &off);
	if (r < 0)
		return r;
	res->val = msg->src_id;
	res->val2 = msg->cookie;
	if (msg->src_id == KDBUS_SRC_ID_KERNEL) {
		KDBUS_ITEM_FOREACH(it, msg->items, KDBUS_MSG_ITEMS_LEN(msg)) {
			if (it->type < KDBUS_ITEM_NAME_ADD ||
			    it->type > KDBUS_ITEM_REPLY_DEAD)
				continue;
			res->val2 = it->type;
			if (it->type >= KDBUS_ITEM_NAME_ADD &&
			    it->type <= KDBUS_ITEM_NAME_CHANGE)
				snprintf(res->str, sizeof(res->str), "%s",
					 it->name_change.name);
			break;
		}
	}
	kdbus_free(c, off);
	return 0;
}

static long kp_list(struct kdbus_conn *c, const char *name,
		    struct kp_res *res)
{
	struct kdbus_cmd_list cmd = {
		.size = sizeof(cmd),
		.flags = KDBUS_LIST_UNIQUE | KDBUS_LIST_NAMES,
	};
	struct kdbus_info *info;
	long n = 0;
	int r;

	r = kdbus_ioctl(c->fd, KDBUS_CMD_LIST, &cmd);
	if (r < 0)
		return r;
	for (uint64_t pos = 0; pos < cmd.list_size; pos += KDBUS_ALIGN8(info->size)) {
		struct kdbus_item *it;
		bool named = false;

		info = (struct kdbus_info *)(c->pool + cmd.offset + pos);
		if (info->size < sizeof(*info))
			break;
		KDBUS_ITEM_FOREACH(it, info->items, KDBUS_INFO_ITEMS_LEN(info)) {
			if (it->type != KDBUS_ITEM_OWNED_NAME)
				continue;
			named = true;
			if (name && !strcmp(it->name.name, name))
				res->val = 1;
		}
		if (named)
			n++;
		else
			res->val2++;
	}
	kdbus_free(c, cmd.offset);
	return n;
}

static long kp_execute(struct kdbus_conn *c, const struct kp_req *req,
		       struct kp_res *res)
{
	const char *name = req->name[0] ? req->name : NULL;
	uint64_t deadline = kdbus_now_ns() + 30ULL * 1000000000ULL;
	struct kdbus_info *info;
	uint64_t off;
	long n = 0;
	int r;

	switch (req->op) {
	case KP_ACQUIRE:
		return kp_acquire(c, req->name, req->arg);
	case KP_RELEASE:
		return kp_release(c, req->name);
	case KP_SEND:
		return kp_send_msg(c, req->id, name, req->arg, 0, 0);
	case KP_CALL:
		return kp_send_msg(c, req->id, name, req->arg,
				   KDBUS_MSG_EXPECT_REPLY, deadline);
	case KP_REPLY:
		return kp_send_msg(c, req->id, NULL, 0x7e, 0, req->arg);
	case KP_SIGNAL:
		return kp_send_msg(c, req->id, name, req->arg,
				   KDBUS_MSG_SIGNAL, 0);
	case KP_BROADCAST:
		return kp_send_msg(c, KDBUS_DST_ID_BROADCAST, NULL, req->arg,
				   KDBUS_MSG_SIGNAL, 0);
	case KP_MATCH_ALL:
		return kp_match_all(c);
	case KP_RECV:
		return kp_recv_one(c, res);
	case KP_COUNT:
		while ((r = kp_recv_one(c, res)) == 0)
			n++;
		return r == -EAGAIN ? n : r;
	case KP_INFO:
		r = kdbus_conn_info(c, req->id, name, 0, &info, &off);
		if (r < 0)
			return r;
		res->val = info->id;
		kdbus_free(c, off);
		return 0;
	case KP_LIST:
		return kp_list(c, name, res);
	}
	return -EINVAL;
}

static void kp_worker_main(int req_fd, int res_fd, const char *path,
			   uint64_t hello_flags)
{
	struct kdbus_conn *c = NULL;
	struct kp_res res = { 0 };
	struct kp_req req;

	res.ret = kdbus_hello(path, hello_flags, 0, KDBUS_DEFAULT_POOL, &c);
	if (c)
		res.val = c->id;
	if (kp_write_full(res_fd, &res, sizeof(res)) < 0 || res.ret < 0)
		_exit(TEST_OK);

	while (kp_read_full(req_fd, &req, sizeof(req)) == 0) {
		req.name[sizeof(req.name) - 1] = 0;
		if (req.op == KP_QUIT)
			break;
		memset(&res, 0, sizeof(res));
		res.ret = kp_execute(c, &req, &res);
		if (kp_write_full(res_fd, &res, sizeof(res)) < 0)
			break;
	}
	kdbus_conn_free(c);
	_exit(TEST_OK);
}

int kp_worker_start(struct kp_worker *w, const char *path, uid_t uid,
		    gid_t gid, gid_t supp, uint64_t hello_flags)
{
	int to[2], from[2];
	struct kp_res res;
	pid_t pid;

	/* a worker that is gone must not kill the test on a write */
	signal(SIGPIPE, SIG_IGN);
	memset(w, 0, sizeof(*w));
	w->pid = -1;
	if (pipe2(to, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(from, O_CLOEXEC) < 0) {
		close(to[0]);
		close(to[1]);
		return -errno;
	}

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int ngroups = supp == KP_NO_GROUP ? 0 : 1;
		int in, out;

		/*
		 * Keep nothing of the test's descriptors but the two pipe
		 * ends (as 3 and 4): an inherited connection would outlive
		 * its close() in the test.
		 */
		in = fcntl(to[0], F_DUPFD_CLOEXEC, 100);
		out = fcntl(from[1], F_DUPFD_CLOEXEC, 100);
		if (in < 0 || out < 0 || dup2(in, 3) < 0 || dup2(out, 4) < 0 ||
		    syscall(SYS_close_range, 5, ~0U, 0) < 0)
			_exit(TEST_FAIL);
		if (setgroups(ngroups, &supp) < 0 ||
		    setresgid(gid, gid, gid) < 0 ||
		    setresuid(uid, uid, uid) < 0)
			_exit(TEST_FAIL);
		kp_worker_main(3, 4, path, hello_flags);
	}

	close(to[0]);
	close(from[1]);
	w->pid = pid;
	w->req_fd = to[1];
	w->res_fd = from[0];
	if (kp_read_full(w->res_fd, &res, sizeof(res)) < 0) {
		kp_worker_stop(w);
		return -EPIPE;
	}
	if (res.ret < 0) {
		kp_worker_stop(w);
		return res.ret;
	}
	w->id = res.val;
	return 0;
}

long kp_do(struct kp_worker *w, enum kp_op op, uint64_t id,
	   const char *name, uint64_t arg, uint64_t *val, uint64_t *val2,
	   char *str, size_t str_len)
{
	struct kp_req req = { .op = op, .id = id, .arg = arg };
	struct kp_res res;

	if (name)
		snprintf(req.name, sizeof(req.name), "%s", name);
	if (kp_write_full(w->req_fd, &req, sizeof(req)) < 0 ||
	    kp_read_full(w->res_fd, &res, sizeof(res)) < 0)
		return -EPIPE;
	if (val)
		*val = res.val;
	if (val2)
		*val2 = res.val2;
	if (str && str_len) {
		res.str[sizeof(res.str) - 1] = 0;
		snprintf(str, str_len, "%s", res.str);
	}
	return res.ret;
}

int kp_worker_stop(struct kp_worker *w)
{
	struct kp_req req = { .op = KP_QUIT };
	int r;

	if (w->pid <= 0)
		return TEST_OK;
	kp_write_full(w->req_fd, &req, sizeof(req));
	close(w->req_fd);
	close(w->res_fd);
	r = kdbus_wait_child(w->pid);
	w->pid = -1;
	return r;
}

int kp_bus_world(char *path, size_t len)
{
	char name[64];
	int fd;

	fd = kdbus_bus_new(KDBUS_MAKE_ACCESS_WORLD, name, sizeof(name));
	if (fd >= 0)
		snprintf(path, len, "%s/%s/bus", KDBUS_MOUNT, name);
	return fd;
}

int kp_hello_cmd(const char *path, struct kdbus_cmd_hello *h,
		 struct kdbus_conn **out)
{
	if (!h->pool_size)
		h->pool_size = KDBUS_DEFAULT_POOL;
	return kdbus_hello_cmd(path, h, out);
}

int kp_hello_policy(const char *path, uint64_t flags, const char *name,
		    const uint64_t (*grants)[3], unsigned int n,
		    struct kdbus_conn **out)
{
	struct kdbus_cmd_hello *h = cmd_new(sizeof(*h));
	int r;

	h->flags = flags;
	h->attach_flags_send = _KDBUS_ATTACH_ALL;
	kp_add_name(h, name);
	for (unsigned int i = 0; i < n; i++)
		kp_add_access(h, grants[i][0], grants[i][1], grants[i][2]);
	r = kp_hello_cmd(path, h, out);
	cmd_free(h);
	return r;
}

int kp_update_policy(struct kdbus_conn *c, const char *name,
		     const uint64_t (*grants)[3], unsigned int n)
{
	struct kdbus_cmd *cmd = cmd_new(sizeof(*cmd));
	int r;

	if (name)
		kp_add_name(cmd, name);
	for (unsigned int i = 0; i < n; i++)
		kp_add_access(cmd, grants[i][0], grants[i][1], grants[i][2]);
	r = kdbus_ioctl(c->fd, KDBUS_CMD_UPDATE, cmd);
	cmd_free(cmd);
	return r;
}

int kp_ep_make(const char *bus_path, uint64_t flags, const char *name)
{
	struct kdbus_cmd *cmd = cmd_new(sizeof(*cmd));
	int fd, r;

	fd = open(bus_path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		cmd_free(cmd);
		return r;
	}
	cmd->flags = flags;
	if (name)
		cmd_add_str(cmd, KDBUS_ITEM_MAKE_NAME, name);
	r = kdbus_ioctl(fd, KDBUS_CMD_ENDPOINT_MAKE, cmd);
	cmd_free(cmd);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int kp_ep_update(int fd, struct kdbus_cmd *cmd)
{
	return kdbus_ioctl(fd, KDBUS_CMD_ENDPOINT_UPDATE, cmd);
}

/* ---- tests ----------------------------------------------------------- */

#define KP_DO(w, op, id, name, arg) kp_do((w), (op), (id), (name), (arg), \
				       NULL, NULL, NULL, 0)

/* receive and free everything queued; returns the number of non-kernel
 * messages */
static int kp_drain(struct kdbus_conn *c)
{
	struct kdbus_msg *msg;
	uint64_t off;
	int n = 0;

	while (kdbus_recv_msg(c, 0, 0, &msg, &off) == 0) {
		if (msg->src_id != KDBUS_SRC_ID_KERNEL)
			n++;
		kdbus_free(c, off);
	}
	return n;
}

/* the errno a TALK or OWN check gives: 0 when granted */
static long kp_expect(bool granted)
{
	return granted ? 0 : -EPERM;
}

/*
 * The matrix: one grant at a time, of every kind and level, installed by
 * two policy holders (one for the service's name, one for a free name)
 * and replaced by UPDATE between rows. The same worker (uid 1000, gid
 * 1000, supplementary group 2000) checks every row, so a stale cached
 * decision would show.
 */
KDBUS_TEST_FULL(policy, matrix, KDBUS_TEST_NO_BUS, 120)
{
	static const struct {
		uint64_t type;
		uint64_t id;
		bool applies;
		const char *what;
	} subjects[] = {
		{ USER, UID_A, true, "user 1000" },
		{ USER, UID_B, false, "user 1001" },
		{ GROUP, GID_A, true, "group 1000 (egid)" },
		{ GROUP, SUPP_A, true, "group 2000 (supplementary)" },
		{ GROUP, 3000, false, "group 3000" },
		{ WORLD, 0, true, "world" },
	};
	static const uint64_t levels[] = { SEE, TALK, OWN };
	struct kdbus_conn *svc, *holder_svc, *holder_own;
	struct kp_worker w;
	char path[256];
	uint64_t val;
	int bus_fd;

	bus_fd = kp_bus_world(path, sizeof(path));
	ASSERT_OK(bus_fd);

	/* a root service owning org.kp.svc; root owns the bus: no policy */
	ASSERT_OK(kdbus_hello(path, 0, 0, KDBUS_DEFAULT_POOL, &svc));
	ASSERT_OK(kp_acquire(svc, "org.kp.svc", 0));

	ASSERT_OK(kp_hello_policy(path, KDBUS_HELLO_POLICY_HOLDER,
				  "org.kp.svc", NULL, 0, &holder_svc));
	ASSERT_OK(kp_hello_policy(path, KDBUS_HELLO_POLICY_HOLDER,
				  "org.kp.own", NULL, 0, &holder_own));

	ASSERT_OK(kp_worker_start(&w, path, UID_A, GID_A, SUPP_A, 0));

	/* empty entries: nothing is granted */
	KP_ASSERT_RES(KP_DO(&w, KP_SEND, svc->id, NULL, 1), -EPERM);
	KP_ASSERT_RES(KP_DO(&w, KP_SEND, 0, "org.kp.svc", 2), -EPERM);
	KP_ASSERT_RES(KP_DO(&w, KP_ACQUIRE, 0, "org.kp.own", 0), -EPERM);

	for (size_t s = 0; s < sizeof(subjects) / sizeof(subjects[0]); s++) {
		for (size_t l = 0; l < 3; l++) {
			uint64_t g[1][3] = { { subjects[s].type, levels[l],
					       subjects[s].id } };
			bool talk = subjects[s].applies && levels[l] >= TALK;
			bool own = subjects[s].applies && levels[l] >= OWN;

			DIAG("grant %s level %llu: talk %d own %d",
			     subjects[s].what, (unsigned long long)levels[l],
			     talk, own);
			ASSERT_OK(kp_update_policy(holder_svc, "org.kp.svc",
						   g, 1));
			ASSERT_OK(kp_update_policy(holder_own, "org.kp.own",
						   g, 1));

			/* TALK by id, by name, and by name with the id */
			KP_ASSERT_RES(KP_DO(&w, KP_SEND, svc->id, NULL, 10),
				   kp_expect(talk));
			KP_ASSERT_RES(KP_DO(&w, KP_SEND, 0, "org.kp.svc", 11),
				   kp_expect(talk));
			KP_ASSERT_RES(KP_DO(&w, KP_SEND, svc->id, "org.kp.svc", 12),
				   kp_expect(talk));
			KP_ASSERT_RES(KP_DO(&w, KP_CALL, svc->id, NULL, 13),
				   kp_expect(talk));

			/* OWN; a granted name is released again */
			KP_ASSERT_RES(KP_DO(&w, KP_ACQUIRE, 0, "org.kp.own", 0),
				   kp_expect(own));
			if (own)
				KP_ASSERT_RES(KP_DO(&w, KP_RELEASE, 0, "org.kp.own",
					      0), 0);

			/* OWN of a name someone owns: EPERM before EEXIST */
			KP_ASSERT_RES(KP_DO(&w, KP_ACQUIRE, 0, "org.kp.svc", 0),
				   own ? -EEXIST : -EPERM);

			/* SEE has no effect on the default endpoint */
			KP_ASSERT_RES(kp_do(&w, KP_INFO, 0, "org.kp.svc", 0, &val,
					 NULL, NULL, 0), 0);
			ASSERT_EQ(val, svc->id);
			KP_ASSERT_RES(KP_DO(&w, KP_INFO, svc->id, NULL, 0), 0);
			KP_ASSERT_RES(kp_do(&w, KP_LIST, 0, "org.kp.svc", 0, &val,
					 NULL, NULL, 0), 1);
			ASSERT_EQ(val, 1);

			kp_drain(svc);
		}
	}

	RUN(kp_worker_stop(&w));
	kdbus_conn_free(holder_own);
	kdbus_conn_free(holder_svc);
	kdbus_conn_free(svc);
	close(bus_fd);
	return TEST_OK;
}

/*
 * A bus without policy (kdbus.policy(7) consequences): unprivileged
 * users own nothing, talk only to their own uid; the owner does it all.
 */
KDBUS_TEST(policy, no_policy_default, KDBUS_TEST_NO_BUS)
{
	struct kp_worker a1, a2, b;
	struct kdbus_conn *root;
	char path[256];
	int bus_fd;

	bus_fd = kp_bus_world(path, sizeof(path));
	ASSERT_OK(bus_fd);
	ASSERT_OK(kdbus_hello(path, 0, 0, KDBUS_DEFAULT_POOL, &root));
	ASSERT_OK(kp_worker_start(&a1, path, UID_A, GID_A, KP_NO_GROUP, 0));
	ASSERT_OK(kp_worker_start(&a2, path, UID_A, GID_A, KP_NO_GROUP, 0));
	ASSERT_OK(kp_worker_start(&b, path, UID_B, GID_B, KP_NO_GROUP, 0));

	/* the owner may own any name; nobody else any */
	ASSERT_OK(kp_acquire(root, "org.kp.root", 0));
	KP_ASSERT_RES(KP_DO(&a1, KP_ACQUIRE, 0, "org.kp.a", 0), -EPERM);
	KP_ASSERT_RES(KP_DO(&b, KP_ACQUIRE, 0, "org.kp.b", 0), -EPERM);

	/* same uid: allowed; other uid, also the owner: denied */
	KP_ASSERT_RES(KP_DO(&a1, KP_SEND, a2.id, NULL, 1), 0);
	KP_ASSERT_RES(KP_DO(&a1, KP_SEND, b.id, NULL, 2), -EPERM);
	KP_ASSERT_RES(KP_DO(&b, KP_SEND, a1.id, NULL, 3), -EPERM);
	KP_ASSERT_RES(KP_DO(&a1, KP_SEND, root->id, NULL, 4), -EPERM);
	KP_ASSERT_RES(KP_DO(&a1, KP_SEND, 0, "org.kp.root", 5), -EPERM);

	/* destination errors come before the TALK check */
	KP_ASSERT_RES(KP_DO(&a1, KP_SEND, 0, "org.kp.nobody", 6), -ESRCH);
	KP_ASSERT_RES(KP_DO(&a1, KP_SEND, 0x7fffffff, NULL, 7), -ENXIO);
	KP_ASSERT_RES(KP_DO(&a1, KP_SEND, b.id, "org.kp.root", 8), -EREMCHG);

	/* the owner talks to anybody */
	ASSERT_OK(kdbus_send(root, a1.id, 9, 0, 0, 0, "x", 1));
	ASSERT_OK(kdbus_send(root, b.id, 10, 0, 0, 0, "x", 1));
	KP_ASSERT_RES(KP_DO(&b, KP_COUNT, 0, NULL, 0), 1);
	KP_ASSERT_RES(KP_DO(&a2, KP_COUNT, 0, NULL, 0), 1);
	KP_ASSERT_RES(KP_DO(&a1, KP_COUNT, 0, NULL, 0), 1);

	RUN(kp_worker_stop(&b));
	RUN(kp_worker_stop(&a2));
	RUN(kp_worker_stop(&a1));
	kdbus_conn_free(root);
	close(bus_fd);
	return TEST_OK;
}

/*
 * A pending request opens the return path even where TALK is denied
 * (kdbus.policy(7)): the root owner calls a uid 1000 peer, which may
 * not talk to it but may answer once.
 */
KDBUS_TEST(policy, reply_bypasses_talk, KDBUS_TEST_NO_BUS)
{
	struct kdbus_conn *root;
	struct kp_worker a;
	struct kdbus_msg *msg;
	uint64_t src, cookie, off;
	char path[256];
	int bus_fd;

	bus_fd = kp_bus_world(path, sizeof(path));
	ASSERT_OK(bus_fd);
	ASSERT_OK(kdbus_hello(path, 0, 0, KDBUS_DEFAULT_POOL, &root));
	ASSERT_OK(kp_worker_start(&a, path, UID_A, GID_A, KP_NO_GROUP, 0));

	KP_ASSERT_RES(KP_DO(&a, KP_SEND, root->id, NULL, 1), -EPERM);
	ASSERT_OK(kdbus_send(root, a.id, 0x55, KDBUS_MSG_EXPECT_REPLY,
			     kdbus_now_ns() + 30ULL * 1000000000ULL, 0,
			     "q", 1));
	KP_ASSERT_RES(kp_do(&a, KP_RECV, 0, NULL, 0, &src, &cookie, NULL, 0), 0);
	ASSERT_EQ(src, root->id);
	ASSERT_EQ(cookie, 0x55);
	KP_ASSERT_RES(KP_DO(&a, KP_REPLY, root->id, NULL, 0x55), 0);
	ASSERT_OK(kdbus_recv_msg(root, 0, 0, &msg, &off));
	ASSERT_EQ(msg->src_id, a.id);
	ASSERT_EQ(msg->cookie_reply, 0x55);
	kdbus_free(root, off);

	/* the path is closed again once answered */
	KP_ASSERT_RES(KP_DO(&a, KP_REPLY, root->id, NULL, 0x55), -EBADSLT);
	KP_ASSERT_RES(KP_DO(&a, KP_SEND, root->id, NULL, 2), -EPERM);

	RUN(kp_worker_stop(&a));
	kdbus_conn_free(root);
	close(bus_fd);
	return TEST_OK;
}

/*
 * Wildcards (kdbus.policy(7)): "org.kp.*" covers org.kp.x but neither
 * org.kp nor org.kp.x.y, and an exact entry shadows the wildcard even
 * when it grants nothing. The 2015 code never recognised the ".*"
 * suffix (it tested the wrong characters) and stored it literally.
 */
KDBUS_TEST(policy, wildcards, KDBUS_TEST_NO_BUS)
{
	static const uint64_t world_own[][3] = { { WORLD, OWN, 0 } };
	static const uint64_t world_talk[][3] = { { WORLD, TALK, 0 } };
	struct kdbus_conn *wild, *exact, *top, *s_x, *s_xy, *s_shadow, *s_top;
	struct kp_worker a;
	char path[256];
	int bus_fd;

	bus_fd = kp_bus_world(path, sizeof(path));
	ASSERT_OK(bus_fd);

	ASSERT_OK(kp_hello_policy(path, KDBUS_HELLO_POLICY_HOLDER,
				  "org.kp.*", world_own, 1, &wild));
	/* exact entry without grants: shadows the wildcard */
	ASSERT_OK(kp_hello_policy(path, KDBUS_HELLO_POLICY_HOLDER,
				  "org.kp.shadow", NULL, 0, &exact));
	/* a wildcard one level up: covers org.x but not org.kp.x.y */
	ASSERT_OK(kp_hello_policy(path, KDBUS_HELLO_POLICY_HOLDER,
				  "org.*", world_talk, 1, &top));

	ASSERT_OK(kdbus_hello(path, 0, 0, KDBUS_DEFAULT_POOL, &s_x));
	ASSERT_OK(kdbus_hello(path, 0, 0, KDBUS_DEFAULT_POOL, &s_xy));
	ASSERT_OK(kdbus_hello(path, 0, 0, KDBUS_DEFAULT_POOL, &s_shadow));
	ASSERT_OK(kdbus_hello(path, 0, 0, KDBUS_DEFAULT_POOL, &s_top));
	ASSERT_OK(kp_acquire(s_x, "org.kp.x", 0));
	ASSERT_OK(kp_acquire(s_xy, "org.kp.x.y", 0));
	ASSERT_OK(kp_acquire(s_shadow, "org.kp.shadow", 0));
	ASSERT_OK(kp_acquire(s_top, "org.kp", 0));

	ASSERT_OK(kp_worker_start(&a, path, UID_A, GID_A, KP_NO_GROUP, 0));

	KP_ASSERT_RES(KP_DO(&a, KP_SEND, s_x->id, NULL, 1), 0);
	KP_ASSERT_RES(KP_DO(&a, KP_SEND, 0, "org.kp.x", 2), 0);
	KP_ASSERT_RES(KP_DO(&a, KP_SEND, s_xy->id, NULL, 3), -EPERM);
	KP_ASSERT_RES(KP_DO(&a, KP_SEND, s_shadow->id, NULL, 4), -EPERM);
	/* org.kp is covered by org.* (TALK), not by org.kp.* */
	KP_ASSERT_RES(KP_DO(&a, KP_SEND, s_top->id, NULL, 5), 0);

	KP_ASSERT_RES(KP_DO(&a, KP_ACQUIRE, 0, "org.kp.mine", 0), 0);
	KP_ASSERT_RES(KP_DO(&a, KP_ACQUIRE, 0, "org.kp.mine.sub", 0), -EPERM);
	KP_ASSERT_RES(KP_DO(&a, KP_ACQUIRE, 0, "org.kp.shadow2", 0), 0);
	KP_ASSERT_RES(KP_DO(&a, KP_ACQUIRE, 0, "org.kp.shadow", 0), -EPERM);
	KP_ASSERT_RES(KP_DO(&a, KP_ACQUIRE, 0, "org.other", 0), -EPERM);
	KP_ASSERT_RES(KP_DO(&a, KP_ACQUIRE, 0, "org.kp", 0), -EPERM);
	/* a literal "org.kp.*" name is not a valid name to own */
	KP_ASSERT_RES(KP_DO(&a, KP_ACQUIRE, 0, "org.kp.*", 0), -EINVAL);

	/* the exact and the wildcard entry of one key coexist */
	{
		struct kdbus_conn *wild2;

		ASSERT_ERR(kp_hello_policy(path, KDBUS_HELLO_POLICY_HOLDER,
					   "org.kp.*", NULL, 0, &wild2),
			   EEXIST);
		ASSERT_OK(kp_hello_policy(path, KDBUS_HELLO_POLICY_HOLDER,
					  "org.kp.x", world_own, 1, &wild2));
		/* now org.kp.x is decided by its exact entry: still OWN */
		KP_ASSERT_RES(KP_DO(&a, KP_SEND, s_x->id, NULL, 6), 0);
		kdbus_conn_free(wild2);
	}

	/* removing the wildcard holder removes its grants */
	kdbus_conn_free(wild);
	KP_ASSERT_RES(KP_DO(&a, KP_SEND, s_x->id, NULL, 7), -EPERM);
	KP_ASSERT_RES(KP_DO(&a, KP_ACQUIRE, 0, "org.kp.mine2", 0), -EPERM);

	/* activators take no wildcard */
	ASSERT_ERR(kp_hello_policy(path, KDBUS_HELLO_ACTIVATOR, "org.kp.*",
				   NULL, 0, &wild), EINVAL);

	RUN(kp_worker_stop(&a));
	kdbus_conn_free(s_top);
	kdbus_conn_free(s_shadow);
	kdbus_conn_free(s_xy);
	kdbus_conn_free(s_x);
	kdbus_conn_free(top);
	kdbus_conn_free(exact);
	close(bus_fd);
	return TEST_OK;
}

/*
 * A policy holder changes its rules at run time; each change is seen by
 * the next check of the same client (no stale cache), a failed upload
 * keeps the old rules, and the rules go with the holder.
 */
KDBUS_TEST(policy, holder_update, KDBUS_TEST_NO_BUS)
{
	static const uint64_t talk_a[][3] = { { USER, TALK, UID_A } };
	static const uint64_t talk_b[][3] = { { USER, TALK, UID_B } };
	static const uint64_t world_see[][3] = { { WORLD, SEE, 0 } };
	struct kdbus_conn *holder, *other, *svc;
	struct kp_worker a;
	struct kdbus_cmd *cmd;
	char path[256];
	int bus_fd;

	bus_fd = kp_bus_world(path, sizeof(path));
	ASSERT_OK(bus_fd);
	ASSERT_OK(kdbus_hello(path, 0, 0, KDBUS_DEFAULT_POOL, &svc));
	ASSERT_OK(kp_acquire(svc, "org.kp.svc", 0));
	ASSERT_OK(kp_hello_policy(path, KDBUS_HELLO_POLICY_HOLDER,
				  "org.kp.svc", talk_a, 1, &holder));
	ASSERT_OK(kp_worker_start(&a, path, UID_A, GID_A, KP_NO_GROUP, 0));

	for (int round = 0; round < 3; round++) {
		KP_ASSERT_RES(KP_DO(&a, KP_SEND, svc->id, NULL, 1), 0);
		ASSERT_OK(kp_update_policy(holder, "org.kp.svc", talk_b, 1));
		KP_ASSERT_RES(KP_DO(&a, KP_SEND, svc->id, NULL, 2), -EPERM);
		ASSERT_OK(kp_update_policy(holder, "org.kp.svc", world_see, 1));
		KP_ASSERT_RES(KP_DO(&a, KP_SEND, svc->id, NULL, 3), -EPERM);
		ASSERT_OK(kp_update_policy(holder, "org.kp.svc", talk_a, 1));
	}

	/* UPDATE without policy items leaves the policy alone */
	ASSERT_OK(kdbus_ioctl(holder->fd, KDBUS_CMD_UPDATE,
			      &(struct kdbus_cmd){ .size = sizeof(struct kdbus_cmd) }));
	KP_ASSERT_RES(KP_DO(&a, KP_SEND, svc->id, NULL, 4), 0);

	/* policy errors (kdbus.policy(7)); the old rules stay */
	ASSERT_ERR(kp_update_policy(holder, NULL, talk_b, 1), EINVAL);
	ASSERT_ERR(kp_update_policy(holder, "org..kp", talk_b, 1), EINVAL);
	ASSERT_ERR(kp_update_policy(holder, "org.kp.svc",
				    (const uint64_t[][3]){ { 0, TALK, 0 } }, 1),
		   EINVAL);
	ASSERT_ERR(kp_update_policy(holder, "org.kp.svc",
				    (const uint64_t[][3]){ { 4, TALK, 0 } }, 1),
		   EINVAL);
	ASSERT_ERR(kp_update_policy(holder, "org.kp.svc",
				    (const uint64_t[][3]){ { WORLD, 3, 0 } }, 1),
		   EINVAL);
	ASSERT_ERR(kp_update_policy(holder, "org.kp.svc",
				    (const uint64_t[][3]){ { USER, TALK,
							     0xffffffffULL } },
				    1), EINVAL);
	ASSERT_ERR(kp_update_policy(holder, "org.kp.svc",
				    (const uint64_t[][3]){ { GROUP, TALK,
							     0xffffffffULL } },
				    1), EINVAL);
	/* a second name: E2BIG, counted before that name is validated */
	cmd = cmd_new(sizeof(*cmd));
	kp_add_name(cmd, "org.kp.svc");
	kp_add_access(cmd, WORLD, TALK, 0);
	kp_add_name(cmd, "not a name");
	ASSERT_ERR(kdbus_ioctl(holder->fd, KDBUS_CMD_UPDATE, cmd), E2BIG);
	cmd_free(cmd);
	KP_ASSERT_RES(KP_DO(&a, KP_SEND, svc->id, NULL, 5), 0);

	/* another holder cannot take the same name, neither at HELLO... */
	ASSERT_ERR(kp_hello_policy(path, KDBUS_HELLO_POLICY_HOLDER,
				   "org.kp.svc", talk_b, 1, &other), EEXIST);
	/* ...nor by UPDATE; its own old entry survives the failure */
	ASSERT_OK(kp_hello_policy(path, KDBUS_HELLO_POLICY_HOLDER,
				  "org.kp.other", talk_a, 1, &other));
	ASSERT_ERR(kp_update_policy(other, "org.kp.svc", talk_b, 1), EEXIST);
	KP_ASSERT_RES(KP_DO(&a, KP_SEND, svc->id, NULL, 6), 0);

	/* replacing one's own entry is no duplicate */
	ASSERT_OK(kp_update_policy(holder, "org.kp.svc", talk_a, 1));

	/* only policy holders take policy items */
	ASSERT_ERR(kp_update_policy(svc, "org.kp.svc", talk_b, 1), EOPNOTSUPP);

	/* the rules go with the holder */
	kdbus_conn_free(holder);
	KP_ASSERT_RES(KP_DO(&a, KP_SEND, svc->id, NULL, 7), -EPERM);
	/* and the name is free for another holder */
	ASSERT_OK(kp_hello_policy(path, KDBUS_HELLO_POLICY_HOLDER,
				  "org.kp.svc", talk_a, 1, &holder));
	KP_ASSERT_RES(KP_DO(&a, KP_SEND, svc->id, NULL, 8), 0);

	RUN(kp_worker_stop(&a));
	kdbus_conn_free(holder);
	kdbus_conn_free(other);
	kdbus_conn_free(svc);
	close(bus_fd);
	return TEST_OK;
}

/*
 * An activator's entry (kdbus.name(7)) lets the listed user take the
 * name over and decides who may talk to it; the activator cannot change
 * it later.
 */
KDBUS_TEST(policy, activator_entry, KDBUS_TEST_NO_BUS)
{
	static const uint64_t grants[][3] = {
		{ USER, OWN, UID_A }, { USER, TALK, UID_B },
	};
	struct kdbus_conn *act;
	struct kp_worker a, b, c;
	char path[256];
	int bus_fd;

	bus_fd = kp_bus_world(path, sizeof(path));
	ASSERT_OK(bus_fd);
	ASSERT_OK(kp_hello_policy(path, KDBUS_HELLO_ACTIVATOR, "org.kp.act",
				  grants, 2, &act));
	ASSERT_ERR(kp_update_policy(act, "org.kp.act", grants, 1), EOPNOTSUPP);
	/* the exact name is taken in the bus database */
	{
		struct kdbus_conn *dup;

		ASSERT_ERR(kp_hello_policy(path, KDBUS_HELLO_POLICY_HOLDER,
					   "org.kp.act", NULL, 0, &dup),
			   EEXIST);
	}

	ASSERT_OK(kp_worker_start(&a, path, UID_A, GID_A, KP_NO_GROUP, 0));
	ASSERT_OK(kp_worker_start(&b, path, UID_B, GID_B, KP_NO_GROUP, 0));
	ASSERT_OK(kp_worker_start(&c, path, 1002, 1002, KP_NO_GROUP, 0));

	KP_ASSERT_RES(KP_DO(&c, KP_ACQUIRE, 0, "org.kp.act", 0), -EPERM);
	KP_ASSERT_RES(KP_DO(&b, KP_ACQUIRE, 0, "org.kp.act", 0), -EPERM);
	KP_ASSERT_RES(KP_DO(&a, KP_ACQUIRE, 0, "org.kp.act", 0), 0);

	/* TALK now judged on the implementer's names */
	KP_ASSERT_RES(KP_DO(&b, KP_SEND, 0, "org.kp.act", 1), 0);
	KP_ASSERT_RES(KP_DO(&b, KP_SEND, a.id, NULL, 2), 0);
	KP_ASSERT_RES(KP_DO(&c, KP_SEND, 0, "org.kp.act", 3), -EPERM);
	KP_ASSERT_RES(KP_DO(&a, KP_COUNT, 0, NULL, 0), 2);

	/* the entry goes with the activator */
	kdbus_conn_free(act);
	KP_ASSERT_RES(KP_DO(&b, KP_SEND, a.id, NULL, 4), -EPERM);

	RUN(kp_worker_stop(&c));
	RUN(kp_worker_stop(&b));
	RUN(kp_worker_stop(&a));
	close(bus_fd);
	return TEST_OK;
}

/*
 * Broadcasts and unicast signals are filtered per receiver with the
 * receiver's TALK right toward the sender (kdbus.match(7), kdbus.policy(7)).
 */
KDBUS_TEST(policy, broadcast_filter, KDBUS_TEST_NO_BUS)
{
	static const uint64_t world_talk_b_own[][3] = {
		{ WORLD, TALK, 0 }, { USER, OWN, UID_B },
	};
	struct kdbus_conn *root, *holder;
	struct kp_worker a, a2, b;
	char path[256];
	int bus_fd;

	bus_fd = kp_bus_world(path, sizeof(path));
	ASSERT_OK(bus_fd);
	ASSERT_OK(kdbus_hello(path, 0, 0, KDBUS_DEFAULT_POOL, &root));
	ASSERT_OK(kp_match_all(root));
	ASSERT_OK(kp_worker_start(&a, path, UID_A, GID_A, KP_NO_GROUP, 0));
	ASSERT_OK(kp_worker_start(&a2, path, UID_A, GID_A, KP_NO_GROUP, 0));
	ASSERT_OK(kp_worker_start(&b, path, UID_B, GID_B, KP_NO_GROUP, 0));
	KP_ASSERT_RES(KP_DO(&a, KP_MATCH_ALL, 0, NULL, 0), 0);
	KP_ASSERT_RES(KP_DO(&a2, KP_MATCH_ALL, 0, NULL, 0), 0);
	KP_ASSERT_RES(KP_DO(&b, KP_MATCH_ALL, 0, NULL, 0), 0);

	/* drop the ID_ADD notifications */
	KP_DO(&a, KP_COUNT, 0, NULL, 0);
	KP_DO(&a2, KP_COUNT, 0, NULL, 0);
	KP_DO(&b, KP_COUNT, 0, NULL, 0);
	kp_drain(root);

	/* b broadcasts: same-uid receivers (b) and the owner get it */
	KP_ASSERT_RES(KP_DO(&b, KP_BROADCAST, 0, NULL, 0xb1), 0);
	KP_ASSERT_RES(KP_DO(&a, KP_COUNT, 0, NULL, 0), 0);
	KP_ASSERT_RES(KP_DO(&a2, KP_COUNT, 0, NULL, 0), 0);
	KP_ASSERT_RES(KP_DO(&b, KP_COUNT, 0, NULL, 0), 1);

	/* a broadcasts: a and a2 get it, b does not */
	KP_ASSERT_RES(KP_DO(&a, KP_BROADCAST, 0, NULL, 0xa1), 0);
	KP_ASSERT_RES(KP_DO(&a, KP_COUNT, 0, NULL, 0), 1);
	KP_ASSERT_RES(KP_DO(&a2, KP_COUNT, 0, NULL, 0), 1);
	KP_ASSERT_RES(KP_DO(&b, KP_COUNT, 0, NULL, 0), 0);

	/* unicast signal from b to a: dropped silently, send succeeds */
	KP_ASSERT_RES(KP_DO(&b, KP_SIGNAL, a.id, NULL, 0xb2), 0);
	KP_ASSERT_RES(KP_DO(&a, KP_COUNT, 0, NULL, 0), 0);

	/* once b owns a name a may TALK to, a receives b's signals */
	ASSERT_OK(kp_hello_policy(path, KDBUS_HELLO_POLICY_HOLDER, "org.kp.b",
				  world_talk_b_own, 2, &holder));
	KP_ASSERT_RES(KP_DO(&b, KP_ACQUIRE, 0, "org.kp.b", 0), 0);
	KP_DO(&a, KP_COUNT, 0, NULL, 0);
	KP_DO(&a2, KP_COUNT, 0, NULL, 0);
	KP_DO(&b, KP_COUNT, 0, NULL, 0);
	KP_ASSERT_RES(KP_DO(&b, KP_BROADCAST, 0, NULL, 0xb3), 0);
	KP_ASSERT_RES(KP_DO(&a, KP_COUNT, 0, NULL, 0), 1);
	KP_ASSERT_RES(KP_DO(&a2, KP_COUNT, 0, NULL, 0), 1);
	KP_ASSERT_RES(KP_DO(&b, KP_COUNT, 0, NULL, 0), 1);
	KP_ASSERT_RES(KP_DO(&b, KP_SIGNAL, a.id, NULL, 0xb4), 0);
	KP_ASSERT_RES(KP_DO(&a, KP_COUNT, 0, NULL, 0), 1);
	/* the sender's own TALK right is not checked for signals */
	KP_ASSERT_RES(KP_DO(&a, KP_SIGNAL, b.id, NULL, 0xa2), 0);
	KP_ASSERT_RES(KP_DO(&b, KP_COUNT, 0, NULL, 0), 0);

	/* the owner received every broadcast: 0xb1, 0xa1, 0xb3 */
	ASSERT_EQ(kp_drain(root), 3);

	RUN(kp_worker_stop(&b));
	RUN(kp_worker_stop(&a2));
	RUN(kp_worker_stop(&a));
	kdbus_conn_free(holder);
	kdbus_conn_free(root);
	close(bus_fd);
	return TEST_OK;
}

/*
 * Many credentials against one entry: more workers than the policy
 * cache has slots, with grants for half of them, checked twice (cached
 * and not) and again after the grants flip. A decision cached for the
 * wrong credentials, or kept across an upload, shows here.
 */
KDBUS_TEST_FULL(policy, many_credentials, KDBUS_TEST_NO_BUS, 180)
{
	enum { N = 72, BASE = 3000 };
	uint64_t grants[N / 2][3];
	struct kdbus_conn *svc, *holder;
	struct kp_worker *w;
	char path[256];
	int bus_fd, r = TEST_OK;

	bus_fd = kp_bus_world(path, sizeof(path));
	ASSERT_OK(bus_fd);
	ASSERT_OK(kdbus_raise_nofile(4096));
	ASSERT_OK(kdbus_hello(path, 0, 0, KDBUS_DEFAULT_POOL, &svc));
	ASSERT_OK(kp_acquire(svc, "org.kp.svc", 0));

	/* even uids may talk */
	for (int i = 0; i < N / 2; i++) {
		grants[i][0] = USER;
		grants[i][1] = TALK;
		grants[i][2] = BASE + 2 * i;
	}
	ASSERT_OK(kp_hello_policy(path, KDBUS_HELLO_POLICY_HOLDER, "org.kp.svc",
				  (const uint64_t (*)[3])grants, N / 2,
				  &holder));

	w = calloc(N, sizeof(*w));
	ASSERT(w);
	for (int i = 0; i < N; i++)
		ASSERT_OK(kp_worker_start(&w[i], path, BASE + i, BASE + i,
					  KP_NO_GROUP, 0));

	for (int round = 0; round < 4 && r == TEST_OK; round++) {
		/* rounds 2 and 3: odd uids may talk */
		int parity = round >= 2;

		if (round == 2) {
			for (int i = 0; i < N / 2; i++)
				grants[i][2] = BASE + 2 * i + 1;
			ASSERT_OK(kp_update_policy(holder, "org.kp.svc",
						   (const uint64_t (*)[3])grants,
						   N / 2));
		}
		for (int i = 0; i < N; i++) {
			long e = (i % 2 == parity) ? 0 : -EPERM;
			long got = KP_DO(&w[i], KP_SEND, svc->id, NULL, i);

			if (got != e) {
				DIAG("round %d uid %d: expected %ld, got %ld",
				     round, BASE + i, e, got);
				r = TEST_FAIL;
				break;
			}
		}
		kp_drain(svc);
	}

	for (int i = 0; i < N; i++)
		if (kp_worker_stop(&w[i]) != TEST_OK)
			r = TEST_FAIL;
	free(w);
	kdbus_conn_free(holder);
	kdbus_conn_free(svc);
	close(bus_fd);
	return r;
}

/*
 * A HELLO whose policy fails leaves no trace: the bus sees no ID_ADD
 * for it and its entries are gone (kdbus.connection(7), the preferred way).
 * A second NAME item is a parser error.
 */
KDBUS_TEST(policy, failed_hello_no_trace, KDBUS_TEST_NO_BUS)
{
	static const uint64_t world_talk[][3] = { { WORLD, TALK, 0 } };
	struct kdbus_conn *watch, *holder, *dup;
	struct kdbus_cmd_hello *h;
	char path[256];
	int bus_fd;

	bus_fd = kp_bus_world(path, sizeof(path));
	ASSERT_OK(bus_fd);
	ASSERT_OK(kdbus_hello(path, 0, 0, KDBUS_DEFAULT_POOL, &watch));
	ASSERT_OK(kp_match_all(watch));
	ASSERT_OK(kp_hello_policy(path, KDBUS_HELLO_POLICY_HOLDER, "org.kp.a",
				  world_talk, 1, &holder));
	kp_drain(watch);

	/* duplicate entry: EEXIST; bad grant: EINVAL; no ID_ADD for either */
	ASSERT_ERR(kp_hello_policy(path, KDBUS_HELLO_POLICY_HOLDER, "org.kp.a",
				   world_talk, 1, &dup), EEXIST);
	ASSERT_ERR(kp_hello_policy(path, KDBUS_HELLO_POLICY_HOLDER, "org.kp.b",
				   (const uint64_t[][3]){ { WORLD, 7, 0 } }, 1,
				   &dup), EINVAL);
	ASSERT_ERR(kp_hello_policy(path, KDBUS_HELLO_ACTIVATOR, "org.kp.a",
				   NULL, 0, &dup), EEXIST);
	ASSERT_ERR(kdbus_recv_msg(watch, 0, 0, NULL, NULL), EAGAIN);

	/* nothing of the failed ones stayed: org.kp.b is free */
	ASSERT_OK(kp_hello_policy(path, KDBUS_HELLO_POLICY_HOLDER, "org.kp.b",
				  NULL, 0, &dup));
	kdbus_conn_free(dup);

	/* a second NAME in HELLO: EINVAL from the parser */
	h = cmd_new(sizeof(*h));
	h->flags = KDBUS_HELLO_POLICY_HOLDER;
	kp_add_name(h, "org.kp.c");
	kp_add_access(h, WORLD, SEE, 0);
	kp_add_name(h, "org.kp.d");
	ASSERT_ERR(kp_hello_cmd(path, h, &dup), EINVAL);
	cmd_free(h);

	kdbus_conn_free(holder);
	kdbus_conn_free(watch);
	close(bus_fd);
	return TEST_OK;
}
