// SPDX-License-Identifier: GPL-2.0-only
/*
 * Freeblock: /sys/kernel/debug/freeblock/stats, every disk's counters as
 * "disk name value" lines, for a look without tools; .../rings, the ring
 * memory of /dev/freeblock files as the caps count it.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include "fb_internal.h"

static struct dentry *fb_debugfs_dir;

static void fb_debugfs_show_disk(struct fb_disk *d, void *arg)
{
	struct mobio_stat st[FB_NR_STATS];
	struct seq_file *m = arg;
	unsigned int i, n;

	n = fb_disk_collect_stats(d, st);
	for (i = 0; i < n; i++)
		seq_printf(m, "%s %s %llu\n", d->name, st[i].name, st[i].value);
}

static int fb_stats_show(struct seq_file *m, void *unused)
{
	fb_disks_walk(fb_debugfs_show_disk, m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(fb_stats);

static int fb_rings_open(struct inode *inode, struct file *file)
{
	return single_open(file, fb_cdev_rings_show, NULL);
}

static const struct file_operations fb_rings_fops = {
	.owner = THIS_MODULE,
	.open = fb_rings_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
};

/**
 * fb_debugfs_init() - create the debugfs files (failures are ignored, as
 * debugfs is optional)
 */
void fb_debugfs_init(void)
{
	fb_debugfs_dir = debugfs_create_dir("freeblock", NULL);
	debugfs_create_file("stats", 0400, fb_debugfs_dir, NULL,
			    &fb_stats_fops);
	debugfs_create_file("rings", 0400, fb_debugfs_dir, NULL,
			    &fb_rings_fops);
	fb_selftest_init(fb_debugfs_dir);
}

/**
 * fb_debugfs_exit() - remove the debugfs files
 */
void fb_debugfs_exit(void)
{
	debugfs_remove_recursive(fb_debugfs_dir);
	fb_selftest_exit();
}
