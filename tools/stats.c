// SPDX-License-Identifier: GPL-2.0-only
/*
 * Printer of MOBIO_A_STATS (see stats.h). A counter's unit is its name's
 * suffix (_bytes, _ns, _pages) or a plain count, so the value is printed as
 * the kernel sent it, in decimal.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <linux/mobio.h>

#include "json.h"
#include "stats.h"

static int mobio_stat_attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	switch (type) {
	case MOBIO_STAT_A_NAME:
		if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0 &&
		    mnl_attr_get_payload_len(attr) <= MOBIO_STAT_NAME_MAX)
			tb[type] = attr;
		break;
	case MOBIO_STAT_A_VALUE:
		if (mnl_attr_validate(attr, MNL_TYPE_U64) == 0)
			tb[type] = attr;
		break;
	default:
		break;
	}
	return MNL_CB_OK;
}

int mobio_print_stats(const struct nlattr *stats, bool json)
{
	const struct nlattr *stat;
	int printed = 0;

	mnl_attr_for_each_nested(stat, stats) {
		const struct nlattr *tb[MOBIO_STAT_A_MAX + 1] = { 0 };
		const char *name;
		uint64_t value;

		if (mnl_attr_get_type(stat) != MOBIO_A_STAT)
			continue;
		if (mnl_attr_parse_nested(stat, mobio_stat_attr_cb, tb) < 0 ||
		    !tb[MOBIO_STAT_A_NAME] || !tb[MOBIO_STAT_A_VALUE])
			continue;
		name = mnl_attr_get_str(tb[MOBIO_STAT_A_NAME]);
		value = mnl_attr_get_u64(tb[MOBIO_STAT_A_VALUE]);
		if (json)
			json_u64(name, value);
		else
			printf("%s %" PRIu64 "\n", name, value);
		printed++;
	}
	return printed;
}
