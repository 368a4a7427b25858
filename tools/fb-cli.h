/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fb-cli.h: what the freeblock example tools (fb-scrub, fb-backup) share
 * besides libfreeblock: number parsing and a clock.
 */
#ifndef FB_CLI_H
#define FB_CLI_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/**
 * fb_parse_size() - parse a byte count or rate
 * @s: decimal, 0x hex or 0 octal, with an optional K, M or G suffix
 *	(powers of 1024); no sign
 * @v: out, the value
 *
 * Return: 0, or -1 when @s is not such a number or overflows 64 bits.
 */
static inline int fb_parse_size(const char *s, uint64_t *v)
{
	unsigned long long n;
	unsigned int shift = 0;
	char *end;

	errno = 0;
	n = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	switch (*end) {
	case 'K': case 'k':
		shift = 10, end++;
		break;
	case 'M': case 'm':
		shift = 20, end++;
		break;
	case 'G': case 'g':
		shift = 30, end++;
		break;
	}
	if (*end || (shift && n > (UINT64_MAX >> shift)))
		return -1;
	*v = n << shift;
	return 0;
}

/**
 * fb_register_hint() - what to say after a registration error
 * @r: the negative errno of fb_task_open()
 *
 * Return: a parenthesized hint for the errors a user can act on, or "".
 */
static inline const char *fb_register_hint(int r)
{
	switch (r) {
	case -ENOENT:
		return " (no /dev/freeblock: is freeblock.ko loaded?)";
	case -ENOSPC:
		return " (the ring would pass the freeblock parameters uid_ring_kib"
		       " or total_ring_kib: fewer --slots or a smaller --bs)";
	case -ENOMEM:
		return " (no memory for the ring, or the memory cgroup's memory.max)";
	case -EBUSY:
		return " (max_tasks tasks on this disk already)";
	}
	return "";
}

/**
 * fb_now_s() - monotonic time
 *
 * Return: seconds since an arbitrary start.
 */
static inline double fb_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif /* FB_CLI_H */
