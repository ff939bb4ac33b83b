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

/* set a, m and c time of a new inode; accessors changed in 6.6 and 6.7 */
static inline void kdbus_inode_set_times_now(struct inode *inode)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	struct timespec64 now = inode_set_ctime_current(inode);

	inode_set_atime_to_ts(inode, now);
	inode_set_mtime_to_ts(inode, now);
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
	struct timespec64 now = inode_set_ctime_current(inode);

	inode->i_atime = now;
	inode->i_mtime = now;
#else
	inode->i_atime = current_time(inode);
	inode->i_mtime = inode->i_atime;
	inode->i_ctime = inode->i_atime;
#endif
}

#endif
