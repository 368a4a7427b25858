// SPDX-License-Identifier: GPL-2.0-only
/*
 * qNVRAM: what the pool holds at load time. One decision, made once: adopt
 * the pool that RAM kept (warm reboot), restore the flash image (cold
 * boot), or format. Every case that could lose or expose data is decided
 * here, and said in dmesg.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/string.h>
#include "qnvram_pool.h"

static bool reformat;
module_param(reformat, bool, 0444);
MODULE_PARM_DESC(reformat, "Discard a pool or flash image made with other parameters (another size) instead of refusing to load");

/**
 * qnvram_pool_load() - decide what the pool holds at module load
 * @pool: the pool, mapped, its backing device open if there is one; caller
 *	holds @pool->lock
 * @backing: the backing device's name, for messages (NULL: none)
 *
 * Adopt a valid pool in RAM (a warm reboot), else restore the newest
 * flash image (a cold boot), else format an empty pool.
 *
 * Context: process, module init; may sleep (flash I/O).
 * Return: 0, or -EINVAL when what is there was made with other parameters
 * and reformat=1 was not given.
 */
int qnvram_pool_load(struct qnvram_pool *pool, const char *backing)
{
	const char *why0, *why1;
	int cur, i, ret, ret0, ret1;

	if (reformat)
		goto format;
	cur = qnvram_meta_pick(qnvram_meta_slot_ptr(pool, 0),
			       qnvram_meta_slot_ptr(pool, 1), pool->bytes);
	if (cur >= 0) {
		memcpy(pool->meta, qnvram_meta_slot_ptr(pool, cur),
		       sizeof(*pool->meta));
		pool->meta_slot = cur;
		pool->boot_source = QNVRAM_BOOT_ADOPTED;
		/* A torn other slot means a reset hit an update: say so. */
		qnvram_meta_validate(qnvram_meta_slot_ptr(pool, cur ^ 1),
				     pool->bytes, &why0);
		/* The flash image may be older than what RAM kept. */
		for (i = 0; i < QNVRAM_MAX_REGIONS; i++)
			pool->rt[i].dirty = true;
		pr_info("adopted pool: generation %llu (slot %d; slot %d: %s)\n",
			le64_to_cpu(pool->meta->hdr.generation), cur, cur ^ 1,
			why0);
		/*
		 * Every change retires the current image first, so it holds
		 * the pool unless RAM changed without this module (an older
		 * one): compare, as a cold boot would restore it.
		 */
		if (pool->img_meta && !qnvram_img_holds_pool(pool))
			qnvram_img_retire_at_load(pool, "the adopted pool");
		return 0;
	}
	ret0 = qnvram_meta_validate(qnvram_meta_slot_ptr(pool, 0), pool->bytes,
				    &why0);
	ret1 = qnvram_meta_validate(qnvram_meta_slot_ptr(pool, 1), pool->bytes,
				    &why1);
	pr_info("no valid pool in RAM (slot 0: %s; slot 1: %s)\n", why0, why1);
	/*
	 * Sealed metadata that does not fit (another size= on the same range,
	 * or a bug) holds somebody's data: do not format over it silently.
	 */
	if ((ret0 == -EINVAL || ret1 == -EINVAL || pool->img_foreign) &&
	    !reformat) {
		pr_err("the pool%s holds data made with other parameters (slot 0: %s; slot 1: %s): load with the size= it was made with, or with reformat=1 to discard it\n",
		       pool->img_foreign ? " or the flash image" : "", why0, why1);
		return -EINVAL;
	}

	if (pool->backing.bdev) {
		ret = qnvram_restore(pool);
		if (!ret) {
			pool->boot_source = QNVRAM_BOOT_RESTORED;
			return 0;
		}
		if (ret != -ENOENT)
			pr_warn("restore from %s failed (%d): formatting\n",
				backing, ret);
	}

format:
	qnvram_meta_format(pool->meta, pool->bytes);
	/* Generation 1 goes to slot 0 after the commit's increment. */
	pool->meta->hdr.generation = 0;
	pool->meta_slot = 1;
	qnvram_meta_commit(pool);
	pool->boot_source = QNVRAM_BOOT_FORMATTED;
	pr_info("formatted pool of %llu bytes\n", pool->bytes);
	/* An image not restored (reformat=1, a failed restore) is not it. */
	if (pool->img_meta)
		qnvram_img_retire_at_load(pool, "the formatted pool");
	return 0;
}
