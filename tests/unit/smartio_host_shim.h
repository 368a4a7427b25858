/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Host stand-ins for what modules/smartio-iosched/smartio_gate.h and
 * smartio_ctl.h use when __KERNEL__ is not defined, with the kernel's
 * meaning: fixed-width types, bool, U64_MAX (<linux/limits.h>), min(),
 * max(), clamp() (both sides of one type), BIT(), BIT_ULL(), fls64()
 * (<linux/bitops.h>), div64_u64(), mul_u64_u64_div_u64() (<linux/math64.h>)
 * and NSEC_PER_SEC.
 */
#ifndef _SMARTIO_HOST_SHIM_H
#define _SMARTIO_HOST_SHIM_H

#include <stdbool.h>
#include <stdint.h>

typedef uint64_t u64;
typedef int64_t s64;
typedef uint32_t u32;
typedef int32_t s32;

#define U64_MAX		((u64)~0ULL)
#define NSEC_PER_SEC	1000000000L

#define min(a, b)	((a) < (b) ? (a) : (b))
#define max(a, b)	((a) > (b) ? (a) : (b))
#define clamp(v, lo, hi) min(max(v, lo), hi)
#define min_t(t, a, b)	min((t)(a), (t)(b))
#define BIT(n)		(1UL << (n))
#define BIT_ULL(n)	(1ULL << (n))

/* 1-based index of the last set bit, 0 for 0 */
static inline int fls64(u64 x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

static inline u64 div64_u64(u64 a, u64 b)
{
	return a / b;
}

static inline u64 mul_u64_u64_div_u64(u64 a, u64 b, u64 c)
{
	return (u64)((unsigned __int128)a * b / c);
}

#endif /* _SMARTIO_HOST_SHIM_H */
