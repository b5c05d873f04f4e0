#!/usr/bin/env python3
"""bench/wd-extract: wd-extract against the Python stdlib reference on the same >= 1 GB dump, in
one run. Prints MB/s of decompressed JSON, the speed-up per core and peak memory (max RSS).

Usage: bench/wd-extract.py [--bin build/bin] [--fixtures ../shared/fixtures] [--work out/bench] [--gb 1.0]
"""
import argparse
import os
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)


def run(cmd):
    """Runs cmd; returns (seconds, peak RSS in MB) of that process alone (os.wait4)."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    secs = time.perf_counter() - start
    if status != 0:
        sys.exit("failed: " + " ".join(cmd))
    return secs, usage.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.environ.get("KGLM_BIN", os.path.join(root, "build", "bin")))
    ap.add_argument("--fixtures", default=os.path.join(root, "..", "shared", "fixtures"))
    ap.add_argument("--work", default=os.path.join(root, "out", "bench"))
    ap.add_argument("--gb", type=float, default=1.0)
    args = ap.parse_args()
    if not os.path.exists(os.path.join(args.fixtures, "xfactr-kg-dev.json.gz")):
        sys.exit("fixtures not found: " + args.fixtures)
    os.makedirs(args.work, exist_ok=True)
    dump = os.path.join(args.work, "dump-%.1fgb.json" % args.gb)
    if not os.path.exists(dump):
        subprocess.run([sys.executable, os.path.join(here, "make-big-dump.py"), args.fixtures, dump, "--gb", str(args.gb)],
                       check=True)
    size_mb = os.path.getsize(dump) / 1e6
    # Warm the page cache so the first run does not pay for the disk.
    subprocess.run(["cat", dump], stdout=subprocess.DEVNULL, check=True)
    rows = []
    wd = os.path.join(args.bin, "wd-extract")
    for threads in (1, 2):
        secs, rss = run([wd, dump, "-o", os.path.join(args.work, "kg.h5"), "--threads", str(threads), "--quiet"])
        rows.append(("wd-extract --threads %d" % threads, threads, secs, rss))
    secs, rss = run(["/usr/bin/python3", os.path.join(here, "reference", "wd_extract_ref.py"), dump,
                     os.path.join(args.work, "ref-tsv")])
    rows.append(("python3 json.loads reference", 1, secs, rss))
    ref_rate = size_mb / rows[-1][2]
    print("input: %s (%.0f MB decompressed JSON)" % (dump, size_mb))
    print("%-32s %8s %10s %14s %12s %10s" % ("run", "seconds", "MB/s", "MB/s/thread", "vs python/core", "peak MB"))
    for name, threads, secs, rss in rows:
        rate = size_mb / secs
        print("%-32s %8.1f %10.0f %14.0f %12.1fx %10.0f" % (name, secs, rate, rate / threads,
                                                          rate / threads / ref_rate, rss))


if __name__ == "__main__":
    main()
