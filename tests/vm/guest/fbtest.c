// SPDX-License-Identifier: GPL-2.0
/*
 * fbtest: the guest helper of tests/vm/guest/freeblock-*.sh, over
 * /dev/freeblock (include/uapi/linux/freeblock.h).
 *
 *   fbtest fill DEV SEED              write the pattern of SEED over DEV
 *   fbtest scrub DEV [options]        register a scrub, consume the ring,
 *                                     check every block came exactly once
 *                                     (and its data, with --seed); prints
 *                                     one "key=value ..." summary line
 *     --bs N --slots N --start B --len B --floor KIBS --ceil KIBS
 *     --seed S --promote-after-ms MS --abort-after BLOCKS
 *     --consume-delay-us US (per block: fills the ring, stalls the task)
 *     --report-at-ms MS (got_at= in the summary: blocks got by then)
 *     --any-order 1 (a speculative task: FB_SCRUB_F_SPECULATIVE; the
 *     summary's first_lbn=, first8_min=, first8_max= and ascending=
 *     show the order)
 *     --set-rate-after BLOCKS with --set-floor KIBS --set-ceil KIBS:
 *     FB_IOC_SET_RATE once BLOCKS blocks came (the summary's rate_set_ms=
 *     is when, after_rate_ms= the time from then to the end,
 *     rate_got= the blocks got by then, rate_errno= 0 or its errno)
 *     --deadline-ms MS (abort the task if it has not ended by then)
 *   fbtest hold DEV                   register a slow scrub, print
 *                                     "registered", then sleep until killed
 *   fbtest bad DEV REGFILE            every malformed request: one line
 *                                     "ok NAME" or "bad NAME expected E saw S"
 *   fbtest open-as UID DEV            setuid(UID), open DEV for reading:
 *                                     prints the errno name or "ok"
 *   fbtest rings DEV BS SLOTS COUNT [hold]
 *                                     COUNT /dev/freeblock files, each
 *                                     registering a slow scrub with a ring
 *                                     of SLOTS x BS (--any-order when BS
 *                                     is given as sBS): prints
 *                                     "registered=N ring_bytes=B" and the
 *                                     errno name of the first refusal
 *                                     ("refused=ENOSPC", or "refused=none"),
 *                                     then with "hold" prints "holding" and
 *                                     sleeps until killed
 *   fbtest fuzz DEV COUNT SEED        COUNT random ioctls, mmaps and
 *                                     closes on /dev/freeblock; prints
 *                                     "ops=N ok=N errors=N"
 *   fbtest load DEV SECONDS           foreground: 4 KiB O_DIRECT random
 *                                     reads back to back (queue depth 1);
 *                                     prints "reads=N"
 *   fbtest park DEV SECONDS OFF SPAN GAP_MS
 *                                     foreground parked in one place: a
 *                                     4 KiB O_DIRECT read at a random
 *                                     offset in [OFF, OFF + SPAN), then
 *                                     GAP_MS of think time; "reads=N"
 *   fbtest write DEV SEED [options]   a write task (FB_IOC_WRITE through
 *                                     tools/libfreeblock.c) writing the
 *                                     pattern of SEED: each block's data is
 *                                     given when the kernel asks for it;
 *                                     prints one "key=value ..." line
 *     --bs N --slots N --start B --len B --ceil KIBS --abort-after BLOCKS
 *     --promote 1 --any-order 1 (blocks asked for in any order, each once)
 *   fbtest badwrite DEV               malformed write requests and fills:
 *                                     "ok NAME" / "bad NAME ..." lines
 *   fbtest badrate DEV                malformed FB_IOC_SET_RATE requests:
 *                                     "ok NAME" / "bad NAME ..." lines
 *
 * Exit: 0 when every check held, 1 otherwise, 2 on usage errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/freeblock.h>

#include "../../../tools/libfreeblock.c"

static uint64_t pattern(uint64_t off, uint64_t seed)
{
	return (off * 0x9e3779b97f4a7c15ULL) ^ seed;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int fill(const char *dev, uint64_t seed)
{
	static uint64_t buf[1 << 17];	/* 1 MiB */
	uint64_t off = 0;
	ssize_t n;
	int fd = open(dev, O_WRONLY);
	size_t i;

	if (fd < 0) {
		perror(dev);
		return 1;
	}
	for (;;) {
		for (i = 0; i < sizeof(buf) / 8; i++)
			buf[i] = pattern(off + i * 8, seed);
		n = write(fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		off += n;
	}
	if (fsync(fd)) {
		perror("fsync");
		return 1;
	}
	close(fd);
	printf("filled=%" PRIu64 "\n", off);
	return 0;
}

struct scrub_opts {
	uint32_t bs, slots, floor, ceil;
	uint64_t start, len, seed;
	int have_seed;
	long promote_after_ms;
	long abort_after;
	long consume_delay_us;
	long report_at_ms;
	int any_order;
	long set_rate_after;
	uint32_t set_floor, set_ceil;
	long deadline_ms;
};

static int scrub(const char *dev, const struct scrub_opts *o)
{
	struct fb_scrub_req req = {
		.blksize = o->bs, .start = o->start, .len = o->len,
		.nslots = o->slots, .floor_kbps = o->floor,
		.ceiling_kbps = o->ceil,
		.flags = o->any_order ? FB_SCRUB_F_SPECULATIVE : 0,
	};
	uint64_t got = 0, dup = 0, bad = 0, failed = 0, outside = 0, i;
	uint64_t first_lbn = UINT64_MAX, first8_min = UINT64_MAX, last_lbn = 0;
	uint64_t first8_max = 0;
	int ascending = 1;
	uint64_t t0 = now_ms(), t_first = 0, got_at = 0;
	uint64_t rate_set_ms = 0, rate_got = 0;
	int reported = 0, rate_set = 0, rate_errno = 0;
	volatile struct fb_ring_hdr *hdr;
	int promoted = 0, aborted = 0, fd, dfd, ok;
	const struct fb_desc *desc;
	const uint8_t *data;
	uint8_t *seen;
	uint32_t tail = 0;
	void *ring;

	fd = open("/dev/freeblock", O_RDWR);
	dfd = open(dev, O_RDONLY);
	if (fd < 0 || dfd < 0) {
		perror("open");
		return 1;
	}
	req.fd = dfd;
	if (ioctl(fd, FB_IOC_SCRUB, &req)) {
		printf("scrub_errno=%d (%s)\n", errno, strerror(errno));
		return 1;
	}
	close(dfd);	/* the task holds its own reference */
	ring = mmap(NULL, req.ring_bytes, PROT_READ, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	hdr = ring;
	if (hdr->magic != FB_RING_MAGIC || hdr->nslots != o->slots ||
	    hdr->slot_bytes != o->bs || hdr->nblocks != req.nblocks) {
		printf("bad ring header\n");
		return 1;
	}
	desc = (const struct fb_desc *)((const char *)ring + hdr->desc_off);
	data = (const uint8_t *)ring + hdr->data_off;
	seen = calloc(req.nblocks, 1);
	if (!seen)
		return 1;

	for (;;) {
		uint32_t head = __atomic_load_n(&hdr->head, __ATOMIC_ACQUIRE);
		uint32_t state = __atomic_load_n(&hdr->state, __ATOMIC_ACQUIRE);
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (state == FB_STATE_ENDED)
			head = __atomic_load_n(&hdr->head, __ATOMIC_ACQUIRE);
		for (; tail != head; tail++) {
			const struct fb_desc *d = &desc[tail % hdr->nslots];
			const uint64_t *w;

			if (!t_first)
				t_first = now_ms();
			if (d->lbn >= req.nblocks || d->slot >= hdr->nslots) {
				outside++;
				continue;
			}
			if (seen[d->lbn]++)
				dup++;
			if (!got)
				first_lbn = d->lbn;
			else if (d->lbn <= last_lbn)
				ascending = 0;
			if (got < 8 && d->lbn < first8_min)
				first8_min = d->lbn;
			if (got < 8 && d->lbn > first8_max)
				first8_max = d->lbn;
			last_lbn = d->lbn;
			got++;
			if (d->status) {
				failed++;
				continue;
			}
			w = (const uint64_t *)(data + (uint64_t)d->slot * o->bs);
			if (o->have_seed)
				for (i = 0; i < o->bs / 8; i++)
					if (w[i] != pattern(o->start + d->lbn * o->bs + i * 8,
							    o->seed)) {
						bad++;
						break;
					}
			if (o->consume_delay_us)
				usleep(o->consume_delay_us);
		}
		if (ioctl(fd, FB_IOC_CONSUME, (unsigned long)tail)) {
			perror("FB_IOC_CONSUME");
			return 1;
		}
		if (o->report_at_ms >= 0 && !reported &&
		    now_ms() - t0 >= (uint64_t)o->report_at_ms) {
			got_at = got;
			reported = 1;
		}
		if (state == FB_STATE_ENDED)
			break;
		if (!aborted && ((o->abort_after >= 0 &&
				  got >= (uint64_t)o->abort_after) ||
				 (o->deadline_ms >= 0 && now_ms() - t0 >=
				  (uint64_t)o->deadline_ms))) {
			if (ioctl(fd, FB_IOC_ABORT)) {
				perror("FB_IOC_ABORT");
				return 1;
			}
			aborted = 1;
		}
		if (o->set_rate_after >= 0 && !rate_set &&
		    got >= (uint64_t)o->set_rate_after) {
			struct fb_rate_req rr = {
				.floor_kbps = o->set_floor,
				.ceiling_kbps = o->set_ceil,
			};

			rate_set_ms = now_ms();
			rate_got = got;
			if (ioctl(fd, FB_IOC_SET_RATE, &rr))
				rate_errno = errno;
			rate_set = 1;
		}
		if (o->promote_after_ms >= 0 && !promoted &&
		    now_ms() - t0 >= (uint64_t)o->promote_after_ms) {
			if (ioctl(fd, FB_IOC_PROMOTE)) {
				perror("FB_IOC_PROMOTE");
				return 1;
			}
			promoted = 1;
			/* a second promotion is refused */
			if (ioctl(fd, FB_IOC_PROMOTE) == 0 || errno != EALREADY)
				printf("promote_twice_errno=%d\n", errno);
		}
		poll(&pfd, 1, 100);
	}
	ok = !dup && !bad && !outside;
	if (!aborted && hdr->result == 0)
		ok = ok && got == req.nblocks;
	printf("nblocks=%" PRIu64 " got=%" PRIu64 " dup=%" PRIu64
	       " bad=%" PRIu64 " failed=%" PRIu64 " outside=%" PRIu64
	       " result=%d promoted=%d aborted=%d ring_done=%llu"
	       " elapsed_ms=%" PRIu64 " first_ms=%" PRIu64
	       " got_at=%" PRIu64 " first_lbn=%" PRId64 " first8_min=%" PRId64
	       " first8_max=%" PRIu64 " ascending=%d",
	       (uint64_t)req.nblocks, got, dup, bad, failed, outside,
	       hdr->result, promoted, aborted,
	       (unsigned long long)hdr->blocks_done, now_ms() - t0,
	       t_first ? t_first - t0 : 0, reported ? got_at : got,
	       (int64_t)first_lbn, (int64_t)first8_min, first8_max, ascending);
	if (o->set_rate_after >= 0)
		printf(" rate_set=%d rate_errno=%d rate_got=%" PRIu64
		       " rate_set_ms=%" PRIu64 " after_rate_ms=%" PRIu64,
		       rate_set, rate_errno, rate_got,
		       rate_set ? rate_set_ms - t0 : 0,
		       rate_set ? now_ms() - rate_set_ms : 0);
	printf("\n");
	if (o->set_rate_after >= 0 && (!rate_set || rate_errno))
		ok = 0;
	return ok ? 0 : 1;
}

static int hold(const char *dev)
{
	struct fb_scrub_req req = {
		.blksize = 4096, .nslots = 4, .ceiling_kbps = 4,
	};
	int fd = open("/dev/freeblock", O_RDWR);

	req.fd = open(dev, O_RDONLY);
	if (fd < 0 || req.fd < 0 || ioctl(fd, FB_IOC_SCRUB, &req)) {
		perror("hold");
		return 1;
	}
	printf("registered id=%u nblocks=%llu\n", req.id,
	       (unsigned long long)req.nblocks);
	fflush(stdout);
	for (;;)
		pause();
}

/* The errno names the tests compare. */
static const char *errno_name(int e)
{
	switch (e) {
	case ENOSPC: return "ENOSPC";
	case ENOMEM: return "ENOMEM";
	case EBUSY: return "EBUSY";
	case EMFILE: return "EMFILE";
	case EINVAL: return "EINVAL";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	default: return strerror(e);
	}
}

static int rings(const char *dev, const char *bs, const char *slots,
		 const char *count, int hold)
{
	struct fb_scrub_req req = { .ceiling_kbps = 4 };
	uint64_t ring_bytes = 0;
	long n = strtol(count, NULL, 0), i;
	int dfd = open(dev, O_RDONLY), fd, err = 0;

	if (*bs == 's') {
		req.flags = FB_SCRUB_F_SPECULATIVE;
		bs++;
	}
	req.blksize = strtoul(bs, NULL, 0);
	req.nslots = strtoul(slots, NULL, 0);
	if (dfd < 0) {
		perror(dev);
		return 1;
	}
	for (i = 0; i < n; i++) {
		struct fb_scrub_req r = req;

		fd = open("/dev/freeblock", O_RDWR);
		if (fd < 0) {
			err = errno;
			break;
		}
		r.fd = dfd;
		if (ioctl(fd, FB_IOC_SCRUB, &r)) {
			err = errno;
			close(fd);
			break;
		}
		ring_bytes += r.ring_bytes;
	}
	printf("registered=%ld ring_bytes=%" PRIu64 " refused=%s\n", i,
	       ring_bytes, err ? errno_name(err) : "none");
	fflush(stdout);
	if (!hold)
		return 0;
	printf("holding\n");
	fflush(stdout);
	for (;;)
		pause();
}

static int failures;

static void expect(const char *name, int ret, int want)
{
	int err = ret ? errno : 0;

	if (ret && err == want) {
		printf("ok %s\n", name);
	} else {
		printf("bad %s expected %s saw %s\n", name, strerror(want),
		       ret ? strerror(err) : "success");
		failures++;
	}
}

static int scrub_req(int fd, struct fb_scrub_req *r)
{
	return ioctl(fd, FB_IOC_SCRUB, r);
}

static int bad(const char *dev, const char *regfile)
{
	struct fb_scrub_req good = { .blksize = 4096, .nslots = 4, .len = 1 << 20,
				     .ceiling_kbps = 4 };
	struct fb_scrub_req r;
	int fd = open("/dev/freeblock", O_RDWR);
	int dfd = open(dev, O_RDONLY);
	int wfd = open(dev, O_WRONLY);
	int rfd = open(regfile, O_RDONLY);
	void *p;

	if (fd < 0 || dfd < 0 || wfd < 0 || rfd < 0) {
		perror("open");
		return 1;
	}
	good.fd = dfd;
#define TRY(name, field, value, want) do { \
		r = good; r.field = value; \
		expect(name, scrub_req(fd, &r), want); \
	} while (0)
	TRY("fd_negative_ebadf", fd, -1, EBADF);
	TRY("fd_unused_ebadf", fd, 1000, EBADF);
	TRY("fd_regular_file_enotblk", fd, rfd, ENOTBLK);
	TRY("fd_write_only_eacces", fd, wfd, EACCES);
	TRY("blksize_zero_einval", blksize, 0, EINVAL);
	TRY("blksize_not_pow2_einval", blksize, 3000, EINVAL);
	TRY("blksize_256_einval", blksize, 256, EINVAL);
	TRY("blksize_2m_einval", blksize, 2 << 20, EINVAL);
	TRY("nslots_zero_einval", nslots, 0, EINVAL);
	TRY("nslots_huge_einval", nslots, 100000, EINVAL);
	r = good;
	r.blksize = 1 << 20;
	r.nslots = 128;
	expect("ring_over_64m_einval", scrub_req(fd, &r), EINVAL);
	TRY("start_unaligned_einval", start, 512, EINVAL);
	TRY("start_past_end_einval", start, 1ULL << 50, EINVAL);
	TRY("flags_unknown_bit_einval", flags, 2, EINVAL);
	TRY("flags_high_bit_einval", flags, 0x80000000u, EINVAL);
	TRY("id_in_einval", id, 7, EINVAL);
	TRY("floor_above_ceiling_einval", floor_kbps, 100, EINVAL);
#undef TRY
	expect("consume_unregistered_einval",
	       ioctl(fd, FB_IOC_CONSUME, 0UL), EINVAL);
	expect("abort_unregistered_einval", ioctl(fd, FB_IOC_ABORT), EINVAL);
	expect("promote_unregistered_einval", ioctl(fd, FB_IOC_PROMOTE),
	       EINVAL);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	expect("mmap_unregistered_einval", p == MAP_FAILED ? -1 : 0, EINVAL);
	expect("unknown_ioctl_enotty", ioctl(fd, _IO(FB_IOC_MAGIC, 99)),
	       ENOTTY);
	expect("scrub_bad_pointer_efault",
	       ioctl(fd, FB_IOC_SCRUB, (void *)16), EFAULT);

	/* now a good one, then what is wrong after registration */
	r = good;
	if (scrub_req(fd, &r)) {
		printf("bad good_scrub_registers %s\n", strerror(errno));
		return 1;
	}
	printf("ok good_scrub_registers\n");
	r = good;
	expect("second_scrub_ebusy", scrub_req(fd, &r), EBUSY);
	expect("consume_past_head_einval",
	       ioctl(fd, FB_IOC_CONSUME, 1000UL), EINVAL);
	expect("consume_over_u32_einval",
	       ioctl(fd, FB_IOC_CONSUME, 1UL << 40), EINVAL);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	expect("mmap_writable_eperm", p == MAP_FAILED ? -1 : 0, EPERM);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 4096);
	expect("mmap_offset_einval", p == MAP_FAILED ? -1 : 0, EINVAL);
	p = mmap(NULL, 1 << 30, PROT_READ, MAP_SHARED, fd, 0);
	expect("mmap_too_long_einval", p == MAP_FAILED ? -1 : 0, EINVAL);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		printf("bad mmap_header_readable %s\n", strerror(errno));
		failures++;
	} else if (mprotect(p, 4096, PROT_READ | PROT_WRITE) == 0) {
		printf("bad mprotect_writable_refused\n");
		failures++;
	} else {
		printf("ok mprotect_writable_refused\n");
	}
	expect("abort_ok_then_twice_enoent",
	       ioctl(fd, FB_IOC_ABORT) ? -2 : ioctl(fd, FB_IOC_ABORT), ENOENT);
	close(fd);
	return failures ? 1 : 0;
}

static int open_as(const char *uid, const char *dev)
{
	uid_t u = (uid_t)strtoul(uid, NULL, 0);
	int fd;

	if (setgid(u) || setuid(u)) {
		perror("setuid");
		return 2;
	}
	fd = open(dev, O_RDONLY);
	if (fd < 0) {
		printf("%s\n", errno == EACCES ? "EACCES" : strerror(errno));
		return 0;
	}
	printf("ok\n");
	return 0;
}

static int load(const char *dev, const char *secs)
{
	uint64_t end = now_ms() + strtoull(secs, NULL, 0) * 1000, n = 0;
	uint64_t blocks, x = 88172645463325252ULL;
	int fd = open(dev, O_RDONLY | O_DIRECT);
	off_t size;
	void *buf;

	if (fd < 0 || posix_memalign(&buf, 4096, 4096)) {
		perror(dev);
		return 1;
	}
	size = lseek(fd, 0, SEEK_END);
	blocks = size / 4096;
	while (now_ms() < end) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (pread(fd, buf, 4096, (off_t)(x % blocks) * 4096) != 4096) {
			perror("pread");
			return 1;
		}
		n++;
	}
	printf("reads=%" PRIu64 "\n", n);
	return 0;
}

static int park(const char *dev, const char *secs, const char *off,
		const char *span, const char *gap_ms)
{
	uint64_t end = now_ms() + strtoull(secs, NULL, 0) * 1000, n = 0;
	uint64_t o = strtoull(off, NULL, 0), pages = strtoull(span, NULL, 0) / 4096;
	uint64_t x = 88172645463325252ULL;
	long gap = strtol(gap_ms, NULL, 0);
	int fd = open(dev, O_RDONLY | O_DIRECT);
	void *buf;

	if (fd < 0 || !pages || o % 4096 || posix_memalign(&buf, 4096, 4096)) {
		perror(dev);
		return 1;
	}
	while (now_ms() < end) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (pread(fd, buf, 4096, (off_t)(o + x % pages * 4096)) != 4096) {
			perror("pread");
			return 1;
		}
		n++;
		usleep(gap * 1000);
	}
	printf("reads=%" PRIu64 "\n", n);
	return 0;
}

static uint64_t fz_x;

static uint64_t fz(void)
{
	fz_x ^= fz_x << 13;
	fz_x ^= fz_x >> 7;
	fz_x ^= fz_x << 17;
	return fz_x;
}

static uint64_t fz_num(void)
{
	static const uint64_t interesting[] = {
		0, 1, 511, 512, 4096, 65536, 1 << 20, 1 << 21, 4095,
		(uint64_t)-1, 1ULL << 31, 1ULL << 32, 1ULL << 63, 4097,
	};

	return fz() & 1 ? interesting[fz() % 14] : fz() >> (fz() % 64);
}

static int fuzz(const char *dev, const char *count, const char *seed)
{
	uint64_t n = strtoull(count, NULL, 0), i, ok = 0, err = 0;
	int fd = -1, dfd = open(dev, O_RDONLY), wfd = open(dev, O_WRONLY);

	fz_x = strtoull(seed, NULL, 0) | 1;
	if (dfd < 0 || wfd < 0) {
		perror(dev);
		return 1;
	}
	for (i = 0; i < n; i++) {
		struct fb_scrub_req r;
		unsigned long cmd;
		void *p;
		int ret;

		if (fd < 0 || fz() % 64 == 0) {
			if (fd >= 0)
				close(fd);
			fd = open("/dev/freeblock", O_RDWR);
			if (fd < 0) {
				perror("/dev/freeblock");
				return 1;
			}
		}
		switch (fz() % 8) {
		case 0: case 1: case 2:
			memset(&r, 0, sizeof(r));
			if (fz() % 4) {
				r.blksize = 1U << (9 + fz() % 12);
				r.nslots = 1 + fz() % 32;
				r.start = (fz() % 64) * r.blksize;
				r.len = fz() % 2 ? 0 : fz_num();
			} else {
				memcpy(&r, &(uint64_t[8]){ fz_num(), fz_num(),
					fz_num(), fz_num(), fz_num(), fz_num(),
					fz_num(), fz_num() }, sizeof(r));
			}
			r.fd = (int[]){ dfd, wfd, -1, 0, 12345, fd }[fz() % 6];
			if (fz() % 8 == 0)
				r.floor_kbps = fz_num();
			if (fz() % 8 == 0)
				r.ceiling_kbps = fz_num();
			ret = ioctl(fd, FB_IOC_SCRUB, fz() % 16 ? (void *)&r :
				    (void *)(uintptr_t)fz_num());
			break;
		case 3:
			ret = ioctl(fd, FB_IOC_CONSUME, (unsigned long)fz_num());
			break;
		case 4:
			ret = ioctl(fd, fz() % 2 ? FB_IOC_ABORT : FB_IOC_PROMOTE);
			break;
		case 5:
			p = mmap(NULL, fz_num() % (1 << 24) + 1, fz() % 4 ?
				 PROT_READ : PROT_READ | PROT_WRITE, MAP_SHARED,
				 fd, fz() % 4 ? 0 : (fz() % 16) * 4096);
			ret = p == MAP_FAILED ? -1 : 0;
			if (!ret)
				munmap(p, 4096);
			break;
		default:
			cmd = fz() % 2 ? _IOC(fz() % 4, FB_IOC_MAGIC, fz() % 8,
					      fz() % 64) : (unsigned long)fz();
			ret = ioctl(fd, cmd, (unsigned long)fz_num());
			break;
		}
		if (ret)
			err++;
		else
			ok++;
	}
	close(fd);
	printf("ops=%" PRIu64 " ok=%" PRIu64 " errors=%" PRIu64 "\n", n, ok, err);
	return 0;
}

static int usage(void);

struct write_run {
	uint64_t start, seed;
	uint32_t bs;
	uint64_t fills, done, failed, bad, order_bad, next;
	uint64_t ahead, max_ahead;
	long abort_after;
	int aborted;
	int any_order;
	uint8_t *asked;		/* per block: fills asked for */
	uint64_t nblocks, fill_dup;
	int64_t first_lbn;	/* the first block asked for */
};

/* fb_fill_fn: the kernel asks for block @lbn now */
static int write_fill(void *ctx, uint64_t lbn, void *buf, uint32_t len)
{
	struct write_run *w = ctx;
	uint64_t *p = buf, i;

	if (lbn != w->next)
		w->order_bad++;	/* in order, unless --any-order */
	w->next = lbn + 1;
	if (w->first_lbn < 0)
		w->first_lbn = (int64_t)lbn;
	if (lbn >= w->nblocks || w->asked[lbn]++)
		w->fill_dup++;	/* each block is asked for once */
	for (i = 0; i < len / 8; i++)
		p[i] = pattern(w->start + lbn * w->bs + i * 8, w->seed);
	w->fills++;
	/* blocks handed over and not yet seen completed */
	w->ahead = w->fills - w->done;
	if (w->ahead > w->max_ahead)
		w->max_ahead = w->ahead;
	return 0;
}

/* fb_block_fn: block @lbn was written (the slot still holds its data) */
static int write_done(void *ctx, uint64_t lbn, int status, const void *data,
		      uint32_t len)
{
	struct write_run *w = ctx;
	const uint64_t *p = data;
	uint64_t i;

	w->done++;
	if (status) {
		w->failed++;
		return 0;
	}
	for (i = 0; i < len / 8; i++)
		if (p[i] != pattern(w->start + lbn * w->bs + i * 8, w->seed)) {
			w->bad++;
			break;
		}
	return 0;
}

static int write_task(int argc, char **argv)
{
	struct fb_task_opts o = { .blksize = 65536, .nslots = 16 };
	struct write_run w = { .abort_after = -1, .first_lbn = -1 };
	uint64_t t0 = now_ms();
	struct fb_task *t;
	int i, r, dfd;

	w.seed = strtoull(argv[3], NULL, 0);
	for (i = 4; i + 1 < argc; i += 2) {
		unsigned long long v = strtoull(argv[i + 1], NULL, 0);

		if (!strcmp(argv[i], "--bs"))
			o.blksize = v;
		else if (!strcmp(argv[i], "--slots"))
			o.nslots = v;
		else if (!strcmp(argv[i], "--start"))
			o.start = v;
		else if (!strcmp(argv[i], "--len"))
			o.len = v;
		else if (!strcmp(argv[i], "--ceil"))
			o.ceiling_kbps = v;
		else if (!strcmp(argv[i], "--abort-after"))
			w.abort_after = v;
		else if (!strcmp(argv[i], "--promote"))
			o.promote = v;
		else if (!strcmp(argv[i], "--any-order"))
			o.any_order = w.any_order = v;
		else
			return usage();
	}
	if (i != argc)
		return usage();
	w.start = o.start;
	w.bs = o.blksize;
	dfd = open(argv[2], O_RDWR);
	if (dfd < 0) {
		perror(argv[2]);
		return 1;
	}
	r = fb_task_open_write(&t, dfd, &o);
	close(dfd);
	if (r) {
		printf("write_errno=%d (%s)\n", -r, strerror(-r));
		return 1;
	}
	w.nblocks = fb_task_nblocks(t);
	w.asked = calloc(w.nblocks, 1);
	if (!w.asked)
		return 1;
	while ((r = fb_task_poll_write(t, 1000, write_fill, write_done, &w)) == 0) {
		if (w.abort_after >= 0 && !w.aborted &&
		    w.done >= (uint64_t)w.abort_after) {
			if (fb_task_abort(t)) {
				perror("abort");
				return 1;
			}
			w.aborted = 1;
		}
	}
	printf("nblocks=%" PRIu64 " fills=%" PRIu64 " done=%" PRIu64
	       " failed=%" PRIu64 " bad=%" PRIu64 " order_bad=%" PRIu64
	       " max_ahead=%" PRIu64 " prefix=%" PRIu64 " result=%d poll=%d"
	       " aborted=%d fill_dup=%" PRIu64 " first_lbn=%" PRId64
	       " elapsed_ms=%" PRIu64 "\n",
	       fb_task_nblocks(t),
	       w.fills, w.done, w.failed, w.bad, w.order_bad, w.max_ahead,
	       fb_task_prefix(t), r == 1 ? fb_task_result(t) : 1, r,
	       w.aborted, w.fill_dup, w.first_lbn, now_ms() - t0);
	r = r == 1 && !w.bad && (!w.order_bad || w.any_order) && !w.failed &&
	    !w.fill_dup &&
	    (w.aborted || (w.done == fb_task_nblocks(t) &&
			   w.fills == w.done && !fb_task_result(t)));
	fb_task_close(t);
	return r ? 0 : 1;
}

/* Malformed write registrations and fills: FB_IOC_WRITE, FB_IOC_FILL. */
static int badwrite(const char *dev)
{
	struct fb_scrub_req good = { .blksize = 4096, .nslots = 4,
				     .len = 1 << 20, .ceiling_kbps = 4 };
	static uint64_t block[4096 / 8];
	struct fb_fill f = { .len = 4096, .data = (uintptr_t)block };
	volatile struct fb_ring_hdr *h;
	struct fb_scrub_req r;
	int fd = open("/dev/freeblock", O_RDWR);
	int rfd = open(dev, O_RDONLY);
	int wfd = open(dev, O_WRONLY);
	int i;

	if (fd < 0 || rfd < 0 || wfd < 0) {
		perror("open");
		return 1;
	}
	r = good;
	r.fd = rfd;
	expect("write_read_only_fd_eacces", ioctl(fd, FB_IOC_WRITE, &r), EACCES);
	r = good;
	r.fd = wfd;
	r.flags = 2;
	expect("write_flags_einval", ioctl(fd, FB_IOC_WRITE, &r), EINVAL);
	r = good;
	r.fd = wfd;
	r.blksize = 3000;
	expect("write_bad_blksize_einval", ioctl(fd, FB_IOC_WRITE, &r), EINVAL);
	expect("write_bad_pointer_efault",
	       ioctl(fd, FB_IOC_WRITE, (void *)16), EFAULT);
	expect("fill_unregistered_einval", ioctl(fd, FB_IOC_FILL, &f), EINVAL);
	close(fd);

	/* a read task takes no fill */
	fd = open("/dev/freeblock", O_RDWR);
	r = good;
	r.fd = rfd;
	if (fd < 0 || ioctl(fd, FB_IOC_SCRUB, &r)) {
		printf("bad read_task_registers %s\n", strerror(errno));
		return 1;
	}
	expect("fill_read_task_einval", ioctl(fd, FB_IOC_FILL, &f), EINVAL);
	close(fd);

	/* a write task: only the block asked for, once, whole */
	fd = open("/dev/freeblock", O_RDWR);
	r = good;
	r.fd = wfd;
	if (fd < 0 || ioctl(fd, FB_IOC_WRITE, &r)) {
		printf("bad write_task_registers %s\n", strerror(errno));
		return 1;
	}
	printf("ok write_task_registers\n");
	r = good;
	r.fd = wfd;
	expect("second_write_ebusy", ioctl(fd, FB_IOC_WRITE, &r), EBUSY);
	h = mmap(NULL, r.ring_bytes ? r.ring_bytes : 4096, PROT_READ,
		 MAP_SHARED, fd, 0);
	if (h == MAP_FAILED) {
		printf("bad write_ring_maps %s\n", strerror(errno));
		return 1;
	}
	/* the ceiling (4 KiB/s) lets block 0 be asked for at once */
	for (i = 0; i < 100 && !__atomic_load_n(&h->want_pending,
						__ATOMIC_ACQUIRE); i++)
		usleep(10000);
	if (!h->want_pending || h->want_lbn != 0) {
		printf("bad write_asks_block_0 pending=%u lbn=%llu\n",
		       h->want_pending, (unsigned long long)h->want_lbn);
		failures++;
	} else {
		printf("ok write_asks_block_0\n");
	}
	f.lbn = 1;
	expect("fill_not_asked_einval", ioctl(fd, FB_IOC_FILL, &f), EINVAL);
	f.lbn = 0;
	f.len = 512;
	expect("fill_short_einval", ioctl(fd, FB_IOC_FILL, &f), EINVAL);
	f.len = 4096;
	f.flags = 1;
	expect("fill_flags_einval", ioctl(fd, FB_IOC_FILL, &f), EINVAL);
	f.flags = 0;
	f.data = 16;
	expect("fill_bad_data_efault", ioctl(fd, FB_IOC_FILL, &f), EFAULT);
	expect("fill_bad_pointer_efault",
	       ioctl(fd, FB_IOC_FILL, (void *)16), EFAULT);
	f.data = (uintptr_t)block;
	/* the block the disk already has: the disk's pattern is kept */
	if (pread(rfd, block, sizeof(block), 0) != sizeof(block)) {
		perror("pread");
		return 1;
	}
	if (ioctl(fd, FB_IOC_FILL, &f)) {
		printf("bad fill_asked_block_ok %s\n", strerror(errno));
		failures++;
	} else {
		printf("ok fill_asked_block_ok\n");
	}
	expect("fill_twice_einval", ioctl(fd, FB_IOC_FILL, &f), EINVAL);
	close(fd);
	return failures ? 1 : 0;
}

static int set_rate(int fd, uint32_t floor, uint32_t ceil, uint32_t flags,
		    uint32_t pad)
{
	struct fb_rate_req rr = {
		.floor_kbps = floor, .ceiling_kbps = ceil, .flags = flags,
		.__pad = pad,
	};

	return ioctl(fd, FB_IOC_SET_RATE, &rr);
}

/* Malformed FB_IOC_SET_RATE requests, and one on an ended task. */
static int badrate(const char *dev)
{
	struct fb_scrub_req r = { .blksize = 4096, .nslots = 4,
				  .len = 1 << 20, .ceiling_kbps = 4 };
	volatile struct fb_ring_hdr *h;
	int fd = open("/dev/freeblock", O_RDWR);
	int i;

	r.fd = open(dev, O_RDONLY);
	if (fd < 0 || r.fd < 0) {
		perror("open");
		return 1;
	}
	expect("set_rate_unregistered_einval", set_rate(fd, 0, 100, 0, 0),
	       EINVAL);
	if (ioctl(fd, FB_IOC_SCRUB, &r)) {
		printf("bad rate_task_registers %s\n", strerror(errno));
		return 1;
	}
	printf("ok rate_task_registers\n");
	expect("set_rate_floor_above_ceiling_einval",
	       set_rate(fd, 200, 100, 0, 0), EINVAL);
	expect("set_rate_flags_einval", set_rate(fd, 0, 100, 1, 0), EINVAL);
	expect("set_rate_pad_einval", set_rate(fd, 0, 100, 0, 1), EINVAL);
	expect("set_rate_bad_pointer_efault",
	       ioctl(fd, FB_IOC_SET_RATE, (void *)16), EFAULT);
	if (set_rate(fd, 8, 0, 0, 0)) {
		printf("bad set_rate_floor_only_ok %s\n", strerror(errno));
		failures++;
	} else {
		printf("ok set_rate_floor_only_ok\n");
	}
	h = mmap(NULL, r.ring_bytes, PROT_READ, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED || ioctl(fd, FB_IOC_ABORT)) {
		printf("bad rate_task_aborts %s\n", strerror(errno));
		return 1;
	}
	for (i = 0; i < 200 && __atomic_load_n(&h->state, __ATOMIC_ACQUIRE) !=
	     FB_STATE_ENDED; i++)
		usleep(10000);
	expect("set_rate_ended_task_enoent", set_rate(fd, 0, 100, 0, 0),
	       ENOENT);
	close(fd);
	return failures ? 1 : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: fbtest fill DEV SEED | scrub DEV [options] | "
		"hold DEV | bad DEV REGFILE | open-as UID DEV | load DEV SECONDS |\n"
		" rings DEV BS SLOTS COUNT [hold] |\n"
		" park DEV SECONDS OFF SPAN GAP_MS |\n"
		" fuzz DEV COUNT SEED | write DEV SEED [options] | badwrite DEV |\n"
		" badrate DEV\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct scrub_opts o = {
		.bs = 65536, .slots = 16, .promote_after_ms = -1,
		.abort_after = -1, .report_at_ms = -1, .set_rate_after = -1,
		.deadline_ms = -1,
	};
	int i;

	if (argc < 3)
		return usage();
	if (!strcmp(argv[1], "fill") && argc == 4)
		return fill(argv[2], strtoull(argv[3], NULL, 0));
	if (!strcmp(argv[1], "hold"))
		return hold(argv[2]);
	if (!strcmp(argv[1], "bad") && argc == 4)
		return bad(argv[2], argv[3]);
	if (!strcmp(argv[1], "open-as") && argc == 4)
		return open_as(argv[2], argv[3]);
	if (!strcmp(argv[1], "rings") && (argc == 6 || argc == 7))
		return rings(argv[2], argv[3], argv[4], argv[5],
			     argc == 7 && !strcmp(argv[6], "hold"));
	if (!strcmp(argv[1], "fuzz") && argc == 5)
		return fuzz(argv[2], argv[3], argv[4]);
	if (!strcmp(argv[1], "load") && argc == 4)
		return load(argv[2], argv[3]);
	if (!strcmp(argv[1], "park") && argc == 7)
		return park(argv[2], argv[3], argv[4], argv[5], argv[6]);
	if (!strcmp(argv[1], "write") && argc >= 4)
		return write_task(argc, argv);
	if (!strcmp(argv[1], "badwrite") && argc == 3)
		return badwrite(argv[2]);
	if (!strcmp(argv[1], "badrate") && argc == 3)
		return badrate(argv[2]);
	if (strcmp(argv[1], "scrub"))
		return usage();
	for (i = 3; i + 1 < argc; i += 2) {
		const char *k = argv[i];
		unsigned long long v = strtoull(argv[i + 1], NULL, 0);

		if (!strcmp(k, "--bs"))
			o.bs = v;
		else if (!strcmp(k, "--slots"))
			o.slots = v;
		else if (!strcmp(k, "--start"))
			o.start = v;
		else if (!strcmp(k, "--len"))
			o.len = v;
		else if (!strcmp(k, "--floor"))
			o.floor = v;
		else if (!strcmp(k, "--ceil"))
			o.ceil = v;
		else if (!strcmp(k, "--seed")) {
			o.seed = v;
			o.have_seed = 1;
		} else if (!strcmp(k, "--promote-after-ms"))
			o.promote_after_ms = v;
		else if (!strcmp(k, "--abort-after"))
			o.abort_after = v;
		else if (!strcmp(k, "--consume-delay-us"))
			o.consume_delay_us = v;
		else if (!strcmp(k, "--report-at-ms"))
			o.report_at_ms = v;
		else if (!strcmp(k, "--any-order"))
			o.any_order = v;
		else if (!strcmp(k, "--set-rate-after"))
			o.set_rate_after = v;
		else if (!strcmp(k, "--set-floor"))
			o.set_floor = v;
		else if (!strcmp(k, "--set-ceil"))
			o.set_ceil = v;
		else if (!strcmp(k, "--deadline-ms"))
			o.deadline_ms = v;
		else
			return usage();
	}
	if (i != argc)
		return usage();
	return scrub(argv[2], &o);
}
