#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The VM bench's agent in the Debian guest (mobio-vmtest.service, at every
# boot once the system is up): the counterpart of the busybox initramfs's
# /init (tests/vm/init.sh): mobio_guest_begin (lib.sh) exports the declared
# disks as DISK_<name> and counts the boot on the state disk (/dev/vda); then
# it runs /mobio/tests/<mobio.test>.sh and says how it ended on /dev/ttyS1.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root

. /mobio/tests/lib.sh
mobio_guest_begin
echo "mobio-agent: test $MOBIO_TEST boot $MOBIO_BOOT at $(cut -d' ' -f1 /proc/uptime) s"
if [ ! -e "/mobio/tests/$MOBIO_TEST.sh" ]; then
	_mobio_say "RESULT FAIL bench no /mobio/tests/$MOBIO_TEST.sh in the Debian image"
	_mobio_say "EXIT 127"
	exit 1
fi
# systemd stops this unit for the reboot or power-off the test asked for
# (request_systemctl_*): that is no EXIT
trap 'exit 0' TERM
_mobio_say "START $MOBIO_TEST boot=$MOBIO_BOOT"
# bash: Debian's sh (dash) has no read -t, which lib.sh uses
cd /tmp && bash "/mobio/tests/$MOBIO_TEST.sh"
rc=$?
[ -e /run/mobio-vmtest-shutdown ] && exit 0
_mobio_say "EXIT $rc"
sync
systemctl poweroff
