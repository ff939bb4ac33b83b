/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel notifications (kdbus.message(7), kdbus.name(7)).
 */

#ifndef __KDBUS_NOTIFY_H
#define __KDBUS_NOTIFY_H

#include <linux/types.h>

struct kdbus_bus;
struct kdbus_user;

int kdbus_notify_id_change(struct kdbus_bus *bus, struct kdbus_user *cause,
			   u64 type, u64 id, u64 flags);
int kdbus_notify_name_change(struct kdbus_bus *bus, struct kdbus_user *cause,
			     u64 type, u64 old_id, u64 new_id,
			     u64 old_flags, u64 new_flags,
			     const char *name);
int kdbus_notify_reply_timeout(struct kdbus_bus *bus, u64 id, u64 cookie);
int kdbus_notify_reply_dead(struct kdbus_bus *bus, u64 id, u64 cookie);
void kdbus_notify_flush(struct kdbus_bus *bus);
void kdbus_notify_free(struct kdbus_bus *bus);

#endif
