#!/usr/bin/env python3
"""The Python peer of wd-extract for benchmarks: json.loads per dump line, the same tables
(entities, labels, descriptions, aliases for the 10 KMLM languages, enwiki sitelinks, item triples,
literal claims, qualifiers) written as TSV. Standard library only.

Usage: wd_extract_ref.py DUMP.json OUTDIR
"""
import json
import os
import sys

LANGS = {"en", "vi", "nl", "de", "fr", "it", "es", "ja", "ko", "zh"}


def value_text(dv):
    v = dv["value"]
    t = dv["type"]
    if t == "wikibase-entityid":
        return "item", v.get("id") or "Q%d" % v["numeric-id"]
    if t == "quantity":
        return "quantity", v["amount"]
    if t == "time":
        return "time", v["time"]
    if t == "monolingualtext":
        return "monolingualtext", v["text"]
    if t == "globecoordinate":
        return "globe_coordinate", "%s,%s" % (v["latitude"], v["longitude"])
    return "string", v


def main():
    dump, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    names = ["entities", "labels", "descriptions", "aliases", "sitelinks", "triples", "literals", "qualifiers"]
    out = {n: open(os.path.join(outdir, n + ".tsv"), "w", encoding="utf-8") for n in names}
    errors = 0
    with open(dump, encoding="utf-8") as f:
        for line in f:
            line = line.strip().rstrip(",")
            if line in ("[", "]", ""):
                continue
            try:
                e = json.loads(line)
            except ValueError:
                errors += 1
                continue
            if e.get("type") not in ("item", "property"):
                continue
            eid = e["id"]
            out["entities"].write("%s\t%d\n" % (eid, len(e.get("sitelinks", {}))))
            for table in ("labels", "descriptions"):
                for lang, t in e.get(table, {}).items():
                    if lang in LANGS:
                        out[table].write("%s\t%s\t%s\n" % (eid, lang, t["value"]))
            for lang, lst in e.get("aliases", {}).items():
                if lang in LANGS:
                    for t in lst:
                        out["aliases"].write("%s\t%s\t%s\n" % (eid, lang, t["value"]))
            sl = e.get("sitelinks", {}).get("enwiki")
            if sl:
                out["sitelinks"].write("%s\tenwiki\t%s\n" % (eid, sl["title"]))
            for prop, statements in e.get("claims", {}).items():
                for st in statements:
                    snak = st["mainsnak"]
                    if snak["snaktype"] != "value" or st.get("rank") == "deprecated":
                        continue
                    kind, text = value_text(snak["datavalue"])
                    if kind == "item":
                        out["triples"].write("%s\t%s\t%s\n" % (eid, prop, text))
                    else:
                        out["literals"].write("%s\t%s\t%s\t%s\n" % (eid, prop, kind, text))
                    for qprop, qsnaks in st.get("qualifiers", {}).items():
                        for q in qsnaks:
                            if q["snaktype"] == "value":
                                qkind, qtext = value_text(q["datavalue"])
                                out["qualifiers"].write("%s\t%s\t%s\t%s\n" % (prop, qprop, qkind, qtext))
    for f in out.values():
        f.close()
    print("errors", errors, file=sys.stderr)


if __name__ == "__main__":
    main()
