#!/usr/bin/env python3
"""bench/cs-gen: cs-gen kmlm against a Python stdlib reference applying the same code-switch rule
to the KG's label TSV, in one run (records/s, speed-up wall and per core), and cs-gen entitycs
sentences/s on the enwiki fixture's documents replicated.

Usage: bench/cs-gen.py [--bin build/bin] [--fixtures ../shared/fixtures] [--work out/bench] [--copies 20]
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import arguments, dev_kg, here, run, runs_by_threads, warm  # noqa: E402

LANGS = "bn,fr,el,he,hu,ko,mr,ru,es,tr,vi,yo"  # the dev KG's label languages besides English


def main():
    args = arguments(lambda ap: ap.add_argument("--copies", type=int, default=20))
    wiki = os.path.join(args.fixtures, "wikipedia", "enwiki-sample-a.xml.bz2")
    if not os.path.exists(wiki):
        sys.exit("fixtures not found: " + args.fixtures)
    kg, tsv = dev_kg(args, "cs-kg", "all")
    cs = os.path.join(args.bin, "cs-gen")
    stats = os.path.join(args.work, "cs-gen.stats.json")
    out = os.path.join(args.work, "kmlm.jsonl")
    rows = runs_by_threads("cs-gen kmlm", lambda n: [
        cs, "kmlm", "--kg", kg, "--langs", LANGS, "--pairs", "all", "-o", out, "--threads", str(n), "--stats", stats,
        "--quiet"])
    records = json.load(open(stats))["records"]
    ref_out = os.path.join(args.work, "kmlm-ref.jsonl")
    rows.append(("python3 stdlib reference",) +
                run(["/usr/bin/python3", os.path.join(here, "reference", "cs_gen_ref.py"), tsv, LANGS, ref_out]))
    ref_records = sum(1 for _ in open(ref_out, encoding="utf-8"))
    # The floor of any run on this machine: writing the output's bytes to a new file (dd reads and
    # writes through user space, as the tools do; cp may copy inside the kernel).
    copy = os.path.join(args.work, "kmlm-copy.jsonl")
    if os.path.exists(copy):
        os.remove(copy)
    rows.append(("dd of the output (write floor)",) +
                run(["dd", "if=" + out, "of=" + copy, "bs=4M", "status=none"]))
    ref_wall, ref_cpu = rows[-2][1], rows[-2][2]
    print("KMLM code-switch, --pairs all into %d languages: %d records (reference: %d)" %
          (len(LANGS.split(",")), records, ref_records))
    print("%-32s %7s %7s %11s %14s %9s %14s %8s" % ("run", "wall s", "cpu s", "records/s", "records/cpu-s",
                                                 "vs python", "vs python/core", "peak MB"))
    for name, secs, cpu, rss in rows:
        print("%-32s %7.2f %7.2f %11.0f %14.0f %8.1fx %13.1fx %8.0f" % (
            name, secs, cpu, records / secs, records / cpu, ref_wall / secs, ref_cpu / cpu, rss))

    # EntityCS on the fixture's documents, replicated.
    docs = os.path.join(args.work, "cs-docs.jsonl")
    redirects = os.path.join(args.work, "cs-redirects.tsv")
    subprocess.run([os.path.join(args.bin, "wiki-extract"), wiki, "-o", docs, "--redirects", redirects, "--quiet"],
                   check=True)
    big = os.path.join(args.work, "cs-docs-x%d.jsonl" % args.copies)
    with open(docs, encoding="utf-8") as f:
        text = f.read()
    with open(big, "w", encoding="utf-8") as f:
        for _ in range(args.copies):
            f.write(text)
    warm(big)
    print("\nEntityCS on %s (%d copies of the enwiki excerpt's articles)" % (big, args.copies))
    print("%-28s %7s %7s %12s %16s %11s" % ("run", "wall s", "cpu s", "sentences/s", "sentences/cpu-s", "records/s"))
    for threads in (1, 2):
        secs, cpu, _ = run([cs, "entitycs", "--kg", kg, "--redirects", redirects, "--langs", LANGS, "-o",
                            os.path.join(args.work, "entitycs.jsonl"), "--threads", str(threads), "--stats", stats,
                            "--quiet", big])
        s = json.load(open(stats))
        written = s["en_sentences"] + s["cs_sentences"]
        print("%-28s %7.2f %7.2f %12.0f %16.0f %11.0f" % ("cs-gen entitycs --threads %d" % threads, secs, cpu,
                                                        s["sentences"] / secs, s["sentences"] / cpu, written / secs))


if __name__ == "__main__":
    main()
