#!/usr/bin/env python3
"""bench/wiki-extract: wiki-extract against the real WikiExtractor (PyPI wikiextractor 3.1.0, the tool
the seeds used, `--json --links`, from `make references`) on the enwiki fixture replicated to >= 200 MB,
in one run. Prints articles/s, MB/s of XML, the speed-ups (wall, and per core against WikiExtractor
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


if __name__ == "__main__":
    main()
