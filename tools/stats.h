/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Printer of MOBIO_A_STATS, the counters every mobio family's GET_STATS
 * reply carries (see <linux/mobio.h>).
 */
#ifndef MOBIO_TOOLS_STATS_H
#define MOBIO_TOOLS_STATS_H

#include <stdbool.h>
#include <libmnl/libmnl.h>

/*
 * Print the MOBIO_A_STAT nests inside @stats: one "name value" line each,
 * or, with @json, one "name": value member each of the JSON object the
 * caller has opened. Counters without a name or a u64 value are skipped.
 * Return the number printed.
 */
int mobio_print_stats(const struct nlattr *stats, bool json);

#endif /* MOBIO_TOOLS_STATS_H */
