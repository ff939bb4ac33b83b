// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Matches (kdbus.match(7)): MATCH_ADD/MATCH_REMOVE errnos, cookies,
 * REPLACE, the per-connection limit, every rule kind (BLOOM_MASK with
 * generations, NAME, ID, DST_ID, NAME_ADD/REMOVE/CHANGE, ID_ADD/REMOVE),
 * AND within a match, OR across matches, and the two rule families.
 *
 * Filters and masks are built with the user-space Bloom helper, which is
 * compiled into the test binary from here.
 */
#include <stdlib.h>
#include <unistd.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

#include "../../lib/bloom.h"
#include "../../lib/bloom.c"
#include "../../lib/siphash24.c"

#define BLOOM_WORDS (KDBUS_DEFAULT_BLOOM / 8)

static struct kdbus_cmd_match *match_new(uint64_t cookie, uint64_t flags)
{
	struct kdbus_cmd_match *m = cmd_new(sizeof(*m));

	m->cookie = cookie;
	m->flags = flags;
	return m;
}

static int match_commit(struct kdbus_conn *c, struct kdbus_cmd_match *m)
{
	int r = kdbus_ioctl(c->fd, KDBUS_CMD_MATCH_ADD, m);

	cmd_free(m);
	return r;
}

static int match_remove(struct kdbus_conn *c, uint64_t cookie)
{
	struct kdbus_cmd_match m = { .size = sizeof(m), .cookie = cookie };

	return kdbus_ioctl(c->fd, KDBUS_CMD_MATCH_REMOVE, &m);
}

/* a match with one BLOOM_MASK rule of n_gen generations */
static int match_bloom(struct kdbus_conn *c, uint64_t cookie, uint64_t flags,
		       const uint64_t *mask, size_t n_gen)
{
	struct kdbus_cmd_match *m = match_new(cookie, flags);

	cmd_add_item(m, KDBUS_ITEM_BLOOM_MASK, mask,
		     n_gen * KDBUS_DEFAULT_BLOOM);
	return match_commit(c, m);
}

/* a match with one u64 rule (ID, DST_ID) */
static int match_u64(struct kdbus_conn *c, uint64_t cookie, uint64_t type,
		     uint64_t v)
{
	struct kdbus_cmd_match *m = match_new(cookie, 0);

	cmd_add_u64(m, type, v);
	return match_commit(c, m);
}

static int match_empty(struct kdbus_conn *c, uint64_t cookie)
{
	return match_commit(c, match_new(cookie, 0));
}

static int match_id_change(struct kdbus_conn *c, uint64_t cookie,
			   uint64_t type, uint64_t id)
{
	struct kdbus_cmd_match *m = match_new(cookie, 0);
	struct kdbus_notify_id_change ic = { .id = id };

	cmd_add_item(m, type, &ic, sizeof(ic));
	return match_commit(c, m);
}

static int match_name_change(struct kdbus_conn *c, uint64_t cookie,
			     uint64_t type, uint64_t old_id, uint64_t new_id,
			     const char *name)
{
	struct kdbus_cmd_match *m = match_new(cookie, 0);
	size_t len = name ? strlen(name) + 1 : 0;
	struct kdbus_notify_name_change *nc;
	struct kdbus_item *it;

	it = cmd_add_item(m, type, NULL, sizeof(*nc) + len);
	nc = &it->name_change;
	memset(nc, 0, sizeof(*nc) + len);
	nc->old_id.id = old_id;
	nc->new_id.id = new_id;
	if (name)
		memcpy(nc->name, name, len);
	return match_commit(c, m);
}

/* the next message is the signal with this cookie from src */
static int expect_signal(struct kdbus_conn *c, uint64_t src, uint64_t cookie)
{
	struct kdbus_msg *msg;
	uint64_t off;

	ASSERT_OK(kdbus_recv_msg(c, 0, 0, &msg, &off));
	ASSERT_EQ(msg->src_id, src);
	ASSERT_EQ(msg->cookie, cookie);
	ASSERT(msg->flags & KDBUS_MSG_SIGNAL);
	ASSERT(kdbus_msg_find(msg, KDBUS_ITEM_BLOOM_FILTER));
	ASSERT_OK(kdbus_free(c, off));
	return TEST_OK;
}

static int expect_none(struct kdbus_conn *c)
{
	ASSERT_ERR(kdbus_recv(c, 0, 0, NULL), EAGAIN);
	return TEST_OK;
}

static void bloom_of(uint64_t *data, const char *iface, const char *member)
{
	struct kdbus_bloom b;

	kdbus_bloom_init(&b, data, KDBUS_DEFAULT_BLOOM, 1);
	kdbus_bloom_add_message_type(&b, "signal");
	if (iface)
		kdbus_bloom_add_interface(&b, iface);
	if (member)
		kdbus_bloom_add_member(&b, member);
}

static int name_acquire(struct kdbus_conn *c, const char *name)
{
	struct kdbus_cmd *cmd = cmd_new(sizeof(*cmd));
	int r;

	cmd_add_str(cmd, KDBUS_ITEM_NAME, name);
	r = kdbus_ioctl(c->fd, KDBUS_CMD_NAME_ACQUIRE, cmd);
	cmd_free(cmd);
	return r;
}

static int name_release(struct kdbus_conn *c, const char *name)
{
	struct kdbus_cmd *cmd = cmd_new(sizeof(*cmd));
	int r;

	cmd_add_str(cmd, KDBUS_ITEM_NAME, name);
	r = kdbus_ioctl(c->fd, KDBUS_CMD_NAME_RELEASE, cmd);
	cmd_free(cmd);
	return r;
}

/* every errno of MATCH_ADD and MATCH_REMOVE (kdbus.match(7)) */
KDBUS_TEST(match, errnos, 0)
{
	uint64_t mask[3 * BLOOM_WORDS] = { 0 };
	struct kdbus_conn *a, *mon;
	struct kdbus_cmd_match *m;
	struct kdbus_item *it;
	uint64_t neg[] = { KDBUS_ITEM_BLOOM_MASK, KDBUS_ITEM_DST_ID,
			   KDBUS_ITEM_BLOOM_FILTER };

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));

	/* REMOVE of an unknown cookie */
	ASSERT_ERR(match_remove(a, 1), EBADSLT);

	/* BLOOM_MASK sizes: 0, less than, not a multiple of the bloom size */
	m = match_new(1, 0);
	cmd_add_item(m, KDBUS_ITEM_BLOOM_MASK, NULL, 0);
	ASSERT_ERR(match_commit(a, m), EDOM);
	m = match_new(1, 0);
	cmd_add_item(m, KDBUS_ITEM_BLOOM_MASK, mask, 8);
	ASSERT_ERR(match_commit(a, m), EDOM);
	m = match_new(1, 0);
	cmd_add_item(m, KDBUS_ITEM_BLOOM_MASK, mask, KDBUS_DEFAULT_BLOOM + 8);
	ASSERT_ERR(match_commit(a, m), EDOM);

	/* a valid rule first does not help a bad one after it */
	m = match_new(1, 0);
	cmd_add_u64(m, KDBUS_ITEM_ID, a->id);
	cmd_add_str(m, KDBUS_ITEM_NAME, "not-a-name");
	ASSERT_ERR(match_commit(a, m), EINVAL);
	ASSERT_ERR(match_remove(a, 1), EBADSLT);

	/* NAME must be a valid non-wildcard name */
	m = match_new(1, 0);
	cmd_add_str(m, KDBUS_ITEM_NAME, "org.example.*");
	ASSERT_ERR(match_commit(a, m), EINVAL);

	/* items MATCH_ADD does not accept, bad sizes, unknown flags */
	m = match_new(1, 0);
	cmd_add_item(m, KDBUS_ITEM_BLOOM_FILTER, mask, 8 + KDBUS_DEFAULT_BLOOM);
	ASSERT_ERR(match_commit(a, m), EINVAL);
	m = match_new(1, 0);
	cmd_add_item(m, KDBUS_ITEM_ID, mask, 4);
	ASSERT_ERR(match_commit(a, m), EINVAL);
	m = match_new(1, 0);
	cmd_add_item(m, KDBUS_ITEM_ID_ADD, mask, 8);
	ASSERT_ERR(match_commit(a, m), EINVAL);
	m = match_new(1, 0);
	cmd_add_item(m, KDBUS_ITEM_NAME_ADD, mask, 24);
	ASSERT_ERR(match_commit(a, m), EINVAL);
	ASSERT_ERR(match_commit(a, match_new(1, 2)), EINVAL);

	/* REMOVE accepts no rules and no REPLACE */
	m = match_new(1, 0);
	cmd_add_u64(m, KDBUS_ITEM_ID, 1);
	ASSERT_ERR(kdbus_ioctl(a->fd, KDBUS_CMD_MATCH_REMOVE, m), EINVAL);
	cmd_free(m);
	m = match_new(1, KDBUS_MATCH_REPLACE);
	ASSERT_ERR(kdbus_ioctl(a->fd, KDBUS_CMD_MATCH_REMOVE, m), EINVAL);
	cmd_free(m);

	/* nothing was installed by any of the failures */
	ASSERT_ERR(match_remove(a, 1), EBADSLT);

	/* valid: one and three generations, a name filter not checked */
	ASSERT_OK(match_bloom(a, 1, 0, mask, 1));
	ASSERT_OK(match_bloom(a, 1, 0, mask, 3));
	ASSERT_OK(match_name_change(a, 1, KDBUS_ITEM_NAME_ADD,
				    KDBUS_MATCH_ID_ANY, KDBUS_MATCH_ID_ANY,
				    "no such name!"));
	ASSERT_OK(match_remove(a, 1));
	ASSERT_ERR(match_remove(a, 1), EBADSLT);

	/* negotiation: flags and item types */
	m = match_new(0, KDBUS_FLAG_NEGOTIATE);
	it = cmd_add_item(m, KDBUS_ITEM_NEGOTIATE, neg, sizeof(neg));
	ASSERT_OK(kdbus_ioctl(a->fd, KDBUS_CMD_MATCH_ADD, m));
	ASSERT_EQ(m->flags, KDBUS_MATCH_REPLACE);
	ASSERT_EQ(it->data64[0], KDBUS_ITEM_BLOOM_MASK);
	ASSERT_EQ(it->data64[1], KDBUS_ITEM_DST_ID);
	ASSERT_EQ(it->data64[2], 0);
	cmd_free(m);
	ASSERT_ERR(match_remove(a, 0), EBADSLT);

	/* monitors may not add or remove matches */
	ASSERT_OK(kdbus_hello(env->bus_path, KDBUS_HELLO_MONITOR, 0,
			      KDBUS_DEFAULT_POOL, &mon));
	ASSERT_ERR(match_empty(mon, 1), EOPNOTSUPP);
	ASSERT_ERR(match_remove(mon, 1), EOPNOTSUPP);

	kdbus_conn_free(mon);
	kdbus_conn_free(a);
	return TEST_OK;
}

/* KDBUS_MATCH_MAX: 256 matches of at most 16 rules; REPLACE at the limit */
KDBUS_TEST(match, limit, 0)
{
	struct kdbus_cmd_match *m;
	struct kdbus_conn *a;
	unsigned int i;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));

	/* more than 16 rules in one match: E2BIG (SECURITY.md), nothing added */
	m = match_new(1000, 0);
	for (i = 0; i < 17; i++)
		cmd_add_u64(m, KDBUS_ITEM_ID, i);
	ASSERT_ERR(match_commit(a, m), E2BIG);
	ASSERT_ERR(match_remove(a, 1000), EBADSLT);
	/* 16 rules in one match count once */
	m = match_new(1000, 0);
	for (i = 0; i < 16; i++)
		cmd_add_u64(m, KDBUS_ITEM_ID, i);
	ASSERT_OK(match_commit(a, m));

	for (i = 1; i < 256; i++)
		ASSERT_OK(match_empty(a, i));
	ASSERT_ERR(match_empty(a, 256), EMFILE);
	ASSERT_ERR(match_remove(a, 256), EBADSLT);

	/* REPLACE that removes one always has room */
	ASSERT_OK(match_commit(a, match_new(5, KDBUS_MATCH_REPLACE)));
	/* REPLACE that removes nothing does not */
	ASSERT_ERR(match_commit(a, match_new(256, KDBUS_MATCH_REPLACE)),
		   EMFILE);
	ASSERT_OK(match_remove(a, 5));

	/* room again */
	ASSERT_OK(match_empty(a, 256));
	ASSERT_ERR(match_empty(a, 257), EMFILE);

	kdbus_conn_free(a);
	return TEST_OK;
}

/* cookies: REMOVE drops every match of a cookie; REPLACE swaps them */
KDBUS_TEST(match, cookies_replace, 0)
{
	uint64_t fa[BLOOM_WORDS], fb[BLOOM_WORDS];
	struct kdbus_conn *a, *b;

	bloom_of(fa, "org.example.A", NULL);
	bloom_of(fb, "org.example.B", NULL);
	ASSERT(!kdbus_bloom_match(fb, 0, fa, 1, KDBUS_DEFAULT_BLOOM));
	ASSERT(!kdbus_bloom_match(fa, 0, fb, 1, KDBUS_DEFAULT_BLOOM));

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &b));

	/* two matches with one cookie, one with another */
	ASSERT_OK(match_bloom(b, 7, 0, fa, 1));
	ASSERT_OK(match_bloom(b, 7, 0, fb, 1));
	ASSERT_OK(match_bloom(b, 8, 0, fa, 1));

	/* one copy even though two matches accept it */
	ASSERT_OK(kdbus_send_bloom_signal(a, KDBUS_DST_ID_BROADCAST, 1, fa, 0));
	RUN(expect_signal(b, a->id, 1));
	RUN(expect_none(b));

	/* REMOVE takes both matches of cookie 7 */
	ASSERT_OK(match_remove(b, 7));
	ASSERT_ERR(match_remove(b, 7), EBADSLT);
	ASSERT_OK(kdbus_send_bloom_signal(a, KDBUS_DST_ID_BROADCAST, 2, fb, 0));
	RUN(expect_none(b));
	ASSERT_OK(kdbus_send_bloom_signal(a, KDBUS_DST_ID_BROADCAST, 3, fa, 0));
	RUN(expect_signal(b, a->id, 3));

	/* REPLACE cookie 8: fa no longer, fb now */
	ASSERT_OK(match_bloom(b, 8, KDBUS_MATCH_REPLACE, fb, 1));
	ASSERT_OK(kdbus_send_bloom_signal(a, KDBUS_DST_ID_BROADCAST, 4, fa, 0));
	RUN(expect_none(b));
	ASSERT_OK(kdbus_send_bloom_signal(a, KDBUS_DST_ID_BROADCAST, 5, fb, 0));
	RUN(expect_signal(b, a->id, 5));

	/* REPLACE with no existing match is not an error */
	ASSERT_OK(match_bloom(b, 9, KDBUS_MATCH_REPLACE, fa, 1));
	ASSERT_OK(kdbus_send_bloom_signal(a, KDBUS_DST_ID_BROADCAST, 6, fa, 0));
	RUN(expect_signal(b, a->id, 6));

	/* the sender never got anything: it has no matches */
	RUN(expect_none(a));

	kdbus_conn_free(b);
	kdbus_conn_free(a);
	return TEST_OK;
}

/* kdbus.match(7): mask bits must be in the filter; generations */
KDBUS_TEST(match, bloom_generations, 0)
{
	uint64_t filt[BLOOM_WORDS], both[BLOOM_WORDS], none[BLOOM_WORDS];
	uint64_t mask[2 * BLOOM_WORDS], ones[BLOOM_WORDS];
	struct kdbus_conn *a, *b;

	bloom_of(filt, "org.example.Iface", "Changed");
	bloom_of(both, "org.example.Iface", "Other");
	memset(none, 0, sizeof(none));
	memset(ones, 0xff, sizeof(ones));

	/* gen 0 selects the member, gen 1 only the interface */
	bloom_of(mask, "org.example.Iface", "Changed");
	bloom_of(mask + BLOOM_WORDS, "org.example.Iface", NULL);
	ASSERT(kdbus_bloom_match(filt, 0, mask, 2, KDBUS_DEFAULT_BLOOM));
	ASSERT(!kdbus_bloom_match(both, 0, mask, 2, KDBUS_DEFAULT_BLOOM));
	ASSERT(kdbus_bloom_match(both, 1, mask, 2, KDBUS_DEFAULT_BLOOM));

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &b));
	ASSERT_OK(match_bloom(b, 1, 0, mask, 2));

	ASSERT_OK(kdbus_send_bloom_signal(a, KDBUS_DST_ID_BROADCAST,
					  1, filt, 0));
	RUN(expect_signal(b, a->id, 1));
	/* generation 0: the member bit is missing */
	ASSERT_OK(kdbus_send_bloom_signal(a, KDBUS_DST_ID_BROADCAST,
					  2, both, 0));
	RUN(expect_none(b));
	/* generation 1 and newer ones use the last mask */
	ASSERT_OK(kdbus_send_bloom_signal(a, KDBUS_DST_ID_BROADCAST,
					  3, both, 1));
	RUN(expect_signal(b, a->id, 3));
	ASSERT_OK(kdbus_send_bloom_signal(a, KDBUS_DST_ID_BROADCAST,
					  4, both, 99));
	RUN(expect_signal(b, a->id, 4));
	/* an empty filter never carries the mask's bits */
	ASSERT_OK(kdbus_send_bloom_signal(a, KDBUS_DST_ID_BROADCAST,
					  5, none, 1));
	RUN(expect_none(b));

	/* the filter carrying extra bits is fine, the reverse is not */
	ASSERT_OK(match_bloom(b, 1, KDBUS_MATCH_REPLACE, ones, 1));
	ASSERT_OK(kdbus_send_bloom_signal(a, KDBUS_DST_ID_BROADCAST,
					  6, filt, 0));
	RUN(expect_none(b));
	ASSERT_OK(kdbus_send_bloom_signal(a, KDBUS_DST_ID_BROADCAST,
					  7, ones, 0));
	RUN(expect_signal(b, a->id, 7));

	/* an all-zero mask passes every filter */
	ASSERT_OK(match_bloom(b, 1, KDBUS_MATCH_REPLACE, none, 1));
	ASSERT_OK(kdbus_send_bloom_signal(a, KDBUS_DST_ID_BROADCAST,
					  8, none, 0));
	RUN(expect_signal(b, a->id, 8));

	kdbus_conn_free(b);
	kdbus_conn_free(a);
	return TEST_OK;
}

/* ID and DST_ID rules, ANY, AND inside a match, OR across matches */
KDBUS_TEST(match, id_dst_and_or, 0)
{
	uint64_t zero[BLOOM_WORDS] = { 0 }, fa[BLOOM_WORDS];
	struct kdbus_conn *a, *b, *c;
	struct kdbus_cmd_match *m;

	bloom_of(fa, "org.example.A", NULL);

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &b));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &c));

	/* ID: from a only */
	ASSERT_OK(match_u64(b, 1, KDBUS_ITEM_ID, a->id));
	ASSERT_OK(kdbus_send_bloom_signal(a, KDBUS_DST_ID_BROADCAST,
					  1, zero, 0));
	ASSERT_OK(kdbus_send_bloom_signal(c, KDBUS_DST_ID_BROADCAST,
					  2, zero, 0));
	RUN(expect_signal(b, a->id, 1));
	RUN(expect_none(b));

	/* ID ANY: everybody, including b itself */
	ASSERT_OK(match_u64(b, 1, KDBUS_ITEM_ID, KDBUS_MATCH_ID_ANY));
	ASSERT_OK(kdbus_send_bloom_signal(c, KDBUS_DST_ID_BROADCAST,
					  3, zero, 0));
	RUN(expect_signal(b, c->id, 3));
	ASSERT_OK(kdbus_send_bloom_signal(b, KDBUS_DST_ID_BROADCAST,
					  4, zero, 0));
	RUN(expect_signal(b, b->id, 4));
	ASSERT_OK(match_remove(b, 1));

	/* DST_ID = b: unicast signals to b, not broadcasts */
	ASSERT_OK(match_u64(b, 2, KDBUS_ITEM_DST_ID, b->id));
	ASSERT_OK(kdbus_send_bloom_signal(a, KDBUS_DST_ID_BROADCAST,
					  5, zero, 0));
	RUN(expect_none(b));
	ASSERT_OK(kdbus_send_bloom_signal(a, b->id, 6, zero, 0));
	RUN(expect_signal(b, a->id, 6));
	ASSERT_OK(match_remove(b, 2));

	/* a unicast signal without an accepting match is dropped, send 0 */
	ASSERT_OK(kdbus_send_bloom_signal(a, b->id, 7, zero, 0));
	RUN(expect_none(b));

	/* AND: ID a and the bloom mask fa */
	m = match_new(3, 0);
	cmd_add_u64(m, KDBUS_ITEM_ID, a->id);
	cmd_add_item(m, KDBUS_ITEM_BLOOM_MASK, fa, KDBUS_DEFAULT_BLOOM);
	ASSERT_OK(match_commit(b, m));
	ASSERT_OK(kdbus_send_bloom_signal(a, KDBUS_DST_ID_BROADCAST,
					  8, zero, 0));
	ASSERT_OK(kdbus_send_bloom_signal(c, KDBUS_DST_ID_BROADCAST, 9, fa, 0));
	RUN(expect_none(b));
	ASSERT_OK(kdbus_send_bloom_signal(a, KDBUS_DST_ID_BROADCAST,
					  10, fa, 0));
	RUN(expect_signal(b, a->id, 10));

	/* OR: a second match for c's ID */
	ASSERT_OK(match_u64(b, 4, KDBUS_ITEM_ID, c->id));
	ASSERT_OK(kdbus_send_bloom_signal(c, KDBUS_DST_ID_BROADCAST,
					  11, zero, 0));
	RUN(expect_signal(b, c->id, 11));
	ASSERT_OK(kdbus_send_bloom_signal(a, KDBUS_DST_ID_BROADCAST,
					  12, zero, 0));
	RUN(expect_none(b));

	/* user-message rules never select notifications */
	kdbus_conn_free(c);
	RUN(expect_none(b));

	kdbus_conn_free(b);
	kdbus_conn_free(a);
	return TEST_OK;
}

/* NAME: the sender must own the name (primary) at delivery time */
KDBUS_TEST(match, name_rule, 0)
{
	uint64_t zero[BLOOM_WORDS] = { 0 };
	struct kdbus_conn *a, *b, *c;
	struct kdbus_cmd_match *m;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &b));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &c));

	m = match_new(1, 0);
	cmd_add_str(m, KDBUS_ITEM_NAME, "org.example.Sender");
	ASSERT_OK(match_commit(b, m));

	ASSERT_OK(kdbus_send_bloom_signal(a, KDBUS_DST_ID_BROADCAST,
					  1, zero, 0));
	RUN(expect_none(b));

	ASSERT_OK(name_acquire(a, "org.example.Sender"));
	ASSERT_OK(kdbus_send_bloom_signal(a, KDBUS_DST_ID_BROADCAST,
					  2, zero, 0));
	RUN(expect_signal(b, a->id, 2));

	/* c merely waits in the queue: not an owner */
	{
		struct kdbus_cmd *cmd = cmd_new(sizeof(*cmd));

		cmd->flags = KDBUS_NAME_QUEUE;
		cmd_add_str(cmd, KDBUS_ITEM_NAME, "org.example.Sender");
		ASSERT_OK(kdbus_ioctl(c->fd, KDBUS_CMD_NAME_ACQUIRE, cmd));
		ASSERT(cmd->return_flags & KDBUS_NAME_IN_QUEUE);
		cmd_free(cmd);
	}
	ASSERT_OK(kdbus_send_bloom_signal(c, KDBUS_DST_ID_BROADCAST,
					  3, zero, 0));
	RUN(expect_none(b));

	/* after a released it, c owns it */
	ASSERT_OK(name_release(a, "org.example.Sender"));
	ASSERT_OK(kdbus_send_bloom_signal(a, KDBUS_DST_ID_BROADCAST,
					  4, zero, 0));
	RUN(expect_none(b));
	ASSERT_OK(kdbus_send_bloom_signal(c, KDBUS_DST_ID_BROADCAST,
					  5, zero, 0));
	RUN(expect_signal(b, c->id, 5));

	kdbus_conn_free(c);
	kdbus_conn_free(b);
	kdbus_conn_free(a);
	return TEST_OK;
}

/* ID_ADD / ID_REMOVE rules; no notification without a match */
KDBUS_TEST(match, notify_id, 0)
{
	uint64_t zero[BLOOM_WORDS] = { 0 };
	struct kdbus_conn *a, *b, *c, *d;
	uint64_t c_id;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &b));

	/* a has no matches: nothing; b: any ID_ADD, and ID_REMOVE of 0 */
	ASSERT_OK(match_id_change(b, 1, KDBUS_ITEM_ID_ADD, KDBUS_MATCH_ID_ANY));
	ASSERT_OK(match_id_change(b, 2, KDBUS_ITEM_ID_REMOVE, 0));

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &c));
	c_id = c->id;
	RUN(kdbus_expect_notify(b, KDBUS_ITEM_ID_ADD, c_id));
	RUN(expect_none(b));
	RUN(expect_none(a));

	/* a zero ID in a rule matches only ID 0: no ID_REMOVE */
	kdbus_conn_free(c);
	RUN(expect_none(b));

	/* an ID_REMOVE rule for one specific ID */
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &c));
	RUN(kdbus_expect_notify(b, KDBUS_ITEM_ID_ADD, c->id));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &d));
	RUN(kdbus_expect_notify(b, KDBUS_ITEM_ID_ADD, d->id));
	ASSERT_OK(match_id_change(b, 2, KDBUS_ITEM_ID_REMOVE, d->id));
	kdbus_conn_free(c);
	RUN(expect_none(b));
	c_id = d->id;
	kdbus_conn_free(d);
	RUN(kdbus_expect_notify(b, KDBUS_ITEM_ID_REMOVE, c_id));

	/* notification rules never select user signals */
	ASSERT_OK(kdbus_send_bloom_signal(a, KDBUS_DST_ID_BROADCAST,
					  1, zero, 0));
	RUN(expect_none(b));

	/* the empty match accepts every notification and every signal */
	ASSERT_OK(match_empty(a, 1));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &c));
	RUN(kdbus_expect_notify(a, KDBUS_ITEM_ID_ADD, c->id));
	ASSERT_OK(kdbus_send_bloom_signal(c, KDBUS_DST_ID_BROADCAST,
					  2, zero, 0));
	RUN(expect_signal(a, c->id, 2));
	RUN(kdbus_expect_notify(b, KDBUS_ITEM_ID_ADD, c->id));

	kdbus_conn_free(c);
	kdbus_conn_free(b);
	kdbus_conn_free(a);
	return TEST_OK;
}

/* NAME_ADD / NAME_REMOVE / NAME_CHANGE rules with IDs and name filters */
KDBUS_TEST(match, notify_name, 0)
{
	struct kdbus_conn *a, *b, *w;
	struct kdbus_cmd *cmd;

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &w));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &a));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &b));

	/* NAME_ADD of one name, any owner */
	ASSERT_OK(match_name_change(w, 1, KDBUS_ITEM_NAME_ADD,
				    KDBUS_MATCH_ID_ANY, KDBUS_MATCH_ID_ANY,
				    "org.example.One"));
	/* NAME_REMOVE of any name whose former owner is b */
	ASSERT_OK(match_name_change(w, 2, KDBUS_ITEM_NAME_REMOVE, b->id,
				    KDBUS_MATCH_ID_ANY, NULL));
	/* NAME_CHANGE of any name to a */
	ASSERT_OK(match_name_change(w, 3, KDBUS_ITEM_NAME_CHANGE,
				    KDBUS_MATCH_ID_ANY, a->id, NULL));
	/* a zero-filled NAME_ADD rule never matches */
	ASSERT_OK(match_name_change(w, 4, KDBUS_ITEM_NAME_ADD, 0, 0, NULL));

	ASSERT_OK(name_acquire(a, "org.example.Two"));
	RUN(expect_none(w));
	ASSERT_OK(name_acquire(a, "org.example.One"));
	RUN(kdbus_expect_notify(w, KDBUS_ITEM_NAME_ADD, a->id));
	RUN(expect_none(w));

	ASSERT_OK(name_release(a, "org.example.Two"));
	RUN(expect_none(w));
	ASSERT_OK(name_acquire(b, "org.example.Two"));
	RUN(expect_none(w));
	ASSERT_OK(name_release(b, "org.example.Two"));
	RUN(kdbus_expect_notify(w, KDBUS_ITEM_NAME_REMOVE, b->id));

	/* b queues for One; a leaves it; One changes to b: not to a */
	cmd = cmd_new(sizeof(*cmd));
	cmd->flags = KDBUS_NAME_QUEUE;
	cmd_add_str(cmd, KDBUS_ITEM_NAME, "org.example.One");
	ASSERT_OK(kdbus_ioctl(b->fd, KDBUS_CMD_NAME_ACQUIRE, cmd));
	cmd_free(cmd);
	RUN(expect_none(w));
	cmd = cmd_new(sizeof(*cmd));
	cmd->flags = KDBUS_NAME_QUEUE;
	cmd_add_str(cmd, KDBUS_ITEM_NAME, "org.example.One");
	ASSERT_OK(name_release(a, "org.example.One"));
	RUN(expect_none(w));
	/* back to a through the queue: NAME_CHANGE to a */
	ASSERT_OK(kdbus_ioctl(a->fd, KDBUS_CMD_NAME_ACQUIRE, cmd));
	cmd_free(cmd);
	ASSERT_OK(name_release(b, "org.example.One"));
	RUN(kdbus_expect_notify(w, KDBUS_ITEM_NAME_CHANGE, a->id));
	RUN(expect_none(w));

	kdbus_conn_free(b);
	kdbus_conn_free(a);
	kdbus_conn_free(w);
	return TEST_OK;
}
