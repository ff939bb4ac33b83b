// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kdbusfs: mount point, control node, node modes and owners, readdir,
 * refusal to unlink, one domain per mount (kdbus.fs(7), kdbus.item(7)).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

KDBUS_TEST(fs, mount_root, KDBUS_TEST_NO_BUS)
{
	struct statfs sfs;
	struct stat st;

	ASSERT(statfs(KDBUS_MOUNT, &sfs) == 0);
	ASSERT_EQ(sfs.f_type, KDBUS_SUPER_MAGIC);
	ASSERT(stat(KDBUS_MOUNT, &st) == 0);
	ASSERT(S_ISDIR(st.st_mode));
	ASSERT_EQ(st.st_mode & 07777, 0555);
	ASSERT_EQ(st.st_uid, 0);
	ASSERT_EQ(st.st_gid, 0);
	return TEST_OK;
}

KDBUS_TEST(fs, control_node, KDBUS_TEST_NO_BUS)
{
	struct stat st;

	ASSERT(stat(KDBUS_CONTROL, &st) == 0);
	ASSERT(S_ISREG(st.st_mode));
	ASSERT_EQ(st.st_mode & 07777, 0666);
	ASSERT_EQ(st.st_uid, 0);
	ASSERT_EQ(st.st_gid, 0);
	ASSERT_EQ(st.st_size, 0);
	return TEST_OK;
}

KDBUS_TEST(fs, control_unlink_refused, KDBUS_TEST_NO_BUS)
{
	struct stat st;

	ASSERT(unlink(KDBUS_CONTROL) < 0);
	ASSERT(stat(KDBUS_CONTROL, &st) == 0);
	ASSERT(rmdir(KDBUS_MOUNT "/control") < 0);
	ASSERT(mkdir(KDBUS_MOUNT "/0-foo", 0755) < 0);
	ASSERT(open(KDBUS_MOUNT "/0-newfile", O_RDWR | O_CREAT, 0600) < 0);
	return TEST_OK;
}

/* the bus nodes of one make-flags value: mode of dir and endpoint */
static int check_bus_modes(uint64_t flags, mode_t dmode, mode_t fmode)
{
	char name[64], path[320];
	struct stat st;
	int fd;

	fd = kdbus_bus_new(flags, name, sizeof(name));
	ASSERT_OK(fd);
	snprintf(path, sizeof(path), "%s/%s", KDBUS_MOUNT, name);
	ASSERT(stat(path, &st) == 0);
	ASSERT(S_ISDIR(st.st_mode));
	ASSERT_EQ(st.st_mode & 07777, dmode);
	ASSERT_EQ(st.st_uid, geteuid());
	ASSERT_EQ(st.st_gid, getegid());
	ASSERT_EQ(st.st_nlink, 2);
	snprintf(path, sizeof(path), "%s/%s/bus", KDBUS_MOUNT, name);
	ASSERT(stat(path, &st) == 0);
	ASSERT(S_ISREG(st.st_mode));
	ASSERT_EQ(st.st_mode & 07777, fmode);
	ASSERT_EQ(st.st_uid, geteuid());
	ASSERT_EQ(st.st_gid, getegid());
	close(fd);
	return TEST_OK;
}

KDBUS_TEST(fs, bus_node_modes, KDBUS_TEST_NO_BUS)
{
	RUN(check_bus_modes(0, 0500, 0600));
	RUN(check_bus_modes(KDBUS_MAKE_ACCESS_GROUP, 0550, 0660));
	RUN(check_bus_modes(KDBUS_MAKE_ACCESS_WORLD, 0555, 0666));
	RUN(check_bus_modes(KDBUS_MAKE_ACCESS_GROUP | KDBUS_MAKE_ACCESS_WORLD,
			    0555, 0666));
	return TEST_OK;
}

/* owner of the nodes is the creator's effective uid/gid */
KDBUS_TEST(fs, bus_node_owner, KDBUS_TEST_NO_BUS)
{
	pid_t pid = kdbus_fork_as(4201, 4202);

	ASSERT(pid >= 0);
	if (pid == 0) {
		char name[64], path[320];
		struct stat st;
		int fd = kdbus_bus_new(0, name, sizeof(name));

		if (fd < 0)
			_exit(fd == -ENOTTY ? TEST_SKIP : TEST_FAIL);
		if (strncmp(name, "4201-", 5))
			_exit(TEST_FAIL);
		snprintf(path, sizeof(path), "%s/%s/bus", KDBUS_MOUNT, name);
		if (stat(path, &st) || st.st_uid != 4201 || st.st_gid != 4202)
			_exit(TEST_FAIL);
		_exit(TEST_OK);
	}
	return kdbus_wait_child(pid);
}

static int dir_has(const char *dir, const char *name, unsigned char type)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int found = 0, dots = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			dots++;
		if (!strcmp(de->d_name, name) && de->d_type == type)
			found = 1;
	}
	closedir(d);
	return found && dots == 2;
}

KDBUS_TEST(fs, readdir, 0)
{
	char ep[64];

	ASSERT(dir_has(KDBUS_MOUNT, "control", DT_REG) == 1);
	ASSERT(dir_has(KDBUS_MOUNT, env->bus_name, DT_DIR) == 1);
	ASSERT(dir_has(env->bus_dir, "bus", DT_REG) == 1);
	/* gone from the listing once the bus is closed */
	close(env->bus_owner_fd);
	ASSERT(dir_has(KDBUS_MOUNT, env->bus_name, DT_DIR) == 0);
	snprintf(ep, sizeof(ep), "%s", env->bus_name);
	ASSERT(access(env->bus_path, F_OK) < 0 && errno == ENOENT);
	return TEST_OK;
}

KDBUS_TEST(fs, bus_unlink_refused, 0)
{
	ASSERT(unlink(env->bus_path) < 0);
	ASSERT(rmdir(env->bus_dir) < 0);
	ASSERT(access(env->bus_path, F_OK) == 0);
	return TEST_OK;
}

KDBUS_TEST(fs, no_read_write, 0)
{
	char buf[16];
	int fd = open(KDBUS_CONTROL, O_RDWR);

	ASSERT(fd >= 0);
	ASSERT(read(fd, buf, sizeof(buf)) < 0);
	ASSERT(write(fd, buf, sizeof(buf)) < 0);
	close(fd);
	fd = open(env->bus_path, O_RDWR);
	ASSERT(fd >= 0);
	ASSERT(read(fd, buf, sizeof(buf)) < 0);
	ASSERT(write(fd, buf, sizeof(buf)) < 0);
	close(fd);
	return TEST_OK;
}

/* every mount is a new, empty domain; mount options are ignored */
KDBUS_TEST(fs, mount_new_domain, 0)
{
	char dir[] = "/tmp/kdbus-mnt-XXXXXX", path[512];
	struct stat st;
	int r = TEST_OK;

	ASSERT(mkdtemp(dir));
	if (mount("kdbusfs", dir, "kdbusfs", 0, "foo=bar,baz") < 0) {
		DIAG("mount kdbusfs at %s: %m", dir);
		rmdir(dir);
		return TEST_FAIL;
	}
	snprintf(path, sizeof(path), "%s/control", dir);
	if (stat(path, &st) || (st.st_mode & 07777) != 0666) {
		DIAG("no control node in the second mount");
		r = TEST_FAIL;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, env->bus_name);
	if (stat(path, &st) == 0 || errno != ENOENT) {
		DIAG("bus of the first mount visible in the second");
		r = TEST_FAIL;
	}
	if (r == TEST_OK) {
		/* the same bus name can be made in the new domain */
		int fd;

		snprintf(path, sizeof(path), "%s/control", dir);
		fd = open(path, O_RDWR);
		if (fd < 0 || kdbus_bus_make(fd, 0, env->bus_name, 8, 1,
					     NULL) < 0) {
			DIAG("BUS_MAKE with the same name in a second domain failed");
			r = TEST_FAIL;
		}
		if (fd >= 0)
			close(fd);
	}
	if (umount(dir) < 0) {
		DIAG("umount %s: %m", dir);
		r = TEST_FAIL;
	}
	rmdir(dir);
	return r;
}
