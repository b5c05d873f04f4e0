#!/usr/bin/env python3
"""Writes a synthetic power-law graph as a TSV edge list for bench/kg-cycles: a Chung-Lu graph
(endpoints drawn with probability proportional to weights w_i ~ (i + i0)^(-1/(gamma - 1)), so
degrees follow a power law with exponent gamma), with a few relation labels per edge.

    python3 bench/make-powerlaw-graph.py NODES EDGES OUT.tsv [--gamma 2.5] [--seed 1]
"""
import argparse
import os

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("nodes", type=int)
    ap.add_argument("edges", type=int)
    ap.add_argument("out")
    ap.add_argument("--gamma", type=float, default=2.5)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    i0 = 10.0  # flattens the head: the largest hubs stay below a few thousand neighbours
    w = (np.arange(args.nodes) + i0) ** (-1.0 / (args.gamma - 1.0))
    p = w / w.sum()
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        f.write("# subject\trelation\tobject\n")
        done, block = 0, 2_000_000
        while done < args.edges:
            n = min(block, args.edges - done)
            u = rng.choice(args.nodes, size=n, p=p)
            v = rng.choice(args.nodes, size=n, p=p)
            r = rng.integers(0, 20, size=n)
            f.write("".join(f"Q{a}\tP{c}\tQ{b}\n" for a, b, c in zip(u.tolist(), v.tolist(), r.tolist())))
            done += n
    os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
