/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Match databases: the rules by which a connection selects broadcasts,
 * unicast signals and kernel notifications (kdbus.match(7)), and the
 * per-bus index of the connections that have matches, which lets a
 * broadcast skip most receivers that do not want it without taking their
 * locks (match.c).
 */

#ifndef __KDBUS_MATCH_H
#define __KDBUS_MATCH_H

#include <linux/bits.h>
#include <linux/types.h>

struct kdbus_bus;
struct kdbus_conn;
struct kdbus_match_db;
struct kdbus_staging;

/*
 * Bloom generations a summary tells apart: a message of generation g
 * is checked against summary min(g, KDBUS_MATCH_SUMMARY_GENS - 1).
 */
#define KDBUS_MATCH_SUMMARY_GENS	2

/* no match of the connection can pass a user message */
#define KDBUS_MATCH_SLOT_NO_USER	BIT(0)
/* every match that can pass a user message has a BLOOM_MASK rule */
#define KDBUS_MATCH_SLOT_BLOOM_ONLY	BIT(1)

/**
 * struct kdbus_match_slot - quick-reject summary of one connection
 * @bloom_summary:	BLOOM_ONLY: bits of which every match that can pass
 *			a user message has at least one in each 64 bit word
 *			fold of its mask (per summary generation)
 * @conn:		The connection (an ordinary one with matches)
 * @flags:		KDBUS_MATCH_SLOT_*
 * @notify_types:	Notification types (bit KDBUS_ITEM_* minus
 *			_KDBUS_ITEM_KERNEL_BASE) some match may pass
 */
struct kdbus_match_slot {
	u64 bloom_summary[KDBUS_MATCH_SUMMARY_GENS];
	struct kdbus_conn *conn;
	u32 flags;
	u32 notify_types;
};

/**
 * struct kdbus_match_index - the connections of a bus that have matches
 * @slots:		@n used slots of @cap, in no particular order
 * @n:			Number of used slots
 * @cap:		Number of allocated slots
 */
struct kdbus_match_index {
	struct kdbus_match_slot *slots;
	unsigned int n;
	unsigned int cap;
};

/**
 * struct kdbus_match_probe - what the quick reject looks at in a message
 * @kernel_type:	Bit of the notification type, 0 for a user message
 * @has_filter:		User message: it carries a Bloom filter
 * @gen:		Summary generation the filter selects
 * @fold:		OR of the filter's 64 bit words
 */
struct kdbus_match_probe {
	u32 kernel_type;
	bool has_filter;
	unsigned int gen;
	u64 fold;
};

void kdbus_match_probe_init(struct kdbus_match_probe *probe,
			    const struct kdbus_conn *conn_src,
			    const struct kdbus_staging *staging);

/**
 * kdbus_match_slot_may_pass() - may a slot's connection want a message?
 * @slot:		The connection's slot
 * @probe:		The message's probe
 *
 * Return: false if no match of the connection can pass the message; true
 * if the full check (kdbus_match_db_match_msg()) must decide.
 */
static inline bool kdbus_match_slot_may_pass(const struct kdbus_match_slot *slot,
					     const struct kdbus_match_probe *probe)
{
	if (probe->kernel_type)
		return slot->notify_types & probe->kernel_type;
	if (slot->flags & KDBUS_MATCH_SLOT_NO_USER)
		return false;
	if (!(slot->flags & KDBUS_MATCH_SLOT_BLOOM_ONLY))
		return true;
	return probe->has_filter &&
	       !(slot->bloom_summary[probe->gen] & ~probe->fold);
}

void kdbus_match_index_remove(struct kdbus_bus *bus, struct kdbus_conn *conn);
void kdbus_match_index_free(struct kdbus_match_index *index);

struct kdbus_match_db *kdbus_match_db_new(void);
void kdbus_match_db_free(struct kdbus_match_db *mdb);
bool kdbus_match_db_match_msg(struct kdbus_match_db *mdb,
			      struct kdbus_conn *conn_src,
			      const struct kdbus_staging *staging);

int kdbus_cmd_match_add(struct kdbus_conn *conn, void __user *argp);
int kdbus_cmd_match_remove(struct kdbus_conn *conn, void __user *argp);

#endif
