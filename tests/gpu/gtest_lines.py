#!/usr/bin/env python3
"""gtest_lines.py REPORT.json BINARY_LOG: one result line per GoogleTest case of a --gtest_output=json
report ("ok: NAME", "skip: NAME (why)", "FAIL: NAME: first failure"), as tests/gpu/lib.sh counts
them. A binary that died before writing its report (a crash, an abort inside a kernel, the stage's
time cap) is one FAIL line with the end of its log."""
import json
import os
import sys

report, log = sys.argv[1], sys.argv[2]
binary = os.path.basename(log).rsplit(".", 1)[0]
if not os.path.exists(report) or os.path.getsize(report) == 0:
    tail = open(log, errors="replace").read().strip().splitlines()[-4:] if os.path.exists(log) else []
    print(f"FAIL: {binary}: no report (crashed or timed out): {' | '.join(tail)[:600]}")
    sys.exit(0)
cases = 0
for suite in json.load(open(report)).get("testsuites", []):
    for case in suite.get("testsuite", []):
        name = f"{binary} {suite['name']}.{case['name']}"
        cases += 1
        failures = case.get("failures", [])
        if failures:
            first = failures[0].get("failure", "").strip().replace("\n", " | ")
            print(f"FAIL: {name}: {first[:600]}")
        elif case.get("result") == "SKIPPED":  # Debian's gtest 1.12 writes no reason into the report
            print(f"skip: {name}")
        else:
            print(f"ok: {name} ({case.get('time', '?')})")
if cases == 0:
    print(f"FAIL: {binary}: the filter selected no test")
