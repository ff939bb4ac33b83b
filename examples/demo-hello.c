// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * demo-hello: the smallest tour of kdbus.
 *
 * Creates a bus through the control node of a kdbusfs mount
 * (KDBUS_CMD_BUS_MAKE), opens two connections on its default endpoint
 * (KDBUS_CMD_HELLO, mmap of the receive pool), and prints what the kernel
 * says about each of them (KDBUS_CMD_CONN_INFO) and about the bus
 * (KDBUS_CMD_BUS_CREATOR_INFO), in plain text. Every refusal by the
 * kernel is reported with the command, the node and the errno, and ends
 * the demo with exit status 1.
 *
 *   demo-hello [KDBUSFS-MOUNT]        (default /sys/fs/kdbus)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <unistd.h>

#include <linux/kdbus.h>

#define KDBUSFS_MAGIC		0x44427573	/* "DBus" */
#define POOL_SIZE		(1024 * 1024)
#define BLOOM_SIZE		64
#define BLOOM_N_HASH		1

#define ALIGN8(x)		(((x) + 7) & ~(uint64_t)7)
#define ITEM_HEADER_SIZE	offsetof(struct kdbus_item, data)

struct conn {
	const char *label;
	int fd;
	uint64_t id;
	uint8_t *pool;
};

static const char *root = "/sys/fs/kdbus";

static void fail(const char *what, const char *where, int err)
{
	const char *name = strerrorname_np(err);

	fprintf(stderr, "\nerror: %s on %s was refused by the kernel: %s (%s)\n",
		what, where, name ? name : "?", strerror(err));
	exit(1);
}

/* Append a string item (MAKE_NAME, CONN_DESCRIPTION) at @buf + *@off. */
static void put_str_item(uint8_t *buf, size_t *off, uint64_t type, const char *s)
{
	struct kdbus_item *item = (struct kdbus_item *)(buf + *off);

	item->size = ITEM_HEADER_SIZE + strlen(s) + 1;
	item->type = type;
	memcpy(item->str, s, strlen(s) + 1);
	*off += ALIGN8(item->size);
}

static const char *item_type_name(uint64_t type)
{
	switch (type) {
	case KDBUS_ITEM_BLOOM_PARAMETER:	return "bloom parameters";
	case KDBUS_ITEM_MAKE_NAME:		return "bus name";
	case KDBUS_ITEM_ATTACH_FLAGS_SEND:	return "attach flags (send)";
	case KDBUS_ITEM_ATTACH_FLAGS_RECV:	return "attach flags (recv)";
	case KDBUS_ITEM_ID:			return "id";
	case KDBUS_ITEM_NAME:			return "name";
	case KDBUS_ITEM_TIMESTAMP:		return "timestamp";
	case KDBUS_ITEM_CREDS:			return "credentials";
	case KDBUS_ITEM_PIDS:			return "pids";
	case KDBUS_ITEM_AUXGROUPS:		return "auxiliary groups";
	case KDBUS_ITEM_OWNED_NAME:		return "owned name";
	case KDBUS_ITEM_TID_COMM:		return "thread name";
	case KDBUS_ITEM_PID_COMM:		return "process name";
	case KDBUS_ITEM_EXE:			return "executable";
	case KDBUS_ITEM_CMDLINE:		return "command line";
	case KDBUS_ITEM_CGROUP:			return "cgroup";
	case KDBUS_ITEM_CAPS:			return "capabilities";
	case KDBUS_ITEM_SECLABEL:		return "security label";
	case KDBUS_ITEM_AUDIT:			return "audit";
	case KDBUS_ITEM_CONN_DESCRIPTION:	return "description";
	default:				return NULL;
	}
}

static void print_flags(uint64_t flags, const char *const *names, size_t n)
{
	bool first = true;

	printf("0x%" PRIx64, flags);
	for (size_t i = 0; i < n; i++) {
		if (!(flags & (1ULL << i)) || !names[i])
			continue;
		printf("%s%s", first ? " (" : "|", names[i]);
		first = false;
	}
	printf("%s", first ? "" : ")");
}

static const char *const hello_flag_names[] = {
	"ACCEPT_FD", "ACTIVATOR", "POLICY_HOLDER", "MONITOR",
};

static const char *const make_flag_names[] = {
	"ACCESS_GROUP", "ACCESS_WORLD",
};

/* Print one item of a kernel answer; @payload is its length after the header. */
static void print_item(const struct kdbus_item *item, uint64_t payload)
{
	const char *name = item_type_name(item->type);

	if (name)
		printf("      %-20s ", name);
	else
		printf("      item 0x%-15" PRIx64 " ", (uint64_t)item->type);

	switch (item->type) {
	case KDBUS_ITEM_MAKE_NAME:
	case KDBUS_ITEM_NAME:
	case KDBUS_ITEM_TID_COMM:
	case KDBUS_ITEM_PID_COMM:
	case KDBUS_ITEM_EXE:
	case KDBUS_ITEM_CGROUP:
	case KDBUS_ITEM_SECLABEL:
	case KDBUS_ITEM_CONN_DESCRIPTION:
		printf("\"%.*s\"\n", (int)strnlen(item->str, payload), item->str);
		return;
	case KDBUS_ITEM_CMDLINE:
		/* NUL-separated arguments */
		for (uint64_t i = 0; i < payload; ) {
			size_t len = strnlen(item->str + i, payload - i);

			if (len)
				printf("%s%.*s", i ? " " : "", (int)len, item->str + i);
			i += len + 1;
		}
		printf("\n");
		return;
	default:
		break;
	}

	if (item->type == KDBUS_ITEM_CREDS && payload >= sizeof(struct kdbus_creds)) {
		const struct kdbus_creds *c = &item->creds;

		printf("uid %" PRIu64 " euid %" PRIu64 " suid %" PRIu64 " fsuid %" PRIu64
		       ", gid %" PRIu64 " egid %" PRIu64 " sgid %" PRIu64 " fsgid %" PRIu64 "\n",
		       (uint64_t)c->uid, (uint64_t)c->euid, (uint64_t)c->suid,
		       (uint64_t)c->fsuid, (uint64_t)c->gid, (uint64_t)c->egid,
		       (uint64_t)c->sgid, (uint64_t)c->fsgid);
	} else if (item->type == KDBUS_ITEM_PIDS && payload >= sizeof(struct kdbus_pids)) {
		printf("pid %" PRIu64 " tid %" PRIu64 " ppid %" PRIu64 "\n",
		       (uint64_t)item->pids.pid, (uint64_t)item->pids.tid,
		       (uint64_t)item->pids.ppid);
	} else if (item->type == KDBUS_ITEM_TIMESTAMP &&
		   payload >= sizeof(struct kdbus_timestamp)) {
		printf("seqnum %" PRIu64 " monotonic %" PRIu64 " ns realtime %" PRIu64 " ns\n",
		       (uint64_t)item->timestamp.seqnum,
		       (uint64_t)item->timestamp.monotonic_ns,
		       (uint64_t)item->timestamp.realtime_ns);
	} else if (item->type == KDBUS_ITEM_AUDIT && payload >= sizeof(struct kdbus_audit)) {
		printf("session %" PRIu32 " loginuid %" PRIu32 "\n",
		       (uint32_t)item->audit.sessionid, (uint32_t)item->audit.loginuid);
	} else if (item->type == KDBUS_ITEM_BLOOM_PARAMETER &&
		   payload >= sizeof(struct kdbus_bloom_parameter)) {
		printf("%" PRIu64 " bytes, %" PRIu64 " hash function(s)\n",
		       (uint64_t)item->bloom_parameter.size,
		       (uint64_t)item->bloom_parameter.n_hash);
	} else if (item->type == KDBUS_ITEM_OWNED_NAME && payload > sizeof(struct kdbus_name)) {
		printf("\"%.*s\" flags 0x%" PRIx64 "\n",
		       (int)strnlen(item->name.name, payload - sizeof(struct kdbus_name)),
		       item->name.name, (uint64_t)item->name.flags);
	} else if (item->type == KDBUS_ITEM_CAPS && payload >= 4) {
		/* last_cap, then four sets: inheritable, permitted, effective, bounding */
		static const char *const sets[] = { "inh", "prm", "eff", "bnd" };
		uint32_t words = (item->caps.last_cap + 32) / 32;

		printf("last_cap %" PRIu32, (uint32_t)item->caps.last_cap);
		for (uint32_t s = 0; s < 4 && 4 + (uint64_t)(s + 1) * words * 4 <= payload; s++) {
			printf(" %s=", sets[s]);
			for (uint32_t w = words; w-- > 0; )
				printf("%08" PRIx32, (uint32_t)item->caps.caps[s * words + w]);
		}
		printf("\n");
	} else if (payload % 8 == 0 && payload > 0) {
		for (uint64_t i = 0; i < payload / 8; i++)
			printf("%s%" PRIu64, i ? " " : "", (uint64_t)item->data64[i]);
		printf("\n");
	} else {
		printf("%" PRIu64 " bytes\n", payload);
	}
}

/* Walk the items in [@start, @start + @len) of a kernel answer. */
static void print_items(const uint8_t *start, uint64_t len)
{
	uint64_t off = 0;

	if (len == 0)
		printf("      (no items)\n");
	while (off < len) {
		const struct kdbus_item *item = (const void *)(start + off);

		if (len - off < ITEM_HEADER_SIZE || item->size < ITEM_HEADER_SIZE ||
		    item->size > len - off) {
			printf("      malformed item at +%" PRIu64 " (size %" PRIu64 ")\n",
			       off, len - off >= 8 ? (uint64_t)item->size : 0);
			return;
		}
		print_item(item, item->size - ITEM_HEADER_SIZE);
		off += ALIGN8(item->size);
	}
}

static void pool_free(struct conn *c, uint64_t offset)
{
	struct kdbus_cmd_free cmd = {
		.size = sizeof(cmd),
		.offset = offset,
	};

	if (ioctl(c->fd, KDBUS_CMD_FREE, &cmd) < 0)
		fail("KDBUS_CMD_FREE", c->label, errno);
}

static void hello(struct conn *c, const char *bus_path, const char *description)
{
	_Alignas(8) uint8_t buf[sizeof(struct kdbus_cmd_hello) + 128] = { 0 };
	struct kdbus_cmd_hello *h = (struct kdbus_cmd_hello *)buf;
	size_t size = sizeof(*h);
	char id128[40];

	printf("\n%s: open %s, KDBUS_CMD_HELLO (pool %d KiB), mmap the pool\n",
	       c->label, bus_path, POOL_SIZE / 1024);

	c->fd = open(bus_path, O_RDWR | O_CLOEXEC);
	if (c->fd < 0)
		fail("open", bus_path, errno);

	put_str_item(buf, &size, KDBUS_ITEM_CONN_DESCRIPTION, description);
	h->size = size;
	h->flags = KDBUS_HELLO_ACCEPT_FD;
	h->attach_flags_send = _KDBUS_ATTACH_ALL;	/* others may see all of it */
	h->attach_flags_recv = 0;
	h->pool_size = POOL_SIZE;
	if (ioctl(c->fd, KDBUS_CMD_HELLO, h) < 0)
		fail("KDBUS_CMD_HELLO", bus_path, errno);
	c->id = h->id;

	c->pool = mmap(NULL, POOL_SIZE, PROT_READ, MAP_SHARED, c->fd, 0);
	if (c->pool == MAP_FAILED)
		fail("mmap of the pool", c->label, errno);

	/* UUID text form: 8-4-4-4-12 hex digits */
	for (int i = 0, pos = 0; i < 16; i++)
		pos += sprintf(id128 + pos, "%02x%s", h->id128[i],
			       (i == 3 || i == 5 || i == 7 || i == 9) ? "-" : "");
	printf("   connection id    %" PRIu64 "\n", (uint64_t)h->id);
	printf("   bus flags        ");
	print_flags(h->bus_flags, make_flag_names, 2);
	printf("\n   bus id128        %s\n", id128);
	printf("   HELLO reply      %" PRIu64 " bytes at pool offset %" PRIu64 ":\n",
	       (uint64_t)h->items_size, (uint64_t)h->offset);
	if (h->offset > POOL_SIZE || h->items_size > POOL_SIZE - h->offset) {
		fprintf(stderr, "error: HELLO reply slice lies outside the pool\n");
		exit(1);
	}
	print_items(c->pool + h->offset, h->items_size);
	pool_free(c, h->offset);
}

/* KDBUS_CMD_CONN_INFO (about @id) or KDBUS_CMD_BUS_CREATOR_INFO (@id unused), asked by @c. */
static void info(struct conn *c, bool bus_creator, uint64_t id)
{
	struct kdbus_cmd_info cmd = {
		.size = sizeof(cmd),
		.id = id,
		.attach_flags = _KDBUS_ATTACH_ALL,
	};
	const char *what = bus_creator ? "KDBUS_CMD_BUS_CREATOR_INFO" : "KDBUS_CMD_CONN_INFO";
	const struct kdbus_info *info;

	if (bus_creator)
		printf("\n%s asks for %s\n", c->label, what);
	else
		printf("\n%s asks for %s about connection %" PRIu64 "\n", c->label, what, id);
	if (ioctl(c->fd, bus_creator ? KDBUS_CMD_BUS_CREATOR_INFO : KDBUS_CMD_CONN_INFO,
		  &cmd) < 0)
		fail(what, c->label, errno);

	if (cmd.offset > POOL_SIZE || cmd.info_size < sizeof(*info) ||
	    cmd.info_size > POOL_SIZE - cmd.offset) {
		fprintf(stderr, "error: %s answer (offset %" PRIu64 ", size %" PRIu64
			") lies outside the pool\n", what, (uint64_t)cmd.offset,
			(uint64_t)cmd.info_size);
		exit(1);
	}
	info = (const void *)(c->pool + cmd.offset);
	if (info->size < sizeof(*info) || info->size > cmd.info_size) {
		fprintf(stderr, "error: %s record size %" PRIu64 " is inconsistent\n",
			what, (uint64_t)info->size);
		exit(1);
	}
	printf("   %-17s%" PRIu64 "\n", bus_creator ? "bus id" : "connection id",
	       (uint64_t)info->id);
	printf("   flags            ");
	if (bus_creator)
		print_flags(info->flags, make_flag_names, 2);
	else
		print_flags(info->flags, hello_flag_names, 4);
	printf("\n   items (%" PRIu64 " bytes):\n", (uint64_t)(info->size - sizeof(*info)));
	print_items((const uint8_t *)info->items, info->size - sizeof(*info));
	pool_free(c, cmd.offset);
}

static void byebye(struct conn *c)
{
	struct kdbus_cmd cmd = { .size = sizeof(cmd) };

	if (ioctl(c->fd, KDBUS_CMD_BYEBYE, &cmd) < 0)
		fail("KDBUS_CMD_BYEBYE", c->label, errno);
	munmap(c->pool, POOL_SIZE);
	close(c->fd);
	printf("%s (id %" PRIu64 "): KDBUS_CMD_BYEBYE, disconnected\n", c->label, c->id);
}

int main(int argc, char **argv)
{
	_Alignas(8) uint8_t buf[sizeof(struct kdbus_cmd) + 256] = { 0 };
	struct kdbus_cmd *make = (struct kdbus_cmd *)buf;
	struct kdbus_item *bloom;
	struct conn a = { .label = "connection A" }, b = { .label = "connection B" };
	char control[512], bus_name[64], bus_path[600];
	size_t size = sizeof(*make);
	struct statfs sfs;
	int control_fd;

	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: %s [KDBUSFS-MOUNT]\n", argv[0]);
		return 2;
	}
	if (argc == 2)
		root = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);

	printf("kdbus demo: a bus, two connections, and what the kernel knows about them\n");
	errno = 0;
	if (statfs(root, &sfs) < 0 || (uint32_t)sfs.f_type != KDBUSFS_MAGIC) {
		fprintf(stderr, "\nerror: %s is not a kdbusfs mount (%s); load kdbus.ko and run:"
			" mount -t kdbusfs kdbusfs %s\n", root,
			errno ? strerror(errno) : "other file system", root);
		return 1;
	}

	snprintf(control, sizeof(control), "%s/control", root);
	snprintf(bus_name, sizeof(bus_name), "%u-demo-%d", (unsigned int)geteuid(),
		 (int)getpid());
	printf("\nbus: open %s, KDBUS_CMD_BUS_MAKE \"%s\" (bloom %d bytes, %d hash)\n",
	       control, bus_name, BLOOM_SIZE, BLOOM_N_HASH);
	control_fd = open(control, O_RDWR | O_CLOEXEC);
	if (control_fd < 0)
		fail("open", control, errno);

	bloom = (struct kdbus_item *)(buf + size);
	bloom->size = ITEM_HEADER_SIZE + sizeof(struct kdbus_bloom_parameter);
	bloom->type = KDBUS_ITEM_BLOOM_PARAMETER;
	bloom->bloom_parameter.size = BLOOM_SIZE;
	bloom->bloom_parameter.n_hash = BLOOM_N_HASH;
	size += ALIGN8(bloom->size);
	{
		/* Creator metadata that connections may see via BUS_CREATOR_INFO */
		struct kdbus_item *attach = (struct kdbus_item *)(buf + size);

		attach->size = ITEM_HEADER_SIZE + sizeof(uint64_t);
		attach->type = KDBUS_ITEM_ATTACH_FLAGS_SEND;
		attach->data64[0] = _KDBUS_ATTACH_ALL;
		size += ALIGN8(attach->size);
	}
	put_str_item(buf, &size, KDBUS_ITEM_MAKE_NAME, bus_name);
	make->size = size;
	make->flags = KDBUS_MAKE_ACCESS_WORLD;
	if (ioctl(control_fd, KDBUS_CMD_BUS_MAKE, make) < 0)
		fail("KDBUS_CMD_BUS_MAKE", control, errno);
	snprintf(bus_path, sizeof(bus_path), "%s/%s/bus", root, bus_name);
	printf("   created; default endpoint %s\n", bus_path);

	hello(&a, bus_path, "demo-a");
	hello(&b, bus_path, "demo-b");

	info(&a, false, a.id);
	info(&a, false, b.id);
	info(&b, false, a.id);
	info(&a, true, 0);

	printf("\n");
	byebye(&a);
	byebye(&b);
	close(control_fd);
	printf("bus %s: control descriptor closed, the bus is gone\n", bus_name);
	printf("\ndemo done: two connections (ids %" PRIu64 " and %" PRIu64 ") said hello\n",
	       a.id, b.id);
	return 0;
}
