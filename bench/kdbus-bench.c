// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kdbus-bench: ping-pong of method calls over kdbus, compared with the same
 * ping-pong over an AF_UNIX socketpair and with memcpy, in the same machine.
 *
 * For every payload size the client makes N calls and waits for each reply:
 *
 *   kdbus async  SEND (EXPECT_REPLY, one PAYLOAD_VEC), poll(), RECV, FREE
 *   kdbus sync   SEND with KDBUS_SEND_SYNC_REPLY, reply in cmd_send.reply, FREE
 *   UDS          write() the payload, read() the reply (SOCK_STREAM socketpair)
 *   memcpy x2    two copies of the payload: the floor of one copy each way
 *
 * The service (a second process) receives the call, reads the payload in
 * place (from its pool for kdbus, from its read buffer for UDS), frees the
 * slice and answers with a payload of the same size. Both sides touch every
 * cache line of what they receive and check a sequence number in its first
 * eight bytes, so the kernel cannot win by not delivering the data.
 *
 * Each cell is calibrated to run for about --time seconds; the round-trip
 * time reported is the median of per-call samples. This is a benchmark, not
 * a test: it never fails on speed, only on errors.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include <linux/kdbus.h>

#include "bus-make.h"

/* the uapi type, so that %llu fits every 64-bit value in this file */
typedef __u64 u64;

#define ALIGN8(x)		(((x) + 7ULL) & ~7ULL)
#define ITEM_HEADER_SIZE	16ULL
#define ITEM_SIZE(n)		ALIGN8(ITEM_HEADER_SIZE + (n))

#define KiB			1024ULL
#define MiB			(1024ULL * 1024ULL)

/* payload_type of our calls: any non-zero value is accepted */
#define BENCH_PAYLOAD_TYPE	0x68636e6542737562ULL	/* "busBench" */
/* a message without EXPECT_REPLY tells the kdbus service to exit */
#define BENCH_QUIT_COOKIE	(~0ULL)
/* give up on a peer that does not answer within this many ms */
#define BENCH_IO_TIMEOUT_MS	30000
/* reply window of each call */
#define BENCH_REPLY_TIMEOUT_NS	(30ULL * 1000000000ULL)

#define MAX_SIZES		16
#define MAX_PAYLOAD		(2 * MiB)	/* KDBUS_MSG_MAX_PAYLOAD_VEC_SIZE */

struct options {
	double target_s;		/* seconds per cell */
	unsigned int rounds;		/* interleaved rounds per cell */
	u64 fixed_iters;		/* 0: calibrate */
	u64 sizes[MAX_SIZES];
	unsigned int n_sizes;
	u64 pool_size;
	u64 attach_recv;
	const char *root;		/* kdbusfs mount */
	const char *env;		/* what the numbers were measured under */
	enum { PIN_SAME, PIN_SPLIT, PIN_NONE } pin;
	int cpu;			/* client CPU (service: same or next) */
	bool json;
	bool skip_kdbus;
	const char *only;		/* cells to run (comma list), or NULL */
	bool verbose;
};

static struct options opt = {
	.target_s = 1.0,
	.rounds = 5,
	.pool_size = 16 * MiB,
	.root = "/sys/fs/kdbus",
};

static volatile u64 sink;	/* keeps the touch loops alive */

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	/* one write(), so that client and service lines do not interleave */
	fflush(stdout);
	n = snprintf(buf, sizeof(buf), "kdbus-bench[%d]: ", (int)getpid());
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	strcat(buf, "\n");
	if (write(STDERR_FILENO, buf, strlen(buf)) < 0)
		exit(1);
	exit(1);
}

static u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}

/* Read every cache line (and the last byte) of a received payload. */
static void touch(const uint8_t *p, u64 n)
{
	u64 s = 0, i;

	for (i = 0; i < n; i += 64)
		s += p[i];
	if (n)
		s += p[n - 1];
	sink += s;
}

static u64 get_seq(const uint8_t *p, u64 n)
{
	u64 v = 0;

	memcpy(&v, p, n < sizeof(v) ? n : sizeof(v));
	return v;
}

static void put_seq(uint8_t *p, u64 n, u64 seq)
{
	memcpy(p, &seq, n < sizeof(seq) ? n : sizeof(seq));
}

/* the sequence number as it survives a payload of n bytes */
static u64 seq_mask(u64 seq, u64 n)
{
	return n >= 8 ? seq : seq & ((1ULL << (8 * n)) - 1);
}

static void *xmalloc_payload(u64 n, int fill)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, n ? n : 8))
		die("out of memory for a %llu byte buffer", n);
	memset(p, fill, n ? n : 8);
	return p;
}

static void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("cannot pin to CPU %d: %m", cpu);
}

/*
 * Under TCG a wake-up on another, idle vCPU costs milliseconds of host
 * scheduling noise; by default client and service share one CPU, so a
 * round trip measures the IPC path and two context switches.
 */
static void pin_client(void)
{
	if (opt.pin != PIN_NONE)
		pin_to(opt.cpu);
}

static void become_service(void)
{
	/* a service must not outlive a client that crashed */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (opt.pin == PIN_SPLIT)
		pin_to(opt.cpu + 1);
}

/* ---------------------------------------------------------------------------
 * kdbus
 */

struct kconn {
	int fd;
	u64 id;
	const uint8_t *pool;
	u64 pool_size;
};

static int kdbus_free(const struct kconn *c, u64 offset)
{
	struct kdbus_cmd_free cmd = {
		.size = sizeof(cmd),
		.offset = offset,
	};

	return ioctl(c->fd, KDBUS_CMD_FREE, &cmd) ? -errno : 0;
}

/* open the bus endpoint, HELLO, map the pool, release the HELLO slice */
static int kdbus_hello(const char *bus, u64 pool_size,
		       u64 attach_recv, struct kconn *c)
{
	struct kdbus_cmd_hello hello = {
		.size = sizeof(hello),
		.attach_flags_send = _KDBUS_ATTACH_ALL,
		.attach_flags_recv = attach_recv,
		.pool_size = pool_size,
	};
	void *map;
	int err;

	c->fd = open(bus, O_RDWR | O_CLOEXEC);
	if (c->fd < 0)
		return -errno;
	if (ioctl(c->fd, KDBUS_CMD_HELLO, &hello)) {
		err = -errno;
		goto err_close;
	}
	map = mmap(NULL, pool_size, PROT_READ, MAP_SHARED, c->fd, 0);
	if (map == MAP_FAILED) {
		err = -errno;
		goto err_close;
	}
	c->id = hello.id;
	c->pool = map;
	c->pool_size = pool_size;
	err = kdbus_free(c, hello.offset);
	if (err)
		goto err_unmap;
	return 0;

err_unmap:
	munmap(map, pool_size);
err_close:
	close(c->fd);
	c->fd = -1;
	return err;
}

struct kmsg_buf {
	/*
	 * header + one PAYLOAD_VEC item (32 bytes), 8-byte aligned; room for
	 * a whole struct kdbus_item (80) so the compiler sees no overflow
	 */
	u64 words[(sizeof(struct kdbus_msg) + sizeof(struct kdbus_item)) / 8];
};

static struct kdbus_msg *kmsg_build(struct kmsg_buf *b, u64 dst,
				    u64 flags, u64 cookie,
				    u64 timeout_or_reply,
				    const void *data, u64 len)
{
	struct kdbus_msg *m = (struct kdbus_msg *)b->words;
	struct kdbus_item *item = m->items;

	memset(b, 0, sizeof(*b));
	m->size = sizeof(*m);
	m->flags = flags;
	m->dst_id = dst;
	m->payload_type = BENCH_PAYLOAD_TYPE;
	m->cookie = cookie;
	m->timeout_ns = timeout_or_reply;	/* union with cookie_reply */
	if (len) {
		item->size = ITEM_HEADER_SIZE + sizeof(struct kdbus_vec);
		item->type = KDBUS_ITEM_PAYLOAD_VEC;
		item->vec.address = (uintptr_t)data;
		item->vec.size = len;
		m->size += ALIGN8(item->size);
	}
	return m;
}

static int kdbus_send(const struct kconn *c, struct kdbus_msg *m,
		      u64 send_flags, struct kdbus_msg_info *reply)
{
	struct kdbus_cmd_send cmd = {
		.size = sizeof(cmd),
		.flags = send_flags,
		.msg_address = (uintptr_t)m,
	};

	if (ioctl(c->fd, KDBUS_CMD_SEND, &cmd))
		return -errno;
	if (reply)
		*reply = cmd.reply;
	return 0;
}

static int kdbus_recv(const struct kconn *c, struct kdbus_msg_info *info)
{
	struct kdbus_cmd_recv cmd = {
		.size = sizeof(cmd),
	};

	if (ioctl(c->fd, KDBUS_CMD_RECV, &cmd))
		return -errno;
	*info = cmd.msg;
	return 0;
}

static int kdbus_wait_readable(const struct kconn *c, int timeout_ms)
{
	struct pollfd p = { .fd = c->fd, .events = POLLIN };
	int r;

	do {
		r = poll(&p, 1, timeout_ms);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (r == 0)
		return -ETIMEDOUT;
	if (p.revents & (POLLERR | POLLHUP))
		return -ECONNRESET;
	return 0;
}

/*
 * Validate a message slice handed to us and find its payload. Returns the
 * message, or NULL if the slice is malformed (bench bug or kernel bug).
 */
static const struct kdbus_msg *kmsg_parse(const struct kconn *c,
					  const struct kdbus_msg_info *info,
					  const uint8_t **data, u64 *len)
{
	const struct kdbus_msg *m;
	const uint8_t *p, *end;

	*data = NULL;
	*len = 0;
	if (info->offset >= c->pool_size || info->msg_size < sizeof(*m) ||
	    info->msg_size > c->pool_size - info->offset || info->offset % 8)
		return NULL;
	m = (const struct kdbus_msg *)(c->pool + info->offset);
	if (m->size < sizeof(*m) || m->size > info->msg_size)
		return NULL;
	p = (const uint8_t *)m->items;
	end = (const uint8_t *)m + m->size;
	while (p < end) {
		const struct kdbus_item *item = (const void *)p;

		if ((u64)(end - p) < ITEM_HEADER_SIZE ||
		    item->size < ITEM_HEADER_SIZE ||
		    item->size > (u64)(end - p))
			return NULL;
		if (item->type == KDBUS_ITEM_PAYLOAD_OFF && !*data) {
			if (item->vec.offset == ~0ULL ||
			    item->vec.offset > info->msg_size ||
			    item->vec.size > info->msg_size - item->vec.offset)
				return NULL;
			*data = (const uint8_t *)m + item->vec.offset;
			*len = item->vec.size;
		}
		p += ALIGN8(item->size);
	}
	return m;
}

/*
 * The kdbus service: answer every call with a reply of the same payload size,
 * until a message without EXPECT_REPLY arrives. Not inlined, so that
 * count-instructions.sh finds it in callgrind's output.
 */
static __attribute__((noinline)) void kdbus_service(const char *bus, int ready_fd)
{
	uint8_t *out = xmalloc_payload(MAX_PAYLOAD, 0xa5);
	struct kconn c;
	int err;

	become_service();
	err = kdbus_hello(bus, opt.pool_size, opt.attach_recv, &c);
	if (err)
		die("service: HELLO on %s: %s", bus, strerror(-err));
	if (write(ready_fd, &c.id, sizeof(c.id)) != sizeof(c.id))
		die("service: cannot report its id");
	close(ready_fd);

	for (;;) {
		struct kdbus_msg_info info;
		const struct kdbus_msg *m;
		struct kmsg_buf rb;
		const uint8_t *data;
		u64 len, src, cookie, flags;
		bool call, quit;

		/*
		 * Wait first, then receive, as a service blocked in poll()
		 * does: one RECV per message, none that finds the queue
		 * empty. No timeout, as the UDS service's blocking read():
		 * a service whose client died is killed (PR_SET_PDEATHSIG).
		 */
		err = kdbus_wait_readable(&c, -1);
		if (err)
			die("service: poll: %s", strerror(-err));
		err = kdbus_recv(&c, &info);
		if (err == -EAGAIN)
			continue;
		if (err)
			die("service: RECV: %s", strerror(-err));
		m = kmsg_parse(&c, &info, &data, &len);
		if (!m)
			die("service: malformed message at offset %llu size %llu",
			    info.offset, info.msg_size);
		src = m->src_id;
		cookie = m->cookie;
		flags = m->flags;
		if (len) {
			touch(data, len);
			if (get_seq(data, len) != seq_mask(cookie, len))
				die("service: payload of call %llu carries sequence %llu", cookie,
				    get_seq(data, len));
		}
		/* a kernel notification is neither answered nor a quit */
		call = src != KDBUS_SRC_ID_KERNEL &&
		       (flags & KDBUS_MSG_EXPECT_REPLY);
		quit = src != KDBUS_SRC_ID_KERNEL && !call &&
		       cookie == BENCH_QUIT_COOKIE;
		if (call) {
			if (len > MAX_PAYLOAD)
				die("service: call %llu too large", cookie);
			put_seq(out, len, cookie);
			err = kdbus_send(&c, kmsg_build(&rb, src, 0, cookie,
							cookie, out, len),
					 0, NULL);
			if (err)
				die("service: reply to %llu: %s", cookie,
				    strerror(-err));
		}
		/*
		 * The call's slice is freed once the reply is on its way, as
		 * a service that drops a message after its handler ran does:
		 * the FREE overlaps the caller's wake-up instead of delaying
		 * the reply.
		 */
		err = kdbus_free(&c, info.offset);
		if (err)
			die("service: FREE: %s", strerror(-err));
		if (quit)
			break;
	}
	exit(0);
}

struct kdbus_ctx {
	struct kconn client;
	u64 service_id;
	pid_t service_pid;
	int bus_fd;
	uint8_t *out;
	u64 size;
};

/* check a reply slice, touch its payload and free it */
static int kdbus_consume_reply(struct kdbus_ctx *k,
			       const struct kdbus_msg_info *info, u64 seq)
{
	const struct kdbus_msg *m;
	const uint8_t *data;
	u64 len;
	int err;

	m = kmsg_parse(&k->client, info, &data, &len);
	if (!m)
		die("client: malformed reply at offset %llu size %llu",
		    info->offset, info->msg_size);
	if (m->src_id == KDBUS_SRC_ID_KERNEL) {
		u64 cr = m->cookie_reply;

		kdbus_free(&k->client, info->offset);
		if (cr == seq)
			die("client: call %llu failed: kernel notification instead of a reply",
			    seq);
		return 1;	/* unrelated notification: keep waiting */
	}
	if (m->src_id != k->service_id || m->cookie_reply != seq)
		die("client: reply from %llu to %llu, expected from %llu to %llu",
		    (u64)m->src_id, (u64)m->cookie_reply,
		    k->service_id, seq);
	if (len != k->size)
		die("client: reply of %llu bytes, expected %llu",
		    len, k->size);
	touch(data, len);
	if (get_seq(data, len) != seq_mask(seq, len))
		die("client: reply payload to %llu carries %llu",
		    seq, get_seq(data, len));
	err = kdbus_free(&k->client, info->offset);
	if (err)
		die("client: FREE: %s", strerror(-err));
	return 0;
}

static int kdbus_call_async(void *ctx, u64 seq)
{
	struct kdbus_ctx *k = ctx;
	struct kdbus_msg_info info;
	struct kmsg_buf b;
	int err;

	put_seq(k->out, k->size, seq);
	err = kdbus_send(&k->client,
			 kmsg_build(&b, k->service_id, KDBUS_MSG_EXPECT_REPLY,
				    seq, now_ns() + BENCH_REPLY_TIMEOUT_NS,
				    k->out, k->size), 0, NULL);
	if (err)
		die("client: SEND (%llu bytes): %s", k->size,
		    strerror(-err));
	for (;;) {
		err = kdbus_wait_readable(&k->client, BENCH_IO_TIMEOUT_MS);
		if (err)
			die("client: poll for reply: %s", strerror(-err));
		err = kdbus_recv(&k->client, &info);
		if (err == -EAGAIN)
			continue;
		if (err)
			die("client: RECV: %s", strerror(-err));
		if (!kdbus_consume_reply(k, &info, seq))
			return 0;
	}
}

static int kdbus_call_sync(void *ctx, u64 seq)
{
	struct kdbus_ctx *k = ctx;
	struct kdbus_msg_info info;
	struct kmsg_buf b;
	int err;

	put_seq(k->out, k->size, seq);
	do {
		/* an interrupted call is resumed by re-issuing it
		 * (kdbus.message(7)) */
		err = kdbus_send(&k->client,
				 kmsg_build(&b, k->service_id,
					    KDBUS_MSG_EXPECT_REPLY, seq,
					    now_ns() + BENCH_REPLY_TIMEOUT_NS,
					    k->out, k->size),
				 KDBUS_SEND_SYNC_REPLY, &info);
	} while (err == -EINTR);
	if (err)
		die("client: synchronous SEND (%llu bytes): %s",
		    k->size, strerror(-err));
	if (kdbus_consume_reply(k, &info, seq))
		die("client: synchronous call returned a notification");
	return 0;
}

static int kdbus_setup(struct kdbus_ctx *k)
{
	char bus[PATH_MAX];
	int pipefd[2], err;
	ssize_t n;

	memset(k, 0, sizeof(*k));
	k->bus_fd = bench_bus_make(opt.root, "bench", 64, bus, sizeof(bus));
	if (k->bus_fd < 0)
		return k->bus_fd;
	if (pipe2(pipefd, O_CLOEXEC))
		die("pipe: %m");
	fflush(NULL);
	k->service_pid = fork();
	if (k->service_pid < 0)
		die("fork: %m");
	if (k->service_pid == 0) {
		close(pipefd[0]);
		close(k->bus_fd);
		kdbus_service(bus, pipefd[1]);
	}
	close(pipefd[1]);
	n = read(pipefd[0], &k->service_id, sizeof(k->service_id));
	close(pipefd[0]);
	if (n != sizeof(k->service_id))
		die("the kdbus service did not start");
	err = kdbus_hello(bus, opt.pool_size, opt.attach_recv, &k->client);
	if (err)
		die("client: HELLO on %s: %s", bus, strerror(-err));
	k->out = xmalloc_payload(MAX_PAYLOAD, 0x5a);
	return 0;
}

static void kdbus_teardown(struct kdbus_ctx *k)
{
	struct kmsg_buf b;
	int status;

	if (kdbus_send(&k->client, kmsg_build(&b, k->service_id, 0,
					      BENCH_QUIT_COOKIE, 0, NULL, 0),
		       0, NULL))
		kill(k->service_pid, SIGKILL);
	if (waitpid(k->service_pid, &status, 0) < 0 ||
	    (!WIFEXITED(status) || WEXITSTATUS(status)))
		fprintf(stderr, "kdbus-bench: the kdbus service failed\n");
	munmap((void *)k->client.pool, k->client.pool_size);
	close(k->client.fd);
	close(k->bus_fd);
	free(k->out);
}

/* ---------------------------------------------------------------------------
 * AF_UNIX socketpair
 */

static int read_full(int fd, uint8_t *p, u64 n)
{
	while (n) {
		ssize_t r = read(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EPIPE;
		p += r;
		n -= (u64)r;
	}
	return 0;
}

static int write_full(int fd, const uint8_t *p, u64 n)
{
	while (n) {
		ssize_t r = write(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		p += r;
		n -= (u64)r;
	}
	return 0;
}

struct uds_ctx {
	int fd;
	pid_t service_pid;
	uint8_t *out, *in;
	u64 size;
};

static void uds_service(int fd, u64 size)
{
	uint8_t *in = xmalloc_payload(size, 0), *out = xmalloc_payload(size, 0xa5);
	int err;

	become_service();
	for (;;) {
		u64 seq;

		err = read_full(fd, in, size);
		if (err == -EPIPE)
			break;
		if (err)
			die("uds service: read: %s", strerror(-err));
		touch(in, size);
		seq = get_seq(in, size);
		put_seq(out, size, seq);
		err = write_full(fd, out, size);
		if (err)
			die("uds service: write: %s", strerror(-err));
	}
	exit(0);
}

static void uds_setup(struct uds_ctx *u, u64 size)
{
	int sv[2];

	memset(u, 0, sizeof(*u));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		die("socketpair: %m");
	fflush(NULL);
	u->service_pid = fork();
	if (u->service_pid < 0)
		die("fork: %m");
	if (u->service_pid == 0) {
		close(sv[0]);
		uds_service(sv[1], size);
	}
	close(sv[1]);
	u->fd = sv[0];
	u->size = size;
	u->out = xmalloc_payload(size, 0x5a);
	u->in = xmalloc_payload(size, 0);
}

static void uds_teardown(struct uds_ctx *u)
{
	int status;

	close(u->fd);
	if (waitpid(u->service_pid, &status, 0) < 0 ||
	    (!WIFEXITED(status) || WEXITSTATUS(status)))
		fprintf(stderr, "kdbus-bench: the UDS service failed\n");
	free(u->out);
	free(u->in);
}

static int uds_call(void *ctx, u64 seq)
{
	struct uds_ctx *u = ctx;
	int err;

	put_seq(u->out, u->size, seq);
	err = write_full(u->fd, u->out, u->size);
	if (err)
		die("uds client: write: %s", strerror(-err));
	err = read_full(u->fd, u->in, u->size);
	if (err)
		die("uds client: read: %s", strerror(-err));
	touch(u->in, u->size);
	if (get_seq(u->in, u->size) != seq_mask(seq, u->size))
		die("uds client: reply to %llu carries %llu", seq,
		    get_seq(u->in, u->size));
	return 0;
}

/* ---------------------------------------------------------------------------
 * memcpy floor
 */

struct memcpy_ctx {
	uint8_t *a, *b;
	u64 size;
	u64 batch;		/* copies pairs per sample, to beat the clock */
};

static int memcpy_pairs(void *ctx, u64 seq)
{
	struct memcpy_ctx *mc = ctx;
	u64 i;

	(void)seq;
	for (i = 0; i < mc->batch; i++) {
		memcpy(mc->b, mc->a, mc->size);
		__asm__ volatile("" : : "r"(mc->b) : "memory");
		memcpy(mc->a, mc->b, mc->size);
		__asm__ volatile("" : : "r"(mc->a) : "memory");
	}
	return 0;
}

/* ---------------------------------------------------------------------------
 * measurement
 */

#define MAX_ROUNDS		100

struct result {
	bool valid;
	u64 iters;
	double median_us, mean_us, min_us, p10_us, p90_us;
	/* raw samples, pooled over the rounds */
	double *samples;
	u64 n, per_round;
	/* median of each round alone: the spread between rounds */
	double round_median_us[MAX_ROUNDS];
	unsigned int n_rounds;
};

/* min, median and max of a few values (per-round medians or ratios) */
struct spread {
	double min, median, max;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* sorts @v */
static double median_of(double *v, u64 n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * One round of a cell: warm up, then run @fn for about @budget_s seconds
 * (calibrated in the first round, the same count in later ones). Every call
 * to @fn performs @per_call round trips; samples are per round trip.
 */
static void measure(int (*fn)(void *, u64), void *ctx, u64 per_call,
		    u64 *seq, double budget_s, struct result *r)
{
	u64 i, t0, t1, warm;
	double *grown;

	/* warm up: fault in buffers and pool pages, settle the caches */
	for (warm = 0; warm < 3; warm++)
		fn(ctx, ++*seq);

	if (!r->per_round && opt.fixed_iters) {
		r->per_round = (opt.fixed_iters + opt.rounds - 1) / opt.rounds;
	} else if (!r->per_round) {
		u64 budget = (u64)(budget_s * 0.1 * 1e9), calib = 0;
		double per;

		t0 = now_ns();
		do {
			fn(ctx, ++*seq);
			calib++;
			t1 = now_ns();
		} while (t1 - t0 < budget && calib < 100000);
		per = (double)(t1 - t0) / (double)calib;
		r->per_round = (u64)(budget_s * 0.9 * 1e9 / (per > 1 ? per : 1));
		if (r->per_round < 3)
			r->per_round = 3;
		if (r->per_round > 1000000)
			r->per_round = 1000000;
	}

	grown = realloc(r->samples, (r->n + r->per_round) * sizeof(*grown));
	if (!grown)
		die("out of memory for %llu samples", r->n + r->per_round);
	r->samples = grown;
	for (i = 0; i < r->per_round; i++) {
		t0 = now_ns();
		fn(ctx, ++*seq);
		t1 = now_ns();
		r->samples[r->n++] = (double)(t1 - t0) / 1000.0 /
				     (double)per_call;
	}
	r->iters += r->per_round * per_call;

	if (r->n_rounds < MAX_ROUNDS) {
		double *round = malloc(r->per_round * sizeof(*round));

		if (!round)
			die("out of memory for %llu samples", r->per_round);
		memcpy(round, r->samples + r->n - r->per_round,
		       r->per_round * sizeof(*round));
		r->round_median_us[r->n_rounds++] = median_of(round, r->per_round);
		free(round);
	}
}

static struct spread spread_of(const double *v, unsigned int n)
{
	double tmp[MAX_ROUNDS];
	struct spread sp = { 0, 0, 0 };

	if (!n)
		return sp;
	memcpy(tmp, v, n * sizeof(*v));
	sp.median = median_of(tmp, n);
	sp.min = tmp[0];
	sp.max = tmp[n - 1];
	return sp;
}

/*
 * Spread of the ratio a/b between rounds: round i of @a against round i
 * of @b (interleaved, so both saw the same state of the host).
 */
static struct spread ratio_spread(const struct result *a,
				  const struct result *b)
{
	double v[MAX_ROUNDS];
	unsigned int i, n = a->n_rounds < b->n_rounds ? a->n_rounds : b->n_rounds;

	for (i = 0; i < n; i++)
		v[i] = b->round_median_us[i] > 0 ?
		       a->round_median_us[i] / b->round_median_us[i] : 0;
	return spread_of(v, n);
}

static void summarize(struct result *r)
{
	double sum = 0;
	u64 i, n = r->n;

	if (!n)
		return;
	qsort(r->samples, n, sizeof(*r->samples), cmp_double);
	for (i = 0; i < n; i++)
		sum += r->samples[i];
	r->valid = true;
	r->median_us = n % 2 ? r->samples[n / 2] :
			       (r->samples[n / 2 - 1] + r->samples[n / 2]) / 2;
	r->mean_us = sum / (double)n;
	r->min_us = r->samples[0];
	r->p10_us = r->samples[n / 10];
	r->p90_us = r->samples[(n * 9) / 10];
	free(r->samples);
	r->samples = NULL;
}

enum { CELL_ASYNC, CELL_SYNC, CELL_UDS, CELL_MEMCPY, N_CELLS };

static const char *const cell_name[N_CELLS] = {
	[CELL_ASYNC] = "kdbus_async",
	[CELL_SYNC] = "kdbus_sync",
	[CELL_UDS] = "uds",
	[CELL_MEMCPY] = "memcpy2",
};

/* payload moved per round trip (both directions) / median round trip */
static double mib_per_s(u64 size, const struct result *r)
{
	if (!r->valid || r->median_us <= 0)
		return 0;
	return 2.0 * (double)size / MiB / (r->median_us / 1e6);
}

static double ratio(const struct result *a, const struct result *b)
{
	if (!a->valid || !b->valid || b->median_us <= 0)
		return 0;
	return a->median_us / b->median_us;
}

static const char *size_str(u64 n, char *buf, size_t len)
{
	if (n >= MiB && n % MiB == 0)
		snprintf(buf, len, "%llu MiB", n / MiB);
	else if (n >= KiB && n % KiB == 0)
		snprintf(buf, len, "%llu KiB", n / KiB);
	else
		snprintf(buf, len, "%llu B", n);
	return buf;
}

static const char *pin_str(void)
{
	static char buf[64];

	switch (opt.pin) {
	case PIN_SAME:
		snprintf(buf, sizeof(buf), "both pinned to CPU %d", opt.cpu);
		break;
	case PIN_SPLIT:
		snprintf(buf, sizeof(buf), "pinned to CPUs %d and %d", opt.cpu,
			 opt.cpu + 1);
		break;
	default:
		snprintf(buf, sizeof(buf), "not pinned");
		break;
	}
	return buf;
}

static void print_env_line(FILE *f)
{
	struct utsname u;

	uname(&u);
	fprintf(f, "kernel %s %s, environment: %s\n", u.release, u.machine,
		opt.env ? opt.env : "not stated (use --env)");
}

static void print_table(struct result res[][N_CELLS])
{
	char sz[32];
	unsigned int i;

	printf("kdbus unicast ping-pong: method call + reply, same payload size each way\n");
	print_env_line(stdout);
	if (opt.env && strstr(opt.env, "TCG"))
		printf("NOTE: run under QEMU TCG emulation: absolute times are emulated and slow;\n"
		       "      only the ratios measured in the same VM are meaningful.\n");
	printf("client and service: %s\n", pin_str());
	printf("RTT = median round trip per call in us (samples of %u interleaved rounds);\n"
	       "MiB/s = 2 x payload / RTT\n", opt.rounds);
	printf("kdbus: one PAYLOAD_VEC each way, service reads it in its pool and FREEs it\n"
	       "UDS:   AF_UNIX SOCK_STREAM socketpair, full write()+read() each way\n"
	       "memcpy x2: two memcpy() of the payload (the one-copy-each-way floor)\n\n");
	printf("%-9s %21s %21s %21s %10s %15s\n", "",
	       "---- kdbus async ----", "---- kdbus sync -----",
	       "------- UDS ---------", "memcpy x2", "-- kdbus/UDS --");
	printf("%-9s %10s %10s %10s %10s %10s %10s %10s %7s %7s\n", "payload",
	       "RTT us", "MiB/s", "RTT us", "MiB/s", "RTT us", "MiB/s", "us",
	       "async", "sync");
	for (i = 0; i < opt.n_sizes; i++) {
		struct result *r = res[i];
		u64 s = opt.sizes[i];

		printf("%-9s", size_str(s, sz, sizeof(sz)));
		for (int c = CELL_ASYNC; c <= CELL_UDS; c++) {
			double t = mib_per_s(s, &r[c]);

			if (r[c].valid)
				printf(t < 10 ? " %10.2f %10.3f" : " %10.2f %10.1f",
				       r[c].median_us, t);
			else
				printf(" %10s %10s", "n/a", "n/a");
		}
		printf(" %10.3f", r[CELL_MEMCPY].median_us);
		if (r[CELL_UDS].valid && r[CELL_ASYNC].valid)
			printf(" %6.2fx %6.2fx", ratio(&r[CELL_ASYNC], &r[CELL_UDS]),
			       ratio(&r[CELL_SYNC], &r[CELL_UDS]));
		else
			printf(" %7s %7s", "n/a", "n/a");
		printf("\n");
	}
	printf("\nSpread between rounds (min / median / max of the per-round ratio):\n");
	printf("%-9s %26s %26s\n", "payload", "kdbus async / UDS", "kdbus sync / UDS");
	for (i = 0; i < opt.n_sizes; i++) {
		struct result *r = res[i];
		struct spread a, y;

		if (!r[CELL_UDS].valid || !r[CELL_ASYNC].valid)
			continue;
		a = ratio_spread(&r[CELL_ASYNC], &r[CELL_UDS]);
		y = ratio_spread(&r[CELL_SYNC], &r[CELL_UDS]);
		printf("%-9s   %6.2fx %6.2fx %6.2fx    %6.2fx %6.2fx %6.2fx\n",
		       size_str(opt.sizes[i], sz, sizeof(sz)),
		       a.min, a.median, a.max, y.min, y.median, y.max);
	}
	printf("\nkdbus/UDS < 1.00x means kdbus is faster. Iterations per cell:");
	for (i = 0; i < opt.n_sizes; i++)
		printf(" %s=%llu/%llu/%llu",
		       size_str(opt.sizes[i], sz, sizeof(sz)),
		       res[i][CELL_ASYNC].iters, res[i][CELL_SYNC].iters,
		       res[i][CELL_UDS].iters);
	printf(" (async/sync/UDS)\n");
}

static void print_json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void print_json(struct result res[][N_CELLS])
{
	struct utsname u;
	unsigned int i;

	uname(&u);
	printf("{\n  \"benchmark\": \"kdbus-unicast-pingpong\",\n  \"kernel\": ");
	print_json_str(u.release);
	printf(",\n  \"environment\": ");
	print_json_str(opt.env ? opt.env : "");
	printf(",\n  \"emulated\": %s,\n",
	       opt.env && strstr(opt.env, "TCG") ? "true" : "false");
	printf("  \"cpus\": ");
	print_json_str(pin_str());
	printf(",\n");
	printf("  \"uds\": \"AF_UNIX SOCK_STREAM socketpair\",\n"
	       "  \"throughput\": \"2 * payload / median round trip\",\n"
	       "  \"results\": [\n");
	for (i = 0; i < opt.n_sizes; i++) {
		struct result *r = res[i];
		u64 s = opt.sizes[i];

		printf("    {\"payload\": %llu", s);
		for (int c = 0; c < N_CELLS; c++) {
			if (!r[c].valid) {
				printf(", \"%s\": null", cell_name[c]);
				continue;
			}
			printf(", \"%s\": {\"iterations\": %llu"
			       ", \"median_us\": %.3f, \"mean_us\": %.3f"
			       ", \"min_us\": %.3f, \"p10_us\": %.3f"
			       ", \"p90_us\": %.3f"
			       ", \"mib_s\": %.2f, \"round_median_us\": [",
			       cell_name[c], r[c].iters, r[c].median_us,
			       r[c].mean_us, r[c].min_us, r[c].p10_us, r[c].p90_us,
			       mib_per_s(s, &r[c]));
			for (unsigned int k = 0; k < r[c].n_rounds; k++)
				printf("%s%.3f", k ? ", " : "", r[c].round_median_us[k]);
			printf("]}");
		}
		if (r[CELL_ASYNC].valid && r[CELL_UDS].valid)
			printf(", \"ratio_async_uds\": %.3f, \"ratio_sync_uds\": %.3f"
			       ", \"ratio_sync_memcpy2\": %.3f",
			       ratio(&r[CELL_ASYNC], &r[CELL_UDS]),
			       ratio(&r[CELL_SYNC], &r[CELL_UDS]),
			       ratio(&r[CELL_SYNC], &r[CELL_MEMCPY]));
		if (r[CELL_SYNC].valid && r[CELL_UDS].valid) {
			struct spread y = ratio_spread(&r[CELL_SYNC], &r[CELL_UDS]);

			printf(", \"ratio_sync_uds_rounds\": {\"min\": %.3f"
			       ", \"median\": %.3f, \"max\": %.3f}",
			       y.min, y.median, y.max);
		}
		printf("}%s\n", i + 1 < opt.n_sizes ? "," : "");
	}
	printf("  ]\n}\n");
}

/* ---------------------------------------------------------------------------
 * main
 */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kdbus-bench [options]\n"
		"  --json              print JSON instead of the table\n"
		"  --sizes LIST        payload sizes, e.g. 8,8K,128K,1M (default)\n"
		"  --time SECONDS      target run time of each cell (default 1)\n"
		"  --rounds N          interleaved rounds the time is split in (default 3)\n"
		"  --iterations N      fixed number of round trips per cell\n"
		"  --root DIR          kdbusfs mount (default /sys/fs/kdbus)\n"
		"  --pool-size BYTES   pool of each connection (default 16M)\n"
		"  --attach-recv MASK  attach_flags_recv of both connections (default 0)\n"
		"  --env TEXT          what this runs under, e.g. \"qemu TCG\"\n"
		"  --pin MODE          same: client and service on one CPU (default),\n"
		"                      split: on two CPUs, none: let the scheduler pick\n"
		"  --cpu N             the (first) CPU to pin to (default 0)\n"
		"  --skip-kdbus        only UDS and memcpy (no kdbus needed)\n"
		"  --only CELL[,CELL]  measure these cells only: kdbus_async, kdbus_sync,\n"
		"                      uds, memcpy2 (for a profiler, or a size sweep)\n"
		"  --verbose           progress on stderr\n");
}

static u64 parse_size(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		die("bad size '%s'", s);
	switch (*end) {
	case 'k': case 'K': v *= KiB; end++; break;
	case 'm': case 'M': v *= MiB; end++; break;
	default: break;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	if (*end)
		die("bad size '%s'", s);
	return v;
}

static void parse_sizes(const char *list)
{
	char *copy = strdup(list), *tok, *save = NULL;

	if (!copy)
		die("out of memory");
	opt.n_sizes = 0;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		u64 v = parse_size(tok);

		if (opt.n_sizes == MAX_SIZES)
			die("at most %d sizes", MAX_SIZES);
		if (v < 1 || v > MAX_PAYLOAD)
			die("payload sizes must be 1..%llu bytes", MAX_PAYLOAD);
		opt.sizes[opt.n_sizes++] = v;
	}
	free(copy);
	if (!opt.n_sizes)
		die("no sizes given");
}

static const char *need_arg(int argc, char **argv, int *i)
{
	if (*i + 1 >= argc)
		die("%s needs an argument", argv[*i]);
	return argv[++*i];
}

static void parse_args(int argc, char **argv)
{
	int i;

	parse_sizes("8,8K,128K,1M");
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--json"))
			opt.json = true;
		else if (!strcmp(a, "--skip-kdbus"))
			opt.skip_kdbus = true;
		else if (!strcmp(a, "--only") && i + 1 < argc)
			opt.only = argv[++i];
		else if (!strcmp(a, "--verbose") || !strcmp(a, "-v"))
			opt.verbose = true;
		else if (!strcmp(a, "--sizes"))
			parse_sizes(need_arg(argc, argv, &i));
		else if (!strcmp(a, "--time")) {
			opt.target_s = strtod(need_arg(argc, argv, &i), NULL);
			if (!(opt.target_s > 0 && opt.target_s <= 60))
				die("--time must be in (0, 60]");
		} else if (!strcmp(a, "--rounds")) {
			opt.rounds = (unsigned int)atoi(need_arg(argc, argv, &i));
			if (opt.rounds < 1 || opt.rounds > MAX_ROUNDS)
				die("--rounds must be 1..%d", MAX_ROUNDS);
		} else if (!strcmp(a, "--iterations")) {
			opt.fixed_iters = parse_size(need_arg(argc, argv, &i));
			if (!opt.fixed_iters)
				die("--iterations must be positive");
		} else if (!strcmp(a, "--root"))
			opt.root = need_arg(argc, argv, &i);
		else if (!strcmp(a, "--pool-size"))
			opt.pool_size = parse_size(need_arg(argc, argv, &i));
		else if (!strcmp(a, "--attach-recv"))
			opt.attach_recv = strtoull(need_arg(argc, argv, &i), NULL, 0);
		else if (!strcmp(a, "--pin")) {
			const char *m = need_arg(argc, argv, &i);

			if (!strcmp(m, "same"))
				opt.pin = PIN_SAME;
			else if (!strcmp(m, "split"))
				opt.pin = PIN_SPLIT;
			else if (!strcmp(m, "none"))
				opt.pin = PIN_NONE;
			else
				die("--pin takes same, split or none");
		} else if (!strcmp(a, "--cpu"))
			opt.cpu = atoi(need_arg(argc, argv, &i));
		else if (!strcmp(a, "--env"))
			opt.env = need_arg(argc, argv, &i);
		else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			exit(0);
		} else {
			usage(stderr);
			exit(2);
		}
	}
	if (!opt.env)
		opt.env = getenv("KDBUS_BENCH_ENV");
}

static void progress(const char *what, u64 size, const struct result *r)
{
	char sz[32];

	if (opt.verbose && r->n)
		fprintf(stderr,
			"kdbus-bench: %-12s %-8s %8llu round trips, last %.2f us\n",
			what, size_str(size, sz, sizeof(sz)), r->iters,
			r->samples[r->n - 1]);
}

/* whether --only lets cell @c run */
static bool cell_wanted(int c)
{
	size_t len = strlen(cell_name[c]);
	const char *p;

	if (!opt.only)
		return true;
	for (p = opt.only; (p = strstr(p, cell_name[c])); p += len)
		if ((p == opt.only || p[-1] == ',') && (p[len] == ',' || !p[len]))
			return true;
	return false;
}

/* one round of every cell of one payload size */
static void run_round(struct kdbus_ctx *k, u64 size, struct result *r,
		      u64 *seq)
{
	double budget = opt.target_s / opt.rounds;
	struct memcpy_ctx mc;
	struct uds_ctx u;

	if (!opt.skip_kdbus) {
		k->size = size;
		if (cell_wanted(CELL_ASYNC)) {
			measure(kdbus_call_async, k, 1, seq, budget, &r[CELL_ASYNC]);
			progress("kdbus async", size, &r[CELL_ASYNC]);
		}
		if (cell_wanted(CELL_SYNC)) {
			measure(kdbus_call_sync, k, 1, seq, budget, &r[CELL_SYNC]);
			progress("kdbus sync", size, &r[CELL_SYNC]);
		}
	}

	if (cell_wanted(CELL_UDS)) {
		uds_setup(&u, size);
		measure(uds_call, &u, 1, seq, budget, &r[CELL_UDS]);
		uds_teardown(&u);
		progress("uds", size, &r[CELL_UDS]);
	}

	if (!cell_wanted(CELL_MEMCPY))
		return;
	mc.size = size;
	mc.batch = 256 * KiB / size ? 256 * KiB / size : 1;
	mc.a = xmalloc_payload(size, 0x5a);
	mc.b = xmalloc_payload(size, 0);
	measure(memcpy_pairs, &mc, mc.batch, seq, budget, &r[CELL_MEMCPY]);
	free(mc.a);
	free(mc.b);
	progress("memcpy x2", size, &r[CELL_MEMCPY]);
}

int main(int argc, char **argv)
{
	struct result (*res)[N_CELLS];
	struct kdbus_ctx k = { .bus_fd = -1 };
	unsigned int i, round;
	u64 seq = 0;
	int err;

	parse_args(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	pin_client();
	res = calloc(opt.n_sizes, sizeof(*res));
	if (!res)
		die("out of memory");

	if (!opt.skip_kdbus) {
		err = kdbus_setup(&k);
		if (err)
			die("cannot create a bus under %s: %s (is kdbusfs mounted? --skip-kdbus runs without it)",
			    opt.root, strerror(-err));
	}

	/*
	 * Rounds interleave the cells, so that kdbus and UDS see the same
	 * drift of a busy (emulating) host; samples are pooled.
	 */
	for (round = 0; round < opt.rounds; round++)
		for (i = 0; i < opt.n_sizes; i++)
			run_round(&k, opt.sizes[i], res[i], &seq);

	if (!opt.skip_kdbus)
		kdbus_teardown(&k);

	for (i = 0; i < opt.n_sizes; i++)
		for (int c = 0; c < N_CELLS; c++)
			summarize(&res[i][c]);

	if (opt.json)
		print_json(res);
	else
		print_table(res);
	free(res);
	return 0;
}
