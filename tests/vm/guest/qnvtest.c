// SPDX-License-Identifier: GPL-2.0-only
/*
 * qnvtest: a command line over libqnvram for the guest test scripts.
 *
 *	qnvtest alloc UID MAGIC SIZE SEED     create, fill with SEED's pattern,
 *	                                      persist; prints "ok"
 *	qnvtest verify UID MAGIC SEED         retrieve and compare; prints
 *	                                      "mismatches N of BYTES", exit 0 iff N=0
 *	qnvtest hold UID MAGIC SIZE SEED      create or open, fill, persist, print
 *	                                      "ready", then sleep until killed (or
 *	                                      its parent exits: PR_SET_PDEATHSIG)
 *	qnvtest free UID MAGIC                free; prints "ok"
 *	qnvtest expect-errno ENAME CMD...     exit 0 iff CMD fails with errno ENAME
 *	qnvtest setuid UID CMD...             run CMD as uid and gid UID; CMD is a
 *	                                      qnvtest command (with or without a
 *	                                      leading "qnvtest") or else a program
 *	qnvtest caps UID CAP CMD...           run CMD (a program) as uid and gid UID
 *	                                      with the one capability CAP
 *	                                      (net_admin or sys_admin) in its
 *	                                      effective, permitted and ambient sets
 *	qnvtest churn UID BASE COUNT SIZE     for i = 0..COUNT-1 (COUNT 0: forever):
 *	                                      create BASE+i with pattern i, print
 *	                                      "alloc i"; free BASE+i-4, print "free i-4"
 *	qnvtest mmap-beyond UID MAGIC         mmaps reaching past the region's end
 *	                                      and growing mremap must be refused
 *	qnvtest double-free UID MAGIC         free must work, a second one ENOENT
 *	qnvtest ioctl-fuzz COUNT SEED         random ioctls, mmaps, munmaps,
 *	                                      mremaps, dups, forks on /dev/qnvram;
 *	                                      every region made must free after
 *	qnvtest persist                       print the persist barrier mechanism
 *	qnvtest latency UID MAGIC SIZE SECONDS CMD...
 *	                                      for SECONDS: retrieve the region
 *	                                      (SIZE 0: not at all), store to every
 *	                                      page what it holds, unmap (a fault
 *	                                      pass), then run
 *	                                      CMD; prints "rounds N fault_max_ms
 *	                                      A fault_median_ms B cmd_max_ms C
 *	                                      cmd_median_ms D"; exit 1 if CMD fails
 *
 * Numbers are decimal or 0x-hex. The pattern: the byte at offset o is byte
 * o % 8 (little-endian) of splitmix64(splitmix64(SEED) + o / 8), so any
 * offset's byte is known without the ones before it.
 *
 * Every line for the script goes to stdout, flushed as it is written;
 * errors go to stderr as "qnvtest: CMD ARGS: strerror (ENAME)". Exit: 0 ok,
 * 1 the operation failed, 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/qnvram.h>
#include <qnvram.h>

enum qt_exit {
	QT_OK = 0,
	QT_FAIL = 1,
	QT_USAGE = 2,
};

/* Regions that churn keeps alive behind the newest one. */
#define QT_CHURN_KEEP	4

/*
 * errno of the last failed operation, 0 if it failed without one (a
 * mismatch); what expect-errno compares.
 */
static int qt_errno;

#define E(name) { name, #name }
static const struct {
	int err;
	const char *name;
} qt_errnames[] = {
	E(EPERM), E(ENOENT), E(ESRCH), E(EINTR), E(EIO), E(ENXIO), E(E2BIG),
	E(EBADF), E(EAGAIN), E(ENOMEM), E(EACCES), E(EFAULT), E(EBUSY),
	E(EEXIST), E(ENODEV), E(EINVAL), E(ENFILE), E(EMFILE), E(ENOTTY),
	E(EFBIG), E(ENOSPC), E(EROFS), E(ERANGE), E(ENOSYS), E(EOVERFLOW),
	E(EBADFD), E(EOPNOTSUPP), E(EPROTO), E(EBADMSG), E(ENODATA),
	E(ETIMEDOUT), E(EMSGSIZE), E(ENOBUFS), E(ECANCELED), E(EDQUOT),
};
#undef E

static const char *qt_errname(int err)
{
	static char buf[16];
	size_t i;

	for (i = 0; i < sizeof(qt_errnames) / sizeof(qt_errnames[0]); i++)
		if (qt_errnames[i].err == err)
			return qt_errnames[i].name;
	snprintf(buf, sizeof(buf), "errno %d", err);
	return buf;
}

static int qt_errno_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(qt_errnames) / sizeof(qt_errnames[0]); i++)
		if (!strcmp(qt_errnames[i].name, name))
			return qt_errnames[i].err;
	return 0;
}

/* Report a failed operation (errno set by it) and return QT_FAIL. */
static int qt_fail(const char *what)
{
	int err = errno;

	qt_errno = err;
	fprintf(stderr, "qnvtest: %s: %s (%s)%s\n", what, strerror(err),
		qt_errname(err), err == ENODEV ?
		": no " QNVRAM_DEV_PATH ", is qnvram.ko loaded?" : "");
	return QT_FAIL;
}

static void qt_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void qt_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

/* --- Arguments ------------------------------------------------------------- */

static bool qt_parse_u64(const char *arg, uint64_t max, uint64_t *val)
{
	unsigned long long v;
	char *end;

	if (!arg || arg[0] < '0' || arg[0] > '9')
		return false;
	errno = 0;
	v = strtoull(arg, &end, 0);
	if (*end || errno || v > max)
		return false;
	*val = v;
	return true;
}

static bool qt_parse_u32(const char *arg, uint32_t *val)
{
	uint64_t v;

	if (!qt_parse_u64(arg, UINT32_MAX, &v))
		return false;
	*val = (uint32_t)v;
	return true;
}

static int qt_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static int qt_usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("qnvtest: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (qnvtest --help for usage)\n", stderr);
	return QT_USAGE;
}

/* Parse "UID MAGIC" from argv[0..1]. */
static bool qt_parse_region(char **argv, uint32_t *uid, uint32_t *magic)
{
	return qt_parse_u32(argv[0], uid) && qt_parse_u32(argv[1], magic);
}

/* --- The pattern ----------------------------------------------------------- */

static uint64_t qt_splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* The pattern's 8 bytes at offset 8 * @word, little-endian. */
static void qt_pattern_word(uint64_t key, uint64_t word, uint8_t out[8])
{
	uint64_t w = qt_splitmix64(key + word);
	int i;

	for (i = 0; i < 8; i++)
		out[i] = (uint8_t)(w >> (8 * i));
}

static void qt_fill(uint8_t *p, size_t len, uint64_t seed)
{
	uint64_t key = qt_splitmix64(seed);
	uint8_t w[8];
	size_t off;

	for (off = 0; off < len; off += 8) {
		qt_pattern_word(key, off / 8, w);
		memcpy(p + off, w, len - off < 8 ? len - off : 8);
	}
}

/* Count bytes that differ from the pattern; tell the first on stderr. */
static uint64_t qt_compare(const uint8_t *p, size_t len, uint64_t seed)
{
	uint64_t key = qt_splitmix64(seed), bad = 0;
	size_t off, i, n;
	uint8_t w[8];

	for (off = 0; off < len; off += 8) {
		n = len - off < 8 ? len - off : 8;
		qt_pattern_word(key, off / 8, w);
		if (!memcmp(p + off, w, n))
			continue;
		for (i = 0; i < n; i++) {
			if (p[off + i] == w[i])
				continue;
			if (!bad)
				fprintf(stderr, "qnvtest: first mismatch at "
					"offset %zu: 0x%02x, expected 0x%02x\n",
					off + i, p[off + i], w[i]);
			bad++;
		}
	}
	return bad;
}

/* --- Commands -------------------------------------------------------------- */

/* Create (or with @flags open) the region, fill it, persist it. */
static int qt_fill_region(const char *what, uint32_t uid, uint32_t magic,
			  uint64_t size, uint64_t seed, unsigned int flags,
			  bool keep_mapped)
{
	size_t len;
	void *p;

	p = qnvm_alloc(uid, magic, (size_t)size, flags, &len);
	if (!p)
		return qt_fail(what);
	qt_fill(p, len, seed);
	if (qnvm_persist(p, len) < 0)
		return qt_fail(what);
	if (!keep_mapped && qnvm_unmap(p) < 0)
		return qt_fail(what);
	return QT_OK;
}

static int qt_cmd_alloc(int argc, char **argv)
{
	uint32_t uid, magic;
	uint64_t size, seed;
	int ret;

	if (argc != 4 || !qt_parse_region(argv, &uid, &magic) ||
	    !qt_parse_u64(argv[2], SIZE_MAX, &size) ||
	    !qt_parse_u64(argv[3], UINT64_MAX, &seed))
		return qt_usage_error("usage: alloc UID MAGIC SIZE SEED");
	ret = qt_fill_region("alloc", uid, magic, size, seed, 0, false);
	if (ret == QT_OK)
		qt_say("ok\n");
	return ret;
}

static int qt_cmd_verify(int argc, char **argv)
{
	uint32_t uid, magic;
	uint64_t seed, bad;
	size_t len;
	void *p;

	if (argc != 3 || !qt_parse_region(argv, &uid, &magic) ||
	    !qt_parse_u64(argv[2], UINT64_MAX, &seed))
		return qt_usage_error("usage: verify UID MAGIC SEED");
	p = qnvm_retrieve(uid, magic, &len);
	if (!p)
		return qt_fail("verify");
	bad = qt_compare(p, len, seed);
	qnvm_unmap(p);
	qt_say("mismatches %" PRIu64 " of %zu\n", bad, len);
	if (bad) {
		qt_errno = 0;
		return QT_FAIL;
	}
	return QT_OK;
}

static int qt_cmd_hold(int argc, char **argv)
{
	uint32_t uid, magic;
	uint64_t size, seed;
	int ret;

	if (argc != 4 || !qt_parse_region(argv, &uid, &magic) ||
	    !qt_parse_u64(argv[2], SIZE_MAX, &size) ||
	    !qt_parse_u64(argv[3], UINT64_MAX, &seed))
		return qt_usage_error("usage: hold UID MAGIC SIZE SEED");
	ret = qt_fill_region("hold", uid, magic, size, seed,
			     QNVM_OPEN_EXISTING, true);
	if (ret != QT_OK)
		return ret;
	/*
	 * Die by SIGKILL with the parent too: a script that runs the holder
	 * through a shell function in the background and kills that job kills
	 * the subshell, not this process.
	 */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		raise(SIGKILL);	/* the parent went before prctl */
	qt_say("ready\n");
	for (;;)
		pause();
}

static int qt_cmd_free(int argc, char **argv)
{
	uint32_t uid, magic;

	if (argc != 2 || !qt_parse_region(argv, &uid, &magic))
		return qt_usage_error("usage: free UID MAGIC");
	if (qnvm_free(uid, magic) < 0)
		return qt_fail("free");
	qt_say("ok\n");
	return QT_OK;
}

static int qt_cmd_churn(int argc, char **argv)
{
	uint32_t uid, base, count, i;
	uint64_t size;
	char what[64];
	int ret;

	if (argc != 4 || !qt_parse_region(argv, &uid, &base) ||
	    !qt_parse_u32(argv[2], &count) ||
	    !qt_parse_u64(argv[3], SIZE_MAX, &size))
		return qt_usage_error("usage: churn UID BASE_MAGIC COUNT SIZE");
	for (i = 0; !count || i < count; i++) {
		snprintf(what, sizeof(what), "churn: alloc %" PRIu32, i);
		ret = qt_fill_region(what, uid, base + i, size, i, 0, false);
		if (ret != QT_OK)
			return ret;
		qt_say("alloc %" PRIu32 "\n", i);
		if (i < QT_CHURN_KEEP)
			continue;
		if (qnvm_free(uid, base + i - QT_CHURN_KEEP) < 0) {
			snprintf(what, sizeof(what), "churn: free %" PRIu32,
				 i - QT_CHURN_KEEP);
			return qt_fail(what);
		}
		qt_say("free %" PRIu32 "\n", i - QT_CHURN_KEEP);
	}
	return QT_OK;
}

/* One mmap that must be refused; true if it was, with EINVAL or ENXIO. */
static bool qt_mmap_refused(int fd, size_t len, off_t off, const char *what)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);

	if (p != MAP_FAILED) {
		munmap(p, len);
		fprintf(stderr, "qnvtest: mmap-beyond: %s (len %zu, offset "
			"%lld) was accepted\n", what, len, (long long)off);
		return false;
	}
	if (errno != EINVAL && errno != ENXIO) {
		fprintf(stderr, "qnvtest: mmap-beyond: %s refused with %s, "
			"expected EINVAL or ENXIO\n", what,
			qt_errname(errno));
		return false;
	}
	qt_say("refused %s: %s\n", what, qt_errname(errno));
	return true;
}

static int qt_cmd_mmap_beyond(int argc, char **argv)
{
	struct qnvram_region_req req = { 0 };
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size;
	bool ok = true;
	void *p, *q;
	int fd;

	if (argc != 2 || !qt_parse_region(argv, &req.uid, &req.magic))
		return qt_usage_error("usage: mmap-beyond UID MAGIC");
	fd = open(QNVRAM_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return qt_fail("mmap-beyond: open " QNVRAM_DEV_PATH);
	if (ioctl(fd, QNVRAM_IOC_RETRIEVE, &req) < 0)
		return qt_fail("mmap-beyond: QNVRAM_IOC_RETRIEVE");
	size = (size_t)req.size;

	ok &= qt_mmap_refused(fd, size + page, 0, "one page past the end");
	ok &= qt_mmap_refused(fd, size, (off_t)page, "whole length at +1 page");
	ok &= qt_mmap_refused(fd, page, (off_t)size, "one page at the end");

	/* A mapping that fits works, and cannot be grown past the end. */
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return qt_fail("mmap-beyond: mmap of the whole region");
	q = mremap(p, size, size + page, MREMAP_MAYMOVE);
	if (q != MAP_FAILED) {
		fprintf(stderr, "qnvtest: mmap-beyond: mremap to one page "
			"past the end was accepted\n");
		munmap(q, size + page);
		ok = false;
	} else {
		qt_say("refused mremap one page past the end: %s\n",
		       qt_errname(errno));
		munmap(p, size);
	}
	close(fd);
	if (!ok) {
		qt_errno = 0;
		return QT_FAIL;
	}
	qt_say("ok\n");
	return QT_OK;
}

static int qt_cmd_double_free(int argc, char **argv)
{
	uint32_t uid, magic;

	if (argc != 2 || !qt_parse_region(argv, &uid, &magic))
		return qt_usage_error("usage: double-free UID MAGIC");
	if (qnvm_free(uid, magic) < 0)
		return qt_fail("double-free: first free");
	if (qnvm_free(uid, magic) == 0) {
		fprintf(stderr, "qnvtest: double-free: second free "
			"succeeded, expected ENOENT\n");
		qt_errno = 0;
		return QT_FAIL;
	}
	if (errno != ENOENT)
		return qt_fail("double-free: second free, expected ENOENT");
	qt_say("ok\n");
	return QT_OK;
}

/* --- ioctl-fuzz -------------------------------------------------------------- */

/*
 * The fuzz names only magics from here on, so it never touches the test's
 * own regions (magics below 0x10000).
 */
#define QT_FUZZ_MAGIC_BASE	0xf0220000U
#define QT_FUZZ_MAGICS		16	/* the hot ones: base .. base + 15 */
#define QT_FUZZ_FDS		8
#define QT_FUZZ_MAPS		32
#define QT_FUZZ_CREATED		256

struct qt_fuzz {
	uint64_t rng;
	size_t page;
	int fds[QT_FUZZ_FDS];			/* -1: free slot */
	struct { uint8_t *addr; size_t len; } maps[QT_FUZZ_MAPS];
	struct { uint32_t uid, magic; } created[QT_FUZZ_CREATED];
	int nr_created;
	uint8_t *rw;		/* a read-write page followed by a PROT_NONE one */
	uint8_t *ro;		/* a read-only page holding a valid request */
	uint64_t ops, ok, errors;
};

static uint64_t qt_fuzz_rand(struct qt_fuzz *z)
{
	z->rng ^= z->rng >> 12;
	z->rng ^= z->rng << 25;
	z->rng ^= z->rng >> 27;
	return z->rng * 0x2545f4914f6cdd1dULL;
}

static uint32_t qt_fuzz_below(struct qt_fuzz *z, uint32_t n)
{
	return n ? (uint32_t)(qt_fuzz_rand(z) % n) : 0;
}

static void qt_fuzz_count(struct qt_fuzz *z, bool ok)
{
	z->ops++;
	if (ok)
		z->ok++;
	else
		z->errors++;
}

static uint32_t qt_fuzz_uid(struct qt_fuzz *z)
{
	static const uint32_t uids[] = { 0, 1000, 1001, 65534, UINT32_MAX };

	if (qt_fuzz_below(z, 100) < 75)
		return (uint32_t)geteuid();
	if (qt_fuzz_below(z, 4))
		return uids[qt_fuzz_below(z, sizeof(uids) / sizeof(uids[0]))];
	return (uint32_t)qt_fuzz_rand(z);
}

static void qt_fuzz_req(struct qt_fuzz *z, struct qnvram_region_req *req)
{
	static const uint64_t sizes[] = {
		0, 1, 4095, 4096, 4097, 1ULL << 32, QNVRAM_REGION_MAX_BYTES,
		QNVRAM_REGION_MAX_BYTES + 1, 1ULL << 63, UINT64_MAX,
	};

	memset(req, 0, sizeof(*req));
	req->uid = qt_fuzz_uid(z);
	req->magic = QT_FUZZ_MAGIC_BASE + (qt_fuzz_below(z, 10) ?
		qt_fuzz_below(z, QT_FUZZ_MAGICS) : qt_fuzz_below(z, 1U << 16));
	req->size = qt_fuzz_below(z, 100) < 60 ?
		    1 + qt_fuzz_below(z, 65536) :
		    sizes[qt_fuzz_below(z, sizeof(sizes) / sizeof(sizes[0]))];
	switch (qt_fuzz_below(z, 10)) {
	case 0:
		req->flags = (uint32_t)qt_fuzz_rand(z);
		break;
	case 1: case 2: case 3:
		req->flags = QNVRAM_REQ_OPEN_EXISTING;
		break;
	default:
		break;
	}
	req->state = (uint32_t)qt_fuzz_rand(z);
	if (!qt_fuzz_below(z, 10))
		req->reserved[qt_fuzz_below(z, 2)] = qt_fuzz_rand(z) | 1;
}

static void qt_fuzz_remember(struct qt_fuzz *z, uint32_t uid, uint32_t magic)
{
	int i;

	for (i = 0; i < z->nr_created; i++)
		if (z->created[i].uid == uid && z->created[i].magic == magic)
			return;
	if (z->nr_created < QT_FUZZ_CREATED) {
		z->created[z->nr_created].uid = uid;
		z->created[z->nr_created].magic = magic;
		z->nr_created++;
	}
}

static int *qt_fuzz_fd(struct qt_fuzz *z, bool want_open)
{
	int i, start = (int)qt_fuzz_below(z, QT_FUZZ_FDS);

	for (i = 0; i < QT_FUZZ_FDS; i++) {
		int *fd = &z->fds[(start + i) % QT_FUZZ_FDS];

		if ((*fd >= 0) == want_open)
			return fd;
	}
	return NULL;
}

/* Read every page (and write the first byte) of a fresh mapping. */
static void qt_fuzz_touch(struct qt_fuzz *z, uint8_t *p, size_t len, int prot)
{
	volatile uint8_t sink = 0;
	size_t off;

	if (!(prot & PROT_READ))
		return;
	for (off = 0; off < len; off += z->page)
		sink ^= p[off];
	if (prot & PROT_WRITE)
		p[0] = sink;
}

static void qt_fuzz_mmap(struct qt_fuzz *z)
{
	static const int prots[] = {
		PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE, PROT_READ,
		PROT_WRITE, PROT_NONE, PROT_READ | PROT_EXEC,
	};
	int *fd = qt_fuzz_fd(z, true), prot, flags, i;
	size_t len;
	off_t off;
	void *p;

	if (!fd)
		return;
	switch (qt_fuzz_below(z, 5)) {
	case 0:
		len = z->page * (1 + qt_fuzz_below(z, 16));
		break;
	case 1:
		len = 1 + qt_fuzz_below(z, 65536);
		break;
	case 2:
		len = z->page * (1 + qt_fuzz_below(z, 256));
		break;
	default:
		len = z->page;
		break;
	}
	off = qt_fuzz_below(z, 3) ? 0 : (off_t)(z->page * qt_fuzz_below(z, 17));
	if (!qt_fuzz_below(z, 20))
		off += 1 + qt_fuzz_below(z, 100);	/* unaligned */
	prot = prots[qt_fuzz_below(z, sizeof(prots) / sizeof(prots[0]))];
	flags = qt_fuzz_below(z, 8) ? MAP_SHARED : MAP_PRIVATE;
	if (!qt_fuzz_below(z, 8))
		flags |= MAP_POPULATE;
	p = mmap(NULL, len, prot, flags, *fd, off);
	qt_fuzz_count(z, p != MAP_FAILED);
	if (p == MAP_FAILED)
		return;
	qt_fuzz_touch(z, p, len, prot);
	for (i = 0; i < QT_FUZZ_MAPS; i++) {
		if (!z->maps[i].addr) {
			z->maps[i].addr = p;
			z->maps[i].len = len;
			return;
		}
	}
	munmap(p, len);
}

/* Unmap a mapping whole, or one page of it (splitting it), or shrink it. */
static void qt_fuzz_munmap(struct qt_fuzz *z)
{
	int i = (int)qt_fuzz_below(z, QT_FUZZ_MAPS);
	size_t pages, cut;
	uint8_t *p = z->maps[i].addr;
	void *q;

	if (!p)
		return;
	pages = (z->maps[i].len + z->page - 1) / z->page;
	switch (qt_fuzz_below(z, 4)) {
	case 0:		/* a page in the middle: two vmas remain */
		if (pages >= 3) {
			cut = 1 + qt_fuzz_below(z, (uint32_t)pages - 2);
			qt_fuzz_count(z, !munmap(p + cut * z->page, z->page));
			/* Forget the rest; the final sweep unmaps the range. */
			return;
		}
		break;
	case 1:		/* shrink in place */
		if (pages >= 2) {
			q = mremap(p, pages * z->page, z->page, 0);
			qt_fuzz_count(z, q != MAP_FAILED);
			if (q != MAP_FAILED)
				z->maps[i].len = z->page;
			return;
		}
		break;
	case 2:		/* grow: refused */
		q = mremap(p, pages * z->page, (pages + 1) * z->page,
			   MREMAP_MAYMOVE);
		qt_fuzz_count(z, q != MAP_FAILED);
		if (q != MAP_FAILED) {
			z->maps[i].addr = q;
			z->maps[i].len = (pages + 1) * z->page;
		}
		return;
	default:
		break;
	}
	qt_fuzz_count(z, !munmap(p, pages * z->page));
	z->maps[i].addr = NULL;
}

/* A child inherits the mappings, reads them and exits. */
static void qt_fuzz_fork(struct qt_fuzz *z)
{
	pid_t pid;
	int i;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		for (i = 0; i < QT_FUZZ_MAPS; i++)
			if (z->maps[i].addr && !qt_fuzz_below(z, 2))
				munmap(z->maps[i].addr, z->maps[i].len);
		_exit(0);
	}
	qt_fuzz_count(z, pid > 0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static void qt_fuzz_ioctl(struct qt_fuzz *z)
{
	static const unsigned long cmds[] = {
		QNVRAM_IOC_ALLOC, QNVRAM_IOC_RETRIEVE, QNVRAM_IOC_FREE,
	};
	struct qnvram_region_req req;
	unsigned long cmd;
	int *fd = qt_fuzz_fd(z, true), ret;
	void *arg = &req;

	if (!fd)
		return;
	qt_fuzz_req(z, &req);
	cmd = cmds[qt_fuzz_below(z, 3)];
	switch (qt_fuzz_below(z, 20)) {
	case 0:		/* same type, any number, direction and size */
		cmd = _IOC(qt_fuzz_below(z, 4), QNVRAM_IOC_TYPE,
			   qt_fuzz_below(z, 8), qt_fuzz_below(z, 128));
		break;
	case 1:
		arg = NULL;
		break;
	case 2:		/* the PROT_NONE page */
		arg = z->rw + z->page;
		break;
	case 3:		/* straddles the PROT_NONE page */
		arg = z->rw + z->page - 8;
		break;
	case 4:		/* readable, not writable: the reply cannot be copied */
		arg = z->ro;
		break;
	default:
		break;
	}
	ret = ioctl(*fd, cmd, arg);
	qt_fuzz_count(z, ret == 0);
	if (ret == 0 && arg == &req && cmd == QNVRAM_IOC_ALLOC)
		qt_fuzz_remember(z, req.uid, req.magic);
	else if (ret == 0 && arg == z->ro)
		qt_fuzz_remember(z, (uint32_t)geteuid(), QT_FUZZ_MAGIC_BASE);
}

static void qt_fuzz_step(struct qt_fuzz *z)
{
	uint32_t r = qt_fuzz_below(z, 100);
	int *fd;

	if (r < 10) {
		fd = qt_fuzz_fd(z, false);
		if (fd) {
			*fd = open(QNVRAM_DEV_PATH, O_RDWR | O_CLOEXEC);
			qt_fuzz_count(z, *fd >= 0);
		}
	} else if (r < 18) {
		fd = qt_fuzz_fd(z, true);
		if (fd) {
			close(*fd);
			*fd = -1;
		}
	} else if (r < 21) {
		int *from = qt_fuzz_fd(z, true);

		fd = qt_fuzz_fd(z, false);
		if (from && fd) {
			*fd = dup(*from);
			qt_fuzz_count(z, *fd >= 0);
		}
	} else if (r < 70) {
		qt_fuzz_ioctl(z);
	} else if (r < 86) {
		qt_fuzz_mmap(z);
	} else if (r < 99) {
		qt_fuzz_munmap(z);
	} else {
		qt_fuzz_fork(z);
	}
}

/*
 * Random ioctls, mmaps, munmaps, mremaps, dups, closes and forks on
 * /dev/qnvram. Afterwards, with every mapping and file gone, each region it
 * created must be freeable: a leaked binding or map count shows as EBUSY.
 */
static int qt_cmd_ioctl_fuzz(int argc, char **argv)
{
	struct qt_fuzz z = { .page = (size_t)sysconf(_SC_PAGESIZE) };
	struct qnvram_region_req valid = {
		.uid = (uint32_t)geteuid(), .magic = QT_FUZZ_MAGIC_BASE,
		.size = 4096, .flags = QNVRAM_REQ_OPEN_EXISTING,
	};
	uint64_t count, seed, i;
	int fd, leaks = 0, k;

	if (argc != 2 || !qt_parse_u64(argv[0], UINT64_MAX, &count) ||
	    !qt_parse_u64(argv[1], UINT64_MAX, &seed))
		return qt_usage_error("usage: ioctl-fuzz COUNT SEED");
	z.rng = seed ? seed : 1;
	for (k = 0; k < QT_FUZZ_FDS; k++)
		z.fds[k] = -1;
	z.rw = mmap(NULL, 3 * z.page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (z.rw == MAP_FAILED)
		return qt_fail("ioctl-fuzz: mmap");
	z.ro = z.rw + 2 * z.page;
	memcpy(z.ro, &valid, sizeof(valid));
	if (mprotect(z.rw + z.page, z.page, PROT_NONE) < 0 ||
	    mprotect(z.ro, z.page, PROT_READ) < 0)
		return qt_fail("ioctl-fuzz: mprotect");
	fd = open(QNVRAM_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return qt_fail("ioctl-fuzz: open " QNVRAM_DEV_PATH);
	close(fd);

	for (i = 0; i < count; i++)
		qt_fuzz_step(&z);

	/* Everything this process holds goes; then each region must free. */
	for (k = 0; k < QT_FUZZ_MAPS; k++)
		if (z.maps[k].addr)
			munmap(z.maps[k].addr, (z.maps[k].len + z.page - 1) /
					       z.page * z.page);
	for (k = 0; k < QT_FUZZ_FDS; k++)
		if (z.fds[k] >= 0)
			close(z.fds[k]);
	for (k = 0; k < z.nr_created; k++) {
		if (qnvm_free(z.created[k].uid, z.created[k].magic) == 0 ||
		    errno == ENOENT)
			continue;
		fprintf(stderr, "qnvtest: ioctl-fuzz: region uid %" PRIu32
			" magic 0x%" PRIx32 " not freeable after every file "
			"and mapping is gone: %s\n", z.created[k].uid,
			z.created[k].magic, qt_errname(errno));
		leaks++;
	}
	qt_say("ops %" PRIu64 ", ok %" PRIu64 ", errors %" PRIu64
	       ", regions created %d, leaked %d\n", z.ops, z.ok, z.errors,
	       z.nr_created, leaks);
	if (leaks) {
		qt_errno = 0;
		return QT_FAIL;
	}
	return QT_OK;
}

static int qt_cmd_persist(int argc, char **argv)
{
	static uint8_t buf[3 * 4096];

	(void)argv;
	if (argc != 0)
		return qt_usage_error("usage: persist");
	qt_fill(buf, sizeof(buf), 1);
	if (qnvm_persist(buf + 1, sizeof(buf) - 2) < 0)
		return qt_fail("persist");
	qt_say("ok %s\n", qnvm_persist_mechanism());
	return QT_OK;
}

static int qt_dispatch(int argc, char **argv);
static const struct qt_cmd *qt_find_cmd(const char *name);

static int qt_cmd_expect_errno(int argc, char **argv)
{
	int want, ret;

	if (argc < 2)
		return qt_usage_error("usage: expect-errno ERRNO_NAME CMD...");
	want = qt_errno_by_name(argv[0]);
	if (!want)
		return qt_usage_error("unknown errno name '%s'", argv[0]);
	qt_errno = 0;
	ret = qt_dispatch(argc - 1, argv + 1);
	if (ret == QT_USAGE)
		return ret;
	if (ret == QT_OK) {
		fprintf(stderr, "qnvtest: expected %s, but %s succeeded\n",
			argv[0], argv[1]);
		return QT_FAIL;
	}
	if (qt_errno != want) {
		fprintf(stderr, "qnvtest: expected %s, saw %s\n", argv[0],
			qt_errno ? qt_errname(qt_errno) : "a failure without errno");
		return QT_FAIL;
	}
	qt_say("ok %s\n", argv[0]);
	return QT_OK;
}

static const char *qt_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static int qt_cmd_setuid(int argc, char **argv)
{
	uint32_t id;

	if (argc < 2 || !qt_parse_u32(argv[0], &id))
		return qt_usage_error("usage: setuid UID CMD...");
	if (setgroups(0, NULL) < 0 && errno != EPERM)
		return qt_fail("setuid: setgroups");
	if (setresgid(id, id, id) < 0)
		return qt_fail("setuid: setresgid");
	if (setresuid(id, id, id) < 0)
		return qt_fail("setuid: setresuid");
	/* "setuid UID qnvtest CMD..." as scripts write it: no exec needed. */
	if (!strcmp(qt_basename(argv[1]), "qnvtest") && argc > 2) {
		argc--;
		argv++;
	}
	if (qt_find_cmd(argv[1]))
		return qt_dispatch(argc - 1, argv + 1);
	fflush(stdout);
	execvp(argv[1], argv + 1);
	return qt_fail("setuid: exec");
}

static int qt_cmd_caps(int argc, char **argv)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { 0 };
	uint32_t id;
	int cap;

	if (argc < 3 || !qt_parse_u32(argv[0], &id))
		return qt_usage_error("usage: caps UID net_admin|sys_admin CMD...");
	if (!strcmp(argv[1], "net_admin"))
		cap = CAP_NET_ADMIN;
	else if (!strcmp(argv[1], "sys_admin"))
		cap = CAP_SYS_ADMIN;
	else
		return qt_usage_error("caps: CAP is net_admin or sys_admin");
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		return qt_fail("caps: PR_SET_KEEPCAPS");
	if (setgroups(0, NULL) < 0 || setresgid(id, id, id) < 0 ||
	    setresuid(id, id, id) < 0)
		return qt_fail("caps: setresuid");
	data[cap / 32].effective = data[cap / 32].permitted =
		data[cap / 32].inheritable = 1U << (cap % 32);
	if (syscall(SYS_capset, &hdr, data) < 0)
		return qt_fail("caps: capset");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) < 0)
		return qt_fail("caps: PR_CAP_AMBIENT_RAISE");
	fflush(stdout);
	execvp(argv[2], argv + 2);
	return qt_fail("caps: exec");
}

static double qt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int qt_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#define QT_LATENCY_MAX_ROUNDS	100000

/* Max and median of @n samples (sorted in place). */
static void qt_max_median(double *v, size_t n, double *max, double *median)
{
	qsort(v, n, sizeof(*v), qt_cmp_double);
	*max = n ? v[n - 1] : 0;
	*median = n ? v[n / 2] : 0;
}

static int qt_cmd_latency(int argc, char **argv)
{
	static double fault_ms[QT_LATENCY_MAX_ROUNDS], cmd_ms[QT_LATENCY_MAX_ROUNDS];
	double end, t, fmax, fmed, cmax, cmed;
	uint64_t size, seconds;
	uint32_t uid, magic;
	size_t n = 0, len, off;
	pid_t pid;
	int status;
	char *p;

	if (argc < 5 || !qt_parse_region(argv, &uid, &magic) ||
	    !qt_parse_u64(argv[2], SIZE_MAX, &size) ||
	    !qt_parse_u64(argv[3], 86400, &seconds))
		return qt_usage_error("usage: latency UID MAGIC SIZE SECONDS CMD...");
	end = qt_now_ms() + seconds * 1e3;
	while (qt_now_ms() < end && n < QT_LATENCY_MAX_ROUNDS) {
		fault_ms[n] = 0;
		t = qt_now_ms();
		p = size ? qnvm_retrieve(uid, magic, &len) : NULL;
		if (size && !p)
			return qt_fail("latency: retrieve");
		/* A store of what is there: a write fault, the bytes unchanged. */
		for (off = 0; p && off < len; off += 4096)
			((volatile char *)p)[off] = ((volatile char *)p)[off];
		if (p && qnvm_unmap(p) < 0)
			return qt_fail("latency: unmap");
		if (p)
			fault_ms[n] = qt_now_ms() - t;

		t = qt_now_ms();
		fflush(stdout);
		pid = fork();
		if (pid < 0)
			return qt_fail("latency: fork");
		if (!pid) {
			int fd = open("/dev/null", O_WRONLY);

			if (fd >= 0)
				dup2(fd, STDOUT_FILENO);
			execvp(argv[4], argv + 4);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) < 0)
			return qt_fail("latency: waitpid");
		cmd_ms[n] = qt_now_ms() - t;
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			qt_errno = 0;
			fprintf(stderr, "qnvtest: latency: %s failed (status %#x)\n",
				argv[4], status);
			return QT_FAIL;
		}
		n++;
	}
	qt_max_median(fault_ms, n, &fmax, &fmed);
	qt_max_median(cmd_ms, n, &cmax, &cmed);
	qt_say("rounds %zu fault_max_ms %.1f fault_median_ms %.1f cmd_max_ms %.1f cmd_median_ms %.1f\n",
	       n, fmax, fmed, cmax, cmed);
	return QT_OK;
}

static void qt_usage(FILE *out)
{
	fputs(
"Usage: qnvtest COMMAND ARGS\n"
"  alloc UID MAGIC SIZE SEED    create, fill with SEED's pattern, persist; \"ok\"\n"
"  verify UID MAGIC SEED        retrieve, compare; \"mismatches N of BYTES\"\n"
"  hold UID MAGIC SIZE SEED     create or open, fill, persist, \"ready\", sleep\n"
"  free UID MAGIC               free the region; \"ok\"\n"
"  expect-errno ENAME CMD...    exit 0 iff CMD fails with errno ENAME (EPERM...)\n"
"  setuid UID CMD...            run CMD (a qnvtest command or a program) as\n"
"                               uid and gid UID\n"
"  caps UID CAP CMD...          run program CMD as uid and gid UID with the one\n"
"                               capability CAP (net_admin or sys_admin)\n"
"  churn UID BASE COUNT SIZE    create BASE+i (pattern seed i), \"alloc i\", free\n"
"                               BASE+i-4, \"free i-4\"; COUNT 0 loops forever\n"
"  mmap-beyond UID MAGIC        mmaps past the end and mremap growth refused\n"
"  double-free UID MAGIC        free works, a second free is ENOENT\n"
"  ioctl-fuzz COUNT SEED        COUNT random ioctls/mmaps/munmaps on /dev/qnvram\n"
"                               (magics 0xf0220000+ only); then every region it\n"
"                               made must free: \"ops N, ok M, errors K, ...\"\n"
"  persist                      \"ok MECHANISM\" of the persist barrier\n"
"  latency UID MAGIC SIZE SECONDS CMD...\n"
"                               for SECONDS: retrieve (SIZE 0: not), store to\n"
"                               every page its own bytes, unmap;\n"
"                               unmap; run CMD; \"rounds N fault_max_ms A ...\"\n"
"Numbers: decimal or 0x-hex. Exit: 0 ok, 1 failed, 2 usage.\n", out);
}

struct qt_cmd {
	const char *name;
	int (*run)(int argc, char **argv);
};

static const struct qt_cmd qt_cmds[] = {
	{ "alloc", qt_cmd_alloc },
	{ "verify", qt_cmd_verify },
	{ "hold", qt_cmd_hold },
	{ "free", qt_cmd_free },
	{ "expect-errno", qt_cmd_expect_errno },
	{ "setuid", qt_cmd_setuid },
	{ "caps", qt_cmd_caps },
	{ "churn", qt_cmd_churn },
	{ "mmap-beyond", qt_cmd_mmap_beyond },
	{ "double-free", qt_cmd_double_free },
	{ "ioctl-fuzz", qt_cmd_ioctl_fuzz },
	{ "persist", qt_cmd_persist },
	{ "latency", qt_cmd_latency },
};

static const struct qt_cmd *qt_find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(qt_cmds) / sizeof(qt_cmds[0]); i++)
		if (!strcmp(qt_cmds[i].name, name))
			return &qt_cmds[i];
	return NULL;
}

static int qt_dispatch(int argc, char **argv)
{
	const struct qt_cmd *cmd;

	if (argc < 1)
		return qt_usage_error("missing COMMAND");
	cmd = qt_find_cmd(argv[0]);
	if (!cmd)
		return qt_usage_error("unknown command '%s'", argv[0]);
	return cmd->run(argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		qt_usage(stderr);
		return QT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		qt_usage(stdout);
		return QT_OK;
	}
	return qt_dispatch(argc - 1, argv + 1);
}
