// SPDX-License-Identifier: GPL-2.0-only
/*
 * qNVRAM on-media format: sealing, validation and space accounting of the
 * pool metadata and of flash images. Pure functions over the structs of
 * qnvram_format.h; callers hold whatever lock protects them.
 */
#include "qnvram_format.h"

static u32 qnvram_meta_crc(const struct qnvram_meta *meta)
{
	struct qnvram_meta_header hdr = meta->hdr;
	u32 crc;

	hdr.crc = 0;
	crc = qnvram_crc32(0, &hdr, sizeof(hdr));
	return qnvram_crc32(crc, meta->entries, sizeof(meta->entries));
}

/**
 * qnvram_meta_format() - make @meta an empty table for a new pool
 * @meta: the metadata to fill (QNVRAM_META_SLOT_BYTES at most)
 * @pool_bytes: the pool's size, bytes
 *
 * Generation starts at 1. The caller seals and stores it.
 */
void qnvram_meta_format(struct qnvram_meta *meta, u64 pool_bytes)
{
	memset(meta, 0, sizeof(*meta));
	meta->hdr.magic = cpu_to_le64(QNVRAM_META_MAGIC);
	meta->hdr.version = cpu_to_le32(QNVRAM_FORMAT_VERSION);
	meta->hdr.nr_entries = cpu_to_le32(QNVRAM_MAX_REGIONS);
	meta->hdr.pool_bytes = cpu_to_le64(pool_bytes);
	meta->hdr.generation = cpu_to_le64(1);
	meta->hdr.data_offset = cpu_to_le64(QNVRAM_DATA_OFFSET);
}

/**
 * qnvram_meta_seal() - set the checksum of @meta after a change
 * @meta: the metadata
 */
void qnvram_meta_seal(struct qnvram_meta *meta)
{
	meta->hdr.crc = cpu_to_le32(qnvram_meta_crc(meta));
}

static bool qnvram_ranges_overlap(u64 a, u64 alen, u64 b, u64 blen)
{
	return a < b + blen && b < a + alen;
}

/* An entry on its own: flags, alignment, length and place in its area. */
static int qnvram_entry_check_alone(const struct qnvram_region_entry *e,
				    const struct qnvram_geometry *geo,
				    const char **why)
{
	u32 flags = le32_to_cpu(e->flags);
	u64 off = le64_to_cpu(e->offset);
	u64 len = le64_to_cpu(e->length);
	bool swapped = flags & QNVRAM_ENTRY_SWAPPED;

	if (!flags) {
		if (e->uid || e->magic || e->data_crc || e->offset ||
		    e->length) {
			*why = "free table entry is not zeroed";
			return -EINVAL;
		}
		return 0;
	}
	if (!(flags & QNVRAM_ENTRY_USED) || (flags & ~QNVRAM_ENTRY_ALL)) {
		*why = "table entry has unknown flags";
		return -EINVAL;
	}
	if (!len || len % QNVRAM_GRANULE || off % QNVRAM_GRANULE) {
		*why = "region offset or length not granule aligned";
		return -EINVAL;
	}
	if (!swapped && (off < QNVRAM_DATA_OFFSET || off > geo->pool_bytes ||
			 len > geo->pool_bytes - off)) {
		*why = "resident region outside the data area";
		return -EINVAL;
	}
	if (swapped && off + len < off) {
		*why = "swapped region range wraps";
		return -EINVAL;
	}
	/* Bounds every sum over a table (a uid's bytes, say) far below 2^64. */
	if (len > QNVRAM_ENTRY_MAX_BYTES) {
		*why = "region longer than the longest region";
		return -EINVAL;
	}
	if (swapped && geo->swap_bytes != QNVRAM_SWAP_UNKNOWN &&
	    (off > geo->swap_bytes || len > geo->swap_bytes - off)) {
		*why = "swapped region outside the backing device's swap area";
		return -EINVAL;
	}
	return 0;
}

/**
 * qnvram_meta_check_entry() - whether one table entry fits
 * @meta: the table (untrusted); its header need not be checked
 * @i: the entry, 0 .. QNVRAM_MAX_REGIONS - 1
 * @geo: what the entry must fit: the pool, the swap area
 * @why: set to a static string naming the problem
 *
 * On its own the entry must be free and zeroed, or used with known flags,
 * a granule-aligned length of at most QNVRAM_ENTRY_MAX_BYTES, and a range
 * inside the data area (resident) or the swap area (swapped). Then it must
 * not share its name with, nor overlap in the same area, any other entry
 * that is sound on its own: both entries of such a pair are reported, as
 * neither can be told to be the real one (one of them reads the other's
 * bytes). An entry that is bad on its own does not make others bad.
 *
 * Context: any; O(QNVRAM_MAX_REGIONS).
 * Return: 0 if it fits, -EINVAL if not.
 */
int qnvram_meta_check_entry(const struct qnvram_meta *meta, int i,
			    const struct qnvram_geometry *geo, const char **why)
{
	const struct qnvram_region_entry *e = &meta->entries[i];
	u32 flags = le32_to_cpu(e->flags);
	const char *owhy;
	int j, ret;

	ret = qnvram_entry_check_alone(e, geo, why);
	if (ret || !flags)
		goto out;
	for (j = 0; j < QNVRAM_MAX_REGIONS; j++) {
		const struct qnvram_region_entry *o = &meta->entries[j];
		u32 oflags = le32_to_cpu(o->flags);

		if (j == i || !oflags ||
		    qnvram_entry_check_alone(o, geo, &owhy))
			continue;
		if (o->uid == e->uid && o->magic == e->magic) {
			*why = "two regions with the same uid and magic";
			return -EINVAL;
		}
		if ((oflags & QNVRAM_ENTRY_SWAPPED) ==
		    (flags & QNVRAM_ENTRY_SWAPPED) &&
		    qnvram_ranges_overlap(le64_to_cpu(e->offset),
					  le64_to_cpu(e->length),
					  le64_to_cpu(o->offset),
					  le64_to_cpu(o->length))) {
			*why = "regions overlap";
			return -EINVAL;
		}
	}
out:
	if (!ret)
		*why = "ok";
	return ret;
}

/**
 * qnvram_meta_mark_bad() - find every entry of a table that does not fit
 * @meta: the table (untrusted)
 * @geo: what its entries must fit
 * @bad: set for each entry that qnvram_meta_check_entry() refuses, all
 *	judged on the table as it is (dropping one does not excuse another)
 *
 * Dropping the marked entries (qnvram_meta_drop()) leaves a table whose
 * every entry fits: what is left is sound on its own and conflicts with
 * nothing that was sound before.
 *
 * Context: any; O(QNVRAM_MAX_REGIONS^2) for a full table.
 * Return: the number of marked entries.
 */
unsigned int qnvram_meta_mark_bad(const struct qnvram_meta *meta,
				  const struct qnvram_geometry *geo,
				  bool bad[QNVRAM_MAX_REGIONS])
{
	unsigned int n = 0;
	const char *why;
	int i;

	for (i = 0; i < QNVRAM_MAX_REGIONS; i++) {
		bad[i] = qnvram_meta_check_entry(meta, i, geo, &why) != 0;
		n += bad[i];
	}
	return n;
}

/**
 * qnvram_meta_drop() - free the marked entries of a table
 * @meta: the table; the caller seals it afterwards
 * @bad: the entries to free (qnvram_meta_mark_bad())
 *
 * Context: any.
 */
void qnvram_meta_drop(struct qnvram_meta *meta,
		      const bool bad[QNVRAM_MAX_REGIONS])
{
	int i;

	for (i = 0; i < QNVRAM_MAX_REGIONS; i++)
		if (bad[i])
			memset(&meta->entries[i], 0, sizeof(meta->entries[i]));
}

/**
 * qnvram_meta_check_header() - whether a slot holds a table of this pool
 * @meta: metadata as read from the pool or an image (untrusted)
 * @pool_bytes: the size of the pool it must describe, bytes
 * @why: set to a static string naming the first problem found
 *
 * The header alone (the checksum covers the entries too); the entries are
 * qnvram_meta_check_entry()'s.
 *
 * Context: any.
 * Return: 0; -EBADMSG if magic, version or checksum are wrong (not a
 * table, or a torn write); -EINVAL if it is sealed but made for another
 * pool (another size or geometry) or its generation is out of range
 * (0, or above QNVRAM_COUNT_MAX).
 */
int qnvram_meta_check_header(const struct qnvram_meta *meta, u64 pool_bytes,
			     const char **why)
{
	const struct qnvram_meta_header *h = &meta->hdr;
	u64 gen = le64_to_cpu(h->generation);

	if (le64_to_cpu(h->magic) != QNVRAM_META_MAGIC) {
		*why = "no metadata magic";
		return -EBADMSG;
	}
	if (le32_to_cpu(h->version) != QNVRAM_FORMAT_VERSION) {
		*why = "unknown metadata version";
		return -EBADMSG;
	}
	if (le32_to_cpu(h->crc) != qnvram_meta_crc(meta)) {
		*why = "metadata checksum mismatch";
		return -EBADMSG;
	}
	if (le64_to_cpu(h->pool_bytes) != pool_bytes) {
		*why = "metadata is for a pool of another size";
		return -EINVAL;
	}
	if (le32_to_cpu(h->nr_entries) != QNVRAM_MAX_REGIONS ||
	    le64_to_cpu(h->data_offset) != QNVRAM_DATA_OFFSET) {
		*why = "metadata geometry mismatch";
		return -EINVAL;
	}
	if (!gen || gen > QNVRAM_COUNT_MAX) {
		*why = "metadata generation out of range";
		return -EINVAL;
	}
	*why = "ok";
	return 0;
}

/**
 * qnvram_meta_validate() - check that @meta is a sound table for a pool
 * @meta: metadata as read from the pool or an image (untrusted)
 * @pool_bytes: the size of the pool it must describe, bytes
 * @why: set to a static string naming the first problem found
 *
 * The header (qnvram_meta_check_header()) and every entry
 * (qnvram_meta_check_entry()), with the swap area's size unknown.
 *
 * Context: any.
 * Return: 0 if sound; -EBADMSG if magic, version or checksum are wrong
 * (not a table, or a torn write); -EINVAL if it is sealed but its
 * geometry or entries are inconsistent (a different pool size, regions
 * out of range or overlapping, duplicate names).
 */
int qnvram_meta_validate(const struct qnvram_meta *meta, u64 pool_bytes,
			 const char **why)
{
	const struct qnvram_geometry geo = {
		.pool_bytes = pool_bytes, .swap_bytes = QNVRAM_SWAP_UNKNOWN,
	};
	int i, ret;

	ret = qnvram_meta_check_header(meta, pool_bytes, why);
	for (i = 0; !ret && i < QNVRAM_MAX_REGIONS; i++)
		ret = qnvram_meta_check_entry(meta, i, &geo, why);
	return ret;
}

/**
 * qnvram_meta_pick() - choose the current one of the two metadata slots
 * @slot0: metadata slot 0 (untrusted)
 * @slot1: metadata slot 1 (untrusted)
 * @pool_bytes: the pool's size, bytes
 *
 * Context: any.
 * Return: 0 or 1, the valid slot with the higher generation; -EBADMSG if
 * neither is valid.
 */
int qnvram_meta_pick(const struct qnvram_meta *slot0,
		     const struct qnvram_meta *slot1, u64 pool_bytes)
{
	const char *why;
	bool ok0 = !qnvram_meta_validate(slot0, pool_bytes, &why);
	bool ok1 = !qnvram_meta_validate(slot1, pool_bytes, &why);

	if (ok0 && ok1)
		return le64_to_cpu(slot1->hdr.generation) >
		       le64_to_cpu(slot0->hdr.generation);
	if (ok0)
		return 0;
	if (ok1)
		return 1;
	return -EBADMSG;
}

/**
 * qnvram_meta_choose() - the pool slot a load adopts
 * @slot0: metadata slot 0 (untrusted)
 * @slot1: metadata slot 1 (untrusted)
 * @pool_bytes: the pool's size, bytes
 * @foreign: set when a slot holds a sealed table made for another pool
 *
 * Unlike qnvram_meta_pick(), the entries do not count: the newest table
 * of this pool is the pool's state, and entries of it that do not fit are
 * refused or dropped (qnvram_load_decide()), never silently exchanged for
 * the older slot's table (which would undo the last commit).
 *
 * Context: any.
 * Return: 0 or 1, the slot with a sound header (qnvram_meta_check_header())
 * and the higher generation; -EBADMSG if neither has one.
 */
int qnvram_meta_choose(const struct qnvram_meta *slot0,
		       const struct qnvram_meta *slot1, u64 pool_bytes,
		       bool *foreign)
{
	const char *why;
	int ret0 = qnvram_meta_check_header(slot0, pool_bytes, &why);
	int ret1 = qnvram_meta_check_header(slot1, pool_bytes, &why);

	*foreign = ret0 == -EINVAL || ret1 == -EINVAL;
	if (!ret0 && !ret1)
		return le64_to_cpu(slot1->hdr.generation) >
		       le64_to_cpu(slot0->hdr.generation);
	if (!ret0)
		return 0;
	if (!ret1)
		return 1;
	return -EBADMSG;
}

/**
 * qnvram_meta_invalidate() - make a metadata slot hold no table
 * @meta: the slot; the caller persists its header
 *
 * Clears the header: no magic, and no checksum over what is left. A load
 * that discards a pool does this to both slots, durably, before it writes
 * the new table, so that a reset at any point cannot bring back the
 * discarded table from the slot the new one did not overwrite.
 *
 * Context: any.
 */
void qnvram_meta_invalidate(struct qnvram_meta *meta)
{
	memset(&meta->hdr, 0, sizeof(meta->hdr));
}

/**
 * qnvram_meta_discard() - make neither of a pool's metadata slots a table
 * @slot: the pool's two slots (untrusted contents)
 * @persist: makes bytes of a slot durable (qnvram_persist()); called after
 *	each slot's invalidation
 *
 * The slot with the lower generation goes first: a reset between the two
 * then leaves the newer table, the pool as it was before the load, never
 * the one before that (which would undo a commit).
 *
 * Context: any; as @persist.
 */
void qnvram_meta_discard(struct qnvram_meta *const slot[QNVRAM_NR_META_SLOTS],
			 void (*persist)(void *addr, size_t bytes))
{
	int i = le64_to_cpu(slot[1]->hdr.generation) <
		le64_to_cpu(slot[0]->hdr.generation);
	int n;

	for (n = 0; n < QNVRAM_NR_META_SLOTS; n++, i ^= 1) {
		qnvram_meta_invalidate(slot[i]);
		persist(&slot[i]->hdr, sizeof(slot[i]->hdr));
	}
}

/**
 * qnvram_meta_find() - look a region up by its name
 * @meta: valid metadata
 * @uid: owner
 * @magic: name
 *
 * Return: the entry index, or -ENOENT.
 */
int qnvram_meta_find(const struct qnvram_meta *meta, u32 uid, u32 magic)
{
	int i;

	for (i = 0; i < QNVRAM_MAX_REGIONS; i++) {
		const struct qnvram_region_entry *e = &meta->entries[i];

		if (e->flags && le32_to_cpu(e->uid) == uid &&
		    le32_to_cpu(e->magic) == magic)
			return i;
	}
	return -ENOENT;
}

/**
 * qnvram_meta_free_slot() - find an unused table entry
 * @meta: valid metadata
 *
 * Return: the lowest free entry index, or -ENOSPC when the table is full.
 */
int qnvram_meta_free_slot(const struct qnvram_meta *meta)
{
	int i;

	for (i = 0; i < QNVRAM_MAX_REGIONS; i++)
		if (!meta->entries[i].flags)
			return i;
	return -ENOSPC;
}

static bool qnvram_entry_in_area(const struct qnvram_region_entry *e,
				 bool swapped)
{
	u32 flags = le32_to_cpu(e->flags);

	return flags && !!(flags & QNVRAM_ENTRY_SWAPPED) == swapped;
}

/*
 * Walk the free ranges of an area in address order. Each call returns the
 * free range that starts at or after @pos, or false when there is none.
 * O(n^2) over a 256-entry table: cheap next to the metadata persist that
 * every caller does afterwards.
 */
static bool qnvram_next_free(const struct qnvram_meta *meta, bool swapped,
			     u64 pos, u64 area_end, u64 *start, u64 *end)
{
	bool moved;
	int i;

	do {
		moved = false;
		for (i = 0; i < QNVRAM_MAX_REGIONS; i++) {
			const struct qnvram_region_entry *e =
				&meta->entries[i];
			u64 off = le64_to_cpu(e->offset);
			u64 len = le64_to_cpu(e->length);

			if (qnvram_entry_in_area(e, swapped) &&
			    off <= pos && pos < off + len) {
				pos = off + len;
				moved = true;
			}
		}
	} while (moved);
	if (pos >= area_end)
		return false;
	*start = pos;
	*end = area_end;
	for (i = 0; i < QNVRAM_MAX_REGIONS; i++) {
		const struct qnvram_region_entry *e = &meta->entries[i];
		u64 off = le64_to_cpu(e->offset);

		if (qnvram_entry_in_area(e, swapped) && off > pos &&
		    off < *end)
			*end = off;
	}
	return true;
}

/**
 * qnvram_meta_find_gap() - first-fit search for free space in an area
 * @meta: valid metadata
 * @swapped: search the swap area (between swapped entries) instead of
 *	the pool's data area (between resident entries)
 * @area_start: first usable byte of the area, granule aligned
 * @area_end: end of the area, bytes
 * @length: bytes wanted, a multiple of QNVRAM_GRANULE
 * @offset: set to the start of the lowest free range that fits
 *
 * Return: 0, or -ENOSPC when no free range is large enough.
 */
int qnvram_meta_find_gap(const struct qnvram_meta *meta, bool swapped,
			 u64 area_start, u64 area_end, u64 length,
			 u64 *offset)
{
	u64 pos = area_start, start, end;

	while (qnvram_next_free(meta, swapped, pos, area_end, &start, &end)) {
		if (end - start >= length) {
			*offset = start;
			return 0;
		}
		pos = end;
	}
	return -ENOSPC;
}

/**
 * qnvram_meta_space() - free space and fragmentation of an area
 * @meta: valid metadata
 * @swapped: the swap area instead of the pool's data area
 * @area_start: first usable byte of the area
 * @area_end: end of the area, bytes
 * @space: filled with free bytes, the largest free range and the number
 *	of free ranges
 */
void qnvram_meta_space(const struct qnvram_meta *meta, bool swapped,
		       u64 area_start, u64 area_end,
		       struct qnvram_space *space)
{
	u64 pos = area_start, start, end;

	memset(space, 0, sizeof(*space));
	while (qnvram_next_free(meta, swapped, pos, area_end, &start, &end)) {
		space->free_bytes += end - start;
		if (end - start > space->largest_free_bytes)
			space->largest_free_bytes = end - start;
		space->nr_free_ranges++;
		pos = end;
	}
}

/**
 * qnvram_meta_uid_bytes() - bytes held by one uid, resident or swapped
 * @meta: valid metadata
 * @uid: the owner
 *
 * Entries of a valid table are at most QNVRAM_ENTRY_MAX_BYTES long, so the
 * sum stays under 2^49; it saturates at QNVRAM_COUNT_MAX all the same (a
 * table that was never checked), which leaves room to add one more
 * region's length to it without wrapping.
 *
 * Context: any.
 * Return: the sum of the lengths of @uid's regions, bytes, or
 * QNVRAM_COUNT_MAX if it is larger.
 */
u64 qnvram_meta_uid_bytes(const struct qnvram_meta *meta, u32 uid)
{
	u64 sum = 0, len;
	int i;

	for (i = 0; i < QNVRAM_MAX_REGIONS; i++) {
		const struct qnvram_region_entry *e = &meta->entries[i];

		if (!e->flags || le32_to_cpu(e->uid) != uid)
			continue;
		len = le64_to_cpu(e->length);
		if (len > QNVRAM_COUNT_MAX - sum)
			return QNVRAM_COUNT_MAX;
		sum += len;
	}
	return sum;
}

static bool qnvram_entry_resident(const struct qnvram_region_entry *e)
{
	return e->flags && !(le32_to_cpu(e->flags) & QNVRAM_ENTRY_SWAPPED);
}

/* Neighbours closer than this merge first: one 64 KiB freeblock block. */
#define QNVRAM_EXTENT_FIRST_GAP	(64ULL * 1024)

/**
 * qnvram_meta_extents() - the resident regions of a table as few extents
 * @meta: valid metadata
 * @ext: filled with the extents in offset order
 * @max: at most this many (at least 1)
 *
 * Neighbours merge across ever larger gaps (64 KiB, then doubling) until
 * at most @max extents are left. An extent may so span free pool bytes:
 * qnvram_meta_stage() writes zeros there, never what the pool holds.
 *
 * Context: any; O(QNVRAM_MAX_REGIONS^2).
 * Return: the number of extents in @ext.
 */
unsigned int qnvram_meta_extents(const struct qnvram_meta *meta,
				 struct qnvram_extent ext[QNVRAM_MAX_REGIONS],
				 unsigned int max)
{
	struct qnvram_extent x;
	unsigned int i, j, m, n = 0;
	u64 gap = 0;

	for (i = 0; i < QNVRAM_MAX_REGIONS; i++) {
		const struct qnvram_region_entry *e = &meta->entries[i];

		if (!qnvram_entry_resident(e))
			continue;
		x.off = le64_to_cpu(e->offset);
		x.end = x.off + le64_to_cpu(e->length);
		/* Insertion in offset order: at most 256, no allocation. */
		for (j = n; j > 0 && ext[j - 1].off > x.off; j--)
			ext[j] = ext[j - 1];
		ext[j] = x;
		n++;
	}
	for (;;) {
		for (i = 0, m = 0; i < n; i++) {
			if (m && (ext[i].off <= ext[m - 1].end ||
				  ext[i].off - ext[m - 1].end <= gap)) {
				if (ext[i].end > ext[m - 1].end)
					ext[m - 1].end = ext[i].end;
			} else {
				ext[m++] = ext[i];
			}
		}
		n = m;
		if (n <= max || !max)
			return n;
		/* Doubling ends in "merge everything": n is then 1. */
		if (gap >= BIT_ULL(62))
			gap = ~0ULL;
		else
			gap = gap ? gap * 2 : QNVRAM_EXTENT_FIRST_GAP;
	}
}

/**
 * qnvram_meta_stage() - copy an extent's live bytes, zeros between them
 * @meta: valid metadata, the extent's regions resident in it
 * @pool_base: the pool's bytes
 * @ext: an extent of qnvram_meta_extents() over @meta
 * @dst: @ext->end - @ext->off bytes
 *
 * The bytes of the regions that lie in @ext are copied; every other byte
 * of @dst, in a gap the extent spans, is zero. So an image never carries
 * what a freed region (of another uid, maybe) left in the pool.
 *
 * Context: any; caller keeps @meta and the regions' bytes stable.
 */
void qnvram_meta_stage(const struct qnvram_meta *meta, const void *pool_base,
		       const struct qnvram_extent *ext, void *dst)
{
	const char *src = pool_base;
	u64 pos = ext->off, next_off, next_end;
	char *d = dst;
	int i;

	while (pos < ext->end) {
		/* The lowest region starting at or after pos, in the extent. */
		next_off = ext->end;
		next_end = ext->end;
		for (i = 0; i < QNVRAM_MAX_REGIONS; i++) {
			const struct qnvram_region_entry *e = &meta->entries[i];
			u64 off = le64_to_cpu(e->offset);
			u64 len = le64_to_cpu(e->length);

			if (!qnvram_entry_resident(e) || !len || off < pos ||
			    off >= next_off)
				continue;
			next_off = off;
			next_end = len > ext->end - off ? ext->end : off + len;
		}
		memset(d + (pos - ext->off), 0, next_off - pos);
		memcpy(d + (next_off - ext->off), src + next_off,
		       next_end - next_off);
		pos = next_end;
	}
}

static u32 qnvram_img_crc(const struct qnvram_img_header *hdr)
{
	struct qnvram_img_header copy = *hdr;

	copy.crc = 0;
	return qnvram_crc32(0, &copy, sizeof(copy));
}

/**
 * qnvram_img_seal() - set the checksum of an image header
 * @hdr: the header, all other fields set
 */
void qnvram_img_seal(struct qnvram_img_header *hdr)
{
	hdr->crc = cpu_to_le32(qnvram_img_crc(hdr));
}

/**
 * qnvram_img_validate() - check an image header read from flash
 * @hdr: the header (untrusted)
 * @pool_bytes: the size of the pool it must fit, bytes
 * @why: set to a static string naming the first problem found
 *
 * Only the header: the caller checks the metadata copy against
 * @hdr->meta_crc with qnvram_meta_validate() and each region's data_crc.
 * A stale marker (qnvram_img_mark_stale()) is checked like an image.
 *
 * Context: any.
 * Return: 0; -EBADMSG for no image or a torn one; -EINVAL for an image (or
 * marker) of a pool of another size, or fields out of range (more than
 * QNVRAM_MAX_REGIONS regions, seq 0 or above QNVRAM_COUNT_MAX); -ESTALE
 * for a sound stale marker: the image it was is not the pool's state any
 * more.
 */
int qnvram_img_validate(const struct qnvram_img_header *hdr, u64 pool_bytes,
			const char **why)
{
	u64 magic = le64_to_cpu(hdr->magic);

	if (magic != QNVRAM_IMG_MAGIC && magic != QNVRAM_IMG_STALE_MAGIC) {
		*why = "no image magic";
		return -EBADMSG;
	}
	if (le32_to_cpu(hdr->version) != QNVRAM_FORMAT_VERSION) {
		*why = "unknown image version";
		return -EBADMSG;
	}
	if (le32_to_cpu(hdr->crc) != qnvram_img_crc(hdr)) {
		*why = "image header checksum mismatch";
		return -EBADMSG;
	}
	if (le64_to_cpu(hdr->pool_bytes) != pool_bytes) {
		*why = "image is of a pool of another size";
		return -EINVAL;
	}
	if (le32_to_cpu(hdr->nr_regions) > QNVRAM_MAX_REGIONS ||
	    !le64_to_cpu(hdr->seq) ||
	    le64_to_cpu(hdr->seq) > QNVRAM_COUNT_MAX) {
		*why = "image header fields out of range";
		return -EINVAL;
	}
	if (magic == QNVRAM_IMG_STALE_MAGIC) {
		*why = "stale: the pool changed after this image";
		return -ESTALE;
	}
	*why = "ok";
	return 0;
}

/*
 * The slot among @h[0..1] with the highest sequence number whose header is
 * a sound image (@images) or a sound stale marker (@markers), or -1; slot 0
 * on a tie.
 */
static int qnvram_img_highest(const struct qnvram_img_header *const h[2],
			      u64 pool_bytes, bool images, bool markers)
{
	const char *why;
	int i, ret, best = -1;

	for (i = 0; i < QNVRAM_NR_IMG_SLOTS; i++) {
		ret = qnvram_img_validate(h[i], pool_bytes, &why);
		if (!((!ret && images) || (ret == -ESTALE && markers)))
			continue;
		if (best < 0 || le64_to_cpu(h[i]->seq) > le64_to_cpu(h[best]->seq))
			best = i;
	}
	return best;
}

/**
 * qnvram_img_pick() - choose the current one of the two image slots
 * @slot0: header of image slot 0 (untrusted)
 * @slot1: header of image slot 1 (untrusted)
 * @pool_bytes: the pool's size, bytes
 *
 * Return: 0 or 1, the valid slot with the higher sequence number (slot 0
 * on a tie), provided no stale marker has the same or a higher one;
 * -ESTALE if a stale marker supersedes every valid image (the pool
 * changed after the newest one); -ENOENT if neither slot holds an image
 * or a marker.
 */
int qnvram_img_pick(const struct qnvram_img_header *slot0,
		    const struct qnvram_img_header *slot1, u64 pool_bytes)
{
	const struct qnvram_img_header *const h[2] = { slot0, slot1 };
	int img = qnvram_img_highest(h, pool_bytes, true, false);
	int stale = qnvram_img_highest(h, pool_bytes, false, true);

	if (img >= 0 &&
	    (stale < 0 || le64_to_cpu(h[img]->seq) > le64_to_cpu(h[stale]->seq)))
		return img;
	return stale >= 0 ? -ESTALE : -ENOENT;
}

/**
 * qnvram_img_mark_stale() - turn an image header into its stale marker
 * @hdr: a sealed image header; sealed again as the marker
 *
 * Every field stays as it was (the marker names the flush it supersedes);
 * only the magic changes, so the header no longer validates as an image.
 */
void qnvram_img_mark_stale(struct qnvram_img_header *hdr)
{
	hdr->magic = cpu_to_le64(QNVRAM_IMG_STALE_MAGIC);
	qnvram_img_seal(hdr);
}

/**
 * qnvram_img_newest() - the slot whose header was written last
 * @slot0: header of image slot 0 (untrusted)
 * @slot1: header of image slot 1 (untrusted)
 * @pool_bytes: the pool's size, bytes
 *
 * Images and stale markers count alike: the next image must be numbered
 * above both, and written into the other slot.
 *
 * Return: 0 or 1, the slot with the higher sequence number among sound
 * images and markers (slot 0 on a tie); -ENOENT if neither holds one.
 */
int qnvram_img_newest(const struct qnvram_img_header *slot0,
		      const struct qnvram_img_header *slot1, u64 pool_bytes)
{
	const struct qnvram_img_header *const h[2] = { slot0, slot1 };
	int slot = qnvram_img_highest(h, pool_bytes, true, true);

	return slot >= 0 ? slot : -ENOENT;
}

/**
 * qnvram_img_stale_seq() - the newest flush that a stale marker supersedes
 * @slot0: header of image slot 0 (untrusted)
 * @slot1: header of image slot 1 (untrusted)
 * @pool_bytes: the pool's size, bytes
 *
 * Return: the highest sequence number of a sound stale marker, 0 if
 * neither slot holds one.
 */
u64 qnvram_img_stale_seq(const struct qnvram_img_header *slot0,
			 const struct qnvram_img_header *slot1, u64 pool_bytes)
{
	const struct qnvram_img_header *const h[2] = { slot0, slot1 };
	int stale = qnvram_img_highest(h, pool_bytes, false, true);

	return stale >= 0 ? le64_to_cpu(h[stale]->seq) : 0;
}

/**
 * qnvram_img_classify() - what an image slot's header block holds
 * @hdr: the header (untrusted)
 * @pool_bytes: this pool's size, bytes
 * @why: set to a static string naming what it is or what is wrong
 *
 * A header of another pool size counts only if it is sound as a header of
 * that size (qnvram_img_validate() with its own pool_bytes, which must be a
 * possible pool size); a sealed header of this size with fields out of
 * range is no header.
 *
 * Context: any.
 * Return: enum qnvram_img_kind.
 */
enum qnvram_img_kind qnvram_img_classify(const struct qnvram_img_header *hdr,
					 u64 pool_bytes, const char **why)
{
	u64 theirs = le64_to_cpu(hdr->pool_bytes);
	const char *own;
	int ret;

	ret = qnvram_img_validate(hdr, pool_bytes, why);
	if (!ret)
		return QNVRAM_IMG_IMAGE;
	if (ret == -ESTALE)
		return QNVRAM_IMG_MARKER;
	if (ret == -EBADMSG || theirs == pool_bytes)
		return QNVRAM_IMG_NONE;
	ret = qnvram_img_validate(hdr, theirs, &own);
	if ((ret && ret != -ESTALE) || theirs % QNVRAM_GRANULE ||
	    theirs < QNVRAM_MIN_POOL_BYTES) {
		*why = "image header fields out of range";
		return QNVRAM_IMG_NONE;
	}
	*why = "image is of a pool of another size";
	return ret ? QNVRAM_IMG_FOREIGN_MARKER : QNVRAM_IMG_FOREIGN_IMAGE;
}

/**
 * qnvram_img_choose() - the image slot a cold boot restores
 * @slot0: header of image slot 0 (untrusted)
 * @slot1: header of image slot 1 (untrusted)
 * @pool_bytes: the pool's size, bytes
 *
 * qnvram_img_pick(), except when slot 0 holds a header of another pool
 * size. Slot 0 is at the same place for every size and a pool writes it
 * first whenever it holds another size's header, so such a header is the
 * newest thing on the device: an image of this size in slot 1 is older
 * (the pool changed size since) and is not restored either. A header of
 * another size in slot 1 does not matter: no pool of that size has a
 * header there (qnvram_img_pick() passes it over).
 *
 * Context: any.
 * Return: 0 or 1, the image to restore; -EXDEV when slot 0 holds an image
 * of another pool size (the device's newest state is that pool's); -ESTALE
 * when a stale marker supersedes every image; -ENOENT when there is no
 * image, or slot 0 holds a stale marker of another size.
 */
int qnvram_img_choose(const struct qnvram_img_header *slot0,
		      const struct qnvram_img_header *slot1, u64 pool_bytes)
{
	const char *why;

	switch (qnvram_img_classify(slot0, pool_bytes, &why)) {
	case QNVRAM_IMG_FOREIGN_IMAGE:
		return -EXDEV;
	case QNVRAM_IMG_FOREIGN_MARKER:
		return -ENOENT;
	default:
		return qnvram_img_pick(slot0, slot1, pool_bytes);
	}
}

/**
 * qnvram_load_decide() - what a load does with what it found
 * @f: the facts: the pool slots, the images, the parameters
 * @plan: filled with the action and what to discard on the way
 *
 * In order: reformat=1 formats, discarding the pool in RAM and retiring a
 * current image. A pool in RAM is adopted (a warm reboot), unless entries
 * of it do not fit. Otherwise (a cold boot) the current image is restored,
 * unless the image could not be read, slot 0 holds another size's image
 * (the newest state on the device), or entries of its table do not fit;
 * with no image the pool is formatted; a pool in RAM made for another
 * size is not formatted over. Each "unless" refuses the load, changing
 * nothing, or with salvage=1 discards just that: the entries are dropped,
 * the other-size pool or image is not kept, what cannot be read is gone.
 *
 * Context: any.
 */
void qnvram_load_decide(const struct qnvram_load_facts *f,
			struct qnvram_load_plan *plan)
{
	enum qnvram_load_why why = QNVRAM_WHY_NONE;

	memset(plan, 0, sizeof(*plan));
	if (f->reformat) {
		plan->action = QNVRAM_LOAD_FORMAT;
		plan->discard_ram = true;
		plan->retire_image = f->img_slot >= 0;
		return;
	}
	if (f->ram_slot >= 0) {
		plan->action = QNVRAM_LOAD_ADOPT;
		plan->drop = f->ram_bad > 0;
		if (f->ram_bad)
			why = QNVRAM_WHY_POOL_ENTRIES;
	} else {
		if (f->ram_foreign)
			why = QNVRAM_WHY_FOREIGN_POOL;
		plan->action = QNVRAM_LOAD_FORMAT;
		plan->discard_ram = true;
		if (f->backing && why == QNVRAM_WHY_NONE) {
			if (f->img_read_error)
				why = QNVRAM_WHY_READ_ERROR;
			else if (f->img_slot == -EXDEV)
				why = QNVRAM_WHY_FOREIGN_IMAGE;
			else if (f->img_slot >= 0 && f->img_bad)
				why = QNVRAM_WHY_IMAGE_ENTRIES;
		}
		if (f->backing && f->img_slot >= 0) {
			plan->action = QNVRAM_LOAD_RESTORE;
			plan->drop = f->img_bad > 0;
		}
	}
	/* salvage=1 takes what is left; without it, nothing is changed. */
	if (why != QNVRAM_WHY_NONE && !f->salvage) {
		memset(plan, 0, sizeof(*plan));
		plan->action = QNVRAM_LOAD_REFUSE;
		plan->why = why;
	}
}
