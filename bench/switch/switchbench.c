// SPDX-License-Identifier: GPL-2.0-only
/*
 * switchbench: the ASAP app-switch benchmark, guest side (every mode, interleaved).
 *
 *	switchbench [--modes ideal,demand,pc0,novma,daemon,oracle,asap] [options]
 *
 * For every mode it forks its own --apps synthetic apps: app i of every mode
 * has the same sizes and the same footprint sequence, its own processes and
 * its own file (DIR/<mode>-app<i>.dat, same contents), so no mode's page
 * cache, swap cache or asap-prefetch.ko tables are another mode's. App i maps
 * an anonymous working set and its file, both cut into chunks of
 * --chunk-pages pages. A fixed --stable-pct of each region's chunks is in the
 * footprint at every switch; --vary-pct more (of the region) are drawn anew at
 * every switch from the other chunks, by a hash of (seed, app, kind, chunk,
 * round): every mode sees the same footprints in the same round. With
 * --sqlite-lib the apps run real sqlite code and databases instead (see "the
 * sqlite workload" below).
 *
 * A round runs every mode once, in an order shuffled anew each round (from
 * --order-seed and the round; printed as "CSV,order,..."). A mode's turn sets
 * its sysctls (pc0: vm.page-cluster 0; novma: vma_ra_enabled false), switches
 * to each of its apps in turn and restores the sysctls. A switch:
 *   1. the app snapshots its residency (mincore over both regions: resident
 *      anon pages include swap-cache pages) -- "at the switch";
 *   2. t0; the switch event, two cgroup writes in every mode: the stand-in
 *      launcher leaves and the app enters, asap's CGROUP/top-app (home; the
 *      module's fg_cgroup trigger), every other mode's CGROUP/fg (fghome),
 *      which the module does not watch;
 *   3. daemon: its two threads replay what it observed at the end of the
 *      app's previous turn (process_madvise(MADV_WILLNEED) for anon runs,
 *      POSIX_FADV_WILLNEED for file runs); oracle: the same threads ask for
 *      the generator's chunks of the app's previous round (an upper bound a
 *      user cannot build, not a peer);
 *   4. the app touches its footprint (one word of every page, pattern
 *      checked), counting its major faults per kind (getrusage(RUSAGE_THREAD)
 *      around every chunk); t1 when it answers: switch time t1 - t0;
 *   5. --dwell-ms in front, the app goes to CGROUP/bg and the stand-in comes
 *      back (asap: home to top-app, which closes the app's window);
 *   6. the app snapshots its residency again and counts, per kind: needed =
 *      footprint pages not resident at 1; hits = needed - major faults;
 *      wasted = resident now, not at 1, not touched;
 *   7. daemon: it observes the app from outside (/proc/PID/maps, and
 *      /proc/PID/pagemap: the pages mapped now, anon and file);
 *   8. memory pressure, emulated (every mode but ideal):
 *      process_madvise(MADV_PAGEOUT) on both regions, POSIX_FADV_DONTNEED
 *      on the file, then the swap-cache leftovers are mapped and paged out
 *      again (app_settle()).
 *
 * Rounds 0 .. --warmup - 1 warm up every mode (asap: its profile switches),
 * --rounds more are measured. One "CSV,switch,..." line per measured switch
 * (print_header() names the columns); with --asap-stats the asap apps'
 * module counters over the measured rounds (`mobioctl asap stats PID`) and
 * the apps the module tracks (/sys/kernel/debug/asap/apps).
 *
 * Exit: 0 done, 1 a failure (message on stderr), 2 bad usage.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT	21
#endif

#define MAX_APPS	32
#define MAX_STATS	64
#define MAX_FILES	32			/* daemon: files per app */
#define ANON_MAGIC	0xa5a5000000000000ULL
#define FILE_MAGIC	0x5a5a000000000000ULL
#define IOV_BATCH	512
#define PM_PRESENT	(1ULL << 63)
#define PM_SWAP		(1ULL << 62)
#define PM_FILE		(1ULL << 61)

enum mode { MODE_IDEAL, MODE_DEMAND, MODE_PC0, MODE_NOVMA, MODE_DAEMON,
	    MODE_ORACLE, MODE_ASAP, NR_MODES };
enum kind { K_ANON, K_FILE, NR_KINDS };
enum op { OP_SNAP = 1, OP_TOUCH, OP_STAT, OP_LEFT, OP_SETTLE, OP_QUIT };

static const char *const mode_name[NR_MODES] = {
	[MODE_IDEAL] = "ideal", [MODE_DEMAND] = "demand", [MODE_PC0] = "pc0",
	[MODE_NOVMA] = "novma", [MODE_DAEMON] = "daemon",
	[MODE_ORACLE] = "oracle", [MODE_ASAP] = "asap",
};

/* parent -> app */
struct cmd {
	int op;
	int round;
};

/* app -> parent: a fixed-size answer to every command */
struct reply {
	long long touch_ns;			/* OP_TOUCH: the app's own time */
	long long start_ns;			/* OP_TOUCH: its start (now_ns()) */
	long pre_majflt;			/* OP_TOUCH: major faults after the
						 * last answer, before the touch */
	long long cpu_us;			/* OP_TOUCH: its CPU time */
	long pages[NR_KINDS];			/* footprint pages touched */
	long bad;				/* pages with a wrong pattern */
	long majflt[NR_KINDS], minflt;		/* RUSAGE_THREAD deltas */
	long res0[NR_KINDS];			/* OP_STAT: resident at the switch */
	long needed[NR_KINDS], hits[NR_KINDS], wasted[NR_KINDS];
	long resident[NR_KINDS];		/* OP_STAT/OP_LEFT: resident now */
	long settled;				/* OP_SETTLE */
	unsigned long base[NR_KINDS];		/* ready: region addresses */
	long npages[NR_KINDS];			/* ready: region sizes */
	int pid;
};

/* What the daemon saw mapped at the end of a turn, to replay. */
struct obs {
	struct iovec *anon;			/* runs of the app's addresses */
	int nanon, canon;
	struct frun { int f; off_t off, len; } *file;
	int nfile, cfile;
	char *path[MAX_FILES];			/* files of the app, open in fd[] */
	int fd[MAX_FILES], nfiles;
	long pages[NR_KINDS];
	bool valid;
};

struct app {
	enum mode mode;
	int lib_fd;				/* sqlite: the mode's library copy */
	int idx;
	pid_t pid;
	int pidfd;
	int cmd_fd, ack_fd;
	int file_fd;				/* the launcher's own fd of it */
	char path[256];
	unsigned long base[NR_KINDS];
	long npages[NR_KINDS];
	int last_round;				/* -1: not run yet */
	struct obs obs;				/* daemon */
	char stat_key[MAX_STATS][48];
	unsigned long long stat_val[MAX_STATS];
	int nstats;
};

struct opts {
	bool on[NR_MODES];
	int apps, warmup, rounds;
	int anon_min, anon_max, file_min, file_max;	/* MiB */
	int chunk_pages, stable_pct, vary_pct;
	int dwell_ms, lead_ms;
	unsigned long seed, order_seed;
	const char *dir, *cgroup, *disk, *swapdev;
	const char *sqlite_lib;			/* set: the sqlite workload */
	const char *perf_ctl;			/* perf record's --control fifo */
	bool asap_stats;
};

static struct opts o = {
	.apps = 4, .warmup = 10, .rounds = 5,
	.anon_min = 4, .anon_max = 8, .file_min = 2, .file_max = 4,
	.chunk_pages = 16, .stable_pct = 60, .vary_pct = 15,
	.dwell_ms = 100, .lead_ms = 0, .seed = 1, .order_seed = 1,
	.dir = "/mnt/data", .cgroup = "/sys/fs/cgroup", .disk = "vdb",
	.swapdev = "zram0",
};
static long page_size;
static struct app apps[NR_MODES][MAX_APPS];
static int perf_ctl_fd = -1;
static pid_t home_pid, fg_home_pid;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "switchbench: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/*
 * Turn perf record's sampling on or off (its --control fifo, opened in
 * main()), so that a profile holds the measured switches and nothing of
 * the setup, the eviction or the dwell.
 */
static void perf_ctl(const char *cmd)
{
	if (perf_ctl_fd >= 0 && write(perf_ctl_fd, cmd, strlen(cmd)) < 0)
		die("--perf-ctl: %s", strerror(errno));
}

/* The calling thread's major faults so far. */
static long thread_majflt(void)
{
	struct rusage u;

	getrusage(RUSAGE_THREAD, &u);
	return u.ru_majflt;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		die("out of memory");
	return p;
}

/* --- footprints ------------------------------------------------------------ */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static unsigned int hash5(int app, int kind, long chunk, long round)
{
	uint64_t h = mix(o.seed * 0x9e3779b97f4a7c15ULL + (uint64_t)app);

	h = mix(h ^ ((uint64_t)kind << 56) ^ (uint64_t)chunk);
	return (unsigned int)(mix(h ^ ((uint64_t)round + 0x1234567ULL)) % 100000);
}

static bool chunk_stable(int app, int kind, long chunk)
{
	return hash5(app, kind, chunk, -1) < (unsigned int)o.stable_pct * 1000;
}

/* Is @chunk of @kind in @app's footprint at @round? */
static bool chunk_used(int app, int kind, long chunk, int round)
{
	unsigned int p;

	if (chunk_stable(app, kind, chunk))
		return true;
	/* vary_pct of the region, drawn from the (100 - stable_pct)% left */
	p = (unsigned int)(100000ULL * o.vary_pct / (100 - o.stable_pct));
	return hash5(app, kind, chunk, round) < p;
}

static long nchunks(long npages)
{
	return (npages + o.chunk_pages - 1) / o.chunk_pages;
}

static long chunk_len(long npages, long c)
{
	long n = npages - c * o.chunk_pages;

	return n < o.chunk_pages ? n : o.chunk_pages;
}

/* --- the app (a child process) ---------------------------------------------- */

static uint64_t pattern(int kind, int app, long pg)
{
	return (kind == K_ANON ? ANON_MAGIC : FILE_MAGIC) ^
		((uint64_t)app << 32) ^ (uint64_t)pg;
}

/* Page contents that compress about 2:1, as app heaps do in zram. */
static void fill_page(unsigned char *p, uint64_t first, uint64_t *rng)
{
	uint64_t *w = (uint64_t *)p;
	long i, n = page_size / 8;

	w[0] = first;
	for (i = 1; i < n; i++) {
		*rng ^= *rng << 13;
		*rng ^= *rng >> 7;
		*rng ^= *rng << 17;
		w[i] = (i & 1) ? *rng : (*rng & 0xff);
	}
}

static void make_file(int idx, const char *path, long npages)
{
	unsigned char *buf = malloc(page_size);
	uint64_t rng = mix(idx + 77);
	struct stat st;
	long pg;
	int fd;

	if (!stat(path, &st) && st.st_size == npages * page_size)
		goto out;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || !buf)
		die("%s: %s", path, strerror(errno));
	for (pg = 0; pg < npages; pg++) {
		fill_page(buf, pattern(K_FILE, idx, pg), &rng);
		if (write(fd, buf, page_size) != page_size)
			die("%s: write: %s", path, strerror(errno));
	}
	if (fsync(fd) || close(fd))
		die("%s: %s", path, strerror(errno));
out:
	free(buf);
}

/* The app's view of itself: regions, residency at the switch, pages touched. */
struct self {
	int idx;
	unsigned char *base[NR_KINDS];
	long npages[NR_KINDS];
	unsigned char *res0[NR_KINDS];		/* mincore at the switch */
	unsigned char *touched[NR_KINDS];	/* 1: touched in this turn */
	long majflt[NR_KINDS];
};

static void self_mincore(struct self *s, int k, unsigned char *vec)
{
	if (mincore(s->base[k], s->npages[k] * page_size, vec))
		die("app %d: mincore: %s", s->idx, strerror(errno));
}

/* Touch the footprint of @round: anonymous and file chunks interleaved. */
static void app_touch(struct self *s, int round, struct reply *r)
{
	long c, pg, maxc = 0;
	int k;

	for (k = 0; k < NR_KINDS; k++) {
		memset(s->touched[k], 0, s->npages[k]);
		if (nchunks(s->npages[k]) > maxc)
			maxc = nchunks(s->npages[k]);
	}
	for (c = 0; c < maxc; c++) {
		for (k = 0; k < NR_KINDS; k++) {
			struct rusage u0, u1;

			if (c >= nchunks(s->npages[k]) ||
			    !chunk_used(s->idx, k, c, round))
				continue;
			getrusage(RUSAGE_THREAD, &u0);
			for (pg = c * o.chunk_pages;
			     pg < c * o.chunk_pages + chunk_len(s->npages[k], c);
			     pg++) {
				volatile uint64_t *w =
					(uint64_t *)(s->base[k] + pg * page_size);

				if (*w != pattern(k, s->idx, pg))
					r->bad++;
				s->touched[k][pg] = 1;
				r->pages[k]++;
			}
			getrusage(RUSAGE_THREAD, &u1);
			r->majflt[k] += u1.ru_majflt - u0.ru_majflt;
		}
	}
}

/* Needed, hits and wasted pages of the turn just done (see the head comment). */
static void app_stat(struct self *s, struct reply *r)
{
	int k;

	for (k = 0; k < NR_KINDS; k++) {
		unsigned char *vec = malloc(s->npages[k]);
		long pg;

		if (!vec)
			die("app %d: out of memory", s->idx);
		self_mincore(s, k, vec);
		for (pg = 0; pg < s->npages[k]; pg++) {
			bool was = s->res0[k][pg] & 1, now = vec[pg] & 1;

			r->res0[k] += was;
			r->resident[k] += now;
			if (s->touched[k][pg] && !was)
				r->needed[k]++;
			if (now && !was && !s->touched[k][pg])
				r->wasted[k]++;
		}
		r->majflt[k] = s->majflt[k];
		r->hits[k] = r->needed[k] - s->majflt[k];
		if (r->hits[k] < 0)
			r->hits[k] = 0;
		free(vec);
	}
}

/*
 * Pages of the anonymous region that are in the swap cache but not mapped
 * (mincore says resident, pagemap says swapped: read ahead by
 * MADV_WILLNEED and never used) survive MADV_PAGEOUT, which only reclaims
 * mapped pages. Map them (read a word) and page them out again, so that
 * every mode starts its next switch from the same, fully evicted state.
 * Returns how many there were.
 */
static long app_settle(int idx, unsigned char *base, long npages)
{
	unsigned char *vec = malloc(npages);
	uint64_t *pm = malloc(npages * sizeof(*pm));
	volatile uint64_t sink = 0;
	long pg, n = 0;
	int fd;

	fd = open("/proc/self/pagemap", O_RDONLY);
	if (!vec || !pm || fd < 0 || mincore(base, npages * page_size, vec) ||
	    pread(fd, pm, npages * sizeof(*pm),
		  (unsigned long)base / page_size * sizeof(*pm)) !=
	    (ssize_t)(npages * sizeof(*pm)))
		die("app %d: mincore/pagemap: %s", idx, strerror(errno));
	close(fd);
	for (pg = 0; pg < npages; pg++) {
		if (!(vec[pg] & 1) || (pm[pg] & PM_PRESENT))
			continue;
		sink += *(uint64_t *)(base + pg * page_size);
		if (madvise(base + pg * page_size, page_size, MADV_PAGEOUT))
			die("app %d: madvise(PAGEOUT): %s", idx, strerror(errno));
		n++;
	}
	free(vec);
	free(pm);
	return n;
}

static void app_main(int idx, const char *label, int cmd_fd, int ack_fd,
		     const char *path, long anon_pages, long file_pages)
{
	struct self s = { .idx = idx, .npages = { anon_pages, file_pages } };
	uint64_t rng = mix(idx + 4242);
	char name[16];
	struct reply r;
	struct cmd c;
	long answered_majflt;
	long pg;
	int fd, k;

	snprintf(name, sizeof(name), "%.8s%d", label, idx);
	prctl(PR_SET_NAME, name);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		die("app %d: %s: %s", idx, path, strerror(errno));
	s.base[K_ANON] = mmap(NULL, anon_pages * page_size, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	s.base[K_FILE] = mmap(NULL, file_pages * page_size, PROT_READ, MAP_SHARED,
			      fd, 0);
	if (s.base[K_ANON] == MAP_FAILED || s.base[K_FILE] == MAP_FAILED)
		die("app %d: mmap: %s", idx, strerror(errno));
	for (k = 0; k < NR_KINDS; k++) {
		s.res0[k] = calloc(s.npages[k], 1);
		s.touched[k] = calloc(s.npages[k], 1);
		if (!s.res0[k] || !s.touched[k])
			die("app %d: out of memory", idx);
	}
	madvise(s.base[K_ANON], anon_pages * page_size, MADV_NOHUGEPAGE);
	for (pg = 0; pg < anon_pages; pg++)
		fill_page(s.base[K_ANON] + pg * page_size,
			  pattern(K_ANON, idx, pg), &rng);
	for (pg = 0; pg < file_pages; pg++)
		rng += s.base[K_FILE][pg * page_size];

	memset(&r, 0, sizeof(r));
	r.pid = getpid();
	for (k = 0; k < NR_KINDS; k++) {
		r.base[k] = (unsigned long)s.base[k];
		r.npages[k] = s.npages[k];
	}
	if (write(ack_fd, &r, sizeof(r)) != sizeof(r))
		exit(1);

	answered_majflt = thread_majflt();
	while (read(cmd_fd, &c, sizeof(c)) == sizeof(c)) {
		struct rusage u0, u1;
		long long t0;

		memset(&r, 0, sizeof(r));
		r.pid = getpid();
		switch (c.op) {
		case OP_SNAP:
			for (k = 0; k < NR_KINDS; k++)
				self_mincore(&s, k, s.res0[k]);
			break;
		case OP_TOUCH:
			getrusage(RUSAGE_THREAD, &u0);
			t0 = now_ns();
			r.start_ns = t0;
			r.pre_majflt = u0.ru_majflt - answered_majflt;
			app_touch(&s, c.round, &r);
			r.touch_ns = now_ns() - t0;
			getrusage(RUSAGE_THREAD, &u1);
			r.minflt = u1.ru_minflt - u0.ru_minflt;
			r.cpu_us = (u1.ru_utime.tv_sec - u0.ru_utime.tv_sec +
				    u1.ru_stime.tv_sec - u0.ru_stime.tv_sec) * 1000000LL +
				   u1.ru_utime.tv_usec - u0.ru_utime.tv_usec +
				   u1.ru_stime.tv_usec - u0.ru_stime.tv_usec;
			for (k = 0; k < NR_KINDS; k++)
				s.majflt[k] = r.majflt[k];
			break;
		case OP_STAT:
			app_stat(&s, &r);
			break;
		case OP_LEFT:
			for (k = 0; k < NR_KINDS; k++) {
				unsigned char *vec = malloc(s.npages[k]);

				if (!vec)
					die("app %d: out of memory", idx);
				self_mincore(&s, k, vec);
				for (pg = 0; pg < s.npages[k]; pg++)
					r.resident[k] += vec[pg] & 1;
				free(vec);
			}
			break;
		case OP_SETTLE:
			r.settled = app_settle(idx, s.base[K_ANON], s.npages[K_ANON]);
			break;
		case OP_QUIT:
			exit(0);
		default:
			break;
		}
		answered_majflt = thread_majflt();
		if (write(ack_fd, &r, sizeof(r)) != sizeof(r))
			exit(1);
	}
	exit(0);
}

/* --- the sqlite workload: a real library's code and a real database --------- */

/*
 * With --sqlite-lib, app i is a program linked (dlopen) with its mode's copy
 * of libsqlite3 on the data disk (DIR/<mode>-libsqlite3.so: the library's code
 * pages are file pages there, one copy per mode), running queries over its
 * database DIR/<mode>-app<i>.db (about --file-mb, read through mmap_size, so
 * its pages are file-mapped) and over an in-memory table of about --anon-mb
 * (sqlite's page cache: anonymous heap). A turn = one request over the pipe:
 * two range sums, a stable 60% of the rows and a 15% window drawn per round,
 * in each table, timed until the reply.
 *
 * The counters are the app's own, over its VMAs (/proc/self/maps: anonymous
 * ones, and file ones under DIR): mincore at the switch and after the turn as
 * for the synthetic apps; which pages it touched is not known from a
 * generator, so "touched" = mapped after the turn and not at the switch
 * (pagemap), which also counts pages a prefetcher mapped (asap's workers map
 * what they prepage) and the kernel's file fault-around. Major faults come
 * from getrusage for the whole turn, not per kind: majflt_anon holds the
 * total and majflt_file is -1 (report.py then gives precision and recall for
 * both kinds together).
 */
struct sqlite3;
struct sqlite3_stmt;
static struct {
	int (*open_v2)(const char *, struct sqlite3 **, int, const char *);
	int (*exec)(struct sqlite3 *, const char *, void *, void *, char **);
	int (*prepare_v2)(struct sqlite3 *, const char *, int, struct sqlite3_stmt **,
			  const char **);
	int (*bind_int64)(struct sqlite3_stmt *, int, long long);
	int (*step)(struct sqlite3_stmt *);
	long long (*column_int64)(struct sqlite3_stmt *, int);
	int (*reset)(struct sqlite3_stmt *);
	const char *(*errmsg)(struct sqlite3 *);
} sq;

#define SQLITE_ROW	100
#define SQLITE_OPEN_RW_CREATE	0x00000006
#define SQL_ROW_BYTES	1000

struct vma {
	unsigned long start, end;
	bool file;
	unsigned char *res0, *pres0;		/* at the switch: mincore, pagemap */
};

struct sqlself {
	int idx;
	struct sqlite3 *db;
	struct sqlite3_stmt *sum[2];		/* main.t, h.t */
	long rows[2];
	struct vma *v;
	int nv;
	long majflt;
};

static void sql_check(struct sqlself *s, int rc, const char *what)
{
	if (rc)
		die("app %d: sqlite %s: %s", s->idx, what, sq.errmsg(s->db));
}

static void sql_exec(struct sqlself *s, const char *q)
{
	char *err = NULL;

	if (sq.exec(s->db, q, NULL, NULL, &err))
		die("app %d: sqlite: %s: %s", s->idx, q, err ? err : "?");
}

static void sql_load(struct sqlself *s, const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		die("app %d: dlopen %s: %s", s->idx, lib, dlerror());
#define SQ(f, n) do { *(void **)&sq.f = dlsym(h, "sqlite3_" n); \
	if (!sq.f) die("%s: no sqlite3_%s", lib, n); } while (0)
	SQ(open_v2, "open_v2"); SQ(exec, "exec"); SQ(prepare_v2, "prepare_v2");
	SQ(bind_int64, "bind_int64"); SQ(step, "step");
	SQ(column_int64, "column_int64"); SQ(reset, "reset"); SQ(errmsg, "errmsg");
#undef SQ
}

/* The app's VMAs that count: anonymous ones and file ones under --dir. */
static void sql_vmas(struct sqlself *s)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int i;

	for (i = 0; i < s->nv; i++) {
		free(s->v[i].res0);
		free(s->v[i].pres0);
	}
	s->nv = 0;
	if (!f)
		die("app %d: /proc/self/maps: %s", s->idx, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end, ino;
		char perms[8], file[400] = "";

		if (sscanf(line, "%lx-%lx %7s %*x %*x:%*x %lu %399s", &start, &end,
			   perms, &ino, file) < 4 || perms[0] != 'r')
			continue;
		if (ino ? strncmp(file, o.dir, strlen(o.dir)) : file[0] == '[' &&
		    strcmp(file, "[heap]"))
			continue;
		s->v = xrealloc(s->v, (s->nv + 1) * sizeof(*s->v));
		s->v[s->nv++] = (struct vma){ start, end, ino != 0, NULL, NULL };
	}
	fclose(f);
}

/* mincore and pagemap "present" of @v into @res and @pres (one byte a page). */
static bool sql_resident(struct vma *v, unsigned char *res, unsigned char *pres)
{
	long n = (v->end - v->start) / page_size, pg;
	uint64_t *pm = malloc(n * sizeof(*pm));
	int fd = open("/proc/self/pagemap", O_RDONLY);
	bool ok;

	if (!pm || fd < 0)
		die("pagemap: %s", strerror(errno));
	ok = !mincore((void *)v->start, n * page_size, res) &&
		pread(fd, pm, n * sizeof(*pm), v->start / page_size * sizeof(*pm)) ==
		(ssize_t)(n * sizeof(*pm));
	for (pg = 0; ok && pg < n; pg++)
		pres[pg] = !!(pm[pg] & PM_PRESENT);
	close(fd);
	free(pm);
	return ok;
}

static void sql_snap(struct sqlself *s)
{
	int i;

	sql_vmas(s);
	for (i = 0; i < s->nv; i++) {
		long n = (s->v[i].end - s->v[i].start) / page_size;

		s->v[i].res0 = malloc(n);
		s->v[i].pres0 = malloc(n);
		if (!s->v[i].res0 || !s->v[i].pres0)
			die("out of memory");
		if (!sql_resident(&s->v[i], s->v[i].res0, s->v[i].pres0))
			memset(s->v[i].res0, 1, n);	/* gone: counts as nothing */
	}
}

static void sql_stat(struct sqlself *s, struct reply *r)
{
	int i;

	for (i = 0; i < s->nv; i++) {
		struct vma *v = &s->v[i];
		long n = (v->end - v->start) / page_size, pg;
		unsigned char *res = malloc(n), *pres = malloc(n);
		int k = v->file ? K_FILE : K_ANON;

		if (!res || !pres)
			die("out of memory");
		if (sql_resident(v, res, pres)) {
			for (pg = 0; pg < n; pg++) {
				bool was = v->res0[pg] & 1, now = res[pg] & 1;
				bool touched = pres[pg] && !v->pres0[pg];

				r->res0[k] += was;
				r->resident[k] += now;
				r->pages[k] += touched;
				if (touched && !was)
					r->needed[k]++;
				if (now && !was && !touched)
					r->wasted[k]++;
			}
		}
		free(res);
		free(pres);
	}
	r->majflt[K_ANON] = s->majflt;
	r->majflt[K_FILE] = -1;
}

static long sql_left(struct sqlself *s, int kind)
{
	long total = 0;
	int i;

	sql_vmas(s);
	for (i = 0; i < s->nv; i++) {
		long n = (s->v[i].end - s->v[i].start) / page_size, pg;
		unsigned char *res = malloc(n), *pres = malloc(n);

		if (s->v[i].file == (kind == K_FILE) && res && pres &&
		    sql_resident(&s->v[i], res, pres))
			for (pg = 0; pg < n; pg++)
				total += res[pg] & 1;
		free(res);
		free(pres);
	}
	return total;
}

/* A range of rows of table @t: its length @pct percent, from @from percent. */
static long long sql_sum(struct sqlself *s, int t, long from_pct, long pct)
{
	long lo = s->rows[t] * from_pct / 100, hi = lo + s->rows[t] * pct / 100;
	long long v = 0;

	sq.bind_int64(s->sum[t], 1, lo);
	sq.bind_int64(s->sum[t], 2, hi);
	while (sq.step(s->sum[t]) == SQLITE_ROW)
		v += sq.column_int64(s->sum[t], 0);
	sq.reset(s->sum[t]);
	return v;
}

static void sql_turn(struct sqlself *s, int round, struct reply *r)
{
	int t;

	for (t = 0; t < 2; t++) {
		/* the stable part, then a window drawn from the other 40% */
		long w = hash5(s->idx, t, 0, round) % (100 - o.stable_pct - o.vary_pct + 1);

		if (sql_sum(s, t, 0, o.stable_pct) <= 0 ||
		    sql_sum(s, t, o.stable_pct + w, o.vary_pct) <= 0)
			r->bad++;
	}
}

static void app_sql_main(int idx, const char *label, int cmd_fd, int ack_fd,
			 const char *path, const char *lib, long anon_mb, long file_mb)
{
	struct sqlself s = { .idx = idx };
	char name[16], q[512];
	struct stat st;
	struct reply r;
	struct cmd c;
	long answered_majflt;
	bool fresh;
	int t;

	snprintf(name, sizeof(name), "%.8s%d", label, idx);
	prctl(PR_SET_NAME, name);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	sql_load(&s, lib);
	s.rows[0] = file_mb * (1 << 20) / (SQL_ROW_BYTES + 100);
	s.rows[1] = anon_mb * (1 << 20) / (SQL_ROW_BYTES + 100);
	fresh = stat(path, &st) != 0;

	sql_check(&s, sq.open_v2(path, &s.db, SQLITE_OPEN_RW_CREATE, NULL), "open");
	if (fresh) {
		snprintf(q, sizeof(q), "CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB); "
			 "WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c "
			 "WHERE x < %ld) INSERT INTO t SELECT x, randomblob(%d) FROM c;",
			 s.rows[0] - 1, SQL_ROW_BYTES);
		sql_exec(&s, q);
	}
	snprintf(q, sizeof(q), "PRAGMA mmap_size = %ld; PRAGMA cache_size = -1024; "
		 "ATTACH ':memory:' AS h; PRAGMA h.cache_size = -%ld; "
		 "CREATE TABLE h.t(k INTEGER PRIMARY KEY, v BLOB); "
		 "WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c "
		 "WHERE x < %ld) INSERT INTO h.t SELECT x, randomblob(%d) FROM c;",
		 (file_mb + 16) << 20, anon_mb * 2048, s.rows[1] - 1, SQL_ROW_BYTES);
	sql_exec(&s, q);
	for (t = 0; t < 2; t++)
		sql_check(&s, sq.prepare_v2(s.db, t ? "SELECT sum(length(v)) FROM h.t "
					    "WHERE k BETWEEN ?1 AND ?2" :
					    "SELECT sum(length(v)) FROM main.t "
					    "WHERE k BETWEEN ?1 AND ?2", -1, &s.sum[t], NULL),
			  "prepare");
	sql_sum(&s, 0, 0, 100);			/* map the whole database once */

	memset(&r, 0, sizeof(r));
	r.pid = getpid();
	if (write(ack_fd, &r, sizeof(r)) != sizeof(r))
		exit(1);
	answered_majflt = thread_majflt();
	while (read(cmd_fd, &c, sizeof(c)) == sizeof(c)) {
		struct rusage u0, u1;
		long long t0;
		int i;

		memset(&r, 0, sizeof(r));
		r.pid = getpid();
		switch (c.op) {
		case OP_SNAP:
			sql_snap(&s);
			break;
		case OP_TOUCH:
			getrusage(RUSAGE_THREAD, &u0);
			t0 = now_ns();
			r.start_ns = t0;
			r.pre_majflt = u0.ru_majflt - answered_majflt;
			sql_turn(&s, c.round, &r);
			r.touch_ns = now_ns() - t0;
			getrusage(RUSAGE_THREAD, &u1);
			r.minflt = u1.ru_minflt - u0.ru_minflt;
			s.majflt = u1.ru_majflt - u0.ru_majflt;
			r.cpu_us = (u1.ru_utime.tv_sec - u0.ru_utime.tv_sec +
				    u1.ru_stime.tv_sec - u0.ru_stime.tv_sec) * 1000000LL +
				   u1.ru_utime.tv_usec - u0.ru_utime.tv_usec +
				   u1.ru_stime.tv_usec - u0.ru_stime.tv_usec;
			break;
		case OP_STAT:
			sql_stat(&s, &r);
			break;
		case OP_LEFT:
			r.resident[K_ANON] = sql_left(&s, K_ANON);
			r.resident[K_FILE] = sql_left(&s, K_FILE);
			break;
		case OP_SETTLE:
			sql_vmas(&s);
			for (i = 0; i < s.nv; i++)
				if (!s.v[i].file)
					r.settled += app_settle(idx, (unsigned char *)s.v[i].start,
								(s.v[i].end - s.v[i].start) / page_size);
			break;
		case OP_QUIT:
			exit(0);
		default:
			break;
		}
		answered_majflt = thread_majflt();
		if (write(ack_fd, &r, sizeof(r)) != sizeof(r))
			exit(1);
	}
	exit(0);
}

/* --- the launcher: talking to apps ------------------------------------------- */

static void app_call(struct app *a, int op, int round, struct reply *r)
{
	struct cmd c = { op, round };

	if (write(a->cmd_fd, &c, sizeof(c)) != sizeof(c) ||
	    read(a->ack_fd, r, sizeof(*r)) != sizeof(*r))
		die("%s app %d (pid %d) does not answer", mode_name[a->mode],
		    a->idx, a->pid);
}

static int gcd(int a, int b)
{
	return b ? gcd(b, a % b) : a;
}

/* Sizes from @lo to @hi MiB, in an order that is not the switch order. */
static int spread(int lo, int hi, int i)
{
	int n = o.apps, step = 3;

	while (n > 2 && gcd(step, n) != 1)
		step += 2;
	return n > 1 ? lo + (hi - lo) * ((i * step) % n) / (n - 1) : lo;
}

static void copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	char buf[65536];
	ssize_t n;

	if (in < 0 || out < 0)
		die("copy %s to %s: %s", from, to, strerror(errno));
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			die("%s: write: %s", to, strerror(errno));
	if (n < 0 || fsync(out) || close(out))
		die("copy %s to %s: %s", from, to, strerror(errno));
	close(in);
}

static void start_app(struct app *a, enum mode m, int i)
{
	long anon = (long)spread(o.anon_min, o.anon_max, i) << 20;
	long file = (long)spread(o.file_min, o.file_max, (i + 1) % o.apps) << 20;
	int to_app[2], to_us[2], k;
	struct reply r;
	char lib[300];

	a->mode = m;
	a->idx = i;
	a->last_round = -1;
	snprintf(lib, sizeof(lib), "%s/%s-libsqlite3.so", o.dir, mode_name[m]);
	if (o.sqlite_lib) {
		snprintf(a->path, sizeof(a->path), "%s/%s-app%d.db", o.dir, mode_name[m], i);
		if (i == 0)
			copy_file(o.sqlite_lib, lib);
	} else {
		snprintf(a->path, sizeof(a->path), "%s/%s-app%d.dat", o.dir, mode_name[m], i);
		make_file(i, a->path, file / page_size);
	}
	if (pipe(to_app) || pipe(to_us))
		die("pipe: %s", strerror(errno));
	fflush(stdout);
	a->pid = fork();
	if (a->pid < 0)
		die("fork: %s", strerror(errno));
	if (a->pid == 0) {
		close(to_app[1]);
		close(to_us[0]);
		if (o.sqlite_lib)
			app_sql_main(i, mode_name[m], to_app[0], to_us[1], a->path, lib,
				     anon >> 20, file >> 20);
		app_main(i, mode_name[m], to_app[0], to_us[1], a->path,
			 anon / page_size, file / page_size);
	}
	close(to_app[0]);
	close(to_us[1]);
	a->cmd_fd = to_app[1];
	a->ack_fd = to_us[0];
	if (read(a->ack_fd, &r, sizeof(r)) != sizeof(r))
		die("%s app %d did not start", mode_name[m], i);
	for (k = 0; k < NR_KINDS; k++) {
		a->base[k] = r.base[k];
		a->npages[k] = r.npages[k];
	}
	a->pidfd = pidfd_open(a->pid, 0);
	a->file_fd = open(a->path, O_RDONLY);
	a->lib_fd = o.sqlite_lib ? open(lib, O_RDONLY) : -1;
	if (a->pidfd < 0 || a->file_fd < 0 || (o.sqlite_lib && a->lib_fd < 0))
		die("app %d: pidfd_open/open: %s", i, strerror(errno));
	printf("CSV,app,%s,%d,%d,%ld,%ld\n", mode_name[m], i, a->pid,
	       a->npages[K_ANON], a->npages[K_FILE]);
}

static void stop_app(struct app *a)
{
	struct cmd c = { OP_QUIT, 0 };
	int f;

	if (write(a->cmd_fd, &c, sizeof(c)) != sizeof(c))
		kill(a->pid, SIGKILL);
	waitpid(a->pid, NULL, 0);
	close(a->cmd_fd);
	close(a->ack_fd);
	close(a->pidfd);
	close(a->file_fd);
	if (a->lib_fd >= 0)
		close(a->lib_fd);
	for (f = 0; f < a->obs.nfiles; f++) {
		close(a->obs.fd[f]);
		free(a->obs.path[f]);
	}
	free(a->obs.anon);
	free(a->obs.file);
}

/*
 * A stand-in launcher: a process that only waits. "home" is in top-app while
 * no asap app is (taking it back closes the asap app's window); "fghome" is
 * in fg while no other mode's app is, so that every mode's switch is the
 * same two cgroup writes (the first of a burst waits for an RCU grace
 * period, the second does not: with one write for the other modes and two
 * for asap, asap's switches were 2-5 ms longer for the bench's reasons).
 */
static pid_t start_home(const char *name)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		prctl(PR_SET_NAME, name);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	return pid;
}

/* --- cgroups and sysctls ------------------------------------------------------ */

static void write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), n = (int)strlen(val);

	if (fd < 0 || write(fd, val, n) != n)
		die("%s: %s: %s", path, val, strerror(errno));
	close(fd);
}

static void read_str(const char *path, char *buf, int len)
{
	int fd = open(path, O_RDONLY), n;

	if (fd < 0 || (n = read(fd, buf, len - 1)) <= 0)
		die("%s: %s", path, strerror(errno));
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	close(fd);
}

static void cg_move(const char *group, pid_t pid)
{
	char path[512], buf[32];

	snprintf(path, sizeof(path), "%s/%s/cgroup.procs", o.cgroup, group);
	snprintf(buf, sizeof(buf), "%d\n", pid);
	write_str(path, buf);
}

#define PAGE_CLUSTER	"/proc/sys/vm/page-cluster"
#define VMA_RA		"/sys/kernel/mm/swap/vma_ra_enabled"

static char saved_pc[16], saved_vma[16];

/* Set the mode's kernel settings for its turn; mode_unset() puts them back. */
static void mode_set(enum mode m)
{
	if (m == MODE_PC0) {
		read_str(PAGE_CLUSTER, saved_pc, sizeof(saved_pc));
		write_str(PAGE_CLUSTER, "0");
	} else if (m == MODE_NOVMA) {
		read_str(VMA_RA, saved_vma, sizeof(saved_vma));
		write_str(VMA_RA, "false");
	}
}

static void mode_unset(enum mode m)
{
	if (m == MODE_PC0)
		write_str(PAGE_CLUSTER, saved_pc);
	else if (m == MODE_NOVMA)
		write_str(VMA_RA, saved_vma);
}

/* --- memory pressure, emulated --------------------------------------------------- */

static void madvise_ranges(struct app *a, struct iovec *iov, int n, int advice)
{
	int done = 0;

	while (done < n) {
		int cnt = n - done > IOV_BATCH ? IOV_BATCH : n - done;
		ssize_t len = 0, ret;
		int i;

		for (i = 0; i < cnt; i++)
			len += iov[done + i].iov_len;
		ret = process_madvise(a->pidfd, iov + done, cnt, advice, 0);
		if (ret < 0)
			die("app %d: process_madvise(%d): %s", a->idx, advice,
			    strerror(errno));
		if (ret != len)
			fprintf(stderr, "switchbench: app %d: process_madvise(%d) did %zd of %zd bytes\n",
				a->idx, advice, ret, len);
		done += cnt;
	}
}

/* sqlite apps: page out every anonymous VMA and every file VMA under --dir. */
static void evict_vmas(struct app *a)
{
	struct iovec *iov = NULL;
	char path[64], line[512];
	int n = 0, err;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", a->pid);
	f = fopen(path, "r");
	if (!f)
		die("%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end, ino;
		char perms[8], file[400] = "";

		if (sscanf(line, "%lx-%lx %7s %*x %*x:%*x %lu %399s", &start, &end,
			   perms, &ino, file) < 4 || perms[0] != 'r')
			continue;
		if (ino ? strncmp(file, o.dir, strlen(o.dir)) : file[0] == '[' &&
		    strcmp(file, "[heap]"))
			continue;
		iov = xrealloc(iov, (n + 1) * sizeof(*iov));
		iov[n].iov_base = (void *)start;
		iov[n++].iov_len = end - start;
	}
	fclose(f);
	madvise_ranges(a, iov, n, MADV_PAGEOUT);
	free(iov);
	err = posix_fadvise(a->file_fd, 0, 0, POSIX_FADV_DONTNEED);
	if (!err)
		err = posix_fadvise(a->lib_fd, 0, 0, POSIX_FADV_DONTNEED);
	if (err)
		die("app %d: fadvise(DONTNEED): %s", a->idx, strerror(err));
}

static void evict(struct app *a)
{
	struct iovec iov[NR_KINDS];
	int k, err;

	if (o.sqlite_lib) {
		evict_vmas(a);
		return;
	}

	for (k = 0; k < NR_KINDS; k++) {
		iov[k].iov_base = (void *)a->base[k];
		iov[k].iov_len = a->npages[k] * page_size;
	}
	madvise_ranges(a, iov, NR_KINDS, MADV_PAGEOUT);
	err = posix_fadvise(a->file_fd, 0, 0, POSIX_FADV_DONTNEED);
	if (err)
		die("app %d: fadvise(DONTNEED): %s", a->idx, strerror(err));
}

/* --- the daemon: observe mapped pages at the end of a turn ---------------------- */

static void obs_anon(struct obs *ob, unsigned long addr, long n)
{
	if (ob->nanon && (unsigned long)ob->anon[ob->nanon - 1].iov_base +
	    ob->anon[ob->nanon - 1].iov_len == addr) {
		ob->anon[ob->nanon - 1].iov_len += n * page_size;
	} else {
		if (ob->nanon == ob->canon) {
			ob->canon = ob->canon ? 2 * ob->canon : 256;
			ob->anon = xrealloc(ob->anon, ob->canon * sizeof(*ob->anon));
		}
		ob->anon[ob->nanon].iov_base = (void *)addr;
		ob->anon[ob->nanon++].iov_len = n * page_size;
	}
	ob->pages[K_ANON] += n;
}

static void obs_file(struct obs *ob, int f, off_t off, long n)
{
	struct frun *l = ob->nfile ? &ob->file[ob->nfile - 1] : NULL;

	if (l && l->f == f && l->off + l->len == off) {
		l->len += n * page_size;
	} else {
		if (ob->nfile == ob->cfile) {
			ob->cfile = ob->cfile ? 2 * ob->cfile : 256;
			ob->file = xrealloc(ob->file, ob->cfile * sizeof(*ob->file));
		}
		ob->file[ob->nfile++] = (struct frun){ f, off, n * page_size };
	}
	ob->pages[K_FILE] += n;
}

/* The daemon's fd of @path (opened once per app), or -1. */
static int obs_fd(struct obs *ob, const char *path)
{
	int f, fd;

	for (f = 0; f < ob->nfiles; f++)
		if (!strcmp(ob->path[f], path))
			return f;
	if (ob->nfiles == MAX_FILES)
		return -1;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ob->path[ob->nfiles] = strdup(path);
	ob->fd[ob->nfiles] = fd;
	return ob->nfiles++;
}

/*
 * What a userspace daemon can see of another process: its VMAs
 * (/proc/PID/maps) and which of their pages are mapped now
 * (/proc/PID/pagemap: present; "file" for page-cache pages). At the end of a
 * turn the mapped pages are the ones the app touched, plus the kernel's fault-
 * around for file mappings; readahead and prefetched pages the app did not
 * use are not mapped (mincore on the file would report them, and the replay
 * list would only grow). Anon runs are kept by address, file runs by
 * (file, offset).
 */
static void daemon_observe(struct app *a)
{
	struct obs *ob = &a->obs;
	char path[64], line[512];
	uint64_t *pm = NULL;
	long cap = 0;
	FILE *maps;
	int pmfd;

	ob->nanon = ob->nfile = 0;
	ob->pages[K_ANON] = ob->pages[K_FILE] = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", a->pid);
	maps = fopen(path, "r");
	snprintf(path, sizeof(path), "/proc/%d/pagemap", a->pid);
	pmfd = open(path, O_RDONLY);
	if (!maps || pmfd < 0)
		die("daemon: %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), maps)) {
		unsigned long start, end, off, ino;
		char perms[8], file[400] = "";
		long n, pg;
		int f = -1;

		/* [heap] and [stack] are the app's too; [vdso], [vvar]... not */
		if (sscanf(line, "%lx-%lx %7s %lx %*x:%*x %lu %399s", &start,
			   &end, perms, &off, &ino, file) < 5 || perms[0] != 'r' ||
		    !strncmp(file, "[v", 2))
			continue;
		if (ino && file[0] == '/')
			f = obs_fd(ob, file);
		n = (end - start) / page_size;
		if (n > cap) {
			cap = n;
			pm = xrealloc(pm, cap * sizeof(*pm));
		}
		if (pread(pmfd, pm, n * sizeof(*pm), start / page_size * sizeof(*pm)) !=
		    (ssize_t)(n * sizeof(*pm)))
			die("daemon: pagemap of %d: %s", a->pid, strerror(errno));
		for (pg = 0; pg <= n; pg++) {
			bool file_pg = pg < n && (pm[pg] & PM_PRESENT) && (pm[pg] & PM_FILE);
			bool anon_pg = pg < n && (pm[pg] & PM_PRESENT) && !(pm[pg] & PM_FILE);

			/* one page at a time; obs_*() merge adjacent runs */
			if (anon_pg)
				obs_anon(ob, start + pg * page_size, 1);
			else if (file_pg && f >= 0)
				obs_file(ob, f, off + pg * page_size, 1);
		}
	}
	fclose(maps);
	close(pmfd);
	free(pm);
	ob->valid = true;
}

/* --- prefetch threads: the daemon's replay and the oracle ------------------------ */

struct pf {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct app *app;			/* the job: this app ... */
	int round;				/* ... oracle: its chunks of this round */
	int gen, done[NR_KINDS];
	long pages[NR_KINDS];			/* pages asked for */
	long long ns[NR_KINDS], cpu_ns[NR_KINDS];
	struct iovec *iov;			/* oracle: anon thread's buffer */
};

static struct pf pf = {
	.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
};

/* Runs of used chunks of @kind as (page offset, pages); returns pages. */
static long oracle_runs(struct app *a, int kind, int round,
			void (*emit)(struct app *, long, long, void *), void *arg)
{
	long c, start = -1, total = 0, n = nchunks(a->npages[kind]);

	for (c = 0; c <= n; c++) {
		bool used = c < n && chunk_used(a->idx, kind, c, round);

		if (used && start < 0)
			start = c * o.chunk_pages;
		if (!used && start >= 0) {
			long end = c * o.chunk_pages;

			if (end > a->npages[kind])
				end = a->npages[kind];
			emit(a, start, end - start, arg);
			total += end - start;
			start = -1;
		}
	}
	return total;
}

static void emit_iov(struct app *a, long pg, long n, void *arg)
{
	int *cnt = arg;

	pf.iov[*cnt].iov_base = (void *)(a->base[K_ANON] + pg * page_size);
	pf.iov[*cnt].iov_len = n * page_size;
	(*cnt)++;
}

static void emit_fadvise(struct app *a, long pg, long n, void *arg)
{
	int err = posix_fadvise(a->file_fd, pg * page_size, n * page_size,
				POSIX_FADV_WILLNEED);

	(void)arg;
	if (err)
		die("app %d: fadvise(WILLNEED): %s", a->idx, strerror(err));
}

static long pf_work(struct app *a, int kind, int round)
{
	struct obs *ob = &a->obs;
	int i, cnt = 0;
	long n;

	if (a->mode == MODE_ORACLE) {
		if (kind == K_FILE)
			return oracle_runs(a, K_FILE, round, emit_fadvise, NULL);
		n = oracle_runs(a, K_ANON, round, emit_iov, &cnt);
		madvise_ranges(a, pf.iov, cnt, MADV_WILLNEED);
		return n;
	}
	if (kind == K_ANON) {
		madvise_ranges(a, ob->anon, ob->nanon, MADV_WILLNEED);
		return ob->pages[K_ANON];
	}
	/* errors (a file on the initramfs, say) only cost the call */
	for (i = 0; i < ob->nfile; i++)
		posix_fadvise(ob->fd[ob->file[i].f], ob->file[i].off,
			      ob->file[i].len, POSIX_FADV_WILLNEED);
	return ob->pages[K_FILE];
}

static void *pf_thread(void *arg)
{
	int kind = (int)(long)arg, seen = 0;

	for (;;) {
		long long t0, c0;
		struct app *a;
		long pages;
		int round;

		pthread_mutex_lock(&pf.lock);
		while (pf.gen == seen)
			pthread_cond_wait(&pf.cond, &pf.lock);
		seen = pf.gen;
		a = pf.app;
		round = pf.round;
		pthread_mutex_unlock(&pf.lock);
		if (!a)
			return NULL;

		t0 = now_ns();
		c0 = thread_cpu_ns();
		pages = pf_work(a, kind, round);
		pthread_mutex_lock(&pf.lock);
		pf.pages[kind] = pages;
		pf.ns[kind] = now_ns() - t0;
		pf.cpu_ns[kind] = thread_cpu_ns() - c0;
		pf.done[kind] = seen;
		pthread_cond_broadcast(&pf.cond);
		pthread_mutex_unlock(&pf.lock);
	}
}

static void pf_kick(struct app *a, int round)
{
	pthread_mutex_lock(&pf.lock);
	pf.app = a;
	pf.round = round;
	pf.gen++;
	pthread_cond_broadcast(&pf.cond);
	pthread_mutex_unlock(&pf.lock);
}

static void pf_wait(void)
{
	pthread_mutex_lock(&pf.lock);
	while (pf.done[K_ANON] != pf.gen || pf.done[K_FILE] != pf.gen)
		pthread_cond_wait(&pf.cond, &pf.lock);
	pthread_mutex_unlock(&pf.lock);
}

/* --- system counters ---------------------------------------------------------- */

struct sample {
	long long ns;
	unsigned long long busy, total;		/* /proc/stat, USER_HZ ticks */
	unsigned long long disk_sect, swap_sect;	/* sectors read */
};

static unsigned long long blk_read_sectors(const char *dev)
{
	unsigned long long v[3] = { 0 };
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/block/%s/stat", dev);
	f = fopen(path, "r");
	if (!f)
		die("%s: %s", path, strerror(errno));
	if (fscanf(f, "%llu %llu %llu", &v[0], &v[1], &v[2]) != 3)
		die("%s: unreadable", path);
	fclose(f);
	return v[2];
}

static void sample(struct sample *s)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int i;

	if (!f || fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
			 &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
			 &v[7]) != 8)
		die("/proc/stat: unreadable");
	fclose(f);
	s->total = 0;
	for (i = 0; i < 8; i++)
		s->total += v[i];
	s->busy = s->total - v[3] - v[4];	/* minus idle and iowait */
	s->disk_sect = blk_read_sectors(o.disk);
	s->swap_sect = blk_read_sectors(o.swapdev);
	s->ns = now_ns();
}

/* --- asap-prefetch.ko counters (mobioctl asap stats PID) -------------------------- */

static void asap_read_stats(struct app *a, bool base)
{
	char cmd[64], key[48];
	unsigned long long v;
	FILE *p;
	int i;

	snprintf(cmd, sizeof(cmd), "mobioctl asap stats %d", a->pid);
	p = popen(cmd, "r");
	if (!p)
		die("%s: %s", cmd, strerror(errno));
	while (fscanf(p, "%47s %llu", key, &v) == 2) {
		for (i = 0; i < a->nstats; i++)
			if (!strcmp(a->stat_key[i], key))
				break;
		if (i == a->nstats) {
			if (a->nstats == MAX_STATS)
				continue;
			snprintf(a->stat_key[i], sizeof(a->stat_key[i]), "%s", key);
			a->stat_val[i] = 0;
			a->nstats++;
		}
		if (base)
			a->stat_val[i] = v;
		else
			printf("CSV,asapstat,asap,%d,%s,%lld\n", a->idx,
			       key, (long long)(v - a->stat_val[i]));
	}
	if (pclose(p))
		die("%s failed (is asap-prefetch.ko loaded?)", cmd);
}

/*
 * Wait (up to 2 s) until asap-prefetch.ko has handled the switch to @pid:
 * its app is shown "foreground" in /sys/kernel/debug/asap/apps. The
 * switch reads which pages the app leaving the foreground used; the
 * emulated memory pressure after the turn must not page them out first
 * (reclaim would take seconds, not the microseconds until our
 * process_madvise). Outside the measured time; returns the ms waited.
 */
static long asap_wait_front(pid_t pid)
{
	long long t0 = now_ns();
	char line[256], want[64];
	bool seen = false;
	FILE *f;

	snprintf(want, sizeof(want), "app %d ", (int)pid);
	while (!seen && now_ns() - t0 < 2000000000LL) {
		f = fopen("/sys/kernel/debug/asap/apps", "r");
		if (!f)
			return -1;
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, want, strlen(want)) &&
			    strstr(line, " foreground"))
				seen = true;
		fclose(f);
		if (!seen)
			sleep_ms(1);
	}
	return seen ? (now_ns() - t0) / 1000000 : -1;
}

/*
 * Which processes does the module track? Only asap's apps and home may be
 * there (the other modes' apps never enter its fg_cgroup).
 */
static void asap_tracked(void)
{
	FILE *f = fopen("/sys/kernel/debug/asap/apps", "r");
	int n_asap = 0, n_home = 0, n_other = 0, pid, i;
	char line[256], others[256] = "";

	if (!f) {
		printf("CSV,asaptracked,unknown,%s\n", strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		bool mine = false;

		if (sscanf(line, "app %d", &pid) != 1)
			continue;
		if (pid == home_pid) {
			n_home++;
			continue;
		}
		for (i = 0; i < o.apps; i++)
			mine |= apps[MODE_ASAP][i].pid == pid;
		if (mine) {
			n_asap++;
		} else {
			n_other++;
			if (strlen(others) < sizeof(others) - 16)
				snprintf(others + strlen(others), 16, " %d", pid);
		}
	}
	fclose(f);
	printf("CSV,asaptracked,asap=%d home=%d other=%d%s%s\n", n_asap, n_home,
	       n_other, n_other ? " others=" : "", others);
}

/* --- one switch ----------------------------------------------------------------- */

static void do_switch(struct app *a, int round, int pos, bool measured)
{
	bool pf_on = false, asap = a->mode == MODE_ASAP;
	const char *front = asap ? "top-app" : "fg";
	pid_t home = asap ? home_pid : fg_home_pid;
	struct sample s0, s1, s2;
	struct reply t, st, ev, se;
	long long obs_ns = 0, obs_cpu = 0, pf_ns = 0, pf_cpu = 0, moved_ns;
	long asked[NR_KINDS] = { 0, 0 };
	int prev = a->last_round, k;

	app_call(a, OP_SNAP, 0, &t);
	if (measured)
		perf_ctl("enable\n");
	sample(&s0);
	cg_move("bg", home);
	cg_move(front, a->pid);
	moved_ns = now_ns();
	if (a->mode == MODE_DAEMON && a->obs.valid) {
		pf_kick(a, prev);
		pf_on = true;
	} else if (a->mode == MODE_ORACLE && prev >= 0) {
		pf_kick(a, prev);
		pf_on = true;
	}
	if (o.lead_ms)
		sleep_ms(o.lead_ms);
	app_call(a, OP_TOUCH, round, &t);
	sample(&s1);
	if (measured)
		perf_ctl("disable\n");
	if (pf_on) {
		pf_wait();
		for (k = 0; k < NR_KINDS; k++) {
			pf_ns = pf.ns[k] > pf_ns ? pf.ns[k] : pf_ns;
			pf_cpu += pf.cpu_ns[k];
			asked[k] = pf.pages[k];
		}
	}
	if (o.dwell_ms)
		sleep_ms(o.dwell_ms);
	sample(&s2);
	cg_move("bg", a->pid);
	cg_move(front, home);
	if (asap) {
		if (asap_wait_front(home_pid) < 0)
			die("asap-prefetch.ko did not switch to home within 2 s");
	}
	a->last_round = round;
	app_call(a, OP_STAT, 0, &st);
	if (o.sqlite_lib) {
		for (k = 0; k < NR_KINDS; k++) {
			t.pages[k] = st.pages[k];
			t.majflt[k] = st.majflt[k];
		}
	}
	if (a->mode == MODE_DAEMON) {
		long long t0 = now_ns(), c0 = thread_cpu_ns();

		daemon_observe(a);
		obs_ns = now_ns() - t0;
		obs_cpu = thread_cpu_ns() - c0;
	}
	memset(&ev, 0, sizeof(ev));
	memset(&se, 0, sizeof(se));
	if (a->mode != MODE_IDEAL) {
		evict(a);
		app_call(a, OP_SETTLE, 0, &se);
		app_call(a, OP_LEFT, 0, &ev);
	}
	if (t.bad)
		die("%s app %d: %ld pages with a wrong pattern after round %d",
		    mode_name[a->mode], a->idx, t.bad, round);
	if (!measured)
		return;
	printf("CSV,switch,%s,%d,%d,%d,%lld,%lld,%ld,%ld,%ld,%ld,%ld,%lld,"
	       "%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,"
	       "%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,"
	       "%ld,%ld,%lld,%lld,%lld,%lld,%ld,%lld,%ld,%lld,%lld\n",
	       mode_name[a->mode], a->idx, round, pos,
	       (s1.ns - s0.ns) / 1000, t.touch_ns / 1000,
	       t.pages[K_ANON], t.pages[K_FILE],
	       t.majflt[K_ANON], t.majflt[K_FILE], t.minflt, t.cpu_us,
	       (s1.busy - s0.busy), (s1.total - s0.total),
	       (s2.busy - s0.busy), (s2.total - s0.total),
	       (s1.disk_sect - s0.disk_sect) * 512, (s2.disk_sect - s0.disk_sect) * 512,
	       (s1.swap_sect - s0.swap_sect) * 512, (s2.swap_sect - s0.swap_sect) * 512,
	       st.res0[K_ANON], st.res0[K_FILE], st.needed[K_ANON], st.needed[K_FILE],
	       st.hits[K_ANON], st.hits[K_FILE], st.wasted[K_ANON], st.wasted[K_FILE],
	       ev.resident[K_ANON], ev.resident[K_FILE],
	       asked[K_ANON], asked[K_FILE], pf_ns / 1000, pf_cpu / 1000,
	       obs_ns / 1000, obs_cpu / 1000, se.settled, (s2.ns - s0.ns) / 1000,
	       t.pre_majflt, (t.start_ns - s0.ns) / 1000,
	       (moved_ns - s0.ns) / 1000);
	fflush(stdout);
}

static void print_header(void)
{
	int m;

	printf("CSV,params,modes=");
	for (m = 0; m < NR_MODES; m++)
		if (o.on[m])
			printf("%s%s", mode_name[m], m < MODE_ASAP ? ":" : "");
	printf(" workload=%s apps=%d warmup=%d rounds=%d anon_mb=%d-%d file_mb=%d-%d chunk_pages=%d stable_pct=%d vary_pct=%d dwell_ms=%d lead_ms=%d seed=%lu order_seed=%lu\n",
	       o.sqlite_lib ? "sqlite" : "synthetic",
	       o.apps, o.warmup, o.rounds, o.anon_min, o.anon_max, o.file_min,
	       o.file_max, o.chunk_pages, o.stable_pct, o.vary_pct, o.dwell_ms,
	       o.lead_ms, o.seed, o.order_seed);
	printf("CSV,columns,switch,label,app,round,pos,switch_us,touch_us,anon_pages,file_pages,"
	       "majflt_anon,majflt_file,minflt,app_cpu_us,"
	       "cpu_busy_ticks,cpu_ticks,cpu_busy_ticks_dwell,cpu_ticks_dwell,"
	       "disk_rd_bytes,disk_rd_bytes_dwell,swap_rd_bytes,swap_rd_bytes_dwell,"
	       "res0_anon,res0_file,needed_anon,needed_file,hits_anon,hits_file,"
	       "wasted_anon,wasted_file,left_anon,left_file,"
	       "pf_asked_anon,pf_asked_file,pf_wall_us,pf_cpu_us,obs_wall_us,obs_cpu_us,"
	       "settled_anon,dwell_us,pre_majflt,start_us,moved_us\n");
}

/* --- command line ------------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: switchbench [options]\n"
		"  --modes LIST        of ideal,demand,pc0,novma,daemon,oracle,asap (all)\n"
		"  --apps N            apps per mode, switched round robin (4, at most %d)\n"
		"  --warmup W          warm-up rounds, every mode (10: asap's profile_switches)\n"
		"  --rounds M          measured rounds (5)\n"
		"  --anon-mb MIN-MAX   anonymous region sizes, spread over the apps (4-8)\n"
		"  --file-mb MIN-MAX   file sizes (2-4)\n"
		"  --chunk-pages N     footprint granularity in pages (16)\n"
		"  --stable-pct P      chunks used at every switch, %% of a region (60)\n"
		"  --vary-pct P        chunks drawn anew at each switch, %% of a region (15)\n"
		"  --dwell-ms MS       time in front after the touch (100)\n"
		"  --lead-ms MS        delay between the switch event and the app (0)\n"
		"  --seed S            footprint hash seed (1)\n"
		"  --order-seed S      seed of the modes' shuffled order per round (1)\n"
		"  --dir DIR           where the app files are made (/mnt/data)\n"
		"  --cgroup DIR        cgroup2 mount with top-app/, fg/ and bg/ (/sys/fs/cgroup)\n"
		"  --disk DEV          block device of DIR, for bytes read (vdb)\n"
		"  --swapdev DEV       swap block device (zram0)\n"
		"  --asap-stats        print the asap apps' module counters and who it tracks\n"
		"  --perf-ctl FIFO     perf record's --control fifo: sampling on from each\n"
		"                      measured switch event to the end of the app's touch\n"
		"  --sqlite-lib PATH   the sqlite workload: apps dlopen a per-mode copy of this\n"
		"                      libsqlite3 and query a --file-mb database (mmap) and a\n"
		"                      --anon-mb in-memory table; oracle is left out\n"
		"modes: ideal (no eviction), demand (evicted, demand paging), pc0 (demand,\n"
		"vm.page-cluster 0), novma (demand, vma swap readahead off), daemon (a\n"
		"userspace prefetcher: replays what was mapped at the end of the app's last\n"
		"turn), oracle (prefetches the generator's chunks of the last turn: an upper\n"
		"bound), asap (asap-prefetch.ko, loaded by the caller with fg_cgroup=/top-app).\n",
		MAX_APPS);
}

static int range(const char *s, int *lo, int *hi)
{
	char *end;

	*lo = (int)strtol(s, &end, 10);
	if (*end == '-')
		*hi = (int)strtol(end + 1, &end, 10);
	else
		*hi = *lo;
	return *end || *lo < 1 || *hi < *lo || *hi > 1024;
}

static int number(const char *s, int min, int max, int *v)
{
	char *end;
	long n = strtol(s, &end, 10);

	if (!*s || *end || n < min || n > max)
		return 1;
	*v = (int)n;
	return 0;
}

static int parse_modes(char *s)
{
	char *tok, *save;
	int m, any = 0;

	memset(o.on, 0, sizeof(o.on));
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (m = 0; m < NR_MODES; m++)
			if (!strcmp(tok, mode_name[m]))
				break;
		if (m == NR_MODES)
			return 1;
		o.on[m] = true;
		any = 1;
	}
	return !any;
}

static void parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "modes", 1, 0, 'm' }, { "apps", 1, 0, 'a' },
		{ "warmup", 1, 0, 'w' }, { "rounds", 1, 0, 'r' },
		{ "anon-mb", 1, 0, 'A' }, { "file-mb", 1, 0, 'F' },
		{ "chunk-pages", 1, 0, 'c' }, { "stable-pct", 1, 0, 's' },
		{ "vary-pct", 1, 0, 'v' }, { "dwell-ms", 1, 0, 'd' },
		{ "lead-ms", 1, 0, 'L' }, { "seed", 1, 0, 'S' },
		{ "order-seed", 1, 0, 'O' },
		{ "dir", 1, 0, 'D' }, { "cgroup", 1, 0, 'g' },
		{ "disk", 1, 0, 'k' }, { "swapdev", 1, 0, 'z' },
		{ "asap-stats", 0, 0, 'T' }, { "sqlite-lib", 1, 0, 'Q' },
		{ "perf-ctl", 1, 0, 'P' },
		{ "help", 0, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	int c, m, bad = 0, seed;

	for (m = 0; m < NR_MODES; m++)
		o.on[m] = true;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'm': bad |= parse_modes(optarg); break;
		case 'a': bad |= number(optarg, 1, MAX_APPS, &o.apps); break;
		case 'w': bad |= number(optarg, 0, 1000, &o.warmup); break;
		case 'r': bad |= number(optarg, 1, 1000, &o.rounds); break;
		case 'A': bad |= range(optarg, &o.anon_min, &o.anon_max); break;
		case 'F': bad |= range(optarg, &o.file_min, &o.file_max); break;
		case 'c': bad |= number(optarg, 1, 4096, &o.chunk_pages); break;
		case 's': bad |= number(optarg, 0, 99, &o.stable_pct); break;
		case 'v': bad |= number(optarg, 0, 100, &o.vary_pct); break;
		case 'd': bad |= number(optarg, 0, 60000, &o.dwell_ms); break;
		case 'L': bad |= number(optarg, 0, 60000, &o.lead_ms); break;
		case 'S': bad |= number(optarg, 0, 1 << 30, &seed); o.seed = seed; break;
		case 'O': bad |= number(optarg, 0, 1 << 30, &seed); o.order_seed = seed; break;
		case 'D': o.dir = optarg; break;
		case 'g': o.cgroup = optarg; break;
		case 'k': bad |= !*optarg || strchr(optarg, '/') != NULL; o.disk = optarg; break;
		case 'z': bad |= !*optarg || strchr(optarg, '/') != NULL; o.swapdev = optarg; break;
		case 'T': o.asap_stats = true; break;
		case 'Q': o.sqlite_lib = optarg; break;
		case 'P': o.perf_ctl = optarg; break;
		case 'h': usage(stdout); exit(0);
		default: bad = 1; break;
		}
	}
	if (o.stable_pct + o.vary_pct > 100) {
		fprintf(stderr, "switchbench: --stable-pct + --vary-pct must be <= 100\n");
		bad = 1;
	}
	if (bad || optind != argc) {
		usage(stderr);
		exit(2);
	}
	/* the oracle needs the generator's footprint: none for real programs */
	if (o.sqlite_lib)
		o.on[MODE_ORACLE] = false;
}

/* The modes of @round in a shuffled order (Fisher-Yates, seeded per round). */
static int round_order(int round, enum mode *order)
{
	uint64_t r = mix(o.order_seed * 0x9e3779b97f4a7c15ULL + (uint64_t)round + 1);
	int n = 0, i, m;

	for (m = 0; m < NR_MODES; m++)
		if (o.on[m])
			order[n++] = m;
	for (i = n - 1; i > 0; i--) {
		int j;
		enum mode t;

		r = mix(r + 0x632be59bd9b4e019ULL);
		j = (int)(r % (uint64_t)(i + 1));
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	return n;
}

int main(int argc, char **argv)
{
	pthread_t th[NR_KINDS];
	enum mode order[NR_MODES];
	long cnt = 0;
	int round, i, k, m, n, p;

	parse(argc, argv);
	page_size = sysconf(_SC_PAGESIZE);
	if (o.perf_ctl) {
		perf_ctl_fd = open(o.perf_ctl, O_WRONLY | O_CLOEXEC);
		if (perf_ctl_fd < 0)
			die("--perf-ctl %s: %s", o.perf_ctl, strerror(errno));
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	print_header();
	/* The launcher is not an app: it stays in fg, where no trigger is. */
	cg_move("fg", getpid());
	home_pid = start_home("home");
	cg_move("top-app", home_pid);
	fg_home_pid = start_home("fghome");
	cg_move("fg", fg_home_pid);
	for (m = 0; m < NR_MODES; m++)
		for (i = 0; o.on[m] && i < o.apps; i++) {
			start_app(&apps[m][i], m, i);
			cnt = apps[m][i].npages[K_ANON] > cnt ?
				apps[m][i].npages[K_ANON] : cnt;
			cg_move("bg", apps[m][i].pid);
			if (m != MODE_IDEAL)
				evict(&apps[m][i]);
		}
	pf.iov = calloc(nchunks(cnt) + 1, sizeof(*pf.iov));
	if (!pf.iov)
		die("out of memory");
	for (k = 0; k < NR_KINDS; k++)
		if (pthread_create(&th[k], NULL, pf_thread, (void *)(long)k))
			die("pthread_create failed");
	for (round = 0; round < o.warmup + o.rounds; round++) {
		bool measured = round >= o.warmup;

		n = round_order(round, order);
		printf("CSV,order,%d,%d", round, measured);
		for (p = 0; p < n; p++)
			printf(",%s", mode_name[order[p]]);
		printf("\n");
		if (round == o.warmup && o.asap_stats && o.on[MODE_ASAP])
			for (i = 0; i < o.apps; i++)
				asap_read_stats(&apps[MODE_ASAP][i], true);
		for (p = 0; p < n; p++) {
			mode_set(order[p]);
			for (i = 0; i < o.apps; i++)
				do_switch(&apps[order[p]][i], round, p, measured);
			mode_unset(order[p]);
		}
	}
	if (o.asap_stats && o.on[MODE_ASAP]) {
		for (i = 0; i < o.apps; i++)
			asap_read_stats(&apps[MODE_ASAP][i], false);
		asap_tracked();
	}
	pf_kick(NULL, 0);
	for (k = 0; k < NR_KINDS; k++)
		pthread_join(th[k], NULL);
	for (m = 0; m < NR_MODES; m++)
		for (i = 0; o.on[m] && i < o.apps; i++)
			stop_app(&apps[m][i]);
	kill(home_pid, SIGKILL);
	waitpid(home_pid, NULL, 0);
	kill(fg_home_pid, SIGKILL);
	waitpid(fg_home_pid, NULL, 0);
	printf("CSV,done\n");
	return 0;
}
