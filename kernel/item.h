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
#define KDBUS_ITEM_NEXT(_i) \
	((typeof(_i))((u8 *)(_i) + KDBUS_ALIGN8((_i)->size)))
#define KDBUS_ITEMS_SIZE(_h, _is) ((_h)->size - offsetof(typeof(*(_h)), _is))
#define KDBUS_ITEM_HEADER_SIZE offsetof(struct kdbus_item, data)
#define KDBUS_ITEM_SIZE(_s) KDBUS_ALIGN8(KDBUS_ITEM_HEADER_SIZE + (_s))
#define KDBUS_ITEM_PAYLOAD_SIZE(_i) ((_i)->size - KDBUS_ITEM_HEADER_SIZE)

/*
 * Walk an item chain that has already been validated (kdbus_items_validate()
 * or the command parser); never use it on unchecked input.
 */
#define KDBUS_ITEMS_FOREACH(_i, _is, _s)				\
	for ((_i) = (_is);						\
	     (u8 *)(_i) < (u8 *)(_is) + (_s) &&				\
	     (u8 *)(_i) >= (u8 *)(_is);					\
	     (_i) = KDBUS_ITEM_NEXT(_i))

#define KDBUS_ITEMS_END(_i, _is, _s)					\
	((u8 *)(_i) == ((u8 *)(_is) + KDBUS_ALIGN8(_s)))

int kdbus_item_validate_name(const struct kdbus_item *item);
int kdbus_item_validate(const struct kdbus_item *item);
int kdbus_items_validate(const struct kdbus_item *items, size_t items_size);
struct kdbus_item *kdbus_item_set(struct kdbus_item *item, u64 type,
				  const void *data, size_t len);

#endif
