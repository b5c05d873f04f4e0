#!/usr/bin/env python3
"""losses_match.py A B STEPS TOLERANCE: two metrics logs (JSON lines) have STEPS training losses each,
pairwise within TOLERANCE relative (absolute below 1): a run on another device against the CPU's."""
import json
import sys


def losses(path):
    return [r["loss"] for r in map(json.loads, open(path)) if "loss" in r]


a, b = losses(sys.argv[1]), losses(sys.argv[2])
steps, tolerance = int(sys.argv[3]), float(sys.argv[4])
if not (len(a) == len(b) == steps and all(abs(x - y) <= tolerance * max(1, abs(x)) for x, y in zip(a, b))):
    sys.exit(f"losses differ beyond {tolerance}:\n{a}\n{b}")
