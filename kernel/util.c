// SPDX-License-Identifier: GPL-2.0-only
/*
 * Small helpers shared by all kdbus objects.
 *
 * Locking: none; every helper works on caller-owned data.
 */

#include <linux/ctype.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/user_namespace.h>

#include "limits.h"
#include "util.h"

/**
 * kdbus_verify_uid_prefix() - verify UID prefix of a user-supplied name
 * @name:	user-supplied name to verify
 * @user_ns:	user-namespace to act in
 * @kuid:	Kernel internal uid of user
 *
 * This verifies that the user-supplied name @name has their UID as prefix,
 * followed by a '-'. The UID is rendered in @user_ns.
 *
 * Return: 0 on success, -EINVAL if the prefix is wrong or the uid has no
 * mapping in @user_ns.
 */
int kdbus_verify_uid_prefix(const char *name, struct user_namespace *user_ns,
			    kuid_t kuid)
{
	char prefix[16];
	uid_t uid;
	int len;

	uid = from_kuid(user_ns, kuid);
	if (uid == (uid_t)-1)
		return -EINVAL;

	len = snprintf(prefix, sizeof(prefix), "%u-", uid);
	if (strncmp(name, prefix, len) != 0)
		return -EINVAL;

	return 0;
}

/**
 * kdbus_sanitize_attach_flags() - sanitize attach flags from user-space
 * @flags:		Attach flags provided by userspace
 * @attach_flags:	A pointer where to store the valid attach flags
 *
 * The value _KDBUS_ATTACH_ANY is turned into _KDBUS_ATTACH_ALL; any other
 * value with an unknown bit is rejected.
 *
 * Return: 0 on success, -EINVAL on invalid flags (@attach_flags untouched).
 */
int kdbus_sanitize_attach_flags(u64 flags, u64 *attach_flags)
{
	/* 'any' degrades to 'all' for compatibility */
	if (flags == _KDBUS_ATTACH_ANY)
		flags = _KDBUS_ATTACH_ALL;

	/* reject unknown attach flags */
	if (flags & ~_KDBUS_ATTACH_ALL)
		return -EINVAL;

	*attach_flags = flags;
	return 0;
}

/**
 * kdbus_str_valid() - verify a string
 * @str:		String to verify
 * @size:		Size of buffer of string (including 0-byte)
 *
 * The string must be at least one byte long and its first 0-byte must be
 * its last byte.
 *
 * Return: true if the string is valid, false otherwise.
 */
bool kdbus_str_valid(const char *str, size_t size)
{
	return size > 0 && memchr(str, '\0', size) == str + size - 1;
}

/**
 * kdbus_sysname_is_valid() - check if a name is valid for a filesystem node
 * @name:		Name to check
 *
 * Letters, digits and '_' everywhere; '-' and '.' everywhere except at the
 * first and last position. The length is checked by the item validator.
 *
 * Return: 0 if the name is valid, -EINVAL otherwise.
 */
int kdbus_sysname_is_valid(const char *name)
{
	unsigned int i;
	size_t len;

	len = strlen(name);
	if (len == 0)
		return -EINVAL;

	for (i = 0; i < len; i++) {
		if (isalpha(name[i]))
			continue;
		if (isdigit(name[i]))
			continue;
		if (name[i] == '_')
			continue;
		if (i > 0 && i + 1 < len && (name[i] == '-' || name[i] == '.'))
			continue;

		return -EINVAL;
	}

	return 0;
}

/**
 * kdbus_kvec_set - helper utility to assemble kvec arrays
 * @kvec:	kvec entry to use
 * @src:	Source address to set in @kvec
 * @len:	Number of bytes in @src
 * @total_len:	Pointer to total length variable
 *
 * Set @src and @len in @kvec, and increase @total_len by @len.
 */
void kdbus_kvec_set(struct kvec *kvec, void *src, size_t len, u64 *total_len)
{
	kvec->iov_base = src;
	kvec->iov_len = len;
	*total_len += len;
}

static const char * const zeros = "\0\0\0\0\0\0\0";

/**
 * kdbus_kvec_pad - conditionally write a padding kvec
 * @kvec:	kvec entry to use
 * @len:	Total length used for kvec array
 *
 * Check if the current total byte length of the array in @len is aligned
 * to 8 bytes. If it isn't, fill @kvec with padding information and
 * increase @len by the number of bytes stored in @kvec.
 *
 * Return: the number of added padding bytes.
 */
size_t kdbus_kvec_pad(struct kvec *kvec, u64 *len)
{
	size_t pad = KDBUS_ALIGN8(*len) - *len;

	if (!pad)
		return 0;

	kvec->iov_base = (void *)zeros;
	kvec->iov_len = pad;

	*len += pad;

	return pad;
}
