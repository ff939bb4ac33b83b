/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Metadata: credentials, pids, comm strings, exe, cmdline, cgroup, caps,
 * security label, audit data, owned names, description and timestamps of
 * a sender, collected once and rendered for each receiver
 * (kdbus.connection(7)).
 */

#ifndef __KDBUS_METADATA_H
#define __KDBUS_METADATA_H

#include <linux/mutex.h>
#include <linux/types.h>
#include <uapi/linux/kdbus.h>

struct kdbus_conn;
struct kdbus_conn_fake;
struct kdbus_item;
struct kdbus_meta_proc;
struct kdbus_meta_conn;

/* items of the sending task; cannot be attached for faked identities */
#define KDBUS_META_PROC_ITEMS	(KDBUS_ATTACH_CREDS |			\
				 KDBUS_ATTACH_PIDS |			\
				 KDBUS_ATTACH_AUXGROUPS |		\
				 KDBUS_ATTACH_TID_COMM |		\
				 KDBUS_ATTACH_PID_COMM |		\
				 KDBUS_ATTACH_EXE |			\
				 KDBUS_ATTACH_CMDLINE |			\
				 KDBUS_ATTACH_CGROUP |			\
				 KDBUS_ATTACH_CAPS |			\
				 KDBUS_ATTACH_SECLABEL |		\
				 KDBUS_ATTACH_AUDIT)

/* items of the sending connection */
#define KDBUS_META_CONN_ITEMS	(KDBUS_ATTACH_TIMESTAMP |		\
				 KDBUS_ATTACH_NAMES |			\
				 KDBUS_ATTACH_CONN_DESCRIPTION)

/* items a receiver gets whatever the sender's send mask says */
#define KDBUS_META_IMPLICIT	(KDBUS_ATTACH_TIMESTAMP |		\
				 KDBUS_ATTACH_CREDS |			\
				 KDBUS_ATTACH_PIDS |			\
				 KDBUS_ATTACH_AUXGROUPS |		\
				 KDBUS_ATTACH_NAMES |			\
				 KDBUS_ATTACH_CONN_DESCRIPTION)

/* items a receiver could read from its own /proc (PROCITEMS) */
#define KDBUS_META_PROC_VISIBLE	(KDBUS_META_PROC_ITEMS &		\
				 ~KDBUS_META_IMPLICIT)

/**
 * struct kdbus_meta_conn - connection metadata of a message or CONN_INFO
 * @lock:		Serialises collection, see metadata.c
 * @collected:		KDBUS_ATTACH_* items collection was attempted for
 * @valid:		KDBUS_ATTACH_* items whose data exists
 * @ts:			Timestamp of the message (TIMESTAMP)
 * @owned_names_items:	Prebuilt KDBUS_ITEM_OWNED_NAME items (NAMES)
 * @owned_names_size:	Bytes in @owned_names_items
 * @conn_description:	Description of the connection (CONN_DESCRIPTION),
 *			the connection's own string: it outlives the object
 */
struct kdbus_meta_conn {
	struct mutex lock; /* collection, see metadata.c */
	u64 collected;
	u64 valid;

	struct kdbus_timestamp ts;
	struct kdbus_item *owned_names_items;
	size_t owned_names_size;
	const char *conn_description;
};

struct kdbus_meta_proc *kdbus_meta_proc_new(void);
struct kdbus_meta_proc *kdbus_meta_proc_ref(struct kdbus_meta_proc *mp);
struct kdbus_meta_proc *kdbus_meta_proc_unref(struct kdbus_meta_proc *mp);
void kdbus_meta_proc_lend(struct kdbus_meta_proc *mp,
			  struct kdbus_meta_proc *snapshot);
bool kdbus_meta_proc_is_current(const struct kdbus_meta_proc *snapshot);
int kdbus_meta_proc_collect(struct kdbus_meta_proc *mp, u64 what);
int kdbus_meta_read_cmdline(const struct kdbus_meta_proc *like, char **out,
			    size_t *out_size);
int kdbus_meta_proc_set_cmdline(struct kdbus_meta_proc *mp, char *cmdline,
				size_t size, const struct kdbus_meta_proc *like);

void kdbus_meta_conn_init(struct kdbus_meta_conn *mc);
void kdbus_meta_conn_destroy(struct kdbus_meta_conn *mc);
int kdbus_meta_conn_collect(struct kdbus_meta_conn *mc,
			    struct kdbus_conn *conn,
			    const struct kdbus_timestamp *ts, u64 what);

u64 kdbus_meta_msg_mask(const struct kdbus_conn *snd,
			const struct kdbus_conn *rcv);
u64 kdbus_meta_info_mask(const struct kdbus_conn *conn, u64 mask);

int kdbus_meta_emit(struct kdbus_meta_proc *mp,
		    const struct kdbus_conn_fake *mf,
		    struct kdbus_meta_conn *mc,
		    const struct kdbus_conn *conn, u64 mask,
		    struct kdbus_item **out_items, size_t *out_size);

#endif
