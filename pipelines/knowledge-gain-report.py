#!/usr/bin/env python3
"""The knowledge-gain experiment's report (pipelines/knowledge-gain.sh): from the probe predictions
of arm (a) (natural text) and arm (b) (plus KMLM knowledge sentences) for every seed, each arm's
accuracy (mean over seeds) per method, language and relation, the gain b − a, and a paired bootstrap
95% interval of the gain over facts: facts are resampled with replacement within each language and
relation (every arm and seed keeps its verdict on the fact), and the gain of the macro average over
relations is recomputed each time. Writes PREFIX.tsv and prints the table.

Usage: knowledge-gain-report.py --probed P30,P37 --control P1412 --seeds "1 2" [--bootstrap 2000] [--runs probe]
                               --out PREFIX DIR
"""
import argparse
import json
import os
import random


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--probed", required=True)
    ap.add_argument("--control", required=True)
    ap.add_argument("--seeds", required=True)
    ap.add_argument("--bootstrap", type=int, default=2000)
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", default="probe", help="the predictions are RUNS-{a,b}-SEED.jsonl")
    ap.add_argument("dir")
    a = ap.parse_args()
    seeds = a.seeds.split()
    probed, control = a.probed.split(","), a.control.split(",")
    # verdicts[(method, lang, relation)][fact] = {(arm, seed): correct}
    verdicts = {}
    for arm in "ab":
        for seed in seeds:
            for line in open(os.path.join(a.dir, f"{a.runs}-{arm}-{seed}.jsonl"), encoding="utf-8"):
                p = json.loads(line)
                cell = verdicts.setdefault((p["method"], p["lang"], p["relation"]), {})
                cell.setdefault((p["sub_uri"], p["obj_uri"]), {})[(arm, seed)] = p["correct"]
    runs = [(arm, seed) for arm in "ab" for seed in seeds]
    # Per fact: each arm's accuracy over seeds, and the difference.
    diffs, accs = {}, {}
    for key, facts in verdicts.items():
        for fact, v in facts.items():
            assert len(v) == len(runs), f"{key} {fact}: probed by {sorted(v)} only, not every arm and seed"
        acc = {arm: [sum(v[(arm, s)] for s in seeds) / len(seeds) for v in facts.values()] for arm in "ab"}
        accs[key] = acc
        diffs[key] = [b - x for x, b in zip(acc["a"], acc["b"])]
    rng = random.Random(12345)
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731

    def interval(keys):
        """The gain of the macro average over keys, and its bootstrap 95% interval."""
        gain = mean([mean(diffs[k]) for k in keys])
        samples = []
        for _ in range(a.bootstrap):
            samples.append(mean([mean([d[rng.randrange(len(d))] for _ in d]) for d in (diffs[k] for k in keys)]))
        samples.sort()
        return gain, samples[int(0.025 * len(samples))], samples[int(0.975 * len(samples)) - 1]

    rows = ["method\tlang\trelation\tkind\tfacts\tacc_a\tacc_b\tgain\tci_low\tci_high"]
    pct = lambda x: f"{100 * x:.2f}"  # noqa: E731
    methods = sorted({k[0] for k in verdicts})
    langs = []
    for k in verdicts:
        if k[1] not in langs:
            langs.append(k[1])
    for method in methods:
        groups = []
        for lang in langs:
            for rel in probed + control:
                key = (method, lang, rel)
                if key not in verdicts or not verdicts[key]:
                    continue
                gain, lo, hi = interval([key])
                kind = "probed" if rel in probed else "control"
                rows.append(f"{method}\t{lang}\t{rel}\t{kind}\t{len(diffs[key])}\t{pct(mean(accs[key]['a']))}\t"
                            f"{pct(mean(accs[key]['b']))}\t{pct(gain)}\t{pct(lo)}\t{pct(hi)}")
            groups.append((lang, "probed", [(method, lang, r) for r in probed if verdicts.get((method, lang, r))]))
            groups.append((lang, "control", [(method, lang, r) for r in control if verdicts.get((method, lang, r))]))
        groups.append(("all", "probed", [k for g in groups if g[1] == "probed" for k in g[2]]))
        groups.append(("all", "control", [k for g in groups if g[1] == "control" and g[0] != "all" for k in g[2]]))
        for lang, kind, keys in groups:
            if not keys:
                continue
            gain, lo, hi = interval(keys)
            facts = sum(len(diffs[k]) for k in keys)
            acc_a = mean([mean(accs[k]["a"]) for k in keys])
            acc_b = mean([mean(accs[k]["b"]) for k in keys])
            rows.append(f"{method}\t{lang}\tmacro\t{kind}\t{facts}\t{pct(acc_a)}\t{pct(acc_b)}\t{pct(gain)}\t"
                        f"{pct(lo)}\t{pct(hi)}")
    text = "\n".join(rows) + "\n"
    with open(a.out + ".tsv", "w") as f:
        f.write(text)
    print(f"seeds {' '.join(seeds)}; accuracies in %, means over seeds; gain = b - a with its paired bootstrap "
          f"95% interval over facts ({a.bootstrap} resamples)")
    print(text, end="")


if __name__ == "__main__":
    main()
