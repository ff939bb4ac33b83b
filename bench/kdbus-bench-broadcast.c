// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kdbus-bench-broadcast: the cost of one broadcast signal as the number of
 * subscribers whose match does not accept it grows (0, 10, 100, 1,000,
 * 10,000). Every subscriber holds one BLOOM_MASK match that the signal's
 * filter fails; the kernel's match index rejects each with its folded
 * summary (no lock, no allocation, no copy; Documentation/performance.md). The sender has no match and nobody receives the
 * signal; the per-subscriber cost is (t(N) - t(0)) / N.
 *
 * Subscribers are opened in batches of 1,000 under different uids (the
 * per-user connection limit is 1,024), so it must run as root; it runs in
 * the test VM (bench/run.sh) like kdbus-bench.
 *
 *   kdbus-bench-broadcast [--root /sys/fs/kdbus] [--sends N]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <linux/kdbus.h>

#include "bus-make.h"

typedef uint64_t u64;

#define BLOOM_SIZE	64
#define POOL_SIZE	4096
#define BATCH		1000
#define MAX_SUBS	10000
#define ITEM_HDR	16
#define ALIGN8(x)	(((x) + 7) & ~7ULL)

static void die(const char *what, int err)
{
	fprintf(stderr, "kdbus-bench-broadcast: %s: %s\n", what, strerror(err));
	exit(2);
}

static u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}

/* HELLO without mapping the pool; the HELLO slice is freed */
static int hello(const char *bus)
{
	struct kdbus_cmd_hello h = {
		.size = sizeof(h),
		.pool_size = POOL_SIZE,
	};
	struct kdbus_cmd_free f = { .size = sizeof(f) };
	int fd = open(bus, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		die("open bus", errno);
	if (ioctl(fd, KDBUS_CMD_HELLO, &h))
		die("HELLO", errno);
	f.offset = h.offset;
	if (ioctl(fd, KDBUS_CMD_FREE, &f))
		die("FREE", errno);
	return fd;
}

/* the most rules one match may hold (kernel/limits.h) */
#define MAX_RULES	16

/*
 * One match of @rules BLOOM_MASK rules that the benchmark's signal never
 * satisfies: every rule but the last passes (an empty mask), so a
 * receiver's walk evaluates all of them before rejecting - the worst
 * case an attacker can build.
 */
static void add_match(int fd, unsigned int rules)
{
	u64 buf[(32 + MAX_RULES * (ITEM_HDR + BLOOM_SIZE)) / 8] = { 0 };
	struct kdbus_cmd_match *m = (struct kdbus_cmd_match *)buf;
	struct kdbus_item *it = m->items;
	unsigned int i;

	m->size = 32 + rules * (ITEM_HDR + BLOOM_SIZE);
	m->cookie = 1;
	for (i = 0; i < rules; i++) {
		it->size = ITEM_HDR + BLOOM_SIZE;
		it->type = KDBUS_ITEM_BLOOM_MASK;
		/* last rule: bit 0 of the mask, never set in the filter */
		if (i == rules - 1)
			it->data64[0] = 1;
		it = (struct kdbus_item *)((char *)it + it->size);
	}
	if (ioctl(fd, KDBUS_CMD_MATCH_ADD, m))
		die("MATCH_ADD", errno);
}

static u64 msg_buf[(64 + ITEM_HDR + 8 + BLOOM_SIZE) / 8];

static void send_broadcast(int fd, u64 cookie)
{
	struct kdbus_msg *msg = (struct kdbus_msg *)msg_buf;
	struct kdbus_cmd_send cmd = {
		.size = sizeof(cmd),
		.msg_address = (uintptr_t)msg,
	};

	msg->size = sizeof(msg_buf);
	msg->flags = KDBUS_MSG_SIGNAL;
	msg->dst_id = KDBUS_DST_ID_BROADCAST;
	msg->payload_type = KDBUS_PAYLOAD_DBUS;
	msg->cookie = cookie;
	msg->items[0].size = ITEM_HDR + 8 + BLOOM_SIZE;
	msg->items[0].type = KDBUS_ITEM_BLOOM_FILTER;
	memset(msg->items[0].bloom_filter.data, 0xfe, BLOOM_SIZE);
	if (ioctl(fd, KDBUS_CMD_SEND, &cmd))
		die("SEND", errno);
}

/* median ns of one broadcast over `sends` sends, in 10 rounds */
static double measure(int fd, unsigned int sends)
{
	double r[10], t;
	unsigned int i, j, k;
	static u64 cookie;

	for (i = 0; i < 10; i++) {
		u64 t0 = now_ns();

		for (j = 0; j < sends; j++)
			send_broadcast(fd, ++cookie);
		r[i] = (double)(now_ns() - t0) / sends;
	}
	for (i = 1; i < 10; i++)
		for (k = i; k > 0 && r[k - 1] > r[k]; k--) {
			t = r[k];
			r[k] = r[k - 1];
			r[k - 1] = t;
		}
	return (r[4] + r[5]) / 2;
}

int main(int argc, char **argv)
{
	static const unsigned int steps[] = { 0, 10, 100, 1000, MAX_SUBS };
	static int subs[MAX_SUBS];
	struct rlimit rl = { MAX_SUBS + 256, MAX_SUBS + 256 };
	const char *root = "/sys/fs/kdbus";
	unsigned int sends = 200, n = 0, s;
	char bus[256];
	double base = 0;
	int owner, sender, i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--root") && i + 1 < argc)
			root = argv[++i];
		else if (!strcmp(argv[i], "--sends") && i + 1 < argc)
			sends = (unsigned int)strtoul(argv[++i], NULL, 0);
		else {
			fprintf(stderr, "usage: %s [--root DIR] [--sends N]\n",
				argv[0]);
			return 2;
		}
	}
	if (setrlimit(RLIMIT_NOFILE, &rl))
		die("RLIMIT_NOFILE", errno);

	owner = bench_bus_make(root, "bcast", BLOOM_SIZE, bus, sizeof(bus));
	if (owner < 0)
		die("BUS_MAKE", -owner);
	sender = hello(bus);

	/* subscribers open "bus" relative to the bus directory: no search
	 * permission on the path above it is needed under another uid */
	*strrchr(bus, '/') = '\0';
	if (chdir(bus))
		die("chdir", errno);

	printf("kdbus broadcast cost vs. non-matching subscribers (bloom %d B, one BLOOM_MASK match each; %u sends x 10 rounds, median)\n",
	       BLOOM_SIZE, sends);
	printf("%12s %14s %22s\n", "subscribers", "ns/broadcast",
	       "ns/extra subscriber");
	for (s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
		double t;

		while (n < steps[s]) {
			uid_t uid = 20000 + n / BATCH;

			/* the opener's uid is accounted: 1,000 per uid */
			if (setresuid(uid, uid, 0))
				die("setresuid", errno);
			subs[n] = hello("bus");
			if (setresuid(0, 0, 0))
				die("setresuid back", errno);
			add_match(subs[n], 1);
			n++;
		}
		t = measure(sender, sends);
		if (n == 0) {
			base = t;
			printf("%12u %14.0f %22s\n", n, t, "-");
		} else {
			printf("%12u %14.0f %22.1f\n", n, t, (t - base) / n);
		}
		fflush(stdout);
	}

	for (i = 0; i < (int)n; i++)
		close(subs[i]);

	/*
	 * The same with the largest rule sets: 1,000 subscribers whose
	 * match holds the maximum number of rules, against one rule each
	 * (issue 12: per-receiver cost bounded by a constant).
	 */
	printf("\nkdbus broadcast cost with large rule sets (1,000 non-matching subscribers, one match each, %u sends x 10 rounds, median)\n",
	       sends);
	printf("%12s %14s %22s\n", "rules/match", "ns/broadcast",
	       "ns/subscriber");
	{
		static const unsigned int rules[] = { 1, MAX_RULES };
		double t1 = 0;

		for (s = 0; s < 2; s++) {
			double t;

			for (i = 0; i < 1000; i++) {
				uid_t uid = 30000 + i % 4;

				if (setresuid(uid, uid, 0))
					die("setresuid", errno);
				subs[i] = hello("bus");
				if (setresuid(0, 0, 0))
					die("setresuid back", errno);
				add_match(subs[i], rules[s]);
			}
			t = measure(sender, sends);
			if (s == 0)
				t1 = t;
			printf("%12u %14.0f %22.1f%s\n", rules[s], t,
			       (t - base) / 1000,
			       s == 0 ? "" : "");
			if (s == 1 && t1 > 0)
				printf("(maximum rules vs one rule: %.2fx per broadcast)\n",
				       t / t1);
			for (i = 0; i < 1000; i++)
				close(subs[i]);
			fflush(stdout);
		}
	}
	close(sender);
	close(owner);
	return 0;
}
