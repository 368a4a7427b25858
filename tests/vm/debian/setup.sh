#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Run by build-image.sh inside the Debian guest's chroot, after the project's
# packages are installed: what a user of the packages edits (each in the one
# place the packages document), then the VM bench's test agent.
#
# The guest's disks (tests/vm/run.py gives each virtio disk serial
# mobio-<name>): a test that boots this image declares "vm-disk: backing"
# (qnvram's flash) and "vm-disk: data" (the disk smartio is chosen for).
#
# Usage: setup.sh AGENTDIR   (in the chroot)
set -eu
agent=${1:?usage: $0 AGENTDIR}

echo mobio-guest >/etc/hostname
echo 'LABEL=mobio-root / ext4 rw,errors=remount-ro 0 1' >/etc/fstab
passwd -d root >/dev/null
# the "normal user" of the tests: an app's uid
useradd -m -u 1000 -s /bin/sh app

# /etc/modules-load.d/mobio.conf: the modules this machine loads at boot
sed -i 's/^#freeblock$/freeblock/; s/^#qnvram$/qnvram/; s/^#asap-prefetch$/asap-prefetch/' \
	/etc/modules-load.d/mobio.conf
# /etc/modprobe.d/mobio.conf: the reservation (memmap=32M$0x30000000 on the
# command line, as GRUB_CMDLINE_LINUX would put it) and the flash, by its
# stable name
sed -i 's|^#options qnvram phys=0x30000000 size=0x2000000 backing=.*|options qnvram phys=0x30000000 size=0x2000000 backing=/dev/disk/by-id/virtio-mobio-backing|' \
	/etc/modprobe.d/mobio.conf
grep -q '^options qnvram phys=' /etc/modprobe.d/mobio.conf ||
	{ echo "setup: the qnvram example line of /etc/modprobe.d/mobio.conf changed" >&2; exit 1; }
grep -qx 'qnvram' /etc/modules-load.d/mobio.conf ||
	{ echo "setup: the qnvram line of /etc/modules-load.d/mobio.conf changed" >&2; exit 1; }
# smartio for the data disk: the tagging rule the packaged rule's comment shows
cat >/etc/udev/rules.d/64-mobio-smartio-local.rules <<'RULE'
ACTION=="add|change", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", ENV{ID_SERIAL}=="mobio-data", TAG+="mobio-smartio"
RULE

# TCG boots: nothing periodic beside the tests
systemctl mask apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer \
	e2scrub_reap.service fstrim.timer >/dev/null 2>&1 || true

# the bench's agent (not part of the product): runs the test named on the
# kernel command line at every boot, like the busybox initramfs's /init
install -m 0755 "$agent/agent.sh" /usr/local/sbin/mobio-vmtest-agent
install -m 0644 "$agent/mobio-vmtest.service" "$agent/mobio-vmtest-mark.service" \
	/etc/systemd/system/
systemctl enable mobio-vmtest.service mobio-vmtest-mark.service
