/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Small helpers for the in-VM kdbus tests: buses with unique names,
 * connections with a mapped pool, item iteration, send/recv/free, and
 * forking as another user. Every function returning int returns 0 (or a
 * non-negative value) on success and a negative errno on failure.
 */
#ifndef KDBUS_UTIL_H
#define KDBUS_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>
#include <linux/kdbus.h>

#define KDBUS_MOUNT		"/sys/fs/kdbus"
#define KDBUS_CONTROL		KDBUS_MOUNT "/control"
#define KDBUS_SUPER_MAGIC	0x44427573
#define KDBUS_PAGE		4096ULL

/* limits of kdbus(7) (not part of the uapi header) */
#define KDBUS_CMD_MAX_SIZE			32768
#define KDBUS_MSG_MAX_PAYLOAD_VEC_SIZE		(2ULL * 1024 * 1024)
#define KDBUS_MSG_MAX_MEMFD_ITEMS		16
#define KDBUS_CONN_MAX_FDS_PER_USER		16
#define KDBUS_BUS_BLOOM_MAX_SIZE		4096
#define KDBUS_SYSNAME_MAX_LEN			63
#define KDBUS_CONN_MAX_MSGS			256
#define KDBUS_CONN_MAX_REQUESTS_PENDING		128
#define KDBUS_USER_MAX_CONN			1024
#define KDBUS_USER_MAX_BUSES			16

#define KDBUS_DEFAULT_POOL	(1024ULL * 1024)
#define KDBUS_DEFAULT_BLOOM	64

#define KDBUS_ALIGN8(x)		(((x) + 7ULL) & ~7ULL)
#define KDBUS_ITEM_HDR		16ULL
#define KDBUS_ITEM_SIZE(n)	KDBUS_ALIGN8(KDBUS_ITEM_HDR + (n))
#define KDBUS_ITEM_NEXT(it)						\
	((struct kdbus_item *)((uint8_t *)(it) + KDBUS_ALIGN8((it)->size)))

/* iterate over the item chain [first, first + len) */
#define KDBUS_ITEM_FOREACH(it, first, len)				\
	for ((it) = (first);						\
	     (uint8_t *)(it) + KDBUS_ITEM_HDR <= (uint8_t *)(first) + (len) && \
	     (it)->size >= KDBUS_ITEM_HDR;				\
	     (it) = KDBUS_ITEM_NEXT(it))

#define KDBUS_MSG_ITEMS_LEN(m)	((m)->size - offsetof(struct kdbus_msg, items))
#define KDBUS_INFO_ITEMS_LEN(i)	((i)->size - offsetof(struct kdbus_info, items))

/* raw ioctl: 0 or -errno; a positive return value is reported as -EPROTO */
int kdbus_ioctl(int fd, unsigned long req, void *arg);

/*
 * Command buffers: an 8-aligned zeroed buffer of KDBUS_CMD_MAX_SIZE * 2
 * bytes whose first u64 is the size. cmd_new() sets size to the fixed
 * part; cmd_add_item() appends an item at ALIGN8(size) and sets size to
 * the unpadded end of the new item.
 */
void *cmd_new(size_t fixed_size);
struct kdbus_item *cmd_add_item(void *cmd, uint64_t type, const void *data,
				size_t len);
struct kdbus_item *cmd_add_str(void *cmd, uint64_t type, const char *str);
struct kdbus_item *cmd_add_u64(void *cmd, uint64_t type, uint64_t val);
void cmd_free(void *cmd);

/* a unique bus (or endpoint) name "<euid>-<tag><pid>-<n>" */
void kdbus_unique_name(char *buf, size_t len, const char *tag);

int kdbus_open_control(void);
/* BUS_MAKE on a fresh control fd; attach may be NULL (no item) */
int kdbus_bus_make(int control_fd, uint64_t flags, const char *name,
		   uint64_t bloom_size, uint64_t n_hash, const uint64_t *attach);
/* open control + BUS_MAKE with a unique name; returns the owner fd */
int kdbus_bus_new(uint64_t flags, char *name, size_t name_len);

struct kdbus_conn {
	int fd;
	uint64_t id;
	uint8_t *pool;
	size_t pool_size;
	struct kdbus_cmd_hello hello;	/* as returned by HELLO */
};

/*
 * HELLO on a fresh fd of path with a command the caller prepared (flags,
 * attach flags, pool_size, items); h receives the kernel's reply and stays
 * the caller's. The pool is mapped and the HELLO reply slice freed, except
 * for policy holders, which cannot FREE and get no mapping.
 */
int kdbus_hello_cmd(const char *path, struct kdbus_cmd_hello *h,
		    struct kdbus_conn **out);
/*
 * open path, HELLO with the given flags (attach_flags_send = ALL,
 * attach_flags_recv = attach_recv), mmap the pool and free the HELLO
 * reply slice.
 */
int kdbus_hello(const char *path, uint64_t flags, uint64_t attach_recv,
		size_t pool_size, struct kdbus_conn **out);
void kdbus_conn_free(struct kdbus_conn *conn);
/* HELLO with a 4-page pool, attach_send and a CONN_DESCRIPTION (if desc) */
int kdbus_hello_desc(const char *path, const char *desc, uint64_t flags,
		     uint64_t attach_send, struct kdbus_conn **out);
/*
 * kdbus_hello() with the endpoint opened (and HELLO issued) as uid: the
 * connection's opener credentials are uid's, the caller stays root
 * (saved uid 0). Root only.
 */
int kdbus_hello_as_uid(const char *path, uid_t uid, uint64_t flags,
		       uint64_t attach_recv, size_t pool_size,
		       struct kdbus_conn **out);

int kdbus_free(struct kdbus_conn *conn, uint64_t offset);
int kdbus_free_fd(int fd, uint64_t offset);

/* a message with an optional payload vec; caller frees with cmd_free() */
struct kdbus_msg *kdbus_msg_new(uint64_t dst, uint64_t cookie, uint64_t flags,
				uint64_t word56, const void *data, size_t len);
/* SEND; cmd_out (may be NULL) receives the written-back command */
int kdbus_send_msg(int fd, uint64_t send_flags, struct kdbus_msg *msg,
		   struct kdbus_cmd_send *cmd_out);
/* unicast with an optional payload; word56 = timeout_ns or cookie_reply */
int kdbus_send(struct kdbus_conn *c, uint64_t dst, uint64_t cookie,
	       uint64_t flags, uint64_t word56, int64_t priority,
	       const void *data, size_t len);
/* synchronous call; *reply points into the caller's pool on success */
int kdbus_call_sync(struct kdbus_conn *c, uint64_t dst, uint64_t cookie,
		    uint64_t deadline_ns, const void *data, size_t len,
		    struct kdbus_msg **reply, uint64_t *reply_offset);

/* RECV; recv_out (may be NULL) receives the written-back command */
int kdbus_recv(struct kdbus_conn *c, uint64_t flags, int64_t priority,
	       struct kdbus_cmd_recv *recv_out);
/* RECV and hand back the message in the pool */
int kdbus_recv_msg(struct kdbus_conn *c, uint64_t flags, int64_t priority,
		   struct kdbus_msg **msg, uint64_t *offset);
/* poll for POLLIN up to timeout_ms: 1 readable, 0 timeout, -errno */
int kdbus_wait_readable(int fd, int timeout_ms);
/* wait up to timeout_ms for a message and receive it */
int kdbus_wait_recv(struct kdbus_conn *c, int timeout_ms,
		    struct kdbus_msg **msg, uint64_t *offset);

/* a signal with a BLOOM_FILTER (KDBUS_DEFAULT_BLOOM bytes) to dst */
int kdbus_send_bloom_signal(struct kdbus_conn *c, uint64_t dst, uint64_t cookie,
			    const uint64_t *filter, uint64_t generation);
/*
 * TEST_OK if the next message is a kernel notification of @type about @id
 * (ID_ADD/ID_REMOVE: the id; NAME_REMOVE: the old owner; else the new one)
 */
int kdbus_expect_notify(struct kdbus_conn *c, uint64_t type, uint64_t id);

/* first item of the given type in a message, or NULL */
struct kdbus_item *kdbus_msg_find(struct kdbus_msg *msg, uint64_t type);
/* the bytes of the n-th PAYLOAD_OFF item (data only), or NULL */
const uint8_t *kdbus_msg_payload(struct kdbus_msg *msg, unsigned int n,
				 uint64_t *size);

int kdbus_conn_info(struct kdbus_conn *c, uint64_t id, const char *name,
		    uint64_t attach, struct kdbus_info **info,
		    uint64_t *offset);
/* first item of the given type in an info record, or NULL */
struct kdbus_item *kdbus_info_find(struct kdbus_info *info, uint64_t type);
int kdbus_update_attach(struct kdbus_conn *c, uint64_t send, uint64_t recv);
int kdbus_byebye(int fd);

/* fork; the child has dropped to uid/gid (no supplementary groups) */
pid_t kdbus_fork_as(uid_t uid, gid_t gid);
/* wait for a child; returns its exit code, TEST_FAIL if it was killed */
int kdbus_wait_child(pid_t pid);

uint64_t kdbus_now_ns(void);		/* CLOCK_MONOTONIC */
long kdbus_meminfo_kb(const char *key);	/* /proc/meminfo value or -1 */
int kdbus_raise_nofile(unsigned long n);
void kdbus_msleep(unsigned int ms);

/*
 * Names and kernel notifications (kdbus.name(7), kdbus.message(7)), used by
 * the names, activator, list and notify tests.
 */
struct kn_notify {
	uint64_t type;
	uint64_t seq;
	uint64_t old_id, old_flags;	/* NAME_*; ID_* use old_id/old_flags */
	uint64_t new_id, new_flags;
	uint64_t cookie_reply;
	uint64_t dst_id;
	char name[256];
};

/* NAME_ACQUIRE; return_flags (may be NULL) receives the kernel's */
int kn_acquire(struct kdbus_conn *c, const char *name, uint64_t flags,
	       uint64_t *return_flags);
int kn_release(struct kdbus_conn *c, const char *name);
/* HELLO with a NAME item (activators, policy holders); name may be NULL */
int kn_hello_named(const char *path, uint64_t flags, const char *name,
		   size_t pool_size, struct kdbus_conn **out);
int kn_monitor(const char *path, struct kdbus_conn **out);
/* the next kernel notification queued in c; -EAGAIN if there is none */
int kn_next_notify(struct kdbus_conn *c, struct kn_notify *n);
/* 0 if no notification is queued, -EPROTO (with a diagnostic) otherwise */
int kn_no_notify(struct kdbus_conn *c);
/* TEST_OK if the next notification is exactly this one, else TEST_FAIL */
int kn_expect_name(struct kdbus_conn *c, uint64_t type, const char *name,
		   uint64_t old_id, uint64_t old_flags,
		   uint64_t new_id, uint64_t new_flags);
int kn_expect_id(struct kdbus_conn *c, uint64_t type, uint64_t id,
		 uint64_t flags);
/* a message (no payload) to a well-known name */
int kn_send_name(struct kdbus_conn *c, const char *name, uint64_t dst_id,
		 uint64_t cookie, uint64_t flags, uint64_t word56);
/* RECV one message, report its cookie and DST_NAME ("" if none) */
int kn_recv_cookie(struct kdbus_conn *c, uint64_t *cookie, char *dst_name,
		   size_t len);

#endif /* KDBUS_UTIL_H */
