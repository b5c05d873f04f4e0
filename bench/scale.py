#!/usr/bin/env python3
"""bench/scale: the data tools on synthetic Wikidata dumps of growing size (bench/make-synthetic-
wikidata.py), each run alone, timed, with its peak memory; the growth exponent of each tool's time
and memory in the number of items, and the extrapolation to a full Wikidata (110 million items) on
one machine and as a job array of N tasks. `make bench` runs it at 20,000 items; by hand:

    bench/scale.py --sizes 20000,200000,2000000 [--threads 2] [--shards 4] [--work out/bench/scale]

Each size: wd-extract (one pass, then --shard i/S parts and the merge), kg-cycles with its defaults
(one run, then --shard i/S parts and the merge), cs-gen kmlm (de,fr,es); then the matching synthetic
Wikipedia (bench/make-synthetic-wikipedia.py, a multistream dump): wiki-extract (one pass, then
--shard i/S parts and the merge, which must equal the one pass), kg-align and cs-gen entitycs on its
documents, verbalize subgraphs (grown by kg-align's co-occurrence table) and render (kmlm, en/de/fr/es);
sample-lang (alpha 0.7, --memory-mb) on the KMLM text and pretrain prepare on its output (with the
fixtures' test tokenizer; skipped without it). The extraction's counts (wd-extract, wiki-extract,
EntityCS's English sentences, kg-align's co-occurrence table, the statements and qualifiers of the
subgraphs) are checked against the generators' own (independent counts): the run stops on a mismatch. The
numbers go to WORK/scale.json. An array of N tasks is modelled from the measured parts: a part of S
costs t_single * (s + (1 - s) / S), s the serial share (what every part does whole: reading the
dump, building the graph), so N tasks cost t_single * (s + (1 - s) / N) plus the merge.
"""
import filecmp
import json
import math
import os
import subprocess
import sys

from benchlib import arguments, here, run

FULL_ITEMS = 110_000_000  # Wikidata, 2026


def fit(points):
    """Least-squares slope of log y on log x: the growth exponent."""
    if len(points) < 2:
        return None
    xs, ys = [math.log(x) for x, _ in points], [math.log(max(y, 1e-3)) for _, y in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    var = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var if var else None


def stats_of(path):
    with open(path) as f:
        return json.load(f)


def main():
    args = arguments(lambda ap: (ap.add_argument("--sizes", default="20000"),
                                 ap.add_argument("--threads", type=int, default=2),
                                 ap.add_argument("--shards", type=int, default=4),
                                 ap.add_argument("--seed", type=int, default=1),
                                 ap.add_argument("--memory-mb", type=int, default=256)))
    work = os.path.join(args.work, "scale")
    os.makedirs(work, exist_ok=True)
    tool = lambda name: os.path.join(args.bin, name)
    threads = ["--threads", str(args.threads), "--quiet"]
    results = []  # {tool, items, wall, cpu, rss, output, serial}

    def run_shards(name, single, part_cmd, merge_cmd, suffix):
        """Parts i/S one after another, then the merge (none: the consumer reads the parts); rows for
        the slowest part and the merge."""
        parts, part_walls, part_rss = [], [], 0
        for i in range(args.shards):
            p = os.path.join(d, "%s-part%d%s" % (name, i, suffix))
            w, _, r = run(part_cmd(i, p) + threads)
            parts.append(p)
            part_walls.append(w)
            part_rss = max(part_rss, r)
        serial = max(0.0, min(1.0, (args.shards * max(part_walls) / single - 1) / (args.shards - 1)))
        results.append(dict(tool=name + " part 1/%d" % args.shards, items=items, wall=max(part_walls), cpu=0,
                            rss=part_rss, output="serial share %.2f" % serial, serial=serial))
        if merge_cmd is None:
            return parts
        merged = os.path.join(d, "%s-merged%s" % (name, suffix))
        mw, mc, mr = run(merge_cmd(parts, merged) + ["--quiet"])
        results.append(dict(tool=name + " merge", items=items, wall=mw, cpu=mc, rss=mr, output="%d parts" %
                            args.shards))
        return merged

    for items in [int(s) for s in args.sizes.split(",")]:
        d = os.path.join(work, str(items))
        os.makedirs(d, exist_ok=True)
        dump, counts = os.path.join(d, "dump.json"), os.path.join(d, "counts.json")
        if not os.path.exists(dump):
            subprocess.run(["/usr/bin/python3", os.path.join(here, "make-synthetic-wikidata.py"), str(items), dump,
                            "--seed", str(args.seed), "--counts", counts], check=True)
        size_gb = os.path.getsize(dump) / 1e9
        kg, st = os.path.join(d, "kg.h5"), os.path.join(d, "wd.json")
        wall, cpu, rss = run([tool("wd-extract"), dump, "-o", kg, "--stats", st] + threads)
        got, expected = stats_of(st), stats_of(counts)
        wd_counts = expected
        wrong = {k: (v, got.get(k)) for k, v in expected.items() if not k.startswith("degree") and got.get(k) != v}
        if wrong:
            sys.exit("wd-extract's counts differ from the generator's at %d items: %s" % (items, wrong))
        results.append(dict(tool="wd-extract", items=items, wall=wall, cpu=cpu, rss=rss,
                            output="%d triples, %.2f GB JSON" % (got["item_triples"], size_gb)))
        # Shards of wd-extract and of kg-cycles, run one after another; the slowest part + the merge.
        for name, single, part_cmd, merge_cmd in (
                ("wd-extract", wall, lambda i, p: [tool("wd-extract"), dump, "--shard", "%d/%d" % (i, args.shards),
                                                   "-o", p],
                 lambda ps, o: [tool("wd-extract"), "merge"] + ps + ["-o", o]),
                ("kg-cycles", None, lambda i, p: [tool("kg-cycles"), "--kg", kg, "--shard", "%d/%d" % (i, args.shards),
                                                  "-o", p],
                 lambda ps, o: [tool("kg-cycles"), "merge"] + ps + ["-o", o])):
            if name == "kg-cycles":
                cst = os.path.join(d, "kc.json")
                wall, cpu, rss = run([tool("kg-cycles"), "--kg", kg, "-o", os.path.join(d, "cycles.h5"),
                                      "--stats", cst] + threads)
                s = stats_of(cst)
                results.append(dict(tool="kg-cycles", items=items, wall=wall, cpu=cpu, rss=rss,
                                    output="%d cycles (K = %d, %d hubs sampled)" % (s["written"], s.get("hub_edges", 0),
                                                                                    s.get("sampled_hubs", 0))))
                single = wall
            run_shards(name, single, part_cmd, merge_cmd, ".h5")
        cs = os.path.join(d, "cs.json")
        wall, cpu, rss = run([tool("cs-gen"), "kmlm", "--kg", kg, "--langs", "de,fr,es", "-o",
                              os.path.join(d, "kmlm.jsonl"), "--stats", cs] + threads)
        kmlm_records = stats_of(cs)["records"]
        results.append(dict(tool="cs-gen kmlm", items=items, wall=wall, cpu=cpu, rss=rss,
                            output="%d records" % kmlm_records))
        # The KMLM text rebalanced across its languages (an external shuffle in --memory-mb), then tokenized.
        st, sampled = os.path.join(d, "sample.json"), os.path.join(d, "kmlm-sampled.jsonl")
        wall, cpu, rss = run([tool("sample-lang"), os.path.join(d, "kmlm.jsonl"), "--alpha", "0.7", "--memory-mb",
                              str(args.memory_mb), "-o", sampled, "--stats", st] + threads)
        got = stats_of(st)
        if got["records_out"] != kmlm_records:
            sys.exit("sample-lang wrote %d records of %d" % (got["records_out"], kmlm_records))
        results.append(dict(tool="sample-lang", items=items, wall=wall, cpu=cpu, rss=rss,
                            output="%d records, %d shuffle runs (--memory-mb %d)" % (
                                got["records_out"], got["shuffle_runs"], args.memory_mb)))
        spm = os.path.join(args.fixtures, "tokenizer", "spm-test-vocab1000.model")
        if os.path.exists(spm):
            st = os.path.join(d, "prepare.json")
            wall, cpu, rss = run([tool("pretrain"), "prepare", "--tokenizer", spm, "--max-len", "128", "-o",
                                  os.path.join(d, "tokens.h5"), "--stats", st, sampled] + threads)
            got = stats_of(st)
            if got["records"] != kmlm_records:
                sys.exit("pretrain prepare read %d records of %d" % (got["records"], kmlm_records))
            results.append(dict(tool="pretrain prepare", items=items, wall=wall, cpu=cpu, rss=rss,
                                output="%d sequences, %d tokens" % (got["sequences"], got["tokens"])))
            # Parts that pretrain --data reads as the one dataset: no merge.
            for p in run_shards("pretrain prepare", wall,
                                lambda i, p: [tool("pretrain"), "prepare", "--tokenizer", spm, "--max-len", "128",
                                              "--shard", "%d/%d" % (i, args.shards), "-o", p, sampled], None, ".h5"):
                os.remove(p)
        os.remove(sampled)

        # The matching Wikipedia, as a multistream dump.
        wiki, wiki_counts = os.path.join(d, "enwiki.xml.bz2"), os.path.join(d, "enwiki.counts.json")
        if not os.path.exists(wiki):
            subprocess.run(["/usr/bin/python3", os.path.join(here, "make-synthetic-wikipedia.py"), dump, wiki,
                            "--counts", wiki_counts], check=True)
        expected = stats_of(wiki_counts)
        docs, redirects, st = (os.path.join(d, n) for n in ("docs.jsonl", "redirects.tsv", "wiki.json"))
        wall, cpu, rss = run([tool("wiki-extract"), wiki, "-o", docs, "--redirects", redirects, "--stats", st] +
                             threads)
        got = stats_of(st)
        wrong = {k: (expected[k], got.get(k)) for k in ("pages", "articles", "redirects", "links")
                 if got.get(k) != expected[k]}
        if wrong:
            sys.exit("wiki-extract's counts differ from the generator's at %d items: %s" % (items, wrong))
        results.append(dict(tool="wiki-extract", items=items, wall=wall, cpu=cpu, rss=rss,
                            output="%d articles, %.0f MB bzip2" % (got["articles"], os.path.getsize(wiki) / 1e6)))
        merged = run_shards("wiki-extract", wall,
                            lambda i, p: [tool("wiki-extract"), wiki, "--shard", "%d/%d" % (i, args.shards), "-o", p,
                                          "--redirects", p + ".tsv"],
                            lambda ps, o: [tool("wiki-extract"), "merge"] + ps + ["-o", o, "--redirects", o + ".tsv"],
                            ".jsonl")
        if not (filecmp.cmp(merged, docs, shallow=False) and filecmp.cmp(merged + ".tsv", redirects, shallow=False)):
            sys.exit("wiki-extract's merged shards differ from its one pass at %d items" % items)
        st = os.path.join(d, "align.json")
        wall, cpu, rss = run([tool("kg-align"), "--kg", kg, "--redirects", redirects, "--cooc",
                              os.path.join(d, "cooc.tsv"), "-o", os.path.join(d, "aligned.jsonl"), "--stats", st,
                              docs] + threads)
        results.append(dict(tool="kg-align", items=items, wall=wall, cpu=cpu, rss=rss,
                            output="%d triples aligned (%d written)" % (stats_of(st)["triples_aligned"],
                                                                       expected["mentions"])))
        st = os.path.join(d, "entitycs.json")
        wall, cpu, rss = run([tool("cs-gen"), "entitycs", "--kg", kg, "--redirects", redirects, "--langs", "de,fr,es",
                              "-o", os.path.join(d, "entitycs.jsonl"), "--stats", st, docs] + threads)
        got = stats_of(st)
        if got.get("en_sentences") != expected["linked_sentences"]:
            sys.exit("cs-gen entitycs: %s English sentences, the generator linked %d" % (
                got.get("en_sentences"), expected["linked_sentences"]))
        results.append(dict(tool="cs-gen entitycs", items=items, wall=wall, cpu=cpu, rss=rss,
                            output="%d English sentences, %d switched" % (got["en_sentences"], got["cs_sentences"])))
        # KELM's subgraphs, grown by kg-align's co-occurrence table, rendered in four languages.
        cooc = [line.rstrip("\n") for line in open(os.path.join(d, "cooc.tsv")) if not line.startswith("#")]
        if cooc != expected["cooc"]:
            sys.exit("kg-align's co-occurrence table differs from the generator's at %d items" % items)
        st, subgraphs = os.path.join(d, "subgraphs.json"), os.path.join(d, "subgraphs.jsonl")
        wall, cpu, rss = run([tool("verbalize"), "subgraphs", "--kg", kg, "--cooc", os.path.join(d, "cooc.tsv"), "-o",
                              subgraphs, "--stats", st] + threads)
        got = stats_of(st)
        statements = sum(wd_counts.get(k, 0) for k in ("item_triples", "literal_quantity", "literal_time",
                                                       "literal_string", "literal_monolingualtext"))
        if (got["triples"], got["qualifiers"]) != (statements, wd_counts["qualifiers"]):
            sys.exit("verbalize subgraphs grouped %d statements and %d qualifiers; the dump has %d and %d" % (
                got["triples"], got["qualifiers"], statements, wd_counts["qualifiers"]))
        results.append(dict(tool="verbalize subgraphs", items=items, wall=wall, cpu=cpu, rss=rss,
                            output="%d subgraphs of %d statements" % (got["subgraphs"], got["triples"])))
        st, rendered = os.path.join(d, "render.json"), os.path.join(d, "rendered.jsonl")
        wall, cpu, rss = run([tool("verbalize"), "render", "--kg", kg, "--mode", "kmlm", "--langs", "en,de,fr,es",
                              "-o", rendered, "--stats", st, subgraphs] + threads)
        got = stats_of(st)
        if got["records.en"] != got["subgraphs"]:
            sys.exit("verbalize render: %d English records of %d subgraphs" % (got["records.en"], got["subgraphs"]))
        results.append(dict(tool="verbalize render", items=items, wall=wall, cpu=cpu, rss=rss,
                            output="%d records in 4 languages, %.1f GB" % (
                                sum(v for k, v in got.items() if k.startswith("records.")),
                                os.path.getsize(rendered) / 1e9)))
        render = [tool("verbalize"), "render", "--kg", kg, "--mode", "kmlm", "--langs", "en,de,fr,es"]
        merged = run_shards("verbalize render", wall,
                            lambda i, p: render + ["--shard", "%d/%d" % (i, args.shards), "-o", p, subgraphs],
                            lambda ps, o: [tool("verbalize"), "merge"] + ps + ["-o", o], ".jsonl")
        if not filecmp.cmp(merged, rendered, shallow=False):
            sys.exit("verbalize render's merged shards differ from its one pass at %d items" % items)
        for name in os.listdir(d):
            if name.startswith("verbalize render"):
                os.remove(os.path.join(d, name))
        os.remove(rendered)

    print("\nSynthetic Wikidata, --threads %d, each run alone: wall seconds, peak RSS" % args.threads)
    print("%-24s %11s %9s %9s  %s" % ("tool", "items", "wall s", "peak MB", "output"))
    for r in results:
        print("%-24s %11d %9.2f %9.0f  %s" % (r["tool"], r["items"], r["wall"], r["rss"], r["output"]))
    names = list(dict.fromkeys(r["tool"] for r in results))
    print("\nGrowth (exponent b of t ~ n^b, from the two largest sizes) and extrapolation to %d items:" % FULL_ITEMS)
    print("%-24s %8s %8s %14s %14s" % ("tool", "b time", "b mem", "full: wall h", "full: peak GB"))
    summary = {}
    for name in names:
        rows = [r for r in results if r["tool"] == name]
        # From the two largest sizes: at small ones a process's fixed costs hide the growth.
        rows_fit = rows[-2:]
        bt, bm = fit([(r["items"], r["wall"]) for r in rows_fit]), fit([(r["items"], r["rss"]) for r in rows_fit])
        last = rows[-1]
        scale = FULL_ITEMS / last["items"]
        full_wall = last["wall"] * scale ** bt / 3600 if bt is not None else None
        full_rss = last["rss"] * scale ** bm / 1024 if bm is not None else None
        summary[name] = dict(b_time=bt, b_mem=bm, full_wall_h=full_wall, full_rss_gb=full_rss,
                             serial=last.get("serial"))
        show = lambda x, f: f % x if x is not None else "-"
        print("%-24s %8s %8s %14s %14s" % (name, show(bt, "%.2f"), show(bm, "%.2f"), show(full_wall, "%.2f"),
                                           show(full_rss, "%.1f")))
    for name in ("wd-extract", "kg-cycles", "wiki-extract", "verbalize render", "pretrain prepare"):
        part = summary.get(name + " part 1/%d" % args.shards)
        if part and part["serial"] is not None and summary[name]["full_wall_h"] is not None:
            one, s = summary[name]["full_wall_h"], part["serial"]
            merge = (summary.get(name + " merge") or {}).get("full_wall_h") or 0
            for n in (16, 64):
                print("%s as %d array tasks at full size: %.2f h per task + %.2f h merge (serial share %.2f)" %
                      (name, n, one * (s + (1 - s) / n), merge, s))
    with open(os.path.join(work, "scale.json"), "w") as f:
        json.dump(dict(threads=args.threads, shards=args.shards, results=results, summary=summary), f, indent=1)


if __name__ == "__main__":
    main()
