// SPDX-License-Identifier: GPL-2.0-only
/*
 * fb-backup: copy a block device to an image file in the foreground's idle
 * time with freeblock.ko (/dev/freeblock, through libfreeblock), then
 * verify the image against the device.
 *
 *	fb-backup /dev/vdb vdb.img
 *	fb-backup --floor 1024 --bs 1M /dev/sda sda.img
 *	fb-backup --start 1073741824 /dev/sda sda.img	# resume
 *	fb-backup --verify-only /dev/sda sda.img
 *
 * Copy: blocks arrive in any order; each is written at its own offset of
 * FILE (pwrite), so FILE is a byte-for-byte image of DEV. A new FILE is
 * created 0600 and sized to DEV first; all-zero blocks are then left as
 * holes. The bytes after the last whole block (DEV's size is not always a
 * multiple of --bs) are read directly. On SIGINT/SIGTERM the copy stops
 * and prints the --start that resumes it into the same FILE.
 *
 * Verify (after the copy, or alone with --verify-only): DEV is read again
 * through freeblock (in idle time too) and the SHA-256 (OpenSSL libcrypto)
 * of each of its --bs blocks is kept; FILE is then read in order, after its
 * cached pages are dropped, and each block's SHA-256 compared. Differing
 * blocks are printed on stdout as "differs OFFSET LENGTH"; when none
 * differs, stdout gets "sha256 HEX  FILE": FILE's SHA-256 (as sha256sum
 * prints it), which is DEV's too. Memory: 32 bytes per block (512 KiB per
 * GiB at the default 64 KiB blocks).
 *
 * Exit: 0 copied (or compared) and identical; 1 an error (unreadable
 * blocks, I/O error, the device went away, interrupted); 2 usage; 3 the
 * image differs from the device.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include <linux/freeblock.h>

#include "fb-cli.h"
#include "libfreeblock.h"

#define PROG		"fb-backup"
#define EXIT_DIFFERS	3
#define SHA_LEN		32	/* SHA-256 digest bytes */
#define MAX_DIFFS	100	/* "differs" lines printed at most */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *out)
{
	fprintf(out,
"Usage: " PROG " [OPTIONS] DEV FILE\n"
"\n"
"Copy block device DEV to the image FILE in the foreground's idle time\n"
"(freeblock.ko), then check FILE against DEV block by block (SHA-256).\n"
"You need read access to DEV.\n"
"\n"
"Options:\n"
"  -b, --bs BYTES        block size, a power of two, 4096..1048576\n"
"                        (default 65536)\n"
"  -s, --start BYTES     resume an interrupted copy into the existing FILE\n"
"                        from here (a multiple of the block size)\n"
"  -f, --floor KIBS      rate floor, KiB/s: progress even on a busy disk\n"
"  -c, --ceiling KIBS    rate ceiling, KiB/s\n"
"  -n, --slots N         ring slots (default 16)\n"
"  -p, --promote         urgent: do not wait for idle time\n"
"  -a, --any-order       let freeblock choose the block order (near where\n"
"                        the foreground works); an interrupted copy then\n"
"                        resumes from the first block not copied\n"
"  -V, --verify-only     do not copy: only compare FILE with DEV\n"
"      --no-verify       copy only\n"
"  -q, --quiet           no progress lines\n"
"  -h, --help            this help\n"
"\n"
"Numbers take a K, M or G suffix (powers of 1024). Progress goes to stderr\n"
"once a second. stdout: \"differs OFFSET LENGTH\" per block that differs,\n"
"or \"sha256 HEX  FILE\" when FILE matches DEV.\n"
"Exit status: 0 identical, 1 error or interrupted, 2 usage, 3 FILE differs.\n");
}

/* What a run needs; filled by main(). */
struct backup {
	const char *dev, *file;
	int dfd, ifd;
	uint64_t devsize;	/* bytes */
	uint64_t bs;		/* bytes per block */
	uint64_t start;		/* first byte copied */
	struct fb_task_opts opts;
	int quiet;
	int sparse;		/* FILE is new: zero blocks may stay holes */
	/* copy */
	uint64_t failed;	/* unreadable blocks */
	uint64_t first_failed;	/* the lowest of them (block number) */
	uint64_t zero_blocks;	/* left as holes */
	int write_err;		/* errno of the first failed write */
	uint64_t write_off;	/* its offset */
	/* verify */
	uint8_t (*sums)[SHA_LEN];	/* device block digests, by block */
	uint8_t *have;			/* sums[i] is set */
	const EVP_MD *sha256;
};

static int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -ENOSPC;
		p += n;
		len -= n;
		off += n;
	}
	return 0;
}

/* Reads until @len bytes or the end: the bytes read, or -errno. */
static ssize_t pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	char *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, p + got, len - got, off + got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			break;
		got += n;
	}
	return got;
}

static int all_zero(const void *buf, size_t len)
{
	const unsigned char *p = buf;

	return !p[0] && !memcmp(p, p + 1, len - 1);
}

/* fb_block_fn of the copy: write the block at its offset */
static int copy_block(void *ctx, uint64_t lbn, int status, const void *data,
		      uint32_t len)
{
	struct backup *b = ctx;
	uint64_t off = b->start + lbn * b->bs;
	int r;

	if (status) {
		b->failed++;
		if (lbn < b->first_failed)
			b->first_failed = lbn;
		fprintf(stderr, PROG ": %s: bytes %" PRIu64 "-%" PRIu64
			" unreadable: %s\n", b->dev, off, off + len - 1,
			strerror(-status));
		return 0;
	}
	if (b->sparse && all_zero(data, len)) {
		b->zero_blocks++;
		return 0;
	}
	r = pwrite_all(b->ifd, data, len, off);
	if (r) {
		b->write_err = -r;
		b->write_off = off;
		return r;
	}
	return 0;
}

/* fb_block_fn of the verification: keep the device block's digest */
static int sum_block(void *ctx, uint64_t lbn, int status, const void *data,
		     uint32_t len)
{
	struct backup *b = ctx;

	if (status) {
		b->failed++;
		fprintf(stderr, PROG ": %s: verify: bytes %" PRIu64 "-%" PRIu64
			" unreadable: %s\n", b->dev, lbn * b->bs,
			lbn * b->bs + len - 1, strerror(-status));
		return 0;
	}
	if (!EVP_Digest(data, len, b->sums[lbn], NULL, b->sha256, NULL))
		return -ENOMEM;
	b->have[lbn] = 1;
	return 0;
}

/*
 * Run one freeblock task from @start to the device's last whole block,
 * with a progress line per second named @what. Returns 0 when it
 * completed, 1 when it stopped (printed), -1 on an error (printed).
 */
static int run_task(struct backup *b, const char *what, uint64_t start,
		    fb_block_fn fn, uint64_t *prefix_out)
{
	struct fb_task_opts o = b->opts;
	double t0 = fb_now_s(), last = t0;
	struct fb_task *t;
	uint64_t nblocks;
	int r, result;

	o.start = start;
	o.len = 0;
	r = fb_task_open(&t, b->dfd, &o);
	if (r) {
		fprintf(stderr, PROG ": %s: registering the %s: %s%s\n", b->dev,
			what, strerror(-r), fb_register_hint(r));
		return -1;
	}
	nblocks = fb_task_nblocks(t);
	while ((r = fb_task_poll(t, 1000, fn, b)) == 0) {
		double now = fb_now_s();
		uint64_t done = fb_task_done(t);

		if (stop) {
			fb_task_abort(t);
			stop = 0;
		}
		if (!b->quiet && now - last >= 1) {
			fprintf(stderr, PROG ": %s: %s %5.1f%% (%.1f of %.1f MiB),"
				" %.1f MiB/s\n", b->dev, what,
				100.0 * done / nblocks,
				done * b->bs / 1048576.0,
				nblocks * b->bs / 1048576.0,
				done * b->bs / 1048576.0 / (now - t0));
			last = now;
		}
	}
	if (r < 0 && b->write_err) {
		fprintf(stderr, PROG ": %s: writing bytes %" PRIu64 "-%" PRIu64
			": %s\n", b->file, b->write_off,
			b->write_off + b->bs - 1, strerror(b->write_err));
	} else if (r < 0) {
		fprintf(stderr, PROG ": %s: %s: %s\n", b->dev, what,
			strerror(-r));
	}
	result = r < 0 ? r : fb_task_result(t);
	*prefix_out = fb_task_prefix(t);
	if (!b->quiet)
		fprintf(stderr, PROG ": %s: %s: %" PRIu64 " of %" PRIu64
			" blocks of %" PRIu64 " bytes in %.1f s\n", b->dev,
			what, fb_task_done(t), nblocks, b->bs,
			fb_now_s() - t0);
	fb_task_close(t);
	if (r < 0)
		return -1;
	if (result) {
		fprintf(stderr, PROG ": %s: %s stopped: %s\n", b->dev, what,
			strerror(-result));
		return 1;
	}
	return 0;
}

/* The bytes after the last whole block: read and written directly. */
static int copy_tail(struct backup *b, uint64_t off, uint64_t len)
{
	char *buf = malloc(len);
	ssize_t n;
	int r;

	if (!buf)
		return -ENOMEM;
	n = pread_all(b->dfd, buf, len, off);
	if (n != (ssize_t)len) {
		fprintf(stderr, PROG ": %s: reading the last %" PRIu64
			" bytes: %s\n", b->dev, len,
			n < 0 ? strerror(-n) : "short read");
		free(buf);
		return -1;
	}
	r = pwrite_all(b->ifd, buf, len, off);
	free(buf);
	if (r) {
		fprintf(stderr, PROG ": %s: writing bytes %" PRIu64 "-%" PRIu64
			": %s\n", b->file, off, off + len - 1, strerror(-r));
		return -1;
	}
	return 0;
}

/* Copy [b->start, devsize) into FILE: 0 done, 1 error or interrupted. */
static int do_copy(struct backup *b)
{
	uint64_t whole = b->devsize / b->bs * b->bs, prefix = 0;
	double t0 = fb_now_s();
	int r = 0;

	b->first_failed = UINT64_MAX;
	if (b->start < whole) {
		r = run_task(b, "copy", b->start, copy_block, &prefix);
		/* a resumed copy reads the unreadable blocks again */
		if (prefix > b->first_failed)
			prefix = b->first_failed;
		if (r) {
			if (r > 0 || !b->write_err)
				fprintf(stderr, PROG ": resume with --start %"
					PRIu64 "\n", b->start + prefix * b->bs);
			return 1;
		}
	}
	if (b->devsize > whole && copy_tail(b, whole, b->devsize - whole))
		return 1;
	if (fsync(b->ifd)) {
		fprintf(stderr, PROG ": %s: fsync: %s\n", b->file,
			strerror(errno));
		return 1;
	}
	if (!b->quiet)
		fprintf(stderr, PROG ": %s -> %s: %" PRIu64 " bytes copied in "
			"%.1f s, %" PRIu64 " zero blocks left as holes, %"
			PRIu64 " unreadable blocks\n", b->dev, b->file,
			b->devsize - b->start, fb_now_s() - t0, b->zero_blocks,
			b->failed);
	if (b->failed) {
		fprintf(stderr, PROG ": %s: %" PRIu64 " blocks unreadable; "
			"retry them with --start %" PRIu64 "\n", b->dev,
			b->failed, b->start + b->first_failed * b->bs);
		return 1;
	}
	return 0;
}

static void print_hex(FILE *out, const uint8_t *d, unsigned int len)
{
	unsigned int i;

	for (i = 0; i < len; i++)
		fprintf(out, "%02x", d[i]);
}

/*
 * Compare FILE with DEV: 0 identical, 1 error, EXIT_DIFFERS. The device's
 * block digests come from a freeblock task (any order); FILE is read in
 * order for its own block digests and its whole SHA-256.
 */
static int do_verify(struct backup *b)
{
	uint64_t nblocks = (b->devsize + b->bs - 1) / b->bs;
	uint64_t whole = b->devsize / b->bs, i, prefix, diffs = 0;
	uint8_t sum[SHA_LEN], total[SHA_LEN];
	EVP_MD_CTX *all = EVP_MD_CTX_new();
	char *buf = malloc(b->bs);
	struct stat st;
	int rc = 1;

	b->sums = calloc(nblocks, SHA_LEN);
	b->have = calloc(nblocks, 1);
	b->sha256 = EVP_sha256();
	if (!b->sums || !b->have || !buf || !all || !b->sha256 ||
	    !EVP_DigestInit_ex(all, b->sha256, NULL)) {
		fprintf(stderr, PROG ": out of memory for %" PRIu64
			" block digests\n", nblocks);
		goto out;
	}
	b->failed = 0;
	if (whole && run_task(b, "verify", 0, sum_block, &prefix)) {
		fprintf(stderr, PROG ": verification not finished; run "
			PROG " --verify-only %s %s\n", b->dev, b->file);
		goto out;
	}
	if (b->failed)
		goto out;
	if (whole < nblocks) {		/* the tail, read directly */
		ssize_t n = pread_all(b->dfd, buf, b->devsize - whole * b->bs,
				      whole * b->bs);

		if (n != (ssize_t)(b->devsize - whole * b->bs) ||
		    !EVP_Digest(buf, n, b->sums[whole], NULL, b->sha256, NULL)) {
			fprintf(stderr, PROG ": %s: reading the last bytes: "
				"%s\n", b->dev, n < 0 ? strerror(-n) : "short");
			goto out;
		}
		b->have[whole] = 1;
	}

	if (fstat(b->ifd, &st)) {
		fprintf(stderr, PROG ": %s: %s\n", b->file, strerror(errno));
		goto out;
	}
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size != b->devsize) {
		fprintf(stderr, PROG ": %s is %jd bytes, %s %" PRIu64 "\n",
			b->file, (intmax_t)st.st_size, b->dev, b->devsize);
		diffs++;
	}
	/* read FILE from its storage, not from the pages just written */
	posix_fadvise(b->ifd, 0, 0, POSIX_FADV_DONTNEED);
	for (i = 0; i < nblocks; i++) {
		uint64_t off = i * b->bs;
		size_t len = i < whole ? b->bs : b->devsize - off;
		ssize_t n = pread_all(b->ifd, buf, len, off);

		if (n < 0) {
			fprintf(stderr, PROG ": %s: reading bytes %" PRIu64
				"-%" PRIu64 ": %s\n", b->file, off,
				off + len - 1, strerror(-n));
			goto out;
		}
		if (!EVP_Digest(buf, n, sum, NULL, b->sha256, NULL) ||
		    !EVP_DigestUpdate(all, buf, n))
			goto out;
		if (!b->have[i] || (size_t)n != len ||
		    memcmp(sum, b->sums[i], SHA_LEN)) {
			if (diffs++ < MAX_DIFFS)
				printf("differs %" PRIu64 " %zu\n", off, len);
		}
	}
	if (!EVP_DigestFinal_ex(all, total, NULL))
		goto out;
	if (diffs) {
		fprintf(stderr, PROG ": %s differs from %s in %" PRIu64
			" blocks of %" PRIu64 " bytes\n", b->file, b->dev,
			diffs, b->bs);
		rc = EXIT_DIFFERS;
		goto out;
	}
	printf("sha256 ");
	print_hex(stdout, total, SHA_LEN);
	printf("  %s\n", b->file);
	if (!b->quiet)
		fprintf(stderr, PROG ": %s matches %s: %" PRIu64 " blocks\n",
			b->file, b->dev, nblocks);
	rc = 0;
out:
	EVP_MD_CTX_free(all);
	free(buf);
	free(b->sums);
	free(b->have);
	b->sums = NULL;
	b->have = NULL;
	return rc;
}

/*
 * Open FILE: for a new copy created (0600) or truncated, then sized to the
 * device; to resume or verify, it must exist. A block device must be at
 * least as large as DEV and must not be DEV.
 */
static int open_image(struct backup *b, int fresh, int verify_only)
{
	struct stat ds, fs;
	int flags = verify_only ? O_RDONLY : O_RDWR;

	if (fstat(b->dfd, &ds))
		return -errno;
	if (!stat(b->file, &fs) && S_ISBLK(fs.st_mode) &&
	    fs.st_rdev == ds.st_rdev) {
		fprintf(stderr, PROG ": %s and %s are the same device\n",
			b->dev, b->file);
		return -EINVAL;
	}
	if (fresh && !verify_only)
		flags |= O_CREAT;
	b->ifd = open(b->file, flags | O_CLOEXEC, 0600);
	if (b->ifd < 0 || fstat(b->ifd, &fs)) {
		int err = errno;

		fprintf(stderr, PROG ": %s: %s%s\n", b->file, strerror(err),
			err == ENOENT && !fresh ? " (--start resumes into the "
			"image of the interrupted run)" : "");
		return -err;
	}
	if (S_ISBLK(fs.st_mode)) {
		uint64_t size;

		if (fb_dev_size(b->ifd, &size) || size < b->devsize) {
			fprintf(stderr, PROG ": %s is smaller than %s\n",
				b->file, b->dev);
			return -ENOSPC;
		}
		return 0;
	}
	if (!S_ISREG(fs.st_mode)) {
		fprintf(stderr, PROG ": %s: not a regular file or block "
			"device\n", b->file);
		return -EINVAL;
	}
	if (verify_only)
		return 0;
	if ((fresh && ftruncate(b->ifd, 0)) ||
	    ftruncate(b->ifd, b->devsize)) {
		fprintf(stderr, PROG ": %s: sizing to %" PRIu64 " bytes: %s\n",
			b->file, b->devsize, strerror(errno));
		return -errno;
	}
	b->sparse = fresh;
	return 0;
}

int main(int argc, char **argv)
{
	enum { OPT_NO_VERIFY = 256 };
	static const struct option opts[] = {
		{ "bs", required_argument, NULL, 'b' },
		{ "start", required_argument, NULL, 's' },
		{ "floor", required_argument, NULL, 'f' },
		{ "ceiling", required_argument, NULL, 'c' },
		{ "slots", required_argument, NULL, 'n' },
		{ "promote", no_argument, NULL, 'p' },
		{ "any-order", no_argument, NULL, 'a' },
		{ "verify-only", no_argument, NULL, 'V' },
		{ "no-verify", no_argument, NULL, OPT_NO_VERIFY },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t bs = 65536, start = 0, floor_k = 0, ceil_k = 0, slots = 16;
	int verify_only = 0, no_verify = 0, have_start = 0, c, r;
	struct backup b = { .dfd = -1, .ifd = -1 };

	while ((c = getopt_long(argc, argv, "b:s:f:c:n:paVqh", opts, NULL)) != -1) {
		uint64_t *dst = NULL;

		switch (c) {
		case 'b': dst = &bs; break;
		case 's': dst = &start; have_start = 1; break;
		case 'f': dst = &floor_k; break;
		case 'c': dst = &ceil_k; break;
		case 'n': dst = &slots; break;
		case 'p': b.opts.promote = 1; break;
		case 'a': b.opts.any_order = 1; break;
		case 'V': verify_only = 1; break;
		case OPT_NO_VERIFY: no_verify = 1; break;
		case 'q': b.quiet = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
		if (dst && fb_parse_size(optarg, dst)) {
			fprintf(stderr, PROG ": bad number '%s'\n", optarg);
			return 2;
		}
	}
	if (optind != argc - 2) {
		fprintf(stderr, PROG ": expected DEV FILE (see --help)\n");
		return 2;
	}
	if (bs < 4096 || bs > FB_BLKSIZE_MAX || (bs & (bs - 1)) ||
	    start % bs || !slots || slots > FB_SLOTS_MAX ||
	    floor_k > UINT32_MAX || ceil_k > UINT32_MAX ||
	    (floor_k && ceil_k && floor_k > ceil_k)) {
		fprintf(stderr, PROG ": --bs must be a power of two in 4K..1M, "
			"--start a multiple of it, --slots 1..%u, --floor at "
			"most --ceiling\n", FB_SLOTS_MAX);
		return 2;
	}
	if (verify_only && (no_verify || have_start)) {
		fprintf(stderr, PROG ": --verify-only takes no --no-verify or "
			"--start\n");
		return 2;
	}
	b.dev = argv[optind];
	b.file = argv[optind + 1];
	b.bs = bs;
	b.start = start;
	b.opts.blksize = bs;
	b.opts.nslots = slots;
	b.opts.floor_kbps = floor_k;
	b.opts.ceiling_kbps = ceil_k;

	b.dfd = open(b.dev, O_RDONLY | O_CLOEXEC);
	if (b.dfd < 0) {
		fprintf(stderr, PROG ": %s: %s\n", b.dev, strerror(errno));
		return 1;
	}
	r = fb_dev_size(b.dfd, &b.devsize);
	if (r) {
		fprintf(stderr, PROG ": %s: %s\n", b.dev, strerror(-r));
		return 1;
	}
	if (b.devsize < bs || start >= b.devsize) {
		fprintf(stderr, PROG ": %s is %" PRIu64 " bytes: --bs and "
			"--start must be below that\n", b.dev, b.devsize);
		return 2;
	}
	if (open_image(&b, !have_start, verify_only))
		return 1;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	if (!verify_only) {
		r = do_copy(&b);
		if (r || no_verify)
			return r;
	}
	return do_verify(&b);
}
