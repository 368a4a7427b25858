#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Build the ext4 image of the start-up benchmark's apps (bench/fio/startup-bench.sh).

USAGE
    bench/fio/startup_app.py OUT.img

The image holds a root tree for chroot: the host's python3.11 with its
standard library (without test suites, tkinter, idlelib), sqlite3 (the CLI)
with a database of about 4 MiB, and gdb (a large binary with ~60 libraries,
libpython among them), each with the libraries ldd names, at their paths.
Sized to the tree + 25% + 16 MiB; made with mkfs.ext4 -d (no loop mount, no root needed). The guest writes it
onto the device under test and mounts it there, so every start-up reads its
binary, libraries and data from that device. Rebuilt only when missing.
"""

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

PROGS = ["/usr/bin/python3.11", "/usr/bin/sqlite3", "/usr/bin/gdb"]
PYLIB = "/usr/lib/python3.11"
SKIP = {"test", "config-3.11-x86_64-linux-gnu", "idlelib", "tkinter", "ensurepip", "lib2to3", "turtledemo", "unittest/test"}


def libs(binary):
    out = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
    for line in out.splitlines():
        w = line.split()
        if "=>" in w and len(w) >= 3 and w[2].startswith("/"):
            yield w[2]
        elif w and w[0].startswith("/"):
            yield w[0]


def copy(src, root):
    dst = os.path.join(root, src.lstrip("/"))
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if not os.path.exists(dst):
        shutil.copy2(os.path.realpath(src), dst)


def build(img):
    if os.path.exists(img):
        return img
    tmp = tempfile.mkdtemp(prefix="startup-app-", dir=os.path.dirname(os.path.abspath(img)))
    root = os.path.join(tmp, "root")
    try:
        bins = list(PROGS)
        for dirpath, dirs, files in os.walk(PYLIB):
            rel = os.path.relpath(dirpath, PYLIB)
            dirs[:] = [d for d in dirs if os.path.normpath(os.path.join(rel, d)) not in SKIP
                       and d != "site-packages" and d != "dist-packages"]
            for f in files:
                p = os.path.join(dirpath, f)
                if os.path.isfile(p):
                    copy(p, root)
                    if f.endswith(".so"):
                        bins.append(p)
        for b in bins:
            copy(b, root)
            for lib in libs(b):
                copy(lib, root)
        os.makedirs(os.path.join(root, "data"), exist_ok=True)
        db = sqlite3.connect(os.path.join(root, "data", "app.db"))
        db.execute("create table msg (id integer primary key, peer int, ts int, body text)")
        db.executemany("insert into msg (peer, ts, body) values (?, ?, ?)",
                       ((i % 97, i * 7, ("message %d " % i) * 8) for i in range(40000)))
        db.execute("create index msg_peer on msg (peer, ts)")
        db.commit()
        db.close()
        os.makedirs(os.path.join(root, "tmp"), exist_ok=True)
        mb = int(subprocess.run(["du", "-sm", root], capture_output=True, text=True,
                                check=True).stdout.split()[0])
        subprocess.run(["mkfs.ext4", "-q", "-F", "-b", "4096", "-L", "apps", "-d", root, img + ".tmp",
                        "%dM" % (mb * 5 // 4 + 16)], check=True)
        os.rename(img + ".tmp", img)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return img


def main():
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        print(__doc__)
        return 0 if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help") else 2
    print(build(sys.argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
