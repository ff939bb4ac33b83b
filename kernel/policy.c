// SPDX-License-Identifier: GPL-2.0-only
/*
 * Policy databases (kdbus.policy(7)).
 *
 * A database maps well-known names to entries. An entry is keyed by the
 * name, or, for a wildcard entry "a.b.*", by "a.b" with the wildcard mark
 * set; each (key, wildcard) pair exists at most once. An entry holds an
 * array of grants {USER uid | GROUP gid | WORLD, SEE | TALK | OWN} and
 * belongs to one owner (an activator or policy-holder connection for the
 * bus database, the endpoint for an endpoint database). An upload by an
 * owner atomically replaces all of that owner's entries.
 *
 * A lookup of name n uses the exact entry for n if there is one, and only
 * then the wildcard entry keyed by n's prefix before its last dot. Both
 * are hash lookups. The grants of the entry found are then evaluated for
 * a credential set; that result is cached per (credentials, entry), so a
 * connection that keeps sending with the same credentials neither walks
 * the database nor an entry's grants again. Credentials are immutable
 * once committed, and the cache pins the ones it holds, so a pointer
 * comparison is enough. Every change of the database empties the cache:
 * nothing is remembered across uploads.
 *
 * Locking:
 *  - db->entries_rwlock protects db->entries_hash and every entry in it.
 *    Queries take it for reading, uploads and owner removal for writing.
 *  - db->cache_lock (a spinlock) protects db->cache. Slots are filled
 *    only by queries (entries_rwlock held for reading) and emptied by
 *    changes (entries_rwlock held for writing), so a cached entry pointer
 *    is always one that is still in the database.
 *  - Nesting: entries_rwlock -> cache_lock. Callers may hold the name
 *    registry's rwlock and bus->conn_rwlock when they query; the policy
 *    locks are always taken last and never call out.
 */

#include <linux/cred.h>
#include <linux/hash.h>
#include <linux/kernel.h>
#include <linux/rwsem.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uidgid.h>
#include <linux/user_namespace.h>

#include <uapi/linux/kdbus.h>

#include "connection.h"
#include "item.h"
#include "names.h"
#include "policy.h"
#include "util.h"

/**
 * struct kdbus_policy_grant - one grant of an entry
 * @type:	KDBUS_POLICY_ACCESS_USER, _GROUP or _WORLD
 * @access:	KDBUS_POLICY_SEE, _TALK or _OWN
 * @uid:	Global uid (USER)
 * @gid:	Global gid (GROUP)
 */
struct kdbus_policy_grant {
	u8 type;
	u8 access;
	union {
		kuid_t uid;
		kgid_t gid;
	};
};

/**
 * struct kdbus_policy_db_entry - entry of a policy database
 * @hentry:	Entry in db->entries_hash
 * @owner:	Owner cookie of the upload that created the entry
 * @key:	The name, without the ".*" of a wildcard entry
 * @key_len:	strlen(@key)
 * @hash:	kdbus_strhash(@key)
 * @wildcard:	The entry covers every name "@key.<element>"
 * @n_grants:	Number of elements of @grants
 * @grants:	The grants
 *
 * All fields are invariant while the entry is in a database; it is
 * protected by the database's entries_rwlock.
 */
struct kdbus_policy_db_entry {
	struct hlist_node hentry;
	const void *owner;
	char *key;
	size_t key_len;
	u32 hash;
	bool wildcard;
	unsigned int n_grants;
	struct kdbus_policy_grant grants[];
};

/* hash of the first @len bytes of @str, equal to kdbus_strhash() of them */
static u32 kdbus_policy_strnhash(const char *str, size_t len)
{
	unsigned long hash = init_name_hash(NULL);

	while (len--)
		hash = partial_name_hash(*str++, hash);

	return end_name_hash(hash);
}

/* a name of the wildcard form "a.b.*" (the name is known to be valid) */
static bool kdbus_policy_is_wildcard(const char *name, size_t len)
{
	return len >= 2 && name[len - 2] == '.' && name[len - 1] == '*';
}

static void kdbus_policy_entry_free(struct kdbus_policy_db_entry *e)
{
	if (!e)
		return;

	kfree(e->key);
	kfree(e);
}

static struct kdbus_policy_db_entry *
kdbus_policy_find(struct kdbus_policy_db *db, const char *key, size_t len,
		  u32 hash, bool wildcard)
{
	struct kdbus_policy_db_entry *e;

	hash_for_each_possible(db->entries_hash, e, hentry, hash)
		if (e->hash == hash && e->wildcard == wildcard &&
		    e->key_len == len && !memcmp(e->key, key, len))
			return e;

	return NULL;
}

/* empty the cache; entries_rwlock is held for writing */
static void kdbus_policy_cache_flush(struct kdbus_policy_db *db)
{
	const struct cred *creds[KDBUS_POLICY_CACHE_SLOTS];
	unsigned int i, n = 0;

	spin_lock(&db->cache_lock);
	for (i = 0; i < KDBUS_POLICY_CACHE_SLOTS; i++) {
		if (db->cache[i].cred)
			creds[n++] = db->cache[i].cred;
		db->cache[i].cred = NULL;
		db->cache[i].entry = NULL;
	}
	spin_unlock(&db->cache_lock);

	while (n--)
		put_cred(creds[n]);
}

static unsigned int kdbus_policy_cache_index(const struct cred *cred,
					     const struct kdbus_policy_db_entry *e)
{
	u64 v = (u64)(uintptr_t)cred * 31 + (u64)(uintptr_t)e;

	return hash_64(v, KDBUS_POLICY_CACHE_BITS);
}

/* binary search of the sorted supplementary groups (see groups_sort()) */
static bool kdbus_policy_in_groups(const struct group_info *gi, kgid_t gid)
{
	unsigned int left = 0, right;

	if (!gi)
		return false;

	right = gi->ngroups;
	while (left < right) {
		unsigned int mid = (left + right) / 2;

		if (gid_gt(gid, gi->gid[mid]))
			left = mid + 1;
		else if (gid_lt(gid, gi->gid[mid]))
			right = mid;
		else
			return true;
	}

	return false;
}

/* highest level @e grants @cred, or -EPERM (kdbus.policy(7)) */
static int kdbus_policy_entry_access(const struct kdbus_policy_db_entry *e,
				     const struct cred *cred)
{
	int highest = -EPERM;
	unsigned int i;

	for (i = 0; i < e->n_grants; i++) {
		const struct kdbus_policy_grant *g = &e->grants[i];

		if ((int)g->access <= highest)
			continue;

		switch (g->type) {
		case KDBUS_POLICY_ACCESS_USER:
			if (!uid_eq(cred->euid, g->uid))
				continue;
			break;
		case KDBUS_POLICY_ACCESS_GROUP:
			if (!gid_eq(cred->egid, g->gid) &&
			    !kdbus_policy_in_groups(cred->group_info, g->gid))
				continue;
			break;
		case KDBUS_POLICY_ACCESS_WORLD:
			break;
		}

		highest = g->access;
	}

	return highest;
}

/* kdbus_policy_entry_access() through the cache; entries_rwlock held */
static int kdbus_policy_entry_access_cached(struct kdbus_policy_db *db,
					    const struct kdbus_policy_db_entry *e,
					    const struct cred *cred)
{
	struct kdbus_policy_cache_slot *slot;
	const struct cred *old;
	int access;

	slot = &db->cache[kdbus_policy_cache_index(cred, e)];

	spin_lock(&db->cache_lock);
	if (slot->cred == cred && slot->entry == e) {
		access = slot->access;
		spin_unlock(&db->cache_lock);
		return access;
	}
	spin_unlock(&db->cache_lock);

	access = kdbus_policy_entry_access(e, cred);

	get_cred(cred);
	spin_lock(&db->cache_lock);
	old = slot->cred;
	slot->cred = cred;
	slot->entry = e;
	slot->access = access;
	spin_unlock(&db->cache_lock);

	if (old)
		put_cred(old);

	return access;
}

/**
 * kdbus_policy_db_init() - initialize a policy database
 * @db:		The database
 */
void kdbus_policy_db_init(struct kdbus_policy_db *db)
{
	init_rwsem(&db->entries_rwlock);
	hash_init(db->entries_hash);
	spin_lock_init(&db->cache_lock);
	memset(db->cache, 0, sizeof(db->cache));
}

/**
 * kdbus_policy_db_clear() - release all memory of a policy database
 * @db:		The database
 *
 * Removes every entry of every owner and empties the cache. The database
 * can be used again afterwards.
 */
void kdbus_policy_db_clear(struct kdbus_policy_db *db)
{
	struct kdbus_policy_db_entry *e;
	struct hlist_node *tmp;
	unsigned int i;

	down_write(&db->entries_rwlock);
	hash_for_each_safe(db->entries_hash, i, tmp, e, hentry) {
		hash_del(&e->hentry);
		kdbus_policy_entry_free(e);
	}
	kdbus_policy_cache_flush(db);
	up_write(&db->entries_rwlock);
}

/**
 * kdbus_policy_query_unlocked() - query the policy database
 * @db:		Policy database
 * @cred:	Credentials to test against
 * @name:	Name to query (a valid well-known name, not a wildcard)
 * @hash:	kdbus_strhash(@name)
 *
 * Finds the entry that decides about @name (kdbus.policy(7)): the exact
 * entry if there is one, else the wildcard entry of @name's parent, and
 * returns the highest access it grants @cred. The caller holds
 * db->entries_rwlock for reading, so that several names can be queried
 * against one state of the database.
 *
 * Return: the highest KDBUS_POLICY_* level granted (SEE is 0), or -EPERM
 * if there is no entry or it grants @cred nothing.
 */
int kdbus_policy_query_unlocked(struct kdbus_policy_db *db,
				const struct cred *cred, const char *name,
				u32 hash)
{
	struct kdbus_policy_db_entry *e;
	const char *dot;
	size_t len;

	lockdep_assert_held(&db->entries_rwlock);

	len = strlen(name);
	e = kdbus_policy_find(db, name, len, hash, false);
	if (!e) {
		dot = strrchr(name, '.');
		if (!dot)
			return -EPERM;

		len = dot - name;
		e = kdbus_policy_find(db, name, len,
				      kdbus_policy_strnhash(name, len), true);
		if (!e)
			return -EPERM;
	}

	return kdbus_policy_entry_access_cached(db, e, cred);
}

/**
 * kdbus_policy_query() - query the policy database
 * @db:		Policy database
 * @cred:	Credentials to test against
 * @name:	Name to query
 * @hash:	kdbus_strhash(@name)
 *
 * Same as kdbus_policy_query_unlocked(), but takes and releases the
 * database lock itself.
 *
 * Return: the highest KDBUS_POLICY_* level granted, or -EPERM.
 */
int kdbus_policy_query(struct kdbus_policy_db *db, const struct cred *cred,
		       const char *name, u32 hash)
{
	int ret;

	down_read(&db->entries_rwlock);
	ret = kdbus_policy_query_unlocked(db, cred, name, hash);
	up_read(&db->entries_rwlock);

	return ret;
}

/**
 * kdbus_policy_query_names() - query the names a connection owns
 * @db:		Policy database
 * @cred:	Credentials to test against
 * @whom:	Connection whose names are queried
 * @access:	Level needed (KDBUS_POLICY_*)
 *
 * The "some name m in names(B)" test of kdbus.policy(7): whether @db
 * grants @cred at least @access on one of the names @whom owns, which
 * are its records that do not wait in a queue (an activator's record
 * counts while it is the current owner). The most permissive name wins.
 * A connection without names passes nothing.
 *
 * Context: the caller holds the name registry of @whom's bus, at least
 * for reading, so @whom's names cannot change meanwhile.
 *
 * Return: true if one of @whom's names grants @access.
 */
bool kdbus_policy_query_names(struct kdbus_policy_db *db,
			      const struct cred *cred,
			      const struct kdbus_conn *whom,
			      unsigned int access)
{
	const struct kdbus_name_owner *o;
	bool pass = false;

	down_read(&db->entries_rwlock);
	list_for_each_entry(o, &whom->names_list, conn_entry) {
		if (o->flags & KDBUS_NAME_IN_QUEUE)
			continue;

		if (kdbus_policy_query_unlocked(db, cred, o->name->name,
						o->name->hash) >= (int)access) {
			pass = true;
			break;
		}
	}
	up_read(&db->entries_rwlock);

	return pass;
}

/* unlink all entries of @owner onto @list; entries_rwlock held for writing */
static void kdbus_policy_unlink_owner(struct kdbus_policy_db *db,
				      const void *owner,
				      struct hlist_head *list)
{
	struct kdbus_policy_db_entry *e;
	struct hlist_node *tmp;
	unsigned int i;

	hash_for_each_safe(db->entries_hash, i, tmp, e, hentry) {
		if (e->owner != owner)
			continue;

		hash_del(&e->hentry);
		hlist_add_head(&e->hentry, list);
	}
}

static void kdbus_policy_free_list(struct hlist_head *list)
{
	struct kdbus_policy_db_entry *e;
	struct hlist_node *tmp;

	hlist_for_each_entry_safe(e, tmp, list, hentry) {
		hlist_del(&e->hentry);
		kdbus_policy_entry_free(e);
	}
}

/**
 * kdbus_policy_remove_owner() - remove all entries of an owner
 * @db:		Policy database
 * @owner:	The owner cookie whose entries are removed
 */
void kdbus_policy_remove_owner(struct kdbus_policy_db *db,
			       const void *owner)
{
	HLIST_HEAD(list);

	down_write(&db->entries_rwlock);
	kdbus_policy_unlink_owner(db, owner, &list);
	if (!hlist_empty(&list))
		kdbus_policy_cache_flush(db);
	up_write(&db->entries_rwlock);

	kdbus_policy_free_list(&list);
}

/*
 * Check one POLICY_ACCESS item and convert it into a grant. USER and GROUP
 * ids are taken in the caller's user namespace, truncated to 32 bits
 * (kdbus.policy(7)).
 */
static int kdbus_policy_make_grant(const struct kdbus_policy_access *pa,
				   struct kdbus_policy_grant *g)
{
	struct user_namespace *ns = current_user_ns();

	switch (pa->access) {
	case KDBUS_POLICY_SEE:
	case KDBUS_POLICY_TALK:
	case KDBUS_POLICY_OWN:
		break;
	default:
		return -EINVAL;
	}

	g->access = pa->access;
	g->type = pa->type;

	switch (pa->type) {
	case KDBUS_POLICY_ACCESS_USER:
		g->uid = make_kuid(ns, (u32)pa->id);
		if (!uid_valid(g->uid))
			return -EINVAL;
		break;
	case KDBUS_POLICY_ACCESS_GROUP:
		g->gid = make_kgid(ns, (u32)pa->id);
		if (!gid_valid(g->gid))
			return -EINVAL;
		break;
	case KDBUS_POLICY_ACCESS_WORLD:
		break;
	default:
		return -EINVAL;
	}

	return 0;
}

/* number of POLICY_ACCESS items after @name up to the next NAME item */
static unsigned int kdbus_policy_count_grants(const struct kdbus_item *name,
					      const struct kdbus_item *items,
					      size_t items_size)
{
	const u8 *end = (const u8 *)items + items_size;
	const u8 *pos = (const u8 *)name;
	const struct kdbus_item *item;
	unsigned int n = 0;

	/* skip @name itself */
	kdbus_items_next(&pos, end);

	while ((item = kdbus_items_next(&pos, end))) {
		if (item->type == KDBUS_ITEM_NAME)
			break;
		if (item->type == KDBUS_ITEM_POLICY_ACCESS)
			n++;
	}

	return n;
}

/*
 * Walk the policy items of a command in order (kdbus.policy(7)). With
 * @list, build the entries (owned by @owner) onto it; without, only check.
 */
static int kdbus_policy_parse(const struct kdbus_item *items,
			      size_t items_size, size_t max_policies,
			      bool allow_wildcards, const void *owner,
			      struct hlist_head *list)
{
	const struct kdbus_item *item;
	struct kdbus_policy_db_entry *e = NULL;
	struct kdbus_policy_grant grant;
	size_t n_names = 0;
	bool have_name = false;
	int ret;

	KDBUS_ITEMS_FOREACH(item, items, items_size) {
		switch (item->type) {
		case KDBUS_ITEM_NAME: {
			unsigned int n;
			size_t len;

			/* counted before the name is validated */
			if (max_policies && ++n_names > max_policies)
				return -E2BIG;

			if (!kdbus_name_is_valid(item->str, allow_wildcards))
				return -EINVAL;

			have_name = true;
			if (!list)
				break;

			n = kdbus_policy_count_grants(item, items,
						      items_size);
			e = kzalloc(struct_size(e, grants, n),
				    GFP_KERNEL_ACCOUNT);
			if (!e)
				return -ENOMEM;

			len = strlen(item->str);
			e->wildcard = kdbus_policy_is_wildcard(item->str, len);
			if (e->wildcard)
				len -= 2;

			e->key = kmemdup_nul(item->str, len,
					     GFP_KERNEL_ACCOUNT);
			if (!e->key) {
				kfree(e);
				return -ENOMEM;
			}

			e->key_len = len;
			e->hash = kdbus_strhash(e->key);
			e->owner = owner;
			hlist_add_head(&e->hentry, list);
			break;
		}

		case KDBUS_ITEM_POLICY_ACCESS:
			if (!have_name)
				return -EINVAL;

			ret = kdbus_policy_make_grant(&item->policy_access,
						      &grant);
			if (ret < 0)
				return ret;

			if (e)
				e->grants[e->n_grants++] = grant;
			break;
		}
	}

	return 0;
}

/**
 * kdbus_policy_validate() - check policy items without installing them
 * @items:		Validated item chain of the command
 * @items_size:		Size of @items
 * @max_policies:	Number of NAME items allowed (0: no limit)
 * @allow_wildcards:	Whether names may end in ".*"
 *
 * Lets HELLO refuse a bad policy before the connection becomes visible.
 * Items other than NAME and POLICY_ACCESS are ignored.
 *
 * Return: 0 on success, -E2BIG for too many names, -EINVAL for a bad
 * name or grant.
 */
int kdbus_policy_validate(const struct kdbus_item *items, size_t items_size,
			  size_t max_policies, bool allow_wildcards)
{
	return kdbus_policy_parse(items, items_size, max_policies,
				  allow_wildcards, NULL, NULL);
}

/**
 * kdbus_policy_set() - replace the entries of an owner
 * @db:			Policy database
 * @items:		Validated item chain of the command
 * @items_size:		Size of @items
 * @max_policies:	Number of NAME items allowed (0: no limit)
 * @allow_wildcards:	Whether names may end in ".*"
 * @owner:		Owner cookie of the new entries
 *
 * Builds the entries described by the NAME and POLICY_ACCESS items of
 * @items (other items are ignored) and replaces all entries previously
 * installed by @owner with them, atomically: on any error the database is
 * left as it was. An upload without NAME items clears @owner's entries.
 *
 * Return: 0 on success, -E2BIG for too many names, -EINVAL for a bad
 * name or grant, -EEXIST if an entry of the same key and kind exists
 * (from another owner, or twice in @items), -ENOMEM.
 */
int kdbus_policy_set(struct kdbus_policy_db *db,
		     const struct kdbus_item *items, size_t items_size,
		     size_t max_policies, bool allow_wildcards,
		     const void *owner)
{
	struct kdbus_policy_db_entry *e;
	struct hlist_node *tmp;
	HLIST_HEAD(replaced);
	HLIST_HEAD(list);
	int ret;

	ret = kdbus_policy_parse(items, items_size, max_policies,
				 allow_wildcards, owner, &list);
	if (ret < 0)
		goto exit_free;

	down_write(&db->entries_rwlock);

	/* take the owner's old entries out, they are being replaced */
	kdbus_policy_unlink_owner(db, owner, &replaced);

	hlist_for_each_entry_safe(e, tmp, &list, hentry) {
		if (kdbus_policy_find(db, e->key, e->key_len, e->hash,
				      e->wildcard)) {
			ret = -EEXIST;
			break;
		}

		hlist_del(&e->hentry);
		hash_add(db->entries_hash, &e->hentry, e->hash);
	}

	if (ret < 0) {
		/* take the new entries out again and put the old ones back */
		kdbus_policy_unlink_owner(db, owner, &list);
		hlist_for_each_entry_safe(e, tmp, &replaced, hentry) {
			hlist_del(&e->hentry);
			hash_add(db->entries_hash, &e->hentry, e->hash);
		}
	} else {
		hlist_move_list(&replaced, &list);
	}

	kdbus_policy_cache_flush(db);
	up_write(&db->entries_rwlock);

exit_free:
	kdbus_policy_free_list(&list);
	return ret;
}
