// SPDX-License-Identifier: GPL-2.0-only
/*
 * Freeblock: /sys/kernel/debug/freeblock/stats, every disk's counters as
 * "disk name value" lines, for a look without tools; .../rings, the ring
 * memory of /dev/freeblock files as the caps count it; .../fg_stuck, a test
 * hook: "DISK N" adds N foreground I/Os that never complete to DISK's count,
 * for the watchdog to find (tests/vm/guest/freeblock-stacked.sh).
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
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

static ssize_t fb_fg_stuck_write(struct file *file, const char __user *ubuf,
				 size_t len, loff_t *ppos)
{
	char buf[DISK_NAME_LEN + 16], name[DISK_NAME_LEN];
	unsigned int n;
	int ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	/* DISK_NAME_LEN is 32: at most 31 characters of name */
	if (sscanf(buf, "%31s %u", name, &n) != 2 || !n || n > 1000)
		return -EINVAL;
	ret = fb_disk_inject_fg(name, n);
	return ret ? ret : len;
}

static const struct file_operations fb_fg_stuck_fops = {
	.owner = THIS_MODULE,
	.write = fb_fg_stuck_write,
	.llseek = noop_llseek,
};

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
	debugfs_create_file("fg_stuck", 0200, fb_debugfs_dir, NULL,
			    &fb_fg_stuck_fops);
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
