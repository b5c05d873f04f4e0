#!/usr/bin/env python3
"""The knowledge-gain experiment's report (pipelines/knowledge-gain.sh): from the probe predictions
of arm (a) (text only) and each other arm (b: the same text plus knowledge sentences of the *seen*
facts; c: the same with templates that share no wording with the probe's) for every seed, each
arm's accuracy (mean over seeds) per method, language, relation and side (seen, unseen: split.tsv),
the gain over (a), and a paired bootstrap 95% interval of the gain over facts: facts are resampled
with replacement within each language, relation and side (every arm and seed keeps its verdict on
the fact), and the gain of the macro average over relations is recomputed each time. The claim
holds where the seen facts' overall gain has its interval above 0 while the unseen facts' stays
near 0. Writes PREFIX.tsv and PREFIX.md (a table per arm, method and language) and prints the TSV.

PREFIX.md also weighs the relations' answer priors, which lift seen and unseen facts alike: per
relation, the accuracy of always answering the object most frequent among its seen facts (the
"majority" baseline, per side), and how many distinct answers each arm gives over the relation's
facts (mean over seeds); an arm whose accuracy is the baseline's and whose answers are few has
learnt the prior, not the facts.

Usage: knowledge-gain-report.py --split split.tsv --seeds "1 2 3" [--arms b,c] [--bootstrap 2000]
                               [--runs probe] [--title T] --out PREFIX DIR
"""
import argparse
import json
import os
import random


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", required=True, help="sub_uri, relation, obj_uri, seen|unseen (TSV with a header)")
    ap.add_argument("--seeds", required=True)
    ap.add_argument("--bootstrap", type=int, default=2000)
    ap.add_argument("--out", required=True)
    ap.add_argument("--arms", default="b", help="the arms compared with arm a, comma-separated")
    ap.add_argument("--runs", default="probe", help="the predictions are DIR/RUNS-ARM-SEED.jsonl")
    ap.add_argument("--title", default="Knowledge gain")
    ap.add_argument("dir")
    a = ap.parse_args()
    seeds = a.seeds.split()
    others = a.arms.split(",")
    arms = ["a"] + others
    side_of = {}
    with open(a.split, encoding="utf-8") as f:
        next(f)
        for line in f:
            sub, rel, obj, side = line.rstrip("\n").split("\t")
            side_of[(sub, rel, obj)] = side
    # verdicts[(method, lang, relation, side)][fact] = {(arm, seed): correct}
    verdicts = {}
    answers = {}  # (arm, seed, method, lang, relation) -> the distinct predictions
    gold = {}  # (lang, relation, side) -> {fact: obj_uri}
    label = {}  # (lang, obj_uri) -> the object's label
    for arm in arms:
        for seed in seeds:
            for line in open(os.path.join(a.dir, f"{a.runs}-{arm}-{seed}.jsonl"), encoding="utf-8"):
                p = json.loads(line)
                side = side_of.get((p["sub_uri"], p["relation"], p["obj_uri"]))
                if side is None:
                    raise SystemExit(f"{p['relation']} {p['sub_uri']} {p['obj_uri']}: probed but not in {a.split}")
                cell = verdicts.setdefault((p["method"], p["lang"], p["relation"], side), {})
                cell.setdefault((p["sub_uri"], p["obj_uri"]), {})[(arm, seed)] = p["correct"]
                answers.setdefault((arm, seed, p["method"], p["lang"], p["relation"]), set()).add(p["prediction"])
                gold.setdefault((p["lang"], p["relation"], side), {})[p["sub_uri"]] = p["obj_uri"]
                label[(p["lang"], p["obj_uri"])] = p["obj_label"]
    runs = [(arm, seed) for arm in arms for seed in seeds]
    diffs, accs = {}, {}
    for key, facts in verdicts.items():
        for fact, v in facts.items():
            assert len(v) == len(runs), f"{key} {fact}: probed by {sorted(v)} only, not every arm and seed"
        acc = {arm: [sum(v[(arm, s)] for s in seeds) / len(seeds) for v in facts.values()] for arm in arms}
        accs[key] = acc
        for arm in others:
            diffs[key + (arm,)] = [y - x for x, y in zip(acc["a"], acc[arm])]
    rng = random.Random(12345)
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731

    def interval(keys):
        """The gain of the macro average over keys, and its bootstrap 95% interval."""
        gain = mean([mean(diffs[k]) for k in keys])
        samples = sorted(mean([mean([d[rng.randrange(len(d))] for _ in d]) for d in (diffs[k] for k in keys)])
                         for _ in range(a.bootstrap))
        return gain, samples[int(0.025 * len(samples))], samples[int(0.975 * len(samples)) - 1]

    pct = lambda x: f"{100 * x:.2f}"  # noqa: E731
    rows = ["arm\tmethod\tlang\trelation\tside\tfacts\tacc_a\tacc_arm\tgain\tci_low\tci_high"]
    md = [f"# {a.title}", "",
          f"Accuracy in %, the mean over seeds {', '.join(seeds)}; gain = the arm − (a) with its paired bootstrap 95% "
          f"interval over facts ({a.bootstrap} resamples); overall = the macro average over relations.", ""]
    methods = sorted({k[0] for k in verdicts})
    langs = sorted({k[1] for k in verdicts}, key=lambda l: (l != "en", l))
    relations = sorted({k[2] for k in verdicts}, key=lambda r: int(r[1:]))
    for arm, method, lang in ((arm, m, lang) for arm in others for m in methods for lang in langs):
        md += [f"## ({arm}) − (a), {method} decoding, {lang}", "",
               f"| relation | seen facts | (a) | ({arm}) | gain | 95% interval | unseen facts | (a) | ({arm}) | gain "
               "| 95% interval |",
               "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---|"]
        for rel in relations + ["overall"]:
            line = [rel]
            for side in ("seen", "unseen"):
                keys = ([(method, lang, r, side) for r in relations if verdicts.get((method, lang, r, side))]
                        if rel == "overall" else [(method, lang, rel, side)] * bool(verdicts.get((method, lang, rel, side))))
                keys = [k + (arm,) for k in keys]
                if not keys:
                    line += ["0", "", "", "", ""]
                    continue
                gain, lo, hi = interval(keys)
                facts = sum(len(diffs[k]) for k in keys)
                acc_a = mean([mean(accs[k[:4]]["a"]) for k in keys])
                acc_arm = mean([mean(accs[k[:4]][arm]) for k in keys])
                rows.append(f"{arm}\t{method}\t{lang}\t{rel}\t{side}\t{facts}\t{pct(acc_a)}\t{pct(acc_arm)}\t"
                            f"{pct(gain)}\t{pct(lo)}\t{pct(hi)}")
                line += [str(facts), pct(acc_a), pct(acc_arm), pct(gain), f"[{pct(lo)}, {pct(hi)}]"]
            md.append("| " + " | ".join(f"**{c}**" if rel == "overall" and c else c for c in line) + " |")
        md.append("")
    md += priors_table(arms, seeds, methods, langs, relations, answers, gold, label, pct, mean)
    text = "\n".join(rows) + "\n"
    with open(a.out + ".tsv", "w") as f:
        f.write(text)
    with open(a.out + ".md", "w", encoding="utf-8") as f:
        f.write("\n".join(md))
    print(f"seeds {' '.join(seeds)}; accuracies in %, means over seeds; gain = arm - a with its paired bootstrap "
          f"95% interval over facts ({a.bootstrap} resamples)")
    print(text, end="")


def priors_table(arms, seeds, methods, langs, relations, answers, gold, label, pct, mean):
    """The answer-prior section of PREFIX.md: the majority baseline and each arm's distinct answers."""
    md = ["## Answer priors", "",
          "majority = the accuracy (%) of always answering the object most frequent among the relation's seen "
          "facts; distinct = how many different answers an arm gives over the relation's facts (mean over seeds).",
          ""]
    for method, lang in ((m, lang) for m in methods for lang in langs):
        md += [f"### {method} decoding, {lang}", "",
               "| relation | majority object | majority: seen | majority: unseen | facts | "
               + " | ".join(f"({arm}) distinct" for arm in arms) + " |",
               "|---|---|---:|---:|---:|" + "---:|" * len(arms)]
        for rel in relations:
            seen = gold.get((lang, rel, "seen"), {})
            unseen = gold.get((lang, rel, "unseen"), {})
            if not seen:
                continue
            counts = {}
            for obj in seen.values():
                counts[obj] = counts.get(obj, 0) + 1
            top = min(counts, key=lambda o: (-counts[o], o))
            base = [pct(sum(o == top for o in side.values()) / len(side)) if side else "" for side in (seen, unseen)]
            distinct = [f"{mean([len(answers.get((arm, s, method, lang, rel), ())) for s in seeds]):.1f}" for arm in arms]
            md.append(f"| {rel} | {label[(lang, top)]} ({top}) | {base[0]} | {base[1]} | {len(seen) + len(unseen)} | " + " | ".join(distinct) + " |")
        md.append("")
    return md


if __name__ == "__main__":
    main()
