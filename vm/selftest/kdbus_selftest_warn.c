// SPDX-License-Identifier: GPL-2.0-only
/*
 * Harness self-test: a module that triggers a kernel warning when loaded.
 * The VM harness must judge a run with it as failed.
 */
#include <linux/bug.h>
#include <linux/init.h>
#include <linux/module.h>

static int __init kdbus_selftest_warn_init(void)
{
	WARN_ON(1);
	return 0;
}

static void __exit kdbus_selftest_warn_exit(void)
{
}

module_init(kdbus_selftest_warn_init);
module_exit(kdbus_selftest_warn_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kdbus VM harness self-test: WARN_ON at load");
