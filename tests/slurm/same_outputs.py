#!/usr/bin/env python3
"""same_outputs.py A B: two runs of a pipeline wrote the same outputs. Every file under A (but logs/,
.stages/ and .pipeline/) is in B and the reverse; the files are byte-equal once A's path is written as
B's (give the two runs directories whose paths have the same length: a model stores its
tokenizer's path), except for what differs between any two runs: timings and peak memory in JSON statistics and metrics logs, and
the creation time of HDF5 stores and the object times of HDF5 files (compared through h5dump, which
prints no object times, without the stores' "created" attribute). TensorBoard event files are named
by their time, host and process: a directory's files are compared as the (step, tag, value) scalars
they hold, timings left out; figures (PNG, SVG) draw timings too (throughput): present in both.
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


def event_scalars(directory):
    """The (step, tag, value) scalars of a directory's TensorBoard event files (TFRecords of Event
    protos: step = 2, summary = 5 { value = 1 { tag = 1, simple_value = 2 } }), timings left out."""
    def fields(buf):
        at, out = 0, []
        while at < len(buf):
            key, at = varint(buf, at)
            kind = key & 7
            if kind == 0:
                v, at = varint(buf, at)
            elif kind == 1:
                v, at = buf[at:at + 8], at + 8
            elif kind == 5:
                v, at = buf[at:at + 4], at + 4
            else:
                n, at = varint(buf, at)
                v, at = buf[at:at + n], at + n
            out.append((key >> 3, v))
        return out

    def varint(buf, at):
        v = shift = 0
        while True:
            byte = buf[at]
            at += 1
            v |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return v, at

    scalars = []
    for name in sorted(os.listdir(directory)):
        if not name.startswith("events.out.tfevents."):
            continue
        data, at = open(os.path.join(directory, name), "rb").read(), 0
        while at < len(data):
            n = int.from_bytes(data[at:at + 8], "little")
            event = dict(fields(data[at + 12:at + 12 + n]))
            at += n + 16
            for _, value in fields(event.get(5, b"")):
                v = dict(fields(value))
                tag = v[1].decode()
                if not TIMING.search(tag):
                    scalars.append((event.get(2, 0), tag, v.get(2)))
    return scalars


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
    # Event files: one entry per directory that holds them, compared by their scalars.
    events = lambda fs: {os.path.dirname(f) for f in fs if os.path.basename(f).startswith("events.out.tfevents.")}  # noqa: E731
    ea, eb = events(fa), events(fb)
    fa = {f for f in fa if not os.path.basename(f).startswith("events.out.tfevents.")} | {d + "/<events>" for d in ea}
    fb = {f for f in fb if not os.path.basename(f).startswith("events.out.tfevents.")} | {d + "/<events>" for d in eb}
    problems = ["only in %s: %s" % (a, f) for f in sorted(fa - fb)] + ["only in %s: %s" % (b, f) for f in sorted(fb - fa)]
    def same_entry(f):
        if f.endswith("/<events>"):
            d = os.path.dirname(f)
            return event_scalars(os.path.join(a, d)) == event_scalars(os.path.join(b, d))
        return f.endswith((".png", ".svg")) or same(f, a, b)

    problems += ["differs: %s" % f for f in sorted(fa & fb) if not same_entry(f)]
    for p in problems:
        print(p, file=sys.stderr)
    print("%d files compared, %d problems" % (len(fa | fb), len(problems)))
    sys.exit(1 if problems else 0)


main()
