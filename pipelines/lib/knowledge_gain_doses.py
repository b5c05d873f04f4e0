#!/usr/bin/env python3
"""The knowledge of one arm of the dose-response experiment (pipelines/knowledge-gain.sh --preset
dose): each seen fact's records, as many as its dose in split.tsv (column dose), so that one pass
over the arm's data draws the fact that many times. Every record written gains "fact": [sub, rel,
obj], which the exposure count (knowledge_gain_exposures.py) reads back.

  knowledge_gain_doses.py one-fact --split split.tsv SUBGRAPHS.jsonl -o one-fact.jsonl
      verbalize subgraphs' records cut to one seen fact each (one line per seen fact found), for
      verbalize render --mode template, which writes a record per subgraph in order
  knowledge_gain_doses.py templates --split split.tsv --subgraphs one-fact.jsonl RENDERED.jsonl -o arm.jsonl
      each rendered record (the fact of the subgraph on its line) k times
  knowledge_gain_doses.py kmlm --split split.tsv DRAW.jsonl... -o arm.jsonl
      cs-gen kmlm's records of each seen fact (its "triple"), taken from the draws in order (the
      first draw's records first), k of them; a fact with fewer records in all draws than its dose
      is an error (give more draws)

Prints, for each dose, the facts and the records written; lists the seen facts with no record (not
a claim of the KG the knowledge came from): they cannot be dosed and are reported as such."""
import argparse
import csv
import json
import sys


def read_split(path):
    rows = list(csv.DictReader(open(path, encoding="utf-8"), delimiter="\t"))
    if not rows or "dose" not in rows[0]:
        sys.exit(f"{path}: no dose column (knowledge_gain_split.py --doses)")
    return {(r["sub_uri"], r["relation"], r["obj_uri"]): int(r["dose"]) for r in rows if r["side"] == "seen"}


def one_fact(a, doses):
    written = set()
    with open(a.output, "w", encoding="utf-8") as out:
        for line in open(a.inputs[0], encoding="utf-8"):
            g = json.loads(line)
            for i, f in enumerate(g["facts"]):
                key = (g["subject"], f[0], f[2])
                if key in doses and key not in written:
                    written.add(key)
                    one = dict(g, facts=[f], triples=[g["triples"][i]])
                    out.write(json.dumps(one, ensure_ascii=False) + "\n")
    return written


def templates(a, doses):
    subgraphs = [json.loads(line) for line in open(a.subgraphs, encoding="utf-8")]
    rendered = [json.loads(line) for line in open(a.inputs[0], encoding="utf-8")]
    if len(rendered) != len(subgraphs):
        sys.exit(f"{a.inputs[0]}: {len(rendered)} records for {len(subgraphs)} subgraphs (render left some out?)")
    written = set()
    with open(a.output, "w", encoding="utf-8") as out:
        for g, r in zip(subgraphs, rendered):
            if r.get("subject") != g["subject"]:
                sys.exit(f"{a.inputs[0]}: a record of {r.get('subject')} where the subgraph of {g['subject']} is")
            f = g["facts"][0]
            key = (g["subject"], f[0], f[2])
            r["fact"] = list(key)
            text = json.dumps(r, ensure_ascii=False) + "\n"
            out.write(text * doses[key])
            written.add(key)
    return written


def kmlm(a, doses):
    records = {}  # fact -> its records in draw order
    for path in a.inputs:
        for line in open(path, encoding="utf-8"):
            r = json.loads(line)
            key = tuple(r.get("triple") or ())
            if key in doses:
                records.setdefault(key, []).append(r)
    short = [(k, len(records[k])) for k in records if len(records[k]) < doses[k]]
    if short:
        sys.exit(f"{len(short)} facts have fewer KMLM records than their dose, e.g. {short[0]}: give more draws")
    with open(a.output, "w", encoding="utf-8") as out:
        for key, recs in records.items():
            for r in recs[: doses[key]]:
                r["fact"] = list(key)
                out.write(json.dumps(r, ensure_ascii=False) + "\n")
    return set(records)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["one-fact", "templates", "kmlm"])
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--split", required=True)
    ap.add_argument("--subgraphs", help="templates: the one-fact subgraphs rendered")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    doses = read_split(a.split)
    written = {"one-fact": one_fact, "templates": templates, "kmlm": kmlm}[a.mode](a, doses)
    for k in sorted(set(doses.values())):
        facts = [f for f in written if doses[f] == k]
        print(f"   dose {k}: {len(facts)} facts" + ("" if a.mode == "one-fact" else f", {k * len(facts)} records"))
    missing = sorted(f for f in doses if f not in written)
    if missing:
        print(f"   {len(missing)} seen facts have no record (not claims of the KG): "
              + ", ".join("-".join(f) for f in missing[:5]) + (" ..." if len(missing) > 5 else ""))


if __name__ == "__main__":
    main()
