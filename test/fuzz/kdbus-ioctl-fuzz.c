// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kdbus-ioctl-fuzz: a coverage-guided, structure-aware fuzzer of the kdbus
 * ioctl interface. Runs in the debug VM (scripts/fuzz-kernel.sh): kdbus.ko
 * built with KCOV_INSTRUMENT, CONFIG_KCOV; only the module is instrumented,
 * so every PC in the KCOV buffer is a kdbus.ko PC.
 *
 * An input is a program: a byte string read as a sequence of operations
 * (HELLO, SEND unicast/broadcast/sync, RECV, FREE, NAME_ACQUIRE/RELEASE,
 * LIST, CONN_INFO, BUS_CREATOR_INFO, UPDATE, MATCH_ADD/REMOVE, BYEBYE,
 * close) with valid command headers and random items, sizes, flags,
 * offsets, names, bloom data, fds of several kinds and memfds. Inputs that
 * hit new edges (hashed PC pairs) join the corpus. Several worker processes
 * fuzz one bus at the same time (connection ids are small, so they address
 * each other), and within a worker an input can start threads that run
 * parts of it concurrently on the same connections (spawn()). Kernel reports are judged by the VM harness; each worker
 * writes the input it is executing to its slot file first, so the input
 * that was running at a crash is known.
 *
 *   kdbus-ioctl-fuzz -t SECONDS [-j WORKERS] [-c CORPUS-DIR] [-o OUT-DIR]
 *   kdbus-ioctl-fuzz -r FILE	(replay one input once)
 *   kdbus-ioctl-fuzz -m FILE [-o OUT-DIR]	(minimise an input that makes the
 *				kernel report; see minimise())
 * New corpus entries are written to OUT-DIR; statistics go to stdout.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/kdbus.h>

#define KCOV_INIT_TRACE	_IOR('c', 1, unsigned long)
#define KCOV_ENABLE	_IO('c', 100)
#define KCOV_DISABLE	_IO('c', 101)
#define KCOV_TRACE_PC	0
#define COVER_SIZE	(64 << 10)
#define MAP_BITS	16
#define MAX_IN		1024
#define ITEM_HDR	16	/* offsetof(struct kdbus_item, data) */
#define MAX_CORPUS	4096
#define NCONN		4
#define POOL		(64 * 4096)

static unsigned long *cover;
static uint8_t seen[1 << MAP_BITS];

/* the distinct kdbus.ko PCs (KCOV call sites) reached: a hash set */
#define PC_BITS		15
static uint64_t pcs[1 << PC_BITS];
static unsigned int npcs;

static void pc_add(uint64_t pc)
{
	uint32_t h = (uint32_t)(pc * 0x9e3779b97f4a7c15ULL >> (64 - PC_BITS));

	while (pcs[h] && pcs[h] != pc)
		h = (h + 1) & ((1 << PC_BITS) - 1);
	if (!pcs[h] && npcs < (1 << PC_BITS) - 1) {
		pcs[h] = pc;
		npcs++;
	}
}
static const char *bus_path;

struct in { const uint8_t *p; size_t n, i; };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t get(struct in *in, int bytes)
{
	uint64_t v = 0;

	for (int k = 0; k < bytes; k++)
		v |= (uint64_t)(in->i < in->n ? in->p[in->i++] : 0) << (8 * k);
	return v;
}

/* a "value": biased toward the small, the boundary and the flag-like */
static uint64_t val(struct in *in)
{
	switch (get(in, 1) & 7) {
	case 0: return 0;
	case 1: return get(in, 1) & 15;
	case 2: return 1ULL << (get(in, 1) & 63);
	case 3: return ~0ULL - (get(in, 1) & 3);
	case 4: return get(in, 2);
	case 5: return get(in, 4);
	default: return get(in, 8);
	}
}

struct conn { int fd; uint8_t *pool; uint64_t id; };
static struct conn conns[NCONN];

static const char *const names[] = {
	"org.fuzz.a", "org.fuzz.b", "org.fuzz.a.b", "a", "org..bad",
	".org.x", "org.fuzz.very.long.name.with.many.elements.to.check",
};

#define MAX_MAPS	16
static void *maps[MAX_MAPS];
static int nmaps;
static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;

static int some_fd(struct in *in)
{
	int fd, sv[2];

	switch (get(in, 1) & 15) {
	case 0: return memfd_create("fuzz", MFD_ALLOW_SEALING);
	case 1:
		fd = memfd_create("fuzz", MFD_ALLOW_SEALING);
		if (fd >= 0) {
			ftruncate(fd, get(in, 2));
			fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
			      F_SEAL_WRITE | F_SEAL_SEAL);
		}
		return fd;
	case 2: return eventfd(0, 0);
	case 3: return socketpair(AF_UNIX, SOCK_STREAM, 0, sv) ? -1 : sv[0];
	case 4: return open("/dev/null", O_RDWR);
	case 5: return conns[get(in, 1) % NCONN].fd;	/* a kdbus connection */
	case 6: return open(bus_path, O_RDWR);		/* a fresh kdbus handle */
	case 7: return 100;				/* the control handle */
	case 8: return pipe(sv) ? -1 : sv[get(in, 1) & 1];
	case 9: return open("/", O_PATH);
	case 10: return open("/", O_RDONLY | O_DIRECTORY);
	case 11: return socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) ? -1 : sv[1];
	case 12: return open("/sys/fs/kdbus", O_RDONLY | O_DIRECTORY);
	case 13:	/* a memfd that is mapped writable (so it cannot be sealed) */
		fd = memfd_create("fuzz", MFD_ALLOW_SEALING);
		if (fd >= 0 && ftruncate(fd, 4096) == 0) {
			void *m = mmap(NULL, 4096, PROT_WRITE, MAP_SHARED, fd, 0);

			pthread_mutex_lock(&maps_lock);
			if (m != MAP_FAILED && nmaps < MAX_MAPS)
				maps[nmaps++] = m;
			else if (m != MAP_FAILED)
				munmap(m, 4096);
			pthread_mutex_unlock(&maps_lock);
		}
		return fd;
	default: return (int)(get(in, 1)) - 2;		/* bad fds */
	}
}

/* append random items to buf at *len (8-aligned); buf has room for 4096 */
static void add_items(struct in *in, uint8_t *buf, size_t *len, int max)
{
	static char data[8192];
	int n = get(in, 1) % (max + 1);

	for (int k = 0; k < n && *len < 3072; k++) {
		static const uint64_t types[] = {
			KDBUS_ITEM_NEGOTIATE, KDBUS_ITEM_PAYLOAD_VEC,
			KDBUS_ITEM_PAYLOAD_MEMFD, KDBUS_ITEM_FDS,
			KDBUS_ITEM_CANCEL_FD, KDBUS_ITEM_BLOOM_PARAMETER,
			KDBUS_ITEM_BLOOM_FILTER, KDBUS_ITEM_BLOOM_MASK,
			KDBUS_ITEM_DST_NAME, KDBUS_ITEM_MAKE_NAME,
			KDBUS_ITEM_ATTACH_FLAGS_SEND, KDBUS_ITEM_ATTACH_FLAGS_RECV,
			KDBUS_ITEM_ID, KDBUS_ITEM_NAME, KDBUS_ITEM_DST_ID,
			KDBUS_ITEM_CONN_DESCRIPTION, KDBUS_ITEM_POLICY_ACCESS,
			KDBUS_ITEM_NAME_ADD, KDBUS_ITEM_NAME_REMOVE,
			KDBUS_ITEM_NAME_CHANGE, KDBUS_ITEM_ID_ADD,
			KDBUS_ITEM_ID_REMOVE, 0, 0x7777,
		};
		struct kdbus_item *it = (void *)(buf + *len);
		uint64_t type = types[get(in, 1) % (sizeof(types) / 8)];
		size_t plen = 0;
		const char *s;

		it->type = type;
		switch (type) {
		case KDBUS_ITEM_PAYLOAD_VEC:
			it->vec.size = get(in, 1) & 1 ? get(in, 2) & 8191 : val(in);
			it->vec.address = get(in, 1) & 3 ? (uintptr_t)data : val(in);
			plen = sizeof(it->vec);
			break;
		case KDBUS_ITEM_PAYLOAD_MEMFD: {
			int fd = memfd_create("m", MFD_ALLOW_SEALING);

			if (fd >= 0) {
				ftruncate(fd, get(in, 2));
				if (get(in, 1) & 1)
					fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK |
					      F_SEAL_GROW | F_SEAL_WRITE);
			}
			it->memfd.fd = get(in, 1) & 7 ? fd : some_fd(in);
			it->memfd.start = get(in, 1) & 1 ? val(in) : 0;
			it->memfd.size = val(in);
			it->memfd.__pad = 0;
			plen = sizeof(it->memfd);
			break;
		}
		case KDBUS_ITEM_FDS: case KDBUS_ITEM_CANCEL_FD: {
			int m = type == KDBUS_ITEM_CANCEL_FD ? 1 : get(in, 1) % 5;

			for (int f = 0; f < m; f++)
				it->fds[f] = some_fd(in);
			plen = m * sizeof(int);
			break;
		}
		case KDBUS_ITEM_DST_NAME: case KDBUS_ITEM_MAKE_NAME:
		case KDBUS_ITEM_NAME: case KDBUS_ITEM_CONN_DESCRIPTION:
			s = names[get(in, 1) % (sizeof(names) / sizeof(*names))];
			plen = strlen(s) + (get(in, 1) & 7 ? 1 : 0);
			memcpy(it->str, s, plen);
			break;
		default:	/* bloom data, u64s, policy, raw */
			plen = (get(in, 1) & 3) * 8 + (get(in, 1) & 7 ? 0 : get(in, 1) & 7);
			for (size_t b = 0; b < plen; b += 8) {
				uint64_t v = val(in);

				memcpy(it->data + b, &v, plen - b < 8 ? plen - b : 8);
			}
		}
		it->size = ITEM_HDR + plen;
		if ((get(in, 1) & 31) == 0)
			it->size = val(in);	/* a lying size */
		*len += (ITEM_HDR + plen + 7) & ~7UL;
	}
}

/*
 * Threads of one input race on the same connection (spawn()). Its fd and
 * pool mapping change hands by atomic exchange, so that each is closed or
 * unmapped exactly once: two threads that both read c->pool and unmap it
 * could unmap whatever was mapped at that address in between (a thread
 * stack, another pool), and the worker would crash.
 *
 * conn_set_fd() makes @fd the connection's fd, closing the one it replaces.
 */
static void conn_set_fd(struct conn *c, int fd)
{
	int old = __atomic_exchange_n(&c->fd, fd, __ATOMIC_ACQ_REL);

	if (old >= 0)
		close(old);
}

/* make @pool the connection's mapping, unmapping the one it replaces */
static void conn_set_pool(struct conn *c, void *pool)
{
	void *old = __atomic_exchange_n(&c->pool, pool, __ATOMIC_ACQ_REL);

	if (old)
		munmap(old, POOL);
}

static void do_hello(struct in *in, struct conn *c)
{
	uint8_t buf[4096] __attribute__((aligned(8))) = { 0 };
	struct kdbus_cmd_hello *h = (void *)buf;
	size_t len = sizeof(*h);
	int fd;

	conn_set_fd(c, -1);
	conn_set_pool(c, NULL);
	fd = open(bus_path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	h->flags = get(in, 1) & 1 ? val(in) : KDBUS_HELLO_ACCEPT_FD;
	h->attach_flags_send = val(in);
	h->attach_flags_recv = val(in);
	h->pool_size = get(in, 1) & 7 ? POOL : val(in);
	add_items(in, buf, &len, 2);
	h->size = len;
	if (ioctl(fd, KDBUS_CMD_HELLO, h) == 0) {
		void *pool = mmap(NULL, POOL, PROT_READ, MAP_SHARED, fd, 0);

		c->id = h->id;
		if (pool != MAP_FAILED)
			conn_set_pool(c, pool);
	}
	conn_set_fd(c, fd);
}

#define MAX_THREADS	4
static pthread_t threads[MAX_THREADS];
static struct in thread_in[MAX_THREADS];
static int nthreads;

static void run_ops(struct in *in, int top);

static void *op_thread(void *arg)
{
	run_ops(arg, 0);
	return NULL;
}

/*
 * The next bytes of the input (a sub-program) run in a new thread while this
 * one goes on: the same connections, fds and pools used concurrently (SEND
 * against close, RECV against BYEBYE, HELLO against FREE, ...). Only the
 * main thread is KCOV-traced; all threads are joined before the input's
 * connections are reset.
 */
static void spawn(struct in *in)
{
	size_t k = get(in, 1) % 96;
	struct in *sub;

	if (k > in->n - in->i)
		k = in->n - in->i;
	if (nthreads >= MAX_THREADS || !k)
		return;
	sub = &thread_in[nthreads];
	*sub = (struct in){ in->p + in->i, k, 0 };
	in->i += k;
	if (pthread_create(&threads[nthreads], NULL, op_thread, sub) == 0)
		nthreads++;
}

static void run_input(const uint8_t *data, size_t n)
{
	struct in in = { data, n, 0 };

	run_ops(&in, 1);
	while (nthreads > 0)
		pthread_join(threads[--nthreads], NULL);
}

static void run_ops(struct in *in_, int top)
{
	struct in in = *in_;

	while (in.i < in.n) {
		uint8_t buf[4096] __attribute__((aligned(8))) = { 0 };
		uint8_t mbuf[4096] __attribute__((aligned(8))) = { 0 };
		struct conn *c = &conns[get(&in, 1) % NCONN];
		unsigned int op = get(&in, 1) % 16;
		struct kdbus_cmd *cmd = (void *)buf;
		size_t len;
		unsigned long req = 0;

		if (c->fd < 0 || op == 0) {
			do_hello(&in, c);
			continue;
		}
		switch (op) {
		case 1: case 2: case 3: {	/* SEND */
			struct kdbus_cmd_send *s = (void *)buf;
			struct kdbus_msg *m = (void *)mbuf;
			size_t ml = sizeof(*m);

			m->flags = get(&in, 1) & 1 ? val(&in) :
				(op == 3 ? KDBUS_MSG_EXPECT_REPLY : 0);
			m->priority = (int64_t)val(&in);
			m->dst_id = op == 2 ? KDBUS_DST_ID_BROADCAST :
				get(&in, 1) & 1 ? conns[get(&in, 1) % NCONN].id : val(&in);
			m->payload_type = get(&in, 1) & 1 ? KDBUS_PAYLOAD_DBUS : val(&in);
			m->cookie = val(&in);
			/* an absolute CLOCK_MONOTONIC deadline: at most 50ms away */
			m->timeout_ns = op == 3 || (get(&in, 1) & 1) ?
				now_ns() + get(&in, 2) * 768 : val(&in);
			add_items(&in, mbuf, &ml, 4);
			m->size = get(&in, 1) & 15 ? ml : val(&in);
			/* synchronous only with a near deadline (no hang) */
			s->flags = op == 3 && (get(&in, 1) & 1) ?
				KDBUS_SEND_SYNC_REPLY : val(&in) & ~1ULL;
			s->msg_address = (uintptr_t)m;
			len = sizeof(*s);
			add_items(&in, buf, &len, 1);
			req = KDBUS_CMD_SEND;
			break;
		}
		case 4: {			/* RECV */
			struct kdbus_cmd_recv *r = (void *)buf;

			r->flags = val(&in) & 7;
			r->priority = (int64_t)val(&in);
			len = sizeof(*r);
			req = KDBUS_CMD_RECV;
			if (ioctl(c->fd, req, r) == 0 && (get(&in, 1) & 3)) {
				struct kdbus_cmd_free f = { .size = sizeof(f),
					.offset = r->msg.offset };

				ioctl(c->fd, KDBUS_CMD_FREE, &f);
			}
			continue;
		}
		case 5: {			/* FREE */
			struct kdbus_cmd_free *f = (void *)buf;

			f->offset = val(&in);
			len = sizeof(*f);
			req = KDBUS_CMD_FREE;
			break;
		}
		case 6: case 7:			/* NAME_ACQUIRE / RELEASE */
			cmd->flags = val(&in) & 0x1f;
			len = sizeof(*cmd);
			{
				struct kdbus_item *it = (void *)(buf + len);
				const char *s = names[get(&in, 1) % (sizeof(names) / sizeof(*names))];

				it->type = KDBUS_ITEM_NAME;
				it->size = ITEM_HDR + strlen(s) + 1;
				strcpy(it->str, s);
				len += (it->size + 7) & ~7UL;
			}
			add_items(&in, buf, &len, 1);
			req = op == 6 ? KDBUS_CMD_NAME_ACQUIRE : KDBUS_CMD_NAME_RELEASE;
			break;
		case 8: {			/* LIST */
			struct kdbus_cmd_list *l = (void *)buf;

			l->flags = val(&in) & 0xf;
			len = sizeof(*l);
			req = KDBUS_CMD_LIST;
			if (ioctl(c->fd, req, l) == 0) {
				struct kdbus_cmd_free f = { .size = sizeof(f),
					.offset = l->offset };

				ioctl(c->fd, KDBUS_CMD_FREE, &f);
			}
			continue;
		}
		case 9: case 10: {		/* CONN_INFO, BUS_CREATOR_INFO */
			struct kdbus_cmd_info *i = (void *)buf;

			i->id = get(&in, 1) & 1 ? conns[get(&in, 1) % NCONN].id : val(&in);
			i->attach_flags = val(&in);
			i->flags = val(&in) & 1;
			len = sizeof(*i);
			add_items(&in, buf, &len, 1);
			req = op == 9 ? KDBUS_CMD_CONN_INFO : KDBUS_CMD_BUS_CREATOR_INFO;
			break;
		}
		case 11:			/* UPDATE */
			cmd->flags = val(&in) & 1;
			len = sizeof(*cmd);
			add_items(&in, buf, &len, 3);
			req = KDBUS_CMD_UPDATE;
			break;
		case 12: case 13: {		/* MATCH_ADD / REMOVE */
			struct kdbus_cmd_match *m = (void *)buf;

			m->cookie = get(&in, 1) & 7;
			m->flags = val(&in) & 3;
			len = sizeof(*m);
			add_items(&in, buf, &len, 4);
			req = op == 12 ? KDBUS_CMD_MATCH_ADD : KDBUS_CMD_MATCH_REMOVE;
			break;
		}
		case 14:			/* BYEBYE */
			cmd->flags = val(&in) & 1;
			len = sizeof(*cmd);
			req = KDBUS_CMD_BYEBYE;
			break;
		default:			/* close, or a concurrent thread */
			if (top && (get(&in, 1) & 3) == 0) {
				spawn(&in);
				continue;
			}
			conn_set_fd(c, -1);
			continue;
		}
		cmd->size = (get(&in, 1) & 31) ? len : val(&in);
		ioctl(c->fd, req, buf);
	}
}

static int kcov_fd = -1, kmsg = -1;

static void reset_conns(void)
{
	for (int k = 0; k < NCONN; k++) {
		conn_set_fd(&conns[k], -1);
		conn_set_pool(&conns[k], NULL);
	}
	while (nmaps > 0)
		munmap(maps[--nmaps], 4096);
	/* fds the input created (memfds, eventfds, sockets) */
	for (int fd = 3; fd < 1024; fd++)
		if (fd != 100 && fd != kcov_fd && fd != kmsg)
			close(fd);
}

/* execute one input; return the number of new edges */
static unsigned int execute(const uint8_t *data, size_t n)
{
	unsigned int fresh = 0;
	uint64_t prev = 0, npc;

	__atomic_store_n(&cover[0], 0, __ATOMIC_RELAXED);
	run_input(data, n);
	npc = __atomic_load_n(&cover[0], __ATOMIC_RELAXED);
	reset_conns();
	if (npc > COVER_SIZE - 1)
		npc = COVER_SIZE - 1;
	for (uint64_t k = 0; k < npc; k++) {
		uint64_t pc = cover[k + 1];
		uint32_t e = (uint32_t)((pc ^ (prev >> 1)) * 0x9e3779b97f4a7c15ULL >> (64 - MAP_BITS));

		if (!seen[e]) {
			seen[e] = 1;
			fresh++;
			pc_add(pc);
		}
		prev = pc;
	}
	return fresh;
}

static uint8_t *corpus[MAX_CORPUS];
static size_t corpus_len[MAX_CORPUS];
static int ncorpus;

static void corpus_add(const uint8_t *d, size_t n)
{
	if (ncorpus >= MAX_CORPUS)
		return;
	corpus[ncorpus] = malloc(n ? n : 1);
	memcpy(corpus[ncorpus], d, n);
	corpus_len[ncorpus++] = n;
}

static size_t mutate(uint8_t *d, size_t n, unsigned int *seed)
{
	int rounds = 1 + rand_r(seed) % 6;

	for (int r = 0; r < rounds; r++) {
		size_t pos = n ? rand_r(seed) % n : 0;

		switch (rand_r(seed) % 7) {
		case 0: if (n) d[pos] ^= 1 << (rand_r(seed) % 8); break;
		case 1: if (n) d[pos] = rand_r(seed); break;
		case 2: if (n < MAX_IN) { memmove(d + pos + 1, d + pos, n - pos); d[pos] = rand_r(seed); n++; } break;
		case 3: if (n > 1) { memmove(d + pos, d + pos + 1, n - pos - 1); n--; } break;
		case 4: {	/* splice from another corpus entry */
			int o = ncorpus ? rand_r(seed) % ncorpus : 0;
			size_t l = ncorpus ? corpus_len[o] : 0, take = l ? rand_r(seed) % l : 0;

			if (take && n + take <= MAX_IN) {
				memmove(d + pos + take, d + pos, n - pos);
				memcpy(d + pos, corpus[o], take);
				n += take;
			}
			break;
		}
		case 5: if (n + 8 <= MAX_IN) for (int k = 0; k < 8; k++) d[n++] = rand_r(seed); break;
		default: if (n > 2) n = pos + 1;
		}
	}
	return n;
}

static int worker(int id, unsigned int secs, const char *cdir, const char *odir)
{
	unsigned int seed = getpid() * 2654435761u ^ time(NULL);
	uint8_t d[MAX_IN * 2];
	unsigned long execs = 0, edges = 0;
	time_t start = time(NULL), last = start;
	char slot[512];
	int kfd = open("/sys/kernel/debug/kcov", O_RDWR);
	DIR *dir;

	kcov_fd = kfd;
	if (kfd < 0 || ioctl(kfd, KCOV_INIT_TRACE, COVER_SIZE)) {
		/* a stock kernel: blind (random) fuzzing, unless required */
		perror("kcov");
		if (getenv("KDBUS_FUZZ_NEED_KCOV"))
			return 2;
		cover = calloc(COVER_SIZE, sizeof(long));
	} else {
		cover = mmap(NULL, COVER_SIZE * sizeof(long),
			     PROT_READ | PROT_WRITE, MAP_SHARED, kfd, 0);
		if (cover == MAP_FAILED ||
		    ioctl(kfd, KCOV_ENABLE, KCOV_TRACE_PC)) {
			perror("kcov enable");
			return 2;
		}
	}
	for (int k = 0; k < NCONN; k++)
		conns[k].fd = -1;
	snprintf(slot, sizeof(slot), "/tmp/fuzz-current-%d", id);
	dir = cdir ? opendir(cdir) : NULL;
	for (struct dirent *e; dir && (e = readdir(dir));) {
		char p[1024];
		FILE *f;
		size_t n;

		if (e->d_name[0] == '.' || !strcmp(e->d_name, "README"))
			continue;
		snprintf(p, sizeof(p), "%s/%s", cdir, e->d_name);
		f = fopen(p, "rb");
		if (!f)
			continue;
		n = fread(d, 1, MAX_IN, f);
		fclose(f);
		edges += execute(d, n);
		execs++;
		corpus_add(d, n);
	}
	if (dir)
		closedir(dir);
	if (!ncorpus) {
		static const uint8_t seed0[] = { 0, 0, 1, 0, 4, 0 };

		corpus_add(seed0, sizeof(seed0));
	}
	printf("worker %d: %d seeds, %lu edges\n", id, ncorpus, edges);
	while ((unsigned int)(time(NULL) - start) < secs) {
		int pick = rand_r(&seed) % ncorpus;
		size_t n = corpus_len[pick];
		unsigned int fresh;
		FILE *f;

		memcpy(d, corpus[pick], n);
		n = mutate(d, n, &seed);
		f = fopen(slot, "wb");
		if (f) {
			fwrite(d, 1, n, f);
			fclose(f);
		}
		fresh = execute(d, n);
		execs++;
		/* blind (no KCOV): keep a sample of inputs for diversity */
		if (kfd < 0 && !fresh && (execs & 255) == 0)
			corpus_add(d, n);
		if (fresh) {
			edges += fresh;
			corpus_add(d, n);
			if (odir) {
				char p[1024];

				snprintf(p, sizeof(p), "%s/w%d-%lu", odir, id, execs);
				f = fopen(p, "wb");
				if (f) {
					fwrite(d, 1, n, f);
					fclose(f);
				}
			}
		}
		if (time(NULL) - last >= 10) {
			last = time(NULL);
			printf("worker %d: %lus execs %lu (%.1f/s) edges %lu pcs %u corpus %d\n",
			       id, (unsigned long)(last - start), execs,
			       execs / (double)(last - start), edges, npcs, ncorpus);
			fflush(stdout);
		}
	}
	printf("worker %d: done: execs %lu in %us (%.1f/s), edges %lu, pcs %u, corpus %d\n",
	       id, execs, secs, execs / (double)(secs ? secs : 1), edges, npcs, ncorpus);
	/* for the parent's totals over all workers */
	snprintf(slot, sizeof(slot), "/tmp/fuzz-cover-%d", id);
	FILE *f = fopen(slot, "wb");

	if (f) {
		fprintf(f, "%lu\n", execs);
		fwrite(seen, 1, sizeof(seen), f);
		fwrite(pcs, sizeof(*pcs), 1 << PC_BITS, f);
		fclose(f);
	}
	return 0;
}

/* the union of the workers' coverage */
static void totals(unsigned int workers, unsigned int secs)
{
	static uint8_t s2[1 << MAP_BITS];
	static uint64_t p2[1 << PC_BITS];
	unsigned long execs = 0, total = 0;
	unsigned int edges = 0;

	for (unsigned int w = 0; w < workers; w++) {
		char p[64];
		FILE *f;
		unsigned long e;

		snprintf(p, sizeof(p), "/tmp/fuzz-cover-%u", w);
		f = fopen(p, "rb");
		if (!f)
			continue;
		if (fscanf(f, "%lu\n", &e) == 1 &&
		    fread(s2, 1, sizeof(s2), f) == sizeof(s2) &&
		    fread(p2, sizeof(*p2), 1 << PC_BITS, f) == 1 << PC_BITS) {
			execs += e;
			for (size_t k = 0; k < sizeof(s2); k++)
				seen[k] |= s2[k];
			for (size_t k = 0; k < 1 << PC_BITS; k++)
				if (p2[k])
					pc_add(p2[k]);
		}
		fclose(f);
	}
	for (size_t k = 0; k < sizeof(seen); k++)
		edges += seen[k];
	total = execs;
	printf("fuzz: total: %lu execs in %us (%.1f/s), %u edges, %u kdbus.ko PCs\n",
	       total, secs, total / (double)(secs ? secs : 1), edges, npcs);
}

/*
 * -m FILE: minimise an input that makes the kernel report (KASAN, UBSAN,
 * lockdep, WARN, ...; boot with kasan_multi_shot so KASAN reports every
 * time). The input is replayed up to REPEAT times (races need several
 * tries) and chunks are removed while the report still comes (ddmin over
 * bytes). The result goes to OUT-DIR/min and, as hex, to stdout.
 */
#define REPEAT	20

static int kernel_reported(void)
{
	static const char *const bad[] = {
		"BUG:", "WARNING:", "KASAN", "UBSAN", "Oops",
		"general protection", "possible circular", "possible recursive",
		"inconsistent lock", "list_add corruption", "list_del corruption",
		"refcount_t:", "sleeping function called", "kernel BUG",
	};
	char rec[8192];
	int hit = 0;
	ssize_t n;

	usleep(20000);		/* RCU callbacks, deferred frees */
	while ((n = read(kmsg, rec, sizeof(rec) - 1)) != 0) {
		if (n < 0) {
			if (errno == EPIPE)
				continue;	/* overwritten: read on */
			break;		/* EAGAIN: no more */
		}
		rec[n] = 0;
		for (size_t k = 0; k < sizeof(bad) / sizeof(*bad); k++)
			if (strstr(rec, bad[k]))
				hit = 1;
	}
	return hit;
}

static int reproduces(const uint8_t *d, size_t n)
{
	for (int r = 0; r < REPEAT; r++) {
		run_input(d, n);
		reset_conns();
		if (kernel_reported())
			return 1;
	}
	return 0;
}

static int minimise(const char *file, const char *odir)
{
	uint8_t d[MAX_IN], t[MAX_IN];
	FILE *f = fopen(file, "rb");
	size_t n = f ? fread(d, 1, sizeof(d), f) : 0;
	char p[1024];

	if (!f)
		return 2;
	fclose(f);
	for (int k = 0; k < NCONN; k++)
		conns[k].fd = -1;
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (kmsg < 0) {
		perror("/dev/kmsg");
		return 2;
	}
	lseek(kmsg, 0, SEEK_END);
	if (!reproduces(d, n)) {
		printf("minimise: %s (%zu bytes) does not reproduce alone\n", file, n);
		return 1;
	}
	for (size_t chunk = n / 2; chunk >= 1; chunk /= 2) {
		for (size_t i = 0; i + chunk <= n;) {
			memcpy(t, d, i);
			memcpy(t + i, d + i + chunk, n - i - chunk);
			if (reproduces(t, n - chunk)) {
				n -= chunk;
				memcpy(d, t, n);
			} else {
				i += chunk;
			}
		}
	}
	snprintf(p, sizeof(p), "%s/min", odir ? odir : "/tmp");
	f = fopen(p, "wb");
	if (f) {
		fwrite(d, 1, n, f);
		fclose(f);
	}
	printf("minimise: %zu bytes:", n);
	for (size_t k = 0; k < n; k++)
		printf(" %02x", d[k]);
	printf("\n");
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int secs = 60, workers = 2;
	const char *cdir = NULL, *odir = NULL, *replay = NULL, *mini = NULL;
	char name[64], path[256];
	struct {
		struct kdbus_cmd m;
		uint8_t items[256];
	} __attribute__((aligned(8))) mk = { 0 };
	struct kdbus_item *it;
	int ctl, c, rc = 0;

	while ((c = getopt(argc, argv, "t:j:c:o:r:m:")) != -1) {
		switch (c) {
		case 't': secs = atoi(optarg); break;
		case 'j': workers = atoi(optarg); break;
		case 'c': cdir = optarg; break;
		case 'o': odir = optarg; break;
		case 'r': replay = optarg; break;
		case 'm': mini = optarg; break;
		default:
			fprintf(stderr, "usage: %s [-t SECS] [-j N] [-c DIR] [-o DIR] [-r FILE] [-m FILE]\n", argv[0]);
			return 2;
		}
	}
	/* the bus, owned by the parent for the whole run */
	ctl = open("/sys/fs/kdbus/control", O_RDWR | O_CLOEXEC);
	if (ctl < 0) {
		perror("control");
		return 2;
	}
	snprintf(name, sizeof(name), "%u-fuzz%d", (unsigned int)getuid(), (int)getpid());
	it = (void *)mk.items;
	it->type = KDBUS_ITEM_BLOOM_PARAMETER;
	it->size = ITEM_HDR + sizeof(struct kdbus_bloom_parameter);
	it->bloom_parameter.size = 64;
	it->bloom_parameter.n_hash = 1;
	it = (void *)((uint8_t *)it + ((it->size + 7) & ~7UL));
	it->type = KDBUS_ITEM_MAKE_NAME;
	it->size = ITEM_HDR + strlen(name) + 1;
	strcpy(it->str, name);
	it = (void *)((uint8_t *)it + ((it->size + 7) & ~7UL));
	mk.m.size = (uint8_t *)it - (uint8_t *)&mk;
	mk.m.flags = KDBUS_MAKE_ACCESS_WORLD;
	if (ioctl(ctl, KDBUS_CMD_BUS_MAKE, &mk)) {
		perror("BUS_MAKE");
		return 2;
	}
	snprintf(path, sizeof(path), "/sys/fs/kdbus/%s/bus", name);
	bus_path = path;
	if (dup2(ctl, 100) < 0)
		return 2;
	close(ctl);
	if (mini)
		return minimise(mini, odir);
	if (replay) {
		uint8_t d[MAX_IN];
		FILE *f = fopen(replay, "rb");
		size_t n = f ? fread(d, 1, sizeof(d), f) : 0;

		if (!f)
			return 2;
		fclose(f);
		for (int k = 0; k < NCONN; k++)
			conns[k].fd = -1;
		run_input(d, n);
		printf("replayed %s (%zu bytes)\n", replay, n);
		return 0;
	}
	for (unsigned int w = 0; w < workers; w++) {
		pid_t pid = fork();

		if (pid == 0) {
			int wr = worker(w, secs, cdir, odir);

			fflush(NULL);	/* stdout may be a file: fully buffered */
			_exit(wr);
		}
	}
	for (unsigned int w = 0; w < workers; w++) {
		int st;

		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			printf("a worker failed (status 0x%x)\n", st);
			rc = 1;
		}
	}
	totals(workers, secs);
	return rc;
}
