// SPDX-License-Identifier: GPL-2.0-only
/*
 * Item validation (kdbus.item(7)) and item writing helpers.
 *
 * Locking: none; items are always in caller-owned kernel buffers.
 */

#include <linux/capability.h>
#include <linux/kernel.h>
#include <linux/string.h>

#include "item.h"
#include "limits.h"
#include "util.h"

/**
 * kdbus_item_validate_name() - validate an item containing a sysname
 * @item:		Item to validate
 *
 * Applies the "sysname" rule: at least one character, at most
 * KDBUS_SYSNAME_MAX_LEN characters, a proper string, restricted charset.
 *
 * Return: 0 if the name is valid, -EINVAL or -ENAMETOOLONG otherwise.
 */
int kdbus_item_validate_name(const struct kdbus_item *item)
{
	const size_t payload_size = KDBUS_ITEM_PAYLOAD_SIZE(item);

	if (item->size < KDBUS_ITEM_HEADER_SIZE + 2)
		return -EINVAL;

	if (item->size > KDBUS_ITEM_HEADER_SIZE + KDBUS_SYSNAME_MAX_LEN + 1)
		return -ENAMETOOLONG;

	if (!kdbus_str_valid(item->str, payload_size))
		return -EINVAL;

	return kdbus_sysname_is_valid(item->str);
}

/**
 * kdbus_item_validate() - validate a single item
 * @item:	item to validate
 *
 * The caller guarantees that the item header and @item->size bytes are
 * inside the buffer. Checks the type-specific payload rules only.
 *
 * Return: 0 if item is valid, negative error code if not.
 */
int kdbus_item_validate(const struct kdbus_item *item)
{
	size_t payload_size = KDBUS_ITEM_PAYLOAD_SIZE(item);
	size_t l;
	u64 need;

	switch (item->type) {
	case KDBUS_ITEM_NEGOTIATE:
		if (payload_size % sizeof(u64) != 0)
			return -EINVAL;
		break;

	case KDBUS_ITEM_PAYLOAD_VEC:
	case KDBUS_ITEM_PAYLOAD_OFF:
		if (payload_size != sizeof(struct kdbus_vec))
			return -EINVAL;
		if (item->vec.size == 0)
			return -EINVAL;
		break;

	case KDBUS_ITEM_PAYLOAD_MEMFD:
		if (payload_size != sizeof(struct kdbus_memfd))
			return -EINVAL;
		if (item->memfd.size == 0)
			return -EINVAL;
		if (item->memfd.fd < 0)
			return -EBADF;
		break;

	case KDBUS_ITEM_FDS:
		if (payload_size % sizeof(int) != 0)
			return -EINVAL;
		break;

	case KDBUS_ITEM_CANCEL_FD:
		if (payload_size != sizeof(int))
			return -EINVAL;
		break;

	case KDBUS_ITEM_BLOOM_PARAMETER:
		if (payload_size != sizeof(struct kdbus_bloom_parameter))
			return -EINVAL;
		break;

	case KDBUS_ITEM_BLOOM_FILTER:
		/* followed by the bloom-mask, depends on the bloom-size */
		if (payload_size < sizeof(struct kdbus_bloom_filter))
			return -EINVAL;
		break;

	case KDBUS_ITEM_BLOOM_MASK:
		/* size depends on bloom-size of bus */
		break;

	case KDBUS_ITEM_CONN_DESCRIPTION:
	case KDBUS_ITEM_MAKE_NAME:
		return kdbus_item_validate_name(item);

	case KDBUS_ITEM_ATTACH_FLAGS_SEND:
	case KDBUS_ITEM_ATTACH_FLAGS_RECV:
	case KDBUS_ITEM_ID:
	case KDBUS_ITEM_DST_ID:
		if (payload_size != sizeof(u64))
			return -EINVAL;
		break;

	case KDBUS_ITEM_TIMESTAMP:
		if (payload_size != sizeof(struct kdbus_timestamp))
			return -EINVAL;
		break;

	case KDBUS_ITEM_CREDS:
		if (payload_size != sizeof(struct kdbus_creds))
			return -EINVAL;
		break;

	case KDBUS_ITEM_PIDS:
		/* hardening: the 2015 code did not check this size */
		if (payload_size != sizeof(struct kdbus_pids))
			return -EINVAL;
		break;

	case KDBUS_ITEM_AUXGROUPS:
		if (payload_size % sizeof(u32) != 0)
			return -EINVAL;
		break;

	case KDBUS_ITEM_NAME:
	case KDBUS_ITEM_DST_NAME:
	case KDBUS_ITEM_PID_COMM:
	case KDBUS_ITEM_TID_COMM:
	case KDBUS_ITEM_EXE:
	case KDBUS_ITEM_CMDLINE:
	case KDBUS_ITEM_CGROUP:
	case KDBUS_ITEM_SECLABEL:
		if (!kdbus_str_valid(item->str, payload_size))
			return -EINVAL;
		break;

	case KDBUS_ITEM_CAPS:
		if (payload_size < sizeof(u32))
			return -EINVAL;
		/* four sets of (last_cap / 32 + 1) 32-bit words each */
		need = sizeof(u32) +
		       4ULL * (CAP_TO_INDEX((u64)item->caps.last_cap) + 1) *
		       sizeof(u32);
		if (payload_size < need)
			return -EINVAL;
		break;

	case KDBUS_ITEM_AUDIT:
		if (payload_size != sizeof(struct kdbus_audit))
			return -EINVAL;
		break;

	case KDBUS_ITEM_POLICY_ACCESS:
		if (payload_size != sizeof(struct kdbus_policy_access))
			return -EINVAL;
		break;

	case KDBUS_ITEM_NAME_ADD:
	case KDBUS_ITEM_NAME_REMOVE:
	case KDBUS_ITEM_NAME_CHANGE:
		if (payload_size < sizeof(struct kdbus_notify_name_change))
			return -EINVAL;
		l = payload_size - sizeof(struct kdbus_notify_name_change);
		if (l > 0 && !kdbus_str_valid(item->name_change.name, l))
			return -EINVAL;
		break;

	case KDBUS_ITEM_ID_ADD:
	case KDBUS_ITEM_ID_REMOVE:
		if (payload_size != sizeof(struct kdbus_notify_id_change))
			return -EINVAL;
		break;

	case KDBUS_ITEM_REPLY_TIMEOUT:
	case KDBUS_ITEM_REPLY_DEAD:
		if (payload_size != 0)
			return -EINVAL;
		break;

	default:
		break;
	}

	return 0;
}

/**
 * kdbus_items_validate() - validate items passed by user-space
 * @items:		items to validate
 * @items_size:		number of bytes of @items
 *
 * Verifies the bounds of every item of the chain and its payload rules
 * (kdbus_item_validate()), and that the chain ends exactly at
 * KDBUS_ALIGN8(@items_size). Which types are accepted is up to the caller.
 *
 * Return: 0 on success, negative error code on failure.
 */
int kdbus_items_validate(const struct kdbus_item *items, size_t items_size)
{
	const struct kdbus_item *item;
	size_t pos = 0;
	int ret;

	while (pos < items_size) {
		if (items_size - pos < KDBUS_ITEM_HEADER_SIZE)
			return -EINVAL;

		item = (const void *)((const u8 *)items + pos);
		if (item->size < KDBUS_ITEM_HEADER_SIZE ||
		    item->size > items_size - pos)
			return -EINVAL;

		ret = kdbus_item_validate(item);
		if (ret < 0)
			return ret;

		pos += KDBUS_ALIGN8(item->size);
	}

	if (pos != KDBUS_ALIGN8(items_size))
		return -EINVAL;

	return 0;
}

/**
 * kdbus_item_set() - Set item content
 * @item:	The item to modify
 * @type:	The item type to set (KDBUS_ITEM_*)
 * @data:	Data to copy to item->data, may be %NULL
 * @len:	Number of bytes in @data
 *
 * This sets type, size and data fields of an item. If @data is NULL, the
 * data memory area is cleared. Padding up to the next 8-byte boundary is
 * always zeroed, so the buffer must provide KDBUS_ITEM_SIZE(@len) bytes.
 *
 * Return: Pointer to the following item.
 */
struct kdbus_item *kdbus_item_set(struct kdbus_item *item, u64 type,
				  const void *data, size_t len)
{
	item->type = type;
	item->size = KDBUS_ITEM_HEADER_SIZE + len;

	if (data)
		memcpy(item->data, data, len);
	else
		memset(item->data, 0, len);

	memset(item->data + len, 0, KDBUS_ALIGN8(len) - len);

	return KDBUS_ITEM_NEXT(item);
}
