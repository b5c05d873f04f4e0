#!/usr/bin/env python3
"""same_records.py A.jsonl B.jsonl FIELD[,FIELD...] MIN_FRACTION: two outputs of the same inputs (a
run on the GPU against the CPU's) have as many records, and at least MIN_FRACTION of them agree on
every FIELD (float rounding may flip a near tie of a tiny model). Prints the fraction."""
import json
import sys

a, b = ([json.loads(line) for line in open(p)] for p in sys.argv[1:3])
fields, least = sys.argv[3].split(","), float(sys.argv[4])
if len(a) != len(b) or not a:
    sys.exit(f"{len(a)} records against {len(b)}")
same = sum(all(x.get(f) == y.get(f) for f in fields) for x, y in zip(a, b))
print(f"{same} of {len(a)} records agree on {', '.join(fields)}")
if same < least * len(a):
    sys.exit(f"only {same} of {len(a)} records agree on {', '.join(fields)} (at least {least:.0%} expected)")
