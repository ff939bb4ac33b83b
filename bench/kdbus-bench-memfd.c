// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kdbus-bench-memfd: bulk throughput, 64 KiB .. 256 MiB, from one process
 * to another, by
 *
 *   UDS          write() into an AF_UNIX SOCK_STREAM socketpair, read()
 *   kdbus VEC    PAYLOAD_VEC messages of at most 2 MiB (the VEC limit), a
 *                window of 4 in flight, each acknowledged; the receiver
 *                reads the payload in its pool
 *   kdbus memfd  one message with a sealed memfd; both sides map it with
 *                MAP_POPULATE (a fault per page costs more than the
 *                copy it saves); the receiver reads every byte ("read")
 *                or one byte per page ("touch")
 *
 * and, as the physical limit, one memcpy() of the same size. For every
 * transfer the sender fills the whole payload (a fresh memfd each time for
 * memfd: a sealed memfd cannot be written again), the receiver reads every
 * 8-byte word (except "touch"), checks the first word of each chunk and
 * acknowledges; a cell is the mean over enough transfers to last about
 * --time seconds after one warm-up transfer. It prints where memfd starts
 * to beat VEC. A benchmark, not a test: it fails only on errors.
 *
 *   kdbus-bench-memfd [--root /sys/fs/kdbus] [--time SEC] [--max SIZE]
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/kdbus.h>

#include "bus-make.h"

typedef __u64 u64;

#define KiB		1024ULL
#define MiB		(1024ULL * KiB)
#define ITEM_HDR	16ULL
#define ALIGN8(x)	(((x) + 7ULL) & ~7ULL)

#define VEC_CHUNK	(2 * MiB)	/* KDBUS_MSG_MAX_PAYLOAD_VEC_SIZE */
#define VEC_WINDOW	4		/* chunks in flight (receiver quota) */
#define POOL_SIZE	(64 * MiB)
#define UDS_BUF		(1 * MiB)
#define IO_TIMEOUT_MS	60000
#define SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL)

enum method { M_UDS, M_VEC, M_MEMFD_READ, M_MEMFD_TOUCH, M_N };

static const char *const method_name[M_N] = {
	"UDS", "kdbus VEC", "memfd read", "memfd touch",
};

static const u64 sizes[] = {
	64 * KiB, 128 * KiB, 256 * KiB, 512 * KiB, 1 * MiB, 2 * MiB,
	4 * MiB, 16 * MiB, 64 * MiB, 256 * MiB,
};
#define N_SIZES (sizeof(sizes) / sizeof(sizes[0]))

static const char *root = "/sys/fs/kdbus";
static double target_s = 0.5;
static u64 max_size = 256 * MiB;
static char bus_path[256];
static volatile u64 sink;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "kdbus-bench-memfd[%d]: ", (int)getpid());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}

static void pin_cpu0(void)
{
	cpu_set_t set;

	/* as kdbus-bench: cross-vCPU wake-ups under TCG are pure noise */
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* word i of transfer @seq */
static inline u64 pattern(u64 seq, u64 i)
{
	return (seq << 40) ^ i;
}

static void fill(u64 *p, u64 len, u64 seq, u64 first_word)
{
	u64 i;

	for (i = 0; i < len / 8; i++)
		p[i] = pattern(seq, first_word + i);
}

/* read every word; the first must be what the sender wrote there */
static void consume(const u64 *p, u64 len, u64 seq, u64 first_word)
{
	u64 i, s = 0;

	if (len >= 8 && p[0] != pattern(seq, first_word))
		die("payload corrupt at word %llu of transfer %llu",
		    first_word, seq);
	for (i = 0; i < len / 8; i++)
		s += p[i];
	sink += s;
}

static void touch_pages(const uint8_t *p, u64 len)
{
	u64 i, s = 0;

	for (i = 0; i < len; i += 4096)
		s += p[i];
	sink += s;
}

static void *xalloc(u64 n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED)
		die("cannot allocate %llu bytes: %m", n);
	return p;
}

static void xwrite(int fd, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	while (n > 0) {
		ssize_t r = write(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			die("write: %m");
		p += r;
		n -= (size_t)r;
	}
}

static void xread(int fd, void *buf, size_t n)
{
	uint8_t *p = buf;

	while (n > 0) {
		ssize_t r = read(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			die("read: %s", r ? strerror(errno) : "EOF");
		p += r;
		n -= (size_t)r;
	}
}

/* ---------------------------------------------------------------------------
 * kdbus plumbing
 */

struct conn {
	int fd;
	u64 id;
	const uint8_t *pool;
};

static void bus_make(void)
{
	int fd = bench_bus_make(root, "memfd", 64, bus_path, sizeof(bus_path));

	if (fd < 0)
		die("BUS_MAKE on %s/control: %s", root, strerror(-fd));
	/* the bus lives as long as this fd: leak it on purpose */
}

static void kfree_slice(const struct conn *c, u64 off)
{
	struct kdbus_cmd_free cmd = { .size = sizeof(cmd), .offset = off };

	if (ioctl(c->fd, KDBUS_CMD_FREE, &cmd))
		die("FREE: %m");
}

static void hello(struct conn *c)
{
	struct kdbus_cmd_hello h = {
		.size = sizeof(h),
		.pool_size = POOL_SIZE,
	};
	void *map;

	c->fd = open(bus_path, O_RDWR | O_CLOEXEC);
	if (c->fd < 0)
		die("open %s: %m", bus_path);
	if (ioctl(c->fd, KDBUS_CMD_HELLO, &h))
		die("HELLO: %m");
	map = mmap(NULL, POOL_SIZE, PROT_READ, MAP_SHARED, c->fd, 0);
	if (map == MAP_FAILED)
		die("mmap pool: %m");
	c->id = h.id;
	c->pool = map;
	kfree_slice(c, h.offset);
}

static void bye(struct conn *c)
{
	munmap((void *)c->pool, POOL_SIZE);
	close(c->fd);
}

/* SEND a message to @dst with at most one payload item */
static void ksend(const struct conn *c, u64 dst, u64 cookie, u64 type,
		  const void *payload, size_t payload_len)
{
	u64 buf[32] = { 0 };
	struct kdbus_msg *m = (struct kdbus_msg *)buf;
	struct kdbus_cmd_send cmd = { .size = sizeof(cmd) };
	struct kdbus_item *it = m->items;
	int r;

	m->size = sizeof(*m);
	m->dst_id = dst;
	m->payload_type = KDBUS_PAYLOAD_DBUS;
	m->cookie = cookie;
	if (payload_len) {
		it->size = ITEM_HDR + payload_len;
		it->type = type;
		memcpy(it->data, payload, payload_len);
		m->size += ALIGN8(it->size);
	}
	cmd.msg_address = (uintptr_t)m;
	do {
		r = ioctl(c->fd, KDBUS_CMD_SEND, &cmd);
	} while (r < 0 && errno == EINTR);
	if (r)
		die("SEND: %m");
}

static void send_vec(const struct conn *c, u64 dst, u64 cookie,
		     const void *data, u64 len)
{
	struct kdbus_vec v = { .address = (uintptr_t)data, .size = len };

	ksend(c, dst, cookie, KDBUS_ITEM_PAYLOAD_VEC, &v, sizeof(v));
}

/* wait for and RECV one message; its info */
static struct kdbus_msg *krecv(const struct conn *c, u64 *off)
{
	struct kdbus_cmd_recv cmd = { .size = sizeof(cmd) };
	struct pollfd p = { .fd = c->fd, .events = POLLIN };
	u64 deadline = now_ns() + IO_TIMEOUT_MS * 1000000ULL;

	for (;;) {
		if (ioctl(c->fd, KDBUS_CMD_RECV, &cmd) == 0)
			break;
		if (errno != EAGAIN && errno != EINTR)
			die("RECV: %m");
		if (now_ns() > deadline)
			die("no message within %d ms", IO_TIMEOUT_MS);
		if (poll(&p, 1, IO_TIMEOUT_MS) > 0 &&
		    (p.revents & (POLLERR | POLLHUP)))
			die("connection closed");
	}
	*off = cmd.msg.offset;
	return (struct kdbus_msg *)(c->pool + cmd.msg.offset);
}

static struct kdbus_item *find_item(struct kdbus_msg *m, u64 type)
{
	uint8_t *p = (uint8_t *)m->items, *end = (uint8_t *)m + m->size;

	while (p + ITEM_HDR <= end) {
		struct kdbus_item *it = (struct kdbus_item *)p;

		if (it->size < ITEM_HDR)
			break;
		if (it->type == type)
			return it;
		p += ALIGN8(it->size);
	}
	return NULL;
}

static void recv_ack(const struct conn *c)
{
	u64 off;

	krecv(c, &off);
	kfree_slice(c, off);
}

/* ---------------------------------------------------------------------------
 * one transfer, both sides
 */

struct side {
	enum method m;
	u64 size;
	u64 *buf;		/* sender payload / UDS receive buffer */
	int sock;		/* UDS */
	struct conn c;		/* kdbus */
	u64 peer;		/* kdbus id of the other side */
};

static void send_transfer(struct side *s, u64 seq)
{
	u64 off, inflight = 0;

	switch (s->m) {
	case M_UDS: {
		char ack;

		fill(s->buf, s->size, seq, 0);
		xwrite(s->sock, s->buf, s->size);
		xread(s->sock, &ack, 1);
		break;
	}
	case M_VEC:
		fill(s->buf, s->size, seq, 0);
		for (off = 0; off < s->size; off += VEC_CHUNK) {
			u64 len = s->size - off < VEC_CHUNK ?
				  s->size - off : VEC_CHUNK;

			if (inflight == VEC_WINDOW) {
				recv_ack(&s->c);
				inflight--;
			}
			send_vec(&s->c, s->peer, seq, (uint8_t *)s->buf + off,
				 len);
			inflight++;
		}
		while (inflight-- > 0)
			recv_ack(&s->c);
		break;
	case M_MEMFD_READ:
	case M_MEMFD_TOUCH: {
		struct kdbus_memfd mfd = { .start = 0, .size = s->size };
		int fd = memfd_create("bench", MFD_CLOEXEC | MFD_ALLOW_SEALING);
		void *p;

		if (fd < 0 || ftruncate(fd, s->size) < 0)
			die("memfd: %m");
		/* populate in one call: a page fault per page is far dearer */
		p = mmap(NULL, s->size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_POPULATE, fd, 0);
		if (p == MAP_FAILED)
			die("mmap memfd: %m");
		fill(p, s->size, seq, 0);
		munmap(p, s->size);
		if (fcntl(fd, F_ADD_SEALS, SEALS) < 0)
			die("F_ADD_SEALS: %m");
		mfd.fd = fd;
		ksend(&s->c, s->peer, seq, KDBUS_ITEM_PAYLOAD_MEMFD, &mfd,
		      sizeof(mfd));
		close(fd);
		recv_ack(&s->c);
		break;
	}
	default:
		break;
	}
}

static void recv_transfer(struct side *s, u64 seq)
{
	u64 got = 0, off;

	switch (s->m) {
	case M_UDS:
		while (got < s->size) {
			u64 want = s->size - got < UDS_BUF ? s->size - got :
				   UDS_BUF;
			ssize_t r = read(s->sock, s->buf, want);

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				die("read: %m");
			/* stream reads may end mid-word: verify aligned ones */
			if (got % 8 == 0 && r % 8 == 0)
				consume(s->buf, (u64)r, seq, got / 8);
			else
				touch_pages((uint8_t *)s->buf, (u64)r);
			got += (u64)r;
		}
		xwrite(s->sock, "a", 1);
		break;
	case M_VEC:
		while (got < s->size) {
			struct kdbus_msg *m = krecv(&s->c, &off);
			struct kdbus_item *it = find_item(m,
							  KDBUS_ITEM_PAYLOAD_OFF);

			if (!it || m->cookie != seq)
				die("VEC message without payload");
			consume((const u64 *)((uint8_t *)m + it->vec.offset),
				it->vec.size, seq, got / 8);
			got += it->vec.size;
			kfree_slice(&s->c, off);
			ksend(&s->c, s->peer, seq, 0, NULL, 0);
		}
		break;
	case M_MEMFD_READ:
	case M_MEMFD_TOUCH: {
		struct kdbus_msg *m = krecv(&s->c, &off);
		struct kdbus_item *it = find_item(m, KDBUS_ITEM_PAYLOAD_MEMFD);
		int fd = it ? it->memfd.fd : -1;
		void *p;

		if (fd < 0 || it->memfd.size != s->size)
			die("memfd message without memfd");
		kfree_slice(&s->c, off);
		p = mmap(NULL, s->size, PROT_READ, MAP_SHARED | MAP_POPULATE,
			 fd, 0);
		if (p == MAP_FAILED)
			die("mmap received memfd: %m");
		if (s->m == M_MEMFD_READ)
			consume(p, s->size, seq, 0);
		else if (*(u64 *)p != pattern(seq, 0))
			die("memfd payload corrupt");
		else
			touch_pages(p, s->size);
		munmap(p, s->size);
		close(fd);
		ksend(&s->c, s->peer, seq, 0, NULL, 0);
		break;
	}
	default:
		break;
	}
}

/* ---------------------------------------------------------------------------
 * cells
 */

/* bytes per second of one memcpy() of @size, both buffers resident */
static double cell_memcpy(u64 size)
{
	void *a = xalloc(size), *b = xalloc(size);
	u64 iters = 1, i, t0, t;

	memset(a, 1, size);
	memcpy(b, a, size);	/* warm-up */
	for (;;) {
		t0 = now_ns();
		for (i = 0; i < iters; i++) {
			((uint8_t *)a)[i % size] = (uint8_t)i;
			memcpy(b, a, size);
		}
		t = now_ns() - t0;
		sink += ((uint8_t *)b)[size - 1];
		if (t >= target_s * 1e9 / 4 || iters >= (1u << 20))
			break;
		iters *= 4;
	}
	munmap(a, size);
	munmap(b, size);
	return (double)size * (double)iters / ((double)t / 1e9);
}

/* bytes per second of @m transfers of @size from a parent to a child */
static double cell_transfer(enum method m, u64 size)
{
	struct side snd = { .m = m, .size = size }, rcv = snd;
	int up[2], down[2], sv[2] = { -1, -1 };
	u64 iters, i, t0, t;
	pid_t pid;
	int status;

	/* up: receiver to sender, down: sender to receiver */
	if (pipe(up) < 0 || pipe(down) < 0)
		die("pipe: %m");
	if (m == M_UDS && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
				     sv) < 0)
		die("socketpair: %m");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork: %m");
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		rcv.sock = sv[1];
		if (m == M_UDS) {
			rcv.buf = xalloc(UDS_BUF);
		} else {
			hello(&rcv.c);
			xwrite(up[1], &rcv.c.id, sizeof(rcv.c.id));
			xread(down[0], &rcv.peer, sizeof(rcv.peer));
		}
		recv_transfer(&rcv, 0);		/* warm-up */
		xread(down[0], &iters, sizeof(iters));
		for (i = 1; i <= iters; i++)
			recv_transfer(&rcv, i);
		if (m != M_UDS)
			bye(&rcv.c);
		_exit(0);
	}

	snd.sock = sv[0];
	if (m == M_UDS || m == M_VEC)
		snd.buf = xalloc(size);
	if (m != M_UDS) {
		hello(&snd.c);
		xread(up[0], &snd.peer, sizeof(snd.peer));
		xwrite(down[1], &snd.c.id, sizeof(snd.c.id));
	}

	t0 = now_ns();
	send_transfer(&snd, 0);
	t = now_ns() - t0;
	iters = (u64)(target_s * 1e9 / (double)(t ? t : 1));
	iters = iters < 1 ? 1 : iters > 10000 ? 10000 : iters;
	xwrite(down[1], &iters, sizeof(iters));

	t0 = now_ns();
	for (i = 1; i <= iters; i++)
		send_transfer(&snd, i);
	t = now_ns() - t0;

	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		die("%s receiver failed", method_name[m]);
	if (m != M_UDS)
		bye(&snd.c);
	if (snd.buf)
		munmap(snd.buf, size);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
	if (sv[0] >= 0) {
		close(sv[0]);
		close(sv[1]);
	}
	return (double)size * (double)iters / ((double)t / 1e9);
}

static const char *fmt_size(u64 n, char *buf, size_t len)
{
	if (n >= MiB)
		snprintf(buf, len, "%llu MiB", n / MiB);
	else
		snprintf(buf, len, "%llu KiB", n / KiB);
	return buf;
}

int main(int argc, char **argv)
{
	double r[N_SIZES][M_N + 1];
	int i, first_read = -1, first_touch = -1;
	unsigned int k, n;
	char sz[32];

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--root") && i + 1 < argc)
			root = argv[++i];
		else if (!strcmp(argv[i], "--time") && i + 1 < argc)
			target_s = atof(argv[++i]);
		else if (!strcmp(argv[i], "--max") && i + 1 < argc)
			max_size = strtoull(argv[++i], NULL, 0) * MiB;
		else
			die("usage: %s [--root DIR] [--time SEC] [--max MiB]",
			    argv[0]);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	pin_cpu0();
	bus_make();

	printf("\nkdbus-bench-memfd: one-way bulk transfer, sender fills, receiver reads\n");
	printf("(MB/s = 10^6 bytes/s; memfd touch = map + one byte per page)\n\n");
	printf("%-8s %10s %10s %10s %11s %11s %10s\n", "size", "memcpy",
	       "UDS", "kdbus VEC", "memfd read", "memfd touch", "read/VEC");
	for (n = 0; n < N_SIZES && sizes[n] <= max_size; n++) {
		r[n][M_N] = cell_memcpy(sizes[n]);
		for (k = 0; k < M_N; k++)
			r[n][k] = cell_transfer(k, sizes[n]);
		printf("%-8s %10.0f %10.0f %10.0f %11.0f %11.0f %9.2fx\n",
		       fmt_size(sizes[n], sz, sizeof(sz)), r[n][M_N] / 1e6,
		       r[n][M_UDS] / 1e6, r[n][M_VEC] / 1e6,
		       r[n][M_MEMFD_READ] / 1e6, r[n][M_MEMFD_TOUCH] / 1e6,
		       r[n][M_MEMFD_READ] / r[n][M_VEC]);
	}

	/* the smallest size from which memfd stays ahead of VEC */
	for (i = (int)n - 1; i >= 0 && r[i][M_MEMFD_READ] > r[i][M_VEC]; i--)
		first_read = i;
	for (i = (int)n - 1; i >= 0 && r[i][M_MEMFD_TOUCH] > r[i][M_VEC]; i--)
		first_touch = i;
	printf("\nbreak-even, memfd (read every byte) vs VEC: %s\n",
	       first_read < 0 ? "none in range" :
	       fmt_size(sizes[first_read], sz, sizeof(sz)));
	printf("break-even, memfd (touch pages) vs VEC:     %s\n",
	       first_touch < 0 ? "none in range" :
	       fmt_size(sizes[first_touch], sz, sizeof(sz)));
	printf("(the 2015 design put the break-even near 512 KiB)\n");
	return 0;
}
