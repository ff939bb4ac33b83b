// SPDX-License-Identifier: GPL-2.0-only
/*
 * kdbus nodes: every object that shows up in kdbusfs.
 *
 * A node has two counters:
 *  - @refcnt pins the memory; the last kdbus_node_unref() calls @free_cb.
 *  - @active pins the *lifetime*: while positive it is the number of active
 *    users (kdbus_node_acquire()/kdbus_node_release()). A node starts in
 *    KDBUS_NODE_NEW, kdbus_node_activate() makes it 0 (and takes one ref
 *    owned by the active state). kdbus_node_deactivate() adds
 *    KDBUS_NODE_BIAS, so no new active ref can be taken, waits for the
 *    existing ones to drain, deactivates all children first (iteratively,
 *    no recursion), then calls @release_cb exactly once, unlinks the node
 *    from its parent and marks it KDBUS_NODE_DRAINED.
 *
 * Locking:
 *  - node->lock protects node->children and the state transitions of the
 *    node's own @active (NEW -> active -> BIAS -> RELEASE -> DRAINED);
 *    increments/decrements of active refs are lock-free atomics.
 *  - A child's @rb entry is protected by the parent's lock.
 *  - Nesting: a parent's lock is never taken while holding a child's lock
 *    and vice versa; kdbus_node_deactivate() drops one before taking the
 *    other. @release_cb is called without any node lock held.
 */

#include <linux/atomic.h>
#include <linux/idr.h>
#include <linux/kernel.h>
#include <linux/limits.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/wait.h>

#include "node.h"
#include "stats.h"
#include "util.h"

#define KDBUS_NODE_BIAS			(INT_MIN + 5)
#define KDBUS_NODE_RELEASE_DIRECT	(KDBUS_NODE_BIAS - 1)
#define KDBUS_NODE_RELEASE		(KDBUS_NODE_BIAS - 2)
#define KDBUS_NODE_DRAINED		(KDBUS_NODE_BIAS - 3)
#define KDBUS_NODE_NEW			(KDBUS_NODE_BIAS - 4)

/* inode numbers, unique across all kdbusfs instances */
static DEFINE_IDA(kdbus_node_ida);

static int kdbus_node_name_compare(unsigned int hash, const char *name,
				   const struct kdbus_node *node)
{
	if (hash != node->hash)
		return hash - node->hash;

	return strcmp(name, node->name);
}

/**
 * kdbus_node_init() - initialize a kdbus_node
 * @node:	Pointer to the node to initialize
 * @type:	The type the node will have (KDBUS_NODE_*)
 *
 * The caller sets @free_cb, @release_cb, @mode, @uid and @gid afterwards
 * and links the node with kdbus_node_link() (or uses it as a root).
 */
void kdbus_node_init(struct kdbus_node *node, unsigned int type)
{
	atomic_set(&node->refcnt, 1);
	mutex_init(&node->lock);
	node->id = 0;
	ktime_get_real_ts64(&node->ctime);
	node->type = type;
	RB_CLEAR_NODE(&node->rb);
	node->children = RB_ROOT;
	init_waitqueue_head(&node->waitq);
	atomic_set(&node->active, KDBUS_NODE_NEW);
	kdbus_stats_live(KDBUS_STAT_LIVE_NODES, 1);
}

/**
 * kdbus_node_link() - link a node into the nodes system
 * @node:	Pointer to the node to initialize
 * @parent:	Pointer to a parent node, may be %NULL
 * @name:	The name of the node (or NULL if root node)
 *
 * Allocates an inode number and, for non-root nodes, inserts @node into
 * the children of @parent (which it pins). The node stays invisible until
 * kdbus_node_activate().
 *
 * Return: 0 on success, -EEXIST if a sibling has that name, other negative
 * error code on failure.
 */
int kdbus_node_link(struct kdbus_node *node, struct kdbus_node *parent,
		    const char *name)
{
	int ret;

	if (name) {
		node->name = kstrdup(name, GFP_KERNEL_ACCOUNT);
		if (!node->name)
			return -ENOMEM;

		node->hash = kdbus_strhash(name);
	}

	ret = ida_alloc_min(&kdbus_node_ida, 1, GFP_KERNEL);
	if (ret < 0)
		return ret;

	node->id = ret;
	ret = 0;

	if (parent) {
		struct rb_node **n, *prev;

		if (!kdbus_node_acquire(parent))
			return -ESHUTDOWN;

		mutex_lock(&parent->lock);

		n = &parent->children.rb_node;
		prev = NULL;

		while (*n) {
			struct kdbus_node *pos;
			int result;

			pos = kdbus_node_from_rb(*n);
			prev = *n;
			result = kdbus_node_name_compare(node->hash,
							 node->name,
							 pos);
			if (result == 0) {
				ret = -EEXIST;
				goto exit_unlock;
			}

			if (result < 0)
				n = &pos->rb.rb_left;
			else
				n = &pos->rb.rb_right;
		}

		/* add new node and rebalance the tree */
		rb_link_node(&node->rb, prev, n);
		rb_insert_color(&node->rb, &parent->children);
		node->parent = kdbus_node_ref(parent);

exit_unlock:
		mutex_unlock(&parent->lock);
		kdbus_node_release(parent);
	}

	return ret;
}

/**
 * kdbus_node_ref() - Acquire object reference
 * @node:	node to acquire reference to (or NULL)
 *
 * Return: @node
 */
struct kdbus_node *kdbus_node_ref(struct kdbus_node *node)
{
	if (node)
		atomic_inc(&node->refcnt);
	return node;
}

/**
 * kdbus_node_unref() - Drop object reference
 * @node:	node to drop reference to (or NULL)
 *
 * When the last reference is dropped, the node is unlinked from its parent
 * (if still linked), the parent's reference is dropped and @free_cb runs.
 *
 * Return: NULL
 */
struct kdbus_node *kdbus_node_unref(struct kdbus_node *node)
{
	if (node && atomic_dec_and_test(&node->refcnt)) {
		struct kdbus_node *parent = node->parent;
		unsigned int id = node->id;
		char *name = node->name;

		WARN_ON(atomic_read(&node->active) != KDBUS_NODE_DRAINED &&
			atomic_read(&node->active) != KDBUS_NODE_NEW);

		if (parent) {
			mutex_lock(&parent->lock);
			if (!RB_EMPTY_NODE(&node->rb)) {
				rb_erase(&node->rb, &parent->children);
				RB_CLEAR_NODE(&node->rb);
			}
			mutex_unlock(&parent->lock);
		}

		if (node->free_cb)
			node->free_cb(node);
		kdbus_stats_live(KDBUS_STAT_LIVE_NODES, -1);
		if (id > 0)
			ida_free(&kdbus_node_ida, id);

		kfree(name);
		kdbus_node_unref(parent);
	}

	return NULL;
}

/**
 * kdbus_node_is_active() - test whether a node is active
 * @node:	node to test
 *
 * Return: true if active (activated and not deactivated).
 */
bool kdbus_node_is_active(struct kdbus_node *node)
{
	return atomic_read(&node->active) >= 0;
}

/**
 * kdbus_node_is_deactivated() - test whether a node was already deactivated
 * @node:	node to test
 *
 * Return: true if kdbus_node_deactivate() was called on @node (or a parent).
 */
bool kdbus_node_is_deactivated(struct kdbus_node *node)
{
	int v;

	v = atomic_read(&node->active);
	return v != KDBUS_NODE_NEW && v < 0;
}

/**
 * kdbus_node_activate() - activate a node
 * @node:	node to activate
 *
 * Makes a NEW node active; fails if it was deactivated meanwhile (e.g. a
 * parent was torn down between kdbus_node_link() and this call).
 *
 * Return: true if this call activated the node.
 */
bool kdbus_node_activate(struct kdbus_node *node)
{
	bool res = false;

	mutex_lock(&node->lock);
	if (atomic_read(&node->active) == KDBUS_NODE_NEW) {
		atomic_sub(KDBUS_NODE_NEW, &node->active);
		/* activated nodes have ref +1 */
		kdbus_node_ref(node);
		res = true;
	}
	mutex_unlock(&node->lock);

	return res;
}

/**
 * kdbus_node_deactivate() - deactivate a node
 * @node:	The node to deactivate.
 *
 * Deactivates @node and all its children, waiting for every active
 * reference to be dropped, and releases each node exactly once (children
 * before parents). Concurrent callers wait until the node is drained.
 * May sleep; the caller must not hold an active reference to @node or to
 * any of its children.
 */
void kdbus_node_deactivate(struct kdbus_node *node)
{
	struct kdbus_node *pos, *child;
	struct rb_node *rb;
	int v_pre, v_post;

	pos = node;

	/*
	 * Back-tracking instead of recursion: mark the current node inactive
	 * by adding BIAS, wait for its active refs to drain, then descend
	 * into the first remaining child. A node without children is
	 * released and unlinked, then we continue with its parent until we
	 * are back at @node.
	 */
	for (;;) {
		mutex_lock(&pos->lock);
		v_pre = atomic_read(&pos->active);
		if (v_pre >= 0)
			atomic_add(KDBUS_NODE_BIAS, &pos->active);
		else if (v_pre == KDBUS_NODE_NEW)
			atomic_set(&pos->active, KDBUS_NODE_RELEASE_DIRECT);
		mutex_unlock(&pos->lock);

		/* wait until all active references were dropped */
		wait_event(pos->waitq,
			   atomic_read(&pos->active) <= KDBUS_NODE_BIAS);

		mutex_lock(&pos->lock);
		/* recurse into first child if any */
		rb = rb_first(&pos->children);
		if (rb) {
			child = kdbus_node_ref(kdbus_node_from_rb(rb));
			mutex_unlock(&pos->lock);
			pos = child;
			continue;
		}

		/* mark object as RELEASE */
		v_post = atomic_read(&pos->active);
		if (v_post == KDBUS_NODE_BIAS ||
		    v_post == KDBUS_NODE_RELEASE_DIRECT)
			atomic_set(&pos->active, KDBUS_NODE_RELEASE);
		mutex_unlock(&pos->lock);

		/*
		 * If this is the thread that marked the object as RELEASE, we
		 * perform the actual release. Otherwise, we wait until the
		 * release is done and the node is marked as DRAINED.
		 */
		if (v_post == KDBUS_NODE_BIAS ||
		    v_post == KDBUS_NODE_RELEASE_DIRECT) {
			if (pos->release_cb)
				pos->release_cb(pos, v_post == KDBUS_NODE_BIAS);

			if (pos->parent) {
				mutex_lock(&pos->parent->lock);
				if (!RB_EMPTY_NODE(&pos->rb)) {
					rb_erase(&pos->rb,
						 &pos->parent->children);
					RB_CLEAR_NODE(&pos->rb);
				}
				mutex_unlock(&pos->parent->lock);
			}

			/* mark as DRAINED */
			atomic_set(&pos->active, KDBUS_NODE_DRAINED);
			wake_up_all(&pos->waitq);

			/*
			 * Only an activated node owns the extra reference
			 * taken in kdbus_node_activate().
			 */
			if (v_post == KDBUS_NODE_BIAS)
				kdbus_node_unref(pos);
		} else {
			/* somebody else is releasing it; wait for them */
			wait_event(pos->waitq,
				   atomic_read(&pos->active) ==
				   KDBUS_NODE_DRAINED);
		}

		/* we're done if this was the node we were called on */
		if (pos == node)
			break;

		child = pos;
		pos = pos->parent;
		kdbus_node_unref(child);
	}
}

/**
 * kdbus_node_acquire() - Acquire an active ref on a node
 * @node:	The node
 *
 * Return: true if the node is active and a reference was taken.
 */
bool kdbus_node_acquire(struct kdbus_node *node)
{
	return node && atomic_inc_unless_negative(&node->active);
}

/**
 * kdbus_node_release() - Release an active ref on a node
 * @node:	The node (or NULL)
 *
 * Wakes up a pending deactivation when the last active ref is dropped.
 */
void kdbus_node_release(struct kdbus_node *node)
{
	if (node && atomic_dec_return(&node->active) == KDBUS_NODE_BIAS)
		wake_up_all(&node->waitq);
}

/**
 * kdbus_node_find_child() - Find an active child with the given name
 * @node:	The parent node to search through
 * @name:	Name of the child node to find
 *
 * Return: the child with a new reference, or NULL if there is no active
 * child of that name.
 */
struct kdbus_node *kdbus_node_find_child(struct kdbus_node *node,
					 const char *name)
{
	struct kdbus_node *child;
	struct rb_node *rb;
	unsigned int hash;
	int ret;

	hash = kdbus_strhash(name);

	mutex_lock(&node->lock);
	rb = node->children.rb_node;
	while (rb) {
		child = kdbus_node_from_rb(rb);
		ret = kdbus_node_name_compare(hash, name, child);
		if (ret < 0) {
			rb = rb->rb_left;
		} else if (ret > 0) {
			rb = rb->rb_right;
		} else {
			if (kdbus_node_is_active(child))
				kdbus_node_ref(child);
			else
				child = NULL;
			mutex_unlock(&node->lock);
			return child;
		}
	}
	mutex_unlock(&node->lock);

	return NULL;
}

/**
 * kdbus_node_nth_child() - Find the n-th active child of a node
 * @node:	The parent node
 * @index:	Zero-based position among the active children
 *
 * Used by readdir; the order is that of the children tree.
 *
 * Return: the child with a new reference, or NULL if there are fewer
 * active children.
 */
struct kdbus_node *kdbus_node_nth_child(struct kdbus_node *node,
					loff_t index)
{
	struct kdbus_node *child = NULL;
	struct rb_node *rb;

	mutex_lock(&node->lock);
	for (rb = rb_first(&node->children); rb; rb = rb_next(rb)) {
		struct kdbus_node *pos = kdbus_node_from_rb(rb);

		if (!kdbus_node_is_active(pos))
			continue;
		if (index-- == 0) {
			child = kdbus_node_ref(pos);
			break;
		}
	}
	mutex_unlock(&node->lock);

	return child;
}
