// SPDX-License-Identifier: GPL-2.0-only
/*
 * Metadata (kdbus.connection(7)).
 *
 * Three sources of metadata items exist:
 *  - struct kdbus_meta_proc: data of a task (CREDS, PIDS, AUXGROUPS,
 *    TID_COMM, PID_COMM, EXE, CMDLINE, CGROUP, CAPS, SECLABEL, AUDIT).
 *    Always collected from current. A message collects lazily, item by
 *    item, the first time a receiver wants an item, and all receivers of
 *    the message share it. HELLO and BUS_MAKE take a full snapshot that
 *    is never refreshed.
 *  - struct kdbus_conn_fake: the identity an owner gave at HELLO instead
 *    of its own (kdbus.connection(7)). It replaces kdbus_meta_proc in
 *    CONN_INFO; messages of such a connection carry no task data at all.
 *  - struct kdbus_meta_conn: data of a connection (owned names,
 *    description) and the message's timestamp, collected at SEND time or
 *    at CONN_INFO time.
 *
 * Nothing is stored in translated form: kdbus_meta_emit() renders the
 * items separately for every receiver, into the user namespace of its
 * opener credentials, the pid namespace of its HELLO caller and relative
 * to its root directory.
 *
 * Locking:
 *  - mp->lock serialises kdbus_meta_proc_collect() on one object and
 *    protects @collected and @valid while collecting. Fields are written
 *    once, before their bit is set in @collected, and never change
 *    afterwards; kdbus_meta_emit() reads them under mp->lock.
 *  - mc->lock does the same for a kdbus_meta_conn.
 *  - Collecting owned names requires the bus's name registry rwlock (read
 *    or write) held by the caller. The locks here are leaves except for
 *    that: name_registry->rwlock -> conn->lock -> mp->lock / mc->lock ->
 *    mmap_lock of current (the command line is copied from user memory),
 *    the RCU read lock and kernfs_rename_lock. kdbus_meta_emit() also
 *    takes a custom endpoint's policy_db->entries_rwlock (read) and
 *    cache_lock under mc->lock; both are leaves.
 */

#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/dcache.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/fs_struct.h>
#include <linux/kernfs.h>
#include <linux/kref.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/path.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/uidgid.h>
#include <linux/user_namespace.h>

#include "bus.h"
#include "compat-metadata.h"
#include "connection.h"
#include "endpoint.h"
#include "item.h"
#include "metadata.h"
#include "names.h"
#include "policy.h"
#include "util.h"

/* the argument area is delivered up to this many bytes (kdbus.connection(7)) */
#define KDBUS_META_CMDLINE_MAX	4096

/* capability words per set in KDBUS_ITEM_CAPS (kdbus.item(7)) */
#define KDBUS_META_CAP_WORDS	2

/**
 * struct kdbus_meta_proc - process metadata
 * @kref:		Reference count
 * @lock:		Serialises collection, see the file comment
 * @collected:		KDBUS_ATTACH_* items collection was attempted for
 * @valid:		KDBUS_ATTACH_* items whose data exists
 * @cred:		Credentials of the task (CREDS, AUXGROUPS, CAPS)
 * @pid:		Thread of the task (PIDS tid)
 * @tgid:		Thread group of the task (PIDS pid)
 * @ppid:		Thread group of the real parent (PIDS ppid)
 * @tid_comm:		Comm of the thread (TID_COMM)
 * @pid_comm:		Comm of the thread group leader (PID_COMM)
 * @exe_path:		Path of the executable (EXE)
 * @cmdline:		Argument area, NUL-terminated (CMDLINE)
 * @cmdline_size:	Bytes in @cmdline
 * @cgroup:		Path in the default cgroup hierarchy (CGROUP)
 * @cgroup_id:		Id of that cgroup
 * @seclabel:		LSM context of the task (SECLABEL)
 * @secid:		The LSM's id of that context
 * @lender:		Snapshot whose @cgroup and @seclabel strings this
 *			object may share instead of building its own
 *			(kdbus_meta_proc_lend()), or NULL
 * @audit_loginuid:	Audit login uid (AUDIT)
 * @audit_sessionid:	Audit session id (AUDIT)
 */
struct kdbus_meta_proc {
	struct kref kref;
	struct mutex lock; /* collection, see above */
	u64 collected;
	u64 valid;

	const struct cred *cred;
	struct pid *pid;
	struct pid *tgid;
	struct pid *ppid;
	char tid_comm[TASK_COMM_LEN];
	char pid_comm[TASK_COMM_LEN];
	struct path exe_path;
	char *cmdline;
	size_t cmdline_size;
	char *cgroup;
	u64 cgroup_id;
	char *seclabel;
	u32 secid;
	struct kdbus_meta_proc *lender;
	kuid_t audit_loginuid;
	unsigned int audit_sessionid;
};

/**
 * kdbus_meta_proc_new() - create process metadata object
 *
 * Return: new object (nothing collected) or ERR_PTR(-ENOMEM).
 */
struct kdbus_meta_proc *kdbus_meta_proc_new(void)
{
	struct kdbus_meta_proc *mp;

	mp = kzalloc(sizeof(*mp), GFP_KERNEL_ACCOUNT);
	if (!mp)
		return ERR_PTR(-ENOMEM);

	kref_init(&mp->kref);
	mutex_init(&mp->lock);
	return mp;
}

static void kdbus_meta_proc_free(struct kref *kref)
{
	struct kdbus_meta_proc *mp = container_of(kref, struct kdbus_meta_proc,
						  kref);

	path_put(&mp->exe_path);
	put_pid(mp->ppid);
	put_pid(mp->tgid);
	put_pid(mp->pid);
	if (mp->cred)
		put_cred(mp->cred);
	if (!mp->lender || mp->seclabel != mp->lender->seclabel)
		kfree(mp->seclabel);
	if (!mp->lender || mp->cgroup != mp->lender->cgroup)
		kfree(mp->cgroup);
	kdbus_meta_proc_unref(mp->lender);
	kfree(mp->cmdline);
	mutex_destroy(&mp->lock);
	kfree(mp);
}

/**
 * kdbus_meta_proc_ref() - take a reference on process metadata
 * @mp:		object, or NULL
 *
 * Return: @mp
 */
struct kdbus_meta_proc *kdbus_meta_proc_ref(struct kdbus_meta_proc *mp)
{
	if (mp)
		kref_get(&mp->kref);
	return mp;
}

/**
 * kdbus_meta_proc_unref() - drop a reference on process metadata
 * @mp:		object, or NULL
 *
 * Return: NULL
 */
struct kdbus_meta_proc *kdbus_meta_proc_unref(struct kdbus_meta_proc *mp)
{
	if (mp)
		kref_put(&mp->kref, kdbus_meta_proc_free);
	return NULL;
}

/**
 * kdbus_meta_proc_lend() - let an object share strings of a snapshot
 * @mp:		object nothing was collected into yet
 * @snapshot:	a complete snapshot that never changes (HELLO's), or NULL
 *
 * The CGROUP and SECLABEL strings are the dear items of a message (a walk
 * of kernfs under a global lock, a string the LSM formats and allocates).
 * A message's task is nearly always in the cgroup and under the label it
 * had at HELLO: collecting then shares the snapshot's string if the key
 * still matches, and builds its own otherwise. The keys identify the
 * string for good: the id of a cgroup of the default hierarchy is never
 * reused and such a cgroup cannot be renamed (cgroup2 has no rename), and
 * an LSM maps a secid to one context (AppArmor hands a replaced profile a
 * new secid and allocates secids cyclically over 2^31; SELinux and Smack
 * never free theirs).
 */
void kdbus_meta_proc_lend(struct kdbus_meta_proc *mp,
			  struct kdbus_meta_proc *snapshot)
{
	mp->lender = kdbus_meta_proc_ref(snapshot);
}

/* whether current's thread or group leader has the name @comm */
static bool kdbus_meta_comm_is(struct task_struct *task, const char *comm)
{
	char now[TASK_COMM_LEN];

	get_task_comm(now, task);
	return !strncmp(now, comm, TASK_COMM_LEN);
}

/**
 * kdbus_meta_proc_is_current() - whether a snapshot still describes current
 * @snapshot:	a complete snapshot that never changes (HELLO's)
 *
 * A message whose sending task is the one that said HELLO, unchanged, can
 * carry the HELLO snapshot's items instead of collecting its own: one
 * object and a dozen references less per message. Every item's source is
 * compared: the credentials (CREDS, AUXGROUPS, CAPS: a struct cred never
 * changes, and the snapshot's reference keeps its address from being
 * reused), the pids, both comm strings, the executable's path, the
 * cgroup and secid (the keys of kdbus_meta_proc_lend()) and the audit
 * ids. The command line is in user memory: the caller compared it before
 * taking any lock (kdbus_meta_read_cmdline()), or leaves CMDLINE out.
 *
 * Return: true if every item of @snapshot is current's.
 */
bool kdbus_meta_proc_is_current(const struct kdbus_meta_proc *snapshot)
{
	const struct kdbus_meta_proc *snap = snapshot;
	struct file *exe_file = NULL;
	bool same;

	/* complete since HELLO, never written again: read without the lock */
	if (snap->collected != KDBUS_META_PROC_ITEMS ||
	    snap->cred != current_cred() ||
	    snap->pid != task_pid(current) ||
	    snap->tgid != task_tgid(current))
		return false;

	rcu_read_lock();
	same = snap->ppid == task_tgid(rcu_dereference(current->real_parent));
#ifdef CONFIG_CGROUPS
	same = same && (snap->valid & KDBUS_ATTACH_CGROUP) &&
	       snap->cgroup_id == cgroup_id(task_dfl_cgroup(current));
#endif
	rcu_read_unlock();
	if (!same)
		return false;

#ifdef CONFIG_SECURITY
	if (snap->secid != kdbus_current_secid())
		return false;
#endif
#ifdef CONFIG_AUDITSYSCALL
	if (!uid_eq(snap->audit_loginuid, audit_get_loginuid(current)) ||
	    snap->audit_sessionid != audit_get_sessionid(current))
		return false;
#endif

	if (!kdbus_meta_comm_is(current, snap->tid_comm) ||
	    !kdbus_meta_comm_is(current->group_leader, snap->pid_comm))
		return false;

	if (current->mm)
		exe_file = kdbus_get_mm_exe_file(current->mm);
	if (exe_file) {
		same = (snap->valid & KDBUS_ATTACH_EXE) &&
		       path_equal(&exe_file->f_path, &snap->exe_path);
		fput(exe_file);
	} else {
		same = !(snap->valid & KDBUS_ATTACH_EXE);
	}

	return same;
}

static void kdbus_meta_proc_collect_pids(struct kdbus_meta_proc *mp)
{
	struct task_struct *parent;

	mp->pid = get_pid(task_pid(current));
	mp->tgid = get_pid(task_tgid(current));

	rcu_read_lock();
	parent = rcu_dereference(current->real_parent);
	mp->ppid = get_pid(task_tgid(parent));
	rcu_read_unlock();

	mp->valid |= KDBUS_ATTACH_PIDS;
}

static void kdbus_meta_proc_collect_exe(struct kdbus_meta_proc *mp)
{
	struct file *exe_file;

	if (!current->mm)
		return;

	exe_file = kdbus_get_mm_exe_file(current->mm);
	if (!exe_file)
		return;

	mp->exe_path = exe_file->f_path;
	path_get(&mp->exe_path);
	fput(exe_file);
	mp->valid |= KDBUS_ATTACH_EXE;
}

/* whether the area [@start, @start + @len) of current holds @like */
static bool kdbus_meta_cmdline_is(unsigned long start, size_t len,
				  const char *like)
{
	char chunk[128];
	size_t off, n;

	for (off = 0; off < len; off += n) {
		n = min(len - off, sizeof(chunk));
		if (copy_from_user(chunk, (const char __user *)start + off, n))
			return false;
		/* as stored: the last byte is a NUL */
		if (off + n == len)
			chunk[n - 1] = '\0';
		if (memcmp(chunk, like + off, n))
			return false;
	}
	return true;
}

/**
 * kdbus_meta_read_cmdline() - read the argument area of current
 * @like:	snapshot whose command line to compare with first, or NULL
 * @out:	set to a kmalloc'ed, NUL-terminated copy, or NULL if current
 *		has none, it is not readable (the item is left out then,
 *		as procfs shows an empty cmdline) or it equals @like's
 * @out_size:	set to the bytes in *@out, or 0
 *
 * The whole area, capped (kdbus.connection(7)). get_cmdline() is not
 * exported; the area of current is read with copy_from_user(). This is
 * the one metadata item in user memory: no lock may be held. A command
 * line equal to @like's is compared through a buffer on the stack and
 * not copied: a message usually carries the one its sender had at HELLO.
 *
 * Return: 1 if the command line equals @like's, 0 if it was read into
 * *@out (or left out), -ENOMEM.
 */
int kdbus_meta_read_cmdline(const struct kdbus_meta_proc *like, char **out,
			    size_t *out_size)
{
	struct mm_struct *mm = current->mm;
	unsigned long start, end;
	size_t len;
	char *buf;

	*out = NULL;
	*out_size = 0;

	if (!mm)
		return 0;

	spin_lock(&mm->arg_lock);
	start = mm->arg_start;
	end = mm->arg_end;
	spin_unlock(&mm->arg_lock);

	if (end <= start)
		return 0;

	len = min_t(unsigned long, end - start, KDBUS_META_CMDLINE_MAX);

	/* a snapshot is complete and never changes: no lock needed */
	if (like && (like->valid & KDBUS_ATTACH_CMDLINE) &&
	    like->cmdline_size == len &&
	    kdbus_meta_cmdline_is(start, len, like->cmdline))
		return 1;

	buf = kmalloc(len, GFP_KERNEL_ACCOUNT);
	if (!buf)
		return -ENOMEM;

	if (copy_from_user(buf, (const char __user *)start, len)) {
		kfree(buf);
		return 0;
	}

	/* truncated or rewritten areas still end in a NUL */
	buf[len - 1] = '\0';
	*out = buf;
	*out_size = len;
	return 0;
}

/**
 * kdbus_meta_proc_set_cmdline() - hand a command line to an object
 * @mp:		object CMDLINE was not collected into yet
 * @cmdline:	from kdbus_meta_read_cmdline(), or NULL; @mp owns it now
 * @size:	bytes in @cmdline
 * @like:	the snapshot kdbus_meta_read_cmdline() found it equal to (its
 *		command line is copied), or NULL
 *
 * Return: 0 on success, -ENOMEM.
 */
int kdbus_meta_proc_set_cmdline(struct kdbus_meta_proc *mp, char *cmdline,
				size_t size, const struct kdbus_meta_proc *like)
{
	if (like) {
		size = like->cmdline_size;
		cmdline = kmemdup(like->cmdline, size, GFP_KERNEL_ACCOUNT);
		if (!cmdline)
			return -ENOMEM;
	}

	mutex_lock(&mp->lock);
	mp->cmdline = cmdline;
	mp->cmdline_size = size;
	if (cmdline)
		mp->valid |= KDBUS_ATTACH_CMDLINE;
	mp->collected |= KDBUS_ATTACH_CMDLINE;
	mutex_unlock(&mp->lock);
	return 0;
}

/*
 * The path in the default (v2) hierarchy, not translated into cgroup
 * namespaces. task_cgroup_path() is not used: it reports the first v1
 * hierarchy and "/" on v2-only systems. The css_set, its default cgroup
 * and that cgroup's kernfs node stay valid under RCU.
 */
static int kdbus_meta_proc_collect_cgroup(struct kdbus_meta_proc *mp)
{
#ifdef CONFIG_CGROUPS
	const struct kdbus_meta_proc *lender = mp->lender;
	struct cgroup *cgrp;
	char *buf;
	u64 id;
	int ret;

	rcu_read_lock();
	id = cgroup_id(task_dfl_cgroup(current));
	rcu_read_unlock();

	/* a snapshot is complete before it is lent, and never changes */
	if (lender && (lender->valid & KDBUS_ATTACH_CGROUP) &&
	    lender->cgroup_id == id) {
		mp->cgroup = lender->cgroup;
		mp->cgroup_id = id;
		mp->valid |= KDBUS_ATTACH_CGROUP;
		return 0;
	}

	buf = kmalloc(PAGE_SIZE, GFP_KERNEL_ACCOUNT);
	if (!buf)
		return -ENOMEM;

	rcu_read_lock();
	cgrp = task_dfl_cgroup(current);
	id = cgroup_id(cgrp);
	ret = kernfs_path_from_node(cgrp->kn, NULL, buf, PAGE_SIZE);
	rcu_read_unlock();

	/* kept also if the path is left out: kdbus_meta_proc_is_current() */
	mp->cgroup_id = id;

	if (ret < 0 || ret >= PAGE_SIZE) {
		/* unexpressible: leave the item out (kdbus.item(7)) */
		kfree(buf);
		return 0;
	}

	mp->cgroup = kstrdup(buf, GFP_KERNEL_ACCOUNT);
	kfree(buf);
	if (!mp->cgroup)
		return -ENOMEM;

	mp->valid |= KDBUS_ATTACH_CGROUP;
#endif
	return 0;
}

/*
 * The LSM context of current; -EOPNOTSUPP means no LSM provides one and
 * the item is left out, any other error fails the operation.
 */
static int kdbus_meta_proc_collect_seclabel(struct kdbus_meta_proc *mp)
{
#ifdef CONFIG_SECURITY
	const struct kdbus_meta_proc *lender = mp->lender;
	u32 secid = kdbus_current_secid();
	int ret;

	if (lender && (lender->valid & KDBUS_ATTACH_SECLABEL) &&
	    lender->secid == secid) {
		mp->seclabel = lender->seclabel;
		mp->secid = secid;
		mp->valid |= KDBUS_ATTACH_SECLABEL;
		return 0;
	}

	/* kept also if no context exists: kdbus_meta_proc_is_current() */
	mp->secid = secid;
	ret = kdbus_secid_seclabel(secid, &mp->seclabel);
	if (ret == -EOPNOTSUPP)
		return 0;
	if (ret < 0)
		return ret;

	if (!mp->seclabel)
		return -ENOMEM;

	mp->valid |= KDBUS_ATTACH_SECLABEL;
#endif
	return 0;
}

static void kdbus_meta_proc_collect_audit(struct kdbus_meta_proc *mp)
{
#ifdef CONFIG_AUDITSYSCALL
	mp->audit_loginuid = audit_get_loginuid(current);
	mp->audit_sessionid = audit_get_sessionid(current);
	mp->valid |= KDBUS_ATTACH_AUDIT;
#endif
}

/**
 * kdbus_meta_proc_collect() - collect process metadata of current
 * @mp:		process metadata object
 * @what:	KDBUS_ATTACH_* items wanted
 *
 * Collects every item of @what that has not been collected into @mp yet;
 * items collected before are kept (a message collects item by item as its
 * receivers ask, HELLO and BUS_MAKE collect everything once). Items whose
 * data does not exist (no LSM, no mm, ...) are marked collected but not
 * valid, so they are neither retried nor emitted.
 *
 * Return: 0 on success, negative error code on failure.
 */
int kdbus_meta_proc_collect(struct kdbus_meta_proc *mp, u64 what)
{
	int ret = 0;

	if (!mp)
		return 0;

	mutex_lock(&mp->lock);

	what &= KDBUS_META_PROC_ITEMS & ~mp->collected;
	if (!what)
		goto exit_unlock;

	if (what & (KDBUS_ATTACH_CREDS | KDBUS_ATTACH_AUXGROUPS |
		    KDBUS_ATTACH_CAPS)) {
		if (!mp->cred)
			mp->cred = get_current_cred();
		mp->valid |= what & (KDBUS_ATTACH_CREDS |
				     KDBUS_ATTACH_AUXGROUPS |
				     KDBUS_ATTACH_CAPS);
	}

	if (what & KDBUS_ATTACH_PIDS)
		kdbus_meta_proc_collect_pids(mp);

	if (what & KDBUS_ATTACH_TID_COMM) {
		get_task_comm(mp->tid_comm, current);
		mp->valid |= KDBUS_ATTACH_TID_COMM;
	}

	if (what & KDBUS_ATTACH_PID_COMM) {
		get_task_comm(mp->pid_comm, current->group_leader);
		mp->valid |= KDBUS_ATTACH_PID_COMM;
	}

	if (what & KDBUS_ATTACH_EXE)
		kdbus_meta_proc_collect_exe(mp);

	if (what & KDBUS_ATTACH_CMDLINE) {
		ret = kdbus_meta_read_cmdline(NULL, &mp->cmdline,
					      &mp->cmdline_size);
		if (ret < 0)
			goto exit_unlock;
		if (mp->cmdline)
			mp->valid |= KDBUS_ATTACH_CMDLINE;
	}

	if (what & KDBUS_ATTACH_CGROUP) {
		ret = kdbus_meta_proc_collect_cgroup(mp);
		if (ret < 0)
			goto exit_unlock;
	}

	if (what & KDBUS_ATTACH_SECLABEL) {
		ret = kdbus_meta_proc_collect_seclabel(mp);
		if (ret < 0)
			goto exit_unlock;
	}

	if (what & KDBUS_ATTACH_AUDIT)
		kdbus_meta_proc_collect_audit(mp);

	mp->collected |= what;

exit_unlock:
	mutex_unlock(&mp->lock);
	return ret;
}

/**
 * kdbus_meta_conn_init() - initialise connection metadata
 * @mc:		object to initialise (embedded in a staging object, or on the
 *		stack of CONN_INFO: one per message or query, never shared)
 */
void kdbus_meta_conn_init(struct kdbus_meta_conn *mc)
{
	memset(mc, 0, sizeof(*mc));
	mutex_init(&mc->lock);
}

/**
 * kdbus_meta_conn_destroy() - free what connection metadata collected
 * @mc:		object initialised with kdbus_meta_conn_init()
 */
void kdbus_meta_conn_destroy(struct kdbus_meta_conn *mc)
{
	kfree(mc->owned_names_items);
	mutex_destroy(&mc->lock);
}

/*
 * One OWNED_NAME item per name @conn owns as primary owner (or holds as
 * activator while it is the current owner), in creation order.
 */
static int kdbus_meta_conn_collect_names(struct kdbus_meta_conn *mc,
					 struct kdbus_conn *conn)
{
	struct kdbus_name_owner *o;
	struct kdbus_item *item;
	size_t size = 0, len;

	lockdep_assert_held(&conn->ep->bus->name_registry->rwlock);

	list_for_each_entry(o, &conn->names_list, conn_entry)
		if (!(o->flags & KDBUS_NAME_IN_QUEUE))
			size += KDBUS_ITEM_SIZE(sizeof(struct kdbus_name) +
						strlen(o->name->name) + 1);
	if (size == 0)
		return 0;

	mc->owned_names_items = kzalloc(size, GFP_KERNEL_ACCOUNT);
	if (!mc->owned_names_items)
		return -ENOMEM;

	item = mc->owned_names_items;
	list_for_each_entry(o, &conn->names_list, conn_entry) {
		if (o->flags & KDBUS_NAME_IN_QUEUE)
			continue;

		len = strlen(o->name->name) + 1;
		item->size = KDBUS_ITEM_HEADER_SIZE +
			     sizeof(struct kdbus_name) + len;
		item->type = KDBUS_ITEM_OWNED_NAME;
		item->name.flags = o->flags;
		memcpy(item->name.name, o->name->name, len);
		item = KDBUS_ITEM_NEXT(item);
	}

	mc->owned_names_size = size;
	mc->valid |= KDBUS_ATTACH_NAMES;
	return 0;
}

/**
 * kdbus_meta_conn_collect() - collect connection metadata
 * @mc:		connection metadata object
 * @conn:	connection to collect names and description of, or NULL
 * @ts:		timestamp of the message, or NULL
 * @what:	KDBUS_ATTACH_* items wanted
 *
 * Collects every item of @what not collected yet. TIMESTAMP is taken from
 * @ts (one reading per message, made by the caller) and only if @ts is
 * given. If @what contains KDBUS_ATTACH_NAMES, the caller must hold the
 * name registry lock of @conn's bus.
 *
 * Return: 0 on success, negative error code on failure.
 */
int kdbus_meta_conn_collect(struct kdbus_meta_conn *mc,
			    struct kdbus_conn *conn,
			    const struct kdbus_timestamp *ts, u64 what)
{
	int ret = 0;

	if (!mc)
		return 0;

	mutex_lock(&mc->lock);

	what &= KDBUS_META_CONN_ITEMS & ~mc->collected;
	if (!ts)
		what &= ~KDBUS_ATTACH_TIMESTAMP;
	if (!conn)
		what &= ~(KDBUS_ATTACH_NAMES | KDBUS_ATTACH_CONN_DESCRIPTION);
	if (!what)
		goto exit_unlock;

	if (what & KDBUS_ATTACH_TIMESTAMP) {
		mc->ts = *ts;
		mc->valid |= KDBUS_ATTACH_TIMESTAMP;
	}

	if (what & KDBUS_ATTACH_NAMES) {
		ret = kdbus_meta_conn_collect_names(mc, conn);
		if (ret < 0)
			goto exit_unlock;
	}

	/* set at HELLO, freed with @conn, which outlives @mc */
	if ((what & KDBUS_ATTACH_CONN_DESCRIPTION) && conn->description) {
		mc->conn_description = conn->description;
		mc->valid |= KDBUS_ATTACH_CONN_DESCRIPTION;
	}

	mc->collected |= what;

exit_unlock:
	mutex_unlock(&mc->lock);
	return ret;
}

/**
 * kdbus_meta_msg_mask() - items a message receiver gets (kdbus.connection(7))
 * @snd:	sending connection; current is the sending task
 * @rcv:	receiving connection
 *
 * The receiver's attach_flags_recv, restricted to the sender's
 * attach_flags_send, the implicit items, and the items the receiver could
 * read from its own /proc: those are granted if the sending thread has a
 * pid in the pid namespace of @rcv's HELLO caller. Linux 5.8 moved hidepid
 * to procfs mounts, out of reach of a pid namespace; it is treated as off
 * (design.md §7). A sender with a faked identity reveals no task data.
 *
 * Return: KDBUS_ATTACH_* mask
 */
u64 kdbus_meta_msg_mask(const struct kdbus_conn *snd,
			const struct kdbus_conn *rcv)
{
	u64 mask = atomic64_read(&snd->attach_flags_send) |
		   KDBUS_META_IMPLICIT;

	if (pid_nr_ns(task_pid(current), ns_of_pid(rcv->pid)))
		mask |= KDBUS_META_PROC_VISIBLE;

	mask &= atomic64_read(&rcv->attach_flags_recv);

	if (snd->fake)
		mask &= ~KDBUS_META_PROC_ITEMS;

	return mask;
}

/**
 * kdbus_meta_info_mask() - items CONN_INFO reveals about a connection
 * @conn:	target connection
 * @mask:	sanitised KDBUS_ATTACH_* mask of the request
 *
 * Return: @mask restricted to @conn's attach_flags_send, never TIMESTAMP
 * (kdbus.connection(7)).
 */
u64 kdbus_meta_info_mask(const struct kdbus_conn *conn, u64 mask)
{
	return mask & atomic64_read(&conn->attach_flags_send) &
	       ~KDBUS_ATTACH_TIMESTAMP;
}

/*
 * ids are 32 bit, stored zero-extended; invalid (unset) ids are ~0U. The
 * initial namespace maps every valid id to itself: receivers there, most
 * of them, need no map lookup per id.
 */
static u64 kdbus_meta_uid(struct user_namespace *ns, kuid_t uid)
{
	if (!uid_valid(uid))
		return (u32)-1;
	if (ns == &init_user_ns)
		return __kuid_val(uid);
	return (u32)from_kuid_munged(ns, uid);
}

static u64 kdbus_meta_gid(struct user_namespace *ns, kgid_t gid)
{
	if (!gid_valid(gid))
		return (u32)-1;
	if (ns == &init_user_ns)
		return __kgid_val(gid);
	return (u32)from_kgid_munged(ns, gid);
}

static void kdbus_meta_export_creds(struct kdbus_creds *out,
				    struct user_namespace *ns,
				    kuid_t uid, kuid_t euid,
				    kuid_t suid, kuid_t fsuid,
				    kgid_t gid, kgid_t egid,
				    kgid_t sgid, kgid_t fsgid)
{
	out->uid = kdbus_meta_uid(ns, uid);
	out->euid = kdbus_meta_uid(ns, euid);
	out->suid = kdbus_meta_uid(ns, suid);
	out->fsuid = kdbus_meta_uid(ns, fsuid);
	out->gid = kdbus_meta_gid(ns, gid);
	out->egid = kdbus_meta_gid(ns, egid);
	out->sgid = kdbus_meta_gid(ns, sgid);
	out->fsgid = kdbus_meta_gid(ns, fsgid);
}

/*
 * CAPS payload: last_cap and the inheritable, permitted, effective and
 * bounding sets, translated into @ns (kdbus.item(7)): copied if @ns is
 * the credentials' namespace or below it, unless the namespace on the way
 * whose parent is the credentials' namespace is owned by their euid (then
 * all capabilities but no inheritable ones), zero elsewhere.
 */
static void kdbus_meta_export_caps(u32 *out, const struct cred *cred,
				   struct user_namespace *ns)
{
	u32 *sets[4] = {
		&out[1],
		&out[1 + KDBUS_META_CAP_WORDS],
		&out[1 + 2 * KDBUS_META_CAP_WORDS],
		&out[1 + 3 * KDBUS_META_CAP_WORDS],
	};
	const u32 last_mask = (u32)GENMASK(CAP_LAST_CAP % 32, 0);
	bool parent = false, owner = false;
	struct user_namespace *iter;
	unsigned int i, j;

	BUILD_BUG_ON(CAP_LAST_CAP >= 32 * KDBUS_META_CAP_WORDS);
	BUILD_BUG_ON(CAP_LAST_CAP < 32);

	for (iter = ns; iter; iter = iter->parent) {
		if (iter == cred->user_ns) {
			parent = true;
			break;
		}

		if (iter == &init_user_ns)
			break;

		if (iter->parent == cred->user_ns &&
		    uid_eq(iter->owner, cred->euid)) {
			owner = true;
			break;
		}
	}

	out[0] = CAP_LAST_CAP;

	if (parent) {
		kdbus_cap_words(&cred->cap_inheritable, sets[0]);
		kdbus_cap_words(&cred->cap_permitted, sets[1]);
		kdbus_cap_words(&cred->cap_effective, sets[2]);
		kdbus_cap_words(&cred->cap_bset, sets[3]);
	} else {
		for (i = 0; i < 4; i++)
			for (j = 0; j < KDBUS_META_CAP_WORDS; j++)
				sets[i][j] = (owner && i > 0) ? ~0U : 0U;
	}

	/* clear the bits above last_cap */
	for (i = 0; i < 4; i++)
		sets[i][KDBUS_META_CAP_WORDS - 1] &= last_mask;
}

/* payload size of KDBUS_ITEM_CAPS */
#define KDBUS_META_CAPS_SIZE \
	(sizeof(u32) + 4 * KDBUS_META_CAP_WORDS * sizeof(u32))

/*
 * EXE can only be rendered relative to the root of the rendering task
 * (__d_path() is not exported); it is emitted only if that root is the
 * receiver's root (kdbus.connection(7)). Returns the path in @buf, NULL if the
 * item is left out, or an ERR_PTR.
 */
static char *kdbus_meta_exe_path(const struct path *exe,
				 const struct kdbus_conn *conn, char *buf)
{
	struct path root;
	char *str = NULL;

	get_fs_root(current->fs, &root);
	if (path_equal(&root, &conn->root_path))
		str = d_path(exe, buf, PAGE_SIZE);
	path_put(&root);

	return str;
}

/*
 * The OWNED_NAME items @conn may be given: all of them on the default
 * endpoint; on a custom endpoint only those of names its policy lets it
 * SEE, as for LIST, CONN_INFO by name and notifications (SECURITY.md,
 * "Confinement by custom endpoints"). The 2015 text attaches every name;
 * the endpoint's confinement wins. The filtered items are copied once
 * into a buffer of their own, so that a policy change between measuring
 * and writing cannot change the size. Policy locks are leaves (design.md
 * §3), so they may be taken here under mc->lock.
 */
static int kdbus_meta_visible_names(struct kdbus_meta_conn *mc,
				    const struct kdbus_conn *conn,
				    const void **out, size_t *out_size,
				    void **to_free)
{
	const struct kdbus_item *it = mc->owned_names_items;
	const u8 *end = (const u8 *)it + mc->owned_names_size;
	u8 *buf;
	size_t n = 0;

	*to_free = NULL;
	if (!conn->ep->user) {
		*out = mc->owned_names_items;
		*out_size = mc->owned_names_size;
		return 0;
	}

	buf = kmalloc(mc->owned_names_size, GFP_KERNEL_ACCOUNT);
	if (!buf)
		return -ENOMEM;

	for (; (const u8 *)it < end; it = KDBUS_ITEM_NEXT(it)) {
		const char *name = it->name.name;

		if (kdbus_policy_query(&conn->ep->policy_db, conn->cred, name,
				       kdbus_strhash(name)) < KDBUS_POLICY_SEE)
			continue;
		memcpy(buf + n, it, KDBUS_ALIGN8(it->size));
		n += KDBUS_ALIGN8(it->size);
	}

	*out = buf;
	*out_size = n;
	*to_free = buf;
	return 0;
}

/**
 * kdbus_meta_emit() - render metadata items for a receiver
 * @mp:		process metadata, or NULL
 * @mf:		faked process metadata, or NULL (used if @mp is NULL)
 * @mc:		connection metadata (names, description, timestamp), or NULL
 * @conn:	receiving or querying connection: its opener's user
 *		namespace, its HELLO caller's pid namespace and root
 * @mask:	KDBUS_ATTACH_* items granted to @conn
 * @out_items:	set to a kmalloc'ed buffer of items (kfree() it), or NULL
 * @out_size:	set to the size of the buffer (a multiple of 8), or 0
 *
 * Items are emitted in the order of kdbus.item(7), each only if it is in
 * @mask and its data exists. Every item is padded to 8 bytes with zeros.
 * A receiver on a custom endpoint gets only the OWNED_NAME items of names
 * its endpoint lets it SEE.
 *
 * Return: 0 on success, negative error code on failure.
 */
int kdbus_meta_emit(struct kdbus_meta_proc *mp,
		    const struct kdbus_conn_fake *mf,
		    struct kdbus_meta_conn *mc,
		    const struct kdbus_conn *conn, u64 mask,
		    struct kdbus_item **out_items, size_t *out_size)
{
	struct user_namespace *user_ns = conn->cred->user_ns;
	struct pid_namespace *pid_ns = ns_of_pid(conn->pid);
	struct kdbus_item *items = NULL, *item;
	const char *exe = NULL;
	char *exe_buf = NULL;
	const void *names = NULL;
	void *names_buf = NULL;
	size_t names_size = 0;
	u64 have = 0;
	size_t size = 0;
	int ret = 0;

	*out_items = NULL;
	*out_size = 0;

	if (mp) {
		mutex_lock(&mp->lock);
		have |= mp->valid & KDBUS_META_PROC_ITEMS;
	} else if (mf) {
		if (mf->have_creds)
			have |= KDBUS_ATTACH_CREDS;
		if (mf->have_pids)
			have |= KDBUS_ATTACH_PIDS;
		if (mf->seclabel)
			have |= KDBUS_ATTACH_SECLABEL;
	}

	if (mc) {
		mutex_lock(&mc->lock);
		have |= mc->valid & KDBUS_META_CONN_ITEMS;
	}

	mask &= have;

	if (mask & KDBUS_ATTACH_EXE) {
		exe_buf = kmalloc(PAGE_SIZE, GFP_KERNEL_ACCOUNT);
		if (!exe_buf) {
			ret = -ENOMEM;
			goto exit_unlock;
		}

		exe = kdbus_meta_exe_path(&mp->exe_path, conn, exe_buf);
		if (IS_ERR(exe)) {
			ret = PTR_ERR(exe);
			goto exit_unlock;
		}
		if (!exe)
			mask &= ~KDBUS_ATTACH_EXE;
	}

	if (mask & KDBUS_ATTACH_NAMES) {
		ret = kdbus_meta_visible_names(mc, conn, &names, &names_size,
					       &names_buf);
		if (ret < 0)
			goto exit_unlock;
	}

	/* measure */
	if (mask & KDBUS_ATTACH_CREDS)
		size += KDBUS_ITEM_SIZE(sizeof(struct kdbus_creds));
	if (mask & KDBUS_ATTACH_PIDS)
		size += KDBUS_ITEM_SIZE(sizeof(struct kdbus_pids));
	if (mask & KDBUS_ATTACH_AUXGROUPS)
		size += KDBUS_ITEM_SIZE(mp->cred->group_info->ngroups *
					sizeof(u64));
	if (mask & KDBUS_ATTACH_TID_COMM)
		size += KDBUS_ITEM_SIZE(strlen(mp->tid_comm) + 1);
	if (mask & KDBUS_ATTACH_PID_COMM)
		size += KDBUS_ITEM_SIZE(strlen(mp->pid_comm) + 1);
	if (mask & KDBUS_ATTACH_EXE)
		size += KDBUS_ITEM_SIZE(strlen(exe) + 1);
	if (mask & KDBUS_ATTACH_CMDLINE)
		size += KDBUS_ITEM_SIZE(mp->cmdline_size);
	if (mask & KDBUS_ATTACH_CGROUP)
		size += KDBUS_ITEM_SIZE(strlen(mp->cgroup) + 1);
	if (mask & KDBUS_ATTACH_CAPS)
		size += KDBUS_ITEM_SIZE(KDBUS_META_CAPS_SIZE);
	if (mask & KDBUS_ATTACH_SECLABEL)
		size += KDBUS_ITEM_SIZE(strlen(mp ? mp->seclabel :
					       mf->seclabel) + 1);
	if (mask & KDBUS_ATTACH_AUDIT)
		size += KDBUS_ITEM_SIZE(sizeof(struct kdbus_audit));
	if (mask & KDBUS_ATTACH_NAMES)
		size += names_size;
	if (mask & KDBUS_ATTACH_CONN_DESCRIPTION)
		size += KDBUS_ITEM_SIZE(strlen(mc->conn_description) + 1);
	if (mask & KDBUS_ATTACH_TIMESTAMP)
		size += KDBUS_ITEM_SIZE(sizeof(struct kdbus_timestamp));

	if (size == 0)
		goto exit_unlock;

	items = kzalloc(size, GFP_KERNEL_ACCOUNT);
	if (!items) {
		ret = -ENOMEM;
		goto exit_unlock;
	}

	/* render */
	item = items;

	if (mask & KDBUS_ATTACH_CREDS) {
		item->type = KDBUS_ITEM_CREDS;
		item->size = KDBUS_ITEM_HEADER_SIZE + sizeof(item->creds);
		if (mp)
			kdbus_meta_export_creds(&item->creds, user_ns,
						mp->cred->uid, mp->cred->euid,
						mp->cred->suid,
						mp->cred->fsuid,
						mp->cred->gid, mp->cred->egid,
						mp->cred->sgid,
						mp->cred->fsgid);
		else
			kdbus_meta_export_creds(&item->creds, user_ns,
						mf->uid, mf->euid, mf->suid,
						mf->fsuid, mf->gid, mf->egid,
						mf->sgid, mf->fsgid);
		item = KDBUS_ITEM_NEXT(item);
	}

	if (mask & KDBUS_ATTACH_PIDS) {
		struct pid *tgid = mp ? mp->tgid : mf->pid;
		struct pid *tid = mp ? mp->pid : mf->tid;
		struct pid *ppid = mp ? mp->ppid : mf->ppid;

		item->type = KDBUS_ITEM_PIDS;
		item->size = KDBUS_ITEM_HEADER_SIZE + sizeof(item->pids);
		item->pids.pid = tgid ? pid_nr_ns(tgid, pid_ns) : 0;
		item->pids.tid = tid ? pid_nr_ns(tid, pid_ns) : 0;
		item->pids.ppid = ppid ? pid_nr_ns(ppid, pid_ns) : 0;
		item = KDBUS_ITEM_NEXT(item);
	}

	if (mask & KDBUS_ATTACH_AUXGROUPS) {
		const struct group_info *gi = mp->cred->group_info;
		int i;

		item->type = KDBUS_ITEM_AUXGROUPS;
		item->size = KDBUS_ITEM_HEADER_SIZE +
			     gi->ngroups * sizeof(u64);
		for (i = 0; i < gi->ngroups; i++)
			item->data64[i] = kdbus_meta_gid(user_ns, gi->gid[i]);
		item = KDBUS_ITEM_NEXT(item);
	}

	if (mask & KDBUS_ATTACH_TID_COMM)
		item = kdbus_item_set(item, KDBUS_ITEM_TID_COMM, mp->tid_comm,
				      strlen(mp->tid_comm) + 1);

	if (mask & KDBUS_ATTACH_PID_COMM)
		item = kdbus_item_set(item, KDBUS_ITEM_PID_COMM, mp->pid_comm,
				      strlen(mp->pid_comm) + 1);

	if (mask & KDBUS_ATTACH_EXE)
		item = kdbus_item_set(item, KDBUS_ITEM_EXE, exe,
				      strlen(exe) + 1);

	if (mask & KDBUS_ATTACH_CMDLINE)
		item = kdbus_item_set(item, KDBUS_ITEM_CMDLINE, mp->cmdline,
				      mp->cmdline_size);

	if (mask & KDBUS_ATTACH_CGROUP)
		item = kdbus_item_set(item, KDBUS_ITEM_CGROUP, mp->cgroup,
				      strlen(mp->cgroup) + 1);

	if (mask & KDBUS_ATTACH_CAPS) {
		item->type = KDBUS_ITEM_CAPS;
		item->size = KDBUS_ITEM_HEADER_SIZE + KDBUS_META_CAPS_SIZE;
		kdbus_meta_export_caps((u32 *)item->data, mp->cred, user_ns);
		item = KDBUS_ITEM_NEXT(item);
	}

	if (mask & KDBUS_ATTACH_SECLABEL) {
		const char *label = mp ? mp->seclabel : mf->seclabel;

		item = kdbus_item_set(item, KDBUS_ITEM_SECLABEL, label,
				      strlen(label) + 1);
	}

	if (mask & KDBUS_ATTACH_AUDIT) {
		kuid_t kuid = mp->audit_loginuid;
		uid_t loginuid = user_ns == &init_user_ns ? __kuid_val(kuid) :
				 from_kuid(user_ns, kuid);

		item->type = KDBUS_ITEM_AUDIT;
		item->size = KDBUS_ITEM_HEADER_SIZE + sizeof(item->audit);
		item->audit.sessionid = mp->audit_sessionid;
		/* no overflow id here: unmapped or unset is ~0U */
		item->audit.loginuid = loginuid;
		item = KDBUS_ITEM_NEXT(item);
	}

	if ((mask & KDBUS_ATTACH_NAMES) && names_size) {
		memcpy(item, names, names_size);
		item = (void *)((u8 *)item + names_size);
	}

	if (mask & KDBUS_ATTACH_CONN_DESCRIPTION)
		item = kdbus_item_set(item, KDBUS_ITEM_CONN_DESCRIPTION,
				      mc->conn_description,
				      strlen(mc->conn_description) + 1);

	if (mask & KDBUS_ATTACH_TIMESTAMP) {
		item->type = KDBUS_ITEM_TIMESTAMP;
		item->size = KDBUS_ITEM_HEADER_SIZE + sizeof(item->timestamp);
		item->timestamp = mc->ts;
		item = KDBUS_ITEM_NEXT(item);
	}

	WARN_ON((u8 *)item != (u8 *)items + size);

	*out_items = items;
	*out_size = size;

exit_unlock:
	if (mc)
		mutex_unlock(&mc->lock);
	if (mp)
		mutex_unlock(&mp->lock);
	kfree(exe_buf);
	kfree(names_buf);
	return ret;
}
