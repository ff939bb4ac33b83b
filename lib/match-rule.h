/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * D-Bus match rules (the D-Bus Specification): the textual grammar of
 * dbus-daemon, rule equality for RemoveMatch, the userspace evaluation of a
 * rule against a message, the bloom mask of a rule and its translation
 * into kdbus match entries (kdbus.match(7)).
 *
 * Errors: -EINVAL for a rule that does not parse or validate
 * (MatchRuleInvalid), -E2BIG for a rule text above 1024 bytes
 * (LimitsExceeded), -ENOMEM.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "message.h"

#define KDBUS_MATCH_RULE_MAX_SIZE       1024
#define KDBUS_MATCH_RULE_MAX_ARGS       64

enum {
        KDBUS_MATCH_TYPE            = 1u << 0,
        KDBUS_MATCH_SENDER          = 1u << 1,
        KDBUS_MATCH_INTERFACE       = 1u << 2,
        KDBUS_MATCH_MEMBER          = 1u << 3,
        KDBUS_MATCH_PATH            = 1u << 4,
        KDBUS_MATCH_PATH_NAMESPACE  = 1u << 5,
        KDBUS_MATCH_DESTINATION     = 1u << 6,
        KDBUS_MATCH_ARG0NAMESPACE   = 1u << 7,
        KDBUS_MATCH_EAVESDROP       = 1u << 8,
};

/* what an argument key asks for */
enum kdbus_match_arg_kind {
        KDBUS_MATCH_ARG_NONE,
        KDBUS_MATCH_ARG_STRING,         /* arg<N>=V */
        KDBUS_MATCH_ARG_PATH,           /* arg<N>path=V */
        KDBUS_MATCH_ARG_HAS,            /* arg<N>has=V (libkdbus extension) */
};

struct kdbus_match_rule {
        uint32_t keys;                  /* KDBUS_MATCH_* present */
        uint8_t type;                   /* KDBUS_MESSAGE_* */
        bool eavesdrop;
        char *sender;
        char *interface;
        char *member;
        char *path;                     /* path or path_namespace */
        char *destination;
        char *arg0namespace;
        uint8_t arg_kind[KDBUS_MATCH_RULE_MAX_ARGS];
        char *arg[KDBUS_MATCH_RULE_MAX_ARGS];
};

/* @allow_has: accept the sd-bus arg<N>has key (native API, not the proxy) */
int kdbus_match_rule_parse(struct kdbus_match_rule **ret, const char *text, bool allow_has);
void kdbus_match_rule_free(struct kdbus_match_rule *rule);
void kdbus_match_rule_freep(struct kdbus_match_rule **rule);
/* semantic equality (the D-Bus Specification) */
bool kdbus_match_rule_equal(const struct kdbus_match_rule *a, const struct kdbus_match_rule *b);
/* canonical text (keys in a fixed order, values quoted); free() it */
int kdbus_match_rule_format(const struct kdbus_match_rule *rule, char **ret);

/*
 * What the receiver knows about a message beyond its bytes.
 * @from_driver: locally synthesised as coming from org.freedesktop.DBus;
 * @sender_names: well-known names the sender owned (OWNED_NAME metadata);
 * @own_unique / @own_names: the receiving connection, for destination and
 * eavesdrop.
 */
struct kdbus_match_context {
        bool from_driver;
        const char *const *sender_names;
        size_t n_sender_names;
        const char *own_unique;
        const char *const *own_names;
        size_t n_own_names;
};

/* evaluate; the message's read position is rewound afterwards */
bool kdbus_match_rule_matches(const struct kdbus_match_rule *rule, struct kdbus_message *m,
                              const struct kdbus_match_context *ctx);

struct kdbus_bloom;
/* add the mask strings of 4.5; returns 1 when any string was added */
int kdbus_match_rule_bloom_mask(const struct kdbus_match_rule *rule, struct kdbus_bloom *mask);

/*
 * Build the KDBUS_CMD_MATCH_ADD arguments of 4.4 for @rule under @cookie:
 * an array of malloc'ed struct kdbus_cmd_match (free each and the array).
 * Zero entries is valid (a rule only checked in userspace).
 */
struct kdbus_cmd_match;
int kdbus_match_rule_to_kernel(const struct kdbus_match_rule *rule, uint64_t bloom_size,
                               uint64_t bloom_n_hash, uint64_t cookie,
                               struct kdbus_cmd_match ***ret, size_t *n_ret);
void kdbus_match_entries_free(struct kdbus_cmd_match **entries, size_t n);

/* parse ":1.N" strictly (1 <= N <= 2^64-2); false for anything else */
bool kdbus_unique_name_parse(const char *name, uint64_t *id);
