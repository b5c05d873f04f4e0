#!/usr/bin/env python3
"""bench/kg-cycles: kg-cycles listing triangles against python3-networkx on the same graphs, in
one run: the dev KG's item graph and a synthetic power-law graph (bench/make-powerlaw-graph.py,
default 1M nodes, 10M edges). Prints edges/s, triangles/s, peak memory and the speed-ups; also
kg-cycles' full run (triangles + 4-cycles with a diagonal) on the dev KG.

Usage: bench/kg-cycles.py [--bin build/bin] [--fixtures ../shared/fixtures] [--work out/bench]
                          [--nodes 1000000] [--edges 10000000]
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import arguments, dev_kg, here, run, runs_by_threads, warm  # noqa: E402


def peer(edges):
    """networkx in its own process: (wall, cpu, rss, its JSON report)."""
    report = os.path.join(os.path.dirname(edges), "nx-report.json")
    with open(report, "w") as out:
        p = subprocess.Popen(["/usr/bin/python3", os.path.join(here, "reference", "nx_triangles.py"), edges], stdout=out)
        _, status, usage = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit("networkx peer failed")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, json.load(open(report))


def compare(name, kc, edges_tsv, work):
    warm(edges_tsv)
    stats = os.path.join(work, "kg-cycles.stats.json")
    rows = runs_by_threads("kg-cycles", lambda n: [
        kc, "--edges", edges_tsv, "--kinds", "3", "--hub-edges", "0", "-o", os.path.join(work, "triangles.h5"), "--threads", str(n),
        "--stats", stats, "--quiet"])
    s = json.load(open(stats))
    nx_cpu, nx_rss, nx = peer(edges_tsv)
    assert nx["triangles"] == s["triangles"] == nx["listed"], (nx, s["triangles"])
    nx_total = nx["build_s"] + nx["count_s"] + nx["list_s"]
    print("\n%s: %d nodes, %d edges, %d triangles (networkx agrees)" % (name, s["graph_nodes"], s["graph_edges"],
                                                                       s["triangles"]))
    print("kg-cycles: read + build + list + write the table; networkx: read + build, count (nx.triangles), list")
    print("%-26s %8s %8s %12s %14s %8s %11s" % ("run", "wall s", "cpu s", "edges/s", "triangles/s", "peak MB",
                                              "vs networkx"))
    for label, wall, cpu, rss in rows:
        print("%-26s %8.2f %8.2f %12.0f %14.0f %8.0f %10.1fx" % (label, wall, cpu, s["graph_edges"] / wall,
                                                                s["triangles"] / wall, rss, nx_total / wall))
    print("%-26s %8.2f %8.2f %12.0f %14.0f %8.0f %10.1fx" % ("networkx (all)", nx_total, nx_cpu,
                                                            s["graph_edges"] / nx_total, s["triangles"] / nx_total,
                                                            nx_rss, 1.0))
    print("   networkx parts: read+build %.2f s, count %.2f s, list %.2f s; kg-cycles vs networkx count+list "
          "alone: %.1fx" % (nx["build_s"], nx["count_s"], nx["list_s"],
                            (nx["count_s"] + nx["list_s"]) / min(r[1] for r in rows)))


def main():
    args = arguments(lambda ap: (ap.add_argument("--nodes", type=int, default=1_000_000),
                                 ap.add_argument("--edges", type=int, default=10_000_000)))
    kg, tsv = dev_kg(args, "cycles-kg", "en")
    kc = os.path.join(args.bin, "kg-cycles")
    dev_edges = os.path.join(args.work, "dev-edges.tsv")
    with open(os.path.join(tsv, "triples.tsv")) as f, open(dev_edges, "w") as out:
        for line in f:
            out.write("\t".join(line.split("\t")[:3]) + "\n")
    compare("dev KG item graph", kc, dev_edges, args.work)
    stats = os.path.join(args.work, "kg-cycles-full.stats.json")
    wall, cpu, rss = run([kc, "--kg", kg, "--hub-edges", "0", "-o", os.path.join(args.work, "cycles.h5"),
                          "--threads", "2", "--stats", stats, "--quiet"])
    s = json.load(open(stats))
    print("kg-cycles --kg (every triangle + 4-cycle, --threads 2): %.2f s, %d cycles = %.0f cycles/s, peak %.0f MB" %
          (wall, s["written"], s["written"] / wall, rss))
    graph = os.path.join(args.work, "powerlaw-%d-%d.tsv" % (args.nodes, args.edges))
    if not os.path.exists(graph):
        subprocess.run(["/usr/bin/python3", os.path.join(here, "make-powerlaw-graph.py"), str(args.nodes),
                        str(args.edges), graph], check=True)
    compare("power-law graph", kc, graph, args.work)


if __name__ == "__main__":
    main()
