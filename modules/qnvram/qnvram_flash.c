// SPDX-License-Identifier: GPL-2.0-only
/*
 * qNVRAM: the backing device ("flash"). Flushes the pool to an image,
 * restores it on a cold boot, swaps idle regions out and back in, and
 * triggers flushes when the power key is held and at power-off.
 *
 * An image is *current* while the pool still holds exactly what it holds;
 * only a current image may be restored. Before the pool first changes after
 * one (a store through a mapping, a region created or freed), the change
 * waits until qnvram_img_retire() has overwritten the image's header with
 * its stale marker (qnvram_format.h), with FUA: a cold boot then finds no
 * image to restore and formats the pool, saying so. The marker is written
 * once per image, without the pool lock.
 *
 * All I/O goes through two vmapped 1 MiB bounce buffers (the pool may be
 * reserved RAM without struct pages): writes of pool data alternate between
 * them, so that copying and checksumming one chunk overlaps with the device
 * writing the previous one; everything else is synchronous.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/input.h>
#include <linux/reboot.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/ktime.h>
#include "qnvram_pool.h"

#define QNVRAM_BOUNCE_PAGES	(QNVRAM_BOUNCE_BYTES / PAGE_SIZE)

static void qnvram_bio_end(struct bio *bio)
{
	struct qnvram_bounce *b = bio->bi_private;

	b->status = bio->bi_status;
	complete(&b->done);
	bio_put(bio);
}

/*
 * Start moving @bytes (<= QNVRAM_BOUNCE_BYTES, 512-byte multiple) between
 * @b and the backing device at byte @pos. qnvram_bounce_wait() ends it.
 */
static int qnvram_bio_start(struct qnvram_pool *pool, struct qnvram_bounce *b,
			    blk_opf_t opf, u64 pos, size_t bytes)
{
	unsigned int i, nr = DIV_ROUND_UP(bytes, PAGE_SIZE);
	struct bio *bio;

	if (WARN_ON_ONCE(b->busy || bytes > QNVRAM_BOUNCE_BYTES ||
			 pos % SECTOR_SIZE || bytes % SECTOR_SIZE))
		return -EINVAL;
	bio = bio_alloc(pool->backing.bdev, nr, opf, GFP_KERNEL);
	bio->bi_iter.bi_sector = pos >> SECTOR_SHIFT;
	for (i = 0; i < nr; i++) {
		size_t len = min_t(size_t, PAGE_SIZE, bytes - i * PAGE_SIZE);

		if (bio_add_page(bio, b->pages[i], len, 0) != len) {
			bio_put(bio);
			return -EIO;
		}
	}
	bio->bi_private = b;
	bio->bi_end_io = qnvram_bio_end;
	reinit_completion(&b->done);
	b->busy = true;
	submit_bio(bio);
	return 0;
}

/* Wait for @b's bio, if any. Return: 0 or its error. */
static int qnvram_bounce_wait(struct qnvram_bounce *b)
{
	if (!b->busy)
		return 0;
	wait_for_completion_io(&b->done);
	b->busy = false;
	return blk_status_to_errno(b->status);
}

/* Wait for every bio in flight. Return: 0 or the first error. */
static int qnvram_bounce_drain(struct qnvram_pool *pool)
{
	int i, ret = 0, err;

	for (i = 0; i < QNVRAM_NR_BOUNCE; i++) {
		err = qnvram_bounce_wait(&pool->bounce[i]);
		if (!ret)
			ret = err;
	}
	return ret;
}

/*
 * Synchronous I/O of @bytes through the first bounce buffer (after the
 * asynchronous writes in flight, which it waits for).
 */
static int qnvram_bio_rw(struct qnvram_pool *pool, blk_opf_t opf, u64 pos,
			 size_t bytes)
{
	int ret = qnvram_bounce_drain(pool);

	if (!ret)
		ret = qnvram_bio_start(pool, &pool->bounce[0], opf, pos, bytes);
	return ret ?: qnvram_bounce_wait(&pool->bounce[0]);
}

/* The buffer of the synchronous I/O helpers. */
static void *qnvram_sync_buf(struct qnvram_pool *pool)
{
	return pool->bounce[0].buf;
}

/*
 * Write pool bytes [@off, @off + @len) to the device at @dev_pos, chaining
 * CRC-32 into @crc. Copying a chunk overlaps with writing the previous
 * one; the writes may still be in flight on return (qnvram_bounce_drain()
 * waits), except after an error.
 */
static int qnvram_write_range(struct qnvram_pool *pool, u64 off, u64 len,
			      u64 dev_pos, u32 *crc)
{
	struct qnvram_bounce *b;
	u64 done;
	int ret;

	for (done = 0; done < len; done += QNVRAM_BOUNCE_BYTES) {
		size_t n = min_t(u64, len - done, QNVRAM_BOUNCE_BYTES);

		b = &pool->bounce[pool->next_bounce];
		pool->next_bounce = (pool->next_bounce + 1) % QNVRAM_NR_BOUNCE;
		ret = qnvram_bounce_wait(b);
		if (ret)
			goto err_drain;
		memcpy(b->buf, pool->base + off + done, n);
		*crc = qnvram_crc32(*crc, b->buf, n);
		ret = qnvram_bio_start(pool, b, REQ_OP_WRITE, dev_pos + done, n);
		if (ret)
			goto err_drain;
	}
	return 0;

err_drain:
	qnvram_bounce_drain(pool);
	return ret;
}

/* Read the device at @dev_pos into pool bytes [@off, @off + @len). */
static int qnvram_read_range(struct qnvram_pool *pool, u64 off, u64 len,
			     u64 dev_pos, u32 *crc)
{
	void *buf = qnvram_sync_buf(pool);
	u64 done;
	int ret;

	for (done = 0; done < len; done += QNVRAM_BOUNCE_BYTES) {
		size_t n = min_t(u64, len - done, QNVRAM_BOUNCE_BYTES);

		ret = qnvram_bio_rw(pool, REQ_OP_READ, dev_pos + done, n);
		if (ret)
			return ret;
		*crc = qnvram_crc32(*crc, buf, n);
		memcpy(pool->base + off + done, buf, n);
	}
	qnvram_persist(pool->base + off, len);
	return 0;
}

static u64 qnvram_img_base(struct qnvram_pool *pool, int slot)
{
	return slot * qnvram_img_slot_bytes(pool->bytes);
}

/* Say what a header block of another pool size in image @slot is. */
static void qnvram_img_foreign(struct qnvram_pool *pool, int slot,
			       const struct qnvram_img_header *h,
			       enum qnvram_img_kind kind)
{
	u64 bytes = le64_to_cpu(h->pool_bytes);

	if (slot) {
		pr_warn("image slot 1 looks like a header of a pool of %llu bytes, where no pool of that size keeps one (another size's data or swap): ignored; a flush into slot 1 overwrites it\n",
			bytes);
	} else if (kind == QNVRAM_IMG_FOREIGN_IMAGE) {
		pool->img_foreign_bytes = bytes;
		pr_warn("image slot 0 holds image %llu of a pool of %llu bytes, not of this pool's %llu\n",
			le64_to_cpu(h->seq), bytes, pool->bytes);
	} else {
		pr_warn("image slot 0 holds a stale marker of a pool of %llu bytes: nothing to restore (an image of this size in slot 1 is older)\n",
			bytes);
	}
}

/*
 * Find the image that a cold boot restores: the newest whose header and
 * metadata header are sound (its entries are judged by qnvram_pool_load()),
 * and keep its metadata. A damaged newest image falls back to the older
 * one, which the next flush then does not overwrite. An image that a stale
 * marker supersedes is never taken (pool->img_stale_seq says which flush
 * the marker retired), nor any when image slot 0 holds an image of another
 * pool size (pool->img_foreign_bytes; qnvram_img_choose()). New images are
 * numbered above every header of this size found. A header or table that
 * cannot be read is remembered (pool->img_read_error): the load then
 * refuses rather than take an older image for the newest one.
 */
static void qnvram_img_scan(struct qnvram_pool *pool)
{
	struct qnvram_img_header h[QNVRAM_NR_IMG_SLOTS] = {};
	enum qnvram_img_kind kind;
	struct qnvram_meta *meta;
	const char *why;
	u64 magic;
	int slot, i, ret;

	for (slot = 0; slot < QNVRAM_NR_IMG_SLOTS; slot++) {
		ret = qnvram_bio_rw(pool, REQ_OP_READ, qnvram_img_base(pool, slot),
				    QNVRAM_GRANULE);
		if (ret) {
			pr_err("image slot %d: cannot read its header (%d)\n",
			       slot, ret);
			pool->img_read_error = pool->img_read_error ?: ret;
			continue;
		}
		memcpy(&h[slot], qnvram_sync_buf(pool), sizeof(h[slot]));
		kind = qnvram_img_classify(&h[slot], pool->bytes, &why);
		magic = le64_to_cpu(h[slot].magic);
		if (kind == QNVRAM_IMG_FOREIGN_IMAGE ||
		    kind == QNVRAM_IMG_FOREIGN_MARKER)
			qnvram_img_foreign(pool, slot, &h[slot], kind);
		/* A blank slot is normal; anything else is worth a line. */
		else if (kind == QNVRAM_IMG_NONE && (magic == QNVRAM_IMG_MAGIC ||
						     magic == QNVRAM_IMG_STALE_MAGIC))
			pr_warn("image slot %d: %s\n", slot, why);
	}
	slot = qnvram_img_newest(&h[0], &h[1], pool->bytes);
	if (slot >= 0) {
		pool->img_slot = slot;
		pool->img_seq = le64_to_cpu(h[slot].seq);
	}
	meta = kmalloc(sizeof(*meta), GFP_KERNEL);
	if (!meta)
		return;
	for (i = 0; i < QNVRAM_NR_IMG_SLOTS; i++) {
		slot = qnvram_img_choose(&h[0], &h[1], pool->bytes);
		if (slot == -ESTALE)
			pool->img_stale_seq = qnvram_img_stale_seq(&h[0], &h[1],
								   pool->bytes);
		if (slot < 0)
			break;
		ret = qnvram_bio_rw(pool, REQ_OP_READ,
				    qnvram_img_base(pool, slot) +
				    QNVRAM_IMG_HDR_BYTES, QNVRAM_META_IO_BYTES);
		if (!ret) {
			memcpy(meta, qnvram_sync_buf(pool), sizeof(*meta));
			ret = qnvram_meta_check_header(meta, pool->bytes, &why);
			if (!ret && meta->hdr.crc != h[slot].meta_crc) {
				why = "metadata does not match the image header";
				ret = -EBADMSG;
			}
		} else {
			why = "read error";
			pool->img_read_error = pool->img_read_error ?: ret;
		}
		if (!ret) {
			pool->img_slot = slot;
			pool->img_hdr = h[slot];
			pool->img_meta = meta;
			return;
		}
		pr_warn("image %llu (slot %d): %s: trying the older image\n",
			le64_to_cpu(h[slot].seq), slot, why);
		memset(&h[slot], 0, sizeof(h[slot]));
	}
	kfree(meta);
}

/*
 * Write @marker over the header block of image slot @slot, durable when
 * this returns (FUA). Without pool->lock: only the caller that set
 * pool->img_marking writes, into pool->img_mark_page.
 */
static int qnvram_img_write_marker(struct qnvram_pool *pool, int slot,
				   const struct qnvram_img_header *marker)
{
	struct page *page = pool->img_mark_page;
	struct bio *bio;
	int ret;

	memset(page_address(page), 0, QNVRAM_IMG_HDR_BYTES);
	memcpy(page_address(page), marker, sizeof(*marker));
	/* NOIO: a page fault waits for it. */
	bio = bio_alloc(pool->backing.bdev, 1,
			REQ_OP_WRITE | REQ_SYNC | REQ_FUA, GFP_NOIO);
	bio->bi_iter.bi_sector = qnvram_img_base(pool, slot) >> SECTOR_SHIFT;
	__bio_add_page(bio, page, QNVRAM_IMG_HDR_BYTES, 0);
	ret = submit_bio_wait(bio);
	bio_put(bio);
	return ret;
}

/*
 * The current image's marker is on the device: the image is stale from
 * now on. Caller holds pool->lock.
 */
static void qnvram_img_settle(struct qnvram_pool *pool)
{
	lockdep_assert_held(&pool->lock);
	if (!pool->img_meta || le64_to_cpu(pool->img_hdr.seq) !=
	    READ_ONCE(pool->img_marked_seq))
		return;
	pr_debug("image %llu (slot %d) is stale: the pool changes after it\n",
		 le64_to_cpu(pool->img_hdr.seq), pool->img_slot);
	kfree(pool->img_meta);
	pool->img_meta = NULL;
	pool->stats.img_retired++;
}

/*
 * Wait until no stale marker is being written; caller holds pool->lock, so
 * no new one starts until it drops it. Image slots are written only after
 * this: a marker in flight must not land on a newer image's header.
 */
static void qnvram_img_mark_wait(struct qnvram_pool *pool)
{
	lockdep_assert_held(&pool->lock);
	/* Acquire: pairs with the release in qnvram_img_retire(). */
	wait_event(pool->img_mark_wq, !smp_load_acquire(&pool->img_marking));
	qnvram_img_settle(pool);
}

/**
 * qnvram_img_retire() - make sure no image on the device would be restored
 *	as the pool's state, before the caller changes the pool
 * @pool: the pool; caller holds @pool->lock
 *
 * Called before whatever changes the pool's bytes or its table for good (a
 * page mapped writable, a region created or freed): an image that no
 * longer matches the pool must never be restored as if it did. If an image
 * is current, its stale marker is written over its header block, with FUA,
 * and only then may the change happen. The write is done without
 * @pool->lock (faults that only read, and flushes, go on) and once per
 * image: every later caller finds no current image and returns at once.
 *
 * Context: process, may sleep.
 * Return: 0 with @pool->lock still held: no image is current, the caller
 * may change the pool. Otherwise @pool->lock has been released: -EAGAIN
 * when the caller must take it again and look again (a marker was written,
 * by this caller or another, or a new image was committed meanwhile, or is
 * being committed without the lock: see qnvram_img_commit()); or
 * the error of the marker's write, and the image is still current: the
 * change must not happen.
 */
int qnvram_img_retire(struct qnvram_pool *pool)
{
	struct qnvram_img_header marker;
	bool marking;
	int slot, ret;

	lockdep_assert_held(&pool->lock);
	/* Its image would not hold the pool if the pool changed now. */
	if (pool->img_committing) {
		mutex_unlock(&pool->lock);
		wait_event(pool->img_mark_wq, !READ_ONCE(pool->img_committing));
		return -EAGAIN;
	}
	/* Acquire: a marker finished here is seen by the settle below. */
	marking = smp_load_acquire(&pool->img_marking);
	qnvram_img_settle(pool);
	if (!pool->img_meta)
		return 0;
	if (marking) {
		mutex_unlock(&pool->lock);
		/* Acquire: pairs with the release below, in the writer. */
		wait_event(pool->img_mark_wq, !smp_load_acquire(&pool->img_marking));
		return -EAGAIN;
	}
	marker = pool->img_hdr;
	qnvram_img_mark_stale(&marker);
	slot = pool->img_slot;
	WRITE_ONCE(pool->img_marking, true);
	mutex_unlock(&pool->lock);

	ret = qnvram_img_write_marker(pool, slot, &marker);
	if (!ret)
		WRITE_ONCE(pool->img_marked_seq, le64_to_cpu(marker.seq));
	/* Release: whoever sees it cleared sees img_marked_seq too. */
	smp_store_release(&pool->img_marking, false);
	wake_up_all(&pool->img_mark_wq);
	if (!ret)
		return -EAGAIN;
	mutex_lock(&pool->lock);
	pool->stats.img_retire_errors++;
	mutex_unlock(&pool->lock);
	pr_err_ratelimited("cannot mark image %llu stale (%d): the pool is left unchanged\n",
			   le64_to_cpu(marker.seq), ret);
	return ret;
}

/**
 * qnvram_img_retire_at_load() - make the current image stale while the
 *	module loads (it does not hold the pool being set up)
 * @pool: the pool; caller holds @pool->lock, held again on return
 * @why: what the image does not hold, for the log
 *
 * A marker that cannot be written is logged; the image then stays current
 * and the first change of the pool tries again (and fails safe).
 * Context: process, module init, may sleep.
 */
void qnvram_img_retire_at_load(struct qnvram_pool *pool, const char *why)
{
	u64 seq = le64_to_cpu(pool->img_hdr.seq);
	int ret;

	while ((ret = qnvram_img_retire(pool)) == -EAGAIN)
		mutex_lock(&pool->lock);
	if (ret) {
		mutex_lock(&pool->lock);
		pr_err("image %llu does not hold %s, and marking it stale failed (%d): the first change of the pool will try again\n",
		       seq, why, ret);
		return;
	}
	if (seq)
		pr_warn("image %llu does not hold %s: marked stale, a cold boot will not restore it\n",
			seq, why);
}

/**
 * qnvram_img_holds_pool() - whether the current image holds the pool as it
 *	is (a warm reboot's adopted pool, say)
 * @pool: the pool; caller holds @pool->lock
 *
 * The same regions (owner, name, length) in the same table entries, and
 * each region's bytes with the image's CRC-32: a resident region's bytes
 * in the pool, a swapped one by the CRC of its swap copy.
 * Context: process, may sleep (checksums every resident region).
 * Return: true when it does; false when not, or without a current image.
 */
bool qnvram_img_holds_pool(struct qnvram_pool *pool)
{
	int i;

	lockdep_assert_held(&pool->lock);
	if (!pool->img_meta)
		return false;
	for (i = 0; i < QNVRAM_MAX_REGIONS; i++) {
		const struct qnvram_region_entry *m = &pool->img_meta->entries[i];
		const struct qnvram_region_entry *e = &pool->meta->entries[i];
		u32 crc;

		if (!m->flags != !e->flags)
			return false;
		if (!e->flags)
			continue;
		if (m->uid != e->uid || m->magic != e->magic ||
		    m->length != e->length)
			return false;
		if (le32_to_cpu(e->flags) & QNVRAM_ENTRY_SWAPPED)
			crc = le32_to_cpu(e->data_crc);
		else
			crc = qnvram_crc32(0, pool->base + le64_to_cpu(e->offset),
					   le64_to_cpu(e->length));
		if (crc != le32_to_cpu(m->data_crc))
			return false;
		cond_resched();
	}
	return true;
}

/**
 * qnvram_img_current() - whether a cold boot would restore an image, which
 *	then holds the pool as it is
 * @pool: the pool; caller holds @pool->lock
 *
 * Context: any (under the pool lock).
 * Return: true while an image is current.
 */
bool qnvram_img_current(struct qnvram_pool *pool)
{
	lockdep_assert_held(&pool->lock);
	qnvram_img_settle(pool);
	return !!pool->img_meta;
}

/**
 * qnvram_img_retire_waits() - whether qnvram_img_retire() would wait for
 *	I/O now (a marker to write, or to wait for, or an image being
 *	committed)
 * @pool: the pool; caller holds @pool->lock
 *
 * For a page fault, which then drops mmap_lock before it retires.
 * Context: any (under the pool lock).
 * Return: true when it would.
 */
bool qnvram_img_retire_waits(struct qnvram_pool *pool)
{
	lockdep_assert_held(&pool->lock);
	return pool->img_committing || READ_ONCE(pool->img_marking) ||
	       qnvram_img_current(pool);
}

/**
 * qnvram_img_current_racy() - qnvram_img_current() for a report, without
 *	the pool lock
 * @pool: the pool
 *
 * Context: any.
 * Return: what qnvram_img_current() would have said at about this time.
 */
bool qnvram_img_current_racy(struct qnvram_pool *pool)
{
	/* Both change under the lock; a report may see them a change late. */
	bool have = data_race(pool->img_meta);
	/* As racy: the header of the image that @have says is there. */
	u64 seq = le64_to_cpu(data_race(pool->img_hdr.seq));

	return have && seq != READ_ONCE(pool->img_marked_seq);
}

/**
 * qnvram_writes_watched() - whether a store to a region must be seen
 *	before it happens
 * @pool: the pool; caller holds @pool->lock
 *
 * While an image is current (it must be retired first) or a background
 * write-back's snapshot is being written (its image must not be committed
 * if the pool changed), a page fault that only reads maps the page
 * read-only, so that the first store faults again.
 * Context: any (under the pool lock).
 * Return: true when stores must fault.
 */
bool qnvram_writes_watched(struct qnvram_pool *pool)
{
	return qnvram_img_current(pool) || pool->wb.state == QNVRAM_WB_RUNNING;
}

/*
 * Whether a swapped region of @meta (an image's metadata; NULL: none) uses
 * swap bytes [@soff, @soff + @len); if so *@pos is set past it.
 */
static bool qnvram_meta_swap_clash(const struct qnvram_meta *meta, u64 soff,
				   u64 len, u64 *pos)
{
	int i;

	for (i = 0; meta && i < QNVRAM_MAX_REGIONS; i++) {
		const struct qnvram_region_entry *e = &meta->entries[i];
		u64 o = le64_to_cpu(e->offset);
		u64 l = le64_to_cpu(e->length);

		if (!(le32_to_cpu(e->flags) & QNVRAM_ENTRY_SWAPPED))
			continue;
		if (o < soff + len && soff < o + l) {
			*pos = o + l;
			return true;
		}
	}
	return false;
}

/**
 * qnvram_swap_find_gap() - find free swap space
 * @pool: the pool; caller holds @pool->lock
 * @len: bytes needed
 * @soff: set to the start of the space, bytes from the swap area start
 *
 * The space is used by none of: the pool's table, the newest flash image
 * (after a cold boot that image's swapped regions must still find their
 * bytes where it says), the image a background write-back is writing, a
 * background swap-out in progress.
 * Context: process.
 * Return: 0, or -ENOSPC when no such range is large enough.
 */
int qnvram_swap_find_gap(struct qnvram_pool *pool, u64 len, u64 *soff)
{
	u64 end = pool->backing_bytes - qnvram_swap_start(pool->bytes);
	const struct qnvram_meta *wb_meta =
		pool->wb.state != QNVRAM_WB_IDLE ? pool->wb.meta : NULL;
	u64 pos = 0;
	int ret;

	lockdep_assert_held(&pool->lock);
	for (;;) {
		ret = qnvram_meta_find_gap(pool->meta, true, pos, end, len,
					   soff);
		if (ret)
			return ret;
		if (!qnvram_meta_swap_clash(pool->img_meta, *soff, len, &pos) &&
		    !qnvram_meta_swap_clash(wb_meta, *soff, len, &pos) &&
		    !qnvram_bgswap_clash(pool, *soff, len, &pos) &&
		    !qnvram_swap_reserved(pool, QNVRAM_SWAPPING_OUT, *soff, len,
					  &pos))
			return 0;
	}
}

static void qnvram_bounce_free(struct qnvram_bounce *b)
{
	unsigned int i;

	if (b->buf)
		vunmap(b->buf);
	b->buf = NULL;
	if (!b->pages)
		return;
	for (i = 0; i < QNVRAM_BOUNCE_PAGES; i++)
		if (b->pages[i])
			__free_page(b->pages[i]);
	kfree(b->pages);
	b->pages = NULL;
}

static int qnvram_bounce_alloc(struct qnvram_bounce *b)
{
	unsigned int i;

	init_completion(&b->done);
	b->pages = kcalloc(QNVRAM_BOUNCE_PAGES, sizeof(*b->pages), GFP_KERNEL);
	if (!b->pages)
		return -ENOMEM;
	for (i = 0; i < QNVRAM_BOUNCE_PAGES; i++) {
		b->pages[i] = alloc_page(GFP_KERNEL);
		if (!b->pages[i])
			goto err_free;
	}
	b->buf = vmap(b->pages, QNVRAM_BOUNCE_PAGES, VM_MAP, PAGE_KERNEL);
	if (!b->buf)
		goto err_free;
	return 0;

err_free:
	qnvram_bounce_free(b);
	return -ENOMEM;
}

/**
 * qnvram_backing_open() - open and check the backing device
 * @pool: the pool, mapped, with @pool->bytes set
 * @path: device path
 *
 * Context: process, module init.
 * Return: 0; -ENOENT/-EBUSY... from opening it; -EINVAL when it is too
 * small for two images of the pool or has blocks larger than 4 KiB;
 * -ENOMEM.
 */
int qnvram_backing_open(struct qnvram_pool *pool, const char *path)
{
	u64 need = qnvram_swap_start(pool->bytes);
	struct block_device *bdev;
	int i, ret;

	ret = mobio_bdev_open(path, pool, &pool->backing);
	if (ret) {
		pr_err("cannot open backing device %s: %d\n", path, ret);
		return ret;
	}
	bdev = pool->backing.bdev;
	pool->backing_bytes = bdev_nr_bytes(bdev);
	if (pool->backing_bytes < need ||
	    bdev_logical_block_size(bdev) > QNVRAM_GRANULE) {
		pr_err("backing device %s: %llu bytes with %u-byte blocks; needs at least %llu bytes (two images of the pool) and blocks of at most 4096\n",
		       path, pool->backing_bytes, bdev_logical_block_size(bdev),
		       need);
		ret = -EINVAL;
		goto err_close;
	}

	for (i = 0; i < QNVRAM_NR_BOUNCE; i++) {
		ret = qnvram_bounce_alloc(&pool->bounce[i]);
		if (ret)
			goto err_free_pages;
	}
	ret = qnvram_bounce_alloc(&pool->swap_bounce);
	if (ret)
		goto err_free_pages;
	pool->img_mark_page = alloc_page(GFP_KERNEL);
	if (!pool->img_mark_page) {
		ret = -ENOMEM;
		goto err_free_pages;
	}
	qnvram_img_scan(pool);
	return 0;

err_free_pages:
	qnvram_backing_close(pool);
	return ret;
err_close:
	mobio_bdev_close(&pool->backing);
	return ret;
}

/**
 * qnvram_backing_close() - release the backing device and bounce buffer
 * @pool: the pool (nothing is written)
 *
 * Context: process.
 */
void qnvram_backing_close(struct qnvram_pool *pool)
{
	int i;

	for (i = 0; i < QNVRAM_NR_BOUNCE; i++)
		qnvram_bounce_free(&pool->bounce[i]);
	qnvram_bounce_free(&pool->swap_bounce);
	if (pool->img_mark_page)
		__free_page(pool->img_mark_page);
	pool->img_mark_page = NULL;
	kfree(pool->img_meta);
	pool->img_meta = NULL;
	mobio_bdev_close(&pool->backing);
}

/**
 * qnvram_img_data_pos() - where a pool byte lives in an image slot
 * @pool: the pool
 * @slot: image slot, 0 or 1
 * @off: byte offset in the pool
 *
 * Context: any.
 * Return: the byte offset on the backing device.
 */
u64 qnvram_img_data_pos(struct qnvram_pool *pool, int slot, u64 off)
{
	return qnvram_img_base(pool, slot) + QNVRAM_IMG_HDR_BYTES + off;
}

/**
 * qnvram_img_commit() - make an image slot whose data and metadata are
 *	written the current image
 * @pool: the pool; caller holds @pool->lock
 * @slot: the image slot (the older one)
 * @img_meta: the image's metadata, sealed, as written in @slot; on success
 *	the pool keeps it (as @pool->img_meta), else the caller frees it
 * @nr: resident regions in the image
 * @bytes: bytes written for the image before the header
 * @start_ns: ktime_get_ns() when the image was begun
 * @unlocked_io: write the header without @pool->lock (see below)
 *
 * Writes the header with a cache flush before it and FUA, so the data and
 * metadata are stable before the header names them; until it lands the
 * previous image stays current. The caller guarantees that @img_meta and
 * the data written are the pool as it is: the new image is current.
 * With @unlocked_io the header is written without @pool->lock (held again
 * on return), and meanwhile every change of the pool and every flush
 * waits (@pool->img_committing): a background write-back's commit, so that
 * readers and faults that change nothing do not wait for its I/O.
 *
 * Context: process, may sleep.
 * Return: 0; -EIO; -EOVERFLOW when the device's headers left no flush
 * number (QNVRAM_COUNT_MAX: only a damaged or crafted header claims it).
 */
int qnvram_img_commit(struct qnvram_pool *pool, int slot,
		      struct qnvram_meta *img_meta, u32 nr, u64 bytes,
		      u64 start_ns, bool unlocked_io)
{
	struct qnvram_img_header *hdr = qnvram_sync_buf(pool);
	int ret;

	lockdep_assert_held(&pool->lock);
	qnvram_img_mark_wait(pool);
	ret = qnvram_bounce_drain(pool);
	if (ret)
		return ret;
	/* A number a header read from the device claims can be the last one. */
	if (pool->img_seq >= QNVRAM_COUNT_MAX) {
		pr_err_ratelimited("no flush number is left after %llu (an image header on the device claims it): no image can be written; erase the first 4 KiB of both image slots to start numbering again\n",
				   pool->img_seq);
		return -EOVERFLOW;
	}
	memset(hdr, 0, QNVRAM_GRANULE);
	hdr->magic = cpu_to_le64(QNVRAM_IMG_MAGIC);
	hdr->version = cpu_to_le32(QNVRAM_FORMAT_VERSION);
	hdr->nr_regions = cpu_to_le32(nr);
	hdr->pool_bytes = cpu_to_le64(pool->bytes);
	hdr->seq = cpu_to_le64(pool->img_seq + 1);
	hdr->meta_crc = img_meta->hdr.crc;
	qnvram_img_seal(hdr);
	/*
	 * Without the lock, nothing may change the pool or write an image
	 * slot until the header has landed: whatever would (every change
	 * retires first, a flush waits first) waits for img_committing.
	 */
	if (unlocked_io) {
		pool->img_committing = true;
		mutex_unlock(&pool->lock);
	}
	/* The data and metadata must be stable before the header names them. */
	ret = qnvram_bio_rw(pool, REQ_OP_WRITE | REQ_PREFLUSH | REQ_FUA,
			    qnvram_img_base(pool, slot), QNVRAM_GRANULE);
	if (unlocked_io) {
		mutex_lock(&pool->lock);
		WRITE_ONCE(pool->img_committing, false);
		wake_up_all(&pool->img_mark_wq);
	}
	if (ret)
		return ret;

	pool->img_slot = slot;
	pool->img_seq++;
	pool->img_hdr = *hdr;
	bytes += QNVRAM_GRANULE;
	pool->stats.flushes++;
	pool->stats.flush_bytes += bytes;
	pool->stats.last_flush_bytes = bytes;
	pool->stats.last_flush_ns = ktime_get_ns() - start_ns;
	kfree(pool->img_meta);
	pool->img_meta = img_meta;
	qnvram_genl_event(QNVRAM_EVENT_FLUSHED, pool, -1);
	return 0;
}

/**
 * qnvram_flush() - write the pool's image to the older image slot
 * @pool: the pool; caller holds @pool->lock
 *
 * Writes every resident region's data (checksummed as copied), then the
 * metadata copy with those checksums, then, after a cache flush, the
 * header with FUA. Until the header lands the previous image stays
 * current, so a torn flush loses nothing that the last flush saved.
 * Every region is unmapped first and apps' page faults wait for @pool->lock,
 * so the image is one state of each region, as apps left it when the flush
 * began, and it is current when the flush returns: the next store faults
 * and retires it (qnvram_img_retire()).
 *
 * A background write-back in progress (qnvram_wb.c) is taken over: its
 * freeblock tasks are promoted and waited for, and the regions it wrote
 * that nobody touched since its snapshot are not written again.
 *
 * Waits (without @pool->lock) for a background write-back's commit whose
 * header is being written.
 *
 * Context: process, may sleep for seconds.
 * Return: 0; -ENODEV without a backing device; -ENOMEM; -EIO.
 */
int qnvram_flush(struct qnvram_pool *pool)
{
	u64 start = ktime_get_ns(), bytes = 0;
	u64 direct_regions = 0, direct_bytes = 0;
	u64 wb_dirty = 0, direct_dirty = 0;
	struct qnvram_meta *img_meta;
	void *buf;
	u32 nr = 0;
	int i, ret, slot;

	lockdep_assert_held(&pool->lock);
	if (!pool->backing.bdev)
		return -ENODEV;
	/* A write-back's header in flight (qnvram_img_commit()) goes first. */
	while (pool->img_committing) {
		mutex_unlock(&pool->lock);
		wait_event(pool->img_mark_wq, !READ_ONCE(pool->img_committing));
		mutex_lock(&pool->lock);
	}
	slot = pool->img_slot == 0 ? 1 : 0;
	img_meta = kmemdup(pool->meta, sizeof(*img_meta), GFP_KERNEL);
	if (!img_meta)
		return -ENOMEM;
	qnvram_img_mark_wait(pool);
	qnvram_dev_unmap_all(pool);
	/* Promote and wait for a background write-back into this slot. */
	qnvram_wb_takeover(pool);

	for (i = 0; i < QNVRAM_MAX_REGIONS; i++) {
		struct qnvram_region_entry *e = &img_meta->entries[i];
		u64 off = le64_to_cpu(e->offset), len = le64_to_cpu(e->length);
		u32 crc = 0;

		if (!e->flags || (le32_to_cpu(e->flags) & QNVRAM_ENTRY_SWAPPED))
			continue;
		nr++;
		if (qnvram_wb_written(pool, i, &crc)) {
			e->data_crc = cpu_to_le32(crc);
			wb_dirty += pool->rt[i].dirty;
			continue;
		}
		ret = qnvram_write_range(pool, off, len,
					 qnvram_img_data_pos(pool, slot, off),
					 &crc);
		if (ret)
			goto out_error;
		e->data_crc = cpu_to_le32(crc);
		bytes += len;
		direct_regions++;
		direct_bytes += len;
		direct_dirty += pool->rt[i].dirty;
	}
	/* The data writes must end before the sync buffer is reused. */
	ret = qnvram_bounce_drain(pool);
	if (ret)
		goto out_error;
	qnvram_meta_seal(img_meta);
	buf = qnvram_sync_buf(pool);
	memset(buf, 0, QNVRAM_META_IO_BYTES);
	memcpy(buf, img_meta, sizeof(*img_meta));
	ret = qnvram_bio_rw(pool, REQ_OP_WRITE,
			    qnvram_img_base(pool, slot) + QNVRAM_IMG_HDR_BYTES,
			    QNVRAM_META_IO_BYTES);
	if (ret)
		goto out_error;
	bytes += QNVRAM_META_IO_BYTES;
	ret = qnvram_img_commit(pool, slot, img_meta, nr, bytes, start, false);
	if (ret)
		goto out_error;
	pool->stats.direct_regions += direct_regions;
	pool->stats.direct_bytes += direct_bytes;
	pool->stats.wb_dirty_regions += wb_dirty;
	pool->stats.direct_dirty_regions += direct_dirty;
	/* Unmapped under the lock: the image holds every present byte. */
	for (i = 0; i < QNVRAM_MAX_REGIONS; i++)
		pool->rt[i].dirty = false;
	qnvram_wb_end(pool, 0);
	return 0;

out_error:
	pool->stats.flush_errors++;
	kfree(img_meta);
	qnvram_wb_end(pool, ret);
	pr_err("flush to image slot %d failed: %d\n", slot, ret);
	return ret;
}

/**
 * qnvram_restore() - rebuild the pool from the current flash image
 * @pool: the pool; caller holds @pool->lock
 * @salvage: a region whose bytes cannot be read is dropped, not an error
 *
 * Uses the image that qnvram_backing_open() found (header and metadata
 * sound, not superseded by a stale marker), its table checked by the
 * caller (qnvram_pool_load()). Regions whose data fails its checksum are
 * dropped (and counted), the others are copied into the pool; the
 * metadata is then committed. The image stays current. A read error ends
 * the restore before anything is committed or written to the device, so
 * the image is still there for the next try.
 *
 * Context: process, may sleep.
 * Return: 0; -ENOENT without a current image; the read error (-EIO) of a
 * region's bytes, unless @salvage.
 */
int qnvram_restore(struct qnvram_pool *pool, bool salvage)
{
	u64 base;
	u32 nr = 0;
	int i, ret;

	lockdep_assert_held(&pool->lock);
	if (!pool->img_meta)
		return -ENOENT;
	base = qnvram_img_base(pool, pool->img_slot);
	memcpy(pool->meta, pool->img_meta, sizeof(*pool->meta));

	for (i = 0; i < QNVRAM_MAX_REGIONS; i++) {
		struct qnvram_region_entry *e = &pool->meta->entries[i];
		u64 off = le64_to_cpu(e->offset), len = le64_to_cpu(e->length);
		u64 pos = base + QNVRAM_IMG_HDR_BYTES + off;
		u32 crc = 0;

		if (!e->flags || (le32_to_cpu(e->flags) & QNVRAM_ENTRY_SWAPPED))
			continue;
		ret = qnvram_read_range(pool, off, len, pos, &crc);
		if (ret && !salvage) {
			pr_err("image %llu: region uid %u magic %#x cannot be read (device bytes %#llx-%#llx): %d\n",
			       le64_to_cpu(pool->img_hdr.seq), le32_to_cpu(e->uid),
			       le32_to_cpu(e->magic), pos, pos + len - 1, ret);
			return ret;
		}
		if (ret || crc != le32_to_cpu(e->data_crc)) {
			pr_warn("image %llu: region uid %u magic %#x %s: dropped\n",
				le64_to_cpu(pool->img_hdr.seq), le32_to_cpu(e->uid),
				le32_to_cpu(e->magic), ret ?
				"cannot be read (salvage=1)" : "fails its checksum");
			memset(e, 0, sizeof(*e));
			pool->stats.restore_dropped++;
			continue;
		}
		e->data_crc = 0;
		nr++;
	}
	/* The older pool slot gets it; the other one holds garbage anyway. */
	pool->meta_slot = 1;
	qnvram_meta_commit(pool);
	pr_info("restored pool from image %llu (%u regions with data)\n",
		le64_to_cpu(pool->img_hdr.seq), nr);
	return 0;
}

/*
 * Move region bytes [@off, @off + @len) of the pool to or from the device
 * at @dev_pos through the swap bounce buffer, chaining CRC-32 of the
 * bytes into @crc; synchronous. Without pool->lock: the caller has
 * reserved both ends (qnvram_region_rt.swapping).
 */
static int qnvram_swap_io(struct qnvram_pool *pool, bool write, u64 off,
			  u64 len, u64 dev_pos, u32 *crc)
{
	struct qnvram_bounce *b = &pool->swap_bounce;
	u64 done;
	int ret = 0;

	mutex_lock(&pool->swap_lock);
	for (done = 0; done < len; done += QNVRAM_BOUNCE_BYTES) {
		size_t n = min_t(u64, len - done, QNVRAM_BOUNCE_BYTES);

		if (write) {
			memcpy(b->buf, pool->base + off + done, n);
			*crc = qnvram_crc32(*crc, b->buf, n);
		}
		ret = qnvram_bio_start(pool, b, write ? REQ_OP_WRITE :
				       REQ_OP_READ, dev_pos + done, n);
		if (!ret)
			ret = qnvram_bounce_wait(b);
		if (ret)
			break;
		if (!write) {
			*crc = qnvram_crc32(*crc, b->buf, n);
			memcpy(pool->base + off + done, b->buf, n);
		}
		cond_resched();
	}
	if (!ret && write)
		ret = blkdev_issue_flush(pool->backing.bdev);
	mutex_unlock(&pool->swap_lock);
	if (!ret && !write)
		qnvram_persist(pool->base + off, len);
	return ret;
}

/**
 * qnvram_swap_reserved() - whether in-flight synchronous swaps reserved a
 *	range
 * @pool: the pool; caller holds @pool->lock
 * @dir: QNVRAM_SWAPPING_OUT: swap bytes, from the swap area start (what
 *	swap-outs write); QNVRAM_SWAPPING_IN: pool bytes (what swap-ins fill)
 * @off: first byte of the range
 * @len: its length, bytes
 * @pos: set past the reservation found
 *
 * Context: any (under the pool lock).
 * Return: true when [@off, @off + @len) overlaps one.
 */
bool qnvram_swap_reserved(struct qnvram_pool *pool, enum qnvram_swapping dir,
			  u64 off, u64 len, u64 *pos)
{
	int i;

	lockdep_assert_held(&pool->lock);
	for (i = 0; i < QNVRAM_MAX_REGIONS; i++) {
		u64 o = pool->rt[i].swap_to;
		u64 l = le64_to_cpu(pool->meta->entries[i].length);

		if (pool->rt[i].swapping == dir && o < off + len && off < o + l) {
			*pos = o + l;
			return true;
		}
	}
	return false;
}

/**
 * qnvram_swap_wait() - wait for a synchronous swap of a region to end
 * @pool: the pool; caller holds @pool->lock
 * @slot: the region
 *
 * Context: process, may sleep.
 * Return: 0 with @pool->lock held when none runs; otherwise @pool->lock
 * has been released and the caller looks again: -EAGAIN once it ended,
 * -EINTR for a fatal signal.
 */
int qnvram_swap_wait(struct qnvram_pool *pool, int slot)
{
	lockdep_assert_held(&pool->lock);
	if (!pool->rt[slot].swapping)
		return 0;
	mutex_unlock(&pool->lock);
	if (wait_event_killable(pool->swap_wq,
				!READ_ONCE(pool->rt[slot].swapping)))
		return -EINTR;
	return -EAGAIN;
}

/**
 * qnvram_swap_out() - move an idle region's data to the swap area
 * @pool: the pool; caller holds @pool->lock, which is released for the
 *	I/O and held again on return
 * @slot: a resident region that no file is bound to and that is not being
 *	swapped
 *
 * Reserves the swap bytes and marks the region (qnvram_swap_wait() holds
 * off whoever would bind, free or swap it meanwhile), writes it and
 * flushes the device cache without @pool->lock, then commits: the pool
 * space is reused only once the data is stable on flash. Anything the
 * caller looked up under the lock may have changed when this returns.
 *
 * Context: process, may sleep.
 * Return: 0; -ENODEV without a backing device; -ENOSPC when the swap area
 * (less what the newest image still uses) is full; -EIO (the region then
 * stays resident).
 */
int qnvram_swap_out(struct qnvram_pool *pool, int slot)
{
	struct qnvram_region_entry *e = &pool->meta->entries[slot];
	struct qnvram_region_rt *rt = &pool->rt[slot];
	u64 len = le64_to_cpu(e->length), soff;
	u32 crc = 0;
	int ret;

	lockdep_assert_held(&pool->lock);
	if (!pool->backing.bdev)
		return -ENODEV;
	ret = qnvram_swap_find_gap(pool, len, &soff);
	if (ret)
		return ret;
	rt->swapping = QNVRAM_SWAPPING_OUT;
	rt->swap_to = soff;
	/* A background swap-out of it, if any, is stale now. */
	qnvram_region_changed(pool, slot);
	mutex_unlock(&pool->lock);

	/* Bound to no file, so mapped nowhere: its bytes stay as they are. */
	ret = qnvram_swap_io(pool, true, le64_to_cpu(e->offset), len,
			     qnvram_swap_start(pool->bytes) + soff, &crc);

	mutex_lock(&pool->lock);
	rt->swapping = QNVRAM_SWAPPING_NONE;
	wake_up_all(&pool->swap_wq);
	if (ret)
		return ret;
	e->flags = cpu_to_le32(QNVRAM_ENTRY_USED | QNVRAM_ENTRY_SWAPPED);
	e->offset = cpu_to_le64(soff);
	e->data_crc = cpu_to_le32(crc);
	qnvram_meta_commit(pool);
	rt->dirty = false;	/* its bytes are on flash */
	qnvram_region_changed(pool, slot);
	pool->stats.swap_outs++;
	pool->stats.swap_bytes += len;
	qnvram_genl_event(QNVRAM_EVENT_SWAPPED_OUT, pool, slot);
	return 0;
}

/**
 * qnvram_swap_in() - bring a swapped region back into the pool
 * @pool: the pool; caller holds @pool->lock, which is released for the
 *	I/O and held again on return
 * @slot: a swapped region that is not being swapped
 * @pool_offset: free space of the region's length in the data area, bytes
 *	(reserved here until the region is committed there)
 *
 * Context: process, may sleep.
 * Return: 0; -ENODEV without a backing device; -EIO on a read error or a
 * checksum mismatch (the region then stays swapped).
 */
int qnvram_swap_in(struct qnvram_pool *pool, int slot, u64 pool_offset)
{
	struct qnvram_region_entry *e = &pool->meta->entries[slot];
	struct qnvram_region_rt *rt = &pool->rt[slot];
	u64 len = le64_to_cpu(e->length);
	u32 crc = 0;
	int ret;

	lockdep_assert_held(&pool->lock);
	if (!pool->backing.bdev) {
		pr_warn_ratelimited("region uid %u magic %#x is swapped out, but no backing device is loaded (backing=)\n",
				    le32_to_cpu(e->uid), le32_to_cpu(e->magic));
		return -ENODEV;
	}
	rt->swapping = QNVRAM_SWAPPING_IN;
	rt->swap_to = pool_offset;
	mutex_unlock(&pool->lock);

	/* The space is free in the table: nothing maps or copies it. */
	ret = qnvram_swap_io(pool, false, pool_offset, len,
			     qnvram_swap_start(pool->bytes) +
			     le64_to_cpu(e->offset), &crc);

	mutex_lock(&pool->lock);
	rt->swapping = QNVRAM_SWAPPING_NONE;
	wake_up_all(&pool->swap_wq);
	if (ret)
		return ret;
	if (crc != le32_to_cpu(e->data_crc)) {
		pr_err("swapped region uid %u magic %#x fails its checksum\n",
		       le32_to_cpu(e->uid), le32_to_cpu(e->magic));
		return -EIO;
	}
	e->flags = cpu_to_le32(QNVRAM_ENTRY_USED);
	e->offset = cpu_to_le64(pool_offset);
	e->data_crc = 0;
	qnvram_meta_commit(pool);
	qnvram_region_touch(pool, slot);
	pool->stats.swap_ins++;
	qnvram_genl_event(QNVRAM_EVENT_SWAPPED_IN, pool, slot);
	return 0;
}

/*
 * After a shutdown flush the power is about to go: apps that touch their
 * regions wait freeze_ms, so that nothing they do after the image (writes
 * to files that the image's state does not know about, say) can happen
 * before it. Caller holds @pool->lock, which the waiting faults take.
 */
static void qnvram_freeze(struct qnvram_pool *pool)
{
	unsigned int ms = READ_ONCE(qnvram_freeze_ms);

	lockdep_assert_held(&pool->lock);
	if (ms)
		WRITE_ONCE(pool->frozen_until, jiffies + msecs_to_jiffies(ms));
}

static void qnvram_power_key_work_fn(struct work_struct *work)
{
	struct qnvram_pool *pool = container_of(to_delayed_work(work),
						struct qnvram_pool,
						power_key_work);
	int ret;

	qnvram_genl_event(QNVRAM_EVENT_POWER_KEY, pool, -1);
	mutex_lock(&pool->lock);
	ret = qnvram_flush(pool);
	if (!ret) {
		pool->stats.power_key_flushes++;
		qnvram_freeze(pool);
	}
	mutex_unlock(&pool->lock);
	pr_info("power key held %u ms: flush %s (%d)\n", qnvram_hold_ms,
		ret ? "failed" : "done", ret);
}

/* Atomic context (input core holds the device's event lock). */
static void qnvram_input_event(struct input_handle *handle, unsigned int type,
			       unsigned int code, int value)
{
	struct qnvram_pool *pool = handle->handler->private;
	unsigned int hold_ms = READ_ONCE(qnvram_hold_ms);

	if (type != EV_KEY || code != KEY_POWER)
		return;
	if (value == 1) {
		pool->stats.power_key_presses++;
		if (hold_ms)
			mod_delayed_work(system_long_wq, &pool->power_key_work,
					 msecs_to_jiffies(hold_ms));
	} else if (value == 0) {
		/* Released early: no flush. Autorepeat (2) changes nothing. */
		cancel_delayed_work(&pool->power_key_work);
	}
}

static int qnvram_input_connect(struct input_handler *handler,
				struct input_dev *dev,
				const struct input_device_id *id)
{
	struct input_handle *handle;
	int ret;

	handle = kzalloc(sizeof(*handle), GFP_KERNEL);
	if (!handle)
		return -ENOMEM;
	handle->dev = dev;
	handle->handler = handler;
	handle->name = "qnvram";
	ret = input_register_handle(handle);
	if (ret)
		goto err_free;
	ret = input_open_device(handle);
	if (ret)
		goto err_unregister;
	return 0;

err_unregister:
	input_unregister_handle(handle);
err_free:
	kfree(handle);
	return ret;
}

static void qnvram_input_disconnect(struct input_handle *handle)
{
	input_close_device(handle);
	input_unregister_handle(handle);
	kfree(handle);
}

static const struct input_device_id qnvram_input_ids[] = {
	{
		.flags = INPUT_DEVICE_ID_MATCH_EVBIT |
			 INPUT_DEVICE_ID_MATCH_KEYBIT,
		.evbit = { BIT_MASK(EV_KEY) },
		.keybit = { [BIT_WORD(KEY_POWER)] = BIT_MASK(KEY_POWER) },
	},
	{ },
};

static struct input_handler qnvram_input_handler = {
	.event = qnvram_input_event,
	.connect = qnvram_input_connect,
	.disconnect = qnvram_input_disconnect,
	.name = "qnvram",
	.id_table = qnvram_input_ids,
};

/* Power-off and halt end with RAM gone: save it. A restart keeps RAM. */
static int qnvram_reboot_notify(struct notifier_block *nb,
				unsigned long action, void *data)
{
	struct qnvram_pool *pool = container_of(nb, struct qnvram_pool,
						reboot_nb);
	int ret;

	if (action != SYS_POWER_OFF && action != SYS_HALT)
		return NOTIFY_DONE;
	mutex_lock(&pool->lock);
	if (pool->backing.bdev) {
		ret = qnvram_flush(pool);
		if (!ret) {
			pool->stats.poweroff_flushes++;
			qnvram_freeze(pool);
		}
		pr_info("power-off: flush %s (%d)\n", ret ? "failed" : "done",
			ret);
	}
	mutex_unlock(&pool->lock);
	return NOTIFY_DONE;
}

/**
 * qnvram_triggers_init() - start watching the power key and power-off
 * @pool: the pool
 *
 * Context: process, module init.
 * Return: 0 or a negative errno from input_register_handler().
 */
int qnvram_triggers_init(struct qnvram_pool *pool)
{
	int ret;

	INIT_DELAYED_WORK(&pool->power_key_work, qnvram_power_key_work_fn);
	qnvram_input_handler.private = pool;
	ret = input_register_handler(&qnvram_input_handler);
	if (ret)
		return ret;
	pool->reboot_nb.notifier_call = qnvram_reboot_notify;
	register_reboot_notifier(&pool->reboot_nb);
	return 0;
}

/**
 * qnvram_triggers_exit() - stop watching; waits for a running flush
 * @pool: the pool
 *
 * Context: process, may sleep.
 */
void qnvram_triggers_exit(struct qnvram_pool *pool)
{
	unregister_reboot_notifier(&pool->reboot_nb);
	input_unregister_handler(&qnvram_input_handler);
	cancel_delayed_work_sync(&pool->power_key_work);
}
