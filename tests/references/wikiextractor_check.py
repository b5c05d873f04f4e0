"""wiki-extract against the real WikiExtractor (PyPI wikiextractor 3.1.0, the tool the seeds used,
`--json --links`) on every Wikipedia dump of the fixtures and the repository's sample: the same
articles, per-article character similarity and coverage of the text (links reduced to their anchors),
and the share of WikiExtractor's links that wiki-extract keeps (same anchor, same target). The intended differences
are listed in man 1 wiki-extract (INTENDED DIFFERENCES FROM WIKIEXTRACTOR).

Also usable by hand: wikiextractor_check.py --report DUMP prints every article's similarity."""
import glob
import html
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.parse

from rapidfuzz import fuzz
from rapidfuzz.distance import LCSseq

from common import Report, fixture, run, tool

LINK = re.compile(r'<a href="([^"]*)">(.*?)</a>', re.S)
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
# Bounds measured on the fixtures (see the README's table); a regression shows as a drop.
MIN_MEAN_COVERAGE = 0.99
MIN_LINKS_KEPT = 0.99


def wikiextractor(dump, work):
    out = os.path.join(work, "wx")
    subprocess.run([sys.executable, "-m", "wikiextractor.WikiExtractor", dump, "--json", "--links", "-q", "-o", out],
                   check=True, capture_output=True)
    docs = {}
    for path in sorted(glob.glob(os.path.join(out, "*", "wiki_*"))):
        with open(path, encoding="utf-8") as f:
            for line in f:
                d = json.loads(line)
                # 3.1.0's --json escapes its own link markup: undo that, then read the links.
                text, links, plain, pos = html.unescape(d["text"]), [], [], 0
                for m in LINK.finditer(text):
                    plain.append(text[pos:m.start()])
                    anchor = m.group(2)
                    links.append((anchor, urllib.parse.unquote(m.group(1))))
                    plain.append(anchor)
                    pos = m.end()
                plain.append(text[pos:])
                docs[d["id"]] = {"title": d["title"], "text": "".join(plain), "links": links}
    return docs


def kglm(dump, work):
    out = os.path.join(work, "kglm.jsonl")
    run([tool("wiki-extract"), dump, "-o", out, "-q"])
    docs = {}
    with open(out, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            raw = d["text"].encode("utf-8")
            links = [(raw[b:e].decode("utf-8"), t) for b, e, t in d["links"]]
            docs[d["id"]] = {"title": d["title"], "text": d["text"], "links": links,
                             "sections": [title for _, _, title, _ in d["sections"]]}
    return docs


PLACEHOLDER = re.compile(r"\b(?:formula|codice)_\d+")


def without_intended(theirs, section_titles):
    """WikiExtractor's text less what wiki-extract leaves out on purpose (man 1 wiki-extract): the
    section headings it writes as lines (wiki-extract records them in "sections"), its formula_N and
    codice_N placeholders for <math> and <code>, and the quotes it puts around italics."""
    headings = {t.strip() + "." for t in section_titles} | {t.strip() for t in section_titles}
    lines = [line for line in theirs.split("\n") if line.strip() not in headings]
    return PLACEHOLDER.sub("", "\n".join(lines)).replace('"', "")


WIDE_SPACE = re.compile("[\u00a0\u2002\u2003\u2009]")


def normalise_target(t):
    """As MediaWiki normalises titles (and wiki-extract with it): WikiExtractor's targets keep
    &amp; escaped and #fragments, which name a section of the same page."""
    t = html.unescape(html.unescape(t)).split("#")[0].replace("_", " ")  # escaped twice by WikiExtractor
    t = WIDE_SPACE.sub(" ", t)
    t = " ".join(t.split())
    return t[:1].upper() + t[1:]


def not_an_article_link(anchor, target):
    """WikiExtractor's links that wiki-extract writes as text without a span, on purpose (man 1
    wiki-extract): interwiki and other-namespace links, fragment-only links, external URLs; and the
    links WikiExtractor itself leaves without an anchor (coordinates templates' remains)."""
    t = urllib.parse.unquote(target)
    return (not anchor.strip() or t.startswith("#") or "://" in t or
            (":" in t and t.split(":")[0].strip().lower() in INTERWIKI))


INTERWIKI = {"wikt", "wiktionary", "w", "wikipedia", "commons", "s", "wikisource", "q", "wikiquote", "b", "wikibooks",
             "n", "wikinews", "v", "wikiversity", "voy", "wikivoyage", "species", "d", "wikidata", "meta", "m", "mw",
             "user", "talk", "template", "help", "portal", "file", "image", "category", "special", "media", "wp",
             "project", "module", "draft"}


def link_kept(anchor, target, ours):
    """wiki-extract writes the link: the same target, and the anchor with no-break spaces as spaces
    (man 1 wiki-extract) and, as MediaWiki does, the lower-case letters glued after ]] ([[dog]]s)."""
    anchor = WIDE_SPACE.sub(" ", anchor).replace('"', "")  # WikiExtractor's quotes for italics
    for a in ours.get(normalise_target(target), ()):
        a = a.replace('"', "")
        if a == anchor or (a.startswith(anchor) and a[len(anchor):].isalpha() and a[len(anchor):].islower()):
            return True
    return False


def agreement(ours, theirs):
    """(similarity, coverage) of the two texts, whitespace runs read as one space (the tools lay out
    paragraphs differently): similarity is rapidfuzz's ratio (difflib's, 2·LCS / both lengths);
    coverage the share of WikiExtractor's characters that wiki-extract writes in the same order
    (LCS / its length), which list items — kept by wiki-extract, dropped by WikiExtractor — leave whole."""
    a, b = " ".join(ours.split()), " ".join(theirs.split())
    if not b:
        return (1.0 if not a else 0.0), 1.0
    return fuzz.ratio(a, b) / 100, LCSseq.similarity(a, b) / len(b)


def compare(dump, work, report=None, verbose=False):
    theirs, ours = wikiextractor(dump, work), kglm(dump, work)
    common = sorted(set(theirs) & set(ours), key=int)
    sims, covs, kept, total, skipped = [], [], 0, 0, 0
    for i in common:
        s, c = agreement(ours[i]["text"].replace('"', ""), without_intended(theirs[i]["text"], ours[i]["sections"]))
        sims.append(s)
        covs.append((c, theirs[i]["title"]))
        mine = {}
        for a, t in ours[i]["links"]:
            mine.setdefault(normalise_target(t), set()).add(a)
        for a, t in theirs[i]["links"]:
            if not_an_article_link(a, t):
                skipped += 1
                continue
            total += 1
            kept += link_kept(a, t, mine)
        if verbose:
            print(f"coverage {c:.4f} similarity {s:.4f} {theirs[i]['title']}")
    name = os.path.basename(dump)
    only = (sorted(set(theirs) - set(ours)), sorted(set(ours) - set(theirs)))
    mean_similarity = sum(sims) / max(1, len(sims))
    mean_coverage = sum(c for c, _ in covs) / max(1, len(covs))
    worst = min(covs) if covs else (1.0, "")
    share = kept / max(1, total)
    print(f"     {name}: {len(common)} articles in both (WikiExtractor only {len(only[0])}, wiki-extract only "
          f"{len(only[1])}); character similarity mean {mean_similarity:.4f}; coverage of WikiExtractor's text mean "
          f"{mean_coverage:.4f}, lowest {worst[0]:.4f} ({worst[1]}); article links kept {kept}/{total} = {share:.4f} "
          f"({skipped} interwiki, fragment, external or anchorless links of WikiExtractor's not counted)")
    if report:
        report.check(f"{name}: articles WikiExtractor writes that wiki-extract does not", f"{len(theirs)} articles",
                     len(only[0]), 0)
        report.check(f"{name}: 1 - mean coverage of WikiExtractor's text", f"{len(common)} articles",
                     1 - mean_coverage, 1 - MIN_MEAN_COVERAGE)
        report.check(f"{name}: 1 - share of WikiExtractor's links kept", f"{total} links", 1 - share,
                     1 - MIN_LINKS_KEPT)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--report":
        with tempfile.TemporaryDirectory() as work:
            compare(sys.argv[2], work, verbose=True)
        return
    report = Report()
    dumps = [d for d in (fixture("wikipedia", "enwiki-sample-a.xml.bz2"),
                         os.path.join(SOURCE, "data", "enwiki-sample.xml")) if d and os.path.exists(d)]
    for dump in dumps:
        with tempfile.TemporaryDirectory() as work:
            compare(dump, work, report)
    report.finish()


if __name__ == "__main__":
    main()
