// SPDX-License-Identifier: GPL-2.0-only
/*
 * kdbus: D-Bus in the kernel. Module entry points.
 *
 * Locking: none; init/exit run single-threaded.
 */

#include <linux/fs.h>
#include <linux/init.h>
#include <linux/kobject.h>
#include <linux/module.h>

#include "fs.h"
#include "stats.h"

/* /sys/fs/kdbus, the conventional mount point */
static struct kobject *kdbus_dir;

static int __init kdbus_init(void)
{
	int ret;

	ret = kdbus_stats_init();
	if (ret < 0)
		return ret;

	kdbus_dir = kobject_create_and_add(KBUILD_MODNAME, fs_kobj);
	if (!kdbus_dir) {
		ret = -ENOMEM;
		goto exit_stats;
	}

	ret = kdbus_fs_init();
	if (ret < 0) {
		pr_err("cannot register filesystem: %d\n", ret);
		goto exit_dir;
	}

	pr_info("initialized\n");
	return 0;

exit_dir:
	kobject_put(kdbus_dir);
exit_stats:
	kdbus_stats_exit();
	return ret;
}

static void __exit kdbus_exit(void)
{
	kdbus_fs_exit();
	kobject_put(kdbus_dir);
	kdbus_stats_exit();
}

module_init(kdbus_init);
module_exit(kdbus_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("D-Bus, powerful, easy to use interprocess communication");
MODULE_ALIAS_FS(KBUILD_MODNAME "fs");
