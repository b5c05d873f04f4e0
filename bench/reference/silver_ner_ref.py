#!/usr/bin/env python3
"""The kg-align ner benchmark's peer: WikiANN-style silver NER in Python's stdlib, by the rules of
man 1 kg-align — links resolved through the enwiki sitelinks, the redirects and the first-letter
rule; items typed by the nearest default root class along P31/P279 (ties to the tag listed first,
deprecated statements left out); later mentions of typed names (and of a typed article's title)
propagated unless they overlap a link or start lower-case; BIO tags in PAN-X. Sentences are split
at line breaks and after . ! ? before a capital or digit (never inside a link), words by a regular
expression (letters/digits with inner apostrophes, or one other character): simpler than ICU's
rules, so the two outputs differ in places; the typed links must agree.

  silver_ner_ref.py --dump xfactr-kg-dev.json.gz --redirects R.tsv -o OUT.panx DOCS.jsonl
Prints a JSON line of counts (or writes it to --counts FILE).
"""
import argparse
import collections
import gzip
import json
import re

ROOTS = [("PER", [5]), ("ORG", [43229, 4830453, 783794, 2385804, 3918, 7278, 476028]),
         ("LOC", [17334923, 2221906, 618123, 56061, 6256, 3624078, 515, 486972, 35657, 82794, 7930989])]
MAX_DEPTH = 10
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"“(\[]?[A-Z0-9])|\n")
WORD = re.compile(r"\w+(?:['’]\w+)*|[^\w\s]")


def load_kg(path):
    titles, classes, subclasses = {}, collections.defaultdict(list), collections.defaultdict(list)
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            line = line.strip().rstrip(",")
            if not line.startswith("{"):
                continue
            e = json.loads(line)
            if e.get("type") != "item":
                continue
            q = int(e["id"][1:])
            site = e.get("sitelinks", {}).get("enwiki")
            if site:
                titles.setdefault(site["title"], q)
            for prop, out in (("P31", classes[q]), ("P279", None)):
                for st in e.get("claims", {}).get(prop, []):
                    v = st.get("mainsnak", {}).get("datavalue", {}).get("value")
                    if st.get("rank") == "deprecated" or not isinstance(v, dict) or "numeric-id" not in v:
                        continue
                    if out is not None:
                        out.append(v["numeric-id"])
                    else:
                        subclasses[v["numeric-id"]].append(q)
    # Each tag's distance to every class, walking down from its roots.
    distance = []
    for _, roots in ROOTS:
        d, frontier = {r: 0 for r in roots}, list(roots)
        for depth in range(1, MAX_DEPTH + 1):
            nxt = []
            for c in frontier:
                for s in subclasses.get(c, ()):
                    if s not in d:
                        d[s] = depth
                        nxt.append(s)
            frontier = nxt
        distance.append(d)
    types = {}
    for q, cs in classes.items():
        best = [min((d.get(c, 999) for c in cs), default=999) for d in distance]
        if min(best) < 999:
            types[q] = best.index(min(best))
    return titles, types


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump", required=True)
    ap.add_argument("--redirects", required=True)
    ap.add_argument("-o", required=True)
    ap.add_argument("--counts", help="write the counts (JSON) here instead of stdout")
    ap.add_argument("docs")
    a = ap.parse_args()
    titles, types = load_kg(a.dump)
    redirects = {}
    for line in open(a.redirects, encoding="utf-8"):
        if not line.startswith("#") and "\t" in line:
            k, v = line.rstrip("\n").split("\t", 1)
            redirects[k] = v

    def resolve(title):
        for t in (title, title[:1].upper() + title[1:]):
            if t in titles:
                return titles[t]
            if t in redirects and redirects[t] in titles:
                return titles[redirects[t]]
        return None

    counts = collections.Counter()
    with open(a.docs, encoding="utf-8") as docs, open(a.o, "w", encoding="utf-8") as out:
        for line in docs:
            doc = json.loads(line)
            raw = doc["text"].encode()
            text = doc["text"]
            # Byte offsets to character offsets.
            chars = None
            if not text.isascii():
                chars, b = {}, 0
                for i, c in enumerate(text):
                    chars[b] = i
                    b += len(c.encode())
                chars[b] = len(text)
            at = (lambda b: chars[b]) if chars else (lambda b: b)
            links, names = [], {}
            for b, e, target in doc["links"]:
                counts["links"] += 1
                q = resolve(target)
                tag = types.get(q) if q is not None else None
                links.append((at(b), at(e), tag))
                if tag is not None:
                    counts["links_typed"] += 1
                    name = raw[b:e].decode()
                    names[name] = tag if names.get(name, tag) == tag else -1
            q = resolve(doc["title"])
            if q is not None and types.get(q) is not None:
                t = types[q]
                names[doc["title"]] = t if names.get(doc["title"], t) == t else -1
            patterns = sorted((n for n, t in names.items() if t >= 0 and n and not n[0].islower()), key=len,
                              reverse=True)
            # Sentence boundaries outside links.
            cuts, start = [], 0
            for m in SENTENCE_END.finditer(text):
                if not any(b < m.start() < e for b, e, _ in links):
                    cuts.append((start, m.start()))
                    start = m.end()
            cuts.append((start, len(text)))
            for sb, se in cuts:
                sentence = text[sb:se].strip()
                if not sentence:
                    continue
                sb += text[sb:se].index(sentence)
                se = sb + len(sentence)
                mentions = [(b, e, t) for b, e, t in links if sb <= b and e <= se and t is not None]
                inside = [(b, e) for b, e, _ in links if sb <= b and e <= se]
                for n in patterns:
                    for m in re.finditer(re.escape(n), sentence):
                        b, e = sb + m.start(), sb + m.end()
                        if (b > 0 and text[b - 1].isalnum()) or (e < len(text) and text[e].isalnum()):
                            continue
                        if any(x < e and b < y for x, y in inside) or any(x < e and b < y for x, y, _ in mentions):
                            continue
                        mentions.append((b, e, names[n]))
                if not mentions:
                    continue
                mentions.sort()
                lines, last = [], None
                for w in WORD.finditer(sentence):
                    b, e = sb + w.start(), sb + w.end()
                    hit = next((k for k, (x, y, _) in enumerate(mentions) if x < e and b < y), None)
                    if hit is None:
                        tag = "O"
                    else:
                        tag = ("I-" if last == hit else "B-") + ROOTS[mentions[hit][2]][0]
                    last = hit
                    lines.append(f"en:{w.group()}\t{tag}\n")
                if len(lines) > 128:
                    continue
                out.write("".join(lines) + "\n")
                counts["sentences_written"] += 1
                counts["words"] += len(lines)
            counts["documents"] += 1
    if a.counts:
        with open(a.counts, "w") as f:
            json.dump(counts, f)
    else:
        print(json.dumps(counts))


main()
