#!/usr/bin/env python3
"""bench/wd-extract: wd-extract against the Python stdlib reference on the same >= 1 GB dump, in
one run. Prints MB/s of decompressed JSON, the speed-up per core and peak memory (max RSS). Then
the dump in one bzip2 stream, as Wikidata publishes latest-all.json.bz2: wd-extract decoding its
blocks on 1 and all threads, against lbzip2 -dc in front (the parallel decompressor users put
there), and 4 array tasks (--shard i/4, each decoding only its blocks) with their merge.

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
    bzip2_paths(args, dump, size_mb, wd)


def bzip2_paths(args, dump, size_mb, wd):
    one = dump + ".bz2"
    lbzip2 = subprocess.run(["sh", "-c", "command -v lbzip2"], stdout=subprocess.DEVNULL).returncode == 0
    if not os.path.exists(one):  # lbzip2 writes one stream of 900k blocks, as bzip2 does, faster
        subprocess.run("%s -c '%s' > '%s.tmp' && mv '%s.tmp' '%s'" % ("lbzip2" if lbzip2 else "bzip2", dump, one, one, one),
                       shell=True, check=True)
    threads = os.cpu_count() or 1
    out = os.path.join(args.work, "kg-bz2.h5")
    rows = []
    for n in sorted({1, threads}):
        rows.append(("one stream, --threads %d" % n,) + run([wd, one, "--threads", str(n), "-o", out, "--quiet"]))
    if lbzip2:
        rows.append(("lbzip2 -dc -n %d | wd-extract -" % threads,) + run(
            ["sh", "-c", "lbzip2 -dc -n %d '%s' | '%s' - --threads %d -o '%s' --quiet" % (threads, one, wd, threads, out)]))
    else:
        print("lbzip2 not installed (apt-get install lbzip2): its row is left out")
    parts = []
    for i in range(4):
        parts.append(os.path.join(args.work, "kg-bz2-part%d.h5" % i))
        rows.append(("--shard %d/4 (its blocks only)" % i,) + run(
            [wd, one, "--shard", "%d/4" % i, "--threads", str(threads), "-o", parts[-1], "--quiet"]))
    rows.append(("wd-extract merge of the 4 parts",) + run(
        [wd, "merge"] + parts + ["--threads", str(threads), "-o", out, "--quiet"]))
    print()
    print("bzip2 input: %s (%.0f MB, one stream); %.0f MB of JSON" % (one, os.path.getsize(one) / 1e6, size_mb))
    print("%-36s %7s %7s %9s %8s" % ("run", "wall s", "cpu s", "JSON MB/s", "peak MB"))
    for name, secs, cpu, rss in rows:
        print("%-36s %7.2f %7.2f %9.0f %8.0f" % (name, secs, cpu, size_mb / secs, rss))
    wall = {r[0]: r[1] for r in rows}
    single = wall["one stream, --threads %d" % threads]
    tasks = max(r[1] for r in rows if "--shard" in r[0]) + rows[-1][1]
    if lbzip2:
        peer = wall["lbzip2 -dc -n %d | wd-extract -" % threads]
        print("one pass, blocks decoded on %d threads: %.2fx lbzip2 -dc in front (%.2f s)" % (threads, peer / single, peer))
    print("4 array tasks on 4 machines (slowest part + merge): %.2f s, %.1fx one pass (%.2f s), %.2f N" % (
        tasks, single / tasks, single, single / tasks / 4))


if __name__ == "__main__":
    main()
