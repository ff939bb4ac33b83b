// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unicast messages (kdbus.message(7)): SEND/RECV/FREE, message validation,
 * the delivered layout, payload sizes and limits, PEEK/DROP/priorities, fd
 * passing, poll, ordering.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

static int pair(struct kdbus_test_env *env, uint64_t flags_b,
		uint64_t attach_b, size_t pool_b, struct kdbus_conn **a,
		struct kdbus_conn **b)
{
	int r = kdbus_hello(env->bus_path, KDBUS_HELLO_ACCEPT_FD, 0,
			    KDBUS_DEFAULT_POOL, a);

	if (r < 0)
		return r;
	return kdbus_hello(env->bus_path, flags_b, attach_b, pool_b, b);
}

/* send one prepared message */
static long send_msg(struct kdbus_conn *c, struct kdbus_msg *m)
{
	return kdbus_send_msg(c->fd, 0, m, NULL);
}

KDBUS_TEST(message, ping_pong, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_msg *m;
	struct kdbus_cmd_send cmd;
	const uint8_t *p;
	uint64_t off, sz;
	uint64_t deadline = kdbus_now_ns() + 5000000000ULL;
	struct kdbus_msg *req;

	ASSERT_OK(pair(env, 0, 0, KDBUS_DEFAULT_POOL, &a, &b));
	req = kdbus_msg_new(b->id, 0xc0ffee, KDBUS_MSG_EXPECT_REPLY, deadline,
			    "ping", 4);
	req->priority = 0;
	ASSERT_OK(kdbus_send_msg(a->fd, 0, req, &cmd));
	/* async: reply field says "no slice" */
	ASSERT_EQ(cmd.reply.offset, a->pool_size);
	ASSERT_EQ(cmd.reply.msg_size, 0);
	ASSERT_EQ(cmd.return_flags, 0);
	/* the sender's message is not modified */
	ASSERT_EQ(req->src_id, 0);
	cmd_free(req);

	ASSERT_OK(kdbus_wait_recv(b, 1000, &m, &off));
	ASSERT_EQ(m->src_id, a->id);
	ASSERT_EQ(m->dst_id, b->id);
	ASSERT_EQ(m->cookie, 0xc0ffee);
	ASSERT_EQ(m->flags, KDBUS_MSG_EXPECT_REPLY);
	ASSERT_EQ(m->timeout_ns, deadline);
	ASSERT_EQ(m->payload_type, KDBUS_PAYLOAD_DBUS);
	p = kdbus_msg_payload(m, 0, &sz);
	ASSERT(p);
	ASSERT_EQ(sz, 4);
	ASSERT(!memcmp(p, "ping", 4));
	ASSERT_OK(kdbus_free(b, off));

	ASSERT_OK(kdbus_send(b, a->id, 77, 0, 0xc0ffee, 0, "pong", 4));
	ASSERT_OK(kdbus_wait_recv(a, 1000, &m, &off));
	ASSERT_EQ(m->src_id, b->id);
	ASSERT_EQ(m->cookie_reply, 0xc0ffee);
	ASSERT_EQ(m->cookie, 77);
	p = kdbus_msg_payload(m, 0, &sz);
	ASSERT(p && sz == 4 && !memcmp(p, "pong", 4));
	ASSERT_OK(kdbus_free(a, off));
	/* nothing else */
	ASSERT_ERR(kdbus_recv(a, 0, 0, NULL), EAGAIN);
	ASSERT_ERR(kdbus_recv(b, 0, 0, NULL), EAGAIN);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* the worked example of kdbus.message(7), byte by byte */
KDBUS_TEST(message, layout_worked_example, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_msg *m, *r;
	struct kdbus_item *it;
	struct kdbus_cmd_recv rc;
	static const char data[5] = "abcde";
	struct kdbus_vec pad = { .size = 3, .address = 0 };
	uint8_t *bytes;
	int i;

	ASSERT_OK(pair(env, 0, KDBUS_ATTACH_TIMESTAMP, KDBUS_DEFAULT_POOL,
		       &a, &b));
	m = kdbus_msg_new(b->id, 1, 0, 0, data, 5);
	ASSERT_EQ(m->size, 96);
	ASSERT_OK(send_msg(a, m));
	ASSERT_OK(kdbus_recv(b, 0, 0, &rc));
	r = (struct kdbus_msg *)(b->pool + rc.msg.offset);
	ASSERT_EQ(r->size, 136);
	ASSERT_EQ(rc.msg.msg_size, 144);
	it = r->items;
	ASSERT_EQ(it->type, KDBUS_ITEM_PAYLOAD_OFF);
	ASSERT_EQ(it->size, 32);
	ASSERT_EQ(it->vec.size, 5);
	ASSERT_EQ(it->vec.offset, 136);
	it = KDBUS_ITEM_NEXT(it);
	ASSERT_EQ((uint8_t *)it - (uint8_t *)r, 96);
	ASSERT_EQ(it->type, KDBUS_ITEM_TIMESTAMP);
	ASSERT_EQ(it->size, 40);
	ASSERT(it->timestamp.seqnum > 0);
	ASSERT(it->timestamp.monotonic_ns > 0);
	ASSERT(it->timestamp.realtime_ns > 0);
	bytes = (uint8_t *)r;
	ASSERT(!memcmp(bytes + 136, data, 5));
	for (i = 141; i < 144; i++)
		ASSERT_EQ(bytes[i], 0);
	ASSERT_OK(kdbus_free(b, rc.msg.offset));

	/* plus a padding-only chunk of 3 */
	cmd_add_item(m, KDBUS_ITEM_PAYLOAD_VEC, &pad, sizeof(pad));
	ASSERT_OK(send_msg(a, m));
	ASSERT_OK(kdbus_recv(b, 0, 0, &rc));
	r = (struct kdbus_msg *)(b->pool + rc.msg.offset);
	bytes = (uint8_t *)r;
	ASSERT_EQ(r->size, 168);
	ASSERT_EQ(rc.msg.msg_size, 176);
	it = KDBUS_ITEM_NEXT(r->items);
	ASSERT_EQ((uint8_t *)it - bytes, 96);
	ASSERT_EQ(it->type, KDBUS_ITEM_PAYLOAD_OFF);
	ASSERT_EQ(it->vec.size, 3);
	ASSERT_EQ(it->vec.offset, ~0ULL);
	ASSERT_EQ(r->items[0].vec.offset, 168);
	it = KDBUS_ITEM_NEXT(it);
	ASSERT_EQ((uint8_t *)it - bytes, 128);
	ASSERT_EQ(it->type, KDBUS_ITEM_TIMESTAMP);
	ASSERT(!memcmp(bytes + 168, data, 5));
	for (i = 173; i < 176; i++)
		ASSERT_EQ(bytes[i], 0);
	ASSERT_OK(kdbus_free(b, rc.msg.offset));
	cmd_free(m);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* payloads of 0 B, 1 B, 8 KiB, exactly 2 MiB; 2 MiB + 1 is EMSGSIZE */
KDBUS_TEST(message, payload_sizes, 0)
{
	static const size_t sizes[] = { 0, 1, 7, 8, 8192,
					KDBUS_MSG_MAX_PAYLOAD_VEC_SIZE };
	struct kdbus_conn *a, *b;
	uint8_t *buf;
	size_t i, k;

	ASSERT_OK(pair(env, 0, 0, 16 * 1024 * 1024, &a, &b));
	buf = malloc(KDBUS_MSG_MAX_PAYLOAD_VEC_SIZE + 16);
	ASSERT(buf);
	for (k = 0; k < KDBUS_MSG_MAX_PAYLOAD_VEC_SIZE + 16; k++)
		buf[k] = (uint8_t)(k * 7 + 3);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct kdbus_cmd_recv rc;
		struct kdbus_msg *m;
		const uint8_t *p;
		uint64_t sz = 0;

		ASSERT_OK(kdbus_send(a, b->id, i + 1, 0, 0, 0, buf, sizes[i]));
		ASSERT_OK(kdbus_recv(b, 0, 0, &rc));
		m = (struct kdbus_msg *)(b->pool + rc.msg.offset);
		ASSERT_EQ(m->cookie, i + 1);
		p = kdbus_msg_payload(m, 0, &sz);
		if (sizes[i] == 0) {
			ASSERT(!p);
			ASSERT_EQ(rc.msg.msg_size, KDBUS_ALIGN8(m->size));
		} else {
			ASSERT(p);
			ASSERT_EQ(sz, sizes[i]);
			ASSERT(!memcmp(p, buf, sizes[i]));
			ASSERT_EQ(rc.msg.msg_size,
				  KDBUS_ALIGN8(KDBUS_ALIGN8(m->size) + sizes[i]));
		}
		ASSERT_OK(kdbus_free(b, rc.msg.offset));
	}
	/* just over the limit, in one vec and split over two */
	ASSERT_ERR(kdbus_send(a, b->id, 99, 0, 0, 0, buf,
			      KDBUS_MSG_MAX_PAYLOAD_VEC_SIZE + 1), EMSGSIZE);
	{
		struct kdbus_msg *m = kdbus_msg_new(b->id, 100, 0, 0, buf,
						    KDBUS_MSG_MAX_PAYLOAD_VEC_SIZE);
		struct kdbus_vec v = { .size = 1, .address = 0 };

		/* a NULL vec counts against the limit too */
		cmd_add_item(m, KDBUS_ITEM_PAYLOAD_VEC, &v, sizeof(v));
		ASSERT_ERR(send_msg(a, m), EMSGSIZE);
		/* overflow of the running total */
		m->items[0].vec.size = ~0ULL - 4;
		ASSERT_ERR(send_msg(a, m), EMSGSIZE);
		cmd_free(m);
	}
	ASSERT_ERR(kdbus_recv(b, 0, 0, NULL), EAGAIN);
	free(buf);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* message header + items: 32768 accepted, 32769 EMSGSIZE; many vecs */
KDBUS_TEST(message, many_vecs_and_max_size, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_msg *m, *r;
	struct kdbus_cmd_recv rc;
	uint8_t *data;
	uint64_t total = 0, expect_off;
	struct kdbus_item *it;
	unsigned int i, nvec = (KDBUS_CMD_MAX_SIZE - sizeof(*m)) / 32;

	ASSERT_OK(pair(env, 0, 0, 8 * 1024 * 1024, &a, &b));
	data = malloc(nvec * 3 + 16);
	ASSERT(data);
	for (i = 0; i < nvec * 3; i++)
		data[i] = (uint8_t)i;
	m = kdbus_msg_new(b->id, 1, 0, 0, NULL, 0);
	for (i = 0; i < nvec; i++) {
		struct kdbus_vec v = { .size = 1 + i % 3,
				       .address = (uintptr_t)(data + total) };

		total += v.size;
		cmd_add_item(m, KDBUS_ITEM_PAYLOAD_VEC, &v, sizeof(v));
	}
	ASSERT_EQ(m->size, KDBUS_CMD_MAX_SIZE);
	ASSERT_OK(send_msg(a, m));
	ASSERT_OK(kdbus_recv(b, 0, 0, &rc));
	r = (struct kdbus_msg *)(b->pool + rc.msg.offset);
	expect_off = KDBUS_ALIGN8(r->size);
	i = 0;
	KDBUS_ITEM_FOREACH(it, r->items, KDBUS_MSG_ITEMS_LEN(r)) {
		if (it->type != KDBUS_ITEM_PAYLOAD_OFF)
			continue;
		ASSERT_EQ(it->vec.size, 1 + i % 3);
		ASSERT_EQ(it->vec.offset, expect_off);
		expect_off += it->vec.size;
		i++;
	}
	ASSERT_EQ(i, nvec);
	ASSERT(!memcmp((uint8_t *)r + KDBUS_ALIGN8(r->size), data, total));
	ASSERT_OK(kdbus_free(b, rc.msg.offset));
	/* one byte more */
	m->size = KDBUS_CMD_MAX_SIZE + 1;
	ASSERT_ERR(send_msg(a, m), EMSGSIZE);
	cmd_free(m);
	free(data);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* a bad vec address fails with EFAULT and queues nothing */
KDBUS_TEST(message, bad_vec_address, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_msg *m;
	uint8_t *page;

	ASSERT_OK(pair(env, 0, 0, KDBUS_DEFAULT_POOL, &a, &b));
	m = kdbus_msg_new(b->id, 1, 0, 0, "x", 1);
	m->items[0].vec.address = 8;
	ASSERT_ERR(send_msg(a, m), EFAULT);
	m->items[0].vec.address = ~0ULL - 16;
	ASSERT_ERR(send_msg(a, m), EFAULT);
	/* kernel address */
	m->items[0].vec.address = 0xffffffff81000000ULL;
	ASSERT_ERR(send_msg(a, m), EFAULT);
	/* partly unmapped range */
	page = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT(page != MAP_FAILED);
	munmap(page + 4096, 4096);
	m->items[0].vec.address = (uintptr_t)(page + 4000);
	m->items[0].vec.size = 200;
	ASSERT_ERR(send_msg(a, m), EFAULT);
	munmap(page, 4096);
	/* nothing queued; msg_address itself bad or misaligned */
	ASSERT_ERR(kdbus_send_msg(a->fd, 0, (struct kdbus_msg *)8, NULL),
		   EFAULT);
	ASSERT_ERR(kdbus_send_msg(a->fd, 0,
				  (struct kdbus_msg *)((uint8_t *)m + 4), NULL),
		   EFAULT);
	ASSERT_ERR(kdbus_recv(b, 0, 0, NULL), EAGAIN);
	/* the receiver's poll shows nothing either */
	ASSERT_EQ(kdbus_wait_readable(b->fd, 0), 0);
	cmd_free(m);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* header validation of kdbus.message(7) */
KDBUS_TEST(message, validation, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_msg *m;
	struct kdbus_cmd_send cmd;
	uint64_t dl = kdbus_now_ns() + 10000000000ULL;

	ASSERT_OK(pair(env, 0, 0, KDBUS_DEFAULT_POOL, &a, &b));
#define NEWMSG(dst, flags, w56) do {					\
		m = kdbus_msg_new((dst), 1, (flags), (w56), "x", 1);	\
	} while (0)
	/* src_id: 0 or own id */
	NEWMSG(b->id, 0, 0);
	m->src_id = b->id;
	ASSERT_ERR(send_msg(a, m), EINVAL);
	m->src_id = a->id;
	ASSERT_OK(send_msg(a, m));
	cmd_free(m);
	/* payload_type 0 is the kernel's */
	NEWMSG(b->id, 0, 0);
	m->payload_type = KDBUS_PAYLOAD_KERNEL;
	ASSERT_ERR(send_msg(a, m), EINVAL);
	m->payload_type = 0x1234;	/* any other value is fine */
	ASSERT_OK(send_msg(a, m));
	cmd_free(m);
	/* unknown message flag */
	NEWMSG(b->id, 1ULL << 3, 0);
	ASSERT_ERR(send_msg(a, m), EINVAL);
	cmd_free(m);
	/* broadcast without SIGNAL */
	NEWMSG(KDBUS_DST_ID_BROADCAST, 0, 0);
	ASSERT_ERR(send_msg(a, m), EBADMSG);
	cmd_free(m);
	/* EXPECT_REPLY without timeout */
	NEWMSG(b->id, KDBUS_MSG_EXPECT_REPLY, 0);
	ASSERT_ERR(send_msg(a, m), EINVAL);
	cmd_free(m);
	/* EXPECT_REPLY with SIGNAL */
	NEWMSG(b->id, KDBUS_MSG_EXPECT_REPLY | KDBUS_MSG_SIGNAL, dl);
	ASSERT_ERR(send_msg(a, m), ENOTUNIQ);
	cmd_free(m);
	/* SYNC without EXPECT_REPLY */
	NEWMSG(b->id, 0, 0);
	ASSERT_ERR(kdbus_send_msg(a->fd, KDBUS_SEND_SYNC_REPLY, m, NULL),
		   EINVAL);
	cmd_free(m);
	/* a reply marked as signal */
	NEWMSG(b->id, KDBUS_MSG_SIGNAL, 5);
	ASSERT_ERR(send_msg(a, m), EINVAL);
	cmd_free(m);
	/* SIGNAL without bloom filter */
	NEWMSG(b->id, KDBUS_MSG_SIGNAL, 0);
	ASSERT_ERR(send_msg(a, m), EBADMSG);
	cmd_free(m);
	/* dst KDBUS_DST_ID_NAME without DST_NAME */
	NEWMSG(KDBUS_DST_ID_NAME, 0, 0);
	ASSERT_ERR(send_msg(a, m), EDESTADDRREQ);
	/* invalid DST_NAME */
	cmd_add_str(m, KDBUS_ITEM_DST_NAME, "not-a-name");
	ASSERT_ERR(send_msg(a, m), EINVAL);
	cmd_free(m);
	NEWMSG(KDBUS_DST_ID_NAME, 0, 0);
	cmd_add_str(m, KDBUS_ITEM_DST_NAME, "org.example.nobody");
	ASSERT_ERR(send_msg(a, m), ESRCH);
	cmd_free(m);
	/* unknown destination id */
	NEWMSG(b->id + 1000, 0, 0);
	ASSERT_ERR(send_msg(a, m), ENXIO);
	cmd_free(m);
	/* a vec of size 0 */
	NEWMSG(b->id, 0, 0);
	m->items[0].vec.size = 0;
	ASSERT_ERR(send_msg(a, m), EINVAL);
	cmd_free(m);
	/* PAYLOAD_OFF is kernel-to-user only; other foreign items */
	NEWMSG(b->id, 0, 0);
	m->items[0].type = KDBUS_ITEM_PAYLOAD_OFF;
	ASSERT_ERR(send_msg(a, m), EINVAL);
	cmd_free(m);
	NEWMSG(b->id, 0, 0);
	cmd_add_str(m, KDBUS_ITEM_NAME, "org.example.foo");
	ASSERT_ERR(send_msg(a, m), EINVAL);
	cmd_free(m);
	/* duplicate DST_NAME: rejected by the parser (EINVAL) */
	NEWMSG(KDBUS_DST_ID_NAME, 0, 0);
	cmd_add_str(m, KDBUS_ITEM_DST_NAME, "org.example.a");
	cmd_add_str(m, KDBUS_ITEM_DST_NAME, "org.example.a");
	ASSERT_ERR(send_msg(a, m), EINVAL);
	cmd_free(m);
	/* NEGOTIATE item in a message that does not negotiate */
	NEWMSG(b->id, 0, 0);
	cmd_add_u64(m, KDBUS_ITEM_NEGOTIATE, KDBUS_ITEM_FDS);
	ASSERT_ERR(send_msg(a, m), EINVAL);
	cmd_free(m);
	/* message NEGOTIATE without the command's */
	NEWMSG(b->id, KDBUS_FLAG_NEGOTIATE, 0);
	ASSERT_ERR(send_msg(a, m), EINVAL);
	cmd_free(m);
	/* message size below the header */
	NEWMSG(b->id, 0, 0);
	m->size = 63;
	ASSERT_ERR(send_msg(a, m), EINVAL);
	cmd_free(m);
	/* command flags */
	NEWMSG(b->id, 0, 0);
	ASSERT_ERR(kdbus_send_msg(a->fd, 2, m, &cmd), EINVAL);
	cmd_free(m);
#undef NEWMSG
	/* only the two good sends arrived */
	ASSERT_OK(kdbus_recv(b, KDBUS_RECV_DROP, 0, NULL));
	ASSERT_OK(kdbus_recv(b, KDBUS_RECV_DROP, 0, NULL));
	ASSERT_ERR(kdbus_recv(b, 0, 0, NULL), EAGAIN);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

KDBUS_TEST(message, negotiate, 0)
{
	struct kdbus_cmd_send cmd = { .size = sizeof(cmd) };
	struct kdbus_conn *a, *b;
	struct kdbus_msg *m;
	struct kdbus_item *it;
	uint64_t v[] = { KDBUS_ITEM_PAYLOAD_VEC, KDBUS_ITEM_PAYLOAD_MEMFD,
			 KDBUS_ITEM_FDS, KDBUS_ITEM_BLOOM_FILTER,
			 KDBUS_ITEM_DST_NAME, KDBUS_ITEM_NAME,
			 KDBUS_ITEM_PAYLOAD_OFF, KDBUS_ITEM_CANCEL_FD };

	ASSERT_OK(pair(env, 0, 0, KDBUS_DEFAULT_POOL, &a, &b));
	/* command only */
	cmd.flags = KDBUS_FLAG_NEGOTIATE;
	ASSERT_OK(kdbus_ioctl(a->fd, KDBUS_CMD_SEND, &cmd));
	ASSERT_EQ(cmd.flags, KDBUS_SEND_SYNC_REPLY);
	/* command and message */
	m = kdbus_msg_new(b->id, 1, KDBUS_FLAG_NEGOTIATE, 0, "x", 1);
	it = cmd_add_item(m, KDBUS_ITEM_NEGOTIATE, v, sizeof(v));
	cmd.flags = KDBUS_FLAG_NEGOTIATE;
	cmd.msg_address = (uintptr_t)m;
	ASSERT_OK(kdbus_ioctl(a->fd, KDBUS_CMD_SEND, &cmd));
	ASSERT_EQ(m->flags, 0x7);
	ASSERT_EQ(it->data64[0], KDBUS_ITEM_PAYLOAD_VEC);
	ASSERT_EQ(it->data64[1], KDBUS_ITEM_PAYLOAD_MEMFD);
	ASSERT_EQ(it->data64[2], KDBUS_ITEM_FDS);
	ASSERT_EQ(it->data64[3], KDBUS_ITEM_BLOOM_FILTER);
	ASSERT_EQ(it->data64[4], KDBUS_ITEM_DST_NAME);
	ASSERT_EQ(it->data64[5], 0);
	ASSERT_EQ(it->data64[6], 0);
	ASSERT_EQ(it->data64[7], 0);
	/* nothing was sent */
	ASSERT_ERR(kdbus_recv(b, 0, 0, NULL), EAGAIN);
	cmd_free(m);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

KDBUS_TEST(message, send_to_self, 0)
{
	struct kdbus_conn *a;
	struct kdbus_msg *m;
	uint64_t off;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	ASSERT_OK(kdbus_send(a, a->id, 5, 0, 0, 0, "me", 2));
	ASSERT_OK(kdbus_recv_msg(a, 0, 0, &m, &off));
	ASSERT_EQ(m->src_id, a->id);
	ASSERT_EQ(m->cookie, 5);
	ASSERT_OK(kdbus_free(a, off));
	kdbus_conn_free(a);
	return TEST_OK;
}

KDBUS_TEST(message, peek_drop_free, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_cmd_recv rc, rc2;
	struct kdbus_msg *m;

	ASSERT_OK(pair(env, 0, 0, KDBUS_DEFAULT_POOL, &a, &b));
	ASSERT_OK(kdbus_send(a, b->id, 1, 0, 0, 0, "one", 3));
	ASSERT_OK(kdbus_send(a, b->id, 2, 0, 0, 0, "two", 3));
	ASSERT_OK(kdbus_send(a, b->id, 3, 0, 0, 0, "three", 5));
	/* a queued message's slice is not the user's yet: in a fresh pool
	 * (HELLO slice freed) the first message sits at offset 0 */
	ASSERT_ERR(kdbus_free(b, 0), ENXIO);
	/* PEEK twice: same slice, message stays */
	ASSERT_OK(kdbus_recv(b, KDBUS_RECV_PEEK, 0, &rc));
	m = (struct kdbus_msg *)(b->pool + rc.msg.offset);
	ASSERT_EQ(m->cookie, 1);
	ASSERT_OK(kdbus_recv(b, KDBUS_RECV_PEEK, 0, &rc2));
	ASSERT_EQ(rc2.msg.offset, rc.msg.offset);
	ASSERT_EQ(rc2.msg.msg_size, rc.msg.msg_size);
	/* FREE of a peeked slice succeeds, the message stays queued */
	ASSERT_OK(kdbus_free(b, rc.msg.offset));
	ASSERT_OK(kdbus_recv(b, KDBUS_RECV_PEEK, 0, &rc2));
	ASSERT_EQ(((struct kdbus_msg *)(b->pool + rc2.msg.offset))->cookie, 1);
	/* real receive publishes the same slice */
	ASSERT_OK(kdbus_recv(b, 0, 0, &rc));
	ASSERT_EQ(rc.msg.offset, rc2.msg.offset);
	ASSERT_OK(kdbus_free(b, rc.msg.offset));
	ASSERT_ERR(kdbus_free(b, rc.msg.offset), ENXIO);
	/* a queued, never peeked message's slice cannot be freed */
	/* DROP: next is 2; msg reports "no slice" */
	ASSERT_OK(kdbus_recv(b, KDBUS_RECV_DROP, 0, &rc));
	ASSERT_EQ(rc.msg.offset, b->pool_size);
	ASSERT_EQ(rc.msg.msg_size, 0);
	/* PEEK|DROP: DROP wins */
	ASSERT_OK(kdbus_recv(b, KDBUS_RECV_PEEK | KDBUS_RECV_DROP, 0, &rc));
	ASSERT_ERR(kdbus_recv(b, 0, 0, NULL), EAGAIN);
	ASSERT_ERR(kdbus_recv(b, KDBUS_RECV_PEEK, 0, NULL), EAGAIN);
	ASSERT_ERR(kdbus_recv(b, KDBUS_RECV_DROP, 0, NULL), EAGAIN);
	/* flags */
	ASSERT_ERR(kdbus_recv(b, KDBUS_RECV_DROP | KDBUS_RECV_USE_PRIORITY, 0,
			      NULL), EINVAL);
	ASSERT_ERR(kdbus_recv(b, 1ULL << 3, 0, NULL), EINVAL);
	ASSERT_OK(kdbus_recv(b, KDBUS_FLAG_NEGOTIATE, 0, &rc));
	ASSERT_EQ(rc.flags, 0x7);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* PEEK then DROP of a peeked message: slice stays until FREEd */
KDBUS_TEST(message, peek_then_drop, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_cmd_recv rc;
	struct kdbus_msg *m;

	ASSERT_OK(pair(env, 0, 0, KDBUS_DEFAULT_POOL, &a, &b));
	ASSERT_OK(kdbus_send(a, b->id, 42, 0, 0, 0, "data", 4));
	ASSERT_OK(kdbus_recv(b, KDBUS_RECV_PEEK, 0, &rc));
	m = (struct kdbus_msg *)(b->pool + rc.msg.offset);
	ASSERT_OK(kdbus_recv(b, KDBUS_RECV_DROP, 0, NULL));
	ASSERT_ERR(kdbus_recv(b, 0, 0, NULL), EAGAIN);
	/* still readable until FREE */
	ASSERT_EQ(m->cookie, 42);
	ASSERT_OK(kdbus_free(b, rc.msg.offset));
	ASSERT_ERR(kdbus_free(b, rc.msg.offset), ENXIO);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

static int recv_cookie(struct kdbus_conn *c, uint64_t flags, int64_t prio,
		       uint64_t *cookie)
{
	struct kdbus_msg *m;
	uint64_t off;
	int r = kdbus_recv_msg(c, flags, prio, &m, &off);

	if (r < 0)
		return r;
	*cookie = m->cookie;
	return kdbus_free(c, off);
}

KDBUS_TEST(message, priorities, 0)
{
	static const int64_t prio[] = { 5, -3, 0, -3, 10, INT64_MIN, INT64_MAX };
	struct kdbus_conn *a, *b;
	uint64_t cookie;
	size_t i;

	ASSERT_OK(pair(env, 0, 0, KDBUS_DEFAULT_POOL, &a, &b));
	for (i = 0; i < 7; i++)
		ASSERT_OK(kdbus_send(a, b->id, i + 1, 0, 0, prio[i], "p", 1));
	/* without USE_PRIORITY: FIFO, the priority field is ignored */
	ASSERT_OK(recv_cookie(b, KDBUS_RECV_PEEK, -100, &cookie));
	ASSERT_EQ(cookie, 1);
	/* the most urgent one */
	ASSERT_OK(recv_cookie(b, KDBUS_RECV_USE_PRIORITY, INT64_MIN, &cookie));
	ASSERT_EQ(cookie, 6);
	/* most urgent left is -3: a threshold of -4 finds nothing */
	ASSERT_ERR(kdbus_recv(b, KDBUS_RECV_USE_PRIORITY, -4, NULL), EAGAIN);
	/* FIFO among equal priorities */
	ASSERT_OK(recv_cookie(b, KDBUS_RECV_USE_PRIORITY, -3, &cookie));
	ASSERT_EQ(cookie, 2);
	ASSERT_OK(recv_cookie(b, KDBUS_RECV_USE_PRIORITY, 100, &cookie));
	ASSERT_EQ(cookie, 4);
	ASSERT_OK(recv_cookie(b, KDBUS_RECV_USE_PRIORITY, 0, &cookie));
	ASSERT_EQ(cookie, 3);
	ASSERT_ERR(kdbus_recv(b, KDBUS_RECV_USE_PRIORITY, 4, NULL), EAGAIN);
	/* PEEK with priority does not dequeue */
	ASSERT_OK(recv_cookie(b, KDBUS_RECV_USE_PRIORITY | KDBUS_RECV_PEEK,
			      INT64_MAX, &cookie));
	ASSERT_EQ(cookie, 1);
	/* plain FIFO for the rest: 1 (5), 5 (10), 7 (MAX) */
	ASSERT_OK(recv_cookie(b, 0, 0, &cookie));
	ASSERT_EQ(cookie, 1);
	ASSERT_OK(recv_cookie(b, 0, 0, &cookie));
	ASSERT_EQ(cookie, 5);
	ASSERT_OK(recv_cookie(b, KDBUS_RECV_USE_PRIORITY, INT64_MAX, &cookie));
	ASSERT_EQ(cookie, 7);
	ASSERT_ERR(kdbus_recv(b, KDBUS_RECV_USE_PRIORITY, INT64_MAX, NULL),
		   EAGAIN);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

KDBUS_TEST(message, poll_readiness, 0)
{
	struct pollfd p = { .events = POLLIN | POLLOUT };
	struct kdbus_conn *a, *b;
	uint64_t cookie;

	ASSERT_OK(pair(env, 0, 0, KDBUS_DEFAULT_POOL, &a, &b));
	p.fd = b->fd;
	ASSERT_EQ(poll(&p, 1, 0), 1);
	ASSERT_EQ(p.revents, POLLOUT);
	ASSERT_OK(kdbus_send(a, b->id, 1, 0, 0, 0, "x", 1));
	ASSERT_EQ(poll(&p, 1, 0), 1);
	ASSERT_EQ(p.revents, POLLIN | POLLOUT);
	ASSERT_OK(recv_cookie(b, KDBUS_RECV_PEEK, 0, &cookie));
	ASSERT_EQ(poll(&p, 1, 0), 1);
	ASSERT_EQ(p.revents, POLLIN | POLLOUT);
	ASSERT_OK(recv_cookie(b, 0, 0, &cookie));
	ASSERT_EQ(poll(&p, 1, 0), 1);
	ASSERT_EQ(p.revents, POLLOUT);
	/* a blocked poll is woken by a send from another process */
	{
		pid_t pid;

		fflush(stdout);
		pid = fork();
		ASSERT(pid >= 0);
		if (pid == 0) {
			kdbus_msleep(200);
			_exit(kdbus_send(a, b->id, 2, 0, 0, 0, "y", 1) ?
			      TEST_FAIL : TEST_OK);
		}
		ASSERT_EQ(kdbus_wait_readable(b->fd, 5000), 1);
		ASSERT_EQ(kdbus_wait_child(pid), TEST_OK);
	}
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

KDBUS_TEST(message, byebye_busy, 0)
{
	struct kdbus_conn *a, *b;
	uint64_t cookie;

	ASSERT_OK(pair(env, 0, 0, KDBUS_DEFAULT_POOL, &a, &b));
	ASSERT_OK(kdbus_send(a, b->id, 1, 0, 0, 0, "x", 1));
	ASSERT_ERR(kdbus_byebye(b->fd), EBUSY);
	/* still connected */
	ASSERT_OK(kdbus_send(a, b->id, 2, 0, 0, 0, "x", 1));
	ASSERT_OK(recv_cookie(b, 0, 0, &cookie));
	ASSERT_ERR(kdbus_byebye(b->fd), EBUSY);
	ASSERT_OK(recv_cookie(b, 0, 0, &cookie));
	ASSERT_OK(kdbus_byebye(b->fd));
	ASSERT_ERR(kdbus_send(a, b->id, 3, 0, 0, 0, "x", 1), ENXIO);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}

/* sequential sends keep their order; sequence numbers increase */
KDBUS_TEST(message, ordering, 0)
{
	struct kdbus_conn *a, *b, *c;
	uint64_t last_seq = 0, i;

	ASSERT_OK(pair(env, 0, KDBUS_ATTACH_TIMESTAMP, KDBUS_DEFAULT_POOL,
		       &a, &b));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &c));
	for (i = 0; i < 200; i++) {
		struct kdbus_conn *s = (i % 3 == 0) ? c : a;

		ASSERT_OK(kdbus_send(s, b->id, i + 1, 0, 0, (int64_t)(i % 5),
				     &i, sizeof(i)));
	}
	for (i = 0; i < 200; i++) {
		struct kdbus_msg *m;
		struct kdbus_item *ts;
		uint64_t off;

		ASSERT_OK(kdbus_recv_msg(b, 0, 0, &m, &off));
		ASSERT_EQ(m->cookie, i + 1);
		ASSERT_EQ(m->src_id, (i % 3 == 0) ? c->id : a->id);
		ts = kdbus_msg_find(m, KDBUS_ITEM_TIMESTAMP);
		ASSERT(ts);
		ASSERT(ts->timestamp.seqnum > last_seq);
		last_seq = ts->timestamp.seqnum;
		ASSERT_OK(kdbus_free(b, off));
	}
	ASSERT_ERR(kdbus_recv(b, 0, 0, NULL), EAGAIN);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	kdbus_conn_free(c);
	return TEST_OK;
}

static int send_fds(struct kdbus_conn *c, uint64_t dst, const int *fds,
		    int n)
{
	struct kdbus_msg *m = kdbus_msg_new(dst, 9, 0, 0, "f", 1);
	int r;

	cmd_add_item(m, KDBUS_ITEM_FDS, fds, n * sizeof(int));
	r = kdbus_send_msg(c->fd, 0, m, NULL);
	cmd_free(m);
	return r;
}

KDBUS_TEST(message, fd_passing, 0)
{
	struct kdbus_conn *a, *acc, *noacc;
	struct kdbus_msg *m;
	struct kdbus_item *it;
	struct kdbus_cmd_recv rc;
	int pipefd[2], fds[KDBUS_CONN_MAX_FDS_PER_USER + 1], sp[2], i;
	char buf[8];
	struct stat st1, st2;

	ASSERT_OK(pair(env, KDBUS_HELLO_ACCEPT_FD, 0, KDBUS_DEFAULT_POOL,
		       &a, &acc));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &noacc));
	ASSERT(pipe(pipefd) == 0);
	/* refused by a receiver without ACCEPT_FD */
	ASSERT_ERR(send_fds(a, noacc->id, &pipefd[1], 1), ECOMM);
	ASSERT_ERR(kdbus_recv(noacc, 0, 0, NULL), EAGAIN);
	/* zero fds is not "carrying fds" */
	ASSERT_OK(send_fds(a, noacc->id, pipefd, 0));
	/* accepted: installed at RECV, not at PEEK */
	ASSERT_OK(send_fds(a, acc->id, &pipefd[1], 1));
	ASSERT_OK(kdbus_recv(acc, KDBUS_RECV_PEEK, 0, &rc));
	m = (struct kdbus_msg *)(acc->pool + rc.msg.offset);
	it = kdbus_msg_find(m, KDBUS_ITEM_FDS);
	ASSERT(it);
	ASSERT_EQ(it->size, KDBUS_ITEM_HDR + sizeof(int));
	ASSERT_EQ(it->fds[0], -1);
	ASSERT_OK(kdbus_recv(acc, 0, 0, &rc));
	ASSERT_EQ(rc.msg.return_flags, 0);
	m = (struct kdbus_msg *)(acc->pool + rc.msg.offset);
	it = kdbus_msg_find(m, KDBUS_ITEM_FDS);
	ASSERT(it && it->fds[0] >= 0);
	ASSERT(it->fds[0] != pipefd[1]);
	ASSERT(fcntl(it->fds[0], F_GETFD) & FD_CLOEXEC);
	ASSERT(fstat(it->fds[0], &st1) == 0 && fstat(pipefd[1], &st2) == 0);
	ASSERT_EQ(st1.st_ino, st2.st_ino);
	ASSERT(write(it->fds[0], "hi", 2) == 2);
	ASSERT(read(pipefd[0], buf, 2) == 2 && !memcmp(buf, "hi", 2));
	close(it->fds[0]);
	ASSERT_OK(kdbus_free(acc, rc.msg.offset));
	/* the sender may close its copy right after SEND */
	{
		int tmp = dup(pipefd[1]);

		ASSERT_OK(send_fds(a, acc->id, &tmp, 1));
		close(tmp);
		ASSERT_OK(kdbus_recv(acc, 0, 0, &rc));
		m = (struct kdbus_msg *)(acc->pool + rc.msg.offset);
		it = kdbus_msg_find(m, KDBUS_ITEM_FDS);
		ASSERT(it && it->fds[0] >= 0);
		ASSERT(write(it->fds[0], "x", 1) == 1);
		close(it->fds[0]);
		ASSERT_OK(kdbus_free(acc, rc.msg.offset));
	}
	/* bad fds */
	i = 9999;
	ASSERT_ERR(send_fds(a, acc->id, &i, 1), EBADF);
	i = -1;
	ASSERT_ERR(send_fds(a, acc->id, &i, 1), EBADF);
	/* kdbus handles and unix sockets: EOPNOTSUPP, O_PATH: fine */
	ASSERT_ERR(send_fds(a, acc->id, &a->fd, 1), EOPNOTSUPP);
	ASSERT_ERR(send_fds(a, acc->id, &env->control_fd, 1), EOPNOTSUPP);
	ASSERT(socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == 0);
	ASSERT_ERR(send_fds(a, acc->id, &sp[0], 1), EOPNOTSUPP);
	i = open(KDBUS_CONTROL, O_PATH);
	ASSERT(i >= 0);
	ASSERT_OK(send_fds(a, acc->id, &i, 1));
	close(i);
	ASSERT_OK(kdbus_recv(acc, 0, 0, &rc));
	m = (struct kdbus_msg *)(acc->pool + rc.msg.offset);
	it = kdbus_msg_find(m, KDBUS_ITEM_FDS);
	ASSERT(it && it->fds[0] >= 0);
	close(it->fds[0]);
	ASSERT_OK(kdbus_free(acc, rc.msg.offset));
	/* more than 16 in one message */
	for (i = 0; i <= KDBUS_CONN_MAX_FDS_PER_USER; i++)
		fds[i] = pipefd[0];
	ASSERT_ERR(send_fds(a, acc->id, fds, KDBUS_CONN_MAX_FDS_PER_USER + 1),
		   EMFILE);
	/* exactly 16 is fine, then the per-user in-flight limit bites */
	ASSERT_OK(send_fds(a, acc->id, fds, KDBUS_CONN_MAX_FDS_PER_USER));
	ASSERT_ERR(send_fds(a, acc->id, fds, 1), EMFILE);
	ASSERT_OK(kdbus_recv(acc, KDBUS_RECV_DROP, 0, NULL));
	ASSERT_OK(send_fds(a, acc->id, fds, 1));
	ASSERT_OK(kdbus_recv(acc, KDBUS_RECV_DROP, 0, NULL));
	ASSERT_ERR(kdbus_recv(acc, 0, 0, NULL), EAGAIN);
	kdbus_conn_free(a);
	kdbus_conn_free(acc);
	kdbus_conn_free(noacc);
	return TEST_OK;
}

/* the receiver's RLIMIT_NOFILE too low: slot -1, INCOMPLETE_FDS */
KDBUS_TEST(message, fd_install_failure, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_cmd_recv rc;
	struct kdbus_msg *m;
	struct kdbus_item *it;
	int pipefd[2], fds[2];
	pid_t pid;

	ASSERT_OK(pair(env, KDBUS_HELLO_ACCEPT_FD, 0, KDBUS_DEFAULT_POOL,
		       &a, &b));
	ASSERT(pipe(pipefd) == 0);
	fds[0] = pipefd[0];
	fds[1] = pipefd[1];
	ASSERT_OK(send_fds(a, b->id, fds, 2));
	fflush(stdout);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		/* all low descriptors busy, no room for more */
		struct rlimit rl;
		int fd, maxfd = 0;

		for (fd = 0; fd < 64; fd++)
			if (fcntl(fd, F_GETFD) >= 0)
				maxfd = fd;
		rl.rlim_cur = rl.rlim_max = maxfd + 1;
		while ((fd = open("/dev/null", O_RDONLY)) >= 0 && fd <= maxfd)
			;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			_exit(TEST_FAIL);
		if (kdbus_recv(b, 0, 0, &rc) < 0)
			_exit(TEST_FAIL);
		m = (struct kdbus_msg *)(b->pool + rc.msg.offset);
		it = kdbus_msg_find(m, KDBUS_ITEM_FDS);
		if (!it || it->fds[0] != -1 || it->fds[1] != -1)
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

/* messages queued at a connection that is closed are freed with it */
KDBUS_TEST_FULL(message, close_with_queued, 0, 300)
{
	static uint8_t payload[16384];
	long base = 0, peak = 0, after = 0;
	struct kdbus_conn *a, *b;
	int i, round;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	memset(payload, 0x5a, sizeof(payload));
	/* warm-up round */
	for (round = 0; round < 4; round++) {
		ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, 8 * 1024 * 1024,
				      &b));
		if (round == 1)
			base = kdbus_meminfo_kb("Shmem");
		for (i = 0; i < 64; i++)
			ASSERT_OK(kdbus_send(a, b->id, i + 1, 0, 0, 0,
					     payload, sizeof(payload)));
		if (round == 1) {
			peak = kdbus_meminfo_kb("Shmem");
			DIAG("Shmem: %ld kB before, %ld kB with 64 x 16 KiB queued",
			     base, peak);
			ASSERT(peak - base >= 64 * 16 / 2);
		}
		kdbus_conn_free(b);
	}
	for (i = 0; i < 50; i++) {
		after = kdbus_meminfo_kb("Shmem");
		if (after - base < (peak - base) / 4)
			break;
		kdbus_msleep(100);
	}
	DIAG("Shmem after 3 more rounds: %ld kB", after);
	ASSERT(after - base < (peak - base) / 4);
	/* the sender's quota in the closed receivers does not linger:
	 * a fresh receiver takes the full load again */
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, 8 * 1024 * 1024, &b));
	for (i = 0; i < 64; i++)
		ASSERT_OK(kdbus_send(a, b->id, i + 1, 0, 0, 0, payload,
				     sizeof(payload)));
	kdbus_conn_free(b);
	kdbus_conn_free(a);
	return TEST_OK;
}

/* only ordinary connections are addressable by id (kdbus.message(7));
 * NO_AUTO_START is accepted on a unicast by id */
KDBUS_TEST(message, destination_kinds, 0)
{
	struct kdbus_cmd_hello *h;
	struct kdbus_conn *a;
	uint64_t mon_id, ph_id, cookie = 0;
	int mon = -1, ph = -1;
	struct kdbus_msg *m;
	uint64_t off;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	h = cmd_new(sizeof(*h));
	h->flags = KDBUS_HELLO_MONITOR;
	h->pool_size = KDBUS_DEFAULT_POOL;
	mon = open(env->bus_path, O_RDWR);
	ASSERT(mon >= 0);
	ASSERT_OK(kdbus_ioctl(mon, KDBUS_CMD_HELLO, h));
	mon_id = h->id;
	cmd_free(h);
	h = cmd_new(sizeof(*h));
	h->flags = KDBUS_HELLO_POLICY_HOLDER;
	h->pool_size = KDBUS_PAGE;
	cmd_add_str(h, KDBUS_ITEM_NAME, "org.example.holder");
	ph = open(env->bus_path, O_RDWR);
	ASSERT(ph >= 0);
	ASSERT_OK(kdbus_ioctl(ph, KDBUS_CMD_HELLO, h));
	ph_id = h->id;
	cmd_free(h);
	ASSERT_ERR(kdbus_send(a, mon_id, 1, 0, 0, 0, "x", 1), ENXIO);
	ASSERT_ERR(kdbus_send(a, ph_id, 1, 0, 0, 0, "x", 1), ENXIO);
	ASSERT_ERR(kdbus_send(a, KDBUS_DST_ID_BROADCAST - 1, 1, 0, 0, 0, "x",
			      1), ENXIO);
	ASSERT_OK(kdbus_send(a, a->id, 3, KDBUS_MSG_NO_AUTO_START, 0, 0, "x",
			     1));
	ASSERT_OK(kdbus_recv_msg(a, 0, 0, &m, &off));
	cookie = m->cookie;
	ASSERT_EQ(cookie, 3);
	ASSERT_EQ(m->flags, KDBUS_MSG_NO_AUTO_START);
	ASSERT_OK(kdbus_free(a, off));
	close(mon);
	close(ph);
	kdbus_conn_free(a);
	return TEST_OK;
}

/* signal/broadcast header rules that SEND checks for every message
 * (kdbus.message(7)) */
KDBUS_TEST(message, validation_signals, 0)
{
	struct kdbus_conn *a, *b;
	struct kdbus_msg *m;
	struct kdbus_cmd_send *cmd;
	uint64_t bloom[1 + KDBUS_DEFAULT_BLOOM / 8];
	int p[2];

	memset(bloom, 0, sizeof(bloom));
	ASSERT_OK(pair(env, 0, 0, KDBUS_DEFAULT_POOL, &a, &b));
	ASSERT(pipe(p) == 0);
	/* broadcast with a cookie_reply: ENOTUNIQ before the bloom check */
	m = kdbus_msg_new(KDBUS_DST_ID_BROADCAST, 1, KDBUS_MSG_SIGNAL, 5,
			  NULL, 0);
	ASSERT_ERR(send_msg(a, m), ENOTUNIQ);
	cmd_free(m);
	/* bloom filter of the wrong size: EDOM; not a multiple of 8: EFAULT */
	m = kdbus_msg_new(b->id, 1, KDBUS_MSG_SIGNAL, 0, NULL, 0);
	cmd_add_item(m, KDBUS_ITEM_BLOOM_FILTER, bloom, 8 + 32);
	ASSERT_ERR(send_msg(a, m), EDOM);
	cmd_free(m);
	m = kdbus_msg_new(b->id, 1, KDBUS_MSG_SIGNAL, 0, NULL, 0);
	cmd_add_item(m, KDBUS_ITEM_BLOOM_FILTER, bloom, 8 + 12);
	ASSERT_ERR(send_msg(a, m), EFAULT);
	cmd_free(m);
	/* a bloom filter without SIGNAL */
	m = kdbus_msg_new(b->id, 1, 0, 0, NULL, 0);
	cmd_add_item(m, KDBUS_ITEM_BLOOM_FILTER, bloom, sizeof(bloom));
	ASSERT_ERR(send_msg(a, m), EBADMSG);
	cmd_free(m);
	/* DST_NAME on a broadcast */
	m = kdbus_msg_new(KDBUS_DST_ID_BROADCAST, 1, KDBUS_MSG_SIGNAL, 0,
			  NULL, 0);
	cmd_add_item(m, KDBUS_ITEM_BLOOM_FILTER, bloom, sizeof(bloom));
	cmd_add_str(m, KDBUS_ITEM_DST_NAME, "org.example.foo");
	ASSERT_ERR(send_msg(a, m), EBADMSG);
	cmd_free(m);
	/* fds on a broadcast */
	m = kdbus_msg_new(KDBUS_DST_ID_BROADCAST, 1, KDBUS_MSG_SIGNAL, 0,
			  NULL, 0);
	cmd_add_item(m, KDBUS_ITEM_BLOOM_FILTER, bloom, sizeof(bloom));
	cmd_add_item(m, KDBUS_ITEM_FDS, p, sizeof(int));
	ASSERT_ERR(send_msg(a, m), ENOTUNIQ);
	cmd_free(m);
	/* a unicast signal to a peer without matches: success, not queued */
	m = kdbus_msg_new(b->id, 1, KDBUS_MSG_SIGNAL, 0, "s", 1);
	cmd_add_item(m, KDBUS_ITEM_BLOOM_FILTER, bloom, sizeof(bloom));
	ASSERT_OK(send_msg(a, m));
	cmd_free(m);
	ASSERT_ERR(kdbus_recv(b, 0, 0, NULL), EAGAIN);
	/* CANCEL_FD is validated even on asynchronous sends */
	m = kdbus_msg_new(b->id, 1, 0, 0, "x", 1);
	cmd = cmd_new(sizeof(*cmd));
	cmd->msg_address = (uintptr_t)m;
	{
		int bad = 9999;
		struct kdbus_item *it = cmd_add_item(cmd, KDBUS_ITEM_CANCEL_FD,
						     &bad, sizeof(bad));

		ASSERT_ERR(kdbus_ioctl(a->fd, KDBUS_CMD_SEND, cmd), EBADF);
		/* a pipe polls fine: accepted and ignored */
		it->fds[0] = p[0];
		ASSERT_OK(kdbus_ioctl(a->fd, KDBUS_CMD_SEND, cmd));
	}
	cmd_free(cmd);
	cmd_free(m);
	ASSERT_OK(kdbus_recv(b, KDBUS_RECV_DROP, 0, NULL));
	ASSERT_ERR(kdbus_recv(b, 0, 0, NULL), EAGAIN);
	kdbus_conn_free(a);
	kdbus_conn_free(b);
	return TEST_OK;
}
