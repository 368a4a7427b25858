/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * qNVRAM: a pool of reserved DRAM that apps map by (uid, magic) and that
 * survives app crashes and warm reboots, and is flushed to flash when the
 * power key is held (Luo et al., "qNVRAM: quasi Non-Volatile RAM for Low
 * Overhead Persistency Enforcement in Smartphones", HotStorage'14).
 *
 * Two interfaces:
 *  - /dev/qnvram: an open file is bound to at most one region with
 *    QNVRAM_IOC_ALLOC or QNVRAM_IOC_RETRIEVE; mmap(MAP_SHARED) of the file
 *    then maps that region: offset 0 is the region's first byte, and any
 *    page-aligned part of it may be mapped (past its end: -EINVAL; private
 *    mappings: -EINVAL; an unbound file: -EBADFD). Binding the region to the file is why these
 *    two are ioctls: the region cannot be freed, swapped out or replaced
 *    between the lookup and the mmap, and no pool offset leaks to the app.
 *  - the "qnvram" generic netlink family (see <linux/mobio.h>): list,
 *    stats, free, retrieve (for inspection) and flush.
 *
 * A region belongs to a uid. A caller may name only its own effective uid
 * unless it has CAP_SYS_ADMIN (in the initial user namespace); another
 * uid's region is -EPERM. Who the caller is:
 *  - on /dev/qnvram, both the file's opener and the task issuing the ioctl
 *    (a file passed to another process grants neither more); the uid in
 *    struct qnvram_region_req is in the opener's user namespace;
 *  - on the netlink family, the opener of the netlink socket (its
 *    credentials, never the task that happens to read a dump); MOBIO_A_UID,
 *    in requests, replies and events, is in the initial user namespace.
 * Without CAP_SYS_ADMIN a uid may hold at most uid_regions regions and
 * uid_quota bytes (module parameters, on by default; -EDQUOT past them).
 */
#ifndef _UAPI_LINUX_QNVRAM_H
#define _UAPI_LINUX_QNVRAM_H

#include <linux/types.h>
#include <linux/ioctl.h>
#include <linux/mobio.h>

#define QNVRAM_GENL_NAME	"qnvram"
#define QNVRAM_DEV_PATH		"/dev/qnvram"

/* Largest region, bytes; the pool size bounds it further. */
#define QNVRAM_REGION_MAX_BYTES	(1ULL << 40)

/**
 * enum qnvram_region_state - where a region's bytes are
 * @QNVRAM_STATE_RESIDENT: in the pool, mappable
 * @QNVRAM_STATE_SWAPPED: written to the backing device to make room in the
 *	pool; QNVRAM_IOC_RETRIEVE brings it back
 */
enum qnvram_region_state {
	QNVRAM_STATE_RESIDENT = 1,
	QNVRAM_STATE_SWAPPED = 2,
};

/**
 * struct qnvram_region_req - argument of the region ioctls
 * @uid: owner, in the opener's user namespace; must be the caller's euid
 *	unless it has CAP_SYS_ADMIN
 * @magic: the app's name for the region, unique per uid
 * @size: bytes; in (ALLOC): requested length, rounded up to pages;
 *	out: the region's length
 * @flags: in: QNVRAM_REQ_OPEN_EXISTING or 0; out: QNVRAM_REQ_CREATED when
 *	this ALLOC created the region, 0 when it bound an existing one (and
 *	for RETRIEVE)
 * @state: enum qnvram_region_state (out)
 * @reserved: must be zero
 */
struct qnvram_region_req {
	__u32 uid;
	__u32 magic;
	__u64 size;
	__u32 flags;
	__u32 state;
	__u64 reserved[2];
};

/*
 * ALLOC: if the region exists, bind it instead of failing with -EEXIST.
 * RETRIEVE takes no flags; FREE takes no flags and size 0.
 */
#define QNVRAM_REQ_OPEN_EXISTING	(1U << 0)
#define QNVRAM_REQ_ALL			(QNVRAM_REQ_OPEN_EXISTING)
/*
 * Out only: ALLOC created the region (all zero), rather than bind the one
 * that exists. With QNVRAM_REQ_OPEN_EXISTING it tells a caller whether the
 * bytes it finds are its own or a new region's; -EINVAL as input.
 */
#define QNVRAM_REQ_CREATED		(1U << 31)

#define QNVRAM_IOC_TYPE	0xB7
/*
 * A file stays bound until it is closed, even when the ioctl then fails to
 * copy its result back (-EFAULT): use QNVRAM_REQ_OPEN_EXISTING or RETRIEVE
 * on a new file to learn the size. A bound file passed to another process
 * (SCM_RIGHTS) lets it map the region, as any open file would.
 */
/* Create region (uid, magic) of @size bytes and bind this file to it. */
#define QNVRAM_IOC_ALLOC	_IOWR(QNVRAM_IOC_TYPE, 1, struct qnvram_region_req)
/* Bind this file to the existing region (uid, magic), swapping it in. */
#define QNVRAM_IOC_RETRIEVE	_IOWR(QNVRAM_IOC_TYPE, 2, struct qnvram_region_req)
/* Free region (uid, magic); -EBUSY while any file is bound to it. */
#define QNVRAM_IOC_FREE		_IOW(QNVRAM_IOC_TYPE, 3, struct qnvram_region_req)

/**
 * enum qnvram_cmd - generic netlink commands of the "qnvram" family
 * @QNVRAM_CMD_UNSPEC: invalid
 * @QNVRAM_CMD_GET_STATS: pool counters (see enum mobio_common_cmd)
 * @QNVRAM_CMD_LIST: dump regions as QNVRAM_A_REGION; callers without
 *	CAP_SYS_ADMIN see their own uid's only
 * @QNVRAM_CMD_RETRIEVE: one region's QNVRAM_A_REGION, by MOBIO_A_UID
 *	(optional, default the socket opener's euid; initial user namespace)
 *	and QNVRAM_A_MAGIC
 * @QNVRAM_CMD_FREE: free a region by MOBIO_A_UID and QNVRAM_A_MAGIC
 * @QNVRAM_CMD_FLUSH: write the pool image to the backing device now
 *	(CAP_SYS_ADMIN; CAP_NET_ADMIN alone is -EPERM)
 * @QNVRAM_CMD_EVENT: multicast on "events" (joining it needs
 *	CAP_SYS_ADMIN: events name every uid's regions): QNVRAM_A_EVENT, and
 *	QNVRAM_A_REGION where one region is concerned
 * @__QNVRAM_CMD_MAX: one past the last command
 * @QNVRAM_CMD_MAX: the last command
 */
enum qnvram_cmd {
	QNVRAM_CMD_UNSPEC,
	QNVRAM_CMD_GET_STATS = MOBIO_CMD_GET_STATS,
	QNVRAM_CMD_LIST = MOBIO_CMD_FAMILY_BASE,
	QNVRAM_CMD_RETRIEVE,
	QNVRAM_CMD_FREE,
	QNVRAM_CMD_FLUSH,
	QNVRAM_CMD_EVENT,
	__QNVRAM_CMD_MAX,
	QNVRAM_CMD_MAX = __QNVRAM_CMD_MAX - 1,
};

/**
 * enum qnvram_attr - attributes of the "qnvram" family (after the common
 * ones of enum mobio_common_attr)
 * @QNVRAM_A_MAGIC: u32, region magic
 * @QNVRAM_A_SIZE: u64, region length, bytes
 * @QNVRAM_A_STATE: u32, enum qnvram_region_state
 * @QNVRAM_A_MAP_COUNT: u32, mappings of the region now
 * @QNVRAM_A_REGION: nest of MOBIO_A_UID (initial user namespace, whoever
 *	receives it), QNVRAM_A_MAGIC, QNVRAM_A_SIZE,
 *	QNVRAM_A_STATE, QNVRAM_A_MAP_COUNT and, for CAP_SYS_ADMIN only,
 *	MOBIO_A_RANGE_START (pool offset, bytes)
 * @QNVRAM_A_EVENT: u32, enum qnvram_event
 * @__QNVRAM_A_MAX: one past the last attribute
 * @QNVRAM_A_MAX: the last attribute
 */
enum qnvram_attr {
	QNVRAM_A_MAGIC = MOBIO_A_FAMILY_BASE,
	QNVRAM_A_SIZE,
	QNVRAM_A_STATE,
	QNVRAM_A_MAP_COUNT,
	QNVRAM_A_REGION,
	QNVRAM_A_EVENT,
	__QNVRAM_A_MAX,
	QNVRAM_A_MAX = __QNVRAM_A_MAX - 1,
};

/**
 * enum qnvram_event - what QNVRAM_CMD_EVENT reports
 * @QNVRAM_EVENT_FLUSHED: the pool image was written to the backing device
 * @QNVRAM_EVENT_POWER_KEY: the power key was held hold_ms; a flush follows
 * @QNVRAM_EVENT_SWAPPED_OUT: a region was written out to make room
 * @QNVRAM_EVENT_SWAPPED_IN: a region was read back on retrieve
 */
enum qnvram_event {
	QNVRAM_EVENT_FLUSHED = 1,
	QNVRAM_EVENT_POWER_KEY,
	QNVRAM_EVENT_SWAPPED_OUT,
	QNVRAM_EVENT_SWAPPED_IN,
};

#endif /* _UAPI_LINUX_QNVRAM_H */
