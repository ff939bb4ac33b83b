// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Helpers for the in-VM kdbus tests; see kdbus-util.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kdbus-test.h"
#include "kdbus-util.h"

#define CMD_BUF_SIZE (KDBUS_CMD_MAX_SIZE * 2)

int kdbus_ioctl(int fd, unsigned long req, void *arg)
{
	int r = ioctl(fd, req, arg);

	if (r < 0)
		return -errno;
	return r == 0 ? 0 : -EPROTO;
}

void *cmd_new(size_t fixed_size)
{
	void *p = NULL;

	if (posix_memalign(&p, 8, CMD_BUF_SIZE))
		abort();
	memset(p, 0, CMD_BUF_SIZE);
	*(uint64_t *)p = fixed_size;
	return p;
}

struct kdbus_item *cmd_add_item(void *cmd, uint64_t type, const void *data,
				size_t len)
{
	uint64_t *size = cmd;
	uint64_t off = KDBUS_ALIGN8(*size);
	struct kdbus_item *it;

	if (off + KDBUS_ITEM_HDR + len > CMD_BUF_SIZE)
		abort();
	it = (struct kdbus_item *)((uint8_t *)cmd + off);
	it->size = KDBUS_ITEM_HDR + len;
	it->type = type;
	if (data && len)
		memcpy(it->data, data, len);
	*size = off + KDBUS_ITEM_HDR + len;
	return it;
}

struct kdbus_item *cmd_add_str(void *cmd, uint64_t type, const char *str)
{
	return cmd_add_item(cmd, type, str, strlen(str) + 1);
}

struct kdbus_item *cmd_add_u64(void *cmd, uint64_t type, uint64_t val)
{
	return cmd_add_item(cmd, type, &val, sizeof(val));
}

void cmd_free(void *cmd)
{
	free(cmd);
}

void kdbus_unique_name(char *buf, size_t len, const char *tag)
{
	static unsigned int counter;

	snprintf(buf, len, "%u-%s%d-%u", (unsigned int)geteuid(), tag,
		 (int)getpid(), ++counter);
}

int kdbus_open_control(void)
{
	int fd = open(KDBUS_CONTROL, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int kdbus_bus_make(int control_fd, uint64_t flags, const char *name,
		   uint64_t bloom_size, uint64_t n_hash, const uint64_t *attach)
{
	struct kdbus_cmd *cmd = cmd_new(sizeof(*cmd));
	struct kdbus_bloom_parameter bp = { .size = bloom_size,
					    .n_hash = n_hash };
	int r;

	cmd->flags = flags;
	cmd_add_item(cmd, KDBUS_ITEM_BLOOM_PARAMETER, &bp, sizeof(bp));
	if (name)
		cmd_add_str(cmd, KDBUS_ITEM_MAKE_NAME, name);
	if (attach)
		cmd_add_u64(cmd, KDBUS_ITEM_ATTACH_FLAGS_SEND, *attach);
	r = kdbus_ioctl(control_fd, KDBUS_CMD_BUS_MAKE, cmd);
	cmd_free(cmd);
	return r;
}

int kdbus_bus_new(uint64_t flags, char *name, size_t name_len)
{
	char buf[64];
	int fd, r;

	fd = kdbus_open_control();
	if (fd < 0)
		return fd;
	kdbus_unique_name(buf, sizeof(buf), "b");
	r = kdbus_bus_make(fd, flags, buf, KDBUS_DEFAULT_BLOOM, 1, NULL);
	if (r < 0) {
		close(fd);
		return r;
	}
	if (name)
		snprintf(name, name_len, "%s", buf);
	return fd;
}

int kdbus_hello_cmd(const char *path, struct kdbus_cmd_hello *h,
		    struct kdbus_conn **out)
{
	struct kdbus_conn *c;
	int fd, r;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = kdbus_ioctl(fd, KDBUS_CMD_HELLO, h);
	if (r < 0) {
		close(fd);
		return r;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		abort();
	c->fd = fd;
	c->id = h->id;
	c->pool_size = h->pool_size;
	c->hello = *h;
	c->pool = NULL;
	/* policy holders cannot FREE (their HELLO slice stays) */
	if (!(h->flags & KDBUS_HELLO_POLICY_HOLDER)) {
		c->pool = mmap(NULL, c->pool_size, PROT_READ, MAP_SHARED,
			       fd, 0);
		if (c->pool == MAP_FAILED) {
			r = -errno;
			c->pool = NULL;
			kdbus_conn_free(c);
			return r;
		}
		r = kdbus_free(c, h->offset);
		if (r < 0) {
			kdbus_conn_free(c);
			return r;
		}
	}
	*out = c;
	return 0;
}

int kdbus_hello(const char *path, uint64_t flags, uint64_t attach_recv,
		size_t pool_size, struct kdbus_conn **out)
{
	struct kdbus_cmd_hello *h = cmd_new(sizeof(*h));
	int r;

	h->flags = flags;
	h->attach_flags_send = _KDBUS_ATTACH_ALL;
	h->attach_flags_recv = attach_recv;
	h->pool_size = pool_size;
	r = kdbus_hello_cmd(path, h, out);
	cmd_free(h);
	return r;
}

int kdbus_hello_desc(const char *path, const char *desc, uint64_t flags,
		     uint64_t attach_send, struct kdbus_conn **out)
{
	struct kdbus_cmd_hello *h = cmd_new(sizeof(*h));
	int r;

	h->flags = flags;
	h->pool_size = KDBUS_PAGE * 4;
	h->attach_flags_send = attach_send;
	if (desc)
		cmd_add_str(h, KDBUS_ITEM_CONN_DESCRIPTION, desc);
	r = kdbus_hello_cmd(path, h, out);
	cmd_free(h);
	return r;
}

int kdbus_hello_as_uid(const char *path, uid_t uid, uint64_t flags,
		       uint64_t attach_recv, size_t pool_size,
		       struct kdbus_conn **out)
{
	int r;

	if (setresuid(uid, uid, 0) < 0)
		return -errno;
	r = kdbus_hello(path, flags, attach_recv, pool_size, out);
	if (setresuid(0, 0, 0) < 0)
		abort();
	return r;
}

void kdbus_conn_free(struct kdbus_conn *conn)
{
	if (!conn)
		return;
	if (conn->pool && conn->pool != MAP_FAILED)
		munmap(conn->pool, conn->pool_size);
	if (conn->fd >= 0)
		close(conn->fd);
	free(conn);
}

int kdbus_free_fd(int fd, uint64_t offset)
{
	struct kdbus_cmd_free f = { .size = sizeof(f), .offset = offset };

	return kdbus_ioctl(fd, KDBUS_CMD_FREE, &f);
}

int kdbus_free(struct kdbus_conn *conn, uint64_t offset)
{
	return kdbus_free_fd(conn->fd, offset);
}

struct kdbus_msg *kdbus_msg_new(uint64_t dst, uint64_t cookie, uint64_t flags,
				uint64_t word56, const void *data, size_t len)
{
	struct kdbus_msg *m = cmd_new(sizeof(*m));

	m->dst_id = dst;
	m->cookie = cookie;
	m->flags = flags;
	m->payload_type = KDBUS_PAYLOAD_DBUS;
	m->timeout_ns = word56;
	if (data && len) {
		struct kdbus_vec v = { .size = len,
				       .address = (uintptr_t)data };

		cmd_add_item(m, KDBUS_ITEM_PAYLOAD_VEC, &v, sizeof(v));
	}
	return m;
}

int kdbus_send_msg(int fd, uint64_t send_flags, struct kdbus_msg *msg,
		   struct kdbus_cmd_send *cmd_out)
{
	struct kdbus_cmd_send cmd = {
		.size = sizeof(cmd),
		.flags = send_flags,
		.msg_address = (uintptr_t)msg,
	};
	int r;

	r = kdbus_ioctl(fd, KDBUS_CMD_SEND, &cmd);
	if (cmd_out)
		*cmd_out = cmd;
	return r;
}

int kdbus_send(struct kdbus_conn *c, uint64_t dst, uint64_t cookie,
	       uint64_t flags, uint64_t word56, int64_t priority,
	       const void *data, size_t len)
{
	struct kdbus_msg *m = kdbus_msg_new(dst, cookie, flags, word56,
					    data, len);
	int r;

	m->priority = priority;
	r = kdbus_send_msg(c->fd, 0, m, NULL);
	cmd_free(m);
	return r;
}

int kdbus_call_sync(struct kdbus_conn *c, uint64_t dst, uint64_t cookie,
		    uint64_t deadline_ns, const void *data, size_t len,
		    struct kdbus_msg **reply, uint64_t *reply_offset)
{
	struct kdbus_msg *m = kdbus_msg_new(dst, cookie, KDBUS_MSG_EXPECT_REPLY,
					    deadline_ns, data, len);
	struct kdbus_cmd_send cmd;
	int r;

	r = kdbus_send_msg(c->fd, KDBUS_SEND_SYNC_REPLY, m, &cmd);
	cmd_free(m);
	if (r < 0)
		return r;
	if (cmd.reply.offset >= c->pool_size)
		return -EPROTO;
	if (reply)
		*reply = (struct kdbus_msg *)(c->pool + cmd.reply.offset);
	if (reply_offset)
		*reply_offset = cmd.reply.offset;
	return 0;
}

int kdbus_recv(struct kdbus_conn *c, uint64_t flags, int64_t priority,
	       struct kdbus_cmd_recv *recv_out)
{
	struct kdbus_cmd_recv r = {
		.size = sizeof(r),
		.flags = flags,
		.priority = priority,
	};
	int ret;

	ret = kdbus_ioctl(c->fd, KDBUS_CMD_RECV, &r);
	if (recv_out)
		*recv_out = r;
	return ret;
}

int kdbus_recv_msg(struct kdbus_conn *c, uint64_t flags, int64_t priority,
		   struct kdbus_msg **msg, uint64_t *offset)
{
	struct kdbus_cmd_recv r;
	int ret;

	ret = kdbus_recv(c, flags, priority, &r);
	if (ret < 0)
		return ret;
	if (r.msg.offset >= c->pool_size)
		return -EPROTO;
	if (msg)
		*msg = (struct kdbus_msg *)(c->pool + r.msg.offset);
	if (offset)
		*offset = r.msg.offset;
	return 0;
}

int kdbus_wait_readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r;

	do {
		r = poll(&p, 1, timeout_ms);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return r > 0 && (p.revents & POLLIN) ? 1 : 0;
}

int kdbus_wait_recv(struct kdbus_conn *c, int timeout_ms,
		    struct kdbus_msg **msg, uint64_t *offset)
{
	int r = kdbus_wait_readable(c->fd, timeout_ms);

	if (r < 0)
		return r;
	if (r == 0)
		return -ETIMEDOUT;
	return kdbus_recv_msg(c, 0, 0, msg, offset);
}

struct kdbus_item *kdbus_msg_find(struct kdbus_msg *msg, uint64_t type)
{
	struct kdbus_item *it;

	KDBUS_ITEM_FOREACH(it, msg->items, KDBUS_MSG_ITEMS_LEN(msg))
		if (it->type == type)
			return it;
	return NULL;
}

const uint8_t *kdbus_msg_payload(struct kdbus_msg *msg, unsigned int n,
				 uint64_t *size)
{
	struct kdbus_item *it;

	KDBUS_ITEM_FOREACH(it, msg->items, KDBUS_MSG_ITEMS_LEN(msg)) {
		if (it->type != KDBUS_ITEM_PAYLOAD_OFF)
			continue;
		if (n--)
			continue;
		if (size)
			*size = it->vec.size;
		if (it->vec.offset == ~0ULL)
			return NULL;
		return (const uint8_t *)msg + it->vec.offset;
	}
	return NULL;
}

int kdbus_conn_info(struct kdbus_conn *c, uint64_t id, const char *name,
		    uint64_t attach, struct kdbus_info **info,
		    uint64_t *offset)
{
	struct kdbus_cmd_info *cmd = cmd_new(sizeof(*cmd));
	int r;

	cmd->id = id;
	cmd->attach_flags = attach;
	if (name)
		cmd_add_str(cmd, KDBUS_ITEM_NAME, name);
	r = kdbus_ioctl(c->fd, KDBUS_CMD_CONN_INFO, cmd);
	if (r == 0) {
		if (cmd->offset >= c->pool_size) {
			r = -EPROTO;
		} else {
			if (info)
				*info = (struct kdbus_info *)(c->pool + cmd->offset);
			if (offset)
				*offset = cmd->offset;
		}
	}
	cmd_free(cmd);
	return r;
}

struct kdbus_item *kdbus_info_find(struct kdbus_info *info, uint64_t type)
{
	struct kdbus_item *it;

	KDBUS_ITEM_FOREACH(it, info->items, KDBUS_INFO_ITEMS_LEN(info))
		if (it->type == type)
			return it;
	return NULL;
}

int kdbus_update_attach(struct kdbus_conn *c, uint64_t send, uint64_t recv)
{
	struct kdbus_cmd *cmd = cmd_new(sizeof(*cmd));
	int r;

	cmd_add_u64(cmd, KDBUS_ITEM_ATTACH_FLAGS_SEND, send);
	cmd_add_u64(cmd, KDBUS_ITEM_ATTACH_FLAGS_RECV, recv);
	r = kdbus_ioctl(c->fd, KDBUS_CMD_UPDATE, cmd);
	cmd_free(cmd);
	return r;
}

int kdbus_byebye(int fd)
{
	struct kdbus_cmd cmd = { .size = sizeof(cmd) };

	return kdbus_ioctl(fd, KDBUS_CMD_BYEBYE, &cmd);
}

pid_t kdbus_fork_as(uid_t uid, gid_t gid)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0)
		return pid;
	if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
	    setresuid(uid, uid, uid) < 0) {
		kdbus_diag("dropping privileges to %u/%u: %m",
			   (unsigned int)uid, (unsigned int)gid);
		_exit(TEST_FAIL);
	}
	return 0;
}

int kdbus_wait_child(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return TEST_FAIL;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	kdbus_diag("child %d killed by signal %d", (int)pid,
		   WIFSIGNALED(status) ? WTERMSIG(status) : -1);
	return TEST_FAIL;
}

uint64_t kdbus_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

long kdbus_meminfo_kb(const char *key)
{
	char line[256];
	size_t klen = strlen(key);
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtol(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

int kdbus_raise_nofile(unsigned long n)
{
	struct rlimit rl = { .rlim_cur = n, .rlim_max = n };

	return setrlimit(RLIMIT_NOFILE, &rl) < 0 ? -errno : 0;
}

void kdbus_msleep(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---- names and kernel notifications (kn_*) ---- */

int kn_acquire(struct kdbus_conn *c, const char *name, uint64_t flags,
	       uint64_t *return_flags)
{
	struct kdbus_cmd *cmd = cmd_new(sizeof(*cmd));
	int r;

	cmd->flags = flags;
	cmd->return_flags = 0xdeadbeef;
	cmd_add_str(cmd, KDBUS_ITEM_NAME, name);
	r = kdbus_ioctl(c->fd, KDBUS_CMD_NAME_ACQUIRE, cmd);
	if (return_flags)
		*return_flags = cmd->return_flags;
	cmd_free(cmd);
	return r;
}

int kn_release(struct kdbus_conn *c, const char *name)
{
	struct kdbus_cmd *cmd = cmd_new(sizeof(*cmd));
	int r;

	cmd_add_str(cmd, KDBUS_ITEM_NAME, name);
	r = kdbus_ioctl(c->fd, KDBUS_CMD_NAME_RELEASE, cmd);
	cmd_free(cmd);
	return r;
}

/* HELLO with a NAME item (activators, policy holders) */
int kn_hello_named(const char *path, uint64_t flags, const char *name,
		   size_t pool_size, struct kdbus_conn **out)
{
	struct kdbus_cmd_hello *h = cmd_new(sizeof(*h));
	int r;

	h->flags = flags;
	h->pool_size = pool_size;
	if (name)
		cmd_add_str(h, KDBUS_ITEM_NAME, name);
	r = kdbus_hello_cmd(path, h, out);
	cmd_free(h);
	return r;
}

int kn_monitor(const char *path, struct kdbus_conn **out)
{
	return kdbus_hello(path, KDBUS_HELLO_MONITOR | KDBUS_HELLO_ACCEPT_FD,
			   0, KDBUS_DEFAULT_POOL, out);
}

/*
 * The next kernel notification queued in @c (other messages, such as
 * copies a monitor gets of user traffic, are skipped). Notifications are
 * delivered before the ioctl that caused them returns, so there is no
 * waiting: -EAGAIN if there is none.
 */
int kn_next_notify(struct kdbus_conn *c, struct kn_notify *n)
{
	struct kdbus_msg *m;
	struct kdbus_item *it;
	uint64_t off;
	int r;

	for (;;) {
		r = kdbus_recv_msg(c, 0, 0, &m, &off);
		if (r < 0)
			return r;
		if (m->src_id == KDBUS_SRC_ID_KERNEL)
			break;
		kdbus_free(c, off);
	}

	memset(n, 0, sizeof(*n));
	it = m->items;
	n->type = it->type;
	n->cookie_reply = m->cookie_reply;
	n->dst_id = m->dst_id;
	switch (it->type) {
	case KDBUS_ITEM_ID_ADD:
	case KDBUS_ITEM_ID_REMOVE:
		n->old_id = it->id_change.id;
		n->old_flags = it->id_change.flags;
		break;
	case KDBUS_ITEM_NAME_ADD:
	case KDBUS_ITEM_NAME_REMOVE:
	case KDBUS_ITEM_NAME_CHANGE:
		n->old_id = it->name_change.old_id.id;
		n->old_flags = it->name_change.old_id.flags;
		n->new_id = it->name_change.new_id.id;
		n->new_flags = it->name_change.new_id.flags;
		snprintf(n->name, sizeof(n->name), "%s",
			 it->name_change.name);
		break;
	default:
		break;
	}
	it = kdbus_msg_find(m, KDBUS_ITEM_TIMESTAMP);
	if (it)
		n->seq = it->timestamp.seqnum;
	kdbus_free(c, off);
	return 0;
}

/* 0 if no notification is queued, -EPROTO (with a diagnostic) otherwise */
int kn_no_notify(struct kdbus_conn *c)
{
	struct kn_notify n;
	int r = kn_next_notify(c, &n);

	if (r == -EAGAIN)
		return 0;
	if (r == 0) {
		DIAG("unexpected notification 0x%llx old %llu/0x%llx new %llu/0x%llx %s",
		     (unsigned long long)n.type,
		     (unsigned long long)n.old_id,
		     (unsigned long long)n.old_flags,
		     (unsigned long long)n.new_id,
		     (unsigned long long)n.new_flags, n.name);
		return -EPROTO;
	}
	return r;
}

int kn_expect_name(struct kdbus_conn *c, uint64_t type, const char *name,
		   uint64_t old_id, uint64_t old_flags,
		   uint64_t new_id, uint64_t new_flags)
{
	struct kn_notify n;
	int r = kn_next_notify(c, &n);

	if (r < 0) {
		DIAG("expected name notification 0x%llx for %s: %s",
		     (unsigned long long)type, name, kdbus_errname(-r));
		return TEST_FAIL;
	}
	if (n.type != type || strcmp(n.name, name) || n.old_id != old_id ||
	    n.old_flags != old_flags || n.new_id != new_id ||
	    n.new_flags != new_flags) {
		DIAG("expected 0x%llx %s old %llu/0x%llx new %llu/0x%llx",
		     (unsigned long long)type, name,
		     (unsigned long long)old_id, (unsigned long long)old_flags,
		     (unsigned long long)new_id, (unsigned long long)new_flags);
		DIAG("got      0x%llx %s old %llu/0x%llx new %llu/0x%llx",
		     (unsigned long long)n.type, n.name,
		     (unsigned long long)n.old_id,
		     (unsigned long long)n.old_flags,
		     (unsigned long long)n.new_id,
		     (unsigned long long)n.new_flags);
		return TEST_FAIL;
	}
	return TEST_OK;
}

int kn_expect_id(struct kdbus_conn *c, uint64_t type, uint64_t id,
		 uint64_t flags)
{
	struct kn_notify n;
	int r = kn_next_notify(c, &n);

	if (r < 0) {
		DIAG("expected id notification 0x%llx for %llu: %s",
		     (unsigned long long)type, (unsigned long long)id,
		     kdbus_errname(-r));
		return TEST_FAIL;
	}
	if (n.type != type || n.old_id != id || n.old_flags != flags) {
		DIAG("expected 0x%llx id %llu flags 0x%llx, got 0x%llx id %llu flags 0x%llx %s",
		     (unsigned long long)type, (unsigned long long)id,
		     (unsigned long long)flags, (unsigned long long)n.type,
		     (unsigned long long)n.old_id,
		     (unsigned long long)n.old_flags, n.name);
		return TEST_FAIL;
	}
	return TEST_OK;
}

/* a signal with a BLOOM_FILTER of generation @generation to @dst */
int kdbus_send_bloom_signal(struct kdbus_conn *c, uint64_t dst, uint64_t cookie,
			    const uint64_t *filter, uint64_t generation)
{
	struct kdbus_msg *m = kdbus_msg_new(dst, cookie, KDBUS_MSG_SIGNAL, 0,
					    "sig", 3);
	struct kdbus_item *it;
	int r;

	it = cmd_add_item(m, KDBUS_ITEM_BLOOM_FILTER, NULL,
			  sizeof(struct kdbus_bloom_filter) +
			  KDBUS_DEFAULT_BLOOM);
	it->bloom_filter.generation = generation;
	memcpy(it->bloom_filter.data, filter, KDBUS_DEFAULT_BLOOM);
	r = kdbus_send_msg(c->fd, 0, m, NULL);
	cmd_free(m);
	return r;
}

/* the next message is a kernel notification of this type about id */
int kdbus_expect_notify(struct kdbus_conn *c, uint64_t type, uint64_t id)
{
	struct kdbus_msg *msg;
	uint64_t off;

	ASSERT_OK(kdbus_recv_msg(c, 0, 0, &msg, &off));
	ASSERT_EQ(msg->src_id, KDBUS_SRC_ID_KERNEL);
	ASSERT_EQ(msg->items[0].type, type);
	if (type == KDBUS_ITEM_ID_ADD || type == KDBUS_ITEM_ID_REMOVE)
		ASSERT_EQ(msg->items[0].id_change.id, id);
	else if (type == KDBUS_ITEM_NAME_REMOVE)
		ASSERT_EQ(msg->items[0].name_change.old_id.id, id);
	else
		ASSERT_EQ(msg->items[0].name_change.new_id.id, id);
	ASSERT_OK(kdbus_free(c, off));
	return TEST_OK;
}

/* a message (no payload) to a well-known name */
int kn_send_name(struct kdbus_conn *c, const char *name, uint64_t dst_id,
		 uint64_t cookie, uint64_t flags, uint64_t word56)
{
	struct kdbus_msg *m = kdbus_msg_new(dst_id, cookie, flags, word56,
					    NULL, 0);
	int r;

	cmd_add_str(m, KDBUS_ITEM_DST_NAME, name);
	r = kdbus_send_msg(c->fd, 0, m, NULL);
	cmd_free(m);
	return r;
}

/* RECV one message, report its cookie and DST_NAME ("" if none) */
int kn_recv_cookie(struct kdbus_conn *c, uint64_t *cookie, char *dst_name,
		   size_t len)
{
	struct kdbus_msg *m;
	struct kdbus_item *it;
	uint64_t off;
	int r;

	r = kdbus_recv_msg(c, 0, 0, &m, &off);
	if (r < 0)
		return r;
	*cookie = m->cookie;
	if (dst_name) {
		it = kdbus_msg_find(m, KDBUS_ITEM_DST_NAME);
		snprintf(dst_name, len, "%s", it ? it->str : "");
	}
	return kdbus_free(c, off);
}
