#!/usr/bin/env python3
"""Where CI's time went: the phases cmake/phase.sh recorded and the slowest tests of each ctest pass
(ctest --output-junit), against the budget in tests/README.md.

Usage: ci_times.py [--slowest N] [--total SECONDS] BUILD_DIR [BUILD_DIR...]
Each BUILD_DIR may hold phase-times.tsv and ctest-junit.xml; missing files are skipped, saying so.
--total: the whole run's wall time (.ci/run's), beside the budget."""
import argparse
import os
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--slowest", type=int, default=15)
    parser.add_argument("--total", type=float, help="the whole run's wall seconds")
    parser.add_argument("builds", nargs="+")
    args = parser.parse_args()
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
