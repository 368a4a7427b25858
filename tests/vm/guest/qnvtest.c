// SPDX-License-Identifier: GPL-2.0-only
/*
 * qnvtest: a command line over libqnvram for the guest test scripts.
 *
 *	qnvtest alloc UID MAGIC SIZE SEED     create, fill with SEED's pattern,
 *	                                      persist; prints "ok"
 *	qnvtest verify UID MAGIC SEED         retrieve and compare; prints
 *	                                      "mismatches N of BYTES", exit 0 iff N=0
 *	qnvtest hold UID MAGIC SIZE SEED      create or open, fill, persist, print
 *	                                      "ready", then sleep until killed
 *	qnvtest free UID MAGIC                free; prints "ok"
 *	qnvtest expect-errno ENAME CMD...     exit 0 iff CMD fails with errno ENAME
 *	qnvtest setuid UID CMD...             run CMD as uid and gid UID
 *	qnvtest churn UID BASE COUNT SIZE     for i = 0..COUNT-1 (COUNT 0: forever):
 *	                                      create BASE+i with pattern i, print
 *	                                      "alloc i"; free BASE+i-4, print "free i-4"
 *	qnvtest mmap-beyond UID MAGIC         mmaps reaching past the region's end
 *	                                      and growing mremap must be refused
 *	qnvtest double-free UID MAGIC         free must work, a second one ENOENT
 *	qnvtest persist                       print the persist barrier mechanism
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
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
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
	fprintf(stderr, "qnvtest: %s: %s (%s)\n", what, strerror(err),
		qt_errname(err));
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
	return qt_dispatch(argc - 1, argv + 1);
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
"  setuid UID CMD...            run CMD as uid and gid UID\n"
"  churn UID BASE COUNT SIZE    create BASE+i (pattern seed i), \"alloc i\", free\n"
"                               BASE+i-4, \"free i-4\"; COUNT 0 loops forever\n"
"  mmap-beyond UID MAGIC        mmaps past the end and mremap growth refused\n"
"  double-free UID MAGIC        free works, a second free is ENOENT\n"
"  persist                      \"ok MECHANISM\" of the persist barrier\n"
"Numbers: decimal or 0x-hex. Exit: 0 ok, 1 failed, 2 usage.\n", out);
}

static int qt_dispatch(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(int argc, char **argv);
	} cmds[] = {
		{ "alloc", qt_cmd_alloc },
		{ "verify", qt_cmd_verify },
		{ "hold", qt_cmd_hold },
		{ "free", qt_cmd_free },
		{ "expect-errno", qt_cmd_expect_errno },
		{ "setuid", qt_cmd_setuid },
		{ "churn", qt_cmd_churn },
		{ "mmap-beyond", qt_cmd_mmap_beyond },
		{ "double-free", qt_cmd_double_free },
		{ "persist", qt_cmd_persist },
	};
	size_t i;

	if (argc < 1)
		return qt_usage_error("missing COMMAND");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(cmds[i].name, argv[0]))
			return cmds[i].run(argc - 1, argv + 1);
	return qt_usage_error("unknown command '%s'", argv[0]);
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
