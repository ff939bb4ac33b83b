// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Sealed memfds as message payload (kdbus.message(7)):
 * validation and its order, delivery of a descriptor of the receiver's
 * own, no installation on PEEK, and no references kept after DROP,
 * disconnect or a failed installation.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

#define ALL_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL)
#define TMPFS_MAGIC_NR 0x01021994

/* deterministic content: byte i of the file */
static uint8_t pattern(uint64_t i)
{
	return (uint8_t)((i * 2654435761ULL) >> 13);
}

static uint64_t checksum(const uint8_t *p, uint64_t start, uint64_t len)
{
	uint64_t i, sum = 0;

	for (i = 0; i < len; i++)
		sum = sum * 31 + p[i] + ((start + i) & 7);
	return sum;
}

static uint64_t expected_checksum(uint64_t start, uint64_t len)
{
	uint64_t i, sum = 0;

	for (i = 0; i < len; i++)
		sum = sum * 31 + pattern(start + i) + ((start + i) & 7);
	return sum;
}

/* a memfd of @size bytes filled with pattern(), then sealed with @seals */
static int make_memfd(uint64_t size, unsigned int seals)
{
	uint8_t *p;
	uint64_t i;
	int fd;

	fd = memfd_create("kdbus-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, size) < 0)
		goto fail;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	for (i = 0; i < size; i++)
		p[i] = pattern(i);
	munmap(p, size);
	if (seals && fcntl(fd, F_ADD_SEALS, seals) < 0)
		goto fail;
	return fd;
fail:
	i = errno;
	close(fd);
	return -(int)i;
}

static struct kdbus_item *add_memfd(struct kdbus_msg *m, int fd,
				    uint64_t start, uint64_t size)
{
	struct kdbus_memfd mfd = {
		.start = start,
		.size = size,
		.fd = fd,
		.__pad = 0xdeadbeef,	/* not passed on */
	};

	return cmd_add_item(m, KDBUS_ITEM_PAYLOAD_MEMFD, &mfd, sizeof(mfd));
}

static int send_memfd(struct kdbus_conn *c, uint64_t dst, int fd,
		      uint64_t start, uint64_t size)
{
	struct kdbus_msg *m = kdbus_msg_new(dst, 7, 0, 0, NULL, 0);
	int r;

	add_memfd(m, fd, start, size);
	r = kdbus_send_msg(c->fd, 0, m, NULL);
	cmd_free(m);
	return r;
}

/* number of open descriptors of this process */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the directory's own descriptor */
}

/* wait until Shmem is back below @limit kB (deferred fput); last value */
static long wait_shmem_below(long limit)
{
	long v = kdbus_meminfo_kb("Shmem");
	int i;

	for (i = 0; i < 50 && v >= limit; i++) {
		kdbus_msleep(100);
		v = kdbus_meminfo_kb("Shmem");
	}
	return v;
}

/*
 * A sealed memfd between two vecs: the receiver (without ACCEPT_FD) gets
 * its own descriptor of the same file at RECV, none at PEEK, and the
 * payload stream is padded by size % 8 zero bytes.
 */
KDBUS_TEST_FULL(memfd, deliver, 0, 300)
{
	const uint64_t fsize = 64ULL << 20, start = 4096 + 100;
	const uint64_t size = fsize - start - 7;	/* size % 8 == 5 */
	struct kdbus_conn *a, *b;
	struct kdbus_cmd_recv rc;
	struct kdbus_item *it, *vec1 = NULL, *vec2 = NULL, *mit = NULL;
	struct kdbus_msg *m;
	struct stat st1, st2;
	uint64_t sum, want, P;
	int fd, nfds, n;
	uint8_t *p;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &b));
	fd = make_memfd(fsize, ALL_SEALS);
	ASSERT_OK(fd);
	ASSERT(fstat(fd, &st1) == 0);
	want = expected_checksum(start, size);

	m = kdbus_msg_new(b->id, 1, 0, 0, "abc", 3);
	add_memfd(m, fd, start, size);
	{
		struct kdbus_vec v = { .size = 3, .address = (uintptr_t)"xyz" };

		cmd_add_item(m, KDBUS_ITEM_PAYLOAD_VEC, &v, sizeof(v));
	}
	ASSERT_OK(kdbus_send_msg(a->fd, 0, m, NULL));
	cmd_free(m);
	/* the sender may close its descriptor right away */
	close(fd);

	nfds = count_fds();
	ASSERT(nfds > 0);
	ASSERT_OK(kdbus_recv(b, KDBUS_RECV_PEEK, 0, &rc));
	m = (struct kdbus_msg *)(b->pool + rc.msg.offset);
	it = kdbus_msg_find(m, KDBUS_ITEM_PAYLOAD_MEMFD);
	ASSERT(it);
	ASSERT_EQ(it->memfd.fd, -1);
	ASSERT_EQ(count_fds(), nfds);
	ASSERT_OK(kdbus_free(b, rc.msg.offset));

	ASSERT_OK(kdbus_recv(b, 0, 0, &rc));
	ASSERT_EQ(rc.msg.return_flags, 0);
	ASSERT_EQ(count_fds(), nfds + 1);
	m = (struct kdbus_msg *)(b->pool + rc.msg.offset);
	n = 0;
	KDBUS_ITEM_FOREACH(it, m->items, KDBUS_MSG_ITEMS_LEN(m)) {
		if (it->type == KDBUS_ITEM_PAYLOAD_OFF)
			*(n++ == 0 ? &vec1 : &vec2) = it;
		else if (it->type == KDBUS_ITEM_PAYLOAD_MEMFD)
			mit = it;
	}
	ASSERT(vec1 && vec2 && mit);
	ASSERT((uint8_t *)vec1 < (uint8_t *)mit && (uint8_t *)mit < (uint8_t *)vec2);
	ASSERT_EQ(mit->size, KDBUS_ITEM_HDR + sizeof(struct kdbus_memfd));
	ASSERT_EQ(mit->memfd.start, start);
	ASSERT_EQ(mit->memfd.size, size);
	ASSERT_EQ(mit->memfd.__pad, 0);
	/* payload stream: "abc", 5 zero bytes for the memfd, "xyz" */
	P = KDBUS_ALIGN8(m->size);
	ASSERT_EQ(vec1->vec.offset, P);
	ASSERT_EQ(vec2->vec.offset, P + 3 + 5);
	ASSERT(!memcmp((uint8_t *)m + P, "abc\0\0\0\0\0xyz", 11));
	ASSERT_EQ(rc.msg.msg_size, KDBUS_ALIGN8(P + 11));

	fd = mit->memfd.fd;
	ASSERT(fd >= 0);
	ASSERT(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	ASSERT(fstat(fd, &st2) == 0);
	ASSERT_EQ(st1.st_ino, st2.st_ino);
	ASSERT_EQ(st1.st_dev, st2.st_dev);
	ASSERT_EQ(st2.st_size, fsize);
	ASSERT_EQ(fcntl(fd, F_GET_SEALS) & ALL_SEALS, ALL_SEALS);
	p = mmap(NULL, fsize, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT(p != MAP_FAILED);
	sum = checksum(p + start, start, size);
	munmap(p, fsize);
	ASSERT_EQ(sum, want);
	close(fd);
	ASSERT_OK(kdbus_free(b, rc.msg.offset));
	ASSERT_ERR(kdbus_recv(b, 0, 0, NULL), EAGAIN);

	/* the one installed descriptor is closed again */
	ASSERT_EQ(count_fds(), nfds);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* each of the four seals is required; FUTURE_WRITE is no substitute */
KDBUS_TEST(memfd, seals, 0)
{
	static const unsigned int seal[] = {
		F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_WRITE, F_SEAL_SEAL,
	};
	struct kdbus_conn *a, *b;
	unsigned int i;
	int fd;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &b));

	/* unsealed */
	fd = make_memfd(4096, 0);
	ASSERT_OK(fd);
	ASSERT_ERR(send_memfd(a, b->id, fd, 0, 4096), ETXTBSY);
	close(fd);

	/* one seal missing */
	for (i = 0; i < 4; i++) {
		fd = make_memfd(4096, ALL_SEALS & ~seal[i]);
		ASSERT_OK(fd);
		ASSERT_ERR(send_memfd(a, b->id, fd, 0, 4096), ETXTBSY);
		close(fd);
	}

	/* F_SEAL_FUTURE_WRITE instead of F_SEAL_WRITE */
	fd = make_memfd(4096, (ALL_SEALS & ~F_SEAL_WRITE) |
			      F_SEAL_FUTURE_WRITE);
	ASSERT_OK(fd);
	ASSERT_ERR(send_memfd(a, b->id, fd, 0, 4096), ETXTBSY);
	close(fd);

	/* a memfd created without MFD_ALLOW_SEALING carries F_SEAL_SEAL only */
	fd = memfd_create("noseal", MFD_CLOEXEC);
	ASSERT(fd >= 0);
	ASSERT(ftruncate(fd, 4096) == 0);
	ASSERT_ERR(send_memfd(a, b->id, fd, 0, 4096), ETXTBSY);
	close(fd);

	/* a plain tmpfs file is shmem-backed but not sealed */
	fd = open("/dev/shm", O_TMPFILE | O_RDWR, 0600);
	if (fd >= 0) {
		ASSERT(ftruncate(fd, 4096) == 0);
		ASSERT_ERR(send_memfd(a, b->id, fd, 0, 4096), ETXTBSY);
		close(fd);
	} else {
		DIAG("no O_TMPFILE on /dev/shm (%s), part skipped",
		     strerror(errno));
	}

	/* all four (plus more) is fine */
	fd = make_memfd(4096, ALL_SEALS | F_SEAL_FUTURE_WRITE);
	ASSERT_OK(fd);
	ASSERT_OK(send_memfd(a, b->id, fd, 0, 4096));
	close(fd);
	ASSERT_OK(kdbus_recv(b, KDBUS_RECV_DROP, 0, NULL));
	ASSERT_ERR(kdbus_recv(b, 0, 0, NULL), EAGAIN);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* files that are not shmem-backed regular files: EMEDIUMTYPE */
KDBUS_TEST(memfd, not_memfd, 0)
{
	struct kdbus_conn *a, *b;
	struct statfs sfs;
	int fd, pipefd[2];

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &b));

	ASSERT(pipe(pipefd) == 0);
	ASSERT_ERR(send_memfd(a, b->id, pipefd[0], 0, 1), EMEDIUMTYPE);
	ASSERT_ERR(send_memfd(a, b->id, pipefd[1], 0, 1), EMEDIUMTYPE);
	close(pipefd[0]);
	close(pipefd[1]);

	/* a kdbus handle, a directory, a device node (devtmpfs is shmem) */
	ASSERT_ERR(send_memfd(a, b->id, a->fd, 0, 1), EMEDIUMTYPE);
	fd = open("/dev/shm", O_RDONLY | O_DIRECTORY);
	ASSERT(fd >= 0);
	ASSERT_ERR(send_memfd(a, b->id, fd, 0, 1), EMEDIUMTYPE);
	close(fd);
	fd = open("/dev/null", O_RDWR);
	ASSERT(fd >= 0);
	ASSERT_ERR(send_memfd(a, b->id, fd, 0, 1), EMEDIUMTYPE);
	close(fd);

	/* a regular file on a filesystem other than tmpfs */
	fd = open("/proc/self/exe", O_RDONLY);
	ASSERT(fd >= 0);
	ASSERT(fstatfs(fd, &sfs) == 0);
	if (sfs.f_type != TMPFS_MAGIC_NR)
		ASSERT_ERR(send_memfd(a, b->id, fd, 0, 1), EMEDIUMTYPE);
	else
		DIAG("test binary is on tmpfs, regular-file part skipped");
	close(fd);
	fd = open("/proc/self/status", O_RDONLY);
	ASSERT(fd >= 0);
	ASSERT_ERR(send_memfd(a, b->id, fd, 0, 1), EMEDIUMTYPE);
	close(fd);

	/* hugetlbfs memfds are refused even when sealed */
	fd = memfd_create("huge", MFD_CLOEXEC | MFD_ALLOW_SEALING |
				  MFD_HUGETLB);
	if (fd >= 0) {
		ASSERT(ftruncate(fd, 2 << 20) == 0);
		ASSERT(fcntl(fd, F_ADD_SEALS, ALL_SEALS) == 0);
		ASSERT_ERR(send_memfd(a, b->id, fd, 0, 1), EMEDIUMTYPE);
		close(fd);
	} else {
		DIAG("no hugetlb memfd (%s), part skipped", strerror(errno));
	}

	ASSERT_ERR(kdbus_recv(b, 0, 0, NULL), EAGAIN);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* descriptors, ranges, counts, and the order of the checks */
KDBUS_TEST(memfd, validation, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_cmd_recv rc;
	struct kdbus_item *it;
	struct kdbus_msg *m;
	int fd, closed, i, n;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &b));
	fd = make_memfd(4096, ALL_SEALS);
	ASSERT_OK(fd);
	closed = dup(fd);
	ASSERT(closed >= 0);
	close(closed);

	/* bad descriptors */
	ASSERT_ERR(send_memfd(a, b->id, -1, 0, 1), EBADF);
	ASSERT_ERR(send_memfd(a, b->id, closed, 0, 1), EBADF);
	ASSERT_ERR(send_memfd(a, b->id, 9999, 0, 1), EBADF);
	/* size 0 */
	ASSERT_ERR(send_memfd(a, b->id, fd, 0, 0), EINVAL);

	/* ranges: beyond the file → EFAULT, overflow → EMSGSIZE */
	ASSERT_ERR(send_memfd(a, b->id, fd, 0, 4097), EFAULT);
	ASSERT_ERR(send_memfd(a, b->id, fd, 4096, 1), EFAULT);
	ASSERT_ERR(send_memfd(a, b->id, fd, 1, 4096), EFAULT);
	ASSERT_ERR(send_memfd(a, b->id, fd, ~0ULL - 10, 100), EMSGSIZE);
	ASSERT_ERR(send_memfd(a, b->id, fd, 1, ~0ULL), EMSGSIZE);
	/* the overflow check (step 6) comes before the import (step 8) */
	ASSERT_ERR(send_memfd(a, b->id, closed, ~0ULL, 2), EMSGSIZE);
	/* the whole file and its last byte are fine */
	ASSERT_OK(send_memfd(a, b->id, fd, 0, 4096));
	ASSERT_OK(send_memfd(a, b->id, fd, 4095, 1));
	ASSERT_OK(kdbus_recv(b, KDBUS_RECV_DROP, 0, NULL));
	ASSERT_OK(kdbus_recv(b, KDBUS_RECV_DROP, 0, NULL));

	/* 16 memfd items are fine, 17 are E2BIG (before any import) */
	m = kdbus_msg_new(b->id, 1, 0, 0, NULL, 0);
	for (i = 0; i < KDBUS_MSG_MAX_MEMFD_ITEMS; i++)
		add_memfd(m, fd, i, 1);
	ASSERT_OK(kdbus_send_msg(a->fd, 0, m, NULL));
	add_memfd(m, closed, 0, 1);
	ASSERT_ERR(kdbus_send_msg(a->fd, 0, m, NULL), E2BIG);
	cmd_free(m);
	ASSERT_OK(kdbus_recv(b, 0, 0, &rc));
	ASSERT_EQ(rc.msg.return_flags, 0);
	m = (struct kdbus_msg *)(b->pool + rc.msg.offset);
	n = 0;
	KDBUS_ITEM_FOREACH(it, m->items, KDBUS_MSG_ITEMS_LEN(m)) {
		if (it->type != KDBUS_ITEM_PAYLOAD_MEMFD)
			continue;
		ASSERT(it->memfd.fd >= 0 && it->memfd.fd != fd);
		ASSERT_EQ(it->memfd.start, n);
		close(it->memfd.fd);
		n++;
	}
	ASSERT_EQ(n, KDBUS_MSG_MAX_MEMFD_ITEMS);
	ASSERT_OK(kdbus_free(b, rc.msg.offset));

	/* item order: a bad second memfd fails the send, nothing arrives */
	{
		int pipefd[2];

		ASSERT(pipe(pipefd) == 0);
		m = kdbus_msg_new(b->id, 1, 0, 0, NULL, 0);
		add_memfd(m, fd, 0, 1);
		add_memfd(m, pipefd[0], 0, 1);
		add_memfd(m, closed, 0, 1);
		ASSERT_ERR(kdbus_send_msg(a->fd, 0, m, NULL), EMEDIUMTYPE);
		cmd_free(m);
		close(pipefd[0]);
		close(pipefd[1]);
	}
	ASSERT_ERR(kdbus_recv(b, 0, 0, NULL), EAGAIN);

	/* memfds are not fds: allowed on broadcasts (FDS are ENOTUNIQ) */
	{
		uint64_t bloom[1 + KDBUS_DEFAULT_BLOOM / 8] = { 0 };

		m = kdbus_msg_new(KDBUS_DST_ID_BROADCAST, 1, KDBUS_MSG_SIGNAL,
				  0, NULL, 0);
		add_memfd(m, fd, 0, 1);
		cmd_add_item(m, KDBUS_ITEM_BLOOM_FILTER, bloom, sizeof(bloom));
		ASSERT_OK(kdbus_send_msg(a->fd, 0, m, NULL));
		cmd_add_item(m, KDBUS_ITEM_FDS, &fd, sizeof(fd));
		ASSERT_ERR(kdbus_send_msg(a->fd, 0, m, NULL), ENOTUNIQ);
		cmd_free(m);
	}

	close(fd);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/*
 * No references are kept: once the receiver PEEKs (nothing installed),
 * DROPs, or disconnects with the memfd queued, the memfd's memory is
 * freed, as seen in Shmem.
 */
KDBUS_TEST_FULL(memfd, no_leaks, 0, 300)
{
	const uint64_t fsize = 32ULL << 20;
	const long fsize_kb = (long)(fsize >> 10);
	struct kdbus_conn *a, *b;
	struct kdbus_cmd_recv rc;
	long base, with, after;
	int fd, nfds, round;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	for (round = 0; round < 2; round++) {
		ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL,
				      &b));
		base = kdbus_meminfo_kb("Shmem");
		ASSERT(base >= 0);
		fd = make_memfd(fsize, ALL_SEALS);
		ASSERT_OK(fd);
		ASSERT_OK(send_memfd(a, b->id, fd, 0, fsize));
		ASSERT_OK(send_memfd(a, b->id, fd, 8, 8));
		close(fd);
		with = kdbus_meminfo_kb("Shmem");
		ASSERT(with - base >= fsize_kb / 2);

		/* PEEK installs nothing */
		nfds = count_fds();
		ASSERT_OK(kdbus_recv(b, KDBUS_RECV_PEEK, 0, &rc));
		ASSERT_EQ(count_fds(), nfds);
		ASSERT_OK(kdbus_free(b, rc.msg.offset));

		if (round == 0) {
			ASSERT_OK(kdbus_recv(b, KDBUS_RECV_DROP, 0, NULL));
			ASSERT_OK(kdbus_recv(b, KDBUS_RECV_DROP, 0, NULL));
			ASSERT_ERR(kdbus_recv(b, 0, 0, NULL), EAGAIN);
			ASSERT_EQ(count_fds(), nfds);
		}
		kdbus_conn_free(b);
		after = wait_shmem_below(base + fsize_kb / 4);
		DIAG("%s: Shmem %ld kB before, %ld kB queued, %ld kB after",
		     round == 0 ? "DROP" : "disconnect", base, with, after);
		ASSERT(after < base + fsize_kb / 4);
	}
	kdbus_conn_free(a);
	return TEST_OK;
}

/* the receiver's RLIMIT_NOFILE too low: slot -1, INCOMPLETE_FDS */
KDBUS_TEST(memfd, install_failure, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_cmd_recv rc;
	struct kdbus_msg *m;
	struct kdbus_item *it;
	int fd;
	pid_t pid;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &b));
	fd = make_memfd(4096, ALL_SEALS);
	ASSERT_OK(fd);
	ASSERT_OK(send_memfd(a, b->id, fd, 0, 4096));
	close(fd);
	fflush(stdout);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		/* the lowest free descriptor is the limit: no room */
		struct rlimit rl;
		int low = dup(0);

		if (low < 0)
			_exit(TEST_FAIL);
		close(low);
		rl.rlim_cur = low;
		rl.rlim_max = low;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			_exit(TEST_FAIL);
		if (kdbus_recv(b, 0, 0, &rc) < 0)
			_exit(TEST_FAIL);
		m = (struct kdbus_msg *)(b->pool + rc.msg.offset);
		it = kdbus_msg_find(m, KDBUS_ITEM_PAYLOAD_MEMFD);
		if (!it || it->memfd.fd != -1 || it->memfd.size != 4096)
			_exit(TEST_FAIL);
		if (!(rc.msg.return_flags & KDBUS_RECV_RETURN_INCOMPLETE_FDS))
			_exit(TEST_FAIL);
		_exit(TEST_OK);
	}
	ASSERT_EQ(kdbus_wait_child(pid), TEST_OK);
	/* delivered anyway: the queue is empty */
	ASSERT_ERR(kdbus_recv(b, 0, 0, NULL), EAGAIN);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}
