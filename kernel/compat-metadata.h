/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Compatibility helpers of the metadata collector (metadata.c): kernel API
 * changes after Linux 6.1 in the interfaces it reads task data through.
 * Like compat.h, each branch is keyed on a Kbuild feature probe.
 */

#ifndef __KDBUS_COMPAT_METADATA_H
#define __KDBUS_COMPAT_METADATA_H

#include <linux/capability.h>
#include <linux/errno.h>
#include <linux/fs.h>
#include <linux/mm_types.h>
#include <linux/rcupdate.h>
#include <linux/security.h>
#include <linux/slab.h>

/*
 * get_mm_exe_file() is not exported: take a reference on mm->exe_file
 * under RCU the way it does. 6.7 turned get_file_rcu() into a function
 * taking the RCU pointer.
 */
static inline struct file *kdbus_get_mm_exe_file(struct mm_struct *mm)
{
	struct file *exe_file;

	rcu_read_lock();
#ifdef KDBUS_HAVE_GET_FILE_RCU_PTR
	exe_file = get_file_rcu(&mm->exe_file);
#else
	exe_file = rcu_dereference(mm->exe_file);
	if (exe_file && !get_file_rcu(exe_file))
		exe_file = NULL;
#endif
	rcu_read_unlock();

	return exe_file;
}

/*
 * Low and high 32 bits of a capability set: an array of two u32 words up
 * to 6.2, a single u64 since 6.3.
 */
static inline void kdbus_cap_words(const kernel_cap_t *set, u32 *words)
{
#ifdef KDBUS_HAVE_CAP_U64
	words[0] = lower_32_bits(set->val);
	words[1] = upper_32_bits(set->val);
#else
	words[0] = set->cap[0];
	words[1] = set->cap[1];
#endif
}

/* the LSM's secid of current (0 if no LSM has one) */
static inline u32 kdbus_current_secid(void)
{
	u32 secid = 0;

	security_current_getsecid_subj(&secid);
	return secid;
}

/*
 * The LSM context of @secid as a kmalloc'ed string in *@out (NULL if the
 * context could not be copied: the caller checks). -EOPNOTSUPP if no LSM
 * provides one. (6.14 replaced secids and (char *, len) pairs by struct
 * lsm_prop and struct lsm_context; no tested kernel has that, so the
 * module does not build there yet.)
 */
static inline int kdbus_secid_seclabel(u32 secid, char **out)
{
	u32 len;
	char *ctx;
	int ret;

	*out = NULL;
	ret = security_secid_to_secctx(secid, &ctx, &len);
	if (ret < 0)
		return ret;

	*out = kmemdup_nul(ctx, len, GFP_KERNEL_ACCOUNT);
	security_release_secctx(ctx, len);
	return 0;
}

#endif
