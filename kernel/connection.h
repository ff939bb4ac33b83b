/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Connections: what an endpoint handle becomes after HELLO.
 */

#ifndef __KDBUS_CONNECTION_H
#define __KDBUS_CONNECTION_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/path.h>
#include <linux/poll.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <uapi/linux/kdbus.h>

#include "limits.h"
#include "queue.h"

struct kdbus_ep;
struct kdbus_match_db;
struct kdbus_meta_proc;
struct kdbus_pool;
struct kvec;
struct kdbus_user;
struct file;
struct pid;
struct cred;

/* states of conn->active besides a non-negative active count */
#define KDBUS_CONN_ACTIVE_BIAS	(INT_MIN + 2)
#define KDBUS_CONN_ACTIVE_NEW	(INT_MIN + 1)

/**
 * struct kdbus_quota - per-sender accounting in one receiver (kdbus.pool(7))
 * @memory:	bytes of queued message slices
 * @msgs:	number of queued messages
 * @fds:	number of queued regular fds
 */
struct kdbus_quota {
	u32 memory;
	u16 msgs;
	u8 fds;
};

/**
 * struct kdbus_conn_fake - faked identity given at HELLO (kdbus.connection(7))
 * @have_creds:	a CREDS item was given
 * @uid:	faked uid (INVALID_UID if unset), same for the other ids
 * @euid:	faked euid
 * @suid:	faked suid
 * @fsuid:	faked fsuid
 * @gid:	faked gid
 * @egid:	faked egid
 * @sgid:	faked sgid
 * @fsgid:	faked fsgid
 * @have_pids:	a PIDS item was given
 * @pid:	faked pid (NULL if unset), pinned
 * @tid:	faked tid (NULL if unset), pinned
 * @ppid:	faked ppid (NULL if unset), pinned
 * @seclabel:	faked security label, or NULL
 *
 * All fields are invariant after HELLO.
 */
struct kdbus_conn_fake {
	bool have_creds;
	kuid_t uid, euid, suid, fsuid;
	kgid_t gid, egid, sgid, fsgid;
	bool have_pids;
	struct pid *pid, *tid, *ppid;
	char *seclabel;
};

/**
 * struct kdbus_conn - connection to a bus
 * @kref:		Reference count
 * @active:		Active references to the connection (see
 *			kdbus_conn_acquire()); KDBUS_CONN_ACTIVE_NEW before
 *			it is linked, BIAS added on disconnect
 * @dep_map:		Lockdep map modelling @active as a lock
 * @id:			Connection ID (invariant)
 * @flags:		KDBUS_HELLO_* flags (invariant)
 * @attach_flags_send:	KDBUS_ATTACH_* this connection reveals (atomic)
 * @attach_flags_recv:	KDBUS_ATTACH_* this connection wants (atomic)
 * @description:	Human-readable connection description, used for
 *			debugging and CONN_INFO; may be NULL (invariant)
 * @ep:			The endpoint this connection belongs to, pinned
 *			(invariant)
 * @user:		Accounting user of this connection, pinned
 *			(invariant)
 * @cred:		The credentials of the opener of the endpoint file
 *			(invariant)
 * @pid:		Pid of the task that called HELLO; defines the pid
 *			namespace metadata is translated into (invariant)
 * @root_path:		Root directory of the HELLO caller (invariant)
 * @fake:		Faked identity, NULL if none (invariant)
 * @meta_proc:		Process metadata of the HELLO caller, for CONN_INFO;
 *			NULL if @fake is set (invariant)
 * @activator_of:	Name given at HELLO to an activator or policy
 *			holder, NULL otherwise (invariant)
 * @privileged:		Opener has CAP_IPC_OWNER on the domain (invariant)
 * @owner:		Opener owns the bus (invariant)
 * @lock:		Protects @quota, @n_quota and the disconnect check
 * @hentry:		Entry in the bus's ID hash (bus->conn_rwlock)
 * @ep_entry:		Entry in the endpoint's list (ep->lock)
 * @monitor_entry:	Entry in the bus's monitor list (bus->conn_rwlock)
 * @wait:		Wake-up queue: poll(), disconnect draining
 * @pool:		The receive pool (invariant)
 * @n_quota:		Number of entries in @quota (@lock)
 * @quota:		Per-sender quota, indexed by kdbus_user->id (@lock)
 * @queue:		Receive queue (@lock)
 * @reply_list:		Reply records of requests this connection sent and
 *			waits for (@lock)
 * @work:		Reply timeout scan (kdbus_reply_list_scan_work())
 * @request_count:	Number of records on @reply_list (@lock)
 * @reply_scan_deadline: Deadline @work is armed for, 0 if none (@lock)
 * @lost_count:		Dropped-message counter (atomic)
 * @match_db:		Match database (invariant pointer, own lock)
 * @names_list:		Ownership records of this connection, in creation
 *			order (name_registry->rwlock)
 * @name_count:		Number of records on @names_list
 *			(name_registry->rwlock)
 */
struct kdbus_conn {
	struct kref kref;
	atomic_t active;
#ifdef CONFIG_DEBUG_LOCK_ALLOC
	struct lockdep_map dep_map;
#endif
	u64 id;
	u64 flags;
	atomic64_t attach_flags_send;
	atomic64_t attach_flags_recv;
	const char *description;
	struct kdbus_ep *ep;
	struct kdbus_user *user;
	const struct cred *cred;
	struct pid *pid;
	struct path root_path;
	struct kdbus_conn_fake *fake;
	struct kdbus_meta_proc *meta_proc;
	char *activator_of;
	bool privileged:1;
	bool owner:1;

	struct mutex lock; /* quota, disconnect vs. queue */
	struct hlist_node hentry;
	struct list_head ep_entry;
	struct list_head monitor_entry;
	wait_queue_head_t wait;
	struct kdbus_pool *pool;

	unsigned int n_quota;
	struct kdbus_quota *quota;

	struct kdbus_queue queue;
	struct list_head reply_list;
	struct delayed_work work;
	unsigned int request_count;
	u64 reply_scan_deadline;
	atomic_t lost_count;
	struct kdbus_match_db *match_db;

	struct list_head names_list;
	unsigned int name_count;
};

struct kdbus_conn *kdbus_conn_ref(struct kdbus_conn *conn);
struct kdbus_conn *kdbus_conn_unref(struct kdbus_conn *conn);
bool kdbus_conn_active(const struct kdbus_conn *conn);
int kdbus_conn_acquire(struct kdbus_conn *conn);
void kdbus_conn_release(struct kdbus_conn *conn);
int kdbus_conn_disconnect(struct kdbus_conn *conn, bool ensure_queue_empty);
void kdbus_conn_lock2(struct kdbus_conn *a, struct kdbus_conn *b);
void kdbus_conn_unlock2(struct kdbus_conn *a, struct kdbus_conn *b);
int kdbus_conn_quota_inc(struct kdbus_conn *c, struct kdbus_user *u,
			 size_t memory, size_t fds);
void kdbus_conn_quota_dec(struct kdbus_conn *c, struct kdbus_user *u,
			  size_t memory, size_t fds);
void kdbus_conn_move_messages(struct kdbus_conn *conn_dst,
			      struct kdbus_conn *conn_src, u64 name_id);

/* policy checks (kdbus.policy(7)) */
bool kdbus_conn_policy_own_name(struct kdbus_conn *conn,
				const struct cred *cred, const char *name);
bool kdbus_conn_policy_talk(struct kdbus_conn *conn,
			    const struct cred *cred, struct kdbus_conn *to);
bool kdbus_conn_policy_see_name(struct kdbus_conn *conn,
				const struct cred *cred, const char *name);
bool kdbus_conn_policy_see(struct kdbus_conn *conn, const struct cred *cred,
			   struct kdbus_conn *whom);

/* command dispatcher */
struct kdbus_conn *kdbus_cmd_hello(struct kdbus_ep *ep, struct file *file,
				   void __user *argp);
int kdbus_cmd_byebye_unlocked(struct kdbus_conn *conn, void __user *argp);
int kdbus_info_publish(struct kdbus_pool *pool, struct kvec *kvec,
		       size_t n_kvec, size_t size, struct kdbus_cmd_info *cmd,
		       struct kdbus_cmd_info __user *argp);
int kdbus_cmd_conn_info(struct kdbus_conn *conn, void __user *argp);
int kdbus_cmd_update(struct kdbus_conn *conn, void __user *argp);
int kdbus_cmd_free(struct kdbus_conn *conn, void __user *argp);

/**
 * kdbus_conn_is_ordinary() - Check if connection is ordinary
 * @conn:		The connection to check
 *
 * Return: Non-zero if the connection is an ordinary connection
 */
static inline int kdbus_conn_is_ordinary(const struct kdbus_conn *conn)
{
	return !(conn->flags & (KDBUS_HELLO_ACTIVATOR |
				KDBUS_HELLO_POLICY_HOLDER |
				KDBUS_HELLO_MONITOR));
}

/**
 * kdbus_conn_is_activator() - Check if connection is an activator
 * @conn:		The connection to check
 *
 * Return: Non-zero if the connection is an activator
 */
static inline int kdbus_conn_is_activator(const struct kdbus_conn *conn)
{
	return conn->flags & KDBUS_HELLO_ACTIVATOR;
}

/**
 * kdbus_conn_is_policy_holder() - Check if connection is a policy holder
 * @conn:		The connection to check
 *
 * Return: Non-zero if the connection is a policy holder
 */
static inline int kdbus_conn_is_policy_holder(const struct kdbus_conn *conn)
{
	return conn->flags & KDBUS_HELLO_POLICY_HOLDER;
}

/**
 * kdbus_conn_is_monitor() - Check if connection is a monitor
 * @conn:		The connection to check
 *
 * Return: Non-zero if the connection is a monitor
 */
static inline int kdbus_conn_is_monitor(const struct kdbus_conn *conn)
{
	return conn->flags & KDBUS_HELLO_MONITOR;
}

/**
 * kdbus_conn_wake_sync() - wake a connection's readers and sync waiters
 * @conn:	connection something was queued or answered for
 *
 * A synchronous wake-up, as AF_UNIX sockets use for data: the waker is
 * about to wait itself (a caller for its reply, a service in poll), so
 * the scheduler may run the woken task on this CPU instead of waking an
 * idle one with an IPI.
 */
static inline void kdbus_conn_wake_sync(struct kdbus_conn *conn)
{
	wake_up_interruptible_sync_poll(&conn->wait, EPOLLIN | EPOLLRDNORM);
}

#endif
