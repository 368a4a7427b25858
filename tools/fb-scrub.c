// SPDX-License-Identifier: GPL-2.0-only
/*
 * fb-scrub: read a whole block device in the background with freeblock.ko
 * (/dev/freeblock): the kernel issues the reads only when the foreground
 * leaves the disk idle (or when the --floor rate is due), and this program
 * receives each block through the mapped ring. Blocks that fail are read
 * again sector by sector (O_DIRECT) to name the unreadable sectors.
 *
 *	fb-scrub /dev/vdb
 *	fb-scrub --floor 1024 --bs 1M /dev/sda
 *	fb-scrub --start 1073741824 /dev/sda	# resume where it stopped
 *	fb-scrub --any-order /dev/sda	# blocks near the foreground's first
 *
 * Progress goes to stderr once a second; unreadable sectors to stdout, one
 * "unreadable SECTOR" line each. On SIGINT/SIGTERM it stops and prints the
 * --start that resumes it. Exit: 0 every sector read, 1 unreadable sectors
 * or an error, 2 usage. The ring is libfreeblock's (libfreeblock.h).
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
#include <time.h>
#include <unistd.h>

#include <linux/freeblock.h>

#include "fb-cli.h"
#include "libfreeblock.h"

#define PROG "fb-scrub"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *out)
{
	fprintf(out,
"Usage: " PROG " [OPTIONS] DEV\n"
"\n"
"Read block device DEV in the foreground's idle time (freeblock.ko) and\n"
"report its unreadable sectors. You need read access to DEV.\n"
"\n"
"Options:\n"
"  -b, --bs BYTES        block size, a power of two, 4096..1048576\n"
"                        (default 65536)\n"
"  -s, --start BYTES     start here (a multiple of the block size): resume\n"
"  -l, --len BYTES       bytes to read (default: to the end)\n"
"  -f, --floor KIBS      rate floor, KiB/s: progress even on a busy disk\n"
"  -c, --ceiling KIBS    rate ceiling, KiB/s\n"
"  -n, --slots N         ring slots (default 16)\n"
"  -p, --promote         urgent: do not wait for idle time\n"
"  -a, --any-order       let freeblock choose the block order (near where\n"
"                        the foreground works); an interrupted scrub then\n"
"                        resumes from the first block not read\n"
"  -q, --quiet           no progress lines\n"
"  -h, --help            this help\n"
"\n"
"Numbers take a K, M or G suffix (powers of 1024).\n"
"Exit status: 0 all readable, 1 unreadable sectors or error, 2 usage.\n");
}

/* Read a failed block sector by sector; print each unreadable sector. */
static uint64_t find_bad_sectors(const char *dev, uint64_t off, uint32_t len)
{
	uint64_t bad = 0, s;
	void *buf;
	int fd = open(dev, O_RDONLY | O_DIRECT);

	if (fd < 0 || posix_memalign(&buf, 4096, 4096)) {
		printf("unreadable %" PRIu64 "-%" PRIu64 "\n", off / 512,
		       (off + len) / 512 - 1);
		if (fd >= 0)
			close(fd);
		return len / 512;
	}
	for (s = off; s < off + len; s += 512) {
		if (pread(fd, buf, 512, s) != 512) {
			printf("unreadable %" PRIu64 "\n", s / 512);
			bad++;
		}
	}
	free(buf);
	close(fd);
	return bad;
}

struct scrub {
	const char *dev;
	uint64_t start, bs;
	uint64_t failed, bad_sectors;
};

/* fb_block_fn: a failed block is read again sector by sector */
static int on_block(void *ctx, uint64_t lbn, int status, const void *data,
		    uint32_t len)
{
	struct scrub *s = ctx;

	(void)data;
	if (status) {
		s->failed++;
		s->bad_sectors += find_bad_sectors(s->dev, s->start + lbn * s->bs,
						   len);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "bs", required_argument, NULL, 'b' },
		{ "start", required_argument, NULL, 's' },
		{ "len", required_argument, NULL, 'l' },
		{ "floor", required_argument, NULL, 'f' },
		{ "ceiling", required_argument, NULL, 'c' },
		{ "slots", required_argument, NULL, 'n' },
		{ "promote", no_argument, NULL, 'p' },
		{ "any-order", no_argument, NULL, 'a' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t bs = 65536, start = 0, len = 0, floor_k = 0, ceil_k = 0;
	uint64_t slots = 16, nblocks;
	int promote = 0, any_order = 0, quiet = 0, c, dfd, r, result, rc = 0;
	struct fb_task_opts o = { 0 };
	struct scrub s = { 0 };
	struct fb_task *t;
	double t0, last = 0;
	const char *dev;

	while ((c = getopt_long(argc, argv, "b:s:l:f:c:n:paqh", opts, NULL)) != -1) {
		uint64_t *dst = NULL;

		switch (c) {
		case 'b': dst = &bs; break;
		case 's': dst = &start; break;
		case 'l': dst = &len; break;
		case 'f': dst = &floor_k; break;
		case 'c': dst = &ceil_k; break;
		case 'n': dst = &slots; break;
		case 'p': promote = 1; break;
		case 'a': any_order = 1; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
		if (dst && fb_parse_size(optarg, dst)) {
			fprintf(stderr, PROG ": bad number '%s'\n", optarg);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	dev = argv[optind];
	if (bs < 4096 || bs > FB_BLKSIZE_MAX || (bs & (bs - 1)) ||
	    start % bs || !slots || slots > FB_SLOTS_MAX ||
	    floor_k > UINT32_MAX || ceil_k > UINT32_MAX) {
		fprintf(stderr, PROG ": --bs must be a power of two in 4K..1M, "
			"--start a multiple of it, --slots 1..%u\n",
			FB_SLOTS_MAX);
		return 2;
	}

	dfd = open(dev, O_RDONLY);
	if (dfd < 0) {
		fprintf(stderr, PROG ": %s: %s\n", dev, strerror(errno));
		return 1;
	}
	o.blksize = bs;
	o.start = start;
	o.len = len;
	o.nslots = slots;
	o.floor_kbps = floor_k;
	o.ceiling_kbps = ceil_k;
	o.promote = promote;
	o.any_order = any_order;
	r = fb_task_open(&t, dfd, &o);
	close(dfd);
	if (r) {
		fprintf(stderr, PROG ": %s: registering the scrub: %s%s\n", dev,
			strerror(-r), fb_register_hint(r));
		return 1;
	}
	nblocks = fb_task_nblocks(t);
	s.dev = dev;
	s.start = start;
	s.bs = bs;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	t0 = fb_now_s();

	while ((r = fb_task_poll(t, 1000, on_block, &s)) == 0) {
		double now = fb_now_s();
		uint64_t done = fb_task_done(t);

		if (stop) {
			fb_task_abort(t);
			stop = 0;
		}
		if (!quiet && now - last >= 1) {
			fprintf(stderr, PROG ": %s: %5.1f%% (%.1f of %.1f MiB), "
				"%.1f MiB/s, %" PRIu64 " unreadable sectors\n",
				dev, 100.0 * done / nblocks,
				done * bs / 1048576.0,
				nblocks * bs / 1048576.0,
				done * bs / 1048576.0 / (now - t0 + 1e-9),
				s.bad_sectors);
			last = now;
		}
	}
	if (r < 0) {
		fprintf(stderr, PROG ": %s: %s\n", dev, strerror(-r));
		fb_task_close(t);
		return 1;
	}
	result = fb_task_result(t);
	if (result) {
		fprintf(stderr, PROG ": %s: stopped (%s) after %" PRIu64
			" of %" PRIu64 " blocks; resume with --start %" PRIu64
			"\n", dev, strerror(-result), fb_task_done(t),
			nblocks, start + fb_task_prefix(t) * bs);
		rc = 1;
	}
	if (!quiet)
		fprintf(stderr, PROG ": %s: %" PRIu64 " blocks of %" PRIu64
			" bytes read in %.1f s, %" PRIu64 " failed, %" PRIu64
			" unreadable sectors\n", dev, fb_task_done(t), bs,
			fb_now_s() - t0, s.failed, s.bad_sectors);
	fb_task_close(t);
	return rc || s.failed ? 1 : 0;
}
