#!/usr/bin/env python3
"""The knowledge-gain experiment's facts (pipelines/knowledge-gain.sh): for each probed relation, a
seeded sample of its X-FACTR facts, split by subject into *seen* and *unseen* halves, and the KG
dump without the unseen facts (arm (b)'s knowledge is drawn from it, so no unseen fact can reach
its training text).

  knowledge_gain_split.py --facts XFACTR/facts --relations P19,P36 --per-relation N --seen-share 0.5
                          [--doses 1,4,16,64] --seed S --kg KG.json.gz --out DIR

With --doses, each relation's seen facts are dealt at random to the doses in turn (stratified by
relation: as many facts of a relation at each dose as can be), and split.tsv has a fifth column,
dose: how many times the fact's knowledge records are to be drawn (0 for the unseen facts).

Writes DIR/facts/P<n>.jsonl (the sampled X-FACTR lines, unchanged: what probe reads), DIR/split.tsv
(sub_uri, relation, obj_uri, seen|unseen[, dose]), DIR/relations.txt, DIR/seen-entities.txt (the subjects
and objects of the seen facts: cs-gen kmlm --entities) and DIR/kg-seen.json.gz (the dump, one
entity per line, with the unseen facts' claims removed)."""
import argparse
import gzip
import json
import os
import random
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--facts", required=True)
    ap.add_argument("--relations", required=True)
    ap.add_argument("--per-relation", type=int, required=True)
    ap.add_argument("--seen-share", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--doses", default="", help="comma-separated exposure counts of the seen facts")
    ap.add_argument("--kg", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(os.path.join(a.out, "facts"), exist_ok=True)
    relations = a.relations.split(",")
    unseen = {}  # (subject, relation) -> objects held out
    seen_entities = set()
    rows = []
    sampled = {}
    for rel in relations:
        lines = [l if l.endswith("\n") else l + "\n"
                 for l in open(os.path.join(a.facts, rel + ".jsonl"), encoding="utf-8") if l.strip()]
        order = list(range(len(lines)))
        rng.shuffle(order)
        sampled[rel] = [(lines[i], json.loads(lines[i])) for i in sorted(order[: a.per_relation])]
    # By subject, across relations: every fact of a subject on the same side, so that its seen facts
    # (born in X) cannot hint at its unseen ones (died in X, citizen of X's country).
    subjects = sorted({fact["sub_uri"] for facts in sampled.values() for _, fact in facts})
    rng.shuffle(subjects)
    seen_subjects = set(subjects[: round(a.seen_share * len(subjects))])
    doses = [int(d) for d in a.doses.split(",")] if a.doses else []
    if any(d < 1 for d in doses):
        sys.exit("--doses: exposure counts are at least 1 (the unseen facts are dose 0)")
    for rel in relations:
        dose_of = {}
        if doses:
            seen_here = [i for i, (_, fact) in enumerate(sampled[rel]) if fact["sub_uri"] in seen_subjects]
            rng.shuffle(seen_here)
            start = rng.randrange(len(doses))  # which dose gets a relation's odd facts
            dose_of = {i: doses[(start + n) % len(doses)] for n, i in enumerate(seen_here)}
        with open(os.path.join(a.out, "facts", rel + ".jsonl"), "w", encoding="utf-8") as f:
            for i, (line, fact) in enumerate(sampled[rel]):
                f.write(line)
                side = "seen" if fact["sub_uri"] in seen_subjects else "unseen"
                row = (fact["sub_uri"], rel, fact["obj_uri"], side)
                rows.append(row + (str(dose_of.get(i, 0)),) if doses else row)
                if side == "seen":
                    seen_entities.update((fact["sub_uri"], fact["obj_uri"]))
                else:
                    unseen.setdefault((fact["sub_uri"], rel), set()).add(fact["obj_uri"])
        n_seen = sum(1 for r in rows if r[1] == rel and r[3] == "seen")
        print(f"   {rel}: {len(sampled[rel])} facts, {n_seen} seen, {len(sampled[rel]) - n_seen} unseen")
    print(f"   {len(seen_subjects)} of {len(subjects)} subjects seen")
    with open(os.path.join(a.out, "split.tsv"), "w", encoding="utf-8") as f:
        f.write("sub_uri\trelation\tobj_uri\tside" + ("\tdose" if doses else "") + "\n")
        for r in rows:
            f.write("\t".join(r) + "\n")
    with open(os.path.join(a.out, "relations.txt"), "w") as f:
        f.write("\n".join(relations) + "\n")
    with open(os.path.join(a.out, "seen-entities.txt"), "w") as f:
        f.write("\n".join(sorted(seen_entities)) + "\n")

    # The dump without the unseen facts: the subject's claims of the relation lose those objects.
    removed = 0
    opener = gzip.open if a.kg.endswith(".gz") else open
    with opener(a.kg, "rt", encoding="utf-8") as src, gzip.open(os.path.join(a.out, "kg-seen.json.gz"), "wt",
                                                                   encoding="utf-8") as out:
        for line in src:
            body = line.strip().rstrip(",")
            if not body.startswith("{"):
                out.write(line)
                continue
            entity = json.loads(body)
            claims = entity.get("claims") or {}
            touched = False
            for rel in relations:
                held = unseen.get((entity.get("id"), rel))
                if not held or rel not in claims:
                    continue
                kept = [c for c in claims[rel]
                        if (((c.get("mainsnak") or {}).get("datavalue") or {}).get("value") or {}).get("id") not in held]
                removed += len(claims[rel]) - len(kept)
                claims[rel] = kept
                touched = True
            out.write(json.dumps(entity, ensure_ascii=False) + ("," if line.rstrip().endswith(",") else "") + "\n"
                      if touched else line)
    held_out = sum(len(v) for v in unseen.values())
    print(f"   the KG without the unseen facts: {removed} claims removed ({held_out} unseen facts)")
    if removed < held_out:
        print(f"   note: {held_out - removed} unseen facts are not claims of the KG (X-FACTR's facts come from T-REx)",
              file=sys.stderr)


if __name__ == "__main__":
    main()
