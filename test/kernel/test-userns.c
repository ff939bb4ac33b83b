// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Namespace translation of metadata (kdbus.connection(7), kdbus.item(7),
 * kdbus.fs(7)): a process in a new user namespace (root inside, uid 1000
 * outside) and a new pid namespace talks to the initial namespaces. Each side
 * sees the other's ids as mapped into its own user namespace (overflow ids
 * where unmappable), pids as numbered in its own pid namespace (0 where
 * invisible), and capabilities translated by namespace ownership.
 */
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

#define OUTER_ID	1000
#define OVERFLOW_ID	65534

/* in the grandchild: exit with the failing line */
#define CHECK(cond) do {						\
		if (!(cond)) {						\
			fprintf(stderr, "userns: line %d: %s\n",	\
				__LINE__, #cond);			\
			_exit(__LINE__ % 250 + 2);			\
		}							\
	} while (0)

struct userns_pipes {
	int up[2];	/* child -> parent */
	int down[2];	/* parent -> child */
};

static uint32_t cap_last_cap(void)
{
	char buf[32] = "";
	int fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY);

	if (fd >= 0) {
		if (read(fd, buf, sizeof(buf) - 1) < 0)
			buf[0] = 0;
		close(fd);
	}
	return strtoul(buf, NULL, 10);
}

static uint64_t status_hex(const char *key)
{
	static char status[8192];
	ssize_t n;
	char *p;
	int fd = open("/proc/self/status", O_RDONLY);

	if (fd < 0)
		return ~0ULL;
	n = read(fd, status, sizeof(status) - 1);
	close(fd);
	if (n < 0)
		return ~0ULL;
	status[n] = 0;
	p = strstr(status, key);
	return p ? strtoull(p + strlen(key), NULL, 16) : ~0ULL;
}

static uint64_t caps_set(const struct kdbus_item *it, int n)
{
	return it->caps.caps[2 * n] |
	       (uint64_t)it->caps.caps[2 * n + 1] << 32;
}

/* pid 1 of the new pid namespace, root of the new user namespace */
static void grandchild(const char *bus_path, struct userns_pipes *p,
		       int start)
{
	uint64_t full = (2ULL << cap_last_cap()) - 1;
	struct kdbus_conn *r, *r2;
	struct kdbus_item *it;
	struct kdbus_msg *m;
	uint64_t off, ids[2];

	/* after the child reported our pid on the same pipe */
	CHECK(read(start, &ids[0], 1) == 1);
	prctl(PR_SET_NAME, "userns-inner");
	CHECK(getpid() == 1);
	CHECK(getuid() == 0 && getgid() == 0);

	CHECK(kdbus_hello(bus_path, 0, _KDBUS_ATTACH_ALL, KDBUS_DEFAULT_POOL,
			  &r) == 0);
	CHECK(kdbus_hello(bus_path, 0, _KDBUS_ATTACH_ALL, KDBUS_DEFAULT_POOL,
			  &r2) == 0);
	ids[0] = r->id;
	ids[1] = r2->id;
	CHECK(write(p->up[1], ids, sizeof(ids)) == sizeof(ids));

	/* from root of the initial namespaces */
	CHECK(kdbus_wait_recv(r, 5000, &m, &off) == 0);

	it = kdbus_msg_find(m, KDBUS_ITEM_CREDS);
	CHECK(it);
	CHECK(it->creds.uid == OVERFLOW_ID && it->creds.euid == OVERFLOW_ID);
	CHECK(it->creds.suid == OVERFLOW_ID && it->creds.fsuid == OVERFLOW_ID);
	CHECK(it->creds.gid == OVERFLOW_ID && it->creds.egid == OVERFLOW_ID);
	CHECK(it->creds.sgid == OVERFLOW_ID && it->creds.fsgid == OVERFLOW_ID);

	/* invisible in this pid namespace */
	it = kdbus_msg_find(m, KDBUS_ITEM_PIDS);
	CHECK(it);
	CHECK(it->pids.pid == 0 && it->pids.tid == 0 && it->pids.ppid == 0);

	/* the sender's euid owns this namespace: all caps, no inheritable */
	it = kdbus_msg_find(m, KDBUS_ITEM_CAPS);
	CHECK(it);
	CHECK(caps_set(it, 0) == 0);
	CHECK(caps_set(it, 1) == full);
	CHECK(caps_set(it, 2) == full);
	CHECK(caps_set(it, 3) == full);

	/* unset in the VM, and never an overflow id */
	it = kdbus_msg_find(m, KDBUS_ITEM_AUDIT);
	CHECK(it);
	CHECK(it->audit.loginuid == 0xffffffff);

	/* not visible, but the sender's send mask reveals it */
	it = kdbus_msg_find(m, KDBUS_ITEM_TID_COMM);
	CHECK(it && strcmp(it->str, "userns-outer") == 0);
	CHECK(kdbus_free(r, off) == 0);

	/* the same sender with an empty send mask: no /proc items */
	CHECK(kdbus_wait_recv(r, 5000, &m, &off) == 0);
	CHECK(kdbus_msg_find(m, KDBUS_ITEM_CREDS));
	CHECK(kdbus_msg_find(m, KDBUS_ITEM_PIDS));
	CHECK(kdbus_msg_find(m, KDBUS_ITEM_TIMESTAMP));
	CHECK(!kdbus_msg_find(m, KDBUS_ITEM_TID_COMM));
	CHECK(!kdbus_msg_find(m, KDBUS_ITEM_CMDLINE));
	CHECK(!kdbus_msg_find(m, KDBUS_ITEM_CAPS));
	CHECK(kdbus_free(r, off) == 0);

	/* within the new namespaces */
	CHECK(kdbus_send(r, r2->id, 1, 0, 0, 0, NULL, 0) == 0);
	CHECK(kdbus_recv_msg(r2, 0, 0, &m, &off) == 0);
	it = kdbus_msg_find(m, KDBUS_ITEM_CREDS);
	CHECK(it && it->creds.uid == 0 && it->creds.euid == 0);
	CHECK(it->creds.gid == 0 && it->creds.fsgid == 0);
	it = kdbus_msg_find(m, KDBUS_ITEM_PIDS);
	CHECK(it && it->pids.pid == 1 && it->pids.tid == 1);
	CHECK(it->pids.ppid == 0);
	it = kdbus_msg_find(m, KDBUS_ITEM_CAPS);
	CHECK(it);
	CHECK(caps_set(it, 1) == status_hex("CapPrm:"));
	CHECK(caps_set(it, 2) == status_hex("CapEff:"));
	CHECK(caps_set(it, 2) == full);
	CHECK(kdbus_free(r2, off) == 0);

	/* to a peer in the initial namespaces, opened as uid 1000 there */
	CHECK(read(p->down[0], ids, sizeof(ids[0])) == sizeof(ids[0]));
	CHECK(kdbus_send(r, ids[0], 2, 0, 0, 0, NULL, 0) == 0);

	/* wait until the parent is done reading */
	CHECK(read(p->down[0], ids, 1) == 1);
	_exit(0);
}

/* enters the new namespaces, waits for the id maps, forks pid 1 */
static void child(const char *bus_path, struct userns_pipes *p)
{
	pid_t pid;
	char c;
	int status, start[2];

	if (unshare(CLONE_NEWUSER | CLONE_NEWPID) < 0) {
		fprintf(stderr, "userns: unshare: %m\n");
		_exit(TEST_SKIP);
	}
	if (write(p->up[1], "u", 1) != 1 || read(p->down[0], &c, 1) != 1 ||
	    c != 'm')
		_exit(1);

	if (setresgid(0, 0, 0) < 0 || setgroups(0, NULL) < 0 ||
	    setresuid(0, 0, 0) < 0) {
		fprintf(stderr, "userns: set ids: %m\n");
		_exit(1);
	}

	if (pipe(start) < 0)
		_exit(1);
	pid = fork();
	if (pid < 0)
		_exit(1);
	if (pid == 0)
		grandchild(bus_path, p, start[0]);

	/* pid as numbered in the initial pid namespace */
	if (write(p->up[1], &pid, sizeof(pid)) != sizeof(pid) ||
	    write(start[1], "g", 1) != 1)
		_exit(1);
	if (waitpid(pid, &status, 0) != pid)
		_exit(1);
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

static int write_map(pid_t pid, const char *file, const char *map)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, map, strlen(map));
	close(fd);
	return n == (ssize_t)strlen(map) ? 0 : -EIO;
}

KDBUS_TEST(userns, translated_ids, 0)
{
	struct kdbus_conn *outer, *outer1000;
	struct userns_pipes p;
	struct kdbus_item *it;
	struct kdbus_msg *m;
	uint64_t off, ids[2];
	pid_t pid, inner;
	char c;

	ASSERT(pipe(p.up) == 0 && pipe(p.down) == 0);
	prctl(PR_SET_NAME, "userns-outer");
	ASSERT_OK(kdbus_hello(env->bus_path, 0, _KDBUS_ATTACH_ALL,
			      KDBUS_DEFAULT_POOL, &outer));
	/* a peer the inner process may talk to: opened by uid 1000 */
	ASSERT_OK(kdbus_hello_as_uid(env->bus_path, OUTER_ID, 0,
				     _KDBUS_ATTACH_ALL, KDBUS_DEFAULT_POOL,
				     &outer1000));

	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0)
		child(env->bus_path, &p);

	if (read(p.up[0], &c, 1) != 1) {
		int r = kdbus_wait_child(pid);

		if (r == TEST_SKIP)
			SKIP("no user namespaces");
		FAIL("child failed before unshare (%d)", r);
	}
	ASSERT_OK(write_map(pid, "uid_map", "0 1000 1\n"));
	ASSERT_OK(write_map(pid, "gid_map", "0 1000 1\n"));
	ASSERT_EQ(write(p.down[1], "m", 1), 1);

	ASSERT_EQ(read(p.up[0], &inner, sizeof(inner)), sizeof(inner));
	ASSERT_EQ(read(p.up[0], ids, sizeof(ids)), sizeof(ids));

	/* everything revealed, then nothing in the send mask */
	ASSERT_OK(kdbus_send(outer, ids[0], 1, 0, 0, 0, NULL, 0));
	ASSERT_OK(kdbus_update_attach(outer, 0, _KDBUS_ATTACH_ALL));
	ASSERT_OK(kdbus_send(outer, ids[0], 2, 0, 0, 0, NULL, 0));

	ASSERT_EQ(write(p.down[1], &outer1000->id, sizeof(outer1000->id)),
		  sizeof(outer1000->id));
	ASSERT_OK(kdbus_wait_recv(outer1000, 10000, &m, &off));
	ASSERT_EQ(m->src_id, ids[0]);

	it = kdbus_msg_find(m, KDBUS_ITEM_CREDS);
	ASSERT(it);
	ASSERT_EQ(it->creds.uid, OUTER_ID);
	ASSERT_EQ(it->creds.euid, OUTER_ID);
	ASSERT_EQ(it->creds.suid, OUTER_ID);
	ASSERT_EQ(it->creds.fsuid, OUTER_ID);
	ASSERT_EQ(it->creds.gid, OUTER_ID);
	ASSERT_EQ(it->creds.fsgid, OUTER_ID);

	it = kdbus_msg_find(m, KDBUS_ITEM_PIDS);
	ASSERT(it);
	ASSERT_EQ(it->pids.pid, inner);
	ASSERT_EQ(it->pids.tid, inner);
	ASSERT_EQ(it->pids.ppid, pid);

	/* the inner root has no capabilities out here */
	it = kdbus_msg_find(m, KDBUS_ITEM_CAPS);
	ASSERT(it);
	ASSERT_EQ(caps_set(it, 0) | caps_set(it, 1) | caps_set(it, 2) |
		  caps_set(it, 3), 0);

	it = kdbus_msg_find(m, KDBUS_ITEM_TID_COMM);
	ASSERT(it);
	ASSERT(strcmp(it->str, "userns-inner") == 0);
	ASSERT_OK(kdbus_free(outer1000, off));

	ASSERT_EQ(write(p.down[1], "x", 1), 1);
	ASSERT_EQ(kdbus_wait_child(pid), 0);

	kdbus_conn_free(outer1000);
	kdbus_conn_free(outer);
	return TEST_OK;
}
