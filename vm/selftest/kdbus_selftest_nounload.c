// SPDX-License-Identifier: GPL-2.0-only
/*
 * Harness self-test: a module without an exit function, which the kernel
 * therefore refuses to unload. The VM harness must report the failed
 * rmmod as a failure.
 */
#include <linux/init.h>
#include <linux/module.h>

static int __init kdbus_selftest_nounload_init(void)
{
	return 0;
}

module_init(kdbus_selftest_nounload_init);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kdbus VM harness self-test: cannot be unloaded");
