#!/usr/bin/env python3
"""Writes a large MediaWiki XML dump for benchmarks: the pages of the enwiki fixture repeated with
fresh ids and titles until the output reaches the requested size.

    python3 bench/make-big-wiki.py ../shared/fixtures/wikipedia/enwiki-sample-a.xml.bz2 200 OUT.xml
"""
import bz2
import re
import sys


def main():
    src, megabytes, out_path = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    opener = bz2.open if src.endswith(".bz2") else open
    with opener(src, "rt", encoding="utf-8") as f:
        xml = f.read()
    head = xml[: xml.index("<page>")]
    pages = re.findall(r"  <page>.*?</page>\n", xml, re.S)
    target = megabytes * 1e6
    written, copy, next_id = 0, 0, 1
    with open(out_path + ".tmp", "w", encoding="utf-8") as out:
        out.write(head)
        while written < target:
            copy += 1
            for p in pages:
                p = re.sub(r"<id>\d+</id>", f"<id>{next_id}</id>", p, count=1)
                if copy > 1:
                    p = re.sub(r"<title>(.*?)</title>", rf"<title>\1 ({copy})</title>", p, count=1)
                next_id += 1
                out.write(p)
                written += len(p)
        out.write("</mediawiki>\n")
    import os
    os.replace(out_path + ".tmp", out_path)
    print(f"{out_path}: {written / 1e6:.0f} MB, {next_id - 1} pages ({copy} copies)", file=sys.stderr)


if __name__ == "__main__":
    main()
