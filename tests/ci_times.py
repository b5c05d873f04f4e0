#!/usr/bin/env python3
"""Where CI's time went: the phases cmake/phase.sh recorded and the slowest tests of each ctest pass
(ctest --output-junit), against the budget in tests/README.md.

Usage: ci_times.py [--slowest N] [--total SECONDS] BUILD_DIR [BUILD_DIR...]
       ci_times.py --update-budget tests/budget.cmake BUILD_DIR SANITIZE_BUILD_DIR
Each BUILD_DIR may hold phase-times.tsv and ctest-junit.xml; missing files are skipped, saying so.
--total: the whole run's wall time (.ci/run's), beside the budget.
--update-budget: rewrites the rows of tests/budget.cmake from the two passes' measured times (a
GoogleTest binary's row: its slowest case), the longest first. A row only grows (CI's machines differ
in speed by up to 2.5x between runs: a row is the slowest time seen), unless --lower (after a change
that made the test faster); a test that did not run in a pass keeps that column."""
import argparse
import json
import math
import os
import subprocess
import sys
import xml.etree.ElementTree as ET


def phases(build):
    path = os.path.join(build, "phase-times.tsv")
    if not os.path.exists(path):
        return []
    rows = []
    for line in open(path, encoding="utf-8"):
        name, seconds, code = line.rstrip("\n").split("\t")
        rows.append((name, float(seconds), int(code)))
    return rows


def tests(build):
    path = os.path.join(build, "ctest-junit.xml")
    if not os.path.exists(path):
        return []
    return [(case.get("name"), float(case.get("time", 0)), case.get("status", "run"))
            for case in ET.parse(path).getroot().iter("testcase")]


def budget_keys(build):
    """Each ctest name's row in tests/budget.cmake: a GoogleTest case's binary, or the test itself."""
    listing = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, capture_output=True, text=True, check=True)
    keys = {}
    for test in json.loads(listing.stdout)["tests"]:
        command = test.get("command", [])
        gtest = any(arg.startswith("--gtest_filter=") for arg in command[1:])
        keys[test["name"]] = os.path.basename(command[0]) if gtest else test["name"]
    return keys


def measured(build):
    """Row name -> the pass's seconds, rounded up (a binary: its slowest case)."""
    keys = budget_keys(build)
    seconds = {}
    for name, time, status in tests(build):
        key = keys.get(name, name)
        seconds[key] = max(seconds.get(key, 1), math.ceil(time))
    return seconds


def new_seconds(row, seconds, lower):
    """A row's new value: the measured seconds where higher (or with --lower), else the row."""
    if seconds is None:
        return row
    if row == "-" or lower or seconds > int(row):
        return str(seconds)
    return row


def update_budget(path, build, sanitized, lower):
    text = open(path, encoding="utf-8").read()
    head, rest = text.split("set(KGLM_TEST_BUDGET\n", 1)
    body, tail = rest.split("\n)", 1)
    old = {}
    for line in body.splitlines():
        fields = line.split()
        if len(fields) == 3 and not line.lstrip().startswith("#"):
            old[fields[0]] = fields[1:]
    if not tests(build):
        sys.exit(f"ci_times.py: {build} has no ctest-junit.xml")
    main_pass, sanitized_pass = measured(build), measured(sanitized) if tests(sanitized) else {}
    rows = {}
    for name, (first, second) in old.items():
        # Not run in the sanitized pass (e.g. SANITIZE_SKIP=fixtures): its row stays, for `make sanitize`.
        rows[name] = [new_seconds(first, main_pass.get(name), lower), new_seconds(second, sanitized_pass.get(name), lower)]
        if name not in main_pass:
            print(f"ci_times.py: {name} did not run in {build}: its row is kept", file=sys.stderr)
    for name in main_pass.keys() - old.keys():
        rows[name] = [str(main_pass[name]), str(sanitized_pass.get(name, "-"))]
    lines = ["  # test                              make test sanitized"]
    for name, (first, second) in sorted(rows.items(), key=lambda r: (-int(r[1][0]), r[0])):
        lines.append(f"  {name:<36}{first:>4}  {second:>4}")
    with open(path, "w", encoding="utf-8") as f:
        f.write(head + "set(KGLM_TEST_BUDGET\n" + "\n".join(lines) + "\n)" + tail)
    print(f"{path}: {len(rows)} rows from {build} and {sanitized}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--slowest", type=int, default=15)
    parser.add_argument("--total", type=float, help="the whole run's wall seconds")
    parser.add_argument("--update-budget", metavar="BUDGET_CMAKE")
    parser.add_argument("--lower", action="store_true", help="with --update-budget: lower rows to faster times too")
    parser.add_argument("builds", nargs="+")
    args = parser.parse_args()
    if args.update_budget:
        if len(args.builds) != 2:
            parser.error("--update-budget takes BUILD_DIR SANITIZE_BUILD_DIR")
        update_budget(args.update_budget, *args.builds, args.lower)
        return 0
    print("== CI phases (wall seconds)")
    for build in args.builds:
        rows = phases(build)
        if not rows:
            print(f"   {build}: no phase-times.tsv")
        for name, seconds, code in rows:
            print(f"   {build:<12} {name:<40} {seconds:8.1f}{'' if code == 0 else f'  (exit {code})'}")
    if args.total is not None:
        print(f"   {'':<12} {'total (wall)':<40} {args.total:8.1f}  ({args.total / 60:.1f} min; budget 2400 s)")
    for build in args.builds:
        rows = tests(build)
        if not rows:
            print(f"== {build}: no ctest-junit.xml")
            continue
        busy = sum(seconds for _, seconds, _ in rows)
        print(f"== {build}: the {args.slowest} slowest of {len(rows)} tests "
              f"(their times add up to {busy:.0f} s over the cores)")
        for name, seconds, status in sorted(rows, key=lambda r: -r[1])[:args.slowest]:
            print(f"   {seconds:8.1f}  {name}{'' if status == 'run' else f'  ({status})'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
