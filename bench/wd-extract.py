#!/usr/bin/env python3
"""bench/wd-extract: wd-extract against the Python stdlib reference on the same >= 1 GB dump, in
one run. Prints MB/s of decompressed JSON, the speed-up per core and peak memory (max RSS).

Usage: bench/wd-extract.py [--bin build/bin] [--fixtures ../shared/fixtures] [--work out/bench] [--gb 1.0]
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import arguments, here, run, warm  # noqa: E402


def main():
    args = arguments(lambda ap: ap.add_argument("--gb", type=float, default=1.0))
    if not os.path.exists(os.path.join(args.fixtures, "xfactr-kg-dev.json.gz")):
        sys.exit("fixtures not found: " + args.fixtures)
    dump = os.path.join(args.work, "dump-%.1fgb.json" % args.gb)
    if not os.path.exists(dump):
        subprocess.run([sys.executable, os.path.join(here, "make-big-dump.py"), args.fixtures, dump, "--gb", str(args.gb)],
                       check=True)
    size_mb = os.path.getsize(dump) / 1e6
    warm(dump)
    rows = []
    wd = os.path.join(args.bin, "wd-extract")
    for threads in (1, 2):
        rows.append(("wd-extract --threads %d" % threads, threads) +
                    run([wd, dump, "-o", os.path.join(args.work, "kg.h5"), "--threads", str(threads), "--quiet"]))
    rows.append(("python3 json.loads reference", 1) +
                run(["/usr/bin/python3", os.path.join(here, "reference", "wd_extract_ref.py"), dump,
                     os.path.join(args.work, "ref-tsv")]))
    ref_rate = size_mb / rows[-1][2]
    ref_cpu_rate = size_mb / rows[-1][3]
    print("input: %s (%.0f MB decompressed JSON)" % (dump, size_mb))
    print("MB/s/thread divides by --threads (parsing threads); MB per CPU-second counts every thread")
    print("(reader, parsers, writer, compression) and is the per-core comparison with Python.")
    print("%-30s %7s %7s %8s %11s %10s %9s %13s %8s" % ("run", "wall s", "cpu s", "MB/s", "MB/s/thread",
                                                     "vs python", "MB/cpu-s", "vs python/core", "peak MB"))
    for name, threads, secs, cpu, rss in rows:
        rate = size_mb / secs
        print("%-30s %7.1f %7.1f %8.0f %11.0f %9.1fx %9.0f %12.1fx %8.0f" % (
            name, secs, cpu, rate, rate / threads, rate / ref_rate, size_mb / cpu, size_mb / cpu / ref_cpu_rate, rss))


if __name__ == "__main__":
    main()
