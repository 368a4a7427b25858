/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Host stand-ins for the kernel types and helpers that
 * modules/qnvram/qnvram_format.h uses when __KERNEL__ is not defined, so
 * qnvram_format.c builds unchanged for the unit tests in this directory.
 *
 * The on-media integers are plain typedefs here (no sparse annotations);
 * the byte order conversions come from <endian.h>, so the same tests run
 * on little- and big-endian hosts. qnvram_crc32() is zlib's crc32(): the
 * kernel defines it as ~crc32_le(~crc, p, len), which is the same function
 * (CRC-32/IEEE 802.3, reflected, init and xorout 0xFFFFFFFF, chainable
 * from 0). test_qnvram_format.c pins its check value. Link with -lz.
 */
#ifndef _QNVRAM_HOST_SHIM_H
#define _QNVRAM_HOST_SHIM_H

#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef uint32_t __le32;
typedef uint64_t __le64;

#define BIT(n)		(1UL << (n))
#define BIT_ULL(n)	(1ULL << (n))
#define cpu_to_le32(x)	((__le32)htole32((u32)(x)))
#define cpu_to_le64(x)	((__le64)htole64((u64)(x)))
#define le32_to_cpu(x)	((u32)le32toh((__le32)(x)))
#define le64_to_cpu(x)	((u64)le64toh((__le64)(x)))

/* CRC-32 (IEEE 802.3), chained like zlib's crc32(): start with 0. */
#define qnvram_crc32(crc, p, len) \
	((u32)crc32((uLong)(crc), (const Bytef *)(p), (uInt)(len)))

#endif /* _QNVRAM_HOST_SHIM_H */
