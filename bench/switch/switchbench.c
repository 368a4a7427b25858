// SPDX-License-Identifier: GPL-2.0-only
/*
 * switchbench: the ASAP app-switch benchmark, guest side (one mode per run).
 *
 *	switchbench --mode ideal|demand|peer|asap [--label NAME] [options]
 *
 * It forks --apps synthetic apps. App i maps an anonymous working set and a
 * file on the data file system (--dir), both cut into chunks of
 * --chunk-pages pages. A fixed --stable-pct of each region's chunks is in
 * the app's footprint at every switch; --vary-pct more (of the region) are
 * drawn anew at every switch from the other chunks, by a hash of (seed, app,
 * kind, chunk, round): every mode sees the same footprints for the same
 * rounds. With the defaults (60 + 15) the footprint is 75% of each region,
 * 80% of it stable, 20% varying.
 *
 * The user switches between the apps in turn (round robin). A switch:
 *   1. t0; the app's pid is written to CGROUP/top-app/cgroup.procs (the
 *      Android top-app move; asap-prefetch.ko's fg_cgroup trigger);
 *   2. (peer) two threads start "prefetch everything last touched":
 *      process_madvise(MADV_WILLNEED) on the anonymous chunks of the app's
 *      previous switch, POSIX_FADV_WILLNEED on its file chunks;
 *   3. the app touches its footprint (reads one word of every page and
 *      checks the pattern it wrote); t1 when it answers: switch time t1 - t0;
 *   4. the app stays in front --dwell-ms, then the launcher (this process)
 *      comes to the front: the app's window closes;
 *   5. memory pressure, emulated reproducibly (every mode but ideal):
 *      process_madvise(MADV_PAGEOUT) on both of the app's regions (anon to
 *      swap, file pages dropped) and POSIX_FADV_DONTNEED on its file; the
 *      app then maps and pages out again the anonymous pages left in the
 *      swap cache unmapped (MADV_PAGEOUT skips them; see app_settle()).
 *
 * Rounds --first - --warmup .. --first - 1 warm up (ASAP's profile
 * switches), rounds --first .. --first + --rounds - 1 are measured. Output
 * on stdout, one "CSV,..." line per measured switch and per app (see
 * print_header()); with --asap-stats, the asap-prefetch.ko counters of each
 * app over the measured rounds (from `mobioctl asap stats PID`).
 *
 * Exit: 0 done, 1 a failure (message on stderr), 2 bad usage.
 */
#define _GNU_SOURCE
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
#define ANON_MAGIC	0xa5a5000000000000ULL
#define FILE_MAGIC	0x5a5a000000000000ULL
#define IOV_BATCH	512

enum mode { MODE_IDEAL, MODE_DEMAND, MODE_PEER, MODE_ASAP };
enum kind { K_ANON, K_FILE, NR_KINDS };
enum op { OP_TOUCH = 1, OP_STAT, OP_SETTLE, OP_QUIT };

/* parent -> app */
struct cmd {
	int op;
	int round;
};

/* app -> parent: a fixed-size answer to every command */
struct reply {
	long long touch_ns;			/* OP_TOUCH: the app's own time */
	long pages[NR_KINDS];			/* footprint pages touched */
	long bad;				/* pages with a wrong pattern */
	long majflt, minflt;			/* getrusage delta of the touch */
	long resident[NR_KINDS];		/* OP_STAT: resident pages */
	long extra[NR_KINDS];			/* resident, not in the footprint */
	unsigned long base[NR_KINDS];		/* ready: region addresses */
	long npages[NR_KINDS];			/* ready: region sizes */
	int pid;
};

struct app {
	int idx;
	pid_t pid;
	int pidfd;
	int cmd_fd, ack_fd;
	int file_fd;				/* the launcher's own fd of it */
	char path[256];
	unsigned long base[NR_KINDS];
	long npages[NR_KINDS];
	int last_round;				/* -1: not run in this mode */
	char stat_key[MAX_STATS][48];
	unsigned long long stat_val[MAX_STATS];
	int nstats;
};

struct opts {
	enum mode mode;
	const char *label;
	int apps, warmup, first, rounds;
	int anon_min, anon_max, file_min, file_max;	/* MiB */
	int chunk_pages, stable_pct, vary_pct;
	int dwell_ms, lead_ms;
	unsigned long seed;
	const char *dir, *cgroup, *disk, *swapdev;
	bool asap_stats;
};

static struct opts o = {
	.mode = MODE_DEMAND, .apps = 8, .warmup = 1, .first = 10, .rounds = 5,
	.anon_min = 8, .anon_max = 16, .file_min = 4, .file_max = 8,
	.chunk_pages = 16, .stable_pct = 60, .vary_pct = 15,
	.dwell_ms = 100, .lead_ms = 0, .seed = 1,
	.dir = "/mnt/data", .cgroup = "/sys/fs/cgroup", .disk = "vdb",
	.swapdev = "zram0",
};
static long page_size;
static struct app apps[MAX_APPS];

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

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
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

static void region_resident(unsigned char *base, long npages, int idx,
			    int kind, int round, long *res, long *extra)
{
	unsigned char *vec = malloc(npages);
	long c, pg;

	if (!vec || mincore(base, npages * page_size, vec))
		die("app %d: mincore: %s", idx, strerror(errno));
	*res = 0;
	*extra = 0;
	for (c = 0; c < nchunks(npages); c++) {
		bool used = round >= 0 && chunk_used(idx, kind, c, round);

		for (pg = c * o.chunk_pages;
		     pg < c * o.chunk_pages + chunk_len(npages, c); pg++) {
			if (!(vec[pg] & 1))
				continue;
			(*res)++;
			if (!used)
				(*extra)++;
		}
	}
	free(vec);
}

/* Touch the footprint of @round: anonymous and file chunks interleaved. */
static void app_touch(int idx, unsigned char **base, const long *npages,
		      int round, struct reply *r)
{
	long c, pg, maxc = 0;
	int k;

	for (k = 0; k < NR_KINDS; k++)
		if (nchunks(npages[k]) > maxc)
			maxc = nchunks(npages[k]);
	for (c = 0; c < maxc; c++) {
		for (k = 0; k < NR_KINDS; k++) {
			if (c >= nchunks(npages[k]) ||
			    !chunk_used(idx, k, c, round))
				continue;
			for (pg = c * o.chunk_pages;
			     pg < c * o.chunk_pages + chunk_len(npages[k], c);
			     pg++) {
				volatile uint64_t *w =
					(uint64_t *)(base[k] + pg * page_size);

				if (*w != pattern(k, idx, pg))
					r->bad++;
				r->pages[k]++;
			}
		}
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
		if (!(vec[pg] & 1) || (pm[pg] >> 63) & 1)
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

static void app_main(int idx, int cmd_fd, int ack_fd, const char *path,
		     long anon_pages, long file_pages)
{
	unsigned char *base[NR_KINDS];
	long npages[NR_KINDS] = { anon_pages, file_pages };
	uint64_t rng = mix(idx + 4242);
	int fd, last_round = -1;
	char name[16];
	struct reply r;
	struct cmd c;
	long pg;

	snprintf(name, sizeof(name), "app%d", idx);
	prctl(PR_SET_NAME, name);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		die("app %d: %s: %s", idx, path, strerror(errno));
	base[K_ANON] = mmap(NULL, anon_pages * page_size, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	base[K_FILE] = mmap(NULL, file_pages * page_size, PROT_READ, MAP_SHARED,
			    fd, 0);
	if (base[K_ANON] == MAP_FAILED || base[K_FILE] == MAP_FAILED)
		die("app %d: mmap: %s", idx, strerror(errno));
	madvise(base[K_ANON], anon_pages * page_size, MADV_NOHUGEPAGE);
	for (pg = 0; pg < anon_pages; pg++)
		fill_page(base[K_ANON] + pg * page_size,
			  pattern(K_ANON, idx, pg), &rng);
	for (pg = 0; pg < file_pages; pg++)
		rng += base[K_FILE][pg * page_size];

	memset(&r, 0, sizeof(r));
	r.pid = getpid();
	r.base[K_ANON] = (unsigned long)base[K_ANON];
	r.base[K_FILE] = (unsigned long)base[K_FILE];
	r.npages[K_ANON] = anon_pages;
	r.npages[K_FILE] = file_pages;
	if (write(ack_fd, &r, sizeof(r)) != sizeof(r))
		exit(1);

	while (read(cmd_fd, &c, sizeof(c)) == sizeof(c)) {
		struct rusage u0, u1;
		long long t0;
		int k;

		memset(&r, 0, sizeof(r));
		r.pid = getpid();
		switch (c.op) {
		case OP_TOUCH:
			getrusage(RUSAGE_SELF, &u0);
			t0 = now_ns();
			app_touch(idx, base, npages, c.round, &r);
			r.touch_ns = now_ns() - t0;
			getrusage(RUSAGE_SELF, &u1);
			r.majflt = u1.ru_majflt - u0.ru_majflt;
			r.minflt = u1.ru_minflt - u0.ru_minflt;
			last_round = c.round;
			break;
		case OP_STAT:
			for (k = 0; k < NR_KINDS; k++)
				region_resident(base[k], npages[k], idx, k,
						last_round, &r.resident[k],
						&r.extra[k]);
			break;
		case OP_SETTLE:
			r.extra[K_ANON] = app_settle(idx, base[K_ANON],
						     npages[K_ANON]);
			break;
		case OP_QUIT:
			exit(0);
		default:
			break;
		}
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
		die("app %d (pid %d) does not answer", a->idx, a->pid);
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

static void start_apps(void)
{
	int i, k;

	for (i = 0; i < o.apps; i++) {
		struct app *a = &apps[i];
		long anon = (long)spread(o.anon_min, o.anon_max, i) << 20;
		long file = (long)spread(o.file_min, o.file_max, (i + 1) % o.apps) << 20;
		int to_app[2], to_us[2];
		struct reply r;

		a->idx = i;
		a->last_round = -1;
		snprintf(a->path, sizeof(a->path), "%s/app%d.dat", o.dir, i);
		make_file(i, a->path, file / page_size);
		if (pipe(to_app) || pipe(to_us))
			die("pipe: %s", strerror(errno));
		fflush(stdout);
		a->pid = fork();
		if (a->pid < 0)
			die("fork: %s", strerror(errno));
		if (a->pid == 0) {
			close(to_app[1]);
			close(to_us[0]);
			app_main(i, to_app[0], to_us[1], a->path,
				 anon / page_size, file / page_size);
		}
		close(to_app[0]);
		close(to_us[1]);
		a->cmd_fd = to_app[1];
		a->ack_fd = to_us[0];
		if (read(a->ack_fd, &r, sizeof(r)) != sizeof(r))
			die("app %d did not start", i);
		for (k = 0; k < NR_KINDS; k++) {
			a->base[k] = r.base[k];
			a->npages[k] = r.npages[k];
		}
		a->pidfd = pidfd_open(a->pid, 0);
		a->file_fd = open(a->path, O_RDONLY);
		if (a->pidfd < 0 || a->file_fd < 0)
			die("app %d: pidfd_open/open: %s", i, strerror(errno));
		printf("CSV,app,%s,%d,%d,%ld,%ld\n", o.label, i, a->pid,
		       a->npages[K_ANON], a->npages[K_FILE]);
	}
}

static void stop_apps(void)
{
	int i;

	for (i = 0; i < o.apps; i++) {
		struct cmd c = { OP_QUIT, 0 };

		if (write(apps[i].cmd_fd, &c, sizeof(c)) != sizeof(c))
			kill(apps[i].pid, SIGKILL);
		waitpid(apps[i].pid, NULL, 0);
		close(apps[i].cmd_fd);
		close(apps[i].ack_fd);
		close(apps[i].pidfd);
		close(apps[i].file_fd);
	}
}

/* --- cgroups: the switch event ----------------------------------------------- */

static void cg_move(const char *group, pid_t pid)
{
	char path[512], buf[32];
	int fd, n;

	snprintf(path, sizeof(path), "%s/%s/cgroup.procs", o.cgroup, group);
	n = snprintf(buf, sizeof(buf), "%d\n", pid);
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, buf, n) != n)
		die("%s: %d: %s", path, pid, strerror(errno));
	close(fd);
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

static void evict(struct app *a)
{
	struct iovec iov[NR_KINDS];
	int k, err;

	for (k = 0; k < NR_KINDS; k++) {
		iov[k].iov_base = (void *)a->base[k];
		iov[k].iov_len = a->npages[k] * page_size;
	}
	madvise_ranges(a, iov, NR_KINDS, MADV_PAGEOUT);
	err = posix_fadvise(a->file_fd, 0, 0, POSIX_FADV_DONTNEED);
	if (err)
		die("app %d: fadvise(DONTNEED): %s", a->idx, strerror(err));
}

/* --- the peer: prefetch everything last touched -------------------------------- */

struct peer {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct app *app;			/* the job: this app ... */
	int round;				/* ... its footprint of this round */
	int gen, done[NR_KINDS];
	long pages[NR_KINDS];			/* pages asked for */
	long long ns[NR_KINDS];
	struct iovec *iov;			/* anon thread's buffer */
};

static struct peer peer = {
	.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
};

/* Runs of used chunks of @kind as (page offset, pages); returns pages. */
static long peer_runs(struct app *a, int kind, int round,
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

	peer.iov[*cnt].iov_base = (void *)(a->base[K_ANON] + pg * page_size);
	peer.iov[*cnt].iov_len = n * page_size;
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

static void *peer_thread(void *arg)
{
	int kind = (int)(long)arg, seen = 0;

	for (;;) {
		struct app *a;
		long long t0;
		long pages;
		int round, cnt = 0;

		pthread_mutex_lock(&peer.lock);
		while (peer.gen == seen)
			pthread_cond_wait(&peer.cond, &peer.lock);
		seen = peer.gen;
		a = peer.app;
		round = peer.round;
		pthread_mutex_unlock(&peer.lock);
		if (!a)
			return NULL;

		t0 = now_ns();
		if (kind == K_ANON) {
			pages = peer_runs(a, K_ANON, round, emit_iov, &cnt);
			madvise_ranges(a, peer.iov, cnt, MADV_WILLNEED);
		} else {
			pages = peer_runs(a, K_FILE, round, emit_fadvise, NULL);
		}
		pthread_mutex_lock(&peer.lock);
		peer.pages[kind] = pages;
		peer.ns[kind] = now_ns() - t0;
		peer.done[kind] = seen;
		pthread_cond_broadcast(&peer.cond);
		pthread_mutex_unlock(&peer.lock);
	}
}

static void peer_kick(struct app *a, int round)
{
	pthread_mutex_lock(&peer.lock);
	peer.app = a;
	peer.round = round;
	peer.gen++;
	pthread_cond_broadcast(&peer.cond);
	pthread_mutex_unlock(&peer.lock);
}

static void peer_wait(void)
{
	pthread_mutex_lock(&peer.lock);
	while (peer.done[K_ANON] != peer.gen || peer.done[K_FILE] != peer.gen)
		pthread_cond_wait(&peer.cond, &peer.lock);
	pthread_mutex_unlock(&peer.lock);
}

/* Strategy precision/recall of the peer: chunks of @prev against @round. */
static void peer_score(struct app *a, int prev, int round, long *asked,
		       long *hits)
{
	int k;

	for (k = 0; k < NR_KINDS; k++) {
		long c, n = nchunks(a->npages[k]);

		asked[k] = 0;
		hits[k] = 0;
		if (prev < 0)
			continue;
		for (c = 0; c < n; c++) {
			if (!chunk_used(a->idx, k, c, prev))
				continue;
			asked[k] += chunk_len(a->npages[k], c);
			if (chunk_used(a->idx, k, c, round))
				hits[k] += chunk_len(a->npages[k], c);
		}
	}
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
			printf("CSV,asapstat,%s,%d,%s,%lld\n", o.label, a->idx,
			       key, (long long)(v - a->stat_val[i]));
	}
	if (pclose(p))
		die("%s failed (is asap-prefetch.ko loaded?)", cmd);
}

/* --- one switch ----------------------------------------------------------------- */

static void do_switch(struct app *a, int round, bool measured)
{
	struct sample s0, s1, s2;
	struct reply t, st, ev, se;
	long asked[NR_KINDS], hits[NR_KINDS];
	long long peer_ns[NR_KINDS] = { 0, 0 };
	int prev = a->last_round;

	sample(&s0);
	cg_move("bg", getpid());
	cg_move("top-app", a->pid);
	if (o.mode == MODE_PEER && prev >= 0)
		peer_kick(a, prev);
	if (o.lead_ms)
		sleep_ms(o.lead_ms);
	app_call(a, OP_TOUCH, round, &t);
	sample(&s1);
	if (o.mode == MODE_PEER && prev >= 0) {
		peer_wait();
		peer_ns[K_ANON] = peer.ns[K_ANON];
		peer_ns[K_FILE] = peer.ns[K_FILE];
	}
	if (o.dwell_ms)
		sleep_ms(o.dwell_ms);
	sample(&s2);
	cg_move("bg", a->pid);
	cg_move("top-app", getpid());
	a->last_round = round;
	app_call(a, OP_STAT, 0, &st);
	memset(&ev, 0, sizeof(ev));
	memset(&se, 0, sizeof(se));
	if (o.mode != MODE_IDEAL) {
		evict(a);
		app_call(a, OP_SETTLE, 0, &se);
		app_call(a, OP_STAT, 0, &ev);
	}
	if (t.bad)
		die("app %d: %ld pages with a wrong pattern after round %d",
		    a->idx, t.bad, round);
	if (!measured)
		return;
	peer_score(a, o.mode == MODE_PEER ? prev : -1, round, asked, hits);
	printf("CSV,switch,%s,%d,%d,%lld,%lld,%ld,%ld,%ld,%ld,%ld,"
	       "%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,"
	       "%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%lld,%lld,%lld,%ld\n",
	       o.label, a->idx, round,
	       (s1.ns - s0.ns) / 1000, t.touch_ns / 1000,
	       t.pages[K_ANON], t.pages[K_FILE], t.bad, t.majflt, t.minflt,
	       (s1.busy - s0.busy), (s1.total - s0.total),
	       (s2.busy - s0.busy), (s2.total - s0.total),
	       (s1.disk_sect - s0.disk_sect) * 512, (s2.disk_sect - s0.disk_sect) * 512,
	       (s1.swap_sect - s0.swap_sect) * 512, (s2.swap_sect - s0.swap_sect) * 512,
	       st.extra[K_ANON], st.extra[K_FILE],
	       ev.resident[K_ANON], ev.resident[K_FILE],
	       asked[K_ANON], hits[K_ANON], asked[K_FILE], hits[K_FILE],
	       (s2.ns - s0.ns) / 1000, peer_ns[K_ANON] / 1000, peer_ns[K_FILE] / 1000,
	       se.extra[K_ANON]);
	fflush(stdout);
}

static void print_header(void)
{
	printf("CSV,params,%s,mode=%d apps=%d warmup=%d first=%d rounds=%d anon_mb=%d-%d file_mb=%d-%d chunk_pages=%d stable_pct=%d vary_pct=%d dwell_ms=%d lead_ms=%d seed=%lu\n",
	       o.label, o.mode, o.apps, o.warmup, o.first, o.rounds,
	       o.anon_min, o.anon_max, o.file_min, o.file_max, o.chunk_pages,
	       o.stable_pct, o.vary_pct, o.dwell_ms, o.lead_ms, o.seed);
	printf("CSV,columns,switch,label,app,round,switch_us,touch_us,anon_pages,file_pages,bad,majflt,minflt,cpu_busy_ticks,cpu_ticks,cpu_busy_ticks_dwell,cpu_ticks_dwell,disk_rd_bytes,disk_rd_bytes_dwell,swap_rd_bytes,swap_rd_bytes_dwell,extra_anon,extra_file,left_anon,left_file,peer_anon_asked,peer_anon_hits,peer_file_asked,peer_file_hits,dwell_us,peer_anon_us,peer_file_us,settled_anon\n");
}

/* --- command line ------------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: switchbench --mode ideal|demand|peer|asap [options]\n"
		"  --label NAME        name of the mode in the output (default: the mode)\n"
		"  --apps N            apps switched round robin (8, at most %d)\n"
		"  --warmup W          warm-up rounds before the measured ones (1)\n"
		"  --first R           index of the first measured round (10); the\n"
		"                      footprint of a round depends on its index only\n"
		"  --rounds M          measured rounds (5)\n"
		"  --anon-mb MIN-MAX   anonymous region sizes, spread over the apps (8-16)\n"
		"  --file-mb MIN-MAX   file sizes (4-8)\n"
		"  --chunk-pages N     footprint granularity in pages (16)\n"
		"  --stable-pct P      chunks used at every switch, %% of a region (60)\n"
		"  --vary-pct P        chunks drawn anew at each switch, %% of a region (15)\n"
		"  --dwell-ms MS       time in front after the touch (100)\n"
		"  --lead-ms MS        delay between the switch event and the app (0)\n"
		"  --seed S            footprint hash seed (1)\n"
		"  --dir DIR           where the app files are made (/mnt/data)\n"
		"  --cgroup DIR        cgroup2 mount with top-app/ and bg/ (/sys/fs/cgroup)\n"
		"  --disk DEV          block device of DIR, for bytes read (vdb)\n"
		"  --swapdev DEV       swap block device (zram0)\n"
		"  --asap-stats        print asap-prefetch.ko counters of the measured rounds\n"
		"modes: ideal (no eviction), demand (evicted, demand paging), peer (evicted,\n"
		"prefetch what the app touched at its previous switch), asap (evicted, the\n"
		"module loaded by the caller does the prepaging).\n", MAX_APPS);
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

static void parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "mode", 1, 0, 'm' }, { "label", 1, 0, 'l' },
		{ "apps", 1, 0, 'a' }, { "warmup", 1, 0, 'w' },
		{ "first", 1, 0, 'f' }, { "rounds", 1, 0, 'r' },
		{ "anon-mb", 1, 0, 'A' }, { "file-mb", 1, 0, 'F' },
		{ "chunk-pages", 1, 0, 'c' }, { "stable-pct", 1, 0, 's' },
		{ "vary-pct", 1, 0, 'v' }, { "dwell-ms", 1, 0, 'd' },
		{ "lead-ms", 1, 0, 'L' }, { "seed", 1, 0, 'S' },
		{ "dir", 1, 0, 'D' }, { "cgroup", 1, 0, 'g' },
		{ "disk", 1, 0, 'k' }, { "swapdev", 1, 0, 'z' },
		{ "asap-stats", 0, 0, 'T' }, { "help", 0, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	int c, bad = 0, seed;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (!strcmp(optarg, "ideal"))
				o.mode = MODE_IDEAL;
			else if (!strcmp(optarg, "demand"))
				o.mode = MODE_DEMAND;
			else if (!strcmp(optarg, "peer"))
				o.mode = MODE_PEER;
			else if (!strcmp(optarg, "asap"))
				o.mode = MODE_ASAP;
			else
				bad = 1;
			if (!o.label)
				o.label = optarg;
			break;
		case 'l':
			bad |= !*optarg || strchr(optarg, ',') != NULL;
			o.label = optarg;
			break;
		case 'a': bad |= number(optarg, 1, MAX_APPS, &o.apps); break;
		case 'w': bad |= number(optarg, 0, 1000, &o.warmup); break;
		case 'f': bad |= number(optarg, 0, 100000, &o.first); break;
		case 'r': bad |= number(optarg, 1, 1000, &o.rounds); break;
		case 'A': bad |= range(optarg, &o.anon_min, &o.anon_max); break;
		case 'F': bad |= range(optarg, &o.file_min, &o.file_max); break;
		case 'c': bad |= number(optarg, 1, 4096, &o.chunk_pages); break;
		case 's': bad |= number(optarg, 0, 99, &o.stable_pct); break;
		case 'v': bad |= number(optarg, 0, 100, &o.vary_pct); break;
		case 'd': bad |= number(optarg, 0, 60000, &o.dwell_ms); break;
		case 'L': bad |= number(optarg, 0, 60000, &o.lead_ms); break;
		case 'S': bad |= number(optarg, 0, 1 << 30, &seed); o.seed = seed; break;
		case 'D': o.dir = optarg; break;
		case 'g': o.cgroup = optarg; break;
		case 'k': bad |= !*optarg || strchr(optarg, '/') != NULL; o.disk = optarg; break;
		case 'z': bad |= !*optarg || strchr(optarg, '/') != NULL; o.swapdev = optarg; break;
		case 'T': o.asap_stats = true; break;
		case 'h': usage(stdout); exit(0);
		default: bad = 1; break;
		}
	}
	if (o.stable_pct + o.vary_pct > 100) {
		fprintf(stderr, "switchbench: --stable-pct + --vary-pct must be <= 100\n");
		bad = 1;
	}
	if (o.warmup > o.first) {
		fprintf(stderr, "switchbench: --warmup must be <= --first\n");
		bad = 1;
	}
	if (bad || optind != argc || !o.label) {
		usage(stderr);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	pthread_t th[NR_KINDS];
	long cnt = 0;
	int round, i, k;

	parse(argc, argv);
	page_size = sysconf(_SC_PAGESIZE);
	setvbuf(stdout, NULL, _IOLBF, 0);
	print_header();
	start_apps();
	for (i = 0; i < o.apps; i++)
		cnt = apps[i].npages[K_ANON] > cnt ? apps[i].npages[K_ANON] : cnt;
	peer.iov = calloc(nchunks(cnt) + 1, sizeof(*peer.iov));
	if (!peer.iov)
		die("out of memory");
	if (o.mode == MODE_PEER)
		for (k = 0; k < NR_KINDS; k++)
			if (pthread_create(&th[k], NULL, peer_thread, (void *)(long)k))
				die("pthread_create failed");
	/* The launcher is in front; every app starts in the background. */
	cg_move("top-app", getpid());
	for (i = 0; i < o.apps; i++) {
		cg_move("bg", apps[i].pid);
		if (o.mode != MODE_IDEAL)
			evict(&apps[i]);
	}
	for (round = o.first - o.warmup; round < o.first + o.rounds; round++) {
		bool measured = round >= o.first;

		if (round == o.first && o.asap_stats)
			for (i = 0; i < o.apps; i++)
				asap_read_stats(&apps[i], true);
		for (i = 0; i < o.apps; i++)
			do_switch(&apps[i], round, measured);
	}
	if (o.asap_stats)
		for (i = 0; i < o.apps; i++)
			asap_read_stats(&apps[i], false);
	if (o.mode == MODE_PEER) {
		peer_kick(NULL, 0);
		for (k = 0; k < NR_KINDS; k++)
			pthread_join(th[k], NULL);
	}
	stop_apps();
	cg_move("bg", getpid());
	printf("CSV,done,%s\n", o.label);
	return 0;
}
