#!/usr/bin/env python3
"""How often each fact's knowledge records were drawn in an arm's training run, counted from what
the run drew (pretrain --drawn: draws per sequence, with the record's input and line) and the
records' "fact" field (knowledge_gain_doses.py) — measured, not assumed from the doses.

  knowledge_gain_exposures.py --split split.tsv --drawn drawn.tsv --inputs IN0,IN1,... -o exposures.tsv

--inputs: the files given to pretrain prepare, in order (the drawn table's input indexes them).
Writes sub_uri, relation, obj_uri, dose, exposures, records (the fact's sequences in the dataset)
for every fact of the split (dose 0 for the unseen), and prints each dose's exposures. A record cut
into several sequences is an error: its draws would not be the fact's."""
import argparse
import collections
import csv
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", required=True)
    ap.add_argument("--drawn", required=True)
    ap.add_argument("--inputs", required=True)
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    split = list(csv.DictReader(open(a.split, encoding="utf-8"), delimiter="\t"))
    dose = {(r["sub_uri"], r["relation"], r["obj_uri"]): int(r.get("dose") or 0) for r in split}
    inputs = a.inputs.split(",")
    facts_of = []  # per input: line -> fact, for the records that carry one
    for path in inputs:
        lines = {}
        for n, line in enumerate(open(path, encoding="utf-8"), 1):
            if line.startswith("{") and '"fact"' in line:  # a knowledge record (the text may be plain lines)
                fact = json.loads(line).get("fact")
                if fact:
                    lines[n] = tuple(fact)
        facts_of.append(lines)
    exposures, records = collections.Counter(), collections.Counter()
    seen_records = set()
    for row in csv.DictReader(open(a.drawn, encoding="utf-8"), delimiter="\t"):
        i, line = int(row["input"]), int(row["source_line"])
        if i >= len(inputs):
            sys.exit(f"{a.drawn}: input {i}, but --inputs names {len(inputs)}")
        fact = facts_of[i].get(line)
        if fact is None:
            continue
        if (i, line) in seen_records:
            sys.exit(f"{inputs[i]}:{line}: a knowledge record cut into several sequences (raise --max-len)")
        seen_records.add((i, line))
        exposures[fact] += int(row["draws"])
        records[fact] += 1
    with open(a.output, "w", encoding="utf-8") as out:
        out.write("sub_uri\trelation\tobj_uri\tdose\texposures\trecords\n")
        for key, k in dose.items():
            out.write("\t".join(key) + f"\t{k}\t{exposures[key]}\t{records[key]}\n")
    by_dose = collections.defaultdict(list)
    for key, k in dose.items():
        by_dose[k].append(exposures[key])
    for k in sorted(by_dose):
        e = by_dose[k]
        print(f"   dose {k}: {len(e)} facts, exposures {min(e)}..{max(e)} (mean {sum(e) / len(e):.2f})")
    stray = [f for f in exposures if f not in dose]
    if stray:
        sys.exit(f"records of {len(stray)} facts not in {a.split}, e.g. {stray[0]}")


if __name__ == "__main__":
    main()
