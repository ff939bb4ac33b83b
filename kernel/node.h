/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kdbus nodes: the objects that appear in kdbusfs (domain root, control
 * file, bus directories, endpoint files), with a reference count for the
 * memory and an active count for the lifetime (see node.c).
 */

#ifndef __KDBUS_NODE_H
#define __KDBUS_NODE_H

#include <linux/atomic.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/time64.h>
#include <linux/uidgid.h>
#include <linux/wait.h>

struct kdbus_node;

enum kdbus_node_type {
	KDBUS_NODE_DOMAIN,
	KDBUS_NODE_CONTROL,
	KDBUS_NODE_BUS,
	KDBUS_NODE_ENDPOINT,
};

typedef void (*kdbus_node_free_t) (struct kdbus_node *node);
typedef void (*kdbus_node_release_t) (struct kdbus_node *node, bool was_active);

/**
 * struct kdbus_node - a node in the kdbusfs tree
 * @refcnt:	Reference count for the memory (atomic)
 * @active:	Active count, or one of the KDBUS_NODE_* states (see node.c)
 * @waitq:	Woken when @active drops to a drain state
 * @type:	Type of this node (invariant)
 * @free_cb:	Destructor, called when @refcnt drops to 0 (invariant)
 * @release_cb:	Called once when the node is deactivated and drained
 *		(invariant)
 * @mode:	File mode of the inode (invariant)
 * @uid:	Owner uid of the inode (invariant)
 * @gid:	Owner gid of the inode (invariant)
 * @name:	Name of the node, unique among siblings (invariant)
 * @hash:	Hash of @name (invariant)
 * @id:	Inode number, unique module-wide (invariant)
 * @ctime:	Creation time, reported as a, m and c time of every inode
 *		instantiated for the node (invariant); inodes are dropped on
 *		last use, so the node must remember it (kdbus.fs(7))
 * @parent:	Parent node, pinned (invariant)
 * @lock:	Protects @children and the state transitions of @active
 * @rb:	Entry in the parent's @children (parent's @lock)
 * @children:	Child nodes, sorted by hash and name (@lock)
 */
struct kdbus_node {
	atomic_t refcnt;
	atomic_t active;
	wait_queue_head_t waitq;

	unsigned int type;
	kdbus_node_free_t free_cb;
	kdbus_node_release_t release_cb;
	umode_t mode;
	kuid_t uid;
	kgid_t gid;

	char *name;
	unsigned int hash;
	unsigned int id;
	struct timespec64 ctime;
	struct kdbus_node *parent;

	struct mutex lock; /* children, state transitions */
	struct rb_node rb;
	struct rb_root children;
};

#define kdbus_node_from_rb(_node) rb_entry((_node), struct kdbus_node, rb)

void kdbus_node_init(struct kdbus_node *node, unsigned int type);

int kdbus_node_link(struct kdbus_node *node, struct kdbus_node *parent,
		    const char *name);

struct kdbus_node *kdbus_node_ref(struct kdbus_node *node);
struct kdbus_node *kdbus_node_unref(struct kdbus_node *node);

bool kdbus_node_is_active(struct kdbus_node *node);
bool kdbus_node_is_deactivated(struct kdbus_node *node);
bool kdbus_node_activate(struct kdbus_node *node);
void kdbus_node_deactivate(struct kdbus_node *node);

bool kdbus_node_acquire(struct kdbus_node *node);
void kdbus_node_release(struct kdbus_node *node);

struct kdbus_node *kdbus_node_find_child(struct kdbus_node *node,
					 const char *name);
struct kdbus_node *kdbus_node_nth_child(struct kdbus_node *node,
					loff_t index);

#endif
