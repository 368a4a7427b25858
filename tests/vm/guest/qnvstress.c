// SPDX-License-Identifier: GPL-2.0-only
/*
 * qnvstress: adversarial and concurrent use of /dev/qnvram and the "qnvram"
 * genl family with raw ioctls, mmaps and netlink messages (no libqnvram), for
 * tests/vm/guest/qnvram-adversarial.sh.
 *
 *	qnvstress stress SECONDS NPROC NTHREADS NMAGIC UID0 UID1
 *		NPROC processes (odd ones as uid UID1) of NTHREADS threads each
 *		create, fill, check, map, fork, mremap, half-unmap, free and
 *		peek at regions (UID0|UID1, 1..NMAGIC) for SECONDS; every
 *		region's content is checked under a per-region flock. Then
 *		checks every surviving region. Prints "regions N bytes B
 *		resident R swapped S" and per-op counts; exit 0 iff no check
 *		failed.
 *	qnvstress verify-all NMAGIC UID0 UID1
 *		the final check of stress alone (after a module reload)
 *	qnvstress lifetime UID OTHER_UID
 *		mapping lifetime and request validation checks; one
 *		"PASS name" or "FAIL name: why" line each
 *	qnvstress netlink UID OTHER_UID
 *		malformed and unauthorised genl requests, same output
 *	qnvstress efault-mmap UID VICTIM_UID [raw]
 *		mmap of a file whose ALLOC/RETRIEVE is failing with EFAULT
 *		(made deterministic with a userfaultfd write-protected
 *		argument): the mapping must keep its region pinned; same output.
 *		It binds the file again before munmap, so that the kernel's
 *		counts stay sane; "raw" unmaps without that (a kernel with the
 *		bug then works on pool->rt[-1])
 *	qnvstress efault-race SECONDS UID
 *		the same without userfaultfd, by racing threads (any user)
 *	qnvstress sock-identity UID MAGIC
 *		as root, with regions (0, MAGIC) and (UID, MAGIC) of different
 *		sizes: a netlink socket and a /dev/qnvram file opened while
 *		the effective uid is UID (no capabilities), then used with
 *		euid 0 and every capability back, and the other way round:
 *		neither acts for more than both the opener and the caller
 *		(retrieve, list, flush on the socket, alloc as 0 or as UID on
 *		the file: EPERM); same output
 *	qnvstress craft-swapped DEV POOL_BYTES UID MAGIC
 *		rewrite the newest flash image so that region (UID, MAGIC) is
 *		"swapped" at an offset far past the device's end, with valid
 *		checksums (a hostile image)
 *
 * Exit: 0 ok, 1 a check failed, 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <grp.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/userfaultfd.h>
#include <linux/qnvram.h>

#define PAGE		4096UL
#define LOCKDIR		"/tmp/qnvstress"

static int failures;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

static void result(bool ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void result(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		say("PASS %s\n", name);
		return;
	}
	failures++;
	printf("FAIL %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static const char *ename(int err)
{
	static __thread char buf[24];

	switch (err) {
	case 0: return "0";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EIO: return "EIO";
	case EBADF: return "EBADF";
	case ENOMEM: return "ENOMEM";
	case EACCES: return "EACCES";
	case EFAULT: return "EFAULT";
	case EBUSY: return "EBUSY";
	case EEXIST: return "EEXIST";
	case ENODEV: return "ENODEV";
	case EINVAL: return "EINVAL";
	case ENOTTY: return "ENOTTY";
	case ENOSPC: return "ENOSPC";
	case ERANGE: return "ERANGE";
	case EBADFD: return "EBADFD";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EDQUOT: return "EDQUOT";
	case EBADMSG: return "EBADMSG";
	case EMSGSIZE: return "EMSGSIZE";
	}
	snprintf(buf, sizeof(buf), "errno%d", err);
	return buf;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t rnd(uint64_t *s)
{
	*s += 0x9e3779b97f4a7c15ULL;
	return splitmix64(*s);
}

static bool drop_to(uint32_t uid)
{
	return setgroups(0, NULL) == 0 && setresgid(uid, uid, uid) == 0 &&
	       setresuid(uid, uid, uid) == 0;
}

/* --- /dev/qnvram ----------------------------------------------------------- */

static int qopen(int flags)
{
	return open(QNVRAM_DEV_PATH, flags | O_CLOEXEC);
}

/*
 * One region ioctl: 0 or -errno; *len = the region's length and *out_flags
 * the flags it returned (QNVRAM_REQ_CREATED or 0), each if given.
 */
static int qreq_out(int fd, unsigned long cmd, uint32_t uid, uint32_t magic,
		    uint64_t size, uint32_t flags, uint64_t *len,
		    uint32_t *out_flags)
{
	struct qnvram_region_req r = {
		.uid = uid, .magic = magic, .size = size, .flags = flags,
	};

	if (ioctl(fd, cmd, &r) < 0)
		return -errno;
	if (len)
		*len = r.size;
	if (out_flags)
		*out_flags = r.flags;
	return 0;
}

static int qreq(int fd, unsigned long cmd, uint32_t uid, uint32_t magic,
		uint64_t size, uint32_t flags, uint64_t *len)
{
	return qreq_out(fd, cmd, uid, magic, size, flags, len, NULL);
}

/* Create, fill with @seed's bytes and unmap; 0 or -errno. */
static int qcreate(uint32_t uid, uint32_t magic, uint64_t size, uint8_t fill)
{
	uint64_t len = 0;
	void *p;
	int fd = qopen(O_RDWR), ret;

	if (fd < 0)
		return -errno;
	ret = qreq(fd, QNVRAM_IOC_ALLOC, uid, magic, size, 0, &len);
	if (!ret) {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED) {
			ret = -errno;
		} else {
			memset(p, fill, len);
			munmap(p, len);
		}
	}
	close(fd);
	return ret;
}

static int qfree(uint32_t uid, uint32_t magic)
{
	int fd = qopen(O_RDWR), ret;

	if (fd < 0)
		return -errno;
	ret = qreq(fd, QNVRAM_IOC_FREE, uid, magic, 0, 0, NULL);
	close(fd);
	return ret;
}

/* binds and maps of region (uid, magic) from debugfs; false if absent */
static bool region_counts(uint32_t uid, uint32_t magic, int *binds, int *maps)
{
	FILE *f = fopen("/sys/kernel/debug/qnvram/regions", "r");
	char line[256], state[16];
	unsigned int u, m, b;
	unsigned long long off, len;
	int slot, mp;
	bool found = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%d %u %x %llx %llu %15s %u %d", &slot, &u, &m,
			   &off, &len, state, &b, &mp) != 8)
			continue;
		if (u == uid && m == magic) {
			*binds = (int)b;
			*maps = mp;
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* --- region contents --------------------------------------------------------
 * word 0: identity of (uid, magic); word 1: seed (never 0); word i >= 2:
 * splitmix64(seed ^ i). A new region is all zero until filled.
 */
static uint64_t ident(uint32_t uid, uint32_t magic)
{
	return 0xa500000000000000ULL ^ ((uint64_t)uid << 24) ^ magic;
}

static void fill(void *p, uint64_t len, uint32_t uid, uint32_t magic,
		 uint64_t seed)
{
	uint64_t *w = p, i;

	seed |= 1;
	for (i = 2; i < len / 8; i++)
		w[i] = splitmix64(seed ^ (i * 0x100000001b3ULL));
	w[1] = seed | 1;
	w[0] = ident(uid, magic);
}

/* 0: pattern intact; 1: all zero; -1: neither (*why says where) */
static int check(const void *p, uint64_t len, uint32_t uid, uint32_t magic,
		 char *why, size_t whylen)
{
	const uint64_t *w = p;
	uint64_t i, seed = w[1];

	if (w[0] == 0 && seed == 0) {
		for (i = 2; i < len / 8; i++)
			if (w[i]) {
				snprintf(why, whylen, "zero header but word %" PRIu64 " = %#" PRIx64, i, w[i]);
				return -1;
			}
		return 0 + 1;
	}
	if (w[0] != ident(uid, magic)) {
		snprintf(why, whylen, "identity %#" PRIx64 ", expected %#" PRIx64 " (uid %u magic %#x)",
			 w[0], ident(uid, magic), uid, magic);
		return -1;
	}
	for (i = 2; i < len / 8; i++)
		if (w[i] != splitmix64(seed ^ (i * 0x100000001b3ULL))) {
			snprintf(why, whylen, "uid %u magic %#x: word %" PRIu64 " of %" PRIu64 " wrong",
				 uid, magic, i, len / 8);
			return -1;
		}
	return 0;
}

/* --- stress ------------------------------------------------------------------ */

enum { OP_CREATE, OP_UPDATE, OP_FREE, OP_PEEK, OP_GAME, OP_ENOSPC, OP_BUSY,
       OP_ENOENT, OP_RECREATED, OP_NR };

struct stress {
	uint64_t deadline;
	uint32_t nmagic, uid[2];
	bool user;		/* this process runs as uid[1] */
	_Atomic unsigned long ops[OP_NR];
	_Atomic unsigned long fails;
};

static const char *const op_names[] = { "create", "update", "free", "peek",
					"game", "enospc", "busy", "enoent", "recreated" };

static uint64_t size_of(uint32_t magic)
{
	return ((magic * 37u) % 32 + 1) * 16384ULL;
}

static void sfail(struct stress *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void sfail(struct stress *s, const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&s->fails, 1) >= 20)
		return;
	fprintf(stdout, "stress[%d]: ", getpid());
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fprintf(stdout, "\n");
	fflush(stdout);
}

static int lock_region(uint32_t uid, uint32_t magic)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), LOCKDIR "/%u.%u", uid, magic);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd >= 0)
		flock(fd, LOCK_EX);
	return fd;
}

static void unlock_region(int fd)
{
	if (fd >= 0) {
		flock(fd, LOCK_UN);
		close(fd);
	}
}

/*
 * Under the region's lock: bind @fd to (uid, magic), creating it if needed;
 * map it and check it (a region we created must be all zero, an existing one
 * must hold a full pattern). Returns the mapping or NULL (counted).
 */
static void *bind_and_check(struct stress *s, int fd, uint32_t uid,
			    uint32_t magic, uint64_t *len, bool *created)
{
	uint32_t out = 0;
	char why[160];
	void *p;
	int ret, c;

	ret = qreq_out(fd, QNVRAM_IOC_ALLOC, uid, magic, size_of(magic), 0, len,
		       &out);
	if (!ret && out != QNVRAM_REQ_CREATED) {
		sfail(s, "ALLOC of uid %u magic %#x returned flags %#x, not CREATED",
		      uid, magic, out);
		return NULL;
	}
	*created = !ret;
	if (ret == -EEXIST) {
		ret = qreq_out(fd, (magic & 1) ? QNVRAM_IOC_RETRIEVE : QNVRAM_IOC_ALLOC,
			       uid, magic, size_of(magic),
			       (magic & 1) ? 0 : QNVRAM_REQ_OPEN_EXISTING, len, &out);
		/*
		 * ALLOC with OPEN_EXISTING creates the region when the netlink
		 * free loop (which does not take our lock) freed it after the
		 * EEXIST, and says so: a new region, all zero.
		 */
		if (!ret && out == QNVRAM_REQ_CREATED) {
			s->ops[OP_RECREATED]++;
			*created = true;
		} else if (!ret && out) {
			sfail(s, "%s of uid %u magic %#x returned flags %#x",
			      (magic & 1) ? "RETRIEVE" : "ALLOC|OPEN_EXISTING",
			      uid, magic, out);
			return NULL;
		}
	}
	/*
	 * ENOENT: the netlink free loop (which does not take our lock) freed
	 * it between the EEXIST and the retrieve.
	 */
	if (ret == -ENOSPC || ret == -ENOENT) {
		s->ops[ret == -ENOSPC ? OP_ENOSPC : OP_ENOENT]++;
		return NULL;
	}
	if (ret) {
		sfail(s, "bind uid %u magic %#x: %s", uid, magic, ename(-ret));
		return NULL;
	}
	if (*len != size_of(magic)) {
		sfail(s, "uid %u magic %#x: length %" PRIu64 ", expected %" PRIu64,
		      uid, magic, *len, size_of(magic));
		return NULL;
	}
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		sfail(s, "mmap uid %u magic %#x: %s", uid, magic, ename(errno));
		return NULL;
	}
	c = check(p, *len, uid, magic, why, sizeof(why));
	if (c < 0 || (c == 1) != *created) {
		sfail(s, "%s region uid %u magic %#x: %s", *created ? "new" : "existing",
		      uid, magic, c < 0 ? why : (c ? "all zero" : "not zero"));
		munmap(p, *len);
		return NULL;
	}
	return p;
}

static void op_update(struct stress *s, uint64_t *rs, uint32_t uid,
		      uint32_t magic)
{
	int lk = lock_region(uid, magic), fd = qopen(O_RDWR);
	uint64_t len = 0;
	bool created;
	void *p;

	if (fd < 0) {
		sfail(s, "open: %s", ename(errno));
		goto out;
	}
	p = bind_and_check(s, fd, uid, magic, &len, &created);
	if (!p)
		goto out;
	fill(p, len, uid, magic, rnd(rs));
	s->ops[created ? OP_CREATE : OP_UPDATE]++;
	if (rnd(rs) & 1) {
		/* close first: the mapping keeps the binding */
		close(fd);
		fd = -1;
	}
	munmap(p, len);
out:
	if (fd >= 0)
		close(fd);
	unlock_region(lk);
}

static void op_free(struct stress *s, uint32_t uid, uint32_t magic)
{
	int lk = lock_region(uid, magic);
	int ret = qfree(uid, magic);

	if (!ret)
		s->ops[OP_FREE]++;
	else if (ret == -ENOENT)
		s->ops[OP_ENOENT]++;
	else if (ret == -EBUSY)
		s->ops[OP_BUSY]++;	/* a peeker maps it */
	else
		sfail(s, "free uid %u magic %#x: %s", uid, magic, ename(-ret));
	unlock_region(lk);
}

/* Without the lock: map an existing region, check its identity, hold it. */
static void op_peek(struct stress *s, uint64_t *rs, uint32_t uid,
		    uint32_t magic)
{
	int fd = qopen(O_RDWR), ret;
	uint64_t len = 0, w0;
	volatile uint64_t *p;

	if (fd < 0) {
		sfail(s, "open: %s", ename(errno));
		return;
	}
	ret = qreq(fd, QNVRAM_IOC_RETRIEVE, uid, magic, 0, 0, &len);
	if (ret == -ENOENT || ret == -ENOSPC) {
		s->ops[ret == -ENOENT ? OP_ENOENT : OP_ENOSPC]++;
		goto out;
	}
	if (ret) {
		sfail(s, "retrieve uid %u magic %#x: %s", uid, magic, ename(-ret));
		goto out;
	}
	if (len != size_of(magic)) {
		sfail(s, "peek uid %u magic %#x: length %" PRIu64, uid, magic, len);
		goto out;
	}
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		sfail(s, "peek mmap: %s", ename(errno));
		goto out;
	}
	w0 = p[0];
	if (w0 && w0 != ident(uid, magic))
		sfail(s, "peek uid %u magic %#x: identity %#" PRIx64, uid, magic, w0);
	if (rnd(rs) % 4 == 0)
		usleep(rnd(rs) % 20000);
	munmap((void *)p, len);
	s->ops[OP_PEEK]++;
out:
	close(fd);
}

/* Under the lock: fork, mremap, half munmap, madvise, mprotect games. */
static void op_game(struct stress *s, uint64_t *rs, uint32_t uid,
		    uint32_t magic)
{
	int lk = lock_region(uid, magic), fd = qopen(O_RDWR), st;
	char why[160];
	uint64_t len, seed = rnd(rs);
	bool created;
	void *p, *q;
	pid_t pid;

	if (fd < 0)
		goto out;
	p = bind_and_check(s, fd, uid, magic, &len, &created);
	if (!p)
		goto out;
	if (created)
		fill(p, len, uid, magic, seed);
	switch (rnd(rs) % 5) {
	case 0:	/* a child rewrites it through the inherited mapping */
		pid = fork();
		if (pid == 0) {
			fill(p, len, uid, magic, seed + 1);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
			sfail(s, "fork child failed");
		if (((uint64_t *)p)[1] != ((seed + 1) | 1))
			sfail(s, "child's write not seen through parent mapping");
		break;
	case 1:	/* move it */
		q = mremap(p, len, len, MREMAP_MAYMOVE);
		if (q == MAP_FAILED) {
			sfail(s, "mremap: %s", ename(errno));
			break;
		}
		p = q;
		if (len > PAGE && mremap(p, len, len + PAGE, 0) != MAP_FAILED)
			sfail(s, "mremap grew a qnvram mapping");
		fill(p, len, uid, magic, seed);
		break;
	case 2:	/* drop the PTEs (the core refuses that for VM_PFNMAP: EINVAL) */
		fill(p, len, uid, magic, seed);
		if (madvise(p, len, MADV_DONTNEED) < 0 && errno != EINVAL)
			sfail(s, "madvise: %s", ename(errno));
		break;
	case 3:	/* unmap the upper half first */
		fill(p, len, uid, magic, seed);
		if (len > PAGE) {
			munmap((char *)p + len / 2, len / 2);
			if (((uint64_t *)p)[0] != ident(uid, magic))
				sfail(s, "lower half lost after half munmap");
			munmap(p, len / 2);
			p = NULL;
		}
		break;
	case 4:	/* read-only for a while */
		mprotect(p, len, PROT_READ);
		if (((uint64_t *)p)[0] != ident(uid, magic))
			sfail(s, "identity lost after mprotect");
		mprotect(p, len, PROT_READ | PROT_WRITE);
		fill(p, len, uid, magic, seed);
		break;
	}
	if (p) {
		if (check(p, len, uid, magic, why, sizeof(why)))
			sfail(s, "after game: %s", why);
		munmap(p, len);
	}
	s->ops[OP_GAME]++;
out:
	if (fd >= 0)
		close(fd);
	unlock_region(lk);
}

static void *stress_thread(void *arg)
{
	struct stress *s = arg;
	uint64_t rs = now_ns() ^ ((uint64_t)getpid() << 32) ^ (uintptr_t)&rs;

	while (now_ns() < s->deadline) {
		uint32_t magic = 1 + rnd(&rs) % s->nmagic;
		uint32_t uid = s->user ? s->uid[1] : s->uid[rnd(&rs) & 1];
		unsigned int op = rnd(&rs) % 100;

		if (op < 45)
			op_update(s, &rs, uid, magic);
		else if (op < 60)
			op_free(s, uid, magic);
		else if (op < 85)
			op_peek(s, &rs, uid, magic);
		else
			op_game(s, &rs, uid, magic);
	}
	return NULL;
}

static int stress_proc(struct stress *s, int nthreads)
{
	pthread_t th[16];
	int i, n = nthreads > 16 ? 16 : nthreads;

	if (s->user && !drop_to(s->uid[1])) {
		printf("stress: cannot become uid %u\n", s->uid[1]);
		return 1;
	}
	for (i = 0; i < n; i++)
		pthread_create(&th[i], NULL, stress_thread, s);
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	printf("stress[%d] uid %u:", getpid(), s->user ? s->uid[1] : 0);
	for (i = 0; i < OP_NR; i++)
		printf(" %s %lu", op_names[i], (unsigned long)s->ops[i]);
	printf(" fails %lu\n", (unsigned long)s->fails);
	fflush(stdout);
	return s->fails ? 1 : 0;
}

/* Every surviving region must be intact and filled. */
static int verify_all(uint32_t nmagic, const uint32_t uid[2])
{
	unsigned int n = 0, bad = 0, resident = 0, swapped = 0;
	uint64_t bytes = 0, len = 0;
	char why[160];
	uint32_t m;
	int i, fd, ret;
	void *p;

	for (i = 0; i < 2; i++) {
		for (m = 1; m <= nmagic; m++) {
			struct qnvram_region_req r = { .uid = uid[i], .magic = m };

			fd = qopen(O_RDWR);
			if (ioctl(fd, QNVRAM_IOC_RETRIEVE, &r) < 0) {
				if (errno != ENOENT) {
					printf("verify uid %u magic %#x: %s\n",
					       uid[i], m, ename(errno));
					bad++;
				}
				close(fd);
				continue;
			}
			len = r.size;
			n++;
			bytes += len;
			p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
			if (p == MAP_FAILED) {
				printf("verify mmap: %s\n", ename(errno));
				bad++;
			} else {
				ret = check(p, len, uid[i], m, why, sizeof(why));
				if (ret) {
					printf("verify uid %u magic %#x: %s\n", uid[i], m,
					       ret > 0 ? "still all zero" : why);
					bad++;
				}
				munmap(p, len);
			}
			close(fd);
		}
	}
	/* where they are now (every retrieve above swapped some in) */
	for (i = 0; i < 2; i++)
		for (m = 1; m <= nmagic; m++) {
			int b, mp;

			if (region_counts(uid[i], m, &b, &mp)) {
				FILE *f;
				char line[256];

				(void)b;
				(void)mp;
				f = fopen("/sys/kernel/debug/qnvram/regions", "r");
				while (f && fgets(line, sizeof(line), f)) {
					unsigned int u, mm;

					if (sscanf(line, "%*d %u %x", &u, &mm) == 2 &&
					    u == uid[i] && mm == m) {
						if (strstr(line, "swapped"))
							swapped++;
						else
							resident++;
					}
				}
				if (f)
					fclose(f);
			}
		}
	say("regions %u bytes %" PRIu64 " resident %u swapped %u bad %u\n", n,
	    bytes, resident, swapped, bad);
	return bad ? 1 : 0;
}

static int cmd_stress(int argc, char **argv)
{
	struct stress *s;
	int nproc, nthreads, i, st, ret = 0;
	uint32_t m, u;
	char path[64];
	pid_t pids[64];

	if (argc != 6)
		return 2;
	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	s->deadline = now_ns() + strtoull(argv[0], NULL, 0) * 1000000000ULL;
	nproc = atoi(argv[1]);
	nthreads = atoi(argv[2]);
	s->nmagic = strtoul(argv[3], NULL, 0);
	s->uid[0] = strtoul(argv[4], NULL, 0);
	s->uid[1] = strtoul(argv[5], NULL, 0);
	if (nproc < 1 || nproc > 64 || s->nmagic < 1)
		return 2;
	umask(0);
	mkdir(LOCKDIR, 0777);
	for (u = 0; u < 2; u++)
		for (m = 1; m <= s->nmagic; m++) {
			snprintf(path, sizeof(path), LOCKDIR "/%u.%u", s->uid[u], m);
			close(open(path, O_RDWR | O_CREAT, 0666));
		}
	for (i = 0; i < nproc; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			struct stress *mine = s;

			/* each process counts in its own copy */
			mine = malloc(sizeof(*mine));
			memcpy(mine, s, sizeof(*mine));
			for (st = 0; st < 8; st++)
				mine->ops[st] = 0;
			mine->fails = 0;
			mine->user = i & 1;
			_exit(stress_proc(mine, nthreads));
		}
	}
	for (i = 0; i < nproc; i++)
		if (waitpid(pids[i], &st, 0) < 0 || !WIFEXITED(st) ||
		    WEXITSTATUS(st)) {
			printf("stress process %d failed (status %#x)\n", pids[i], st);
			ret = 1;
		}
	if (verify_all(s->nmagic, s->uid))
		ret = 1;
	return ret;
}

static int cmd_verify_all(int argc, char **argv)
{
	uint32_t uid[2];

	if (argc != 3)
		return 2;
	uid[0] = strtoul(argv[1], NULL, 0);
	uid[1] = strtoul(argv[2], NULL, 0);
	return verify_all(strtoul(argv[0], NULL, 0), uid);
}

/* --- lifetime ------------------------------------------------------------------ */

static bool expect_req(int fd, unsigned long cmd, uint32_t uid, uint32_t magic,
		       uint64_t size, uint32_t flags, const uint64_t res[2],
		       int want, char *why, size_t n)
{
	struct qnvram_region_req r = {
		.uid = uid, .magic = magic, .size = size, .flags = flags,
	};
	int got;

	if (res) {
		r.reserved[0] = res[0];
		r.reserved[1] = res[1];
	}
	got = ioctl(fd, cmd, &r) < 0 ? errno : 0;
	if (got != want) {
		snprintf(why, n, "cmd %#lx uid %#x magic %#x size %#" PRIx64 " flags %#x: %s, expected %s",
			 cmd, uid, magic, size, flags, ename(got), ename(want));
		return false;
	}
	return true;
}

static void lt_bad_requests(uint32_t uid, uint32_t other)
{
	static const uint64_t res1[2] = { 0, 1 }, res0[2] = { 1, 0 };
	char why[200] = "";
	bool ok = true;
	int fd = qopen(O_RDWR), ret;
	uint64_t len = 0;

#define X(...) do { if (ok) ok = expect_req(fd, __VA_ARGS__, why, sizeof(why)); } while (0)
	X(QNVRAM_IOC_ALLOC, uid, 1, 0, 0, NULL, EINVAL);
	X(QNVRAM_IOC_ALLOC, uid, 1, QNVRAM_REGION_MAX_BYTES + 1, 0, NULL, EINVAL);
	X(QNVRAM_IOC_ALLOC, uid, 1, UINT64_MAX, 0, NULL, EINVAL);
	X(QNVRAM_IOC_ALLOC, uid, 1, UINT64_MAX - 4094, 0, NULL, EINVAL);
	X(QNVRAM_IOC_ALLOC, uid, 1, QNVRAM_REGION_MAX_BYTES, 0, NULL, ENOSPC);
	X(QNVRAM_IOC_ALLOC, 0xffffffff, 1, 4096, 0, NULL, EINVAL);
	X(QNVRAM_IOC_ALLOC, uid, 1, 4096, 2, NULL, EINVAL);
	X(QNVRAM_IOC_ALLOC, uid, 1, 4096, QNVRAM_REQ_CREATED, NULL, EINVAL); /* out only */
	X(QNVRAM_IOC_ALLOC, uid, 1, 4096, 0, res1, EINVAL);
	X(QNVRAM_IOC_ALLOC, uid, 1, 4096, 0, res0, EINVAL);
	X(QNVRAM_IOC_RETRIEVE, uid, 1, 0, QNVRAM_REQ_OPEN_EXISTING, NULL, EINVAL);
	X(QNVRAM_IOC_RETRIEVE, 0xffffffff, 1, 0, 0, NULL, EINVAL);
	X(QNVRAM_IOC_FREE, uid, 1, 4096, 0, NULL, EINVAL);
	X(QNVRAM_IOC_FREE, uid, 1, 0, 1, NULL, EINVAL);
	X(QNVRAM_IOC_FREE, 0xffffffff, 1, 0, 0, NULL, EINVAL);
	X(_IOWR(QNVRAM_IOC_TYPE, 9, struct qnvram_region_req), uid, 1, 4096, 0, NULL, ENOTTY);
	X(_IOWR(QNVRAM_IOC_TYPE, 1, uint64_t[2]), uid, 1, 4096, 0, NULL, ENOTTY);
	X(_IOW(QNVRAM_IOC_TYPE, 1, struct qnvram_region_req), uid, 1, 4096, 0, NULL, ENOTTY);
#undef X
	if (ok && ioctl(fd, QNVRAM_IOC_ALLOC, NULL) != -1) {
		ok = false;
		snprintf(why, sizeof(why), "ALLOC with a NULL argument succeeded");
	} else if (ok && errno != EFAULT) {
		ok = false;
		snprintf(why, sizeof(why), "ALLOC with a NULL argument: %s", ename(errno));
	}
	/* none of that created anything or bound the file */
	ret = qreq(fd, QNVRAM_IOC_RETRIEVE, uid, 1, 0, 0, &len);
	if (ok && ret != -ENOENT) {
		ok = false;
		snprintf(why, sizeof(why), "after bad requests, retrieve uid %u magic 1: %s", uid, ename(-ret));
	}
	close(fd);
	result(ok, "bad_requests_refused_cleanly", "%s", why);

	/* another uid's names, without CAP_SYS_ADMIN */
	if (qcreate(uid, 2, 8192, 0x5a)) {
		result(false, "other_uid_refused", "cannot create uid %u magic 2", uid);
		return;
	}
	pid_t pid = fork();

	if (pid == 0) {
		int f = qopen(O_RDWR);

		ok = drop_to(other);
		why[0] = 0;
#define X(...) do { if (ok) ok = expect_req(f, __VA_ARGS__, why, sizeof(why)); } while (0)
		X(QNVRAM_IOC_RETRIEVE, uid, 2, 0, 0, NULL, EPERM);
		X(QNVRAM_IOC_ALLOC, uid, 2, 8192, QNVRAM_REQ_OPEN_EXISTING, NULL, EPERM);
		X(QNVRAM_IOC_ALLOC, uid, 3, 8192, 0, NULL, EPERM);
		X(QNVRAM_IOC_FREE, uid, 2, 0, 0, NULL, EPERM);
		X(QNVRAM_IOC_ALLOC, 0, 3, 8192, 0, NULL, EPERM);
#undef X
		if (!ok)
			printf("child: %s\n", why);
		fflush(stdout);
		_exit(ok ? 0 : 1);
	}
	int st;

	waitpid(pid, &st, 0);
	result(WIFEXITED(st) && !WEXITSTATUS(st) && qfree(uid, 2) == 0,
	       "other_uid_refused", "uid %u could reach uid %u's region (see above)", other, uid);
}

static void lt_dev_rw(void)
{
	char buf[16] = { 0 };
	int fd = qopen(O_RDWR);
	ssize_t r = read(fd, buf, sizeof(buf));
	int er = errno;
	ssize_t w = write(fd, buf, sizeof(buf));
	int ew = errno;

	result(r < 0 && w < 0 && er == EINVAL && ew == EINVAL, "read_write_on_dev_refused",
	       "read %zd (%s), write %zd (%s)", r, ename(r < 0 ? er : 0), w, ename(w < 0 ? ew : 0));
	close(fd);
}

static void lt_rebind(uint32_t uid)
{
	int fd = qopen(O_RDWR), fd2, dfd, r1, r2, r3, r4;
	uint64_t len = 0;

	r1 = qreq(fd, QNVRAM_IOC_ALLOC, uid, 10, 8192, 0, &len);
	r2 = qreq(fd, QNVRAM_IOC_ALLOC, uid, 11, 8192, 0, &len);
	r3 = qreq(fd, QNVRAM_IOC_RETRIEVE, uid, 10, 0, 0, &len);
	dfd = dup(fd);
	r4 = qreq(dfd, QNVRAM_IOC_ALLOC, uid, 12, 8192, 0, &len);
	close(dfd);
	fd2 = qopen(O_RDWR);
	int e11 = qreq(fd2, QNVRAM_IOC_RETRIEVE, uid, 11, 0, 0, &len);
	int e12 = qreq(fd2, QNVRAM_IOC_RETRIEVE, uid, 12, 0, 0, &len);

	close(fd2);
	result(!r1 && r2 == -EBUSY && r3 == -EBUSY && r4 == -EBUSY &&
	       e11 == -ENOENT && e12 == -ENOENT, "ioctl_on_bound_file_is_ebusy",
	       "alloc %s, 2nd alloc %s, retrieve %s, alloc on dup %s; the refused regions: %s %s",
	       ename(-r1), ename(-r2), ename(-r3), ename(-r4), ename(-e11), ename(-e12));
	close(fd);
	qfree(uid, 10);
}

static void lt_mmap_checks(uint32_t uid)
{
	int fd = qopen(O_RDWR), rfd, e_unbound, e_priv, e_off, e_long, e_rw, e_ro, e_up;
	uint64_t len = 0, *full, *mid, *ro;
	void *p;
	bool ok_mid, ok_ro;

	p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 0);
	e_unbound = p == MAP_FAILED ? errno : 0;
	qreq(fd, QNVRAM_IOC_ALLOC, uid, 20, 4 * PAGE, 0, &len);
	p = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
	e_priv = p == MAP_FAILED ? errno : 0;
	p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 4 * PAGE);
	e_off = p == MAP_FAILED ? errno : 0;
	p = mmap(NULL, 2 * PAGE, PROT_READ, MAP_SHARED, fd, 3 * PAGE);
	e_long = p == MAP_FAILED ? errno : 0;
	full = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	fill(full, len, uid, 20, 77);
	mid = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 2 * PAGE);
	ok_mid = mid != MAP_FAILED && mid[5] == full[2 * PAGE / 8 + 5];
	if (ok_mid) {
		mid[5] ^= 1;
		ok_mid = mid[5] == full[2 * PAGE / 8 + 5];
		mid[5] ^= 1;
		munmap(mid, PAGE);
	}
	result(e_unbound == EBADFD && e_priv == EINVAL && e_off == EINVAL &&
	       e_long == EINVAL && ok_mid, "mmap_rules",
	       "unbound %s (EBADFD), private %s (EINVAL), at end %s, past end %s (EINVAL), middle page %s",
	       ename(e_unbound), ename(e_priv), ename(e_off), ename(e_long),
	       ok_mid ? "ok" : "wrong");

	/* a read-only file: MAP_SHARED read-only mappings, never writable */
	rfd = qopen(O_RDONLY);
	qreq(rfd, QNVRAM_IOC_RETRIEVE, uid, 20, 0, 0, &len);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, rfd, 0);
	e_rw = p == MAP_FAILED ? errno : 0;
	ro = mmap(NULL, len, PROT_READ, MAP_SHARED, rfd, 0);
	e_ro = ro == MAP_FAILED ? errno : 0;
	ok_ro = ro != MAP_FAILED && ro[0] == ident(uid, 20);
	e_up = ro != MAP_FAILED && mprotect(ro, len, PROT_READ | PROT_WRITE) < 0 ? errno : 0;
	result(e_rw == EACCES && ok_ro && e_up == EACCES, "readonly_file_maps_readonly",
	       "O_RDONLY file: PROT_WRITE MAP_SHARED mmap %s (want EACCES); PROT_READ MAP_SHARED mmap %s (want success with the region's bytes)%s",
	       ename(e_rw), ro == MAP_FAILED ? ename(e_ro) : (ok_ro ? "ok" : "wrong bytes"),
	       ro != MAP_FAILED && e_up != EACCES ? "; mprotect to writable not refused" : "");
	if (ro != MAP_FAILED)
		munmap(ro, len);
	close(rfd);
	munmap(full, len);
	close(fd);
	qfree(uid, 20);
}

static void lt_close_then_munmap(uint32_t uid)
{
	int fd = qopen(O_RDWR), busy, freed, b = -1, m = -1, b2 = -1, m2 = -1;
	uint64_t len = 0;
	char why[160] = "";
	uint64_t *p;

	qreq(fd, QNVRAM_IOC_ALLOC, uid, 30, 3 * PAGE, 0, &len);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	fill(p, len, uid, 30, 5);
	busy = qfree(uid, 30);
	region_counts(uid, 30, &b, &m);
	int c = check(p, len, uid, 30, why, sizeof(why));

	munmap(p, len);
	region_counts(uid, 30, &b2, &m2);
	freed = qfree(uid, 30);
	result(busy == -EBUSY && c == 0 && b == 1 && m == 1 && b2 == 0 && m2 == 0 && !freed,
	       "close_before_munmap_keeps_binding",
	       "free while mapped %s, data %s, binds/maps mapped %d/%d, after munmap %d/%d, free %s",
	       ename(-busy), c ? why : "ok", b, m, b2, m2, ename(-freed));
}

/*
 * Fork after mmap; the pair's parent (first) or child (second) exits first;
 * each sees the other's writes, the survivor keeps the region mapped and
 * bound, and once both are gone the region is unbound and can be freed.
 * This process is a subreaper, so it reaps the orphaned child itself.
 */
static void lt_fork_orders(uint32_t uid, bool parent_first)
{
	const char *name = parent_first ? "fork_parent_exits_first" : "fork_child_exits_first";
	uint32_t magic = parent_first ? 40 : 41;
	int rep[2], go[2], st, freed, b1 = -1, m1 = -1, b2 = -1, m2 = -1, b0 = -1, m0 = -1;
	char msg[2] = { 0 };
	pid_t mid, w;

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (pipe(rep) < 0 || pipe(go) < 0)
		return;
	mid = fork();
	if (mid == 0) {
		int fd = qopen(O_RDWR), ok = 1;
		uint64_t len = 0, *p;
		pid_t kid, me = getpid();

		close(rep[0]);
		close(go[1]);
		qreq(fd, QNVRAM_IOC_ALLOC, uid, magic, 2 * PAGE, 0, &len);
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
		fill(p, len, uid, magic, 1);
		kid = fork();
		if (kid == 0) {
			char why[160], g;

			while (p[1] != (3 | 1))
				usleep(1000);
			if (parent_first) {
				while (getppid() == me)
					usleep(1000);
				(void)!read(go[0], &g, 1);
			}
			ok = check(p, len, uid, magic, why, sizeof(why)) == 0 &&
			     p[1] == (3 | 1);
			fill(p, len, uid, magic, 5);
			(void)!write(rep[1], ok ? "k" : "K", 1);
			_exit(0);
		}
		region_counts(uid, magic, &b1, &m1);
		fill(p, len, uid, magic, 3);
		if (!parent_first) {
			waitpid(kid, &st, 0);
			ok = p[1] == (5 | 1);
			region_counts(uid, magic, &b2, &m2);
			ok = ok && b1 == 1 && m1 == 2 && b2 == 1 && m2 == 1;
			if (!ok)
				printf("info pair parent: binds/maps with child %d/%d, after it %d/%d\n",
				       b1, m1, b2, m2);
		} else {
			ok = b1 == 1 && m1 == 2;
		}
		(void)!write(rep[1], ok ? "p" : "P", 1);
		fflush(stdout);
		_exit(0);
	}
	close(rep[1]);
	close(go[0]);
	(void)!read(rep[0], &msg[0], 1);
	waitpid(mid, &st, 0);
	if (parent_first) {
		/* only the orphaned child maps it now */
		region_counts(uid, magic, &b1, &m1);
		(void)!write(go[1], "g", 1);
	}
	(void)!read(rep[0], &msg[1], 1);
	while ((w = wait(&st)) > 0 || (w < 0 && errno == EINTR))
		;
	region_counts(uid, magic, &b0, &m0);
	freed = qfree(uid, magic);
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	result(((msg[0] == 'p' && msg[1] == 'k') || (msg[0] == 'k' && msg[1] == 'p')) &&
	       (!parent_first || (b1 == 1 && m1 == 1)) &&
	       b0 == 0 && m0 == 0 && !freed, name,
	       "pair said %c %c (p/k lower case: parent/child saw the other's writes and right counts); %s binds/maps %d/%d; after both exited %d/%d; free %s",
	       msg[0] ? msg[0] : '-', msg[1] ? msg[1] : '-',
	       parent_first ? "with only the child left" : "-", b1, m1, b0, m0, ename(-freed));
	close(rep[0]);
	close(go[1]);
}

static void lt_vma_games(uint32_t uid)
{
	int fd = qopen(O_RDWR), b = -1, m = -1, b2 = -1, m2 = -1, freed;
	uint64_t len = 8 * PAGE;
	char why[160] = "", w2[160] = "";
	uint64_t *p, *q, *target;
	bool grow_refused, dontneed_ok, half_ok, prot_ok;

	qreq(fd, QNVRAM_IOC_ALLOC, uid, 50, len, 0, &len);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	fill(p, len, uid, 50, 9);
	/* move it to a fixed place */
	target = mmap(NULL, 2 * len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	q = mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (char *)target + len);
	munmap(target, len);
	if (q == MAP_FAILED) {
		result(false, "vma_games", "mremap move: %s", ename(errno));
		return;
	}
	grow_refused = mremap(q, len, 2 * len, MREMAP_MAYMOVE) == MAP_FAILED;
	/* VM_PFNMAP: the core refuses MADV_DONTNEED; if it ever zaps, the bytes must come back */
	dontneed_ok = (madvise(q, len, MADV_DONTNEED) == 0 || errno == EINVAL) &&
		      check(q, len, uid, 50, why, sizeof(why)) == 0;
	prot_ok = mprotect(q, len, PROT_READ) == 0 && q[0] == ident(uid, 50) &&
		  mprotect(q, len, PROT_READ | PROT_WRITE) == 0;
	if (prot_ok)
		q[1] = 9 | 1;
	/* a hole in the middle: two vmas */
	munmap((char *)q + 2 * PAGE, 2 * PAGE);
	region_counts(uid, 50, &b, &m);
	half_ok = q[0] == ident(uid, 50) &&
		  q[4 * PAGE / 8 + 3] == splitmix64((9 | 1) ^ ((4 * PAGE / 8 + 3) * 0x100000001b3ULL));
	munmap(q, 2 * PAGE);
	munmap((char *)q + 4 * PAGE, 4 * PAGE);
	region_counts(uid, 50, &b2, &m2);
	/* the data stayed whole */
	fd = qopen(O_RDWR);
	qreq(fd, QNVRAM_IOC_RETRIEVE, uid, 50, 0, 0, &len);
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	int c = p == MAP_FAILED ? -1 : check(p, len, uid, 50, w2, sizeof(w2));

	if (p != MAP_FAILED)
		munmap(p, len);
	close(fd);
	freed = qfree(uid, 50);
	result(grow_refused && dontneed_ok && prot_ok && half_ok && m == 2 && b == 1 &&
	       m2 == 0 && b2 == 0 && c == 0 && !freed, "vma_move_split_dontneed_mprotect",
	       "grow refused %d, data after MADV_DONTNEED %s, mprotect %d, after hole: data %d binds/maps %d/%d (1/2), after munmap %d/%d, data %s, free %s",
	       grow_refused, dontneed_ok ? "ok" : why, prot_ok, half_ok, b, m, b2, m2,
	       c ? w2 : "ok", ename(-freed));
}

static void lt_proc_mem(uint32_t uid)
{
	int fd = qopen(O_RDWR), mfd, er, ew, ev;
	uint64_t len = 0, *p, got1 = 0, got2 = 0, evil = 0xdeadbeef;
	struct iovec local = { &got2, 8 }, remote;
	ssize_t r, w, v;
	bool ok;

	qreq(fd, QNVRAM_IOC_ALLOC, uid, 60, PAGE, 0, &len);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	fill(p, len, uid, 60, 3);
	mfd = open("/proc/self/mem", O_RDWR);
	r = pread(mfd, &got1, 8, (off_t)(uintptr_t)p);
	er = errno;
	w = pwrite(mfd, &evil, 8, (off_t)(uintptr_t)(p + 1));
	ew = errno;
	close(mfd);
	remote.iov_base = p;
	remote.iov_len = 8;
	v = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	ev = errno;
	/* either refused, or the true bytes: never something else */
	ok = (r < 0 || got1 == ident(uid, 60)) &&
	     (w < 0 ? p[1] == (3 | 1) : p[1] == evil) &&
	     (v < 0 || got2 == ident(uid, 60));
	result(ok, "proc_mem_and_process_vm_readv",
	       "pread %zd (%s) got %#" PRIx64 "; pwrite %zd (%s) word now %#" PRIx64 "; process_vm_readv %zd (%s) got %#" PRIx64,
	       r, ename(r < 0 ? er : 0), got1, w, ename(w < 0 ? ew : 0), p[1],
	       v, ename(v < 0 ? ev : 0), got2);
	say("info /proc/self/mem read of a mapping: %s, write: %s, process_vm_readv: %s\n",
	    r < 0 ? ename(er) : "allowed", w < 0 ? ename(ew) : "allowed",
	    v < 0 ? ename(ev) : "allowed");
	munmap(p, len);
	qfree(uid, 60);
}

/* Pass a bound fd to a process of another uid over a unix socket. */
static void lt_scm_rights(uint32_t uid, uint32_t other)
{
	int sv[2], st;
	pid_t pid;

	if (qcreate(uid, 70, 2 * PAGE, 0x77))
		return;
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	pid = fork();
	if (pid == 0) {
		char cbuf[CMSG_SPACE(sizeof(int))], d;
		struct iovec io = { &d, 1 };
		struct msghdr mh = { .msg_iov = &io, .msg_iovlen = 1,
				     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *cm;
		int fd = -1, ea, ef, er;
		uint64_t len = 0;
		uint8_t *p;

		close(sv[0]);
		if (!drop_to(other))
			_exit(3);
		if (recvmsg(sv[1], &mh, 0) < 1)
			_exit(4);
		cm = CMSG_FIRSTHDR(&mh);
		if (cm && cm->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(cm), sizeof(int));
		ea = -qreq(fd, QNVRAM_IOC_ALLOC, other, 71, PAGE, 0, &len);
		ef = -qreq(fd, QNVRAM_IOC_FREE, uid, 70, 0, 0, NULL);
		er = -qreq(qopen(O_RDWR), QNVRAM_IOC_RETRIEVE, uid, 70, 0, 0, &len);
		p = mmap(NULL, 2 * PAGE, PROT_READ, MAP_SHARED, fd, 0);
		say("info uid %u given uid %u's bound fd: alloc on it %s, free %s, retrieve by name %s, mmap %s%s\n",
		    other, uid, ename(ea), ename(ef), ename(er),
		    p == MAP_FAILED ? ename(errno) : "allowed",
		    p != MAP_FAILED && p[0] == 0x77 ? " (sees the owner's bytes: the fd is a capability)" : "");
		/* the file is root's, the caller uid @other: neither acts */
		_exit(ea == EPERM && ef == EPERM && er == EPERM ? 0 : 1);
	}
	close(sv[1]);
	{
		int fd = qopen(O_RDWR);
		uint64_t len = 0;
		char cbuf[CMSG_SPACE(sizeof(int))] = { 0 }, d = 'x';
		struct iovec io = { &d, 1 };
		struct msghdr mh = { .msg_iov = &io, .msg_iovlen = 1,
				     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

		qreq(fd, QNVRAM_IOC_RETRIEVE, uid, 70, 0, 0, &len);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
		sendmsg(sv[0], &mh, 0);
		close(fd);
	}
	waitpid(pid, &st, 0);
	close(sv[0]);
	result(WIFEXITED(st) && !WEXITSTATUS(st) && qfree(uid, 70) == 0,
	       "scm_rights_fd_gives_no_extra_rights",
	       "receiver exit status %#x (want: alloc EPERM, free EPERM, retrieve EPERM), or region not freeable after", st);
}

static int cmd_lifetime(int argc, char **argv)
{
	uint32_t uid, other;

	if (argc != 2)
		return 2;
	uid = strtoul(argv[0], NULL, 0);
	other = strtoul(argv[1], NULL, 0);
	lt_dev_rw();
	lt_bad_requests(uid, other);
	lt_rebind(uid);
	lt_mmap_checks(uid);
	lt_close_then_munmap(uid);
	lt_fork_orders(uid, false);
	lt_fork_orders(uid, true);
	lt_vma_games(uid);
	lt_proc_mem(uid);
	lt_scm_rights(uid, other);
	return failures ? 1 : 0;
}

/* --- efault-mmap ------------------------------------------------------------------
 * A file whose ALLOC or RETRIEVE fails in the final copy_to_user() is bound
 * for a moment, then unbound again. An mmap of it in that moment makes a
 * mapping whose file is not bound: the region can then be freed and handed to
 * another uid while the mapping still reaches it. The copy_to_user() is held
 * in a userfaultfd write-protect fault so that the mmap lands in the window.
 */
struct ef_arg {
	int fd;
	void *req;
	int ret;
};

static void *ef_ioctl(void *arg)
{
	struct ef_arg *a = arg;

	a->ret = ioctl(a->fd, QNVRAM_IOC_RETRIEVE, a->req) < 0 ? errno : 0;
	return NULL;
}

static int cmd_efault_mmap(int argc, char **argv)
{
	uint32_t uid, victim;
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { 0 };
	struct uffdio_writeprotect wp = { 0 };
	struct uffdio_range wake;
	struct uffd_msg msg;
	struct ef_arg a;
	struct qnvram_region_req *r;
	pthread_t th;
	uint64_t len = 0, *map, *vp;
	int uffd, fd, vfd, freed, leak = 0, ret;
	bool raw;
	char *page;

	if (argc != 2 && !(argc == 3 && !strcmp(argv[2], "raw")))
		return 2;
	raw = argc == 3;
	uid = strtoul(argv[0], NULL, 0);
	victim = strtoul(argv[1], NULL, 0);
	qfree(uid, 0xef);
	qfree(victim, 0xee);
	if (qcreate(uid, 0xef, 16 * PAGE, 0x11)) {
		printf("FAIL efault_mmap_setup: cannot create uid %u magic 0xef\n", uid);
		return 1;
	}
	page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	r = (void *)page;
	r->uid = uid;
	r->magic = 0xef;
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api) < 0) {
		printf("FAIL efault_mmap_setup: userfaultfd: %s\n", strerror(errno));
		return 1;
	}
	reg.range.start = (uintptr_t)page;
	reg.range.len = PAGE;
	reg.mode = UFFDIO_REGISTER_MODE_WP;
	wp.range = reg.range;
	wp.mode = UFFDIO_WRITEPROTECT_MODE_WP;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg) < 0 ||
	    ioctl(uffd, UFFDIO_WRITEPROTECT, &wp) < 0) {
		printf("FAIL efault_mmap_setup: uffd wp: %s\n", strerror(errno));
		return 1;
	}
	fd = qopen(O_RDWR);
	a.fd = fd;
	a.req = page;
	pthread_create(&th, NULL, ef_ioctl, &a);
	/* the ioctl has bound the file and now waits in copy_to_user() */
	if (read(uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT) {
		printf("FAIL efault_mmap_setup: no write-protect fault\n");
		return 1;
	}
	map = mmap(NULL, 16 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		say("info mmap in the window: %s\n", ename(errno));
	/* make the copy_to_user() fail: read-only, then wake it */
	mprotect(page, PAGE, PROT_READ);
	wake.start = (uintptr_t)page;
	wake.len = PAGE;
	ioctl(uffd, UFFDIO_WAKE, &wake);
	pthread_join(th, NULL);
	say("info retrieve with a failing copy-out: %s; mmap meanwhile: %s\n",
	    ename(a.ret), map == MAP_FAILED ? "refused" : "made");
	if (map == MAP_FAILED || a.ret != EFAULT) {
		result(true, "efault_leaves_no_unpinned_mapping", "%s", "");
		close(fd);
		qfree(uid, 0xef);
		return failures ? 1 : 0;
	}
	if (raw) {
		/* munmap with the file unbound: the vma's close uses slot -1 */
		say("info raw: munmap of the stale mapping with its file unbound\n");
		munmap(map, 16 * PAGE);
		close(fd);
		say("info raw: survived; list: %d\n", system("mobioctl qnvram list"));
		return 0;
	}
	/* a mapping exists: its region must stay pinned */
	freed = qfree(uid, 0xef);
	if (!freed) {
		/* hand the pool range to another uid and look through the stale mapping */
		vfd = qopen(O_RDWR);
		ret = qreq(vfd, QNVRAM_IOC_ALLOC, victim, 0xee, 16 * PAGE, 0, &len);
		vp = ret ? MAP_FAILED : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, vfd, 0);
		if (vp != MAP_FAILED) {
			memset(vp, 0xc5, len);
			for (size_t i = 0; i < 16 * PAGE / 8; i++)
				leak += map[i] == 0xc5c5c5c5c5c5c5c5ULL;
			munmap(vp, len);
		}
		/* leave the kernel consistent: bind the stale file again before munmap */
		qreq(fd, QNVRAM_IOC_RETRIEVE, victim, 0xee, 0, 0, &len);
		close(vfd);
	} else {
		/* bound again before the munmap, so the vma's close finds a slot */
		qreq(fd, QNVRAM_IOC_RETRIEVE, uid, 0xef, 0, 0, &len);
	}
	munmap(map, 16 * PAGE);
	close(fd);
	result(freed == -EBUSY, "efault_leaves_no_unpinned_mapping",
	       "a mapping made while RETRIEVE was failing with EFAULT does not pin its region: free while mapped returned %s (expected EBUSY)%s",
	       ename(-freed), leak ? "; the stale mapping then showed another uid's new region" : "");
	if (!freed)
		say("info stale mapping saw %d words of uid %u's region\n", leak, victim);
	qfree(uid, 0xef);
	qfree(victim, 0xee);
	return failures ? 1 : 0;
}

/* The same window, found by racing threads: no privileges needed. */
struct race {
	int fd;
	struct qnvram_region_req *ro;
	atomic_bool stop;
	unsigned long efaults;
};

static void *race_ioctl(void *arg)
{
	struct race *r = arg;

	while (!atomic_load(&r->stop))
		if (ioctl(r->fd, QNVRAM_IOC_RETRIEVE, r->ro) < 0 && errno == EFAULT)
			r->efaults++;
	return NULL;
}

static int cmd_efault_race(int argc, char **argv)
{
	uint64_t deadline, len = 0;
	unsigned long tries = 0;
	struct race r = { 0 };
	pthread_t th;
	uint32_t uid;
	void *map = MAP_FAILED, *ro;
	int freed = 1;

	if (argc != 2)
		return 2;
	deadline = now_ns() + strtoull(argv[0], NULL, 0) * 1000000000ULL;
	uid = strtoul(argv[1], NULL, 0);
	if (getuid() != uid && !drop_to(uid))
		return 1;
	qfree(uid, 0xed);
	if (qcreate(uid, 0xed, 4 * PAGE, 0x22))
		return 1;
	ro = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	r.ro = ro;
	r.ro->uid = uid;
	r.ro->magic = 0xed;
	mprotect(ro, PAGE, PROT_READ);
	r.fd = qopen(O_RDWR);
	pthread_create(&th, NULL, race_ioctl, &r);
	while (now_ns() < deadline) {
		tries++;
		map = mmap(NULL, 4 * PAGE, PROT_READ, MAP_SHARED, r.fd, 0);
		if (map != MAP_FAILED)
			break;
	}
	atomic_store(&r.stop, true);
	pthread_join(th, NULL);
	if (map != MAP_FAILED) {
		freed = qfree(uid, 0xed);
		/* bind again (same slot if still there) so munmap finds a slot */
		if (!freed)
			qcreate(uid, 0xed, 4 * PAGE, 0);
		qreq(r.fd, QNVRAM_IOC_RETRIEVE, uid, 0xed, 0, 0, &len);
		munmap(map, 4 * PAGE);
	}
	close(r.fd);
	qfree(uid, 0xed);
	say("info efault race as uid %u: %lu mmaps tried, %lu EFAULTs, mapping %s, free while mapped %s\n",
	    uid, tries, r.efaults, map == MAP_FAILED ? "never made" : "made",
	    map == MAP_FAILED ? "-" : ename(freed < 0 ? -freed : 0));
	result(map == MAP_FAILED || freed == -EBUSY, "efault_race_unprivileged",
	       "uid %u got a mapping of an unbound file by racing mmap against a failing RETRIEVE; free while mapped: %s",
	       uid, ename(freed < 0 ? -freed : 0));
	return failures ? 1 : 0;
}

/* --- netlink ------------------------------------------------------------------------ */

struct nl {
	struct mnl_socket *sk;
	uint16_t family;
	uint32_t seq, port;
	int regions, foreign, offsets;
	uint32_t self;
	void *sk_user;		/* for a callback that needs more */
};

static int nl_family_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nl *n = data;
	struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
		if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID)
			n->family = mnl_attr_get_u16(a);
	return MNL_CB_OK;
}

static int nl_region_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nl *n = data;
	struct nlattr *a, *b;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(a) != QNVRAM_A_REGION)
			continue;
		n->regions++;
		mnl_attr_for_each_nested(b, a) {
			if (mnl_attr_get_type(b) == MOBIO_A_UID &&
			    mnl_attr_get_u32(b) != n->self)
				n->foreign++;
			if (mnl_attr_get_type(b) == MOBIO_A_RANGE_START)
				n->offsets++;
		}
	}
	return MNL_CB_OK;
}

/* NLMSG_DONE: a dump that failed carries its errno there (libmnl ignores it). */
static int nl_done_cb(const struct nlmsghdr *nlh, void *data)
{
	const int *err = mnl_nlmsg_get_payload(nlh);

	(void)data;
	if (nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(int)) && *err < 0) {
		errno = -*err;
		return MNL_CB_ERROR;
	}
	return MNL_CB_STOP;
}

/* NLMSG_ERROR, as libmnl's default does (a ctl array replaces every default) */
static int nl_error_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);

	(void)data;
	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(struct nlmsgerr))) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	errno = err->error < 0 ? -err->error : err->error;
	return err->error ? MNL_CB_ERROR : MNL_CB_STOP;
}

static mnl_cb_t nl_ctl_cbs[NLMSG_MIN_TYPE] = {
	[NLMSG_ERROR] = nl_error_cb,
	[NLMSG_DONE] = nl_done_cb,
};

/* Send one request, run callbacks until the ack: 0 or -errno. */
static int nl_talk(struct nl *n, struct nlmsghdr *nlh, mnl_cb_t cb)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	int ret;

	nlh->nlmsg_seq = ++n->seq;
	if (mnl_socket_sendto(n->sk, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		ret = mnl_socket_recvfrom(n->sk, buf, sizeof(buf));
		if (ret < 0)
			return -errno;
		ret = mnl_cb_run2(buf, ret, n->seq, n->port, cb, n, nl_ctl_cbs,
				  NLMSG_MIN_TYPE);
		if (ret < 0)
			return -errno;
		if (ret == MNL_CB_STOP)
			return 0;
	}
}

static struct nlmsghdr *nl_msg(struct nl *n, char *buf, uint8_t cmd, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = n->family;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = MOBIO_GENL_VERSION;
	return nlh;
}

static bool nl_open(struct nl *n)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;

	memset(n, 0, sizeof(*n));
	n->self = geteuid();
	n->sk = mnl_socket_open(NETLINK_GENERIC);
	if (!n->sk || mnl_socket_bind(n->sk, 0, MNL_SOCKET_AUTOPID) < 0)
		return false;
	n->port = mnl_socket_get_portid(n->sk);
	n->family = GENL_ID_CTRL;
	nlh = nl_msg(n, buf, CTRL_CMD_GETFAMILY, 0);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, QNVRAM_GENL_NAME);
	n->family = 0;
	nlh->nlmsg_type = GENL_ID_CTRL;
	return nl_talk(n, nlh, nl_family_cb) == 0 && n->family;
}

static void nl_checks(uint32_t uid, uint32_t other, bool as_other)
{
	char buf[MNL_SOCKET_BUFFER_SIZE], why[200];
	struct nlmsghdr *nlh;
	struct nl n;
	int ret;
	bool ok;

	if (!nl_open(&n)) {
		result(false, "netlink_open", "cannot reach the qnvram family: %s", strerror(errno));
		return;
	}
	if (!as_other) {
		uint16_t two = 0xef;
		uint64_t eight = 0xef;

		nlh = nl_msg(&n, buf, QNVRAM_CMD_RETRIEVE, 0);
		mnl_attr_put(nlh, QNVRAM_A_MAGIC, sizeof(two), &two);
		mnl_attr_put_u32(nlh, MOBIO_A_UID, uid);
		ret = nl_talk(&n, nlh, nl_region_cb);
		ok = ret == -EINVAL || ret == -ERANGE;
		snprintf(why, sizeof(why), "2-byte magic: %s", ename(-ret));
		nlh = nl_msg(&n, buf, QNVRAM_CMD_FREE, 0);
		mnl_attr_put(nlh, QNVRAM_A_MAGIC, sizeof(eight), &eight);
		mnl_attr_put_u32(nlh, MOBIO_A_UID, uid);
		ret = nl_talk(&n, nlh, NULL);
		ok = ok && (ret == -EINVAL || ret == -ERANGE);
		snprintf(why + strlen(why), sizeof(why) - strlen(why), ", 8-byte magic on free: %s", ename(-ret));
		nlh = nl_msg(&n, buf, QNVRAM_CMD_FREE, 0);
		mnl_attr_put_u32(nlh, MOBIO_A_UID, uid);
		ret = nl_talk(&n, nlh, NULL);
		ok = ok && ret == -EINVAL;
		snprintf(why + strlen(why), sizeof(why) - strlen(why), ", free without magic: %s", ename(-ret));
		nlh = nl_msg(&n, buf, QNVRAM_CMD_RETRIEVE, 0);
		mnl_attr_put_u32(nlh, QNVRAM_A_MAGIC, 0xef);
		mnl_attr_put_u32(nlh, MOBIO_A_UID, 0xffffffff);
		ret = nl_talk(&n, nlh, nl_region_cb);
		ok = ok && ret == -EINVAL;
		snprintf(why + strlen(why), sizeof(why) - strlen(why), ", uid -1: %s", ename(-ret));
		nlh = nl_msg(&n, buf, 99, 0);
		ret = nl_talk(&n, nlh, NULL);
		ok = ok && ret < 0;
		snprintf(why + strlen(why), sizeof(why) - strlen(why), ", cmd 99: %s", ename(-ret));
		/* the region named in all of those is intact */
		int fd = qopen(O_RDWR);
		uint64_t len = 0;

		ret = qreq(fd, QNVRAM_IOC_RETRIEVE, uid, 0xef, 0, 0, &len);
		close(fd);
		ok = ok && !ret;
		result(ok, "netlink_malformed_refused", "%s; region afterwards: %s", why, ename(-ret));
		mnl_socket_close(n.sk);
		return;
	}
	/* as @other, without CAP_SYS_ADMIN */
	nlh = nl_msg(&n, buf, QNVRAM_CMD_FREE, 0);
	mnl_attr_put_u32(nlh, QNVRAM_A_MAGIC, 0xef);
	mnl_attr_put_u32(nlh, MOBIO_A_UID, uid);
	ret = nl_talk(&n, nlh, NULL);
	ok = ret == -EPERM;
	snprintf(why, sizeof(why), "free of uid %u's region: %s", uid, ename(-ret));
	nlh = nl_msg(&n, buf, QNVRAM_CMD_RETRIEVE, 0);
	mnl_attr_put_u32(nlh, QNVRAM_A_MAGIC, 0xef);
	mnl_attr_put_u32(nlh, MOBIO_A_UID, uid);
	ret = nl_talk(&n, nlh, nl_region_cb);
	ok = ok && ret == -EPERM;
	snprintf(why + strlen(why), sizeof(why) - strlen(why), ", retrieve: %s", ename(-ret));
	nlh = nl_msg(&n, buf, QNVRAM_CMD_FLUSH, 0);
	ret = nl_talk(&n, nlh, NULL);
	ok = ok && ret == -EPERM;
	snprintf(why + strlen(why), sizeof(why) - strlen(why), ", flush: %s", ename(-ret));
	n.regions = n.foreign = n.offsets = 0;
	nlh = nl_msg(&n, buf, QNVRAM_CMD_LIST, NLM_F_DUMP);
	ret = nl_talk(&n, nlh, nl_region_cb);
	ok = ok && !ret && !n.foreign && !n.offsets;
	snprintf(why + strlen(why), sizeof(why) - strlen(why),
		 ", list: %s with %d regions, %d of other uids, %d offsets", ename(-ret),
		 n.regions, n.foreign, n.offsets);
	result(ok, "netlink_other_uid_refused", "%s", why);
	mnl_socket_close(n.sk);
	(void)other;
}

/* The uid and size of the one region in a RETRIEVE reply. */
struct nl_one {
	uint32_t uid;
	uint64_t size;
};

static int nl_one_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nl *n = data;
	struct nl_one *o = (struct nl_one *)n->sk_user;
	struct nlattr *a, *b;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(a) != QNVRAM_A_REGION)
			continue;
		mnl_attr_for_each_nested(b, a) {
			if (mnl_attr_get_type(b) == MOBIO_A_UID)
				o->uid = mnl_attr_get_u32(b);
			if (mnl_attr_get_type(b) == QNVRAM_A_SIZE)
				o->size = mnl_attr_get_u64(b);
		}
	}
	return MNL_CB_OK;
}

/*
 * On a socket whose opener is not the sending task's uid: no region by
 * default uid, no list, no flush; one "PASS"/"FAIL" line each, named
 * after @who. Return: 0, or 1 when any failed.
 */
static int nl_identity_checks(struct nl *n, uint32_t magic, const char *who)
{
	char buf[MNL_SOCKET_BUFFER_SIZE], name[80];
	struct nl_one one = { 0 };
	struct nlmsghdr *nlh;
	int ret, f0 = failures;
	const char *tag = strstr(who, "root on") ? "root_on_users" : "user_on_roots";

	n->sk_user = &one;
	nlh = nl_msg(n, buf, QNVRAM_CMD_RETRIEVE, 0);
	mnl_attr_put_u32(nlh, QNVRAM_A_MAGIC, magic);
	ret = nl_talk(n, nlh, nl_one_cb);
	snprintf(name, sizeof(name), "netlink_%s_socket_retrieve_eperm", tag);
	result(ret == -EPERM, name,
	       "%s: retrieve of magic %#x without a uid: %s, region of uid %u (%" PRIu64 " bytes), expected EPERM",
	       who, magic, ename(-ret), one.uid, one.size);

	n->regions = n->foreign = n->offsets = 0;
	nlh = nl_msg(n, buf, QNVRAM_CMD_LIST, NLM_F_DUMP);
	ret = nl_talk(n, nlh, nl_region_cb);
	snprintf(name, sizeof(name), "netlink_%s_socket_list_eperm", tag);
	result(ret == -EPERM, name, "%s: list: %s with %d regions, %d offsets, expected EPERM",
	       who, ename(-ret), n->regions, n->offsets);

	nlh = nl_msg(n, buf, QNVRAM_CMD_FLUSH, 0);
	ret = nl_talk(n, nlh, NULL);
	snprintf(name, sizeof(name), "netlink_%s_socket_flush_eperm", tag);
	result(ret == -EPERM, name, "%s: flush: %s, expected EPERM", who, ename(-ret));
	return failures != f0;
}

static int cmd_sock_identity(int argc, char **argv)
{
	uint32_t uid, magic;
	uint64_t len = 0;
	struct nl n;
	int fd, ret, st;
	bool opened;
	pid_t pid;

	if (argc != 2)
		return 2;
	uid = strtoul(argv[0], NULL, 0);
	magic = strtoul(argv[1], NULL, 0);
	/* euid UID, saved uid 0: effective capabilities go, and come back */
	if (setresuid(-1, uid, 0) < 0) {
		result(false, "sock_identity_setup", "setresuid: %s", strerror(errno));
		return 1;
	}
	opened = nl_open(&n);
	fd = qopen(O_RDWR);
	if (setresuid(-1, 0, -1) < 0 || !opened || fd < 0) {
		result(false, "sock_identity_setup", "socket %s, file %d, euid 0: %s",
		       opened ? "open" : "not open", fd, strerror(errno));
		return 1;
	}
	say("info socket and file opened as euid %u; now euid %u\n", uid, geteuid());

	ret = nl_identity_checks(&n, magic, "root on uid's socket");
	mnl_socket_close(n.sk);
	if (ret)
		return 1;

	ret = qreq(fd, QNVRAM_IOC_ALLOC, 0, magic + 1, PAGE, 0, &len);
	result(ret == -EPERM, "ioctl_root_on_users_file_not_root",
	       "ALLOC as uid 0 by root on uid %u's file: %s, expected EPERM", uid, ename(-ret));
	if (!ret)
		qfree(0, magic + 1);
	ret = qreq(fd, QNVRAM_IOC_ALLOC, uid, magic + 1, PAGE, 0, &len);
	result(ret == -EPERM, "ioctl_root_on_users_file_not_user",
	       "ALLOC as uid %u by root on that file: %s, expected EPERM", uid, ename(-ret));
	if (!ret)
		qfree(uid, magic + 1);
	close(fd);

	/* the other way round: root's socket and file, used by uid */
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		opened = nl_open(&n);
		fd = qopen(O_RDWR);
		if (!opened || fd < 0 || !drop_to(uid))
			_exit(3);
		nl_identity_checks(&n, magic, "uid on root's socket");
		ret = qreq(fd, QNVRAM_IOC_ALLOC, 0, magic + 1, PAGE, 0, &len);
		result(ret == -EPERM, "ioctl_user_on_roots_file_not_root",
		       "ALLOC as uid 0 by uid %u on root's file: %s, expected EPERM",
		       uid, ename(-ret));
		ret = qreq(fd, QNVRAM_IOC_ALLOC, uid, magic + 1, PAGE, 0, &len);
		result(ret == -EPERM, "ioctl_user_on_roots_file_not_user",
		       "ALLOC as uid %u by uid %u on root's file: %s, expected EPERM",
		       uid, uid, ename(-ret));
		fflush(stdout);
		_exit(failures ? 1 : 0);
	}
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		failures++;
	qfree(0, magic + 1);
	qfree(uid, magic + 1);
	return failures ? 1 : 0;
}

static int cmd_netlink(int argc, char **argv)
{
	uint32_t uid, other;
	pid_t pid;
	int st;

	if (argc != 2)
		return 2;
	uid = strtoul(argv[0], NULL, 0);
	other = strtoul(argv[1], NULL, 0);
	qfree(uid, 0xef);
	if (qcreate(uid, 0xef, PAGE, 1))
		return 1;
	nl_checks(uid, other, false);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (!drop_to(other))
			_exit(3);
		nl_checks(uid, other, true);
		_exit(failures ? 1 : 0);
	}
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		failures++;
	result(qfree(uid, 0xef) == 0, "netlink_region_survives_refused_free", "%s", "region gone");
	return failures ? 1 : 0;
}

/* --- craft a hostile image ---------------------------------------------------------- */

static uint32_t crc32_ieee(uint32_t crc, const void *p, size_t n)
{
	const uint8_t *b = p;
	int k;

	crc = ~crc;
	while (n--) {
		crc ^= *b++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320 & -(crc & 1));
	}
	return ~crc;
}

/* little-endian host (x86-64) assumed: the format is little-endian */
struct img_hdr {
	uint64_t magic;
	uint32_t version, nr_regions;
	uint64_t pool_bytes, seq;
	uint32_t meta_crc, crc;
	uint32_t reserved[6];
};

struct meta_hdr {
	uint64_t magic;
	uint32_t version, nr_entries;
	uint64_t pool_bytes, generation, data_offset;
	uint32_t crc;
	uint32_t reserved[5];
};

struct entry {
	uint32_t flags, uid, magic, data_crc;
	uint64_t offset, length;
};

static int cmd_craft_swapped(int argc, char **argv)
{
	uint64_t pool, slot_bytes, base[2], best = 0;
	struct img_hdr h[2];
	uint32_t uid, magic, c;
	struct meta_hdr *mh;
	struct entry *e;
	int fd, s, pick = -1, i, found = 0;
	size_t meta_bytes = sizeof(struct meta_hdr) + 256 * sizeof(struct entry);	/* 8256 */
	size_t io = (meta_bytes + 4095) & ~4095UL;
	void *buf, *hb;

	if (argc != 4)
		return 2;
	pool = strtoull(argv[1], NULL, 0);
	uid = strtoul(argv[2], NULL, 0);
	magic = strtoul(argv[3], NULL, 0);
	slot_bytes = 4096 + pool;
	fd = open(argv[0], O_RDWR | O_DIRECT);
	if (fd < 0 || posix_memalign(&buf, 4096, io) || posix_memalign(&hb, 4096, 4096))
		return 1;
	for (s = 0; s < 2; s++) {
		base[s] = s * slot_bytes;
		if (pread(fd, hb, 4096, base[s]) != 4096)
			return 1;
		memcpy(&h[s], hb, sizeof(h[s]));
		c = h[s].crc;
		h[s].crc = 0;
		if (h[s].magic == 0x31474d494d564e51ULL &&
		    crc32_ieee(0, &h[s], sizeof(h[s])) == c && h[s].seq > best) {
			best = h[s].seq;
			pick = s;
		}
		h[s].crc = c;
	}
	if (pick < 0) {
		printf("craft: no valid image\n");
		return 1;
	}
	if (pread(fd, buf, io, base[pick] + 4096) != (ssize_t)io)
		return 1;
	mh = buf;
	e = (struct entry *)(mh + 1);
	for (i = 0; i < 256; i++)
		if (e[i].flags && e[i].uid == uid && e[i].magic == magic) {
			e[i].flags = 3;	/* used | swapped */
			e[i].offset = 0x7ffffffff000ULL;
			found = 1;
		}
	if (!found) {
		printf("craft: no region uid %u magic %#x in image %" PRIu64 "\n", uid, magic, best);
		return 1;
	}
	mh->crc = 0;
	mh->crc = crc32_ieee(0, buf, meta_bytes);
	h[pick].meta_crc = mh->crc;
	h[pick].crc = 0;
	h[pick].crc = crc32_ieee(0, &h[pick], sizeof(h[pick]));
	memset(hb, 0, 4096);
	memcpy(hb, &h[pick], sizeof(h[pick]));
	if (pwrite(fd, buf, io, base[pick] + 4096) != (ssize_t)io ||
	    pwrite(fd, hb, 4096, base[pick]) != 4096 || fsync(fd))
		return 1;
	close(fd);
	say("crafted image %" PRIu64 " (slot %d): uid %u magic %#x swapped at %#llx\n",
	    best, pick, uid, magic, 0x7ffffffff000ULL);
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(int, char **);
} cmds[] = {
	{ "stress", cmd_stress },
	{ "verify-all", cmd_verify_all },
	{ "lifetime", cmd_lifetime },
	{ "netlink", cmd_netlink },
	{ "efault-mmap", cmd_efault_mmap },
	{ "efault-race", cmd_efault_race },
	{ "craft-swapped", cmd_craft_swapped },
	{ "sock-identity", cmd_sock_identity },
};

int main(int argc, char **argv)
{
	size_t i;
	int ret;

	signal(SIGPIPE, SIG_IGN);
	for (i = 0; argc > 1 && i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[1], cmds[i].name))
			continue;
		ret = cmds[i].fn(argc - 2, argv + 2);
		if (ret == 2)
			fprintf(stderr, "qnvstress %s: bad arguments (see the comment at the top of qnvstress.c)\n",
				argv[1]);
		return ret;
	}
	fprintf(stderr, "usage: qnvstress stress|verify-all|lifetime|netlink|efault-mmap|efault-race|craft-swapped|sock-identity ...\n");
	return 2;
}
