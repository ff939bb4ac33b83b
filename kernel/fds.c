// SPDX-License-Identifier: GPL-2.0-only
/*
 * Which files may travel in an FDS item.
 *
 * A file queued in a message is referenced by the receiver's connection
 * until the message is received or dropped. If that file can itself hold
 * references to other files, it can reference the receiving connection's
 * own handle (an io_uring whose fixed-file table holds the kdbus handle,
 * an epoll set watching it, a unix socket with the handle in flight, the
 * handle itself): a reference cycle that no close() breaks, so the
 * connection, its pool and its quota outlive every process. Rather than
 * refusing the known offenders, only leaf objects are allowed: files that
 * cannot hold references to other files. Everything else is refused with
 * EOPNOTSUPP (kdbus.message(7), SECURITY.md "Files in flight").
 *
 * Allowed: O_PATH descriptors of anything (they pin a path, not an open
 * object); regular files on every filesystem (memfds included), directories,
 * pipes and FIFOs, character and block devices; sockets other than AF_UNIX;
 * among the anonymous-inode files, eventfd, timerfd, signalfd and pidfd
 * (before 6.9 a pidfd is an anonymous inode; from 6.9 on it is a regular
 * file of pidfs); dma-bufs.
 *
 * Locking: none; the caller holds a reference on the file.
 */

#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/net.h>
#include <linux/socket.h>
#include <linux/string.h>
#include <net/sock.h>

#include "fds.h"
#include "handle.h"

/* anonymous-inode files that hold no reference to another file */
static const char *const kdbus_anon_leaf_names[] = {
	"[eventfd]",
	"[timerfd]",
	"[signalfd]",
	"[pidfd]",
};

static bool kdbus_anon_file_is_leaf(struct file *file)
{
	const char *name = file->f_path.dentry->d_name.name;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kdbus_anon_leaf_names); i++)
		if (!strcmp(name, kdbus_anon_leaf_names[i]))
			return true;
	return false;
}

/**
 * kdbus_fd_may_travel() - whether a file may be passed in an FDS item
 * @file:	the file, referenced by the caller
 *
 * Return: 0 if @file may be queued in a message, -EOPNOTSUPP if it could
 * hold references to other files (and so to the receiver's connection).
 */
int kdbus_fd_may_travel(struct file *file)
{
	struct inode *inode = file_inode(file);
	struct socket *sock;

	if (file->f_mode & FMODE_PATH)
		return 0;

	if (file->f_op == &kdbus_handle_ops)
		return -EOPNOTSUPP;

	/* checked before the mode: some kernels give anon inodes S_IFREG */
	switch (inode->i_sb->s_magic) {
	case ANON_INODE_FS_MAGIC:
		return kdbus_anon_file_is_leaf(file) ? 0 : -EOPNOTSUPP;
	case DMA_BUF_MAGIC:
		return 0;
	}

	switch (inode->i_mode & S_IFMT) {
	case S_IFREG:
	case S_IFDIR:
	case S_IFIFO:
	case S_IFCHR:
	case S_IFBLK:
		return 0;
	case S_IFSOCK:
		sock = sock_from_file(file);
		if (!sock || !sock->sk || sock->sk->sk_family == AF_UNIX)
			return -EOPNOTSUPP;
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}
