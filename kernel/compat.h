/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Compatibility layer, force-included into every translation unit of the
 * module (see Kbuild). It hides the kernel API changes after Linux 6.1 so
 * that the rest of the code is written against one API. Feature probes
 * are used where a macro exists to test; otherwise the kernel version.
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
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define kdbus_vma_clear_flags(vma, flags) vm_flags_clear((vma), (flags))
#else
#define kdbus_vma_clear_flags(vma, flags) ((vma)->vm_flags &= ~(flags))
#endif

#include <linux/fs.h>

/* set a, m and c time of an inode; accessors changed in 6.6 and 6.7 */
static inline void kdbus_inode_set_times(struct inode *inode,
					 struct timespec64 ts)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	inode_set_ctime_to_ts(inode, ts);
	inode_set_atime_to_ts(inode, ts);
	inode_set_mtime_to_ts(inode, ts);
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
	inode_set_ctime_to_ts(inode, ts);
	inode->i_atime = ts;
	inode->i_mtime = ts;
#else
	inode->i_atime = ts;
	inode->i_mtime = ts;
	inode->i_ctime = ts;
#endif
}

#endif
