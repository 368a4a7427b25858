// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of freeblock's piece size (modules/freeblock/fb_piece.h, the
 * header fb_core.c issues every background block with): a block larger
 * than one request goes as pieces of one size that the block layer never
 * splits.
 *
 * Fixed cases check the numbers of real queues (virtio-blk, null_blk, an
 * NVMe with a 128 KiB optimal-I/O boundary behind a misaligned partition,
 * a 4 KiB-sector disk). The randomized test draws queue limits, block
 * sizes and partition offsets and checks the rules in plain terms: a power
 * of two dividing the block, within every limit, crossing no chunk
 * boundary, and the largest such size. It prints its seed;
 * FB_TEST_SEED=<n> replays one.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fb_piece.h"

#define KIB	1024ULL
#define MIB	(1024 * KIB)

static struct fb_piece_limits queue(u64 max_bytes, u32 max_segments,
				    u32 segment_bytes, u64 chunk_bytes,
				    u32 lbs)
{
	struct fb_piece_limits l = {
		.max_bytes = max_bytes,
		.max_segments = max_segments,
		.segment_bytes = segment_bytes,
		.page_bytes = 4096,
		.max_vec_pages = 256,	/* BIO_MAX_VECS */
		.chunk_bytes = chunk_bytes,
		.logical_block_bytes = lbs,
	};
	return l;
}

static void test_virtio_blk(void **state)
{
	/* max_sectors_kb 1280, 126 segments of at most 4 GiB - 1 */
	struct fb_piece_limits l = queue(1280 * KIB, 126, 0xffffffffU, 0, 512);

	(void)state;
	/* 125 pages = 500 KiB -> 256 KiB */
	assert_int_equal(fb_piece_bytes_of(&l, 1 * MIB, 0), 256 * KIB);
	assert_int_equal(fb_piece_bytes_of(&l, 64 * KIB, 0), 64 * KIB);
	assert_int_equal(fb_piece_bytes_of(&l, 4096, 8 * MIB), 4096);
	/* max_sectors_kb lowered to 128 */
	l.max_bytes = 128 * KIB;
	assert_int_equal(fb_piece_bytes_of(&l, 1 * MIB, 0), 128 * KIB);
}

static void test_null_blk(void **state)
{
	/* max_sectors_kb 127 (not a power of two), 128 segments of 64 KiB */
	struct fb_piece_limits l = queue(127 * KIB, 128, 65536, 0, 512);

	(void)state;
	assert_int_equal(fb_piece_bytes_of(&l, 1 * MIB, 0), 64 * KIB);
	/* segments smaller than a page: 127 of 2 KiB = 254 KiB -> 128 KiB */
	l = queue(1 * MIB, 128, 2048, 0, 512);
	assert_int_equal(fb_piece_bytes_of(&l, 1 * MIB, 0), 128 * KIB);
}

static void test_chunked(void **state)
{
	/* NVMe with a 128 KiB boundary (chunk_sectors = 256) */
	struct fb_piece_limits l = queue(512 * KIB, 128, 0xffffffffU,
					 128 * KIB, 512);

	(void)state;
	assert_int_equal(fb_piece_bytes_of(&l, 1 * MIB, 0), 128 * KIB);
	assert_int_equal(fb_piece_bytes_of(&l, 1 * MIB, 3 * MIB), 128 * KIB);
	/* behind a partition that starts at 1 MiB + 4 KiB */
	assert_int_equal(fb_piece_bytes_of(&l, 1 * MIB, 1 * MIB + 4096), 4096);
	/* ... and at sector 63 (an old DOS layout): one sector */
	assert_int_equal(fb_piece_bytes_of(&l, 64 * KIB, 63 * 512), 512);
	/* a chunk that is not a power of two (96 KiB): 32 KiB pieces */
	l.chunk_bytes = 96 * KIB;
	assert_int_equal(fb_piece_bytes_of(&l, 1 * MIB, 0), 32 * KIB);
	/* a zone (256 MiB) larger than any piece: the queue decides (127
	 * pages = 508 KiB -> 256 KiB)
	 */
	l.chunk_bytes = 256 * MIB;
	assert_int_equal(fb_piece_bytes_of(&l, 1 * MIB, 0), 256 * KIB);
	/* no chunk: the offset does not matter */
	l.chunk_bytes = 0;
	assert_int_equal(fb_piece_bytes_of(&l, 1 * MIB, 4096), 256 * KIB);
}

static void test_logical_block_floor(void **state)
{
	/* 4 KiB sectors: never less than one, even past a tiny limit */
	struct fb_piece_limits l = queue(2048, 128, 65536, 0, 4096);

	(void)state;
	assert_int_equal(fb_piece_bytes_of(&l, 64 * KIB, 0), 4096);
	l = queue(1 * MIB, 128, 65536, 8192, 4096);
	assert_int_equal(fb_piece_bytes_of(&l, 64 * KIB, 0), 8192);
	assert_int_equal(fb_piece_bytes_of(&l, 4096, 0), 4096);
}

/* ---- randomized: the rules in plain terms ---- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: reproducible from the printed seed */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static uint64_t pick(uint64_t lo, uint64_t hi)
{
	return lo + rnd() % (hi - lo + 1);
}

static u64 gcd(u64 a, u64 b)
{
	while (b) {
		u64 t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * Does a piece of @p bytes fit every limit of @l, and does no piece of a
 * range at @off (on the whole disk) cross a chunk boundary? The pieces sit
 * at off + k * p; their offsets in a chunk repeat after chunk / gcd(p,
 * chunk) pieces, so one period covers a range of any length.
 */
static int fits(const struct fb_piece_limits *l, u64 p, u64 off)
{
	u64 seg = l->segment_bytes < l->page_bytes ? l->segment_bytes :
						       l->page_bytes;
	u64 segs = (l->max_segments < 2 ? 2 : l->max_segments) - 1;
	u64 s;

	if (p > l->max_bytes || p > segs * seg ||
	    p > (u64)(l->max_vec_pages - 1) * l->page_bytes)
		return 0;
	if (!l->chunk_bytes)
		return 1;
	for (s = off; s <= off + p * (l->chunk_bytes / gcd(p, l->chunk_bytes));
	     s += p)
		if (s / l->chunk_bytes != (s + p - 1) / l->chunk_bytes)
			return 0;
	return 1;
}

static void test_random_limits(void **state)
{
	const char *env = getenv("FB_TEST_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : 20261130;
	int i;

	(void)state;
	printf("test_fb_piece: seed %llu (FB_TEST_SEED=%llu replays)\n",
	       (unsigned long long)seed, (unsigned long long)seed);
	rng_state = seed ? seed : 1;
	for (i = 0; i < 50000; i++) {
		u32 lbs = 512U << pick(0, 3);
		u64 blksize = (u64)lbs << pick(0, 13);
		u64 chunk = 0;
		struct fb_piece_limits l;
		u64 off, p;

		switch (pick(0, 3)) {
		case 1:	/* a power of two */
			chunk = (u64)lbs << pick(0, 12);
			break;
		case 2:	/* any multiple of the logical block */
			chunk = (u64)lbs * pick(1, 600);
			break;
		}
		l = queue((u64)lbs * pick(1, 4096), pick(1, 300),
			  (u32)pick(512, 2 * MIB), chunk, lbs);
		/* a partition anywhere, then a block-aligned range in it */
		off = (u64)lbs * pick(0, 1 << 20) + blksize * pick(0, 64);
		p = fb_piece_bytes_of(&l, blksize, off);

		if (!p || (p & (p - 1)) || blksize % p || p < lbs)
			fail_msg("seed %llu case %d: piece %llu for block %llu",
				 (unsigned long long)seed, i,
				 (unsigned long long)p,
				 (unsigned long long)blksize);
		/* below the logical block nothing fits: the floor is allowed */
		if (p > lbs && !fits(&l, p, off))
			fail_msg("seed %llu case %d: piece %llu breaks a limit (max %llu, segs %u x %u, chunk %llu, off %llu)",
				 (unsigned long long)seed, i,
				 (unsigned long long)p,
				 (unsigned long long)l.max_bytes,
				 l.max_segments, l.segment_bytes,
				 (unsigned long long)l.chunk_bytes,
				 (unsigned long long)off);
		/* the largest: twice as much breaks a limit or the block */
		if (2 * p <= blksize && fits(&l, 2 * p, off))
			fail_msg("seed %llu case %d: piece %llu, but %llu fits",
				 (unsigned long long)seed, i,
				 (unsigned long long)p,
				 (unsigned long long)(2 * p));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_virtio_blk),
		cmocka_unit_test(test_null_blk),
		cmocka_unit_test(test_chunked),
		cmocka_unit_test(test_logical_block_floor),
		cmocka_unit_test(test_random_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
