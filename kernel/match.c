// SPDX-License-Identifier: GPL-2.0-only
/*
 * Match databases (kdbus.match(7)): every ordinary connection owns one.
 * A database holds matches, each tagged with a caller-chosen cookie and
 * made of rules. A message passes a match if every rule of the match
 * passes (AND), and a database if one of its matches passes (OR), tried
 * in installation order. User-message rules (BLOOM_MASK, NAME, ID,
 * DST_ID) never pass a kernel notification, notification rules (NAME_*,
 * ID_*) never pass a user message.
 *
 * The full check of a receiver that does not want a broadcast is at most
 * one walk over its rules, no allocation and no copy. The Bloom masks of
 * a match are merged into one at MATCH_ADD (an exact rewrite of their
 * AND), so a match costs one Bloom check however many masks it was given.
 * The walk is bounded: at most KDBUS_MATCH_MAX matches of KDBUS_MATCH_MAX_RULES rules
 * per connection, and the rules of all connections of one user take at
 * most KDBUS_USER_MAX_MATCH_BYTES (charged at MATCH_ADD), so no user can
 * make every other user's broadcasts and notifications slow by opening
 * many connections with large rule sets.
 *
 * Broadcasts do not even walk the rules of most receivers that do not
 * want them: the bus keeps an index (bus->match_index) of the connections
 * that have at least one match, one dense slot each holding a summary of
 * its matches, and a broadcast or notification visits only those slots
 * and runs the full check only where the summary cannot reject the
 * message (kdbus_match_slot_may_pass()). Connections without matches
 * take no signal and no notification, so they are not in the index.
 *
 * The Bloom part of a summary: fold(x) is the OR of the 64 bit words of
 * x. A match whose (merged) mask M can pass a filter F needs
 * M[min(g, G - 1)] to be a subset of F, word by word, hence
 * fold(M[min(g, G - 1)]) to be a subset of fold(F). The summary of
 * generation k is the AND, over every match that can pass a user message,
 * of fold(M[j]) for each generation j that a filter of a generation
 * mapped to k can select (exactly min(k, G - 1) for k below the last
 * summary generation, every j >= min(k, G - 1) for the last). So if one
 * match passes, the summary is a subset of fold(F); a summary with a bit
 * outside fold(F) proves that none does. It is only used when every such
 * match has a BLOOM_MASK rule (BLOOM_ONLY); such matches never pass a
 * message without a filter. NAME, ID and DST_ID rules are left to the
 * full check. A match with a notification rule never passes a user
 * message, and one passes a notification only if all its rules are
 * notification rules of that type (or it has none): notify_types keeps
 * the types that some match may pass.
 *
 * Locking:
 *  - mdb->mdb_rwlock protects mdb->entries_list, mdb->entries_count and
 *    all entries and rules of the database. MATCH_ADD and MATCH_REMOVE
 *    take it for writing, so a concurrent delivery sees either the old
 *    matches or the new ones, never neither.
 *  - The rules themselves are invariant once linked; so are the summary
 *    fields of an entry.
 *  - bus->conn_rwlock protects bus->match_index and mdb->slot. MATCH_ADD
 *    and MATCH_REMOVE take it for writing around the change of the
 *    database (bus->conn_rwlock -> mdb->mdb_rwlock), so a broadcast,
 *    which reads the index under it for reading, sees a summary that
 *    belongs to the matches it then checks. Disconnect drops the slot
 *    under it while unlinking the connection; MATCH_ADD runs under an
 *    active reference, so no slot appears after that.
 *  - Nothing that may wait for memory runs under bus->conn_rwlock, which
 *    every delivery needs: MATCH_ADD allocates a larger index before it
 *    takes the lock and only installs it under it (retrying if the index
 *    grew meanwhile); shrinking under the lock uses GFP_NOWAIT and keeps
 *    the larger array if that fails.
 *  - mdb_rwlock is innermost: it nests inside name_registry->rwlock and
 *    bus->conn_rwlock (the delivery paths hold both while matching) and
 *    no other lock is taken under it.
 *  - NAME rules look at the sender's ownership records; the caller of
 *    kdbus_match_db_match_msg() holds the registry lock for reading.
 */

#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/rwsem.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <uapi/linux/kdbus.h>

#include "bus.h"
#include "connection.h"
#include "domain.h"
#include "endpoint.h"
#include "handle.h"
#include "item.h"
#include "limits.h"
#include "match.h"
#include "message.h"
#include "names.h"
#include "stats.h"

/**
 * struct kdbus_match_db - match database of a connection
 * @mdb_rwlock:		Protects everything below and all entries
 * @entries_list:	Matches, in installation order
 * @entries_count:	Number of matches on @entries_list
 * @slot:		Index of the connection's slot in bus->match_index,
 *			KDBUS_MATCH_NO_SLOT if it has none (protected by
 *			bus->conn_rwlock)
 */
struct kdbus_match_db {
	struct rw_semaphore mdb_rwlock;
	struct list_head entries_list;
	unsigned int entries_count;
	unsigned int slot;
};

#define KDBUS_MATCH_NO_SLOT	UINT_MAX

/**
 * struct kdbus_match_entry - one match (one successful MATCH_ADD)
 * @cookie:		Caller-chosen tag (invariant)
 * @list_entry:		Entry in mdb->entries_list
 * @rules_list:		Rules of this match, all of which must pass
 *			(invariant once linked)
 * @user:		User charged for the match (reference), or NULL
 * @charge:		Bytes charged to @user's match budget
 * @may_pass_user:	No notification rule: may pass a user message
 * @has_bloom:		Has a BLOOM_MASK rule
 * @bloom_fold:		@has_bloom: the AND of the folds of the mask
 *			generations a summary generation stands for
 * @notify_types:	Notification types the match may pass
 *
 * The fields from @may_pass_user on are computed once the rules are
 * final, before the entry is linked (invariant).
 */
struct kdbus_match_entry {
	u64 cookie;
	struct list_head list_entry;
	struct list_head rules_list;
	struct kdbus_user *user;
	size_t charge;
	bool may_pass_user;
	bool has_bloom;
	u64 bloom_fold[KDBUS_MATCH_SUMMARY_GENS];
	u32 notify_types;
};

/**
 * struct kdbus_bloom_mask - bloom mask of a BLOOM_MASK rule
 * @generations:	Number of generations in @data, at least 1
 * @data:		@generations masks of bus-bloom-size bytes each,
 *			generation 0 first
 */
struct kdbus_bloom_mask {
	u64 generations;
	u64 *data;
};

/**
 * struct kdbus_match_rule - one rule of a match (invariant)
 * @type:		KDBUS_ITEM_* of the rule
 * @bloom_mask:		BLOOM_MASK: the mask
 * @name:		NAME: the well-known name the sender must own;
 *			NAME_*: the name filter, or NULL for none
 * @old_id:		NAME_*: former owner (or KDBUS_MATCH_ID_ANY)
 * @new_id:		NAME_*: new owner (or KDBUS_MATCH_ID_ANY)
 * @id:			ID: sender; DST_ID: destination as sent;
 *			ID_ADD/ID_REMOVE: the connection (or ANY)
 * @rules_entry:	Entry in the match's rules_list
 */
struct kdbus_match_rule {
	u64 type;
	union {
		struct kdbus_bloom_mask bloom_mask;
		struct {
			char *name;
			u64 old_id;
			u64 new_id;
		};
		u64 id;
	};
	struct list_head rules_entry;
};

static void kdbus_match_rule_free(struct kdbus_match_rule *rule)
{
	if (!rule)
		return;

	switch (rule->type) {
	case KDBUS_ITEM_BLOOM_MASK:
		kfree(rule->bloom_mask.data);
		break;
	case KDBUS_ITEM_NAME:
	case KDBUS_ITEM_NAME_ADD:
	case KDBUS_ITEM_NAME_REMOVE:
	case KDBUS_ITEM_NAME_CHANGE:
		kfree(rule->name);
		break;
	}

	list_del(&rule->rules_entry);
	kfree(rule);
}

static void kdbus_match_entry_free(struct kdbus_match_entry *entry)
{
	struct kdbus_match_rule *r, *tmp;

	if (!entry)
		return;

	list_for_each_entry_safe(r, tmp, &entry->rules_list, rules_entry)
		kdbus_match_rule_free(r);

	if (entry->user) {
		atomic_long_sub(entry->charge, &entry->user->match_bytes);
		kdbus_user_unref(entry->user);
	}
	list_del(&entry->list_entry);
	kfree(entry);
	kdbus_stats_live(KDBUS_STAT_LIVE_MATCHES, -1);
}

/**
 * kdbus_match_db_new() - create a new, empty match database
 *
 * Return: the new database, or ERR_PTR(-ENOMEM).
 */
struct kdbus_match_db *kdbus_match_db_new(void)
{
	struct kdbus_match_db *mdb;

	mdb = kzalloc(sizeof(*mdb), GFP_KERNEL_ACCOUNT);
	if (!mdb)
		return ERR_PTR(-ENOMEM);

	init_rwsem(&mdb->mdb_rwlock);
	INIT_LIST_HEAD(&mdb->entries_list);
	mdb->slot = KDBUS_MATCH_NO_SLOT;

	return mdb;
}

/**
 * kdbus_match_db_free() - free a match database and all its matches
 * @mdb:		The database, may be NULL
 *
 * Context: nobody else may use @mdb any more; its connection is out of
 * the bus's match index.
 */
void kdbus_match_db_free(struct kdbus_match_db *mdb)
{
	struct kdbus_match_entry *e, *tmp;

	if (!mdb)
		return;

	WARN_ON(mdb->slot != KDBUS_MATCH_NO_SLOT);

	list_for_each_entry_safe(e, tmp, &mdb->entries_list, list_entry)
		kdbus_match_entry_free(e);

	kfree(mdb);
}

/*
 * kdbus.match(7): use mask generation min(g, G - 1); the rule passes if
 * every bit set in that generation is also set in the filter.
 */
static bool kdbus_match_bloom(const struct kdbus_bloom_filter *filter,
			      const struct kdbus_bloom_mask *mask,
			      size_t bloom_size)
{
	size_t n = bloom_size / sizeof(u64);
	const u64 *m;
	size_t i;
	u64 gen;

	if (!filter)
		return false;

	gen = min_t(u64, filter->generation, mask->generations - 1);
	m = mask->data + gen * n;

	for (i = 0; i < n; i++)
		if ((filter->data[i] & m[i]) != m[i])
			return false;

	return true;
}

/* the sender owns @name now: primary, not merely waiting (kdbus.match(7)) */
static bool kdbus_match_src_owns(struct kdbus_conn *src, const char *name)
{
	struct kdbus_name_owner *o;

	lockdep_assert_held(&src->ep->bus->name_registry->rwlock);

	list_for_each_entry(o, &src->names_list, conn_entry)
		if ((o->flags & KDBUS_NAME_PRIMARY) &&
		    !strcmp(o->name->name, name))
			return true;

	return false;
}

/* a user-message rule against a message sent by @src */
static bool kdbus_match_rule_user(const struct kdbus_match_rule *r,
				  struct kdbus_conn *src,
				  const struct kdbus_staging *s)
{
	switch (r->type) {
	case KDBUS_ITEM_BLOOM_MASK:
		return kdbus_match_bloom(s->bloom_filter, &r->bloom_mask,
					 s->bus->bloom.size);
	case KDBUS_ITEM_NAME:
		return kdbus_match_src_owns(src, r->name);
	case KDBUS_ITEM_ID:
		return r->id == KDBUS_MATCH_ID_ANY || r->id == src->id;
	case KDBUS_ITEM_DST_ID:
		return r->id == KDBUS_MATCH_ID_ANY || r->id == s->msg->dst_id;
	default:
		/* notification rules never pass user messages */
		return false;
	}
}

/* a notification rule against a kernel notification */
static bool kdbus_match_rule_kernel(const struct kdbus_match_rule *r,
				    const struct kdbus_staging *s)
{
	const struct kdbus_item *n = s->msg->items;

	if (n->type != r->type)
		return false;

	switch (r->type) {
	case KDBUS_ITEM_ID_ADD:
	case KDBUS_ITEM_ID_REMOVE:
		return r->id == KDBUS_MATCH_ID_ANY ||
		       r->id == n->id_change.id;
	case KDBUS_ITEM_NAME_ADD:
	case KDBUS_ITEM_NAME_REMOVE:
	case KDBUS_ITEM_NAME_CHANGE:
		return (r->old_id == KDBUS_MATCH_ID_ANY ||
			r->old_id == n->name_change.old_id.id) &&
		       (r->new_id == KDBUS_MATCH_ID_ANY ||
			r->new_id == n->name_change.new_id.id) &&
		       (!r->name || !strcmp(r->name, n->name_change.name));
	default:
		/* user-message rules never pass notifications */
		return false;
	}
}

static bool kdbus_match_entry_match(const struct kdbus_match_entry *e,
				    struct kdbus_conn *src,
				    const struct kdbus_staging *s)
{
	const struct kdbus_match_rule *r;

	list_for_each_entry(r, &e->rules_list, rules_entry) {
		if (src ? !kdbus_match_rule_user(r, src, s) :
			  !kdbus_match_rule_kernel(r, s))
			return false;
	}

	return true;
}

/**
 * kdbus_match_db_match_msg() - check whether a message passes a database
 * @mdb:		The receiver's match database
 * @conn_src:		Sending connection, NULL for a kernel notification
 * @staging:		The message; a kernel notification carries its
 *			notification item first
 *
 * Context: for user messages the caller holds the sender's bus name
 * registry lock (NAME rules read the sender's ownership records).
 *
 * Return: true if one of the matches of @mdb passes the message
 * (kdbus.match(7)); false for a database without matches.
 */
bool kdbus_match_db_match_msg(struct kdbus_match_db *mdb,
			      struct kdbus_conn *conn_src,
			      const struct kdbus_staging *staging)
{
	struct kdbus_match_entry *e;
	bool matched = false;

	down_read(&mdb->mdb_rwlock);
	list_for_each_entry(e, &mdb->entries_list, list_entry) {
		if (kdbus_match_entry_match(e, conn_src, staging)) {
			matched = true;
			break;
		}
	}
	up_read(&mdb->mdb_rwlock);

	return matched;
}

/* OR of the @n 64 bit words at @data */
static u64 kdbus_match_fold(const u64 *data, size_t n)
{
	u64 fold = 0;
	size_t i;

	for (i = 0; i < n; i++)
		fold |= data[i];

	return fold;
}

/*
 * Compute the summary fields of a match whose rules are final (see the
 * top of this file for why they are what the quick reject may use).
 */
static void kdbus_match_entry_summarize(struct kdbus_match_entry *e,
					size_t bloom_size)
{
	size_t n = bloom_size / sizeof(u64);
	const struct kdbus_match_rule *r;
	bool has_user_rule = false;
	u64 kernel_type = 0;
	bool mixed = false;
	u64 first, last, j, gens;
	unsigned int k;
	const u64 *m;

	e->may_pass_user = true;
	e->has_bloom = false;
	for (k = 0; k < KDBUS_MATCH_SUMMARY_GENS; k++)
		e->bloom_fold[k] = ~0ULL;

	list_for_each_entry(r, &e->rules_list, rules_entry) {
		switch (r->type) {
		case KDBUS_ITEM_BLOOM_MASK:
			e->has_bloom = true;
			gens = r->bloom_mask.generations;
			for (k = 0; k < KDBUS_MATCH_SUMMARY_GENS; k++) {
				first = min_t(u64, k, gens - 1);
				last = k < KDBUS_MATCH_SUMMARY_GENS - 1 ?
				       first : gens - 1;
				for (j = first; j <= last; j++) {
					m = r->bloom_mask.data + j * n;
					e->bloom_fold[k] &= kdbus_match_fold(m, n);
				}
			}
			has_user_rule = true;
			break;
		case KDBUS_ITEM_NAME:
		case KDBUS_ITEM_ID:
		case KDBUS_ITEM_DST_ID:
			has_user_rule = true;
			break;
		default:
			/* a notification rule never passes a user message */
			e->may_pass_user = false;
			if (kernel_type && kernel_type != r->type)
				mixed = true;
			kernel_type = r->type;
			break;
		}
	}

	if (has_user_rule || mixed)
		e->notify_types = 0;
	else if (!kernel_type)
		e->notify_types = U32_MAX;	/* no rules: passes everything */
	else
		e->notify_types = BIT(kernel_type - _KDBUS_ITEM_KERNEL_BASE);
}

/* summarize the matches of @mdb into @slot */
static void kdbus_match_slot_fill(struct kdbus_match_slot *slot,
				  struct kdbus_match_db *mdb)
{
	u32 flags = KDBUS_MATCH_SLOT_NO_USER | KDBUS_MATCH_SLOT_BLOOM_ONLY;
	const struct kdbus_match_entry *e;
	u32 notify_types = 0;
	unsigned int k;

	lockdep_assert_held_write(&mdb->mdb_rwlock);

	for (k = 0; k < KDBUS_MATCH_SUMMARY_GENS; k++)
		slot->bloom_summary[k] = ~0ULL;

	list_for_each_entry(e, &mdb->entries_list, list_entry) {
		notify_types |= e->notify_types;
		if (!e->may_pass_user)
			continue;
		flags &= ~KDBUS_MATCH_SLOT_NO_USER;
		if (!e->has_bloom) {
			flags &= ~KDBUS_MATCH_SLOT_BLOOM_ONLY;
			continue;
		}
		for (k = 0; k < KDBUS_MATCH_SUMMARY_GENS; k++)
			slot->bloom_summary[k] &= e->bloom_fold[k];
	}

	slot->flags = flags;
	slot->notify_types = notify_types;
}

/*
 * The capacity the index needs for @mdb's connection to have a slot, or 0
 * if it has one or there is room.
 */
static unsigned int kdbus_match_index_wanted(struct kdbus_bus *bus,
					     struct kdbus_match_db *mdb)
{
	struct kdbus_match_index *index = &bus->match_index;

	lockdep_assert_held_write(&bus->conn_rwlock);

	if (mdb->slot != KDBUS_MATCH_NO_SLOT || index->n < index->cap)
		return 0;
	return max(16U, index->cap * 2);
}

/* move the index into @slots, of @cap entries (at least index->n) */
static void kdbus_match_index_install(struct kdbus_match_index *index,
				      struct kdbus_match_slot *slots,
				      unsigned int cap)
{
	if (index->n)
		memcpy(slots, index->slots, index->n * sizeof(*slots));
	kvfree(index->slots);
	index->slots = slots;
	index->cap = cap;
}

/*
 * Take bus->conn_rwlock and mdb->mdb_rwlock for writing, with room in the
 * index for a slot of @mdb's connection. The larger array is allocated
 * with the locks dropped, so that a MATCH_ADD waiting for memory does not
 * hold up deliveries on the bus. Returns with the locks held, or
 * -ENOMEM without them.
 */
static int kdbus_match_index_lock_reserved(struct kdbus_bus *bus,
					   struct kdbus_match_db *mdb)
{
	struct kdbus_match_slot *spare = NULL;
	unsigned int spare_cap = 0, cap;

	for (;;) {
		down_write(&bus->conn_rwlock);
		down_write(&mdb->mdb_rwlock);

		cap = kdbus_match_index_wanted(bus, mdb);
		if (!cap)
			break;
		if (spare && spare_cap >= cap) {
			kdbus_match_index_install(&bus->match_index, spare,
						  spare_cap);
			spare = NULL;
			break;
		}

		up_write(&mdb->mdb_rwlock);
		up_write(&bus->conn_rwlock);

		kvfree(spare);
		spare = kvmalloc_array(cap, sizeof(*spare), GFP_KERNEL_ACCOUNT);
		if (!spare)
			return -ENOMEM;
		spare_cap = cap;
	}

	kvfree(spare);	/* not needed after all */
	return 0;
}

/*
 * Bring the slot of @conn in line with its matches, after a change of
 * them: a connection that has matches gets a slot (room was reserved), one
 * that has none loses it. The summary is recomputed from all matches, so
 * a removal widens it again.
 */
static void kdbus_match_index_update(struct kdbus_bus *bus,
				     struct kdbus_conn *conn)
{
	struct kdbus_match_index *index = &bus->match_index;
	struct kdbus_match_db *mdb = conn->match_db;

	lockdep_assert_held_write(&bus->conn_rwlock);
	lockdep_assert_held_write(&mdb->mdb_rwlock);

	if (list_empty(&mdb->entries_list)) {
		kdbus_match_index_remove(bus, conn);
		return;
	}

	if (mdb->slot == KDBUS_MATCH_NO_SLOT) {
		if (WARN_ON(index->n >= index->cap))
			return;
		mdb->slot = index->n++;
		index->slots[mdb->slot].conn = conn;
	}

	kdbus_match_slot_fill(&index->slots[mdb->slot], mdb);
}

/**
 * kdbus_match_index_remove() - drop a connection's slot from its bus's index
 * @bus:		The bus of @conn
 * @conn:		The connection
 *
 * The last slot takes the place of the removed one. An index that got
 * mostly empty is shrunk if memory allows.
 *
 * Context: bus->conn_rwlock held for writing.
 */
void kdbus_match_index_remove(struct kdbus_bus *bus, struct kdbus_conn *conn)
{
	struct kdbus_match_index *index = &bus->match_index;
	struct kdbus_match_db *mdb = conn->match_db;
	struct kdbus_match_slot *slots;
	unsigned int slot, last;

	lockdep_assert_held_write(&bus->conn_rwlock);

	if (!mdb || mdb->slot == KDBUS_MATCH_NO_SLOT)
		return;

	slot = mdb->slot;
	last = --index->n;
	if (slot != last) {
		index->slots[slot] = index->slots[last];
		index->slots[slot].conn->match_db->slot = slot;
	}
	mdb->slot = KDBUS_MATCH_NO_SLOT;

	if (index->cap <= 64 || index->n > index->cap / 4)
		return;

	/* no waiting for memory under the lock: kmalloc only, or nothing */
	slots = kvmalloc_array(index->cap / 2, sizeof(*slots),
			       GFP_NOWAIT | __GFP_ACCOUNT | __GFP_NOWARN);
	if (!slots)
		return;	/* keep the larger one */

	kdbus_match_index_install(index, slots, index->cap / 2);
}

/**
 * kdbus_match_index_free() - free the match index of a bus
 * @index:		The index, whose connections are all gone
 */
void kdbus_match_index_free(struct kdbus_match_index *index)
{
	WARN_ON(index->n);
	kvfree(index->slots);
	index->slots = NULL;
	index->n = 0;
	index->cap = 0;
}

/**
 * kdbus_match_probe_init() - prepare a message for the quick reject
 * @probe:		The probe to fill
 * @conn_src:		Sending connection, NULL for a kernel notification
 * @staging:		The message
 *
 * The filter is folded once per message, not once per receiver.
 */
void kdbus_match_probe_init(struct kdbus_match_probe *probe,
			    const struct kdbus_conn *conn_src,
			    const struct kdbus_staging *staging)
{
	const struct kdbus_bloom_filter *filter = staging->bloom_filter;
	u64 type;

	memset(probe, 0, sizeof(*probe));

	if (!conn_src) {
		type = staging->msg->items[0].type;
		if (type >= _KDBUS_ITEM_KERNEL_BASE &&
		    type - _KDBUS_ITEM_KERNEL_BASE < 32)
			probe->kernel_type = BIT(type - _KDBUS_ITEM_KERNEL_BASE);
		else
			probe->kernel_type = U32_MAX; /* full check decides */
		return;
	}

	if (!filter)
		return;

	probe->has_filter = true;
	probe->gen = min_t(u64, filter->generation,
			   KDBUS_MATCH_SUMMARY_GENS - 1);
	probe->fold = kdbus_match_fold(filter->data,
				       staging->bus->bloom.size / sizeof(u64));
}

/* remove all matches tagged @cookie; return how many were removed */
static unsigned int kdbus_match_db_remove_locked(struct kdbus_match_db *mdb,
						 u64 cookie)
{
	struct kdbus_match_entry *e, *tmp;
	unsigned int n = 0;

	lockdep_assert_held_write(&mdb->mdb_rwlock);

	list_for_each_entry_safe(e, tmp, &mdb->entries_list, list_entry) {
		if (e->cookie != cookie)
			continue;
		kdbus_match_entry_free(e);
		mdb->entries_count--;
		n++;
	}

	return n;
}

/* build one rule from a validated MATCH_ADD item (kdbus.match(7)) */
static struct kdbus_match_rule *
kdbus_match_rule_new(const struct kdbus_item *item, size_t bloom_size)
{
	size_t size = KDBUS_ITEM_PAYLOAD_SIZE(item);
	struct kdbus_match_rule *rule;
	int ret;

	rule = kzalloc(sizeof(*rule), GFP_KERNEL_ACCOUNT);
	if (!rule)
		return ERR_PTR(-ENOMEM);

	rule->type = item->type;
	INIT_LIST_HEAD(&rule->rules_entry);

	switch (item->type) {
	case KDBUS_ITEM_BLOOM_MASK:
		if (size == 0 || size < bloom_size || size % bloom_size) {
			ret = -EDOM;
			goto error;
		}

		rule->bloom_mask.generations = size / bloom_size;
		rule->bloom_mask.data = kmemdup(item->data64, size,
						GFP_KERNEL_ACCOUNT);
		if (!rule->bloom_mask.data) {
			ret = -ENOMEM;
			goto error;
		}
		break;

	case KDBUS_ITEM_NAME:
		if (!kdbus_name_is_valid(item->str, false)) {
			ret = -EINVAL;
			goto error;
		}

		rule->name = kstrdup(item->str, GFP_KERNEL_ACCOUNT);
		if (!rule->name) {
			ret = -ENOMEM;
			goto error;
		}
		break;

	case KDBUS_ITEM_ID:
	case KDBUS_ITEM_DST_ID:
		rule->id = item->id;
		break;

	case KDBUS_ITEM_NAME_ADD:
	case KDBUS_ITEM_NAME_REMOVE:
	case KDBUS_ITEM_NAME_CHANGE:
		rule->old_id = item->name_change.old_id.id;
		rule->new_id = item->name_change.new_id.id;

		/* a name filter, if any, is not checked for validity */
		if (size > sizeof(struct kdbus_notify_name_change)) {
			rule->name = kstrdup(item->name_change.name,
					     GFP_KERNEL_ACCOUNT);
			if (!rule->name) {
				ret = -ENOMEM;
				goto error;
			}
		}
		break;

	case KDBUS_ITEM_ID_ADD:
	case KDBUS_ITEM_ID_REMOVE:
		rule->id = item->id_change.id;
		break;

	default:
		/* the parser accepts no other type */
		ret = -EINVAL;
		goto error;
	}

	return rule;

error:
	kfree(rule);
	return ERR_PTR(ret);
}

/*
 * All BLOOM_MASK rules of one match must pass, and a rule passes when its
 * mask (generation min(g, G - 1)) is a subset of the filter; so they pass
 * together exactly when, per generation, the union of their masks does.
 * Merging them into one rule at MATCH_ADD makes the walk of a match one
 * Bloom check however many masks it was given: the cost of a broadcast
 * per receiver does not grow with the rules an attacker piles up.
 */
static int kdbus_match_merge_blooms(struct kdbus_match_entry *entry,
				    size_t bloom_size)
{
	struct kdbus_match_rule *r, *tmp, *first = NULL;
	size_t n = bloom_size / sizeof(u64), i;
	u64 gens = 0, g, *data;

	list_for_each_entry(r, &entry->rules_list, rules_entry)
		if (r->type == KDBUS_ITEM_BLOOM_MASK) {
			if (!first)
				first = r;
			else
				gens = max(gens, r->bloom_mask.generations);
		}
	if (!first || !gens)
		return 0;	/* none or one: nothing to merge */
	gens = max(gens, first->bloom_mask.generations);

	data = kcalloc(gens, bloom_size, GFP_KERNEL_ACCOUNT);
	if (!data)
		return -ENOMEM;

	list_for_each_entry_safe(r, tmp, &entry->rules_list, rules_entry) {
		if (r->type != KDBUS_ITEM_BLOOM_MASK)
			continue;
		for (g = 0; g < gens; g++) {
			const u64 *m = r->bloom_mask.data +
				min(g, r->bloom_mask.generations - 1) * n;

			for (i = 0; i < n; i++)
				data[g * n + i] |= m[i];
		}
		if (r != first)
			kdbus_match_rule_free(r);
	}

	kfree(first->bloom_mask.data);
	first->bloom_mask.data = data;
	first->bloom_mask.generations = gens;
	return 0;
}

/**
 * kdbus_cmd_match_add() - handle KDBUS_CMD_MATCH_ADD
 * @conn:		Connection to add the match to
 * @argp:		Command payload
 *
 * Return: 0 on success (or after negotiation), negative error code on
 * failure; nothing is changed then.
 */
int kdbus_cmd_match_add(struct kdbus_conn *conn, void __user *argp)
{
	struct kdbus_match_db *mdb = conn->match_db;
	struct kdbus_bus *bus = conn->ep->bus;
	size_t bloom_size = bus->bloom.size;
	struct kdbus_match_entry *entry = NULL;
	struct kdbus_match_rule *rule;
	struct kdbus_cmd_match *cmd;
	struct kdbus_item *item;
	unsigned int n_rules = 0;
	size_t charge;
	int ret;

	struct kdbus_arg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
		{ .type = KDBUS_ITEM_BLOOM_MASK, .multiple = true },
		{ .type = KDBUS_ITEM_NAME, .multiple = true },
		{ .type = KDBUS_ITEM_ID, .multiple = true },
		{ .type = KDBUS_ITEM_DST_ID, .multiple = true },
		{ .type = KDBUS_ITEM_NAME_ADD, .multiple = true },
		{ .type = KDBUS_ITEM_NAME_REMOVE, .multiple = true },
		{ .type = KDBUS_ITEM_NAME_CHANGE, .multiple = true },
		{ .type = KDBUS_ITEM_ID_ADD, .multiple = true },
		{ .type = KDBUS_ITEM_ID_REMOVE, .multiple = true },
	};
	struct kdbus_args args = {
		.allowed_flags = KDBUS_FLAG_NEGOTIATE |
				 KDBUS_MATCH_REPLACE,
		.argv = argv,
		.argc = ARRAY_SIZE(argv),
	};

	if (!kdbus_conn_is_ordinary(conn))
		return -EOPNOTSUPP;

	ret = kdbus_args_parse(&args, argp, &cmd);
	if (ret != 0)
		return ret;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL_ACCOUNT);
	if (!entry) {
		ret = -ENOMEM;
		goto exit;
	}
	kdbus_stats_live(KDBUS_STAT_LIVE_MATCHES, 1);

	entry->cookie = cmd->cookie;
	INIT_LIST_HEAD(&entry->list_entry);
	INIT_LIST_HEAD(&entry->rules_list);

	/* what the match costs: its command's items and the structures */
	charge = sizeof(*entry) + KDBUS_ITEMS_SIZE(cmd, items);
	KDBUS_ITEMS_FOREACH(item, cmd->items, KDBUS_ITEMS_SIZE(cmd, items)) {
		if (item->type == KDBUS_ITEM_NEGOTIATE)
			continue;
		if (++n_rules > KDBUS_MATCH_MAX_RULES) {
			ret = -E2BIG;
			goto exit;
		}
		charge += sizeof(*rule);
	}

	/*
	 * The user's budget, charged before anything is allocated. (A
	 * REPLACE is charged before the old match is removed, so at the
	 * budget's edge it may fail where removing first would not.)
	 */
	if (conn->user) {
		if (atomic_long_add_return(charge, &conn->user->match_bytes) >
		    KDBUS_USER_MAX_MATCH_BYTES) {
			atomic_long_sub(charge, &conn->user->match_bytes);
			ret = -EMFILE;
			goto exit;
		}
		entry->user = kdbus_user_ref(conn->user);
		entry->charge = charge;
	}

	KDBUS_ITEMS_FOREACH(item, cmd->items, KDBUS_ITEMS_SIZE(cmd, items)) {
		if (item->type == KDBUS_ITEM_NEGOTIATE)
			continue;

		rule = kdbus_match_rule_new(item, bloom_size);
		if (IS_ERR(rule)) {
			ret = PTR_ERR(rule);
			goto exit;
		}

		list_add_tail(&rule->rules_entry, &entry->rules_list);
	}

	ret = kdbus_match_merge_blooms(entry, bloom_size);
	if (ret < 0)
		goto exit;

	kdbus_match_entry_summarize(entry, bloom_size);

	/* the only step that can fail, so it goes first */
	ret = kdbus_match_index_lock_reserved(bus, mdb);
	if (ret < 0)
		goto exit;

	if (cmd->flags & KDBUS_MATCH_REPLACE)
		kdbus_match_db_remove_locked(mdb, cmd->cookie);

	/* REPLACE that removed something always leaves room */
	if (mdb->entries_count >= KDBUS_MATCH_MAX) {
		ret = -EMFILE;
	} else {
		list_add_tail(&entry->list_entry, &mdb->entries_list);
		mdb->entries_count++;
		entry = NULL;
		ret = 0;
	}

	kdbus_match_index_update(bus, conn);

	up_write(&mdb->mdb_rwlock);
	up_write(&bus->conn_rwlock);

exit:
	kdbus_match_entry_free(entry);
	return kdbus_args_clear(&args, ret);
}

/**
 * kdbus_cmd_match_remove() - handle KDBUS_CMD_MATCH_REMOVE
 * @conn:		Connection to remove the matches from
 * @argp:		Command payload
 *
 * Removes every match of @conn carrying the command's cookie.
 *
 * Return: 0 on success (or after negotiation), -EBADSLT if no match
 * carries the cookie, other negative error codes on failure.
 */
int kdbus_cmd_match_remove(struct kdbus_conn *conn, void __user *argp)
{
	struct kdbus_match_db *mdb = conn->match_db;
	struct kdbus_bus *bus = conn->ep->bus;
	struct kdbus_cmd_match *cmd;
	int ret;

	struct kdbus_arg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
	};
	struct kdbus_args args = {
		.allowed_flags = KDBUS_FLAG_NEGOTIATE,
		.argv = argv,
		.argc = ARRAY_SIZE(argv),
	};

	if (!kdbus_conn_is_ordinary(conn))
		return -EOPNOTSUPP;

	ret = kdbus_args_parse(&args, argp, &cmd);
	if (ret != 0)
		return ret;

	down_write(&bus->conn_rwlock);
	down_write(&mdb->mdb_rwlock);
	ret = kdbus_match_db_remove_locked(mdb, cmd->cookie) ? 0 : -EBADSLT;
	kdbus_match_index_update(bus, conn);
	up_write(&mdb->mdb_rwlock);
	up_write(&bus->conn_rwlock);

	return kdbus_args_clear(&args, ret);
}
