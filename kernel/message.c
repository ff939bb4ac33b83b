// SPDX-License-Identifier: GPL-2.0-only
/*
 * kdbus messages: validation and staging of a message, the single copy
 * from the sender's memory into a receiver's pool, and the SEND and RECV
 * commands.
 *
 * Locking:
 *  - A struct kdbus_staging belongs to the thread that created it and is
 *    never shared; it needs no lock. struct kdbus_gaps is immutable and
 *    reference counted. The exception is the payload of a large
 *    synchronous call, or of the answer to one, which the receiver pulls
 *    (kdbus_queue_entry_pull()): staging->pull_entry and entry->pull link
 *    the two under the receiver's conn->lock, which the sender takes
 *    (alone) before its SEND returns to copy what was not pulled; the
 *    staging object lives until then, so a linked entry never points to
 *    a freed one. Meanwhile the sender copies pieces of the payload into
 *    the receiver's slice under staging->pull_lock only, a raw spinlock
 *    held for one page's copy into pool pages found beforehand (no
 *    connection lock, no sleep, no preemption); unlinking takes that lock
 *    too, so the slice outlives each page (kdbus_staging_help_pull()).
 *  - Delivering into a receiver takes the receiver's conn->lock (it
 *    protects the receive queue, its quotas and the pool's accounted
 *    share) and, when a reply record is created or consumed, the
 *    requester's conn->lock too. Two connection locks are always taken
 *    through kdbus_conn_lock2(), which orders them by address.
 *  - No user memory is read or written under a lock another connection
 *    can need (SECURITY.md, "User memory and shared locks"): the sender's
 *    payload pages are pinned while staging, before any lock, and the
 *    copies into receivers' pools read only those pinned pages; the
 *    sender's command line (the only metadata read from user memory) is
 *    also collected while staging, if any connection of the bus wants
 *    it; results go back to user space after every lock is dropped.
 *    A sender whose memory faults slowly stalls only itself.
 *  - Lock order: conn->lock (at most two, by address) ->
 *    staging->pull_lock (raw; under it only a copy into referenced pool
 *    pages, which takes no lock) -> the pool's page cache (pool.c writes
 *    pages directly, no inode lock).
 *    pool->lock is a leaf of its own, never held across a copy.
 *    Apart from that copy, nothing here runs with a spinlock held.
 *  - Metadata (metadata.c) is collected and rendered per receiver while
 *    its conn->lock is held: conn->lock -> meta_proc->lock /
 *    meta_conn->lock; nothing read there comes from user memory.
 *    Every user message is delivered under the name registry's read lock,
 *    which the OWNED_NAME metadata of the sender needs.
 *  - Staging a PAYLOAD_MEMFD item reads the memfd's seals and size under
 *    its inode lock (shared), with no other lock held.
 *  - Kernel notifications are queued on the bus (notify.c) while locks
 *    are held and delivered (kdbus_notify_flush()) after all locks are
 *    dropped. A message sent by name is queued under the name registry's
 *    read lock, so it cannot race with an owner change (names.c).
 *  - Signals are matched and queued under the registry's read lock too
 *    (NAME match rules read the sender's names). Broadcasts are
 *    serialised per bus by bus->notify_flush_lock, together with kernel
 *    notifications, so all receivers see them in one order. Order:
 *    bus->notify_flush_lock -> name_registry->rwlock (read) ->
 *    bus->conn_rwlock (read; it also protects bus->match_index, the
 *    receivers a broadcast walks) -> match_db->mdb_rwlock (released
 *    before delivering) -> conn->lock.
 */

#include <linux/bvec.h>
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/mm.h>
#include <linux/net.h>
#include <linux/poll.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/sched/stat.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/sizes.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <net/sock.h>

#include "bus.h"
#include "connection.h"
#include "domain.h"
#include "endpoint.h"
#include "fds.h"
#include "handle.h"
#include "item.h"
#include "limits.h"
#include "match.h"
#include "message.h"
#include "metadata.h"
#include "names.h"
#include "notify.h"
#include "pool.h"
#include "queue.h"
#include "reply.h"
#include "stats.h"
#include "util.h"

/* number of item types a struct kdbus_msg accepts, see kdbus_msg_parse() */
#define KDBUS_MSG_N_ARGS 6

/* seals a memfd must carry to be accepted as payload (kdbus.message(7)) */
#define KDBUS_MEMFD_SEALS \
	(F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL)

/*
 * Payloads from this size on are pulled by the receiver of a synchronous
 * call (kdbus_queue_entry_pull()). Below it the copy is short enough that
 * where it runs does not matter, and the sender frees its staging object
 * before it sleeps instead of after the answer.
 */
#define KDBUS_PULL_MIN_PAYLOAD	SZ_32K

/*
 * A pulled payload is copied in pieces of this size, from the front by the
 * receiver and from the back by the sender (kdbus_staging_help_pull()):
 * small enough that both sides finish close together, large enough that
 * claiming one costs nothing next to its copy.
 */
#define KDBUS_PULL_CHUNK	SZ_32K

/* zero bytes for padding; padding is never longer than 7 bytes */
static const u8 kdbus_zeros[8];

static void kdbus_gaps_free(struct kref *kref)
{
	struct kdbus_gaps *gaps = container_of(kref, struct kdbus_gaps, kref);
	size_t i;

	for (i = 0; i < gaps->n_memfds; ++i)
		fput(gaps->memfd_files[i]);

	for (i = 0; i < gaps->n_fds; ++i)
		fput(gaps->fd_files[i]);

	kfree(gaps);
}

/**
 * kdbus_gaps_ref() - acquire a reference to a gaps object
 * @gaps:	gaps object, or NULL
 *
 * Return: @gaps
 */
struct kdbus_gaps *kdbus_gaps_ref(struct kdbus_gaps *gaps)
{
	if (gaps)
		kref_get(&gaps->kref);
	return gaps;
}

/**
 * kdbus_gaps_unref() - drop a reference to a gaps object
 * @gaps:	gaps object, or NULL
 *
 * Return: NULL
 */
struct kdbus_gaps *kdbus_gaps_unref(struct kdbus_gaps *gaps)
{
	if (gaps)
		kref_put(&gaps->kref, kdbus_gaps_free);
	return NULL;
}

/* reserve a descriptor number; -1 (and @incomplete set) if there is none */
static int kdbus_gaps_reserve_fd(bool *incomplete)
{
	int fd = get_unused_fd_flags(O_CLOEXEC);

	if (fd < 0) {
		*incomplete = true;
		return -1;
	}
	return fd;
}

/* write @n descriptor numbers at @off of the message in @slice */
static int kdbus_gaps_write(struct kdbus_pool_slice *slice, size_t off,
			    int *fds, size_t n)
{
	struct kvec kvec = {
		.iov_base = fds,
		.iov_len = n * sizeof(*fds),
	};
	ssize_t ret;

	ret = kdbus_pool_slice_copy_kvec(slice, off, &kvec, 1, kvec.iov_len);
	if (ret < 0)
		return ret;
	return ret == kvec.iov_len ? 0 : -EFAULT;
}

/**
 * kdbus_gaps_install() - install the descriptors of a message
 * @gaps:		gaps object, or NULL
 * @slice:		slice of the delivered message in the receiver's pool
 * @install_fds:	install the regular descriptors of the FDS item too
 * @out_incomplete:	set to true if a descriptor could not be allocated
 *
 * Creates one O_CLOEXEC descriptor in the calling task for every pinned
 * memfd and, with @install_fds, for every pinned regular file, and writes
 * the numbers into the PAYLOAD_MEMFD and FDS items of the message in
 * @slice. A descriptor that cannot be allocated reads -1; the others are
 * still installed. Regular fds that are not installed keep reading -1.
 *
 * Return: 0 on success, negative error code if the slice cannot be written
 * (then nothing is installed).
 */
int kdbus_gaps_install(struct kdbus_gaps *gaps,
		       struct kdbus_pool_slice *slice, bool install_fds,
		       bool *out_incomplete)
{
	int memfds[KDBUS_MSG_MAX_MEMFD_ITEMS];
	int fds[KDBUS_CONN_MAX_FDS_PER_USER];
	size_t i, n_fds;
	int ret = 0;

	*out_incomplete = false;
	if (!gaps)
		return 0;

	n_fds = install_fds ? gaps->n_fds : 0;

	for (i = 0; i < n_fds; ++i)
		fds[i] = kdbus_gaps_reserve_fd(out_incomplete);
	for (i = 0; i < gaps->n_memfds; ++i)
		memfds[i] = kdbus_gaps_reserve_fd(out_incomplete);

	if (n_fds > 0)
		ret = kdbus_gaps_write(slice, gaps->fd_offset, fds, n_fds);
	for (i = 0; ret == 0 && i < gaps->n_memfds; ++i)
		ret = kdbus_gaps_write(slice, gaps->memfd_offsets[i],
				       &memfds[i], 1);

	if (ret < 0) {
		for (i = 0; i < n_fds; ++i)
			if (fds[i] >= 0)
				put_unused_fd(fds[i]);
		for (i = 0; i < gaps->n_memfds; ++i)
			if (memfds[i] >= 0)
				put_unused_fd(memfds[i]);
		*out_incomplete = false;
		return ret;
	}

	for (i = 0; i < n_fds; ++i)
		if (fds[i] >= 0)
			fd_install(fds[i], get_file(gaps->fd_files[i]));
	for (i = 0; i < gaps->n_memfds; ++i)
		if (memfds[i] >= 0)
			fd_install(memfds[i], get_file(gaps->memfd_files[i]));

	return 0;
}

/*
 * One allocation for the staging object and the header: a message costs
 * as few allocations as possible. Metadata objects are created only when
 * a receiver wants an item (kdbus_staging_meta()).
 */
static struct kdbus_staging *kdbus_staging_alloc(struct kdbus_bus *bus,
						 size_t msg_size)
{
	struct kdbus_staging *staging;

	staging = kzalloc(struct_size(staging, msg_buf, msg_size),
			  GFP_KERNEL_ACCOUNT);
	if (!staging)
		return ERR_PTR(-ENOMEM);

	kdbus_stats_live(KDBUS_STAT_LIVE_MESSAGES, 1);
	staging->msg = (struct kdbus_msg *)staging->msg_buf;
	staging->bus = kdbus_bus_ref(bus);
	staging->msg_size = msg_size;
	staging->seq = atomic64_inc_return(&bus->last_message_id);
	kdbus_meta_conn_init(&staging->meta_conn);
	INIT_LIST_HEAD(&staging->notify_entry);
	return staging;
}

/*
 * The message's timestamp, read when it is first needed (a TIMESTAMP
 * item, the deadline check of a synchronous call) and then kept, so all
 * receivers see the same instant. Messages nobody stamps read no clock:
 * on some machines a clocksource read is the dearest part of a SEND.
 */
static u64 kdbus_staging_now(struct kdbus_staging *staging)
{
	ktime_t now;

	if (!staging->stamped) {
		now = ktime_get();
		/* realtime is derived from the same instant: one read */
		staging->ts_monotonic = ktime_to_ns(now);
		staging->ts_realtime = ktime_to_ns(ktime_mono_to_real(now));
		staging->stamped = true;
	}
	return staging->ts_monotonic;
}

/*
 * Create the metadata objects @mask needs, once per message: connection
 * data (timestamp, names, description) for every message, task data only
 * for a sender with its own identity (a faked one reveals none,
 * kdbus.connection(7)). Runs in the sender's context, where the task data
 * is then collected.
 */
static int kdbus_staging_meta_objects(struct kdbus_staging *staging,
				      u64 mask)
{
	struct kdbus_meta_proc *mp;
	int ret;

	if ((mask & KDBUS_META_PROC_ITEMS) && !staging->meta_proc &&
	    !staging->kernel && !staging->src->fake) {
		struct kdbus_meta_proc *snapshot = staging->src->meta_proc;

		/*
		 * The sender's HELLO snapshot, if it still describes it: the
		 * command line is the snapshot's, or was not read.
		 */
		if (snapshot &&
		    (!staging->cmdline_read || staging->cmdline_same) &&
		    kdbus_meta_proc_is_current(snapshot)) {
			staging->meta_proc = kdbus_meta_proc_ref(snapshot);
			staging->meta_proc_shared = true;
			return 0;
		}

		mp = kdbus_meta_proc_new();
		if (IS_ERR(mp))
			return PTR_ERR(mp);
		/* else at least its strings, if still its own */
		kdbus_meta_proc_lend(mp, snapshot);
		if (staging->cmdline_read) {
			ret = kdbus_meta_proc_set_cmdline(mp, staging->cmdline,
							  staging->cmdline_size,
							  staging->cmdline_same ?
							  snapshot : NULL);
			staging->cmdline = NULL;
			if (ret < 0) {
				kdbus_meta_proc_unref(mp);
				return ret;
			}
		}
		staging->meta_proc = mp;
	}

	return 0;
}

/**
 * kdbus_staging_new_kernel() - stage a kernel notification
 * @bus:		bus the notification is generated on
 * @dst:		destination connection ID, or KDBUS_DST_ID_BROADCAST
 * @cookie_reply:	cookie_reply of the notification (REPLY_* only)
 * @it_size:		payload size of the notification item
 * @it_type:		notification item type
 *
 * The item payload is zeroed; the caller fills it in through
 * staging->msg->items.
 *
 * Return: new staging object or ERR_PTR on failure.
 */
struct kdbus_staging *kdbus_staging_new_kernel(struct kdbus_bus *bus,
					       u64 dst, u64 cookie_reply,
					       size_t it_size, u64 it_type)
{
	struct kdbus_staging *staging;
	size_t size;

	size = offsetof(struct kdbus_msg, items) + KDBUS_ITEM_HEADER_SIZE +
	       it_size;

	staging = kdbus_staging_alloc(bus, KDBUS_ALIGN8(size));
	if (IS_ERR(staging))
		return staging;

	staging->msg_size = size;
	staging->kernel = true;
	staging->msg->size = size;
	staging->msg->flags = (dst == KDBUS_DST_ID_BROADCAST) ?
			      KDBUS_MSG_SIGNAL : 0;
	staging->msg->dst_id = dst;
	staging->msg->src_id = KDBUS_SRC_ID_KERNEL;
	staging->msg->payload_type = KDBUS_PAYLOAD_KERNEL;
	staging->msg->cookie_reply = cookie_reply;
	staging->msg->items[0].size = KDBUS_ITEM_HEADER_SIZE + it_size;
	staging->msg->items[0].type = it_type;
	return staging;
}

/*
 * Pin the files of an FDS item. Only files that cannot hold references
 * to other files may travel (fds.c): anything else could keep the
 * receiving connection alive through a reference cycle.
 */
static int kdbus_staging_import_fds(struct kdbus_staging *staging,
				    const struct kdbus_item *item,
				    size_t fd_offset)
{
	size_t i, n = KDBUS_ITEM_PAYLOAD_SIZE(item) / sizeof(int);
	struct kdbus_gaps *gaps = staging->gaps;
	struct file *f;
	int ret;

	if (n == 0)
		return 0;

	gaps->fd_offset = fd_offset;

	for (i = 0; i < n; ++i) {
		if (item->fds[i] < 0)
			return -EBADF;

		f = fget_raw(item->fds[i]);
		if (!f)
			return -EBADF;

		gaps->fd_files[gaps->n_fds++] = f;

		ret = kdbus_fd_may_travel(f);
		if (ret < 0)
			return ret;
	}

	return 0;
}

/*
 * Pin the memfd of a PAYLOAD_MEMFD item (kdbus.message(7), design.md §7):
 * it must be a shmem file (hugetlbfs and everything else is refused),
 * carry all four required seals, and contain the range
 * [start, start + size).
 * shmem_get_seals() is not exported; the seal word is read directly under
 * the inode lock, which is what F_ADD_SEALS holds while changing it.
 */
static int kdbus_staging_import_memfd(struct kdbus_staging *staging,
				      const struct kdbus_item *item,
				      size_t fd_offset)
{
	struct kdbus_gaps *gaps = staging->gaps;
	struct inode *inode;
	unsigned int seals;
	struct file *f;
	loff_t size;

	f = fget(item->memfd.fd);
	if (!f)
		return -EBADF;

	gaps->memfd_offsets[gaps->n_memfds] = fd_offset;
	gaps->memfd_files[gaps->n_memfds++] = f;

	/*
	 * Memfds are regular files; devtmpfs device nodes share the shmem mapping operations
	 * but are none (the 2015 code refused them through their f_op).
	 */
	inode = file_inode(f);
	if (!S_ISREG(inode->i_mode) || !kdbus_shmem_mapping(f->f_mapping))
		return -EMEDIUMTYPE;

	inode_lock_shared(inode);
	seals = SHMEM_I(inode)->seals;
	size = i_size_read(inode);
	inode_unlock_shared(inode);

	if ((seals & KDBUS_MEMFD_SEALS) != KDBUS_MEMFD_SEALS)
		return -ETXTBSY;

	/* start + size cannot overflow, kdbus_msg_examine() checked it */
	if (item->memfd.start + item->memfd.size > (u64)size)
		return -EFAULT;

	return 0;
}

/*
 * Steps 4 to 7 of the SEND validation pipeline, on the kernel copy of the
 * message whose items passed the generic item validation already.
 */
static int kdbus_msg_examine(struct kdbus_bus *bus, struct kdbus_conn *src,
			     struct kdbus_cmd_send *cmd,
			     const struct kdbus_msg *msg,
			     size_t *out_n_parts, size_t *out_n_memfds,
			     size_t *out_n_fds, size_t *out_trimmed,
			     u64 *out_n_payload)
{
	bool is_broadcast = msg->dst_id == KDBUS_DST_ID_BROADCAST;
	bool is_signal = msg->flags & KDBUS_MSG_SIGNAL;
	bool has_bloom = false, has_name = false, has_fds = false;
	const struct kdbus_item *item;
	size_t n_parts = 0, n_memfds = 0, n_fds = 0, trimmed;
	u64 vec_size = 0, n_payload = 0;

	/* src_id must be 0 or the sender's own id */
	if (msg->src_id != 0 && msg->src_id != src->id)
		return -EINVAL;

	if (msg->payload_type == KDBUS_PAYLOAD_KERNEL)
		return -EINVAL;

	if (is_broadcast) {
		if (!is_signal)
			return -EBADMSG;
		if (msg->cookie_reply != 0)
			return -ENOTUNIQ;
	}

	if (msg->flags & KDBUS_MSG_EXPECT_REPLY) {
		if (msg->timeout_ns == 0)
			return -EINVAL;
		if (is_signal)
			return -ENOTUNIQ;
	} else {
		if (cmd->flags & KDBUS_SEND_SYNC_REPLY)
			return -EINVAL;
		if (msg->cookie_reply != 0 && is_signal)
			return -EINVAL;
	}

	trimmed = offsetof(struct kdbus_msg, items);
	KDBUS_ITEMS_FOREACH(item, msg->items, KDBUS_ITEMS_SIZE(msg, items)) {
		trimmed = (const u8 *)item + item->size - (const u8 *)msg;

		switch (item->type) {
		case KDBUS_ITEM_PAYLOAD_VEC: {
			void __user *ptr = u64_to_user_ptr(item->vec.address);
			u64 size = item->vec.size;

			if (vec_size + size < vec_size ||
			    vec_size + size > KDBUS_MSG_MAX_PAYLOAD_VEC_SIZE)
				return -EMSGSIZE;
			vec_size += size;

			if (item->vec.address != 0) {
				if ((u64)(unsigned long)item->vec.address !=
				    item->vec.address ||
				    !access_ok(ptr, size))
					return -EFAULT;
				++n_parts;
				n_payload += size;
			} else if (size % 8) {
				++n_parts;
				n_payload += size % 8;
			}
			break;
		}

		case KDBUS_ITEM_PAYLOAD_MEMFD:
			if (item->memfd.start + item->memfd.size <
			    item->memfd.start)
				return -EMSGSIZE;
			if (++n_memfds > KDBUS_MSG_MAX_MEMFD_ITEMS)
				return -E2BIG;
			/* size % 8 zero bytes keep the payload stream aligned */
			if (item->memfd.size % 8) {
				++n_parts;
				n_payload += item->memfd.size % 8;
			}
			break;

		case KDBUS_ITEM_FDS:
			n_fds = KDBUS_ITEM_PAYLOAD_SIZE(item) / sizeof(int);
			if (n_fds > KDBUS_CONN_MAX_FDS_PER_USER)
				return -EMFILE;
			has_fds = true;
			break;

		case KDBUS_ITEM_BLOOM_FILTER: {
			u64 bloom_size;

			bloom_size = KDBUS_ITEM_PAYLOAD_SIZE(item) -
				     offsetof(struct kdbus_bloom_filter, data);
			if (!KDBUS_IS_ALIGNED8(bloom_size))
				return -EFAULT;
			if (bloom_size != bus->bloom.size)
				return -EDOM;
			has_bloom = true;
			break;
		}

		case KDBUS_ITEM_DST_NAME:
			if (!kdbus_name_is_valid(item->str, false))
				return -EINVAL;
			if (is_broadcast)
				return -EBADMSG;
			has_name = true;
			break;

		default:
			/* NEGOTIATE outside of negotiation, anything else */
			return -EINVAL;
		}
	}

	if (is_signal != has_bloom)
		return -EBADMSG;
	if (msg->dst_id == KDBUS_DST_ID_NAME && !has_name)
		return -EDESTADDRREQ;
	if (is_broadcast && has_fds)
		return -ENOTUNIQ;

	*out_n_parts = n_parts;
	*out_n_memfds = n_memfds;
	*out_n_fds = n_fds;
	*out_trimmed = trimmed;
	*out_n_payload = n_payload;
	return 0;
}

/*
 * Pin the sender's pages under the user parts of the payload stream and
 * describe them as bio_vecs, in stream order. This is the only place the
 * payload's user memory is touched: it faults in here, in the sender's
 * context with no lock held, and the copies into receivers' pools under
 * the bus locks read pinned pages only. At most the payload limit plus
 * one page per vector is pinned, for the duration of the SEND.
 */
static int kdbus_staging_pin_payload(struct kdbus_staging *staging)
{
	size_t i, k = 0, n_pages = 0;
	int ret;

	for (i = 0; i < staging->n_parts; i++) {
		const struct iovec *part = &staging->parts[i];
		unsigned long addr = (unsigned long)part->iov_base;

		if (part->iov_base && part->iov_len)
			n_pages += DIV_ROUND_UP(offset_in_page(addr) +
						part->iov_len, PAGE_SIZE);
	}
	if (n_pages == 0)
		return 0;

	if (n_pages <= ARRAY_SIZE(staging->inline_pages)) {
		staging->pages = staging->inline_pages;
		staging->bvecs = staging->inline_bvecs;
	} else {
		staging->pages = kvmalloc_array(n_pages, sizeof(*staging->pages),
						GFP_KERNEL_ACCOUNT);
		staging->bvecs = kvmalloc_array(n_pages, sizeof(*staging->bvecs),
						GFP_KERNEL_ACCOUNT);
		if (!staging->pages || !staging->bvecs)
			return -ENOMEM;
	}

	for (i = 0; i < staging->n_parts; i++) {
		const struct iovec *part = &staging->parts[i];
		unsigned long addr = (unsigned long)part->iov_base;
		size_t left = part->iov_len, off = offset_in_page(addr), n, j;

		if (!part->iov_base || !left)
			continue;

		n = DIV_ROUND_UP(off + left, PAGE_SIZE);
		ret = pin_user_pages_fast(addr & PAGE_MASK, n, 0,
					  staging->pages + k);
		if (ret > 0)
			staging->n_pages += ret;
		if (ret < 0)
			return ret == -ENOMEM ? ret : -EFAULT;
		if (ret != n)
			return -EFAULT;

		for (j = 0; j < n; j++) {
			struct bio_vec *bv = &staging->bvecs[k + j];

			bv->bv_page = staging->pages[k + j];
			bv->bv_offset = off;
			bv->bv_len = min_t(size_t, PAGE_SIZE - off, left);
			left -= bv->bv_len;
			off = 0;
		}
		k += n;
	}

	return 0;
}

/*
 * Copy a small payload stream (at most KDBUS_STAGING_COPY_MAX bytes) into
 * the staging object, in the sender's context with no lock held, as the
 * header and items were: for a few hundred bytes two copies cost less
 * than pinning and unpinning the pages under them, and the whole message
 * then reaches each pool in one write. Padding parts stay zero (the
 * object is allocated zeroed).
 */
static int kdbus_staging_copy_payload(struct kdbus_staging *staging)
{
	u8 *p = staging->payload_copy;
	size_t i, user = 0;

	for (i = 0; i < staging->n_parts; i++) {
		const struct iovec *part = &staging->parts[i];

		if (part->iov_base) {
			if (copy_from_user(p, part->iov_base, part->iov_len))
				return -EFAULT;
			user += part->iov_len;
		}
		p += part->iov_len;
	}

	kdbus_stats_add(KDBUS_STAT_COPY_USER, user);
	return 0;
}

/**
 * kdbus_staging_new_user() - validate and stage a message from user space
 * @bus:	bus the message is sent on
 * @src:	sending connection
 * @cmd:	the SEND command (kernel copy)
 * @msg:	the message (kernel copy, items already validated generically)
 *
 * Runs steps 4 to 9 of the SEND validation pipeline: header semantics,
 * item rules, cross checks, import of descriptors and assignment of the
 * bus sequence number. Payload vectors stay in user memory, pinned; they
 * are copied once, at delivery, straight into each receiver's pool. A
 * payload stream of at most KDBUS_STAGING_COPY_MAX bytes is copied in here
 * instead, like the header.
 *
 * Return: new staging object or ERR_PTR on failure.
 */
struct kdbus_staging *kdbus_staging_new_user(struct kdbus_bus *bus,
					     struct kdbus_conn *src,
					     struct kdbus_cmd_send *cmd,
					     struct kdbus_msg *msg)
{
	size_t n_parts, n_memfds, n_fds, trimmed, copy_size = 0;
	struct kdbus_staging *staging;
	struct kdbus_item *item;
	u64 payload = 0, n_payload;
	int ret;

	ret = kdbus_msg_examine(bus, src, cmd, msg, &n_parts, &n_memfds,
				&n_fds, &trimmed, &n_payload);
	if (ret < 0)
		return ERR_PTR(ret);

	if (n_payload <= KDBUS_STAGING_COPY_MAX)
		copy_size = n_payload;

	staging = kdbus_staging_alloc(bus, KDBUS_ALIGN8(trimmed) + copy_size);
	if (IS_ERR(staging))
		return staging;

	staging->msg_size = trimmed;
	if (copy_size)
		staging->payload_copy = (u8 *)staging->msg_buf +
					KDBUS_ALIGN8(trimmed);
	memcpy(staging->msg, msg, trimmed);
	staging->msg->src_id = src->id;
	staging->src = src;

	if (n_parts > ARRAY_SIZE(staging->inline_parts)) {
		staging->parts = kcalloc(n_parts, sizeof(*staging->parts),
					 GFP_KERNEL_ACCOUNT);
		if (!staging->parts) {
			ret = -ENOMEM;
			goto error;
		}
	} else if (n_parts > 0) {
		staging->parts = staging->inline_parts;
	}

	if (n_memfds > 0 || n_fds > 0) {
		staging->gaps = kzalloc(struct_size(staging->gaps, fd_files,
						    n_fds),
					GFP_KERNEL_ACCOUNT);
		if (!staging->gaps) {
			ret = -ENOMEM;
			goto error;
		}
		kref_init(&staging->gaps->kref);
	}

	KDBUS_ITEMS_FOREACH(item, staging->msg->items,
			    KDBUS_ITEMS_SIZE(staging->msg, items)) {
		switch (item->type) {
		case KDBUS_ITEM_PAYLOAD_VEC: {
			struct iovec *part;
			u64 size = item->vec.size;

			item->type = KDBUS_ITEM_PAYLOAD_OFF;
			if (item->vec.address == 0) {
				/* padding chunk: size % 8 zero bytes */
				item->vec.offset = ~0ULL;
				if (size % 8 == 0)
					break;
				part = &staging->parts[staging->n_parts++];
				part->iov_base = NULL;
				part->iov_len = size % 8;
			} else {
				part = &staging->parts[staging->n_parts++];
				part->iov_base =
					u64_to_user_ptr(item->vec.address);
				part->iov_len = size;
				/* relative to the payload stream for now */
				item->vec.offset = payload;
			}
			payload += part->iov_len;
			break;
		}

		case KDBUS_ITEM_PAYLOAD_MEMFD: {
			size_t off = (u8 *)&item->memfd.fd - (u8 *)staging->msg;
			struct iovec *part;

			ret = kdbus_staging_import_memfd(staging, item, off);
			if (ret < 0)
				goto error;
			/* receivers read -1 until the memfd is installed */
			item->memfd.fd = -1;
			item->memfd.__pad = 0;
			if (item->memfd.size % 8) {
				part = &staging->parts[staging->n_parts++];
				part->iov_base = NULL;
				part->iov_len = item->memfd.size % 8;
				payload += part->iov_len;
			}
			break;
		}

		case KDBUS_ITEM_FDS: {
			size_t off = (u8 *)item->fds - (u8 *)staging->msg;

			ret = kdbus_staging_import_fds(staging, item, off);
			if (ret < 0)
				goto error;
			/* receivers read -1 until the fds are installed */
			memset(item->fds, 0xff, KDBUS_ITEM_PAYLOAD_SIZE(item));
			break;
		}

		case KDBUS_ITEM_BLOOM_FILTER:
			staging->bloom_filter = &item->bloom_filter;
			break;

		case KDBUS_ITEM_DST_NAME:
			staging->dst_name = item->str;
			break;
		}
	}

	staging->n_payload = payload;
	staging->payload_base = 0;

	if (staging->payload_copy)
		ret = kdbus_staging_copy_payload(staging);
	else
		ret = kdbus_staging_pin_payload(staging);
	if (ret < 0)
		goto error;

	/*
	 * The command line is the one metadata item read from user memory:
	 * read it now, before any lock, if a receiver on the bus may want
	 * it (kdbus_staging_emit_meta() never reads it under the locks).
	 */
	if (!src->fake && atomic_read(&bus->cmdline_receivers)) {
		ret = kdbus_meta_read_cmdline(src->meta_proc,
					      &staging->cmdline,
					      &staging->cmdline_size);
		if (ret < 0)
			goto error;
		staging->cmdline_read = true;
		staging->cmdline_same = ret > 0;
	}

	return staging;

error:
	kdbus_staging_free(staging);
	return ERR_PTR(ret);
}

static void kdbus_staging_pull_finish(struct kdbus_staging *staging);

/**
 * kdbus_staging_free() - free a staging object
 * @staging:	staging object, or NULL
 *
 * A payload that a receiver was to pull and has not is copied first.
 *
 * Context: no connection lock may be held.
 * Return: NULL
 */
struct kdbus_staging *kdbus_staging_free(struct kdbus_staging *staging)
{
	if (!staging)
		return NULL;

	if (staging->pull_dst)
		kdbus_staging_pull_finish(staging);

	kfree(staging->meta_items);
	kfree(staging->cmdline);
	kdbus_meta_conn_destroy(&staging->meta_conn);
	kdbus_meta_proc_unref(staging->meta_proc);
	kdbus_gaps_unref(staging->gaps);
	kdbus_bus_unref(staging->bus);
	kdbus_user_unref(staging->charge);
	if (staging->n_pages)
		unpin_user_pages(staging->pages, staging->n_pages);
	if (staging->pages != staging->inline_pages) {
		kvfree(staging->pages);
		kvfree(staging->bvecs);
	}
	if (staging->parts != staging->inline_parts)
		kfree(staging->parts);
	kfree(staging);
	kdbus_stats_live(KDBUS_STAT_LIVE_MESSAGES, -1);
	return NULL;
}

/*
 * Render the metadata items @dst gets (kdbus.connection(7)): task data is
 * collected from current (the sending thread) the first time a receiver
 * of the message wants an item, connection data likewise; both are then
 * shared by all receivers. Owned names are read under the name registry
 * lock, which every delivery path of a user message holds.
 */
static int kdbus_staging_meta(struct kdbus_staging *staging,
			      struct kdbus_conn *dst)
{
	struct kdbus_timestamp ts = {
		.seqnum = staging->seq,
	};
	u64 mask;
	int ret;

	kfree(staging->meta_items);
	staging->meta_items = NULL;
	staging->meta_size = 0;
	staging->meta_tail_pad = 0;
	staging->meta_dst = NULL;

	if (staging->kernel)
		mask = KDBUS_ATTACH_TIMESTAMP;
	else
		mask = kdbus_meta_msg_mask(staging->src, dst);
	if (!mask)
		goto exit;

	ret = kdbus_staging_meta_objects(staging, mask);
	if (ret < 0)
		return ret;

	if (mask & KDBUS_ATTACH_TIMESTAMP) {
		kdbus_staging_now(staging);
		ts.monotonic_ns = staging->ts_monotonic;
		ts.realtime_ns = staging->ts_realtime;
	}

	/*
	 * The command line, if wanted, was read before any lock was taken;
	 * a shared snapshot is complete, but its command line is HELLO's: it
	 * was compared with the one read, if one was.
	 */
	if (staging->meta_proc_shared) {
		if (!staging->cmdline_read)
			mask &= ~KDBUS_ATTACH_CMDLINE;
	} else {
		ret = kdbus_meta_proc_collect(staging->meta_proc,
					      mask & ~KDBUS_ATTACH_CMDLINE);
		if (ret < 0)
			return ret;
	}

	ret = kdbus_meta_conn_collect(&staging->meta_conn, staging->src, &ts,
				      mask);
	if (ret < 0)
		return ret;

	ret = kdbus_meta_emit(staging->meta_proc, NULL, &staging->meta_conn,
			      dst, mask, &staging->meta_items,
			      &staging->meta_size);
	if (ret < 0)
		return ret;

	/* once per receiver, not again for its slice size and its write */
	if (staging->meta_size > 0) {
		struct kdbus_item *item, *last = NULL;

		KDBUS_ITEMS_FOREACH(item, staging->meta_items,
				    staging->meta_size)
			last = item;
		staging->meta_tail_pad = KDBUS_ALIGN8(last->size) - last->size;
	}

exit:
	staging->meta_dst = dst;
	return 0;
}

/*
 * Per-receiver layout: the header size as delivered, the offset of the
 * payload stream and the slice size. The metadata of @dst is rendered.
 */
static void kdbus_staging_layout(struct kdbus_staging *staging,
				 u64 *out_msg_size, u64 *out_payload_off,
				 u64 *out_slice_size)
{
	u64 msg_size = staging->msg_size;
	u64 payload_off;

	if (staging->meta_size > 0)
		msg_size = KDBUS_ALIGN8(msg_size) + staging->meta_size -
			   staging->meta_tail_pad;

	payload_off = KDBUS_ALIGN8(msg_size);
	*out_msg_size = msg_size;
	*out_payload_off = payload_off;
	*out_slice_size = KDBUS_ALIGN8(payload_off + staging->n_payload);
}

/**
 * kdbus_staging_size() - size of the slice a message needs in a receiver
 * @staging:	staging object
 * @dst:	receiving connection
 * @out_size:	set to the slice size in bytes (a multiple of 8)
 *
 * Renders the metadata @dst gets; kdbus_staging_emit() for the same
 * receiver writes exactly this many bytes.
 *
 * Return: 0 on success, negative error code on failure.
 */
int kdbus_staging_size(struct kdbus_staging *staging,
		       struct kdbus_conn *dst, size_t *out_size)
{
	u64 msg_size, payload_off, slice_size;
	int ret;

	ret = kdbus_staging_meta(staging, dst);
	if (ret < 0)
		return ret;

	kdbus_staging_layout(staging, &msg_size, &payload_off, &slice_size);
	*out_size = slice_size;
	return 0;
}

/* rebase the PAYLOAD_OFF items of the staged header onto @base */
static void kdbus_staging_rebase(struct kdbus_staging *staging, u64 base)
{
	struct kdbus_item *item;

	if (staging->payload_base == base)
		return;

	KDBUS_ITEMS_FOREACH(item, staging->msg->items,
			    staging->msg_size -
			    offsetof(struct kdbus_msg, items)) {
		if (item->type == KDBUS_ITEM_PAYLOAD_OFF &&
		    item->vec.offset != ~0ULL)
			item->vec.offset += base - staging->payload_base;
	}

	staging->payload_base = base;
}

static int kdbus_slice_write_kvec(struct kdbus_pool_slice *slice, u64 off,
				  struct kvec *kvec, size_t n, size_t len)
{
	ssize_t ret;

	if (len == 0)
		return 0;

	ret = kdbus_pool_slice_copy_kvec(slice, off, kvec, n, len);
	if (ret < 0)
		return ret;
	return ret == len ? 0 : -EFAULT;
}

static int kdbus_slice_write_zeros(struct kdbus_pool_slice *slice, u64 off,
				   size_t len)
{
	struct kvec kvec = {
		.iov_base = (void *)kdbus_zeros,
		.iov_len = len,
	};

	return kdbus_slice_write_kvec(slice, off, &kvec, 1, len);
}

/*
 * Where byte @skip of the user vector @part lies among its bio_vecs (the
 * first from @bv): the first page may be partial, all others are whole.
 */
static size_t kdbus_part_bvec(const struct iovec *part, size_t bv,
			      size_t *skip)
{
	size_t first = PAGE_SIZE - offset_in_page((unsigned long)part->iov_base);

	if (*skip < first)
		return bv;
	*skip -= first;
	bv += 1 + *skip / PAGE_SIZE;
	*skip %= PAGE_SIZE;
	return bv;
}

static size_t kdbus_part_n_bvecs(const struct iovec *part)
{
	if (!part->iov_len)
		return 0;
	return DIV_ROUND_UP(offset_in_page((unsigned long)part->iov_base) +
			    part->iov_len, PAGE_SIZE);
}

/*
 * Copy bytes [@start, @end) of a pinned payload stream into @slice at
 * @off + @start: each run of user vectors with one iov_iter from the
 * sender's pinned pages straight into the pool, padding from the zero
 * page. A range's first page is found by arithmetic, so a payload copied
 * in pieces (kdbus_staging_copy_pending()) is not walked page by page for
 * each. Never used for a payload copied in at SEND
 * (kdbus_staging_copy_payload()): it has no pinned pages, is written with
 * the header and is never left pending.
 * Return: the bytes of user memory written (padding not counted), or a
 * negative error code.
 */
static ssize_t kdbus_staging_emit_range(struct kdbus_staging *staging,
					struct kdbus_pool_slice *slice,
					u64 off, size_t start, size_t end,
					const struct kdbus_pool_held *held)
{
	size_t i = 0, j, pos = 0, bv = 0, from, to, skip, k, user = 0;
	ssize_t n;

	while (i < staging->n_parts && pos < end) {
		const struct iovec *part = &staging->parts[i];

		if (!part->iov_base) {
			from = max(start, pos);
			to = min(end, pos + part->iov_len);
			if (from < to) {
				n = kdbus_pool_slice_zero(slice, off + from,
							  to - from, held);
				if (n < 0)
					return n;
			}
			pos += part->iov_len;
			++i;
			continue;
		}

		/* a run of user vectors: where @start falls, and its end */
		from = max(start, pos);
		k = bv;
		skip = 0;
		for (j = i; j < staging->n_parts; ++j) {
			part = &staging->parts[j];
			if (!part->iov_base)
				break;
			if (from >= pos && from < pos + part->iov_len) {
				skip = from - pos;
				k = kdbus_part_bvec(part, bv, &skip);
			}
			pos += part->iov_len;
			bv += kdbus_part_n_bvecs(part);
		}

		to = min(end, pos);
		if (from < to) {
			n = kdbus_pool_slice_copy_bvec(slice, off + from,
						       staging->bvecs + k,
						       bv - k, skip, to - from,
						       held);
			if (n < 0)
				return n;
			if (n != to - from)
				return -EFAULT;
			user += n;
		}
		i = j;
	}

	return user;
}

/**
 * kdbus_staging_emit() - write a staged message into a receiver's slice
 * @staging:	staging object
 * @dst:	receiving connection
 * @slice:	slice of kdbus_staging_size() bytes in @dst's pool
 * @deferred_off: NULL to copy the payload now; else the payload stream is
 *		left out and its offset in @slice stored here, for
 *		kdbus_queue_entry_pull()
 *
 * Writes the header and items (with PAYLOAD_OFF offsets computed for this
 * receiver), the metadata this receiver gets, and the payload stream,
 * from the sender's pinned pages or its copy. All padding is written as zeros,
 * so no stale pool content leaks.
 *
 * Return: 0 on success, negative error code on failure (EFAULT on a user
 * copy fault).
 */
int kdbus_staging_emit(struct kdbus_staging *staging,
		       struct kdbus_conn *dst,
		       struct kdbus_pool_slice *slice, u64 *deferred_off)
{
	u64 msg_size, payload_off, slice_size, end;
	struct kvec kvec[6];
	size_t n = 0, len = 0;
	int ret;

	if (staging->meta_dst != dst) {
		ret = kdbus_staging_meta(staging, dst);
		if (ret < 0)
			return ret;
	}

	kdbus_staging_layout(staging, &msg_size, &payload_off, &slice_size);
	kdbus_staging_rebase(staging, payload_off);
	staging->msg->size = msg_size;

	kvec[n].iov_base = staging->msg;
	kvec[n++].iov_len = staging->msg_size;
	len += staging->msg_size;

	if (staging->meta_size > 0) {
		size_t pad = KDBUS_ALIGN8(staging->msg_size) -
			     staging->msg_size;

		if (pad) {
			kvec[n].iov_base = (void *)kdbus_zeros;
			kvec[n++].iov_len = pad;
			len += pad;
		}

		kvec[n].iov_base = staging->meta_items;
		kvec[n++].iov_len = staging->meta_size;
		len += staging->meta_size;
	}

	if (payload_off > len) {
		kvec[n].iov_base = (void *)kdbus_zeros;
		kvec[n++].iov_len = payload_off - len;
		len = payload_off;
	}

	if (staging->payload_copy && !deferred_off) {
		/* header, metadata, payload and final padding in one write */
		end = payload_off + staging->n_payload;
		kvec[n].iov_base = staging->payload_copy;
		kvec[n++].iov_len = staging->n_payload;
		kvec[n].iov_base = (void *)kdbus_zeros;
		kvec[n++].iov_len = slice_size - end;
		return kdbus_slice_write_kvec(slice, 0, kvec, n, slice_size);
	}

	ret = kdbus_slice_write_kvec(slice, 0, kvec, n, len);
	if (ret < 0)
		return ret;

	if (deferred_off)
		*deferred_off = payload_off;
	else
		ret = kdbus_staging_emit_range(staging, slice, payload_off, 0,
					       staging->n_payload, NULL);
	if (ret < 0)
		return ret;

	end = payload_off + staging->n_payload;
	return kdbus_slice_write_zeros(slice, end, slice_size - end);
}

/*
 * A pending payload is copied in pieces of KDBUS_PULL_CHUNK bytes, claimed
 * from the front by the receiver and from the back by the sender, which
 * helps while it would otherwise only wait (kdbus_staging_help_pull()).
 * staging->pull_claims packs the next piece from the front (low half) and
 * one past the last unclaimed piece (high half).
 */
static u64 kdbus_pull_claims(u32 front, u32 back)
{
	return (u64)back << 32 | front;
}

static u32 kdbus_pull_n_chunks(const struct kdbus_staging *staging)
{
	return DIV_ROUND_UP(staging->n_payload, KDBUS_PULL_CHUNK);
}

/* claim the next piece from the front; false if none is left */
static bool kdbus_pull_claim_front(struct kdbus_staging *staging, u32 *chunk)
{
	s64 old = atomic64_read(&staging->pull_claims);

	do {
		if (lower_32_bits(old) >= upper_32_bits(old))
			return false;
	} while (!atomic64_try_cmpxchg(&staging->pull_claims, &old, old + 1));

	*chunk = lower_32_bits(old);
	return true;
}

/*
 * The last unclaimed piece, never the first one: the receiver always
 * copies the head itself, and a payload of one piece is left to it
 * entirely. kdbus_pull_claim_back() then claims it if it still is.
 */
static bool kdbus_pull_next_back(struct kdbus_staging *staging, u32 *chunk)
{
	s64 claims = atomic64_read(&staging->pull_claims);

	if (upper_32_bits(claims) <= max(lower_32_bits(claims), 1U))
		return false;
	*chunk = upper_32_bits(claims) - 1;
	return true;
}

static bool kdbus_pull_claim_back(struct kdbus_staging *staging, u32 chunk)
{
	s64 old = atomic64_read(&staging->pull_claims);

	do {
		if (upper_32_bits(old) != chunk + 1 ||
		    lower_32_bits(old) > chunk || chunk < 1)
			return false;
	} while (!atomic64_try_cmpxchg(&staging->pull_claims, &old,
				       old - BIT_ULL(32)));
	return true;
}

/*
 * Copy pieces [@first, @last) of @entry's pending payload.
 * Return: the bytes of user memory written, or a negative error code.
 */
static ssize_t kdbus_pull_copy_chunks(struct kdbus_queue_entry *entry,
				      u32 first, u32 last,
				      const struct kdbus_pool_held *held)
{
	struct kdbus_staging *staging = entry->pull;

	return kdbus_staging_emit_range(staging, entry->slice, entry->pull_off,
					(size_t)first * KDBUS_PULL_CHUNK,
					min_t(size_t, staging->n_payload,
					      (size_t)last * KDBUS_PULL_CHUNK),
					held);
}

/* end the link of @entry and its staging object; both locks held */
static void kdbus_pull_unlink(struct kdbus_queue_entry *entry)
{
	lockdep_assert_held(&entry->pull->pull_lock);

	WRITE_ONCE(entry->pull->pull_entry, NULL);
	entry->pull = NULL;
}

/*
 * Copy what is left of the pending payload of @entry from its sender's
 * pinned pages, including the rest of a piece the sender is copying (it
 * stops at the next page: the receiver never waits for the sender longer
 * than one page's copy, whatever the sender's scheduling), and end the
 * link. On failure nothing is left claimed: the payload stays pending as
 * a whole. Context: entry->conn->lock held.
 * Return: the bytes of user memory copied here, or a negative error code.
 */
static ssize_t kdbus_staging_copy_pending(struct kdbus_queue_entry *entry)
{
	struct kdbus_staging *staging = entry->pull;
	u32 chunk, n_chunks = kdbus_pull_n_chunks(staging);
	size_t copied = 0, from = 0, to = 0;
	ssize_t ret = 0;

	lockdep_assert_held(&entry->conn->lock);

	while (kdbus_pull_claim_front(staging, &chunk)) {
		ret = kdbus_pull_copy_chunks(entry, chunk, chunk + 1, NULL);
		if (ret < 0)
			break;
		copied += ret;
	}

	/* the rest of the sender's piece, if it has not finished it */
	raw_spin_lock(&staging->pull_lock);
	if (ret >= 0 && staging->pull_back_busy) {
		from = (size_t)staging->pull_back * KDBUS_PULL_CHUNK;
		to = min_t(size_t, staging->n_payload, from + KDBUS_PULL_CHUNK);
		from += staging->pull_back_done;
		staging->pull_back_busy = false;
		staging->pull_gen++;
	}
	raw_spin_unlock(&staging->pull_lock);

	if (from < to) {
		ret = kdbus_staging_emit_range(staging, entry->slice,
					       entry->pull_off, from, to, NULL);
		if (ret > 0)
			copied += ret;
	}

	raw_spin_lock(&staging->pull_lock);
	if (ret < 0) {
		atomic64_set(&staging->pull_claims,
			     kdbus_pull_claims(0, n_chunks));
		staging->pull_back_busy = false;
		staging->pull_gen++;
	} else {
		kdbus_pull_unlink(entry);
	}
	raw_spin_unlock(&staging->pull_lock);

	return ret < 0 ? ret : copied;
}

/**
 * kdbus_queue_entry_pull() - copy the pending payload of a call or answer
 * @entry:	queue entry
 *
 * The payload of a large synchronous call is not copied when the call is
 * queued: the receiver copies it from the sender's pinned pages when it
 * first sees the message (RECV, also with PEEK) or when the entry moves to
 * another connection, and the sender copies pieces from the end meanwhile
 * (kdbus_staging_help_pull()); the sender copies what is left itself
 * before its SEND returns if nobody did (kdbus_staging_free()). The answer
 * to a large synchronous call is taken the same way by its caller when it
 * wakes. Either way every byte is copied once, while the SEND that staged
 * it runs. Copied by the receiver, the bytes land in the receiver's CPU
 * cache instead of being pushed out of it by the sender's CPU, where the
 * receiver would then have to fetch them (Documentation/performance.md,
 * "Who copies"); the sender's pieces use a CPU that would otherwise idle.
 *
 * Context: entry->conn->lock must be held; it serialises the receiver's
 * copy with the sender's final one. The copy reads pinned pages only.
 * Return: 0 (also when nothing was pending), negative error code if the
 * pool cannot be written (the payload stays pending).
 */
int kdbus_queue_entry_pull(struct kdbus_queue_entry *entry)
{
	ssize_t ret;

	lockdep_assert_held(&entry->conn->lock);

	if (!entry->pull)
		return 0;

	ret = kdbus_staging_copy_pending(entry);
	if (ret < 0)
		return ret;
	kdbus_stats_add(KDBUS_STAT_PULLED_USER, ret);
	return 0;
}

/**
 * kdbus_staging_pull_detach() - end the link of a pulling entry
 * @entry:	queue entry whose payload will never be copied
 *
 * Unlinks @entry and the sender's staging object once the piece the sender
 * may be copying into @entry's slice is written; the sender frees the
 * staging object only after taking entry->conn->lock.
 *
 * Context: entry->conn->lock must be held.
 */
void kdbus_staging_pull_detach(struct kdbus_queue_entry *entry)
{
	struct kdbus_staging *staging = entry->pull;

	lockdep_assert_held(&entry->conn->lock);

	raw_spin_lock(&staging->pull_lock);
	kdbus_pull_unlink(entry);
	raw_spin_unlock(&staging->pull_lock);
}

/*
 * Link a queue entry whose payload is left pending to its staging object
 * (kdbus_queue_entry_pull()). Context: dst->lock held.
 */
static void kdbus_staging_pull_link(struct kdbus_staging *staging,
				    struct kdbus_conn *dst,
				    struct kdbus_queue_entry *entry)
{
	lockdep_assert_held(&dst->lock);

	raw_spin_lock_init(&staging->pull_lock);
	atomic64_set(&staging->pull_claims,
		     kdbus_pull_claims(0, kdbus_pull_n_chunks(staging)));
	staging->pull_gen = 0;
	staging->pull_back_busy = false;
	staging->pull_entry = entry;
	staging->pull_dst = kdbus_conn_ref(dst);
}

/*
 * Write @len bytes from @from of the sender's piece (within one pool page)
 * unless the receiver took the piece over since generation @gen; @last:
 * the piece is complete then. Return: 0, -ENOENT if taken over or
 * unlinked, or the error of the write (the piece stays busy, for the
 * receiver to finish).
 */
static int kdbus_pull_back_page(struct kdbus_staging *staging,
				struct kdbus_queue_entry *entry, u32 gen,
				size_t from, size_t len, bool last,
				const struct kdbus_pool_held *held)
{
	ssize_t n = -ENOENT;

	raw_spin_lock(&staging->pull_lock);
	if (staging->pull_entry == entry && staging->pull_gen == gen) {
		n = kdbus_staging_emit_range(staging, entry->slice,
					     entry->pull_off, from, from + len,
					     held);
		if (n >= 0) {
			staging->pull_back_done += len;
			staging->pull_back_busy = !last;
		}
	}
	raw_spin_unlock(&staging->pull_lock);

	return n < 0 ? n : 0;
}

/*
 * The sender of a payload its receiver pulls, a synchronous caller or the
 * replier, has nothing else to do until the receiver has it: it copies
 * pieces from the end while the receiver wakes and copies from the front,
 * so both CPUs copy (Documentation/performance.md, "Who copies").
 *
 * The receiver must never wait long for the sender (a sender that is not
 * scheduled would stall it, holding its connection lock):
 *  - the sender writes only pool pages already there, referenced
 *    beforehand (kdbus_pool_held_find()); it never allocates or locks a
 *    page of the receiver's pool, which the receiver may need meanwhile;
 *  - it copies one page at a time under staging->pull_lock, a raw
 *    spinlock: the copy neither sleeps nor is preempted, also on
 *    PREEMPT_RT, where a sleeping lock held by a task of lower priority
 *    (priority inheritance does not lift a SCHED_IDLE or niced owner)
 *    would keep the receiver waiting for as long as the scheduler likes;
 *  - between pages it checks that the receiver has not taken the rest of
 *    the piece over (kdbus_staging_copy_pending()).
 * While the lock is held and the entry linked, the entry and its slice
 * stay allocated: unlinking takes the lock. What the sender did not write
 * the receiver copies itself.
 */
static void kdbus_staging_help_pull(struct kdbus_staging *staging)
{
	struct kdbus_queue_entry *entry;
	struct kdbus_pool_held held;
	size_t start, len, done, step;
	u32 chunk, gen;
	u64 pos;
	int ret;

	for (;;) {
		raw_spin_lock(&staging->pull_lock);
		entry = staging->pull_entry;
		ret = -ENOENT;
		if (entry && kdbus_pull_next_back(staging, &chunk)) {
			start = (size_t)chunk * KDBUS_PULL_CHUNK;
			len = min_t(size_t, KDBUS_PULL_CHUNK,
				    staging->n_payload - start);
			pos = kdbus_pool_slice_offset(entry->slice) +
			      entry->pull_off + start;
			ret = kdbus_pool_held_init(&held, entry->slice,
						   entry->pull_off + start,
						   len);
		}
		raw_spin_unlock(&staging->pull_lock);
		if (ret < 0)
			return;

		/* the pool pages, outside the lock */
		ret = kdbus_pool_held_find(&held);

		raw_spin_lock(&staging->pull_lock);
		if (ret == 0 && staging->pull_entry == entry &&
		    kdbus_pull_claim_back(staging, chunk)) {
			staging->pull_back = chunk;
			staging->pull_back_done = 0;
			staging->pull_back_busy = true;
			gen = staging->pull_gen;
		} else {
			ret = -ENOENT;
		}
		raw_spin_unlock(&staging->pull_lock);

		for (done = 0; ret == 0 && done < len; done += step) {
			step = min_t(size_t, len - done,
				     PAGE_SIZE - offset_in_page(pos + done));
			ret = kdbus_pull_back_page(staging, entry, gen,
						   start + done, step,
						   done + step == len, &held);
		}

		kdbus_pool_held_release(&held);
		if (ret < 0)
			return;
		cond_resched();
	}
}

/*
 * A request that expected a reply was dropped unanswered: tell the
 * requester (EPIPE for a synchronous waiter, REPLY_DEAD otherwise), then
 * deliver the notification.
 */
static void kdbus_msg_drop_reply(struct kdbus_bus *bus,
				 struct kdbus_reply *reply)
{
	kdbus_msg_reply_dead(bus, reply);
	kdbus_notify_flush(bus);
}

/*
 * Before a staging object with a pending payload goes, the sender copies
 * the payload itself if the receiver has not: the bytes a receiver gets
 * are the sender's at the time of its SEND. If the pool cannot be
 * written, the message is dropped as lost (the receiver's dropped
 * counter), and a waiting requester learns that no reply will come.
 */
static void kdbus_staging_pull_finish(struct kdbus_staging *staging)
{
	struct kdbus_conn *dst = staging->pull_dst;
	struct kdbus_queue_entry *entry;
	struct kdbus_reply *reply = NULL;

	mutex_lock(&dst->lock);
	entry = staging->pull_entry;
	if (entry && kdbus_staging_copy_pending(entry) < 0) {
		reply = kdbus_reply_ref(entry->reply);
		kdbus_queue_entry_free(entry);
		atomic_inc(&dst->lost_count);
	}
	mutex_unlock(&dst->lock);

	if (reply) {
		kdbus_msg_drop_reply(staging->bus, reply);
		kdbus_reply_unref(reply);
	}

	staging->pull_dst = NULL;
	kdbus_conn_unref(dst);
}

/*
 * Destination lookup (kdbus.message(7)). Destinations given by ID must be
 * ordinary connections. A destination given by name is the name's current
 * owner (possibly an activator); @out_name_id is set to the name's
 * name_id so the message can follow the name between an activator and its
 * implementer. For names the caller holds the registry lock (read) until
 * the message is queued, so an owner change cannot race with the enqueue.
 */
static int kdbus_msg_pin_dst(struct kdbus_bus *bus,
			     struct kdbus_staging *staging,
			     struct kdbus_conn **out_dst, u64 *out_name_id)
{
	const struct kdbus_msg *msg = staging->msg;
	struct kdbus_conn *dst;

	*out_dst = NULL;
	*out_name_id = 0;

	if (staging->dst_name) {
		struct kdbus_name_owner *owner = NULL;
		struct kdbus_name_entry *name;

		lockdep_assert_held(&bus->name_registry->rwlock);

		name = kdbus_name_lookup_unlocked(bus->name_registry,
						  staging->dst_name);
		if (name)
			owner = kdbus_name_get_owner(name);
		if (!owner)
			return -ESRCH;

		if (msg->dst_id != KDBUS_DST_ID_NAME &&
		    msg->dst_id != owner->conn->id)
			return -EREMCHG;

		if ((msg->flags & KDBUS_MSG_NO_AUTO_START) &&
		    kdbus_conn_is_activator(owner->conn))
			return -EADDRNOTAVAIL;

		*out_dst = kdbus_conn_ref(owner->conn);
		*out_name_id = name->name_id;
		return 0;
	}

	dst = kdbus_bus_find_conn_by_id(bus, staging->msg->dst_id);
	if (!dst)
		return -ENXIO;

	if (!kdbus_conn_is_ordinary(dst)) {
		kdbus_conn_unref(dst);
		return -ENXIO;
	}

	*out_dst = dst;
	return 0;
}

/*
 * kdbus_msg_deliver() - queue a message in a receiver
 * @src:	sending connection, NULL for kernel notifications
 * @dst:	receiving connection
 * @staging:	the message
 * @reply:	reply record to link on @src and attach to the entry, or NULL
 * @name_id:	name-generation the message was sent to, or 0
 * @pull:	leave the payload for @dst to pull (kdbus_queue_entry_pull())
 *
 * Enqueue steps of kdbus.message(7), atomic with respect to a disconnect of
 * @dst. If @reply is given, the pending request limit of @src is checked
 * and the record is linked on @src together with the enqueue.
 */
static int kdbus_msg_deliver(struct kdbus_conn *src, struct kdbus_conn *dst,
			     struct kdbus_staging *staging,
			     struct kdbus_reply *reply, u64 name_id, bool pull)
{
	struct kdbus_queue_entry *entry;
	int ret;

	kdbus_conn_lock2(src, dst);

	if (reply && src->request_count >= KDBUS_CONN_MAX_REQUESTS_PENDING) {
		ret = -EMLINK;
		goto exit_unlock;
	}

	if (!kdbus_conn_active(dst)) {
		ret = -ECONNRESET;
		goto exit_unlock;
	}

	if (staging->gaps && staging->gaps->n_fds > 0 &&
	    !kdbus_conn_is_monitor(dst) &&
	    !(dst->flags & KDBUS_HELLO_ACCEPT_FD)) {
		ret = -ECOMM;
		goto exit_unlock;
	}

	entry = kdbus_queue_entry_new(src, dst, staging, pull);
	if (IS_ERR(entry)) {
		ret = PTR_ERR(entry);
		goto exit_unlock;
	}

	if (pull)
		kdbus_staging_pull_link(staging, dst, entry);
	entry->dst_name_id = name_id;
	if (reply)
		kdbus_reply_link(reply);
	kdbus_queue_entry_enqueue(entry, reply);
	ret = 0;

exit_unlock:
	kdbus_conn_unlock2(src, dst);
	/*
	 * Woken after the unlock: a receiver woken under the lock would
	 * only run into it (RECV takes dst->lock) and sleep again.
	 */
	if (ret == 0)
		kdbus_conn_wake_sync(dst);
	return ret;
}

/*
 * Give every monitor a copy of a message from @src (kdbus.connection(7)); a
 * copy that does not fit is counted in the monitor's dropped counter.
 */
static void kdbus_msg_monitors_locked(struct kdbus_conn *src,
				      struct kdbus_staging *staging)
{
	struct kdbus_bus *bus = staging->bus;
	struct kdbus_conn *m;

	lockdep_assert_held(&bus->conn_rwlock);

	list_for_each_entry(m, &bus->monitors_list, monitor_entry)
		if (kdbus_msg_deliver(src, m, staging, NULL, 0, false) < 0)
			atomic_inc(&m->lost_count);
}

static void kdbus_msg_monitors(struct kdbus_conn *src,
			       struct kdbus_staging *staging)
{
	struct kdbus_bus *bus = staging->bus;

	down_read(&bus->conn_rwlock);
	kdbus_msg_monitors_locked(src, staging);
	up_read(&bus->conn_rwlock);
}

/*
 * TALK(dst, dst's connection credentials, src) of kdbus.match(7): may
 * the receiver of a signal talk to its sender? The caller holds the name
 * registry for reading.
 */
static bool kdbus_msg_may_receive(struct kdbus_conn *src,
				  struct kdbus_conn *dst)
{
	return kdbus_conn_policy_talk(dst, dst->cred, src);
}

/*
 * A signal passes a receiver if one of its matches accepts it and the
 * receiver may talk to the sender. Only ordinary connections take signals;
 * the others have no matches.
 */
static bool kdbus_msg_signal_wanted(struct kdbus_conn *src,
				    struct kdbus_conn *dst,
				    struct kdbus_staging *staging)
{
	return kdbus_conn_is_ordinary(dst) &&
	       kdbus_match_db_match_msg(dst->match_db, src, staging) &&
	       kdbus_msg_may_receive(src, dst);
}

/*
 * Broadcast (kdbus.message(7)): monitors first, then every ordinary connection
 * of the bus, the sender included, whose matches accept the message. A
 * receiver that cannot take it loses it and counts the loss; the sender
 * never learns about it. Broadcasts are serialised per bus with the
 * kernel notifications, so every receiver sees one order.
 *
 * Only connections that have matches can want it: they are the bus's
 * match index, and the summary of their slot rejects most of those that
 * do not want it without taking their match database lock (match.c).
 */
static void kdbus_msg_broadcast(struct kdbus_conn *src,
				struct kdbus_staging *staging)
{
	struct kdbus_bus *bus = staging->bus;
	const struct kdbus_match_slot *slot;
	struct kdbus_match_probe probe;
	struct kdbus_conn *dst;
	unsigned int i;

	kdbus_match_probe_init(&probe, src, staging);

	mutex_lock(&bus->notify_flush_lock);
	down_read(&bus->name_registry->rwlock);
	down_read(&bus->conn_rwlock);

	kdbus_msg_monitors_locked(src, staging);

	for (i = 0; i < bus->match_index.n; i++) {
		slot = &bus->match_index.slots[i];
		if (!kdbus_match_slot_may_pass(slot, &probe))
			continue;
		dst = slot->conn;
		if (!kdbus_msg_signal_wanted(src, dst, staging))
			continue;
		if (kdbus_msg_deliver(src, dst, staging, NULL, 0, false) < 0)
			atomic_inc(&dst->lost_count);
	}

	up_read(&bus->conn_rwlock);
	up_read(&bus->name_registry->rwlock);
	mutex_unlock(&bus->notify_flush_lock);
}

/**
 * kdbus_msg_deliver_kernel() - queue a kernel notification
 * @dst:	receiving connection
 * @staging:	the notification
 *
 * Return: 0 on success, negative error code on failure.
 */
int kdbus_msg_deliver_kernel(struct kdbus_conn *dst,
			     struct kdbus_staging *staging)
{
	return kdbus_msg_deliver(NULL, dst, staging, NULL, 0, false);
}

/*
 * Answer a pending synchronous call: build the reply in the waiter's pool
 * and hand it over, or hand over the error.
 */
static int kdbus_msg_sync_attach(struct kdbus_conn *src,
				 struct kdbus_conn *dst,
				 struct kdbus_staging *staging,
				 struct kdbus_reply *reply)
{
	struct kdbus_queue_entry *entry;
	int ret;

	lockdep_assert_held(&dst->lock);

	if (!kdbus_conn_active(dst)) {
		ret = -ECONNRESET;
	} else if (staging->gaps && staging->gaps->n_fds > 0 &&
		   !(dst->flags & KDBUS_HELLO_ACCEPT_FD)) {
		ret = -ECOMM;
	} else {
		/*
		 * A caller that sleeps in the kernel for this answer copies
		 * a large payload itself when it wakes, as the receiver of
		 * a large call does; the replier copies pieces from the end
		 * meanwhile (kdbus_staging_help_pull()).
		 */
		bool pull = reply->waiting && !reply->interrupted &&
			    staging->n_pages > 0 &&
			    staging->n_payload >= KDBUS_PULL_MIN_PAYLOAD;

		entry = kdbus_queue_entry_new(src, dst, staging, pull);
		if (IS_ERR(entry)) {
			ret = PTR_ERR(entry);
		} else {
			if (pull)
				kdbus_staging_pull_link(staging, dst, entry);
			reply->queue_entry = entry;
			ret = 0;
		}
	}

	if (ret == -ECONNRESET)
		return ret;

	/* the caller wakes the waiter once it dropped the locks */
	kdbus_sync_reply_complete(reply, ret == -ECOMM ? -EREMOTEIO : ret);
	return ret;
}

/*
 * A reply (cookie_reply set, no EXPECT_REPLY): it needs a pending record on
 * the destination that expects a reply from @src. The record is consumed
 * before delivery; replies bypass the TALK policy.
 */
static int kdbus_msg_reply(struct kdbus_conn *src, struct kdbus_conn *dst,
			   struct kdbus_staging *staging)
{
	struct kdbus_queue_entry *entry;
	struct kdbus_reply *reply;
	bool wake = false;
	int ret;

	kdbus_conn_lock2(src, dst);

	reply = kdbus_reply_find(src, dst, staging->msg->cookie_reply);
	if (!reply) {
		ret = -EBADSLT;
		goto exit_unlock;
	}

	if (reply->sync) {
		ret = kdbus_msg_sync_attach(src, dst, staging, reply);
		/* the waiter was given a result unless dst is gone */
		wake = ret != -ECONNRESET;
		goto exit_unlock;
	}

	kdbus_reply_unlink(reply);

	if (!kdbus_conn_active(dst)) {
		ret = -ECONNRESET;
		goto exit_unlock;
	}

	if (staging->gaps && staging->gaps->n_fds > 0 &&
	    !(dst->flags & KDBUS_HELLO_ACCEPT_FD)) {
		ret = -ECOMM;
		goto exit_unlock;
	}

	entry = kdbus_queue_entry_new(src, dst, staging, false);
	if (IS_ERR(entry)) {
		ret = PTR_ERR(entry);
		goto exit_unlock;
	}

	kdbus_queue_entry_enqueue(entry, NULL);
	wake = true;
	ret = 0;

exit_unlock:
	kdbus_conn_unlock2(src, dst);
	/* outside the locks, as in kdbus_msg_deliver() */
	if (wake)
		kdbus_conn_wake_sync(dst);
	return ret;
}

/*
 * TALK(src, current creds, dst) of kdbus.policy(7). The caller holds the
 * name registry for reading (dst's names decide).
 */
static bool kdbus_msg_may_talk(struct kdbus_conn *src, struct kdbus_conn *dst)
{
	return kdbus_conn_policy_talk(src, current_cred(), dst);
}

/*
 * Whether the wait for a synchronous call's answer is over, and with what
 * result (kdbus.message(7)).
 */
static bool kdbus_msg_wait_done(struct kdbus_conn *conn,
				struct file *cancel_fd,
				struct kdbus_reply *reply, int *ret)
{
	if (!kdbus_conn_active(conn)) {
		*ret = -ECONNRESET;
		return true;
	}

	/*
	 * A peek without conn->lock: the result (reply->err, the queue
	 * entry) is read under the lock once the wait is over.
	 */
	if (!READ_ONCE(reply->waiting)) {
		*ret = 0;
		return true;
	}

	if (cancel_fd && (vfs_poll(cancel_fd, NULL) & EPOLLIN)) {
		*ret = -ECANCELED;
		return true;
	}

	if (signal_pending(current)) {
		*ret = -EINTR;
		return true;
	}

	return false;
}

/*
 * Sleep until the answer, a disconnect, a signal or the deadline. The
 * wait entry removes itself when woken (autoremove_wake_function()), so
 * the woken caller does not take the wait queue's lock again, which its
 * waker may still hold. Returns 0 on timeout.
 */
static int kdbus_msg_wait_sleep(struct kdbus_conn *conn,
				struct kdbus_reply *reply, ktime_t *expire)
{
	DEFINE_WAIT(wait);
	int r = 1;

	prepare_to_wait(&conn->wait, &wait, TASK_INTERRUPTIBLE);
	/* re-checked after queueing: an answer since the check woke us */
	if (READ_ONCE(reply->waiting) && kdbus_conn_active(conn))
		r = schedule_hrtimeout_range(expire, 0, HRTIMER_MODE_ABS);
	finish_wait(&conn->wait, &wait);
	return r;
}

/*
 * Wait for the answer to a synchronous call, kdbus.message(7), until the
 * absolute CLOCK_MONOTONIC deadline. With a cancel fd, both wait queues
 * are watched through a poll table.
 */
static int kdbus_msg_wait_reply(struct kdbus_conn *conn,
				struct kdbus_cmd_send *cmd, struct file *f,
				struct file *cancel_fd,
				struct kdbus_reply *reply)
{
	struct kdbus_queue_entry *entry;
	struct poll_wqueues pwq;
	ktime_t expire;
	int ret, r;

	expire = ns_to_ktime(min_t(u64, reply->deadline_ns, KTIME_MAX));

	if (!cancel_fd) {
		while (!kdbus_msg_wait_done(conn, NULL, reply, &ret)) {
			if (!kdbus_msg_wait_sleep(conn, reply, &expire)) {
				ret = -ETIMEDOUT;
				break;
			}
		}
		goto exit_done;
	}

	poll_initwait(&pwq);
	poll_wait(f, &conn->wait, &pwq.pt);
	vfs_poll(cancel_fd, &pwq.pt);

	while (!kdbus_msg_wait_done(conn, cancel_fd, reply, &ret)) {
		set_current_state(TASK_INTERRUPTIBLE);
		r = 1;
		if (!pwq.triggered)
			r = schedule_hrtimeout_range(&expire, 0,
						     HRTIMER_MODE_ABS);
		__set_current_state(TASK_RUNNING);
		/* as poll_schedule_timeout(): order against the re-check */
		smp_store_mb(pwq.triggered, 0);

		if (!r) {
			ret = -ETIMEDOUT;
			break;
		}
	}

	poll_freewait(&pwq);

exit_done:
	mutex_lock(&conn->lock);

	if (ret == -EINTR && reply->waiting) {
		/*
		 * Keep the record; a re-issued SEND with the same cookie
		 * resumes here. If nobody resumes, the timeout scan drops
		 * the record silently once its deadline passed.
		 */
		reply->interrupted = true;
		kdbus_reply_schedule_scan(conn, reply->deadline_ns);
		mutex_unlock(&conn->lock);
		return -ERESTARTSYS;
	}

	/* a reply attached by now is delivered, whatever woke us */
	entry = reply->queue_entry;
	if (entry) {
		reply->queue_entry = NULL;
		ret = kdbus_queue_entry_pull(entry);
		if (ret >= 0)
			ret = kdbus_queue_entry_install(entry,
							&cmd->reply.return_flags,
							true);
		if (ret >= 0)
			kdbus_pool_slice_publish(entry->slice,
						 &cmd->reply.offset,
						 &cmd->reply.msg_size);
		kdbus_queue_entry_free(entry);
	} else if (!reply->waiting) {
		ret = reply->err;
	}

	WRITE_ONCE(reply->waiting, false);
	kdbus_reply_unlink(reply);
	mutex_unlock(&conn->lock);

	return ret;
}

/*
 * Unicast message that is neither a reply nor a signal: TALK check, reply
 * record if a reply is expected, enqueue. For synchronous calls the
 * record is handed back in @out_reply; the caller waits for the answer
 * after dropping the name registry lock.
 */
static int kdbus_msg_call(struct kdbus_conn *src, struct kdbus_conn *dst,
			  u64 name_id, struct kdbus_staging *staging,
			  bool sync, struct kdbus_reply **out_reply)
{
	const struct kdbus_msg *msg = staging->msg;
	struct kdbus_reply *reply = NULL;
	bool pull;
	int ret;

	if (!kdbus_msg_may_talk(src, dst))
		return -EPERM;

	if (msg->flags & KDBUS_MSG_EXPECT_REPLY) {
		/* checked again under the lock; monitors see no EMLINK */
		if (READ_ONCE(src->request_count) >=
		    KDBUS_CONN_MAX_REQUESTS_PENDING)
			return -EMLINK;

		reply = kdbus_reply_new(dst, src, msg->cookie, msg->timeout_ns,
					name_id, sync);
		if (IS_ERR(reply))
			return PTR_ERR(reply);
	}

	/* monitors get the copy before the destination's queue is tried */
	kdbus_msg_monitors(src, staging);

	/*
	 * The caller sleeps until the answer anyway: the receiver copies a
	 * large payload itself, into its own CPU's cache, while the SEND
	 * still runs (kdbus_queue_entry_pull()).
	 */
	pull = sync && kdbus_conn_is_ordinary(dst) && staging->n_pages > 0 &&
	       staging->n_payload >= KDBUS_PULL_MIN_PAYLOAD;

	ret = kdbus_msg_deliver(src, dst, staging, reply, name_id, pull);
	if (ret == 0 && sync)
		*out_reply = reply;
	else
		kdbus_reply_unref(reply);
	return ret;
}

/* kdbus.message(7): resume an interrupted synchronous call */
static struct kdbus_reply *kdbus_msg_find_interrupted(struct kdbus_conn *conn,
						      u64 cookie)
{
	struct kdbus_reply *r, *found = NULL;

	mutex_lock(&conn->lock);
	list_for_each_entry(r, &conn->reply_list, entry) {
		if (r->sync && r->interrupted && r->cookie == cookie) {
			r->interrupted = false;
			found = kdbus_reply_ref(r);
			break;
		}
	}
	mutex_unlock(&conn->lock);

	return found;
}

/*
 * Route a staged message. A synchronous call that was queued (or one
 * interrupted earlier and resumed) hands its reply record back in
 * @sync_reply: the caller waits for the answer once it has dropped the
 * staging object.
 */
static int kdbus_msg_route(struct kdbus_conn *src, struct kdbus_cmd_send *cmd,
			   struct kdbus_staging *staging,
			   struct kdbus_reply **sync_reply)
{
	const struct kdbus_msg *msg = staging->msg;
	struct kdbus_bus *bus = src->ep->bus;
	struct kdbus_conn *dst;
	u64 name_id;
	int ret;

	if (msg->dst_id == KDBUS_DST_ID_BROADCAST) {
		kdbus_msg_broadcast(src, staging);
		return 0;
	}

	if (cmd->flags & KDBUS_SEND_SYNC_REPLY) {
		struct kdbus_reply *reply;

		reply = kdbus_msg_find_interrupted(src, msg->cookie);
		if (reply) {
			*sync_reply = reply;
			return 0;
		}

		if (msg->timeout_ns <= kdbus_staging_now(staging))
			return -ETIMEDOUT;
	}

	/*
	 * The name must keep its owner until the message is queued; NAME
	 * match rules of a signal and the OWNED_NAME metadata read the
	 * sender's names, the TALK policy the names of the destination
	 * (or, for a signal, of the sender).
	 */
	down_read(&bus->name_registry->rwlock);

	ret = kdbus_msg_pin_dst(bus, staging, &dst, &name_id);
	if (ret < 0)
		goto exit_unlock;

	if (msg->flags & KDBUS_MSG_SIGNAL) {
		/*
		 * Unicast signals (kdbus.message(7)): monitors see them even if
		 * the destination drops them; the destination takes them
		 * only through its matches, and a failure to queue is not
		 * the sender's business.
		 */
		kdbus_msg_monitors(src, staging);
		if (kdbus_msg_signal_wanted(src, dst, staging))
			kdbus_msg_deliver(src, dst, staging, NULL, name_id,
					  false);
		ret = 0;
	} else if (!(msg->flags & KDBUS_MSG_EXPECT_REPLY) &&
		   msg->cookie_reply != 0) {
		ret = kdbus_msg_reply(src, dst, staging);
		/* a reply that found its request is seen by monitors */
		if (ret != -EBADSLT)
			kdbus_msg_monitors(src, staging);
	} else {
		ret = kdbus_msg_call(src, dst, name_id, staging,
				     cmd->flags & KDBUS_SEND_SYNC_REPLY,
				     sync_reply);
	}

	kdbus_conn_unref(dst);

exit_unlock:
	up_read(&bus->name_registry->rwlock);
	return ret;
}

/* the flags and items a struct kdbus_msg may carry (kdbus.item(7)) */
static int kdbus_msg_parse(struct kdbus_args *margs, struct kdbus_arg *margv,
			   void __user *addr, struct kdbus_msg **msg)
{
	static const u64 types[KDBUS_MSG_N_ARGS] = {
		KDBUS_ITEM_NEGOTIATE,
		KDBUS_ITEM_PAYLOAD_VEC,
		KDBUS_ITEM_PAYLOAD_MEMFD,
		KDBUS_ITEM_FDS,
		KDBUS_ITEM_BLOOM_FILTER,
		KDBUS_ITEM_DST_NAME,
	};
	size_t i;

	memset(margs, 0, offsetof(struct kdbus_args, cmd_buf));
	for (i = 0; i < KDBUS_MSG_N_ARGS; ++i) {
		margv[i].type = types[i];
		margv[i].item = NULL;
		margv[i].multiple = types[i] == KDBUS_ITEM_PAYLOAD_VEC ||
				    types[i] == KDBUS_ITEM_PAYLOAD_MEMFD;
		margv[i].mandatory = false;
	}

	margs->allowed_flags = KDBUS_FLAG_NEGOTIATE |
			       KDBUS_MSG_EXPECT_REPLY |
			       KDBUS_MSG_NO_AUTO_START |
			       KDBUS_MSG_SIGNAL;
	margs->argv = margv;
	margs->argc = KDBUS_MSG_N_ARGS;

	return kdbus_args_parse_msg(margs, addr, msg);
}

/* SEND with KDBUS_FLAG_NEGOTIATE on the command (kdbus(7)) */
static int kdbus_msg_negotiate(struct kdbus_cmd_send __user *argp)
{
	struct kdbus_arg margv[KDBUS_MSG_N_ARGS];
	struct kdbus_args margs;
	struct kdbus_msg *msg;
	u64 addr;
	int ret;

	if (get_user(addr, &argp->msg_address))
		return -EFAULT;
	if (!addr)
		return 0;

	ret = kdbus_msg_parse(&margs, margv, u64_to_user_ptr(addr), &msg);
	if (ret < 0)
		return ret;
	if (ret == 0)
		kdbus_args_clear(&margs, 0);
	return 0;
}

/**
 * kdbus_cmd_send() - handle KDBUS_CMD_SEND
 * @conn:	connection
 * @f:		file the ioctl was issued on
 * @argp:	command payload
 *
 * Return: 0 on success (or after negotiation), -ERESTARTSYS if a
 * synchronous wait was interrupted, negative error code on failure.
 */
int kdbus_cmd_send(struct kdbus_conn *conn, struct file *f, void __user *argp)
{
	struct kdbus_arg margv[KDBUS_MSG_N_ARGS];
	struct kdbus_staging *staging = NULL;
	struct kdbus_reply *sync_reply = NULL;
	struct file *cancel_fd = NULL;
	struct kdbus_msg *msg = NULL;
	struct kdbus_cmd_send *cmd;
	struct kdbus_args margs;
	int ret;

	struct kdbus_arg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
		{ .type = KDBUS_ITEM_CANCEL_FD },
	};
	struct kdbus_args args = {
		.allowed_flags = KDBUS_FLAG_NEGOTIATE |
				 KDBUS_SEND_SYNC_REPLY,
		.argv = argv,
		.argc = ARRAY_SIZE(argv),
	};

	if (!kdbus_conn_is_ordinary(conn))
		return -EOPNOTSUPP;

	ret = kdbus_args_parse(&args, argp, &cmd);
	if (ret < 0)
		return ret;
	if (ret > 0)
		return kdbus_msg_negotiate(argp);

	kdbus_pool_publish_empty(conn->pool, &cmd->reply.offset,
				 &cmd->reply.msg_size);
	cmd->reply.return_flags = 0;

	ret = kdbus_msg_parse(&margs, margv, u64_to_user_ptr(cmd->msg_address),
			      &msg);
	if (ret < 0)
		goto exit;
	if (ret > 0) {
		/* the message negotiates but the command does not */
		ret = -EINVAL;
		goto exit;
	}

	if (argv[1].item) {
		cancel_fd = fget(argv[1].item->fds[0]);
		if (!cancel_fd) {
			ret = -EBADF;
			goto exit;
		}
		if (!file_can_poll(cancel_fd)) {
			ret = -EINVAL;
			goto exit;
		}
	}

	staging = kdbus_staging_new_user(conn->ep->bus, conn, cmd, msg);
	if (IS_ERR(staging)) {
		ret = PTR_ERR(staging);
		staging = NULL;
		goto exit;
	}

	ret = kdbus_msg_route(conn, cmd, staging, &sync_reply);

	/*
	 * The message is routed (queued, or refused): its staging object
	 * (metadata, pinned payload pages) and the kernel copy of the
	 * message are freed before a synchronous caller waits, not after
	 * the answer came; unless the receiver is to pull the payload from
	 * the pinned pages: then the staging object goes once the wait is
	 * over, and copies the payload first if the receiver did not.
	 */
	if (!staging->pull_dst)
		staging = kdbus_staging_free(staging);
	kdbus_args_clear(&margs, ret);
	msg = NULL;

	/* a payload the receiver pulls: copy pieces of its tail meanwhile */
	if (staging && staging->pull_dst)
		kdbus_staging_help_pull(staging);

	/* wait without the registry lock: the answer may take long */
	if (sync_reply) {
		ret = kdbus_msg_wait_reply(conn, cmd, f, cancel_fd, sync_reply);
		kdbus_reply_unref(sync_reply);
	}
	staging = kdbus_staging_free(staging);
	if (ret < 0)
		goto exit;

	if (copy_to_user(&((struct kdbus_cmd_send __user *)argp)->reply,
			 &cmd->reply, sizeof(cmd->reply))) {
		/* do not leak a reply slice the caller never learns about */
		if (cmd->reply.msg_size)
			kdbus_pool_release_offset(conn->pool,
						  cmd->reply.offset);
		ret = -EFAULT;
	}

exit:
	if (cancel_fd)
		fput(cancel_fd);
	kdbus_staging_free(staging);
	if (msg)
		kdbus_args_clear(&margs, ret);
	return kdbus_args_clear(&args, ret);
}

/**
 * kdbus_msg_reply_dead() - complete a record whose request was dropped
 * @bus:	bus of the request
 * @reply:	reply record of the dropped request
 *
 * The requester learns at once that no reply will come: EPIPE for a
 * synchronous waiter, a REPLY_DEAD notification otherwise (queued; the
 * caller flushes the bus's notifications once its locks are dropped).
 *
 * Context: takes the requester's conn->lock; no other connection lock
 * may be held.
 */
void kdbus_msg_reply_dead(struct kdbus_bus *bus, struct kdbus_reply *reply)
{
	struct kdbus_conn *requester = reply->reply_dst;

	mutex_lock(&requester->lock);
	if (reply->linked && (!reply->sync || reply->waiting)) {
		if (reply->sync) {
			kdbus_sync_reply_wakeup(reply, -EPIPE);
		} else {
			kdbus_notify_reply_dead(bus, requester->id,
						reply->cookie);
			kdbus_reply_unlink(reply);
		}
	}
	mutex_unlock(&requester->lock);
}

/**
 * kdbus_cmd_recv() - handle KDBUS_CMD_RECV
 * @conn:	connection
 * @argp:	command payload
 *
 * Return: 0 on success, negative error code on failure (EAGAIN if no
 * suitable message is queued).
 */
int kdbus_cmd_recv(struct kdbus_conn *conn, void __user *argp)
{
	struct kdbus_cmd_recv __user *urecv = argp;
	struct kdbus_bus *bus = conn->ep->bus;
	struct kdbus_reply *reply = NULL;
	struct kdbus_queue_entry *entry;
	struct kdbus_cmd_recv *cmd;
	bool published = false;
	int ret;

	struct kdbus_arg argv[] = {
		{ .type = KDBUS_ITEM_NEGOTIATE },
	};
	struct kdbus_args args = {
		.allowed_flags = KDBUS_FLAG_NEGOTIATE |
				 KDBUS_RECV_PEEK |
				 KDBUS_RECV_DROP |
				 KDBUS_RECV_USE_PRIORITY,
		.argv = argv,
		.argc = ARRAY_SIZE(argv),
	};

	if (!kdbus_conn_is_ordinary(conn) &&
	    !kdbus_conn_is_monitor(conn) &&
	    !kdbus_conn_is_activator(conn))
		return -EOPNOTSUPP;

	ret = kdbus_args_parse(&args, argp, &cmd);
	if (ret != 0)
		return ret;

	cmd->dropped_msgs = 0;
	cmd->msg.return_flags = 0;
	kdbus_pool_publish_empty(conn->pool, &cmd->msg.offset,
				 &cmd->msg.msg_size);

	if ((cmd->flags & KDBUS_RECV_DROP) &&
	    (cmd->flags & KDBUS_RECV_USE_PRIORITY)) {
		ret = -EINVAL;
		goto exit;
	}

	mutex_lock(&conn->lock);

	entry = kdbus_queue_peek(&conn->queue, cmd->priority,
				 cmd->flags & KDBUS_RECV_USE_PRIORITY);
	if (!entry) {
		ret = -EAGAIN;
	} else if (cmd->flags & KDBUS_RECV_DROP) {
		reply = kdbus_reply_ref(entry->reply);
		kdbus_queue_entry_unlink(entry);
		kdbus_queue_entry_free(entry);
	} else {
		bool peek = cmd->flags & KDBUS_RECV_PEEK;

		/*
		 * A pending payload is copied before the message is first
		 * seen. Nothing is installed on PEEK; regular fds only into
		 * receivers that accept them, memfds into every receiver.
		 */
		ret = kdbus_queue_entry_pull(entry);
		if (ret >= 0 && !peek)
			ret = kdbus_queue_entry_install(entry,
							&cmd->msg.return_flags,
							conn->flags &
							KDBUS_HELLO_ACCEPT_FD);
		if (ret >= 0) {
			kdbus_pool_slice_publish(entry->slice,
						 &cmd->msg.offset,
						 &cmd->msg.msg_size);
			published = !peek;
			if (!peek) {
				kdbus_queue_entry_unlink(entry);
				kdbus_queue_entry_free(entry);
			}
		}
	}

	mutex_unlock(&conn->lock);

	if (reply) {
		kdbus_msg_drop_reply(bus, reply);
		kdbus_reply_unref(reply);
	}

	if (ret < 0 && ret != -EAGAIN)
		goto exit;

	cmd->dropped_msgs = atomic_xchg(&conn->lost_count, 0);
	if (cmd->dropped_msgs > 0)
		cmd->return_flags |= KDBUS_RECV_RETURN_DROPPED_MSGS;

	if (copy_to_user(&urecv->msg, &cmd->msg, sizeof(cmd->msg)) ||
	    put_user(cmd->dropped_msgs, &urecv->dropped_msgs)) {
		if (published)
			kdbus_pool_release_offset(conn->pool,
						  cmd->msg.offset);
		ret = -EFAULT;
	}

exit:
	return kdbus_args_clear(&args, ret);
}

/**
 * kdbus_msg_disconnect() - tear down the messaging state of a connection
 * @conn:	connection being disconnected
 *
 * Part of a disconnect (kdbus.connection(7)): stops the reply timeout work,
 * discards the queue (requests in it that expected a reply produce
 * REPLY_DEAD for their requesters), discards the connection's own reply
 * records, and completes every record on the bus that expects a reply
 * from @conn (REPLY_DEAD, or EPIPE for synchronous waiters).
 *
 * Context: @conn must already be deactivated (no new messages can be
 * queued) and drained of running ioctls; no connection lock may be held.
 */
void kdbus_msg_disconnect(struct kdbus_conn *conn)
{
	struct kdbus_queue_entry *entry, *tmp;
	struct kdbus_bus *bus = conn->ep->bus;
	struct kdbus_reply *r, *r_tmp;
	struct kdbus_conn *c;
	unsigned int i;

	cancel_delayed_work_sync(&conn->work);

	mutex_lock(&conn->lock);
	list_for_each_entry_safe(entry, tmp, &conn->queue.msg_list, entry) {
		if (entry->reply)
			kdbus_notify_reply_dead(bus,
						entry->reply->reply_dst->id,
						entry->reply->cookie);
		kdbus_queue_entry_unlink(entry);
		kdbus_queue_entry_free(entry);
	}

	list_for_each_entry_safe(r, r_tmp, &conn->reply_list, entry)
		kdbus_reply_unlink(r);
	mutex_unlock(&conn->lock);

	down_read(&bus->conn_rwlock);
	hash_for_each(bus->conn_hash, i, c, hentry) {
		if (c == conn)
			continue;

		mutex_lock(&c->lock);
		list_for_each_entry_safe(r, r_tmp, &c->reply_list, entry) {
			if (r->reply_src != conn)
				continue;

			if (r->sync) {
				kdbus_sync_reply_wakeup(r, -EPIPE);
			} else {
				kdbus_notify_reply_dead(bus, c->id, r->cookie);
				kdbus_reply_unlink(r);
			}
		}
		mutex_unlock(&c->lock);
	}
	up_read(&bus->conn_rwlock);

	kdbus_notify_flush(bus);
}
