// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The per-bus counts of /sys/kernel/debug/kdbus/buses (issue 15): one line
 * per live bus, "dev MAJ:MIN ino N name NAME connections N
 * queued_messages N", where dev and ino are what stat(2) reports for the
 * bus directory. queued_messages counts the messages waiting in the queues
 * of the bus's connections, activators' included: it follows sends,
 * receives, activator hand-overs and disconnects, on its own bus only,
 * also when another domain has a bus of the same name.
 *
 * No connection here installs a match, so no kernel notification is ever
 * queued: every count is exact.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

#define BUSES_PATH	"/sys/kernel/debug/kdbus/buses"
#define DEBUGFS_DIR	"/sys/kernel/debug"
#define DEBUGFS_MAGIC_NR 0x64626720
#define POOL_SIZE	(1ULL << 20)

struct bus_counts {
	unsigned long long conns;
	unsigned long long queued;
};

/*
 * The counts of the bus whose directory is @dir: 0, -ENOENT without the
 * file, -ESRCH if no line names the bus, -EPROTO if two lines do, a line
 * is malformed or the line's name is not the directory's.
 */
static int read_bus(const char *dir, struct bus_counts *c)
{
	const char *base = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
	unsigned long long ino, conns, queued;
	unsigned int maj, min, found = 0;
	char line[512], name[256];
	struct stat st;
	FILE *f;

	if (stat(dir, &st) < 0)
		return -errno;
	f = fopen(BUSES_PATH, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "dev %u:%u ino %llu name %255s connections %llu queued_messages %llu",
			   &maj, &min, &ino, name, &conns, &queued) != 6) {
			DIAG("malformed line in %s: %s", BUSES_PATH, line);
			fclose(f);
			return -EPROTO;
		}
		if (makedev(maj, min) != st.st_dev || ino != st.st_ino)
			continue;
		if (strcmp(name, base)) {
			DIAG("%s: bus %s listed as %s", BUSES_PATH, dir, name);
			fclose(f);
			return -EPROTO;
		}
		c->conns = conns;
		c->queued = queued;
		found++;
	}
	fclose(f);
	if (found > 1) {
		DIAG("%s: %u lines for %s", BUSES_PATH, found, dir);
		return -EPROTO;
	}
	return found ? 0 : -ESRCH;
}

/* debugfs mounted but no buses file is a failure; no debugfs a skip */
static int buses_available(const char *dir)
{
	struct bus_counts c;
	struct statfs sfs;
	int r = read_bus(dir, &c);

	if (r == 0)
		return TEST_OK;
	if (r == -ENOENT &&
	    (statfs(DEBUGFS_DIR, &sfs) < 0 || sfs.f_type != DEBUGFS_MAGIC_NR))
		SKIP("debugfs not mounted at %s", DEBUGFS_DIR);
	DIAG("%s: %s", BUSES_PATH, strerror(-r));
	return TEST_FAIL;
}

/* the bus in @dir has @conns connections and @queued queued messages */
static int expect_bus(const char *dir, unsigned long long conns,
		      unsigned long long queued)
{
	struct bus_counts c;
	int r = read_bus(dir, &c);

	if (r < 0) {
		DIAG("%s: bus %s: %s", BUSES_PATH, dir, strerror(-r));
		return TEST_FAIL;
	}
	if (c.conns != conns || c.queued != queued) {
		DIAG("bus %s: connections %llu queued_messages %llu, expected %llu and %llu",
		     dir, c.conns, c.queued, conns, queued);
		return TEST_FAIL;
	}
	return TEST_OK;
}

static int send_n(struct kdbus_conn *src, uint64_t dst, unsigned int n)
{
	static const char payload[] = "queued";
	unsigned int i;

	for (i = 0; i < n; i++)
		ASSERT_OK(kdbus_send(src, dst, i + 1, 0, 0, 0, payload,
				     sizeof(payload)));
	return TEST_OK;
}

static int recv_n(struct kdbus_conn *c, unsigned int n)
{
	struct kdbus_msg *m;
	uint64_t off;
	unsigned int i;

	for (i = 0; i < n; i++) {
		ASSERT_OK(kdbus_recv_msg(c, 0, 0, &m, &off));
		ASSERT_OK(kdbus_free(c, off));
	}
	ASSERT_ERR(kdbus_recv(c, 0, 0, NULL), EAGAIN);
	return TEST_OK;
}

/*
 * N messages queued on one bus show on that bus only; receiving them and
 * disconnecting a receiver with a full queue bring the count back to 0.
 */
KDBUS_TEST(busstats, queued_per_bus, 0)
{
	enum { N = 7 };
	char other_name[64], other_dir[128], other_path[256];
	struct kdbus_cmd_recv rc;
	struct kdbus_conn *a, *r, *o;
	int other_fd;

	RUN(buses_available(env->bus_dir));
	other_fd = kdbus_bus_new(KDBUS_MAKE_ACCESS_WORLD, other_name,
				 sizeof(other_name));
	ASSERT_OK(other_fd);
	snprintf(other_dir, sizeof(other_dir), "%s/%s", KDBUS_MOUNT,
		 other_name);
	snprintf(other_path, sizeof(other_path), "%s/bus", other_dir);
	RUN(expect_bus(env->bus_dir, 0, 0));
	RUN(expect_bus(other_dir, 0, 0));

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, POOL_SIZE, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, POOL_SIZE, &r));
	ASSERT_OK(kdbus_hello(other_path, 0, 0, POOL_SIZE, &o));
	RUN(expect_bus(env->bus_dir, 2, 0));
	RUN(expect_bus(other_dir, 1, 0));

	RUN(send_n(a, r->id, N));
	RUN(expect_bus(env->bus_dir, 2, N));
	RUN(expect_bus(other_dir, 1, 0));

	/* a PEEK leaves the message queued; a RECV takes it out */
	ASSERT_OK(kdbus_recv(r, KDBUS_RECV_PEEK, 0, &rc));
	ASSERT_OK(kdbus_free(r, rc.msg.offset));
	RUN(expect_bus(env->bus_dir, 2, N));
	ASSERT_OK(kdbus_recv(r, KDBUS_RECV_DROP, 0, NULL));
	RUN(expect_bus(env->bus_dir, 2, N - 1));
	RUN(recv_n(r, N - 1));
	RUN(expect_bus(env->bus_dir, 2, 0));

	/* the queue of a connection that goes away is discarded */
	RUN(send_n(a, r->id, N));
	RUN(expect_bus(env->bus_dir, 2, N));
	kdbus_conn_free(r);
	RUN(expect_bus(env->bus_dir, 1, 0));
	RUN(expect_bus(other_dir, 1, 0));

	kdbus_conn_free(o);
	kdbus_conn_free(a);
	close(other_fd);
	return TEST_OK;
}

/*
 * A second kdbusfs mount (a new domain) with a bus of the same name: the
 * two buses are told apart by the device number of their superblocks, and
 * each shows its own count.
 */
KDBUS_TEST(busstats, same_name_other_domain, 0)
{
	char mnt[] = "/tmp/kdbus-busstats-XXXXXX", dir2[512], path2[600];
	struct kdbus_conn *a, *r, *a2, *r2;
	struct stat st1, st2;
	int ret = TEST_FAIL, ctl = -1;

	RUN(buses_available(env->bus_dir));
	ASSERT(mkdtemp(mnt));
	if (mount("kdbusfs", mnt, "kdbusfs", 0, NULL) < 0) {
		DIAG("mount kdbusfs at %s: %m", mnt);
		rmdir(mnt);
		return TEST_FAIL;
	}
	a = r = a2 = r2 = NULL;
	snprintf(dir2, sizeof(dir2), "%s/%s", mnt, env->bus_name);
	snprintf(path2, sizeof(path2), "%s/control", mnt);
	ctl = open(path2, O_RDWR | O_CLOEXEC);
	if (ctl < 0 || kdbus_bus_make(ctl, KDBUS_MAKE_ACCESS_WORLD,
				      env->bus_name, KDBUS_DEFAULT_BLOOM, 1,
				      NULL) < 0) {
		DIAG("BUS_MAKE %s in the second domain failed", env->bus_name);
		goto out;
	}
	snprintf(path2, sizeof(path2), "%s/bus", dir2);
	if (stat(env->bus_dir, &st1) < 0 || stat(dir2, &st2) < 0 ||
	    st1.st_dev == st2.st_dev) {
		DIAG("the two domains share a device number");
		goto out;
	}

	if (kdbus_hello(env->bus_path, 0, 0, POOL_SIZE, &a) < 0 ||
	    kdbus_hello(env->bus_path, 0, 0, POOL_SIZE, &r) < 0 ||
	    kdbus_hello(path2, 0, 0, POOL_SIZE, &a2) < 0 ||
	    kdbus_hello(path2, 0, 0, POOL_SIZE, &r2) < 0) {
		DIAG("HELLO failed");
		goto out;
	}
	if (send_n(a, r->id, 3) || send_n(a2, r2->id, 5) ||
	    expect_bus(env->bus_dir, 2, 3) || expect_bus(dir2, 2, 5))
		goto out;
	if (recv_n(r2, 5) || expect_bus(env->bus_dir, 2, 3) ||
	    expect_bus(dir2, 2, 0))
		goto out;
	if (recv_n(r, 3) || expect_bus(env->bus_dir, 2, 0))
		goto out;
	ret = TEST_OK;

out:
	kdbus_conn_free(r2);
	kdbus_conn_free(a2);
	kdbus_conn_free(r);
	kdbus_conn_free(a);
	if (ctl >= 0)
		close(ctl);
	if (umount(mnt) < 0) {
		DIAG("umount %s: %m", mnt);
		ret = TEST_FAIL;
	}
	rmdir(mnt);
	return ret;
}

/*
 * Messages queued on an activator count on its bus; the hand-over to the
 * connection that takes the name moves them without changing the count,
 * and receiving them brings it to 0. An activator that goes away with
 * messages queued takes them along.
 */
KDBUS_TEST(busstats, activator_handover, 0)
{
	enum { N = 4 };
	const char *name = "org.example.BusStats";
	struct kdbus_conn *a, *act, *svc;
	uint64_t flags;
	unsigned int i;

	RUN(buses_available(env->bus_dir));
	ASSERT_OK(kn_hello_named(env->bus_path, KDBUS_HELLO_ACTIVATOR, name,
				 POOL_SIZE, &act));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, POOL_SIZE, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, POOL_SIZE, &svc));
	RUN(expect_bus(env->bus_dir, 3, 0));

	for (i = 0; i < N; i++)
		ASSERT_OK(kn_send_name(a, name, 0, i + 1, 0, 0));
	RUN(expect_bus(env->bus_dir, 3, N));

	ASSERT_OK(kn_acquire(svc, name, 0, &flags));
	ASSERT_ERR(kdbus_recv(act, 0, 0, NULL), EAGAIN);
	RUN(expect_bus(env->bus_dir, 3, N));
	RUN(recv_n(svc, N));
	RUN(expect_bus(env->bus_dir, 3, 0));

	/* back to the activator: queued there, then dropped with it */
	ASSERT_OK(kn_release(svc, name));
	for (i = 0; i < N; i++)
		ASSERT_OK(kn_send_name(a, name, 0, 100 + i, 0, 0));
	RUN(expect_bus(env->bus_dir, 3, N));
	kdbus_conn_free(act);
	RUN(expect_bus(env->bus_dir, 2, 0));

	kdbus_conn_free(svc);
	kdbus_conn_free(a);
	return TEST_OK;
}
