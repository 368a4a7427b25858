/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Test-only helpers of fake_qnvram.c, the file-backed libqnvram stand-in. */
#ifndef FAKE_QNVRAM_H
#define FAKE_QNVRAM_H

/* qnvm_persist() calls made by this process so far. */
unsigned long fake_qnvram_persist_calls(void);

/* Regions in $QNVRAM_FAKE_DIR, or -1. */
int fake_qnvram_count(void);

/*
 * Revert each stored-but-unpersisted cache line of every region to its
 * persisted bytes with probability @pct/100 (needs QNVRAM_FAKE_SHADOW=1
 * while the regions were written). Return lines reverted, or -1.
 */
long fake_qnvram_warm_reboot(unsigned int pct, unsigned int seed);

#endif /* FAKE_QNVRAM_H */
