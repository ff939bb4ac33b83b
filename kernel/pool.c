// SPDX-License-Identifier: GPL-2.0-only
/*
 * The receive pool: a private shmem file per connection, mapped read-only
 * by its owner and written only by the kernel. It is cut into slices,
 * binder-style: free slices are kept in a tree sorted by size (best fit),
 * busy slices in a tree sorted by offset (lookup by FREE), and all slices
 * in a list sorted by offset (merging of neighbours).
 *
 * A busy slice carries two one-bit references: the kernel's (held while a
 * message is queued or a command fills it) and the user's (set when its
 * offset is published). It returns to the free trees when both are gone.
 *
 * Locking:
 *  - pool->lock protects everything in the pool and all its slices
 *    (trees, list, sizes, flags, @accounted_size).
 *  - The shmem file's pages are written directly (kdbus_pool_write_iter())
 *    without pool->lock and without the file's inode lock: the caller owns
 *    the slice (kernel reference), so its range cannot be handed out
 *    twice, and writers of different slices of one page touch disjoint
 *    bytes. Not going through write_iter() also means no writer's
 *    RLIMIT_FSIZE applies (a notification written by a task with a zero
 *    file-size limit reaches every receiver) and two senders to one
 *    receiver do not serialise on its inode lock. Two writers may fill
 *    disjoint ranges of one slice at once (a pulled payload, message.c).
 *  - A write may use pages held beforehand (struct kdbus_pool_held,
 *    kdbus_pool_held_find()): it then looks up, allocates and locks
 *    nothing and does not sleep, so it may run under a raw spinlock
 *    (message.c, a pulled payload).
 *  - pool->lock is a leaf lock; it is never held while calling into the
 *    VFS or user memory.
 *  - Every byte written into a pool is counted (stats.c) by its source:
 *    user memory, kernel buffers or another pool; the counters need no
 *    lock.
 */

#include <linux/aio.h>
#include <linux/bvec.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pagemap.h>
#include <linux/pagevec.h>
#include <linux/rbtree.h>
#include <linux/sched.h>
#include <linux/shmem_fs.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/uio.h>

#include "pool.h"
#include "stats.h"
#include "util.h"

/**
 * struct kdbus_pool - the receiver's buffer
 * @f:			The backing shmem file (invariant)
 * @size:		The size of the file (invariant)
 * @lock:		Pool data lock
 * @accounted_size:	Currently accounted memory in bytes (@lock)
 * @slices:		All slices sorted by address (@lock)
 * @slices_busy:	Tree of allocated slices, by offset (@lock)
 * @slices_free:	Tree of free slices, by size (@lock)
 */
struct kdbus_pool {
	struct file *f;
	size_t size;
	struct mutex lock; /* protects slices and accounting */
	size_t accounted_size;
	struct list_head slices;
	struct rb_root slices_busy;
	struct rb_root slices_free;
};

/**
 * struct kdbus_pool_slice - allocated element in kdbus_pool
 * @pool:		Pool this slice belongs to (invariant)
 * @off:		Offset of slice in the shmem file (pool->lock)
 * @size:		Size of slice (pool->lock)
 * @entry:		Entry in "all slices" list (pool->lock)
 * @rb_node:		Entry in free or busy tree (pool->lock)
 * @free:		Unused slice (pool->lock)
 * @accounted:		Accounted as queue slice (pool->lock)
 * @ref_kernel:		Kernel holds a reference (pool->lock)
 * @ref_user:		Userspace holds a reference (pool->lock)
 *
 * The offset and size of a busy slice never change, so its holder may
 * read them without the lock.
 */
struct kdbus_pool_slice {
	struct kdbus_pool *pool;
	size_t off;
	size_t size;

	struct list_head entry;
	struct rb_node rb_node;

	bool free:1;
	bool accounted:1;
	bool ref_kernel:1;
	bool ref_user:1;
};

static struct kdbus_pool_slice *kdbus_pool_slice_new(struct kdbus_pool *pool,
						     size_t off, size_t size)
{
	struct kdbus_pool_slice *slice;

	slice = kzalloc(sizeof(*slice), GFP_KERNEL_ACCOUNT);
	if (!slice)
		return NULL;

	slice->pool = pool;
	slice->off = off;
	slice->size = size;
	slice->free = true;
	return slice;
}

/* insert a slice into the free tree */
static void kdbus_pool_add_free_slice(struct kdbus_pool *pool,
				      struct kdbus_pool_slice *slice)
{
	struct rb_node **n;
	struct rb_node *pn = NULL;

	n = &pool->slices_free.rb_node;
	while (*n) {
		struct kdbus_pool_slice *pslice;

		pn = *n;
		pslice = rb_entry(pn, struct kdbus_pool_slice, rb_node);
		if (slice->size < pslice->size)
			n = &pn->rb_left;
		else
			n = &pn->rb_right;
	}

	rb_link_node(&slice->rb_node, pn, n);
	rb_insert_color(&slice->rb_node, &pool->slices_free);
}

/* insert a slice into the busy tree; offsets are unique by construction */
static void kdbus_pool_add_busy_slice(struct kdbus_pool *pool,
				      struct kdbus_pool_slice *slice)
{
	struct rb_node **n;
	struct rb_node *pn = NULL;

	n = &pool->slices_busy.rb_node;
	while (*n) {
		struct kdbus_pool_slice *pslice;

		pn = *n;
		pslice = rb_entry(pn, struct kdbus_pool_slice, rb_node);
		if (slice->off < pslice->off)
			n = &pn->rb_left;
		else
			n = &pn->rb_right;
	}

	rb_link_node(&slice->rb_node, pn, n);
	rb_insert_color(&slice->rb_node, &pool->slices_busy);
}

static struct kdbus_pool_slice *kdbus_pool_find_slice(struct kdbus_pool *pool,
						      size_t off)
{
	struct rb_node *n;

	n = pool->slices_busy.rb_node;
	while (n) {
		struct kdbus_pool_slice *s;

		s = rb_entry(n, struct kdbus_pool_slice, rb_node);
		if (off < s->off)
			n = n->rb_left;
		else if (off > s->off)
			n = n->rb_right;
		else
			return s;
	}

	return NULL;
}

/**
 * kdbus_pool_slice_alloc() - allocate memory from a pool
 * @pool:	The receiver's pool
 * @size:	The number of bytes to allocate
 * @accounted:	Whether this slice should be accounted for
 *
 * The returned slice is used for kdbus_pool_slice_release() to
 * free the allocated memory. The kernel holds the only reference.
 *
 * Return: the allocated slice on success, ERR_PTR on failure: -EINVAL for
 * a zero or overflowing size, -EXFULL if no free slice is large enough.
 */
struct kdbus_pool_slice *kdbus_pool_slice_alloc(struct kdbus_pool *pool,
						size_t size, bool accounted)
{
	size_t slice_size = KDBUS_ALIGN8(size);
	struct rb_node *n, *found = NULL;
	struct kdbus_pool_slice *s;
	int ret = 0;

	if (size == 0 || slice_size < size)
		return ERR_PTR(-EINVAL);

	/* search a free slice with the closest matching size */
	mutex_lock(&pool->lock);
	n = pool->slices_free.rb_node;
	while (n) {
		s = rb_entry(n, struct kdbus_pool_slice, rb_node);
		if (slice_size < s->size) {
			found = n;
			n = n->rb_left;
		} else if (slice_size > s->size) {
			n = n->rb_right;
		} else {
			found = n;
			break;
		}
	}

	/* no slice with the minimum size found in the pool */
	if (!found) {
		ret = -EXFULL;
		goto exit_unlock;
	}

	s = rb_entry(found, struct kdbus_pool_slice, rb_node);

	/* no exact match, split-off the remainder of the size */
	if (s->size > slice_size) {
		struct kdbus_pool_slice *s_new;

		s_new = kdbus_pool_slice_new(pool, s->off + slice_size,
					     s->size - slice_size);
		if (!s_new) {
			ret = -ENOMEM;
			goto exit_unlock;
		}

		list_add(&s_new->entry, &s->entry);
		rb_erase(found, &pool->slices_free);
		s->size = slice_size;
		kdbus_pool_add_free_slice(pool, s_new);
	} else {
		rb_erase(found, &pool->slices_free);
	}

	/* move slice from free to the busy tree */
	kdbus_pool_add_busy_slice(pool, s);

	s->ref_kernel = true;
	s->ref_user = false;
	s->free = false;
	s->accounted = accounted;
	if (accounted)
		pool->accounted_size += s->size;
	mutex_unlock(&pool->lock);

	return s;

exit_unlock:
	mutex_unlock(&pool->lock);
	return ERR_PTR(ret);
}

static void __kdbus_pool_slice_release(struct kdbus_pool_slice *slice)
{
	struct kdbus_pool *pool = slice->pool;

	lockdep_assert_held(&pool->lock);

	/* don't free the slice if either has a reference */
	if (slice->ref_kernel || slice->ref_user || slice->free)
		return;

	rb_erase(&slice->rb_node, &pool->slices_busy);

	/* merge with the next free slice */
	if (!list_is_last(&slice->entry, &pool->slices)) {
		struct kdbus_pool_slice *s;

		s = list_next_entry(slice, entry);
		if (s->free) {
			rb_erase(&s->rb_node, &pool->slices_free);
			list_del(&s->entry);
			slice->size += s->size;
			kfree(s);
		}
	}

	/* merge with previous free slice */
	if (!list_is_first(&slice->entry, &pool->slices)) {
		struct kdbus_pool_slice *s;

		s = list_prev_entry(slice, entry);
		if (s->free) {
			rb_erase(&s->rb_node, &pool->slices_free);
			list_del(&slice->entry);
			s->size += slice->size;
			kfree(slice);
			slice = s;
		}
	}

	slice->free = true;
	kdbus_pool_add_free_slice(pool, slice);
}

/**
 * kdbus_pool_slice_release() - drop kernel-reference on allocated slice
 * @slice:		Slice allocated from the pool (or NULL)
 *
 * This releases the kernel-reference on the given slice and stops its
 * accounting. If the kernel-reference and the user-reference on a slice
 * are dropped, the slice is returned to the pool. The slice must not be
 * used by the caller afterwards.
 */
void kdbus_pool_slice_release(struct kdbus_pool_slice *slice)
{
	struct kdbus_pool *pool;

	if (!slice)
		return;

	pool = slice->pool;
	mutex_lock(&pool->lock);
	if (!WARN_ON(!slice->ref_kernel)) {
		if (slice->accounted) {
			pool->accounted_size -= slice->size;
			slice->accounted = false;
		}
		slice->ref_kernel = false;
		__kdbus_pool_slice_release(slice);
	}
	mutex_unlock(&pool->lock);
}

/**
 * kdbus_pool_release_offset() - release a public offset
 * @pool:		pool to operate on
 * @off:		offset to release
 *
 * This should be called whenever user-space frees a slice given to them. It
 * verifies the slice is available and public, and then drops it. It ensures
 * correct locking and barriers against queues.
 *
 * Return: 0 on success, -ENXIO if the offset is not the start of a slice
 * published to user space (offset @pool->size is a valid no-op).
 */
int kdbus_pool_release_offset(struct kdbus_pool *pool, size_t off)
{
	struct kdbus_pool_slice *slice;
	int ret = 0;

	/* 'pool->size' is used as dummy offset for empty slices */
	if (off == pool->size)
		return 0;

	mutex_lock(&pool->lock);
	slice = kdbus_pool_find_slice(pool, off);
	if (slice && slice->ref_user) {
		slice->ref_user = false;
		__kdbus_pool_slice_release(slice);
	} else {
		ret = -ENXIO;
	}
	mutex_unlock(&pool->lock);

	return ret;
}

/**
 * kdbus_pool_publish_empty() - publish empty slice to user-space
 * @pool:		pool to operate on
 * @off:		output storage for offset, or NULL
 * @size:		output storage for size, or NULL
 *
 * This is the same as kdbus_pool_slice_publish(), but uses a dummy slice
 * with size 0. The returned offset points to the end of the pool and is
 * never returned on real slices.
 */
void kdbus_pool_publish_empty(struct kdbus_pool *pool, u64 *off, u64 *size)
{
	if (off)
		*off = pool->size;
	if (size)
		*size = 0;
}

/**
 * kdbus_pool_slice_publish() - publish slice to user-space
 * @slice:		The slice
 * @out_offset:		Output storage for offset, or NULL
 * @out_size:		Output storage for size, or NULL
 *
 * This prepares a slice to be published to user-space: the user reference
 * is set (idempotent), so FREE of its offset is accepted. The kernel must
 * still hold its reference.
 */
void kdbus_pool_slice_publish(struct kdbus_pool_slice *slice,
			      u64 *out_offset, u64 *out_size)
{
	mutex_lock(&slice->pool->lock);
	/* kernel must own a ref to @slice to publish it */
	WARN_ON(!slice->ref_kernel);
	slice->ref_user = true;
	mutex_unlock(&slice->pool->lock);

	if (out_offset)
		*out_offset = slice->off;
	if (out_size)
		*out_size = slice->size;
}

/**
 * kdbus_pool_slice_offset() - Get a slice's offset inside the pool
 * @slice:	Slice to return the offset of
 *
 * Return: The internal offset @slice inside the pool.
 */
off_t kdbus_pool_slice_offset(const struct kdbus_pool_slice *slice)
{
	return slice->off;
}

/**
 * kdbus_pool_slice_size() - get size of a pool slice
 * @slice:	slice to query
 *
 * Return: size of the given slice
 */
size_t kdbus_pool_slice_size(const struct kdbus_pool_slice *slice)
{
	return slice->size;
}

/**
 * kdbus_pool_new() - create a new pool
 * @name:		Name of the (deleted) file which shows up in
 *			/proc, used for debugging; may be NULL
 * @size:		Maximum size of the pool
 *
 * Return: a new kdbus_pool on success, ERR_PTR on failure.
 */
struct kdbus_pool *kdbus_pool_new(const char *name, size_t size)
{
	struct kdbus_pool_slice *s;
	struct kdbus_pool *p;
	struct file *f;
	char *n = NULL;
	int ret;

	if (size == 0 || !PAGE_ALIGNED(size))
		return ERR_PTR(-EINVAL);

	p = kzalloc(sizeof(*p), GFP_KERNEL_ACCOUNT);
	if (!p)
		return ERR_PTR(-ENOMEM);

	if (name) {
		n = kasprintf(GFP_KERNEL_ACCOUNT, KBUILD_MODNAME "-conn:%s",
			      name);
		if (!n) {
			ret = -ENOMEM;
			goto exit_free;
		}
	}

	f = shmem_file_setup(n ?: KBUILD_MODNAME "-conn", size, VM_NORESERVE);
	kfree(n);

	if (IS_ERR(f)) {
		ret = PTR_ERR(f);
		goto exit_free;
	}

	/* pools may be larger than 2 GiB */
	f->f_flags |= O_LARGEFILE;

	/* allocate first slice spanning the entire pool */
	s = kdbus_pool_slice_new(p, 0, size);
	if (!s) {
		ret = -ENOMEM;
		goto exit_put_shmem;
	}

	p->f = f;
	p->size = size;
	p->slices_free = RB_ROOT;
	p->slices_busy = RB_ROOT;
	mutex_init(&p->lock);

	INIT_LIST_HEAD(&p->slices);
	list_add(&s->entry, &p->slices);

	kdbus_pool_add_free_slice(p, s);
	kdbus_stats_live(KDBUS_STAT_LIVE_POOLS, 1);
	return p;

exit_put_shmem:
	fput(f);
exit_free:
	kfree(p);
	return ERR_PTR(ret);
}

/**
 * kdbus_pool_free() - destroy pool
 * @pool:		The receiver's pool (or NULL)
 *
 * All slices are dropped, whatever their references; existing user
 * mappings keep the shmem file alive until they are unmapped.
 */
void kdbus_pool_free(struct kdbus_pool *pool)
{
	struct kdbus_pool_slice *s, *tmp;

	if (!pool)
		return;

	list_for_each_entry_safe(s, tmp, &pool->slices, entry) {
		list_del(&s->entry);
		kfree(s);
	}

	fput(pool->f);
	kfree(pool);
	kdbus_stats_live(KDBUS_STAT_LIVE_POOLS, -1);
}

/**
 * kdbus_pool_accounted() - retrieve accounting information
 * @pool:		pool to query
 * @size:		output for overall pool size
 * @acc:		output for currently accounted size
 *
 * This returns accounting information of the pool. Note that the data might
 * change after the function returns, as the pool lock is dropped. You need
 * to protect the data via other means, if you need reliable accounting.
 */
void kdbus_pool_accounted(struct kdbus_pool *pool, size_t *size, size_t *acc)
{
	mutex_lock(&pool->lock);

	if (size)
		*size = pool->size;
	if (acc)
		*acc = pool->accounted_size;

	mutex_unlock(&pool->lock);
}

/*
 * Pages of the pool file in order, for one write: present, up-to-date
 * folios are found in batches without locking them (one page cache walk
 * per batch, not one lookup and folio lock per page); a page that is
 * missing, swapped out or not up to date is left to shmem, which
 * allocates, reads or clears it.
 */
struct kdbus_pool_pages {
	struct address_space *mapping;
	struct folio_batch fbatch;
	unsigned int next;	/* next folio of @fbatch to look at */
	pgoff_t scanned;	/* @fbatch covers the range up to here */
	pgoff_t last;		/* last page of the write */
};

/*
 * Drop the batch's references. Not folio_batch_release(): that first
 * drains this CPU's LRU caches (lru_add_drain()), work for a reclaim
 * path, not for a write of a few bytes into folios that stay cached.
 */
static void kdbus_folio_batch_put(struct folio_batch *fbatch)
{
	unsigned int i;

	for (i = 0; i < folio_batch_count(fbatch); i++)
		folio_put(fbatch->folios[i]);
	folio_batch_init(fbatch);
}

static struct page *kdbus_pool_pages_get(struct kdbus_pool_pages *pp,
					 pgoff_t index, bool *own)
{
	struct folio *folio;
	struct page *page;

	for (;;) {
		while (pp->next < folio_batch_count(&pp->fbatch)) {
			folio = pp->fbatch.folios[pp->next];
			if (folio->index + folio_nr_pages(folio) > index)
				break;
			pp->next++;
		}
		if (pp->next < folio_batch_count(&pp->fbatch) ||
		    index < pp->scanned)
			break;
		/* batch used up: the next one starts at @index */
		kdbus_folio_batch_put(&pp->fbatch);
		pp->next = 0;
		pp->scanned = index;
		if (!filemap_get_folios(pp->mapping, &pp->scanned, pp->last,
					&pp->fbatch))
			pp->scanned = pp->last + 1;
	}

	if (pp->next < folio_batch_count(&pp->fbatch)) {
		folio = pp->fbatch.folios[pp->next];
		if (folio->index <= index && folio_test_uptodate(folio)) {
			*own = false;
			return folio_page(folio, index - folio->index);
		}
	}

	page = shmem_read_mapping_page(pp->mapping, index);
	*own = !IS_ERR(page);
	return page;
}

/*
 * Write @iter into @slice at @off, page by page into the shmem file's
 * page cache; bytes really written are added to @stat. A short copy
 * (unreadable user memory) is -EFAULT. With @held, the pages are taken
 * from there and nothing sleeps.
 */
static ssize_t kdbus_pool_write_iter(const struct kdbus_pool_slice *slice,
				     loff_t off, struct iov_iter *iter,
				     size_t total_len, enum kdbus_stat stat,
				     const struct kdbus_pool_held *held)
{
	struct kdbus_pool_pages pp;
	size_t done = 0;
	ssize_t ret = 0;
	loff_t pos;

	if (off < 0 || off > slice->size || total_len > slice->size - off)
		return -EFAULT;
	if (total_len == 0)
		return 0;

	pos = slice->off + off;
	pp.mapping = slice->pool->f->f_mapping;
	folio_batch_init(&pp.fbatch);
	pp.next = 0;
	pp.scanned = pos >> PAGE_SHIFT;
	pp.last = (pos + total_len - 1) >> PAGE_SHIFT;
	if (held) {
		if (held->f != slice->pool->f || pp.scanned < held->first ||
		    pp.last >= held->first + held->n)
			return -EFAULT;
	} else if (!filemap_get_folios(pp.mapping, &pp.scanned, pp.last,
				       &pp.fbatch)) {
		pp.scanned = pp.last + 1;
	}

	while (done < total_len) {
		size_t poff = offset_in_page(pos);
		size_t n = min_t(size_t, PAGE_SIZE - poff, total_len - done);
		struct page *page;
		size_t copied;
		bool own = false;

		if (held)
			page = held->pages[(pos >> PAGE_SHIFT) - held->first];
		else
			page = kdbus_pool_pages_get(&pp, pos >> PAGE_SHIFT,
						    &own);
		if (IS_ERR(page)) {
			ret = PTR_ERR(page);
			break;
		}
		copied = copy_page_from_iter(page, poff, n, iter);
		set_page_dirty(page);
		if (own)
			put_page(page);

		done += copied;
		pos += copied;
		if (copied != n) {
			ret = -EFAULT;
			break;
		}
	}

	kdbus_folio_batch_put(&pp.fbatch);
	if (done > 0)
		kdbus_stats_add(stat, done);
	return ret < 0 ? ret : (ssize_t)done;
}

/**
 * kdbus_pool_slice_copy_bvec() - copy pinned user pages to a slice
 * @slice:		The slice to write to
 * @off:		Offset in the slice to write to
 * @bvec:		bio_vec array over pages the sender pinned
 * @nr_segs:		Number of elements in @bvec
 * @skip:		Bytes of @bvec[0] to leave out (less than its bv_len)
 * @total_len:		Number of bytes to copy, after @skip
 * @held:		the pool pages under the range, held by
 *			kdbus_pool_held_find(), or NULL to look them up
 *
 * The sender's payload, pinned before any lock was taken, is copied into
 * @slice at offset @off; it is counted as user memory (one copy from the
 * sender to the receiver). Nothing here can fault on user memory; with
 * @held nothing sleeps either.
 *
 * Return: the number of bytes copied, negative errno on failure.
 */
ssize_t kdbus_pool_slice_copy_bvec(const struct kdbus_pool_slice *slice,
				   loff_t off, const struct bio_vec *bvec,
				   size_t nr_segs, size_t skip,
				   size_t total_len,
				   const struct kdbus_pool_held *held)
{
	struct iov_iter iter;

	iov_iter_bvec(&iter, ITER_SOURCE, bvec, nr_segs, skip + total_len);
	iov_iter_advance(&iter, skip);
	return kdbus_pool_write_iter(slice, off, &iter, total_len,
				     KDBUS_STAT_COPY_USER, held);
}

/**
 * kdbus_pool_slice_zero() - write zero bytes into a slice
 * @slice:		The slice to write to
 * @off:		Offset in the slice to write to
 * @len:		Number of zero bytes
 * @held:		as for kdbus_pool_slice_copy_bvec()
 *
 * Padding is written explicitly, so no stale pool content leaks. At most
 * a page at a time.
 *
 * Return: the number of bytes written, negative errno on failure.
 */
ssize_t kdbus_pool_slice_zero(const struct kdbus_pool_slice *slice,
			      loff_t off, size_t len,
			      const struct kdbus_pool_held *held)
{
	struct bio_vec bv = { .bv_page = ZERO_PAGE(0), .bv_len = len };
	struct iov_iter iter;

	if (len > PAGE_SIZE)
		return -EINVAL;
	iov_iter_bvec(&iter, ITER_SOURCE, &bv, 1, len);
	return kdbus_pool_write_iter(slice, off, &iter, len,
				     KDBUS_STAT_COPY_KERNEL, held);
}

/**
 * kdbus_pool_held_init() - note the pool pages under a range of a slice
 * @held:		filled in: the pool's file (referenced) and the range
 * @slice:		slice; the caller keeps it allocated for this call
 * @off:		offset in @slice
 * @len:		length, at most KDBUS_POOL_HELD_MAX
 *
 * Takes no page yet and does not sleep; kdbus_pool_held_find() then takes
 * the pages, and a later write with @held looks up nothing.
 *
 * Return: 0, or -EFAULT if the range is not inside @slice.
 */
int kdbus_pool_held_init(struct kdbus_pool_held *held,
			 const struct kdbus_pool_slice *slice, u64 off,
			 size_t len)
{
	u64 pos = slice->off + off;

	if (len == 0 || len > KDBUS_POOL_HELD_MAX || off > slice->size ||
	    len > slice->size - off)
		return -EFAULT;

	held->f = get_file(slice->pool->f);
	held->first = pos >> PAGE_SHIFT;
	held->want = ((pos + len - 1) >> PAGE_SHIFT) - held->first + 1;
	held->n = 0;
	return 0;
}

/**
 * kdbus_pool_held_find() - take the pages noted by kdbus_pool_held_init()
 * @held:		range of pool pages
 *
 * Takes a reference on each page of the range that is already in the
 * pool's page cache and up to date, found in one batch; it allocates and
 * locks nothing: a page being allocated is locked by whoever allocates it
 * (possibly the pool's owner, writing the same slice), and a thread that
 * is preempted while it holds a page lock stalls everyone who needs that
 * page. The pages stay in the page cache while referenced (pool pages are
 * never truncated, and reclaim does not take a page with an extra
 * reference).
 *
 * Context: any context in which RCU may be used; no spinlock held.
 * Return: 0 if every page was found, -ENOENT otherwise (the pages found
 * are held all the same, for kdbus_pool_held_release()).
 */
int kdbus_pool_held_find(struct kdbus_pool_held *held)
{
	pgoff_t index = held->first, last = held->first + held->want - 1;
	struct folio_batch fbatch;
	bool gap = false;
	unsigned int i;

	folio_batch_init(&fbatch);
	while (!gap && held->n < held->want &&
	       filemap_get_folios(held->f->f_mapping, &index, last, &fbatch)) {
		for (i = 0; !gap && i < folio_batch_count(&fbatch); i++) {
			struct folio *folio = fbatch.folios[i];
			pgoff_t next = held->first + held->n;

			/* a hole, or a page not written yet: give up */
			gap = folio->index > next || !folio_test_uptodate(folio);
			while (!gap && held->n < held->want &&
			       next < folio->index + folio_nr_pages(folio)) {
				struct page *page;

				page = folio_page(folio, next - folio->index);
				get_page(page);
				held->pages[held->n++] = page;
				next++;
			}
		}
		kdbus_folio_batch_put(&fbatch);
	}

	return held->n == held->want ? 0 : -ENOENT;
}

/**
 * kdbus_pool_held_release() - drop what kdbus_pool_held_init() and
 *			       kdbus_pool_held_find() took
 * @held:		range of pool pages
 */
void kdbus_pool_held_release(struct kdbus_pool_held *held)
{
	while (held->n > 0)
		put_page(held->pages[--held->n]);
	fput(held->f);
}

/**
 * kdbus_pool_slice_copy_kvec() - copy kernel memory to a slice
 * @slice:		The slice to write to
 * @off:		Offset in the slice to write to
 * @kvec:		kvec array, pointing to data to copy
 * @kvec_count:		Number of elements in @kvec
 * @total_len:		Total number of bytes described in members of @kvec
 *
 * Kernel memory referenced by @kvec will be copied into @slice at offset @off.
 *
 * Return: the number of bytes copied, negative errno on failure.
 */
ssize_t kdbus_pool_slice_copy_kvec(const struct kdbus_pool_slice *slice,
				   loff_t off, struct kvec *kvec,
				   size_t kvec_count, size_t total_len)
{
	struct iov_iter iter;

	iov_iter_kvec(&iter, ITER_SOURCE, kvec, kvec_count, total_len);
	return kdbus_pool_write_iter(slice, off, &iter, total_len,
				     KDBUS_STAT_COPY_KERNEL, NULL);
}

/**
 * kdbus_pool_slice_copy() - copy data from one slice into another
 * @slice_dst:		destination slice
 * @slice_src:		source slice
 *
 * Copies the content of @slice_src to the start of @slice_dst (which must
 * be at least as large), through a bounce page.
 *
 * Return: 0 on success, negative error number on failure.
 */
int kdbus_pool_slice_copy(const struct kdbus_pool_slice *slice_dst,
			  const struct kdbus_pool_slice *slice_src)
{
	struct file *f_src = slice_src->pool->f;
	size_t len = slice_src->size;
	loff_t off_src = slice_src->off;
	loff_t off_dst = 0;
	void *buf;
	int ret = 0;

	if (len > slice_dst->size)
		return -EFAULT;

	buf = kmalloc(PAGE_SIZE, GFP_KERNEL_ACCOUNT);
	if (!buf)
		return -ENOMEM;

	while (len > 0) {
		size_t chunk = min_t(size_t, len, PAGE_SIZE);
		struct kvec kvec = { .iov_base = buf, .iov_len = chunk };
		struct iov_iter iter;
		ssize_t n;

		n = kernel_read(f_src, buf, chunk, &off_src);
		if (n != chunk) {
			ret = n < 0 ? n : -EFAULT;
			break;
		}

		iov_iter_kvec(&iter, ITER_SOURCE, &kvec, 1, chunk);
		n = kdbus_pool_write_iter(slice_dst, off_dst, &iter, chunk,
					  KDBUS_STAT_COPY_POOL, NULL);
		if (n != chunk) {
			ret = n < 0 ? n : -EFAULT;
			break;
		}

		off_dst += chunk;
		len -= chunk;
	}

	kfree(buf);
	return ret;
}

/**
 * kdbus_pool_mmap() - map the pool into the process
 * @pool:		The receiver's pool
 * @vma:		passed by mmap() syscall
 *
 * The mapping must be read-only (-EPERM otherwise; VM_MAYWRITE is cleared
 * so mprotect() cannot add write access) and within the pool (-EFAULT).
 *
 * Return: the result of the mmap() call, negative errno on failure.
 */
int kdbus_pool_mmap(const struct kdbus_pool *pool, struct vm_area_struct *vma)
{
	unsigned long len = vma->vm_end - vma->vm_start;
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;

	/* deny write access to the pool */
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	kdbus_vma_clear_flags(vma, VM_MAYWRITE);

	/* do not allow to map more than the size of the file */
	if (len > pool->size || off > pool->size - len)
		return -EFAULT;

	/* replace the connection file with our shmem file */
	vma_set_file(vma, pool->f);

	return call_mmap(pool->f, vma);
}
