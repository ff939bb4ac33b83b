/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers shared by the policy, endpoint and privilege tests (defined in
 * test-policy.c).
 *
 * A "worker" is a child process that drops to a uid, a gid and optionally
 * one supplementary group, makes its own connection (so its opener and
 * its current credentials are both that user's), and then executes
 * commands sent by the test over a pipe, one at a time, answering each
 * with the result. One worker keeps one set of credentials for its whole
 * life, which is what the policy cache keys on.
 */
#ifndef KDBUS_TEST_POLICY_H
#define KDBUS_TEST_POLICY_H

#include <stdint.h>
#include <sys/types.h>

#include "kdbus-util.h"

#define KP_NO_GROUP	((gid_t)-1)

enum kp_op {
	KP_ACQUIRE,	/* NAME_ACQUIRE name, flags = arg */
	KP_RELEASE,	/* NAME_RELEASE name */
	KP_SEND,	/* unicast to id (and name if given), cookie = arg */
	KP_CALL,	/* EXPECT_REPLY unicast to id/name, cookie = arg */
	KP_REPLY,	/* reply to id with cookie_reply = arg */
	KP_SIGNAL,	/* unicast signal to id/name */
	KP_BROADCAST,	/* broadcast signal */
	KP_MATCH_ALL,	/* MATCH_ADD with no rules */
	KP_RECV,	/* RECV; val = src_id, val2 = cookie or item type */
	KP_COUNT,	/* receive everything queued; ret = number */
	KP_INFO,	/* CONN_INFO by id and/or name; val = info id */
	KP_LIST,	/* LIST NAMES|UNIQUE; ret = name records, val = 1 if
			 * name is listed, val2 = bare records */
	KP_QUIT,
};

struct kp_worker {
	pid_t pid;
	int req_fd;
	int res_fd;
	uint64_t id;
};

/*
 * Fork a worker as uid/gid (supp: one supplementary group or
 * KP_NO_GROUP) that makes a connection on path with hello_flags.
 * Returns 0, or the HELLO/open() errno as -errno (the worker is then
 * gone).
 */
int kp_worker_start(struct kp_worker *w, const char *path, uid_t uid,
		    gid_t gid, gid_t supp, uint64_t hello_flags);
/* run one command; returns its result (negative errno on failure) */
long kp_do(struct kp_worker *w, enum kp_op op, uint64_t id,
	   const char *name, uint64_t arg, uint64_t *val, uint64_t *val2,
	   char *str, size_t str_len);
/* stop a worker; TEST_OK unless it crashed */
int kp_worker_stop(struct kp_worker *w);

/* a WORLD-accessible bus; path receives ".../bus" */
int kp_bus_world(char *path, size_t len);

/* policy item builders on a command buffer from cmd_new() */
void kp_add_name(void *cmd, const char *name);
void kp_add_access(void *cmd, uint64_t type, uint64_t access, uint64_t id);

/* HELLO with a prepared kdbus_cmd_hello (items appended by the caller) */
int kp_hello_cmd(const char *path, struct kdbus_cmd_hello *h,
		 struct kdbus_conn **out);
/*
 * HELLO of a policy holder (or activator, with flags) for name, with
 * up to n grants {type, access, id} triples.
 */
int kp_hello_policy(const char *path, uint64_t flags, const char *name,
		    const uint64_t (*grants)[3], unsigned int n,
		    struct kdbus_conn **out);
/* UPDATE of a policy holder: one name (may be NULL: no NAME item) */
int kp_update_policy(struct kdbus_conn *c, const char *name,
		     const uint64_t (*grants)[3], unsigned int n);

/* commands on a connection of the test process itself */
int kp_acquire(struct kdbus_conn *c, const char *name, uint64_t flags);
int kp_release(struct kdbus_conn *c, const char *name);
int kp_match_all(struct kdbus_conn *c);		/* MATCH_ADD, no rules */
int kp_broadcast(struct kdbus_conn *c, uint64_t cookie);

/* ENDPOINT_MAKE on a fresh handle of bus_path; returns the EP_OWNER fd */
int kp_ep_make(const char *bus_path, uint64_t flags, const char *name);
/* ENDPOINT_UPDATE on an EP_OWNER fd with a prepared kdbus_cmd */
int kp_ep_update(int fd, struct kdbus_cmd *cmd);

/* kp_do() without outputs */
#define KP_DO(w, op, id, name, arg)					\
	kp_do((w), (op), (id), (name), (arg), NULL, NULL, NULL, 0)

/*
 * A result (0, a count, or -errno) that must equal an expected one;
 * ENOTTY (feature missing) skips the test.
 */
#define KP_ASSERT_RES(expr, expected) do {				\
		long _r = (expr);					\
		long _x = (expected);					\
		if (_r == -ENOTTY && _x != -ENOTTY) {			\
			kdbus_test_skip_reason("%s: ENOTTY", #expr);	\
			return TEST_SKIP;				\
		}							\
		if (_r != _x) {						\
			kdbus_diag("%s:%d: %s: expected %ld (%s), got %ld (%s)", \
				   __FILE__, __LINE__, #expr, _x,	\
				   _x < 0 ? kdbus_errname(-_x) : "ok",	\
				   _r, _r < 0 ? kdbus_errname(-_r) : "ok"); \
			return TEST_FAIL;				\
		}							\
	} while (0)

#endif /* KDBUS_TEST_POLICY_H */
