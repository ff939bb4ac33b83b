// SPDX-License-Identifier: GPL-2.0-only
/*
 * kdbusfs (kdbus.fs(7)). Every mount gets its own superblock and a brand
 * new domain (get_tree_nodev()); the node tree of that domain is shown
 * read-only: directories for the domain root and buses, regular files for
 * the control node and endpoints. Inodes pin their node (i_private).
 *
 * Locking:
 *  - No own locks. Lookups and readdir use the node tree's locks
 *    (node->lock) and only ever show active nodes; dentries of nodes that
 *    were deactivated fail revalidation and are never cached
 *    (always_delete_dentry).
 */

#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/fs_parser.h>
#include <linux/init.h>
#include <linux/module.h>
#include <linux/namei.h>
#include <linux/pagemap.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "bus.h"
#include "domain.h"
#include "endpoint.h"
#include "fs.h"
#include "handle.h"
#include "limits.h"
#include "node.h"

#define kdbus_domain_from_sb(_sb) ((struct kdbus_domain *)(_sb)->s_fs_info)

static struct inode *fs_inode_get(struct super_block *sb,
				  struct kdbus_node *node);

/*
 * Directory Management
 */

static inline unsigned char kdbus_dt_type(struct kdbus_node *node)
{
	switch (node->type) {
	case KDBUS_NODE_DOMAIN:
	case KDBUS_NODE_BUS:
		return DT_DIR;
	case KDBUS_NODE_CONTROL:
	case KDBUS_NODE_ENDPOINT:
		return DT_REG;
	}

	return DT_UNKNOWN;
}

static int fs_dir_fop_iterate(struct file *file, struct dir_context *ctx)
{
	struct dentry *dentry = file->f_path.dentry;
	struct kdbus_node *parent = kdbus_node_from_inode(dentry->d_inode);
	struct kdbus_node *child;

	if (!kdbus_node_acquire(parent))
		return -ESHUTDOWN;

	if (!dir_emit_dots(file, ctx))
		goto exit;

	for (;;) {
		bool ok;

		child = kdbus_node_nth_child(parent, ctx->pos - 2);
		if (!child)
			break;

		ok = dir_emit(ctx, child->name, strlen(child->name),
			      child->id, kdbus_dt_type(child));
		kdbus_node_unref(child);
		if (!ok)
			break;

		ctx->pos++;
	}

exit:
	kdbus_node_release(parent);
	return 0;
}

static const struct file_operations fs_dir_fops = {
	.read		= generic_read_dir,
	.iterate_shared	= fs_dir_fop_iterate,
	.llseek		= generic_file_llseek,
};

static struct dentry *fs_dir_iop_lookup(struct inode *dir,
					struct dentry *dentry,
					unsigned int flags)
{
	struct dentry *dnew = NULL;
	struct kdbus_node *parent;
	struct kdbus_node *node;
	struct inode *inode;

	parent = kdbus_node_from_inode(dir);
	if (!kdbus_node_acquire(parent))
		return NULL;

	/* returns reference to _acquired_ child node */
	node = kdbus_node_find_child(parent, dentry->d_name.name);
	if (node) {
		dentry->d_fsdata = node;
		inode = fs_inode_get(dir->i_sb, node);
		if (IS_ERR(inode))
			dnew = ERR_CAST(inode);
		else
			dnew = d_splice_alias(inode, dentry);

		kdbus_node_unref(node);
	}

	kdbus_node_release(parent);
	return dnew;
}

static const struct inode_operations fs_dir_iops = {
	.permission	= generic_permission,
	.lookup		= fs_dir_iop_lookup,
};

/*
 * Inode Management
 */

static const struct inode_operations fs_inode_iops = {
	.permission	= generic_permission,
};

static struct inode *fs_inode_get(struct super_block *sb,
				  struct kdbus_node *node)
{
	struct inode *inode;

	inode = iget_locked(sb, node->id);
	if (!inode)
		return ERR_PTR(-ENOMEM);
	if (!(inode->i_state & I_NEW))
		return inode;

	inode->i_private = kdbus_node_ref(node);
	inode->i_mapping->a_ops = &empty_aops;
	inode->i_mode = node->mode & S_IALLUGO;
	kdbus_inode_set_times(inode, node->ctime);
	inode->i_uid = node->uid;
	inode->i_gid = node->gid;

	switch (node->type) {
	case KDBUS_NODE_DOMAIN:
	case KDBUS_NODE_BUS:
		inode->i_mode |= S_IFDIR;
		inode->i_op = &fs_dir_iops;
		inode->i_fop = &fs_dir_fops;
		set_nlink(inode, 2);
		break;
	case KDBUS_NODE_CONTROL:
	case KDBUS_NODE_ENDPOINT:
		inode->i_mode |= S_IFREG;
		inode->i_op = &fs_inode_iops;
		inode->i_fop = &kdbus_handle_ops;
		break;
	}

	unlock_new_inode(inode);

	return inode;
}

/*
 * Superblock Management
 */

static int fs_super_dop_revalidate(struct dentry *dentry, unsigned int flags)
{
	struct kdbus_node *node;

	/* Force lookup on negatives */
	if (!dentry->d_inode)
		return 0;

	node = kdbus_node_from_inode(dentry->d_inode);

	/* see whether the node has been removed */
	if (!kdbus_node_is_active(node))
		return 0;

	return 1;
}

static const struct dentry_operations fs_super_dops = {
	.d_revalidate	= fs_super_dop_revalidate,
	.d_delete	= always_delete_dentry,
};

static void fs_super_sop_evict_inode(struct inode *inode)
{
	struct kdbus_node *node = kdbus_node_from_inode(inode);

	truncate_inode_pages_final(&inode->i_data);
	clear_inode(inode);
	kdbus_node_unref(node);
}

static const struct super_operations fs_super_sops = {
	.statfs		= simple_statfs,
	.drop_inode	= generic_delete_inode,
	.evict_inode	= fs_super_sop_evict_inode,
};

static int fs_super_fill(struct super_block *sb, struct fs_context *fc)
{
	struct kdbus_domain *domain = kdbus_domain_from_sb(sb);
	struct inode *inode;
	int ret;

	sb->s_blocksize = PAGE_SIZE;
	sb->s_blocksize_bits = PAGE_SHIFT;
	sb->s_magic = KDBUS_SUPER_MAGIC;
	sb->s_maxbytes = MAX_LFS_FILESIZE;
	sb->s_op = &fs_super_sops;
	sb->s_time_gran = 1;
	sb->s_d_op = &fs_super_dops;
	domain->dev = sb->s_dev;

	inode = fs_inode_get(sb, &domain->node);
	if (IS_ERR(inode))
		return PTR_ERR(inode);

	sb->s_root = d_make_root(inode);
	if (!sb->s_root)
		return -ENOMEM;

	/* activate the domain only after the superblock is ready */
	if (!kdbus_node_activate(&domain->node))
		return -ESHUTDOWN;

	ret = kdbus_domain_populate(domain, KDBUS_MAKE_ACCESS_WORLD);
	if (ret < 0)
		return ret;

	return 0;
}

static int fs_get_tree(struct fs_context *fc)
{
	return get_tree_nodev(fc, fs_super_fill);
}

/* mount options are accepted and ignored, as kdbus always did */
static int fs_parse_param(struct fs_context *fc, struct fs_parameter *param)
{
	return 0;
}

static void fs_free_fc(struct fs_context *fc)
{
	struct kdbus_domain *domain = fc->s_fs_info;

	/* only set if the superblock was never created */
	if (domain) {
		kdbus_node_deactivate(&domain->node);
		kdbus_domain_unref(domain);
	}
}

static const struct fs_context_operations fs_context_ops = {
	.free		= fs_free_fc,
	.parse_param	= fs_parse_param,
	.get_tree	= fs_get_tree,
};

static int fs_init_fs_context(struct fs_context *fc)
{
	struct kdbus_domain *domain;

	domain = kdbus_domain_new(KDBUS_MAKE_ACCESS_WORLD);
	if (IS_ERR(domain))
		return PTR_ERR(domain);

	fc->s_fs_info = domain;
	fc->ops = &fs_context_ops;
	return 0;
}

static void fs_super_kill(struct super_block *sb)
{
	struct kdbus_domain *domain = kdbus_domain_from_sb(sb);

	if (domain) {
		/* disconnect everything before dropping the dentries */
		kdbus_node_deactivate(&domain->node);
	}

	kill_anon_super(sb);

	kdbus_domain_unref(domain);
}

static struct file_system_type fs_type = {
	.name			= KBUILD_MODNAME "fs",
	.owner			= THIS_MODULE,
	.init_fs_context	= fs_init_fs_context,
	.kill_sb		= fs_super_kill,
	.fs_flags		= FS_USERNS_MOUNT,
};

/**
 * kdbus_fs_init() - register kdbus filesystem
 *
 * This registers a filesystem with the VFS layer. The filesystem is called
 * `KBUILD_MODNAME "fs"', which usually resolves to `kdbusfs'. The nameing
 * scheme allows to set KBUILD_MODNAME to "kdbus2" and you will get an
 * independent filesystem for developers.
 *
 * Each mount of the kdbusfs filesystem has an kdbus_domain attached.
 * Operations on this mount will only affect the attached domain. On each
 * mount a new domain is automatically created and used for this mount exclusively.
 * If you want to share a domain across multiple mounts, you need to bind-mount
 * it.
 *
 * Mounts of kdbusfs (with a different domain each) are unrelated to each other
 * and will never have any effect on any domain but their own.
 *
 * Return: 0 on success, negative error otherwise.
 */
int kdbus_fs_init(void)
{
	return register_filesystem(&fs_type);
}

/**
 * kdbus_fs_exit() - unregister kdbus filesystem
 *
 * This does the reverse to kdbus_fs_init(). It unregisters the kdbusfs
 * filesystem from VFS and cleans up any allocated resources.
 */
void kdbus_fs_exit(void)
{
	unregister_filesystem(&fs_type);
}
