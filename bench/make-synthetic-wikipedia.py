#!/usr/bin/env python3
"""Writes a synthetic English Wikipedia matched to a synthetic Wikidata dump (bench/make-synthetic-
wikidata.py), as Wikimedia publishes it: a multistream dump (a bzip2 stream for the header, one per
100 pages, one for the footer) with its index (offset:page id:title, bzip2), and the counts a correct
extraction must find, counted here independently of kglm.

- an article for every item with an enwiki sitelink, titled by it: an infobox (a template: no
  text), then a lead that writes each item-valued statement whose object has an article as a clause
  "its RELATION is OBJECT", one to three clauses a sentence, the object by its English label (what
  kg-align matches), as a link [[Title|label]] or through the object's redirect, or a quarter of
  the time as plain text; then a "History" section;
- a redirect "TITLE (redirect)" for every seventh article.

    python3 bench/make-synthetic-wikipedia.py DUMP.json OUT.xml.bz2 [--index OUT-index.txt.bz2]
        [--counts OUT.counts.json]

The counts JSON holds pages, articles, redirects and links (as wiki-extract --stats counts them),
linked_sentences (sentences with a link to an item's article or its redirect: EntityCS's English
sentences), mentions (the statements written in the leads, linked or not: what kg-align can align)
and cooc, kg-align's --cooc table as it must be ("P1<TAB>P2<TAB>count" lines: in each sentence,
every statement of the subject whose object the sentence names aligns; each unordered pair of its
distinct relations counts once, and (r, r) once when r aligned twice).
"""
import argparse
import bz2
import json
import os
import sys
from xml.sax.saxutils import escape

PAGES_PER_STREAM = 100
HEADER = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" version="0.11" xml:lang="en">
  <siteinfo>
    <sitename>Wikipedia</sitename>
    <dbname>enwiki</dbname>
    <base>https://en.wikipedia.org/wiki/Main_Page</base>
    <generator>bench/make-synthetic-wikipedia.py</generator>
    <case>first-letter</case>
    <namespaces>
      <namespace key="0" case="first-letter" />
      <namespace key="10" case="first-letter">Template</namespace>
      <namespace key="14" case="first-letter">Category</namespace>
    </namespaces>
  </siteinfo>
"""


def entities(path):
    """(entity JSON object) per line of a dump in the one-entity-per-line layout."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip().rstrip(",")
            if line.startswith("{"):
                yield json.loads(line)


def item_objects(entity):
    """(property, object Q number) of the item's non-deprecated item-valued statements."""
    for prop, statements in entity.get("claims", {}).items():
        for st in statements:
            snak = st.get("mainsnak", {})
            value = snak.get("datavalue", {}).get("value")
            if st.get("rank") != "deprecated" and snak.get("snaktype") == "value" and isinstance(value, dict) \
                    and value.get("entity-type") == "item":
                yield prop, value["numeric-id"]


def count_pairs(relations, table):
    """kg-align's co-occurrence rule: each unordered pair of distinct relations of a sentence once, and
    (r, r) once when r aligned more than once."""
    relations = [int(r[1:]) for r in relations]  # "P31" -> 31: the table's order is numeric
    distinct = sorted(set(relations))
    for r in distinct:
        if relations.count(r) > 1:
            table[(r, r)] = table.get((r, r), 0) + 1
    for a in range(len(distinct)):
        for b in range(a + 1, len(distinct)):
            key = (distinct[a], distinct[b])
            table[key] = table.get(key, 0) + 1


def page(page_id, title, body, redirect=None):
    r = '    <redirect title="%s" />\n' % escape(redirect, {'"': "&quot;"}) if redirect else ""
    return ("  <page>\n    <title>%s</title>\n    <ns>0</ns>\n    <id>%d</id>\n%s    <revision>\n"
            "      <id>%d</id>\n      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
            '      <text bytes="%d" xml:space="preserve">%s</text>\n    </revision>\n  </page>\n'
            % (escape(title), page_id, r, page_id, len(body.encode()), escape(body)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dump")
    ap.add_argument("out")
    ap.add_argument("--index")
    ap.add_argument("--counts")
    args = ap.parse_args()

    # Pass 1: the articles' titles and the properties' labels.
    titles, labels, prop_labels = {}, {}, {}
    for e in entities(args.dump):
        if e["type"] == "property":
            prop_labels[e["id"]] = e["labels"].get("en", {}).get("value", e["id"])
        elif "enwiki" in e.get("sitelinks", {}):
            q = int(e["id"][1:])
            titles[q] = e["sitelinks"]["enwiki"]["title"]
            labels[q] = e["labels"]["en"]["value"]

    counts = dict(pages=0, articles=0, redirects=0, links=0, linked_sentences=0, mentions=0)
    cooc = {}  # (relation, relation) -> sentences
    out = open(args.out + ".tmp", "wb")
    index, offset, pending, pending_index = [], 0, [], []

    def flush(text):
        nonlocal offset
        data = bz2.compress(text.encode("utf-8"), 9)
        out.write(data)
        index.extend(b"%d:%s\n" % (offset, line) for line in pending_index)
        pending_index.clear()
        offset += len(data)

    def add(page_id, title, xml):
        pending.append(xml)
        pending_index.append(b"%d:%s" % (page_id, title.encode("utf-8")))
        counts["pages"] += 1
        if len(pending) == PAGES_PER_STREAM:
            flush("".join(pending))
            pending.clear()

    flush(HEADER)
    next_id = 1
    # Pass 2: the articles, in the dump's order, each followed by its redirect.
    for e in entities(args.dump):
        q = int(e["id"][1:]) if e["type"] == "item" else None
        if q not in titles:
            continue
        title = titles[q]
        # The statements written, grouped into sentences of one to three (kg-align's co-occurrence
        # table counts the relations aligned in one sentence).
        written, all_facts = [], list(item_objects(e))
        for i, (prop, obj) in enumerate(all_facts):
            if obj not in titles:
                continue
            target, name, how = titles[obj], labels[obj], (q + i) % 4
            if how == 2:
                mention = name
            else:
                mention = "[[%s%s|%s]]" % (target, " (redirect)" if how == 1 and obj % 7 == 0 else "", name)
                counts["links"] += 1
            written.append((prop, obj, "its %s is %s" % (prop_labels.get(prop, prop), mention), how != 2))
            counts["mentions"] += 1
        sentences, i = [], 0
        while i < len(written):
            group = written[i:i + 1 + (q + i) % 3]
            i += len(group)
            clauses = [w[2] for w in group]
            text = clauses[0] if len(clauses) == 1 else ", ".join(clauses[:-1]) + " and " + clauses[-1]
            sentences.append(text[0].upper() + text[1:] + ".")
            counts["linked_sentences"] += any(w[3] for w in group)
            # Every statement of the subject whose object the sentence names aligns there.
            named = {w[1] for w in group}
            aligned = [prop for prop, obj in all_facts if obj in named]
            count_pairs(aligned, cooc)
        facts = sentences
        body = ("{{Infobox entity\n| name = %s\n| id = Q%d\n}}\n'''%s''' is a synthetic entity. %s\n\n"
                "== History ==\nIt was made by a program.\n" % (title, q, title, " ".join(facts)))
        add(next_id, title, page(next_id, title, body))
        counts["articles"] += 1
        next_id += 1
        if q % 7 == 0:
            alias = title + " (redirect)"
            add(next_id, alias, page(next_id, alias, "#REDIRECT [[%s]]" % title, redirect=title))
            counts["redirects"] += 1
            next_id += 1
    if pending:
        flush("".join(pending))
    flush("</mediawiki>\n")
    out.close()
    os.replace(args.out + ".tmp", args.out)
    if args.index:
        with open(args.index, "wb") as f:
            f.write(bz2.compress(b"".join(index)))
    if args.counts:
        # As kg-align writes --cooc: "P1\tP2\tcount", the smaller property number first.
        counts["cooc"] = ["P%d\tP%d\t%d" % (a, b, n) for (a, b), n in sorted(cooc.items())]
        with open(args.counts, "w") as f:
            json.dump(counts, f, indent=1, sort_keys=True)
    print("synthetic Wikipedia: %d articles, %d redirects, %d links" % (
        counts["articles"], counts["redirects"], counts["links"]), file=sys.stderr)


if __name__ == "__main__":
    main()
