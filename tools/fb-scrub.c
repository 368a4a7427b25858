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
 *
 * Progress goes to stderr once a second; unreadable sectors to stdout, one
 * "unreadable SECTOR" line each. On SIGINT/SIGTERM it stops and prints the
 * --start that resumes it. Exit: 0 every sector read, 1 unreadable sectors
 * or an error, 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/freeblock.h>

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
"  -q, --quiet           no progress lines\n"
"  -h, --help            this help\n"
"\n"
"Numbers take a K, M or G suffix (powers of 1024).\n"
"Exit status: 0 all readable, 1 unreadable sectors or error, 2 usage.\n");
}

static int parse_size(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		return -1;
	switch (*end) {
	case 'K': case 'k':
		n <<= 10, end++;
		break;
	case 'M': case 'm':
		n <<= 20, end++;
		break;
	case 'G': case 'g':
		n <<= 30, end++;
		break;
	}
	if (*end)
		return -1;
	*v = n;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
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
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t bs = 65536, start = 0, len = 0, floor_k = 0, ceil_k = 0;
	uint64_t slots = 16, done = 0, failed = 0, bad_sectors = 0, prefix;
	int promote = 0, quiet = 0, c, fd, dfd, rc = 0;
	struct fb_scrub_req req = { 0 };
	volatile struct fb_ring_hdr *hdr;
	const struct fb_desc *desc;
	double t0, last = 0;
	uint32_t tail = 0;
	uint8_t *seen;
	const char *dev;
	void *ring;

	while ((c = getopt_long(argc, argv, "b:s:l:f:c:n:pqh", opts, NULL)) != -1) {
		uint64_t *dst = NULL;

		switch (c) {
		case 'b': dst = &bs; break;
		case 's': dst = &start; break;
		case 'l': dst = &len; break;
		case 'f': dst = &floor_k; break;
		case 'c': dst = &ceil_k; break;
		case 'n': dst = &slots; break;
		case 'p': promote = 1; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
		if (dst && parse_size(optarg, dst)) {
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
	fd = open("/dev/" FREEBLOCK_DEV_NAME, O_RDWR);
	if (fd < 0) {
		fprintf(stderr, PROG ": /dev/" FREEBLOCK_DEV_NAME ": %s%s\n",
			strerror(errno),
			errno == ENOENT ? " (is freeblock.ko loaded?)" : "");
		return 1;
	}
	req.fd = dfd;
	req.blksize = bs;
	req.start = start;
	req.len = len;
	req.nslots = slots;
	req.floor_kbps = floor_k;
	req.ceiling_kbps = ceil_k;
	if (ioctl(fd, FB_IOC_SCRUB, &req)) {
		fprintf(stderr, PROG ": %s: registering the scrub: %s\n", dev,
			strerror(errno));
		return 1;
	}
	close(dfd);
	if (promote && ioctl(fd, FB_IOC_PROMOTE))
		fprintf(stderr, PROG ": promote: %s\n", strerror(errno));
	ring = mmap(NULL, req.ring_bytes, PROT_READ, MAP_SHARED, fd, 0);
	seen = calloc(req.nblocks, 1);
	if (ring == MAP_FAILED || !seen) {
		fprintf(stderr, PROG ": mapping the ring: %s\n",
			strerror(errno));
		return 1;
	}
	hdr = ring;
	desc = (const struct fb_desc *)((const char *)ring + hdr->desc_off);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	t0 = now_s();

	for (;;) {
		uint32_t state = __atomic_load_n(&hdr->state, __ATOMIC_ACQUIRE);
		uint32_t head = __atomic_load_n(&hdr->head, __ATOMIC_ACQUIRE);
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		double t;

		for (; tail != head; tail++) {
			const struct fb_desc *d = &desc[tail % hdr->nslots];

			if (d->lbn >= req.nblocks || seen[d->lbn])
				continue;	/* never: the kernel is trusted less */
			seen[d->lbn] = 1;
			done++;
			if (d->status) {
				failed++;
				bad_sectors += find_bad_sectors(dev,
						start + d->lbn * bs, bs);
			}
		}
		if (ioctl(fd, FB_IOC_CONSUME, (unsigned long)tail)) {
			fprintf(stderr, PROG ": consume: %s\n", strerror(errno));
			return 1;
		}
		if (state == FB_STATE_ENDED)
			break;
		if (stop) {
			ioctl(fd, FB_IOC_ABORT);
			stop = 0;
		}
		t = now_s();
		if (!quiet && t - last >= 1) {
			fprintf(stderr, PROG ": %s: %5.1f%% (%.1f of %.1f MiB), "
				"%.1f MiB/s, %" PRIu64 " unreadable sectors\n",
				dev, 100.0 * done / req.nblocks,
				done * bs / 1048576.0,
				req.nblocks * bs / 1048576.0,
				done * bs / 1048576.0 / (t - t0 + 1e-9),
				bad_sectors);
			last = t;
		}
		poll(&pfd, 1, 1000);
	}

	for (prefix = 0; prefix < req.nblocks && seen[prefix]; prefix++)
		;
	if (hdr->result) {
		fprintf(stderr, PROG ": %s: stopped (%s) after %" PRIu64
			" of %" PRIu64 " blocks; resume with --start %" PRIu64
			"\n", dev, strerror(-hdr->result), done,
			(uint64_t)req.nblocks, start + prefix * bs);
		rc = 1;
	}
	if (!quiet)
		fprintf(stderr, PROG ": %s: %" PRIu64 " blocks of %" PRIu64
			" bytes read in %.1f s, %" PRIu64 " failed, %" PRIu64
			" unreadable sectors\n", dev, done, bs, now_s() - t0,
			failed, bad_sectors);
	return rc || failed ? 1 : 0;
}
