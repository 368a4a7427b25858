/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * ASAP: learn each app's switch footprint and prepage it at the next switch
 * (module asap-prefetch; after Son et al., "ASAP: Fast Mobile Application
 * Switch via Adaptive Prepaging", USENIX ATC'21).
 *
 * The "asap" generic netlink family (conventions: <linux/mobio.h>):
 *  - ASAP_CMD_SWITCH (CAP_SYS_ADMIN): the app of MOBIO_A_PID (a process,
 *    tracked by its thread group) comes to the foreground. The app that was
 *    in the foreground leaves it: its prepaging is cancelled and its switch
 *    window is closed and learned from. ASAP_A_CGROUP names an app by its
 *    cgroup v2 path instead (not implemented yet: -EOPNOTSUPP after the
 *    path is checked).
 *  - ASAP_CMD_GET_STATS: global counters; with MOBIO_A_PID, the counters
 *    of that app (-ENOENT when it is not tracked). Any user.
 *  - ASAP_CMD_GET_APPS (dump): one message per tracked app with
 *    MOBIO_A_PID, ASAP_A_COMM, ASAP_A_FOREGROUND and MOBIO_A_STATS. Any user.
 *  - Events (group MOBIO_GENL_MCGRP_EVENTS, CAP_SYS_ADMIN to join): an
 *    ASAP_CMD_SWITCH message with MOBIO_A_PID (in the initial pid
 *    namespace), ASAP_A_COMM and ASAP_A_TRIGGER at every switch.
 *
 * Counters of an app (MOBIO_STAT_A_NAME; <k> is file or anon):
 *   switches              switch windows opened for the app
 *   <k>_faults            pages the app faulted in during its windows
 *                         (file: added to the page cache by the app's
 *                         tasks; anon: swap-ins by its tasks), the misses
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

#include <linux/mobio.h>

#define ASAP_GENL_NAME		"asap"
#define ASAP_CGROUP_PATH_MAX	4096	/* bytes, with the NUL */
#define ASAP_COMM_MAX		16	/* bytes, with the NUL */

/**
 * enum asap_cmd - generic netlink commands of the "asap" family
 * @ASAP_CMD_UNSPEC: invalid
 * @ASAP_CMD_GET_STATS: counters; request: optional MOBIO_A_PID; reply:
 *	MOBIO_A_STATS (and MOBIO_A_PID for one app)
 * @ASAP_CMD_SWITCH: bring an app to the foreground; request: MOBIO_A_PID
 *	or ASAP_A_CGROUP (exactly one). Errors: -ESRCH no such process,
 *	-ENOENT no such cgroup, -ENOSPC apps_max reached, -EINVAL a kernel
 *	thread or both attributes
 * @ASAP_CMD_GET_APPS: dump the tracked apps
 * @__ASAP_CMD_MAX: one past the last command
 * @ASAP_CMD_MAX: the last command
 */
enum asap_cmd {
	ASAP_CMD_UNSPEC,
	ASAP_CMD_GET_STATS = MOBIO_CMD_GET_STATS,
	ASAP_CMD_SWITCH = MOBIO_CMD_FAMILY_BASE,
	ASAP_CMD_GET_APPS,
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
 * @__ASAP_A_MAX: one past the last attribute
 * @ASAP_A_MAX: the last attribute
 */
enum asap_attr {
	ASAP_A_CGROUP = MOBIO_A_FAMILY_BASE,
	ASAP_A_COMM,
	ASAP_A_FOREGROUND,
	ASAP_A_TRIGGER,
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
