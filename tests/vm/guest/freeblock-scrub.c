// SPDX-License-Identifier: GPL-2.0
/*
 * tools/fb-scrub.c and tools/libfreeblock.c built for the guest (the VM
 * bench ships build/user/guest/ and of tools/ only mobioctl):
 * freeblock-scrub in the guest is fb-scrub.
 */
#define _GNU_SOURCE
#include "../../../tools/libfreeblock.c"
#include "../../../tools/fb-scrub.c"
