#!/usr/bin/env bash
# CLI tests of kg-align and verbalize on real data: the dev KG (X-FACTR facts, 23 relations) with the
# Wikipedia excerpt. Alignments are checked against the rules by an independent checker
# (kg_align_check.py: every aligned object is written in its sentence; every object name written
# in a mapped lead is aligned), subgraphs against the KG's triples (kg-tsv), rendering against the
# X-FACTR templates; determinism across --threads; bad input.
# Usage: kg-align.sh BIN_DIR FIXTURES_DIR SOURCE_DIR
set -euo pipefail
bin=$1
fx=$2
src=$3
source "$src/tests/cli/common.sh" "$fx/xfactr-kg-dev.json.gz"
check="python3 $src/tests/cli/kg_align_check.py"

"$bin/wd-extract" "$fx/xfactr-kg-dev.json.gz" -o "$tmp/kg.h5" --langs en,fr,es,ru,vi,ko,tr --sites enwiki \
  --tsv "$tmp/tsv" -q
"$bin/wiki-extract" "$fx/wikipedia/enwiki-sample-a.xml.bz2" -o "$tmp/docs.jsonl" --redirects "$tmp/redirects.tsv" -q

# 1. Alignment: soundness and completeness against the KG's names, Table 1 statistics.
"$bin/kg-align" --kg "$tmp/kg.h5" --redirects "$tmp/redirects.tsv" --cooc "$tmp/cooc.tsv" -o "$tmp/aligned.jsonl" \
  --stats "$tmp/align.json" -q "$tmp/docs.jsonl"
$check align "$tmp/tsv" "$tmp/docs.jsonl" "$tmp/redirects.tsv" "$tmp/aligned.jsonl" "$tmp/cooc.tsv" "$tmp/align.json"
ok "alignments follow the rules on the excerpt ($(stat_of "$tmp/align.json" sentences_aligned) sentences)"

# 2. Byte-identical for any thread count, and from gzip input.
gzip -c "$tmp/docs.jsonl" > "$tmp/docs.jsonl.gz"
"$bin/kg-align" --kg "$tmp/kg.h5" --redirects "$tmp/redirects.tsv" --cooc "$tmp/cooc1.tsv" -o "$tmp/aligned1.jsonl" \
  --threads 1 -q "$tmp/docs.jsonl.gz"
cmp -s "$tmp/aligned.jsonl" "$tmp/aligned1.jsonl" || fail "alignment differs with --threads 1"
cmp -s "$tmp/cooc.tsv" "$tmp/cooc1.tsv" || fail "co-occurrence differs with --threads 1"
ok "kg-align deterministic across threads and compression"

# 3. Subgraphs: every statement of the KG exactly once, <= 5 per subgraph, greedy order.
"$bin/verbalize" subgraphs --kg "$tmp/kg.h5" --cooc "$tmp/cooc.tsv" -o "$tmp/subgraphs.jsonl" \
  --stats "$tmp/sub.json" -q --threads 2
$check subgraphs "$tmp/tsv" "$tmp/cooc.tsv" "$tmp/subgraphs.jsonl"
"$bin/verbalize" subgraphs --kg "$tmp/kg.h5" --cooc "$tmp/cooc.tsv" -o "$tmp/subgraphs1.jsonl" -q --threads 1
cmp -s "$tmp/subgraphs.jsonl" "$tmp/subgraphs1.jsonl" || fail "subgraphs differ with --threads 1"
ok "subgraphs: $(stat_of "$tmp/sub.json" subgraphs) cover all $(stat_of "$tmp/sub.json" total_triples) triples once"

# 4. Rendering: templates of 7 languages, kmlm and linearize forms, grouping by subject.
langs=en,fr,es,ru,vi,ko,tr
"$bin/verbalize" render --kg "$tmp/kg.h5" --mode template --templates "$fx/xfactr/templates" --langs $langs \
  -o "$tmp/template.jsonl" --stats "$tmp/tpl.json" -q "$tmp/subgraphs.jsonl"
"$bin/verbalize" render --kg "$tmp/kg.h5" --mode kmlm --langs $langs --split-by-lang "$tmp/kmlm" -q "$tmp/subgraphs.jsonl"
"$bin/verbalize" render --kg "$tmp/kg.h5" --mode linearize --langs en --group-by-subject -o "$tmp/linear.jsonl" -q \
  "$tmp/subgraphs.jsonl"
$check render "$tmp/template.jsonl" "$tmp/kmlm" "$tmp/linear.jsonl" "$tmp/subgraphs.jsonl"
[ "$(stat_of "$tmp/tpl.json" template_fallbacks)" = 0 ] || fail "the X-FACTR templates cover the dev KG's relations"
ok "rendered $(stat_of "$tmp/tpl.json" statements_rendered) statements from templates in 7 languages"
# A broken template line costs its relation in its language only: a warning with its place, the
# relation's statements fall back (template) or are left out (pairs), the run goes on.
mkdir -p "$tmp/broken-tpl"
cp "$fx/xfactr/templates/en.jsonl" "$tmp/broken-tpl/"
sed '1s/"template": "\[X\]/"template": "[X/' "$fx/xfactr/templates/fr.jsonl" > "$tmp/broken-tpl/fr.jsonl"
for mode in template pairs; do
  "$bin/verbalize" render --kg "$tmp/kg.h5" --mode $mode --templates "$tmp/broken-tpl" --langs en,fr \
    -o "$tmp/broken-$mode.jsonl" --stats "$tmp/broken-$mode.json" "$tmp/subgraphs.jsonl" 2> "$tmp/broken.err" ||
    fail "render --mode $mode: a broken template stopped the run"
  grep -q "fr.jsonl:1: template of P19: unbalanced '\\['.*P19 is not rendered by template in fr" "$tmp/broken.err" ||
    fail "render --mode $mode: the broken template is not reported: $(cat "$tmp/broken.err")"
  [ "$(stat_of "$tmp/broken-$mode.json" templates_skipped.fr)" = 1 ] || fail "templates_skipped.fr ($mode)"
  [ "$(stat_of "$tmp/broken-$mode.json" records.en)" -gt 0 ] || fail "render --mode $mode: English should be rendered"
done
# (pairs need relation labels in the language, and the dev KG has English ones only)
[ "$(stat_of "$tmp/broken-template.json" records.fr)" -gt 0 ] || fail "render --mode template: French should be rendered"
[ "$(stat_of "$tmp/broken-template.json" template_fallbacks)" -gt 0 ] || fail "fr P19 should fall back to the kmlm form"
ok "a broken template line costs its relation in its language (template and pairs modes)"

# 6. Silver QA (kg-align qa): SQuAD v1.1 from the same alignments, checked independently (every answer
#    the span at its answer_start, a name of an object of its subject and relation; questions from
#    data/questions; every aligned item statement asked), paragraph and sentence contexts; deterministic.
for context in paragraph sentence; do
  "$bin/kg-align" qa --kg "$tmp/kg.h5" --redirects "$tmp/redirects.tsv" --questions "$src/data/questions" \
    --context $context -o "$tmp/silver-$context.json" --stats "$tmp/silver-$context.stats.json" -q "$tmp/docs.jsonl"
  $check qa "$tmp/tsv" "$tmp/docs.jsonl" "$src/data/questions/en.jsonl" "$tmp/aligned.jsonl" "$tmp/silver-$context.json" \
    "$tmp/silver-$context.stats.json" $context
done
"$bin/kg-align" qa --kg "$tmp/kg.h5" --redirects "$tmp/redirects.tsv" --questions "$src/data/questions" --threads 1 \
  -o "$tmp/silver1.json" -q "$tmp/docs.jsonl.gz"
cmp -s "$tmp/silver-paragraph.json" "$tmp/silver1.json" || fail "kg-align qa differs with --threads 1"
ok "kg-align qa: $(stat_of "$tmp/silver-paragraph.stats.json" qa_questions) silver questions, sound and complete"
# In another language: the demo KG (data/wikidata-sample.json) given dewiki sitelinks and, where it
# has no German label, its English one (the same for these names); two German articles written for
# this test. Questions from data/questions/de.jsonl, or the query form with the German relation
# label (P30 has no German form); answer_start counts code points (the "ä" before "Physiker").
python3 - "$src/data/wikidata-sample.json" > "$tmp/de-kg.json" <<'PY'
import json, sys
entities = json.load(open(sys.argv[1], encoding="utf-8"))
print("[")
for k, e in enumerate(entities):
    labels = e.get("labels", {})
    if "de" not in labels and "en" in labels:
        labels["de"] = {"language": "de", "value": labels["en"]["value"]}
    if e["type"] == "item" and "de" in labels:
        e["sitelinks"] = {"dewiki": {"site": "dewiki", "title": labels["de"]["value"]}}
    print(json.dumps(e, ensure_ascii=False) + ("," if k + 1 < len(entities) else ""))
print("]")
PY
python3 - > "$tmp/de-docs.jsonl" <<'PY'
import json
for id, title, text in [
        ("1", "Marie Curie", "Marie Curie wurde in Warschau geboren. Sie lehrte an der Universität Paris als Physiker und "
         "Chemiker.\nSie erhielt den Nobelpreis für Physik."),
        ("2", "Deutschland", "Deutschland ist ein Staat in Europa. Die Hauptstadt ist Berlin.")]:
    print(json.dumps({"id": id, "title": title, "text": text, "links": [], "sections": [],
                      "root_end": len(text.encode())}, ensure_ascii=False))
PY
"$bin/wd-extract" "$tmp/de-kg.json" -o "$tmp/de-kg.h5" --langs de --sites dewiki -q
"$bin/kg-align" qa --kg "$tmp/de-kg.h5" --lang de --questions "$src/data/questions" -o "$tmp/de-silver.json" -q \
  "$tmp/de-docs.jsonl"
python3 - "$tmp/de-silver.json" <<'PY' || fail "kg-align qa --lang de"
import json, sys
got = []
for article in json.load(open(sys.argv[1], encoding="utf-8"))["data"]:
    for p in article["paragraphs"]:
        for q in p["qas"]:
            for a in q["answers"]:
                assert p["context"][a["answer_start"]:][:len(a["text"])] == a["text"], (p["context"], a)
            got.append((q["id"], q["question"], [a["text"] for a in q["answers"]]))
want = [("1-0-P19", "Wo wurde Marie Curie geboren?", ["Warschau"]),
        ("1-0-P106", "Welchen Beruf hat Marie Curie?", ["Physiker", "Chemiker"]),
        ("1-1-P166", "Welche Auszeichnung hat Marie Curie erhalten?", ["Nobelpreis für Physik"]),
        ("2-0-P31", "Was ist Deutschland?", ["Staat"]),
        ("2-0-P30", "Deutschland Kontinent?", ["Europa"]),
        ("2-0-P36", "Was ist die Hauptstadt von Deutschland?", ["Berlin"])]
assert got == want, got
PY
ok "kg-align qa --lang de: German names, forms and the query form, code-point offsets"
code=0; "$bin/kg-align" qa --kg "$tmp/kg.h5" --context document -o "$tmp/x.json" "$tmp/docs.jsonl" 2> /dev/null || code=$?
[ $code = 2 ] && [ ! -e "$tmp/x.json" ] || fail "bad --context: exit 2 and no output expected (exit $code)"
mkdir -p "$tmp/bad-q"
printf '{"relation": "P19", "question": "Where was he born?"}\n' > "$tmp/bad-q/en.jsonl"
code=0; "$bin/kg-align" qa --kg "$tmp/kg.h5" --questions "$tmp/bad-q" -o "$tmp/x.json" "$tmp/docs.jsonl" 2> "$tmp/err.txt" ||
  code=$?
[ $code = 1 ] && grep -q "en.jsonl:1: the question of P19 must hold \[X\] once" "$tmp/err.txt" || fail "a form without [X]: exit $code $(cat "$tmp/err.txt")"
ok "kg-align qa: bad --context and question files without a usable form refused"

# 5. Bad input: a broken document line and a broken subgraph line are reported with file:line and
#    skipped; a malformed co-occurrence table and a missing KG stop with exit 1; usage errors exit 2.
{ head -3 "$tmp/docs.jsonl"; echo '{"id": broken'; tail -n +4 "$tmp/docs.jsonl"; } > "$tmp/bad-docs.jsonl"
"$bin/kg-align" --kg "$tmp/kg.h5" --redirects "$tmp/redirects.tsv" -o "$tmp/bad.jsonl" "$tmp/bad-docs.jsonl" \
  --stats "$tmp/bad.json" -q 2> "$tmp/err.txt" || fail "one bad document must not stop kg-align"
grep -q "bad-docs.jsonl:4:" "$tmp/err.txt" || fail "bad document not reported with its line: $(cat "$tmp/err.txt")"
cmp -s "$tmp/bad.jsonl" <(sed -n p "$tmp/aligned.jsonl") || fail "the good documents' alignments changed"
{ head -2 "$tmp/subgraphs.jsonl"; echo '{"subject":"Q1","facts":[["P1"]]}'; } > "$tmp/bad-sub.jsonl"
"$bin/verbalize" render --kg "$tmp/kg.h5" --langs en -o "$tmp/bad-render.jsonl" "$tmp/bad-sub.jsonl" -q \
  2> "$tmp/err.txt" || fail "one bad subgraph must not stop render"
grep -q "bad-sub.jsonl:3:" "$tmp/err.txt" || fail "bad subgraph not reported: $(cat "$tmp/err.txt")"
printf 'P17\tP31\tmany\n' > "$tmp/bad-cooc.tsv"
if "$bin/verbalize" subgraphs --kg "$tmp/kg.h5" --cooc "$tmp/bad-cooc.tsv" -o "$tmp/x.jsonl" -q 2> "$tmp/err.txt"; then
  fail "a malformed co-occurrence table must fail"
fi
grep -q "bad-cooc.tsv:1:" "$tmp/err.txt" || fail "malformed co-occurrence line not located"
[ ! -e "$tmp/x.jsonl" ] || fail "a failed run left an output file"
set +e
"$bin/kg-align" --kg "$tmp/missing.h5" -o "$tmp/x.jsonl" "$tmp/docs.jsonl" -q 2> /dev/null
[ $? = 1 ] || fail "missing KG: exit 1 expected"
"$bin/verbalize" render --kg "$tmp/kg.h5" --mode poem -o "$tmp/x.jsonl" "$tmp/subgraphs.jsonl" 2> /dev/null
[ $? = 2 ] || fail "bad --mode: exit 2 expected"
"$bin/kg-align" --kg "$tmp/kg.h5" --kinds item,colour -o "$tmp/x.jsonl" "$tmp/docs.jsonl" 2> /dev/null
[ $? = 2 ] || fail "bad --kinds: exit 2 expected"
set -e
ok "bad input located and skipped; unusable input and usage errors exit 1 and 2"
# 6. The synthetic Wikidata and Wikipedia of bench/scale.py (2,000 items; sentences of one to three
#    statements): kg-align's co-occurrence table and the statements and qualifiers that verbalize
#    subgraphs groups equal the generators' own counts; render writes every language of --langs.
/usr/bin/python3 "$src/bench/make-synthetic-wikidata.py" 2000 "$tmp/syn-wd.json" --counts "$tmp/syn-wd.counts.json" \
  2> /dev/null
/usr/bin/python3 "$src/bench/make-synthetic-wikipedia.py" "$tmp/syn-wd.json" "$tmp/syn.xml.bz2" \
  --counts "$tmp/syn.counts.json" 2> /dev/null
"$bin/wd-extract" "$tmp/syn-wd.json" -o "$tmp/syn-kg.h5" -q
"$bin/wiki-extract" "$tmp/syn.xml.bz2" -o "$tmp/syn-docs.jsonl" --redirects "$tmp/syn-redirects.tsv" -q
"$bin/kg-align" --kg "$tmp/syn-kg.h5" --redirects "$tmp/syn-redirects.tsv" --cooc "$tmp/syn-cooc.tsv" \
  -o "$tmp/syn-aligned.jsonl" --stats "$tmp/syn-align.json" -q "$tmp/syn-docs.jsonl"
"$bin/verbalize" subgraphs --kg "$tmp/syn-kg.h5" --cooc "$tmp/syn-cooc.tsv" -o "$tmp/syn-subgraphs.jsonl" \
  --stats "$tmp/syn-subgraphs.json" -q
"$bin/verbalize" render --kg "$tmp/syn-kg.h5" --langs en,de,fr,es -o "$tmp/syn-rendered.jsonl" \
  --stats "$tmp/syn-render.json" -q "$tmp/syn-subgraphs.jsonl"
python3 - "$tmp" <<'PY' || fail "synthetic data: counts differ from the generators'"
import json, sys
d = sys.argv[1] + "/"
load = lambda name: json.load(open(d + name))
wd, wiki, align = load("syn-wd.counts.json"), load("syn.counts.json"), load("syn-align.json")
cooc = [line.rstrip("\n") for line in open(d + "syn-cooc.tsv") if not line.startswith("#")]
assert len(wiki["cooc"]) > 10 and cooc == wiki["cooc"], (cooc, wiki["cooc"])
assert align["triples_aligned"] == wiki["mentions"], (align["triples_aligned"], wiki["mentions"])
sub, render = load("syn-subgraphs.json"), load("syn-render.json")
statements = sum(wd[k] for k in ("item_triples", "literal_quantity", "literal_time", "literal_string",
                                 "literal_monolingualtext"))
assert (sub["triples"], sub["qualifiers"]) == (statements, wd["qualifiers"]), (sub, statements, wd["qualifiers"])
assert sub["subgraphs_of_size_5"] > 0 and render["records.en"] == sub["subgraphs"], (sub, render)
assert all(render.get("records." + lang, 0) > render["records.en"] / 4 for lang in ("de", "fr", "es")), render
PY
ok "synthetic Wikidata and Wikipedia: co-occurrence table, subgraph statements and qualifiers as generated"

# 7. verbalize render --shard: 4 parts of the synthetic subgraphs (one subject's subgraphs kept in one
#    part with --group-by-subject) merge into the one-run output, as a file and as --split-by-lang
#    directories; compressed inputs go whole to one part; an incomplete set and stdin are refused.
r=("$bin/verbalize" render --kg "$tmp/syn-kg.h5" --langs en,de,fr --group-by-subject -q)
"${r[@]}" -o "$tmp/syn-group.jsonl" "$tmp/syn-subgraphs.jsonl"
"${r[@]}" --split-by-lang "$tmp/syn-split" "$tmp/syn-subgraphs.jsonl"
for i in 0 1 2 3; do
  "${r[@]}" --shard $i/4 -o "$tmp/syn-part$i.jsonl" "$tmp/syn-subgraphs.jsonl"
  "${r[@]}" --shard $i/4 --split-by-lang "$tmp/syn-split$i" "$tmp/syn-subgraphs.jsonl"
done
"$bin/verbalize" merge "$tmp"/syn-part{0,1,2,3}.jsonl -o "$tmp/syn-merged.jsonl" -q
"$bin/verbalize" merge "$tmp"/syn-split{0,1,2,3} --split-by-lang "$tmp/syn-split-merged" -q
cmp -s "$tmp/syn-merged.jsonl" "$tmp/syn-group.jsonl" || fail "render shards merged differ from one run"
diff -r "$tmp/syn-split-merged" "$tmp/syn-split" > /dev/null || fail "render --split-by-lang shards differ"
[ -s "$tmp/syn-part1.jsonl" ] || fail "an empty render part"
set +e
"$bin/verbalize" merge "$tmp"/syn-part{0,1,3}.jsonl -o "$tmp/syn-x.jsonl" -q 2> "$tmp/err.txt"
code1=$?
"${r[@]}" --shard 0/2 -o "$tmp/syn-x.jsonl" - < "$tmp/syn-subgraphs.jsonl" 2> "$tmp/err2.txt"
code2=$?
set -e
[ $code1 = 1 ] && [ $code2 = 2 ] && [ ! -e "$tmp/syn-x.jsonl" ] || fail "bad shard sets: exit $code1 $code2"
grep -q "stdin is not a regular file" "$tmp/err2.txt" || fail "stdin: $(cat "$tmp/err2.txt")"
# Plain, gzip and zstd inputs together: the compressed ones whole in one part each.
n=$(wc -l < "$tmp/syn-subgraphs.jsonl")
head -n $((n / 3)) "$tmp/syn-subgraphs.jsonl" > "$tmp/syn-sg-a.jsonl"
sed -n "$((n / 3 + 1)),$((2 * n / 3))p" "$tmp/syn-subgraphs.jsonl" | gzip > "$tmp/syn-sg-b.jsonl.gz"
tail -n +$((2 * n / 3 + 1)) "$tmp/syn-subgraphs.jsonl" | zstd -q > "$tmp/syn-sg-c.jsonl.zst"
mixed=("$tmp/syn-sg-a.jsonl" "$tmp/syn-sg-b.jsonl.gz" "$tmp/syn-sg-c.jsonl.zst")
"$bin/verbalize" render --kg "$tmp/syn-kg.h5" --langs en,de -q -o "$tmp/syn-mixed.jsonl" "${mixed[@]}"
for i in 0 1 2 3 4; do
  "$bin/verbalize" render --kg "$tmp/syn-kg.h5" --langs en,de -q --shard $i/5 -o "$tmp/syn-mixed$i.jsonl" "${mixed[@]}"
done
"$bin/verbalize" merge "$tmp"/syn-mixed{0,1,2,3,4}.jsonl -o "$tmp/syn-mixed-merged.jsonl" -q
cmp -s "$tmp/syn-mixed-merged.jsonl" "$tmp/syn-mixed.jsonl" || fail "render shards of plain + gzip + zstd inputs"
# The same through slurm/verbalize.sbatch as a 3-task array and its --merge.
for i in 0 1 2; do
  SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_COUNT=3 KGLM_BIN=$bin bash "$src/slurm/verbalize.sbatch" "$tmp/syn-kg.h5" \
    "$tmp/syn-subgraphs.jsonl" "$tmp/syn-array/" kmlm - en,de,fr
done
SHARDS=3 KGLM_BIN=$bin bash "$src/slurm/verbalize.sbatch" --merge "$tmp/syn-array/"
diff -r "$tmp/syn-array" "$tmp/syn-split" > /dev/null || fail "slurm/verbalize.sbatch array output differs"
ok "verbalize render --shard: 4 parts (file and --split-by-lang) merge into the one run; bad sets refused"

# 8. render's memory is its KG's labels and the batches in flight, whatever the size of its output:
#    50 copies of the subgraphs (10 times the output of 5 copies, which fill the pipeline) cost at
#    most 32 MB more at the peak (the batches in flight vary with the scheduling: +20 MB seen under
#    CI's load; held output would cost hundreds).
for i in 1 2 3 4 5; do cat "$tmp/syn-subgraphs.jsonl"; done > "$tmp/syn-subgraphs5.jsonl"
for i in 1 2 3 4 5 6 7 8 9 10; do cat "$tmp/syn-subgraphs5.jsonl"; done > "$tmp/syn-subgraphs50.jsonl"
one=$(peak_rss_mb "${r[@]}" --threads 2 -o "$tmp/syn-m1.jsonl" "$tmp/syn-subgraphs5.jsonl")
ten=$(peak_rss_mb "${r[@]}" --threads 2 -o "$tmp/syn-m10.jsonl" "$tmp/syn-subgraphs50.jsonl")
[ "$(stat -c %s "$tmp/syn-m10.jsonl")" -ge $((9 * $(stat -c %s "$tmp/syn-m1.jsonl"))) ] || fail "10x output expected"
[ "$ten" -le $((one + 32)) ] || fail "render: peak $one MB, $ten MB with 10 times the output"
rm "$tmp"/syn-subgraphs{5,50}.jsonl "$tmp"/syn-m{1,10}.jsonl
ok "verbalize render: 10 times the output, peak memory $one -> $ten MB"
echo "kg-align: $pass checks passed"
