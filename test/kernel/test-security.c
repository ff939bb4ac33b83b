// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The "confirm or refute" list of issue 12 (SECURITY.md): properties of
 * the shared bus that other users' limits and resources must not break.
 */

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kdbus-test.h"
#include "kdbus-util.h"
#include "test-policy.h"

/*
 * Pool writes do not depend on the writer's RLIMIT_FSIZE. A task whose
 * file-size limit is 0 sends a message and disconnects: the message and
 * the notifications its disconnect causes (written into other pools in
 * its context) all arrive. On a module writing pools through the VFS,
 * every such write failed with EFBIG for every receiver.
 */
KDBUS_TEST(security, rlimit_fsize_no_effect_on_pools, 0)
{
	static const char name[] = "org.kdbus.test.Fsize";
	struct kdbus_conn *mon, *r;
	struct kn_notify n;
	struct kdbus_msg *m;
	uint64_t off, child_id = 0;
	bool name_removed = false, id_removed = false;
	int p[2], status;
	pid_t pid;

	ASSERT_OK(kn_monitor(env->bus_path, &mon));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &r));
	ASSERT(pipe(p) == 0);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = { 0, 0 };
		struct kdbus_conn *c;

		close(p[0]);
		signal(SIGXFSZ, SIG_IGN);
		if (kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &c) < 0 ||
		    kn_acquire(c, name, 0, NULL) < 0)
			_exit(1);
		if (write(p[1], &c->id, sizeof(c->id)) != sizeof(c->id))
			_exit(1);
		if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
			_exit(1);
		if (kdbus_send(c, r->id, 1, 0, 0, 0, "fsize", 5) < 0)
			_exit(2);
		_exit(0);	/* the disconnect notifies in this context */
	}
	close(p[1]);
	ASSERT(read(p[0], &child_id, sizeof(child_id)) == sizeof(child_id));
	close(p[0]);
	ASSERT(waitpid(pid, &status, 0) == pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
		kdbus_diag("SEND failed under RLIMIT_FSIZE=0");
	ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	ASSERT_OK(kdbus_wait_recv(r, 2000, &m, &off));
	ASSERT_EQ(m->src_id, child_id);
	ASSERT_OK(kdbus_free(r, off));

	/* the monitor saw the disconnect's notifications */
	for (int i = 0; i < 50 && !(name_removed && id_removed); i++) {
		int ret = kn_next_notify(mon, &n);

		if (ret == -EAGAIN) {
			kdbus_msleep(20);
			continue;
		}
		ASSERT(ret >= 0);
		if (n.type == KDBUS_ITEM_NAME_REMOVE && !strcmp(n.name, name))
			name_removed = true;
		if (n.type == KDBUS_ITEM_ID_REMOVE && n.old_id == child_id)
			id_removed = true;
	}
	if (!name_removed || !id_removed)
		kdbus_diag("lost: %s%s", name_removed ? "" : "NAME_REMOVE ",
			   id_removed ? "" : "ID_REMOVE");
	ASSERT(name_removed && id_removed);

	kdbus_conn_free(r);
	kdbus_conn_free(mon);
	return TEST_OK;
}

/*
 * HELLO has no upper bound on pool_size (the ABI sets none, kdbus.connection(7)), and
 * needs none: the pool is a sparse shmem file (VM_NORESERVE) whose pages
 * exist only where messages are written, and what senders can make a
 * receiver hold is bounded per sending user by message counts and sizes,
 * not by the pool's size. A 1 TiB pool costs nothing; a size no shmem
 * file can have is EINVAL.
 */
KDBUS_TEST(security, pool_size_no_upper_bound_needed, 0)
{
	struct kdbus_cmd_hello h;
	struct kdbus_conn *big, *s, *none = NULL;
	struct kdbus_msg *m;
	long before, after;
	uint64_t off;

	before = kdbus_meminfo_kb("Shmem");
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, 1ULL << 40, &big));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &s));
	ASSERT_OK(kdbus_send(s, big->id, 1, 0, 0, 0, "x", 1));
	ASSERT_OK(kdbus_recv_msg(big, 0, 0, &m, &off));
	ASSERT_EQ(m->src_id, s->id);
	ASSERT_OK(kdbus_free(big, off));
	after = kdbus_meminfo_kb("Shmem");
	ASSERT(before >= 0 && after >= 0);
	if (after - before > 4096) {
		kdbus_diag("a 1 TiB pool took %ld kB of Shmem", after - before);
		return TEST_FAIL;
	}
	kdbus_conn_free(big);

	memset(&h, 0, sizeof(h));
	h.size = sizeof(h);
	h.pool_size = 1ULL << 63;
	ASSERT_ERR(kdbus_hello_cmd(env->bus_path, &h, &none), EINVAL);
	kdbus_conn_free(s);
	return TEST_OK;
}

static int send_memfds(struct kdbus_conn *c, uint64_t dst, int fd,
		       unsigned int n)
{
	struct kdbus_msg *m = kdbus_msg_new(dst, 5, 0, 0, NULL, 0);
	struct kdbus_memfd mf = { .start = 0, .size = 8, .fd = fd };
	int r;

	while (n--)
		cmd_add_item(m, KDBUS_ITEM_PAYLOAD_MEMFD, &mf, sizeof(mf));
	r = kdbus_send_msg(c->fd, 0, m, NULL);
	cmd_free(m);
	return r;
}

/*
 * Memfds in flight are not counted against the 16 in-flight descriptors
 * per sending user (confirmed; the 2015 ABI counts FDS items only). What
 * one user can pin in a receiver stays bounded: 16 memfds per message and
 * 256 messages per sending user and receiver (then ENOBUFS), and a
 * memfd's pages are charged to whoever created them, the sender. Counting
 * memfds as descriptors would make a client that sends 17 large bodies
 * to a slow service fail, so the spec's behaviour is kept.
 */
KDBUS_TEST(security, memfds_in_flight_bounded, 0)
{
	struct kdbus_conn *a, *b;
	unsigned int i;
	int fd;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	/* a pool large enough that the message count, not the share, binds */
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, 64ULL << 20, &b));
	fd = memfd_create("kdbus-bound", MFD_ALLOW_SEALING);
	ASSERT(fd >= 0);
	ASSERT(write(fd, "12345678", 8) == 8);
	ASSERT(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
		     F_SEAL_WRITE | F_SEAL_SEAL) == 0);

	ASSERT_ERR(send_memfds(a, b->id, fd, 17), E2BIG);
	for (i = 0; i < KDBUS_CONN_MAX_MSGS; i++)
		ASSERT_OK(send_memfds(a, b->id, fd, 16));
	ASSERT_ERR(send_memfds(a, b->id, fd, 16), ENOBUFS);
	close(fd);
	kdbus_conn_free(b);	/* drops everything it pinned */
	kdbus_conn_free(a);
	return TEST_OK;
}

/* REPLY_DEAD notifications for @cookie that reach @c within @ms */
static int count_reply_dead(struct kdbus_conn *c, uint64_t cookie,
			    unsigned int ms)
{
	uint64_t end = kdbus_now_ns() + ms * 1000000ULL, off;
	struct kdbus_msg *m;
	int n = 0;

	while (kdbus_now_ns() < end) {
		if (kdbus_recv_msg(c, 0, 0, &m, &off) < 0) {
			kdbus_msleep(10);
			continue;
		}
		if (m->src_id == KDBUS_SRC_ID_KERNEL &&
		    m->items[0].type == KDBUS_ITEM_REPLY_DEAD &&
		    m->cookie_reply == cookie)
			n++;
		kdbus_free(c, off);
	}
	return n;
}

/*
 * A request queued at an activator that the new owner cannot take (it
 * carries descriptors, the owner did not say ACCEPT_FD) is dropped at the
 * hand-over; its requester learns it at once (REPLY_DEAD), instead of
 * waiting for its timeout with a tracker pointing at the new owner.
 */
KDBUS_TEST(security, activator_drop_reply_dead, 0)
{
	static const char name[] = "org.kdbus.test.DropOnMove";
	struct kdbus_conn *act, *a, *s;
	struct kdbus_msg *m;
	int p[2], n;

	ASSERT_OK(kn_hello_named(env->bus_path,
				 KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_ACCEPT_FD,
				 name, KDBUS_DEFAULT_POOL, &act));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	ASSERT(pipe(p) == 0);
	m = kdbus_msg_new(KDBUS_DST_ID_NAME, 42, KDBUS_MSG_EXPECT_REPLY,
			  kdbus_now_ns() + 30000000000ULL, "q", 1);
	cmd_add_str(m, KDBUS_ITEM_DST_NAME, name);
	cmd_add_item(m, KDBUS_ITEM_FDS, &p[0], sizeof(int));
	ASSERT_OK(kdbus_send_msg(a->fd, 0, m, NULL));
	cmd_free(m);

	/* the real service cannot take descriptors */
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &s));
	ASSERT_OK(kn_acquire(s, name, 0, NULL));
	n = count_reply_dead(a, 42, 1500);
	if (n != 1)
		kdbus_diag("%d REPLY_DEAD for the dropped request", n);
	ASSERT_EQ(n, 1);

	close(p[0]);
	close(p[1]);
	kdbus_conn_free(s);
	kdbus_conn_free(a);
	kdbus_conn_free(act);
	return TEST_OK;
}

/*
 * Another user's churn cannot make a receiver lose the answers to its
 * own requests, nor the notifications of a third user (issue 12,
 * defect 4). uid 4901 connects and disconnects 300 times while a
 * receiver of uid 4902 matches every notification: the ID_ADD/ID_REMOVE
 * flood is charged to 4901 (at most 256 queued, the rest dropped); then
 * the receiver's own call times out and its REPLY_TIMEOUT arrives, and
 * uid 4903's HELLO still reaches it. With one shared slot for all kernel
 * notifications, both were lost.
 */
KDBUS_TEST(security, notification_churn_other_uid, KDBUS_TEST_NO_BUS)
{
	struct kdbus_conn *v, *peer, *c, *late;
	struct kdbus_msg *m;
	char path[256];
	uint64_t off;
	bool timeout_seen = false, late_seen = false;
	int bus_fd, i, n = 0;

	bus_fd = kp_bus_world(path, sizeof(path));
	ASSERT_OK(bus_fd);
	ASSERT_OK(kdbus_hello_as_uid(path, 4902, 0, 0, KDBUS_DEFAULT_POOL, &v));
	ASSERT_OK(kp_match_all(v));
	ASSERT_OK(kdbus_hello_as_uid(path, 4902, 0, 0, KDBUS_DEFAULT_POOL,
				     &peer));

	for (i = 0; i < 300; i++) {
		ASSERT_OK(kdbus_hello_as_uid(path, 4901, 0, 0, 4096 * 4, &c));
		kdbus_conn_free(c);
	}

	/* v's own call, sent as its user (TALK); peer never answers */
	ASSERT(setresuid(-1, 4902, -1) == 0);
	i = kdbus_send(v, peer->id, 77, KDBUS_MSG_EXPECT_REPLY,
		       kdbus_now_ns() + 300000000ULL, 0, "q", 1);
	ASSERT(setresuid(-1, 0, -1) == 0);
	ASSERT_OK(i);
	ASSERT_OK(kdbus_hello_as_uid(path, 4903, 0, 0, KDBUS_DEFAULT_POOL,
				     &late));
	kdbus_msleep(1500);

	while (kdbus_recv_msg(v, 0, 0, &m, &off) == 0) {
		n++;
		if (m->src_id == KDBUS_SRC_ID_KERNEL) {
			if (m->items[0].type == KDBUS_ITEM_REPLY_TIMEOUT &&
			    m->cookie_reply == 77)
				timeout_seen = true;
			if (m->items[0].type == KDBUS_ITEM_ID_ADD &&
			    m->items[0].id_change.id == late->id)
				late_seen = true;
		}
		ASSERT_OK(kdbus_free(v, off));
	}
	if (!timeout_seen || !late_seen)
		kdbus_diag("after %d queued messages: REPLY_TIMEOUT %s, uid 4903's ID_ADD %s",
			   n, timeout_seen ? "arrived" : "lost",
			   late_seen ? "arrived" : "lost");
	ASSERT(timeout_seen);
	ASSERT(late_seen);

	kdbus_conn_free(late);
	kdbus_conn_free(peer);
	kdbus_conn_free(v);
	close(bus_fd);
	return TEST_OK;
}

/* MATCH_ADD of one match with n ID rules, or with one Bloom mask rule of
 * gens generations */
static int add_match(struct kdbus_conn *c, uint64_t cookie, unsigned int n,
		     unsigned int gens)
{
	struct kdbus_cmd_match *m = cmd_new(sizeof(*m));
	int r;

	m->cookie = cookie;
	if (gens) {
		size_t size = (size_t)gens * KDBUS_DEFAULT_BLOOM;
		uint8_t *mask = calloc(1, size);

		if (!mask)
			return -ENOMEM;
		mask[0] = 1;
		cmd_add_item(m, KDBUS_ITEM_BLOOM_MASK, mask, size);
		free(mask);
	}
	for (unsigned int i = 0; i < n; i++)
		cmd_add_u64(m, KDBUS_ITEM_ID, 1000 + i);
	r = kdbus_ioctl(c->fd, KDBUS_CMD_MATCH_ADD, m);
	cmd_free(m);
	return r;
}

/*
 * Rules per match are bounded (E2BIG past KDBUS_MATCH_MAX_RULES = 16) and
 * so is the memory of all matches of one user (EMFILE past 1 MiB), so one
 * user cannot make every broadcast walk an unbounded rule set by opening
 * connections; another user's matches are unaffected, and closing a
 * connection returns its budget (issue 12, defect 3).
 */
KDBUS_TEST(security, match_rule_and_memory_limits, KDBUS_TEST_NO_BUS)
{
	struct kdbus_conn *a[4], *b;
	char path[256];
	int bus_fd, r = 0;
	unsigned int i, n = 0;

	bus_fd = kp_bus_world(path, sizeof(path));
	ASSERT_OK(bus_fd);
	for (i = 0; i < 4; i++)
		ASSERT_OK(kdbus_hello_as_uid(path, 4901, 0, 0,
					     KDBUS_DEFAULT_POOL, &a[i]));
	ASSERT_OK(kdbus_hello_as_uid(path, 4902, 0, 0, KDBUS_DEFAULT_POOL, &b));

	ASSERT_OK(add_match(a[0], 1, 16, 0));
	ASSERT_ERR(add_match(a[0], 2, 17, 0), E2BIG);

	/* 16 KiB masks: the user's budget runs out across its connections */
	for (i = 0; i < 4 * 256 && r == 0; i++) {
		r = add_match(a[i % 4], 100 + i, 0, 256);
		if (r == 0)
			n++;
	}
	if (r != -EMFILE)
		kdbus_diag("%u large matches, then %d", n, r);
	ASSERT_EQ(r, -EMFILE);
	ASSERT(n >= 32 && n <= 64);
	/* another user still adds matches */
	ASSERT_OK(add_match(b, 1, 0, 256));
	/* closing a connection gives its matches' memory back */
	kdbus_conn_free(a[0]);
	ASSERT_OK(add_match(a[1], 9999, 0, 256));

	for (i = 1; i < 4; i++)
		kdbus_conn_free(a[i]);
	kdbus_conn_free(b);
	close(bus_fd);
	return TEST_OK;
}
