// SPDX-License-Identifier: GPL-2.0-only
/*
 * qNVRAM: what the pool holds at load time. One decision, made once: adopt
 * the pool that RAM kept (warm reboot), restore the flash image (cold
 * boot), or format; or refuse to load when what is there does not fit and
 * discarding it was not asked for. The rules are qnvram_load_decide()
 * (qnvram_format.c, unit-tested); this file gathers the facts and carries
 * the decision out. Every case that could lose or expose data is said in
 * dmesg, with the way out when the load is refused.
 *
 * reformat=1 discards everything. salvage=1 keeps what fits and discards
 * only the rest: a pool or image of another size, table entries outside
 * the pool or the swap area, image regions that cannot be read.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/string.h>
#include <linux/build_bug.h>
#include "qnvram_pool.h"

/* The table's bound on entries is the ABI's bound on regions. */
static_assert(QNVRAM_ENTRY_MAX_BYTES == QNVRAM_REGION_MAX_BYTES);

static bool reformat;
module_param(reformat, bool, 0444);
MODULE_PARM_DESC(reformat, "Start with an empty pool: discard the pool in RAM and retire the flash image, whatever they hold (salvage=1 keeps what fits)");

static bool salvage;
module_param(salvage, bool, 0444);
MODULE_PARM_DESC(salvage, "Where the load would refuse, keep what fits and discard only the rest: a pool in RAM or a flash image of another size, table entries outside the pool or the backing device's swap area, image regions that cannot be read (each said in dmesg)");

/*
 * Make neither pool slot a table, durably, before a new table is written:
 * otherwise a reset before the first commit that overwrites it would bring
 * back the table in the slot the new one did not land in.
 */
static void qnvram_load_discard_ram(struct qnvram_pool *pool)
{
	struct qnvram_meta *const slot[QNVRAM_NR_META_SLOTS] = {
		qnvram_meta_slot_ptr(pool, 0), qnvram_meta_slot_ptr(pool, 1),
	};

	qnvram_meta_discard(slot, qnvram_persist);
}

/*
 * Say which entries of @meta do not fit (@bad, from qnvram_meta_mark_bad())
 * and why, and whether they are dropped. Return: how many.
 */
static unsigned int qnvram_load_bad_entries(const struct qnvram_meta *meta,
					    const bool *bad,
					    const struct qnvram_geometry *geo,
					    const char *what, bool drop)
{
	unsigned int n = 0;
	const char *why;
	int i;

	for (i = 0; i < QNVRAM_MAX_REGIONS; i++) {
		const struct qnvram_region_entry *e = &meta->entries[i];

		if (!bad[i])
			continue;
		qnvram_meta_check_entry(meta, i, geo, &why);
		pr_warn("%s entry %d (flags %#x uid %u magic %#x offset %#llx length %#llx): %s%s\n",
			what, i, le32_to_cpu(e->flags), le32_to_cpu(e->uid),
			le32_to_cpu(e->magic), le64_to_cpu(e->offset),
			le64_to_cpu(e->length), why,
			drop ? ": dropped (salvage=1)" : "");
		n++;
	}
	return n;
}

/*
 * The adopted table's generation was not counted up by qnvram: write it
 * again as generation 1 into the other slot, then invalidate its old slot.
 * Until then the old slot still wins, so a reset in between rebases again.
 */
static void qnvram_meta_rebase(struct qnvram_pool *pool)
{
	u64 gen = le64_to_cpu(pool->meta->hdr.generation);
	int old = pool->meta_slot;
	struct qnvram_meta *slot = qnvram_meta_slot_ptr(pool, old);

	pool->meta->hdr.generation = 0;
	qnvram_meta_commit(pool);
	qnvram_meta_invalidate(slot);
	qnvram_persist(&slot->hdr, sizeof(slot->hdr));
	pr_warn("adopted pool had generation %llu, more than qnvram ever counts: renumbered from 1\n",
		gen);
}

static void qnvram_load_adopt(struct qnvram_pool *pool, int cur,
			      const bool *bad, const struct qnvram_geometry *geo,
			      bool drop)
{
	const char *why;
	unsigned int n;
	int i;

	memcpy(pool->meta, qnvram_meta_slot_ptr(pool, cur), sizeof(*pool->meta));
	pool->meta_slot = cur;
	pool->boot_source = QNVRAM_BOOT_ADOPTED;
	/* A torn other slot means a reset hit an update: say so. */
	qnvram_meta_check_header(qnvram_meta_slot_ptr(pool, cur ^ 1),
				 pool->bytes, &why);
	/* The flash image may be older than what RAM kept. */
	for (i = 0; i < QNVRAM_MAX_REGIONS; i++)
		pool->rt[i].dirty = true;
	pr_info("adopted pool: generation %llu (slot %d; slot %d: %s)\n",
		le64_to_cpu(pool->meta->hdr.generation), cur, cur ^ 1, why);
	if (drop) {
		n = qnvram_load_bad_entries(pool->meta, bad, geo, "pool", true);
		qnvram_meta_drop(pool->meta, bad);
		pool->stats.load_dropped += n;
		qnvram_meta_commit(pool);
	}
	if (le64_to_cpu(pool->meta->hdr.generation) >= QNVRAM_META_GEN_REBASE)
		qnvram_meta_rebase(pool);
	if (pool->img_foreign_bytes)
		pr_warn("image slot 0 holds an image of a pool of %llu bytes: the adopted pool is this one's, and the next flush overwrites it (load with size=%llu first to keep it)\n",
			pool->img_foreign_bytes, pool->img_foreign_bytes);
	/*
	 * Every change retires the current image first, so it holds the pool
	 * unless RAM changed without this module (an older one), or entries
	 * were dropped: compare, as a cold boot would restore it.
	 */
	if (pool->img_meta && !qnvram_img_holds_pool(pool))
		qnvram_img_retire_at_load(pool, "the adopted pool");
}

static void qnvram_load_format(struct qnvram_pool *pool)
{
	qnvram_meta_format(pool->meta, pool->bytes);
	/* Generation 1 goes to slot 0 after the commit's increment. */
	pool->meta->hdr.generation = 0;
	pool->meta_slot = 1;
	qnvram_meta_commit(pool);
	pool->boot_source = QNVRAM_BOOT_FORMATTED;
	pr_info("formatted pool of %llu bytes\n", pool->bytes);
}

/* Say why the load is refused and what the ways out are. */
static int qnvram_load_refused(struct qnvram_pool *pool, enum qnvram_load_why why,
			       const struct qnvram_load_facts *f,
			       const char *backing)
{
	const struct qnvram_meta *m = qnvram_meta_slot_ptr(pool, 0);
	const char *what;

	switch (why) {
	case QNVRAM_WHY_FOREIGN_POOL:
		if (qnvram_meta_check_header(m, pool->bytes, &what) != -EINVAL)
			m = qnvram_meta_slot_ptr(pool, 1);
		qnvram_meta_check_header(m, pool->bytes, &what);
		pr_err("the pool in RAM was made with other parameters (%s: a pool of %llu bytes): not loaded; load with the size= it was made with, or salvage=1 to discard it and restore the flash image of this size if one is current, or reformat=1 to discard it and the image\n",
		       what, le64_to_cpu(m->hdr.pool_bytes));
		return -EINVAL;
	case QNVRAM_WHY_POOL_ENTRIES:
		pr_err("%u entries of the pool in RAM do not fit (above): not loaded; if they are swapped regions, load with the backing= they were swapped to; salvage=1 drops them and keeps the rest, reformat=1 discards the pool\n",
		       f->ram_bad);
		return -EINVAL;
	case QNVRAM_WHY_READ_ERROR:
		pr_err("the flash image on %s could not be read (%d, above): not loaded, nothing written; load again once the device reads, or with salvage=1 to restore what can be read, or reformat=1 to discard it\n",
		       backing, f->img_read_error);
		return -EIO;
	case QNVRAM_WHY_FOREIGN_IMAGE:
		pr_err("image slot 0 on %s holds an image of a pool of %llu bytes, the newest state on the device: not loaded; load with size=%llu to restore it, or salvage=1 to discard it (the next flush overwrites it; no older image of this size is restored), or reformat=1\n",
		       backing, pool->img_foreign_bytes, pool->img_foreign_bytes);
		return -EINVAL;
	case QNVRAM_WHY_IMAGE_ENTRIES:
		pr_err("%u entries of image %llu on %s do not fit (above): not loaded; if they are swapped regions, load with the backing= they were swapped to; salvage=1 restores the image without them, reformat=1 discards it\n",
		       f->img_bad, le64_to_cpu(pool->img_hdr.seq), backing);
		return -EINVAL;
	default:
		return -EINVAL;
	}
}

/**
 * qnvram_pool_load() - decide what the pool holds at module load
 * @pool: the pool, mapped, its backing device open (and its images
 *	scanned) if there is one; caller holds @pool->lock
 * @backing: the backing device's name, for messages (NULL: none)
 *
 * Adopt a pool in RAM (a warm reboot), else restore the current flash
 * image (a cold boot), else format an empty pool; refuse, changing
 * nothing, where qnvram_load_decide() says so. Whatever is discarded on
 * the way (reformat=1, salvage=1) is gone before the new table is written:
 * a current image not restored is retired first, then both pool slots are
 * invalidated, so that no reset brings either back.
 *
 * Context: process, module init; may sleep (flash I/O).
 * Return: 0; -EINVAL when what is there does not fit (another size,
 * entries outside the pool or the swap area); -EIO when the image could
 * not be read.
 */
int qnvram_pool_load(struct qnvram_pool *pool, const char *backing)
{
	struct qnvram_geometry geo = {
		.pool_bytes = pool->bytes, .swap_bytes = QNVRAM_SWAP_UNKNOWN,
	};
	struct qnvram_load_facts f = { .reformat = reformat, .salvage = salvage };
	bool ram_bad[QNVRAM_MAX_REGIONS], img_bad[QNVRAM_MAX_REGIONS];
	struct qnvram_load_plan plan;
	const char *why0, *why1;
	unsigned int n = 0;
	int ret;

	if (pool->backing.bdev) {
		geo.swap_bytes = pool->backing_bytes - qnvram_swap_start(pool->bytes);
		f.backing = true;
	}
	f.ram_slot = qnvram_meta_choose(qnvram_meta_slot_ptr(pool, 0),
					qnvram_meta_slot_ptr(pool, 1),
					pool->bytes, &f.ram_foreign);
	if (f.ram_slot >= 0)
		f.ram_bad = qnvram_meta_mark_bad(qnvram_meta_slot_ptr(pool, f.ram_slot),
						 &geo, ram_bad);
	if (pool->img_meta) {
		f.img_slot = pool->img_slot;
		f.img_bad = qnvram_meta_mark_bad(pool->img_meta, &geo, img_bad);
	} else {
		f.img_slot = pool->img_foreign_bytes ? -EXDEV :
			     pool->img_stale_seq ? -ESTALE : -ENOENT;
	}
	f.img_read_error = pool->img_read_error;
	qnvram_load_decide(&f, &plan);

	if (f.ram_slot < 0) {
		qnvram_meta_check_header(qnvram_meta_slot_ptr(pool, 0),
					 pool->bytes, &why0);
		qnvram_meta_check_header(qnvram_meta_slot_ptr(pool, 1),
					 pool->bytes, &why1);
		pr_info("no valid pool in RAM (slot 0: %s; slot 1: %s)\n",
			why0, why1);
	}
	if (plan.why == QNVRAM_WHY_POOL_ENTRIES)
		qnvram_load_bad_entries(qnvram_meta_slot_ptr(pool, f.ram_slot),
					ram_bad, &geo, "pool", false);
	/*
	 * The image's table is used wherever it survives (its swapped ranges
	 * are kept free, an adopted pool is compared with it): what does not
	 * fit never stays in it.
	 */
	if (f.img_bad) {
		bool restoring = plan.action == QNVRAM_LOAD_RESTORE;

		if (restoring || plan.why == QNVRAM_WHY_IMAGE_ENTRIES)
			n = qnvram_load_bad_entries(pool->img_meta, img_bad,
						    &geo, "image", restoring);
		if (restoring)
			pool->stats.load_dropped += n;
		qnvram_meta_drop(pool->img_meta, img_bad);
	}

	switch (plan.action) {
	case QNVRAM_LOAD_REFUSE:
		return qnvram_load_refused(pool, plan.why, &f, backing);
	case QNVRAM_LOAD_ADOPT:
		qnvram_load_adopt(pool, f.ram_slot, ram_bad, &geo, plan.drop);
		return 0;
	case QNVRAM_LOAD_RESTORE:
		if (f.ram_foreign)
			pr_warn("salvage=1: the pool in RAM, made for another size, is discarded\n");
		if (f.img_read_error)
			pr_warn("salvage=1: restoring what could be read\n");
		qnvram_load_discard_ram(pool);
		ret = qnvram_restore(pool, salvage);
		if (ret) {
			pr_err("restore from %s failed (%d): not loaded, the image is kept (nothing was written); load again once the device reads, or with salvage=1 to restore the other regions, or reformat=1 to discard it\n",
			       backing, ret);
			return ret;
		}
		pool->boot_source = QNVRAM_BOOT_RESTORED;
		return 0;
	case QNVRAM_LOAD_FORMAT:
		break;
	}

	if (reformat) {
		pr_warn("reformat=1: the pool in RAM and the flash image are discarded\n");
	} else {
		if (f.ram_foreign)
			pr_warn("salvage=1: the pool in RAM, made for another size, is discarded\n");
		if (f.backing && f.img_slot == -EXDEV)
			pr_warn("salvage=1: the image of a pool of %llu bytes in slot 0 is not restored, and the next flush overwrites it; no older image of this size is restored\n",
				pool->img_foreign_bytes);
		if (f.backing && f.img_slot == -ESTALE) {
			pr_warn("no current flash image: the image is stale (superseded after flush %llu), the pool changed after that flush; not restored\n",
				pool->img_stale_seq);
			pool->stats.restore_stale++;
		}
	}
	/* Nothing discarded may come back: the image first, then RAM. */
	if (plan.retire_image)
		qnvram_img_retire_at_load(pool, "the formatted pool");
	if (plan.discard_ram)
		qnvram_load_discard_ram(pool);
	qnvram_load_format(pool);
	return 0;
}
