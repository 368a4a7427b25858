/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * mobio: conventions shared by the generic netlink families of the four
 * mobio modules (qnvram, smartio, asap, freeblock).
 *
 * Every family:
 *  - is versioned with MOBIO_GENL_VERSION (bumped on incompatible change);
 *  - has one multicast group named MOBIO_GENL_MCGRP_EVENTS;
 *  - numbers its commands from MOBIO_CMD_FAMILY_BASE, with command 1
 *    (MOBIO_CMD_GET_STATS) dumping its counters as MOBIO_A_STATS;
 *  - uses the common attributes below (device, pid, uid, range, stats)
 *    with these exact numbers, and numbers its own attributes from
 *    MOBIO_A_FAMILY_BASE, so a tool can parse the common part of every
 *    family's messages with one policy.
 *
 * Control commands need CAP_SYS_ADMIN; rejections carry an extack message.
 */
#ifndef _UAPI_LINUX_MOBIO_H
#define _UAPI_LINUX_MOBIO_H

#define MOBIO_GENL_VERSION	1
#define MOBIO_GENL_MCGRP_EVENTS	"events"

/**
 * enum mobio_common_cmd - commands every family implements
 * @MOBIO_CMD_UNSPEC: invalid
 * @MOBIO_CMD_GET_STATS: dump the family's counters; reply carries
 *	MOBIO_A_STATS (and MOBIO_A_DEV_NAME where counters are per device)
 * @MOBIO_CMD_FAMILY_BASE: first family-specific command number
 */
enum mobio_common_cmd {
	MOBIO_CMD_UNSPEC,
	MOBIO_CMD_GET_STATS,
	MOBIO_CMD_FAMILY_BASE = 16,
};

/**
 * enum mobio_common_attr - attributes with the same number in every family
 * @MOBIO_A_UNSPEC: invalid
 * @MOBIO_A_PAD: padding for 64-bit attributes
 * @MOBIO_A_DEV_NAME: string, block device name as in /sys/block ("vda")
 * @MOBIO_A_PID: u32, process id (in the caller's pid namespace)
 * @MOBIO_A_UID: u32, user id (qnvram, its only user: in the initial user
 *	namespace, see qnvram.h)
 * @MOBIO_A_RANGE_START: u64, start of a range, bytes
 * @MOBIO_A_RANGE_LEN: u64, length of a range, bytes
 * @MOBIO_A_STATS: nest of MOBIO_A_STAT
 * @MOBIO_A_STAT: nest of one counter: MOBIO_STAT_A_NAME, MOBIO_STAT_A_VALUE
 * @__MOBIO_A_COMMON_MAX: one past the last common attribute
 * @MOBIO_A_FAMILY_BASE: first family-specific attribute number
 */
enum mobio_common_attr {
	MOBIO_A_UNSPEC,
	MOBIO_A_PAD,
	MOBIO_A_DEV_NAME,
	MOBIO_A_PID,
	MOBIO_A_UID,
	MOBIO_A_RANGE_START,
	MOBIO_A_RANGE_LEN,
	MOBIO_A_STATS,
	MOBIO_A_STAT,
	__MOBIO_A_COMMON_MAX,
	MOBIO_A_FAMILY_BASE = 32,
};

/**
 * enum mobio_stat_attr - attributes inside one MOBIO_A_STAT nest
 * @MOBIO_STAT_A_UNSPEC: invalid
 * @MOBIO_STAT_A_PAD: padding for MOBIO_STAT_A_VALUE
 * @MOBIO_STAT_A_NAME: string, counter name ("bytes_flushed"); the unit is
 *	the name's suffix (_bytes, _ns, _pages) or a plain count
 * @MOBIO_STAT_A_VALUE: u64, counter value
 * @__MOBIO_STAT_A_MAX: one past the last
 * @MOBIO_STAT_A_MAX: the last
 */
enum mobio_stat_attr {
	MOBIO_STAT_A_UNSPEC,
	MOBIO_STAT_A_PAD,
	MOBIO_STAT_A_NAME,
	MOBIO_STAT_A_VALUE,
	__MOBIO_STAT_A_MAX,
	MOBIO_STAT_A_MAX = __MOBIO_STAT_A_MAX - 1,
};

#define MOBIO_STAT_NAME_MAX	32	/* bytes, including the NUL */

#endif /* _UAPI_LINUX_MOBIO_H */
