// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Conformance audit of kdbusfs (kdbus.fs(7)): superblock, node attributes,
 * stable timestamps, lookups through an open directory after teardown,
 * the per-domain ID counter starting at 1, busy and lazy unmount, mounts
 * inside a user namespace and uid rendering in the domain's namespace,
 * poll on handles that are no connection.
 */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <grp.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

#define CONFORM_TEST(_name, _flags)						\
	static int conform_fs_fn_##_name(struct kdbus_test_env *env);	\
	static const struct kdbus_test conform_fs_t_##_name = {		\
		.group = "conform-fs", .name = #_name,				\
		.fn = conform_fs_fn_##_name, .flags = (_flags),			\
		.file = __FILE__, .line = __LINE__,				\
	};									\
	static const struct kdbus_test *conform_fs_p_##_name			\
	__attribute__((used, section("kdbus_tests"), aligned(sizeof(void *)))) = \
		&conform_fs_t_##_name;						\
	static int conform_fs_fn_##_name(					\
		struct kdbus_test_env *env __attribute__((unused)))

/* kdbus.fs(7): statfs of a simple in-memory filesystem, block size PAGE_SIZE */
CONFORM_TEST(statfs_bsize, KDBUS_TEST_NO_BUS)
{
	struct statfs sfs;

	ASSERT(statfs(KDBUS_MOUNT, &sfs) == 0);
	ASSERT_EQ(sfs.f_type, 0x44427573);
	ASSERT_EQ(sfs.f_bsize, 4096);
	ASSERT(access("/sys/fs/kdbus", F_OK) == 0);
	return TEST_OK;
}

/* kdbus.fs(7): nlink 2 for directories, size 0, distinct positive inodes */
CONFORM_TEST(node_attributes, 0)
{
	struct stat root, ctl, dir, ep;

	ASSERT(stat(KDBUS_MOUNT, &root) == 0);
	ASSERT(stat(KDBUS_CONTROL, &ctl) == 0);
	ASSERT(stat(env->bus_dir, &dir) == 0);
	ASSERT(stat(env->bus_path, &ep) == 0);
	ASSERT_EQ(root.st_nlink, 2);
	ASSERT_EQ(dir.st_nlink, 2);
	ASSERT_EQ(ep.st_size, 0);
	ASSERT_EQ(ctl.st_size, 0);
	ASSERT(root.st_ino > 0 && ctl.st_ino > 0 && dir.st_ino > 0 &&
	       ep.st_ino > 0);
	ASSERT(root.st_ino != ctl.st_ino && root.st_ino != dir.st_ino &&
	       root.st_ino != ep.st_ino && ctl.st_ino != dir.st_ino &&
	       ctl.st_ino != ep.st_ino && dir.st_ino != ep.st_ino);
	return TEST_OK;
}

static bool same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/* kdbus.fs(7): timestamps are set at instantiation and never change */
CONFORM_TEST(timestamps_stable, 0)
{
	struct stat r1, r2, d1, d2, e1, e2;
	struct kdbus_conn *c;
	char name[64];
	int bus;

	ASSERT(stat(KDBUS_MOUNT, &r1) == 0);
	ASSERT(stat(env->bus_dir, &d1) == 0);
	ASSERT(stat(env->bus_path, &e1) == 0);
	kdbus_msleep(50);
	/* a child added to and removed from the root directory */
	bus = kdbus_bus_new(0, name, sizeof(name));
	ASSERT_OK(bus);
	close(bus);
	/* a connection on the endpoint */
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &c));
	kdbus_conn_free(c);
	kdbus_msleep(20);
	ASSERT(stat(KDBUS_MOUNT, &r2) == 0);
	ASSERT(stat(env->bus_dir, &d2) == 0);
	ASSERT(stat(env->bus_path, &e2) == 0);
	{
		static const char *what[] = { "root", "bus directory",
					       "endpoint" };
		struct stat *b[3] = { &r1, &d1, &e1 }, *a[3] = { &r2, &d2, &e2 };
		int i, bad = 0;

		for (i = 0; i < 3; i++) {
			if (same_time(&b[i]->st_mtim, &a[i]->st_mtim) &&
			    same_time(&b[i]->st_ctim, &a[i]->st_ctim))
				continue;
			DIAG("%s: mtime %ld.%09ld -> %ld.%09ld, ctime %ld.%09ld -> %ld.%09ld",
			     what[i], (long)b[i]->st_mtim.tv_sec,
			     b[i]->st_mtim.tv_nsec, (long)a[i]->st_mtim.tv_sec,
			     a[i]->st_mtim.tv_nsec, (long)b[i]->st_ctim.tv_sec,
			     b[i]->st_ctim.tv_nsec, (long)a[i]->st_ctim.tv_sec,
			     a[i]->st_ctim.tv_nsec);
			bad = 1;
		}
		if (bad)
			return TEST_FAIL;
	}
	return TEST_OK;
}

/* does the open directory dfd list name? (-errno if it cannot be read) */
static int dirfd_lists(int dfd, const char *name)
{
	char buf[4096];
	long n, off;
	int found = 0;

	if (lseek(dfd, 0, SEEK_SET) < 0)
		return -errno;
	for (;;) {
		n = syscall(SYS_getdents64, dfd, buf, sizeof(buf));
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		for (off = 0; off < n;) {
			struct dirent64 *de = (struct dirent64 *)(buf + off);

			if (!strcmp(de->d_name, name))
				found = 1;
			off += de->d_reclen;
		}
	}
	return found;
}

/* kdbus.fs(7) / kdbus.connection(7): a torn-down node is gone even for lookups
 * relative to a directory opened before the teardown */
CONFORM_TEST(lookup_after_teardown, 0)
{
	struct stat st;
	int dfd, rfd, r;

	dfd = open(env->bus_dir, O_RDONLY | O_DIRECTORY);
	ASSERT(dfd >= 0);
	rfd = open(KDBUS_MOUNT, O_RDONLY | O_DIRECTORY);
	ASSERT(rfd >= 0);
	ASSERT(fstatat(dfd, "bus", &st, 0) == 0);
	ASSERT(fstatat(rfd, env->bus_name, &st, 0) == 0);
	ASSERT_EQ(dirfd_lists(dfd, "bus"), 1);

	close(env->bus_owner_fd);
	env->bus_owner_fd = -1;

	ASSERT(fstatat(dfd, "bus", &st, 0) < 0 && errno == ENOENT);
	ASSERT(openat(dfd, "bus", O_RDWR) < 0 && errno == ENOENT);
	ASSERT(fstatat(rfd, env->bus_name, &st, 0) < 0 && errno == ENOENT);
	ASSERT(stat(env->bus_path, &st) < 0 && errno == ENOENT);
	ASSERT(stat(env->bus_dir, &st) < 0 && errno == ENOENT);
	ASSERT_EQ(dirfd_lists(rfd, env->bus_name), 0);
	/* the dead directory lists no live children (or cannot be read:
	 * ENOENT like a removed directory, or ESHUTDOWN, kdbus(7)) */
	r = dirfd_lists(dfd, "bus");
	if (r != 0 && r != -ENOENT && r != -ESHUTDOWN)
		FAIL("the torn-down bus directory still lists its endpoint (%d)",
		     r);
	close(dfd);
	close(rfd);
	return TEST_OK;
}

static int mount_tmp(char *dir)
{
	strcpy(dir, "/tmp/kdbus-cf-XXXXXX");
	if (!mkdtemp(dir))
		return -errno;
	if (mount("kdbusfs", dir, "kdbusfs", 0, NULL) < 0) {
		int r = -errno;

		rmdir(dir);
		return r;
	}
	return 0;
}

/* kdbus.fs(7) / kdbus.connection(7): one ID counter per domain, starting at 1,
 * shared by bus and connection IDs; kdbus.fs(7): inode numbers unique across
 * instances */
CONFORM_TEST(domain_id_counter, KDBUS_TEST_NO_BUS)
{
	char dir[64], path[256], name1[64], name2[64];
	struct kdbus_cmd_info ci = { .size = sizeof(ci) };
	struct kdbus_conn *c1 = NULL, *c2 = NULL, *c3 = NULL;
	struct stat s1, s2;
	int ctl1 = -1, ctl2 = -1, r = TEST_FAIL;

	ASSERT_OK(mount_tmp(dir));
	snprintf(path, sizeof(path), "%s/control", dir);
	ASSERT(stat(path, &s1) == 0);
	ASSERT(stat(KDBUS_CONTROL, &s2) == 0);
	if (s1.st_ino == s2.st_ino) {
		DIAG("both control nodes have inode %lu",
		     (unsigned long)s1.st_ino);
		goto out;
	}
	ctl1 = open(path, O_RDWR);
	ctl2 = open(path, O_RDWR);
	if (ctl1 < 0 || ctl2 < 0)
		goto out;
	kdbus_unique_name(name1, sizeof(name1), "d");
	kdbus_unique_name(name2, sizeof(name2), "d");
	if (kdbus_bus_make(ctl1, 0, name1, 8, 1, NULL) < 0)
		goto out;
	snprintf(path, sizeof(path), "%s/%s/bus", dir, name1);
	if (kdbus_hello(path, 0, 0, KDBUS_PAGE, &c1) < 0 ||
	    kdbus_hello(path, 0, 0, KDBUS_PAGE, &c2) < 0)
		goto out;
	DIAG("first connections: %llu %llu", (unsigned long long)c1->id,
	     (unsigned long long)c2->id);
	if (c1->id != 2 || c2->id != 3) {
		DIAG("expected connection IDs 2 and 3 (bus 1)");
		goto out;
	}
	if (kdbus_ioctl(c1->fd, KDBUS_CMD_BUS_CREATOR_INFO, &ci) < 0 ||
	    ((struct kdbus_info *)(c1->pool + ci.offset))->id != 1) {
		DIAG("bus ID is not 1");
		goto out;
	}
	if (kdbus_bus_make(ctl2, 0, name2, 8, 1, NULL) < 0)
		goto out;
	snprintf(path, sizeof(path), "%s/%s/bus", dir, name2);
	if (kdbus_hello(path, 0, 0, KDBUS_PAGE, &c3) < 0)
		goto out;
	ci.size = sizeof(ci);
	if (kdbus_ioctl(c3->fd, KDBUS_CMD_BUS_CREATOR_INFO, &ci) < 0)
		goto out;
	DIAG("second bus %llu, its connection %llu",
	     (unsigned long long)((struct kdbus_info *)(c3->pool + ci.offset))->id,
	     (unsigned long long)c3->id);
	if (((struct kdbus_info *)(c3->pool + ci.offset))->id != 4 ||
	    c3->id != 5)
		goto out;
	r = TEST_OK;
out:
	kdbus_conn_free(c1);
	kdbus_conn_free(c2);
	kdbus_conn_free(c3);
	close(ctl1);
	close(ctl2);
	if (umount(dir) < 0) {
		DIAG("umount: %m");
		r = TEST_FAIL;
	}
	rmdir(dir);
	return r;
}

/* kdbus.fs(7): VFS unmount rules; a lazy unmount keeps the domain alive */
CONFORM_TEST(umount_busy_and_lazy, KDBUS_TEST_NO_BUS)
{
	struct kdbus_cmd_hello h = { .size = sizeof(h), .pool_size = KDBUS_PAGE };
	char dir[64], path[256], name[64];
	struct kdbus_conn *c;
	int ctl, ep;

	ASSERT_OK(mount_tmp(dir));
	snprintf(path, sizeof(path), "%s/control", dir);
	ctl = open(path, O_RDWR);
	ASSERT(ctl >= 0);
	if (umount(dir) == 0 || errno != EBUSY) {
		DIAG("umount with an open file: %m");
		return TEST_FAIL;
	}
	kdbus_unique_name(name, sizeof(name), "lz");
	ASSERT_OK(kdbus_bus_make(ctl, 0, name, 8, 1, NULL));
	snprintf(path, sizeof(path), "%s/%s/bus", dir, name);
	ep = open(path, O_RDWR);
	ASSERT(ep >= 0);
	ASSERT_OK(kdbus_hello(path, 0, 0, KDBUS_PAGE, &c));
	ASSERT(umount2(dir, MNT_DETACH) == 0);
	/* the domain, its bus and the connection live on */
	ASSERT_OK(kdbus_conn_info(c, c->id, NULL, 0, NULL, NULL));
	ASSERT_OK(kdbus_ioctl(ep, KDBUS_CMD_HELLO, &h));
	ASSERT(h.id > c->id);
	ASSERT_OK(kdbus_conn_info(c, h.id, NULL, 0, NULL, NULL));
	close(ep);
	kdbus_conn_free(c);
	close(ctl);
	rmdir(dir);
	return TEST_OK;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -EIO;
}

/*
 * kdbus.fs(7) FS_USERNS_MOUNT, kdbus.fs(7) the domain pins the mounter's user
 * namespace, kdbus.bus(7) the name prefix is the euid rendered in the domain's
 * namespace. The child maps ns uid 1000 to global uid 5000.
 */
CONFORM_TEST(userns_mount_and_prefix, KDBUS_TEST_NO_BUS)
{
	char dir[] = "/tmp/kdbus-cfu-XXXXXX";
	int to_parent[2], to_child[2];
	char c, path[256];
	pid_t pid;
	int r;

	ASSERT(mkdtemp(dir));
	ASSERT(chmod(dir, 0755) == 0);
	ASSERT(pipe(to_parent) == 0 && pipe(to_child) == 0);
	fflush(stdout);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		char name[64], p2[300];
		struct stat st;
		int ctl;

		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
			kdbus_test_skip_reason("unshare(CLONE_NEWUSER): %m");
			_exit(TEST_SKIP);
		}
		if (write(to_parent[1], "x", 1) != 1 ||
		    read(to_child[0], &c, 1) != 1 || c != 'y')
			_exit(TEST_FAIL);
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			DIAG("making / private: %m");
		if (mount("kdbusfs", dir, "kdbusfs", 0, NULL) < 0) {
			DIAG("mount kdbusfs inside a user namespace: %m");
			_exit(TEST_FAIL);
		}
		if (setgroups(0, NULL) < 0 || setresgid(1000, 1000, 1000) < 0 ||
		    setresuid(1000, 1000, 1000) < 0) {
			DIAG("becoming ns uid 1000: %m");
			_exit(TEST_FAIL);
		}
		/* the new domain renders uids in the child's namespace */
		snprintf(p2, sizeof(p2), "%s/control", dir);
		ctl = open(p2, O_RDWR);
		if (ctl < 0) {
			DIAG("open %s: %m", p2);
			_exit(TEST_FAIL);
		}
		snprintf(name, sizeof(name), "5000-u%d", (int)getpid());
		r = kdbus_bus_make(ctl, 0, name, 8, 1, NULL);
		if (r != -EINVAL) {
			DIAG("new domain, \"%s\": expected EINVAL, got %s", name,
			     r ? kdbus_errname(-r) : "success");
			_exit(TEST_FAIL);
		}
		snprintf(name, sizeof(name), "1000-u%d", (int)getpid());
		r = kdbus_bus_make(ctl, 0, name, 8, 1, NULL);
		if (r < 0) {
			DIAG("new domain, \"%s\": %s", name, kdbus_errname(-r));
			_exit(TEST_FAIL);
		}
		snprintf(p2, sizeof(p2), "%s/%s", dir, name);
		if (stat(p2, &st) < 0 || st.st_uid != 1000) {
			DIAG("bus directory owner as seen in the namespace: %u",
			     (unsigned int)st.st_uid);
			_exit(TEST_FAIL);
		}
		/* the initial domain renders uids in the initial namespace */
		ctl = open(KDBUS_CONTROL, O_RDWR);
		if (ctl < 0) {
			DIAG("open %s: %m", KDBUS_CONTROL);
			_exit(TEST_FAIL);
		}
		r = kdbus_bus_make(ctl, 0, name, 8, 1, NULL);
		if (r != -EINVAL) {
			DIAG("initial domain, \"%s\": expected EINVAL, got %s",
			     name, r ? kdbus_errname(-r) : "success");
			_exit(TEST_FAIL);
		}
		snprintf(name, sizeof(name), "5000-u%d", (int)getpid());
		r = kdbus_bus_make(ctl, 0, name, 8, 1, NULL);
		if (r < 0) {
			DIAG("initial domain, \"%s\": %s", name,
			     kdbus_errname(-r));
			_exit(TEST_FAIL);
		}
		_exit(TEST_OK);
	}
	close(to_parent[1]);
	if (read(to_parent[0], &c, 1) == 1) {
		snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
		r = write_file(path, "0 0 1\n1000 5000 1\n");
		if (r == 0) {
			snprintf(path, sizeof(path), "/proc/%d/gid_map",
				 (int)pid);
			r = write_file(path, "0 0 1\n1000 5000 1\n");
		}
		if (r < 0)
			DIAG("writing the id maps: %s", kdbus_errname(-r));
		if (write(to_child[1], r < 0 ? "n" : "y", 1) != 1)
			DIAG("pipe: %m");
	}
	r = kdbus_wait_child(pid);
	rmdir(dir);
	return r;
}

/* kdbus(7): poll on handles that are not connections */
CONFORM_TEST(poll_not_connected, 0)
{
	struct pollfd p = { .events = POLLIN | POLLOUT };

	p.fd = env->bus_owner_fd;
	ASSERT_EQ(poll(&p, 1, 0), 1);
	ASSERT_EQ(p.revents & (POLLERR | POLLHUP), POLLERR | POLLHUP);
	ASSERT_EQ(p.revents & (POLLIN | POLLOUT), 0);
	return TEST_OK;
}
