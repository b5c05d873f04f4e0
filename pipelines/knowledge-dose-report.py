#!/usr/bin/env python3
"""The dose-response report (pipelines/knowledge-gain.sh --preset dose): accuracy against exposure.

Each seen fact was dealt a dose k (split.tsv), the number of times its knowledge records were to be
drawn; the unseen facts are k = 0. From the probe predictions of every arm and seed
(DIR/probe-ARM-SEED.jsonl) and the exposures each arm's run measured (DIR/exposures-ARM-SEED.tsv,
knowledge_gain_exposures.py), per decoding method and language, for every arm and dose:

- acc: the accuracy over the dose's facts (each fact's verdict averaged over the seeds), with a
  bootstrap 95% interval (facts resampled within each relation);
- gain: acc minus arm (a)'s on the same facts, with a paired bootstrap interval;
- exposures: the measured draws of the dose's facts (mean over facts and seeds; 0 for arm a);
- acc_gold_length: the accuracy when the probe is given the gold answer's number of masks (the
  candidate of that length, compared with the gold label): what the model knows when the decoding's
  choice of length is taken out of it;
- each on all facts and on the facts whose object is not their relation's most frequent among the
  sampled facts (subset non-majority: what a relation prior cannot explain).
Then, per arm, the rise from k = 0 to the largest dose with its interval (the two groups resampled
independently), and for each knowledge arm the share of the positive control's rise it reaches
(the transfer: rise(arm) / rise(control)). Rows with arm "majority" give the prior baseline: the
accuracy of always answering the relation's most frequent object.

Writes PREFIX.tsv and PREFIX.md and prints the TSV.

Usage: knowledge-dose-report.py --split split.tsv --seeds "1 2 3" [--arms a,b,c,d] [--control d]
                                [--bootstrap 2000] [--title T] --out PREFIX DIR
"""
import argparse
import collections
import csv
import json
import os
import random


def normalized(text):
    return "".join(text.lower().split())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", required=True)
    ap.add_argument("--seeds", required=True)
    ap.add_argument("--arms", default="a,b,c,d", help="the first is the text-only baseline")
    ap.add_argument("--control", default="d", help="the positive control's arm")
    ap.add_argument("--bootstrap", type=int, default=2000)
    ap.add_argument("--title", default="Knowledge gain by dose")
    ap.add_argument("--out", required=True)
    ap.add_argument("dir")
    a = ap.parse_args()
    seeds, arms = a.seeds.split(), a.arms.split(",")
    base = arms[0]
    dose, relation_of = {}, {}
    for r in csv.DictReader(open(a.split, encoding="utf-8"), delimiter="\t"):
        key = (r["sub_uri"], r["relation"], r["obj_uri"])
        dose[key] = int(r["dose"])
        relation_of[key] = r["relation"]
    objects = collections.defaultdict(collections.Counter)
    for s, rel, o in dose:
        objects[rel][o] += 1
    majority = {rel: min(c, key=lambda o: (-c[o], o)) for rel, c in objects.items()}
    exposures = collections.defaultdict(list)  # (arm, fact) -> measured draws per seed
    for arm in arms[1:]:
        for seed in seeds:
            for r in csv.DictReader(open(os.path.join(a.dir, f"exposures-{arm}-{seed}.tsv"), encoding="utf-8"),
                                    delimiter="\t"):
                exposures[(arm, (r["sub_uri"], r["relation"], r["obj_uri"]))].append(int(r["exposures"]))
    # verdict[(method, lang)][fact][(arm, seed)] = (correct, correct at the gold length)
    verdict = collections.defaultdict(lambda: collections.defaultdict(dict))
    for arm in arms:
        for seed in seeds:
            for line in open(os.path.join(a.dir, f"probe-{arm}-{seed}.jsonl"), encoding="utf-8"):
                p = json.loads(line)
                fact = (p["sub_uri"], p["relation"], p["obj_uri"])
                if fact not in dose:
                    raise SystemExit(f"{fact}: probed but not in {a.split}")
                at_length = [c for c in p["candidates"] if c["num_mask"] == p["gold_tokens"]]
                gold_length = bool(at_length) and normalized(at_length[0]["prediction"]) == normalized(p["gold"])
                verdict[(p["method"], p["lang"])][fact][(arm, seed)] = (bool(p["correct"]), gold_length)
    rng = random.Random(12345)
    mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")  # noqa: E731
    pct = lambda x: f"{100 * x:.2f}"  # noqa: E731

    def resample(facts):
        """Facts resampled with replacement within each relation."""
        by_rel = collections.defaultdict(list)
        for f in facts:
            by_rel[relation_of[f]].append(f)
        return [g[rng.randrange(len(g))] for g in by_rel.values() for _ in g]

    def interval(value, facts):
        samples = sorted(value(resample(facts)) for _ in range(a.bootstrap))
        return samples[int(0.025 * len(samples))], samples[int(0.975 * len(samples)) - 1]

    doses = sorted(set(dose.values()))
    top = doses[-1]
    rows = ["method\tlang\tarm\tdose\tsubset\tfacts\texposures\tacc\tacc_low\tacc_high\tgain\tgain_low\tgain_high"
            "\tacc_gold_length"]
    md = [f"# {a.title}", "",
          f"Accuracy in %; each fact's verdict is the mean over seeds {', '.join(seeds)}; 95% intervals by "
          f"bootstrap over facts within relations ({a.bootstrap} resamples); gain = the arm − ({base}) on the same "
          "facts (paired); exposures = the measured draws of each fact's knowledge records (mean); gold length = "
          "the accuracy with the gold answer's number of masks; non-majority = the facts whose object is not "
          "their relation's most frequent.", ""]
    for (method, lang), facts_v in sorted(verdict.items()):
        for fact, v in facts_v.items():
            if len(v) != len(arms) * len(seeds):
                raise SystemExit(f"{method} {lang} {fact}: probed by {sorted(v)} only, not every arm and seed")
        acc = {arm: {f: mean([v[(arm, s)][0] for s in seeds]) for f, v in facts_v.items()} for arm in arms}
        gold_len = {arm: {f: mean([v[(arm, s)][1] for s in seeds]) for f, v in facts_v.items()} for arm in arms}
        md += [f"## {method} decoding, {lang}", ""]
        for subset in ("all", "non-majority"):
            in_subset = lambda f: subset == "all" or f[2] != majority[f[1]]  # noqa: E731
            groups = {k: [f for f in facts_v if dose[f] == k and in_subset(f)] for k in doses}
            md += [f"### {subset} facts", "",
                   "| dose | facts | " + " | ".join(f"({arm})" for arm in arms) + " | majority |",
                   "|---:|---:|" + "---|" * len(arms) + "---:|"]
            for k in doses:
                g = groups[k]
                if not g:
                    continue
                cells = []
                for arm in arms:
                    value = lambda fs, arm=arm: mean([acc[arm][f] for f in fs])  # noqa: E731
                    gain = lambda fs, arm=arm: mean([acc[arm][f] - acc[base][f] for f in fs])  # noqa: E731
                    lo, hi = interval(value, g)
                    glo, ghi = interval(gain, g) if arm != base else (0.0, 0.0)
                    drawn = mean([mean(exposures[(arm, f)]) for f in g]) if arm != base else 0.0
                    rows.append(f"{method}\t{lang}\t{arm}\t{k}\t{subset}\t{len(g)}\t{drawn:.2f}\t{pct(value(g))}\t"
                                f"{pct(lo)}\t{pct(hi)}\t{pct(gain(g))}\t{pct(glo)}\t{pct(ghi)}\t"
                                f"{pct(mean([gold_len[arm][f] for f in g]))}")
                    cells.append(f"{pct(value(g))} [{pct(lo)}, {pct(hi)}]; {pct(mean([gold_len[arm][f] for f in g]))}")
                prior = mean([f[2] == majority[f[1]] for f in g])
                rows.append(f"{method}\t{lang}\tmajority\t{k}\t{subset}\t{len(g)}\t0\t{pct(prior)}\t{pct(prior)}\t"
                            f"{pct(prior)}\t\t\t\t")
                md.append(f"| {k} | {len(g)} | " + " | ".join(cells) + f" | {pct(prior)} |")
            md += ["", "(each cell: accuracy [95% interval]; accuracy at the gold length)", ""]
            # The rise from k = 0 to the top dose, the groups resampled independently.
            md += [f"Rise from dose 0 to dose {top} ({subset} facts):", "",
                   "| arm | rise | 95% interval | share of the control's rise |", "|---|---:|---|---:|"]
            low, high = groups[doses[0]], groups[top]
            control = value_of(acc[a.control], high) - value_of(acc[a.control], low) if high and low else 0.0
            for arm in arms:
                value = lambda fs, arm=arm: mean([acc[arm][f] for f in fs])  # noqa: E731
                point = value(high) - value(low)
                samples = sorted(value(resample(high)) - value(resample(low)) for _ in range(a.bootstrap))
                lo, hi = samples[int(0.025 * len(samples))], samples[int(0.975 * len(samples)) - 1]
                rows.append(f"{method}\t{lang}\t{arm}\t{top}-{doses[0]}\t{subset}\t{len(high)}+{len(low)}\t\t"
                            f"{pct(point)}\t{pct(lo)}\t{pct(hi)}\t\t\t\t")
                share = ""
                if arm not in (base, a.control):
                    share = f"{point / control:.2f}" if control > 0 else "–"
                md.append(f"| ({arm}) | {pct(point)} | [{pct(lo)}, {pct(hi)}] | {share} |")
            md.append("")
        md += priors(facts_v, majority, objects, pct)
    text = "\n".join(rows) + "\n"
    with open(a.out + ".tsv", "w", encoding="utf-8") as f:
        f.write(text)
    with open(a.out + ".md", "w", encoding="utf-8") as f:
        f.write("\n".join(md))
    print(text, end="")


def value_of(acc, facts):
    return sum(acc[f] for f in facts) / len(facts)


def priors(facts_v, majority, objects, pct):
    md = ["### The relations' priors", "",
          "| relation | facts | most frequent object | its share |", "|---|---:|---|---:|"]
    for rel in sorted(objects, key=lambda r: int(r[1:])):
        n = sum(objects[rel].values())
        md.append(f"| {rel} | {n} | {majority[rel]} | {pct(objects[rel][majority[rel]] / n)} |")
    return md + [""]


if __name__ == "__main__":
    main()
