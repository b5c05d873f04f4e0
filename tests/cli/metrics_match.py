#!/usr/bin/env python3
"""metrics_match.py A B TOLERANCE KEY...: two metrics logs (JSON lines) of the same run on two devices
have the same steps, and every KEY a line of A has (loss, dev_f1, ...) agrees within TOLERANCE,
relative above 1. Prints the worst difference."""
import json
import sys

a, b = ([json.loads(line) for line in open(p)] for p in sys.argv[1:3])
tolerance, keys = float(sys.argv[3]), sys.argv[4:]
if [r.get("step") for r in a] != [r.get("step") for r in b]:
    sys.exit(f"the steps differ: {[r.get('step') for r in a]} against {[r.get('step') for r in b]}")
worst = max((abs(x[k] - y[k]) / max(1, abs(x[k])) for x, y in zip(a, b) for k in keys if k in x), default=None)
if worst is None:
    sys.exit(f"no line has any of {keys}")
print(f"{len(a)} log lines, {', '.join(keys)} within {worst:.2g}")
if worst > tolerance:
    sys.exit(f"{', '.join(keys)} differ by {worst:.3g} > {tolerance}")
