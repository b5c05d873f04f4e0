#!/usr/bin/env bash
# probe end to end: a hand-built model whose answer and log-probability are known by hand (answer
# matching by label, case, alias and another object; --norm; a bad fact skipped with its place);
# a random model on the X-FACTR fixtures in four languages with every decoding method, checked by
# an independent implementation (probe_check.py) and, with Debian's python3-torch, against the
# torch peer's predictions; identical results at --threads 1 and 2; genders from a KG store (P21);
# facts drawn from a KG store; bad inputs, special outputs and SIGTERM.
# Usage: probe.sh BIN_DIR FIXTURES_DIR SOURCE_DIR
set -euo pipefail
bin=$1 fx=$2 src=$3
source "$src/tests/cli/common.sh" "$fx/xfactr/facts"
x=$fx/xfactr
spm=$fx/tokenizer/spm-test-vocab1000.model
tiny="python3 $src/tests/cli/make_tiny_mlm.py"
probe() { "$bin/probe" -q "$@"; }
col() { awk -F'\t' -v m="$2" -v r="$3" -v c="$4" 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next }
  $1 == m && $3 == r { print $h[c] }' "$1"; }

# 1. The hand-built model: all weights 0 but lm_head.bias["▁the"] = 12, so every mask's best token is
# "the" with log-probability 12 − log(e^12 + 1001) and one mask has the best sum. Five facts: "The"
# (case), "Theodore" with the alias "the", "a" whose subject has the other object "THE", that "THE",
# and "apple pie" (wrong): 4 of 5; the sixth line has no obj_label and is skipped with its place.
$tiny "$tmp/bias" "$spm" bias ▁the 12 > /dev/null
mkdir -p "$tmp/hand/facts" "$tmp/hand/templates" "$tmp/hand/alias"
cat > "$tmp/hand/facts/P9001.jsonl" <<'J'
{"uuid": "1", "predicate_id": "P9001", "sub_uri": "Q1", "sub_label": "Alpha", "obj_uri": "Q2", "obj_label": "The"}
{"uuid": "2", "predicate_id": "P9001", "sub_uri": "Q3", "sub_label": "Beta", "obj_uri": "Q4", "obj_label": "Theodore"}
{"uuid": "3", "predicate_id": "P9001", "sub_uri": "Q5", "sub_label": "Gamma", "obj_uri": "Q6", "obj_label": "a"}
{"uuid": "4", "predicate_id": "P9001", "sub_uri": "Q5", "sub_label": "Gamma", "obj_uri": "Q7", "obj_label": "THE"}
{"uuid": "5", "predicate_id": "P9001", "sub_uri": "Q8", "sub_label": "Delta", "obj_uri": "Q9", "obj_label": "apple pie"}
{"uuid": "6", "predicate_id": "P9001", "sub_uri": "Q10", "sub_label": "Epsilon", "obj_uri": "Q11"}
J
echo '{"relation": "P9001", "template": "[X] is about [Y] ."}' > "$tmp/hand/templates/en.jsonl"
printf 'Q4\tTed\tthe\n' > "$tmp/hand/alias/en.txt"
h=$tmp/hand
"$bin/probe" --model "$tmp/bias" --facts "$h/facts" --templates "$h/templates" --aliases "$h/alias" \
  --method independent,order,confidence -o "$h/r" --predictions "$h/p.jsonl" --stats "$h/s.json" 2> "$h/err"
grep -q 'P9001.jsonl:6: no "obj_label"' "$h/err" || fail "the bad fact is not reported with its place: $(cat "$h/err")"
[ "$(stat_of "$h/s.json" bad_records)" = 1 ] || fail "bad_records"
for m in independent order confidence; do
  [ "$(col "$h/r.tsv" $m P9001 all)" = 80.00 ] || fail "$m: accuracy $(col "$h/r.tsv" $m P9001 all), expected 80.00"
  [ "$(col "$h/r.tsv" $m macro all)" = 80.00 ] || fail "$m: macro"
done
python3 - "$h/p.jsonl" <<'PY' || fail "the hand-worked predictions"
import json, math, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
want = 12 - math.log(math.exp(12) + 1001)
assert len(rows) == 15, len(rows)
for r in rows:
    assert r["prediction"] == "the" and r["token_ids"] == [8] and r["num_mask"] == 1, r
    assert abs(r["log_probs"][0] - want) < 1e-5, (r["log_probs"], want)
    assert [c["num_mask"] for c in r["candidates"]] == [1, 2, 3, 4, 5]
    assert abs(r["candidates"][4]["score"] - 5 * want) < 1e-4
    assert r["correct"] == (r["obj_uri"] != "Q9"), r
PY
# Without the aliases Beta's answer is wrong; --norm ties every mask count (the fewest wins).
probe --model "$tmp/bias" --facts "$h/facts" --templates "$h/templates" --norm -o "$h/r2" --predictions "$h/p2.jsonl"
[ "$(col "$h/r2.tsv" independent P9001 all)" = 60.00 ] || fail "without aliases: $(col "$h/r2.tsv" independent P9001 all)"
grep -c '"num_mask": 1, "prediction": "the"' "$h/p2.jsonl" | grep -qx 5 || fail "--norm: the fewest masks should win a tie"
# --skip-short-aliases: "the" (three lower-case letters, like the language codes "de", "en") no longer counts.
probe --model "$tmp/bias" --facts "$h/facts" --templates "$h/templates" --aliases "$h/alias" --skip-short-aliases \
  -o "$h/r3" --stats "$h/s3.json"
[ "$(col "$h/r3.tsv" independent P9001 all)" = 60.00 ] || fail "--skip-short-aliases: $(col "$h/r3.tsv" independent P9001 all)"
[ "$(stat_of "$h/s3.json" short_aliases_skipped)" -ge 1 ] || fail "short_aliases_skipped"
ok "hand-built model: known answer and log-probability; case, alias and other-object matching; --norm; --skip-short-aliases"

# 2. A random 2-layer model on the fixtures: four languages, four relations, three methods, checked
# independently; --threads 2 gives identical files.
$tiny "$tmp/random" "$spm" random 7 > /dev/null
"$bin/wd-extract" "$fx/xfactr-kg-dev.json.gz" -o "$tmp/kg.h5" --langs en,fr,ru,es -q
rels=P19,P36,P27,P103
run_random() {
  probe --model "$tmp/random" --facts "$x/facts" --templates "$x/templates" --aliases "$x/alias" --kg "$tmp/kg.h5" \
    --lang en,fr,ru,es --relations $rels --max-facts 60 --method independent,order,confidence "$@"
}
run_random -o "$tmp/x1" --predictions "$tmp/x1.jsonl" --stats "$tmp/x1.stats.json" --threads 1
python3 "$src/tests/cli/probe_check.py" "$x/facts" "$x/alias" "$fx/xfactr-kg-dev.json.gz" "$spm" "$tmp/x1.json" \
  "$tmp/x1.jsonl" "$tmp/x1.stats.json" en,fr,ru,es $rels 60 independent,order,confidence
[ "$(stat_of "$tmp/x1.stats.json" uninflected.ru)" -gt 0 ] || fail "ru's case marks were not counted"
[ "$(stat_of "$tmp/x1.stats.json" missing_function_words.fr)" = 0 ] || fail "fr's function words all have a rule"
# Other thread counts and batches change the gemms' blocking, and OpenBLAS's rounding depends on it
# on some CPUs (AMD Zen: a row's product differs in the last bit with the rows around it), so the
# last digits of a log-probability may move; the predictions and scores may not.
run_random -o "$tmp/x2" --predictions "$tmp/x2.jsonl" --threads 2
run_random -o "$tmp/x3" --predictions "$tmp/x3.jsonl" --batch 7
run_random -o "$tmp/x4" --predictions "$tmp/x4.jsonl" --batch-tokens 300
for other in x2 x3 x4; do
  cmp -s "$tmp/x1.tsv" "$tmp/$other.tsv" || fail "$other (--threads 2, --batch 7, --batch-tokens) changed the scores"
  python3 - "$tmp/x1.jsonl" "$tmp/$other.jsonl" <<'PY' || fail "$other (--threads 2, --batch 7, --batch-tokens) changed the predictions"
import json, sys
a, b = ([json.loads(l) for l in open(p)] for p in sys.argv[1:])
assert len(a) == len(b)
for x, y in zip(a, b):
    assert (x["token_ids"], x["num_mask"], x["correct"]) == (y["token_ids"], y["num_mask"], y["correct"])
    assert abs(x["score"] - y["score"]) < 1e-4
PY
done
ok "fixtures: every verdict, count and macro score agrees with the independent check; --threads 2, --batch 7 and --batch-tokens 300 the same predictions and scores"

# --device cuda: with a GPU, it runs (tests/gpu compares it with the CPU); without one, exit 1 with
# one line that says why, as every tool does, and nothing written.
code=0; probe --model "$tmp/random" --facts "$x/facts" --templates "$x/templates" --relations P19 --max-facts 5 \
  --device cuda -o "$tmp/gpu" 2> "$tmp/err" || code=$?
if [ $code -ne 0 ]; then
  [ $code -eq 1 ] && [ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -q -- "^probe: error: --device cuda: " "$tmp/err" &&
    [ ! -e "$tmp/gpu.tsv" ] || fail "--device cuda without a GPU: exit $code: $(cat "$tmp/err")"
  ok "--device cuda without a GPU: exit 1, '$(cat "$tmp/err")'"
fi

# 3. Against the torch peer (X-FACTR's decoding over transformers' XLMRobertaForMaskedLM, in the
# environment of `make references`) on the same model: the same mask count and tokens for every
# English fact and method.
peer_python="$bin/../references-venv/bin/python"
if [ -x "$peer_python" ] && "$peer_python" -c "import torch, transformers" 2> /dev/null; then
  probe --model "$tmp/random" --facts "$x/facts" --templates "$x/templates" --relations $rels --max-facts 60 \
    --method independent,order,confidence -o "$tmp/t" --predictions "$tmp/kglm.jsonl"
  "$peer_python" "$src/bench/reference/probe_torch.py" --model "$tmp/random" --facts "$x/facts" \
    --templates "$x/templates/en.jsonl" --relations $rels --max-facts 60 --method independent,order,confidence \
    --predictions "$tmp/torch.jsonl" > /dev/null
  python3 - "$tmp/kglm.jsonl" "$tmp/torch.jsonl" <<'PY' || fail "kglm and torch disagree"
import json, sys
key = lambda p: (p["method"], p["relation"], p["sub_uri"], p["obj_uri"])
a = {key(p): (p["num_mask"], p["token_ids"]) for p in map(json.loads, open(sys.argv[1]))}
b = {key(p): (p["num_mask"], p["token_ids"]) for p in map(json.loads, open(sys.argv[2]))}
assert a.keys() == b.keys(), (len(a), len(b))
bad = [k for k in a if a[k] != b[k]]
assert not bad, (len(bad), bad[:3], [a[k] for k in bad[:3]], [b[k] for k in bad[:3]])
print(f"torch peer: {len(a)} predictions identical")
PY
  ok "the torch peer makes the same predictions"
else
  echo "note: no reference environment with torch and transformers (make references): the comparison with the torch peer is left out"
fi

# 4. Genders from a KG store (P21): fr "[X] est [né|née] ..."; no P21: X-FACTR's ending rule
# ("Sacha Dupont": masculine); "à" before a city (P31: city), as X-FACTR. Facts drawn from the store
# (no --facts) probe the same three.
cat > "$tmp/genders.json" <<'J'
[
{"type":"property","datatype":"wikibase-item","id":"P19","labels":{"en":{"language":"en","value":"place of birth"}},"claims":{}},
{"type":"property","datatype":"wikibase-item","id":"P21","labels":{"en":{"language":"en","value":"sex or gender"}},"claims":{}},
{"type":"item","id":"Q6581072","labels":{"en":{"language":"en","value":"female"}},"claims":{}},
{"type":"item","id":"Q6581097","labels":{"en":{"language":"en","value":"male"}},"claims":{}},
{"type":"property","datatype":"wikibase-item","id":"P31","labels":{"en":{"language":"en","value":"instance of"}},"claims":{}},
{"type":"item","id":"Q515","labels":{"en":{"language":"en","value":"city"}},"claims":{}},
{"type":"item","id":"Q90","labels":{"en":{"language":"en","value":"Paris"},"fr":{"language":"fr","value":"Paris"}},"claims":{"P31":[{"mainsnak":{"snaktype":"value","property":"P31","datavalue":{"value":{"entity-type":"item","id":"Q515"},"type":"wikibase-entityid"}},"type":"statement","rank":"normal"}]}},
{"type":"item","id":"Q100","labels":{"en":{"language":"en","value":"Marie Dupont"},"fr":{"language":"fr","value":"Marie Dupont"}},"claims":{"P21":[{"mainsnak":{"snaktype":"value","property":"P21","datavalue":{"value":{"entity-type":"item","id":"Q6581072"},"type":"wikibase-entityid"}},"type":"statement","rank":"normal"}],"P19":[{"mainsnak":{"snaktype":"value","property":"P19","datavalue":{"value":{"entity-type":"item","id":"Q90"},"type":"wikibase-entityid"}},"type":"statement","rank":"normal"}]}},
{"type":"item","id":"Q101","labels":{"en":{"language":"en","value":"Jean Dupont"},"fr":{"language":"fr","value":"Jean Dupont"}},"claims":{"P21":[{"mainsnak":{"snaktype":"value","property":"P21","datavalue":{"value":{"entity-type":"item","id":"Q6581097"},"type":"wikibase-entityid"}},"type":"statement","rank":"normal"}],"P19":[{"mainsnak":{"snaktype":"value","property":"P19","datavalue":{"value":{"entity-type":"item","id":"Q90"},"type":"wikibase-entityid"}},"type":"statement","rank":"normal"}]}},
{"type":"item","id":"Q102","labels":{"en":{"language":"en","value":"Sacha Dupont"},"fr":{"language":"fr","value":"Sacha Dupont"}},"claims":{"P19":[{"mainsnak":{"snaktype":"value","property":"P19","datavalue":{"value":{"entity-type":"item","id":"Q90"},"type":"wikibase-entityid"}},"type":"statement","rank":"normal"}]}}
]
J
"$bin/wd-extract" "$tmp/genders.json" -o "$tmp/genders.h5" --langs en,fr -q
probe --model "$tmp/random" --kg "$tmp/genders.h5" --relations P19 --templates "$x/templates" --langs fr,en \
  -o "$tmp/g" --predictions "$tmp/g.jsonl" --stats "$tmp/g.stats.json"
python3 - "$tmp/g.jsonl" <<'PY' || fail "genders"
import json, sys
rows = {(r["lang"], r["sub_uri"]): r["sentence"] for r in map(json.loads, open(sys.argv[1]))}
assert rows[("fr", "Q100")].startswith("Marie Dupont est née à <mask>"), rows
assert rows[("fr", "Q101")].startswith("Jean Dupont est né à <mask>"), rows
assert rows[("fr", "Q102")].startswith("Sacha Dupont est né à <mask>"), rows
assert rows[("en", "Q100")].startswith("Marie Dupont was born in <mask>"), rows
PY
[ "$(stat_of "$tmp/g.stats.json" facts_read)" = 3 ] || fail "facts drawn from the store"
ok "genders from P21 (else the ending rule), classes from P31; facts drawn from a KG store"

# 5. Bad input: an unknown relation, a template without [Y], a bad model, garbage facts; each a
# one-line error naming the culprit. Special outputs: --predictions into a FIFO and /dev/fd;
# SIGTERM mid-run leaves the old results and no temporary.
expect_error() {  # WHAT PATTERN COMMAND...
  local what=$1 pattern=$2
  shift 2
  if "$@" -q 2> "$tmp/err"; then fail "$what: succeeded"; fi
  grep -q "$pattern" "$tmp/err" || fail "$what: $(cat "$tmp/err")"
}
base=(--model "$tmp/bias" --templates "$h/templates" -o "$tmp/bad")
expect_error "unknown relation" "no fact file for P12345" "$bin/probe" "${base[@]}" --facts "$x/facts" --relations P12345
expect_error "relation absent from a file" "no fact of P36" "$bin/probe" "${base[@]}" --facts "$h/facts/P9001.jsonl" --relations P36
mkdir -p "$tmp/noy"
echo '{"relation": "P9001", "template": "[X] is about ."}' > "$tmp/noy/en.jsonl"
expect_error "template without [Y]" "en.jsonl:1: template of P9001: template lacks" "$bin/probe" --model "$tmp/bias" \
  --templates "$tmp/noy" --facts "$h/facts" -o "$tmp/bad"
expect_error "not a model" "config.json" "$bin/probe" --model "$h" --templates "$h/templates" --facts "$h/facts" -o "$tmp/bad"
head -c 4096 /dev/urandom > "$tmp/P9001.jsonl"
expect_error "random facts" "P9001.jsonl" "$bin/probe" "${base[@]}" --facts "$tmp/P9001.jsonl"
expect_error "a KG store as facts" "kg.h5" "$bin/probe" "${base[@]}" --facts "$tmp/kg.h5"
[ ! -e "$tmp/bad.tsv" ] || fail "a failed run wrote results"
mkfifo "$tmp/fifo"
cat "$tmp/fifo" > "$tmp/from-fifo" &
reader=$!
probe --model "$tmp/bias" --facts "$h/facts" --templates "$h/templates" -o "$tmp/f" --predictions "$tmp/fifo"
wait $reader
[ -p "$tmp/fifo" ] && [ "$(wc -l < "$tmp/from-fifo")" = 5 ] || fail "--predictions into a FIFO"
probe --model "$tmp/bias" --facts "$h/facts" --templates "$h/templates" -o "$tmp/f" --predictions >(wc -l > "$tmp/count")
sleep 0.5
[ "$(cat "$tmp/count")" = 5 ] || fail "--predictions into /dev/fd"
printf 'precious\n' > "$tmp/s.tsv"
mkfifo "$tmp/slow"
"$bin/probe" --model "$tmp/bias" --facts "$tmp/slow" --templates "$h/templates" -o "$tmp/s" -q 2> "$tmp/s.err" &
pid=$!
exec 7> "$tmp/slow"
head -n 2 "$h/facts/P9001.jsonl" >&7
sleep 1
kill -TERM $pid
wait $pid && rc=0 || rc=$?
exec 7>&-
[ "$rc" = 143 ] || fail "SIGTERM: exit $rc: $(cat "$tmp/s.err")"
[ "$(cat "$tmp/s.tsv")" = precious ] || fail "SIGTERM touched the old results"
ls "$tmp" | grep -q '\.tmp\.' && fail "SIGTERM left a temporary: $(ls "$tmp")"
ok "bad inputs refused with the culprit named; FIFO and /dev/fd outputs; SIGTERM"
# 6. X-FACTR's complete templates (46 relations in 12 languages, every markup form of the benchmark):
# the whole run goes through; French, Spanish and Greek sentences agree with an independent
# implementation of X-FACTR's rules (xfactr_templates_check.py); he P47's [Х] is read and said; a
# broken template line costs its relation in its language only; UniMorph tables inflect case slots
# and the answers with them. --lang is --langs's alias; both at once is a usage error.
all=$x/templates-all
langs12=bn,el,en,es,fr,he,ko,mr,ru,tr,vi,yo
"$bin/wd-extract" "$fx/xfactr-kg-dev.json.gz" -o "$tmp/kg12.h5" --langs $langs12 -q
# A tokenizer for all twelve scripts (the fixture's is English): SentencePiece trained on the KG's labels.
PYTHONPATH=$src/tests/cli python3 - "$fx/xfactr-kg-dev.json.gz" > "$tmp/labels.txt" <<'PY'
import sys, wikidata_dump
langs = "bn el en es fr he ko mr ru tr vi yo".split()
for e in wikidata_dump.items(sys.argv[1]):
    labels = e.get("labels", {})
    print("\n".join(labels[l]["value"] for l in langs if l in labels))
PY
spm_train --input "$tmp/labels.txt" --model_prefix "$tmp/multi" --vocab_size 4000 --byte_fallback \
  --character_coverage 1.0 --minloglevel 2 > /dev/null 2>&1 || fail "spm_train"
$tiny "$tmp/multi-mlm" "$tmp/multi.model" random 7 > /dev/null
mkdir -p "$tmp/unimorph"
# A hand-written table in UniMorph's format (lemma, form, features): Russian genitives of countries.
printf '%s\tN;GEN;SG\n' "Дания	Дании" "Швеция	Швеции" "Япония	Японии" "Норвегия	Норвегии" "Ирландия	Ирландии" \
  "Аргентина	Аргентины" "Канада	Канады" "Бразилия	Бразилии" "Франция	Франции" "Финляндия	Финляндии" > "$tmp/unimorph/rus"
printf 'идти\tшёл\tV;PST;SG;MASC\nФранция\tФранцию\tN;ACC;SG\n' >> "$tmp/unimorph/rus"
"$bin/probe" --model "$tmp/multi-mlm" --facts "$x/facts" --templates "$all" --kg "$tmp/kg12.h5" --langs $langs12 \
  --max-facts 25 --inflections "$tmp/unimorph" -o "$tmp/all" --predictions "$tmp/all.jsonl" \
  --stats "$tmp/all.stats.json" 2> "$tmp/all.err" || fail "templates-all: $(tail -3 "$tmp/all.err")"
grep -q "he.jsonl:[0-9]*: template of P47: \[Х\] (U+0425) read as \[X\]" "$tmp/all.err" || fail "he P47's [Х] was not said"
python3 - "$tmp/all.json" "$tmp/all.stats.json" "$tmp/all.jsonl" <<'PY' || fail "templates-all: every language and relation"
import json, sys
result, stats = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
langs = "bn el en es fr he ko mr ru tr vi yo".split()
for lang in langs:
    rels = [r for r in result["relations"] if r["lang"] == lang]
    assert len(rels) == 23, (lang, len(rels))
    assert sum(r["facts"] for r in rels) > 100, (lang, sum(r["facts"] for r in rels))
    assert stats.get("templates_skipped." + lang, 0) == 0, lang
assert stats["inflected.ru"] >= 8 and stats["inflected.tr"] > 0, stats
assert stats["uninflected.ru"] > 0 and stats["kept_plain.ru"] > 0, stats
rows = [json.loads(l) for l in open(sys.argv[3])]
gold = {(r["relation"], r["obj_label"]): r["gold"] for r in rows if r["lang"] == "ru"}
assert gold[("P1376", "Франция")] == "Франции" and gold[("P1376", "Индия")] == "Индия", gold
assert any(r["lang"] == "tr" and r["gold"].endswith("'dır") for r in rows)
PY
python3 "$src/tests/cli/xfactr_templates_check.py" "$all" "$fx/xfactr-kg-dev.json.gz" "$tmp/all.jsonl" ||
  fail "fr, es, el sentences differ from X-FACTR's rules"
mkdir -p "$tmp/broken"
sed '1s/"template": "\[X\]/"template": "[X/' "$all/fr.jsonl" > "$tmp/broken/fr.jsonl"
cp "$all/en.jsonl" "$tmp/broken/"
probe --model "$tmp/multi-mlm" --facts "$x/facts" --templates "$tmp/broken" --kg "$tmp/kg12.h5" --lang fr,en \
  --relations P19,P36 --max-facts 5 -o "$tmp/br" --stats "$tmp/br.stats.json" 2> "$tmp/br.err" || fail "a broken template stopped the run"
grep -q "fr.jsonl:1: template of P19: unbalanced '\\[' at byte 0; P19 is not probed in fr" "$tmp/br.err" ||
  fail "the broken template is not reported with its place: $(cat "$tmp/br.err")"
[ "$(stat_of "$tmp/br.stats.json" templates_skipped.fr)" = 1 ] || fail "templates_skipped.fr"
[ "$(cut -f2,3 "$tmp/br.tsv" | grep -c '^fr	P\(19\|36\)$')" = 1 ] && [ "$(cut -f2,3 "$tmp/br.tsv" | grep -c '^en	P\(19\|36\)$')" = 2 ] ||
  fail "P19 should be left out of fr only: $(cut -f1-3 "$tmp/br.tsv")"
expect_error "--lang and --langs" "give one of them" "$bin/probe" "${base[@]}" --facts "$h/facts" --lang en --langs en
ok "X-FACTR's complete templates in 12 languages: no abort, fr/es/el as X-FACTR's rules, a bad line costs its relation, UniMorph tables"
echo "probe: $pass checks passed"
