#!/usr/bin/env python3
"""The benchmark peer of kg-cycles: python3-networkx on a TSV edge list (subject [relation]
object). Prints one JSON line: seconds to read and build the graph, to count triangles
(nx.triangles) and to list them (each once, by the usual ordered neighbour-set intersection on
networkx's adjacency), and the counts.

    python3 bench/reference/nx_triangles.py EDGES.tsv
"""
import json
import sys
import time

import networkx as nx


def main():
    t0 = time.perf_counter()
    g = nx.Graph()
    with open(sys.argv[1], encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                continue
            fields = line.rstrip("\n").split("\t")
            s, o = fields[0], fields[-1]
            if s != o:
                g.add_edge(s, o)
    t1 = time.perf_counter()
    count = sum(nx.triangles(g).values()) // 3
    t2 = time.perf_counter()
    order = {n: i for i, n in enumerate(sorted(g.nodes(), key=lambda n: (g.degree(n), n)))}
    listed = 0
    for u in g:
        higher = {v for v in g[u] if order[v] > order[u]}
        for v in higher:
            for w in g[v]:
                if w in higher and order[w] > order[v]:
                    listed += 1
    t3 = time.perf_counter()
    print(json.dumps({"build_s": t1 - t0, "count_s": t2 - t1, "list_s": t3 - t2, "triangles": count,
                      "listed": listed, "nodes": g.number_of_nodes(), "edges": g.number_of_edges()}))


if __name__ == "__main__":
    main()
