/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qNVRAM on-media format: the pool's metadata and the flash image.
 *
 * This file and qnvram_format.c are pure logic with no kernel state, so
 * the host unit tests (tests/unit/) build them unchanged against a shim.
 *
 * Pool (reserved DRAM), all little-endian:
 *
 *   0      meta slot 0   struct qnvram_meta (header + region table)
 *   16K    meta slot 1   the same; the valid slot with the higher
 *                        generation is the current one
 *   64K    data area     regions, QNVRAM_GRANULE aligned, up to pool end
 *
 * A metadata update writes the whole new metadata into the older slot,
 * checksum last, then persists it: a reset at any instant leaves either
 * the old slot (new one torn: bad checksum) or the new one current.
 *
 * Backing device (flash), all little-endian:
 *
 *   0                   image slot 0: header block, metadata, data area
 *   image_bytes         image slot 1: the same; the valid slot with the
 *                       higher sequence number is the current image
 *   2 * image_bytes     swap area: regions swapped out of the pool
 *
 * where image_bytes = QNVRAM_IMG_HDR_BYTES + pool bytes. A flush writes the
 * older image slot: region data (checksummed as it is copied), then the
 * metadata, then the header; each header names its metadata checksum, so a
 * torn flush leaves the previous image current.
 *
 * An image is restorable only while the pool is still what it holds: before
 * the pool first changes after it, its header block is overwritten with a
 * *stale marker* (the same header under QNVRAM_IMG_STALE_MAGIC). A marker
 * of flush N supersedes every image numbered N or lower, so neither that
 * image nor the older one in the other slot is restored.
 *
 * Slot 0's header is at byte 0 for every pool size, slot 1's moves with it.
 * So a header of another pool size in slot 0 is that pool's newest image or
 * marker (a pool writes slot 0 first whenever slot 0 is not its own), and
 * one in slot 1 is no header at all: bytes of another size's data or swap.
 *
 * Everything read from the pool or the device is untrusted: every field is
 * bounded before use (qnvram_meta_check_header(), qnvram_meta_check_entry(),
 * qnvram_img_classify()), and what does not fit is refused or, when the
 * load is told to (salvage=1), dropped (qnvram_load_decide()).
 */
#ifndef _QNVRAM_FORMAT_H
#define _QNVRAM_FORMAT_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/errno.h>
#include <linux/crc32.h>
#include <linux/string.h>
#include <linux/bits.h>
#include <asm/byteorder.h>
/* CRC-32 (IEEE 802.3), chained like zlib's crc32(): start with 0. */
#define qnvram_crc32(crc, p, len)	(~crc32_le(~(crc), (const unsigned char *)(p), (len)))
#else
#include "qnvram_host_shim.h"
#endif

#define QNVRAM_FORMAT_VERSION	1

#define QNVRAM_META_MAGIC	0x314154454d564e51ULL	/* "QNVMETA1" */
#define QNVRAM_IMG_MAGIC	0x31474d494d564e51ULL	/* "QNVMIMG1" */
#define QNVRAM_IMG_STALE_MAGIC	0x314c415453564e51ULL	/* "QNVSTAL1" */

/* Region offsets and lengths are multiples of this many bytes. */
#define QNVRAM_GRANULE		4096ULL
/* Regions per pool: one table entry each. */
#define QNVRAM_MAX_REGIONS	256
/* Bytes per metadata slot, and where the data area starts (64 KiB aligned
 * so that 64 KiB-page kernels can map regions too).
 */
#define QNVRAM_META_SLOT_BYTES	(16ULL * 1024)
#define QNVRAM_NR_META_SLOTS	2
#define QNVRAM_DATA_OFFSET	(64ULL * 1024)
/* Smallest pool that holds the metadata and one region. */
#define QNVRAM_MIN_POOL_BYTES	(QNVRAM_DATA_OFFSET + QNVRAM_GRANULE)
/* The image header block, bytes. */
#define QNVRAM_IMG_HDR_BYTES	4096ULL
#define QNVRAM_NR_IMG_SLOTS	2

/* struct qnvram_region_entry.flags */
#define QNVRAM_ENTRY_USED	BIT(0)	/* the slot describes a region */
#define QNVRAM_ENTRY_SWAPPED	BIT(1)	/* data is in the swap area */
#define QNVRAM_ENTRY_ALL	(QNVRAM_ENTRY_USED | QNVRAM_ENTRY_SWAPPED)

/*
 * The longest region, bytes: QNVRAM_REGION_MAX_BYTES of <linux/qnvram.h>
 * (qnvram_load.c asserts that they agree). A longer table entry was not
 * made by qnvram, and 256 entries of at most this sum to under 2^49 bytes.
 */
#define QNVRAM_ENTRY_MAX_BYTES	BIT_ULL(40)
/*
 * Metadata generations and flush numbers are at most this: a larger one
 * was not counted up by qnvram (2^63 updates), so it does not validate,
 * and counting on from a valid one never wraps to 0 unnoticed.
 */
#define QNVRAM_COUNT_MAX	(BIT_ULL(63) - 1)
/*
 * An adopted pool whose generation is at least this (2^62 updates: never
 * counted, only read from a damaged or crafted pool) is renumbered from 1,
 * so that its commits cannot run into QNVRAM_COUNT_MAX.
 */
#define QNVRAM_META_GEN_REBASE	BIT_ULL(62)
/* struct qnvram_geometry.swap_bytes without a backing device. */
#define QNVRAM_SWAP_UNKNOWN	(~0ULL)

/**
 * struct qnvram_region_entry - one region in the table
 * @flags: QNVRAM_ENTRY_*; 0 for a free slot (all other fields 0 too)
 * @uid: owner's uid
 * @magic: the owner's name for it; (uid, magic) is unique
 * @data_crc: CRC-32 of the data as last written to the backing device:
 *	at swap-out for a swapped entry, at flush in an image's metadata copy
 *	for a resident one; 0 for a resident entry in the pool
 * @offset: bytes; from the pool start when resident, from the swap area
 *	start when swapped
 * @length: bytes, a multiple of QNVRAM_GRANULE, > 0
 */
struct qnvram_region_entry {
	__le32 flags;
	__le32 uid;
	__le32 magic;
	__le32 data_crc;
	__le64 offset;
	__le64 length;
};

/**
 * struct qnvram_meta_header - head of a metadata slot
 * @magic: QNVRAM_META_MAGIC
 * @version: QNVRAM_FORMAT_VERSION
 * @nr_entries: QNVRAM_MAX_REGIONS
 * @pool_bytes: size of the pool this metadata describes
 * @generation: bumped by every update; the higher valid slot wins
 * @data_offset: QNVRAM_DATA_OFFSET
 * @crc: CRC-32 of the whole struct qnvram_meta with @crc = 0
 * @reserved: written as 0, ignored on read (room for compatible additions)
 */
struct qnvram_meta_header {
	__le64 magic;
	__le32 version;
	__le32 nr_entries;
	__le64 pool_bytes;
	__le64 generation;
	__le64 data_offset;
	__le32 crc;
	__le32 reserved[5];
};

/**
 * struct qnvram_meta - one metadata slot's contents
 * @hdr: header
 * @entries: region table
 */
struct qnvram_meta {
	struct qnvram_meta_header hdr;
	struct qnvram_region_entry entries[QNVRAM_MAX_REGIONS];
};

/**
 * struct qnvram_img_header - first block of an image slot on the backing
 *	device; the slot's metadata copy follows at QNVRAM_IMG_HDR_BYTES and
 *	the data area at QNVRAM_IMG_HDR_BYTES + QNVRAM_DATA_OFFSET
 * @magic: QNVRAM_IMG_MAGIC; QNVRAM_IMG_STALE_MAGIC once the pool changed
 *	after the image (a stale marker: every other field as it was)
 * @version: QNVRAM_FORMAT_VERSION
 * @nr_regions: resident regions whose data the image holds
 * @pool_bytes: size of the pool the image was taken from
 * @seq: flush sequence number; the higher valid slot wins
 * @meta_crc: CRC-32 of the metadata copy (its hdr.crc)
 * @crc: CRC-32 of this struct with @crc = 0
 * @reserved: written as 0, ignored on read (room for compatible additions)
 *
 * Every resident entry of the metadata copy carries its own data_crc, so a
 * restore can drop a single damaged region and keep the rest.
 */
struct qnvram_img_header {
	__le64 magic;
	__le32 version;
	__le32 nr_regions;
	__le64 pool_bytes;
	__le64 seq;
	__le32 meta_crc;
	__le32 crc;
	__le32 reserved[6];
};

/**
 * struct qnvram_space - free space of one area (pool data area or swap)
 * @free_bytes: bytes in no region
 * @largest_free_bytes: the largest contiguous free range, bytes
 * @nr_free_ranges: free ranges (fragments)
 */
struct qnvram_space {
	u64 free_bytes;
	u64 largest_free_bytes;
	u32 nr_free_ranges;
};

/**
 * struct qnvram_geometry - what the entries of a table must fit
 * @pool_bytes: the pool's size: resident entries lie in its data area
 * @swap_bytes: bytes of the backing device's swap area (from its start):
 *	swapped entries lie inside it; QNVRAM_SWAP_UNKNOWN without a backing
 *	device (their offsets are then bounded only by not wrapping)
 */
struct qnvram_geometry {
	u64 pool_bytes;
	u64 swap_bytes;
};

/**
 * struct qnvram_extent - pool bytes [@off, @end) written as one piece
 * @off: first byte in the pool
 * @end: one past the last byte
 */
struct qnvram_extent {
	u64 off;
	u64 end;
};

/* What an image slot's header block holds (qnvram_img_classify()). */
enum qnvram_img_kind {
	QNVRAM_IMG_NONE,		/* blank, torn, or fields out of range */
	QNVRAM_IMG_IMAGE,		/* an image of this pool */
	QNVRAM_IMG_MARKER,		/* a stale marker of this pool */
	QNVRAM_IMG_FOREIGN_IMAGE,	/* an image of a pool of another size */
	QNVRAM_IMG_FOREIGN_MARKER,	/* a marker of a pool of another size */
};

/* What a load does with the pool (qnvram_load_decide()). */
enum qnvram_load_action {
	QNVRAM_LOAD_REFUSE,	/* nothing: the module does not load */
	QNVRAM_LOAD_ADOPT,	/* the pool RAM kept (a warm reboot) */
	QNVRAM_LOAD_RESTORE,	/* the current flash image (a cold boot) */
	QNVRAM_LOAD_FORMAT,	/* an empty pool */
};

/* Why a load refuses (qnvram_load_decide()). */
enum qnvram_load_why {
	QNVRAM_WHY_NONE,
	QNVRAM_WHY_FOREIGN_POOL,	/* the pool in RAM is of another size */
	QNVRAM_WHY_POOL_ENTRIES,	/* entries of the pool in RAM do not fit */
	QNVRAM_WHY_READ_ERROR,		/* an image header or table unreadable */
	QNVRAM_WHY_FOREIGN_IMAGE,	/* image slot 0 is another size's image */
	QNVRAM_WHY_IMAGE_ENTRIES,	/* entries of the image do not fit */
};

/**
 * struct qnvram_load_facts - what a load found, for qnvram_load_decide()
 * @ram_slot: qnvram_meta_choose() of the pool's slots: 0, 1, or < 0
 * @ram_foreign: a pool slot holds a sealed table of another pool
 * @ram_bad: entries of @ram_slot's table that do not fit
 *	(qnvram_meta_mark_bad())
 * @backing: a backing device is open
 * @img_slot: the image a cold boot would restore (its header and table
 *	sound): 0 or 1; else -EXDEV (image slot 0 holds an image of another
 *	pool size), -ESTALE (only stale images) or -ENOENT (none)
 * @img_bad: entries of @img_slot's table that do not fit
 * @img_read_error: 0, or the errno of an image header or table that could
 *	not be read
 * @reformat: reformat=1: discard everything
 * @salvage: salvage=1: keep what fits, discard the rest
 */
struct qnvram_load_facts {
	int ram_slot;
	bool ram_foreign;
	unsigned int ram_bad;
	bool backing;
	int img_slot;
	unsigned int img_bad;
	int img_read_error;
	bool reformat;
	bool salvage;
};

/**
 * struct qnvram_load_plan - what a load does, from qnvram_load_decide()
 * @action: enum qnvram_load_action
 * @why: for QNVRAM_LOAD_REFUSE, enum qnvram_load_why
 * @drop: drop the entries that do not fit from the adopted or restored
 *	table first
 * @discard_ram: make neither pool slot a table, durably, before writing
 *	the new one (qnvram_meta_invalidate())
 * @retire_image: mark the current image stale before anything else: it is
 *	not restored, and a cold boot must not bring it back either
 */
struct qnvram_load_plan {
	enum qnvram_load_action action;
	enum qnvram_load_why why;
	bool drop;
	bool discard_ram;
	bool retire_image;
};

void qnvram_meta_format(struct qnvram_meta *meta, u64 pool_bytes);
void qnvram_meta_seal(struct qnvram_meta *meta);
int qnvram_meta_validate(const struct qnvram_meta *meta, u64 pool_bytes,
			 const char **why);
int qnvram_meta_pick(const struct qnvram_meta *slot0,
		     const struct qnvram_meta *slot1, u64 pool_bytes);
int qnvram_meta_check_header(const struct qnvram_meta *meta, u64 pool_bytes,
			     const char **why);
int qnvram_meta_check_entry(const struct qnvram_meta *meta, int i,
			    const struct qnvram_geometry *geo, const char **why);
unsigned int qnvram_meta_mark_bad(const struct qnvram_meta *meta,
				  const struct qnvram_geometry *geo,
				  bool bad[QNVRAM_MAX_REGIONS]);
void qnvram_meta_drop(struct qnvram_meta *meta,
		      const bool bad[QNVRAM_MAX_REGIONS]);
int qnvram_meta_choose(const struct qnvram_meta *slot0,
		       const struct qnvram_meta *slot1, u64 pool_bytes,
		       bool *foreign);
void qnvram_meta_invalidate(struct qnvram_meta *meta);
void qnvram_meta_discard(struct qnvram_meta *const slot[QNVRAM_NR_META_SLOTS],
			 void (*persist)(void *addr, size_t bytes));
unsigned int qnvram_meta_extents(const struct qnvram_meta *meta,
				 struct qnvram_extent ext[QNVRAM_MAX_REGIONS],
				 unsigned int max);
void qnvram_meta_stage(const struct qnvram_meta *meta, const void *pool_base,
		       const struct qnvram_extent *ext, void *dst);
int qnvram_meta_find(const struct qnvram_meta *meta, u32 uid, u32 magic);
int qnvram_meta_free_slot(const struct qnvram_meta *meta);
int qnvram_meta_find_gap(const struct qnvram_meta *meta, bool swapped,
			 u64 area_start, u64 area_end, u64 length,
			 u64 *offset);
void qnvram_meta_space(const struct qnvram_meta *meta, bool swapped,
		       u64 area_start, u64 area_end,
		       struct qnvram_space *space);
u64 qnvram_meta_uid_bytes(const struct qnvram_meta *meta, u32 uid);

void qnvram_img_seal(struct qnvram_img_header *hdr);
int qnvram_img_validate(const struct qnvram_img_header *hdr, u64 pool_bytes,
			const char **why);
int qnvram_img_pick(const struct qnvram_img_header *slot0,
		    const struct qnvram_img_header *slot1, u64 pool_bytes);
void qnvram_img_mark_stale(struct qnvram_img_header *hdr);
int qnvram_img_newest(const struct qnvram_img_header *slot0,
		      const struct qnvram_img_header *slot1, u64 pool_bytes);
u64 qnvram_img_stale_seq(const struct qnvram_img_header *slot0,
			 const struct qnvram_img_header *slot1, u64 pool_bytes);
enum qnvram_img_kind qnvram_img_classify(const struct qnvram_img_header *hdr,
					 u64 pool_bytes, const char **why);
int qnvram_img_choose(const struct qnvram_img_header *slot0,
		      const struct qnvram_img_header *slot1, u64 pool_bytes);

void qnvram_load_decide(const struct qnvram_load_facts *f,
			struct qnvram_load_plan *plan);

/* Bytes of one image slot on the backing device for a pool of @pool_bytes. */
static inline u64 qnvram_img_slot_bytes(u64 pool_bytes)
{
	return QNVRAM_IMG_HDR_BYTES + pool_bytes;
}

/* Where the swap area starts on the backing device, bytes. */
static inline u64 qnvram_swap_start(u64 pool_bytes)
{
	return QNVRAM_NR_IMG_SLOTS * qnvram_img_slot_bytes(pool_bytes);
}

#endif /* _QNVRAM_FORMAT_H */
