/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Freeblock: how large a piece of a background block one bio may be, as a
 * pure function of the queue's limits.
 *
 * A block larger than one request is issued as several bios, each fitting
 * one request: a bio the block layer has to split ends through
 * bio_chain_endio(), so its pieces would never reach fb_bio_end_io() as
 * background and would be counted as foreground (fb_core.c). Every piece
 * has the same size, a power of two, so the pieces of a block stay
 * aligned to it. fb_core.c fills struct fb_piece_limits from the
 * request_queue; the host unit tests (tests/unit/test_fb_piece.c) build
 * this header unchanged against tests/unit/fb_host_shim.h.
 */
#ifndef _FB_PIECE_H
#define _FB_PIECE_H

#ifdef __KERNEL__
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/types.h>
#else
#include "fb_host_shim.h"
#endif

/**
 * struct fb_piece_limits - what bounds one request of a queue
 * @max_bytes: max_sectors, in bytes
 * @max_segments: segments per request (max_segments)
 * @segment_bytes: bytes per segment, at most (max_segment_size)
 * @page_bytes: PAGE_SIZE: one segment per page of the buffer, at most
 * @max_vec_pages: pages one bio holds (BIO_MAX_VECS)
 * @chunk_bytes: chunk_sectors in bytes (a stripe, a zone), 0: none
 * @logical_block_bytes: the logical block size
 */
struct fb_piece_limits {
	u64 max_bytes;
	u32 max_segments;
	u32 segment_bytes;
	u32 page_bytes;
	u32 max_vec_pages;
	u64 chunk_bytes;
	u32 logical_block_bytes;
};

/**
 * fb_piece_bytes_of() - the largest piece of a block that one request holds
 * @l: the queue's limits
 * @blksize: the task's block size, bytes (a power of two, at least
 *	@l->logical_block_bytes)
 * @off: where the task's range begins on the whole disk (partition offset
 *	included), bytes
 *
 * At most max_bytes; at most max_segments - 1 pages, each at most
 * segment_bytes (a buffer not page aligned spans one page more than its
 * length); at most max_vec_pages - 1 pages. On a queue with chunk_bytes the
 * block layer splits a bio at every chunk boundary, so a piece also divides
 * the chunk and @off: pieces aligned to their size then never cross one.
 * Rounded down to a power of two and at least the logical block size.
 * A virtual boundary (virt_boundary_mask, at most a page) needs nothing
 * here: fb_core.c adds a buffer one page per bio_vec, so only the first
 * starts and only the last ends inside a page.
 *
 * Context: any; touches nothing.
 * Return: bytes per piece, a power of two dividing @blksize.
 */
static inline u32 fb_piece_bytes_of(const struct fb_piece_limits *l,
				    u32 blksize, u64 off)
{
	u64 seg = min_t(u64, l->page_bytes, l->segment_bytes);
	u64 segs = max_t(u32, l->max_segments, 2) - 1;
	u64 piece = blksize;

	piece = min_t(u64, piece, l->max_bytes);
	piece = min_t(u64, piece, segs * seg);
	piece = min_t(u64, piece, (u64)(l->max_vec_pages - 1) * l->page_bytes);
	if (l->chunk_bytes) {
		/* x & -x: the largest power of two dividing x */
		piece = min_t(u64, piece, l->chunk_bytes & -l->chunk_bytes);
		if (off)
			piece = min_t(u64, piece, off & -off);
	}
	piece = max_t(u64, piece, l->logical_block_bytes);
	return min_t(u64, rounddown_pow_of_two(piece), blksize);
}

#endif /* _FB_PIECE_H */
