/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Small helpers shared by all kdbus objects.
 */

#ifndef __KDBUS_UTIL_H
#define __KDBUS_UTIL_H

#include <linux/dcache.h>
#include <linux/ioctl.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/uio.h>

#include <uapi/linux/kdbus.h>

/* all exported addresses are 64 bit */
#define KDBUS_PTR(addr) ((void __user *)(uintptr_t)(addr))

/* all exported sizes are 64 bit and data aligned to 64 bit */
#define KDBUS_ALIGN8(s) ALIGN((s), 8)
#define KDBUS_IS_ALIGNED8(s) (IS_ALIGNED(s, 8))

/**
 * kdbus_strhash - calculate a hash
 * @str:	String
 *
 * Return: hash value
 */
static inline unsigned int kdbus_strhash(const char *str)
{
	unsigned long hash = init_name_hash(NULL);

	while (*str)
		hash = partial_name_hash(*str++, hash);

	return end_name_hash(hash);
}

int kdbus_verify_uid_prefix(const char *name, struct user_namespace *user_ns,
			    kuid_t kuid);
int kdbus_sanitize_attach_flags(u64 flags, u64 *attach_flags);
bool kdbus_str_valid(const char *str, size_t size);
int kdbus_sysname_is_valid(const char *name);

void kdbus_kvec_set(struct kvec *kvec, void *src, size_t len, u64 *total_len);
size_t kdbus_kvec_pad(struct kvec *kvec, u64 *len);

#endif
