// SPDX-License-Identifier: GPL-2.0
/*
 * tools/fb-scrub.c built for the guest (the VM bench ships
 * build/user/guest/*, not tools/ beyond mobioctl): freeblock-scrub in the
 * guest is fb-scrub.
 */
#define _GNU_SOURCE
#include "../../../tools/fb-scrub.c"
