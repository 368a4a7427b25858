/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Host stand-ins for what modules/freeblock/fb_piece.h and fb_idle.h use
 * when __KERNEL__ is not defined, with the kernel's meaning: fixed-width
 * types, U32_MAX (<linux/limits.h>), min_t()/max_t() (compare as the named
 * type) and rounddown_pow_of_two() (the largest power of two <= n, n > 0).
 */
#ifndef _FB_HOST_SHIM_H
#define _FB_HOST_SHIM_H

#include <stdint.h>

typedef uint32_t u32;
typedef uint64_t u64;

#define U32_MAX			((u32)~0U)

#define min_t(type, a, b)	((type)(a) < (type)(b) ? (type)(a) : (type)(b))
#define max_t(type, a, b)	((type)(a) > (type)(b) ? (type)(a) : (type)(b))
#define rounddown_pow_of_two(n)	(1ULL << (63 - __builtin_clzll((u64)(n))))

#endif /* _FB_HOST_SHIM_H */
