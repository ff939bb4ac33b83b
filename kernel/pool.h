/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The receive pool of a connection (kdbus.pool(7)).
 */

#ifndef __KDBUS_POOL_H
#define __KDBUS_POOL_H

#include <linux/mm_types.h>
#include <linux/sizes.h>
#include <linux/types.h>
#include <linux/uio.h>

struct kdbus_pool;
struct kdbus_pool_slice;

/* the longest range of a slice whose pages can be held for one write */
#define KDBUS_POOL_HELD_MAX	SZ_32K

/**
 * struct kdbus_pool_held - pool pages held for a write that must not sleep
 * @f:		the pool's shmem file (reference held)
 * @first:	index of the first page
 * @want:	number of pages in the range
 * @n:		number of pages in @pages (referenced)
 * @pages:	the pages, from @first on
 */
struct kdbus_pool_held {
	struct file *f;
	pgoff_t first;
	unsigned int want;
	unsigned int n;
	struct page *pages[KDBUS_POOL_HELD_MAX / PAGE_SIZE + 1];
};

struct kdbus_pool *kdbus_pool_new(const char *name, size_t size);
void kdbus_pool_free(struct kdbus_pool *pool);
void kdbus_pool_accounted(struct kdbus_pool *pool, size_t *size, size_t *acc);
int kdbus_pool_mmap(const struct kdbus_pool *pool, struct vm_area_struct *vma);
int kdbus_pool_release_offset(struct kdbus_pool *pool, size_t off);
void kdbus_pool_publish_empty(struct kdbus_pool *pool, u64 *off, u64 *size);

struct kdbus_pool_slice *kdbus_pool_slice_alloc(struct kdbus_pool *pool,
						size_t size, bool accounted);
void kdbus_pool_slice_release(struct kdbus_pool_slice *slice);
void kdbus_pool_slice_publish(struct kdbus_pool_slice *slice,
			      u64 *out_offset, u64 *out_size);
off_t kdbus_pool_slice_offset(const struct kdbus_pool_slice *slice);
size_t kdbus_pool_slice_size(const struct kdbus_pool_slice *slice);
int kdbus_pool_slice_copy(const struct kdbus_pool_slice *slice_dst,
			  const struct kdbus_pool_slice *slice_src);
ssize_t kdbus_pool_slice_copy_kvec(const struct kdbus_pool_slice *slice,
				   loff_t off, struct kvec *kvec,
				   size_t kvec_count, size_t total_len);
ssize_t kdbus_pool_slice_copy_bvec(const struct kdbus_pool_slice *slice,
				   loff_t off, const struct bio_vec *bvec,
				   size_t nr_segs, size_t skip,
				   size_t total_len,
				   const struct kdbus_pool_held *held);
ssize_t kdbus_pool_slice_zero(const struct kdbus_pool_slice *slice,
			      loff_t off, size_t len,
			      const struct kdbus_pool_held *held);
int kdbus_pool_held_init(struct kdbus_pool_held *held,
			 const struct kdbus_pool_slice *slice, u64 off,
			 size_t len);
int kdbus_pool_held_find(struct kdbus_pool_held *held);
void kdbus_pool_held_release(struct kdbus_pool_held *held);

#endif
