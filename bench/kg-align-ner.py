#!/usr/bin/env python3
"""bench/kg-align-ner: `kg-align ner` (silver NER from Wikipedia links typed through the KG) against
the Python stdlib peer applying the same rules (bench/reference/silver_ner_ref.py) on the same input,
in one run: documents/s and words/s (whole processes: loading the KG included), the speed-ups, peak
memory, and how far the two outputs agree (typed links, sentences, entity chunks).

Input, built once and cached under --work: the enwiki fixture's XML replicated to --mb MB
(make-big-wiki.py) through wiki-extract; the KG: wd-extract --langs en --sites enwiki of the dev KG
fixture (55k entities with P31, some P279); the peer reads the same dump as JSON.

Usage: bench/kg-align-ner.py [--bin build/bin] [--fixtures ../shared/fixtures] [--work out/bench] [--mb 200]
"""
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import arguments, run, warm  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))


def main():
    def extra(ap):
        ap.add_argument("--mb", type=float, default=200, help="size of the replicated Wikipedia XML")
    args = arguments(extra)
    dump = os.path.join(args.fixtures, "xfactr-kg-dev.json.gz")
    wiki = os.path.join(args.fixtures, "wikipedia", "enwiki-sample-a.xml.bz2")
    if not os.path.exists(dump) or not os.path.exists(wiki):
        sys.exit("fixtures not found: " + args.fixtures)
    w = args.work
    kg = os.path.join(w, "ner-kg.h5")
    subprocess.run([os.path.join(args.bin, "wd-extract"), dump, "-o", kg, "--langs", "en", "--sites", "enwiki",
                    "--quiet"], check=True)
    docs, redirects = os.path.join(w, "ner-docs-%.0fmb.jsonl" % args.mb), os.path.join(w, "ner-redirects.tsv")
    if not os.path.exists(docs) or not os.path.exists(redirects):
        xml = os.path.join(w, "ner-wiki.xml")
        subprocess.run([sys.executable, os.path.join(here, "make-big-wiki.py"), wiki, str(args.mb), xml], check=True)
        subprocess.run([os.path.join(args.bin, "wiki-extract"), xml, "-o", docs, "--redirects", redirects, "--quiet"],
                       check=True)
        os.remove(xml)
    warm(docs)
    warm(dump)

    rows = []
    for threads in (1, 2):
        out, stats = os.path.join(w, f"ner-{threads}.panx"), os.path.join(w, f"ner-{threads}.json")
        wall, cpu, mb = run([os.path.join(args.bin, "kg-align"), "ner", "--kg", kg, "--redirects", redirects, "-o", out,
                             "--threads", str(threads), "--stats", stats, "--quiet", docs])
        rows.append((f"kg-align ner --threads {threads}", wall, cpu, mb, json.load(open(stats)), out))
    ref_out, ref_counts = os.path.join(w, "ner-ref.panx"), os.path.join(w, "ner-ref.json")
    wall, cpu, mb = run(["/usr/bin/python3", os.path.join(here, "reference", "silver_ner_ref.py"), "--dump", dump,
                         "--redirects", redirects, "-o", ref_out, "--counts", ref_counts, docs])
    ref = json.load(open(ref_counts))
    rows.append(("python3 stdlib peer", wall, cpu, mb, ref, ref_out))
    docs_n = rows[0][4]["documents"]
    print(f"input: {os.path.getsize(docs) / 1e6:.0f} MB of wiki-extract documents ({docs_n} articles), the dev KG")
    print(f"{'run':<28} {'wall s':>7} {'cpu s':>7} {'docs/s':>8} {'words/s':>10} {'peak MB':>8}")
    for name, wall, cpu, mb, s, _ in rows:
        print(f"{name:<28} {wall:>7.2f} {cpu:>7.2f} {docs_n / wall:>8.0f} {s['words'] / wall:>10.0f} {mb:>8.0f}")
    peer = rows[-1]
    for name, wall, cpu, *_ in rows[:-1]:
        print(f"{name}: {peer[1] / wall:.1f}x the peer's wall time, {peer[2] / cpu:.1f}x per CPU-second")
    k = rows[0][4]
    chunks = lambda path: sum(1 for line in open(path, encoding="utf-8") if "\tB-" in line)  # noqa: E731
    print(f"typed links: kg-align {k['links_typed']}, peer {ref['links_typed']}; sentences written: kg-align "
          f"{k['sentences_written']}, peer {ref['sentences_written']} (ICU's sentence and word rules against the "
          f"peer's regular expressions); entity chunks: kg-align {chunks(rows[0][5])}, peer {chunks(ref_out)}")


main()
