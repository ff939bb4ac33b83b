/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kdbusfs: the filesystem that exposes domains, buses and endpoints.
 */

#ifndef __KDBUS_FS_H
#define __KDBUS_FS_H

#include <linux/fs.h>

struct kdbus_node;

int kdbus_fs_init(void);
void kdbus_fs_exit(void);

#define kdbus_node_from_inode(_inode) \
	((struct kdbus_node *)(_inode)->i_private)

#endif
