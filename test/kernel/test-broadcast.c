// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Broadcast signals (kdbus.message(7), kdbus.match(7)): one copy per
 * receiver whose matches accept the message and none for the others, the
 * bloom size check, the sender as a receiver, one global order for
 * concurrent broadcasters, and a full receiver losing a broadcast and
 * reporting it in dropped_msgs (kdbus.message(7)) without blocking anyone.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

#include "../../lib/bloom.h"

#define BLOOM_WORDS (KDBUS_DEFAULT_BLOOM / 8)

static int add_match(struct kdbus_conn *c, uint64_t cookie,
		     const uint64_t *mask)
{
	struct kdbus_cmd_match *m = cmd_new(sizeof(*m));
	int r;

	m->cookie = cookie;
	if (mask)
		cmd_add_item(m, KDBUS_ITEM_BLOOM_MASK, mask,
			     KDBUS_DEFAULT_BLOOM);
	r = kdbus_ioctl(c->fd, KDBUS_CMD_MATCH_ADD, m);
	cmd_free(m);
	return r;
}

static int send_bloom(int fd, uint64_t dst, uint64_t cookie,
		      const uint64_t *filter, size_t filter_size)
{
	struct kdbus_msg *m = kdbus_msg_new(dst, cookie, KDBUS_MSG_SIGNAL, 0,
					    "broadcast", 9);
	struct kdbus_item *it;
	int r;

	it = cmd_add_item(m, KDBUS_ITEM_BLOOM_FILTER, NULL,
			  sizeof(struct kdbus_bloom_filter) + filter_size);
	it->bloom_filter.generation = 0;
	memcpy(it->bloom_filter.data, filter, filter_size);
	r = kdbus_send_msg(fd, 0, m, NULL);
	cmd_free(m);
	return r;
}

static void bloom_of(uint64_t *data, const char *member)
{
	struct kdbus_bloom b;

	kdbus_bloom_init(&b, data, KDBUS_DEFAULT_BLOOM, 1);
	kdbus_bloom_add_message_type(&b, "signal");
	kdbus_bloom_add_interface(&b, "org.example.Broadcast");
	kdbus_bloom_add_member(&b, member);
}

/* receive one message; *cookie and *src of it */
static int recv_one(struct kdbus_conn *c, uint64_t *src, uint64_t *cookie)
{
	struct kdbus_msg *msg;
	uint64_t off;
	int r;

	r = kdbus_recv_msg(c, 0, 0, &msg, &off);
	if (r < 0)
		return r;
	*src = msg->src_id;
	*cookie = msg->cookie;
	return kdbus_free(c, off);
}

/* the bloom size must equal the bus's: EDOM, EFAULT (kdbus.message(7)) */
KDBUS_TEST(broadcast, bloom_size, 0)
{
	uint64_t filter[2 * BLOOM_WORDS] = { 0 };
	struct kdbus_conn *a;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	ASSERT_OK(add_match(a, 1, NULL));

	ASSERT_ERR(send_bloom(a->fd, KDBUS_DST_ID_BROADCAST, 1, filter,
			      KDBUS_DEFAULT_BLOOM / 2), EDOM);
	ASSERT_ERR(send_bloom(a->fd, KDBUS_DST_ID_BROADCAST, 1, filter,
			      KDBUS_DEFAULT_BLOOM * 2), EDOM);
	ASSERT_ERR(send_bloom(a->fd, KDBUS_DST_ID_BROADCAST, 1, filter,
			      KDBUS_DEFAULT_BLOOM - 4), EFAULT);
	ASSERT_ERR(kdbus_recv(a, 0, 0, NULL), EAGAIN);

	/* the right size reaches the sender itself through its match */
	ASSERT_OK(send_bloom(a->fd, KDBUS_DST_ID_BROADCAST, 2, filter,
			     KDBUS_DEFAULT_BLOOM));
	{
		uint64_t src, cookie;

		ASSERT_OK(recv_one(a, &src, &cookie));
		ASSERT_EQ(src, a->id);
		ASSERT_EQ(cookie, 2);
	}
	ASSERT_ERR(kdbus_recv(a, 0, 0, NULL), EAGAIN);

	kdbus_conn_free(a);
	return TEST_OK;
}

#define N_CONNS		1000
#define N_MATCHING	10

/* 1,000 connections of which 10 match: exactly 10 copies */
KDBUS_TEST_FULL(broadcast, thousand_ten_match, 0, 600)
{
	uint64_t want[BLOOM_WORDS], other[BLOOM_WORDS];
	static struct kdbus_conn *c[N_CONNS];
	struct kdbus_conn *sender;
	unsigned int i, got = 0;

	bloom_of(want, "Wanted");
	bloom_of(other, "Other");
	ASSERT(!kdbus_bloom_match(want, 0, other, 1, KDBUS_DEFAULT_BLOOM));

	ASSERT_OK(kdbus_raise_nofile(N_CONNS + 64));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL,
			      &sender));

	for (i = 0; i < N_CONNS; i++) {
		ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 4,
				      &c[i]));
		/* every 100th wants it, the others subscribe to something else */
		if (i % (N_CONNS / N_MATCHING) == 0)
			ASSERT_OK(add_match(c[i], 1, want));
		else if (i % 2)
			ASSERT_OK(add_match(c[i], 1, other));
	}

	ASSERT_OK(send_bloom(sender->fd, KDBUS_DST_ID_BROADCAST, 77, want,
			     KDBUS_DEFAULT_BLOOM));

	for (i = 0; i < N_CONNS; i++) {
		struct kdbus_cmd_recv rc;
		uint64_t src, cookie;
		int r;

		if (i % (N_CONNS / N_MATCHING) == 0) {
			ASSERT_OK(recv_one(c[i], &src, &cookie));
			ASSERT_EQ(src, sender->id);
			ASSERT_EQ(cookie, 77);
			got++;
		}
		r = kdbus_recv(c[i], 0, 0, &rc);
		if (r != -EAGAIN)
			FAIL("connection %u: expected EAGAIN, got %d", i, r);
		ASSERT_EQ(rc.dropped_msgs, 0);
	}
	ASSERT_EQ(got, N_MATCHING);
	ASSERT_ERR(kdbus_recv(sender, 0, 0, NULL), EAGAIN);

	for (i = 0; i < N_CONNS; i++)
		kdbus_conn_free(c[i]);
	kdbus_conn_free(sender);
	return TEST_OK;
}

#define N_RECEIVERS	4
#define N_PER_SENDER	100

/* two concurrent broadcasters: every receiver sees the same order */
KDBUS_TEST_FULL(broadcast, concurrent_order, 0, 300)
{
	static uint64_t seen[N_RECEIVERS][2 * N_PER_SENDER][2];
	struct kdbus_conn *r[N_RECEIVERS], *s[2];
	uint64_t zero[BLOOM_WORDS] = { 0 };
	uint64_t next[2] = { 0, 0 };
	unsigned int i, j;
	pid_t pid[2];

	for (i = 0; i < 2; i++)
		ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL,
				      &s[i]));
	for (i = 0; i < N_RECEIVERS; i++) {
		ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL,
				      &r[i]));
		ASSERT_OK(add_match(r[i], 1, zero));
	}

	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		ASSERT(pid[i] >= 0);
		if (pid[i] == 0) {
			for (j = 1; j <= N_PER_SENDER; j++)
				if (send_bloom(s[i]->fd, KDBUS_DST_ID_BROADCAST,
					       j, zero, KDBUS_DEFAULT_BLOOM))
					_exit(TEST_FAIL);
			_exit(TEST_OK);
		}
	}
	for (i = 0; i < 2; i++)
		ASSERT_EQ(kdbus_wait_child(pid[i]), TEST_OK);

	for (i = 0; i < N_RECEIVERS; i++) {
		for (j = 0; j < 2 * N_PER_SENDER; j++)
			ASSERT_OK(recv_one(r[i], &seen[i][j][0],
					   &seen[i][j][1]));
		ASSERT_ERR(kdbus_recv(r[i], 0, 0, NULL), EAGAIN);
	}

	/* each sender's broadcasts in its order, all receivers alike */
	for (j = 0; j < 2 * N_PER_SENDER; j++) {
		unsigned int k = seen[0][j][0] == s[0]->id ? 0 : 1;

		ASSERT_EQ(seen[0][j][0], s[k]->id);
		ASSERT_EQ(seen[0][j][1], ++next[k]);
		for (i = 1; i < N_RECEIVERS; i++) {
			ASSERT_EQ(seen[i][j][0], seen[0][j][0]);
			ASSERT_EQ(seen[i][j][1], seen[0][j][1]);
		}
	}

	for (i = 0; i < N_RECEIVERS; i++)
		kdbus_conn_free(r[i]);
	for (i = 0; i < 2; i++)
		kdbus_conn_free(s[i]);
	return TEST_OK;
}

#define N_FLOOD 40

/*
 * A receiver whose pool share is exhausted loses broadcasts and reports
 * them in dropped_msgs; the sender and the other receivers go on. A
 * unicast signal it cannot take is lost silently, without a count.
 */
KDBUS_TEST(broadcast, full_receiver_drops, 0)
{
	struct kdbus_conn *a, *small, *big;
	uint64_t zero[BLOOM_WORDS] = { 0 };
	struct kdbus_cmd_recv rc;
	unsigned int i, n = 0;
	uint64_t src, cookie;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE, &small));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &big));
	ASSERT_OK(add_match(small, 1, zero));
	ASSERT_OK(add_match(big, 1, zero));

	for (i = 1; i <= N_FLOOD; i++)
		ASSERT_OK(send_bloom(a->fd, KDBUS_DST_ID_BROADCAST, i, zero,
				     KDBUS_DEFAULT_BLOOM));

	/* the big one got every broadcast, in order, and lost nothing */
	for (i = 1; i <= N_FLOOD; i++) {
		ASSERT_OK(kdbus_recv(big, 0, 0, &rc));
		ASSERT_EQ(rc.dropped_msgs, 0);
		ASSERT_EQ(rc.return_flags, 0);
		cookie = ((struct kdbus_msg *)(big->pool + rc.msg.offset))->cookie;
		ASSERT_EQ(cookie, i);
		ASSERT_OK(kdbus_free(big, rc.msg.offset));
	}

	/* the small one: the first RECV reports what it lost */
	ASSERT_OK(kdbus_recv(small, 0, 0, &rc));
	ASSERT(rc.dropped_msgs > 0);
	ASSERT(rc.return_flags & KDBUS_RECV_RETURN_DROPPED_MSGS);
	ASSERT_EQ(((struct kdbus_msg *)(small->pool + rc.msg.offset))->cookie,
		  1);
	ASSERT_OK(kdbus_free(small, rc.msg.offset));
	n = 1;
	while (recv_one(small, &src, &cookie) == 0) {
		ASSERT_EQ(cookie, ++n);
	}
	ASSERT_EQ(n + rc.dropped_msgs, N_FLOOD);

	/* the counter was reset by the read */
	ASSERT_ERR(kdbus_recv(small, 0, 0, &rc), EAGAIN);
	ASSERT_EQ(rc.dropped_msgs, 0);
	ASSERT_EQ(rc.return_flags, 0);

	/* refill, then a unicast signal that does not fit: not counted */
	for (i = 1; i <= N_FLOOD; i++)
		ASSERT_OK(send_bloom(a->fd, small->id, 100 + i, zero,
				     KDBUS_DEFAULT_BLOOM));
	i = 0;
	while (kdbus_recv(small, 0, 0, &rc) == 0) {
		ASSERT_EQ(rc.dropped_msgs, 0);
		ASSERT_OK(kdbus_free(small, rc.msg.offset));
		i++;
	}
	ASSERT(i > 0 && i < N_FLOOD);
	ASSERT_EQ(rc.dropped_msgs, 0);

	kdbus_conn_free(big);
	kdbus_conn_free(small);
	kdbus_conn_free(a);
	return TEST_OK;
}
