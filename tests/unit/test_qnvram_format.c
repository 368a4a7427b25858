// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the qNVRAM on-media format (modules/qnvram/qnvram_format.c):
 * the A/B metadata slots (seal, validate, pick), the region table (find,
 * free slot, first-fit gap search, free space and fragmentation), the A/B
 * flash image headers and their geometry, and the stale markers that
 * retire an image once the pool changed after it.
 *
 * The on-media magics are written here from their byte strings ("QNVMETA1",
 * "QNVMIMG1", "QNVSTAL1"), not from the header's macros, so the tests also
 * pin the bytes that land on the media.
 *
 * The randomized tests print their seed; QNVRAM_TEST_SEED=<n> replays one.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "qnvram_format.h"

#define GRAN		QNVRAM_GRANULE
#define DOFF		QNVRAM_DATA_OFFSET
/* The default test pool: the metadata slots and 256 granules of data. */
#define POOL		(DOFF + 256 * GRAN)
#define META_MAGIC_BYTES "QNVMETA1"
#define IMG_MAGIC_BYTES	"QNVMIMG1"
#define STALE_MAGIC_BYTES "QNVSTAL1"
#define RES		false		/* find_gap/space: the pool's data area */
#define SWP		true		/* find_gap/space: the swap area */

/* ---- assertions that say what was expected and what was seen ---- */

static const char *errname(long long v)
{
	switch (v) {
	case 0:		return "0";
	case 1:		return "1";
	case -EBADMSG:	return "-EBADMSG";
	case -EINVAL:	return "-EINVAL";
	case -ENOSPC:	return "-ENOSPC";
	case -ENOENT:	return "-ENOENT";
	case -ESTALE:	return "-ESTALE";
	default:	return "?";
	}
}

#define EXPECT_INT(actual, expected, fmt, ...) do {			\
	long long a_ = (long long)(actual);				\
	long long e_ = (long long)(expected);				\
	if (a_ != e_)							\
		fail_msg("%s: expected %lld (%s), got %lld (%s); " fmt,	\
			 #actual, e_, errname(e_), a_, errname(a_),	\
			 ##__VA_ARGS__);				\
} while (0)

#define EXPECT_U64(actual, expected, fmt, ...) do {			\
	unsigned long long a_ = (unsigned long long)(actual);		\
	unsigned long long e_ = (unsigned long long)(expected);		\
	if (a_ != e_)							\
		fail_msg("%s: expected %llu (%#llx), got %llu (%#llx); " fmt, \
			 #actual, e_, e_, a_, a_, ##__VA_ARGS__);	\
} while (0)

#define EXPECT_TRUE(cond, fmt, ...) do {				\
	if (!(cond))							\
		fail_msg("expected %s; " fmt, #cond, ##__VA_ARGS__);	\
} while (0)

/* @why names the problem: set, not "ok", and mentions @needle if given. */
#define EXPECT_WHY(why, needle, fmt, ...) do {				\
	const char *w_ = (why), *n_ = (needle);				\
	if (!w_ || !strcmp(w_, "ok") || (n_ && !strstr(w_, n_)))	\
		fail_msg("why: expected a reason mentioning \"%s\", got \"%s\"; " \
			 fmt, n_ ? n_ : "(any)", w_ ? w_ : "(null)",	\
			 ##__VA_ARGS__);				\
} while (0)

/* ---- seeded PRNG (xorshift64*) ---- */

static u64 rng_state;

static u64 rng(void)
{
	u64 x = rng_state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static u64 rng_below(u64 n)
{
	return rng() % n;
}

static void rng_seed_for(const char *test)
{
	const char *env = getenv("QNVRAM_TEST_SEED");
	u64 seed = env ? strtoull(env, NULL, 0) : 20261130;

	print_message("%s: seed %llu (QNVRAM_TEST_SEED=%llu replays it)\n",
		      test, (unsigned long long)seed,
		      (unsigned long long)seed);
	rng_state = seed ? seed : 1;
}

static void rng_fill(void *p, size_t n)
{
	unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i += 8) {
		u64 r = rng();
		size_t k = n - i < 8 ? n - i : 8;

		memcpy(b + i, &r, k);
	}
}

/* ---- reference CRC-32 (bitwise, IEEE 802.3 reflected), independent of zlib */

static u32 ref_crc32(const void *p, size_t n)
{
	const unsigned char *b = p;
	u32 c = 0xFFFFFFFFu;
	int k;

	while (n--) {
		c ^= *b++;
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xEDB88320u & -(c & 1));
	}
	return ~c;
}

/* ---- builders ---- */

static struct qnvram_meta *meta_new(u64 pool_bytes)
{
	struct qnvram_meta *m = malloc(sizeof(*m));

	assert_non_null(m);
	qnvram_meta_format(m, pool_bytes);
	return m;
}

static void put(struct qnvram_meta *m, int i, u32 flags, u32 uid, u32 magic,
		u64 off, u64 len)
{
	struct qnvram_region_entry *e = &m->entries[i];

	e->flags = cpu_to_le32(flags);
	e->uid = cpu_to_le32(uid);
	e->magic = cpu_to_le32(magic);
	e->data_crc = 0;
	e->offset = cpu_to_le64(off);
	e->length = cpu_to_le64(len);
}

static void put_res(struct qnvram_meta *m, int i, u32 uid, u32 magic,
		    u64 off, u64 len)
{
	put(m, i, QNVRAM_ENTRY_USED, uid, magic, off, len);
}

static void put_swp(struct qnvram_meta *m, int i, u32 uid, u32 magic,
		    u64 off, u64 len)
{
	put(m, i, QNVRAM_ENTRY_USED | QNVRAM_ENTRY_SWAPPED, uid, magic, off, len);
}

static void clear(struct qnvram_meta *m, int i)
{
	memset(&m->entries[i], 0, sizeof(m->entries[i]));
}

static void set_generation(struct qnvram_meta *m, u64 gen)
{
	m->hdr.generation = cpu_to_le64(gen);
}

static int validate(const struct qnvram_meta *m, u64 pool, const char **why)
{
	*why = NULL;
	return qnvram_meta_validate(m, pool, why);
}

/* A sealed table of POOL with resident and swapped regions spread over the
 * table, data_crc set on the swapped ones as after a swap-out.
 */
static struct qnvram_meta *meta_populated(void)
{
	struct qnvram_meta *m = meta_new(POOL);

	put_res(m, 0, 1000, 0x11, DOFF, 4 * GRAN);
	put_res(m, 7, 1000, 0x12, DOFF + 10 * GRAN, 2 * GRAN);
	put_res(m, 100, 1001, 0x11, DOFF + 12 * GRAN, 100 * GRAN);
	put_res(m, 255, 0, 0xFFFFFFFF, POOL - GRAN, GRAN);
	put_swp(m, 3, 1000, 0x13, 0, 8 * GRAN);
	m->entries[3].data_crc = cpu_to_le32(0xDEADBEEF);
	put_swp(m, 200, 1002, 0x11, DOFF, 16 * GRAN);
	m->entries[200].data_crc = cpu_to_le32(0x12345678);
	set_generation(m, 42);
	qnvram_meta_seal(m);
	return m;
}

static void expect_valid(struct qnvram_meta *m, u64 pool, const char *what)
{
	const char *why;
	int ret;

	qnvram_meta_seal(m);
	ret = validate(m, pool, &why);
	EXPECT_INT(ret, 0, "%s: why \"%s\"", what, why ? why : "(null)");
	EXPECT_TRUE(why && !strcmp(why, "ok"), "%s: why \"%s\"", what,
		    why ? why : "(null)");
}

/* Seal @m and expect validate to refuse it as inconsistent. */
static void expect_invalid(struct qnvram_meta *m, u64 pool,
			   const char *needle, const char *what)
{
	const char *why;
	int ret;

	qnvram_meta_seal(m);
	ret = validate(m, pool, &why);
	EXPECT_INT(ret, -EINVAL, "%s: why \"%s\"", what, why ? why : "(null)");
	EXPECT_WHY(why, needle, "%s", what);
}

static void img_make(struct qnvram_img_header *h, u64 pool, u64 seq,
		     u32 nr_regions)
{
	memset(h, 0, sizeof(*h));
	memcpy(&h->magic, IMG_MAGIC_BYTES, 8);
	h->version = cpu_to_le32(QNVRAM_FORMAT_VERSION);
	h->nr_regions = cpu_to_le32(nr_regions);
	h->pool_bytes = cpu_to_le64(pool);
	h->seq = cpu_to_le64(seq);
	h->meta_crc = cpu_to_le32(0xC0FFEE11);
	qnvram_img_seal(h);
}

/* A stale marker of flush @seq: an image header under the stale magic. */
static void stale_make(struct qnvram_img_header *h, u64 pool, u64 seq,
		       u32 nr_regions)
{
	img_make(h, pool, seq, nr_regions);
	memcpy(&h->magic, STALE_MAGIC_BYTES, 8);
	qnvram_img_seal(h);
}

/* ==== CRC and layout ==== */

static void crc32_has_the_ieee_check_value(void **state)
{
	(void)state;
	EXPECT_U64(qnvram_crc32(0, "123456789", 9), 0xCBF43926u,
		   "qnvram_crc32 must be CRC-32/IEEE (zlib, ~crc32_le(~0,..))");
	EXPECT_U64(ref_crc32("123456789", 9), 0xCBF43926u,
		   "the test's reference CRC must agree");
	EXPECT_U64(qnvram_crc32(0, "", 0), 0, "CRC of nothing from 0");
}

static void crc32_chains_like_one_pass(void **state)
{
	static const char s[] = "The qNVRAM pool survives warm reboots.";
	size_t n = sizeof(s) - 1, cut;

	(void)state;
	for (cut = 0; cut <= n; cut++) {
		u32 c = qnvram_crc32(0, s, cut);

		c = qnvram_crc32(c, s + cut, n - cut);
		EXPECT_U64(c, ref_crc32(s, n), "split at %zu", cut);
	}
}

static void structs_have_the_on_media_layout(void **state)
{
	(void)state;
	EXPECT_U64(sizeof(struct qnvram_meta_header), 64, "");
	EXPECT_U64(offsetof(struct qnvram_meta_header, magic), 0, "");
	EXPECT_U64(offsetof(struct qnvram_meta_header, version), 8, "");
	EXPECT_U64(offsetof(struct qnvram_meta_header, nr_entries), 12, "");
	EXPECT_U64(offsetof(struct qnvram_meta_header, pool_bytes), 16, "");
	EXPECT_U64(offsetof(struct qnvram_meta_header, generation), 24, "");
	EXPECT_U64(offsetof(struct qnvram_meta_header, data_offset), 32, "");
	EXPECT_U64(offsetof(struct qnvram_meta_header, crc), 40, "");
	EXPECT_U64(offsetof(struct qnvram_meta_header, reserved), 44, "");

	EXPECT_U64(sizeof(struct qnvram_region_entry), 32, "");
	EXPECT_U64(offsetof(struct qnvram_region_entry, flags), 0, "");
	EXPECT_U64(offsetof(struct qnvram_region_entry, uid), 4, "");
	EXPECT_U64(offsetof(struct qnvram_region_entry, magic), 8, "");
	EXPECT_U64(offsetof(struct qnvram_region_entry, data_crc), 12, "");
	EXPECT_U64(offsetof(struct qnvram_region_entry, offset), 16, "");
	EXPECT_U64(offsetof(struct qnvram_region_entry, length), 24, "");

	EXPECT_U64(sizeof(struct qnvram_meta), 64 + 256 * 32, "");
	EXPECT_TRUE(sizeof(struct qnvram_meta) <= QNVRAM_META_SLOT_BYTES,
		    "a metadata slot must hold the whole table");
	EXPECT_TRUE(QNVRAM_NR_META_SLOTS * QNVRAM_META_SLOT_BYTES <= DOFF,
		    "both slots must end before the data area");
	EXPECT_U64(DOFF % GRAN, 0, "data area must be granule aligned");
	EXPECT_U64(QNVRAM_MIN_POOL_BYTES, DOFF + GRAN, "");

	EXPECT_U64(sizeof(struct qnvram_img_header), 64, "");
	EXPECT_U64(offsetof(struct qnvram_img_header, magic), 0, "");
	EXPECT_U64(offsetof(struct qnvram_img_header, version), 8, "");
	EXPECT_U64(offsetof(struct qnvram_img_header, nr_regions), 12, "");
	EXPECT_U64(offsetof(struct qnvram_img_header, pool_bytes), 16, "");
	EXPECT_U64(offsetof(struct qnvram_img_header, seq), 24, "");
	EXPECT_U64(offsetof(struct qnvram_img_header, meta_crc), 32, "");
	EXPECT_U64(offsetof(struct qnvram_img_header, crc), 36, "");
	EXPECT_U64(offsetof(struct qnvram_img_header, reserved), 40, "");
	EXPECT_TRUE(sizeof(struct qnvram_img_header) <= QNVRAM_IMG_HDR_BYTES,
		    "the header block must hold the image header");
}

/* ==== format, seal, validate ==== */

static void format_writes_little_endian_header_and_empty_table(void **state)
{
	static const unsigned char want[48] = {
		'Q', 'N', 'V', 'M', 'E', 'T', 'A', '1',
		1, 0, 0, 0,			/* version */
		0, 1, 0, 0,			/* nr_entries = 256 */
		0x00, 0x00, 0x11, 0, 0, 0, 0, 0,	/* pool_bytes = 0x110000 */
		1, 0, 0, 0, 0, 0, 0, 0,		/* generation = 1 */
		0x00, 0x00, 0x01, 0, 0, 0, 0, 0,	/* data_offset = 64K */
		0, 0, 0, 0, 0, 0, 0, 0,		/* crc (unsealed), reserved */
	};
	struct qnvram_meta *m = malloc(sizeof(*m));
	const unsigned char *b = (const unsigned char *)m;
	size_t i;

	(void)state;
	assert_non_null(m);
	memset(m, 0xA5, sizeof(*m));	/* format must clear everything */
	qnvram_meta_format(m, POOL);
	EXPECT_U64(POOL, 0x110000, "test constant");
	for (i = 0; i < sizeof(want); i++)
		EXPECT_U64(b[i], want[i], "header byte %zu", i);
	for (i = sizeof(want); i < sizeof(*m); i++)
		EXPECT_U64(b[i], 0, "byte %zu (reserved or entries)", i);
	free(m);
}

static void format_then_seal_validates(void **state)
{
	struct qnvram_meta *m = meta_new(POOL);
	const char *why;

	(void)state;
	qnvram_meta_seal(m);
	EXPECT_INT(validate(m, POOL, &why), 0, "why \"%s\"", why);
	EXPECT_TRUE(!strcmp(why, "ok"), "why \"%s\"", why);
	free(m);

	m = meta_new(QNVRAM_MIN_POOL_BYTES);
	qnvram_meta_seal(m);
	EXPECT_INT(validate(m, QNVRAM_MIN_POOL_BYTES, &why), 0,
		   "smallest pool; why \"%s\"", why);
	free(m);
}

static void unsealed_format_is_a_torn_table(void **state)
{
	struct qnvram_meta *m = meta_new(POOL);
	const char *why;

	(void)state;
	EXPECT_INT(validate(m, POOL, &why), -EBADMSG, "why \"%s\"", why);
	EXPECT_WHY(why, "checksum", "");
	free(m);
}

static void seal_crc_covers_whole_struct_with_crc_zeroed(void **state)
{
	struct qnvram_meta *m = meta_populated();
	struct qnvram_meta *copy = malloc(sizeof(*copy));
	const unsigned char *crc_bytes = (const unsigned char *)&m->hdr.crc;
	u32 want;

	(void)state;
	assert_non_null(copy);
	memcpy(copy, m, sizeof(*m));
	copy->hdr.crc = 0;
	want = ref_crc32(copy, sizeof(*copy));
	EXPECT_U64(le32_to_cpu(m->hdr.crc), want, "");
	EXPECT_U64(crc_bytes[0] | crc_bytes[1] << 8 | crc_bytes[2] << 16 |
		   (u32)crc_bytes[3] << 24, want, "crc stored little-endian");
	free(copy);
	free(m);
}

/* Every single-bit error anywhere in the slot is a torn write. */
static void any_flipped_bit_in_meta_is_ebadmsg(void **state)
{
	struct qnvram_meta *m = meta_populated();
	unsigned char *b = (unsigned char *)m;
	const char *why;
	size_t i;
	int bit;

	(void)state;
	EXPECT_INT(validate(m, POOL, &why), 0, "untouched; why \"%s\"", why);
	for (i = 0; i < sizeof(*m); i++) {
		for (bit = 0; bit < 8; bit++) {
			b[i] ^= 1u << bit;
			EXPECT_INT(validate(m, POOL, &why), -EBADMSG,
				   "bit %d of byte %zu flipped; why \"%s\"",
				   bit, i, why);
			b[i] ^= 1u << bit;
		}
	}
	EXPECT_INT(validate(m, POOL, &why), 0, "restored; why \"%s\"", why);
	free(m);
}

/*
 * An update writes the new table over the older slot, checksum last. Cut it
 * after any 8-byte word, in address order or in reverse: the previous table
 * (the other slot) stays current until the checksum lands.
 */
static void torn_meta_update_keeps_previous_table_current(void **state)
{
	struct qnvram_meta *cur = meta_populated();	/* gen 42, slot 1 */
	struct qnvram_meta *old = meta_populated();	/* gen 41, slot 0 */
	struct qnvram_meta *next = meta_populated();	/* gen 43 */
	struct qnvram_meta *slot0 = malloc(sizeof(*slot0));
	const size_t words = sizeof(*slot0) / 8;
	const size_t crc_word = offsetof(struct qnvram_meta_header, crc) / 8;
	size_t order, n, k;

	(void)state;
	assert_non_null(slot0);
	clear(old, 100);
	set_generation(old, 41);
	qnvram_meta_seal(old);
	put_res(next, 50, 1003, 0x99, DOFF + 112 * GRAN, 64 * GRAN);
	clear(next, 0);
	set_generation(next, 43);
	qnvram_meta_seal(next);
	EXPECT_INT(qnvram_meta_pick(old, cur, POOL), 1, "before the update");

	for (order = 0; order < 2; order++) {
		for (n = 0; n <= words; n++) {
			memcpy(slot0, old, sizeof(*slot0));
			for (k = 0; k < n; k++) {
				size_t w = order ? words - 1 - k : k;

				if (w != crc_word)
					memcpy((char *)slot0 + 8 * w,
					       (char *)next + 8 * w, 8);
			}
			EXPECT_INT(qnvram_meta_pick(slot0, cur, POOL), 1,
				   "%s order, %zu of %zu words written",
				   order ? "reverse" : "address", n, words);
		}
		memcpy((char *)slot0 + 8 * crc_word,
		       (char *)next + 8 * crc_word, 8);
		EXPECT_TRUE(!memcmp(slot0, next, sizeof(*slot0)), "");
		EXPECT_INT(qnvram_meta_pick(slot0, cur, POOL), 0,
			   "checksum written last makes the new table current");
	}
	free(slot0);
	free(next);
	free(old);
	free(cur);
}

static void resealed_bad_magic_or_version_is_ebadmsg(void **state)
{
	struct qnvram_meta *m = meta_populated();
	const char *why;

	(void)state;
	memcpy(&m->hdr.magic, IMG_MAGIC_BYTES, 8);
	qnvram_meta_seal(m);
	EXPECT_INT(validate(m, POOL, &why), -EBADMSG, "image magic in a slot");
	EXPECT_WHY(why, "magic", "");

	memcpy(&m->hdr.magic, META_MAGIC_BYTES, 8);
	m->hdr.version = cpu_to_le32(QNVRAM_FORMAT_VERSION + 1);
	qnvram_meta_seal(m);
	EXPECT_INT(validate(m, POOL, &why), -EBADMSG, "version + 1");
	EXPECT_WHY(why, "version", "");

	m->hdr.version = cpu_to_le32(QNVRAM_FORMAT_VERSION);
	qnvram_meta_seal(m);
	EXPECT_INT(validate(m, POOL, &why), 0, "back to sane; why \"%s\"", why);
	free(m);
}

static void blank_media_is_not_a_table(void **state)
{
	struct qnvram_meta *m = malloc(sizeof(*m));
	const char *why;

	(void)state;
	assert_non_null(m);
	memset(m, 0, sizeof(*m));
	EXPECT_INT(validate(m, POOL, &why), -EBADMSG, "zeroed DRAM");
	memset(m, 0xFF, sizeof(*m));
	EXPECT_INT(validate(m, POOL, &why), -EBADMSG, "all ones");
	free(m);
}

static void sealed_table_of_other_pool_size_is_einval(void **state)
{
	struct qnvram_meta *m = meta_new(POOL + GRAN);
	const char *why;

	(void)state;
	qnvram_meta_seal(m);
	EXPECT_INT(validate(m, POOL, &why), -EINVAL, "one granule larger");
	EXPECT_WHY(why, "size", "");
	EXPECT_INT(validate(m, POOL + GRAN, &why), 0, "its own size");
	free(m);
}

static void sealed_header_geometry_mismatch_is_einval(void **state)
{
	struct qnvram_meta *m = meta_new(POOL);
	const char *why;

	(void)state;
	m->hdr.nr_entries = cpu_to_le32(QNVRAM_MAX_REGIONS - 1);
	qnvram_meta_seal(m);
	EXPECT_INT(validate(m, POOL, &why), -EINVAL, "nr_entries 255");
	EXPECT_WHY(why, "geometry", "nr_entries");

	qnvram_meta_format(m, POOL);
	m->hdr.data_offset = cpu_to_le64(32 * 1024);
	qnvram_meta_seal(m);
	EXPECT_INT(validate(m, POOL, &why), -EINVAL, "data_offset 32K");
	EXPECT_WHY(why, "geometry", "data_offset");

	qnvram_meta_format(m, POOL);
	set_generation(m, 0);
	qnvram_meta_seal(m);
	EXPECT_INT(validate(m, POOL, &why), -EINVAL, "generation 0");
	EXPECT_WHY(why, "generation", "generation 0");
	free(m);
}

/* ==== validate: region entries ==== */

/* Entry 0 resident, entry 1 swapped: the base the cases below break. */
static struct qnvram_meta *meta_base(void)
{
	struct qnvram_meta *m = meta_new(POOL);

	put_res(m, 0, 1000, 1, DOFF + 16 * GRAN, 4 * GRAN);
	put_swp(m, 1, 1000, 2, 0, 8 * GRAN);
	expect_valid(m, POOL, "base table");
	return m;
}

static void validate_rejects_unaligned_offset_or_length(void **state)
{
	struct qnvram_meta *m = meta_base();

	(void)state;
	put_res(m, 5, 1, 1, DOFF + 512, GRAN);
	expect_invalid(m, POOL, "aligned", "resident offset + 512");
	put_res(m, 5, 1, 1, DOFF, GRAN + 1);
	expect_invalid(m, POOL, "aligned", "resident length granule + 1");
	put_res(m, 5, 1, 1, DOFF, GRAN / 2);
	expect_invalid(m, POOL, "aligned", "resident length half granule");
	put_swp(m, 5, 1, 1, 100 * GRAN + 8, GRAN);
	expect_invalid(m, POOL, "aligned", "swapped offset + 8");
	put_swp(m, 5, 1, 1, 100 * GRAN, 3 * GRAN - 1);
	expect_invalid(m, POOL, "aligned", "swapped length 3 granules - 1");
	free(m);
}

static void validate_rejects_zero_length(void **state)
{
	struct qnvram_meta *m = meta_base();

	(void)state;
	put_res(m, 5, 1, 1, DOFF + 64 * GRAN, 0);
	expect_invalid(m, POOL, NULL, "resident length 0");
	put_swp(m, 5, 1, 1, 64 * GRAN, 0);
	expect_invalid(m, POOL, NULL, "swapped length 0");
	free(m);
}

static void validate_rejects_resident_region_outside_data_area(void **state)
{
	struct qnvram_meta *m = meta_base();

	(void)state;
	put_res(m, 5, 1, 1, 0, GRAN);
	expect_invalid(m, POOL, "outside", "offset 0 (metadata slot 0)");
	put_res(m, 5, 1, 1, QNVRAM_META_SLOT_BYTES, GRAN);
	expect_invalid(m, POOL, "outside", "offset 16K (metadata slot 1)");
	put_res(m, 5, 1, 1, DOFF - GRAN, 2 * GRAN);
	expect_invalid(m, POOL, "outside", "straddles the data area start");
	put_res(m, 5, 1, 1, POOL - GRAN, 2 * GRAN);
	expect_invalid(m, POOL, "outside", "straddles the pool end");
	put_res(m, 5, 1, 1, POOL, GRAN);
	expect_invalid(m, POOL, "outside", "starts at the pool end");
	put_res(m, 5, 1, 1, 1ULL << 40, GRAN);
	expect_invalid(m, POOL, "outside", "1 TiB into a 1 MiB pool");
	put_res(m, 5, 1, 1, DOFF, POOL);
	expect_invalid(m, POOL, "outside", "length of the whole pool");
	free(m);
}

/* offset + length wrapping u64 must not pass for "ends before the pool end" */
static void validate_rejects_u64_wrapping_regions(void **state)
{
	struct qnvram_meta *m = meta_base();
	const u64 top = ~(GRAN - 1);	/* the last granule of u64 space */

	(void)state;
	put_res(m, 5, 1, 1, DOFF, top);
	expect_invalid(m, POOL, "outside",
		       "resident: data offset + (2^64 - 4K) wraps to 60K");
	put_res(m, 5, 1, 1, top, 2 * GRAN);
	expect_invalid(m, POOL, "outside",
		       "resident: offset 2^64 - 4K, end wraps to 4K");
	put_res(m, 5, 1, 1, DOFF + GRAN, top - DOFF);
	expect_invalid(m, POOL, "outside",
		       "resident: end wraps to exactly 0");
	put_swp(m, 5, 1, 1, top, 2 * GRAN);
	expect_invalid(m, POOL, "wraps", "swapped: end wraps to 4K");
	put_swp(m, 5, 1, 1, top, GRAN);
	expect_invalid(m, POOL, "wraps", "swapped: end is exactly 2^64");
	put_swp(m, 5, 1, 1, 2 * GRAN, top);
	expect_invalid(m, POOL, "wraps", "swapped: huge length");
	put_swp(m, 5, 1, 1, top - GRAN, GRAN);
	expect_valid(m, POOL, "swapped: ends at 2^64 - 4K, no wrap");
	free(m);
}

static void validate_rejects_overlapping_regions_of_one_area(void **state)
{
	static const struct {
		u64 off, len;
		const char *what;
	} cases[] = {
		{ DOFF + 16 * GRAN, 4 * GRAN, "identical range" },
		{ DOFF + 14 * GRAN, 3 * GRAN, "overlaps its start" },
		{ DOFF + 19 * GRAN, 3 * GRAN, "overlaps its last granule" },
		{ DOFF + 17 * GRAN, 1 * GRAN, "inside it" },
		{ DOFF + 8 * GRAN, 32 * GRAN, "contains it" },
	};
	struct qnvram_meta *m;
	size_t i;
	int idx;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* base's resident region is entry 0 at [16, 20) granules */
		for (idx = 0; idx < 2; idx++) {
			m = meta_base();
			if (idx) {	/* the overlapping one first in the table */
				m->entries[9] = m->entries[0];
				clear(m, 0);
				put_res(m, 0, 1, 1, cases[i].off, cases[i].len);
			} else {
				put_res(m, 9, 1, 1, cases[i].off, cases[i].len);
			}
			expect_invalid(m, POOL, "overlap", cases[i].what);
			free(m);
		}
		/* the same shapes in the swap area */
		m = meta_base();
		put_swp(m, 1, 1000, 2, DOFF + 16 * GRAN, 4 * GRAN);
		put_swp(m, 9, 1, 1, cases[i].off, cases[i].len);
		expect_invalid(m, POOL, "overlap", cases[i].what);
		free(m);
	}
}

static void validate_accepts_adjacent_regions(void **state)
{
	struct qnvram_meta *m = meta_base();

	(void)state;
	put_res(m, 5, 1, 1, DOFF + 12 * GRAN, 4 * GRAN);	/* ends at its start */
	put_res(m, 6, 1, 2, DOFF + 20 * GRAN, 4 * GRAN);	/* starts at its end */
	put_swp(m, 7, 1, 3, 8 * GRAN, GRAN);			/* after swapped [0,8) */
	expect_valid(m, POOL, "touching regions do not overlap");
	free(m);
}

/* The pool and the swap area are different places: equal offsets are fine. */
static void validate_accepts_swapped_overlapping_resident_offsets(void **state)
{
	struct qnvram_meta *m = meta_base();

	(void)state;
	put_swp(m, 5, 1, 1, DOFF + 16 * GRAN, 4 * GRAN);	/* = resident 0 */
	put_swp(m, 6, 1, 2, DOFF, 100 * GRAN);			/* covers it */
	put_res(m, 7, 1, 3, DOFF, 8 * GRAN);			/* under swapped 1 */
	put_res(m, 8, 1, 4, DOFF + 8 * GRAN, 8 * GRAN);
	expect_invalid(m, POOL, "overlap", "swapped 5 and swapped 6 overlap");
	clear(m, 6);
	expect_valid(m, POOL, "resident and swapped share offsets");
	free(m);
}

static void validate_accepts_swapped_regions_beyond_pool_size(void **state)
{
	struct qnvram_meta *m = meta_base();

	(void)state;
	put_swp(m, 5, 1, 1, 1ULL << 40, 1ULL << 32);
	put_swp(m, 6, 1, 2, POOL, 1000 * GRAN);
	expect_valid(m, POOL, "swap area is sized by the device, not the pool");
	free(m);
}

static void validate_rejects_duplicate_uid_and_magic(void **state)
{
	struct qnvram_meta *m = meta_base();

	(void)state;
	put_res(m, 5, 1000, 1, DOFF + 40 * GRAN, GRAN);
	expect_invalid(m, POOL, "same uid", "resident twice");
	put_swp(m, 5, 1000, 1, 40 * GRAN, GRAN);
	expect_invalid(m, POOL, "same uid", "resident and swapped");
	put_swp(m, 5, 1000, 2, 40 * GRAN, GRAN);
	expect_invalid(m, POOL, "same uid", "swapped twice");
	put_res(m, 5, 1001, 1, DOFF + 40 * GRAN, GRAN);
	put_res(m, 6, 1000, 3, DOFF + 41 * GRAN, GRAN);
	put_swp(m, 7, 0, 2, 40 * GRAN, GRAN);
	expect_valid(m, POOL, "same magic other uid, same uid other magic");
	free(m);
}

static void validate_rejects_unknown_flags(void **state)
{
	static const u32 bad[] = {
		QNVRAM_ENTRY_SWAPPED,			/* swapped but not used */
		1u << 2,
		QNVRAM_ENTRY_USED | 1u << 2,
		QNVRAM_ENTRY_ALL | 1u << 31,
		0xFFFFFFFFu,
	};
	struct qnvram_meta *m = meta_base();
	char what[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put(m, 5, bad[i], 1, 1, DOFF + 64 * GRAN, GRAN);
		snprintf(what, sizeof(what), "flags %#x", bad[i]);
		expect_invalid(m, POOL, "unknown flags", what);
	}
	free(m);
}

static void validate_rejects_free_slot_with_leftover_fields(void **state)
{
	struct qnvram_meta *m = meta_base();
	struct qnvram_region_entry *e = &m->entries[5];

	(void)state;
	clear(m, 5);
	e->uid = cpu_to_le32(1);
	expect_invalid(m, POOL, "not zeroed", "free slot with uid");
	clear(m, 5);
	e->magic = cpu_to_le32(1);
	expect_invalid(m, POOL, "not zeroed", "free slot with magic");
	clear(m, 5);
	e->data_crc = cpu_to_le32(1);
	expect_invalid(m, POOL, "not zeroed", "free slot with data_crc");
	clear(m, 5);
	e->offset = cpu_to_le64(DOFF);
	expect_invalid(m, POOL, "not zeroed", "free slot with offset");
	clear(m, 5);
	e->length = cpu_to_le64(1ULL << 63);
	expect_invalid(m, POOL, "not zeroed", "free slot with length");
	clear(m, 5);
	expect_valid(m, POOL, "zeroed again");
	free(m);
}

static void validate_accepts_full_table_filling_the_pool(void **state)
{
	struct qnvram_meta *m = meta_new(POOL);
	int i;

	(void)state;
	for (i = 0; i < QNVRAM_MAX_REGIONS; i++)	/* reverse address order */
		put_res(m, i, i % 3, i, POOL - (i + 1) * GRAN, GRAN);
	m->entries[17].data_crc = cpu_to_le32(0xABCD);	/* as in an image */
	expect_valid(m, POOL, "256 one-granule regions");
	clear(m, 3);
	put_res(m, 3, 7, 7, DOFF, 256 * GRAN);
	expect_invalid(m, POOL, "overlap", "one more over all of them");
	clear(m, 3);
	expect_valid(m, POOL, "a hole in the table");
	free(m);
}

static void validate_handles_pools_beyond_4GiB(void **state)
{
	const u64 pool = 64ULL << 30;
	struct qnvram_meta *m = meta_new(pool);
	u64 off;

	(void)state;
	put_res(m, 0, 1, 1, 5ULL << 30, 1ULL << 30);
	put_res(m, 1, 1, 2, pool - (1ULL << 32), 1ULL << 32);
	expect_valid(m, pool, "regions above 4 GiB");
	put_res(m, 2, 1, 3, (5ULL << 30) + (1ULL << 32), GRAN);
	expect_valid(m, pool, "4 GiB apart, no false overlap on truncation");
	put_res(m, 3, 1, 4, (1ULL << 32) + GRAN, 1ULL << 30);
	expect_invalid(m, pool, "overlap", "overlaps region 0 above 4 GiB");
	clear(m, 3);
	EXPECT_INT(qnvram_meta_find_gap(m, RES, DOFF, pool, 2ULL << 30, &off),
		   0, "");
	EXPECT_U64(off, DOFF, "the first 5 GiB are free");
	EXPECT_INT(qnvram_meta_find_gap(m, RES, DOFF, pool, 8ULL << 30, &off),
		   0, "");
	EXPECT_U64(off, (9ULL << 30) + GRAN, "first hole of 8 GiB");
	free(m);
}

/* ==== pick ==== */

static void meta_pick_takes_higher_generation_when_both_valid(void **state)
{
	struct qnvram_meta *a = meta_populated(), *b = meta_populated();

	(void)state;
	set_generation(a, 7);
	set_generation(b, 8);
	qnvram_meta_seal(a);
	qnvram_meta_seal(b);
	EXPECT_INT(qnvram_meta_pick(a, b, POOL), 1, "gen 7 vs 8");
	EXPECT_INT(qnvram_meta_pick(b, a, POOL), 0, "gen 8 vs 7");

	set_generation(a, 0xFFFFFFFFULL);
	set_generation(b, 0x100000000ULL);
	qnvram_meta_seal(a);
	qnvram_meta_seal(b);
	EXPECT_INT(qnvram_meta_pick(a, b, POOL), 1, "generation is 64-bit");
	EXPECT_INT(qnvram_meta_pick(b, a, POOL), 0, "generation is 64-bit");

	set_generation(b, 0xFFFFFFFFULL);
	qnvram_meta_seal(b);
	EXPECT_INT(qnvram_meta_pick(a, b, POOL), 0, "equal generations: slot 0");
	free(a);
	free(b);
}

static void meta_pick_takes_the_other_slot_when_one_is_torn(void **state)
{
	struct qnvram_meta *a = meta_populated(), *b = meta_populated();

	(void)state;
	set_generation(b, 1000);	/* newer but torn */
	qnvram_meta_seal(b);
	b->entries[77].length ^= cpu_to_le64(GRAN);
	EXPECT_INT(qnvram_meta_pick(a, b, POOL), 0, "slot 1 torn");
	EXPECT_INT(qnvram_meta_pick(b, a, POOL), 1, "slot 0 torn");
	free(a);
	free(b);
}

static void meta_pick_both_torn_is_ebadmsg(void **state)
{
	struct qnvram_meta *a = meta_populated(), *b = meta_populated();

	(void)state;
	a->hdr.generation ^= cpu_to_le64(1);
	b->hdr.crc ^= cpu_to_le32(0x80000000u);
	EXPECT_INT(qnvram_meta_pick(a, b, POOL), -EBADMSG, "");
	memset(a, 0, sizeof(*a));
	memset(b, 0xFF, sizeof(*b));
	EXPECT_INT(qnvram_meta_pick(a, b, POOL), -EBADMSG, "blank media");
	free(a);
	free(b);
}

static void meta_pick_skips_sealed_table_of_other_pool_size(void **state)
{
	struct qnvram_meta *a = meta_populated();
	struct qnvram_meta *other = meta_new(2 * POOL);
	const char *why;

	(void)state;
	set_generation(other, 1000);
	qnvram_meta_seal(other);
	EXPECT_INT(validate(other, POOL, &why), -EINVAL, "why \"%s\"", why);
	EXPECT_INT(qnvram_meta_pick(a, other, POOL), 0, "newer, other size");
	EXPECT_INT(qnvram_meta_pick(other, a, POOL), 1, "newer, other size");
	EXPECT_INT(qnvram_meta_pick(other, other, POOL), -EBADMSG,
		   "neither slot fits the pool");
	free(other);
	free(a);
}

static void meta_pick_skips_sealed_but_inconsistent_table(void **state)
{
	struct qnvram_meta *a = meta_populated(), *b = meta_populated();

	(void)state;
	put_res(b, 1, 5, 5, DOFF + GRAN, GRAN);	/* inside entry 0 */
	set_generation(b, 1000);
	qnvram_meta_seal(b);
	EXPECT_INT(qnvram_meta_pick(a, b, POOL), 0, "overlapping newer slot");
	free(a);
	free(b);
}

/* ==== find, free slot, uid bytes ==== */

static void find_returns_entry_of_uid_and_magic_or_enoent(void **state)
{
	struct qnvram_meta *m = meta_populated();

	(void)state;
	EXPECT_INT(qnvram_meta_find(m, 1000, 0x11), 0, "");
	EXPECT_INT(qnvram_meta_find(m, 1000, 0x12), 7, "");
	EXPECT_INT(qnvram_meta_find(m, 1001, 0x11), 100, "same magic, uid 1001");
	EXPECT_INT(qnvram_meta_find(m, 0, 0xFFFFFFFF), 255, "last entry");
	EXPECT_INT(qnvram_meta_find(m, 1000, 0x13), 3, "swapped entry");
	EXPECT_INT(qnvram_meta_find(m, 1002, 0x11), 200, "swapped entry");
	EXPECT_INT(qnvram_meta_find(m, 1002, 0x12), -ENOENT, "");
	EXPECT_INT(qnvram_meta_find(m, 1003, 0x11), -ENOENT, "unknown uid");
	EXPECT_INT(qnvram_meta_find(m, 0x11, 1000), -ENOENT, "uid/magic swapped");
	EXPECT_INT(qnvram_meta_find(m, 0, 0), -ENOENT, "free slots match nothing");
	clear(m, 7);
	EXPECT_INT(qnvram_meta_find(m, 1000, 0x12), -ENOENT, "after free");
	free(m);
}

static void free_slot_is_lowest_unused_or_enospc_when_full(void **state)
{
	struct qnvram_meta *m = meta_new(POOL);
	int i;

	(void)state;
	EXPECT_INT(qnvram_meta_free_slot(m), 0, "empty table");
	put_res(m, 0, 1, 0, DOFF, GRAN);
	put_swp(m, 1, 1, 1, 0, GRAN);
	put_res(m, 3, 1, 3, DOFF + 3 * GRAN, GRAN);
	EXPECT_INT(qnvram_meta_free_slot(m), 2, "hole at 2");
	for (i = 0; i < QNVRAM_MAX_REGIONS; i++)
		put_res(m, i, 1, i, DOFF + i * GRAN, GRAN);
	EXPECT_INT(qnvram_meta_free_slot(m), -ENOSPC, "full table");
	clear(m, 255);
	EXPECT_INT(qnvram_meta_free_slot(m), 255, "last one freed");
	clear(m, 128);
	EXPECT_INT(qnvram_meta_free_slot(m), 128, "lowest of 128, 255");
	free(m);
}

static void uid_bytes_sums_resident_and_swapped_regions_of_uid(void **state)
{
	struct qnvram_meta *m = meta_populated();

	(void)state;
	EXPECT_U64(qnvram_meta_uid_bytes(m, 1000), (4 + 2 + 8) * GRAN,
		   "two resident and one swapped");
	EXPECT_U64(qnvram_meta_uid_bytes(m, 1001), 100 * GRAN, "");
	EXPECT_U64(qnvram_meta_uid_bytes(m, 1002), 16 * GRAN, "swapped only");
	EXPECT_U64(qnvram_meta_uid_bytes(m, 0), GRAN, "uid 0 (root) region");
	EXPECT_U64(qnvram_meta_uid_bytes(m, 4242), 0, "no regions");
	put_swp(m, 50, 1002, 0x22, 1ULL << 40, 5ULL << 30);
	put_swp(m, 51, 1002, 0x23, 1ULL << 41, 3ULL << 30);
	EXPECT_U64(qnvram_meta_uid_bytes(m, 1002), 16 * GRAN + (8ULL << 30),
		   "sums beyond 4 GiB in 64 bits");
	clear(m, 3);
	EXPECT_U64(qnvram_meta_uid_bytes(m, 1000), 6 * GRAN, "after free");
	free(m);
}

/* ==== find_gap ==== */

static void find_gap_in_empty_area_returns_area_start(void **state)
{
	struct qnvram_meta *m = meta_new(POOL);
	u64 off = 1;

	(void)state;
	EXPECT_INT(qnvram_meta_find_gap(m, RES, DOFF, POOL, GRAN, &off), 0, "");
	EXPECT_U64(off, DOFF, "one granule");
	off = 1;
	EXPECT_INT(qnvram_meta_find_gap(m, RES, DOFF, POOL, POOL - DOFF, &off),
		   0, "");
	EXPECT_U64(off, DOFF, "the whole data area");
	off = 1;
	EXPECT_INT(qnvram_meta_find_gap(m, RES, DOFF, POOL, POOL - DOFF + GRAN,
					&off), -ENOSPC, "one granule too many");
	EXPECT_U64(off, 1, "offset untouched on -ENOSPC");
	EXPECT_INT(qnvram_meta_find_gap(m, SWP, 0, 1ULL << 40, 1ULL << 39,
					&off), 0, "");
	EXPECT_U64(off, 0, "swap area start");
	EXPECT_INT(qnvram_meta_find_gap(m, RES, POOL, POOL, GRAN, &off),
		   -ENOSPC, "empty area");
	free(m);
}

static void find_gap_exact_fit_uses_the_hole(void **state)
{
	struct qnvram_meta *m = meta_new(POOL);
	u64 off = 0;

	(void)state;
	put_res(m, 0, 1, 1, DOFF, 4 * GRAN);
	put_res(m, 1, 1, 2, DOFF + 6 * GRAN, POOL - DOFF - 8 * GRAN);
	/* free: [4, 6) and the last 2 granules */
	EXPECT_INT(qnvram_meta_find_gap(m, RES, DOFF, POOL, 2 * GRAN, &off),
		   0, "");
	EXPECT_U64(off, DOFF + 4 * GRAN, "2-granule hole between regions");
	put_res(m, 2, 1, 3, off, 2 * GRAN);
	EXPECT_INT(qnvram_meta_find_gap(m, RES, DOFF, POOL, 2 * GRAN, &off),
		   0, "");
	EXPECT_U64(off, POOL - 2 * GRAN, "then the 2 granules at the end");
	put_res(m, 3, 1, 4, off, 2 * GRAN);
	expect_valid(m, POOL, "exact fits");
	EXPECT_INT(qnvram_meta_find_gap(m, RES, DOFF, POOL, GRAN, &off),
		   -ENOSPC, "pool full");
	free(m);
}

/*
 * Data area, in granules from DOFF, table in non-address order:
 *   [0,2) used  [2,3) free  [3,5) used  [5,8) free  [8,10) used
 *   [10,15) free  [15,16) used  [16,256) free
 */
static struct qnvram_meta *meta_holes(void)
{
	struct qnvram_meta *m = meta_new(POOL);

	put_res(m, 9, 1, 1, DOFF + 15 * GRAN, 1 * GRAN);
	put_res(m, 2, 1, 2, DOFF + 3 * GRAN, 2 * GRAN);
	put_res(m, 200, 1, 3, DOFF, 2 * GRAN);
	put_res(m, 0, 1, 4, DOFF + 8 * GRAN, 2 * GRAN);
	expect_valid(m, POOL, "holes table");
	return m;
}

static void find_gap_is_first_fit_over_holes_between_regions(void **state)
{
	static const struct {
		u64 granules, at;
	} cases[] = {
		{ 1, 2 }, { 2, 5 }, { 3, 5 }, { 4, 10 }, { 5, 10 },
		{ 6, 16 }, { 240, 16 },
	};
	struct qnvram_meta *m = meta_holes();
	size_t i;
	u64 off;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		EXPECT_INT(qnvram_meta_find_gap(m, RES, DOFF, POOL,
						cases[i].granules * GRAN, &off),
			   0, "%llu granules",
			   (unsigned long long)cases[i].granules);
		EXPECT_U64((off - DOFF) / GRAN, cases[i].at,
			   "%llu granules: lowest hole that fits (granule)",
			   (unsigned long long)cases[i].granules);
	}
	EXPECT_INT(qnvram_meta_find_gap(m, RES, DOFF, POOL, 241 * GRAN, &off),
		   -ENOSPC, "larger than the tail");
	free(m);
}

static void find_gap_skips_chains_of_adjacent_regions(void **state)
{
	struct qnvram_meta *m = meta_new(POOL);
	u64 off;
	int i;

	(void)state;
	/* [0, 8) granules in 8 adjacent regions, highest first in the table */
	for (i = 0; i < 8; i++)
		put_res(m, i, 1, i, DOFF + (7 - i) * GRAN, GRAN);
	put_res(m, 8, 1, 8, DOFF + 9 * GRAN, GRAN);
	EXPECT_INT(qnvram_meta_find_gap(m, RES, DOFF, POOL, GRAN, &off), 0, "");
	EXPECT_U64(off, DOFF + 8 * GRAN, "right after the chain");
	EXPECT_INT(qnvram_meta_find_gap(m, RES, DOFF, POOL, 2 * GRAN, &off),
		   0, "");
	EXPECT_U64(off, DOFF + 10 * GRAN, "after the lone region at 9");
	free(m);
}

static void find_gap_ignores_regions_of_the_other_area(void **state)
{
	struct qnvram_meta *m = meta_new(POOL);
	u64 off;

	(void)state;
	put_swp(m, 0, 1, 1, 0, POOL);		/* swap [0, POOL) */
	put_res(m, 1, 1, 2, DOFF, 32 * GRAN);	/* pool [DOFF, DOFF + 32G) */
	EXPECT_INT(qnvram_meta_find_gap(m, RES, DOFF, POOL, GRAN, &off), 0, "");
	EXPECT_U64(off, DOFF + 32 * GRAN, "swapped region does not block");
	EXPECT_INT(qnvram_meta_find_gap(m, SWP, 0, 2 * POOL, GRAN, &off), 0, "");
	EXPECT_U64(off, POOL, "resident region does not block the swap area");
	clear(m, 0);
	EXPECT_INT(qnvram_meta_find_gap(m, SWP, 0, 2 * POOL, GRAN, &off), 0, "");
	EXPECT_U64(off, 0, "empty swap area");
	free(m);
}

static void find_gap_respects_area_bounds(void **state)
{
	struct qnvram_meta *m = meta_new(POOL);
	u64 off;

	(void)state;
	put_res(m, 0, 1, 1, DOFF, 4 * GRAN);
	put_res(m, 1, 1, 2, DOFF + 10 * GRAN, 4 * GRAN);
	EXPECT_INT(qnvram_meta_find_gap(m, RES, DOFF + 2 * GRAN, POOL, GRAN,
					&off), 0, "");
	EXPECT_U64(off, DOFF + 4 * GRAN, "area starts inside a region");
	EXPECT_INT(qnvram_meta_find_gap(m, RES, DOFF + 5 * GRAN, POOL,
					5 * GRAN, &off), 0, "");
	EXPECT_U64(off, DOFF + 5 * GRAN, "area starts inside a hole");
	EXPECT_INT(qnvram_meta_find_gap(m, RES, DOFF + 5 * GRAN, POOL,
					6 * GRAN, &off), 0, "");
	EXPECT_U64(off, DOFF + 14 * GRAN, "hole cut by the area start");
	EXPECT_INT(qnvram_meta_find_gap(m, RES, DOFF, DOFF + 12 * GRAN,
					6 * GRAN, &off), 0, "");
	EXPECT_U64(off, DOFF + 4 * GRAN, "");
	EXPECT_INT(qnvram_meta_find_gap(m, RES, DOFF, DOFF + 12 * GRAN,
					7 * GRAN, &off), -ENOSPC,
		   "area ends inside a region");
	EXPECT_INT(qnvram_meta_find_gap(m, RES, DOFF, DOFF + 20 * GRAN,
					6 * GRAN, &off), 0, "");
	EXPECT_U64(off, DOFF + 4 * GRAN, "");
	EXPECT_INT(qnvram_meta_find_gap(m, RES, DOFF + 4 * GRAN,
					DOFF + 20 * GRAN, 7 * GRAN, &off),
		   -ENOSPC, "6 free, 6 free: neither is 7");
	free(m);
}

static void find_gap_enospc_when_fragmented_though_total_suffices(void **state)
{
	struct qnvram_meta *m = meta_new(POOL);
	struct qnvram_space sp;
	u64 off;
	int i;

	(void)state;
	for (i = 0; i < 128; i++)	/* every other granule used */
		put_res(m, i, 1, i, DOFF + 2 * i * GRAN, GRAN);
	expect_valid(m, POOL, "checkerboard");
	qnvram_meta_space(m, RES, DOFF, POOL, &sp);
	EXPECT_U64(sp.free_bytes, 128 * GRAN, "half the area is free");
	EXPECT_U64(sp.largest_free_bytes, GRAN, "");
	EXPECT_U64(sp.nr_free_ranges, 128, "");
	EXPECT_INT(qnvram_meta_find_gap(m, RES, DOFF, POOL, 2 * GRAN, &off),
		   -ENOSPC, "128 granules free, none two in a row");
	EXPECT_INT(qnvram_meta_find_gap(m, RES, DOFF, POOL, GRAN, &off), 0, "");
	EXPECT_U64(off, DOFF + GRAN, "");
	free(m);
}

/* ==== space ==== */

static void expect_space(const struct qnvram_meta *m, bool swapped,
			 u64 start, u64 end, u64 free_g, u64 largest_g,
			 u32 ranges, const char *what)
{
	struct qnvram_space sp;

	memset(&sp, 0x5A, sizeof(sp));
	qnvram_meta_space(m, swapped, start, end, &sp);
	EXPECT_U64(sp.free_bytes, free_g * GRAN, "%s", what);
	EXPECT_U64(sp.largest_free_bytes, largest_g * GRAN, "%s", what);
	EXPECT_U64(sp.nr_free_ranges, ranges, "%s", what);
}

static void space_of_empty_and_full_areas(void **state)
{
	struct qnvram_meta *m = meta_new(POOL);

	(void)state;
	expect_space(m, RES, DOFF, POOL, 256, 256, 1, "empty pool");
	expect_space(m, SWP, 0, 1024 * GRAN, 1024, 1024, 1, "empty swap");
	expect_space(m, RES, POOL, POOL, 0, 0, 0, "zero-sized area");
	put_res(m, 0, 1, 1, DOFF, 256 * GRAN);
	expect_space(m, RES, DOFF, POOL, 0, 0, 0, "one region fills it");
	expect_space(m, SWP, 0, 1024 * GRAN, 1024, 1024, 1,
		     "resident region not in the swap area");
	free(m);
}

static void space_tracks_alloc_and_free_patterns(void **state)
{
	struct qnvram_meta *m = meta_new(POOL);
	u64 off;
	int i;

	(void)state;
	/* A = 2, B = 1, C = 3, D = 2 granules, allocated first fit */
	static const u64 sizes[] = { 2, 1, 3, 2 };

	for (i = 0; i < 4; i++) {
		EXPECT_INT(qnvram_meta_find_gap(m, RES, DOFF, POOL,
						sizes[i] * GRAN, &off), 0, "");
		put_res(m, i, 1, i, off, sizes[i] * GRAN);
	}
	EXPECT_U64(off, DOFF + 6 * GRAN, "D after A, B, C");
	expect_space(m, RES, DOFF, POOL, 248, 248, 1, "A B C D allocated");
	clear(m, 1);
	expect_space(m, RES, DOFF, POOL, 249, 248, 2, "B freed: hole of 1");
	clear(m, 3);
	expect_space(m, RES, DOFF, POOL, 251, 250, 2,
		     "D freed: merges with the tail");
	clear(m, 2);
	expect_space(m, RES, DOFF, POOL, 254, 254, 1,
		     "C freed: B..tail is one range");
	clear(m, 0);
	expect_space(m, RES, DOFF, POOL, 256, 256, 1, "all freed");

	put_res(m, 0, 1, 0, DOFF + 1 * GRAN, GRAN);
	put_res(m, 1, 1, 1, DOFF + 3 * GRAN, GRAN);
	put_res(m, 2, 1, 2, POOL - GRAN, GRAN);
	expect_space(m, RES, DOFF, POOL, 253, 251, 3,
		     "holes at the start, in between, none at the end");
	put_swp(m, 3, 1, 3, 4 * GRAN, 4 * GRAN);
	expect_space(m, SWP, 0, 16 * GRAN, 12, 8, 2, "swap area");
	expect_space(m, RES, DOFF, POOL, 253, 251, 3,
		     "swapped region not in the pool");
	free(m);
}

/* ==== randomized allocator against a bitmap model ==== */

#define MODEL_RES_GRANULES	384
#define MODEL_SWP_GRANULES	256
#define MODEL_POOL		(DOFF + MODEL_RES_GRANULES * GRAN)
#define MODEL_SWP_END		(MODEL_SWP_GRANULES * GRAN)

struct model_area {
	bool swapped;
	u64 start;		/* area start, bytes */
	unsigned int n;		/* granules */
	unsigned char used[MODEL_RES_GRANULES];
};

static long model_first_fit(const struct model_area *a, unsigned int len)
{
	unsigned int s, k;

	for (s = 0; s + len <= a->n; s++) {
		for (k = 0; k < len && !a->used[s + k]; k++)
			;
		if (k == len)
			return s;
		s += k;		/* skip past the used granule */
	}
	return -1;
}

static void model_space(const struct model_area *a, struct qnvram_space *sp)
{
	unsigned int i = 0, run;

	memset(sp, 0, sizeof(*sp));
	while (i < a->n) {
		if (a->used[i]) {
			i++;
			continue;
		}
		for (run = 0; i < a->n && !a->used[i]; i++)
			run++;
		sp->free_bytes += run * GRAN;
		if (run * GRAN > sp->largest_free_bytes)
			sp->largest_free_bytes = run * GRAN;
		sp->nr_free_ranges++;
	}
}

static void model_expect_space(const struct qnvram_meta *m,
			       const struct model_area *a, long step)
{
	struct qnvram_space got, want;

	model_space(a, &want);
	qnvram_meta_space(m, a->swapped, a->start, a->start + a->n * GRAN,
			  &got);
	EXPECT_U64(got.free_bytes, want.free_bytes, "step %ld, %s area", step,
		   a->swapped ? "swap" : "pool");
	EXPECT_U64(got.largest_free_bytes, want.largest_free_bytes,
		   "step %ld, %s area", step, a->swapped ? "swap" : "pool");
	EXPECT_U64(got.nr_free_ranges, want.nr_free_ranges,
		   "step %ld, %s area", step, a->swapped ? "swap" : "pool");
}

static void random_alloc_free_matches_bitmap_model(void **state)
{
	static struct model_area res, swp;
	struct qnvram_meta *m = meta_new(MODEL_POOL);
	int used_slot[QNVRAM_MAX_REGIONS] = { 0 };
	u64 uid_sum[4] = { 0 };
	int nused = 0, allocs = 0, frees = 0, nospc = 0;
	u32 next_magic = 1;
	const char *why;
	long step;

	(void)state;
	rng_seed_for(__func__);
	memset(&res, 0, sizeof(res));
	memset(&swp, 0, sizeof(swp));
	res.swapped = false;
	res.start = DOFF;
	res.n = MODEL_RES_GRANULES;
	swp.swapped = true;
	swp.start = 0;
	swp.n = MODEL_SWP_GRANULES;

	for (step = 0; step < 10000; step++) {
		bool do_alloc = nused == 0 ||
				(nused < QNVRAM_MAX_REGIONS && rng_below(100) < 55);

		if (do_alloc) {
			struct model_area *a = rng_below(10) < 7 ? &res : &swp;
			unsigned int len = rng_below(4) ? 1 + rng_below(8)
							: 1 + rng_below(40);
			long want = model_first_fit(a, len);
			int slot = qnvram_meta_free_slot(m);
			u32 uid = rng_below(4);
			u64 off = 0;
			unsigned int g, k;
			int ret;

			EXPECT_TRUE(slot >= 0 && !used_slot[slot],
				    "step %ld: free slot %d", step, slot);
			for (k = 0; k < (unsigned int)slot; k++)
				EXPECT_TRUE(used_slot[k],
					    "step %ld: slot %u is free and lower than %d",
					    step, k, slot);
			ret = qnvram_meta_find_gap(m, a->swapped, a->start,
						   a->start + a->n * GRAN,
						   len * GRAN, &off);
			if (want < 0) {
				EXPECT_INT(ret, -ENOSPC,
					   "step %ld: %u granules in %s area",
					   step, len, a->swapped ? "swap" : "pool");
				nospc++;
				continue;
			}
			EXPECT_INT(ret, 0, "step %ld: %u granules in %s area",
				   step, len, a->swapped ? "swap" : "pool");
			EXPECT_U64(off, a->start + want * GRAN,
				   "step %ld: first fit of %u granules", step,
				   len);
			g = (off - a->start) / GRAN;
			for (k = 0; k < len; k++) {
				EXPECT_TRUE(!a->used[g + k],
					    "step %ld: granule %u handed out twice",
					    step, g + k);
				a->used[g + k] = 1;
			}
			if (a->swapped)
				put_swp(m, slot, uid, next_magic++, off,
					len * GRAN);
			else
				put_res(m, slot, uid, next_magic++, off,
					len * GRAN);
			used_slot[slot] = 1;
			uid_sum[uid] += len * GRAN;
			nused++;
			allocs++;
		} else {
			int slot;
			const struct qnvram_region_entry *e;
			struct model_area *a;
			unsigned int g, k, len;

			do
				slot = rng_below(QNVRAM_MAX_REGIONS);
			while (!used_slot[slot]);
			e = &m->entries[slot];
			a = le32_to_cpu(e->flags) & QNVRAM_ENTRY_SWAPPED ?
				&swp : &res;
			g = (le64_to_cpu(e->offset) - a->start) / GRAN;
			len = le64_to_cpu(e->length) / GRAN;
			for (k = 0; k < len; k++)
				a->used[g + k] = 0;
			EXPECT_INT(qnvram_meta_find(m, le32_to_cpu(e->uid),
						    le32_to_cpu(e->magic)),
				   slot, "step %ld", step);
			uid_sum[le32_to_cpu(e->uid)] -= len * GRAN;
			clear(m, slot);
			used_slot[slot] = 0;
			nused--;
			frees++;
		}

		set_generation(m, step + 2);
		qnvram_meta_seal(m);
		EXPECT_INT(validate(m, MODEL_POOL, &why), 0,
			   "step %ld: why \"%s\"", step, why);
		model_expect_space(m, &res, step);
		model_expect_space(m, &swp, step);
		EXPECT_U64(qnvram_meta_uid_bytes(m, step % 4), uid_sum[step % 4],
			   "step %ld, uid %ld", step, step % 4);
	}
	print_message("%s: %d allocations, %d frees, %d -ENOSPC, %d live\n",
		      __func__, allocs, frees, nospc, nused);
	EXPECT_TRUE(allocs > 1000 && frees > 1000 && nospc > 10,
		    "the walk must exercise alloc, free and full areas");
	free(m);
}

/* ==== image headers ==== */

static void img_seal_then_validate(void **state)
{
	struct qnvram_img_header h, copy;
	const char *why = NULL;

	(void)state;
	img_make(&h, POOL, 1, 3);
	EXPECT_INT(qnvram_img_validate(&h, POOL, &why), 0, "why \"%s\"", why);
	EXPECT_TRUE(!strcmp(why, "ok"), "why \"%s\"", why);
	EXPECT_TRUE(!memcmp(&h, IMG_MAGIC_BYTES, 8), "magic bytes on flash");
	copy = h;
	copy.crc = 0;
	EXPECT_U64(le32_to_cpu(h.crc), ref_crc32(&copy, sizeof(copy)),
		   "CRC-32 of the header with crc = 0");
	img_make(&h, POOL, 1, 3);
	h.crc = 0;
	EXPECT_INT(qnvram_img_validate(&h, POOL, &why), -EBADMSG, "unsealed");
	EXPECT_WHY(why, "checksum", "");
}

static void any_flipped_bit_in_img_header_is_ebadmsg(void **state)
{
	struct qnvram_img_header h;
	unsigned char *b = (unsigned char *)&h;
	const char *why;
	size_t i;
	int bit;

	(void)state;
	img_make(&h, POOL, 77, QNVRAM_MAX_REGIONS);
	for (i = 0; i < sizeof(h); i++) {
		for (bit = 0; bit < 8; bit++) {
			b[i] ^= 1u << bit;
			EXPECT_INT(qnvram_img_validate(&h, POOL, &why), -EBADMSG,
				   "bit %d of byte %zu flipped; why \"%s\"",
				   bit, i, why);
			b[i] ^= 1u << bit;
		}
	}
	EXPECT_INT(qnvram_img_validate(&h, POOL, &why), 0, "restored");
}

static void img_validate_rejects_bad_magic_version_and_fields(void **state)
{
	struct qnvram_img_header h;
	const char *why;

	(void)state;
	img_make(&h, POOL, 1, 0);
	memcpy(&h.magic, META_MAGIC_BYTES, 8);
	qnvram_img_seal(&h);
	EXPECT_INT(qnvram_img_validate(&h, POOL, &why), -EBADMSG,
		   "metadata magic in an image header");
	EXPECT_WHY(why, "magic", "");

	img_make(&h, POOL, 1, 0);
	h.version = cpu_to_le32(0);
	qnvram_img_seal(&h);
	EXPECT_INT(qnvram_img_validate(&h, POOL, &why), -EBADMSG, "version 0");
	EXPECT_WHY(why, "version", "");

	img_make(&h, POOL + GRAN, 1, 0);
	EXPECT_INT(qnvram_img_validate(&h, POOL, &why), -EINVAL,
		   "image of another pool size");
	EXPECT_WHY(why, "size", "");

	img_make(&h, POOL, 1, QNVRAM_MAX_REGIONS);
	EXPECT_INT(qnvram_img_validate(&h, POOL, &why), 0, "256 regions");
	img_make(&h, POOL, 1, QNVRAM_MAX_REGIONS + 1);
	EXPECT_INT(qnvram_img_validate(&h, POOL, &why), -EINVAL, "257 regions");
	EXPECT_WHY(why, "range", "");
	img_make(&h, POOL, 1, 0xFFFFFFFFu);
	EXPECT_INT(qnvram_img_validate(&h, POOL, &why), -EINVAL, "2^32-1 regions");

	img_make(&h, POOL, 0, 1);
	EXPECT_INT(qnvram_img_validate(&h, POOL, &why), -EINVAL, "seq 0");
	EXPECT_WHY(why, "range", "");
	img_make(&h, POOL, QNVRAM_COUNT_MAX, 1);
	EXPECT_INT(qnvram_img_validate(&h, POOL, &why), 0, "seq 2^63-1");
	img_make(&h, POOL, QNVRAM_COUNT_MAX + 1, 1);
	EXPECT_INT(qnvram_img_validate(&h, POOL, &why), -EINVAL,
		   "seq 2^63: no flush counted that far");
	EXPECT_WHY(why, "range", "");
	img_make(&h, POOL, ~0ULL, 1);
	EXPECT_INT(qnvram_img_validate(&h, POOL, &why), -EINVAL,
		   "seq 2^64-1: the next one would wrap to 0");
}

static void img_pick_takes_higher_seq_of_valid_slots(void **state)
{
	struct qnvram_img_header a, b;

	(void)state;
	img_make(&a, POOL, 5, 1);
	img_make(&b, POOL, 6, 1);
	EXPECT_INT(qnvram_img_pick(&a, &b, POOL), 1, "seq 5 vs 6");
	EXPECT_INT(qnvram_img_pick(&b, &a, POOL), 0, "seq 6 vs 5");
	img_make(&a, POOL, 0xFFFFFFFFULL, 1);
	img_make(&b, POOL, 0x100000000ULL, 1);
	EXPECT_INT(qnvram_img_pick(&a, &b, POOL), 1, "seq is 64-bit");
	EXPECT_INT(qnvram_img_pick(&b, &a, POOL), 0, "seq is 64-bit");
	img_make(&b, POOL, 0xFFFFFFFFULL, 1);
	EXPECT_INT(qnvram_img_pick(&a, &b, POOL), 0, "equal seq: slot 0");
}

static void img_pick_skips_torn_other_size_and_out_of_range(void **state)
{
	struct qnvram_img_header ok, bad;

	(void)state;
	img_make(&ok, POOL, 5, 1);

	img_make(&bad, POOL, 6, 1);
	bad.meta_crc ^= cpu_to_le32(1);		/* torn header write */
	EXPECT_INT(qnvram_img_pick(&ok, &bad, POOL), 0, "newer slot torn");
	EXPECT_INT(qnvram_img_pick(&bad, &ok, POOL), 1, "newer slot torn");

	img_make(&bad, 2 * POOL, 6, 1);
	EXPECT_INT(qnvram_img_pick(&ok, &bad, POOL), 0, "other pool size");
	EXPECT_INT(qnvram_img_pick(&bad, &ok, POOL), 1, "other pool size");

	img_make(&bad, POOL, 6, QNVRAM_MAX_REGIONS + 1);
	EXPECT_INT(qnvram_img_pick(&ok, &bad, POOL), 0, "nr_regions 257");
	img_make(&bad, POOL, 0, 1);
	EXPECT_INT(qnvram_img_pick(&bad, &ok, POOL), 1, "seq 0");
}

static void img_pick_without_valid_image_is_enoent(void **state)
{
	struct qnvram_img_header a, b;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0xFF, sizeof(b));
	EXPECT_INT(qnvram_img_pick(&a, &b, POOL), -ENOENT,
		   "blank and erased flash");
	img_make(&a, POOL, 3, 1);
	a.seq ^= cpu_to_le64(1ULL << 40);
	img_make(&b, POOL + GRAN, 4, 1);
	EXPECT_INT(qnvram_img_pick(&a, &b, POOL), -ENOENT,
		   "one torn, one of another pool size");
}

static void img_slot_and_swap_geometry(void **state)
{
	static const u64 pools[] = {
		QNVRAM_MIN_POOL_BYTES, POOL, 1ULL << 30, 48ULL << 30,
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(pools) / sizeof(pools[0]); i++) {
		u64 p = pools[i], slot = qnvram_img_slot_bytes(p);

		EXPECT_U64(slot, QNVRAM_IMG_HDR_BYTES + p,
			   "slot = header block + pool image, pool %llu",
			   (unsigned long long)p);
		EXPECT_U64(qnvram_swap_start(p), 2 * slot,
			   "swap area right after slot 1, pool %llu",
			   (unsigned long long)p);
		EXPECT_U64(qnvram_swap_start(p) % GRAN, 0,
			   "swap area granule aligned, pool %llu",
			   (unsigned long long)p);
		EXPECT_TRUE(slot - QNVRAM_IMG_HDR_BYTES >= DOFF,
			    "image holds both metadata slots");
	}
}

/* ==== robustness against corrupted input ==== */

/* An independent model of what validate accepts in the region table. */
static bool ref_entries_ok(const struct qnvram_meta *m, u64 pool)
{
	const unsigned __int128 u64_end = (unsigned __int128)1 << 64;
	int i, j;

	for (i = 0; i < QNVRAM_MAX_REGIONS; i++) {
		const struct qnvram_region_entry *e = &m->entries[i];
		u32 f = le32_to_cpu(e->flags);
		u64 off = le64_to_cpu(e->offset), len = le64_to_cpu(e->length);
		unsigned __int128 end = (unsigned __int128)off + len;

		if (!f) {
			if (e->uid || e->magic || e->data_crc || off || len)
				return false;
			continue;
		}
		if (f != QNVRAM_ENTRY_USED &&
		    f != (QNVRAM_ENTRY_USED | QNVRAM_ENTRY_SWAPPED))
			return false;
		if (!len || len % GRAN || off % GRAN)
			return false;
		if (len > QNVRAM_ENTRY_MAX_BYTES)
			return false;
		if (f & QNVRAM_ENTRY_SWAPPED) {
			if (end >= u64_end)
				return false;
		} else if (off < DOFF || end > pool) {
			return false;
		}
		for (j = 0; j < QNVRAM_MAX_REGIONS; j++) {
			const struct qnvram_region_entry *o = &m->entries[j];
			u64 ooff = le64_to_cpu(o->offset);
			unsigned __int128 oend =
				(unsigned __int128)ooff + le64_to_cpu(o->length);

			if (j == i || !o->flags)
				continue;
			if (o->uid == e->uid && o->magic == e->magic)
				return false;
			if ((o->flags ^ e->flags) == 0 && off < oend &&
			    ooff < end)
				return false;
		}
	}
	return true;
}

static u64 fuzz_offset(bool swapped, u64 pool)
{
	u64 r = rng_below(100);

	if (r < 90)
		return swapped ? rng_below(80) * GRAN
			       : rng_below(pool / GRAN + 4) * GRAN;
	if (r < 94)
		return rng_below(pool / GRAN) * GRAN + rng_below(GRAN);
	if (r < 97)
		return ~(GRAN - 1) - rng_below(4) * GRAN;
	return rng();
}

static u64 fuzz_length(void)
{
	u64 r = rng_below(100);

	if (r < 88)
		return (1 + rng_below(8)) * GRAN;
	if (r < 91)
		return 0;
	if (r < 94)
		return (1 + rng_below(8)) * GRAN - 1 - rng_below(GRAN - 1);
	if (r < 97)
		return ~(GRAN - 1) - rng_below(4) * GRAN;
	return rng();
}

static void fuzz_entry(struct qnvram_meta *m, int i, u64 pool)
{
	u64 r = rng_below(100);
	u32 flags;

	if (r < 60)
		flags = QNVRAM_ENTRY_USED;
	else if (r < 85)
		flags = QNVRAM_ENTRY_USED | QNVRAM_ENTRY_SWAPPED;
	else if (r < 92)
		flags = 0;
	else
		flags = (u32)rng() & (rng_below(2) ? 0x7 : 0xFFFFFFFF);
	put(m, i, flags, 1000 + rng_below(3), rng_below(6),
	    fuzz_offset(flags & QNVRAM_ENTRY_SWAPPED, pool), fuzz_length());
	if (!flags && rng_below(2))
		clear(m, i);		/* a proper free slot */
	if (rng_below(4) == 0)
		m->entries[i].data_crc = cpu_to_le32((u32)rng());
}

/* A table that validated: find_gap and space must agree with a bitmap. */
#define FUZZ_POOL_GRANULES	64
#define FUZZ_SWP_GRANULES	96

static void fuzz_check_space(const struct qnvram_meta *m, u64 pool, bool swapped,
			     long iter)
{
	static struct model_area a;
	u64 area_gran = swapped ? FUZZ_SWP_GRANULES : FUZZ_POOL_GRANULES;
	u64 base = swapped ? 0 : DOFF;
	u64 skip = rng_below(4) ? 0 : rng_below(area_gran);
	unsigned int len = 1 + rng_below(12);
	long want;
	u64 off;
	int i, ret;

	(void)pool;
	memset(&a, 0, sizeof(a));
	a.swapped = swapped;
	a.start = base + skip * GRAN;
	a.n = area_gran - skip;
	for (i = 0; i < QNVRAM_MAX_REGIONS; i++) {
		const struct qnvram_region_entry *e = &m->entries[i];
		u64 o = le64_to_cpu(e->offset), l = le64_to_cpu(e->length);
		u64 g;

		if (!e->flags ||
		    !!(le32_to_cpu(e->flags) & QNVRAM_ENTRY_SWAPPED) != swapped)
			continue;
		for (g = 0; g < a.n; g++) {
			u64 at = a.start + g * GRAN;

			if (at >= o && at - o < l)
				a.used[g] = 1;
		}
	}
	model_expect_space(m, &a, iter);
	want = model_first_fit(&a, len);
	ret = qnvram_meta_find_gap(m, swapped, a.start, a.start + a.n * GRAN,
				   len * GRAN, &off);
	if (want < 0) {
		EXPECT_INT(ret, -ENOSPC, "iteration %ld, %u granules", iter, len);
	} else {
		EXPECT_INT(ret, 0, "iteration %ld, %u granules", iter, len);
		EXPECT_U64(off, a.start + want * GRAN, "iteration %ld", iter);
	}
}

static void validate_survives_100000_random_and_near_valid_tables(void **state)
{
	const u64 pool = DOFF + FUZZ_POOL_GRANULES * GRAN;
	struct qnvram_meta *t[2];
	int res[2] = { -EBADMSG, -EBADMSG };
	long iter, valid = 0, einval = 0, ebadmsg = 0, differential = 0;

	(void)state;
	rng_seed_for(__func__);
	t[0] = meta_new(pool);
	t[1] = meta_new(pool);
	for (iter = 0; iter < 100000; iter++) {
		struct qnvram_meta *m = t[iter & 1];
		int kind = iter % 4, k, n, ret, pick, want_pick;
		bool hdr_ok = true;
		const char *why;

		switch (kind) {
		case 0:		/* garbage, sometimes with the right magic */
			rng_fill(m, sizeof(*m));
			if (rng_below(2)) {
				memcpy(&m->hdr.magic, META_MAGIC_BYTES, 8);
				m->hdr.version = cpu_to_le32(QNVRAM_FORMAT_VERSION);
			}
			break;
		case 1:		/* sealed garbage with a plausible header */
			rng_fill(m, sizeof(*m));
			memcpy(&m->hdr.magic, META_MAGIC_BYTES, 8);
			m->hdr.version = cpu_to_le32(QNVRAM_FORMAT_VERSION);
			if (rng_below(2)) {
				m->hdr.pool_bytes = cpu_to_le64(pool);
				m->hdr.nr_entries = cpu_to_le32(QNVRAM_MAX_REGIONS);
				m->hdr.data_offset = cpu_to_le64(DOFF);
			}
			if (rng_below(2)) {	/* a few plausible entries */
				memset(m->entries, 0, sizeof(m->entries));
				n = 1 + rng_below(4);
				for (k = 0; k < n; k++)
					fuzz_entry(m, rng_below(QNVRAM_MAX_REGIONS), pool);
			}
			hdr_ok = le64_to_cpu(m->hdr.pool_bytes) == pool &&
				 le32_to_cpu(m->hdr.nr_entries) == QNVRAM_MAX_REGIONS &&
				 le64_to_cpu(m->hdr.data_offset) == DOFF &&
				 m->hdr.generation &&
				 le64_to_cpu(m->hdr.generation) <= QNVRAM_COUNT_MAX;
			qnvram_meta_seal(m);
			break;
		case 2:		/* a valid table with random entries, resealed */
			qnvram_meta_format(m, pool);
			n = 1 + rng_below(6);
			for (k = 0; k < n; k++)
				fuzz_entry(m, rng_below(QNVRAM_MAX_REGIONS), pool);
			set_generation(m, 1 + rng_below(1000));
			qnvram_meta_seal(m);
			break;
		default:	/* a valid table, one byte of an entry changed */
			qnvram_meta_format(m, pool);
			put_res(m, 0, 1000, 1, DOFF, 4 * GRAN);
			put_res(m, 1, 1000, 2, DOFF + 8 * GRAN, 8 * GRAN);
			put_swp(m, 2, 1001, 1, 0, 16 * GRAN);
			put_swp(m, 3, 1001, 2, 32 * GRAN, 4 * GRAN);
			((unsigned char *)&m->entries[rng_below(6)])
				[rng_below(sizeof(struct qnvram_region_entry))] ^=
				1 + rng_below(255);
			set_generation(m, 1 + rng_below(1000));
			qnvram_meta_seal(m);
			break;
		}

		ret = validate(m, pool, &why);
		EXPECT_TRUE(ret == 0 || ret == -EBADMSG || ret == -EINVAL,
			    "iteration %ld (kind %d): returned %d", iter, kind, ret);
		EXPECT_TRUE(why != NULL, "iteration %ld: why not set", iter);
		EXPECT_TRUE((ret == 0) == !strcmp(why, "ok"),
			    "iteration %ld: returned %d with why \"%s\"", iter,
			    ret, why);
		if (kind == 0)
			EXPECT_INT(ret, -EBADMSG, "iteration %ld: unsealed garbage",
				   iter);
		if (kind > 0) {	/* sealed: the verdict is the model's */
			int want = !hdr_ok ? -EINVAL
				   : ref_entries_ok(m, pool) ? 0 : -EINVAL;

			EXPECT_INT(ret, want, "iteration %ld (kind %d): why \"%s\"",
				   iter, kind, why);
			differential++;
		}
		if (ret == 0) {
			valid++;
			fuzz_check_space(m, pool, RES, iter);
			fuzz_check_space(m, pool, SWP, iter);
		} else if (ret == -EINVAL) {
			einval++;
		} else {
			ebadmsg++;
		}

		res[iter & 1] = ret;
		if (iter & 1) {
			pick = qnvram_meta_pick(t[0], t[1], pool);
			if (!res[0] && !res[1])
				want_pick = le64_to_cpu(t[1]->hdr.generation) >
					    le64_to_cpu(t[0]->hdr.generation);
			else
				want_pick = !res[0] ? 0 : !res[1] ? 1 : -EBADMSG;
			EXPECT_INT(pick, want_pick, "iteration %ld", iter);
		}
	}
	print_message("%s: %ld valid, %ld -EINVAL, %ld -EBADMSG, %ld checked against the model\n",
		      __func__, valid, einval, ebadmsg, differential);
	EXPECT_TRUE(valid > 5000 && einval > 20000 && ebadmsg > 20000,
		    "the fuzz must reach every verdict");
	free(t[0]);
	free(t[1]);
}

static void img_validate_survives_100000_random_headers(void **state)
{
	struct qnvram_img_header h[2];
	int res[2] = { -EBADMSG, -EBADMSG };
	long iter, valid = 0;

	(void)state;
	rng_seed_for(__func__);
	for (iter = 0; iter < 100000; iter++) {
		struct qnvram_img_header *p = &h[iter & 1];
		int kind = iter % 3, ret, want = -EBADMSG, pick, want_pick;
		const char *why = NULL;

		rng_fill(p, sizeof(*p));
		if (kind > 0) {
			memcpy(&p->magic, IMG_MAGIC_BYTES, 8);
			p->version = cpu_to_le32(QNVRAM_FORMAT_VERSION);
			if (rng_below(2))
				p->pool_bytes = cpu_to_le64(POOL);
			if (rng_below(2))
				p->nr_regions = cpu_to_le32(rng_below(300));
			if (rng_below(4))	/* mostly below 2^63 */
				p->seq = cpu_to_le64(rng() >> (1 + rng_below(2)));
			if (rng_below(8) == 0)
				p->seq = 0;
		}
		if (kind == 2) {
			qnvram_img_seal(p);
			want = le64_to_cpu(p->pool_bytes) != POOL ||
			       le32_to_cpu(p->nr_regions) > QNVRAM_MAX_REGIONS ||
			       !p->seq || le64_to_cpu(p->seq) > QNVRAM_COUNT_MAX ?
			       -EINVAL : 0;
		}
		ret = qnvram_img_validate(p, POOL, &why);
		EXPECT_INT(ret, want, "iteration %ld (kind %d): why \"%s\"",
			   iter, kind, why ? why : "(null)");
		EXPECT_TRUE(why && (ret == 0) == !strcmp(why, "ok"),
			    "iteration %ld", iter);
		valid += !ret;
		res[iter & 1] = ret;
		if (iter & 1) {
			pick = qnvram_img_pick(&h[0], &h[1], POOL);
			if (!res[0] && !res[1])
				want_pick = le64_to_cpu(h[1].seq) >
					    le64_to_cpu(h[0].seq);
			else
				want_pick = !res[0] ? 0 : !res[1] ? 1 : -ENOENT;
			EXPECT_INT(pick, want_pick, "iteration %ld", iter);
		}
	}
	print_message("%s: %ld valid\n", __func__, valid);
	EXPECT_TRUE(valid > 5000, "the fuzz must reach valid headers");
}

/* ==== stale markers: an image the pool changed after is never restored ==== */

static void stale_marker_keeps_every_field_but_the_magic(void **state)
{
	struct qnvram_img_header img, mark, copy;
	const char *why = NULL;

	(void)state;
	img_make(&img, POOL, 42, 7);
	mark = img;
	qnvram_img_mark_stale(&mark);
	EXPECT_TRUE(!memcmp(&mark, STALE_MAGIC_BYTES, 8), "marker magic bytes on flash");
	EXPECT_U64(mark.version, img.version, "");
	EXPECT_U64(mark.nr_regions, img.nr_regions, "");
	EXPECT_U64(mark.pool_bytes, img.pool_bytes, "");
	EXPECT_U64(le64_to_cpu(mark.seq), 42, "the marker names the flush it supersedes");
	EXPECT_U64(mark.meta_crc, img.meta_crc, "");
	copy = mark;
	copy.crc = 0;
	EXPECT_U64(le32_to_cpu(mark.crc), ref_crc32(&copy, sizeof(copy)),
		   "the marker is sealed like a header");
	EXPECT_INT(qnvram_img_validate(&mark, POOL, &why), -ESTALE,
		   "why \"%s\"", why);
	EXPECT_WHY(why, "stale", "");
	stale_make(&copy, POOL, 42, 7);
	EXPECT_TRUE(!memcmp(&copy, &mark, sizeof(mark)),
		    "mark_stale of image 42 is the marker built from its bytes");
	/* An unsealed marker is a torn write, not a marker. */
	mark.crc ^= cpu_to_le32(1);
	EXPECT_INT(qnvram_img_validate(&mark, POOL, &why), -EBADMSG, "torn marker");
}

static void stale_marker_is_checked_like_an_image(void **state)
{
	struct qnvram_img_header h;
	unsigned char *b = (unsigned char *)&h;
	const char *why;
	size_t i;
	int bit;

	(void)state;
	stale_make(&h, POOL, 77, QNVRAM_MAX_REGIONS);
	for (i = 0; i < sizeof(h); i++) {
		for (bit = 0; bit < 8; bit++) {
			b[i] ^= 1u << bit;
			EXPECT_INT(qnvram_img_validate(&h, POOL, &why), -EBADMSG,
				   "bit %d of byte %zu flipped; why \"%s\"",
				   bit, i, why);
			b[i] ^= 1u << bit;
		}
	}
	EXPECT_INT(qnvram_img_validate(&h, POOL, &why), -ESTALE, "restored");
	stale_make(&h, POOL + GRAN, 5, 1);
	EXPECT_INT(qnvram_img_validate(&h, POOL, &why), -EINVAL,
		   "marker of another pool size is foreign, like its image");
	EXPECT_WHY(why, "size", "");
	stale_make(&h, POOL, 0, 1);
	EXPECT_INT(qnvram_img_validate(&h, POOL, &why), -EINVAL, "marker seq 0");
	stale_make(&h, POOL, 5, QNVRAM_MAX_REGIONS + 1);
	EXPECT_INT(qnvram_img_validate(&h, POOL, &why), -EINVAL, "marker of 257 regions");
}

static void img_pick_never_restores_an_image_a_marker_supersedes(void **state)
{
	struct qnvram_img_header a, b, blank;

	(void)state;
	memset(&blank, 0, sizeof(blank));
	/* Image 6 retired in slot 1; slot 0 holds image 5, as old. */
	img_make(&a, POOL, 5, 1);
	stale_make(&b, POOL, 6, 1);
	EXPECT_INT(qnvram_img_pick(&a, &b, POOL), -ESTALE, "image 5, marker 6");
	EXPECT_INT(qnvram_img_pick(&b, &a, POOL), -ESTALE, "marker 6, image 5");
	/* The older image is superseded by a marker of its own number too. */
	img_make(&a, POOL, 6, 1);
	EXPECT_INT(qnvram_img_pick(&a, &b, POOL), -ESTALE, "image 6, marker 6");
	EXPECT_INT(qnvram_img_pick(&b, &a, POOL), -ESTALE, "marker 6, image 6");
	/* Only a marker. */
	EXPECT_INT(qnvram_img_pick(&blank, &b, POOL), -ESTALE, "blank, marker 6");
	EXPECT_INT(qnvram_img_pick(&b, &blank, POOL), -ESTALE, "marker 6, blank");
	/* A flush after the marker is current again. */
	img_make(&a, POOL, 7, 1);
	EXPECT_INT(qnvram_img_pick(&a, &b, POOL), 0, "image 7, marker 6");
	EXPECT_INT(qnvram_img_pick(&b, &a, POOL), 1, "marker 6, image 7");
	/* Both retired. */
	stale_make(&a, POOL, 7, 1);
	EXPECT_INT(qnvram_img_pick(&a, &b, POOL), -ESTALE, "markers 7 and 6");
	/* A torn marker write hides nothing older that is still current. */
	img_make(&a, POOL, 5, 1);
	stale_make(&b, POOL, 6, 1);
	b.seq ^= cpu_to_le64(1);
	EXPECT_INT(qnvram_img_pick(&a, &b, POOL), 0, "image 5, torn marker");
	/* Markers of another pool size do not supersede this pool's image. */
	stale_make(&b, POOL + GRAN, 6, 1);
	EXPECT_INT(qnvram_img_pick(&a, &b, POOL), 0, "image 5, foreign marker 6");
	EXPECT_INT(qnvram_img_pick(&blank, &b, POOL), -ENOENT, "blank, foreign marker");
}

static void img_newest_and_stale_seq_count_markers(void **state)
{
	struct qnvram_img_header a, b, blank;

	(void)state;
	memset(&blank, 0, sizeof(blank));
	EXPECT_INT(qnvram_img_newest(&blank, &blank, POOL), -ENOENT, "blank");
	EXPECT_U64(qnvram_img_stale_seq(&blank, &blank, POOL), 0, "blank");
	img_make(&a, POOL, 5, 1);
	stale_make(&b, POOL, 6, 1);
	EXPECT_INT(qnvram_img_newest(&a, &b, POOL), 1, "image 5, marker 6");
	EXPECT_INT(qnvram_img_newest(&b, &a, POOL), 0, "marker 6, image 5");
	EXPECT_U64(qnvram_img_stale_seq(&a, &b, POOL), 6, "");
	img_make(&a, POOL, 7, 1);
	EXPECT_INT(qnvram_img_newest(&a, &b, POOL), 0, "image 7, marker 6");
	EXPECT_U64(qnvram_img_stale_seq(&a, &b, POOL), 6, "");
	stale_make(&a, POOL, 7, 1);
	EXPECT_INT(qnvram_img_newest(&a, &b, POOL), 0, "markers 7 and 6");
	EXPECT_U64(qnvram_img_stale_seq(&a, &b, POOL), 7, "");
	EXPECT_INT(qnvram_img_newest(&blank, &b, POOL), 1, "blank, marker 6");
	img_make(&a, POOL, 8, 1);
	a.crc ^= cpu_to_le32(1);
	EXPECT_INT(qnvram_img_newest(&a, &b, POOL), 1, "torn image 8, marker 6");
	img_make(&a, POOL, 5, 1);
	EXPECT_U64(qnvram_img_stale_seq(&a, &blank, POOL), 0, "no marker");
}

/*
 * Random pairs of images, markers and damaged headers against a model:
 * pick restores the highest image only if no marker has the same or a
 * higher number; newest is the highest sound header of either kind.
 */
static void img_pick_matches_model_over_100000_random_pairs(void **state)
{
	struct qnvram_img_header h[2];
	long iter, picked = 0, stale = 0, none = 0;
	int kind[2], k;

	(void)state;
	rng_seed_for(__func__);
	for (iter = 0; iter < 100000; iter++) {
		int want_pick, want_newest, img = -1, mark = -1, any = -1;
		u64 want_stale = 0;

		for (k = 0; k < 2; k++) {
			u64 seq = 1 + rng_below(8);

			kind[k] = (int)rng_below(5);
			switch (kind[k]) {
			case 0:		/* blank or erased flash */
				memset(&h[k], rng_below(2) ? 0xFF : 0, sizeof(h[k]));
				break;
			case 1:		/* an image */
				img_make(&h[k], POOL, seq, (u32)rng_below(4));
				break;
			case 2:		/* a marker */
				stale_make(&h[k], POOL, seq, (u32)rng_below(4));
				break;
			case 3:		/* either, torn */
				if (rng_below(2))
					img_make(&h[k], POOL, seq, 1);
				else
					stale_make(&h[k], POOL, seq, 1);
				((unsigned char *)&h[k])[rng_below(sizeof(h[k]))] ^=
					(unsigned char)(1u << rng_below(8));
				break;
			default:	/* either, of another pool */
				if (rng_below(2))
					img_make(&h[k], 2 * POOL, seq, 1);
				else
					stale_make(&h[k], 2 * POOL, seq, 1);
				break;
			}
		}
		for (k = 0; k < 2; k++) {
			u64 seq = le64_to_cpu(h[k].seq);

			if (kind[k] == 1 && (img < 0 || seq > le64_to_cpu(h[img].seq)))
				img = k;
			if (kind[k] == 2 && (mark < 0 || seq > le64_to_cpu(h[mark].seq)))
				mark = k;
			if ((kind[k] == 1 || kind[k] == 2) &&
			    (any < 0 || seq > le64_to_cpu(h[any].seq)))
				any = k;
		}
		if (mark >= 0)
			want_stale = le64_to_cpu(h[mark].seq);
		if (img >= 0 && le64_to_cpu(h[img].seq) > want_stale)
			want_pick = img;
		else
			want_pick = mark >= 0 ? -ESTALE : -ENOENT;
		want_newest = any >= 0 ? any : -ENOENT;
		EXPECT_INT(qnvram_img_pick(&h[0], &h[1], POOL), want_pick,
			   "iteration %ld, kinds %d %d, seqs %llu %llu", iter,
			   kind[0], kind[1],
			   (unsigned long long)le64_to_cpu(h[0].seq),
			   (unsigned long long)le64_to_cpu(h[1].seq));
		EXPECT_INT(qnvram_img_newest(&h[0], &h[1], POOL), want_newest,
			   "iteration %ld, kinds %d %d", iter, kind[0], kind[1]);
		EXPECT_U64(qnvram_img_stale_seq(&h[0], &h[1], POOL), want_stale,
			   "iteration %ld, kinds %d %d", iter, kind[0], kind[1]);
		picked += want_pick >= 0;
		stale += want_pick == -ESTALE;
		none += want_pick == -ENOENT;
	}
	print_message("%s: %ld picked, %ld stale, %ld none\n", __func__,
		      picked, stale, none);
	EXPECT_TRUE(picked > 10000 && stale > 10000 && none > 5000,
		    "the fuzz must reach every verdict");
}

/* ==== issue 12 item 6: load decisions over untrusted pools and images ==== */

/* The swap area the load tests' geometry has: 1 MiB. */
#define SWAP		(256 * GRAN)

static const struct qnvram_geometry geo_swap = { POOL, SWAP };
static const struct qnvram_geometry geo_noswap = { POOL, QNVRAM_SWAP_UNKNOWN };

static const char *kindname(enum qnvram_img_kind k)
{
	static const char *const names[] = {
		[QNVRAM_IMG_NONE] = "NONE", [QNVRAM_IMG_IMAGE] = "IMAGE",
		[QNVRAM_IMG_MARKER] = "MARKER",
		[QNVRAM_IMG_FOREIGN_IMAGE] = "FOREIGN_IMAGE",
		[QNVRAM_IMG_FOREIGN_MARKER] = "FOREIGN_MARKER",
	};

	return (unsigned int)k < 5 ? names[k] : "?";
}

#define EXPECT_KIND(hdr, want, what) do {				\
	const char *w_ = NULL;						\
	enum qnvram_img_kind k_ = qnvram_img_classify((hdr), POOL, &w_); \
	if (k_ != (want))						\
		fail_msg("%s: expected %s, got %s (why \"%s\")", (what), \
			 kindname(want), kindname(k_), w_ ? w_ : "(null)"); \
} while (0)

static const char *actname(enum qnvram_load_action a)
{
	static const char *const names[] = {
		[QNVRAM_LOAD_REFUSE] = "REFUSE", [QNVRAM_LOAD_ADOPT] = "ADOPT",
		[QNVRAM_LOAD_RESTORE] = "RESTORE", [QNVRAM_LOAD_FORMAT] = "FORMAT",
	};

	return (unsigned int)a < 4 ? names[a] : "?";
}

#define EXPECT_ACT(plan, want, what) do {				\
	if ((plan).action != (want))					\
		fail_msg("%s: expected %s, got %s (why %d)", (what),	\
			 actname(want), actname((plan).action), (plan).why); \
} while (0)

/* A cold boot's facts: nothing in RAM, a backing device. */
static struct qnvram_load_facts cold(int img_slot)
{
	return (struct qnvram_load_facts){ .ram_slot = -EBADMSG,
		.backing = true, .img_slot = img_slot };
}

static void img_classify_tells_this_size_from_another_and_from_damage(void **state)
{
	struct qnvram_img_header h;

	(void)state;
	img_make(&h, POOL, 3, 1);
	EXPECT_KIND(&h, QNVRAM_IMG_IMAGE, "an image of this pool");
	stale_make(&h, POOL, 3, 1);
	EXPECT_KIND(&h, QNVRAM_IMG_MARKER, "a marker of this pool");
	img_make(&h, 2 * POOL, 3, 1);
	EXPECT_KIND(&h, QNVRAM_IMG_FOREIGN_IMAGE, "an image twice the size");
	stale_make(&h, 2 * POOL, 3, 1);
	EXPECT_KIND(&h, QNVRAM_IMG_FOREIGN_MARKER, "a marker twice the size");
	memset(&h, 0, sizeof(h));
	EXPECT_KIND(&h, QNVRAM_IMG_NONE, "blank flash");
	img_make(&h, 2 * POOL, 3, 1);
	h.seq ^= cpu_to_le64(1);
	EXPECT_KIND(&h, QNVRAM_IMG_NONE, "another size's header, torn");
	img_make(&h, POOL, 0, 1);
	EXPECT_KIND(&h, QNVRAM_IMG_NONE, "this size, seq 0: damaged, not foreign");
	img_make(&h, 2 * POOL, 3, QNVRAM_MAX_REGIONS + 1);
	EXPECT_KIND(&h, QNVRAM_IMG_NONE, "another size, 257 regions");
	img_make(&h, 2 * POOL, QNVRAM_COUNT_MAX + 1, 1);
	EXPECT_KIND(&h, QNVRAM_IMG_NONE, "another size, seq 2^63");
	img_make(&h, POOL + 1, 3, 1);
	EXPECT_KIND(&h, QNVRAM_IMG_NONE, "a pool size no pool can have");
	img_make(&h, QNVRAM_MIN_POOL_BYTES - GRAN, 3, 1);
	EXPECT_KIND(&h, QNVRAM_IMG_NONE, "a pool smaller than the smallest");
}

/*
 * (a) The first cold boot after a resize: slot 1's header position moves
 * with the pool size, so a header of another size there is bytes of the
 * other layout, not an image: the image of this size in slot 0 is restored.
 * Fails on the old rule (another size in either slot refuses).
 */
static void resize_restores_this_size_beside_another_size_in_slot_1(void **state)
{
	struct qnvram_img_header h0, h1;
	struct qnvram_load_facts f;
	struct qnvram_load_plan plan;

	(void)state;
	img_make(&h0, POOL, 4, 2);
	img_make(&h1, 2 * POOL, 9, 2);
	EXPECT_INT(qnvram_img_choose(&h0, &h1, POOL), 0,
		   "image 4 of this size in slot 0, a bigger pool's image 9 in slot 1");
	stale_make(&h1, POOL / 2 + 2 * GRAN, 12, 2);
	EXPECT_INT(qnvram_img_choose(&h0, &h1, POOL), 0,
		   "a smaller pool's marker 12 in slot 1");
	f = cold(qnvram_img_choose(&h0, &h1, POOL));
	qnvram_load_decide(&f, &plan);
	EXPECT_ACT(plan, QNVRAM_LOAD_RESTORE, "cold boot with this size's image in slot 0");
	EXPECT_TRUE(!plan.drop && plan.discard_ram && !plan.retire_image,
		    "restore drops nothing, retires nothing");
	/* This size's marker supersedes its image as before. */
	stale_make(&h0, POOL, 4, 2);
	EXPECT_INT(qnvram_img_choose(&h0, &h1, POOL), -ESTALE,
		   "this size's marker in slot 0, another size in slot 1");
}

/*
 * (a) A header of another size in slot 0 is that pool's newest state (slot
 * 0 is where every size starts): never silently formatted over, whatever
 * the numbers say, and no older image of this size in slot 1 comes back.
 */
static void resize_refuses_when_slot_0_holds_another_sizes_image(void **state)
{
	struct qnvram_img_header h0, h1;
	struct qnvram_load_facts f;
	struct qnvram_load_plan plan;

	(void)state;
	img_make(&h0, 2 * POOL, 3, 2);
	img_make(&h1, POOL, 9, 2);
	EXPECT_INT(qnvram_img_choose(&h0, &h1, POOL), -EXDEV,
		   "a bigger pool's image 3 in slot 0, this size's image 9 in slot 1");
	memset(&h1, 0, sizeof(h1));
	EXPECT_INT(qnvram_img_choose(&h0, &h1, POOL), -EXDEV,
		   "a bigger pool's image in slot 0, slot 1 blank");
	f = cold(-EXDEV);
	qnvram_load_decide(&f, &plan);
	EXPECT_ACT(plan, QNVRAM_LOAD_REFUSE, "the newest image is another size's");
	EXPECT_INT(plan.why, QNVRAM_WHY_FOREIGN_IMAGE, "");
	stale_make(&h0, 2 * POOL, 3, 2);
	img_make(&h1, POOL, 9, 2);
	EXPECT_INT(qnvram_img_choose(&h0, &h1, POOL), -ENOENT,
		   "another size's marker in slot 0: nothing restorable, slot 1 older");
	f = cold(-ENOENT);
	qnvram_load_decide(&f, &plan);
	EXPECT_ACT(plan, QNVRAM_LOAD_FORMAT, "a marker holds nothing to keep");
}

/*
 * (b) The ways out: salvage=1 discards only what does not fit (the pool of
 * another size in RAM) and restores the current image of this size, which
 * reformat=1 retires.
 */
static void salvage_keeps_the_image_that_reformat_throws_away(void **state)
{
	struct qnvram_load_facts f = cold(1);
	struct qnvram_load_plan plan;

	(void)state;
	f.ram_foreign = true;		/* a warm reboot after a resize */
	qnvram_load_decide(&f, &plan);
	EXPECT_ACT(plan, QNVRAM_LOAD_REFUSE, "RAM holds another size's pool");
	EXPECT_INT(plan.why, QNVRAM_WHY_FOREIGN_POOL, "");
	f.salvage = true;
	qnvram_load_decide(&f, &plan);
	EXPECT_ACT(plan, QNVRAM_LOAD_RESTORE, "salvage=1 restores image slot 1");
	EXPECT_TRUE(plan.discard_ram && !plan.retire_image,
		    "the other size's pool is invalidated, the image kept");
	f.salvage = false;
	f.reformat = true;
	qnvram_load_decide(&f, &plan);
	EXPECT_ACT(plan, QNVRAM_LOAD_FORMAT, "reformat=1");
	EXPECT_TRUE(plan.discard_ram && plan.retire_image,
		    "reformat=1 discards the pool and retires the image");
	/* Another size's image in slot 0: salvage=1 formats, keeps nothing. */
	f = cold(-EXDEV);
	f.salvage = true;
	qnvram_load_decide(&f, &plan);
	EXPECT_ACT(plan, QNVRAM_LOAD_FORMAT, "salvage=1, another size's image in slot 0");
}

/*
 * (c) An image that cannot be read is never formatted over: the load is
 * refused, changing nothing; salvage=1 restores what reads.
 */
static void read_error_refuses_the_load_and_salvage_restores_what_reads(void **state)
{
	struct qnvram_load_facts f = cold(1);
	struct qnvram_load_plan plan;

	(void)state;
	f.img_read_error = -EIO;	/* slot 0's table unreadable, slot 1 older */
	qnvram_load_decide(&f, &plan);
	EXPECT_ACT(plan, QNVRAM_LOAD_REFUSE, "an image could not be read");
	EXPECT_INT(plan.why, QNVRAM_WHY_READ_ERROR, "");
	EXPECT_TRUE(!plan.discard_ram && !plan.retire_image && !plan.drop,
		    "a refused load changes nothing");
	f.img_slot = -ENOENT;		/* and nothing else readable */
	qnvram_load_decide(&f, &plan);
	EXPECT_ACT(plan, QNVRAM_LOAD_REFUSE, "unreadable, nothing else: not formatted");
	f.salvage = true;
	qnvram_load_decide(&f, &plan);
	EXPECT_ACT(plan, QNVRAM_LOAD_FORMAT, "salvage=1, nothing readable");
	f.img_slot = 1;
	qnvram_load_decide(&f, &plan);
	EXPECT_ACT(plan, QNVRAM_LOAD_RESTORE, "salvage=1 restores what reads");
	/* A warm reboot does not care: RAM is newer than any image. */
	f = cold(1);
	f.img_read_error = -EIO;
	f.ram_slot = 0;
	qnvram_load_decide(&f, &plan);
	EXPECT_ACT(plan, QNVRAM_LOAD_ADOPT, "the pool in RAM, an image unreadable");
}

/* The two pool slots as a reset after each persist would leave them. */
static struct qnvram_meta *snap_slot[2];
static struct qnvram_meta snap[8][2];
static int nr_snaps;

static void snap_persist(void *addr, size_t bytes)
{
	(void)addr;
	(void)bytes;
	if (nr_snaps < 8) {
		snap[nr_snaps][0] = *snap_slot[0];
		snap[nr_snaps][1] = *snap_slot[1];
		nr_snaps++;
	}
}

/*
 * (d) reformat=1 over a pool whose older slot is valid too. The next load
 * after a reset at any point (after each slot's invalidation, during the
 * new table's store, after it) finds the pool as it was (before the last
 * invalidation), no table, or the new one: never the older slot's table
 * (a commit undone), and once the load is done never the discarded pool.
 * Fails on the old code, which wrote the new table over one slot only:
 * after the load the other still held generation 42 and won.
 */
static void reformat_invalidates_both_slots_so_no_reset_brings_the_old_pool_back(void **state)
{
	struct qnvram_meta *s[2], *work = meta_new(POOL), *old = meta_populated();
	struct qnvram_load_facts f = cold(-ENOENT);
	struct qnvram_load_plan plan;
	bool foreign;
	int order, k, cur;

	(void)state;
	f.ram_slot = 1;
	f.reformat = true;
	qnvram_load_decide(&f, &plan);
	EXPECT_ACT(plan, QNVRAM_LOAD_FORMAT, "reformat=1");
	EXPECT_TRUE(plan.discard_ram, "reformat=1 must invalidate both slots");
	for (order = 0; order < 2; order++) {	/* current in slot 0, then 1 */
		s[0] = meta_new(POOL);
		s[1] = meta_new(POOL);
		*s[order ^ 1] = *old;
		*s[order] = *old;
		set_generation(s[order ^ 1], 41);
		put_res(s[order ^ 1], 9, 7, 7, DOFF + 200 * GRAN, GRAN);
		qnvram_meta_seal(s[order ^ 1]);
		EXPECT_INT(qnvram_meta_choose(s[0], s[1], POOL, &foreign), order, "");

		/* The load: discard RAM, then commit the empty table to slot 0. */
		snap_slot[0] = s[0];
		snap_slot[1] = s[1];
		nr_snaps = 0;
		qnvram_meta_discard(snap_slot, snap_persist);
		EXPECT_INT(nr_snaps, 2, "one persist per slot");
		qnvram_meta_format(work, POOL);
		qnvram_meta_seal(work);
		*s[0] = *work;
		snap[nr_snaps][0] = *s[0];
		snap[nr_snaps][1] = *s[1];
		((unsigned char *)&snap[nr_snaps][0])[100] ^= 0x40;	/* torn store */
		nr_snaps++;
		snap_persist(NULL, 0);					/* done */

		for (k = 0; k < nr_snaps; k++) {
			cur = qnvram_meta_choose(&snap[k][0], &snap[k][1], POOL,
						 &foreign);
			if (cur < 0)
				continue;
			EXPECT_TRUE(le64_to_cpu(snap[k][cur].hdr.generation) != 41,
				    "order %d, reset %d: the older slot's table came back (a commit undone)",
				    order, k);
			if (k >= 1)
				EXPECT_U64(le64_to_cpu(snap[k][cur].hdr.generation), 1,
					   "order %d, reset %d: the discarded pool came back from slot %d",
					   order, k, cur);
		}
		EXPECT_INT(qnvram_meta_choose(&snap[nr_snaps - 1][0],
					      &snap[nr_snaps - 1][1], POOL, &foreign),
			   0, "after the load: the new table in slot 0 only");
		free(s[0]);
		free(s[1]);
	}
	free(work);
	free(old);
}

/* (d) A restore after a pool of another size also invalidates RAM first. */
static void restore_over_another_sizes_pool_invalidates_it_first(void **state)
{
	struct qnvram_load_facts f = cold(0);
	struct qnvram_load_plan plan;

	(void)state;
	f.ram_foreign = true;
	f.salvage = true;
	qnvram_load_decide(&f, &plan);
	EXPECT_ACT(plan, QNVRAM_LOAD_RESTORE, "salvage=1");
	EXPECT_TRUE(plan.discard_ram,
		    "another size's table must not survive in the slot the restored one misses");
}

#define EXPECT_ENTRY(m, i, geo, want, needle, what) do {		\
	const char *ew_ = NULL;						\
	int r_ = qnvram_meta_check_entry((m), (i), (geo), &ew_);	\
	EXPECT_INT(r_, (want), "%s: why \"%s\"", (what), ew_ ? ew_ : "(null)"); \
	if ((want) && (needle))						\
		EXPECT_WHY(ew_, (needle), "%s", (what));		\
} while (0)

/*
 * (e) A swapped entry must lie inside the backing device's swap area
 * (known at load), not only not wrap.
 */
static void swapped_entry_beyond_the_swap_area_does_not_fit(void **state)
{
	struct qnvram_meta *m = meta_new(POOL);
	bool bad[QNVRAM_MAX_REGIONS];

	(void)state;
	put_swp(m, 3, 1000, 1, SWAP - 4 * GRAN, 4 * GRAN);
	EXPECT_ENTRY(m, 3, &geo_swap, 0, NULL, "ends exactly at the swap area's end");
	put_swp(m, 3, 1000, 1, SWAP - 4 * GRAN, 5 * GRAN);
	EXPECT_ENTRY(m, 3, &geo_swap, -EINVAL, "swap area", "one granule past its end");
	put_swp(m, 3, 1000, 1, SWAP, GRAN);
	EXPECT_ENTRY(m, 3, &geo_swap, -EINVAL, "swap area", "starts at its end");
	put_swp(m, 3, 1000, 1, 1ULL << 40, GRAN);
	EXPECT_ENTRY(m, 3, &geo_swap, -EINVAL, "swap area", "1 TiB into a 1 MiB area");
	EXPECT_ENTRY(m, 3, &geo_noswap, 0, NULL, "no backing device: not bounded");
	put_swp(m, 4, 1000, 2, 0, 8 * GRAN);
	qnvram_meta_seal(m);
	EXPECT_INT(qnvram_meta_mark_bad(m, &geo_swap, bad), 1, "one entry beyond");
	EXPECT_TRUE(bad[3] && !bad[4], "the entry beyond, not its neighbour");
	free(m);
}

/*
 * (e) Overlaps and duplicates: both entries of the pair are marked (neither
 * can be told to be the real one), and an entry bad on its own does not
 * make the entries it would overlap bad.
 */
static void conflicting_entries_are_marked_in_pairs(void **state)
{
	struct qnvram_meta *m = meta_new(POOL);
	bool bad[QNVRAM_MAX_REGIONS];
	int i;

	(void)state;
	put_res(m, 0, 1000, 1, DOFF, 4 * GRAN);
	put_res(m, 1, 1001, 1, DOFF + 2 * GRAN, 4 * GRAN);	/* overlaps 0 */
	put_swp(m, 2, 1002, 1, 0, 8 * GRAN);
	put_swp(m, 3, 1003, 1, 4 * GRAN, 8 * GRAN);		/* overlaps 2 */
	put_res(m, 4, 1004, 7, DOFF + 40 * GRAN, GRAN);
	put_swp(m, 5, 1004, 7, 100 * GRAN, GRAN);		/* same name */
	put_res(m, 6, 1005, 1, DOFF + 50 * GRAN, GRAN);		/* fine */
	put_swp(m, 7, 1006, 1, 50 * GRAN, SWAP);		/* beyond: alone */
	put_swp(m, 8, 1007, 1, 60 * GRAN, GRAN);		/* under 7: fine */
	put_res(m, 9, 1008, 1, POOL, GRAN);			/* outside */
	put_res(m, 10, 1009, 1, POOL - GRAN, GRAN);		/* fine */
	qnvram_meta_seal(m);
	EXPECT_INT(qnvram_meta_mark_bad(m, &geo_swap, bad), 8, "");
	for (i = 0; i < 11; i++)
		EXPECT_TRUE(bad[i] == !(i == 6 || i == 8 || i == 10),
			    "entry %d: marked %d", i, bad[i]);
	EXPECT_ENTRY(m, 1, &geo_swap, -EINVAL, "overlap", "resident pair");
	EXPECT_ENTRY(m, 0, &geo_swap, -EINVAL, "overlap", "the other of the pair");
	EXPECT_ENTRY(m, 5, &geo_swap, -EINVAL, "same uid", "duplicate name");
	EXPECT_ENTRY(m, 8, &geo_swap, 0, NULL, "overlaps only an entry bad on its own");
	qnvram_meta_drop(m, bad);
	EXPECT_INT(qnvram_meta_mark_bad(m, &geo_swap, bad), 0, "after the drop");
	EXPECT_TRUE(m->entries[6].flags && m->entries[8].flags &&
		    m->entries[10].flags && !m->entries[0].flags,
		    "the fitting entries stay, the others are free");
	free(m);
}

/*
 * (e) The newest pool slot is the pool: entries of it that do not fit are
 * refused (or dropped with salvage=1), never traded for the older slot's
 * table, which would silently undo the last commit.
 */
static void bad_entries_in_ram_refuse_the_load_or_are_dropped(void **state)
{
	struct qnvram_meta *s0 = meta_populated(), *s1 = meta_populated();
	struct qnvram_load_facts f = cold(0);
	struct qnvram_load_plan plan;
	bool bad[QNVRAM_MAX_REGIONS], foreign;

	(void)state;
	set_generation(s1, 43);
	put_swp(s1, 50, 1000, 0x50, SWAP - GRAN, 2 * GRAN);	/* past the end */
	qnvram_meta_seal(s1);
	f.ram_slot = qnvram_meta_choose(s0, s1, POOL, &foreign);
	EXPECT_INT(f.ram_slot, 1, "the newest slot, though an entry does not fit");
	EXPECT_INT(qnvram_meta_pick(s0, s1, POOL), 1,
		   "with no swap bound the entry is fine for pick too");
	f.ram_bad = qnvram_meta_mark_bad(s1, &geo_swap, bad);
	EXPECT_INT(f.ram_bad, 1, "");
	qnvram_load_decide(&f, &plan);
	EXPECT_ACT(plan, QNVRAM_LOAD_REFUSE, "an adopted pool's entry beyond the swap area");
	EXPECT_INT(plan.why, QNVRAM_WHY_POOL_ENTRIES, "");
	f.salvage = true;
	qnvram_load_decide(&f, &plan);
	EXPECT_ACT(plan, QNVRAM_LOAD_ADOPT, "salvage=1");
	EXPECT_TRUE(plan.drop, "and drops it");
	/* The same for an image's table. */
	f = cold(0);
	f.img_bad = 1;
	qnvram_load_decide(&f, &plan);
	EXPECT_ACT(plan, QNVRAM_LOAD_REFUSE, "a restored image's entry beyond the swap area");
	EXPECT_INT(plan.why, QNVRAM_WHY_IMAGE_ENTRIES, "");
	f.salvage = true;
	qnvram_load_decide(&f, &plan);
	EXPECT_ACT(plan, QNVRAM_LOAD_RESTORE, "salvage=1");
	EXPECT_TRUE(plan.drop, "and drops it");
	free(s0);
	free(s1);
}

/* A model of qnvram_meta_check_entry() over the whole table. */
static bool ref_alone_ok(const struct qnvram_region_entry *e,
			 const struct qnvram_geometry *g)
{
	u32 f = le32_to_cpu(e->flags);
	u64 off = le64_to_cpu(e->offset), len = le64_to_cpu(e->length);
	unsigned __int128 end = (unsigned __int128)off + len;

	if (!f)
		return !e->uid && !e->magic && !e->data_crc && !off && !len;
	if (f != QNVRAM_ENTRY_USED &&
	    f != (QNVRAM_ENTRY_USED | QNVRAM_ENTRY_SWAPPED))
		return false;
	if (!len || len % GRAN || off % GRAN || len > QNVRAM_ENTRY_MAX_BYTES)
		return false;
	if (!(f & QNVRAM_ENTRY_SWAPPED))
		return off >= DOFF && end <= g->pool_bytes;
	if (end >= (unsigned __int128)1 << 64)
		return false;
	return g->swap_bytes == QNVRAM_SWAP_UNKNOWN || end <= g->swap_bytes;
}

/*
 * (e) Over 100,000 random tables: mark_bad matches the model, and dropping
 * the marked entries always leaves a table whose every entry fits.
 */
static void drop_of_marked_entries_always_leaves_a_fitting_table(void **state)
{
	const u64 pool = DOFF + FUZZ_POOL_GRANULES * GRAN;
	const struct qnvram_geometry g[2] = {
		{ pool, FUZZ_SWP_GRANULES * GRAN }, { pool, QNVRAM_SWAP_UNKNOWN },
	};
	struct qnvram_meta *m = meta_new(pool);
	bool bad[QNVRAM_MAX_REGIONS];
	long iter, marked = 0, clean = 0;

	(void)state;
	rng_seed_for(__func__);
	for (iter = 0; iter < 100000; iter++) {
		const struct qnvram_geometry *geo = &g[iter & 1];
		int n = 1 + rng_below(8), k, i, j;
		unsigned int got;

		qnvram_meta_format(m, pool);
		for (k = 0; k < n; k++)
			fuzz_entry(m, rng_below(12), pool);
		got = qnvram_meta_mark_bad(m, geo, bad);
		for (i = 0; i < QNVRAM_MAX_REGIONS; i++) {
			const struct qnvram_region_entry *e = &m->entries[i];
			bool want = !ref_alone_ok(e, geo);

			for (j = 0; !want && e->flags && j < QNVRAM_MAX_REGIONS; j++) {
				const struct qnvram_region_entry *o = &m->entries[j];
				u64 a = le64_to_cpu(e->offset), b = le64_to_cpu(o->offset);

				if (j == i || !o->flags || !ref_alone_ok(o, geo))
					continue;
				want = (o->uid == e->uid && o->magic == e->magic) ||
				       ((o->flags ^ e->flags) == 0 &&
					a < b + le64_to_cpu(o->length) &&
					b < a + le64_to_cpu(e->length));
			}
			EXPECT_INT(bad[i], want, "iteration %ld, entry %d", iter, i);
		}
		marked += got > 0;
		qnvram_meta_drop(m, bad);
		EXPECT_INT(qnvram_meta_mark_bad(m, geo, bad), 0,
			   "iteration %ld: entries left that do not fit", iter);
		qnvram_meta_seal(m);
		if (geo->swap_bytes == QNVRAM_SWAP_UNKNOWN) {
			const char *why;

			EXPECT_INT(qnvram_meta_validate(m, pool, &why), 0,
				   "iteration %ld: why \"%s\"", iter, why);
		}
		clean++;
	}
	print_message("%s: %ld tables with entries that did not fit, %ld left clean\n",
		      __func__, marked, clean);
	EXPECT_TRUE(marked > 30000 && marked < 95000, "the fuzz must reach both");
	free(m);
}

/*
 * (f) An entry longer than the longest region does not fit, whatever the
 * swap area: with 256 entries the per-uid sum then stays below 2^49, so no
 * crafted table can wrap a uid's bytes under its quota. Fails on the old
 * code: a swapped entry of 2^62 bytes validated.
 */
static void validate_rejects_entries_longer_than_the_longest_region(void **state)
{
	struct qnvram_meta *m = meta_base();
	const char *why;
	int i;

	(void)state;
	put_swp(m, 5, 1000, 9, 64 * GRAN, QNVRAM_ENTRY_MAX_BYTES);
	expect_valid(m, POOL, "swapped, exactly the longest region");
	put_swp(m, 5, 1000, 9, 64 * GRAN, QNVRAM_ENTRY_MAX_BYTES + GRAN);
	expect_invalid(m, POOL, "longest", "swapped, one granule longer");
	put_swp(m, 5, 1000, 9, 64 * GRAN, 1ULL << 62);
	expect_invalid(m, POOL, "longest", "swapped, 2^62 bytes");
	free(m);

	/* The most a valid table can give one uid: 256 longest regions. */
	m = meta_new(POOL);
	for (i = 0; i < QNVRAM_MAX_REGIONS; i++)
		put_swp(m, i, 1000, i, (u64)i * QNVRAM_ENTRY_MAX_BYTES,
			QNVRAM_ENTRY_MAX_BYTES);
	qnvram_meta_seal(m);
	EXPECT_INT(validate(m, POOL, &why), 0, "why \"%s\"", why);
	EXPECT_U64(qnvram_meta_uid_bytes(m, 1000),
		   QNVRAM_MAX_REGIONS * QNVRAM_ENTRY_MAX_BYTES, "no wrap");
	free(m);
}

/*
 * (f) A table nobody checked: the sum saturates instead of wrapping to a
 * small number that would pass the quota check. Fails on the old code:
 * 2^63 + 2^63 + 4 KiB summed to 4 KiB.
 */
static void uid_bytes_saturates_instead_of_wrapping(void **state)
{
	struct qnvram_meta *m = meta_new(POOL);
	u64 sum;

	(void)state;
	put_swp(m, 0, 1000, 1, 0, 1ULL << 63);
	put_swp(m, 1, 1000, 2, 0, 1ULL << 63);
	put_swp(m, 2, 1000, 3, 0, GRAN);
	sum = qnvram_meta_uid_bytes(m, 1000);
	EXPECT_U64(sum, QNVRAM_COUNT_MAX, "2^63 + 2^63 + 4 KiB: saturated");
	EXPECT_TRUE(sum + QNVRAM_ENTRY_MAX_BYTES > sum,
		    "adding one more region to it cannot wrap either");
	EXPECT_U64(qnvram_meta_uid_bytes(m, 1001), 0, "another uid");
	free(m);
}

/* Generations and flush numbers stop at 2^63 - 1: counting on never wraps. */
static void generation_and_seq_above_2_63_are_out_of_range(void **state)
{
	struct qnvram_meta *m = meta_new(POOL);
	const char *why;

	(void)state;
	set_generation(m, QNVRAM_COUNT_MAX);
	qnvram_meta_seal(m);
	EXPECT_INT(qnvram_meta_check_header(m, POOL, &why), 0, "2^63 - 1");
	set_generation(m, QNVRAM_COUNT_MAX + 1);
	qnvram_meta_seal(m);
	EXPECT_INT(qnvram_meta_check_header(m, POOL, &why), -EINVAL, "2^63");
	EXPECT_WHY(why, "generation", "");
	set_generation(m, ~0ULL);
	qnvram_meta_seal(m);
	EXPECT_INT(validate(m, POOL, &why), -EINVAL,
		   "2^64 - 1: its next commit would be generation 0");
	EXPECT_TRUE(QNVRAM_COUNT_MAX - (QNVRAM_META_GEN_REBASE - 1) >=
		    QNVRAM_META_GEN_REBASE,
		    "a pool adopted without renumbering has 2^62 commits before the limit");
	free(m);
}

/*
 * (g) A write-back merges regions across gaps; the gap bytes in the image
 * are zeros, never what freed regions (of other uids) left in the pool.
 * Fails with the staging of the old code (a memcpy of the whole extent):
 * 0xab at the first gap byte.
 */
static void stage_writes_zeros_where_freed_regions_left_their_bytes(void **state)
{
	struct qnvram_meta *m = meta_new(POOL);
	struct qnvram_extent ext[QNVRAM_MAX_REGIONS];
	unsigned char *pool = malloc(POOL), *dst = malloc(POOL);
	unsigned int n, i;
	u64 b, at, len;

	(void)state;
	assert_non_null(pool);
	assert_non_null(dst);
	memset(pool, 0xab, POOL);		/* freed regions' leftovers */
	/* 20 live regions of 4 KiB, a 4 KiB gap after each, at the end 3. */
	for (i = 0; i < 20; i++) {
		at = DOFF + 2ULL * i * GRAN;
		put_res(m, (int)(i * 7 % 256), 1000 + i % 3, i, at, GRAN);
		memset(pool + at, 0x10 + i, GRAN);
	}
	put_res(m, 200, 1, 99, POOL - 3 * GRAN, 3 * GRAN);
	memset(pool + POOL - 3 * GRAN, 0x77, 3 * GRAN);
	qnvram_meta_seal(m);
	n = qnvram_meta_extents(m, ext, 4);
	EXPECT_TRUE(n >= 1 && n <= 4, "at most 4 extents, got %u", n);
	for (i = 0; i < n; i++) {
		EXPECT_TRUE(i == 0 || ext[i].off >= ext[i - 1].end,
			    "extent %u in offset order", i);
		len = ext[i].end - ext[i].off;
		memset(dst, 0xee, len);
		qnvram_meta_stage(m, pool, &ext[i], dst);
		for (b = 0; b < len; b++) {
			u64 o = ext[i].off + b;
			bool live = (o >= POOL - 3 * GRAN) ||
				    (o < DOFF + 40 * GRAN && (o - DOFF) / GRAN % 2 == 0);
			unsigned int want = live ? pool[o] : 0;

			if (dst[b] != want)
				fail_msg("extent %u [%#llx, %#llx): pool byte %#llx: expected %#x (%s), got %#x",
					 i, (unsigned long long)ext[i].off,
					 (unsigned long long)ext[i].end,
					 (unsigned long long)o, want,
					 live ? "a live region's" : "zero: a gap",
					 dst[b]);
		}
	}
	/* Every live region lies in one extent. */
	for (i = 0; i < QNVRAM_MAX_REGIONS; i++) {
		const struct qnvram_region_entry *e = &m->entries[i];
		unsigned int k, in = 0;

		if (!e->flags)
			continue;
		for (k = 0; k < n; k++)
			in += le64_to_cpu(e->offset) >= ext[k].off &&
			      le64_to_cpu(e->offset) + le64_to_cpu(e->length) <= ext[k].end;
		EXPECT_INT(in, 1, "entry %u in exactly one extent", i);
	}
	free(pool);
	free(dst);
	free(m);
}

/* (g) Extents without gaps to merge: one per run of adjacent regions. */
static void extents_of_adjacent_regions_need_no_merging(void **state)
{
	struct qnvram_meta *m = meta_new(POOL);
	struct qnvram_extent ext[QNVRAM_MAX_REGIONS];

	(void)state;
	put_res(m, 5, 1, 1, DOFF + 8 * GRAN, 2 * GRAN);
	put_res(m, 1, 1, 2, DOFF, 8 * GRAN);
	put_res(m, 9, 1, 3, DOFF + 100 * GRAN, GRAN);
	put_swp(m, 3, 1, 4, 0, 64 * GRAN);	/* not in the pool */
	EXPECT_INT(qnvram_meta_extents(m, ext, 10), 2, "");
	EXPECT_U64(ext[0].off, DOFF, "");
	EXPECT_U64(ext[0].end, DOFF + 10 * GRAN, "adjacent regions join");
	EXPECT_U64(ext[1].off, DOFF + 100 * GRAN, "");
	EXPECT_INT(qnvram_meta_extents(m, ext, 1), 1, "merged across the gap");
	EXPECT_U64(ext[0].end, DOFF + 101 * GRAN, "");
	free(m);
}

/*
 * Every combination of facts: a refusal changes nothing; nothing that
 * holds data (a current image, a pool of another size, another size's
 * image, an image that could not be read, entries that do not fit) is
 * discarded unless reformat=1 or salvage=1 said so; salvage=1 never
 * refuses.
 */
static void load_decide_never_discards_without_being_told(void **state)
{
	static const int img_slots[] = { 0, 1, -EXDEV, -ESTALE, -ENOENT };
	struct qnvram_load_facts f;
	struct qnvram_load_plan p;
	long combos = 0;
	unsigned int bits, k;

	(void)state;
	for (bits = 0; bits < 1u << 9; bits++) {
		for (k = 0; k < 5; k++) {
			f = (struct qnvram_load_facts){
				.ram_slot = (bits & 3) == 3 ? 0 : (int)(bits & 3) - 1,
				.ram_foreign = bits & 4, .ram_bad = !!(bits & 8),
				.backing = bits & 16, .img_slot = img_slots[k],
				.img_bad = !!(bits & 32),
				.img_read_error = bits & 64 ? -EIO : 0,
				.reformat = bits & 128, .salvage = bits & 256,
			};
			if (f.ram_slot < 0)
				f.ram_bad = 0;
			if (f.img_slot < 0)
				f.img_bad = 0;
			qnvram_load_decide(&f, &p);
			combos++;
			if (p.action == QNVRAM_LOAD_REFUSE)
				EXPECT_TRUE(!p.drop && !p.discard_ram && !p.retire_image &&
					    p.why != QNVRAM_WHY_NONE,
					    "combo %#x/%u: a refusal changes nothing", bits, k);
			if (f.salvage || f.reformat)
				EXPECT_TRUE(p.action != QNVRAM_LOAD_REFUSE,
					    "combo %#x/%u: refused though told", bits, k);
			if (f.reformat) {
				EXPECT_ACT(p, QNVRAM_LOAD_FORMAT, "reformat=1");
				EXPECT_TRUE(p.discard_ram && p.retire_image == (f.img_slot >= 0),
					    "combo %#x/%u", bits, k);
				continue;
			}
			if (f.salvage)
				continue;
			EXPECT_TRUE(!p.drop && !p.retire_image,
				    "combo %#x/%u: dropped or retired untold", bits, k);
			if (f.ram_slot >= 0)
				EXPECT_ACT(p, f.ram_bad ? QNVRAM_LOAD_REFUSE :
					   QNVRAM_LOAD_ADOPT, "a pool in RAM");
			if (p.action == QNVRAM_LOAD_FORMAT)
				EXPECT_TRUE(!f.ram_foreign && (!f.backing ||
					    (f.img_slot < 0 && f.img_slot != -EXDEV &&
					     !f.img_read_error)),
					    "combo %#x/%u: formatted over what holds data",
					    bits, k);
			if (p.action == QNVRAM_LOAD_RESTORE)
				EXPECT_TRUE(f.backing && f.img_slot >= 0 && !f.img_bad &&
					    !f.img_read_error && !f.ram_foreign,
					    "combo %#x/%u", bits, k);
		}
	}
	print_message("%s: %ld combinations\n", __func__, combos);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(crc32_has_the_ieee_check_value),
		cmocka_unit_test(crc32_chains_like_one_pass),
		cmocka_unit_test(structs_have_the_on_media_layout),
		cmocka_unit_test(format_writes_little_endian_header_and_empty_table),
		cmocka_unit_test(format_then_seal_validates),
		cmocka_unit_test(unsealed_format_is_a_torn_table),
		cmocka_unit_test(seal_crc_covers_whole_struct_with_crc_zeroed),
		cmocka_unit_test(any_flipped_bit_in_meta_is_ebadmsg),
		cmocka_unit_test(torn_meta_update_keeps_previous_table_current),
		cmocka_unit_test(resealed_bad_magic_or_version_is_ebadmsg),
		cmocka_unit_test(blank_media_is_not_a_table),
		cmocka_unit_test(sealed_table_of_other_pool_size_is_einval),
		cmocka_unit_test(sealed_header_geometry_mismatch_is_einval),
		cmocka_unit_test(validate_rejects_unaligned_offset_or_length),
		cmocka_unit_test(validate_rejects_zero_length),
		cmocka_unit_test(validate_rejects_resident_region_outside_data_area),
		cmocka_unit_test(validate_rejects_u64_wrapping_regions),
		cmocka_unit_test(validate_rejects_overlapping_regions_of_one_area),
		cmocka_unit_test(validate_accepts_adjacent_regions),
		cmocka_unit_test(validate_accepts_swapped_overlapping_resident_offsets),
		cmocka_unit_test(validate_accepts_swapped_regions_beyond_pool_size),
		cmocka_unit_test(validate_rejects_duplicate_uid_and_magic),
		cmocka_unit_test(validate_rejects_unknown_flags),
		cmocka_unit_test(validate_rejects_free_slot_with_leftover_fields),
		cmocka_unit_test(validate_accepts_full_table_filling_the_pool),
		cmocka_unit_test(validate_handles_pools_beyond_4GiB),
		cmocka_unit_test(meta_pick_takes_higher_generation_when_both_valid),
		cmocka_unit_test(meta_pick_takes_the_other_slot_when_one_is_torn),
		cmocka_unit_test(meta_pick_both_torn_is_ebadmsg),
		cmocka_unit_test(meta_pick_skips_sealed_table_of_other_pool_size),
		cmocka_unit_test(meta_pick_skips_sealed_but_inconsistent_table),
		cmocka_unit_test(find_returns_entry_of_uid_and_magic_or_enoent),
		cmocka_unit_test(free_slot_is_lowest_unused_or_enospc_when_full),
		cmocka_unit_test(uid_bytes_sums_resident_and_swapped_regions_of_uid),
		cmocka_unit_test(find_gap_in_empty_area_returns_area_start),
		cmocka_unit_test(find_gap_exact_fit_uses_the_hole),
		cmocka_unit_test(find_gap_is_first_fit_over_holes_between_regions),
		cmocka_unit_test(find_gap_skips_chains_of_adjacent_regions),
		cmocka_unit_test(find_gap_ignores_regions_of_the_other_area),
		cmocka_unit_test(find_gap_respects_area_bounds),
		cmocka_unit_test(find_gap_enospc_when_fragmented_though_total_suffices),
		cmocka_unit_test(space_of_empty_and_full_areas),
		cmocka_unit_test(space_tracks_alloc_and_free_patterns),
		cmocka_unit_test(random_alloc_free_matches_bitmap_model),
		cmocka_unit_test(img_seal_then_validate),
		cmocka_unit_test(any_flipped_bit_in_img_header_is_ebadmsg),
		cmocka_unit_test(img_validate_rejects_bad_magic_version_and_fields),
		cmocka_unit_test(img_pick_takes_higher_seq_of_valid_slots),
		cmocka_unit_test(img_pick_skips_torn_other_size_and_out_of_range),
		cmocka_unit_test(img_pick_without_valid_image_is_enoent),
		cmocka_unit_test(img_slot_and_swap_geometry),
		cmocka_unit_test(validate_survives_100000_random_and_near_valid_tables),
		cmocka_unit_test(img_validate_survives_100000_random_headers),
		cmocka_unit_test(stale_marker_keeps_every_field_but_the_magic),
		cmocka_unit_test(stale_marker_is_checked_like_an_image),
		cmocka_unit_test(img_pick_never_restores_an_image_a_marker_supersedes),
		cmocka_unit_test(img_newest_and_stale_seq_count_markers),
		cmocka_unit_test(img_pick_matches_model_over_100000_random_pairs),
		cmocka_unit_test(img_classify_tells_this_size_from_another_and_from_damage),
		cmocka_unit_test(resize_restores_this_size_beside_another_size_in_slot_1),
		cmocka_unit_test(resize_refuses_when_slot_0_holds_another_sizes_image),
		cmocka_unit_test(salvage_keeps_the_image_that_reformat_throws_away),
		cmocka_unit_test(read_error_refuses_the_load_and_salvage_restores_what_reads),
		cmocka_unit_test(reformat_invalidates_both_slots_so_no_reset_brings_the_old_pool_back),
		cmocka_unit_test(restore_over_another_sizes_pool_invalidates_it_first),
		cmocka_unit_test(swapped_entry_beyond_the_swap_area_does_not_fit),
		cmocka_unit_test(conflicting_entries_are_marked_in_pairs),
		cmocka_unit_test(bad_entries_in_ram_refuse_the_load_or_are_dropped),
		cmocka_unit_test(drop_of_marked_entries_always_leaves_a_fitting_table),
		cmocka_unit_test(validate_rejects_entries_longer_than_the_longest_region),
		cmocka_unit_test(uid_bytes_saturates_instead_of_wrapping),
		cmocka_unit_test(generation_and_seq_above_2_63_are_out_of_range),
		cmocka_unit_test(stage_writes_zeros_where_freed_regions_left_their_bytes),
		cmocka_unit_test(extents_of_adjacent_regions_need_no_merging),
		cmocka_unit_test(load_decide_never_discards_without_being_told),
	};

	return cmocka_run_group_tests_name("qnvram_format", tests, NULL, NULL);
}
