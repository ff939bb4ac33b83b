// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Metadata (kdbus.connection(7)): every item checked against
 * what the sending task really is (read from its own /proc at the moment
 * of sending), the grant rules of the send and receive masks, the
 * HELLO-time snapshot of CONN_INFO, the BUS_MAKE-time snapshot of
 * BUS_CREATOR_INFO, faked identities, the EXE root rule, and timestamps
 * and sequence numbers.
 */
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

#define ATTACH_ALL	_KDBUS_ATTACH_ALL
#define CMDLINE_MAX	4096

/* the fixed order of kdbus.item(7) */
static const uint64_t meta_order[] = {
	KDBUS_ITEM_CREDS, KDBUS_ITEM_PIDS, KDBUS_ITEM_AUXGROUPS,
	KDBUS_ITEM_TID_COMM, KDBUS_ITEM_PID_COMM, KDBUS_ITEM_EXE,
	KDBUS_ITEM_CMDLINE, KDBUS_ITEM_CGROUP, KDBUS_ITEM_CAPS,
	KDBUS_ITEM_SECLABEL, KDBUS_ITEM_AUDIT, KDBUS_ITEM_OWNED_NAME,
	KDBUS_ITEM_CONN_DESCRIPTION, KDBUS_ITEM_TIMESTAMP,
};

static int meta_rank(uint64_t type)
{
	size_t i;

	for (i = 0; i < sizeof(meta_order) / sizeof(meta_order[0]); i++)
		if (meta_order[i] == type)
			return (int)i;
	return -1;
}

static bool is_meta(uint64_t type)
{
	return type >= _KDBUS_ITEM_ATTACH_BASE && type < 0x2000;
}

/*
 * Metadata items of an item chain: a mask of their attach bits; fails if
 * an item repeats (other than OWNED_NAME) or breaks the order.
 */
static int meta_items_mask(struct kdbus_item *first, size_t len,
			   uint64_t *mask)
{
	struct kdbus_item *it;
	int last = -1;

	*mask = 0;
	KDBUS_ITEM_FOREACH(it, first, len) {
		int rank;

		if (!is_meta(it->type))
			continue;
		rank = meta_rank(it->type);
		if (rank < 0)
			FAIL("unknown metadata item 0x%llx",
			     (unsigned long long)it->type);
		if (rank < last ||
		    (rank == last && it->type != KDBUS_ITEM_OWNED_NAME))
			FAIL("metadata item 0x%llx out of order",
			     (unsigned long long)it->type);
		last = rank;
		*mask |= 1ULL << (it->type - _KDBUS_ITEM_ATTACH_BASE);
	}
	return TEST_OK;
}

static int msg_meta_mask(struct kdbus_msg *m, uint64_t *mask)
{
	return meta_items_mask(m->items, KDBUS_MSG_ITEMS_LEN(m), mask);
}

/* whole file into buf (NUL-terminated); returns the length or -1 */
static ssize_t read_file(const char *path, char *buf, size_t size)
{
	ssize_t n, len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while ((size_t)len + 1 < size &&
	       (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = 0;
	return len;
}

/* "Key:\t<hex>" of /proc/self/status */
static uint64_t status_hex(const char *status, const char *key)
{
	const char *p = strstr(status, key);

	return p ? strtoull(p + strlen(key), NULL, 16) : ~0ULL;
}

static int item_str_eq(struct kdbus_item *it, const char *str)
{
	if (!it)
		FAIL("missing item, expected \"%s\"", str);
	if (it->size != KDBUS_ITEM_HDR + strlen(str) + 1 ||
	    strcmp(it->str, str) != 0)
		FAIL("item 0x%llx is \"%.*s\", expected \"%s\"",
		     (unsigned long long)it->type,
		     (int)(it->size - KDBUS_ITEM_HDR), it->str, str);
	return TEST_OK;
}

/* HELLO with explicit masks and an optional description */
static int hello_masks(const char *path, uint64_t send, uint64_t recv,
		       const char *desc, struct kdbus_conn **out)
{
	struct kdbus_cmd_hello *h = cmd_new(sizeof(*h));
	struct kdbus_conn *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	c->fd = open(path, O_RDWR | O_CLOEXEC);
	if (c->fd < 0) {
		r = -errno;
		goto fail;
	}
	h->attach_flags_send = send;
	h->attach_flags_recv = recv;
	h->pool_size = KDBUS_DEFAULT_POOL;
	if (desc)
		cmd_add_str(h, KDBUS_ITEM_CONN_DESCRIPTION, desc);
	r = kdbus_ioctl(c->fd, KDBUS_CMD_HELLO, h);
	if (r < 0)
		goto fail;
	c->id = h->id;
	c->hello = *h;
	c->pool_size = KDBUS_DEFAULT_POOL;
	c->pool = mmap(NULL, c->pool_size, PROT_READ, MAP_SHARED, c->fd, 0);
	if (c->pool == MAP_FAILED) {
		r = -errno;
		goto fail;
	}
	kdbus_free(c, h->offset);
	cmd_free(h);
	*out = c;
	return 0;
fail:
	cmd_free(h);
	kdbus_conn_free(c);
	return r;
}

static int name_acquire(struct kdbus_conn *c, const char *name)
{
	struct kdbus_cmd *cmd = cmd_new(sizeof(*cmd));
	int r;

	cmd_add_str(cmd, KDBUS_ITEM_NAME, name);
	r = kdbus_ioctl(c->fd, KDBUS_CMD_NAME_ACQUIRE, cmd);
	cmd_free(cmd);
	return r;
}

static int bus_creator_info(struct kdbus_conn *c, uint64_t attach,
			    struct kdbus_info **info, uint64_t *offset)
{
	struct kdbus_cmd_info cmd = {
		.size = sizeof(cmd),
		.attach_flags = attach,
	};
	int r;

	r = kdbus_ioctl(c->fd, KDBUS_CMD_BUS_CREATOR_INFO, &cmd);
	if (r < 0)
		return r;
	*info = (struct kdbus_info *)(c->pool + cmd.offset);
	*offset = cmd.offset;
	return 0;
}

/* zeroed memory shared with forked senders (anonymous mappings are zero) */
static void *shared_zeroed(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* --- what the sender really is ------------------------------------------ */

struct sender_truth {
	pid_t pid, tid, ppid;
	uid_t uid, euid, suid;
	gid_t gid, egid, sgid;
	int ngroups;
	gid_t groups[16];
	char tid_comm[16], pid_comm[16];
	char exe[PATH_MAX];
	char cmdline[CMDLINE_MAX];
	ssize_t cmdline_len;
	char cgroup[PATH_MAX];
	char cgroup_expected[PATH_MAX];
	uint32_t last_cap;
	uint64_t caps[4];
	char seclabel[256];
	uint32_t loginuid, sessionid;
	char err[128];
	uint64_t dst_id;
	int sent;
};

static void truth_err(struct sender_truth *t, const char *what)
{
	snprintf(t->err, sizeof(t->err), "%s: %s", what, strerror(errno));
}

/* fill in the truth from the calling thread's own /proc, then send */
static void *sender_thread(void *arg)
{
	struct sender_truth *t = arg;
	static char status[8192];
	char buf[64];
	ssize_t n;
	char *p;

	prctl(PR_SET_NAME, "kdbus-thread");
	t->tid = gettid();
	t->pid = getpid();
	t->ppid = getppid();
	getresuid(&t->uid, &t->euid, &t->suid);
	getresgid(&t->gid, &t->egid, &t->sgid);
	t->ngroups = getgroups(16, t->groups);
	prctl(PR_GET_NAME, t->tid_comm);
	if (read_file("/proc/self/comm", t->pid_comm, sizeof(t->pid_comm)) > 0)
		t->pid_comm[strcspn(t->pid_comm, "\n")] = 0;
	n = readlink("/proc/self/exe", t->exe, sizeof(t->exe) - 1);
	if (n < 0) {
		truth_err(t, "readlink /proc/self/exe");
		return NULL;
	}
	t->exe[n] = 0;
	t->cmdline_len = read_file("/proc/self/cmdline", t->cmdline,
				   sizeof(t->cmdline));
	if (read_file("/proc/self/cgroup", t->cgroup, sizeof(t->cgroup)) < 0) {
		truth_err(t, "/proc/self/cgroup");
		return NULL;
	}
	p = strstr(t->cgroup, "0::");
	if (p) {
		memmove(t->cgroup, p + 3, strlen(p + 3) + 1);
		t->cgroup[strcspn(t->cgroup, "\n")] = 0;
	}
	if (read_file("/proc/sys/kernel/cap_last_cap", buf, sizeof(buf)) > 0)
		t->last_cap = strtoul(buf, NULL, 10);
	if (read_file("/proc/thread-self/status", status, sizeof(status)) < 0) {
		truth_err(t, "/proc/thread-self/status");
		return NULL;
	}
	t->caps[0] = status_hex(status, "CapInh:");
	t->caps[1] = status_hex(status, "CapPrm:");
	t->caps[2] = status_hex(status, "CapEff:");
	t->caps[3] = status_hex(status, "CapBnd:");
	if (read_file("/proc/thread-self/attr/current", t->seclabel,
		      sizeof(t->seclabel)) < 0)
		t->seclabel[0] = 0;
	t->seclabel[strcspn(t->seclabel, "\n")] = 0;
	if (read_file("/proc/self/loginuid", buf, sizeof(buf)) > 0)
		t->loginuid = strtoul(buf, NULL, 10);
	if (read_file("/proc/self/sessionid", buf, sizeof(buf)) > 0)
		t->sessionid = strtoul(buf, NULL, 10);
	return NULL;
}

struct sender_args {
	struct sender_truth *t;
	struct kdbus_conn *s;
	int ret;
};

static void *sender_thread_send(void *arg)
{
	struct sender_args *a = arg;

	sender_thread(a->t);
	if (a->t->err[0])
		return NULL;
	a->ret = kdbus_send(a->s, a->t->dst_id, 1, 0, 0, 0, "meta", 4);
	a->t->sent = 1;
	return NULL;
}

/*
 * Point the argument area of the process at @area (CAP_SYS_RESOURCE):
 * the kernel reports it from there, like /proc/self/cmdline does.
 */
static int set_cmdline_area(const char *area, size_t len)
{
	if (prctl(PR_SET_MM, PR_SET_MM_ARG_START, (unsigned long)area, 0, 0) ||
	    prctl(PR_SET_MM, PR_SET_MM_ARG_END, (unsigned long)(area + len),
		  0, 0))
		return -errno;
	return 0;
}

/* a known argument vector with several arguments */
static const char test_cmdline[] = "kdbus-meta\0--first\0second arg\0";

/* returns a non-empty cgroup2 directory to move into, or "" */
static void make_cgroup(char *dir, size_t size, char *mnt, size_t mnt_size)
{
	snprintf(mnt, mnt_size, "/tmp/kdbus-cg-%d", getpid());
	dir[0] = 0;
	if (mkdir(mnt, 0700) < 0)
		return;
	if (mount("cgroup2", mnt, "cgroup2", 0, NULL) < 0) {
		rmdir(mnt);
		mnt[0] = 0;
		return;
	}
	snprintf(dir, size, "%.200s/kdbus-meta-%d", mnt, getpid());
	if (mkdir(dir, 0755) < 0)
		dir[0] = 0;
}

static void drop_cgroup(const char *dir, const char *mnt)
{
	char path[PATH_MAX];
	int fd;

	if (dir[0]) {
		/* back to the root, then remove ours */
		snprintf(path, sizeof(path), "%s/cgroup.procs", mnt);
		fd = open(path, O_WRONLY);
		if (fd >= 0) {
			if (write(fd, "0", 1) < 0)
				DIAG("cannot leave the test cgroup");
			close(fd);
		}
		rmdir(dir);
	}
	if (mnt[0]) {
		umount2(mnt, MNT_DETACH);
		rmdir(mnt);
	}
}

/* move the calling process into the cgroup2 directory @dir */
static int move_to_cgroup(const char *dir)
{
	char path[PATH_MAX + sizeof("/cgroup.procs")];
	int fd, r;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	r = write(fd, "0", 1) == 1 ? 0 : -errno;
	close(fd);
	return r;
}

/*
 * Fork a child with a connection of its own in *@s (default masks): 0 in
 * the child, the child's pid in the parent. A child that cannot connect
 * exits with 1.
 */
static pid_t fork_sender(const char *bus_path, struct kdbus_conn **s)
{
	pid_t pid = fork();

	if (pid == 0 &&
	    kdbus_hello(bus_path, 0, 0, KDBUS_DEFAULT_POOL, s) < 0)
		_exit(1);
	return pid;
}

/* the child: change identity, move into the cgroup, send from a thread */
static int sender_child(const char *bus_path, struct sender_truth *t,
			const char *cg_dir, const char *cg_mnt)
{
	static const gid_t groups[] = { 3000, 1000, 2000 };
	struct sender_args a = { .t = t };
	pthread_t thread;
	char *area;

	if (kdbus_hello(bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a.s) < 0) {
		truth_err(t, "hello");
		return 1;
	}

	if (cg_dir[0]) {
		if (move_to_cgroup(cg_dir) < 0) {
			truth_err(t, "cgroup.procs");
			return 1;
		}
		snprintf(t->cgroup_expected, sizeof(t->cgroup_expected), "%s",
			 cg_dir + strlen(cg_mnt));
	}

	/*
	 * All arguments are delivered, not only the first. The area is
	 * anonymous memory: procfs reads no other.
	 */
	area = mmap(NULL, sizeof(test_cmdline), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED) {
		truth_err(t, "mmap");
		return 1;
	}
	memcpy(area, test_cmdline, sizeof(test_cmdline));
	if (set_cmdline_area(area, sizeof(test_cmdline) - 1) < 0) {
		truth_err(t, "PR_SET_MM_ARG_*");
		return 1;
	}

	prctl(PR_SET_NAME, "kdbus-leader");
	if (setgroups(3, groups) < 0 || setresgid(1001, 1002, 1003) < 0 ||
	    setresuid(2001, 2002, 2003) < 0) {
		truth_err(t, "set ids");
		return 1;
	}
	prctl(PR_SET_DUMPABLE, 1);

	if (pthread_create(&thread, NULL, sender_thread_send, &a) != 0) {
		truth_err(t, "pthread_create");
		return 1;
	}
	pthread_join(thread, NULL);
	if (!t->err[0] && a.ret < 0) {
		errno = -a.ret;
		truth_err(t, "send");
	}
	/* the receiver reads the message before the sender goes away */
	kdbus_msleep(200);
	return t->err[0] ? 1 : 0;
}

KDBUS_TEST(metadata, sender_identity, 0)
{
	struct kdbus_item *it;
	struct sender_truth *t;
	struct kdbus_conn *r;
	struct kdbus_msg *m;
	char cg_dir[PATH_MAX], cg_mnt[PATH_MAX];
	uint64_t off, mask;
	pid_t pid;
	int i, status;

	t = shared_zeroed(sizeof(*t));
	ASSERT(t);

	ASSERT_OK(kdbus_hello(env->bus_path, 0, ATTACH_ALL,
			      KDBUS_DEFAULT_POOL, &r));
	t->dst_id = r->id;
	make_cgroup(cg_dir, sizeof(cg_dir), cg_mnt, sizeof(cg_mnt));
	if (!cg_dir[0])
		DIAG("no cgroup2 to move into; checking the root cgroup");

	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0)
		_exit(sender_child(env->bus_path, t, cg_dir, cg_mnt));

	i = kdbus_wait_recv(r, 5000, &m, &off);
	waitpid(pid, &status, 0);
	drop_cgroup(cg_dir, cg_mnt);
	if (t->err[0])
		FAIL("sender: %s", t->err);
	ASSERT_OK(i);
	ASSERT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);

	RUN(msg_meta_mask(m, &mask));

	it = kdbus_msg_find(m, KDBUS_ITEM_CREDS);
	ASSERT(it);
	ASSERT_EQ(it->size, KDBUS_ITEM_HDR + sizeof(struct kdbus_creds));
	ASSERT_EQ(it->creds.uid, 2001);
	ASSERT_EQ(it->creds.euid, 2002);
	ASSERT_EQ(it->creds.suid, 2003);
	ASSERT_EQ(it->creds.fsuid, 2002);
	ASSERT_EQ(it->creds.gid, 1001);
	ASSERT_EQ(it->creds.egid, 1002);
	ASSERT_EQ(it->creds.sgid, 1003);
	ASSERT_EQ(it->creds.fsgid, 1002);
	ASSERT_EQ(it->creds.uid, t->uid);
	ASSERT_EQ(it->creds.euid, t->euid);
	ASSERT_EQ(it->creds.gid, t->gid);

	it = kdbus_msg_find(m, KDBUS_ITEM_PIDS);
	ASSERT(it);
	ASSERT_EQ(it->size, KDBUS_ITEM_HDR + sizeof(struct kdbus_pids));
	ASSERT_EQ(it->pids.pid, pid);
	ASSERT_EQ(it->pids.pid, t->pid);
	ASSERT_EQ(it->pids.tid, t->tid);
	ASSERT(it->pids.tid != it->pids.pid);
	ASSERT_EQ(it->pids.ppid, getpid());
	ASSERT_EQ(it->pids.ppid, t->ppid);

	it = kdbus_msg_find(m, KDBUS_ITEM_AUXGROUPS);
	ASSERT(it);
	ASSERT_EQ(t->ngroups, 3);
	ASSERT_EQ(it->size, KDBUS_ITEM_HDR + 3 * sizeof(uint64_t));
	ASSERT_EQ(it->data64[0], 1000);
	ASSERT_EQ(it->data64[1], 2000);
	ASSERT_EQ(it->data64[2], 3000);

	RUN(item_str_eq(kdbus_msg_find(m, KDBUS_ITEM_TID_COMM),
			"kdbus-thread"));
	RUN(item_str_eq(kdbus_msg_find(m, KDBUS_ITEM_TID_COMM), t->tid_comm));
	RUN(item_str_eq(kdbus_msg_find(m, KDBUS_ITEM_PID_COMM),
			"kdbus-leader"));
	RUN(item_str_eq(kdbus_msg_find(m, KDBUS_ITEM_PID_COMM), t->pid_comm));
	RUN(item_str_eq(kdbus_msg_find(m, KDBUS_ITEM_EXE), t->exe));

	it = kdbus_msg_find(m, KDBUS_ITEM_CMDLINE);
	ASSERT(it);
	ASSERT(t->cmdline_len > 0);
	ASSERT_EQ(it->size - KDBUS_ITEM_HDR, t->cmdline_len);
	ASSERT(memcmp(it->str, t->cmdline, t->cmdline_len) == 0);
	ASSERT_EQ(t->cmdline_len, sizeof(test_cmdline) - 1);
	ASSERT(memcmp(it->str, test_cmdline, sizeof(test_cmdline) - 1) == 0);

	if (t->cgroup_expected[0])
		RUN(item_str_eq(kdbus_msg_find(m, KDBUS_ITEM_CGROUP),
				t->cgroup_expected));
	RUN(item_str_eq(kdbus_msg_find(m, KDBUS_ITEM_CGROUP), t->cgroup));

	it = kdbus_msg_find(m, KDBUS_ITEM_CAPS);
	ASSERT(it);
	ASSERT_EQ(it->size, 52);
	ASSERT_EQ(it->caps.last_cap, t->last_cap);
	for (i = 0; i < 4; i++) {
		uint64_t set = it->caps.caps[2 * i] |
			       (uint64_t)it->caps.caps[2 * i + 1] << 32;

		ASSERT_EQ(set, t->caps[i]);
	}
	/* setresuid() to non-zero ids cleared these */
	ASSERT_EQ(t->caps[1], 0);
	ASSERT_EQ(t->caps[2], 0);
	ASSERT(t->caps[3] != 0);

	DIAG("sender: cgroup %s, seclabel %s", t->cgroup,
	     t->seclabel[0] ? t->seclabel : "(none: no LSM label)");
	it = kdbus_msg_find(m, KDBUS_ITEM_SECLABEL);
	if (t->seclabel[0])
		RUN(item_str_eq(it, t->seclabel));
	else
		ASSERT(!it);

	it = kdbus_msg_find(m, KDBUS_ITEM_AUDIT);
	ASSERT(it);
	ASSERT_EQ(it->size, KDBUS_ITEM_HDR + sizeof(struct kdbus_audit));
	ASSERT_EQ(it->audit.loginuid, t->loginuid);
	ASSERT_EQ(it->audit.sessionid, t->sessionid);

	/* no names, no description: those items are absent */
	ASSERT(!kdbus_msg_find(m, KDBUS_ITEM_OWNED_NAME));
	ASSERT(!kdbus_msg_find(m, KDBUS_ITEM_CONN_DESCRIPTION));
	ASSERT(kdbus_msg_find(m, KDBUS_ITEM_TIMESTAMP));
	ASSERT_EQ(mask & ~(KDBUS_ATTACH_SECLABEL | KDBUS_ATTACH_NAMES |
			   KDBUS_ATTACH_CONN_DESCRIPTION),
		  ATTACH_ALL & ~(KDBUS_ATTACH_SECLABEL | KDBUS_ATTACH_NAMES |
				 KDBUS_ATTACH_CONN_DESCRIPTION));

	ASSERT_OK(kdbus_free(r, off));
	kdbus_conn_free(r);
	munmap(t, sizeof(*t));
	return TEST_OK;
}

/* receive one message and return its metadata mask */
static int recv_mask(struct kdbus_conn *r, uint64_t *mask)
{
	struct kdbus_msg *m;
	uint64_t off;

	ASSERT_OK(kdbus_recv_msg(r, 0, 0, &m, &off));
	RUN(msg_meta_mask(m, mask));
	ASSERT_OK(kdbus_free(r, off));
	return TEST_OK;
}

KDBUS_TEST(metadata, mask_negotiation, 0)
{
	struct kdbus_conn *s, *r1, *r2, *r0;
	const uint64_t proc_visible = KDBUS_ATTACH_TID_COMM |
		KDBUS_ATTACH_PID_COMM | KDBUS_ATTACH_EXE |
		KDBUS_ATTACH_CMDLINE | KDBUS_ATTACH_CGROUP |
		KDBUS_ATTACH_CAPS | KDBUS_ATTACH_AUDIT;
	struct kdbus_msg *m;
	uint64_t mask, off;

	/* a sender that reveals nothing in its send mask */
	ASSERT_OK(hello_masks(env->bus_path, 0, 0, "sender", &s));
	ASSERT_OK(hello_masks(env->bus_path, 0,
			      KDBUS_ATTACH_CREDS | KDBUS_ATTACH_PIDS,
			      NULL, &r1));
	ASSERT_OK(hello_masks(env->bus_path, 0, ATTACH_ALL, NULL, &r2));
	ASSERT_OK(hello_masks(env->bus_path, 0, 0, NULL, &r0));

	/* only what the receiver asked for */
	ASSERT_OK(kdbus_send(s, r1->id, 1, 0, 0, 0, NULL, 0));
	RUN(recv_mask(r1, &mask));
	ASSERT_EQ(mask, KDBUS_ATTACH_CREDS | KDBUS_ATTACH_PIDS);

	/*
	 * implicit items and, the sender being visible in the receiver's
	 * pid namespace, the /proc items, whatever the send mask says
	 */
	ASSERT_OK(kdbus_send(s, r2->id, 2, 0, 0, 0, NULL, 0));
	RUN(recv_mask(r2, &mask));
	ASSERT_EQ(mask & ~KDBUS_ATTACH_SECLABEL,
		  ATTACH_ALL & ~(KDBUS_ATTACH_NAMES | KDBUS_ATTACH_SECLABEL));

	/* nothing asked, nothing attached, not even a timestamp */
	ASSERT_OK(kdbus_send(s, r0->id, 3, 0, 0, 0, NULL, 0));
	RUN(recv_mask(r0, &mask));
	ASSERT_EQ(mask, 0);
	ASSERT_OK(kdbus_send(s, r0->id, 4, 0, 0, 0, "x", 1));
	ASSERT_OK(kdbus_recv_msg(r0, 0, 0, &m, &off));
	ASSERT_EQ(m->size, KDBUS_ALIGN8(sizeof(*m) + KDBUS_ITEM_SIZE(
			   sizeof(struct kdbus_vec))));
	ASSERT_OK(kdbus_free(r0, off));

	/* UPDATE: a new receive mask applies to later messages */
	ASSERT_OK(kdbus_send(s, r2->id, 5, 0, 0, 0, NULL, 0));
	ASSERT_OK(kdbus_update_attach(r2, 0, KDBUS_ATTACH_TIMESTAMP |
				      KDBUS_ATTACH_TID_COMM));
	ASSERT_OK(kdbus_send(s, r2->id, 6, 0, 0, 0, NULL, 0));
	RUN(recv_mask(r2, &mask));
	ASSERT_EQ(mask & proc_visible, proc_visible);
	RUN(recv_mask(r2, &mask));
	ASSERT_EQ(mask, KDBUS_ATTACH_TIMESTAMP | KDBUS_ATTACH_TID_COMM);

	/* unknown bits are refused and change nothing; ~0 means all */
	ASSERT_ERR(kdbus_update_attach(r2, 0, 1ULL << 40), EINVAL);
	ASSERT_OK(kdbus_send(s, r2->id, 7, 0, 0, 0, NULL, 0));
	RUN(recv_mask(r2, &mask));
	ASSERT_EQ(mask, KDBUS_ATTACH_TIMESTAMP | KDBUS_ATTACH_TID_COMM);
	ASSERT_OK(kdbus_update_attach(r2, 0, ~0ULL));
	ASSERT_OK(kdbus_send(s, r2->id, 8, 0, 0, 0, NULL, 0));
	RUN(recv_mask(r2, &mask));
	ASSERT_EQ(mask & proc_visible, proc_visible);

	/* the sender's description and names are implicit items */
	ASSERT_OK(name_acquire(s, "org.kdbus.test.meta"));
	ASSERT_OK(kdbus_send(s, r2->id, 9, 0, 0, 0, NULL, 0));
	ASSERT_OK(kdbus_recv_msg(r2, 0, 0, &m, &off));
	RUN(item_str_eq(kdbus_msg_find(m, KDBUS_ITEM_CONN_DESCRIPTION),
			"sender"));
	{
		struct kdbus_item *it = kdbus_msg_find(m,
						       KDBUS_ITEM_OWNED_NAME);

		ASSERT(it);
		ASSERT_EQ(it->size, KDBUS_ITEM_HDR + 8 +
			  strlen("org.kdbus.test.meta") + 1);
		ASSERT(strcmp(it->name.name, "org.kdbus.test.meta") == 0);
	}
	ASSERT_OK(kdbus_free(r2, off));

	kdbus_conn_free(s);
	kdbus_conn_free(r0);
	kdbus_conn_free(r1);
	kdbus_conn_free(r2);
	return TEST_OK;
}

/* kernel notifications carry TIMESTAMP whatever the receive mask */
KDBUS_TEST(metadata, notification_timestamp, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_msg *m;
	uint64_t off, mask;

	ASSERT_OK(hello_masks(env->bus_path, ATTACH_ALL, 0, NULL, &a));
	ASSERT_OK(hello_masks(env->bus_path, ATTACH_ALL, 0, NULL, &b));

	ASSERT_OK(kdbus_send(a, b->id, 1, KDBUS_MSG_EXPECT_REPLY,
			     kdbus_now_ns() + 100 * 1000 * 1000ULL, 0,
			     NULL, 0));
	ASSERT_OK(kdbus_wait_recv(a, 5000, &m, &off));
	ASSERT_EQ(m->src_id, KDBUS_SRC_ID_KERNEL);
	ASSERT(kdbus_msg_find(m, KDBUS_ITEM_REPLY_TIMEOUT));
	RUN(msg_meta_mask(m, &mask));
	ASSERT_EQ(mask, KDBUS_ATTACH_TIMESTAMP);
	ASSERT(kdbus_msg_find(m, KDBUS_ITEM_TIMESTAMP)->timestamp.seqnum > 0);
	ASSERT_OK(kdbus_free(a, off));

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* CONN_INFO: the HELLO-time snapshot, current names and description */
KDBUS_TEST(metadata, conn_info, 0)
{
	struct kdbus_conn *c, *t, *quiet, *partial;
	struct kdbus_info *info;
	struct kdbus_item *it;
	int go[2], ready[2];
	uint64_t off, mask;
	pid_t pid;
	char x;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &c));
	ASSERT(pipe(go) == 0 && pipe(ready) == 0);

	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_NAME, "info-hello");
		if (hello_masks(env->bus_path, ATTACH_ALL, 0, "info-target",
				&t) < 0 ||
		    name_acquire(t, "org.kdbus.test.info") < 0)
			_exit(1);
		/* changes after HELLO are not seen through CONN_INFO */
		prctl(PR_SET_NAME, "info-after");
		if (setresuid(4001, 4002, 4003) < 0)
			_exit(1);
		if (write(ready[1], &t->id, sizeof(t->id)) != sizeof(t->id))
			_exit(1);
		if (read(go[0], &x, 1) != 1)
			_exit(1);
		_exit(0);
	}

	{
		uint64_t id;

		ASSERT_EQ(read(ready[0], &id, sizeof(id)), sizeof(id));
		ASSERT_OK(kdbus_conn_info(c, id, NULL, ATTACH_ALL, &info,
					  &off));
		ASSERT_EQ(info->id, id);
	}
	RUN(meta_items_mask(info->items, KDBUS_INFO_ITEMS_LEN(info), &mask));
	ASSERT(!(mask & KDBUS_ATTACH_TIMESTAMP));
	ASSERT_EQ(info->size % 8, 0);

	it = kdbus_info_find(info, KDBUS_ITEM_CREDS);
	ASSERT(it);
	ASSERT_EQ(it->creds.uid, 0);
	ASSERT_EQ(it->creds.euid, 0);
	ASSERT_EQ(it->creds.suid, 0);
	it = kdbus_info_find(info, KDBUS_ITEM_PIDS);
	ASSERT(it);
	ASSERT_EQ(it->pids.pid, pid);
	ASSERT_EQ(it->pids.tid, pid);
	ASSERT_EQ(it->pids.ppid, getpid());
	RUN(item_str_eq(kdbus_info_find(info, KDBUS_ITEM_TID_COMM),
			"info-hello"));
	RUN(item_str_eq(kdbus_info_find(info, KDBUS_ITEM_PID_COMM),
			"info-hello"));
	ASSERT(kdbus_info_find(info, KDBUS_ITEM_EXE));
	ASSERT(kdbus_info_find(info, KDBUS_ITEM_CMDLINE));
	ASSERT(kdbus_info_find(info, KDBUS_ITEM_CAPS));
	RUN(item_str_eq(kdbus_info_find(info, KDBUS_ITEM_CONN_DESCRIPTION),
			"info-target"));
	it = kdbus_info_find(info, KDBUS_ITEM_OWNED_NAME);
	ASSERT(it);
	ASSERT(strcmp(it->name.name, "org.kdbus.test.info") == 0);
	ASSERT_OK(kdbus_free(c, off));

	/* by name, the same connection */
	ASSERT_OK(kdbus_conn_info(c, 0, "org.kdbus.test.info",
				  KDBUS_ATTACH_PIDS, &info, &off));
	ASSERT_EQ(info->size, sizeof(*info) + KDBUS_ITEM_SIZE(
			      sizeof(struct kdbus_pids)));
	ASSERT_EQ(kdbus_info_find(info, KDBUS_ITEM_PIDS)->pids.pid, pid);
	ASSERT_OK(kdbus_free(c, off));

	ASSERT_EQ(write(go[1], "x", 1), 1);
	ASSERT_EQ(kdbus_wait_child(pid), 0);

	/* the target's send mask limits what CONN_INFO reveals */
	ASSERT_OK(hello_masks(env->bus_path, 0, 0, "quiet", &quiet));
	ASSERT_OK(kdbus_conn_info(c, quiet->id, NULL, ATTACH_ALL, &info,
				  &off));
	ASSERT_EQ(info->size, sizeof(*info));
	ASSERT_OK(kdbus_free(c, off));

	ASSERT_OK(hello_masks(env->bus_path,
			      KDBUS_ATTACH_CREDS | KDBUS_ATTACH_TIMESTAMP |
			      KDBUS_ATTACH_CGROUP, 0, "partial", &partial));
	ASSERT_OK(kdbus_conn_info(c, partial->id, NULL,
				  KDBUS_ATTACH_CREDS | KDBUS_ATTACH_TIMESTAMP |
				  KDBUS_ATTACH_PIDS, &info, &off));
	RUN(meta_items_mask(info->items, KDBUS_INFO_ITEMS_LEN(info), &mask));
	ASSERT_EQ(mask, KDBUS_ATTACH_CREDS);
	ASSERT_OK(kdbus_free(c, off));

	/* UPDATE of the target's send mask takes effect */
	ASSERT_OK(kdbus_update_attach(partial, KDBUS_ATTACH_PIDS, 0));
	ASSERT_OK(kdbus_conn_info(c, partial->id, NULL, ATTACH_ALL, &info,
				  &off));
	RUN(meta_items_mask(info->items, KDBUS_INFO_ITEMS_LEN(info), &mask));
	ASSERT_EQ(mask, KDBUS_ATTACH_PIDS);
	ASSERT_EQ(kdbus_info_find(info, KDBUS_ITEM_PIDS)->pids.pid, getpid());
	ASSERT_OK(kdbus_free(c, off));

	ASSERT_ERR(kdbus_conn_info(c, partial->id, NULL, 1ULL << 50, &info,
				   &off), EINVAL);

	kdbus_conn_free(partial);
	kdbus_conn_free(quiet);
	kdbus_conn_free(c);
	return TEST_OK;
}

KDBUS_TEST(metadata, bus_creator_info, 0)
{
	uint64_t attach = KDBUS_ATTACH_CREDS | KDBUS_ATTACH_PIDS |
			  KDBUS_ATTACH_PID_COMM | KDBUS_ATTACH_NAMES |
			  KDBUS_ATTACH_CONN_DESCRIPTION |
			  KDBUS_ATTACH_TIMESTAMP;
	char name[64], path[256], comm[16] = "";
	struct kdbus_conn *c;
	struct kdbus_info *info;
	struct kdbus_item *it;
	uint64_t off, mask;
	int control;

	/* the test's bus was made without an ATTACH_FLAGS_SEND item */
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &c));
	ASSERT_OK(bus_creator_info(c, ATTACH_ALL, &info, &off));
	it = info->items;
	ASSERT_EQ(it->type, KDBUS_ITEM_MAKE_NAME);
	RUN(item_str_eq(it, env->bus_name));
	ASSERT_EQ(info->size, sizeof(*info) + KDBUS_ALIGN8(it->size));
	ASSERT_OK(kdbus_free(c, off));
	kdbus_conn_free(c);

	prctl(PR_SET_NAME, "bus-maker");
	control = kdbus_open_control();
	ASSERT(control >= 0);
	kdbus_unique_name(name, sizeof(name), "meta");
	ASSERT_OK(kdbus_bus_make(control, KDBUS_MAKE_ACCESS_WORLD, name,
				 KDBUS_DEFAULT_BLOOM, 1, &attach));
	prctl(PR_GET_NAME, comm);
	prctl(PR_SET_NAME, "not-the-maker");
	snprintf(path, sizeof(path), KDBUS_MOUNT "/%s/bus", name);

	ASSERT_OK(kdbus_hello(path, 0, 0, KDBUS_DEFAULT_POOL, &c));
	ASSERT_OK(bus_creator_info(c, ATTACH_ALL, &info, &off));
	ASSERT_EQ(info->flags, KDBUS_MAKE_ACCESS_WORLD);
	RUN(item_str_eq(info->items, name));
	RUN(meta_items_mask(info->items, KDBUS_INFO_ITEMS_LEN(info), &mask));
	/* process items only, from BUS_MAKE time */
	ASSERT_EQ(mask, KDBUS_ATTACH_CREDS | KDBUS_ATTACH_PIDS |
		  KDBUS_ATTACH_PID_COMM);
	it = kdbus_info_find(info, KDBUS_ITEM_CREDS);
	ASSERT_EQ(it->creds.uid, getuid());
	ASSERT_EQ(it->creds.gid, getgid());
	it = kdbus_info_find(info, KDBUS_ITEM_PIDS);
	ASSERT_EQ(it->pids.pid, getpid());
	ASSERT_EQ(it->pids.ppid, getppid());
	RUN(item_str_eq(kdbus_info_find(info, KDBUS_ITEM_PID_COMM),
			"bus-maker"));
	ASSERT_OK(kdbus_free(c, off));

	/* the request's mask restricts further */
	ASSERT_OK(bus_creator_info(c, KDBUS_ATTACH_PIDS | KDBUS_ATTACH_CAPS,
				   &info, &off));
	RUN(meta_items_mask(info->items, KDBUS_INFO_ITEMS_LEN(info), &mask));
	ASSERT_EQ(mask, KDBUS_ATTACH_PIDS);
	ASSERT_OK(kdbus_free(c, off));
	ASSERT_ERR(bus_creator_info(c, 1ULL << 20, &info, &off), EINVAL);

	kdbus_conn_free(c);
	close(control);
	return TEST_OK;
}

/* a connection with faked credentials sends no task data at all */
KDBUS_TEST(metadata, faked_identity, 0)
{
	struct kdbus_cmd_hello *h = cmd_new(sizeof(*h));
	struct kdbus_creds creds = {
		.uid = 1234, .euid = 0xffffffff, .suid = 1234, .fsuid = 1234,
		.gid = 4321, .egid = 4321, .sgid = 0xffffffff, .fsgid = 4321,
	};
	struct kdbus_pids pids = { .pid = getpid() };
	struct kdbus_conn *r, f = { .fd = -1 };
	struct kdbus_info *info;
	struct kdbus_item *it;
	struct kdbus_msg *m;
	uint64_t off, mask;
	void *pool;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, ATTACH_ALL,
			      KDBUS_DEFAULT_POOL, &r));

	f.fd = open(env->bus_path, O_RDWR | O_CLOEXEC);
	ASSERT(f.fd >= 0);
	h->attach_flags_send = ATTACH_ALL;
	h->pool_size = KDBUS_DEFAULT_POOL;
	cmd_add_item(h, KDBUS_ITEM_CREDS, &creds, sizeof(creds));
	cmd_add_item(h, KDBUS_ITEM_PIDS, &pids, sizeof(pids));
	ASSERT_OK(kdbus_ioctl(f.fd, KDBUS_CMD_HELLO, h));
	f.id = h->id;
	pool = mmap(NULL, KDBUS_DEFAULT_POOL, PROT_READ, MAP_SHARED, f.fd, 0);
	ASSERT(pool != MAP_FAILED);
	f.pool = pool;
	f.pool_size = KDBUS_DEFAULT_POOL;
	ASSERT_OK(kdbus_free(&f, h->offset));
	cmd_free(h);

	/* messages: connection data and timestamp only */
	ASSERT_OK(kdbus_send(&f, r->id, 1, 0, 0, 0, NULL, 0));
	ASSERT_OK(kdbus_recv_msg(r, 0, 0, &m, &off));
	RUN(msg_meta_mask(m, &mask));
	ASSERT_EQ(mask, KDBUS_ATTACH_TIMESTAMP);
	ASSERT_OK(kdbus_free(r, off));

	/* CONN_INFO: exactly the faked items */
	ASSERT_OK(kdbus_conn_info(r, f.id, NULL, ATTACH_ALL, &info, &off));
	RUN(meta_items_mask(info->items, KDBUS_INFO_ITEMS_LEN(info), &mask));
	ASSERT_EQ(mask, KDBUS_ATTACH_CREDS | KDBUS_ATTACH_PIDS);
	it = kdbus_info_find(info, KDBUS_ITEM_CREDS);
	ASSERT_EQ(it->creds.uid, 1234);
	ASSERT_EQ(it->creds.euid, 0xffffffff);
	ASSERT_EQ(it->creds.sgid, 0xffffffff);
	ASSERT_EQ(it->creds.egid, 4321);
	it = kdbus_info_find(info, KDBUS_ITEM_PIDS);
	ASSERT_EQ(it->pids.pid, getpid());
	ASSERT_EQ(it->pids.tid, 0);
	ASSERT_EQ(it->pids.ppid, 0);
	ASSERT_OK(kdbus_free(r, off));

	munmap(pool, KDBUS_DEFAULT_POOL);
	close(f.fd);
	kdbus_conn_free(r);
	return TEST_OK;
}

/* EXE is left out for a receiver whose root differs from the sender's */
KDBUS_TEST(metadata, exe_root, 0)
{
	char dir[] = "/tmp/kdbus-root-XXXXXX";
	struct kdbus_conn *s, *r;
	struct kdbus_msg *m;
	int ready[2], go[2];
	uint64_t off, id;
	pid_t pid;
	char x;

	ASSERT(mkdtemp(dir));
	ASSERT(pipe(ready) == 0 && pipe(go) == 0);
	ASSERT_OK(kdbus_hello(env->bus_path, 0, ATTACH_ALL,
			      KDBUS_DEFAULT_POOL, &s));

	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		int fd = open(env->bus_path, O_RDWR | O_CLOEXEC);
		struct kdbus_cmd_hello h = {
			.size = sizeof(h),
			.attach_flags_send = ATTACH_ALL,
			.attach_flags_recv = ATTACH_ALL,
			.pool_size = KDBUS_DEFAULT_POOL,
		};
		struct kdbus_conn c = { .fd = fd };
		int ok;

		if (fd < 0 || chroot(dir) < 0 || chdir("/") < 0 ||
		    kdbus_ioctl(fd, KDBUS_CMD_HELLO, &h) < 0)
			_exit(1);
		c.pool = mmap(NULL, KDBUS_DEFAULT_POOL, PROT_READ, MAP_SHARED,
			      fd, 0);
		if (c.pool == MAP_FAILED)
			_exit(1);
		c.pool_size = KDBUS_DEFAULT_POOL;
		kdbus_free(&c, h.offset);
		if (write(ready[1], &h.id, sizeof(h.id)) != sizeof(h.id) ||
		    read(go[0], &x, 1) != 1)
			_exit(1);
		if (kdbus_wait_recv(&c, 5000, &m, &off) < 0)
			_exit(2);
		/* rendered by the sender against a foreign root: no EXE */
		ok = !kdbus_msg_find(m, KDBUS_ITEM_EXE) &&
		     kdbus_msg_find(m, KDBUS_ITEM_CMDLINE) &&
		     kdbus_msg_find(m, KDBUS_ITEM_PIDS);
		_exit(ok ? 0 : 3);
	}

	ASSERT_EQ(read(ready[0], &id, sizeof(id)), sizeof(id));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, ATTACH_ALL,
			      KDBUS_DEFAULT_POOL, &r));
	ASSERT_OK(kdbus_send(s, id, 1, 0, 0, 0, NULL, 0));
	ASSERT_EQ(write(go[1], "x", 1), 1);
	ASSERT_EQ(kdbus_wait_child(pid), 0);

	/* the same root: EXE is there */
	ASSERT_OK(kdbus_send(s, r->id, 2, 0, 0, 0, NULL, 0));
	ASSERT_OK(kdbus_recv_msg(r, 0, 0, &m, &off));
	ASSERT(kdbus_msg_find(m, KDBUS_ITEM_EXE));
	ASSERT_OK(kdbus_free(r, off));

	rmdir(dir);
	kdbus_conn_free(r);
	kdbus_conn_free(s);
	return TEST_OK;
}

static int add_match_all(struct kdbus_conn *c)
{
	struct kdbus_cmd_match *m = cmd_new(sizeof(*m));
	int r;

	m->cookie = 1;
	r = kdbus_ioctl(c->fd, KDBUS_CMD_MATCH_ADD, m);
	cmd_free(m);
	return r;
}

static int send_broadcast(struct kdbus_conn *c, uint64_t cookie)
{
	struct kdbus_msg *m = kdbus_msg_new(KDBUS_DST_ID_BROADCAST, cookie,
					    KDBUS_MSG_SIGNAL, 0, NULL, 0);
	struct kdbus_item *it;
	int r;

	it = cmd_add_item(m, KDBUS_ITEM_BLOOM_FILTER, NULL,
			  sizeof(struct kdbus_bloom_filter) +
			  KDBUS_DEFAULT_BLOOM);
	it->bloom_filter.generation = 0;
	r = kdbus_send_msg(c->fd, 0, m, NULL);
	cmd_free(m);
	return r;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * Sequence numbers strictly increase bus-wide (user messages and kernel
 * notifications alike), timestamps are read while sending, and every
 * receiver of one broadcast sees the same values.
 */
KDBUS_TEST(metadata, timestamps, 0)
{
	struct kdbus_conn *a, *b, *r, *r2;
	struct kdbus_item *it, *it2;
	uint64_t last_seq = 0, last_mono = 0;
	struct kdbus_msg *m, *m2;
	uint64_t off, off2;
	int i;

	ASSERT_OK(hello_masks(env->bus_path, ATTACH_ALL,
			      KDBUS_ATTACH_TIMESTAMP, NULL, &a));
	ASSERT_OK(hello_masks(env->bus_path, ATTACH_ALL,
			      KDBUS_ATTACH_TIMESTAMP, NULL, &b));
	ASSERT_OK(hello_masks(env->bus_path, 0, KDBUS_ATTACH_TIMESTAMP, NULL,
			      &r));

	for (i = 0; i < 20; i++) {
		struct kdbus_conn *s = (i % 2) ? a : b;
		uint64_t t0, t1, rt0, rt1;

		t0 = kdbus_now_ns();
		rt0 = realtime_ns();
		if (i == 10) {
			/* a kernel notification in between */
			ASSERT_OK(kdbus_send(a, b->id, 100, KDBUS_MSG_EXPECT_REPLY,
					     kdbus_now_ns() + 1000000ULL, 0,
					     NULL, 0));
			ASSERT_OK(kdbus_wait_recv(a, 5000, &m, &off));
			ASSERT_EQ(m->src_id, KDBUS_SRC_ID_KERNEL);
			it = kdbus_msg_find(m, KDBUS_ITEM_TIMESTAMP);
			ASSERT(it);
			ASSERT(it->timestamp.seqnum > last_seq + 1);
			last_seq = it->timestamp.seqnum;
			ASSERT_OK(kdbus_free(a, off));
			/* drop the request that b got */
			ASSERT_OK(kdbus_recv_msg(b, 0, 0, &m, &off));
			ASSERT_OK(kdbus_free(b, off));
		}
		ASSERT_OK(kdbus_send(s, r->id, i + 1, 0, 0, 0, NULL, 0));
		t1 = kdbus_now_ns();
		rt1 = realtime_ns();

		ASSERT_OK(kdbus_recv_msg(r, 0, 0, &m, &off));
		it = kdbus_msg_find(m, KDBUS_ITEM_TIMESTAMP);
		ASSERT(it);
		ASSERT_EQ(it->size, KDBUS_ITEM_HDR +
			  sizeof(struct kdbus_timestamp));
		ASSERT(it->timestamp.seqnum > last_seq);
		ASSERT(it->timestamp.monotonic_ns >= last_mono);
		ASSERT(it->timestamp.monotonic_ns >= t0);
		ASSERT(it->timestamp.monotonic_ns <= t1);
		ASSERT(it->timestamp.realtime_ns + 1000000000ULL >= rt0);
		ASSERT(it->timestamp.realtime_ns <= rt1 + 1000000000ULL);
		last_seq = it->timestamp.seqnum;
		last_mono = it->timestamp.monotonic_ns;
		ASSERT_OK(kdbus_free(r, off));
	}

	/* one broadcast, identical timestamps for all its receivers */
	ASSERT_OK(hello_masks(env->bus_path, 0, KDBUS_ATTACH_TIMESTAMP, NULL,
			      &r2));
	ASSERT_OK(add_match_all(r));
	ASSERT_OK(add_match_all(r2));
	ASSERT_OK(send_broadcast(a, 500));
	ASSERT_OK(kdbus_wait_recv(r, 5000, &m, &off));
	ASSERT_OK(kdbus_wait_recv(r2, 5000, &m2, &off2));
	ASSERT_EQ(m->cookie, 500);
	ASSERT_EQ(m2->cookie, 500);
	it = kdbus_msg_find(m, KDBUS_ITEM_TIMESTAMP);
	it2 = kdbus_msg_find(m2, KDBUS_ITEM_TIMESTAMP);
	ASSERT(it && it2);
	ASSERT(it->timestamp.seqnum > last_seq);
	ASSERT_EQ(it->timestamp.seqnum, it2->timestamp.seqnum);
	ASSERT_EQ(it->timestamp.monotonic_ns, it2->timestamp.monotonic_ns);
	ASSERT_EQ(it->timestamp.realtime_ns, it2->timestamp.realtime_ns);
	ASSERT_OK(kdbus_free(r, off));
	ASSERT_OK(kdbus_free(r2, off2));

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	kdbus_conn_free(r);
	kdbus_conn_free(r2);
	return TEST_OK;
}

/* an argument area above 4096 bytes: its first 4096, NUL-terminated */
KDBUS_TEST(metadata, cmdline_truncated, 0)
{
	static char area[5000];
	struct kdbus_conn *s, *r;
	struct kdbus_item *it;
	struct kdbus_msg *m;
	uint64_t off;
	pid_t pid;
	int st;

	for (size_t i = 0; i < sizeof(area); i++)
		area[i] = (i % 100 == 99) ? 0 : 'a' + i % 26;
	area[sizeof(area) - 1] = 0;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, ATTACH_ALL,
			      KDBUS_DEFAULT_POOL, &r));
	pid = fork_sender(env->bus_path, &s);
	ASSERT(pid >= 0);
	if (pid == 0) {
		if (set_cmdline_area(area, sizeof(area)) < 0 ||
		    kdbus_send(s, r->id, 1, 0, 0, 0, NULL, 0) < 0)
			_exit(1);
		_exit(0);
	}
	ASSERT(waitpid(pid, &st, 0) == pid);
	ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	ASSERT_OK(kdbus_recv_msg(r, 0, 0, &m, &off));
	it = kdbus_msg_find(m, KDBUS_ITEM_CMDLINE);
	ASSERT(it);
	ASSERT_EQ(it->size - KDBUS_ITEM_HDR, CMDLINE_MAX);
	ASSERT(memcmp(it->str, area, CMDLINE_MAX - 1) == 0);
	ASSERT_EQ(it->str[CMDLINE_MAX - 1], 0);
	ASSERT(area[CMDLINE_MAX - 1] != 0);
	ASSERT_OK(kdbus_free(r, off));

	kdbus_conn_free(r);
	return TEST_OK;
}

/*
 * A message's CGROUP is the sender's cgroup at SEND time, whether or not
 * it is still the one of its HELLO (whose string a message shares while
 * the cgroup is the same): sent from the HELLO's cgroup, from another,
 * and from the hierarchy's root.
 */
KDBUS_TEST(metadata, cgroup_follows_sender, 0)
{
	char cg_dir[PATH_MAX], cg_mnt[PATH_MAX], start[PATH_MAX], *p;
	const char *expect[3];
	struct kdbus_conn *s, *r;
	struct kdbus_msg *m;
	uint64_t off;
	int i, st;
	pid_t pid;

	/* mounted first: /proc/self/cgroup shows no v2 path before */
	make_cgroup(cg_dir, sizeof(cg_dir), cg_mnt, sizeof(cg_mnt));
	if (!cg_dir[0]) {
		drop_cgroup(cg_dir, cg_mnt);
		kdbus_test_skip_reason("no cgroup2 directory to move into");
		return TEST_SKIP;
	}
	if (read_file("/proc/self/cgroup", start, sizeof(start)) < 0 ||
	    !(p = strstr(start, "0::"))) {
		drop_cgroup(cg_dir, cg_mnt);
		kdbus_test_skip_reason("no cgroup2 path in /proc/self/cgroup");
		return TEST_SKIP;
	}
	memmove(start, p + 3, strlen(p + 3) + 1);
	start[strcspn(start, "\n")] = 0;
	expect[0] = start;
	expect[1] = cg_dir + strlen(cg_mnt);
	expect[2] = "/";

	ASSERT_OK(kdbus_hello(env->bus_path, 0, ATTACH_ALL,
			      KDBUS_DEFAULT_POOL, &r));
	pid = fork_sender(env->bus_path, &s);
	ASSERT(pid >= 0);
	if (pid == 0) {
		if (kdbus_send(s, r->id, 1, 0, 0, 0, NULL, 0) < 0 ||
		    move_to_cgroup(cg_dir) < 0 ||
		    kdbus_send(s, r->id, 2, 0, 0, 0, NULL, 0) < 0 ||
		    move_to_cgroup(cg_mnt) < 0 ||
		    kdbus_send(s, r->id, 3, 0, 0, 0, NULL, 0) < 0)
			_exit(1);
		_exit(0);
	}
	ASSERT(waitpid(pid, &st, 0) == pid);
	drop_cgroup(cg_dir, cg_mnt);
	ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	for (i = 0; i < 3; i++) {
		ASSERT_OK(kdbus_recv_msg(r, 0, 0, &m, &off));
		ASSERT_EQ(m->cookie, (uint64_t)i + 1);
		RUN(item_str_eq(kdbus_msg_find(m, KDBUS_ITEM_CGROUP),
				expect[i]));
		ASSERT_OK(kdbus_free(r, off));
	}

	kdbus_conn_free(r);
	return TEST_OK;
}

/* what the snapshot test's sender was when it sent message i (1-based) */
struct snapshot_truth {
	char comm[16];
	char cmdline[300];
	size_t cmdline_len;
	gid_t gid;
	int ngroups;
	gid_t groups[16];
	pid_t ppid;
	char exe[PATH_MAX];
};

struct snapshot_run {
	struct snapshot_truth sent[8];
	int n_sent;
	char err[128];
};

/* record what the sender is, then send message run->n_sent + 1 */
static int snapshot_send(struct kdbus_conn *s, uint64_t dst,
			 struct snapshot_run *run, const char *area,
			 size_t area_len)
{
	struct snapshot_truth *t = &run->sent[run->n_sent];
	ssize_t n;

	prctl(PR_GET_NAME, t->comm);
	memcpy(t->cmdline, area, area_len);
	t->cmdline_len = area_len;
	getresgid(&t->gid, &(gid_t){ 0 }, &(gid_t){ 0 });
	t->ngroups = getgroups(16, t->groups);
	t->ppid = getppid();
	n = readlink("/proc/self/exe", t->exe, sizeof(t->exe) - 1);
	t->exe[n > 0 ? n : 0] = 0;
	run->n_sent++;
	return kdbus_send(s, dst, run->n_sent, 0, 0, 0, NULL, 0);
}

/*
 * The sender: HELLO, then one message per change of its task data, some
 * changes undone again; its parent exits before the last message, which
 * must name the subreaper as the new parent. (The executable cannot be
 * replaced while it is mapped: EXE is only compared.)
 */
static void snapshot_sender(const char *bus_path, uint64_t dst,
			    struct snapshot_run *run, int done_fd)
{
	/* longer than the kernel's compare buffer: a change in a later chunk */
	static char area[300];
	static const gid_t groups[] = { 4242 };
	const size_t len = sizeof(area);
	char comm[16];
	pid_t parent = getppid();
	struct kdbus_conn *s;
	int i;

	memset(area, 'a', len);
	memcpy(area, "kdbus-snap", 11);
	area[len - 1] = 0;
	if (set_cmdline_area(area, len) < 0 ||
	    kdbus_hello(bus_path, 0, 0, KDBUS_DEFAULT_POOL, &s) < 0) {
		snprintf(run->err, sizeof(run->err), "setup: %s",
			 strerror(errno));
		_exit(1);
	}
	prctl(PR_GET_NAME, comm);

#define SNAP_SEND() \
	do { \
		if (snapshot_send(s, dst, run, area, len) < 0) { \
			snprintf(run->err, sizeof(run->err), "send %d: %s", \
				 run->n_sent, strerror(errno)); \
			_exit(1); \
		} \
	} while (0)

	SNAP_SEND();				/* 1: as at HELLO */
	area[200] = 'B';			/* 2: argument bytes rewritten */
	SNAP_SEND();
	area[200] = 'a';			/* 3: as at HELLO again */
	SNAP_SEND();
	prctl(PR_SET_NAME, "kdbus-renamed");	/* 4: comm */
	SNAP_SEND();
	prctl(PR_SET_NAME, comm);		/* 5: as at HELLO again */
	SNAP_SEND();
	if (setgroups(1, groups) < 0 ||	/* 6: credentials */
	    setresgid(1001, 1002, 1003) < 0) {
		snprintf(run->err, sizeof(run->err), "set ids: %s",
			 strerror(errno));
		_exit(1);
	}
	SNAP_SEND();

	/* 7: the parent exits; the subreaper adopts us */
	close(done_fd);
	for (i = 0; i < 500 && getppid() == parent; i++)
		kdbus_msleep(10);
	SNAP_SEND();
#undef SNAP_SEND
	_exit(0);
}

/*
 * A message of the task that said HELLO carries the HELLO snapshot's items
 * while that task is unchanged (kdbus_meta_proc_is_current()): every
 * change must show in the next message, and undoing it must too.
 */
KDBUS_TEST(metadata, snapshot_follows_sender, 0)
{
	struct snapshot_run *run;
	struct kdbus_conn *r;
	struct kdbus_msg *m;
	struct kdbus_item *it;
	int pipefd[2], st, i, j;
	uint64_t off;
	pid_t mid;
	char c;

	run = shared_zeroed(sizeof(*run));
	ASSERT(run);
	ASSERT_OK(kdbus_hello(env->bus_path, 0, ATTACH_ALL,
			      KDBUS_DEFAULT_POOL, &r));
	ASSERT(pipe(pipefd) == 0);
	ASSERT(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);

	mid = fork();
	ASSERT(mid >= 0);
	if (mid == 0) {
		/* the sender's first parent: exits when it says so */
		if (fork() == 0) {
			close(pipefd[0]);
			snapshot_sender(env->bus_path, r->id, run, pipefd[1]);
		}
		close(pipefd[1]);
		while (read(pipefd[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(pipefd[1]);
	/* EOF once the sender closed its end (before its last message) */
	while (read(pipefd[0], &c, 1) > 0)
		;
	close(pipefd[0]);
	ASSERT(waitpid(mid, &st, 0) == mid);
	/* the sender, now ours */
	while (waitpid(-1, &st, 0) > 0)
		;
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	if (run->err[0])
		FAIL("sender: %s", run->err);
	ASSERT_EQ(run->n_sent, 7);
	ASSERT_EQ(run->sent[6].ppid, getpid());
	ASSERT_EQ(run->sent[5].ppid, mid);

	for (i = 0; i < run->n_sent; i++) {
		const struct snapshot_truth *t = &run->sent[i];

		ASSERT_OK(kdbus_recv_msg(r, 0, 0, &m, &off));
		ASSERT_EQ(m->cookie, (uint64_t)i + 1);
		RUN(item_str_eq(kdbus_msg_find(m, KDBUS_ITEM_TID_COMM),
				t->comm));
		RUN(item_str_eq(kdbus_msg_find(m, KDBUS_ITEM_PID_COMM),
				t->comm));
		RUN(item_str_eq(kdbus_msg_find(m, KDBUS_ITEM_EXE), t->exe));
		it = kdbus_msg_find(m, KDBUS_ITEM_CMDLINE);
		ASSERT(it);
		ASSERT_EQ(it->size - KDBUS_ITEM_HDR, t->cmdline_len);
		ASSERT(memcmp(it->str, t->cmdline, t->cmdline_len) == 0);
		it = kdbus_msg_find(m, KDBUS_ITEM_CREDS);
		ASSERT(it);
		ASSERT_EQ(it->creds.gid, t->gid);
		it = kdbus_msg_find(m, KDBUS_ITEM_AUXGROUPS);
		ASSERT(it);
		ASSERT_EQ(it->size, KDBUS_ITEM_HDR +
				    t->ngroups * sizeof(uint64_t));
		for (j = 0; j < t->ngroups; j++)
			ASSERT_EQ(it->data64[j], t->groups[j]);
		it = kdbus_msg_find(m, KDBUS_ITEM_PIDS);
		ASSERT(it);
		ASSERT_EQ(it->pids.ppid, t->ppid);
		ASSERT_OK(kdbus_free(r, off));
	}
	/* the changes really were changes */
	ASSERT(run->sent[1].cmdline[200] == 'B' &&
	       run->sent[2].cmdline[200] == 'a');
	ASSERT(strcmp(run->sent[3].comm, "kdbus-renamed") == 0);
	ASSERT(strcmp(run->sent[4].comm, run->sent[0].comm) == 0);
	ASSERT_EQ(run->sent[5].gid, 1001);

	kdbus_conn_free(r);
	munmap(run, sizeof(*run));
	return TEST_OK;
}
