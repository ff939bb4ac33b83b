/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The dbus-daemon XML configuration and policy (Documentation/policy.md):
 * <busconfig> files with <include>,
 * <includedir>, <servicedir> and the standard service directories, and
 * the connect, own, send and receive decisions of their <policy> blocks,
 * evaluated as dbus-daemon evaluates them. Parsed with expat; warnings go
 * to stderr, errors are returned with file:line.
 *
 * A NULL policy allows everything.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proxy_policy;

struct proxy_policy_peer {
        uid_t uid;
        gid_t gid;
        const gid_t *groups;
        size_t n_groups;
};

struct proxy_policy_message {
        uint8_t type;                   /* 1 call, 2 return, 3 error, 4 signal */
        const char *path, *interface, *member, *error_name;     /* NULL if absent */
        bool requested_reply;           /* a return/error answering a call the receiver made */
        bool broadcast;                 /* a signal without destination */
};

/* 0 or -errno, a message in err */
int proxy_policy_load(struct proxy_policy **ret, const char *config_file, char *err, size_t err_size);
void proxy_policy_free(struct proxy_policy *p);

bool proxy_policy_may_connect(const struct proxy_policy *p, const struct proxy_policy_peer *peer);
bool proxy_policy_may_own(const struct proxy_policy *p, const struct proxy_policy_peer *peer, const char *name);

/*
 * names: NULL-terminated list of the other side's names (unique name
 * first, then its well-known names); for a broadcast, NULL
 */
bool proxy_policy_may_send(const struct proxy_policy *p, const struct proxy_policy_peer *sender,
                           const char *const *dest_names, const struct proxy_policy_message *m);
bool proxy_policy_may_receive(const struct proxy_policy *p, const struct proxy_policy_peer *receiver,
                              const char *const *sender_names, const struct proxy_policy_message *m);

/* NULL-terminated, never NULL */
const char *const *proxy_policy_servicedirs(const struct proxy_policy *p);
