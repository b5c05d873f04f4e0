"""TensorBoard's own reader (EventAccumulator, over every event file in DIR as TensorBoard loads a
run: restarts purge the steps a new file starts again) against a kglm metrics log: the same scalar
tags, and per tag the same (step, value) sequence, values compared as float32. Every number of every
line with a "step" counts (nested keys joined with '/', booleans as 1 and 0).

Usage: tensorboard_match.py DIR METRICS.jsonl [--values-of TAG,...]
  --values-of: compare only these tags (and do not require the tag sets to be equal)
"""
import argparse
import json

import numpy as np
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator


def flatten(record, prefix=""):
    for k, v in record.items():
        if isinstance(v, dict):
            yield from flatten(v, f"{prefix}{k}/")
        elif isinstance(v, (bool, int, float)):
            yield prefix + k, float(v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("log")
    ap.add_argument("--values-of")
    a = ap.parse_args()
    acc = EventAccumulator(a.dir, size_guidance={"scalars": 0})
    acc.Reload()
    got = {t: [(e.step, np.float32(e.value)) for e in acc.Scalars(t)] for t in acc.Tags()["scalars"]}
    want = {}
    for line in open(a.log, encoding="utf-8"):
        r = json.loads(line)
        if "step" not in r:
            continue
        for k, v in flatten(r):
            if k != "step":
                want.setdefault(k, []).append((r["step"], np.float32(v)))
    tags = a.values_of.split(",") if a.values_of else sorted(want)
    if not a.values_of:
        assert sorted(got) == sorted(want), f"tags: TensorBoard {sorted(got)}, the log {sorted(want)}"
    for t in tags:
        assert t in got and got[t] == want[t], (t, got.get(t, [])[:4], want[t][:4], len(got.get(t, [])), len(want[t]))
    print(f"{a.dir}: {len(tags)} tags, {sum(len(want[t]) for t in tags)} scalars equal to {a.log}")


if __name__ == "__main__":
    main()
