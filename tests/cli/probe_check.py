#!/usr/bin/env python3
"""An independent check of a probe run on X-FACTR data (stdlib + Debian's spm_encode).

Usage: probe_check.py FACTS_DIR ALIAS_DIR KG_DUMP.json.gz SPM_MODEL RESULTS.json PREDICTIONS.jsonl STATS.json
       LANGS RELATIONS MAX_FACTS METHODS

From the fact files, the alias files and the Wikidata dump the store was made from, it works out
which facts each language can probe (both labels in the language, English from the fact files;
no unknown piece in either label; a non-empty answer), each fact's accepted answers (labels and
aliases of every object of the subject and relation, in the fact files or the dump) and the
answer's token count, then checks every prediction's verdict, the single/multi split and the
per-relation and macro scores of RESULTS.json against its own."""
import json
import os
import subprocess
import sys

import wikidata_dump


def fold(text):
    return " ".join(text.casefold().split())


def main():
    facts_dir, alias_dir, dump, spm, results, predictions, stats_file = sys.argv[1:8]
    langs, relations = sys.argv[8].split(","), sys.argv[9].split(",")
    max_facts, methods = int(sys.argv[10]), sys.argv[11].split(",")
    stats = json.load(open(stats_file))

    facts, objects, english = {}, {}, {}
    for rel in relations:
        rows = [json.loads(l) for l in open(os.path.join(facts_dir, rel + ".jsonl"), encoding="utf-8") if l.strip()]
        for r in rows:
            objects.setdefault((r["sub_uri"], rel), []).append(r["obj_uri"])
            english.setdefault(r["sub_uri"], r["sub_label"])
            english.setdefault(r["obj_uri"], r["obj_label"])
        facts[rel] = rows[:max_facts] if max_facts else rows

    labels, aliases = {}, {}
    for e in wikidata_dump.items(dump):
        qid = e["id"]
        for lang in langs:
            if lang in e.get("labels", {}):
                labels[(qid, lang)] = e["labels"][lang]["value"]
            for a in e.get("aliases", {}).get(lang, []):
                aliases.setdefault((qid, lang), []).append(a["value"])
        for rel in relations:
            for c in e.get("claims", {}).get(rel, []):
                if c.get("rank") == "deprecated":
                    continue
                v = c.get("mainsnak", {}).get("datavalue", {}).get("value", {})
                if isinstance(v, dict) and "id" in v:
                    objects.setdefault((qid, rel), []).append(v["id"])
    alias_files = {}
    for lang in langs:
        path = os.path.join(alias_dir, lang + ".txt")
        table = {}
        if os.path.exists(path):
            for line in open(path, encoding="utf-8"):
                parts = line.rstrip("\n").split("\t")
                table[parts[0]] = parts[1:]
        alias_files[lang] = table

    def label(qid, lang):
        if (qid, lang) in labels:
            return labels[(qid, lang)]
        return english.get(qid) if lang == "en" else None

    # Token ids of every label, in one spm_encode call (id 0 is SentencePiece's <unk>).
    needed = sorted({label(q, l) for rel in relations for r in facts[rel] for l in langs
                     for q in (r["sub_uri"], r["obj_uri"]) if label(q, l)})
    out = subprocess.run(["spm_encode", "--model", spm, "--output_format=id"], input="\n".join(needed) + "\n",
                         capture_output=True, text=True, check=True).stdout.split("\n")
    ids = {text: [int(x) for x in out[i].split()] for i, text in enumerate(needed)}

    eligible, answers, tokens = {}, {}, {}
    for lang in langs:
        for rel in relations:
            keep = []
            for r in facts[rel]:
                s, o = label(r["sub_uri"], lang), label(r["obj_uri"], lang)
                if s is None or o is None or 0 in ids[s] or 0 in ids[o] or not ids[o]:
                    continue
                key = (lang, rel, r["sub_uri"], r["obj_uri"])
                keep.append(key)
                gold = set()
                for q in [r["obj_uri"]] + objects.get((r["sub_uri"], rel), []):
                    for text in [label(q, lang)] + aliases.get((q, lang), []) + alias_files[lang].get(q, []):
                        if text:
                            gold.add(fold(text))
                gold.discard("")
                answers[key] = gold
                tokens[key] = len(ids[o])
            eligible[(lang, rel)] = keep

    seen = {}
    for line in open(predictions, encoding="utf-8"):
        p = json.loads(line)
        key = (p["lang"], p["relation"], p["sub_uri"], p["obj_uri"])
        assert key in answers, f"{key} should not have been probed"
        want = fold(p["prediction"]) in answers[key]
        assert p["correct"] == want, (key, p["prediction"], sorted(answers[key])[:5])
        assert p["gold_tokens"] == tokens[key], (key, p["gold_tokens"], tokens[key])
        assert len(p["tokens"]) == p["num_mask"] and 1 <= p["num_mask"] <= 5
        assert abs(sum(p["log_probs"]) - p["score"]) < 1e-4 or p["num_mask"] > 1
        best = max(c["score"] for c in p["candidates"])
        assert abs(p["score"] - best) < 1e-6, (key, p["score"], best)
        s = seen.setdefault((p["method"], p["lang"], p["relation"]), [0, 0, 0, 0, 0, 0])
        s[0] += 1
        s[1] += p["correct"]
        single = p["gold_tokens"] == 1
        s[2] += single
        s[3] += single and p["correct"]
        s[4] += not single
        s[5] += (not single) and p["correct"]

    too_long = sum(stats.get("facts_too_long." + l, 0) for l in langs)
    result = json.load(open(results))
    rows = {(r["method"], r["lang"], r["relation"]): r for r in result["relations"]}
    for method in methods:
        for lang in langs:
            per_rel = []
            for rel in relations:
                r = rows[(method, lang, rel)]
                s = seen.get((method, lang, rel), [0] * 6)
                got = (r["facts"], r["correct"], r["single_facts"], r["single_correct"], r["multi_facts"],
                       r["multi_correct"])
                assert tuple(s) == got, (method, lang, rel, s, got)
                assert r["facts"] <= len(eligible[(lang, rel)])
                per_rel.append(s)
            macro = next(m for m in result["macro"] if m["method"] == method and m["lang"] == lang)
            for k, name in ((0, "all"), (2, "single"), (4, "multi")):
                parts = [s[k + 1] / s[k] for s in per_rel if s[k]]
                want = sum(parts) / len(parts) if parts else None
                assert (want is None and macro[name] is None) or abs(macro[name] - want) < 1e-6, (method, lang, name)
    probed = sum(s[0] for s in seen.values())
    eligible_total = sum(len(v) for v in eligible.values()) * len(methods)
    assert eligible_total - probed == too_long * len(methods), (eligible_total, probed, too_long)
    print(f"probe_check: {probed} predictions over {len(langs)} languages and {len(relations)} relations agree "
          f"({sum(s[1] for s in seen.values())} correct); {too_long} facts too long")


if __name__ == "__main__":
    main()
