#!/usr/bin/env python3
"""Independent checks of sample-lang's outputs (tests/cli/sample-lang.sh), from the inputs alone.

  plan PLAN.tsv UNIT ALPHA SCALE INPUT...   the plan against q_i ∝ p_i^α recomputed here
                                            (SCALE: input | total=N | keep | truncate)
  split PLAN.tsv OUTDIR SUFFIX INPUT...     each language file: its size equals the target (lines) or
                                            is within one record of it (tokens, bytes); every record
                                            comes from that language, written floor(t/n) or one
                                            more times per input copy
  same PATH PATH...                         the first file holds exactly the lines of the others

INPUT is LANG=PATH (text lines) or a JSONL stream with "lang" and "text" fields.
"""
import collections
import gzip
import json
import math
import re
import sys

# Unicode White_Space (PropList.txt), written out: Python's str.split() also splits at \x1c-\x1f.
WS = re.compile("[\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+")


def lines_of(path):
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rb") as f:
        return [l for l in f.read().split(b"\n") if l not in (b"", b"\r")]


def tokens(text):
    return len([t for t in WS.split(text.decode("utf-8", "surrogateescape")) if t])


def records(inputs, unit):
    """{lang: [(line bytes, units)]} in input order."""
    by_lang = collections.defaultdict(list)
    for spec in inputs:
        lang, _, path = spec.partition("=") if "=" in spec else ("", "", spec)
        for line in lines_of(path):
            if lang:
                l, text = lang, line
            else:
                rec = json.loads(line)
                l, text = rec["lang"], rec["text"].encode()
            size = {"lines": 1, "bytes": len(line) + 1, "tokens": tokens(text)}[unit]
            by_lang[l].append((line, size))
    return by_lang


def read_plan(path):
    rows = [l.rstrip("\n").split("\t") for l in open(path, encoding="utf-8")]
    header = rows[0]
    assert header[0] == "#lang", header
    return header[2], {r[0]: dict(zip(header[1:], [r[1], r[2], float(r[3]), float(r[4]), int(r[5]), float(r[6])])) for r in rows[1:]}


def fail(msg):
    sys.exit("FAIL: " + msg)


def check_plan(plan_path, unit, alpha, scale, inputs):
    col, plan = read_plan(plan_path)
    if col != unit:
        fail("plan unit %s, expected %s" % (col, unit))
    data = records(inputs, unit)
    n = {l: sum(s for _, s in recs) for l, recs in data.items()}
    if set(n) != set(plan):
        fail("languages %s vs %s" % (sorted(plan), sorted(n)))
    total_n = sum(n.values())
    alpha = float(alpha)
    if scale == "truncate":
        alpha = 0.0
    w = {l: (v / total_n) ** alpha if v else 0.0 for l, v in n.items()}
    q = {l: v / sum(w.values()) for l, v in w.items()}
    for l in n:
        row = plan[l]
        if int(row["records"]) != len(data[l]) or int(row[unit]) != n[l]:
            fail("%s: plan says %s records / %s %s, the input has %d / %d" % (l, row["records"], row[unit], unit,
                                                                           len(data[l]), n[l]))
        if abs(row["q"] - q[l]) > 1e-6 or abs(row["p"] - n[l] / total_n) > 1e-6:
            fail("%s: q %.6f p %.6f, expected %.6f %.6f" % (l, row["q"], row["p"], q[l], n[l] / total_n))
    if scale in ("keep", "truncate"):
        smallest = min((v, l) for l, v in n.items() if v)[1]
        for l in n:
            expected = n[smallest] * q[l] / q[smallest]
            if abs(plan[l]["target"] - expected) > 0.5 + 1e-6:
                fail("%s: target %d, expected %.2f" % (l, plan[l]["target"], expected))
        if plan[smallest]["target"] != n[smallest]:
            fail("the smallest language %s is not kept whole" % smallest)
    else:
        total = total_n if scale == "input" else int(scale.split("=")[1])
        if sum(r["target"] for r in plan.values()) != total:
            fail("targets add up to %d, not %d" % (sum(r["target"] for r in plan.values()), total))
        for l in n:
            if abs(plan[l]["target"] - q[l] * total) >= 1:
                fail("%s: target %d, expected %.2f" % (l, plan[l]["target"], q[l] * total))
    print("plan: %d languages, %d %s -> %d" % (len(n), total_n, unit, sum(r["target"] for r in plan.values())))


def check_split(plan_path, outdir, suffix, inputs):
    unit, plan = read_plan(plan_path)
    data = records(inputs, unit)
    for l, recs in sorted(data.items()):
        out = lines_of("%s/%s%s" % (outdir, l, suffix))
        size = {line: s for line, s in recs}
        target, n = plan[l]["target"], sum(s for _, s in recs)
        written = 0
        for line in out:
            if line not in size:
                fail("%s: a written record is not in the input: %r" % (l, line[:80]))
            written += size[line]
        largest = max(size.values())
        if unit == "lines" and written != target:
            fail("%s: %d lines written, target %d" % (l, written, target))
        if abs(written - target) > largest:
            fail("%s: %d %s written, target %d (largest record %d)" % (l, written, unit, target, largest))
        whole = target // n if n else 0
        have, got = collections.Counter(line for line, _ in recs), collections.Counter(out)
        for line, c in have.items():
            if not whole * c <= got[line] <= (whole + 1) * c:
                fail("%s: a record written %d times, its %d copies allow %d..%d" % (l, got[line], c, whole * c,
                                                                                   (whole + 1) * c))
    print("split: %d languages match their targets" % len(data))


def check_same(first, others):
    a = collections.Counter(lines_of(first))
    b = collections.Counter()
    for p in others:
        b.update(lines_of(p))
    if a != b:
        fail("%s does not hold the same lines as %s" % (first, " ".join(others)))
    print("same: %d lines" % sum(a.values()))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "plan":
        check_plan(args[0], args[1], args[2], args[3], args[4:])
    elif cmd == "split":
        check_split(args[0], args[1], args[2], args[3:])
    elif cmd == "same":
        check_same(args[0], args[1:])
    else:
        sys.exit(__doc__)
