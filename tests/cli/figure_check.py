"""Checks figures written by kglm-plot: each is a PNG or SVG of at least the given size, and not
blank (a PNG's pixels are not all one colour: at least 2% differ from the most common one, the
background; an SVG draws at least 20 paths). Run with Debian's /usr/bin/python3 (matplotlib).

Usage: figure_check.py [--min-width PX] [--min-height PX] FIGURE...
"""
import argparse
import collections
import re
import sys
import xml.etree.ElementTree as ET


def check_png(path, min_w, min_h):
    import matplotlib.image as mpimg
    pixels = mpimg.imread(path)
    h, w = pixels.shape[:2]
    assert w >= min_w and h >= min_h, f"{path}: {w}x{h}, smaller than {min_w}x{min_h}"
    counts = collections.Counter(tuple(p) for row in (pixels * 255).astype("uint8") for p in row)
    background, n = counts.most_common(1)[0]
    drawn = 1 - n / (w * h)
    assert drawn >= 0.02, f"{path}: blank ({100 * drawn:.2f}% of the pixels differ from the background)"
    return f"{w}x{h}, {100 * drawn:.1f}% drawn, {len(counts)} colours"


def check_svg(path, min_w, min_h):
    root = ET.parse(path).getroot()
    size = [float(re.match(r"[\d.]+", root.get(k, "0")).group()) for k in ("width", "height")]
    # matplotlib sizes SVGs in points (72 per inch); compare at the PNG's 110 dpi.
    w, h = (v * 110 / 72 for v in size)
    assert w >= min_w and h >= min_h, f"{path}: {w:.0f}x{h:.0f} px at 110 dpi, smaller than {min_w}x{min_h}"
    paths = sum(1 for e in root.iter() if e.tag.endswith("}path") or e.tag == "path")
    assert paths >= 20, f"{path}: only {paths} paths"
    return f"{w:.0f}x{h:.0f} px at 110 dpi, {paths} paths"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--min-width", type=int, default=400)
    ap.add_argument("--min-height", type=int, default=250)
    ap.add_argument("figures", nargs="+")
    a = ap.parse_args()
    for path in a.figures:
        with open(path, "rb") as f:
            magic = f.read(8)
        if magic.startswith(b"\x89PNG"):
            what = check_png(path, a.min_width, a.min_height)
        elif path.endswith(".svg"):
            what = check_svg(path, a.min_width, a.min_height)
        else:
            sys.exit(f"{path}: neither PNG nor SVG")
        print(f"{path}: {what}")


if __name__ == "__main__":
    main()
