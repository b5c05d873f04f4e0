#!/usr/bin/env python3
"""Rewrites a MediaWiki XML dump (plain or bzip2) as a multistream dump, the way Wikimedia writes
pages-articles-multistream.xml.bz2: one bzip2 stream for the header (<mediawiki>, <siteinfo>), one
per P pages, one for the closing </mediawiki>; and its index (offset:page id:title per line, bzip2).

    bench/make-multistream.py IN.xml[.bz2] OUT.xml.bz2 [--pages-per-stream 100] [--index OUT-index.txt.bz2]
"""
import argparse
import bz2
import re

ap = argparse.ArgumentParser()
ap.add_argument("input")
ap.add_argument("output")
ap.add_argument("--pages-per-stream", type=int, default=100)
ap.add_argument("--index")
args = ap.parse_args()

raw = open(args.input, "rb").read()
xml = bz2.decompress(raw) if raw[:3] == b"BZh" else raw
starts = [m.start() for m in re.finditer(rb"[ \t]*<page>", xml)]
end = xml.rindex(b"</mediawiki>")
end = xml.rfind(b"\n", 0, end) + 1
pieces = [xml[: starts[0]]] if starts else [xml[:end]]
bounds = starts + [end]
titles = []
for i in range(0, len(starts), args.pages_per_stream):
    piece = xml[bounds[i] : bounds[min(i + args.pages_per_stream, len(starts))]]
    pieces.append(piece)
    titles.append(re.findall(rb"<page>\s*<title>(.*?)</title>.*?<id>(\d+)</id>", piece, re.S))
pieces.append(xml[end:])
index, offset = [], 0
with open(args.output, "wb") as out:
    for k, piece in enumerate(pieces):
        if 1 <= k <= len(titles):
            index += [b"%d:%s:%s\n" % (offset, pid, title) for title, pid in titles[k - 1]]
        data = bz2.compress(piece, 9)
        out.write(data)
        offset += len(data)
if args.index:
    open(args.index, "wb").write(bz2.compress(b"".join(index)))
print("%s: %d pages in %d streams" % (args.output, len(starts), len(pieces)))
