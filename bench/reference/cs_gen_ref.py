#!/usr/bin/env python3
"""The benchmark peer of cs-gen kmlm: KMLM's code-switch rule in Python's stdlib on the KG's TSV
tables (wd-extract --tsv): for every triple and every target language, each of h, r, t switches
to its label in that language with probability 0.5 when the label exists. Same JSONL records.

    python3 bench/reference/cs_gen_ref.py TSV_DIR fr,de,... OUT.jsonl
"""
import collections
import json
import random
import sys


def main():
    tsv, langs, out_path = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
    labels = collections.defaultdict(dict)
    with open(f"{tsv}/labels.tsv", encoding="utf-8") as f:
        next(f)
        for line in f:
            entity, lang, text = line.rstrip("\n").split("\t", 2)
            labels[lang][entity] = text
    english = labels["en"]
    rng = random.Random(0)
    with open(f"{tsv}/triples.tsv", encoding="utf-8") as f, open(out_path, "w", encoding="utf-8") as out:
        next(f)
        for line in f:
            triple = line.split("\t", 3)[:3]
            if not all(i in english for i in triple):
                continue
            for lang in langs:
                forms, item_langs = [], []
                for i in triple:
                    label = labels[lang].get(i)
                    if label is not None and rng.random() < 0.5:
                        forms.append(label)
                        item_langs.append(lang)
                    else:
                        forms.append(english[i])
                        item_langs.append("en")
                h, r, t = (x.encode() for x in forms)
                spans, pos = [], 0
                for piece, kind, ident in ((h, "entity", triple[0]), (b"[mask]", "link", ""),
                                           (r, "relation", triple[1]), (b"[mask]", "link", ""),
                                           (t, "entity", triple[2])):
                    spans.append([pos, pos + len(piece), kind, ident])
                    pos += len(piece) + 1
                text = f"{forms[0]} [mask] {forms[1]} [mask] {forms[2]}."
                out.write(json.dumps({"text": text, "lang": lang, "spans": spans, "triple": triple,
                                      "langs": item_langs}, ensure_ascii=False, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
