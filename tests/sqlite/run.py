#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Run SQLite's TCL test files with a testfixture that has ppcache as its default VFS.

    run.py --testfixture BIN --src SQLITE_SRC --list tests.txt --skip skipped.txt \
           --wrapper wrap.tcl --out BUILD [--jobs 2] [--timeout 300] [--vfs ppcache|unix] [NAME...]

Files: every glob of --list (one or more per line, '#' comments, no ".test")
matched against SQLITE_SRC/test/*.test, minus the files that --skip lists. NAMEs
on the command line replace the list (names or globs over all of test/); a NAME
given exactly runs even if skipped.txt skips the file.

skipped.txt, one entry a line ('#' comments), the reason after two or more spaces
or a tab:
    <name>              <reason>  the file is not run
    <name>:<glob>       <reason>  cases of <name> matching <glob> (Tcl string match)
                                  are expected to fail: they run, a failure prints
                                  "mobio-xfail" and is not counted
    omit <name>:<glob>  <reason>  such cases (or fault-injection blocks) do not run
    stop <name>:<glob>  <reason>  the file ends at the first such case
Every entry must name a file of test/ and give a reason; an entry that matches
nothing in a file that passed is reported as stale (not a failure). wrap.tcl
documents what else it does (capabilities, LazyFlush I/O errors).

Each file runs as `testfixture wrap.tcl test/<name>.test` in its own scratch
directory BUILD/run/<name>/ with a fresh QNVRAM_FAKE_DIR (BUILD/run/<name>/qnvram)
and TMPDIR; as root, under setpriv as nobody (SQLite's tests of permissions do not
work as root). Output: BUILD/logs/<name>.log. A file passes when testfixture exits
0 after printing "N errors out of M tests" with N = 0 (SQLite's leak and open-file
checks make it exit non-zero). --vfs unix runs the same files on stock "unix" with
no skip list (the baseline). Ends with
    sqlite-tests: F files, C cases passed, E failed
    N passed, N failed          (files)
and exits 1 when any file failed.
"""
import argparse
import concurrent.futures
import fnmatch
import json
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import time

SUMMARY = re.compile(r"^(\d+) errors out of (\d+) tests", re.M)
FAIL = re.compile(r"^mobio-fail: (.*)$", re.M)
XFAIL = re.compile(r"^mobio-xfail: (.*?) \((.*)\)$", re.M)
OMIT = re.compile(r"^mobio-omit: (.*?) \(.*\)$", re.M)
STOP = re.compile(r"^mobio-stop: (.*?) \(.*\)$", re.M)
OK_LINE = re.compile(r"\.\.\. ?Ok$", re.M)
LEFT_OPEN = re.compile(r"^(\d+) files were left open", re.M)
UNFREED = re.compile(r"^Unfreed memory: .*$", re.M)


def die(msg):
    print(f"sqlite-tests: {msg}", file=sys.stderr)
    sys.exit(2)


def read_list(path):
    globs = []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            globs.extend(line.split())
    return globs


def read_skips(path, known):
    """-> (skipped files {name: reason}, cases {name: [(kind, glob, reason)]})"""
    files, cases = {}, {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            text = line.rstrip("\n")
            if not text.strip() or text.lstrip().startswith("#"):
                continue
            m = re.match(r"^(?:(omit|stop)\s+)?(\S+)(?:\t+|\s{2,})(\S.*)$", text)
            if not m:
                die(f"{path}:{n}: want '[omit |stop ]<name>[:<case glob>]  <reason>': {text!r}")
            kind, key, reason = m.group(1) or "xfail", m.group(2), m.group(3).strip()
            name, _, glob = key.partition(":")
            if name not in known:
                die(f"{path}:{n}: no test/{name}.test in this SQLite source")
            if kind != "xfail" and not glob:
                die(f"{path}:{n}: {kind} needs <name>:<case glob>")
            if "\t" in glob:
                die(f"{path}:{n}: a tab in the glob")
            if glob:
                cases.setdefault(name, []).append((kind, glob, reason))
            else:
                if name in files:
                    die(f"{path}:{n}: {name} listed twice")
                files[name] = reason
    both = set(files) & set(cases)
    if both:
        die(f"{path}: skipped files with case entries too: {' '.join(sorted(both))}")
    return files, cases


def tcl_match(glob, name):
    # Tcl's string match: * ? [chars] and \x; fnmatchcase knows the same set
    # except for backslash escapes, which the names here do not need.
    return fnmatch.fnmatchcase(name, glob)


class Runner:
    def __init__(self, a):
        self.a = a
        self.user = None
        if os.geteuid() == 0:
            try:
                self.user = pwd.getpwnam("nobody")
            except KeyError:
                print("sqlite-tests: no user nobody: running as root (tests of permissions fail)")

    def run_one(self, name, xfail):
        a = self.a
        scratch = os.path.join(a.out, "run", name)
        shutil.rmtree(scratch, ignore_errors=True)
        qnv = os.path.join(scratch, "qnvram")
        tmp = os.path.join(scratch, "tmp")
        os.makedirs(qnv)
        os.makedirs(tmp)
        xf = os.path.join(scratch, "xfail.txt")
        with open(xf, "w") as f:
            for kind, glob, reason in xfail:
                f.write(f"{kind}\t{glob}\t{reason}\n")
        cmd = [a.testfixture, a.wrapper, os.path.join(a.src, "test", name + ".test")]
        if self.user:
            for d, _, fs in os.walk(scratch):
                os.chown(d, self.user.pw_uid, self.user.pw_gid)
                for x in fs:
                    os.chown(os.path.join(d, x), self.user.pw_uid, self.user.pw_gid)
            cmd = ["setpriv", f"--reuid={self.user.pw_uid}", f"--regid={self.user.pw_gid}",
                   "--clear-groups", "--"] + cmd
        env = dict(os.environ, QNVRAM_FAKE_DIR=qnv, TMPDIR=tmp, MOBIO_XFAIL=xf,
                   MOBIO_SQLITE_TESTS_VFS=a.vfs)
        if self.user:
            env["HOME"] = scratch
        log = os.path.join(a.out, "logs", name + ".log")
        t0 = time.monotonic()
        timed_out = False
        with open(log, "wb") as out:
            p = subprocess.Popen(cmd, cwd=scratch, env=env, stdin=subprocess.DEVNULL,
                                 stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
            try:
                rc = p.wait(timeout=a.timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                os.killpg(p.pid, signal.SIGKILL)
                rc = p.wait()
            # children the file started and left behind (crash tests, clients)
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        secs = time.monotonic() - t0
        with open(log, "rb") as f:
            text = f.read().decode("utf-8", "replace")
        return self.judge(name, xfail, text, rc, timed_out, secs, log)

    def judge(self, name, xfail, text, rc, timed_out, secs, log):
        r = {"name": name, "secs": secs, "log": log}
        fails = FAIL.findall(text)
        xfails = XFAIL.findall(text)
        omits = OMIT.findall(text)
        stops = STOP.findall(text)
        sums = SUMMARY.findall(text)
        extra = []
        m = LEFT_OPEN.search(text)
        if m:
            extra.append(f"{m.group(1)} files were left open")
        m = UNFREED.search(text)
        if m:
            extra.append(m.group(0))
        if sums and not timed_out:
            nerr, ntest = int(sums[-1][0]), int(sums[-1][1])
            r["passed"] = max(ntest - nerr - len(xfails), 0)
            r["failed"] = nerr + len(extra)
        else:
            r["passed"] = len(OK_LINE.findall(text))
            r["failed"] = len(fails) + 1      # the file itself did not finish
            what = f"timed out after {self.a.timeout} s" if timed_out else \
                f"exit {rc} before SQLite's summary"
            last = [ln for ln in text.splitlines() if ln.strip()][-3:]
            extra.append(what + (": " + " | ".join(last) if last else ""))
        r["ok"] = bool(sums) and not timed_out and rc == 0 and r["failed"] == 0
        r["fails"] = fails
        r["extra"] = extra
        r["xfail"] = len(xfails)
        seen = {c for c, _ in xfails}
        oseen = set(omits)
        r["omit"] = len(omits)
        r["stop"] = stops[0] if stops else ""
        r["auto"] = sum(1 for _, why in xfails if why.startswith("I/O error in a LazyFlush"))
        hit = {"xfail": seen, "omit": oseen, "stop": set(stops)}
        r["stale"] = [("" if k == "xfail" else k + " ") + g for k, g, _ in xfail
                      if not any(tcl_match(g, c) for c in hit[k])]
        return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--testfixture", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--list", required=True)
    ap.add_argument("--skip", required=True)
    ap.add_argument("--wrapper", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--vfs", default="ppcache", choices=["ppcache", "unix"])
    ap.add_argument("--t0", type=float, default=0, help="epoch seconds make started (for the total)")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    t_start = time.time()
    a.testfixture = os.path.abspath(a.testfixture)
    a.wrapper = os.path.abspath(a.wrapper)
    a.out = os.path.abspath(a.out)
    a.src = os.path.abspath(a.src)

    testdir = os.path.join(a.src, "test")
    known = sorted(f[:-5] for f in os.listdir(testdir) if f.endswith(".test"))
    kset = set(known)
    skip_files, xfail = read_skips(a.skip, kset)
    if a.vfs == "unix":
        skip_files, xfail = {}, {}

    def expand(globs, exact_overrides_skip):
        out, unmatched = [], []
        for g in globs:
            hit = [n for n in known if fnmatch.fnmatchcase(n, g)]
            if not hit:
                unmatched.append(g)
            for n in hit:
                exact = n == g
                if n in skip_files and not (exact and exact_overrides_skip):
                    continue
                if n not in out:
                    out.append(n)
        if unmatched:
            die(f"no test file matches: {' '.join(unmatched)}")
        return out

    if a.names:
        names = expand(a.names, True)
        listed = set(names)
    else:
        globs = read_list(a.list)
        names = expand(globs, False)
        listed = {n for g in globs for n in known if fnmatch.fnmatchcase(n, g)}
    skipped = sorted(n for n in skip_files if n in listed and n not in names)
    if not names:
        die("nothing to run")

    os.makedirs(os.path.join(a.out, "logs"), exist_ok=True)
    os.makedirs(os.path.join(a.out, "run"), exist_ok=True)
    if os.geteuid() == 0:
        os.chmod(os.path.join(a.out, "run"), 0o755)
    times_path = os.path.join(a.out, f"times-{a.vfs}.json")
    try:
        with open(times_path) as f:
            old_times = json.load(f)
    except (OSError, ValueError):
        old_times = {}
    # Longest first (times of the last run; unknown ones first of all).
    order = sorted(names, key=lambda n: -old_times.get(n, 1e9))

    print(f"sqlite-tests: {len(names)} files of SQLite {os.path.basename(a.src)} on "
          f"{a.vfs}, {a.jobs} at a time; {len(skipped)} skipped "
          f"({os.path.relpath(a.skip)}); logs in {os.path.relpath(a.out)}/logs/", flush=True)
    runner = Runner(a)
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = {ex.submit(runner.run_one, n, xfail.get(n, [])): n for n in order}
        for fut in concurrent.futures.as_completed(futs):
            r = fut.result()
            results[r["name"]] = r
            note = f", {r['xfail']} expected failures" if r["xfail"] else ""
            note += f", {r['omit']} omitted" if r["omit"] else ""
            note += f", stopped at {r['stop']}" if r["stop"] else ""
            line = (f"{'PASS' if r['ok'] else 'FAIL'}  {r['name']:<20} "
                    f"{r['passed']:6d} passed {r['failed']:4d} failed{note}  {r['secs']:6.1f} s")
            if not r["ok"]:
                shown = r["fails"][:8]
                more = f" (+{len(r['fails']) - 8} more)" if len(r["fails"]) > 8 else ""
                if shown:
                    line += "\n      failed: " + ", ".join(shown) + more
                for e in r["extra"]:
                    line += "\n      " + e
                line += f"\n      log: {os.path.relpath(r['log'])}"
            print(line, flush=True)

    with open(times_path + ".tmp", "w") as f:
        json.dump(dict(old_times, **{n: round(r["secs"], 2) for n, r in results.items()}),
                  f, indent=0, sort_keys=True)
    os.replace(times_path + ".tmp", times_path)

    rs = [results[n] for n in names]
    nfail = sum(1 for r in rs if not r["ok"])
    passed = sum(r["passed"] for r in rs)
    failed = sum(r["failed"] for r in rs)
    nx = sum(r["xfail"] for r in rs)
    nauto = sum(r["auto"] for r in rs)
    nomit = sum(r["omit"] for r in rs)
    stale = [(r["name"], g) for r in rs if r["ok"] for g in r["stale"]]
    for n, g in stale:
        print(f"sqlite-tests: stale entry (matched no failing or omitted case): {n}:{g}")
    if skipped:
        print(f"sqlite-tests: skipped (see {os.path.relpath(a.skip)}): {' '.join(skipped)}")
    now = time.time()
    tot = f"; {now - a.t0:.0f} s with the build" if a.t0 else ""
    print(f"sqlite-tests: {nx} expected failures ({nauto} of them I/O errors in a LazyFlush "
          f"after the commit), {nomit} cases or blocks omitted, {len(stale)} stale entries; "
          f"tests {now - t_start:.0f} s wall{tot}")
    if nfail:
        print(f"sqlite-tests: FAILED: {' '.join(r['name'] for r in rs if not r['ok'])}")
    print(f"sqlite-tests: {len(rs)} files, {passed} cases passed, {failed} failed")
    print(f"{len(rs) - nfail} passed, {nfail} failed")
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
