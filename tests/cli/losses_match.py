#!/usr/bin/env python3
"""losses_match.py A B STEPS TOLERANCE [--first K] [--held-out]: two metrics logs (JSON lines) have
STEPS training losses each, pairwise within TOLERANCE relative (absolute below 1): a run on another
device against the CPU's. --first K compares only the first K of them, --held-out the held-out
losses (eval_loss) too: for runs whose trajectories part after a few steps (half precision on a
model trained at a high learning rate) while what they learn stays the same."""
import json
import sys


def column(path, key):
    return [r[key] for r in map(json.loads, open(path)) if key in r]


def close(x, y, tolerance):
    return abs(x - y) <= tolerance * max(1, abs(x))


args = sys.argv[1:]
held_out = "--held-out" in args
if held_out:
    args.remove("--held-out")
first = None
if "--first" in args:
    i = args.index("--first")
    first = int(args[i + 1])
    del args[i:i + 2]
a, b = column(args[0], "loss"), column(args[1], "loss")
steps, tolerance = int(args[2]), float(args[3])
if not (len(a) == len(b) == steps and all(close(x, y, tolerance) for x, y in zip(a[:first], b[:first]))):
    sys.exit(f"losses differ beyond {tolerance}:\n{a}\n{b}")
if held_out:
    ea, eb = column(args[0], "eval_loss"), column(args[1], "eval_loss")
    if not (ea and len(ea) == len(eb) and all(close(x, y, tolerance) for x, y in zip(ea, eb))):
        sys.exit(f"held-out losses differ beyond {tolerance}:\n{ea}\n{eb}")
