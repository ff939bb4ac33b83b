// SPDX-License-Identifier: GPL-2.0-only
/*
 * Harness self-test: a module that loads and unloads cleanly. The VM
 * harness must judge a run with it as passed.
 */
#include <linux/init.h>
#include <linux/module.h>

static int __init kdbus_selftest_clean_init(void)
{
	pr_info("kdbus_selftest_clean: loaded\n");
	return 0;
}

static void __exit kdbus_selftest_clean_exit(void)
{
	pr_info("kdbus_selftest_clean: unloaded\n");
}

module_init(kdbus_selftest_clean_init);
module_exit(kdbus_selftest_clean_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kdbus VM harness self-test: clean module");
