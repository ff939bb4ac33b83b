// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A sender whose payload page faults slowly stalls only itself (issue 12,
 * defect 1; SECURITY.md "User memory and shared locks"). The payload of
 * an attacker's SEND lies in a page registered with userfaultfd whose
 * handler waits three seconds; meanwhile another process does HELLO,
 * SEND to the same receiver, NAME_ACQUIRE, LIST and close, each of which
 * must finish long before the fault is resolved. Afterwards the stalled
 * message arrives intact.
 */

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

#define STALL_MS	3000
#define BOUND_NS	1000000000ULL	/* each victim operation, under TCG */
#define PAGE		4096

struct uffd_handler {
	int uffd;
	void *page;	/* content to install */
};

/* resolve the first missing-page fault, STALL_MS after it happened */
static void *uffd_handler_main(void *arg)
{
	struct uffd_handler *h = arg;
	struct pollfd pfd = { .fd = h->uffd, .events = POLLIN };
	struct uffdio_copy copy;
	struct uffd_msg msg;

	if (poll(&pfd, 1, 20000) != 1 ||
	    read(h->uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT)
		return NULL;
	kdbus_msleep(STALL_MS);
	copy.dst = msg.arg.pagefault.address & ~(uint64_t)(PAGE - 1);
	copy.src = (uint64_t)(uintptr_t)h->page;
	copy.len = PAGE;
	copy.mode = 0;
	copy.copy = 0;
	ioctl(h->uffd, UFFDIO_COPY, &copy);
	return NULL;
}

/* a page whose first touch waits STALL_MS for the handler thread */
static void *stalling_page(struct uffd_handler *h, pthread_t *thread)
{
	struct uffdio_register reg;
	struct uffdio_api api = { .api = UFFD_API };
	void *area;

	h->uffd = (int)syscall(__NR_userfaultfd, O_CLOEXEC);
	if (h->uffd < 0 || ioctl(h->uffd, UFFDIO_API, &api) < 0)
		return NULL;
	area = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		return NULL;
	reg.range.start = (uint64_t)(uintptr_t)area;
	reg.range.len = PAGE;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(h->uffd, UFFDIO_REGISTER, &reg) < 0)
		return NULL;
	h->page = aligned_alloc(PAGE, PAGE);
	if (!h->page)
		return NULL;
	for (int i = 0; i < PAGE; i++)
		((uint8_t *)h->page)[i] = (uint8_t)(i * 7 + 3);
	if (pthread_create(thread, NULL, uffd_handler_main, h))
		return NULL;
	return area;
}

/* run one victim operation and fail if it took longer than BOUND_NS */
#define TIMED(what, expr) do {						\
		uint64_t _t0 = kdbus_now_ns(), _dt;			\
		ASSERT_OK(expr);					\
		_dt = kdbus_now_ns() - _t0;				\
		if (_dt > BOUND_NS) {					\
			kdbus_diag("%s took %llu ms while another "	\
				   "sender's page faulted", what,	\
				   (unsigned long long)(_dt / 1000000)); \
			return TEST_FAIL;				\
		}							\
	} while (0)

static int list_names(struct kdbus_conn *c)
{
	struct kdbus_cmd_list cmd = {
		.size = sizeof(cmd),
		.flags = KDBUS_LIST_NAMES | KDBUS_LIST_UNIQUE,
	};
	int r = kdbus_ioctl(c->fd, KDBUS_CMD_LIST, &cmd);

	if (r < 0)
		return r;
	return kdbus_free(c, cmd.offset);
}

/* the attacker's stalled SEND: unicast to @dst, or a broadcast */
static int stalled_send(struct kdbus_conn *a, uint64_t dst, void *area)
{
	struct kdbus_msg *m;
	int r;

	if (dst != KDBUS_DST_ID_BROADCAST)
		return kdbus_send(a, dst, 1, 0, 0, 0, area, PAGE);

	m = kdbus_msg_new(KDBUS_DST_ID_BROADCAST, 1, KDBUS_MSG_SIGNAL, 0,
			  area, PAGE);
	{
		uint8_t bloom[8 + KDBUS_DEFAULT_BLOOM] = { 0 };

		cmd_add_item(m, KDBUS_ITEM_BLOOM_FILTER, bloom, sizeof(bloom));
	}
	r = kdbus_send_msg(a->fd, 0, m, NULL);
	cmd_free(m);
	return r;
}

static int fault_stall_run(struct kdbus_test_env *env, bool broadcast)
{
	struct kdbus_conn *recv, *v, *v2;
	struct kdbus_msg *m;
	const uint8_t *data;
	uint64_t off, size, attacker_id = 0;
	int p[2], status, seen_victim = 0, seen_attacker = 0;
	pid_t pid;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &recv));
	if (broadcast) {
		struct kdbus_cmd_match *mt = cmd_new(sizeof(*mt));

		mt->cookie = 1;	/* no rules: every broadcast */
		ASSERT_OK(kdbus_ioctl(recv->fd, KDBUS_CMD_MATCH_ADD, mt));
		cmd_free(mt);
	}
	ASSERT(pipe(p) == 0);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		struct uffd_handler h;
		struct kdbus_conn *a;
		pthread_t thread;
		void *area;
		int r;

		close(p[0]);
		area = stalling_page(&h, &thread);
		if (!area)
			_exit(TEST_SKIP);
		if (kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a) < 0)
			_exit(TEST_FAIL);
		if (write(p[1], &a->id, sizeof(a->id)) != sizeof(a->id))
			_exit(TEST_FAIL);
		/* blocks on the page until the handler resolves it */
		r = stalled_send(a, broadcast ? KDBUS_DST_ID_BROADCAST :
				 recv->id, area);
		pthread_join(thread, NULL);
		_exit(r == 0 ? TEST_OK : TEST_FAIL);
	}
	close(p[1]);
	ASSERT(read(p[0], &attacker_id, sizeof(attacker_id)) ==
	       sizeof(attacker_id));
	close(p[0]);
	/* let the attacker enter SEND and hit the fault */
	kdbus_msleep(300);

	TIMED("HELLO", kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &v));
	TIMED("SEND to the same receiver",
	      kdbus_send(v, recv->id, 2, 0, 0, 0, "victim", 6));
	TIMED("NAME_ACQUIRE", kn_acquire(v, "org.kdbus.test.Stall", 0, NULL));
	TIMED("LIST", list_names(v));
	TIMED("HELLO", kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &v2));
	{
		uint64_t t0 = kdbus_now_ns();

		kdbus_conn_free(v2);	/* close */
		if (kdbus_now_ns() - t0 > BOUND_NS) {
			kdbus_diag("close took too long");
			return TEST_FAIL;
		}
	}

	ASSERT(waitpid(pid, &status, 0) == pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == TEST_SKIP) {
		kdbus_test_skip_reason("userfaultfd is not available");
		return TEST_SKIP;
	}
	ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == TEST_OK);

	/* both messages arrived; the stalled one intact */
	while (kdbus_recv_msg(recv, 0, 0, &m, &off) == 0) {
		if (m->src_id == v->id) {
			seen_victim++;
		} else if (m->src_id == attacker_id) {
			data = kdbus_msg_payload(m, 0, &size);
			ASSERT(data && size == PAGE);
			for (int i = 0; i < PAGE; i++)
				ASSERT_EQ(data[i], (uint8_t)(i * 7 + 3));
			seen_attacker++;
		}
		ASSERT_OK(kdbus_free(recv, off));
	}
	ASSERT_EQ(seen_victim, 1);
	ASSERT_EQ(seen_attacker, 1);
	kdbus_conn_free(v);
	kdbus_conn_free(recv);
	return TEST_OK;
}

KDBUS_TEST_FULL(fault_stall, victim_unaffected, 0, 60)
{
	return fault_stall_run(env, false);
}

/* the same while the stalled message is a broadcast */
KDBUS_TEST_FULL(fault_stall, victim_unaffected_broadcast, 0, 60)
{
	return fault_stall_run(env, true);
}
