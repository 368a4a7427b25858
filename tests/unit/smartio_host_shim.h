/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Host stand-ins for what modules/smartio-iosched/smartio_gate.h uses when
 * __KERNEL__ is not defined, with the kernel's meaning: fixed-width types,
 * bool, U64_MAX (<linux/limits.h>) and min(), max() (both sides of one type).
 */
#ifndef _SMARTIO_HOST_SHIM_H
#define _SMARTIO_HOST_SHIM_H

#include <stdbool.h>
#include <stdint.h>

typedef uint64_t u64;

#define U64_MAX		((u64)~0ULL)

#define min(a, b)	((a) < (b) ? (a) : (b))
#define max(a, b)	((a) > (b) ? (a) : (b))

#endif /* _SMARTIO_HOST_SHIM_H */
