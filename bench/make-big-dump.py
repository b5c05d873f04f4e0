#!/usr/bin/env python3
"""Builds a >= 1 GB uncompressed Wikidata-format dump for benchmarks by replicating the X-FACTR dev
KG and Q42 with fresh item ids (properties are kept once, so relations stay shared).

Usage: make-big-dump.py FIXTURES_DIR OUT.json [--gb 1.0]
"""
import argparse
import gzip
import json
import os
import re

ITEM_ID = re.compile(r'"Q(\d+)"')
NUMERIC = re.compile(r'("entity-type":"item","numeric-id":)(\d+)')


def shift_ids(line, offset):
    """Moves every item id of an entity line by offset (ids in strings and numeric-id fields)."""
    line = ITEM_ID.sub(lambda m: '"Q%d"' % (int(m.group(1)) + offset), line)
    return NUMERIC.sub(lambda m: m.group(1) + str(int(m.group(2)) + offset), line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fixtures")
    ap.add_argument("out")
    ap.add_argument("--gb", type=float, default=1.0)
    args = ap.parse_args()
    target = int(args.gb * 1e9)
    with gzip.open(os.path.join(args.fixtures, "xfactr-kg-dev.json.gz"), "rt", encoding="utf-8") as f:
        dev = [l.rstrip("\n").rstrip(",") for l in f if l.strip() not in ("[", "]", "")]
    props = [l for l in dev if l.startswith('{"type":"property"')]
    items = [l for l in dev if not l.startswith('{"type":"property"')]
    with open(os.path.join(args.fixtures, "wikidata", "Q42.json"), encoding="utf-8") as f:
        q42 = json.dumps(json.load(f), ensure_ascii=False, separators=(",", ":"))
    tmp = args.out + ".tmp"
    written = 0
    with open(tmp, "w", encoding="utf-8") as out:
        out.write("[\n")
        for l in props:
            out.write(l + ",\n")
        replica = 0
        while written < target:
            offset = replica * 200_000_000
            for l in items:
                s = shift_ids(l, offset) if offset else l
                out.write(s + ",\n")
                written += len(s.encode("utf-8")) + 2
            for k in range(40):  # Q42 copies: full modern entities with qualifiers and references
                s = q42.replace('"id":"Q42"', '"id":"Q%d"' % (4_000_000_000 + replica * 1000 + k), 1)
                out.write(s + ",\n")
                written += len(s.encode("utf-8")) + 2
            replica += 1
        out.write(q42.replace('"id":"Q42"', '"id":"Q3999999999"', 1) + "\n]\n")
    os.replace(tmp, args.out)
    print(f"{args.out}: {os.path.getsize(args.out) / 1e9:.2f} GB, {replica} replicas")


if __name__ == "__main__":
    main()
