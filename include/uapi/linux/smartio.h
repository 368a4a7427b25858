/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * SmartIO: a blk-mq I/O scheduler ("smartio", module smartio-iosched) that
 * keeps reads from waiting behind writes (after Nguyen et al., "Reducing
 * Smartphone Application Delay through Read/Write Isolation", MobiSys'15).
 *
 * The "smartio" generic netlink family (conventions: <linux/mobio.h>) has
 * one command: SMARTIO_CMD_GET_STATS with MOBIO_A_DEV_NAME (a disk whose
 * scheduler is smartio, "vda") answers with MOBIO_A_DEV_NAME and
 * MOBIO_A_STATS. Any user may read the counters. The tunables are in
 * /sys/block/<dev>/queue/iosched/ (see docs/smartio.md).
 *
 * Counters (MOBIO_STAT_A_NAME; <c> is rt, be or idle, <d> read or write;
 * discards count as writes):
 *   dispatched_<c>_<d>    requests handed to the driver
 *   merged_<c>_<d>        bios and requests merged into a queued request
 *   expired_<c>_<d>       dispatched because their deadline had passed
 *                         (the write floor and class aging at work)
 *   inserted, requeued    requests entering the scheduler, requeues among them
 *   write_held            times a write was held back (cap or rate)
 *   write_rate_kbps       write rate allowed while reads are active, now
 *                         (0: no limit)
 *   read_lat_us           read latency at the read_lat_pct percentile
 *                         (default the 90th), last window
 *   read_slowdown_pct     read slowdown, %: the reads' summed latency over
 *                         their size classes' baselines (100: as fast as
 *                         alone), last window
 *   read_target_pct       the slowdown the controller holds (0: it holds
 *                         read_lat_us to read_target_us instead)
 *   read_target_us        the latency it holds (read_lat_target_us; 0: it
 *                         holds the slowdown)
 *   read_baseline_<s>_us  per size class (<s>: 4k, 8k, 16k, 32k, 64k, 128k,
 *                         256k, 512k; each up to that size, 512k and
 *                         larger), the mean latency of reads
 *                         with no write around (0: none seen yet)
 *   controller_adjusts    windows that changed the write rate
 *   controller_windows    windows ended
 *   baseline_stale_fixes  windows that corrected a stale baseline
 *   controller_cold       1 while writes beside reads wait for a size
 *                         class's first baseline (cold), else 0
 *   cold_windows          windows that ended cold
 *   reads_inflight, writes_inflight   dispatched and not yet completed
 *   nr_requests, async_depth   the queue's tags, and those writes may take
 *   dispatch_empty        dispatch calls that found nothing ready
 *   queue_kicks           queue runs by the hold timer
 *   idle_guard            idle-class requests released by the starvation
 *                         guard
 *   idle_inflight         idle-class requests dispatched, not completed
 *   dispatched_fg_read    reads of the foreground cgroup dispatched
 *   bg_read_held          dispatch calls that held another app's read for
 *                         bg_read_cap
 *   fg_reads_inflight     the foreground's reads dispatched, not completed
 */
#ifndef _UAPI_LINUX_SMARTIO_H
#define _UAPI_LINUX_SMARTIO_H

#include <linux/mobio.h>

#define SMARTIO_GENL_NAME	"smartio"
#define SMARTIO_ELEVATOR_NAME	"smartio"

/**
 * enum smartio_cmd - generic netlink commands of the "smartio" family
 * @SMARTIO_CMD_UNSPEC: invalid
 * @SMARTIO_CMD_GET_STATS: counters of one disk; request: MOBIO_A_DEV_NAME;
 *	reply: MOBIO_A_DEV_NAME, MOBIO_A_STATS. -ENODEV when the disk does
 *	not use smartio.
 * @__SMARTIO_CMD_MAX: one past the last command
 * @SMARTIO_CMD_MAX: the last command
 */
enum smartio_cmd {
	SMARTIO_CMD_UNSPEC,
	SMARTIO_CMD_GET_STATS = MOBIO_CMD_GET_STATS,
	__SMARTIO_CMD_MAX,
	SMARTIO_CMD_MAX = __SMARTIO_CMD_MAX - 1,
};

/**
 * enum smartio_attr - attributes of the "smartio" family: only the common
 * ones of enum mobio_common_attr so far; its own start at
 * MOBIO_A_FAMILY_BASE.
 * @__SMARTIO_A_MAX: one past the last attribute
 * @SMARTIO_A_MAX: the last attribute
 */
enum smartio_attr {
	__SMARTIO_A_MAX = MOBIO_A_FAMILY_BASE,
	SMARTIO_A_MAX = __SMARTIO_A_MAX - 1,
};

#endif /* _UAPI_LINUX_SMARTIO_H */
