// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libqnvram: the paper's qnvmalloc/qnvmfree/qnvmretrieve and the modern
 * qnvm_* API over /dev/qnvram (see qnvram.h for the contract).
 *
 * Mapping a region takes one open file per call: QNVRAM_IOC_ALLOC or
 * QNVRAM_IOC_RETRIEVE binds the file to the region and tells its length,
 * mmap(offset 0, that length, MAP_SHARED) maps it, and the file is closed
 * at once: the mapping holds the file, so the binding lives exactly as long
 * as the mapping does. A process-wide table of mappings (uid, magic, addr,
 * len) lets qnvm_unmap() know a mapping's length and lets qnvm_free() unmap
 * every mapping of a region before asking the kernel to free it, which the
 * kernel refuses (EBUSY) while any mapping is left.
 *
 * The persist barrier picks its cache write-back instruction once, from
 * cpuid on x86-64 (clwb > clflushopt > clflush) and is dc cvac on arm64.
 * The instructions are emitted as bytes or plain mnemonics the assembler has
 * known for a decade, so the file builds with plain gcc -O2.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/qnvram.h>

#include "qnvram.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#define QNVM_EXPORT	__attribute__((visibility("default")))

_Static_assert(QNVM_OPEN_EXISTING == QNVRAM_REQ_OPEN_EXISTING,
	       "qnvram.h flag differs from the uapi");
_Static_assert(QNVM_REGION_MAX_BYTES == QNVRAM_REGION_MAX_BYTES,
	       "qnvram.h size limit differs from the uapi");

/* Cache line assumed where the CPU does not say, bytes. */
#define QNVM_LINE_DEFAULT	64

/* --- The table of this process's mappings ------------------------------- */

/* One mapping made by this library. */
struct qnvm_map {
	uint32_t uid;
	uint32_t magic;
	void *addr;
	size_t len;
};

/*
 * All mappings made by this library and not unmapped through it. The lock
 * protects every field; it is taken around fork() so a child never inherits
 * it held.
 */
static struct {
	pthread_mutex_t lock;
	struct qnvm_map *maps;
	size_t nr;
	size_t cap;
} qnvm_tab = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

static void qnvm_tab_lock(void)
{
	pthread_mutex_lock(&qnvm_tab.lock);
}

static void qnvm_tab_unlock(void)
{
	pthread_mutex_unlock(&qnvm_tab.lock);
}

__attribute__((constructor))
static void qnvm_init_fork_safety(void)
{
	pthread_atfork(qnvm_tab_lock, qnvm_tab_unlock, qnvm_tab_unlock);
}

/* Drop entry @i; the caller holds the lock. Order is not kept. */
static void qnvm_tab_remove(size_t i)
{
	qnvm_tab.maps[i] = qnvm_tab.maps[--qnvm_tab.nr];
}

/*
 * Record a new mapping; the caller holds the lock. An entry overlapping it
 * can only be a mapping the app unmapped behind the library's back (the
 * kernel just handed these addresses out): forget it, so that qnvm_free()
 * never unmaps what now lives there.
 */
static int qnvm_tab_add(uint32_t uid, uint32_t magic, void *addr, size_t len)
{
	uintptr_t start = (uintptr_t)addr, end = start + len;
	size_t i = 0;

	while (i < qnvm_tab.nr) {
		uintptr_t s = (uintptr_t)qnvm_tab.maps[i].addr;
		uintptr_t e = s + qnvm_tab.maps[i].len;

		if (s < end && start < e)
			qnvm_tab_remove(i);
		else
			i++;
	}
	if (qnvm_tab.nr == qnvm_tab.cap) {
		size_t cap = qnvm_tab.cap ? 2 * qnvm_tab.cap : 16;
		struct qnvm_map *maps;

		maps = realloc(qnvm_tab.maps, cap * sizeof(*maps));
		if (!maps)
			return -1;
		qnvm_tab.maps = maps;
		qnvm_tab.cap = cap;
	}
	qnvm_tab.maps[qnvm_tab.nr++] = (struct qnvm_map){
		.uid = uid, .magic = magic, .addr = addr, .len = len,
	};
	return 0;
}

/* --- Talking to /dev/qnvram ---------------------------------------------- */

/* Open the device; a missing node or driver is ENODEV. */
static int qnvm_open_dev(void)
{
	int fd = open(QNVRAM_DEV_PATH, O_RDWR | O_CLOEXEC);

	if (fd < 0 && (errno == ENOENT || errno == ENXIO || errno == ENODEV))
		errno = ENODEV;
	return fd;
}

/* Run one region ioctl on @fd; a file that is no qnvram device is ENODEV. */
static int qnvm_ioctl(int fd, unsigned long cmd, struct qnvram_region_req *req)
{
	int ret;

	do {
		ret = ioctl(fd, cmd, req);
	} while (ret < 0 && errno == EINTR);
	if (ret < 0 && errno == ENOTTY)
		errno = ENODEV;
	return ret;
}

static void qnvm_close_keep_errno(int fd)
{
	int err = errno;

	close(fd);
	errno = err;
}

/*
 * Bind a fresh file to (uid, magic) with @cmd (ALLOC or RETRIEVE), map the
 * whole region and record the mapping. Return the address, or NULL with
 * errno set.
 */
static void *qnvm_map_region(unsigned long cmd, uint32_t uid, uint32_t magic,
			     uint64_t size, unsigned int flags, size_t *len)
{
	struct qnvram_region_req req = {
		.uid = uid, .magic = magic, .size = size, .flags = flags,
	};
	void *addr;
	int fd;

	fd = qnvm_open_dev();
	if (fd < 0)
		return NULL;
	if (qnvm_ioctl(fd, cmd, &req) < 0) {
		qnvm_close_keep_errno(fd);
		return NULL;
	}
	if (req.size == 0 || req.size > SIZE_MAX) {
		/* A kernel that breaks the ABI; never map a made-up length. */
		close(fd);
		errno = EIO;
		return NULL;
	}
	addr = mmap(NULL, (size_t)req.size, PROT_READ | PROT_WRITE,
		    MAP_SHARED, fd, 0);
	qnvm_close_keep_errno(fd);
	if (addr == MAP_FAILED)
		return NULL;

	qnvm_tab_lock();
	if (qnvm_tab_add(uid, magic, addr, (size_t)req.size) < 0) {
		qnvm_tab_unlock();
		munmap(addr, (size_t)req.size);
		errno = ENOMEM;
		return NULL;
	}
	qnvm_tab_unlock();
	if (len)
		*len = (size_t)req.size;
	return addr;
}

/* --- The modern API ------------------------------------------------------ */

QNVM_EXPORT
void *qnvm_alloc(uint32_t uid, uint32_t magic, size_t size,
		 unsigned int flags, size_t *mapped_len)
{
	if (size == 0 || (uint64_t)size > QNVM_REGION_MAX_BYTES ||
	    (flags & ~QNVM_OPEN_EXISTING)) {
		errno = EINVAL;
		return NULL;
	}
	return qnvm_map_region(QNVRAM_IOC_ALLOC, uid, magic, size,
			       flags & QNVM_OPEN_EXISTING ?
			       QNVRAM_REQ_OPEN_EXISTING : 0, mapped_len);
}

QNVM_EXPORT
void *qnvm_retrieve(uint32_t uid, uint32_t magic, size_t *len)
{
	return qnvm_map_region(QNVRAM_IOC_RETRIEVE, uid, magic, 0, 0, len);
}

QNVM_EXPORT
int qnvm_unmap(void *addr)
{
	size_t i;
	int ret = -1;

	qnvm_tab_lock();
	for (i = 0; i < qnvm_tab.nr; i++) {
		if (qnvm_tab.maps[i].addr != addr)
			continue;
		ret = munmap(addr, qnvm_tab.maps[i].len);
		if (ret == 0)
			qnvm_tab_remove(i);
		break;
	}
	if (i == qnvm_tab.nr)
		errno = EINVAL;
	qnvm_tab_unlock();
	return ret;
}

QNVM_EXPORT
int qnvm_free(uint32_t uid, uint32_t magic)
{
	struct qnvram_region_req req = { .uid = uid, .magic = magic };
	size_t i = 0;
	int fd, ret;

	/*
	 * Hold the table lock through the ioctl so another thread of this
	 * process cannot map the region again in between.
	 */
	qnvm_tab_lock();
	while (i < qnvm_tab.nr) {
		struct qnvm_map *m = &qnvm_tab.maps[i];

		if (m->uid == uid && m->magic == magic) {
			munmap(m->addr, m->len);
			qnvm_tab_remove(i);
		} else {
			i++;
		}
	}
	fd = qnvm_open_dev();
	if (fd < 0) {
		ret = -1;
		goto out;
	}
	ret = qnvm_ioctl(fd, QNVRAM_IOC_FREE, &req);
	qnvm_close_keep_errno(fd);
out:
	qnvm_tab_unlock();
	return ret;
}

/* --- The persist barrier ------------------------------------------------- */

/* How qnvm_persist() writes a line back, chosen once per process. */
enum qnvm_wb {
	QNVM_WB_FENCE,		/* no write-back instruction known: fence only */
	QNVM_WB_CLFLUSH,	/* x86: flush + invalidate, ordered */
	QNVM_WB_CLFLUSHOPT,	/* x86: flush + invalidate, weakly ordered */
	QNVM_WB_CLWB,		/* x86: write back, line may stay cached */
	QNVM_WB_DC_CVAC,	/* arm64: clean to the point of coherency */
};

static const char *const qnvm_wb_name[] = {
	[QNVM_WB_FENCE]		= "fence",
	[QNVM_WB_CLFLUSH]	= "clflush",
	[QNVM_WB_CLFLUSHOPT]	= "clflushopt",
	[QNVM_WB_CLWB]		= "clwb",
	[QNVM_WB_DC_CVAC]	= "dc cvac",
};

static pthread_once_t qnvm_wb_once = PTHREAD_ONCE_INIT;
static enum qnvm_wb qnvm_wb;		/* set once by qnvm_wb_detect() */
static size_t qnvm_wb_line = QNVM_LINE_DEFAULT;	/* bytes, a power of 2 */

#if defined(__x86_64__) || defined(__i386__)
static void qnvm_wb_detect(void)
{
	unsigned int eax, ebx, ecx, edx, line;

	qnvm_wb = QNVM_WB_FENCE;
	/* Leaf 1: edx bit 19 clflush; ebx[15:8] its line size, 8-byte units. */
	if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
		return;
	if (edx & (1U << 19)) {
		qnvm_wb = QNVM_WB_CLFLUSH;
		line = ((ebx >> 8) & 0xff) * 8;
		if (line && !(line & (line - 1)))
			qnvm_wb_line = line;
	}
	/* Leaf 7 subleaf 0: ebx bit 23 clflushopt, bit 24 clwb. */
	if (__get_cpuid_max(0, NULL) < 7)
		return;
	__cpuid_count(7, 0, eax, ebx, ecx, edx);
	if (ebx & (1U << 24))
		qnvm_wb = QNVM_WB_CLWB;
	else if (ebx & (1U << 23))
		qnvm_wb = QNVM_WB_CLFLUSHOPT;
}

/*
 * Encoded as bytes for assemblers that predate the mnemonics; the address
 * is pinned to rdi/edi, which the ModRM byte (mod 00, rm 111) names.
 */
static inline void qnvm_clwb(const void *p)
{
	/* 66 0f ae /6: clwb (%rdi) */
	__asm__ volatile(".byte 0x66, 0x0f, 0xae, 0x37" : : "D"(p) : "memory");
}

static inline void qnvm_clflushopt(const void *p)
{
	/* 66 0f ae /7: clflushopt (%rdi) */
	__asm__ volatile(".byte 0x66, 0x0f, 0xae, 0x3f" : : "D"(p) : "memory");
}

static inline void qnvm_clflush(const void *p)
{
	/* 0f ae /7: clflush (%rdi) */
	__asm__ volatile(".byte 0x0f, 0xae, 0x3f" : : "D"(p) : "memory");
}

static void qnvm_wb_range(uintptr_t start, uintptr_t end)
{
	uintptr_t p;

	switch (qnvm_wb) {
	case QNVM_WB_CLWB:
		for (p = start; p < end; p += qnvm_wb_line)
			qnvm_clwb((const void *)p);
		break;
	case QNVM_WB_CLFLUSHOPT:
		for (p = start; p < end; p += qnvm_wb_line)
			qnvm_clflushopt((const void *)p);
		break;
	case QNVM_WB_CLFLUSH:
		for (p = start; p < end; p += qnvm_wb_line)
			qnvm_clflush((const void *)p);
		break;
	default:
		break;
	}
	/* Orders the write-backs before any later store; a no-op cost. */
	__asm__ volatile("sfence" : : : "memory");
	if (qnvm_wb == QNVM_WB_FENCE)
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

#elif defined(__aarch64__)
static void qnvm_wb_detect(void)
{
	uint64_t ctr;

	qnvm_wb = QNVM_WB_DC_CVAC;
	/* CTR_EL0.DminLine, bits 19:16: log2 of the line in 4-byte words. */
	__asm__ volatile("mrs %0, ctr_el0" : "=r"(ctr));
	qnvm_wb_line = (size_t)4 << ((ctr >> 16) & 0xf);
}

static void qnvm_wb_range(uintptr_t start, uintptr_t end)
{
	uintptr_t p;

	for (p = start; p < end; p += qnvm_wb_line)
		__asm__ volatile("dc cvac, %0" : : "r"(p) : "memory");
	__asm__ volatile("dsb sy" : : : "memory");
}

#else
static void qnvm_wb_detect(void)
{
	qnvm_wb = QNVM_WB_FENCE;
}

static void qnvm_wb_range(uintptr_t start, uintptr_t end)
{
	(void)start;
	(void)end;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}
#endif

QNVM_EXPORT
int qnvm_persist(const void *addr, size_t len)
{
	uintptr_t start = (uintptr_t)addr;

	if ((!addr && len) || len > UINTPTR_MAX - start) {
		errno = EINVAL;
		return -1;
	}
	pthread_once(&qnvm_wb_once, qnvm_wb_detect);
	if (!len) {
		qnvm_wb_range(0, 0);
		return 0;
	}
	qnvm_wb_range(start & ~(uintptr_t)(qnvm_wb_line - 1), start + len);
	return 0;
}

QNVM_EXPORT
const char *qnvm_persist_mechanism(void)
{
	pthread_once(&qnvm_wb_once, qnvm_wb_detect);
	return qnvm_wb_name[qnvm_wb];
}

/* --- The paper's API (Table 2) ------------------------------------------- */

QNVM_EXPORT
void *qnvmalloc(int uid, int magic, int size)
{
	if (size <= 0) {
		errno = EINVAL;
		return NULL;
	}
	return qnvm_alloc((uint32_t)uid, (uint32_t)magic, (size_t)size, 0,
			  NULL);
}

QNVM_EXPORT
void qnvmfree(int uid, int magic)
{
	if (qnvm_free((uint32_t)uid, (uint32_t)magic) == 0)
		errno = 0;
}

QNVM_EXPORT
void *qnvmretrieve(int uid, int magic, int *size)
{
	size_t len;
	void *addr;

	addr = qnvm_retrieve((uint32_t)uid, (uint32_t)magic, &len);
	if (!addr)
		return NULL;
	if (len > INT_MAX) {
		qnvm_unmap(addr);
		errno = EOVERFLOW;
		return NULL;
	}
	if (size)
		*size = (int)len;
	return addr;
}
