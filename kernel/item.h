/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Item helpers: size arithmetic, iteration, validation and writing.
 */

#ifndef __KDBUS_ITEM_H
#define __KDBUS_ITEM_H

#include <linux/kernel.h>
#include <uapi/linux/kdbus.h>

#include "util.h"

/* generic access and iterators over a stream of items */
#define KDBUS_ITEM_NEXT(_i)						\
	({								\
		typeof(_i) __i = (_i);					\
		(typeof(__i))((u8 *)__i + KDBUS_ALIGN8(__i->size));	\
	})
#define KDBUS_ITEMS_SIZE(_h, _is)					\
	({								\
		typeof(_h) __h = (_h);					\
		__h->size - offsetof(typeof(*__h), _is);		\
	})
#define KDBUS_ITEM_HEADER_SIZE offsetof(struct kdbus_item, data)
#define KDBUS_ITEM_SIZE(_s) KDBUS_ALIGN8(KDBUS_ITEM_HEADER_SIZE + (_s))
#define KDBUS_ITEM_PAYLOAD_SIZE(_i) ((_i)->size - KDBUS_ITEM_HEADER_SIZE)

/**
 * kdbus_items_next() - step through a validated item chain
 * @pos:	cursor, advanced past the returned item
 * @end:	end of the chain
 *
 * Return: the item at @pos, or NULL at the end of the chain. A size that
 * would step past @end (or wrap) ends the walk.
 */
static inline void *kdbus_items_next(const u8 **pos, const u8 *end)
{
	const struct kdbus_item *item = (const void *)*pos;
	const u8 *next;

	if (*pos >= end)
		return NULL;

	next = *pos + KDBUS_ALIGN8(item->size);
	*pos = (next <= *pos || next > end) ? end : next;
	return (void *)item;
}

/*
 * Walk an item chain that has already been validated (kdbus_items_validate()
 * or the command parser); never use it on unchecked input.
 */
#define KDBUS_ITEMS_FOREACH(_i, _is, _s)				\
	for (const u8 *__pos = (const u8 *)(_is), *__end = __pos + (_s);	\
	     ((_i) = kdbus_items_next(&__pos, __end));)

int kdbus_item_validate_name(const struct kdbus_item *item);
int kdbus_item_validate(const struct kdbus_item *item);
int kdbus_items_validate(const struct kdbus_item *items, size_t items_size);
struct kdbus_item *kdbus_item_set(struct kdbus_item *item, u64 type,
				  const void *data, size_t len);

#endif
