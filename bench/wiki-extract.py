#!/usr/bin/env python3
"""bench/wiki-extract: wiki-extract against the real WikiExtractor (PyPI wikiextractor 3.1.0, the tool
the seeds used, `--json --links`, from `make references`) on the enwiki fixture replicated to >= 200 MB,
in one run; then the bzip2 paths: one stream, multistream (parallel decoding), lbzip2 -dc in front,
--shard array tasks and their merge. Prints articles/s, MB/s of XML, the speed-ups (wall, and per core against WikiExtractor
with one process) and peak memory, and the time of the XML parsing alone (the floor of any run).
How far the two outputs agree is measured by the test reference_wikiextractor on the fixtures.

Usage: bench/wiki-extract.py [--bin build/bin] [--fixtures ../shared/fixtures] [--work out/bench] [--mb 200]
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import arguments, here, references_python, run, runs_by_threads, warm  # noqa: E402


def main():
    args = arguments(lambda ap: ap.add_argument("--mb", type=float, default=200))
    fixture = os.path.join(args.fixtures, "wikipedia", "enwiki-sample-a.xml.bz2")
    if not os.path.exists(fixture):
        sys.exit("fixture not found: " + fixture)
    dump = os.path.join(args.work, "enwiki-%.0fmb.xml" % args.mb)
    if not os.path.exists(dump):
        subprocess.run([sys.executable, os.path.join(here, "make-big-wiki.py"), fixture, str(args.mb), dump], check=True)
    size_mb = os.path.getsize(dump) / 1e6
    warm(dump)
    we = os.path.join(args.bin, "wiki-extract")
    stats = os.path.join(args.work, "wiki-extract.stats.json")
    docs = os.path.join(args.work, "wiki-docs.jsonl")
    rows = runs_by_threads("wiki-extract", lambda n: [
        we, dump, "-o", docs, "--redirects", os.path.join(args.work, "wiki-redirects.tsv"), "--threads", str(n),
        "--stats", stats, "--quiet"])
    articles = json.load(open(stats))["articles"]
    # The floor set by the XML parser: no page is in namespace 999, so nothing is cleaned or written.
    rows.append(("wiki-extract --ns 999 (XML only)",) +
                run([we, dump, "-o", os.path.join(args.work, "wiki-none.jsonl"), "--ns", "999", "--threads", "1",
                     "--quiet"]))
    peer = [references_python(), "-m", "wikiextractor.WikiExtractor", dump, "--json", "--links", "-q"]
    for processes in (os.cpu_count() or 1, 1):
        rows.append(("WikiExtractor --processes %d" % processes,) +
                    run(peer + ["--processes", str(processes), "-o", os.path.join(args.work, "wx-%d" % processes)]))
    # Per core against one process: WikiExtractor's worker processes are not in its parent's CPU time.
    ref_wall, ref_cpu = rows[-2][1], rows[-1][2]
    print("input: %s (%.0f MB of XML, %d articles)" % (dump, size_mb, articles))
    print("articles/cpu-s counts every thread (XML reader, cleaners, writer): the per-core figure.")
    print("The '--ns 999' row only parses the XML (libxml2 SAX): the floor of any run; its article columns")
    print("are what the full run's article count would give at that speed.")
    print("%-34s %7s %7s %7s %11s %14s %9s %14s %8s" % ("run", "wall s", "cpu s", "MB/s", "articles/s",
                                                     "articles/cpu-s", "vs WikiExt", "vs WikiExt/core", "peak MB"))
    for name, secs, cpu, rss in rows:
        print("%-34s %7.2f %7.2f %7.0f %11.0f %14.0f %8.1fx %13.1fx %8.0f" % (
            name, secs, cpu, size_mb / secs, articles / secs, articles / cpu, ref_wall / secs, ref_cpu / cpu, rss))
    bzip2_paths(args, dump, size_mb, we)


def bzip2_paths(args, dump, size_mb, we):
    """The same dump compressed as Wikimedia publishes it: in one bzip2 stream (pages-articles) and as a
    multistream dump (100 pages a stream, pages-articles-multistream), read by wiki-extract alone, behind
    lbzip2 -dc, and as 4 array tasks (--shard i/4, one after the other here) and their merge."""
    one, multi = dump + ".bz2", dump + ".multistream.bz2"
    if not os.path.exists(one):
        subprocess.run("bzip2 -c '%s' > '%s.tmp' && mv '%s.tmp' '%s'" % (dump, one, one, one), shell=True, check=True)
    if not os.path.exists(multi):
        subprocess.run([sys.executable, os.path.join(here, "make-multistream.py"), dump, multi], check=True,
                       stdout=subprocess.DEVNULL)
    threads = os.cpu_count() or 1
    out = os.path.join(args.work, "wiki-bz2.jsonl")
    base = ["-o", out, "--redirects", out + ".tsv", "--quiet"]
    rows = []
    for label, path in (("one stream", one), ("multistream", multi)):
        for n in sorted({1, threads}):
            rows.append(("%s, --threads %d" % (label, n),) + run([we, path, "--threads", str(n)] + base))
    if subprocess.run(["sh", "-c", "command -v lbzip2"], stdout=subprocess.DEVNULL).returncode == 0:
        rows.append(("one stream, lbzip2 -dc | wiki-extract",) + run(
            ["sh", "-c", "lbzip2 -dc -n %d '%s' | '%s' - --threads %d %s" % (threads, one, we, threads, " ".join(
                "'%s'" % a for a in base))]))
    else:
        print("lbzip2 not installed (apt-get install lbzip2): its row is left out")
    parts = []
    for i in range(4):
        part = os.path.join(args.work, "wiki-part%d.jsonl" % i)
        parts.append(part)
        rows.append(("multistream, --shard %d/4" % i,) + run(
            [we, multi, "--shard", "%d/4" % i, "--threads", str(threads), "-o", part, "--redirects", part + ".tsv",
             "--quiet"]))
    rows.append(("wiki-extract merge of the 4 parts",) + run(
        [we, "merge"] + parts + ["-o", out, "--redirects", out + ".tsv", "--quiet"]))
    print()
    print("bzip2 input: %s (%.0f MB), %s (%.0f MB); %.0f MB of XML" % (
        one, os.path.getsize(one) / 1e6, multi, os.path.getsize(multi) / 1e6, size_mb))
    print("%-40s %7s %7s %9s %8s" % ("run", "wall s", "cpu s", "XML MB/s", "peak MB"))
    for name, secs, cpu, rss in rows:
        print("%-40s %7.2f %7.2f %9.0f %8.0f" % (name, secs, cpu, size_mb / secs, rss))
    wall = {r[0]: r[1] for r in rows}
    single = wall["one stream, --threads %d" % threads]  # what a user of the one-stream dump gets
    multi_pass = wall["multistream, --threads %d" % threads]
    tasks = max(r[1] for r in rows if "--shard" in r[0]) + rows[-1][1]
    print("4 array tasks on 4 machines (slowest part + merge): %.2f s, %.1fx one pass over the one-stream "
          "dump (%.2f s), %.1fx one pass over the multistream dump (%.2f s)" % (
              tasks, single / tasks, single, multi_pass / tasks, multi_pass))


if __name__ == "__main__":
    main()
