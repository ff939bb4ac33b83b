/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Endpoints: the files in a bus directory that connections are made on.
 */

#ifndef __KDBUS_ENDPOINT_H
#define __KDBUS_ENDPOINT_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/uidgid.h>

#include "node.h"
#include "policy.h"

struct kdbus_bus;
struct kdbus_user;
struct file;

/**
 * struct kdbus_ep - endpoint to access a bus
 * @node:		The kdbus node
 * @lock:		Protects @conn_list
 * @bus:		Bus behind this endpoint, pinned (invariant)
 * @user:		Anonymous accounting user of a custom endpoint, NULL
 *			for the default endpoint (invariant)
 * @conn_list:		Connections made through this endpoint
 * @policy_db:		Policy of a custom endpoint (ENDPOINT_UPDATE);
 *			unused on the default endpoint
 */
struct kdbus_ep {
	struct kdbus_node node;
	struct mutex lock; /* conn_list */
	struct kdbus_bus *bus;
	struct kdbus_user *user;
	struct list_head conn_list;
	struct kdbus_policy_db policy_db;
};

#define kdbus_ep_from_node(_node) \
	container_of((_node), struct kdbus_ep, node)

struct kdbus_ep *kdbus_ep_new(struct kdbus_bus *bus, const char *name,
			      unsigned int access, kuid_t uid, kgid_t gid,
			      bool is_custom);
struct kdbus_ep *kdbus_ep_ref(struct kdbus_ep *ep);
struct kdbus_ep *kdbus_ep_unref(struct kdbus_ep *ep);

bool kdbus_ep_is_privileged(struct kdbus_ep *ep, struct file *file);
bool kdbus_ep_is_owner(struct kdbus_ep *ep, struct file *file);

struct kdbus_ep *kdbus_cmd_ep_make(struct kdbus_bus *bus, void __user *argp);
int kdbus_cmd_ep_update(struct kdbus_ep *ep, void __user *argp);

#endif
