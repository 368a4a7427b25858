#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Bench smoke test: the guest boots, reports one case and powers off.
# vm-timeout: 120
. /mobio/tests/lib.sh
check_eq boots_once 1 "$MOBIO_BOOT"
finish
