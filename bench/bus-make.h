/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * BUS_MAKE for the raw-ioctl benchmarks (kdbus-bench, kdbus-bench-broadcast,
 * kdbus-bench-memfd), which each build from one file with no library.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/kdbus.h>

/*
 * A world-accessible bus "<euid>-<tag>-<pid>" with a one-hash Bloom
 * filter of @bloom_size bytes, made on <root>/control. Returns the
 * owner fd (the bus lives as long as it is open), the bus node's path in
 * @path; or -errno.
 */
static inline int bench_bus_make(const char *root, const char *tag,
				 uint64_t bloom_size, char *path, size_t path_len)
{
	const uint64_t hdr = offsetof(struct kdbus_item, data);
	uint64_t buf[64] = { 0 };
	struct kdbus_cmd *cmd = (struct kdbus_cmd *)buf;
	struct kdbus_item *item = cmd->items;
	char name[64], ctl[PATH_MAX];
	uint64_t name_len;
	int fd;

	snprintf(name, sizeof(name), "%u-%s-%d", (unsigned int)geteuid(), tag,
		 (int)getpid());
	name_len = strlen(name) + 1;

	snprintf(ctl, sizeof(ctl), "%s/control", root);
	fd = open(ctl, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;

	cmd->flags = KDBUS_MAKE_ACCESS_WORLD;
	item->size = hdr + sizeof(struct kdbus_bloom_parameter);
	item->type = KDBUS_ITEM_BLOOM_PARAMETER;
	item->bloom_parameter.size = bloom_size;
	item->bloom_parameter.n_hash = 1;
	item = (struct kdbus_item *)((uint8_t *)item + ((item->size + 7) & ~7ULL));
	item->size = hdr + name_len;
	item->type = KDBUS_ITEM_MAKE_NAME;
	memcpy(item->str, name, name_len);
	item = (struct kdbus_item *)((uint8_t *)item + ((item->size + 7) & ~7ULL));
	cmd->size = (uint64_t)((uint8_t *)item - (uint8_t *)buf);

	if (ioctl(fd, KDBUS_CMD_BUS_MAKE, cmd)) {
		int err = -errno;

		close(fd);
		return err;
	}
	snprintf(path, path_len, "%s/%s/bus", root, name);
	return fd;
}
