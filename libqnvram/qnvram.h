/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libqnvram: map regions of the qNVRAM pool -- reserved DRAM that survives
 * app crashes and warm reboots and is flushed to flash when the power key is
 * held -- into an app by (uid, magic).
 *
 * Two APIs over the same regions:
 *  - the paper's, exactly as Table 2 of Luo et al., "qNVRAM: quasi
 *    Non-Volatile RAM for Low Overhead Persistency Enforcement in
 *    Smartphones" (HotStorage'14) gives it: qnvmalloc(), qnvmfree(),
 *    qnvmretrieve();
 *  - a modern one with fixed-width ids, size_t lengths, flags and an int
 *    result: qnvm_alloc(), qnvm_retrieve(), qnvm_unmap(), qnvm_free(),
 *    qnvm_persist().
 *
 * A region is named by (uid, magic): the magic is the app's name for it and
 * is unique per uid. A caller may name only its own effective uid unless it
 * has CAP_SYS_ADMIN. Region lengths are whole pages: a requested size is
 * rounded up by the kernel and the mapping covers the rounded length.
 *
 * Errors: functions returning a pointer return NULL, those returning int
 * return -1, and errno says why:
 *  ENODEV  no /dev/qnvram (qnvram.ko not loaded) or the pool is offline
 *  ENOENT  no region (uid, magic)
 *  EEXIST  region (uid, magic) exists (qnvm_alloc() without
 *          QNVM_OPEN_EXISTING)
 *  EPERM   @uid is not the caller's effective uid and the caller lacks
 *          CAP_SYS_ADMIN
 *  EACCES  /dev/qnvram cannot be opened read-write by the caller
 *  ENOSPC  the pool (or its table of regions) has no room, even after
 *          swapping out unused regions
 *  EDQUOT  the region would take @uid past its quota (qnvram.ko uid_quota)
 *  EINVAL  zero, negative or too large size, unknown flags, a uid not
 *          mapped in the caller's user namespace, or an address that is
 *          not a mapping made by this library
 *  EBUSY   qnvm_free() of a region that is still mapped by another process
 *  EIO     the backing device failed while swapping a region in
 *  ENOMEM  the process is out of memory or address space
 *
 * All functions are thread-safe. Mappings are MAP_SHARED and are inherited
 * across fork(); they keep their region bound (not freeable) until unmapped.
 *
 * Link with -lqnvram (pkg-config --cflags --libs libqnvram).
 */
#ifndef QNVRAM_H
#define QNVRAM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * qnvm_alloc() flag: if region (uid, magic) exists, map it instead of
 * failing with EEXIST. Same value as QNVRAM_REQ_OPEN_EXISTING of
 * <linux/qnvram.h>.
 */
#define QNVM_OPEN_EXISTING	(1U << 0)

/* Largest region, bytes (QNVRAM_REGION_MAX_BYTES); the pool bounds it too. */
#define QNVM_REGION_MAX_BYTES	(1ULL << 40)

/* --- The paper's API (Table 2) ------------------------------------------ */

/**
 * qnvmalloc() - create a region and map it
 * @uid: owner; the caller's effective uid unless it has CAP_SYS_ADMIN
 * @magic: the app's name for the region, unique per uid
 * @size: bytes, > 0; rounded up to whole pages
 *
 * Paper's Table 2 "allocate a memory region with size". Same as
 * qnvm_alloc(@uid, @magic, @size, 0, NULL): a region that already exists is
 * EEXIST (use qnvmretrieve() for it).
 *
 * Return: the mapping's address, or NULL with errno set (EINVAL for
 * @size <= 0; see the list at the top of this file).
 */
void *qnvmalloc(int uid, int magic, int size);

/**
 * qnvmfree() - unmap and free a region
 * @uid: owner
 * @magic: region name
 *
 * Paper's Table 2 "free a memory region". Same as qnvm_free(), whose result
 * the paper's void signature drops: check errno (set to 0 on success) or use
 * qnvm_free() to know whether the region was freed.
 */
void qnvmfree(int uid, int magic);

/**
 * qnvmretrieve() - map an existing region
 * @uid: owner
 * @magic: region name
 * @size: out: the region's length, bytes; may be NULL
 *
 * Paper's Table 2 "retrieve a memory region after a crash or reboot". Same
 * as qnvm_retrieve(). A region longer than INT_MAX bytes cannot be told
 * through @size: it is not mapped and the call fails with EOVERFLOW.
 *
 * Return: the mapping's address, or NULL with errno set.
 */
void *qnvmretrieve(int uid, int magic, int *size);

/* --- The modern API ------------------------------------------------------ */

/**
 * qnvm_alloc() - create (or open) a region and map it
 * @uid: owner; the caller's effective uid unless it has CAP_SYS_ADMIN
 * @magic: the app's name for the region, unique per uid
 * @size: bytes, 1 to QNVM_REGION_MAX_BYTES; rounded up to whole pages
 * @flags: 0 or QNVM_OPEN_EXISTING
 * @mapped_len: out: the mapping's length, bytes; may be NULL. With
 *	QNVM_OPEN_EXISTING an existing region is mapped at its own length,
 *	which may differ from @size: check it.
 *
 * A new region's bytes are zero.
 *
 * Return: the mapping's address, or NULL with errno set: EINVAL (size or
 * flags), EEXIST, EPERM, ENOSPC, EDQUOT, ENODEV, ...
 */
void *qnvm_alloc(uint32_t uid, uint32_t magic, size_t size,
		 unsigned int flags, size_t *mapped_len);

/**
 * qnvm_retrieve() - map an existing region
 * @uid: owner
 * @magic: region name
 * @len: out: the region's length, bytes; may be NULL
 *
 * A region that was swapped out to the backing device to make room in the
 * pool is read back first.
 *
 * Return: the mapping's address, or NULL with errno set: ENOENT, EPERM,
 * ENOSPC (no room to swap it in), EIO, ENODEV, ...
 */
void *qnvm_retrieve(uint32_t uid, uint32_t magic, size_t *len);

/**
 * qnvm_unmap() - unmap a region without freeing it
 * @addr: an address returned by qnvm_alloc(), qnvm_retrieve(), qnvmalloc()
 *	or qnvmretrieve() and not unmapped since
 *
 * The region and its bytes stay in the pool; qnvm_retrieve() maps it again.
 * Unmapping does not write the CPU caches back: call qnvm_persist() first
 * where a warm reboot must not lose the last stores.
 *
 * Return: 0, or -1 with errno EINVAL if @addr is not such an address.
 */
int qnvm_unmap(void *addr);

/**
 * qnvm_free() - unmap a region everywhere in this process, then free it
 * @uid: owner
 * @magic: region name
 *
 * Every mapping of (@uid, @magic) this process made through the library is
 * unmapped first (they are gone even if the free then fails); the region's
 * bytes are then released to the pool.
 *
 * Return: 0, or -1 with errno set: ENOENT, EPERM, EBUSY (another process
 * still maps it), ENODEV, ...
 */
int qnvm_free(uint32_t uid, uint32_t magic);

/**
 * qnvm_persist() - persist barrier: write stores in a range back to memory
 * @addr: start of the range; any alignment
 * @len: bytes; 0 only orders (fences) earlier stores
 *
 * Writes every cache line overlapping [@addr, @addr + @len) back from the
 * CPU caches to DRAM and waits for that, so that a warm reboot that drops
 * dirty cache lines keeps the stores made before the call. x86-64: clwb if
 * the CPU has it, else clflushopt, else clflush, per line, then sfence.
 * arm64: dc cvac per line, then dsb sy. Elsewhere: a full memory barrier.
 * Works on any memory, not only on regions.
 *
 * Return: 0, or -1 with errno EINVAL if @addr is NULL and @len > 0 or the
 * range wraps around the end of the address space.
 */
int qnvm_persist(const void *addr, size_t len);

/**
 * qnvm_persist_mechanism() - how qnvm_persist() writes lines back here
 *
 * Return: a static string: "clwb", "clflushopt", "clflush", "dc cvac" or
 * "fence".
 */
const char *qnvm_persist_mechanism(void);

#ifdef __cplusplus
}
#endif

#endif /* QNVRAM_H */
