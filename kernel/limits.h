/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Compile-time limits of kdbus (kdbus(7)). They are part of the ABI
 * contract although they are not in the uapi header.
 */

#ifndef __KDBUS_LIMITS_H
#define __KDBUS_LIMITS_H

/* filesystem magic, "DBus" */
#define KDBUS_SUPER_MAGIC		0x44427573

/* maximum size of a command structure or kdbus_msg, including items */
#define KDBUS_CMD_MAX_SIZE		0x8000

/* defined for reference only: the effective cap is KDBUS_CMD_MAX_SIZE */
#define KDBUS_MSG_MAX_SIZE		0x2000

/* maximum sum of PAYLOAD_VEC sizes of one message */
#define KDBUS_MSG_MAX_PAYLOAD_VEC_SIZE	0x200000

/* maximum number of PAYLOAD_MEMFD items per message */
#define KDBUS_MSG_MAX_MEMFD_ITEMS	16

/* maximum fds per message and per sending user queued in one receiver */
#define KDBUS_CONN_MAX_FDS_PER_USER	16

/* maximum bloom filter size of a bus, in bytes */
#define KDBUS_BUS_BLOOM_MAX_SIZE	0x1000

/* maximum length of a well-known name, excluding the NUL */
#define KDBUS_NAME_MAX_LEN		255

/* maximum length of bus, endpoint and connection description names */
#define KDBUS_SYSNAME_MAX_LEN		63

/* maximum number of matches per connection */
#define KDBUS_MATCH_MAX			256

/*
 * maximum rules in one match (E2BIG): a D-Bus match rule compiles to one
 * Bloom mask plus a few names and ids; bounds the per-receiver cost of a
 * broadcast to KDBUS_MATCH_MAX * KDBUS_MATCH_MAX_RULES rule checks
 */
#define KDBUS_MATCH_MAX_RULES		16

/*
 * memory of all matches of one user per domain (EMFILE): bounds what one
 * user's matches add to every broadcast, whatever its connection count
 */
#define KDBUS_USER_MAX_MATCH_BYTES	(1024 * 1024)

/* maximum messages queued in a receiver per sending user */
#define KDBUS_CONN_MAX_MSGS		256

/* maximum names owned or queued for, per connection */
#define KDBUS_CONN_MAX_NAMES		256

/* maximum outstanding EXPECT_REPLY requests per connection */
#define KDBUS_CONN_MAX_REQUESTS_PENDING	128

/* maximum connections per user (or custom endpoint) per domain */
#define KDBUS_USER_MAX_CONN		1024

/* maximum buses per user per domain */
#define KDBUS_USER_MAX_BUSES		16

#endif
