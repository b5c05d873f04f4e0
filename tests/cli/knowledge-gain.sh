#!/usr/bin/env bash
# pipelines/knowledge-gain.sh --preset small end to end at a tiny size (its numbers mean nothing here:
# the real run's table is docs/results/knowledge-gain.md): every stage runs; the unseen facts are
# absent from the KG that arm (b)'s knowledge comes from and from that knowledge text, the seen ones
# present; the three arms probe the same facts; the report has a row with a bootstrap interval around
# each arm's gain for every method, relation and side, and the overall rows of the seen and the
# unseen facts; arm (c)'s templates are the variant's;
# the predictions are kept; a second run finds every stage complete.
# Usage: knowledge-gain.sh BIN_DIR FIXTURES_DIR SOURCE_DIR
set -euo pipefail
bin=$1 fx=$2 src=$3
source "$src/tests/cli/common.sh" "$fx/xfactr-kg-dev.json.gz"
run=(env KGLM_BIN="$bin" "$src/pipelines/knowledge-gain.sh" --preset small --fixtures "$fx" --seeds "3 4" --steps 12
  --warmup-steps 6 --batch 8 --facts 16 --draws 1 --vocab 1500 --bootstrap 200 --methods independent,order --threads 2
  "$tmp/run")
"${run[@]}" > "$tmp/log"
python3 - "$tmp/run" <<'PY' || fail "the split, the knowledge text or the report: see $tmp/run"
import csv, gzip, json, os, sys
run = sys.argv[1]
split = list(csv.DictReader(open(f"{run}/split/split.tsv"), delimiter="\t"))
assert {r["side"] for r in split} == {"seen", "unseen"}, split[:3]
unseen = {(r["sub_uri"], r["relation"], r["obj_uri"]) for r in split if r["side"] == "unseen"}
seen = {(r["sub_uri"], r["relation"], r["obj_uri"]) for r in split if r["side"] == "seen"}
assert not {r["sub_uri"] for r in split if r["side"] == "seen"} & {s for s, _, _ in unseen}, "a subject on both sides"
# The KG of arm (b)'s knowledge lacks every unseen fact and keeps the seen ones it had.
claims = set()
for line in gzip.open(f"{run}/split/kg-seen.json.gz", "rt", encoding="utf-8"):
    line = line.strip().rstrip(",")
    if line.startswith("{"):
        e = json.loads(line)
        for rel, cs in (e.get("claims") or {}).items():
            for c in cs:
                v = ((c.get("mainsnak") or {}).get("datavalue") or {}).get("value") or {}
                if "id" in v:
                    claims.add((e["id"], rel, v["id"]))
assert not claims & unseen, sorted(claims & unseen)[:3]
assert len(claims & seen) > 0.9 * len(seen), (len(claims & seen), len(seen))
# The knowledge text states seen facts only.
unseen_pairs = {(s, o) for s, _, o in unseen}
for name in ("kmlm.jsonl", "kmlm-parallel.jsonl", "templates.jsonl", "templates-variant.jsonl"):
    n = 0
    for line in open(f"{run}/knowledge/{name}", encoding="utf-8"):
        r = json.loads(line)
        n += 1
        if "triple" in r:  # cs-gen kmlm
            assert tuple(r["triple"]) not in unseen, (name, r)
        else:  # verbalize render: the subject and the entities its sentence names
            assert not {(r["subject"], s[3]) for s in r["spans"] if s[2] == "entity"} & unseen_pairs, (name, r)
    assert n > 0, f"{name} is empty"
rows = list(csv.DictReader(open(f"{run}/knowledge-gain.tsv"), delimiter="\t"))
key = lambda r: (r["arm"], r["method"], r["lang"], r["relation"], r["side"])  # noqa: E731
for arm in "bc":
    for m in ("independent", "order"):
        for lang in ("en", "fr", "es"):
            for side in ("seen", "unseen"):
                assert len([r for r in rows if key(r) == (arm, m, lang, "overall", side)]) == 1, (arm, m, lang, side)
                for rel in ("P30", "P36", "P37") if lang == "en" else ():  # fr, es: not every fact has labels
                    assert any(key(r) == (arm, m, lang, rel, side) for r in rows), (arm, m, rel)
for r in rows:
    lo, gain, hi = float(r["ci_low"]), float(r["gain"]), float(r["ci_high"])
    assert lo <= gain + 1e-9 and gain <= hi + 1e-9, r
    assert abs(float(r["acc_arm"]) - float(r["acc_a"]) - gain) < 0.02, r
en = {r["side"]: int(r["facts"]) for r in rows if key(r)[:4] == ("c", "order", "en", "overall")}
assert en == {"seen": len(seen), "unseen": len(unseen)}, (en, len(seen), len(unseen))
md = open(f"{run}/knowledge-gain.md", encoding="utf-8").read()
assert "| **overall** |" in md and "## (c) − (a), order decoding, fr" in md, md[:400]
# The answer-prior section: the majority baseline of each English relation, recomputed here from
# the predictions (the facts probed in English, each with its gold object and side).
priors = md.split("## Answer priors", 1)[1].split("### order decoding, en", 1)[1].split("###", 1)[0]
probed = [json.loads(line) for line in open(f"{run}/predictions/probe-a-3.jsonl", encoding="utf-8")]
for rel in ("P30", "P36", "P37"):
    facts = {(p["sub_uri"], p["obj_uri"]) for p in probed if p["lang"] == "en" and p["relation"] == rel}
    seen_objs = [o for s, o in facts if (s, rel, o) in seen]
    top = min(set(seen_objs), key=lambda o: (-seen_objs.count(o), o))
    row = next(line for line in priors.splitlines() if line.startswith(f"| {rel} |"))
    assert f"({top}) | {100 * seen_objs.count(top) / len(seen_objs):.2f} |" in row, (row, top, seen_objs)
# Arm (c)'s English template sentences are the variant's (it has English templates only).
english = lambda name: {r["text"] for r in map(json.loads, open(f"{run}/knowledge/{name}", encoding="utf-8"))  # noqa: E731
                        if r["lang"] == "en"}
assert english("templates-variant.jsonl") and not english("templates-variant.jsonl") & english("templates.jsonl"), "(c) = (b)"
for arm in "abc":
    for seed in "34":
        assert os.path.getsize(f"{run}/predictions/probe-{arm}-{seed}.jsonl") > 0
# The tokenizer learnt from all the text: a line per paragraph, none so long that spm_train skips it
# (a whole Wikipedia article on one line was, and the vocabulary came from the knowledge alone).
corpus = open(f"{run}/spm-corpus.txt", encoding="utf-8").read().splitlines()
docs = [json.loads(line)["text"] for line in open(f"{run}/docs.jsonl", encoding="utf-8")]
assert max(len(line.encode()) for line in corpus) < 4192, max(len(line.encode()) for line in corpus)
assert sum(1 for line in corpus if line in docs[0]) > 1, "the first article is not in the tokenizer's text"
print(f"split {len(seen)} seen / {len(unseen)} unseen facts; report rows {len(rows)}")
PY
"${run[@]}" > "$tmp/log2"
[ "$(grep -c ": complete (.*), skipped$" "$tmp/log2")" = 18 ] || fail "a second run did not find the stages complete: $(cat "$tmp/log2")"
ok "knowledge-gain --preset small: seen/unseen split, arm (b)'s knowledge without the unseen facts, report, rerun skipped"

# --preset dose at a tiny size: every fact in one dose (stratified by relation), the exposures
# counted here from what the runs drew (pretrain --drawn and the records' facts) equal to the doses,
# the control's records in X-FACTR's own wording, the report's accuracies those of the predictions.
dose=(env KGLM_BIN="$bin" "$src/pipelines/knowledge-gain.sh" --preset dose --fixtures "$fx" --seeds 3 --model "2 64 4 128"
  --relations P17,P36,P37 --facts 12 --doses 1,4 --warmup-steps 10 --start-batch 8 --vocab 1000 --bootstrap 100
  --methods independent --threads 2 "$tmp/dose")
"${dose[@]}" > "$tmp/dose.log"
python3 - "$tmp/dose" "$fx/xfactr/templates/en.jsonl" <<'PY' || fail "--preset dose: see $tmp/dose"
import collections, csv, json, re, sys
run, templates = sys.argv[1], {json.loads(l)["relation"]: json.loads(l)["template"] for l in open(sys.argv[2])}
split = list(csv.DictReader(open(f"{run}/split/split.tsv"), delimiter="\t"))
dose = {(r["sub_uri"], r["relation"], r["obj_uri"]): int(r["dose"]) for r in split}
assert all((r["side"] == "unseen") == (r["dose"] == "0") for r in split), "a seen fact at dose 0 or an unseen one dosed"
for rel in ("P17", "P36", "P37"):
    n = collections.Counter(int(r["dose"]) for r in split if r["relation"] == rel and r["side"] == "seen")
    assert set(n) <= {1, 4} and abs(n[1] - n[4]) <= 1, (rel, n)  # stratified: as even as can be
for arm in "bcd":
    records = [json.loads(l) for l in open(f"{run}/knowledge/arm-{arm}.jsonl", encoding="utf-8")]
    drawn = collections.Counter()
    for row in csv.DictReader(open(f"{run}/arm-{'abcd'.index(arm):04d}/drawn.tsv"), delimiter="\t"):
        if row["input"] == "1":  # the arm's knowledge, after the text
            drawn[tuple(records[int(row["source_line"]) - 1]["fact"])] += int(row["draws"])
    exposures = {(r["sub_uri"], r["relation"], r["obj_uri"]): int(r["exposures"])
                 for r in csv.DictReader(open(f"{run}/predictions/exposures-{arm}-3.tsv"), delimiter="\t")}
    for fact, k in dose.items():
        assert exposures[fact] == drawn[fact], (arm, fact, exposures[fact], drawn[fact])
        assert drawn[fact] >= k and (k == 0) == (drawn[fact] == 0), (arm, fact, k, drawn[fact])
    assert sum(drawn[f] == k for f, k in dose.items()) > 0.9 * len(dose), (arm, "exposures off their doses")
    if arm == "d":  # X-FACTR's own wording (verbalize writes "Paris." for "[Y] .")
        for r in records:
            t = re.escape(templates[r["fact"][1]]).replace(re.escape("[X]"), ".+").replace(re.escape("[Y]"), ".+")
            assert re.fullmatch(t.replace("\\ \\.", " ?\\."), r["text"]), (r["text"], templates[r["fact"][1]])
rows = list(csv.DictReader(open(f"{run}/knowledge-dose.tsv"), delimiter="\t"))
for arm in "abcd":
    verdicts = collections.defaultdict(list)
    for p in map(json.loads, open(f"{run}/predictions/probe-{arm}-3.jsonl")):
        verdicts[dose[(p["sub_uri"], p["relation"], p["obj_uri"])]].append(p["correct"])
    for k, v in verdicts.items():
        row = next(r for r in rows if (r["arm"], r["dose"], r["subset"]) == (arm, str(k), "all"))
        assert int(row["facts"]) == len(v) and abs(float(row["acc"]) - 100 * sum(v) / len(v)) < 0.01, (row, v)
md = open(f"{run}/knowledge-dose.md", encoding="utf-8").read()
assert "### non-majority facts" in md and "share of the control's rise" in md, md[:300]
print("dose: exposures equal to the doses,", len(rows), "report rows")
PY
"${dose[@]}" > "$tmp/dose2.log"
[ "$(grep -c ": complete (.*), skipped$" "$tmp/dose2.log")" = 14 ] || fail "--preset dose rerun: $(cat "$tmp/dose2.log")"
ok "knowledge-gain --preset dose: doses stratified, exposures counted from the draws, control in X-FACTR's wording, report"
# --preset dose-gpu (one GPU: more facts, seeds, a bigger model) up to its split, which needs no GPU.
env KGLM_BIN="$bin" "$src/pipelines/knowledge-gain.sh" --preset dose-gpu --fixtures "$fx" --until split --threads 2 \
  "$tmp/gpu" > "$tmp/gpu.log"
[ "$(tail -n +2 "$tmp/gpu/split/split.tsv" | wc -l)" = 480 ] && grep -q "dose" "$tmp/gpu/split/split.tsv" ||
  fail "--preset dose-gpu: not 60 facts of 8 relations with doses"
ok "knowledge-gain --preset dose-gpu: its split (60 facts a relation, dosed)"
