/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Match databases: the rules by which a connection selects broadcasts,
 * unicast signals and kernel notifications (kdbus.match(7)).
 */

#ifndef __KDBUS_MATCH_H
#define __KDBUS_MATCH_H

#include <linux/types.h>

struct kdbus_conn;
struct kdbus_match_db;
struct kdbus_staging;

struct kdbus_match_db *kdbus_match_db_new(void);
void kdbus_match_db_free(struct kdbus_match_db *mdb);
bool kdbus_match_db_match_msg(struct kdbus_match_db *mdb,
			      struct kdbus_conn *conn_src,
			      const struct kdbus_staging *staging);

int kdbus_cmd_match_add(struct kdbus_conn *conn, void __user *argp);
int kdbus_cmd_match_remove(struct kdbus_conn *conn, void __user *argp);

#endif
