#!/usr/bin/env bash
# CLI tests of sample-lang on real multilingual text: X-FACTR's answer aliases in 10 languages
# (xfactr/alias/LANG.txt, 17k-58k lines each). Plans are recomputed from the inputs by an independent
# checker (sample_lang_check.py); outputs are checked for exact sizes, provenance of every record and
# copy counts; interleaved and split outputs hold the same records; determinism across --threads
# and runs; stdin with and without --counts; token and byte counts; bad records; atomic failure.
# Usage: sample-lang.sh BIN_DIR FIXTURES_DIR SOURCE_DIR
set -euo pipefail
bin=$1
fx=$2
src=$3
source "$src/tests/cli/common.sh" "$fx/xfactr/alias"
check="python3 $src/tests/cli/sample_lang_check.py"
alias=$fx/xfactr/alias
sl="$bin/sample-lang"
inputs=()
for f in "$alias"/*.txt; do inputs+=("$(basename "$f" .txt)=$f"); done

# 1. Plans for each scale and α, recomputed independently.
"$sl" "$alias" --plan > "$tmp/plan1.tsv"
$check plan "$tmp/plan1.tsv" lines 1 input "${inputs[@]}"
awk -F'\t' 'NR > 1 && $3 != $6 { exit 1 }' "$tmp/plan1.tsv" || fail "alpha 1 changes sizes"
"$sl" "$alias" --plan --alpha 0 --total 100000 > "$tmp/plan0.tsv"
$check plan "$tmp/plan0.tsv" lines 0 total=100000 "${inputs[@]}"
[ "$(awk -F'\t' 'NR > 1 { print $6 }' "$tmp/plan0.tsv" | sort -u)" = 10000 ] || fail "alpha 0 does not equalise"
"$sl" "$alias" --plan --alpha 0.3 --keep-smallest -o "$tmp/plan03.tsv"
$check plan "$tmp/plan03.tsv" lines 0.3 keep "${inputs[@]}"
"$sl" "$alias" --plan --truncate > "$tmp/plantr.tsv"
$check plan "$tmp/plantr.tsv" lines 0 truncate "${inputs[@]}"
ok "plans: alpha 1 keeps sizes, alpha 0 equalises, --keep-smallest, --truncate"

# 2. Split outputs meet their targets exactly, records come from their language; down and up.
"$sl" "${inputs[@]}" --alpha 0.5 --split-by-lang "$tmp/split05" --write-plan "$tmp/plan05.tsv" -q
$check plan "$tmp/plan05.tsv" lines 0.5 input "${inputs[@]}"
$check split "$tmp/plan05.tsv" "$tmp/split05" .txt "${inputs[@]}"
awk -F'\t' 'NR > 1 && $7 > 1 { up = 1 } NR > 1 && $7 < 1 { down = 1 } END { exit !(up && down) }' \
  "$tmp/plan05.tsv" || fail "alpha 0.5 should up-sample some languages and down-sample others"
"$sl" "$alias" --truncate --split-by-lang "$tmp/splittr" -q
$check split "$tmp/plantr.tsv" "$tmp/splittr" .txt "${inputs[@]}"
ok "split outputs: alpha 0.5 (up and down) and --truncate are exact"

# 3. The interleaved stream holds exactly the split outputs' records; deterministic; seeded.
"$sl" "$alias" --alpha 0.5 -o "$tmp/mixed.txt" --stats "$tmp/mixed.json" -q --threads 2
$check same "$tmp/mixed.txt" "$tmp/split05"/*.txt
"$sl" "$alias" --alpha 0.5 -o "$tmp/mixed1.txt" -q --threads 1 --memory-mb 1 --stats "$tmp/mixed1.json"
[ "$(stat_of "$tmp/mixed1.json" shuffle_runs)" -gt 3 ] || fail "1 MB of memory should spill runs"
$check same "$tmp/mixed1.txt" "$tmp/mixed.txt"
"$sl" "$alias" --alpha 0.5 -o "$tmp/mixed2.txt" -q --threads 1
cmp -s "$tmp/mixed.txt" "$tmp/mixed2.txt" || fail "output differs with --threads 1"
"$sl" "$alias" --alpha 0.5 -o "$tmp/mixed3.txt" -q --seed 99
cmp -s "$tmp/mixed.txt" "$tmp/mixed3.txt" && fail "--seed does not change the sample"
head -c 2000 "$tmp/mixed.txt" | grep -q $'\t' || fail "no data?"
ok "interleaved = split records; deterministic across threads; spilled shuffle holds the same records"

# 4. A mixed JSONL stream (tokens of the text field), from a file, from stdin (spilled) and with --counts.
python3 - "$tmp/stream.jsonl" "${inputs[@]}" <<'PY'
import json, sys
out = open(sys.argv[1], "w", encoding="utf-8")
files = [(s.split("=")[0], open(s.split("=", 1)[1], encoding="utf-8").read().split("\n")) for s in sys.argv[2:]]
for i in range(max(len(lines) for _, lines in files)):  # languages interleaved, as in a real stream
    for lang, lines in files:
        if i < len(lines) and lines[i]:
            out.write(json.dumps({"lang": lang, "text": lines[i].replace("\t", " ")}, ensure_ascii=False) + "\n")
PY
"$sl" "$tmp/stream.jsonl" --unit tokens --alpha 0.3 --plan > "$tmp/plantok.tsv"
$check plan "$tmp/plantok.tsv" tokens 0.3 input "$tmp/stream.jsonl"
"$sl" "$tmp/stream.jsonl" --unit tokens --alpha 0.3 --split-by-lang "$tmp/splittok" -q
$check split "$tmp/plantok.tsv" "$tmp/splittok" .jsonl "$tmp/stream.jsonl"
"$sl" "$tmp/stream.jsonl" --unit tokens --alpha 0.3 -o "$tmp/tok.jsonl" -q
gzip -c "$tmp/stream.jsonl" | "$sl" - --unit tokens --alpha 0.3 -o "$tmp/tok-stdin.jsonl" -q --tmp-dir "$tmp"
cmp -s "$tmp/tok.jsonl" "$tmp/tok-stdin.jsonl" || fail "stdin (spilled) differs from the file"
[ -z "$(ls "$tmp" | grep kglm-stdin)" ] || fail "the spilled stdin was left behind"
"$sl" - --unit tokens --alpha 0.3 -o "$tmp/tok-counts.jsonl" -q --counts "$tmp/plantok.tsv" < "$tmp/stream.jsonl"
cmp -s "$tmp/tok.jsonl" "$tmp/tok-counts.jsonl" || fail "stdin with --counts differs from the file"
ok "mixed JSONL stream: token plan, split, stdin spilled and with --counts agree"

# 5. Tokens of text files (Unicode White_Space, as the checker counts them); bytes add up to the file
#    size less its empty lines.
for f in "$alias"/en.txt "$alias"/ja.txt; do
  lang=$(basename "$f" .txt)
  "$sl" "$lang=$f" --unit tokens --plan > "$tmp/plan-$lang.tsv"
  $check plan "$tmp/plan-$lang.tsv" tokens 1 input "$lang=$f"
  got=$("$sl" "$lang=$f" --unit bytes --plan | awk -F'\t' 'NR == 2 { print $3 }')
  want=$(grep -v '^$' "$f" | wc -c)
  [ "$got" = "$want" ] || fail "$lang: $got bytes, expected $want"
done
ok "token counts (Unicode whitespace) and byte counts"

# 6. Compressed inputs keep their suffix (and compression) per language.
mkdir "$tmp/gz"
for l in en vi; do gzip -c "$alias/$l.txt" > "$tmp/gz/$l.txt.gz"; done
"$sl" "$tmp/gz" --alpha 0.2 --split-by-lang "$tmp/splitgz" -q
[ -f "$tmp/splitgz/en.txt.gz" ] && gzip -t "$tmp/splitgz/en.txt.gz" || fail "en.txt.gz not written as gzip"
"$sl" "en=$alias/en.txt" "vi=$alias/vi.txt" --alpha 0.2 --split-by-lang "$tmp/splitplain" -q
cmp -s <(gzip -dc "$tmp/splitgz/vi.txt.gz") "$tmp/splitplain/vi.txt" || fail "gzip input gives a different sample"
ok "gzip inputs: same sample, gzip outputs"

# 7. Bad records: skipped, counted, located; past --max-errors the run fails and writes nothing.
{ head -n 100 "$tmp/stream.jsonl"; echo '{"lang": "de", "text": 5}'; echo 'not json'; echo '{"text": "x"}'
  sed -n '101,300p' "$tmp/stream.jsonl"; } > "$tmp/bad.jsonl"
"$sl" "$tmp/bad.jsonl" --unit tokens -o "$tmp/bad-out.jsonl" --stats "$tmp/bad.json" 2> "$tmp/bad.err" --alpha 1
[ "$(stat_of "$tmp/bad.json" bad_records)" = 3 ] || fail "expected 3 bad records"
[ "$(wc -l < "$tmp/bad-out.jsonl")" = 300 ] || fail "the 300 valid records are not all kept"
grep -q "bad.jsonl:102: " "$tmp/bad.err" || fail "no location for the bad record"
"$sl" - --unit tokens -o "$tmp/bad-stdin.jsonl" --tmp-dir "$tmp" 2> "$tmp/bad-stdin.err" < "$tmp/bad.jsonl"
grep -q ": stdin:102: " "$tmp/bad-stdin.err" || fail "a bad record of stdin is not located as stdin:102"
if "$sl" "$tmp/bad.jsonl" --unit tokens -o "$tmp/bad-fail.jsonl" --max-errors 2 -q 2> /dev/null; then
  fail "--max-errors 2 should fail"
fi
[ ! -e "$tmp/bad-fail.jsonl" ] || fail "a failed run left its output"
printf '#lang\tlines\nen\t5\n' > "$tmp/wrong.tsv"
if "$sl" "en=$alias/en.txt" -o "$tmp/wrong.txt" --counts "$tmp/wrong.tsv" -q 2> "$tmp/wrong.err"; then
  fail "wrong --counts should fail"
fi
grep -q "wrong.tsv: language en has" "$tmp/wrong.err" || fail "the counts mismatch is not explained"
[ -z "$(ls "$tmp" | grep wrong.txt)" ] || fail "a failed run left its output"
if "$sl" "$alias" --alpha 0.3 -q 2> /dev/null; then fail "no output should be a usage error"; fi
set +e
"$sl" "$alias" --truncate --total 5 -o x -q 2> /dev/null
[ $? = 2 ] || fail "--truncate --total should be a usage error (exit 2)"
set -e
ok "bad records located and skipped; --max-errors, wrong counts and usage errors fail cleanly"

echo "sample-lang: $pass groups passed"
