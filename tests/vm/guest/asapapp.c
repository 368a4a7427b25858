// SPDX-License-Identifier: GPL-2.0-only
/*
 * asapapp: a synthetic app for the ASAP tests, with an anonymous working
 * set and a file-backed mapping, driven through two FIFOs.
 *
 *	asapapp ANON_MB FILE CMD_FIFO ACK_FIFO
 *
 * It maps ANON_MB MiB of anonymous memory (no huge pages), fills every page
 * with a pattern of its index, maps FILE read-only, then reads one-letter
 * commands from CMD_FIFO and answers each with one line on ACK_FIFO:
 *
 *   r  "resident anon=A file=F"            pages resident now (mincore)
 *   p  "paged anon=A file=F"               MADV_PAGEOUT both mappings, then
 *                                          what is still resident
 *   t  "touched anon=A file=F bad=B ms=M anon_us=U file_us=V"
 *                                          what was resident before, then
 *                                          read every page of both; B pages
 *                                          whose pattern was wrong, M ms in
 *                                          all, U and V us for each mapping
 *   h  the same for the first half of each mapping only
 *   T  "twin anon=A bad=B ms=M"             two threads read every anon page,
 *                                          in the same order from the same
 *                                          moment (the same page's faults
 *                                          race); A resident before, B wrong
 *                                          patterns seen by either thread
 *   m  "mmaploop max_us=X avg_us=A count=N call_max_us=C"
 *                                          a second thread maps and unmaps
 *                                          one anonymous page in a loop for
 *                                          MMAP_LOOP_MS; X is the longest
 *                                          mmap+munmap pair, N the pairs,
 *                                          C the longest single call
 *   x  exec this program anew (same pid, arguments and FIFOs): a new mm
 *      with new mappings; the answer is the new image's "ready" line
 *   q  "bye", and exit
 *
 * The first line on ACK_FIFO is "ready pid=P anon_pages=N file_pages=M
 * execs=E" (E: how many times 'x' replaced the image).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT	21
#endif

#define MMAP_LOOP_MS	2000

static long page;

static unsigned long resident(void *addr, size_t len)
{
	size_t n = (len + page - 1) / page, i;
	unsigned char *vec = malloc(n);
	unsigned long r = 0;

	if (!vec || mincore(addr, len, vec)) {
		perror("asapapp: mincore");
		exit(1);
	}
	for (i = 0; i < n; i++)
		r += vec[i] & 1;
	free(vec);
	return r;
}

static long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

struct mmap_loop {
	long max_us;
	long call_max_us;
	long sum_us;
	long count;
	int err;
};

/* Map and unmap one page until MMAP_LOOP_MS have passed: each pair takes
 * the mmap lock for writing twice. */
static void *mmap_loop_fn(void *arg)
{
	struct mmap_loop *ml = arg;
	long end = now_us() + MMAP_LOOP_MS * 1000L, t0, t1, dt;
	void *p;

	while ((t0 = now_us()) < end) {
		p = mmap(NULL, page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		t1 = now_us();
		if (p == MAP_FAILED || munmap(p, page)) {
			ml->err = errno;
			break;
		}
		dt = now_us() - t0;
		if (t1 - t0 > ml->call_max_us)
			ml->call_max_us = t1 - t0;
		if (dt - (t1 - t0) > ml->call_max_us)
			ml->call_max_us = dt - (t1 - t0);
		if (dt > ml->max_us)
			ml->max_us = dt;
		ml->sum_us += dt;
		ml->count++;
	}
	return NULL;
}

struct twin {
	pthread_barrier_t *start;
	const unsigned char *anon;
	size_t len;
	unsigned long bad;
};

/* Read every anon page once, after the other thread is ready too. */
static void *twin_fn(void *arg)
{
	struct twin *t = arg;
	size_t i;

	pthread_barrier_wait(t->start);
	for (i = 0; i < t->len; i += page)
		if (*(const volatile uint64_t *)(t->anon + i) !=
		    (i / page ^ 0x5a5a5a5aUL))
			t->bad++;
	return NULL;
}

/*
 * Two threads of twin_fn(): 0 with their wrong patterns in @bad, or the
 * pthread error that kept the second from starting.
 */
static int twin_touch(const unsigned char *anon, size_t len,
		      unsigned long *bad)
{
	struct twin t[2] = { { .anon = anon, .len = len },
			     { .anon = anon, .len = len } };
	pthread_barrier_t start;
	pthread_t th;
	int err;

	err = pthread_barrier_init(&start, NULL, 2);
	if (err)
		return err;
	t[0].start = t[1].start = &start;
	err = pthread_create(&th, NULL, twin_fn, &t[1]);
	if (!err) {
		twin_fn(&t[0]);
		pthread_join(th, NULL);
		*bad = t[0].bad + t[1].bad;
	}
	pthread_barrier_destroy(&start);
	return err;
}

int main(int argc, char **argv)
{
	size_t anon_len, file_len, i;
	unsigned char *anon, *file;
	volatile unsigned long sink = 0;
	struct mmap_loop ml;
	const char *gen = getenv("ASAPAPP_EXECS");
	char genbuf[24];
	struct stat st;
	pthread_t th;
	int fd, cmd, ack, err;
	FILE *out;
	char c;

	if (argc != 5) {
		fprintf(stderr, "usage: asapapp ANON_MB FILE CMD_FIFO ACK_FIFO\n");
		return 2;
	}
	page = sysconf(_SC_PAGESIZE);
	anon_len = strtoul(argv[1], NULL, 0) << 20;
	fd = open(argv[2], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) || !st.st_size || !anon_len) {
		fprintf(stderr, "asapapp: %s: need a non-empty file and ANON_MB > 0\n",
			argv[2]);
		return 1;
	}
	file_len = st.st_size;
	anon = mmap(NULL, anon_len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	file = mmap(NULL, file_len, PROT_READ, MAP_SHARED, fd, 0);
	if (anon == MAP_FAILED || file == MAP_FAILED) {
		perror("asapapp: mmap");
		return 1;
	}
	madvise(anon, anon_len, MADV_NOHUGEPAGE);
	for (i = 0; i < anon_len; i += page)
		*(uint64_t *)(anon + i) = i / page ^ 0x5a5a5a5aUL;

	cmd = open(argv[3], O_RDWR);
	ack = open(argv[4], O_RDWR);
	out = ack < 0 ? NULL : fdopen(ack, "w");
	if (cmd < 0 || !out) {
		perror("asapapp: fifo");
		return 1;
	}
	setvbuf(out, NULL, _IOLBF, 0);
	fprintf(out, "ready pid=%d anon_pages=%zu file_pages=%zu execs=%s\n",
		getpid(), anon_len / page, (file_len + page - 1) / page,
		gen ? gen : "0");

	while (read(cmd, &c, 1) == 1) {
		unsigned long ra, rf, bad = 0;
		long t0, t1, t2;

		switch (c) {
		case 'r':
			fprintf(out, "resident anon=%lu file=%lu\n",
				resident(anon, anon_len),
				resident(file, file_len));
			break;
		case 'p':
			if (madvise(anon, anon_len, MADV_PAGEOUT) ||
			    madvise(file, file_len, MADV_PAGEOUT))
				fprintf(out, "error madvise %s\n",
					strerror(errno));
			else
				fprintf(out, "paged anon=%lu file=%lu\n",
					resident(anon, anon_len),
					resident(file, file_len));
			break;
		case 't':
		case 'h':
			ra = resident(anon, anon_len);
			rf = resident(file, file_len);
			t0 = now_us();
			for (i = 0; i < (c == 'h' ? anon_len / 2 : anon_len);
			     i += page)
				if (*(uint64_t *)(anon + i) !=
				    (i / page ^ 0x5a5a5a5aUL))
					bad++;
			t1 = now_us();
			for (i = 0; i < (c == 'h' ? file_len / 2 : file_len);
			     i += page)
				sink += file[i];
			t2 = now_us();
			fprintf(out, "touched anon=%lu file=%lu bad=%lu ms=%ld anon_us=%ld file_us=%ld\n",
				ra, rf, bad, (t2 - t0) / 1000, t1 - t0, t2 - t1);
			break;
		case 'T':
			ra = resident(anon, anon_len);
			t0 = now_us();
			err = twin_touch(anon, anon_len, &bad);
			if (err)
				fprintf(out, "error twin %s\n", strerror(err));
			else
				fprintf(out, "twin anon=%lu bad=%lu ms=%ld\n", ra,
					bad, (now_us() - t0) / 1000);
			break;
		case 'm':
			memset(&ml, 0, sizeof(ml));
			if (pthread_create(&th, NULL, mmap_loop_fn, &ml) ||
			    pthread_join(th, NULL))
				ml.err = EAGAIN;
			if (ml.err)
				fprintf(out, "error mmaploop %s\n",
					strerror(ml.err));
			else
				fprintf(out, "mmaploop max_us=%ld avg_us=%ld count=%ld call_max_us=%ld\n",
					ml.max_us,
					ml.count ? ml.sum_us / ml.count : 0,
					ml.count, ml.call_max_us);
			break;
		case 'x':
			/*
			 * The FIFOs stay open across exec (no O_CLOEXEC): the
			 * shell waiting on ACK_FIFO never sees it without a
			 * writer, so it reads the new image's "ready" line.
			 */
			snprintf(genbuf, sizeof(genbuf), "%ld",
				 (gen ? strtol(gen, NULL, 10) : 0) + 1);
			setenv("ASAPAPP_EXECS", genbuf, 1);
			fflush(out);
			execv("/proc/self/exe", argv);
			fprintf(out, "error exec %s\n", strerror(errno));
			break;
		case 'q':
			fprintf(out, "bye\n");
			return 0;
		default:
			break;
		}
	}
	return 0;
}
