#!/usr/bin/env python3
"""Independent checks of cs-gen's outputs against the KG's TSV tables (wd-extract --tsv), from the
records alone (stdlib only).

  kmlm TSV_DIR OUT.jsonl...         spans are labels of the record's language or English; the
                                    measured switch rate over all outputs (prints draws and rate)
  parallel TSV_DIR OUT.jsonl        every group is rendered in exactly the languages with all labels
  alias TSV_DIR OUT.jsonl           alias records use aliases (or the label) of each item's language
  entitycs TSV_DIR OUT.jsonl        one language per CS sentence, its labels, <= max copies, only
                                    languages having every label, markers match spans
"""
import collections
import json
import sys


def load_terms(path):
    terms = collections.defaultdict(dict)
    multi = collections.defaultdict(lambda: collections.defaultdict(list))
    with open(path, encoding="utf-8") as f:
        next(f)
        for line in f:
            entity, lang, text = line.rstrip("\n").split("\t", 2)
            terms[lang][entity] = text
            multi[lang][entity].append(text)
    return terms, multi


def records(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            yield json.loads(line)


def span_texts(rec):
    raw = rec["text"].encode()
    return [(raw[b:e].decode(), kind, i) for b, e, kind, i in rec["spans"]]


def check_shape(rec):
    parts = span_texts(rec)
    kinds = [k for _, k, _ in parts]
    assert kinds == ["entity", "link", "relation", "link", "entity"], kinds
    h, r, t = parts[0][0], parts[2][0], parts[4][0]
    assert rec["text"] == f"{h} [mask] {r} [mask] {t}.", rec["text"]
    assert [parts[0][2], parts[2][2], parts[4][2]] == rec["triple"]
    return [parts[0], parts[2], parts[4]]


def kmlm(tsv, *outs):
    labels, _ = load_terms(f"{tsv}/labels.tsv")
    draws = switched = n = 0
    for out in outs:
        for rec in records(out):
            lang = rec["lang"]
            for (text, kind, ident), item_lang in zip(check_shape(rec), rec["langs"]):
                en, other = labels["en"].get(ident), labels[lang].get(ident)
                assert text in (en, other), f"{ident}: {text!r} is neither {en!r} nor {lang} {other!r}"
                assert text == labels[item_lang][ident]
                if other is not None and other != en:  # a draw the output shows unambiguously
                    draws += 1
                    switched += text == other
            n += 1
    rate = switched / draws
    print(f"{n} records; {draws} switch draws, measured rate {rate:.4f}")
    assert draws >= 1_000_000, "fewer than 1M draws"
    assert abs(rate - 0.5) <= 0.005, f"switch rate {rate}"


def parallel(tsv, out):
    labels, _ = load_terms(f"{tsv}/labels.tsv")
    groups = collections.defaultdict(set)
    triples = {}
    for rec in records(out):
        if rec.get("alias"):
            continue
        for text, kind, ident in check_shape(rec):
            assert text == labels[rec["lang"]][ident]
        assert rec["group"] not in groups or triples[rec["group"]] == rec["triple"]
        assert rec["lang"] not in groups[rec["group"]], "language twice in a group"
        groups[rec["group"]].add(rec["lang"])
        triples[rec["group"]] = rec["triple"]
    langs = [l for l in labels if l != "lang"]
    for g, seen in groups.items():
        expected = {l for l in langs if all(i in labels[l] for i in triples[g])}
        assert seen == expected, f"group {g}: {sorted(seen)} != {sorted(expected)}"
    print(f"{len(groups)} groups, each in exactly the languages that have all three labels")


def alias(tsv, out):
    labels, _ = load_terms(f"{tsv}/labels.tsv")
    _, aliases = load_terms(f"{tsv}/aliases.tsv")
    n = replaced = 0
    for rec in records(out):
        if not rec.get("alias"):
            continue
        n += 1
        for (text, kind, ident), lang in zip(check_shape(rec), rec["langs"]):
            options = aliases[lang].get(ident, [])
            assert text in options or (not options and text == labels[lang][ident]), f"{ident} {lang}: {text!r}"
            replaced += text in options
    print(f"{n} alias records, {replaced} items replaced by an alias")
    assert n > 0 and replaced > 0


def entitycs(tsv, out, max_cs="5"):
    labels, _ = load_terms(f"{tsv}/labels.tsv")
    copies = collections.Counter()
    english = {}
    n_cs = 0
    for rec in records(out):
        ident, lang = rec["id"], rec["language"]
        assert rec["lang"] == lang
        parts = span_texts(rec)
        assert all(kind == "entity" for _, kind, _ in parts)
        marked = rec["cs_sentence"] if lang != "en" else rec["en_sentence"]
        assert marked.replace("<e>", "").replace("</e>", "") == rec["text"]
        assert [p[0] for p in parts] == [m.split("</e>")[0] for m in marked.split("<e>")[1:]]
        if lang == "en":
            assert rec["cs_sentence"] == "" and ident not in english
            english[ident] = rec
            continue
        n_cs += 1
        en = english[ident]  # the English record comes first
        assert rec["en_sentence"] == en["en_sentence"]
        assert [p[2] for p in parts] == [s[3] for s in en["spans"]], "entities differ from the English sentence"
        for text, _, entity in parts:
            assert text == labels[lang][entity], f"{ident}: {entity} {text!r} is not its {lang} label"
        copies[ident] += 1
    assert max(copies.values()) <= int(max_cs)
    langs = {l for l in labels if l not in ("lang", "en")}
    # Only languages with a label for every entity: count the sentences whose copies could be more.
    full = 0
    for ident, en in english.items():
        entities = {s[3] for s in en["spans"]}
        have = {l for l in langs if all(e in labels[l] for e in entities)}
        full += copies[ident] == min(len(have), int(max_cs))
    assert full == len(english), f"{len(english) - full} sentences with the wrong number of copies"
    print(f"{len(english)} English sentences, {n_cs} code-switched, at most {max(copies.values())} copies each")


if __name__ == "__main__":
    {"kmlm": kmlm, "parallel": parallel, "alias": alias, "entitycs": entitycs}[sys.argv[1]](*sys.argv[2:])
