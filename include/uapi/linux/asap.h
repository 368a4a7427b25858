/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * ASAP: learn each app's switch footprint and prepage it at the next switch
 * (module asap-prefetch; after Son et al., "ASAP: Fast Mobile Application
 * Switch via Adaptive Prepaging", USENIX ATC'21).
 *
 * The "asap" generic netlink family (conventions: <linux/mobio.h>):
 * CAP_SYS_ADMIN is that of the socket's opener; without it SWITCH,
 * PROFILE_GET and PROFILE_SET fail with -EPERM (CAP_NET_ADMIN is not
 * enough) and joining the events group too.
 *
 *  - ASAP_CMD_SWITCH (CAP_SYS_ADMIN): the app of MOBIO_A_PID (a process,
 *    tracked by its thread group) comes to the foreground. The app that was
 *    in the foreground leaves it: its prepaging is cancelled and its switch
 *    window is closed and learned from. ASAP_A_CGROUP names an app by its
 *    cgroup v2 path instead: the cgroup must hold exactly one process
 *    (by its thread group leader; descendant cgroups not included), as an
 *    app is one address space: -ESRCH when it holds none, -EOPNOTSUPP
 *    when it holds several.
 *  - ASAP_CMD_GET_STATS: global counters; with MOBIO_A_PID, the counters
 *    of that app (-ENOENT when it is not tracked). Any user.
 *  - ASAP_CMD_GET_APPS (dump): one message per tracked app with
 *    MOBIO_A_PID, ASAP_A_COMM, ASAP_A_FOREGROUND and MOBIO_A_STATS. Any user.
 *  - ASAP_CMD_PROFILE_GET (dump, CAP_SYS_ADMIN): the estimator tables of
 *    the app of MOBIO_A_PID, to save them: one message with MOBIO_A_PID
 *    and ASAP_A_PROFILED, then messages of ASAP_A_ANON_RUNS, then per
 *    file messages of ASAP_A_FILE_DEV, ASAP_A_FILE_INO, ASAP_A_FILE_GEN
 *    and ASAP_A_FILE_RUNS. Each *_RUNS attribute is an array of at most
 *    ASAP_PROFILE_RUNS_MAX struct asap_profile_run. The tables may change
 *    between two messages of a dump (a switch learns): a dump taken while
 *    the app is in the background is one state.
 *  - ASAP_CMD_PROFILE_SET (CAP_SYS_ADMIN): load saved tables into the app
 *    of MOBIO_A_PID (tracked from now on if it was not), which must not be
 *    in its switch window (-EBUSY). A message carries ASAP_A_PROFILED
 *    and/or ASAP_A_ANON_RUNS, or one file's ASAP_A_FILE_DEV, _INO, _GEN
 *    and ASAP_A_FILE_RUNS. A file is found among the app's mappings by
 *    (device, inode number, generation): a file replaced since the save
 *    is not matched (-ENOENT). Loaded pages replace the entries of the
 *    same pages; the entry caps apply (-ENOSPC when one is reached; the
 *    pages before stay loaded). Every run is checked (-EINVAL with the
 *    reason) before any is loaded.
 *  - Events (group MOBIO_GENL_MCGRP_EVENTS, CAP_SYS_ADMIN to join): an
 *    ASAP_CMD_SWITCH message with MOBIO_A_PID (in the initial pid
 *    namespace), ASAP_A_COMM and ASAP_A_TRIGGER at every switch.
 *
 * Counters of an app (MOBIO_STAT_A_NAME; <k> is file or anon):
 *   switches              switch windows opened for the app
 *   <k>_faults            pages the app faulted in during its windows
 *                         (file: added to the page cache by the app's
 *                         tasks; anon: swap-ins by its tasks), the misses
 *   <k>_faults_late       of <k>_faults, pages the prepaging table held when
 *                         the window opened (the app got there before a
 *                         worker): misses of timing, not of the estimator
 *   <k>_prepaged_pages    pages the workers brought in (not resident before)
 *   <k>_hits              prepaged pages the app used in the window
 *   <k>_unused            prepaged pages it did not use
 *   <k>_precision_pct     100 * hits / prepaged_pages (0 when none)
 *   <k>_recall_pct        100 * hits / (hits + faults) (0 when none)
 *   <k>_table_pages       pages in the prepaging table now
 *   <k>_entries           entries of the estimator (candidates included)
 *   file_profile_switches switches profiled so far (stops at profile_switches)
 *   prepage_ns            time the workers spent for the app
 *   prepage_read_bytes    bytes the workers brought in
 *   prepage_cancelled     switches whose prepaging was cancelled
 *   log_dropped           faults not logged (log full)
 *   file_faults_unmapped  file faults on files the app does not map
 *                         (not learned)
 * Global: apps, apps_max, entries, entries_max, app_entries_max, switches,
 *   entries_dropped, log_dropped, prepage_cancelled, workers,
 *   triggers_cgroup (tasks moved into the fg_cgroup module parameter's
 *   cgroup), triggers_sigcont (stopped processes continued while the
 *   sigcont parameter is on), logged (faults the probes logged, dropped
 *   ones included), log_ns (ns the probes spent logging them: from probe
 *   entry to the log written, the kprobe trap not included), and the sums
 *   of the per-app page counters.
 *
 * Switches also come from those two triggers (module parameters
 * fg_cgroup and sigcont, docs/asap.md).
 */
#ifndef _UAPI_LINUX_ASAP_H
#define _UAPI_LINUX_ASAP_H

#include <linux/types.h>
#include <linux/mobio.h>

#define ASAP_GENL_NAME		"asap"
#define ASAP_CGROUP_PATH_MAX	4096	/* bytes, with the NUL */
#define ASAP_COMM_MAX		16	/* bytes, with the NUL */
#define ASAP_PROFILE_RUNS_MAX	128	/* runs in one *_RUNS attribute */

/* struct asap_profile_run flags */
#define ASAP_PROFILE_F_TABLE	0x1	/* in the prepaging table */

/**
 * struct asap_profile_run - pages of a saved profile with the same state
 * @start: file: first page index; anon: virtual address of the first
 *	page, bytes, page aligned
 * @nr: pages, at least 1
 * @count: file: profile switches the pages were seen in (used while the
 *	profile lasts); anon: switches left before the entries expire,
 *	1..255 (more than the anon_timeout parameter loads as anon_timeout)
 * @flags: ASAP_PROFILE_F_*; other bits must be 0
 * @reserved: must be 0
 */
struct asap_profile_run {
	__u64 start;
	__u32 nr;
	__u8 count;
	__u8 flags;
	__u16 reserved;
};

/**
 * enum asap_cmd - generic netlink commands of the "asap" family
 * @ASAP_CMD_UNSPEC: invalid
 * @ASAP_CMD_GET_STATS: counters; request: optional MOBIO_A_PID; reply:
 *	MOBIO_A_STATS (and MOBIO_A_PID for one app)
 * @ASAP_CMD_SWITCH: bring an app to the foreground; request: MOBIO_A_PID
 *	or ASAP_A_CGROUP (exactly one). Errors: -ESRCH no such process (or
 *	none in the cgroup), -ENOENT no such cgroup, -EOPNOTSUPP several
 *	processes in the cgroup, -ENOSPC apps_max reached, -EINVAL a kernel
 *	thread or both attributes
 * @ASAP_CMD_GET_APPS: dump the tracked apps
 * @ASAP_CMD_PROFILE_GET: dump an app's estimator tables (see above)
 * @ASAP_CMD_PROFILE_SET: load saved tables into an app (see above)
 * @__ASAP_CMD_MAX: one past the last command
 * @ASAP_CMD_MAX: the last command
 */
enum asap_cmd {
	ASAP_CMD_UNSPEC,
	ASAP_CMD_GET_STATS = MOBIO_CMD_GET_STATS,
	ASAP_CMD_SWITCH = MOBIO_CMD_FAMILY_BASE,
	ASAP_CMD_GET_APPS,
	ASAP_CMD_PROFILE_GET,
	ASAP_CMD_PROFILE_SET,
	__ASAP_CMD_MAX,
	ASAP_CMD_MAX = __ASAP_CMD_MAX - 1,
};

/**
 * enum asap_attr - attributes of the "asap" family, after the common ones
 *	of enum mobio_common_attr
 * @ASAP_A_CGROUP: string, cgroup v2 path from the root ("/apps/camera"),
 *	< ASAP_CGROUP_PATH_MAX bytes
 * @ASAP_A_COMM: string, the app's command name (< ASAP_COMM_MAX bytes)
 * @ASAP_A_FOREGROUND: flag, the app is in the foreground
 * @ASAP_A_TRIGGER: u32, enum asap_trigger: what caused a switch (events)
 * @ASAP_A_PROFILED: u32, file profile switches done, 0..255
 * @ASAP_A_ANON_RUNS: binary, 1..ASAP_PROFILE_RUNS_MAX struct
 *	asap_profile_run of anonymous pages
 * @ASAP_A_FILE_DEV: u64, the file's device: its filesystem's dev_t,
 *	encoded as stat(2)'s st_dev (the same on most filesystems; not for
 *	btrfs subvolumes)
 * @ASAP_A_FILE_INO: u64, the file's inode number (st_ino)
 * @ASAP_A_FILE_GEN: u32, the inode's generation (FS_IOC_GETVERSION;
 *	tells a new file with a reused inode number apart)
 * @ASAP_A_FILE_RUNS: binary, 1..ASAP_PROFILE_RUNS_MAX struct
 *	asap_profile_run of that file's pages
 * @__ASAP_A_MAX: one past the last attribute
 * @ASAP_A_MAX: the last attribute
 */
enum asap_attr {
	ASAP_A_CGROUP = MOBIO_A_FAMILY_BASE,
	ASAP_A_COMM,
	ASAP_A_FOREGROUND,
	ASAP_A_TRIGGER,
	ASAP_A_PROFILED,
	ASAP_A_ANON_RUNS,
	ASAP_A_FILE_DEV,
	ASAP_A_FILE_INO,
	ASAP_A_FILE_GEN,
	ASAP_A_FILE_RUNS,
	__ASAP_A_MAX,
	ASAP_A_MAX = __ASAP_A_MAX - 1,
};

/**
 * enum asap_trigger - what caused a switch
 * @ASAP_TRIGGER_NETLINK: ASAP_CMD_SWITCH
 * @ASAP_TRIGGER_CGROUP: a task moved into the foreground cgroup
 * @ASAP_TRIGGER_SIGCONT: a stopped process was continued
 */
enum asap_trigger {
	ASAP_TRIGGER_NETLINK,
	ASAP_TRIGGER_CGROUP,
	ASAP_TRIGGER_SIGCONT,
};

#endif /* _UAPI_LINUX_ASAP_H */
