// SPDX-License-Identifier: GPL-2.0-only
/*
 * qNVRAM: /sys/kernel/debug/qnvram/{stats,regions}, the same counters and
 * table as the netlink family, for a look without tools; and writeback:
 * a write starts a background write-back (qnvram_wb_run()), a read shows
 * "seq N done N result E" (started, ended, how the last one ended).
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/fs.h>
#include "qnvram_pool.h"

static struct dentry *qnvram_debugfs_dir;

static int qnvram_stats_show(struct seq_file *m, void *unused)
{
	struct mobio_stat stats[QNVRAM_NR_STATS];
	unsigned int i, n;

	n = qnvram_collect_stats(m->private, stats, ARRAY_SIZE(stats));
	for (i = 0; i < n; i++)
		seq_printf(m, "%s %llu\n", stats[i].name, stats[i].value);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(qnvram_stats);

static int qnvram_regions_show(struct seq_file *m, void *unused)
{
	struct qnvram_pool *pool = m->private;
	int i;

	seq_puts(m, "slot uid magic offset length state binds maps bg_swap\n");
	mutex_lock(&pool->lock);
	for (i = 0; i < QNVRAM_MAX_REGIONS; i++) {
		const struct qnvram_region_entry *e = &pool->meta->entries[i];
		u32 flags = le32_to_cpu(e->flags);

		if (!flags)
			continue;
		seq_printf(m, "%d %u %#x %#llx %llu %s %u %d %d\n", i,
			   le32_to_cpu(e->uid), le32_to_cpu(e->magic),
			   le64_to_cpu(e->offset), le64_to_cpu(e->length),
			   flags & QNVRAM_ENTRY_SWAPPED ? "swapped" : "resident",
			   pool->rt[i].binds, atomic_read(&pool->rt[i].maps),
			   pool->rt[i].bg_busy);
	}
	mutex_unlock(&pool->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(qnvram_regions);

static int qnvram_writeback_show(struct seq_file *m, void *unused)
{
	struct qnvram_pool *pool = m->private;

	mutex_lock(&pool->lock);
	seq_printf(m, "seq %llu done %llu result %d\n", pool->wb.seq,
		   pool->wb.done_seq, pool->wb.result);
	mutex_unlock(&pool->lock);
	return 0;
}

static int qnvram_writeback_open(struct inode *inode, struct file *file)
{
	return single_open(file, qnvram_writeback_show, inode->i_private);
}

/* Any write starts one; the write fails with qnvram_wb_run()'s error. */
static ssize_t qnvram_writeback_write(struct file *file,
				      const char __user *buf, size_t len,
				      loff_t *ppos)
{
	struct seq_file *m = file->private_data;
	int ret = qnvram_wb_run(m->private);

	return ret ?: len;
}

static const struct file_operations qnvram_writeback_fops = {
	.owner = THIS_MODULE,
	.open = qnvram_writeback_open,
	.read = seq_read,
	.write = qnvram_writeback_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/**
 * qnvram_debugfs_init() - create the debugfs files (failures are ignored,
 * as debugfs is optional)
 * @pool: the pool
 */
void qnvram_debugfs_init(struct qnvram_pool *pool)
{
	qnvram_debugfs_dir = debugfs_create_dir("qnvram", NULL);
	debugfs_create_file("stats", 0400, qnvram_debugfs_dir, pool,
			    &qnvram_stats_fops);
	debugfs_create_file("regions", 0400, qnvram_debugfs_dir, pool,
			    &qnvram_regions_fops);
	debugfs_create_file("writeback", 0600, qnvram_debugfs_dir, pool,
			    &qnvram_writeback_fops);
}

/**
 * qnvram_debugfs_exit() - remove the debugfs files
 */
void qnvram_debugfs_exit(void)
{
	debugfs_remove_recursive(qnvram_debugfs_dir);
}
