/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * File handles of kdbusfs nodes, ioctl dispatch and the generic command
 * parser (kdbus(7)).
 */

#ifndef __KDBUS_HANDLE_H
#define __KDBUS_HANDLE_H

#include <linux/fs.h>
#include <uapi/linux/kdbus.h>

extern const struct file_operations kdbus_handle_ops;

/**
 * kdbus_arg - information and state of a single ioctl command item
 * @type:		item type
 * @item:		set by the parser to the first found item of this type
 * @multiple:		whether multiple items of this type are allowed
 * @mandatory:		whether at least one item of this type is required
 *
 * This structure describes a single item in an ioctl command payload. The
 * caller has to pre-fill the type and flags, the parser will then use this
 * information to verify the ioctl payload. @item is set by the parser to
 * point to the first occurrence of the item.
 */
struct kdbus_arg {
	u64 type;
	struct kdbus_item *item;
	bool multiple : 1;
	bool mandatory : 1;
};

/**
 * kdbus_args - information and state of ioctl command parser
 * @allowed_flags:	set of flags this command supports
 * @argc:		number of items in @argv
 * @argv:		array of items this command supports
 * @user:		set by parser to the pointer to the user-space argument
 * @items:		set by parser to the first item of the payload
 * @items_size:		set by parser to the size of @items in bytes
 * @is_cmd:		set by parser: the payload is a command (not a msg)
 * @cmd:		set by parser to the kernel copy of the command payload
 * @cmd_buf:		inline buffer for small commands
 *
 * This structure is used to parse ioctl command payloads on each invocation.
 * The ioctl handler has to pre-fill the flags and allowed items before
 * passing the object to kdbus_args_parse(). The parser will copy the
 * command payload into kernel-space and verify the correctness of the data.
 * Every successful kdbus_args_parse() (return value 0) must be paired with
 * kdbus_args_clear(), which writes back return_flags and frees the copy.
 */
struct kdbus_args {
	u64 allowed_flags;
	size_t argc;
	struct kdbus_arg *argv;

	struct kdbus_cmd __user *user;
	struct kdbus_item *items;
	size_t items_size;

	bool is_cmd : 1;
	struct kdbus_cmd *cmd;
	u64 cmd_buf[64];
};

int __kdbus_args_parse(struct kdbus_args *args, bool is_cmd, void __user *argp,
		       size_t type_size, size_t items_offset, void **out);
int kdbus_args_clear(struct kdbus_args *args, int ret);

/**
 * kdbus_args_parse() - parse a command structure
 * @_args:	kdbus_args, pre-filled with allowed flags and items
 * @_argp:	user pointer to the command
 * @_v:		pointer to a pointer of the command type, set on success
 *
 * Return: <0 on error, 0 if the command must be executed (pair with
 * kdbus_args_clear()), 1 if it only negotiated (nothing to clear; the
 * ioctl returns 0).
 */
#define kdbus_args_parse(_args, _argp, _v)				\
	({								\
		typeof(_v) __v = (_v);					\
		BUILD_BUG_ON(offsetof(typeof(**__v), size) !=		\
			     offsetof(struct kdbus_cmd, size));		\
		BUILD_BUG_ON(offsetof(typeof(**__v), flags) !=		\
			     offsetof(struct kdbus_cmd, flags));		\
		BUILD_BUG_ON(offsetof(typeof(**__v), return_flags) !=	\
			     offsetof(struct kdbus_cmd, return_flags));	\
		__kdbus_args_parse((_args), 1, (_argp), sizeof(**__v),	\
				   offsetof(typeof(**__v), items),	\
				   (void **)__v);			\
	})

/**
 * kdbus_args_parse_msg() - parse a struct kdbus_msg
 * @_args:	kdbus_args, pre-filled with allowed flags and items
 * @_argp:	user pointer to the message
 * @_v:		pointer to a struct kdbus_msg pointer, set on success
 *
 * Like kdbus_args_parse() but without return_flags handling.
 *
 * Return: see kdbus_args_parse().
 */
#define kdbus_args_parse_msg(_args, _argp, _v)			\
	({								\
		typeof(_v) __v = (_v);					\
		BUILD_BUG_ON(offsetof(typeof(**__v), size) !=		\
			     offsetof(struct kdbus_cmd, size));		\
		BUILD_BUG_ON(offsetof(typeof(**__v), flags) !=		\
			     offsetof(struct kdbus_cmd, flags));		\
		__kdbus_args_parse((_args), 0, (_argp), sizeof(**__v),	\
				   offsetof(typeof(**__v), items),	\
				   (void **)__v);			\
	})

#endif
