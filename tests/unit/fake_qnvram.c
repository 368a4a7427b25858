// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A stand-in for libqnvram on a host without /dev/qnvram: the public
 * functions of libqnvram/qnvram.h over files in $QNVRAM_FAKE_DIR, mapped
 * MAP_SHARED, so a region's bytes survive a SIGKILLed process exactly as
 * they survive an app kill on the device.
 *
 *   QNVRAM_FAKE_DIR=dir       regions are dir/r-<uid>-<magic>; unset or
 *                             empty: every call fails with ENODEV, as
 *                             without qnvram.ko
 *   QNVRAM_FAKE_MAX_BYTES=n   a region larger than n bytes is ENOSPC
 *   QNVRAM_FAKE_SHADOW=1      keep dir/r-...-persisted, a copy that only
 *                             qnvm_persist() writes: what a warm reboot
 *                             that drops dirty cache lines would keep
 *                             (see fake_qnvram_warm_reboot())
 *
 * As qnvram.ko does: a region mapped by another process cannot be freed
 * (EBUSY: each mapping holds a shared flock on the region's file), and a
 * uid other than the caller's effective uid is EPERM unless it is root.
 *
 * Built into the VFS unit tests, and as a libqnvram.so.1 stand-in (same
 * version script) for running the stock sqlite3 shell with the extension.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qnvram.h"

#include "fake_qnvram.h"

#define FAKE_EXPORT	__attribute__((visibility("default")))
#define FAKE_PAGE	4096UL
#define FAKE_LINE	64UL

struct fake_map {
	uint32_t uid, magic;
	void *addr;
	size_t len;
	int shadow_fd;		/* -1 without QNVRAM_FAKE_SHADOW */
	int lock_fd;		/* holds LOCK_SH while mapped */
};

static pthread_mutex_t fake_mu = PTHREAD_MUTEX_INITIALIZER;
static struct fake_map fake_maps[256];
static size_t fake_nr;
static unsigned long fake_persists;

static const char *fake_dir(void)
{
	const char *d = getenv("QNVRAM_FAKE_DIR");

	return d && *d ? d : NULL;
}

static int fake_shadow_on(void)
{
	const char *s = getenv("QNVRAM_FAKE_SHADOW");

	return s && *s == '1';
}

static void fake_path(char *buf, size_t n, uint32_t uid, uint32_t magic,
		      const char *sfx)
{
	snprintf(buf, n, "%s/r-%u-%08x%s", fake_dir(), uid, magic, sfx);
}

static void *fake_map_region(uint32_t uid, uint32_t magic, int create,
			     size_t size, int open_existing, size_t *lenp)
{
	char path[PATH_MAX], spath[PATH_MAX];
	struct stat st;
	const char *maxs = getenv("QNVRAM_FAKE_MAX_BYTES");
	void *addr;
	int fd, sfd = -1, created = 0;

	if (!fake_dir()) {
		errno = ENODEV;
		return NULL;
	}
	if (uid != geteuid() && geteuid() != 0) {
		errno = EPERM;
		return NULL;
	}
	fake_path(path, sizeof(path), uid, magic, "");
	fake_path(spath, sizeof(spath), uid, magic, "-persisted");
	if (create) {
		size = (size + FAKE_PAGE - 1) & ~(FAKE_PAGE - 1);
		if (maxs && size > strtoull(maxs, NULL, 0)) {
			errno = ENOSPC;
			return NULL;
		}
		/*
		 * Atomic, as in qnvram.ko: sized under a private name, then
		 * linked into place, so a process killed in here leaves no
		 * region of the wrong size (a stray t-* file at most).
		 */
		char tmp[PATH_MAX];

		snprintf(tmp, sizeof(tmp), "%s/t-%u-%08x.%d", fake_dir(), uid,
			 magic, (int)getpid());
		unlink(tmp);
		fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0)
			return NULL;
		if (ftruncate(fd, (off_t)size) < 0) {
			close(fd);
			unlink(tmp);
			return NULL;
		}
		if (link(tmp, path) == 0) {
			created = 1;
			unlink(tmp);
		} else {
			int err = errno;

			close(fd);
			unlink(tmp);
			if (err != EEXIST || !open_existing) {
				errno = err;
				return NULL;
			}
			fd = open(path, O_RDWR | O_CLOEXEC);
		}
	} else {
		fd = open(path, O_RDWR | O_CLOEXEC);
	}
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || st.st_size <= 0) {
		close(fd);
		errno = EIO;
		return NULL;
	}
	addr = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED, fd, 0);
	if (addr == MAP_FAILED) {
		close(fd);
		return NULL;
	}
	flock(fd, LOCK_SH);
	if (fake_shadow_on()) {
		sfd = open(spath, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (sfd >= 0 && created && ftruncate(sfd, st.st_size) < 0) {
			close(sfd);
			sfd = -1;
		}
		if (sfd >= 0 && !created) {
			struct stat sst;

			if (fstat(sfd, &sst) == 0 && sst.st_size != st.st_size &&
			    ftruncate(sfd, st.st_size) < 0) {
				close(sfd);
				sfd = -1;
			}
		}
	}
	pthread_mutex_lock(&fake_mu);
	if (fake_nr == sizeof(fake_maps) / sizeof(fake_maps[0])) {
		pthread_mutex_unlock(&fake_mu);
		munmap(addr, (size_t)st.st_size);
		if (sfd >= 0)
			close(sfd);
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	fake_maps[fake_nr++] = (struct fake_map){
		.uid = uid, .magic = magic, .addr = addr,
		.len = (size_t)st.st_size, .shadow_fd = sfd, .lock_fd = fd,
	};
	pthread_mutex_unlock(&fake_mu);
	if (lenp)
		*lenp = (size_t)st.st_size;
	return addr;
}

static void fake_drop(size_t i)
{
	munmap(fake_maps[i].addr, fake_maps[i].len);
	if (fake_maps[i].shadow_fd >= 0)
		close(fake_maps[i].shadow_fd);
	close(fake_maps[i].lock_fd);
	fake_maps[i] = fake_maps[--fake_nr];
}

FAKE_EXPORT
void *qnvm_alloc(uint32_t uid, uint32_t magic, size_t size,
		 unsigned int flags, size_t *mapped_len)
{
	if (size == 0 || (uint64_t)size > QNVM_REGION_MAX_BYTES ||
	    (flags & ~QNVM_OPEN_EXISTING)) {
		errno = EINVAL;
		return NULL;
	}
	return fake_map_region(uid, magic, 1, size,
			       !!(flags & QNVM_OPEN_EXISTING), mapped_len);
}

FAKE_EXPORT
void *qnvm_retrieve(uint32_t uid, uint32_t magic, size_t *len)
{
	return fake_map_region(uid, magic, 0, 0, 0, len);
}

FAKE_EXPORT
int qnvm_unmap(void *addr)
{
	size_t i;

	pthread_mutex_lock(&fake_mu);
	for (i = 0; i < fake_nr; i++) {
		if (fake_maps[i].addr == addr) {
			fake_drop(i);
			pthread_mutex_unlock(&fake_mu);
			return 0;
		}
	}
	pthread_mutex_unlock(&fake_mu);
	errno = EINVAL;
	return -1;
}

FAKE_EXPORT
int qnvm_free(uint32_t uid, uint32_t magic)
{
	char path[PATH_MAX], spath[PATH_MAX];
	size_t i = 0;
	int fd;

	if (!fake_dir()) {
		errno = ENODEV;
		return -1;
	}
	if (uid != geteuid() && geteuid() != 0) {
		errno = EPERM;
		return -1;
	}
	pthread_mutex_lock(&fake_mu);
	while (i < fake_nr) {
		if (fake_maps[i].uid == uid && fake_maps[i].magic == magic)
			fake_drop(i);
		else
			i++;
	}
	pthread_mutex_unlock(&fake_mu);
	fake_path(path, sizeof(path), uid, magic, "");
	fake_path(spath, sizeof(spath), uid, magic, "-persisted");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		errno = EBUSY;		/* another process maps it */
		return -1;
	}
	if (unlink(path) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	unlink(spath);
	return 0;
}

FAKE_EXPORT
int qnvm_persist(const void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr;
	size_t i;

	if (!addr && len) {
		errno = EINVAL;
		return -1;
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	pthread_mutex_lock(&fake_mu);
	fake_persists++;
	for (i = 0; i < fake_nr && len; i++) {
		struct fake_map *m = &fake_maps[i];
		uintptr_t s = (uintptr_t)m->addr, start, end;

		if (m->shadow_fd < 0 || a + len <= s || a >= s + m->len)
			continue;
		/* whole cache lines, as the hardware writes them back */
		start = (a > s ? a : s) & ~(FAKE_LINE - 1);
		if (start < s)
			start = s;
		end = (a + len + FAKE_LINE - 1) & ~(FAKE_LINE - 1);
		if (end > s + m->len)
			end = s + m->len;
		if (pwrite(m->shadow_fd, (void *)start, end - start,
			   (off_t)(start - s)) < 0)
			continue;
	}
	pthread_mutex_unlock(&fake_mu);
	return 0;
}

FAKE_EXPORT
const char *qnvm_persist_mechanism(void)
{
	return "fake";
}

FAKE_EXPORT
void *qnvmalloc(int uid, int magic, int size)
{
	if (size <= 0) {
		errno = EINVAL;
		return NULL;
	}
	return qnvm_alloc((uint32_t)uid, (uint32_t)magic, (size_t)size, 0,
			  NULL);
}

FAKE_EXPORT
void qnvmfree(int uid, int magic)
{
	if (qnvm_free((uint32_t)uid, (uint32_t)magic) == 0)
		errno = 0;
}

FAKE_EXPORT
void *qnvmretrieve(int uid, int magic, int *size)
{
	size_t len = 0;
	void *p = qnvm_retrieve((uint32_t)uid, (uint32_t)magic, &len);

	if (p && len > INT_MAX) {
		qnvm_unmap(p);
		errno = EOVERFLOW;
		return NULL;
	}
	if (p && size)
		*size = (int)len;
	return p;
}

/* --- Test helpers (not part of libqnvram) ------------------------------- */

unsigned long fake_qnvram_persist_calls(void)
{
	unsigned long n;

	pthread_mutex_lock(&fake_mu);
	n = fake_persists;
	pthread_mutex_unlock(&fake_mu);
	return n;
}

int fake_qnvram_count(void)
{
	const char *d = fake_dir();
	struct dirent *e;
	DIR *dir;
	int n = 0;

	if (!d || !(dir = opendir(d)))
		return -1;
	while ((e = readdir(dir)))
		if (!strncmp(e->d_name, "r-", 2) && !strstr(e->d_name, "-persisted"))
			n++;
	closedir(dir);
	return n;
}

/*
 * Every region in $QNVRAM_FAKE_DIR loses each cache line that was stored
 * but not persisted with probability @pct/100 (the line reverts to its
 * last persisted bytes), as a warm reboot on a CPU that drops dirty lines
 * would do. No process may have the regions mapped. Return the number of
 * lines that reverted, or -1.
 */
long fake_qnvram_warm_reboot(unsigned int pct, unsigned int seed)
{
	const char *d = fake_dir();
	struct dirent *e;
	DIR *dir;
	long lost = 0;

	if (!d || !(dir = opendir(d)))
		return -1;
	while ((e = readdir(dir))) {
		char path[PATH_MAX], spath[PATH_MAX];
		unsigned char a[FAKE_LINE], b[FAKE_LINE];
		int fd, sfd;
		off_t off;

		if (strncmp(e->d_name, "r-", 2) || strstr(e->d_name, "-persisted"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", d, e->d_name);
		snprintf(spath, sizeof(spath), "%s/%s-persisted", d, e->d_name);
		fd = open(path, O_RDWR);
		sfd = open(spath, O_RDONLY);
		if (fd < 0 || sfd < 0) {
			if (fd >= 0)
				close(fd);
			if (sfd >= 0)
				close(sfd);
			continue;
		}
		for (off = 0;; off += FAKE_LINE) {
			ssize_t n = pread(fd, a, sizeof(a), off);

			if (n <= 0)
				break;
			if (pread(sfd, b, (size_t)n, off) != n)
				memset(b, 0, (size_t)n);
			if (!memcmp(a, b, (size_t)n))
				continue;
			if ((unsigned int)rand_r(&seed) % 100 < pct) {
				if (pwrite(fd, b, (size_t)n, off) == n)
					lost++;
			}
		}
		close(fd);
		close(sfd);
	}
	closedir(dir);
	return lost;
}
