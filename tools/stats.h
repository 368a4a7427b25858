/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Printer of MOBIO_A_STATS, the counters every mobio family's GET_STATS
 * reply carries (see <linux/mobio.h>).
 */
#ifndef MOBIO_TOOLS_STATS_H
#define MOBIO_TOOLS_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include <libmnl/libmnl.h>

struct mobio_ctx;

/*
 * Print the MOBIO_A_STAT nests inside @stats: one "name value" line each,
 * or, with @json, one "name": value member each of the JSON object the
 * caller has opened. Counters without a name or a u64 value are skipped.
 * Return the number printed.
 */
int mobio_print_stats(const struct nlattr *stats, bool json);

/*
 * The "stats DEV" command of a per-disk family: send @cmd (its GET_STATS)
 * with MOBIO_A_DEV_NAME = @arg without a leading "/dev/" (a name as in
 * /sys/block, under 32 bytes), print the reply's counters (with --json:
 * one object {"dev": DEV, name: value, ...}). Return a MOBIO_EXIT_* code;
 * a reply without counters is EBADMSG.
 */
int mobio_dev_stats(struct mobio_ctx *ctx, const char *arg, uint8_t cmd);

#endif /* MOBIO_TOOLS_STATS_H */
