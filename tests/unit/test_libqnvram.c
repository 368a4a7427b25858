// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Host tests of libqnvram's own logic: argument checks, errno mapping, the
 * table of mappings that qnvm_unmap() and qnvm_free() rely on, and the
 * persist barrier on this CPU. /dev/qnvram is replaced by a fake device
 * (open, ioctl, mmap, munmap, close) that keeps regions by (uid, magic),
 * rounds sizes up to pages and refuses to free a region still mapped, as
 * the ABI in <linux/qnvram.h> says qnvram.ko does.
 *
 * Build: cc -Iinclude/uapi -Ilibqnvram tests/unit/test_libqnvram.c \
 *	-lcmocka -lpthread
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include <linux/qnvram.h>

/* --- The fake device ----------------------------------------------------- */

#define FAKE_PAGE	4096UL
#define FAKE_REGIONS	64
#define FAKE_FILES	64
#define FAKE_MAPS	256
#define FAKE_FD_BASE	1000	/* fake fds never collide with real ones */

struct fake_region {
	bool used;
	uint32_t uid, magic;
	uint64_t size;
	int binds;		/* open files and mappings holding it */
};

static struct {
	pthread_mutex_t lock;
	bool missing;				/* no /dev/qnvram */
	uint32_t euid;				/* caller's uid, no CAP_SYS_ADMIN */
	struct fake_region regions[FAKE_REGIONS];
	int file_region[FAKE_FILES];		/* -1 unbound, -2 closed */
	struct { void *addr; size_t len; int region; } maps[FAKE_MAPS];
	int opens, munmaps;
} fake = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void fake_reset(void)
{
	int i;

	pthread_mutex_lock(&fake.lock);
	memset(fake.regions, 0, sizeof(fake.regions));
	for (i = 0; i < FAKE_FILES; i++)
		fake.file_region[i] = -2;
	memset(fake.maps, 0, sizeof(fake.maps));
	fake.missing = false;
	fake.euid = 1000;
	fake.opens = fake.munmaps = 0;
	pthread_mutex_unlock(&fake.lock);
}

static int fake_find(uint32_t uid, uint32_t magic)
{
	int i;

	for (i = 0; i < FAKE_REGIONS; i++)
		if (fake.regions[i].used && fake.regions[i].uid == uid &&
		    fake.regions[i].magic == magic)
			return i;
	return -1;
}

static int fake_open(const char *path, int flags, ...)
{
	int i, ret = -1;

	if (strcmp(path, QNVRAM_DEV_PATH) != 0 || !(flags & O_RDWR)) {
		errno = EACCES;
		return -1;
	}
	pthread_mutex_lock(&fake.lock);
	fake.opens++;
	if (fake.missing) {
		errno = ENOENT;
		goto out;
	}
	for (i = 0; i < FAKE_FILES; i++) {
		if (fake.file_region[i] == -2) {
			fake.file_region[i] = -1;
			ret = FAKE_FD_BASE + i;
			goto out;
		}
	}
	errno = EMFILE;
out:
	pthread_mutex_unlock(&fake.lock);
	return ret;
}

static void fake_unbind(int region)
{
	if (region >= 0 && --fake.regions[region].binds == 0 &&
	    !fake.regions[region].used)
		memset(&fake.regions[region], 0, sizeof(fake.regions[0]));
}

static int fake_close(int fd)
{
	int f = fd - FAKE_FD_BASE;

	if (f < 0 || f >= FAKE_FILES)
		return close(fd);
	pthread_mutex_lock(&fake.lock);
	fake_unbind(fake.file_region[f]);
	fake.file_region[f] = -2;
	pthread_mutex_unlock(&fake.lock);
	return 0;
}

static int fake_ioctl_locked(int f, unsigned long cmd,
			     struct qnvram_region_req *req)
{
	bool created = false;
	int r, i;

	if (req->reserved[0] || req->reserved[1] ||
	    (req->flags & ~QNVRAM_REQ_ALL))
		return -EINVAL;
	if (req->uid != fake.euid)
		return -EPERM;
	r = fake_find(req->uid, req->magic);
	switch (cmd) {
	case QNVRAM_IOC_ALLOC:
		if (fake.file_region[f] != -1)
			return -EBUSY;
		if (r >= 0 && !(req->flags & QNVRAM_REQ_OPEN_EXISTING))
			return -EEXIST;
		if (r < 0) {
			if (!req->size || req->size > QNVRAM_REGION_MAX_BYTES)
				return -EINVAL;
			for (i = 0; i < FAKE_REGIONS; i++)
				if (!fake.regions[i].used &&
				    !fake.regions[i].binds)
					break;
			if (i == FAKE_REGIONS)
				return -ENOSPC;
			r = i;
			fake.regions[r] = (struct fake_region){
				.used = true, .uid = req->uid,
				.magic = req->magic,
				.size = (req->size + FAKE_PAGE - 1) &
					~(FAKE_PAGE - 1),
			};
			created = true;
		}
		break;
	case QNVRAM_IOC_RETRIEVE:
		if (fake.file_region[f] != -1)
			return -EBUSY;
		if (r < 0)
			return -ENOENT;
		break;
	case QNVRAM_IOC_FREE:
		if (r < 0)
			return -ENOENT;
		if (fake.regions[r].binds)
			return -EBUSY;
		memset(&fake.regions[r], 0, sizeof(fake.regions[0]));
		return 0;
	default:
		return -ENOTTY;
	}
	fake.file_region[f] = r;
	fake.regions[r].binds++;
	req->size = fake.regions[r].size;
	req->state = QNVRAM_STATE_RESIDENT;
	req->flags = created ? QNVRAM_REQ_CREATED : 0;
	return 0;
}

static int fake_ioctl(int fd, unsigned long cmd, ...)
{
	struct qnvram_region_req *req;
	int f = fd - FAKE_FD_BASE, ret;
	va_list ap;

	va_start(ap, cmd);
	req = va_arg(ap, struct qnvram_region_req *);
	va_end(ap);
	if (f < 0 || f >= FAKE_FILES) {
		errno = ENOTTY;
		return -1;
	}
	pthread_mutex_lock(&fake.lock);
	ret = fake_ioctl_locked(f, cmd, req);
	pthread_mutex_unlock(&fake.lock);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return 0;
}

static void *fake_mmap(void *addr, size_t len, int prot, int flags, int fd,
		       off_t off)
{
	int f = fd - FAKE_FD_BASE, r, i;
	void *p = MAP_FAILED;

	pthread_mutex_lock(&fake.lock);
	if (f < 0 || f >= FAKE_FILES || fake.file_region[f] < 0 ||
	    !(flags & MAP_SHARED)) {
		errno = EINVAL;
		goto out;
	}
	r = fake.file_region[f];
	if (off != 0 || len != fake.regions[r].size) {
		errno = EINVAL;
		goto out;
	}
	for (i = 0; i < FAKE_MAPS && fake.maps[i].addr; i++)
		;
	if (i == FAKE_MAPS) {
		errno = ENOMEM;
		goto out;
	}
	p = mmap(addr, len, prot, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		goto out;
	fake.maps[i].addr = p;
	fake.maps[i].len = len;
	fake.maps[i].region = r;
	fake.regions[r].binds++;
out:
	pthread_mutex_unlock(&fake.lock);
	return p;
}

static int fake_munmap(void *addr, size_t len)
{
	int i;

	pthread_mutex_lock(&fake.lock);
	fake.munmaps++;
	for (i = 0; i < FAKE_MAPS; i++) {
		if (fake.maps[i].addr == addr) {
			assert_int_equal(fake.maps[i].len, len);
			fake_unbind(fake.maps[i].region);
			fake.maps[i].addr = NULL;
			break;
		}
	}
	pthread_mutex_unlock(&fake.lock);
	return munmap(addr, len);
}

/* Only the library's own calls go to the fake. */
#define open	fake_open
#define close	fake_close
#define ioctl	fake_ioctl
#define mmap	fake_mmap
#define munmap	fake_munmap
#include "../../libqnvram/qnvram.c"
#undef open
#undef close
#undef ioctl
#undef mmap
#undef munmap

static int region_binds(uint32_t uid, uint32_t magic)
{
	int r = fake_find(uid, magic);

	return r < 0 ? -1 : fake.regions[r].binds;
}

static int setup(void **state)
{
	(void)state;
	fake_reset();
	return 0;
}

/* --- Tests ----------------------------------------------------------------- */

static void alloc_without_device_is_enodev(void **state)
{
	(void)state;
	fake.missing = true;
	errno = 0;
	assert_null(qnvm_alloc(1000, 1, 4096, 0, NULL));
	assert_int_equal(errno, ENODEV);
	errno = 0;
	assert_null(qnvmretrieve(1000, 1, NULL));
	assert_int_equal(errno, ENODEV);
	assert_int_equal(qnvm_free(1000, 1), -1);
	assert_int_equal(errno, ENODEV);
}

static void paper_alloc_rejects_nonpositive_size_without_opening(void **state)
{
	(void)state;
	errno = 0;
	assert_null(qnvmalloc(1000, 1, 0));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(qnvmalloc(1000, 1, -4096));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(fake.opens, 0);
}

static void alloc_rejects_bad_size_and_flags(void **state)
{
	(void)state;
	errno = 0;
	assert_null(qnvm_alloc(1000, 1, 0, 0, NULL));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(qnvm_alloc(1000, 1, (size_t)QNVM_REGION_MAX_BYTES + 1, 0,
			       NULL));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(qnvm_alloc(1000, 1, 4096, 1U << 7, NULL));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(fake.opens, 0);
}

static void alloc_maps_whole_pages_and_closes_file(void **state)
{
	size_t len = 0;
	char *p;
	int f;

	(void)state;
	p = qnvm_alloc(1000, 7, 5000, 0, &len);
	assert_non_null(p);
	assert_int_equal(len, 2 * FAKE_PAGE);
	p[0] = 1;
	p[len - 1] = 2;
	/* The file is closed; only the mapping binds the region. */
	for (f = 0; f < FAKE_FILES; f++)
		assert_int_equal(fake.file_region[f], -2);
	assert_int_equal(region_binds(1000, 7), 1);
	assert_int_equal(qnvm_unmap(p), 0);
	assert_int_equal(region_binds(1000, 7), 0);
}

static void alloc_of_existing_region_is_eexist_unless_open_existing(void **state)
{
	size_t len = 0;
	void *a, *b;

	(void)state;
	a = qnvmalloc(1000, 3, 8192);
	assert_non_null(a);
	errno = 0;
	assert_null(qnvmalloc(1000, 3, 4096));
	assert_int_equal(errno, EEXIST);
	b = qnvm_alloc(1000, 3, 4096, QNVM_OPEN_EXISTING, &len);
	assert_non_null(b);
	assert_int_equal(len, 8192);	/* the region's length, not 4096 */
	assert_int_equal(qnvm_unmap(a), 0);
	assert_int_equal(qnvm_unmap(b), 0);
}

static void other_uid_is_eperm(void **state)
{
	(void)state;
	errno = 0;
	assert_null(qnvm_alloc(0, 3, 4096, 0, NULL));
	assert_int_equal(errno, EPERM);
}

static void retrieve_of_missing_region_is_enoent(void **state)
{
	int size = -1;

	(void)state;
	errno = 0;
	assert_null(qnvmretrieve(1000, 99, &size));
	assert_int_equal(errno, ENOENT);
	assert_int_equal(size, -1);
}

static void retrieve_maps_region_and_tells_size(void **state)
{
	int size = 0;
	void *a, *b;

	(void)state;
	a = qnvmalloc(1000, 4, 100);
	assert_non_null(a);
	assert_int_equal(qnvm_unmap(a), 0);
	b = qnvmretrieve(1000, 4, &size);
	assert_non_null(b);
	assert_int_equal(size, FAKE_PAGE);
	assert_int_equal(qnvm_unmap(b), 0);
}

static void free_unmaps_every_own_mapping_first(void **state)
{
	void *a, *b, *c, *other;

	(void)state;
	a = qnvm_alloc(1000, 5, 4096, 0, NULL);
	b = qnvm_retrieve(1000, 5, NULL);
	c = qnvm_retrieve(1000, 5, NULL);
	other = qnvm_alloc(1000, 6, 4096, 0, NULL);
	assert_true(a && b && c && other);
	assert_int_equal(region_binds(1000, 5), 3);
	assert_int_equal(qnvm_free(1000, 5), 0);
	assert_int_equal(fake_find(1000, 5), -1);
	assert_int_equal(fake.munmaps, 3);
	/* The other region's mapping is untouched and still known. */
	assert_int_equal(qnvm_tab.nr, 1);
	assert_int_equal(qnvm_unmap(other), 0);
	errno = 0;
	assert_int_equal(qnvm_unmap(a), -1);
	assert_int_equal(errno, EINVAL);
}

static void free_of_region_mapped_elsewhere_is_ebusy(void **state)
{
	void *a;
	int r;

	(void)state;
	a = qnvm_alloc(1000, 8, 4096, 0, NULL);
	assert_non_null(a);
	assert_int_equal(qnvm_unmap(a), 0);
	r = fake_find(1000, 8);
	fake.regions[r].binds = 1;	/* another process's mapping */
	errno = 0;
	assert_int_equal(qnvm_free(1000, 8), -1);
	assert_int_equal(errno, EBUSY);
	fake.regions[r].binds = 0;
	assert_int_equal(qnvm_free(1000, 8), 0);
}

static void second_free_is_enoent(void **state)
{
	(void)state;
	assert_non_null(qnvm_alloc(1000, 9, 4096, 0, NULL));
	errno = EIO;
	qnvmfree(1000, 9);
	assert_int_equal(errno, 0);
	errno = 0;
	assert_int_equal(qnvm_free(1000, 9), -1);
	assert_int_equal(errno, ENOENT);
	qnvmfree(1000, 9);
	assert_int_equal(errno, ENOENT);
}

static void unmap_of_unknown_address_is_einval(void **state)
{
	int x;

	(void)state;
	errno = 0;
	assert_int_equal(qnvm_unmap(&x), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(qnvm_unmap(NULL), -1);
	assert_int_equal(errno, EINVAL);
}

static void new_mapping_replaces_stale_overlapping_entry(void **state)
{
	char *base = (char *)0x100000;

	(void)state;
	qnvm_tab_lock();
	assert_int_equal(qnvm_tab_add(1, 1, base, 3 * FAKE_PAGE), 0);
	assert_int_equal(qnvm_tab_add(1, 2, base + 8 * FAKE_PAGE, FAKE_PAGE), 0);
	/* The app munmap()ed (1, 1) itself; the kernel reuses the range. */
	assert_int_equal(qnvm_tab_add(1, 3, base + FAKE_PAGE, FAKE_PAGE), 0);
	assert_int_equal(qnvm_tab.nr, 2);
	assert_true(qnvm_tab.maps[0].magic != 1 && qnvm_tab.maps[1].magic != 1);
	qnvm_tab.nr = 0;
	qnvm_tab_unlock();
}

#define THREADS		8
#define THREAD_ROUNDS	200

static void *churn_thread(void *arg)
{
	uint32_t magic = 1000 + (uint32_t)(uintptr_t)arg;
	int i;

	for (i = 0; i < THREAD_ROUNDS; i++) {
		uint32_t *p = qnvm_alloc(1000, magic, 4096, 0, NULL);
		uint32_t *q;

		if (!p)
			return (void *)(uintptr_t)errno;
		*p = magic;
		q = qnvm_retrieve(1000, magic, NULL);
		if (!q || qnvm_unmap(p) || qnvm_free(1000, magic))
			return (void *)-1;
	}
	return NULL;
}

static void threads_alloc_and_free_concurrently(void **state)
{
	pthread_t t[THREADS];
	void *ret;
	int i;

	(void)state;
	for (i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, churn_thread,
						(void *)(uintptr_t)i), 0);
	for (i = 0; i < THREADS; i++) {
		assert_int_equal(pthread_join(t[i], &ret), 0);
		assert_null(ret);
	}
	assert_int_equal(qnvm_tab.nr, 0);
	for (i = 0; i < FAKE_REGIONS; i++)
		assert_false(fake.regions[i].used);
}

static void persist_rejects_null_with_length(void **state)
{
	(void)state;
	errno = 0;
	assert_int_equal(qnvm_persist(NULL, 1), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(qnvm_persist(NULL, 0), 0);
	errno = 0;
	assert_int_equal(qnvm_persist((void *)(UINTPTR_MAX - 10), 100), -1);
	assert_int_equal(errno, EINVAL);
}

/* Every mechanism this CPU has, on unaligned ranges and line edges. */
static void persist_runs_every_available_mechanism(void **state)
{
	static const enum qnvm_wb all[] = {
		QNVM_WB_FENCE, QNVM_WB_CLFLUSH, QNVM_WB_CLFLUSHOPT,
		QNVM_WB_CLWB, QNVM_WB_DC_CVAC,
	};
	enum qnvm_wb best;
	char *buf = malloc(4 * FAKE_PAGE);
	size_t i;

	(void)state;
	assert_non_null(buf);
	assert_non_null(qnvm_persist_mechanism());
	best = qnvm_wb;
	print_message("persist mechanism: %s, line %zu bytes\n",
		      qnvm_persist_mechanism(), qnvm_wb_line);
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		bool have = all[i] == best || all[i] == QNVM_WB_FENCE;

#if defined(__x86_64__) || defined(__i386__)
		have = all[i] <= best;	/* the x86 ones nest */
#endif
		if (!have)
			continue;
		qnvm_wb = all[i];
		memset(buf, (int)i, 4 * FAKE_PAGE);
		assert_int_equal(qnvm_persist(buf + 3, 1), 0);
		assert_int_equal(qnvm_persist(buf + 63, 2), 0);
		assert_int_equal(qnvm_persist(buf + 1, 4 * FAKE_PAGE - 1), 0);
		assert_int_equal(qnvm_persist(buf, 0), 0);
		assert_int_equal(buf[100], (char)i);
	}
	qnvm_wb = best;
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(alloc_without_device_is_enodev, setup),
		cmocka_unit_test_setup(paper_alloc_rejects_nonpositive_size_without_opening, setup),
		cmocka_unit_test_setup(alloc_rejects_bad_size_and_flags, setup),
		cmocka_unit_test_setup(alloc_maps_whole_pages_and_closes_file, setup),
		cmocka_unit_test_setup(alloc_of_existing_region_is_eexist_unless_open_existing, setup),
		cmocka_unit_test_setup(other_uid_is_eperm, setup),
		cmocka_unit_test_setup(retrieve_of_missing_region_is_enoent, setup),
		cmocka_unit_test_setup(retrieve_maps_region_and_tells_size, setup),
		cmocka_unit_test_setup(free_unmaps_every_own_mapping_first, setup),
		cmocka_unit_test_setup(free_of_region_mapped_elsewhere_is_ebusy, setup),
		cmocka_unit_test_setup(second_free_is_enoent, setup),
		cmocka_unit_test_setup(unmap_of_unknown_address_is_einval, setup),
		cmocka_unit_test_setup(new_mapping_replaces_stale_overlapping_entry, setup),
		cmocka_unit_test_setup(threads_alloc_and_free_concurrently, setup),
		cmocka_unit_test_setup(persist_rejects_null_with_length, setup),
		cmocka_unit_test_setup(persist_runs_every_available_mechanism, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
