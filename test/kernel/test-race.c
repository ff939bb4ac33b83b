// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Race stress: teardown raced against traffic for a bounded time
 * (KDBUS_TEST_RACE_MS per test, default 1500 ms; the debug kernel's
 * scripts/check-debug.sh may raise it). close/BYEBYE vs SEND and RECV, sync
 * calls vs close, name hand-over vs close, bus teardown vs traffic, and a
 * soak (many connections, random disconnects) after which Shmem is back at
 * its baseline. Results must be one of the documented errors; the kernel
 * must report nothing (the VM harness judges its log).
 */
#include <fcntl.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

static unsigned int race_ms(void)
{
	const char *s = getenv("KDBUS_TEST_RACE_MS");
	long v = s ? strtol(s, NULL, 10) : 0;

	return v > 0 ? (unsigned int)v : 1500;
}

/* errors a racing peer may legitimately see */
static int benign(int r)
{
	switch (-r) {
	case 0: case ENXIO: case ECONNRESET: case ESHUTDOWN: case EPIPE:
	case ENOBUFS: case EXFULL: case EAGAIN: case ETIMEDOUT:
	case ECANCELED: case ENOMEM: case EADDRNOTAVAIL: case ENOMSG:
	case EINTR: case ENOENT: case EBADSLT: case ECOMM:
		return 1;
	}
	return 0;
}

/* BYEBYE, draining the queue while it is refused with EBUSY */
static int byebye_drain(struct kdbus_conn *c)
{
	int r;

	while ((r = kdbus_byebye(c->fd)) == -EBUSY) {
		struct kdbus_msg *m;
		uint64_t off;

		if (kdbus_recv_msg(c, 0, 0, &m, &off) == 0)
			kdbus_free(c, off);
	}
	return r;
}

/* child: SEND to dst until time is up; exit 1 on an unexpected error */
static pid_t spawn_sender(const char *path, uint64_t dst, unsigned int ms,
			  int sync)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	{
		struct kdbus_conn *c;
		uint64_t end = kdbus_now_ns() + (uint64_t)ms * 1000000;
		uint64_t cookie = 1;
		int r;

		if (kdbus_hello(path, 0, 0, KDBUS_PAGE * 16, &c) < 0)
			_exit(0);	/* the bus may already be gone */
		while (kdbus_now_ns() < end) {
			if (sync) {
				struct kdbus_msg *reply;
				uint64_t off;

				r = kdbus_call_sync(c, dst, cookie++,
						    kdbus_now_ns() + 200000000ULL,
						    "x", 1, &reply, &off);
				if (!r)
					kdbus_free(c, off);
			} else {
				r = kdbus_send(c, dst, cookie++, 0, 0, 0,
					       "payload", 7);
			}
			if (!benign(r)) {
				kdbus_diag("sender: unexpected %d", r);
				_exit(1);
			}
			if (r == -ECONNRESET || r == -ESHUTDOWN)
				break;
		}
		kdbus_conn_free(c);
		_exit(0);
	}
}

/* close/BYEBYE of a receiver while senders keep sending to it */
static int close_vs_send(struct kdbus_test_env *env, int byebye, int sync)
{
	uint64_t end = kdbus_now_ns() + (uint64_t)race_ms() * 1000000;
	unsigned int rounds = 0;

	while (kdbus_now_ns() < end || rounds < 3) {
		struct kdbus_conn *b;
		pid_t s1, s2;

		ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 8, &b));
		s1 = spawn_sender(env->bus_path, b->id, 150, sync);
		s2 = spawn_sender(env->bus_path, b->id, 150, sync);
		ASSERT(s1 > 0 && s2 > 0);
		kdbus_msleep(rounds % 40);
		/* receive a little, then go away mid-traffic */
		for (int i = 0; i < 8; i++) {
			struct kdbus_msg *m;
			uint64_t off;

			if (kdbus_recv_msg(b, 0, 0, &m, &off) == 0)
				kdbus_free(b, off);
		}
		if (byebye)
			ASSERT(benign(byebye_drain(b)));
		kdbus_conn_free(b);
		ASSERT_EQ(kdbus_wait_child(s1), 0);
		ASSERT_EQ(kdbus_wait_child(s2), 0);
		rounds++;
	}
	kdbus_diag("%u rounds", rounds);
	return TEST_OK;
}

KDBUS_TEST_FULL(race, close_vs_send, 0, 60)
{
	return close_vs_send(env, 0, 0);
}

KDBUS_TEST_FULL(race, byebye_vs_send, 0, 60)
{
	return close_vs_send(env, 1, 0);
}

/* synchronous calls pending on a peer that disappears: no hang, no leak */
KDBUS_TEST_FULL(race, close_vs_sync_call, 0, 60)
{
	return close_vs_send(env, 0, 1);
}

/* RECV in one process while the connection's fd is BYEBYE'd in another */
KDBUS_TEST_FULL(race, byebye_vs_recv, 0, 60)
{
	uint64_t end = kdbus_now_ns() + (uint64_t)race_ms() * 1000000;
	unsigned int rounds = 0;
	struct kdbus_conn *a;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 8, &a));
	while (kdbus_now_ns() < end || rounds < 3) {
		struct kdbus_conn *b;
		pid_t pid;

		ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 8, &b));
		for (int i = 0; i < 16; i++)
			ASSERT(benign(kdbus_send(a, b->id, i + 1, 0, 0, 0,
						 "abc", 3)));
		pid = fork();
		ASSERT(pid >= 0);
		if (pid == 0) {
			for (int i = 0; i < 64; i++) {
				struct kdbus_msg *m;
				uint64_t off;
				int r = kdbus_recv_msg(b, 0, 0, &m, &off);

				if (!r)
					r = kdbus_free(b, off);
				if (!benign(r)) {
					kdbus_diag("recv: unexpected %d", r);
					_exit(1);
				}
			}
			_exit(0);
		}
		kdbus_msleep(rounds % 3);
		ASSERT(benign(byebye_drain(b)));
		ASSERT_EQ(kdbus_wait_child(pid), 0);
		kdbus_conn_free(b);
		rounds++;
	}
	kdbus_conn_free(a);
	kdbus_diag("%u rounds", rounds);
	return TEST_OK;
}

/* a queued name hand-over raced against the owner's close */
KDBUS_TEST_FULL(race, name_handover_vs_close, 0, 60)
{
	uint64_t end = kdbus_now_ns() + (uint64_t)race_ms() * 1000000;
	unsigned int rounds = 0;
	char name[64];

	snprintf(name, sizeof(name), "org.kdbus.race.h%d", (int)getpid());
	while (kdbus_now_ns() < end || rounds < 3) {
		struct kdbus_conn *c[3];
		pid_t pid;

		for (int i = 0; i < 3; i++) {
			ASSERT_OK(kdbus_hello(env->bus_path, 0, 0,
					      KDBUS_PAGE * 4, &c[i]));
			ASSERT(benign(kn_acquire(c[i], name,
						 KDBUS_NAME_QUEUE |
						 KDBUS_NAME_ALLOW_REPLACEMENT,
						 NULL)));
		}
		pid = spawn_sender(env->bus_path, c[0]->id, 50, 0);
		ASSERT(pid > 0);
		if (rounds & 1)
			ASSERT(benign(kn_release(c[0], name)));
		kdbus_conn_free(c[0]);
		kdbus_conn_free(c[2]);
		ASSERT(benign(kn_acquire(c[1], name, 0, NULL)));
		kdbus_conn_free(c[1]);
		ASSERT_EQ(kdbus_wait_child(pid), 0);
		rounds++;
	}
	kdbus_diag("%u rounds", rounds);
	return TEST_OK;
}

/* the bus owner goes away while connections send and receive */
KDBUS_TEST_FULL(race, bus_teardown_vs_traffic, 0, 60)
{
	struct kdbus_conn *a;
	pid_t s1, s2;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 8, &a));
	s1 = spawn_sender(env->bus_path, a->id, 2000, 0);
	s2 = spawn_sender(env->bus_path, a->id, 2000, 1);
	ASSERT(s1 > 0 && s2 > 0);
	kdbus_msleep(race_ms() / 10 + 50);
	close(env->bus_owner_fd);
	env->bus_owner_fd = -1;
	ASSERT_EQ(kdbus_wait_child(s1), 0);
	ASSERT_EQ(kdbus_wait_child(s2), 0);
	ASSERT_ERR(kdbus_send(a, 1, 1, 0, 0, 0, "x", 1), ECONNRESET);
	kdbus_conn_free(a);
	return TEST_OK;
}

/*
 * Soak: many connections, traffic, random disconnects; afterwards Shmem
 * (the pools) is back near its baseline.
 */
KDBUS_TEST_FULL(race, soak_shmem_baseline, 0, 120)
{
	enum { N = 512 };
	struct kdbus_conn **c;
	long before, after;
	unsigned int seed = 1;

	ASSERT_OK(kdbus_raise_nofile(N + 64));
	before = kdbus_meminfo_kb("Shmem");
	ASSERT(before >= 0);
	c = calloc(N, sizeof(*c));
	ASSERT(c);
	for (int i = 0; i < N; i++)
		ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4,
				      &c[i]));
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < N; i++) {
			int j = rand_r(&seed) % N;

			if (c[i] && c[j])
				ASSERT(benign(kdbus_send(c[i], c[j]->id, i + 1,
							 0, 0, 0, "soak", 4)));
		}
		/* a random tenth disconnects with messages queued */
		for (int i = 0; i < N / 10; i++) {
			int j = rand_r(&seed) % N;

			if (c[j]) {
				kdbus_conn_free(c[j]);
				c[j] = NULL;
			}
		}
	}
	for (int i = 0; i < N; i++)
		if (c[i])
			kdbus_conn_free(c[i]);
	free(c);
	kdbus_msleep(200);
	after = kdbus_meminfo_kb("Shmem");
	kdbus_diag("Shmem %ld kB before, %ld kB after", before, after);
	/* pools are 16 KiB each: 512 leaked pools would be 8 MiB */
	ASSERT(after - before < 1024);
	return TEST_OK;
}
