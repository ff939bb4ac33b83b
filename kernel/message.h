/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kdbus message staging: one message on its way from a sender (or the
 * kernel) into the pools of its receivers
 */

#ifndef __KDBUS_MESSAGE_H
#define __KDBUS_MESSAGE_H

#include <linux/atomic.h>
#include <linux/bvec.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uio.h>
#include <uapi/linux/kdbus.h>

#include "limits.h"
#include "metadata.h"

struct file;
struct kdbus_bus;
struct kdbus_conn;
struct kdbus_reply;
struct kdbus_item;
struct kdbus_meta_conn;
struct kdbus_meta_proc;
struct kdbus_pool_slice;

/**
 * struct kdbus_gaps - descriptors to be installed at RECV time
 * @kref:		reference count; shared by all queue entries of one
 *			message
 * @n_memfds:		number of memfds in @memfd_files
 * @memfd_offsets:	byte offsets of the memfd.fd fields of the
 *			PAYLOAD_MEMFD items in the delivered message
 * @memfd_files:	pinned sealed memfds (references held)
 * @n_fds:		number of regular descriptors in @fd_files
 * @fd_offset:		byte offset of the FDS item's descriptor array in the
 *			delivered message
 * @fd_files:		pinned files of the FDS item (references held)
 *
 * The offsets do not depend on the receiver: metadata only ever follows
 * the sender's items. The structure is immutable once staging is done.
 */
struct kdbus_gaps {
	struct kref kref;
	size_t n_memfds;
	size_t memfd_offsets[KDBUS_MSG_MAX_MEMFD_ITEMS];
	struct file *memfd_files[KDBUS_MSG_MAX_MEMFD_ITEMS];
	size_t n_fds;
	size_t fd_offset;
	struct file *fd_files[];
};

/**
 * struct kdbus_staging - a message being delivered
 * @bus:		bus the message is sent on (reference held)
 * @src:		sending connection, NULL for kernel notifications; not
 *			pinned, the sender's command outlives the object
 * @gaps:		descriptors carried by the message, or NULL
 * @msg:		kernel copy of the header and items; PAYLOAD_VEC items
 *			are already rewritten into PAYLOAD_OFF
 * @msg_size:		size of @msg without trailing padding
 * @payload_base:	base currently added to the PAYLOAD_OFF offsets
 * @bloom_filter:	points into @msg, or NULL
 * @dst_name:		points into @msg, or NULL
 * @seq:		bus sequence number
 * @ts_monotonic:	CLOCK_MONOTONIC timestamp of the message
 * @ts_realtime:	CLOCK_REALTIME timestamp of the message
 * @stamped:		the timestamps were read (on first need)
 * @kernel:		kernel notification (TIMESTAMP always attached)
 * @charge:		kernel notifications: the user whose action caused
 *			it, charged in each receiver's quota (reference),
 *			or NULL
 * @meta_proc:		task metadata of the sender, collected as receivers
 *			ask; NULL for kernel notifications and faked senders,
 *			and until a receiver wants task data
 * @meta_proc_shared:	@meta_proc is the sender's HELLO snapshot, which
 *			still described it (kdbus_meta_proc_is_current())
 * @cmdline:		the sender's argument area, read at staging if a
 *			receiver on the bus may want it, until @meta_proc is
 *			created (then it owns it)
 * @cmdline_size:	bytes in @cmdline
 * @cmdline_read:	the argument area was read (@cmdline is NULL if the
 *			sender has none, it was not readable or it equals
 *			the HELLO snapshot's)
 * @cmdline_same:	it equals the HELLO snapshot's (not copied)
 * @meta_conn:		connection metadata of the sender and the timestamp,
 *			collected when a receiver first wants such an item
 * @meta_dst:		receiver @meta_items was rendered for, or NULL
 * @meta_items:		metadata items rendered for @meta_dst, or NULL
 * @meta_size:		size of @meta_items (every item padded)
 * @meta_tail_pad:	padding of the final item of @meta_items, which is
 *			not part of kdbus_msg.size
 * @n_parts:		number of elements in @parts
 * @n_payload:		total length of the inline payload stream
 * @parts:		payload stream; entries with a NULL iov_base are
 *			zero padding, all others are sender user memory
 * @pages:		the sender's pages under @parts, pinned at staging
 * @bvecs:		@pages as bio_vecs, in the order of @parts
 * @n_pages:		number of elements in @pages and @bvecs
 * @payload_copy:	the payload stream, copied in at SEND (small payloads,
 *			KDBUS_STAGING_COPY_MAX), allocated with the object;
 *			NULL if the payload is pinned instead
 * @notify_entry:	entry in a notification list (kernel messages)
 * @pull_dst:		receiver of the queue entry whose payload is still to
 *			be copied (reference held), or NULL; see
 *			kdbus_queue_entry_pull()
 * @pull_entry:		that entry while its payload is pending, else NULL
 *			(set under @pull_dst->lock and @pull_lock)
 * @pull_lock:		held by the sender while it claims a piece of the
 *			pending payload and while it copies one page of it
 *			(kdbus_staging_help_pull()); a raw spinlock
 * @pull_claims:	pieces of the pending payload not claimed yet
 * @pull_gen:		changed when the receiver takes the sender's piece
 *			over or resets the claims: the sender stops then
 *			(@pull_lock)
 * @pull_back:		the piece the sender is copying (@pull_lock)
 * @pull_back_done:	bytes of it written (@pull_lock)
 * @pull_back_busy:	@pull_back is claimed and not complete (@pull_lock)
 * @inline_parts:	@parts of a message with few parts (no allocation)
 * @inline_pages:	@pages of a small payload (no allocation)
 * @inline_bvecs:	@bvecs of a small payload (no allocation)
 * @msg_buf:		storage of @msg, allocated with the object
 *
 * A staging object is owned by the thread that created it; it only lives
 * for the duration of one command. The one thing it shares is the payload
 * of a synchronous call that the receiver pulls, or of the answer to one
 * that its caller pulls: while @pull_entry is set, the receiver may copy
 * from @parts and @bvecs under @pull_dst->lock, and the sender pieces of
 * it into the receiver's slice, one page at a time under @pull_lock.
 */
/*
 * A typical D-Bus message has a header and a body part (plus padding) and
 * spans a page or two: those live in the staging object itself, so a
 * small SEND allocates nothing for them.
 */
#define KDBUS_STAGING_INLINE_PARTS	4
#define KDBUS_STAGING_INLINE_PAGES	4

/*
 * A payload stream of at most this many bytes is copied in at SEND with
 * the header instead of being pinned (kdbus_staging_copy_payload()).
 */
#define KDBUS_STAGING_COPY_MAX		512

struct kdbus_staging {
	struct kdbus_bus *bus;
	struct kdbus_conn *src;
	struct kdbus_gaps *gaps;
	struct kdbus_msg *msg;
	size_t msg_size;
	u64 payload_base;
	const struct kdbus_bloom_filter *bloom_filter;
	const char *dst_name;
	u64 seq;
	u64 ts_monotonic;
	u64 ts_realtime;
	bool stamped;
	bool kernel;
	struct kdbus_user *charge;
	struct kdbus_meta_proc *meta_proc;
	bool meta_proc_shared;
	char *cmdline;
	size_t cmdline_size;
	bool cmdline_read;
	bool cmdline_same;
	struct kdbus_meta_conn meta_conn;
	const struct kdbus_conn *meta_dst;
	struct kdbus_item *meta_items;
	size_t meta_size;
	size_t meta_tail_pad;
	size_t n_parts;
	size_t n_payload;
	struct iovec *parts;
	struct page **pages;
	struct bio_vec *bvecs;
	size_t n_pages;
	u8 *payload_copy;
	struct list_head notify_entry;
	struct kdbus_conn *pull_dst;
	struct kdbus_queue_entry *pull_entry;
	raw_spinlock_t pull_lock;	/* the sender's piece, page by page */
	atomic64_t pull_claims;
	u32 pull_gen;
	u32 pull_back;
	u32 pull_back_done;
	bool pull_back_busy;
	struct iovec inline_parts[KDBUS_STAGING_INLINE_PARTS];
	struct page *inline_pages[KDBUS_STAGING_INLINE_PAGES];
	struct bio_vec inline_bvecs[KDBUS_STAGING_INLINE_PAGES];
	u64 msg_buf[];		/* the header, staging->msg */
};

struct kdbus_gaps *kdbus_gaps_ref(struct kdbus_gaps *gaps);
struct kdbus_gaps *kdbus_gaps_unref(struct kdbus_gaps *gaps);
int kdbus_gaps_install(struct kdbus_gaps *gaps,
		       struct kdbus_pool_slice *slice, bool install_fds,
		       bool *out_incomplete);

struct kdbus_staging *kdbus_staging_new_kernel(struct kdbus_bus *bus,
					       u64 dst, u64 cookie_reply,
					       size_t it_size, u64 it_type);
struct kdbus_staging *kdbus_staging_new_user(struct kdbus_bus *bus,
					     struct kdbus_conn *src,
					     struct kdbus_cmd_send *cmd,
					     struct kdbus_msg *msg);
struct kdbus_staging *kdbus_staging_free(struct kdbus_staging *staging);
int kdbus_staging_size(struct kdbus_staging *staging,
		       struct kdbus_conn *dst, size_t *out_size);
int kdbus_staging_emit(struct kdbus_staging *staging,
		       struct kdbus_conn *dst,
		       struct kdbus_pool_slice *slice, u64 *deferred_off);
int kdbus_queue_entry_pull(struct kdbus_queue_entry *entry);
void kdbus_staging_pull_detach(struct kdbus_queue_entry *entry);

int kdbus_msg_deliver_kernel(struct kdbus_conn *dst,
			     struct kdbus_staging *staging);
void kdbus_msg_disconnect(struct kdbus_conn *conn);
void kdbus_msg_reply_dead(struct kdbus_bus *bus, struct kdbus_reply *reply);

int kdbus_cmd_send(struct kdbus_conn *conn, struct file *f, void __user *argp);
int kdbus_cmd_recv(struct kdbus_conn *conn, void __user *argp);

#endif
