#!/usr/bin/env python3
"""The benchmark peer of wiki-extract: the same cleaning rules written with Python's stdlib
(xml.etree.iterparse + re), the way WikiExtractor-style scripts do it. Same JSONL output.

    python3 bench/reference/wiki_extract_ref.py DUMP.xml DOCS.jsonl REDIRECTS.tsv
"""
import html
import json
import re
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.mediawiki.org/xml/export-0.10/}"
NO_TEXT = ("ref|references|gallery|math|chem|ce|timeline|imagemap|score|graph|syntaxhighlight|source|pre|"
           "templatedata|templatestyles|mapframe|maplink|indicator|hiero|inputbox|categorytree|noinclude|"
           "includeonly|table|charinsert|dynamicpagelist|poll|style|script|object")
INLINE = ("span|small|big|sup|sub|b|i|u|s|strike|del|ins|em|strong|font|cite|abbr|code|tt|var|kbd|samp|q|"
          "nowiki|onlyinclude|section|bdi|bdo|mark|time|data|wbr|rb|rp|rt|ruby|dfn|img|translate|tvar|languages|a")
BLOCK = ("div|p|br|hr|center|blockquote|poem|li|ul|ol|dl|dt|dd|h1|h2|h3|h4|h5|h6|caption|tr|td|th|tbody|thead|"
         "tfoot|figure|figcaption")
COMMENT = re.compile(r"<!--.*?(-->|$)", re.S)
SELF_CLOSED = re.compile(rf"<({NO_TEXT})\b[^<>]*/>", re.I)
NO_TEXT_BLOCK = re.compile(rf"<({NO_TEXT})\b[^<>]*>.*?</\1\s*>", re.I | re.S)
INLINE_TAG = re.compile(rf"</?({INLINE})\b[^<>]*>", re.I)
BLOCK_TAG = re.compile(rf"</?({BLOCK})\b[^<>]*>", re.I)
MAGIC = re.compile(r"__[A-Z]+__")
TEMPLATE = re.compile(r"\{\{[^{}]*\}\}")
BRACES = re.compile(r"\{\{+|\}\}+")
DROPPED = re.compile(r"\[\[\s*(?:file|image|category|[a-z]{2,3}(?:-[a-z]+)*|simple)\s*:", re.I)
OTHER_NS = {"media", "special", "talk", "user", "user talk", "wikipedia", "wp", "project", "mediawiki", "template",
            "help", "portal", "book", "draft", "module", "wikt", "wiktionary", "w", "commons", "s", "q", "b", "n",
            "v", "voy", "d", "wikidata", "meta", "m", "mw", "species", "doi"}
HEADING = re.compile(r"^(={1,6})\s*(.*?)\s*(={1,6})\s*$")
TOKEN = re.compile(r"\[\[\[|\[\[([^\[\]\n]*?)\]\]([a-z]*)|\[((?:https?|ftp)://|//|mailto:)([^\]\s]*)(?:\s([^\]]*))?\]"
                   r"|'{2,}|&#?\w+;|\]\]|\s+")


def drop_links(text):
    out, pos = [], 0
    for m in DROPPED.finditer(text):
        if m.start() < pos:
            continue
        depth, i = 1, m.end()
        while i < len(text) - 1 and depth:
            two = text[i:i + 2]
            if two == "[[":
                depth, i = depth + 1, i + 2
            elif two == "]]":
                depth, i = depth - 1, i + 2
            else:
                i += 1
        out.append(text[pos:m.start()])
        pos = i if depth == 0 else text.find("\n", m.start()) % (len(text) + 1)
    out.append(text[pos:])
    return "".join(out)


def strip_tables(text):
    out, depth = [], 0
    for line in text.split("\n"):
        s = line.lstrip(" :\t")
        if s.startswith("{|"):
            depth += 1
        elif s.startswith("|}") and depth:
            depth -= 1
            continue
        if depth == 0 and not s.startswith("|}"):
            out.append(line)
    return "\n".join(out)


def normalize(target):
    t = html.unescape(target).replace("_", " ").split("#")[0]
    t = re.sub(r"\s+", " ", t).strip()
    up = t[:1].upper()
    return (up if len(up) == 1 else t[:1]) + t[1:]


class Out:
    def __init__(self):
        self.parts, self.size, self.links, self.space, self.newline = [], 0, [], False, False

    def add(self, s):
        if not s:
            return
        if self.newline:
            self.parts.append("\n")
            self.size += 1
        elif self.space and self.size and self.parts[-1][-1:] != "\n":
            self.parts.append(" ")
            self.size += 1
        self.newline = self.space = False
        self.parts.append(s)
        self.size += len(s.encode())


def inline(s, out, links=True):
    pos = 0
    for m in TOKEN.finditer(s):
        out.add(s[pos:m.start()])
        pos = m.end()
        tok = m.group(0)
        if tok[0].isspace():
            out.space = True
        elif tok == "[[[":
            out.add("[")
            pos = m.start() + 1
        elif m.group(1) is not None:
            target, _, anchor = m.group(1).partition("|")
            t = target.strip().lstrip(":")
            prefix = t.split(":")[0].strip().lower() if ":" in t else ""
            label = Out()
            inline(anchor.strip() or t, label, False)
            shown = "".join(label.parts) + m.group(2)
            before = out.size
            out.add(shown)
            if links and shown and prefix not in OTHER_NS and normalize(t):
                out.links.append([out.size - len(shown.encode()), out.size, normalize(t)])
            del before
        elif m.group(3) is not None:
            if m.group(5):
                inline(m.group(5), out, False)
        elif tok[0] == "'":
            n = len(tok)
            out.add("'" if n == 4 else "'" * (n - 5) if n > 5 else "")
        elif tok[0] == "&":
            ch = html.unescape(tok)
            if ch == "\u00a0":
                out.space = True
            else:
                out.add(ch)
    out.add(s[pos:])


def clean(wikitext):
    text = COMMENT.sub("", wikitext)
    text = SELF_CLOSED.sub("", text)
    text = NO_TEXT_BLOCK.sub("", text)
    text = INLINE_TAG.sub("", BLOCK_TAG.sub("\n", text))
    text = MAGIC.sub("", text)
    while True:
        text, n = TEMPLATE.subn("", text)
        if n == 0:
            break
    text = BRACES.sub("", text)
    text = drop_links(strip_tables(text))
    out, sections, root_end, in_par = Out(), [], None, False
    for line in text.split("\n"):
        line = line.strip()
        if not line:
            in_par = False
            continue
        h = HEADING.match(line)
        if h and h.group(2):
            level = min(len(h.group(1)), len(h.group(3)))
            title = Out()
            inline(h.group(2), title, False)
            if root_end is None:
                root_end = out.size
            sections.append(["".join(title.parts), out.size, level])
            out.newline, out.space, in_par = out.size > 0, False, False
            continue
        if line.startswith("----"):
            in_par = False
            continue
        if line[0] in "*#:;":
            line = line.lstrip("*#:;")
            out.newline, out.space, in_par = out.size > 0, False, False
        elif in_par:
            out.space = True
        else:
            out.newline, out.space, in_par = out.size > 0, False, True
        inline(line, out)
    size = out.size
    secs = []
    for i, (title, at, level) in enumerate(sections):
        end = sections[i + 1][1] if i + 1 < len(sections) else size
        secs.append([min(at + 1 if at else 0, end), end, title, level])
    return "".join(out.parts), out.links, secs, size if root_end is None else root_end


def main():
    src, docs_path, redirects_path = sys.argv[1:4]
    with open(docs_path, "w", encoding="utf-8") as docs, open(redirects_path, "w", encoding="utf-8") as red:
        red.write("# from\tto\n")
        for _, el in ET.iterparse(src):
            if el.tag != NS + "page":
                continue
            if el.findtext(NS + "ns") == "0":
                title = el.findtext(NS + "title")
                wikitext = el.findtext(f"{NS}revision/{NS}text") or ""
                redirect = el.find(NS + "redirect")
                if redirect is not None:
                    red.write(f"{title}\t{normalize(redirect.get('title'))}\n")
                else:
                    text, links, sections, root_end = clean(wikitext)
                    docs.write(json.dumps({"id": el.findtext(NS + "id"), "title": title, "text": text, "links": links,
                                           "sections": sections, "root_end": root_end}, ensure_ascii=False,
                                          separators=(",", ":")) + "\n")
            el.clear()


if __name__ == "__main__":
    main()
