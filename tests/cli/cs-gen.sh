#!/usr/bin/env bash
# CLI tests of cs-gen on the real fixtures (the dev KG through wd-extract, the enwiki excerpt
# through wiki-extract), checked from the outputs by cs_gen_check.py, not by cs-gen's counters.
# Usage: cs-gen.sh BIN_DIR FIXTURES_DIR SOURCE_DIR
set -euo pipefail
bin=$1
fx=$2
src=$3
source "$src/tests/cli/common.sh" "$fx/xfactr-kg-dev.json.gz"
check() { python3 "$src/tests/cli/cs_gen_check.py" "$@"; }
cs=$bin/cs-gen
langs=bn,fr,el,he,hu,ko,mr,ru,es,tr,vi,yo  # every non-English label language of the dev KG

"$bin/wd-extract" "$fx/xfactr-kg-dev.json.gz" -o "$tmp/kg.h5" --langs all --tsv "$tmp/tsv" -q
"$bin/wiki-extract" "$fx/wikipedia/enwiki-sample-a.xml.bz2" -o "$tmp/docs.jsonl" --redirects "$tmp/red.tsv" -q
"$bin/wiki-extract" "$fx/wikipedia/enwiki-sample-a.xml.bz2" -o "$tmp/docs.txt" --format plain -q

# 1. Code-switching: spans are English or target labels; switch rate 0.5 +- 0.005 over > 1M draws.
for seed in 1 2; do
  "$cs" kmlm --kg "$tmp/kg.h5" --langs $langs --pairs all --seed $seed -o "$tmp/s$seed.jsonl" -q
done
check kmlm "$tmp/tsv" "$tmp/s1.jsonl" "$tmp/s2.jsonl"
ok "KMLM code-switching: every item is its English or target label; measured switch rate 0.5 +- 0.005"

# 2. Determinism: any --threads, and one language per triple by default.
"$cs" kmlm --kg "$tmp/kg.h5" --langs $langs --alias -o "$tmp/t1.jsonl" --threads 1 -q
"$cs" kmlm --kg "$tmp/kg.h5" --langs $langs --alias -o "$tmp/t2.jsonl" --threads 2 -q
cmp -s "$tmp/t1.jsonl" "$tmp/t2.jsonl" || fail "kmlm --threads 1 and 2 differ"
ok "kmlm output is identical for --threads 1 and 2"

# --shard I/N: 3 parts (each with its record, PART.shard.json) concatenated by cs-gen merge are the
# unsharded output, byte for byte (plain) and after decompression (zstd frames); a set that is not
# every part of one run once, or a part changed since it was written, is refused.
for i in 2 0 1; do
  "$cs" kmlm --kg "$tmp/kg.h5" --langs $langs --alias --shard $i/3 -o "$tmp/part$i.jsonl" --threads $((i + 1)) -q
  "$cs" kmlm --kg "$tmp/kg.h5" --langs $langs --alias --shard $i/3 -o "$tmp/part$i.jsonl.zst" -q
done
"$cs" merge "$tmp"/part{0,1,2}.jsonl -o "$tmp/merged.jsonl" -q
cmp -s "$tmp/merged.jsonl" "$tmp/t1.jsonl" || fail "kmlm parts merged differ from one run"
"$cs" merge "$tmp"/part{0,1,2}.jsonl.zst -o "$tmp/merged.jsonl.zst" -q
zstd -dc "$tmp/merged.jsonl.zst" | cmp -s - "$tmp/t1.jsonl" || fail "zstd parts merged differ from one run"
"$cs" kmlm --kg "$tmp/kg.h5" --langs $langs --shard 1/3 -o "$tmp/other1.jsonl" -q
cp "$tmp/part2.jsonl" "$tmp/cut2.jsonl" && cp "$tmp/part2.jsonl.shard.json" "$tmp/cut2.jsonl.shard.json"
truncate -s -10 "$tmp/cut2.jsonl"
for set in "part0 part2:2 of 3 parts given; missing shard 1" "part0 part1 part1 part2:shard 1/3 a second time" \
  "part0 other1 part2:a shard of another run than" "part0 part1 cut2:but the part was written with" \
  "part0 part1 t2:not a part of a --shard run"; do
  parts=() && for p in ${set%%:*}; do parts+=("$tmp/$p.jsonl"); done
  if "$cs" merge "${parts[@]}" -o "$tmp/bad.jsonl" -q 2> "$tmp/merge.err"; then fail "merged ${set%%:*}"; fi
  grep -qF -- "${set#*:}" "$tmp/merge.err" && [ ! -e "$tmp/bad.jsonl" ] || fail "merge of ${set%%:*}: $(cat "$tmp/merge.err")"
done
ok "kmlm --shard 0..2/3 merged equal one run (plain and zstd); missing, repeated, other-run, changed and record-less parts refused"

# --shard with --split-by-lang (as slurm/cs-gen.sbatch runs it in an array): part directories, each
# recorded in DIR.shard.json, merged language by language into the unsharded directory.
"$cs" kmlm --kg "$tmp/kg.h5" --langs $langs --alias --split-by-lang "$tmp/split-one" -q
for i in 1 2 0; do
  "$cs" kmlm --kg "$tmp/kg.h5" --langs $langs --alias --shard $i/3 --split-by-lang "$tmp/split-part$i" -q
done
"$cs" merge "$tmp"/split-part{2,0,1} --split-by-lang "$tmp/split-merged" -q
diff -r "$tmp/split-one" "$tmp/split-merged" > /dev/null && [ "$(ls "$tmp/split-merged" | wc -l)" -ge 3 ] ||
  fail "--split-by-lang parts merged differ from one run"
if "$cs" merge "$tmp"/split-part{0,2} --split-by-lang "$tmp/split-bad" -q 2> "$tmp/merge.err"; then fail "2 of 3 dirs"; fi
grep -q "2 of 3 parts given; missing shard 1" "$tmp/merge.err" && [ ! -e "$tmp/split-bad" ] || fail "$(cat "$tmp/merge.err")"
truncate -s -1 "$tmp/split-part1/$(ls "$tmp/split-part1" | head -1)"
if "$cs" merge "$tmp"/split-part{0,1,2} --split-by-lang "$tmp/split-bad" -q 2> "$tmp/merge.err"; then fail "changed"; fi
grep -q "but the part was written with" "$tmp/merge.err" && [ ! -e "$tmp/split-bad" ] || fail "$(cat "$tmp/merge.err")"
ok "kmlm --shard with --split-by-lang: part directories merged equal one run; a missing or changed part refused"

# 3. Parallel and alias records.
"$cs" kmlm --kg "$tmp/kg.h5" --langs $langs --mode parallel --alias -o "$tmp/par.jsonl" -q
check parallel "$tmp/tsv" "$tmp/par.jsonl"
check alias "$tmp/tsv" "$tmp/par.jsonl"
check alias "$tmp/tsv" "$tmp/t1.jsonl"
ok "parallel groups cover exactly the languages with all labels; alias records use aliases"
# English alone: KMLM's English sentences, those of parallel mode's English records, nothing switched.
"$cs" kmlm --kg "$tmp/kg.h5" --langs en --alias -o "$tmp/en.jsonl" -q || fail "kmlm --langs en"
check alias "$tmp/tsv" "$tmp/en.jsonl"
python3 - "$tmp/en.jsonl" "$tmp/par.jsonl" <<'PY' || fail "kmlm --langs en: not the English sentences"
import json, sys
english = lambda path, alias: sorted((tuple(r["triple"]), r["text"]) for r in map(json.loads, open(path))  # noqa: E731
                                     if r["lang"] == "en" and bool(r.get("alias")) == alias)
recs = [json.loads(l) for l in open(sys.argv[1])]
assert recs and all(r["lang"] == "en" and r["langs"] == ["en"] * 3 for r in recs), recs[:2]
assert english(sys.argv[1], False) == english(sys.argv[2], False)
assert english(sys.argv[1], True), "no alias record"
PY
ok "kmlm --langs en: English sentences only, as parallel mode writes them, with alias records"

# 4. Allowlists, the subject cap, --split-by-lang, --format plain.
printf 'P19\n# comment\nP36\n' > "$tmp/rels.txt"
"$cs" kmlm --kg "$tmp/kg.h5" --langs fr --relations "$tmp/rels.txt" --max-per-subject 1 -o "$tmp/cap.jsonl" -q
python3 - "$tmp/cap.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert recs and all(r["triple"][1] in ("P19", "P36") for r in recs)
subjects = [r["triple"][0] for r in recs]
assert len(subjects) == len(set(subjects)), "a subject appears twice under --max-per-subject 1"
PY
"$cs" kmlm --kg "$tmp/kg.h5" --langs $langs --alias --split-by-lang "$tmp/split" -q
cat "$tmp"/split/*.jsonl | sort > "$tmp/split.sorted"
sort "$tmp/t1.jsonl" | cmp -s - "$tmp/split.sorted" || fail "--split-by-lang differs from one output"
[ "$(ls "$tmp/split" | wc -l)" = 12 ] || fail "expected 12 language files"
"$cs" kmlm --kg "$tmp/kg.h5" --langs $langs --alias --format plain -o "$tmp/plain.txt" -q
python3 -c "
import json, sys
texts = [json.loads(l)['text'] for l in open(sys.argv[1])]
assert texts == open(sys.argv[2]).read().splitlines()
" "$tmp/t1.jsonl" "$tmp/plain.txt"
ok "relation allowlist, subject cap, --split-by-lang and --format plain"

# 5. EntityCS: one language per sentence, its labels, <= 5 copies, only languages with all labels.
"$cs" entitycs --kg "$tmp/kg.h5" --redirects "$tmp/red.tsv" --langs $langs -o "$tmp/ecs.jsonl" \
  --stats "$tmp/ecs.json" --threads 1 -q "$tmp/docs.jsonl"
check entitycs "$tmp/tsv" "$tmp/ecs.jsonl"
"$cs" entitycs --kg "$tmp/kg.h5" --redirects "$tmp/red.tsv" --langs $langs -o "$tmp/ecs2.jsonl" --threads 2 -q \
  "$tmp/docs.jsonl"
cmp -s "$tmp/ecs.jsonl" "$tmp/ecs2.jsonl" || fail "entitycs --threads 1 and 2 differ"
"$cs" entitycs --kg "$tmp/kg.h5" --redirects "$tmp/red.tsv" --langs $langs -o "$tmp/ecs3.jsonl" -q "$tmp/docs.txt"
cmp -s "$tmp/ecs.jsonl" "$tmp/ecs3.jsonl" || fail "plain-form documents give other records"
"$cs" entitycs --kg "$tmp/kg.h5" --redirects "$tmp/red.tsv" --langs $langs --max-cs 2 -o "$tmp/ecs4.jsonl" -q \
  "$tmp/docs.jsonl"
check entitycs "$tmp/tsv" "$tmp/ecs4.jsonl" 2
for key in links_unresolved sentences_without_candidate filtered_few_links filtered_no_entity; do
  [ "$(stat_of "$tmp/ecs.json" $key)" -gt 0 ] || fail "$key not counted"
done
ok "EntityCS rules hold; --threads, plain input and --max-cs 2; unresolved links counted"

# 6. Bad input: a broken document is counted and skipped; usage errors exit 2; a non-store exits 1.
{ head -3 "$tmp/docs.jsonl"; echo '{"id": "1", "title": broken'; tail -n +4 "$tmp/docs.jsonl"; } > "$tmp/bad.jsonl"
"$cs" entitycs --kg "$tmp/kg.h5" --redirects "$tmp/red.tsv" --langs $langs -o "$tmp/bad.out" \
  --stats "$tmp/bad.json" -q "$tmp/bad.jsonl" 2> "$tmp/bad.err"
[ "$(stat_of "$tmp/bad.json" errors)" = 1 ] || fail "bad document not counted"
grep -q "bad.jsonl:4:" "$tmp/bad.err" || fail "bad document location"
cmp -s "$tmp/bad.out" "$tmp/ecs.jsonl" || fail "good documents changed"
set +e
"$cs" kmlm --langs fr -o "$tmp/x" 2> /dev/null; rc1=$?
"$cs" kmlm --kg "$tmp/kg.h5" --langs fr --mode other -o "$tmp/x" 2> /dev/null; rc2=$?
"$cs" kmlm --kg "$tmp/docs.jsonl" --langs fr -o "$tmp/x" 2> /dev/null; rc3=$?
"$cs" 2> /dev/null; rc4=$?
set -e
[ $rc1 = 2 ] && [ $rc2 = 2 ] && [ $rc3 = 1 ] && [ $rc4 = 2 ] || fail "exit codes $rc1 $rc2 $rc3 $rc4"
[ ! -e "$tmp/x" ] || fail "output left behind"
ok "bad documents counted with their location; exit codes 2/1"

echo "$pass checks passed"
