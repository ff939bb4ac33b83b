// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The bus's match index (kernel/match.c): broadcasts and notifications
 * visit only connections that have matches, and a per-connection summary
 * rejects most of those that do not want the message without a full
 * check. These tests compare what every receiver gets with a model of
 * kdbus.match(7) written here, among many subscribers that do not want
 * the message: masks of several generations and filters of every
 * generation, Bloom and non-Bloom matches mixed, several matches per
 * connection, notification rules, and the index after matches are
 * removed or replaced and connections leave (the summary is recomputed
 * and slots move).
 */
#include <stdlib.h>
#include <unistd.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

#define BLOOM_WORDS	(KDBUS_DEFAULT_BLOOM / 8)
#define MAX_GENS	3
#define MAX_RULES	3
#define MAX_MATCHES	4
#define N_RECEIVERS	120
#define N_MSGS		30

/* one rule of the model: BLOOM_MASK, ID, ID_ADD or NAME_ADD */
struct model_rule {
	uint64_t type;
	unsigned int n_gens;
	uint64_t mask[MAX_GENS * BLOOM_WORDS];
	uint64_t id;
};

struct model_match {
	uint64_t cookie;
	unsigned int n_rules;
	struct model_rule rules[MAX_RULES];
};

struct model_conn {
	struct kdbus_conn *c;
	unsigned int n_matches;
	struct model_match matches[MAX_MATCHES];
	uint64_t expect[N_MSGS];	/* cookies it must get, in order */
	unsigned int n_expect;
};

static uint64_t rng_state;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* a sparse mask: two bits per generation, like a one-item filter */
static void random_mask(struct model_rule *r, unsigned int n_gens)
{
	unsigned int g, k, bit;

	r->type = KDBUS_ITEM_BLOOM_MASK;
	r->n_gens = n_gens;
	memset(r->mask, 0, sizeof(r->mask));
	for (g = 0; g < n_gens; g++)
		for (k = 0; k < 2; k++) {
			bit = rng() % (BLOOM_WORDS * 64);
			r->mask[g * BLOOM_WORDS + bit / 64] |= 1ULL << (bit % 64);
		}
}

static bool model_bloom(const struct model_rule *r, const uint64_t *filter,
			uint64_t gen)
{
	uint64_t sel = gen < r->n_gens - 1 ? gen : r->n_gens - 1;
	const uint64_t *m = r->mask + sel * BLOOM_WORDS;
	unsigned int i;

	for (i = 0; i < BLOOM_WORDS; i++)
		if ((filter[i] & m[i]) != m[i])
			return false;
	return true;
}

/* does the model accept a user signal from src with this filter? */
static bool model_wants_signal(const struct model_conn *mc, uint64_t src,
			       const uint64_t *filter, uint64_t gen)
{
	unsigned int i, j;

	for (i = 0; i < mc->n_matches; i++) {
		const struct model_match *m = &mc->matches[i];
		bool pass = true;

		for (j = 0; j < m->n_rules && pass; j++) {
			const struct model_rule *r = &m->rules[j];

			switch (r->type) {
			case KDBUS_ITEM_BLOOM_MASK:
				pass = model_bloom(r, filter, gen);
				break;
			case KDBUS_ITEM_ID:
				pass = r->id == KDBUS_MATCH_ID_ANY ||
				       r->id == src;
				break;
			default:
				pass = false;	/* notification rule */
			}
		}
		if (pass)
			return true;
	}
	return false;
}

/* does the model accept an ID_ADD/ID_REMOVE/NAME_ADD notification? */
static bool model_wants_notify(const struct model_conn *mc, uint64_t type,
			       uint64_t id)
{
	unsigned int i, j;

	for (i = 0; i < mc->n_matches; i++) {
		const struct model_match *m = &mc->matches[i];
		bool pass = true;

		for (j = 0; j < m->n_rules && pass; j++) {
			const struct model_rule *r = &m->rules[j];

			pass = r->type == type &&
			       (r->id == KDBUS_MATCH_ID_ANY || r->id == id);
		}
		if (pass)
			return true;
	}
	return false;
}

/* install a model match in the kernel and in the model */
static int add_match(struct model_conn *mc, const struct model_match *m,
		     uint64_t flags)
{
	struct kdbus_cmd_match *cmd = cmd_new(sizeof(*cmd));
	unsigned int j;
	int r;

	cmd->cookie = m->cookie;
	cmd->flags = flags;
	for (j = 0; j < m->n_rules; j++) {
		const struct model_rule *rule = &m->rules[j];
		struct kdbus_notify_name_change nc = {
			.old_id.id = KDBUS_MATCH_ID_ANY,
			.new_id.id = rule->id,
		};
		struct kdbus_notify_id_change ic = { .id = rule->id };

		switch (rule->type) {
		case KDBUS_ITEM_BLOOM_MASK:
			cmd_add_item(cmd, rule->type, rule->mask,
				     rule->n_gens * KDBUS_DEFAULT_BLOOM);
			break;
		case KDBUS_ITEM_ID:
			cmd_add_u64(cmd, rule->type, rule->id);
			break;
		case KDBUS_ITEM_ID_ADD:
		case KDBUS_ITEM_ID_REMOVE:
			cmd_add_item(cmd, rule->type, &ic, sizeof(ic));
			break;
		default:
			cmd_add_item(cmd, rule->type, &nc, sizeof(nc));
		}
	}
	r = kdbus_ioctl(mc->c->fd, KDBUS_CMD_MATCH_ADD, cmd);
	cmd_free(cmd);
	if (r < 0)
		return r;

	if (flags & KDBUS_MATCH_REPLACE) {
		unsigned int i, n = 0;

		for (i = 0; i < mc->n_matches; i++)
			if (mc->matches[i].cookie != m->cookie)
				mc->matches[n++] = mc->matches[i];
		mc->n_matches = n;
	}
	if (mc->n_matches >= MAX_MATCHES)
		return -ENOSPC;
	mc->matches[mc->n_matches++] = *m;
	return 0;
}

static int remove_match(struct model_conn *mc, uint64_t cookie)
{
	struct kdbus_cmd_match cmd = { .size = sizeof(cmd), .cookie = cookie };
	unsigned int i, n = 0;
	int r;

	r = kdbus_ioctl(mc->c->fd, KDBUS_CMD_MATCH_REMOVE, &cmd);
	if (r < 0)
		return r;
	for (i = 0; i < mc->n_matches; i++)
		if (mc->matches[i].cookie != cookie)
			mc->matches[n++] = mc->matches[i];
	mc->n_matches = n;
	return 0;
}

/* a match of one random Bloom mask of n_gens generations, plus extras */
static void bloom_match(struct model_match *m, uint64_t cookie,
			unsigned int n_gens)
{
	memset(m, 0, sizeof(*m));
	m->cookie = cookie;
	m->n_rules = 1;
	random_mask(&m->rules[0], n_gens);
}

/*
 * Give receiver i matches of one of ten kinds, most of them Bloom-only:
 * what the quick reject decides alone, where it must step aside (a match
 * without Bloom rule, an empty match) and where a user message can never
 * pass (notification rules).
 */
static int setup_receiver(struct model_conn *mc, unsigned int i,
			  uint64_t other_id, uint64_t sender_id)
{
	struct model_match m;
	int r;

	switch (i % 10) {
	case 0:		/* no matches: never in the index */
		return 0;
	case 1:
		bloom_match(&m, 1, 1);
		return add_match(mc, &m, 0);
	case 2:
		bloom_match(&m, 1, 3);
		return add_match(mc, &m, 0);
	case 3:		/* two matches: OR */
		bloom_match(&m, 1, 1);
		r = add_match(mc, &m, 0);
		if (r < 0)
			return r;
		bloom_match(&m, 2, 2);
		return add_match(mc, &m, 0);
	case 4:		/* a match without Bloom rule: full check */
		bloom_match(&m, 1, 1);
		r = add_match(mc, &m, 0);
		if (r < 0)
			return r;
		memset(&m, 0, sizeof(m));
		m.cookie = 2;
		m.n_rules = 1;
		m.rules[0].type = KDBUS_ITEM_ID;
		m.rules[0].id = (i / 10) % 2 ? other_id : sender_id;
		return add_match(mc, &m, 0);
	case 5:		/* Bloom AND sender ID */
		bloom_match(&m, 1, 2);
		m.n_rules = 2;
		m.rules[1].type = KDBUS_ITEM_ID;
		m.rules[1].id = sender_id;
		return add_match(mc, &m, 0);
	case 6:		/* a notification match beside a Bloom match */
		memset(&m, 0, sizeof(m));
		m.cookie = 1;
		m.n_rules = 1;
		m.rules[0].type = KDBUS_ITEM_ID_ADD;
		m.rules[0].id = KDBUS_MATCH_ID_ANY;
		r = add_match(mc, &m, 0);
		if (r < 0)
			return r;
		bloom_match(&m, 2, 1);
		return add_match(mc, &m, 0);
	case 7:		/* Bloom AND NAME_ADD: passes nothing */
		bloom_match(&m, 1, 1);
		m.n_rules = 2;
		m.rules[1].type = KDBUS_ITEM_NAME_ADD;
		m.rules[1].id = KDBUS_MATCH_ID_ANY;
		return add_match(mc, &m, 0);
	case 8:		/* two masks in one match (merged by the kernel) */
		bloom_match(&m, 1, 2);
		m.n_rules = 2;
		random_mask(&m.rules[1], 3);
		return add_match(mc, &m, 0);
	default:	/* an empty match beside a Bloom one, now and then */
		bloom_match(&m, 1, 3);
		r = add_match(mc, &m, 0);
		if (r < 0)
			return r;
		if (i % 30 != 9)
			return 0;
		memset(&m, 0, sizeof(m));
		m.cookie = 3;
		return add_match(mc, &m, 0);
	}
}

/* a random filter that contains the masks of a few random matches */
static void random_filter(uint64_t *filter, const struct model_conn *mcs,
			  unsigned int n, uint64_t gen)
{
	unsigned int i, k, w;

	for (w = 0; w < BLOOM_WORDS; w++)
		filter[w] = rng() & rng() & rng();	/* 1/8 of the bits */

	for (k = 0; k < 3; k++) {
		const struct model_conn *mc = &mcs[rng() % n];
		const struct model_rule *r;
		uint64_t sel;

		if (!mc->c || !mc->n_matches)
			continue;
		i = rng() % mc->n_matches;
		if (!mc->matches[i].n_rules)
			continue;
		r = &mc->matches[i].rules[0];
		if (r->type != KDBUS_ITEM_BLOOM_MASK)
			continue;
		sel = gen < r->n_gens - 1 ? gen : r->n_gens - 1;
		for (w = 0; w < BLOOM_WORDS; w++)
			filter[w] |= r->mask[sel * BLOOM_WORDS + w];
	}
}

/* every receiver got exactly the signals the model expects, in order */
static int check_receivers(struct model_conn *mcs, unsigned int n,
			   unsigned int *n_wanted)
{
	unsigned int i, k;

	for (i = 0; i < n; i++) {
		struct model_conn *mc = &mcs[i];
		struct kdbus_msg *msg;
		uint64_t off;
		int r;

		if (!mc->c)
			continue;
		for (k = 0; ; k++) {
			r = kdbus_recv_msg(mc->c, 0, 0, &msg, &off);
			if (r == -EAGAIN)
				break;
			ASSERT_OK(r);
			/* ID_REMOVE of a leaving connection (empty match) */
			if (msg->src_id == KDBUS_SRC_ID_KERNEL &&
			    model_wants_notify(mc, msg->items[0].type,
					       msg->items[0].id_change.id)) {
				ASSERT_OK(kdbus_free(mc->c, off));
				k--;
				continue;
			}
			if (k >= mc->n_expect ||
			    msg->cookie != mc->expect[k]) {
				FAIL("receiver %u (kind %u): got cookie %llu, expected %llu (%u of %u)",
				     i, i % 10,
				     (unsigned long long)msg->cookie,
				     k < mc->n_expect ?
				     (unsigned long long)mc->expect[k] : 0ULL,
				     k, mc->n_expect);
			}
			ASSERT_OK(kdbus_free(mc->c, off));
		}
		if (k != mc->n_expect)
			FAIL("receiver %u (kind %u): got %u signals, expected %u",
			     i, i % 10, k, mc->n_expect);
		*n_wanted += k;
		mc->n_expect = 0;
	}
	return TEST_OK;
}

/* broadcast N_MSGS signals of every generation from two senders */
static int broadcast_round(struct model_conn *mcs, unsigned int n,
			   struct kdbus_conn **senders, unsigned int *n_wanted)
{
	static const uint64_t gens[] = { 0, 1, 2, 3, 9 };
	uint64_t filter[BLOOM_WORDS];
	unsigned int k, i;

	for (k = 0; k < N_MSGS; k++) {
		struct kdbus_conn *src = senders[k % 2];
		uint64_t gen = gens[k % 5];

		random_filter(filter, mcs, n, gen);
		ASSERT_OK(kdbus_send_bloom_signal(src, KDBUS_DST_ID_BROADCAST, 100 + k,
						  filter, gen));
		for (i = 0; i < n; i++)
			if (mcs[i].c && model_wants_signal(&mcs[i], src->id,
							    filter, gen))
				mcs[i].expect[mcs[i].n_expect++] = 100 + k;
	}
	return check_receivers(mcs, n, n_wanted);
}

/*
 * Many subscribers, most of which do not want a given signal: each gets
 * exactly what its matches accept, before and after matches are removed
 * and replaced (the summary must widen again, not only narrow) and
 * connections leave (slots move).
 */
KDBUS_TEST_FULL(match_index, signals_model, 0, 600)
{
	static struct model_conn mcs[N_RECEIVERS];
	struct kdbus_conn *senders[2];
	unsigned int i, n_wanted = 0;
	struct model_match m;

	rng_state = 0x9e3779b97f4a7c15ULL;
	memset(mcs, 0, sizeof(mcs));
	ASSERT_OK(kdbus_raise_nofile(N_RECEIVERS + 64));
	for (i = 0; i < 2; i++)
		ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL,
				      &senders[i]));
	for (i = 0; i < N_RECEIVERS; i++)
		ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 16,
				      &mcs[i].c));
	for (i = 0; i < N_RECEIVERS; i++)
		ASSERT_OK(setup_receiver(&mcs[i], i, senders[1]->id,
					 senders[0]->id));

	RUN(broadcast_round(mcs, N_RECEIVERS, senders, &n_wanted));

	/*
	 * Churn: drop the first match where there are several, replace the
	 * only one elsewhere, give connections without matches one, and
	 * disconnect every seventh connection.
	 */
	for (i = 0; i < N_RECEIVERS; i++) {
		struct model_conn *mc = &mcs[i];

		if (i % 7 == 3) {
			kdbus_conn_free(mc->c);
			mc->c = NULL;
			continue;
		}
		if (mc->n_matches > 1) {
			ASSERT_OK(remove_match(mc, mc->matches[0].cookie));
		} else if (mc->n_matches == 1) {
			bloom_match(&m, mc->matches[0].cookie, 1 + i % 3);
			ASSERT_OK(add_match(mc, &m, KDBUS_MATCH_REPLACE));
		} else {
			bloom_match(&m, 5, 2);
			ASSERT_OK(add_match(mc, &m, 0));
		}
	}

	RUN(broadcast_round(mcs, N_RECEIVERS, senders, &n_wanted));

	/* remove every match of half the connections: they leave the index */
	for (i = 0; i < N_RECEIVERS; i++) {
		struct model_conn *mc = &mcs[i];

		if (!mc->c || i % 2)
			continue;
		while (mc->n_matches)
			ASSERT_OK(remove_match(mc, mc->matches[0].cookie));
	}

	RUN(broadcast_round(mcs, N_RECEIVERS, senders, &n_wanted));

	/* the filters were built so that some receivers want each signal */
	ASSERT(n_wanted > N_MSGS);
	ASSERT_ERR(kdbus_recv(senders[0], 0, 0, NULL), EAGAIN);
	ASSERT_ERR(kdbus_recv(senders[1], 0, 0, NULL), EAGAIN);

	for (i = 0; i < N_RECEIVERS; i++)
		if (mcs[i].c)
			kdbus_conn_free(mcs[i].c);
	for (i = 0; i < 2; i++)
		kdbus_conn_free(senders[i]);
	return TEST_OK;
}

/* every receiver got exactly the notification the model expects, or none */
static int check_notify(struct model_conn *mcs, unsigned int n,
			uint64_t type, uint64_t id, unsigned int *n_got)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (!mcs[i].c)
			continue;
		if (model_wants_notify(&mcs[i], type, id)) {
			RUN(kdbus_expect_notify(mcs[i].c, type, id));
			(*n_got)++;
		}
		if (kdbus_recv(mcs[i].c, 0, 0, NULL) != -EAGAIN)
			FAIL("receiver %u: unexpected message after notification %llu",
			     i, (unsigned long long)type);
	}
	return TEST_OK;
}

#define N_NOTIFY	60

/*
 * Notifications among many Bloom subscribers: only matches made of rules
 * of the notification's type (or empty) take it, also after such a match
 * was removed beside others.
 */
KDBUS_TEST_FULL(match_index, notify_model, 0, 300)
{
	static struct model_conn mcs[N_NOTIFY];
	struct kdbus_conn *x, *y;
	unsigned int i, n_got = 0;
	struct model_match m;
	uint64_t x_id, y_id;

	rng_state = 0x2545f4914f6cdd1dULL;
	memset(mcs, 0, sizeof(mcs));
	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &x));
	for (i = 0; i < N_NOTIFY; i++)
		ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_PAGE * 16,
				      &mcs[i].c));

	for (i = 0; i < N_NOTIFY; i++) {
		struct model_conn *mc = &mcs[i];

		memset(&m, 0, sizeof(m));
		m.cookie = 1;
		m.n_rules = 1;
		switch (i % 8) {
		case 0:		/* ID_ADD of anyone */
			m.rules[0].type = KDBUS_ITEM_ID_ADD;
			m.rules[0].id = KDBUS_MATCH_ID_ANY;
			break;
		case 1:		/* ID_REMOVE of x only */
			m.rules[0].type = KDBUS_ITEM_ID_REMOVE;
			m.rules[0].id = x->id;
			break;
		case 2:		/* NAME_ADD with any new owner */
			m.rules[0].type = KDBUS_ITEM_NAME_ADD;
			m.rules[0].id = KDBUS_MATCH_ID_ANY;
			break;
		case 3:		/* ID_ADD AND NAME_ADD: nothing passes */
			m.rules[0].type = KDBUS_ITEM_ID_ADD;
			m.rules[0].id = KDBUS_MATCH_ID_ANY;
			m.rules[1].type = KDBUS_ITEM_NAME_ADD;
			m.rules[1].id = KDBUS_MATCH_ID_ANY;
			m.n_rules = 2;
			break;
		case 4:		/* empty: everything */
			if (i % 16 == 4) {
				m.n_rules = 0;
				break;
			}
			/* fall through */
		default:	/* Bloom only: no notification */
			random_mask(&m.rules[0], 1);
			break;
		}
		ASSERT_OK(add_match(mc, &m, 0));
		/* a Bloom match beside it, and an ID_ADD one to be removed */
		if (i % 8 < 3) {
			bloom_match(&m, 2, 2);
			ASSERT_OK(add_match(mc, &m, 0));
		}
		if (i % 8 == 6) {
			memset(&m, 0, sizeof(m));
			m.cookie = 3;
			m.n_rules = 1;
			m.rules[0].type = KDBUS_ITEM_ID_ADD;
			m.rules[0].id = KDBUS_MATCH_ID_ANY;
			ASSERT_OK(add_match(mc, &m, 0));
		}
	}

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &y));
	y_id = y->id;
	RUN(check_notify(mcs, N_NOTIFY, KDBUS_ITEM_ID_ADD, y_id, &n_got));

	ASSERT_OK(kn_acquire(y, "org.example.MatchIndex", 0, NULL));
	RUN(check_notify(mcs, N_NOTIFY, KDBUS_ITEM_NAME_ADD, y_id, &n_got));

	/* drop the ID_ADD matches of kind 6 and of every other kind 0 */
	for (i = 0; i < N_NOTIFY; i++) {
		if (i % 8 == 6)
			ASSERT_OK(remove_match(&mcs[i], 3));
		else if (i % 16 == 0)
			ASSERT_OK(remove_match(&mcs[i], 1));
	}

	ASSERT_OK(kn_release(y, "org.example.MatchIndex"));
	RUN(check_notify(mcs, N_NOTIFY, KDBUS_ITEM_NAME_REMOVE, y_id, &n_got));
	kdbus_conn_free(y);
	RUN(check_notify(mcs, N_NOTIFY, KDBUS_ITEM_ID_REMOVE, y_id, &n_got));

	x_id = x->id;
	kdbus_conn_free(x);
	RUN(check_notify(mcs, N_NOTIFY, KDBUS_ITEM_ID_REMOVE, x_id, &n_got));

	ASSERT_OK(kdbus_hello(env->bus_path, 0, 0, KDBUS_DEFAULT_POOL, &y));
	RUN(check_notify(mcs, N_NOTIFY, KDBUS_ITEM_ID_ADD, y->id, &n_got));
	kdbus_conn_free(y);

	ASSERT(n_got > 0);
	for (i = 0; i < N_NOTIFY; i++)
		kdbus_conn_free(mcs[i].c);
	return TEST_OK;
}
