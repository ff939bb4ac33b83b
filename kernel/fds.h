/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef __KDBUS_FDS_H
#define __KDBUS_FDS_H

struct file;

int kdbus_fd_may_travel(struct file *file);

#endif
