/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Compatibility layer, force-included into every translation unit of the
 * module (see Kbuild). It hides the kernel API changes after Linux 6.1 so
 * that the rest of the code is written against one API. Each branch is
 * keyed on a KDBUS_HAVE_* feature probe that Kbuild computes from the
 * headers and exports of the kernel being built against, and each is
 * compiled by at least one kernel of the tested matrix (6.1, 6.12 and
 * 6.12-rt). Only the lower bound is a version test.
 */

#ifndef __KDBUS_COMPAT_H
#define __KDBUS_COMPAT_H

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/version.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0)
#error "kdbus requires Linux 6.1 or newer"
#endif

#include <linux/mm.h>

/*
 * 6.3 made vma->vm_flags read-only and added vm_flags_clear(); before that
 * the field is written directly (the caller holds mmap_lock for writing).
 */
#ifdef KDBUS_HAVE_VM_FLAGS_CLEAR
#define kdbus_vma_clear_flags(vma, flags) vm_flags_clear((vma), (flags))
#else
#define kdbus_vma_clear_flags(vma, flags) ((vma)->vm_flags &= ~(flags))
#endif

#include <linux/fs.h>

/* set a, m and c time of an inode; 6.7 hid the fields behind accessors */
static inline void kdbus_inode_set_times(struct inode *inode,
					 struct timespec64 ts)
{
#ifdef KDBUS_HAVE_INODE_TIME_ACCESSORS
	inode_set_ctime_to_ts(inode, ts);
	inode_set_atime_to_ts(inode, ts);
	inode_set_mtime_to_ts(inode, ts);
#else
	inode->i_atime = ts;
	inode->i_mtime = ts;
	inode->i_ctime = ts;
#endif
}

#include <linux/shmem_fs.h>

/*
 * Whether @mapping belongs to a shmem (memfd, tmpfs) file. 6.1 exports
 * shmem_aops but not shmem_mapping(); 6.12 exports only shmem_mapping().
 */
static inline bool kdbus_shmem_mapping(struct address_space *mapping)
{
#ifdef KDBUS_HAVE_SHMEM_MAPPING_EXPORT
	return shmem_mapping(mapping);
#else
	return mapping->a_ops == &shmem_aops;
#endif
}

#endif
