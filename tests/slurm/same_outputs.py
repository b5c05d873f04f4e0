#!/usr/bin/env python3
"""same_outputs.py A B: two runs of a pipeline wrote the same outputs. Every file under A (but logs/,
.stages/ and .pipeline/) is in B and the reverse; the files are byte-equal once A's path is written as
B's (give the two runs directories whose paths have the same length: a model stores its
tokenizer's path), except for what differs between any two runs: timings and peak memory in JSON statistics and metrics logs, and
the creation time of HDF5 stores and the object times of HDF5 files (compared through h5dump, which
prints no object times, without the stores' "created" attribute).
same_outputs.py --store A.h5 B.h5: two HDF5 stores hold the same data, whatever their provenance
(tool, command line, inputs, creation time): a merged store against one written in one run."""
import json
import os
import re
import subprocess
import sys

SKIP = {"logs", ".stages", ".pipeline"}
TIMING = re.compile(r"(^|[._])(elapsed|milliseconds|seconds|peak_rss)|_per_s$|_ms$|_s$|^created$")


def files(root):
    out = set()
    for base, dirs, names in os.walk(root):
        if base == root:
            dirs[:] = [d for d in dirs if d not in SKIP]
        out.update(os.path.relpath(os.path.join(base, n), root) for n in names)
    return out


def untimed(value):
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if not TIMING.search(k)}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


PROVENANCE = ("created", "command_line", "input_names", "input_sizes", "tool")


def h5_text(path, a, b, drop=("created",)):
    text = subprocess.run(["h5dump", path], check=True, capture_output=True, text=True).stdout
    for name in drop:  # a root attribute's block ends with its indentation's closing brace
        text = re.sub(r'\n(\s*)ATTRIBUTE "%s" \{.*?\n\1\}' % name, "", text, flags=re.S)
    return text.replace(path, "FILE").replace(a, b)


def same(rel, a, b):
    pa, pb = os.path.join(a, rel), os.path.join(b, rel)
    da = open(pa, "rb").read().replace(a.encode(), b.encode())
    db = open(pb, "rb").read()
    if da == db:
        return True
    if rel.endswith(".json"):
        return untimed(json.loads(da)) == untimed(json.loads(db))
    if rel.endswith(".jsonl"):
        la, lb = da.splitlines(), db.splitlines()
        return len(la) == len(lb) and all(untimed(json.loads(x)) == untimed(json.loads(y)) for x, y in zip(la, lb))
    if rel.endswith((".h5", ".hdf5")):
        return h5_text(pa, a, b) == h5_text(pb, b, b)
    return False


def main():
    if sys.argv[1] == "--store":
        a, b = sys.argv[2:4]
        if h5_text(a, a, b, PROVENANCE) != h5_text(b, b, b, PROVENANCE):
            sys.exit("%s and %s hold different data" % (a, b))
        print("the stores hold the same data")
        return
    a, b = (os.path.realpath(p) for p in sys.argv[1:3])
    fa, fb = files(a), files(b)
    problems = ["only in %s: %s" % (a, f) for f in sorted(fa - fb)] + ["only in %s: %s" % (b, f) for f in sorted(fb - fa)]
    problems += ["differs: %s" % f for f in sorted(fa & fb) if not same(f, a, b)]
    for p in problems:
        print(p, file=sys.stderr)
    print("%d files compared, %d problems" % (len(fa | fb), len(problems)))
    sys.exit(1 if problems else 0)


main()
