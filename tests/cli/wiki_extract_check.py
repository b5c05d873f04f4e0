#!/usr/bin/env python3
"""Independent checks of wiki-extract's output against the XML it came from (stdlib only).

  counts XML DOCS REDIRECTS    articles/redirects equal an xml.etree count; no markup left; every
                               link span is an anchor written in the page's wikitext
  plain DOCS PLAIN             the --format plain output reads back to the same text and links
  sentences DOCS SENTENCES     sentences are substrings at their offsets and never cut a link
  to-wikiextractor DOCS OUT    writes DOCS as WikiExtractor --json --links records
  same-text DOCS OTHER         same ids, titles, text and links (sections may differ)
"""
import bz2
import html
import json
import re
import sys
import urllib.parse
import xml.etree.ElementTree as ET

NS = "{http://www.mediawiki.org/xml/export-0.10/}"


def read_docs(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def span(text, b, e):
    return text.encode("utf-8")[b:e].decode("utf-8")


def first_upper(s):
    # Simple (one-to-one) case mapping, as MediaWiki: "ß" stays "ß".
    up = s[:1].upper()
    return (up if len(up) == 1 else s[:1]) + s[1:]


def norm_target(t):
    t = html.unescape(t).replace("_", " ").split("#")[0]
    return first_upper(re.sub(r"\s+", " ", t).strip())


def written_anchors(wikitext):
    """(anchor, target) pairs of the simple [[target|anchor]]trail links of a page."""
    pairs = set()
    while True:  # templates, innermost first
        wikitext, n = re.subn(r"\{\{[^{}]*\}\}", "", wikitext)
        if n == 0:
            break
    for m in re.finditer(r"\[\[([^\[\]|\n]*)(?:\|([^\[\]\n]*))?\]\]([a-z]*)", wikitext):
        target, label, trail = m.group(1), m.group(2), m.group(3)
        shown = (label if label is not None and label.strip() else target.lstrip(":")) + trail
        shown = re.sub(r"</?[a-zA-Z][^>]*>", "", shown)  # inline tags such as <sub>
        shown = re.sub(r"'{2,}", "", html.unescape(shown)).replace("\u00a0", " ")
        pairs.add((re.sub(r"\s+", " ", shown).strip(), norm_target(target.strip().lstrip(":"))))
    return pairs


def counts(xml_path, docs_path, redirects_path):
    opener = bz2.open if xml_path.endswith(".bz2") else open
    articles, redirects, wikitext = 0, 0, {}
    with opener(xml_path, "rb") as f:
        for _, el in ET.iterparse(f):
            if el.tag != NS + "page":
                continue
            if el.findtext(NS + "ns") == "0":
                if el.find(NS + "redirect") is not None:
                    redirects += 1
                else:
                    articles += 1
                    wikitext[el.findtext(NS + "title")] = el.findtext(f"{NS}revision/{NS}text") or ""
            el.clear()
    docs = read_docs(docs_path)
    with open(redirects_path, encoding="utf-8") as f:
        red = [l for l in f if not l.startswith("#")]
    assert len(docs) == articles, f"{len(docs)} articles written, the XML has {articles}"
    assert len(red) == redirects, f"{len(red)} redirects written, the XML has {redirects}"
    links = 0
    for d in docs:
        for bad in ("{{", "}}", "[[", "]]", "<ref", "{|"):
            assert bad not in d["text"], f"{d['title']}: {bad!r} left in the text"
        pairs = written_anchors(wikitext[d["title"]])
        for b, e, target in d["links"]:
            shown = span(d["text"], b, e)
            assert shown and shown == shown.strip(), f"{d['title']}: bad span {shown!r}"
            assert (shown, target) in pairs, f"{d['title']}: span {shown!r} -> {target!r} is no anchor of the page"
            links += 1
    print(f"{articles} articles, {redirects} redirects, {links} links checked")


def plain(docs_path, plain_path):
    docs = read_docs(docs_path)
    with open(plain_path, encoding="utf-8") as f:
        blocks = re.findall(r'<doc id="([^"]*)" title="([^"]*)">\n(.*?)\n</doc>\n', f.read(), re.S)
    assert len(blocks) == len(docs), f"{len(blocks)} plain docs, {len(docs)} JSON docs"
    for d, (pid, title, body) in zip(docs, blocks):
        assert pid == d["id"] and html.unescape(title) == d["title"]
        text, links, pos = b"", [], 0
        for m in re.finditer(r"\[\[([^|\[\]]*)\|(.*?)\]\]", body):
            text += body[pos:m.start()].encode()
            links.append([len(text), len(text) + len(m.group(2).encode()), m.group(1)])
            text += m.group(2).encode()
            pos = m.end()
        text += body[pos:].encode()
        assert text.decode() == d["text"] and links == d["links"], f"{d['title']}: plain form differs"
    print(f"{len(docs)} plain documents read back")


def sentences(docs_path, sentences_path):
    docs = {d["id"]: d for d in read_docs(docs_path)}
    by_doc = {}
    for line in open(sentences_path, encoding="utf-8"):
        s = json.loads(line)
        by_doc.setdefault(s["id"], []).append(s)
    n = 0
    for doc_id, sents in by_doc.items():
        d = docs[doc_id]
        raw = d["text"].encode()
        bounds = []
        for s in sents:
            b = s["begin"]
            e = b + len(s["text"].encode())
            assert raw[b:e].decode() == s["text"], f"{d['title']}: sentence not at its offset"
            for lb, le, t in s["links"]:
                assert 0 <= lb < le <= e - b
                assert [b + lb, b + le, t] in d["links"]
            bounds.append((b, e))
            n += 1
        for lb, le, t in d["links"]:
            inside = [1 for b, e in bounds if b <= lb and le <= e]
            assert len(inside) == 1, f"{d['title']}: link {t!r} is cut by a sentence boundary"
    print(f"{n} sentences checked, no link cut")


def to_wikiextractor(docs_path, out_path):
    with open(out_path, "w", encoding="utf-8") as out:
        for d in read_docs(docs_path):
            raw, pos, parts = d["text"].encode(), 0, []
            for b, e, t in d["links"]:
                parts.append(html.escape(raw[pos:b].decode(), quote=False))
                parts.append(f'<a href="{urllib.parse.quote(t)}">{html.escape(raw[b:e].decode(), quote=False)}</a>')
                pos = e
            parts.append(html.escape(raw[pos:].decode(), quote=False))
            rec = {"id": d["id"], "revid": "1", "url": "", "title": d["title"], "text": "".join(parts)}
            out.write(json.dumps(rec, ensure_ascii=False) + "\n")


def same_text(a_path, b_path):
    a, b = read_docs(a_path), read_docs(b_path)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        for k in ("id", "title", "text", "links"):
            assert x[k] == y[k], f"{x['title']}: {k} differs"
    print(f"{len(a)} documents identical in text and links")


if __name__ == "__main__":
    {"counts": counts, "plain": plain, "sentences": sentences, "to-wikiextractor": to_wikiextractor,
     "same-text": same_text}[sys.argv[1]](*sys.argv[2:])
