#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""mobio VM bench: boots Debian's kernels in QEMU and runs guest test scripts.

USAGE
    tests/vm/run.py test  --kver KVER NAME...   run guest tests on one kernel
    tests/vm/run.py check [--kver KVER] [NAME...]
                                                every test (or NAME...) on every
                                                kernel of scripts/kernels.sh
    tests/vm/run.py check --arch arm64 [NAME...]
                                                the same on the arm64 kernels
                                                (make arm64 builds them); a
                                                KVER ending in -arm64 boots
                                                arm64 too
    tests/vm/run.py shell --kver KVER           interactive VM, serial on stdio
    tests/vm/run.py initramfs --kver KVER       only build the initramfs
    tests/vm/run.py bootprobe --kver KVER       time bzImage against PVH vmlinux

A guest test is tests/vm/guest/NAME.sh.  Its header comments say what it needs:
    # vm-timeout: 300            seconds for the whole test, all boots included
    # vm-mem: 1024               guest RAM in MiB
    # vm-memmap: 32M$0x30000000  reserved RAM (memmap= on the kernel command line;
                                 on arm64 a no-map reserved-memory node of the
                                 device tree, at RAM base + that offset)
    # vm-disk: flash 128M        an extra raw virtio disk, $DISK_flash in the guest
    # vm-kmod: null_blk zram     Debian kernel modules (and their deps) to ship
    # vm-bin: /usr/bin/fio       host binaries (and their ldd libraries) to ship;
                                 a relative path with a / is under the tree;
                                 a trailing ? (/usr/bin/perf?): shipped if the
                                 host has it, else left out with a log line
    # vm-append: foo=bar         more kernel command line
    # vm-alone: WHY              run with no other QEMU beside it (checks that
                                 compare times; ad-hoc scripts, the benchmarks,
                                 always run alone)
    # vm-root: debian            boot the Debian guest (tests/vm/debian/): a
                                 Debian 12 image with the project's .debs
                                 installed by apt, booted with systemd; the test
                                 runs from mobio-vmtest.service at every boot
    # vm-tree: SRC DEST          a host file or directory tree, copied to DEST;
                                 $KVER, $MOBIO_SHARED (default: ../shared beside
                                 the repo root) and other $VARs are expanded, a
                                 relative SRC is under the repo root; a missing
                                 SRC is logged and not shipped (the test says why)
The guest side (tests/vm/guest/lib.sh) prints "MOBIO ..." lines on /dev/ttyS1,
which is a unix socket to this runner; see docs/vm-bench.md for the protocol.

IMPLEMENTATION NOTES
    Up to MOBIO_VM_JOBS (default 2) tests run side by side, each in a child
    runner under the parent's machine-wide lock; a vm-alone test runs by
    itself (see run_side_by_side).  Every QEMU runs under a
    deadline and is killed on every failure path, including Ctrl-C.  Console lines
    are scanned for kernel splats; one before "mobio: first insmod" is a bench
    flake and the test is run once more, as is a QEMU that dies of a signal
    (QEMU 7.2's TCG segfaulted once in early boot, 2026-12-07) before it; the
    flaked attempt's consoles and events stay in build/vm/KVER/TEST.flake/.
    A test's guest RAM is a file in /dev/shm (memory-backend-file, share=on) and
    QEMU runs with -no-reboot: a reset (sysrq b in the guest, or QMP system_reset
    from the host) ends that QEMU, and the next one starts on the same RAM file,
    so RAM survives as in a warm reset; a cold cycle or power-off starts on a
    fresh (zeroed) file.  A reset inside one TCG QEMU was 2-6x slower to boot
    than a fresh QEMU (6-30 s on 6.1: the initramfs unpacked ~30x slower after
    a reset), the bulk of the multi-boot tests' time.
"""

import argparse
import fcntl
import gzip
import hashlib
import json
import lzma
import os
import random
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
VMDIR = os.path.join(TOP, "tests", "vm")
GUEST = os.path.join(VMDIR, "guest")
BUILD = os.path.join(TOP, "build")

DEFAULT_TIMEOUT_S = 300
DEFAULT_MEM_MB = 1024
STATE_DISK_BYTES = 1 << 20          # two 64 KiB A/B slots, rounded up
SPLAT_GRACE_S = 3.0                 # keep reading the console after a splat
POWEROFF_GRACE_S = 15.0             # FINISH seen -> QEMU should exit by itself
RESET_RANDOM_MS = (0, 3000)         # "request_reset_after random"
UNPLUG_WAIT_S = 30.0                # device_del -> DEVICE_DELETED at most

# kernel console lines that fail a run (only lines with a printk timestamp)
SPLAT_RE = re.compile(r"WARNING:|BUG:|Oops|general protection|lockdep|KASAN|"
                      r"Kernel panic|Call Trace")
KLINE_RE = re.compile(r"^\[\s*\d+\.\d+\]")
FIRST_INSMOD = "mobio: first insmod"

# modules every initramfs loads at boot: the virtio block stack and evdev
BASE_KMODS = ["virtio_pci", "virtio_blk", "evdev"]

# files an initramfs depends on besides what it ships
BENCH_FILES = [os.path.abspath(__file__), os.path.join(VMDIR, "init.sh")]


# the Debian guest's image and initramfs (tests/vm/debian/build-image.sh)
DEBIAN_OUT = os.path.join(BUILD, "vm", "debian")

# one VM at a time on this machine, whichever tree or user starts it
VM_LOCK = "/tmp/mobio-vm.lock"

# --- guest architecture ------------------------------------------------------------
# The kernel's flavour (the kver's -amd64 / -arm64 suffix) picks the machine.
# arm64 is Debian's arm64 kernel on QEMU's "virt" board (TCG, -cpu max) from
# the sysroot scripts/arm64-root.sh extracts: the kernel, its modules, busybox,
# fio and the libraries the cross-built programs (make arm64, build/arm64/user/)
# need. What the tests see is the same: vda.. virtio disks, a result channel,
# a keyboard for QMP keys (sysrq, the power key), reserved RAM at the same
# offset into RAM (mobio.ram_base says where RAM starts).
ARM64_ROOT = os.environ.get("MOBIO_ARM64_ROOT") or os.path.join(TOP, ".cache", "arm64-root")
ARM64_USER = os.path.join(BUILD, "arm64", "user")
ARM64_RAM_BASE = 0x40000000         # the virt board's RAM starts at 1 GiB


class Arch:
    """What differs between the amd64 and the arm64 guest."""

    def __init__(self, kver):
        self.arm64 = kver.endswith("-arm64")
        self.root = ARM64_ROOT if self.arm64 else "/"
        self.qemu = "qemu-system-aarch64" if self.arm64 else "qemu-system-x86_64"
        self.console = "ttyAMA0" if self.arm64 else "ttyS0"
        self.ram_base = ARM64_RAM_BASE if self.arm64 else 0
        # the result channel: a virtio console on arm64 (virt has one UART)
        self.res_dev = "/dev/hvc0" if self.arm64 else "/dev/ttyS1"
        self.multiarch = "aarch64-linux-gnu" if self.arm64 else "x86_64-linux-gnu"
        self.base_kmods = BASE_KMODS + (["virtio_console", "virtio_input"] if self.arm64 else [])

    def host_path(self, path):
        """A guest system file (/usr/bin/fio, /boot/vmlinuz-K) on the host."""
        return path if not self.arm64 else os.path.join(self.root, path.lstrip("/"))

    def check(self, kver):
        if self.arm64 and not os.path.exists(self.host_path("/boot/vmlinuz-" + kver)):
            raise SystemExit("vm: %s is not in %s: run 'make arm64' (as root)"
                             % (kver, self.root))


def log(msg):
    print("vm: " + msg, file=sys.stderr, flush=True)


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True,
                          **kw).stdout


def kernels(arch=None):
    """The supported kernels: the installed amd64 ones, or with "arm64" the
    arm64 ones of the sysroot (make arm64)."""
    out = sh([os.path.join(TOP, "scripts", "kernels.sh")] + ([arch] if arch else []))
    return [k for k in out.split() if k]


def pkg_version(pkg):
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True).stdout
    except OSError:
        return "?"
    return out.strip() or "?"


# --- test headers ----------------------------------------------------------------

class TestSpec:
    def __init__(self, name):
        # NAME is tests/vm/guest/NAME.sh; a path to a .sh elsewhere is an ad-hoc
        # test, shipped in the test's extra cpio
        self.adhoc = name.endswith(".sh") and os.sep in name
        self.path = os.path.abspath(name) if self.adhoc else os.path.join(GUEST, name + ".sh")
        self.name = os.path.basename(name)[:-3] if self.adhoc else name
        if not os.path.exists(self.path):
            raise SystemExit("vm: no guest test %s" % self.path)
        self.timeout = DEFAULT_TIMEOUT_S
        self.mem = DEFAULT_MEM_MB
        self.memmap = []
        self.disks = []          # (name, bytes)
        self.kmods = []
        self.bins = []
        self.append = []
        self.trees = []          # (SRC, DEST), unexpanded
        self.root = None         # "debian": the Debian guest image, not busybox
        # why the test must have the machine to itself; ad-hoc scripts are benchmarks
        self.alone = "ad-hoc script" if self.adhoc else None
        with open(self.path) as f:
            for line in f:
                m = re.match(r"^#\s*vm-([a-z]+):\s*(.*?)\s*$", line)
                if not m:
                    continue
                key, val = m.groups()
                if key == "timeout":
                    self.timeout = int(val)
                elif key == "mem":
                    self.mem = int(val)
                elif key == "memmap":
                    self.memmap.append(val)
                elif key == "disk":
                    dname, size = val.split()
                    if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", dname):
                        raise SystemExit("vm: %s: bad disk name %r" % (name, dname))
                    self.disks.append((dname, parse_size(size)))
                elif key == "kmod":
                    self.kmods += val.split()
                elif key == "bin":
                    self.bins += val.split()
                elif key == "append":
                    self.append += val.split()
                elif key == "root":
                    if val != "debian":
                        raise SystemExit("vm: %s: vm-root knows only 'debian', saw %r"
                                         % (name, val))
                    self.root = val
                elif key == "alone":
                    self.alone = val or "vm-alone"
                elif key == "tree":
                    w = val.split()
                    if len(w) != 2 or not w[1].startswith("/"):
                        raise SystemExit("vm: %s: vm-tree wants SRC /DEST, saw %r" % (name, val))
                    self.trees.append((w[0], w[1]))
                else:
                    raise SystemExit("vm: %s: unknown header vm-%s" % (name, key))
        # a child runner beside another QEMU: the hang detector allows for it
        self.timeout = int(self.timeout * float(os.environ.get("MOBIO_VM_TIMEOUT_SCALE", "1")))


def parse_size(s):
    m = re.match(r"^(\d+)([KMG]?)$", s)
    if not m:
        raise SystemExit("vm: bad size %r" % s)
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


def guest_tests():
    """Every guest test; a name ending in lib.sh is a helper library, not a test."""
    return sorted(f[:-3] for f in os.listdir(GUEST)
                  if f.endswith(".sh") and not f.endswith("lib.sh"))


# --- initramfs ---------------------------------------------------------------------

class Cpio:
    """A newc archive written in memory: directories, files, symlinks."""

    def __init__(self):
        self.entries = {}

    def add_dir(self, path):
        path = path.strip("/")
        parts = path.split("/")
        for i in range(1, len(parts) + 1):
            p = "/".join(parts[:i])
            if p and p not in self.entries:
                self.entries[p] = ("d", 0o755, b"")

    def add_file(self, path, data, mode=0o644):
        path = path.strip("/")
        self.add_dir(os.path.dirname(path))
        self.entries[path] = ("f", mode, data)

    def add_host_file(self, path, src, mode=None):
        with open(src, "rb") as f:
            data = f.read()
        if mode is None:
            mode = stat.S_IMODE(os.stat(src).st_mode)
        self.add_file(path, data, mode)

    def add_symlink(self, path, target):
        path = path.strip("/")
        self.add_dir(os.path.dirname(path))
        if path not in self.entries:
            self.entries[path] = ("l", 0o777, target.encode())

    def bytes(self):
        out = bytearray()
        ino = 1

        def hdr(name, mode, size, nlink):
            nonlocal ino
            n = name.encode() + b"\0"
            h = "070701" + "".join("%08X" % v for v in (
                ino, mode, 0, 0, nlink, 0, size, 0, 0, 0, 0, len(n), 0))
            ino += 1
            b = h.encode() + n
            return b + b"\0" * (-len(b) % 4)

        for path in sorted(self.entries):
            kind, perm, data = self.entries[path]
            mode = {"d": stat.S_IFDIR, "f": stat.S_IFREG, "l": stat.S_IFLNK}[kind]
            out += hdr(path, mode | perm, len(data), 2 if kind == "d" else 1)
            out += data + b"\0" * (-len(data) % 4)
        out += hdr("TRAILER!!!", 0, 0, 1)
        return bytes(out)


def kmod_order(kver, names):
    """Module files to insmod, dependencies first: [(name, host path)]."""
    order = []
    arch = Arch(kver)
    for name in names:
        r = subprocess.run(["modprobe", "-d", arch.root, "-S", kver, "--show-depends", name],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            raise SystemExit("vm: %s: no module %s: %s" % (kver, name, r.stderr.strip()))
        for line in r.stdout.splitlines():
            w = line.split()
            if len(w) >= 2 and w[0] == "insmod":
                mname = re.sub(r"\.ko(\.xz|\.zst|\.gz)?$", "", os.path.basename(w[1]))
                mname = mname.replace("-", "_")
                if mname not in [o[0] for o in order]:
                    order.append((mname, w[1]))
    return order


def read_module(path):
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".xz"):
        return lzma.decompress(data)
    if path.endswith(".gz"):
        return gzip.decompress(data)
    if path.endswith(".zst"):
        return subprocess.run(["zstd", "-dc", path], check=True,
                              stdout=subprocess.PIPE).stdout
    return data


def ldd_libs(binary, arch=None):
    """Shared libraries of a binary: [(path in guest, host file)]."""
    if arch and arch.arm64:
        return cross_libs(binary, arch)
    r = subprocess.run(["ldd", binary], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, env=dict(os.environ, LD_LIBRARY_PATH=os.path.join(TOP, "libqnvram")))
    libs = []
    for line in r.stdout.splitlines():
        m = re.search(r"=>\s*(/\S+)", line) or re.match(r"^\s*(/\S+)", line)
        if m:
            libs.append((m.group(1), os.path.realpath(m.group(1))))
    return libs


def elf_deps(path):
    """(interpreter or None, [NEEDED sonames], [RUNPATH/RPATH directories])
    of an ELF file, by readelf: a foreign binary cannot be run through ldd."""
    out = subprocess.run(["readelf", "-ldW", path], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True).stdout
    interp = re.search(r"Requesting program interpreter: (\S+)\]", out)
    runpath = []
    for r in re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[(\S+)\]", out):
        runpath += [d for d in r.split(":") if d.startswith("/")]
    return (interp.group(1) if interp else None,
            re.findall(r"\(NEEDED\)\s+Shared library: \[(\S+)\]", out), runpath)


def cross_libs(binary, arch):
    """ldd_libs() for a foreign (arm64) binary: its interpreter and NEEDED
    libraries, recursively, found in the sysroot's multiarch directories or
    the cross-built libqnvram."""
    dirs = ["/lib/" + arch.multiarch, "/usr/lib/" + arch.multiarch]
    own = [os.path.join(ARM64_USER, "libqnvram")]
    libs, pending, seen = [], [binary], set()
    while pending:
        interp, needed, runpath = elf_deps(pending.pop())
        if interp and interp not in seen:
            seen.add(interp)
            libs.append((interp, os.path.realpath(arch.host_path(interp))))
        for so in needed:
            if so in seen:
                continue
            seen.add(so)
            found = [(os.path.join(d, so), os.path.join(d, so)) for d in own
                     if os.path.exists(os.path.join(d, so))] + \
                [(os.path.join(d, so), arch.host_path(os.path.join(d, so)))
                 for d in runpath + dirs if os.path.exists(arch.host_path(os.path.join(d, so)))]
            if not found:
                raise SystemExit("vm: %s needs %s, which is not in %s"
                                 % (binary, so, arch.root))
            gpath, host = found[0]
            libs.append((gpath, os.path.realpath(host)))
            pending.append(os.path.realpath(host))
    return libs


def add_binaries(cpio, bins, dest_dir, inputs, arch=None):
    for b in bins:
        cpio.add_host_file(os.path.join(dest_dir, os.path.basename(b)), b, 0o755)
        inputs.append(b)
        for gpath, host in ldd_libs(b, arch):
            if gpath.startswith(os.path.join(TOP, "libqnvram")) or \
                    gpath.startswith(os.path.join(ARM64_USER, "libqnvram")):
                gpath = "/usr/local/lib/" + os.path.basename(gpath)
            cpio.add_host_file(gpath, host, 0o755)
            inputs.append(host)


def shared_dir():
    """The peers' shared tree: $MOBIO_SHARED, else ../shared beside the repo root."""
    return os.environ.get("MOBIO_SHARED") or os.path.join(os.path.dirname(TOP), "shared")


def expand_tree_path(path, kver):
    """A vm-tree path with $KVER, $MOBIO_SHARED and other $VARs expanded."""
    env = dict(os.environ, KVER=kver, MOBIO_SHARED=shared_dir())

    def var(m):
        name = m.group(1) or m.group(2)
        if name not in env:
            raise SystemExit("vm: vm-tree %s: $%s is not set" % (path, name))
        return env[name]
    return re.sub(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))", var, path)


def tree_files(src):
    """Every file and symlink under src (or src itself): [(relative path, host path)].
    .git is left out."""
    if not os.path.isdir(src):
        return [("", src)]
    out = []
    for root, dirs, files in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        for d in dirs:
            p = os.path.join(root, d)
            if os.path.islink(p):
                out.append((os.path.relpath(p, src), p))
        for f in sorted(files):
            p = os.path.join(root, f)
            out.append((os.path.relpath(p, src), p))
    return out


def add_tree(cpio, src, dest):
    """Copy host file or tree src to dest in the guest (modes and symlinks kept)."""
    cpio.add_dir(dest if os.path.isdir(src) else os.path.dirname(dest))
    for rel, p in tree_files(src):
        g = os.path.join(dest, rel) if rel else dest
        if os.path.islink(p):
            cpio.add_symlink(g, os.readlink(p))
        else:
            cpio.add_host_file(g, p)


def fingerprint(paths, extra=""):
    h = hashlib.sha256(extra.encode())
    for p in sorted(set(paths)):
        try:
            st = os.stat(p)
            h.update(("%s %d %d\n" % (p, st.st_size, st.st_mtime_ns)).encode())
        except OSError:
            h.update(("%s missing\n" % p).encode())
    return h.hexdigest()


def write_if_changed(out, inputs, extra, build):
    """Rebuild `out` (an uncompressed newc .cpio) with build() when the inputs'
    fingerprint moved.  Uncompressed because the guest kernel unpacks it under
    TCG at every boot, where inflating ~10 MiB of gzip costs ~0.5-1 s; the
    loader copies the bigger file in a fraction of that."""
    fp = fingerprint(inputs, extra)
    stamp = out + ".stamp"
    if side_child() and os.path.exists(out):
        # The parent built it before starting us; a file edited since must
        # not make two children rewrite the image one of them is booting.
        return False
    if os.path.exists(out) and os.path.exists(stamp):
        with open(stamp) as f:
            if f.read().strip() == fp:
                return False
    data = build()
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out + ".tmp", "wb") as f:
        f.write(data)
    os.replace(out + ".tmp", out)
    with open(stamp, "w") as f:
        f.write(fp + "\n")
    return True


def user_dir(arch):
    """Where the project's userspace for the guest was built: the tree itself
    and build/user/guest on amd64, build/arm64/user/* (make arm64) on arm64."""
    if arch.arm64:
        return {d: os.path.join(ARM64_USER, d) for d in
                ("tools", "sqlite-ppcache", "libqnvram", "guest")}
    return {"tools": os.path.join(TOP, "tools"),
            "sqlite-ppcache": os.path.join(TOP, "sqlite-ppcache"),
            "libqnvram": os.path.join(TOP, "libqnvram"),
            "guest": os.path.join(BUILD, "user", "guest")}


def project_files(kver):
    """Project artifacts that go into /mobio and /usr/local."""
    import glob
    u = user_dir(Arch(kver))
    kos = sorted(glob.glob(os.path.join(BUILD, kver, "modules", "*", "*.ko")))
    bins = [p for p in [os.path.join(u["tools"], "mobioctl"),
                        os.path.join(u["sqlite-ppcache"], "ppcache")] if os.path.exists(p)]
    bins += sorted(p for p in glob.glob(os.path.join(u["guest"], "*"))
                   if os.path.isfile(p) and os.access(p, os.X_OK))
    libs = sorted(glob.glob(os.path.join(u["libqnvram"], "libqnvram.so*")))
    scripts = sorted(glob.glob(os.path.join(GUEST, "*.sh")))
    return kos, bins, libs, scripts


def busybox_path(arch):
    for p in ("/bin/busybox", "/usr/bin/busybox"):
        if os.path.exists(arch.host_path(p)):
            return arch.host_path(p)
    raise SystemExit("vm: busybox-static is not in %s (%s)" % (
        arch.root, "make arm64" if arch.arm64 else "scripts/deps.sh"))


def build_initramfs(kver):
    """build/<kver>/initramfs.cpio: busybox, /init, base modules, the project."""
    out = os.path.join(BUILD, kver, "initramfs.cpio")
    arch = Arch(kver)
    arch.check(kver)
    base = kmod_order(kver, arch.base_kmods)
    kos, bins, libs, scripts = project_files(kver)
    bb = busybox_path(arch)
    inputs = BENCH_FILES + [bb] + [p for _, p in base] + kos + bins + libs + scripts

    def build():
        c = Cpio()
        for d in ("proc", "sys", "dev", "tmp", "run", "root", "etc", "mnt",
                  "mobio/tests", "kmod", "usr/local/lib", "usr/local/bin"):
            c.add_dir(d)
        c.add_host_file("bin/busybox", bb, 0o755)
        for applet in busybox_applets(bb):
            if applet != "bin/busybox":
                c.add_symlink(applet, "/bin/busybox")
        c.add_host_file("init", os.path.join(VMDIR, "init.sh"), 0o755)
        c.add_file("etc/passwd", b"root:x:0:0:root:/root:/bin/sh\n")
        c.add_file("etc/group", b"root:x:0:\n")
        for name, path in base:
            c.add_file("kmod/%s.ko" % name, read_module(path))
        c.add_file("kmod/base.list", ("\n".join(n for n, _ in base) + "\n").encode())
        for ko in kos:
            c.add_host_file("mobio/" + os.path.basename(ko), ko, 0o644)
        for lib in libs:
            c.add_host_file("usr/local/lib/" + os.path.basename(lib), lib, 0o755)
        extra_inputs = []
        add_binaries(c, bins, "usr/local/bin", extra_inputs, arch)
        for s in scripts:
            c.add_host_file("mobio/tests/" + os.path.basename(s), s, 0o755)
        return c.bytes()

    # libraries of the binaries are inputs too, but ldd only runs when rebuilding:
    # system libraries change only with package upgrades, which move busybox's
    # or the kernel's mtime far less often; include their list cheaply
    if write_if_changed(out, inputs, kver, build):
        log("%s: built %s (%d KiB)" % (kver, os.path.relpath(out, TOP),
                                       os.path.getsize(out) >> 10))
    return out


def busybox_applets(bb):
    """busybox's applets as guest paths (bin/sh, ...): its own --list-full
    where it runs here, else the list of the host's busybox (a foreign one
    cannot run; Debian builds both from one configuration)."""
    try:
        return sh([bb, "--list-full"]).split()
    except (OSError, subprocess.CalledProcessError):
        return sh([busybox_path(Arch("host")), "--list-full"]).split()


def guest_bin(b, arch):
    """The host file of a vm-bin entry for this guest: an absolute path is
    the guest system's (the sysroot's on arm64), a relative one with a "/"
    the project's own build (tools/fb-backup), a bare name looked up in PATH."""
    if os.path.isabs(b):
        p = arch.host_path(b)
        if arch.arm64 and not os.path.exists(p):
            # merged /usr on the host, not in the extracted sysroot
            alt = "/usr" + b if not b.startswith("/usr/") else b[4:]
            p = arch.host_path(alt) if os.path.exists(arch.host_path(alt)) else p
        return p
    if os.sep in b:
        top, rest = b.split(os.sep, 1)
        return os.path.join(user_dir(arch).get(top, os.path.join(TOP, top)), rest)
    if arch.arm64:
        for d in ("/usr/bin", "/bin", "/usr/sbin", "/sbin"):
            if os.path.exists(arch.host_path(os.path.join(d, b))):
                return arch.host_path(os.path.join(d, b))
        return None
    return shutil.which(b)


def build_extras(kver, spec):
    """A second cpio for a test's vm-kmod / vm-bin / vm-tree, or None."""
    if not spec.kmods and not spec.bins and not spec.trees and not spec.adhoc:
        return None
    trees = []
    for src, dest in spec.trees:
        s = expand_tree_path(src, kver)
        s = s if os.path.isabs(s) else os.path.join(TOP, s)
        d = expand_tree_path(dest, kver)
        if os.path.exists(s):
            trees.append((os.path.abspath(s), d))
        else:
            log("%s: vm-tree %s (%s) is not on the host: %s not shipped"
                % (spec.name, src, s, d))
    arch = Arch(kver)
    key = hashlib.sha256((" ".join(spec.kmods) + "|" + " ".join(spec.bins) + "|" +
                          " ".join("%s=%s" % t for t in trees) + "|" +
                          (spec.path if spec.adhoc else "")).encode()).hexdigest()[:12]
    out = os.path.join(BUILD, kver, "extras-%s.cpio" % key)
    mods = kmod_order(kver, spec.kmods) if spec.kmods else []
    bins = []
    for b in spec.bins:
        optional = b.endswith("?")
        b = b.rstrip("?")
        # a relative path with a "/" (tools/fb-backup) is the project's own
        p = guest_bin(b, arch)
        if optional and (not p or not os.path.exists(p)):
            log("%s: optional vm-bin %s is not on the host: not shipped" % (spec.name, b))
            continue
        if not p or not os.path.exists(p):
            raise SystemExit("vm: %s: vm-bin %s not found on the host" % (spec.name, b))
        bins.append(p)
    inputs = [p for _, p in mods] + bins + BENCH_FILES + ([spec.path] if spec.adhoc else [])
    for s, _ in trees:
        inputs += [p for _, p in tree_files(s)]

    def build():
        c = Cpio()
        if spec.adhoc:
            c.add_host_file("mobio/tests/%s.sh" % spec.name, spec.path, 0o755)
        for name, path in mods:
            c.add_file("kmod/%s.ko" % name, read_module(path))
        for name in spec.kmods:
            deps = [n for n, _ in kmod_order(kver, [name])]
            c.add_file("kmod/%s.deps" % name, ("\n".join(deps) + "\n").encode())
        add_binaries(c, bins, "usr/local/bin", [], arch)
        for s, d in trees:
            add_tree(c, s, d)
        return c.bytes()

    write_if_changed(out, inputs, kver + key, build)
    return out


# --- kernel image ------------------------------------------------------------------

def extract_vmlinux(kver):
    """build/<kver>/vmlinux (uncompressed ELF, boots through PVH), or None."""
    out = os.path.join(BUILD, kver, "vmlinux")
    src = "/boot/vmlinuz-" + kver
    if os.path.exists(out) and os.path.getmtime(out) >= os.path.getmtime(src):
        return out
    with open(src, "rb") as f:
        data = f.read()
    elf = None
    for magic in (b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd"):
        pos = data.find(magic)
        while pos >= 0 and elf is None:
            try:
                if magic.startswith(b"\xfd"):
                    cand = lzma.LZMADecompressor().decompress(data[pos:])
                else:
                    cand = subprocess.run(["zstd", "-dcq"], input=data[pos:],
                                          stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL).stdout
                if cand[:4] == b"\x7fELF":
                    elf = cand
            except (lzma.LZMAError, OSError):
                pass
            pos = data.find(magic, pos + 1)
        if elf:
            break
    if not elf:
        log("%s: could not extract vmlinux from %s" % (kver, src))
        return None
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out + ".tmp", "wb") as f:
        f.write(elf)
    os.replace(out + ".tmp", out)
    return out


def kernel_image(kver, mode):
    arch = Arch(kver)
    if arch.arm64:
        arch.check(kver)
        return arch.host_path("/boot/vmlinuz-" + kver)
    if mode == "pvh":
        v = extract_vmlinux(kver)
        if v:
            return v
    return "/boot/vmlinuz-" + kver


# --- arm64 machine ----------------------------------------------------------------

# TCG always (an amd64 host); pauth-impdef: QEMU's cheap pointer-auth
# algorithm instead of QARMA, which costs TCG much time in every function
ARM64_MACHINE = ["-machine", "virt", "-accel", "tcg", "-cpu", "max,pauth-impdef=on"]


def arm64_dtb(spec):
    """The virt board's device tree for this RAM size with the test's
    "# vm-memmap: SIZE$OFFSET" ranges as no-map reserved-memory nodes at
    RAM base + OFFSET, as a phone's bootloader reserves RAM (arm64 has no
    memmap=). QEMU dumps its own tree (dumpdtb); dtc adds the nodes."""
    nodes = []
    for m in spec.memmap:
        mm = re.match(r"^(\d+[KMG]?)\$(0x[0-9a-fA-F]+|\d+)$", m)
        if not mm:
            raise SystemExit("vm: %s: vm-memmap wants SIZE$ADDR, saw %r" % (spec.name, m))
        size, addr = parse_size(mm.group(1)), int(mm.group(2), 0) + ARM64_RAM_BASE
        nodes.append("\t\tmobio@%x {\n\t\t\treg = <%#x %#x %#x %#x>;\n\t\t\tno-map;\n\t\t};\n"
                     % (addr, addr >> 32, addr & 0xffffffff, size >> 32, size & 0xffffffff))
    key = hashlib.sha256(("%d|%s" % (spec.mem, "".join(nodes))).encode()).hexdigest()[:12]
    out = os.path.join(BUILD, "arm64", "virt-%s.dtb" % key)
    if os.path.exists(out):
        return out
    os.makedirs(os.path.dirname(out), exist_ok=True)
    base = out + ".base"
    subprocess.run(["qemu-system-aarch64"] + ARM64_MACHINE[:1] +
                   ["virt,dumpdtb=" + base] + ARM64_MACHINE[2:] +
                   ["-smp", "2", "-m", str(spec.mem), "-display", "none", "-nodefaults"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    dts = sh(["dtc", "-q", "-I", "dtb", "-O", "dts", base])
    dts += ("/ {\n\treserved-memory {\n\t\t#address-cells = <2>;\n\t\t#size-cells = <2>;\n"
            "\t\tranges;\n%s\t};\n};\n" % "".join(nodes))
    subprocess.run(["dtc", "-q", "-I", "dts", "-O", "dtb", "-o", out + ".tmp", "-"],
                   input=dts, text=True, check=True)
    os.replace(out + ".tmp", out)
    os.unlink(base)
    return out


# --- accelerator -------------------------------------------------------------------

_accel = None


def accel_args():
    """KVM when /dev/kvm opens and a probe boot reaches the kernel, else TCG."""
    global _accel
    if _accel is None and os.environ.get("MOBIO_VM_ACCEL") in ("tcg", "kvm"):
        # a child runner: the parent probed
        tcg = os.environ["MOBIO_VM_ACCEL"] == "tcg"
        _accel = ["-accel", "tcg", "-cpu", "max"] if tcg else ["-accel", "kvm", "-cpu", "host"]
    if _accel is None:
        _accel = ["-accel", "tcg", "-cpu", "max"]
        if os.environ.get("MOBIO_VM_KVM", "auto") != "0" and kvm_probe():
            _accel = ["-accel", "kvm", "-cpu", "host"]
        log("accelerator: %s" % _accel[1])
    return _accel


def kvm_probe():
    try:
        fd = os.open("/dev/kvm", os.O_RDWR)
        os.close(fd)
    except OSError:
        return False
    cache = os.path.join(BUILD, "vm", "kvm-probe")
    if os.path.exists(cache) and time.time() - os.path.getmtime(cache) < 3600:
        with open(cache) as f:
            return f.read().strip() == "ok"
    ok = False
    k = kernels()
    if k:
        try:
            r = subprocess.run(
                ["qemu-system-x86_64", "-accel", "kvm", "-cpu", "host", "-m", "256",
                 "-display", "none", "-no-reboot", "-kernel", "/boot/vmlinuz-" + k[0],
                 "-append", "console=ttyS0 panic=-1", "-serial", "stdio"],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=20)
            ok = b"Linux version" in r.stdout
        except subprocess.TimeoutExpired as e:
            ok = e.stdout is not None and b"Linux version" in e.stdout
    os.makedirs(os.path.dirname(cache), exist_ok=True)
    with open(cache, "w") as f:
        f.write("ok\n" if ok else "fail\n")
    return ok


# --- QEMU --------------------------------------------------------------------------

class Qmp:
    def __init__(self, path, deadline):
        self.sock = None
        while time.time() < deadline:
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(path)
                self.sock = s
                break
            except OSError:
                s.close()
                time.sleep(0.05)
        if not self.sock:
            raise RuntimeError("QMP socket %s did not open" % path)
        self.sock.settimeout(10)
        self.buf = b""
        self.events = []                  # asynchronous events not yet taken
        self._reply()                     # greeting
        self.cmd("qmp_capabilities")

    def _reply(self):
        while True:
            while b"\n" not in self.buf:
                d = self.sock.recv(65536)
                if not d:
                    raise RuntimeError("QMP closed")
                self.buf += d
            line, self.buf = self.buf.split(b"\n", 1)
            msg = json.loads(line)
            if "event" not in msg:
                return msg
            self.events.append(msg)

    def take_event(self, name, **data):
        """Read what QMP has sent without blocking; remove and return the first
        event NAME whose data has these values, or None."""
        self.sock.setblocking(False)
        try:
            while True:
                d = self.sock.recv(65536)
                if not d:
                    break
                self.buf += d
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            pass                          # QEMU gone (ECONNRESET): what was read counts
        finally:
            self.sock.settimeout(10)
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            msg = json.loads(line)
            if "event" in msg:
                self.events.append(msg)
        for i, e in enumerate(self.events):
            if e["event"] == name and all(e.get("data", {}).get(k) == v
                                          for k, v in data.items()):
                return self.events.pop(i)
        return None

    def cmd(self, name, **args):
        m = {"execute": name}
        if args:
            m["arguments"] = args
        self.sock.sendall(json.dumps(m).encode() + b"\n")
        r = self._reply()
        if "error" in r:
            raise RuntimeError("QMP %s: %s" % (name, r["error"]))
        return r.get("return")

    def sysrq(self, letter):
        """Alt-SysRq-LETTER on the guest's AT keyboard (the command line has
        sysrq_always_enabled)."""
        self.cmd("send-key", keys=[{"type": "qcode", "data": k}
                                   for k in ("alt", "sysrq", letter)])

    def key(self, qcode, down):
        self.cmd("input-send-event", events=[{"type": "key", "data": {
            "down": down, "key": {"type": "qcode", "data": qcode}}}])

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class Vm:
    """One QEMU process: console file, result socket (ttyS1), QMP."""

    def __init__(self, kver, image, initrd, spec, outdir, n, test, interactive=False,
                 ram_path=None):
        self.outdir = outdir
        self.console_path = os.path.join(outdir, "console-%d.txt" % n)
        self.sockdir = os.path.join("/tmp", "mobio-vm-%d-%d" % (os.getpid(), n))
        os.makedirs(self.sockdir, exist_ok=True)
        self.qmp_path = os.path.join(self.sockdir, "qmp")
        self.res_path = os.path.join(self.sockdir, "res")
        # cryptomgr.notests: the crypto API's boot self-tests are the kernel's
        # own, not the project's, and take ~1 s of TCG at every boot
        # sysrq_always_enabled: a hung test's task dump (TestRun.dump_tasks)
        arch = Arch(kver)
        append = ["console=" + arch.console, "loglevel=5", "printk.time=1", "panic=-1",
                  "cryptomgr.notests", "sysrq_always_enabled",
                  "mobio.test=" + test,
                  "mobio.disks=" + ",".join(d for d, _ in spec.disks)]
        if arch.arm64:
            # arm64 has no memmap=: the reservations are in the device tree
            append += ["mobio.res=" + arch.res_dev, "mobio.ram_base=%#x" % arch.ram_base]
        else:
            append += ["memmap=" + m for m in spec.memmap]
            # tsc=reliable: no clocksource watchdog on the TSC. Under TCG a
            # vCPU descheduled between its reads of the TSC and the HPET makes
            # the watchdog see skew and mark the TSC unstable mid-test, which
            # re-patches sched_clock's static keys on a running guest; TCG's
            # cross-CPU code patching then oopsed in sched_clock_cpu (int3,
            # three times on 2026-12-06/07, once after insmod: a failed test)
            # and moved the rest of that boot to the slower HPET clock. QEMU's
            # TSC is one clock for every vCPU.
            append += ["tsc=reliable"]
        append += spec.append
        append += os.environ.get("MOBIO_VM_APPEND", "").split()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.res_path)
        self.listener.listen(1)
        # (name, image): each virtio disk has QOM id "disk-<name>" for QMP
        # device_del; the -drive text keeps "file=<image>," first
        # (bench/fio/run-bench.py matches it) and the order keeps vda, vdb...
        drives = [("state", os.path.join(outdir, "state.img"))] + \
            [(d, os.path.join(outdir, "disk-%s.img" % d)) for d, _ in spec.disks]
        if spec.root:
            # last, so the declared disks keep vdb, vdc...; found by its label
            drives.append(("root", os.path.join(outdir, "disk-root.img")))
            append += ["root=LABEL=mobio-root", "rw"]
        cmd = [arch.qemu] + (ARM64_MACHINE if arch.arm64 else accel_args()) + [
            "-smp", "2", "-m", str(spec.mem), "-display", "none", "-nodefaults",
            "-no-user-config", "-kernel", image, "-initrd", initrd,
            "-append", " ".join(append),
            "-qmp", "unix:%s,server=on,wait=off" % self.qmp_path,
        ]
        if arch.arm64 and spec.memmap:
            cmd += ["-dtb", arm64_dtb(spec)]
        if ram_path:
            # RAM kept in a file the next QEMU maps again: a reset ends this one
            cmd += ["-object", "memory-backend-file,id=ram,size=%dM,mem-path=%s,share=on"
                    % (spec.mem, ram_path), "-machine", "memory-backend=ram", "-no-reboot"]
        if interactive:
            cmd += ["-serial", "mon:stdio"]
        else:
            cmd += ["-serial", "file:" + self.console_path]
        cmd += ["-chardev", "socket,id=res,path=" + self.res_path]
        if arch.arm64:
            # virt has one UART; a keyboard for QMP's sysrq and power keys
            cmd += ["-device", "virtio-serial-pci", "-device", "virtconsole,chardev=res",
                    "-device", "virtio-keyboard-pci"]
        else:
            cmd += ["-serial", "chardev:res"]
        for name, img in drives:
            cmd += ["-drive", "file=%s,if=none,id=drv-%s,format=raw,cache=writeback"
                    % (img, name),
                    "-device", "virtio-blk-pci,drive=drv-%s,id=disk-%s,serial=mobio-%s"
                    % (name, name, name)]
        self.cmd = cmd
        with open(os.path.join(outdir, "qemu-%d.cmd" % n), "w") as f:
            f.write(" ".join("'%s'" % a for a in cmd) + "\n")
        self.t_start = time.time()
        self.proc = subprocess.Popen(cmd, stdin=None if interactive else subprocess.DEVNULL,
                                     stdout=None if interactive else subprocess.DEVNULL,
                                     stderr=None if interactive else open(
                                         os.path.join(outdir, "qemu-%d.stderr" % n), "w"),
                                     start_new_session=not interactive,
                                     preexec_fn=_with_parent(signal.SIGKILL))
        self.res = None
        self.qmp = None
        self.res_buf = b""
        self.con_pos = 0
        self.con_buf = b""
        try:
            self._connect()
        except BaseException:
            self.stop()
            raise

    def _connect(self):
        deadline = time.time() + 20
        self.listener.settimeout(0.1)
        while self.res is None:
            if self.proc.poll() is not None:
                raise RuntimeError("QEMU exited at start (rc %d)" % self.proc.returncode)
            if time.time() > deadline:
                raise RuntimeError("QEMU did not connect its result channel")
            try:
                self.res, _ = self.listener.accept()
            except socket.timeout:
                pass
        self.res.setblocking(False)
        self.qmp = Qmp(self.qmp_path, time.time() + 20)

    def read_results(self):
        """New complete lines from ttyS1 (None when QEMU closed it)."""
        try:
            d = self.res.recv(65536)
            if not d:
                return None
            self.res_buf += d
        except BlockingIOError:
            pass
        except OSError:
            return None
        lines = []
        while b"\n" in self.res_buf:
            line, self.res_buf = self.res_buf.split(b"\n", 1)
            lines.append(line.decode(errors="replace").strip("\r"))
        return lines

    def read_console(self):
        try:
            with open(self.console_path, "rb") as f:
                f.seek(self.con_pos)
                d = f.read()
        except OSError:
            return []
        self.con_pos += len(d)
        self.con_buf += d
        lines = []
        while b"\n" in self.con_buf:
            line, self.con_buf = self.con_buf.split(b"\n", 1)
            lines.append(line.decode(errors="replace").rstrip("\r"))
        return lines

    def send(self, text):
        try:
            self.res.sendall(text.encode())
        except OSError as e:
            log("could not answer the guest: %s" % e)

    def stop(self, grace=0.0):
        """End QEMU: wait `grace` s for it to exit, then quit via QMP, then kill."""
        if self.proc.poll() is None and grace > 0:
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                pass
        if self.proc.poll() is None and self.qmp:
            try:
                self.qmp.sock.settimeout(2)
                self.qmp.cmd("quit")
                self.proc.wait(5)
            except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired):
                pass
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                self.proc.kill()
            self.proc.wait()
        for s in (self.res, self.listener):
            if s:
                s.close()
        if self.qmp:
            self.qmp.close()
        shutil.rmtree(self.sockdir, ignore_errors=True)


_live_vms = []


def _with_parent(sig):
    """A preexec_fn: the child gets `sig` when the runner dies, whatever
    kills it (PR_SET_PDEATHSIG)."""
    def preexec():
        try:
            import ctypes
            ctypes.CDLL(None, use_errno=True).prctl(1, sig)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    return preexec


def _kill_live(*_):
    for vm in list(_live_vms):
        try:
            os.killpg(vm.proc.pid, signal.SIGKILL)
        except OSError:
            pass
    raise KeyboardInterrupt


# --- one test on one kernel ----------------------------------------------------------

class Case:
    def __init__(self, kver, test, name, ok, msg=""):
        self.kver, self.test, self.name, self.ok, self.msg = kver, test, name, ok, msg

    def line(self):
        s = "%s %s %s %s" % ("PASS" if self.ok else "FAIL", self.kver, self.test, self.name)
        return s + (" " + self.msg if self.msg else "")


class TestRun:
    def __init__(self, kver, spec, image, initrd):
        self.kver, self.spec, self.image, self.initrd = kver, spec, image, initrd
        self.outdir = os.path.join(BUILD, "vm", kver, spec.name)
        self.cases = []
        self.boots = []            # (kind, seconds)
        self.flake = None          # what went wrong before the first insmod
        self.error = None          # bench-level failure message
        self.events = []

    def event(self, msg):
        line = "%8.3f %s" % (time.time() - self.t0, msg)
        self.events.append(line)
        if os.environ.get("MOBIO_VM_VERBOSE"):
            log("%s/%s: %s" % (self.kver, self.spec.name, line))

    def prepare(self):
        shutil.rmtree(self.outdir, ignore_errors=True)
        os.makedirs(self.outdir)
        with open(os.path.join(self.outdir, "state.img"), "wb") as f:
            f.truncate(STATE_DISK_BYTES)
        for d, size in self.spec.disks:
            with open(os.path.join(self.outdir, "disk-%s.img" % d), "wb") as f:
                f.truncate(size)
        if self.spec.root:
            # every run starts from the image as built (a copy: the guest writes it)
            subprocess.run(["cp", "--sparse=always", os.path.join(DEBIAN_OUT, "root.img"),
                            os.path.join(self.outdir, "disk-root.img")], check=True)

    def run(self):
        self.prepare()
        self.t0 = time.time()
        deadline = self.t0 + self.spec.timeout
        n = 0
        vm = None
        console = []               # every console line of every QEMU, in order
        ram = os.path.join("/dev/shm", "mobio-vm-%d-%s.ram" % (os.getpid(), self.spec.name))
        kind = "cold"
        try:
            while True:
                n += 1
                if kind in ("cold", "cycle") and os.path.exists(ram):
                    os.unlink(ram)         # power gone: the next QEMU's RAM is zeroes
                try:
                    vm = Vm(self.kver, self.image, self.initrd, self.spec, self.outdir, n,
                            self.spec.name, ram_path=ram)
                except (RuntimeError, OSError) as e:
                    self.error = "QEMU %d did not start: %s" % (n, e)
                    break
                _live_vms.append(vm)
                self.event("qemu %d started (%s)" % (n, kind))
                try:
                    outcome = self.watch(vm, deadline, console, kind)
                except (RuntimeError, OSError, ValueError) as e:
                    self.error = "bench: %s" % e
                    outcome = "error"
                if outcome in ("cold_cycle", "poweroff_cycle", "warm", "reset"):
                    vm.stop(POWEROFF_GRACE_S if outcome == "poweroff_cycle" else 0)
                    _live_vms.remove(vm)
                    vm = None
                    kind = outcome if outcome in ("warm", "reset") else "cycle"
                    continue
                vm.stop(POWEROFF_GRACE_S if outcome == "finish" else 0)
                _live_vms.remove(vm)
                vm = None
                break
        finally:
            if vm:
                vm.stop()
                if vm in _live_vms:
                    _live_vms.remove(vm)
            with open(os.path.join(self.outdir, "console.txt"), "w") as f:
                f.write("\n".join(console) + "\n")
            with open(os.path.join(self.outdir, "events.txt"), "w") as f:
                f.write("\n".join(self.events) + "\n")
            if os.path.exists(ram):
                os.unlink(ram)
        if self.error:
            self.cases.append(Case(self.kver, self.spec.name, "bench", False, self.error))
        return self

    def device_del(self, vm, arg):
        """REQ device_del <disk-name> <id>: hot-unplug the virtio disk of that
        vm-disk name (QMP device_del: the guest is asked to eject it through ACPI
        PCI hotplug). The guest gets "DONE <id> ok" once QEMU reports
        DEVICE_DELETED, else "DONE <id> timeout" or "DONE <id> error <why>"."""
        a = arg.split()
        if len(a) != 2 or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", a[0]):
            self.event("bad device_del request %r" % arg)
            if len(a) >= 2:
                vm.send("DONE %s error bad request\n" % a[-1])
            return None
        qid = "disk-" + a[0]
        try:
            vm.qmp.cmd("device_del", id=qid)
        except RuntimeError as e:
            self.event("device_del %s: %s" % (qid, e))
            vm.send("DONE %s error %s\n" % (a[1], str(e).replace("\n", " ")))
            return None
        self.event("device_del %s" % qid)
        return (qid, a[1], time.time() + UNPLUG_WAIT_S)

    def dump_tasks(self, vm, follow_console, console):
        """A hung guest: blocked tasks (sysrq w), every task (t) and the
        CPUs (l) onto the console, which the run keeps, before QEMU goes.
        The dump's stacks are kept out of the splat scan: asked for, not a
        kernel failure."""
        follow_console()
        if vm.proc.poll() is not None:
            return
        try:
            # 9: console loglevel 9 first, the stacks are KERN_INFO (loglevel=5)
            for letter in ("9", "w", "t", "l"):
                vm.qmp.sysrq(letter)
                self.event("timeout: sysrq %s" % letter)
                time.sleep(1)
            time.sleep(2)
        except (RuntimeError, OSError, ValueError) as e:
            self.event("timeout: sysrq failed: %s" % e)
        console.extend(vm.read_console())

    def watch(self, vm, deadline, console, kind):
        """Follow one QEMU until finish, a cold-cycle request or a failure."""
        boot_start, boot_kind = vm.t_start, kind
        module_loaded = False
        splat_at = None
        splat_lines = []
        finished = None            # time FINISH was seen
        exited = None
        reset_at = None
        key_up_at = None
        key_id = None
        poweroff_at = None         # the guest powers off by itself, then a new QEMU
        unplug = None              # (QOM id, request id, deadline) of a device_del
        reset_kind = None          # "warm" (guest sysrq b) or "reset" (host) requested

        def follow_console():
            """Append QEMU's new console lines; note the first kernel splat."""
            nonlocal module_loaded, splat_at, splat_lines
            for line in vm.read_console():
                console.append(line)
                if FIRST_INSMOD in line:
                    module_loaded = True
                if KLINE_RE.match(line) and SPLAT_RE.search(line) and splat_at is None:
                    splat_at = time.time()
                    splat_lines = [len(console) - 1]
                    if not module_loaded:
                        self.flake = "splat: " + line.strip()
                    self.event("splat: " + line)

        while True:
            time.sleep(0.05)
            now = time.time()
            follow_console()
            res = vm.read_results()
            if res is None:
                res = []
                if vm.proc.poll() is None:
                    time.sleep(0.05)
            for line in res:
                self.event("guest: " + line)
                w = line.split(" ", 3)
                if len(w) < 2 or w[0] != "MOBIO":
                    continue
                what = w[1]
                if what == "START":
                    self.boots.append((boot_kind, now - boot_start))
                elif what == "RESULT" and len(w) >= 4:
                    rest = w[3].split(" ", 1)
                    self.cases.append(Case(self.kver, self.spec.name, rest[0],
                                           w[2] == "PASS", rest[1] if len(rest) > 1 else ""))
                elif what == "FINISH":
                    finished = now
                    vm.send("DONE finish\n")
                elif what == "NOTE":
                    print("  " + line.split(" ", 2)[2], flush=True)
                elif what == "EXIT":
                    if not finished:
                        self.error = "script exited (rc %s) without finish" % w[2]
                        return "exit"
                elif what == "REQ":
                    req = w[2] if len(w) > 2 else ""
                    arg = w[3] if len(w) > 3 else ""
                    if req == "warm_reboot":
                        reset_kind = "warm"
                    elif req == "cold_cycle":
                        return "cold_cycle"
                    elif req == "poweroff_cycle":
                        poweroff_at = now
                    elif req == "reset":
                        vm.qmp.cmd("system_reset")
                        self.event("system_reset")
                        reset_kind = "reset"
                    elif req == "reset_after":
                        ms = pick_delay_ms(arg)
                        reset_at = now + ms / 1000.0
                        self.event("system_reset in %d ms" % ms)
                    elif req == "power_key":
                        a = arg.split()
                        ms, key_id = int(a[0]), (a[1] if len(a) > 1 else "")
                        vm.qmp.key("power", True)
                        key_up_at = time.time() + ms / 1000.0
                        self.event("power key down for %d ms" % ms)
                    elif req == "device_del":
                        unplug = self.device_del(vm, arg)
            if unplug and vm.qmp.take_event("DEVICE_DELETED", device=unplug[0]):
                self.event("%s deleted" % unplug[0])
                vm.send("DONE %s ok\n" % unplug[1])
                unplug = None
            elif unplug and time.time() > unplug[2]:
                self.event("%s: no DEVICE_DELETED in %d s" % (unplug[0], UNPLUG_WAIT_S))
                vm.send("DONE %s timeout\n" % unplug[1])
                unplug = None
            if poweroff_at and vm.proc.poll() is not None:
                self.event("guest powered off (%.1f s)" % (time.time() - poweroff_at))
                return "poweroff_cycle"
            if key_up_at and time.time() >= key_up_at:
                vm.qmp.key("power", False)
                self.event("power key up")
                vm.send("DONE %s\n" % key_id)
                key_up_at = None
            if reset_at and time.time() >= reset_at:
                vm.qmp.cmd("system_reset")
                self.event("system_reset (delayed)")
                reset_kind = "reset"
                reset_at = None
            # QEMU gone (a panic resets it): no more console lines to wait for
            if splat_at is not None and (now - splat_at > SPLAT_GRACE_S or exited is not None):
                i = splat_lines[0]
                text = "\n".join(console[max(0, i - 5):i + 60])
                self.splat = text
                self.error = "kernel splat: " + console[i].strip()
                return "splat"
            if finished and splat_at is None:
                # give the console a moment to show a late splat, then stop
                if vm.proc.poll() is not None or now - finished > POWEROFF_GRACE_S:
                    for line in vm.read_console():
                        console.append(line)
                        if KLINE_RE.match(line) and SPLAT_RE.search(line):
                            splat_at = splat_at or now
                            splat_lines = [len(console) - 1]
                    if splat_at is None:
                        return "finish"
            if vm.proc.poll() is not None and exited is None:
                exited = now
            if exited is not None and not finished and splat_at is None:
                # -no-reboot: a reset ends QEMU; the guest's own (sysrq b, a
                # triple fault, panic=-1) says "guest-reset", the host's
                # system_reset "host-qmp-system-reset"
                ev = vm.qmp.take_event("SHUTDOWN")
                why = ev.get("data", {}).get("reason") if ev else None
                if why in ("guest-reset", "host-qmp-system-reset"):
                    follow_console()
                    if splat_at is None:
                        self.event("reset (%s): the next QEMU maps the same RAM" % why)
                        return reset_kind or "reset"
            if exited is not None and not finished and now - exited > 0.5:
                follow_console()   # its last lines may hold the first insmod
                self.error = "QEMU exited (rc %s) without finish" % vm.proc.returncode
                # QEMU killed by a signal (the runner kills only after it has
                # decided): a host-side crash, before any module a flake
                if vm.proc.returncode < 0 and not module_loaded:
                    self.flake = "QEMU died of signal %d" % -vm.proc.returncode
                return "exited"
            if now > deadline:
                self.dump_tasks(vm, follow_console, console)
                self.error = ("timeout after %d s without finish (sysrq w, t and l: "
                              "console.txt)" % self.spec.timeout)
                return "timeout"


def pick_delay_ms(arg):
    arg = arg.strip()
    m = re.match(r"^(\d+)-(\d+)$", arg)
    if m:
        return random.randint(int(m.group(1)), int(m.group(2)))
    if arg.isdigit():
        return int(arg)
    return random.randint(*RESET_RANDOM_MS)


# --- driver --------------------------------------------------------------------------

def boot_mode():
    return os.environ.get("MOBIO_VM_BOOT", "pvh")


def side_child():
    """True in a child runner of run_side_by_side(): it runs under its
    parent's lock and on the images its parent built."""
    return os.environ.get("MOBIO_VM_LOCK_OWNER") == str(os.getppid())


def vm_lock():
    """Hold the machine-wide VM lock for the rest of this process."""
    if side_child():
        return None
    f = open(VM_LOCK, "a")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        log("another VM run holds %s; waiting" % VM_LOCK)
        fcntl.flock(f, fcntl.LOCK_EX)
    return f


def build_debian_image(tests):
    """The Debian guest's image for these tests (tests/vm/debian/build-image.sh
    keeps it cached); the .debs come from `make deb` (build/deb/)."""
    if not tests or side_child():
        return
    log("Debian guest image (%s)" % DEBIAN_OUT)
    r = subprocess.run([os.path.join(VMDIR, "debian", "build-image.sh"), DEBIAN_OUT,
                        os.path.join(BUILD, "deb")] + tests)
    if r.returncode != 0:
        raise SystemExit("vm: the Debian guest image could not be built (above)")


def test_initrd(kver, spec, initrd):
    """The initramfs of one test: the kernel's, plus the test's extras if any;
    for the Debian guest, that image's own initramfs of the kernel."""
    if spec.root:
        return os.path.join(DEBIAN_OUT, "boot", "initrd.img-" + kver)
    extras = build_extras(kver, spec)
    if not extras:
        return initrd
    rd = os.path.join(BUILD, "vm", kver, "initrd-%s.cpio" % spec.name)
    if side_child() and os.path.exists(rd):
        return rd                  # the parent joined them before starting us
    os.makedirs(os.path.dirname(rd), exist_ok=True)
    with open(rd, "wb") as f:
        for p in (initrd, extras):
            with open(p, "rb") as g:
                shutil.copyfileobj(g, f)
    return rd


def run_one(kver, spec, image, rd, flakes):
    """One test on one kernel, retried once after a bench flake; prints its cases."""
    log("%s: %s" % (kver, spec.name))
    t = time.time()
    r = TestRun(kver, spec, image, rd).run()
    if r.flake:
        # the retry starts from an empty directory: keep the flaked boot's
        # consoles and events (not its disk images) to diagnose it
        kept = r.outdir + ".flake"
        shutil.rmtree(kept, ignore_errors=True)
        shutil.copytree(r.outdir, kept, ignore=shutil.ignore_patterns("*.img"))
        flakes.append("%s %s: before the first insmod, retried (its console in %s): %s"
                      % (kver, spec.name, os.path.relpath(kept, TOP), r.flake))
        log("bench flake: " + flakes[-1])
        r = TestRun(kver, spec, image, rd).run()
    log("%s: %s done in %.1f s" % (kver, spec.name, time.time() - t))
    if getattr(r, "splat", None):
        print("---- %s %s: kernel splat ----\n%s\n----" % (kver, spec.name, r.splat))
    cases = list(r.cases)
    if not cases:
        cases.append(Case(kver, spec.name, "bench", False, "no case ran"))
    for c in cases:
        print(c.line(), flush=True)
    return cases, r.boots


def vm_jobs():
    """How many QEMUs run side by side (MOBIO_VM_JOBS, default 2 = the cores)."""
    try:
        return max(1, int(os.environ.get("MOBIO_VM_JOBS", "2")))
    except ValueError:
        raise SystemExit("vm: MOBIO_VM_JOBS must be a number")


def run_tests(kvers, names, results_json=None):
    if not kvers:
        raise SystemExit("vm: no supported kernel installed (scripts/deps.sh)")
    _lock = vm_lock()  # noqa: F841 (held until exit)
    signal.signal(signal.SIGTERM, _kill_live)
    signal.signal(signal.SIGHUP, _kill_live)
    cases, boots, flakes = [], {}, []
    t_wall = time.time()
    work = []                      # (kver, spec, image, initrd), kernel by kernel
    build_debian_image([s.path for s in map(TestSpec, names) if s.root])
    for kver in kvers:
        initrd = build_initramfs(kver)
        image = kernel_image(kver, boot_mode())
        for name in names:
            spec = TestSpec(name)
            work.append((kver, spec, image, test_initrd(kver, spec, initrd)))
    accel_args()                   # probed once, before any test starts
    jobs = vm_jobs() if results_json is None else 1
    try:
        if jobs > 1 and len(work) > 1:
            run_side_by_side(work, jobs, cases, boots, flakes)
        else:
            for kver, spec, image, rd in work:
                c, b = run_one(kver, spec, image, rd, flakes)
                cases += c
                boots.setdefault(kver, []).extend(b)
    except KeyboardInterrupt:
        for vm in list(_live_vms):
            vm.stop()
        print("interrupted", file=sys.stderr)
        return 130
    if results_json:
        with open(results_json + ".tmp", "w") as f:
            json.dump({"cases": [[c.kver, c.test, c.name, c.ok, c.msg] for c in cases],
                       "boots": boots, "flakes": flakes}, f)
        os.replace(results_json + ".tmp", results_json)
    else:
        summary(kvers, cases, boots, flakes, time.time() - t_wall)
    failed = sum(1 for c in cases if not c.ok)
    return 1 if failed or not cases else 0


class SideRun:
    """One test in a child runner (run.py test --results-json), output to a file."""

    def __init__(self, kver, spec, scale):
        self.kver, self.spec = kver, spec
        self.outdir = os.path.join(BUILD, "vm", kver)
        os.makedirs(self.outdir, exist_ok=True)
        self.log_path = os.path.join(self.outdir, "runner-%s.log" % spec.name)
        self.res_path = os.path.join(self.outdir, "runner-%s.json" % spec.name)
        if os.path.exists(self.res_path):
            os.unlink(self.res_path)
        env = dict(os.environ, MOBIO_VM_LOCK_OWNER=str(os.getpid()),
                   MOBIO_VM_TIMEOUT_SCALE=str(scale), MOBIO_VM_ACCEL=accel_args()[1])
        self.out = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "test", "--kver", kver,
             "--results-json", self.res_path,
             spec.path if spec.adhoc else spec.name],
            stdout=self.out, stderr=subprocess.STDOUT, env=env,
            preexec_fn=_with_parent(signal.SIGTERM))

    def stop(self):
        """SIGTERM (the child stops its QEMU and cleans up), then SIGKILL."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def collect(self):
        """Print the child's output in one piece; return its cases, boots, flakes."""
        self.out.close()
        with open(self.log_path) as f:
            sys.stdout.write(f.read())
        sys.stdout.flush()
        try:
            with open(self.res_path) as f:
                r = json.load(f)
        except (OSError, ValueError):
            c = Case(self.kver, self.spec.name, "bench", False,
                     "runner exited (rc %s) without results" % self.proc.returncode)
            print(c.line(), flush=True)
            return [c], [], []
        return ([Case(*c) for c in r["cases"]],
                [tuple(b) for b in r["boots"].get(self.kver, [])], r["flakes"])


def run_side_by_side(work, jobs, cases, boots, flakes):
    """Up to `jobs` tests at once, each in its own child runner.

    A test whose header says vm-alone (its checks compare times, or it is a
    benchmark) runs with no other QEMU beside it; the rest share the cores.
    Under TCG a test uses about one host core on average (CPU time / wall
    time 0.5-1.05, docs/vm-bench.md): two at once fill the machine's two.
    A shared test's vm-timeout is doubled, since a neighbour may slow it.
    """
    alone = [w for w in work if w[1].alone]
    shared = [w for w in work if not w[1].alone]
    # kernels interleaved, so both progress and the tail is short
    order = {}
    for w in shared:
        order.setdefault(w[1].name, len(order))
    shared.sort(key=lambda w: (order[w[1].name], w[0]))
    queue = alone + shared
    running = []
    try:
        while queue or running:
            while queue and len(running) < jobs:
                kver, spec = queue[0][0], queue[0][1]
                if running and (spec.alone or any(r.spec.alone for r in running)):
                    break
                queue.pop(0)
                running.append(SideRun(kver, spec, 1 if spec.alone else 2))
            time.sleep(0.2)
            for r in [r for r in running if r.proc.poll() is not None]:
                running.remove(r)
                c, b, f = r.collect()
                cases += c
                boots.setdefault(r.kver, []).extend(b)
                flakes += f
    except KeyboardInterrupt:
        for r in running:
            r.stop()
        raise


def arm64_version(kver):
    """The Debian version of an arm64 kernel of the sysroot (its stamp)."""
    try:
        with open(os.path.join(ARM64_ROOT, ".mobio-stamp")) as f:
            for line in f:
                w = line.split()
                if len(w) == 3 and w[0] == "kernel" and w[1] == kver:
                    return w[2]
    except OSError:
        pass
    return "?"


def summary(kvers, cases, boots, flakes, wall):
    print("")
    arm64 = all(Arch(k).arm64 for k in kvers)
    print("== summary (%s) ==" % ("arm64 virt, tcg" if arm64 else
                                  "%s boot, %s" % (boot_mode(), accel_args()[1])))
    for c in cases:
        print(c.line())
    for kver in kvers:
        series = ".".join(kver.split(".")[:2])
        if Arch(kver).arm64:
            print("kernel %s: image and headers %s (%s), source %s" % (
                kver, arm64_version(kver), os.path.relpath(ARM64_ROOT, TOP),
                pkg_version("linux-source-" + series)))
            continue
        print("kernel %s: image %s, headers %s, source %s" % (
            kver, pkg_version("linux-image-" + kver), pkg_version("linux-headers-" + kver),
            pkg_version("linux-source-" + series)))
        by_kind = {}
        for kind, s in boots.get(kver, []):
            by_kind.setdefault(kind, []).append(s)
        for kind, ss in sorted(by_kind.items()):
            print("  boot %-5s n=%d min %.1f s, mean %.1f s, max %.1f s" % (
                kind, len(ss), min(ss), sum(ss) / len(ss), max(ss)))
    for f in flakes:
        print("flake: " + f)
    print("wall time %.1f s" % wall)
    passed = sum(1 for c in cases if c.ok)
    print("%d passed, %d failed" % (passed, len(cases) - passed))


def cmd_shell(kver):
    _lock = vm_lock()  # noqa: F841
    initrd = build_initramfs(kver)
    spec = TestSpec.__new__(TestSpec)
    spec.name, spec.mem, spec.memmap, spec.disks, spec.append = "shell", DEFAULT_MEM_MB, [], [], []
    spec.root = None
    for a in os.environ.get("MOBIO_VM_SHELL_MEMMAP", "").split():
        spec.memmap.append(a)
    outdir = os.path.join(BUILD, "vm", kver, "shell")
    os.makedirs(outdir, exist_ok=True)
    st = os.path.join(outdir, "state.img")
    if not os.path.exists(st):
        with open(st, "wb") as f:
            f.truncate(STATE_DISK_BYTES)
    log("shell on %s; quit with Ctrl-A x" % kver)
    vm = Vm(kver, kernel_image(kver, boot_mode()), initrd, spec, outdir, 1, "shell",
            interactive=True)
    try:
        while vm.proc.poll() is None:
            vm.read_results()
            time.sleep(0.2)
    finally:
        vm.stop()
    return 0


def cmd_bootprobe(kver, rounds):
    """Boot the plain smoke test with both images and print the times."""
    _lock = vm_lock()  # noqa: F841
    res = {}
    for mode in ("bzimage", "pvh"):
        os.environ["MOBIO_VM_BOOT"] = mode
        image = kernel_image(kver, mode)
        initrd = build_initramfs(kver)
        spec = TestSpec("bench-plain")
        for _ in range(rounds):
            r = TestRun(kver, spec, image, initrd).run()
            res.setdefault(mode, []).extend(s for k, s in r.boots)
    for mode, ss in res.items():
        print("%s %s: boot to test start %s s (mean %.2f)" % (
            kver, mode, " ".join("%.2f" % s for s in ss), sum(ss) / max(1, len(ss))))
    return 0


def main():
    ap = argparse.ArgumentParser(description="mobio QEMU test bench")
    ap.add_argument("cmd", choices=["test", "check", "shell", "initramfs", "bootprobe"])
    ap.add_argument("names", nargs="*", help="guest tests (tests/vm/guest/NAME.sh)")
    ap.add_argument("--kver", default=os.environ.get("KVER") or None)
    ap.add_argument("--arch", choices=["amd64", "arm64"], default="amd64",
                    help="without --kver: the kernels of this architecture "
                    "(arm64: Debian's arm64 kernels from make arm64, on QEMU's virt board)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--results-json", help=argparse.SUPPRESS)  # a child runner's results
    a = ap.parse_intermixed_args()
    arch = a.arch if a.arch != "amd64" else None
    if a.cmd in ("test", "shell", "initramfs", "bootprobe") and not a.kver:
        k = kernels(arch)
        a.kver = max(k, key=lambda v: [int(x) for x in re.findall(r"\d+", v)]) if k else None
    if a.cmd == "initramfs":
        print(build_initramfs(a.kver))
        return 0
    if a.cmd == "shell":
        return cmd_shell(a.kver)
    if a.cmd == "bootprobe":
        return cmd_bootprobe(a.kver, a.rounds)
    if a.cmd == "test":
        if not a.names:
            ap.error("test needs a NAME")
        return run_tests([a.kver], a.names, a.results_json)
    kvers = [a.kver] if a.kver else kernels(arch)
    return run_tests(kvers, a.names or guest_tests())


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        for vm in list(_live_vms):
            vm.stop()
        sys.exit(130)
