// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A 1 GiB sealed memfd as payload (issue 6): delivered in one message,
 * mapped by the receiver through its own descriptor and checked, and its
 * memory freed once both sides have closed it.
 *
 * Writing and reading every byte of 1 GiB takes minutes under TCG, so
 * each 4 KiB page carries one marker word (value and position derived
 * from the page number); the receiver checksums all markers and reads
 * every 64th page in full (the rest of those pages must be zero). All
 * 262144 pages are really allocated: fallocate() before the mapping, so
 * Shmem grows by the full 1 GiB.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

#define ALL_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL)
#define BIG_SIZE	(1ULL << 30)
#define BIG_PAGES	(BIG_SIZE / KDBUS_PAGE)
#define WORDS_PER_PAGE	(KDBUS_PAGE / sizeof(uint64_t))
#define FULL_EVERY	64	/* pages read in full */

/* splitmix64: the marker of page @pg */
static uint64_t marker(uint64_t pg)
{
	uint64_t z = pg + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* word index of the marker inside its page: varies from page to page */
static size_t marker_slot(uint64_t pg)
{
	return (size_t)(pg * 7 % WORDS_PER_PAGE);
}

static uint64_t mix(uint64_t sum, uint64_t v)
{
	return (sum ^ v) * 0x100000001b3ULL;
}

static double elapsed(uint64_t t0)
{
	return (double)(kdbus_now_ns() - t0) / 1e9;
}

/* wait until Shmem is back below @limit kB (deferred fput); last value */
static long wait_shmem_below(long limit)
{
	long v = kdbus_meminfo_kb("Shmem");
	int i;

	for (i = 0; i < 100 && v >= limit; i++) {
		kdbus_msleep(100);
		v = kdbus_meminfo_kb("Shmem");
	}
	return v;
}

/* the sender's side: a sealed 1 GiB memfd with markers; *sum of them */
static int make_big_memfd(uint64_t *sum)
{
	uint64_t *p, pg, s = 0;
	int fd, err;

	fd = memfd_create("kdbus-big", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, BIG_SIZE) < 0 || fallocate(fd, 0, 0, BIG_SIZE) < 0)
		goto fail;
	p = mmap(NULL, BIG_SIZE, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_POPULATE, fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	for (pg = 0; pg < BIG_PAGES; pg++) {
		uint64_t v = marker(pg);

		p[pg * WORDS_PER_PAGE + marker_slot(pg)] = v;
		s = mix(s, v);
	}
	munmap(p, BIG_SIZE);
	if (fcntl(fd, F_ADD_SEALS, ALL_SEALS) < 0)
		goto fail;
	*sum = s;
	return fd;
fail:
	err = errno;
	close(fd);
	return -err;
}

/* the receiver's side: checksum of the markers, full pages must match */
static int check_big(const uint64_t *p, uint64_t want)
{
	uint64_t pg, sum = 0, bad = 0;
	size_t w;

	for (pg = 0; pg < BIG_PAGES; pg++) {
		const uint64_t *page = p + pg * WORDS_PER_PAGE;

		sum = mix(sum, page[marker_slot(pg)]);
		if (pg % FULL_EVERY)
			continue;
		for (w = 0; w < WORDS_PER_PAGE; w++)
			if (w != marker_slot(pg) && page[w] != 0)
				bad++;
	}
	if (bad)
		FAIL("%llu stray non-zero words", (unsigned long long)bad);
	ASSERT_EQ(sum, want);
	return TEST_OK;
}

KDBUS_TEST_FULL(memfd_big, deliver_1g, 0, 300)
{
	const long size_kb = (long)(BIG_SIZE >> 10);
	struct kdbus_memfd mfd = { .start = 0, .size = BIG_SIZE };
	struct kdbus_conn *a, *b;
	struct kdbus_item *it;
	struct kdbus_msg *m;
	long base, with, after;
	uint64_t want = 0, off, t0;
	struct stat st;
	const uint64_t *p;
	int fd, rfd;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &b));
	base = kdbus_meminfo_kb("Shmem");
	ASSERT(base >= 0);
	if (kdbus_meminfo_kb("MemAvailable") < size_kb + (128L << 10))
		SKIP("less than 1.125 GiB available (%ld kB)",
		     kdbus_meminfo_kb("MemAvailable"));

	t0 = kdbus_now_ns();
	fd = make_big_memfd(&want);
	ASSERT_OK(fd);
	DIAG("sender: 1 GiB memfd filled and sealed in %.2f s", elapsed(t0));

	t0 = kdbus_now_ns();
	mfd.fd = fd;
	m = kdbus_msg_new(b->id, 1, 0, 0, NULL, 0);
	cmd_add_item(m, KDBUS_ITEM_PAYLOAD_MEMFD, &mfd, sizeof(mfd));
	ASSERT_OK(kdbus_send_msg(a->fd, 0, m, NULL));
	cmd_free(m);
	/* the sender lets go at once: the message holds the memory */
	close(fd);
	with = kdbus_meminfo_kb("Shmem");
	/*
	 * Pools of earlier tests may still be freed in the background (the
	 * last fput is deferred), so allow 32 MiB of slack against 1 GiB.
	 */
	ASSERT(with - base >= size_kb - (32L << 10));

	ASSERT_OK(kdbus_recv_msg(b, 0, 0, &m, &off));
	DIAG("send + recv in %.3f s", elapsed(t0));
	it = kdbus_msg_find(m, KDBUS_ITEM_PAYLOAD_MEMFD);
	ASSERT(it);
	ASSERT_EQ(it->memfd.start, 0);
	ASSERT_EQ(it->memfd.size, BIG_SIZE);
	rfd = it->memfd.fd;
	ASSERT(rfd >= 0);
	ASSERT_OK(kdbus_free(b, off));

	ASSERT(fstat(rfd, &st) == 0);
	ASSERT_EQ(st.st_size, BIG_SIZE);
	ASSERT_EQ(fcntl(rfd, F_GET_SEALS) & ALL_SEALS, ALL_SEALS);
	/* read-only for the receiver too: the seals forbid writable maps */
	ASSERT(mmap(NULL, KDBUS_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
		    rfd, 0) == MAP_FAILED);

	t0 = kdbus_now_ns();
	p = mmap(NULL, BIG_SIZE, PROT_READ, MAP_SHARED | MAP_POPULATE, rfd, 0);
	ASSERT(p != MAP_FAILED);
	RUN(check_big(p, want));
	DIAG("receiver: mapped and checked in %.2f s", elapsed(t0));
	/* no copy anywhere: still one 1 GiB of Shmem, not two */
	ASSERT(kdbus_meminfo_kb("Shmem") - base < size_kb + size_kb / 2);
	munmap((void *)p, BIG_SIZE);
	close(rfd);

	kdbus_conn_free(a);
	kdbus_conn_free(b);
	after = wait_shmem_below(base + (16L << 10));
	DIAG("Shmem %ld kB before, %ld kB with the memfd, %ld kB after",
	     base, with, after);
	ASSERT(after < base + (16L << 10));
	return TEST_OK;
}
