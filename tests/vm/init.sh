#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# PID 1 of the mobio VM bench initramfs (tests/vm/run.py builds it).
#
# Mounts the usual filesystems, loads the virtio block stack and evdev from /kmod,
# counts this boot on the state disk (/dev/vda), exports the declared disks as
# DISK_<name>, then runs /mobio/tests/<mobio.test>.sh and powers off.  The kernel
# command line carries mobio.test=<name> and mobio.disks=<name,name,...>.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LD_LIBRARY_PATH=/usr/local/lib:/usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu:/usr/lib/aarch64-linux-gnu:/lib/aarch64-linux-gnu
export HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm /root
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
echo "mobio-init: start at $(cut -d' ' -f1 /proc/uptime) s"

for m in $(cat /kmod/base.list); do
	insmod "/kmod/$m.ko" || echo "mobio-init: insmod $m failed"
done

# the state disk and the declared ones, in command-line order: vda, vdb, ...
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done

. /mobio/tests/lib.sh
mobio_guest_begin
echo "mobio-init: test $MOBIO_TEST boot $MOBIO_BOOT at $(cut -d' ' -f1 /proc/uptime) s"

if [ -z "$MOBIO_TEST" ] || [ "$MOBIO_TEST" = shell ]; then
	echo "mobio-init: shell; disks: $(env | grep '^DISK_' | tr '\n' ' ')"
	setsid cttyhack sh -l
	poweroff -f
fi

if [ ! -e "/mobio/tests/$MOBIO_TEST.sh" ]; then
	_mobio_say "RESULT FAIL bench no /mobio/tests/$MOBIO_TEST.sh in the initramfs"
	_mobio_say "EXIT 127"
	poweroff -f
fi
_mobio_say "START $MOBIO_TEST boot=$MOBIO_BOOT"
cd /tmp && sh "/mobio/tests/$MOBIO_TEST.sh"
rc=$?
_mobio_say "EXIT $rc"
sync
poweroff -f
