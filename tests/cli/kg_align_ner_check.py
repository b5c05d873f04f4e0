#!/usr/bin/env python3
"""Independent checks of kg-align ner's silver NER data against the KG's TSV export.

  kg_align_ner_check.py TSV_DIR DOCS REDIRECTS PANX STATS [--no-propagate]

Written from man 1 kg-align: titles resolved through the enwiki sitelinks, the redirects and the
first-letter rule; an item typed by the nearest default root class along P31 then P279 (walked
upwards here, one class at a time, where the tool walks down from the roots), ties to the tag
listed first. Checks the PAN-X format, the BIO sequences, that every tagged chunk holds a typed
name of its tag from the documents (a linked anchor, or an article title with propagation), and
that the counts of typed items and typed links equal the tool's statistics.
"""
import collections
import json
import os
import sys

from kg_align_check import fail, resolve_title, rows

ROOTS = [("PER", ["Q5"]),
         ("ORG", ["Q43229", "Q4830453", "Q783794", "Q2385804", "Q3918", "Q7278", "Q476028"]),
         ("LOC", ["Q17334923", "Q2221906", "Q618123", "Q56061", "Q6256", "Q3624078", "Q515", "Q486972",
                  "Q35657", "Q82794", "Q7930989"])]
MAX_DEPTH = 10


def main():
    tsv, docs_path, redirects_path, panx, stats_path = sys.argv[1:6]
    propagate = "--no-propagate" not in sys.argv
    titles = {}  # a title that several items give (the fixture's derived sitelinks): the first item's
    for e, site, t in rows(os.path.join(tsv, "sitelinks.tsv")):
        if site == "enwiki":
            titles.setdefault(t, e)
    redirects = dict(rows(redirects_path)) if os.path.getsize(redirects_path) else {}
    parents, classes = collections.defaultdict(list), collections.defaultdict(list)
    for s, r, o, rank in rows(os.path.join(tsv, "triples.tsv")):
        if rank == "deprecated":
            continue
        if r == "P279":
            parents[s].append(o)
        elif r == "P31":
            classes[s].append(o)

    def distances(cls):  # tag -> steps from cls up to the nearest of its roots
        out, seen, frontier = {}, {cls}, [cls]
        for depth in range(MAX_DEPTH + 1):
            for tag, roots in ROOTS:
                if tag not in out and any(c in roots for c in frontier):
                    out[tag] = depth
            nxt = []
            for c in frontier:
                for p in parents.get(c, []):
                    if p not in seen:
                        seen.add(p)
                        nxt.append(p)
            frontier = nxt
        return out

    memo = {}
    def type_of(item):
        best = {}
        for c in classes.get(item, []):
            if c not in memo:
                memo[c] = distances(c)
            for tag, d in memo[c].items():
                best[tag] = min(best.get(tag, d), d)
        if not best:
            return None, False
        order = [t for t, _ in ROOTS]
        return min(best, key=lambda t: (best[t], order.index(t))), len(best) > 1

    typed, ambiguous = collections.Counter(), 0
    for item in classes:
        tag, amb = type_of(item)
        if tag:
            typed[tag] += 1
            ambiguous += amb

    def resolve(title):
        return resolve_title(title, titles, redirects)

    names, links_typed = collections.defaultdict(set), 0
    with open(docs_path, encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            text = doc["text"].encode()
            for b, e, target in doc["links"]:
                item = resolve(target)
                tag = type_of(item)[0] if item else None
                if tag:
                    links_typed += 1
                    names[tag].add(text[b:e].decode())
            if propagate:
                item = resolve(doc["title"])
                tag = type_of(item)[0] if item else None
                if tag:
                    names[tag].add(doc["title"])

    stats = json.load(open(stats_path))
    for tag, _ in ROOTS:
        if stats.get("kg_items_typed." + tag, 0) != typed[tag]:
            fail(f"{tag}: the tool typed {stats.get('kg_items_typed.' + tag)} items, the check {typed[tag]}")
    if stats["kg_items_ambiguous"] != ambiguous:
        fail(f"ambiguous items: tool {stats['kg_items_ambiguous']}, check {ambiguous}")
    if stats["links_typed"] != links_typed:
        fail(f"typed links: tool {stats['links_typed']}, check {links_typed}")

    # The sentences: format, BIO, and every chunk a typed name of its tag.
    sentences, words, chunks = 0, [], collections.Counter()
    def check_sentence(ws):
        i = 0
        while i < len(ws):
            tag = ws[i][1]
            if tag.startswith("I-"):
                fail(f"an I- tag that starts a chunk: {ws}")
            if tag == "O":
                i += 1
                continue
            j = i + 1
            while j < len(ws) and ws[j][1] == "I-" + tag[2:]:
                j += 1
            chunk_words = [w for w, _ in ws[i:j]]
            chunk = " ".join(chunk_words)
            flat = chunk.replace(" ", "")
            def holds(n):
                k = flat.find(n.replace(" ", ""))
                return k >= 0 and k < len(chunk_words[0]) and k + len(n.replace(" ", "")) > len(flat) - len(chunk_words[-1])
            if not any(holds(n) for n in names[tag[2:]]):
                fail(f"the chunk '{chunk}' ({tag[2:]}) is no typed name of the documents")
            chunks[tag[2:]] += 1
            i = j
    for line in open(panx, encoding="utf-8"):
        line = line.rstrip("\n")
        if not line:
            if not words:
                fail("an empty sentence")
            check_sentence(words)
            sentences += 1
            words = []
            continue
        if line.count("\t") != 1 or not line.startswith("en:"):
            fail(f"not a PAN-X line: {line!r}")
        word, tag = line[3:].split("\t")
        if not word or any(c.isspace() for c in word):
            fail(f"a word with white space: {word!r}")
        if tag != "O" and not (tag[:2] in ("B-", "I-") and tag[2:] in [t for t, _ in ROOTS]):
            fail(f"tag {tag!r}")
        words.append((word, tag))
    if words:
        fail("the last sentence has no blank line after it")
    if sentences != stats["sentences_written"] or sentences == 0:
        fail(f"{sentences} sentences, the statistics say {stats['sentences_written']}")
    for tag, _ in ROOTS:
        if chunks[tag] != stats.get("entities." + tag, 0):
            fail(f"{chunks[tag]} {tag} chunks, the statistics say {stats.get('entities.' + tag, 0)}")
    print(f"{sentences} sentences, chunks {dict(chunks)}, items typed {dict(typed)}, {links_typed} typed links")


main()
