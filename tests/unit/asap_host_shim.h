/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Host stand-ins for the kernel types and bit-field helpers that
 * modules/asap-prefetch/asap_rules.h uses when __KERNEL__ is not defined,
 * so the estimators' rules build unchanged for the unit tests here.
 *
 * GENMASK(), BIT(), FIELD_PREP() and FIELD_GET() have the kernel's meaning
 * on an unsigned long (64 bits on the hosts this builds on, as on the
 * 64-bit kernels the module runs on); the kernel's compile-time range
 * checks are left out.
 */
#ifndef _ASAP_HOST_SHIM_H
#define _ASAP_HOST_SHIM_H

#include <stdbool.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint32_t u32;
typedef uint64_t u64;

#define U32_MAX		UINT32_MAX

_Static_assert(sizeof(unsigned long) == 8,
	       "asap_rules.h keeps 48-bit entries in an unsigned long");

#define BIT(n)		(1UL << (n))
#define GENMASK(h, l)	((~0UL << (l)) & (~0UL >> (63 - (h))))
#define FIELD_PREP(mask, val) \
	(((unsigned long)(val) << __builtin_ctzl(mask)) & (mask))
#define FIELD_GET(mask, reg) \
	(((reg) & (mask)) >> __builtin_ctzl(mask))

#endif /* _ASAP_HOST_SHIM_H */
