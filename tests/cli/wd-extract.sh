#!/usr/bin/env bash
# CLI tests of wd-extract on the real fixtures: compressions, threads, shard + merge, truncation,
# bad input, API responses, and label/triple counts checked against an independent Python count.
# Usage: wd-extract.sh WD_EXTRACT FIXTURES_DIR SOURCE_DIR
set -euo pipefail
wd=$1
fx=$2
src=$3
source "$src/tests/cli/common.sh" "$fx/wikidata"

dev=$fx/xfactr-kg-dev.json.gz

# 1. Same store from gzip, bzip2, zstd and plain input, and from stdin.
zcat "$dev" > "$tmp/dev.json"
bzip2 -k -1 -c "$tmp/dev.json" > "$tmp/dev.json.bz2"
zstd -q -1 -c "$tmp/dev.json" > "$tmp/dev.json.zst"
for f in "$dev" "$tmp/dev.json" "$tmp/dev.json.bz2" "$tmp/dev.json.zst"; do
  name=$(basename "$f")
  "$wd" "$f" -o "$tmp/$name.h5" --langs all --sites all --tsv "$tmp/tsv-$name" -q --threads 2
done
"$wd" - -o "$tmp/stdin.h5" --langs all --sites all --tsv "$tmp/tsv-stdin" -q < "$tmp/dev.json.zst"
for name in dev.json dev.json.bz2 dev.json.zst stdin; do
  diff -r "$tmp/tsv-xfactr-kg-dev.json.gz" "$tmp/tsv-$name" > /dev/null || fail "store from $name differs from gzip"
done
ok "gzip, bzip2, zstd, plain and stdin inputs give identical stores"

# 2. --threads 1 and 2 give byte-identical tables.
"$wd" "$tmp/dev.json" -o "$tmp/t1.h5" --langs all --sites all --tsv "$tmp/tsv-t1" -q --threads 1 --batch-mb 1
diff -r "$tmp/tsv-t1" "$tmp/tsv-dev.json" > /dev/null || fail "--threads 1 and 2 differ"
h5dump -d /triples/object "$tmp/t1.h5" > "$tmp/t1.dump"
h5dump -d /triples/object "$tmp/dev.json.h5" > "$tmp/t2.dump"
diff <(tail -n +2 "$tmp/t1.dump") <(tail -n +2 "$tmp/t2.dump") > /dev/null || fail "HDF5 datasets differ across threads"
"$wd" "$tmp/dev.json" -o "$tmp/c0.h5" --langs all --sites all --tsv "$tmp/tsv-c0" -q --compression 0
"$wd" "$tmp/dev.json" -o "$tmp/c9.h5" --langs all --sites all --tsv "$tmp/tsv-c9" -q --compression 9
diff -r "$tmp/tsv-c0" "$tmp/tsv-dev.json" > /dev/null && diff -r "$tmp/tsv-c9" "$tmp/tsv-dev.json" > /dev/null ||
  fail "--compression changes the content"
h5dump -d /labels/en/text/blob "$tmp/c9.h5" > /dev/null || fail "h5dump cannot read a level-9 store"
[ "$(stat -c %s "$tmp/c0.h5")" -gt "$(stat -c %s "$tmp/c9.h5")" ] || fail "--compression 9 store not smaller than 0"
ok "--threads 1 and --threads 2 give identical outputs; --compression 0 and 9 the same tables"

# 3. Counts against an independent count with Python's json module.
"$wd" "$dev" -o "$tmp/counts.h5" --langs all --sites all --stats "$tmp/counts.json" -q
python3 - "$tmp/dev.json" "$tmp/counts.json" "$tmp/tsv-dev.json" <<'PY'
import collections, json, sys
labels = collections.Counter(); aliases = collections.Counter(); triples = 0; items = props = 0; ids = set()
objects = []
for line in open(sys.argv[1], encoding="utf-8"):
    line = line.strip().rstrip(",")
    if line in ("[", "]", ""):
        continue
    e = json.loads(line)
    ids.add(e["id"])
    items += e["type"] == "item"; props += e["type"] == "property"
    for lang in e.get("labels", {}): labels[lang] += 1
    for lang, al in e.get("aliases", {}).items(): aliases[lang] += len(al)
    for p, sts in e.get("claims", {}).items():
        for st in sts:
            dv = st["mainsnak"].get("datavalue")
            if st["mainsnak"]["snaktype"] == "value" and st.get("rank") != "deprecated" and dv["type"] == "wikibase-entityid":
                objects.append(dv["value"]["id"])
triples = sum(1 for o in objects if o in ids)
stats = json.load(open(sys.argv[2]))
assert stats["items"] == items, (stats["items"], items)
assert stats["properties"] == props, (stats["properties"], props)
for lang, n in labels.items():
    assert stats["labels_" + lang] == n, (lang, stats.get("labels_" + lang), n)
for lang, n in aliases.items():
    assert stats["aliases_" + lang] == n, (lang, stats.get("aliases_" + lang), n)
assert stats["item_triples"] == triples, (stats["item_triples"], triples)
rows = sum(1 for _ in open(sys.argv[3] + "/triples.tsv")) - 1
assert rows == triples, (rows, triples)
print(f"independent count: {items} items, {props} properties, {sum(labels.values())} labels, "
      f"{sum(aliases.values())} aliases, {triples} triples")
PY
ok "labels, aliases, items and triples equal an independent count"

# 4. Shard + merge equals one pass.
for i in 0 1 2; do "$wd" "$dev" -o "$tmp/part$i.h5" --langs all --sites all --shard $i/3 -q --threads 1; done
"$wd" merge "$tmp/part0.h5" "$tmp/part2.h5" "$tmp/part1.h5" -o "$tmp/merged.h5" --tsv "$tmp/tsv-merged" -q
diff -r "$tmp/tsv-merged" "$tmp/tsv-dev.json" > /dev/null || fail "shard + merge differs from one pass"
ok "3 shards + merge equal one pass"
# A merge refuses, in one line and writing nothing, a set that is not every shard of one run once: a
# failed array task's part missing, a part given twice, a part run with other options (--threads may differ).
"$wd" "$dev" -o "$tmp/part1-de.h5" --langs de --sites all --shard 1/3 -q --threads 2
"$wd" "$dev" -o "$tmp/part1-t2.h5" --langs all --sites all --shard 1/3 -q --threads 2
for set in "part0 part2:2 of 3 parts given; missing shard 1" "part0 part1 part2 part2:part2.h5: shard 2/3 a second time" \
  "part0 part1-de part2:part1-de.h5: a shard of another run than"; do
  parts=() && for p in ${set%%:*}; do parts+=("$tmp/$p.h5"); done
  if "$wd" merge "${parts[@]}" -o "$tmp/bad.h5" -q 2> "$tmp/merge.err"; then fail "merged ${set%%:*}"; fi
  grep -qF -- "${set#*:}" "$tmp/merge.err" || fail "merge of ${set%%:*}: $(cat "$tmp/merge.err")"
  [ "$(wc -l < "$tmp/merge.err")" = 1 ] && [ ! -e "$tmp/bad.h5" ] || fail "merge of ${set%%:*} left output or said more"
done
"$wd" merge "$tmp/part0.h5" "$tmp/part1-t2.h5" "$tmp/part2.h5" -o "$tmp/merged-t2.h5" --tsv "$tmp/tsv-t2" -q
diff -r "$tmp/tsv-t2" "$tmp/tsv-dev.json" > /dev/null || fail "a part of --threads 2 merged differs"
ok "merge refuses a missing, repeated or other-options part in one line; --threads may differ"

# A synthetic dump (bench/make-synthetic-wikidata.py: hubs, qualifiers, deprecated/novalue/somevalue
# statements, objects outside the dump, 12 label languages): every count of the default extraction
# equals the generator's own, in one pass and in 3 shards merged; the shards of this plain file
# read only their byte ranges (a third each, plus at most one batch), and merge into the same store.
/usr/bin/python3 "$src/bench/make-synthetic-wikidata.py" 20000 "$tmp/syn.json" --counts "$tmp/syn.counts.json" 2> /dev/null
"$wd" "$tmp/syn.json" -o "$tmp/syn.h5" --stats "$tmp/syn.stats.json" -q --threads 2 --tsv "$tmp/syn-tsv"
for i in 0 1 2; do
  "$wd" "$tmp/syn.json" --shard $i/3 -o "$tmp/syn-part$i.h5" --stats "$tmp/syn-part$i.json" -q --threads 1 --batch-mb 1
  [ "$(stat_of "$tmp/syn-part$i.json" shard_byte_range)" = 1 ] &&
    [ "$(stat_of "$tmp/syn-part$i.json" input_bytes)" -le $(($(stat -c %s "$tmp/syn.json") / 3 + (1 << 20))) ] ||
    fail "shard $i/3 read $(stat_of "$tmp/syn-part$i.json" input_bytes) bytes of $(stat -c %s "$tmp/syn.json")"
done
"$wd" merge "$tmp"/syn-part{0,1,2}.h5 -o "$tmp/syn-merged.h5" --stats "$tmp/syn-merged.stats.json" -q --tsv "$tmp/syn-mtsv"
diff -r "$tmp/syn-tsv" "$tmp/syn-mtsv" > /dev/null || fail "byte-range shards merged differ from one pass"
# The shards of a bzip2 dump decode only the blocks in their share: one stream of many blocks
# (bzip2 -1, as Wikidata's json.bz2 is one stream) and many streams cut in mid-line (as pbzip2 cuts).
head -n 4000 "$tmp/syn.json" > "$tmp/syn-head.json"
bzip2 -1 -c "$tmp/syn-head.json" > "$tmp/syn-one.json.bz2"
split -b 1000000 "$tmp/syn-head.json" "$tmp/syn-piece-"
for p in "$tmp"/syn-piece-*; do bzip2 -1 -c "$p"; done > "$tmp/syn-many.json.bz2"
"$wd" "$tmp/syn-head.json" -o "$tmp/syn-head.h5" -q --tsv "$tmp/syn-head-tsv"
for f in syn-one syn-many; do
  for i in 0 1 2; do
    "$wd" "$tmp/$f.json.bz2" --shard $i/3 -o "$tmp/$f-$i.h5" --stats "$tmp/$f-$i.json" -q --threads $((i % 2 + 1)) --batch-mb 1
    [ "$(stat_of "$tmp/$f-$i.json" shard_bzip2_blocks)" = 1 ] &&
      [ "$(stat_of "$tmp/$f-$i.json" input_bytes)" -le $(($(stat -c %s "$tmp/syn-head.json") / 3 + (2 << 20))) ] ||
      fail "bzip2 shard $f $i/3 decoded $(stat_of "$tmp/$f-$i.json" input_bytes) bytes of $(stat -c %s "$tmp/syn-head.json")"
  done
  "$wd" merge "$tmp/$f"-{0,1,2}.h5 -o "$tmp/$f-merged.h5" -q --tsv "$tmp/$f-tsv"
  diff -r "$tmp/syn-head-tsv" "$tmp/$f-tsv" > /dev/null || fail "bzip2 shards of $f merged differ from one pass"
done
ok "the shards of a bzip2 dump (one stream, many streams) decode a third each and merge into the one-pass store"
# A bad record in a byte range is located by its byte offset (the shard does not count the lines before it).
head -n -1 "$tmp/syn.json" > "$tmp/syn-bad.json"
at=$(stat -c %s "$tmp/syn-bad.json")
printf '{"type":"item","id":"Q7","labels":[]}\n]\n' >> "$tmp/syn-bad.json"
"$wd" "$tmp/syn-bad.json" --shard 2/3 -o "$tmp/syn-bad.h5" -q 2> "$tmp/syn-bad.err"
grep -q "syn-bad.json: at byte $at: labels:" "$tmp/syn-bad.err" || fail "byte-range error location: $(cat "$tmp/syn-bad.err")"
python3 - "$tmp/syn.counts.json" "$tmp/syn.stats.json" "$tmp/syn-merged.stats.json" <<'PY' || fail "synthetic counts"
import json, sys
expected = {k: v for k, v in json.load(open(sys.argv[1])).items() if not k.startswith("degree")}
for path in sys.argv[2:]:
    got = json.load(open(path))
    wrong = {k: (v, got.get(k)) for k, v in expected.items() if got.get(k) != v}
    assert not wrong, (path, wrong)
print("synthetic dump:", {k: expected[k] for k in ("items", "item_triples", "qualifiers", "labels_ja")})
PY
ok "a synthetic 20,000-item dump: every count equals the generator's, one pass and 3 byte-range shards merged"

# 5. A truncated plain file: everything before the cut is kept, the cut line is one error. A truncated
# compressed file fails with no output; --allow-truncated keeps what was read and records it.
head -c 30000000 "$tmp/dev.json" > "$tmp/cut.json"
"$wd" "$tmp/cut.json" -o "$tmp/cut.h5" --stats "$tmp/cut.stats" -q 2> "$tmp/cut.err"
full_lines=$(python3 -c "import sys; d=open(sys.argv[1],'rb').read(); print(d.count(b'\n'))" "$tmp/cut.json")
[ "$(stat_of "$tmp/cut.stats" errors)" = 1 ] || fail "truncated line not counted as one error"
items=$(( $(stat_of "$tmp/cut.stats" items) + $(stat_of "$tmp/cut.stats" properties) ))
[ "$items" = $((full_lines - 1)) ] || fail "truncated plain file: $items entities kept, expected $((full_lines - 1))"
grep -q "cut.json:$((full_lines + 1)):" "$tmp/cut.err" || fail "truncation error lacks its line number"
head -c 3000000 "$dev" > "$tmp/cut.json.gz"
set +e; "$wd" "$tmp/cut.json.gz" -o "$tmp/cutgz.h5" -q 2> "$tmp/cutgz.err"; rc=$?; set -e
[ $rc = 1 ] || fail "truncated gzip should exit 1, got $rc"
grep -q "truncated or corrupt gzip" "$tmp/cutgz.err" || fail "truncated gzip not reported"
[ ! -e "$tmp/cutgz.h5" ] || fail "a truncated gzip left an output"
"$wd" "$tmp/cut.json.gz" -o "$tmp/cutgz.h5" --allow-truncated --stats "$tmp/cutgz.stats" -q 2> /dev/null
[ "$(stat_of "$tmp/cutgz.stats" items)" -gt 1000 ] || fail "--allow-truncated lost the data before the cut"
[ "$(stat_of "$tmp/cutgz.stats" truncated_inputs)" = 1 ] || fail "--allow-truncated: not in the statistics"
h5dump -a /truncated_inputs "$tmp/cutgz.h5" | grep -q "cut.json.gz" || fail "--allow-truncated: not in the provenance"
ok "a truncated plain file keeps everything before the cut; truncated gzip exits 1 unless --allow-truncated"

# 6. Bad input: the bugs file gives counted errors with line numbers, exit 0; --max-errors fails.
"$wd" "$fx/wikidata/wdtk-mock-dump-with-bugs.json" -o "$tmp/bugs.h5" --stats "$tmp/bugs.stats" -q 2> "$tmp/bugs.err"
[ "$(stat_of "$tmp/bugs.stats" errors)" -ge 2 ] || fail "bugs file: errors not counted"
grep -q 'wdtk-mock-dump-with-bugs.json:3: labels' "$tmp/bugs.err" || fail "bugs file: no file:line report"
if "$wd" "$fx/wikidata/wdtk-mock-dump-with-bugs.json" -o "$tmp/bugs2.h5" --max-errors 1 -q 2> /dev/null; then
  fail "--max-errors 1 did not fail"
fi
[ ! -e "$tmp/bugs2.h5" ] || fail "a failed run left its output"
ls "$tmp" | grep -q '\.tmp\.' && fail "a failed run left a temporary file"
printf 'hello\n' > "$tmp/notjson.txt"
set +e; "$wd" "$tmp/notjson.txt" -o "$tmp/x.h5" -q 2> /dev/null; rc=$?; set -e
[ $rc = 1 ] || fail "non-dump input should exit 1, got $rc"
set +e; "$wd" -o "$tmp/x.h5" --bogus 2> /dev/null; rc=$?; set -e
[ $rc = 2 ] || fail "usage error should exit 2, got $rc"
set +e; "$wd" "$tmp/notjson.txt" -o - 2> /dev/null; rc=$?; set -e
[ $rc = 2 ] || fail "-o - (HDF5 to stdout) should be a usage error, got $rc"
ok "bad records counted and located; --max-errors, non-dump input and usage errors exit 1/1/2"

# 7. API responses and a pretty-printed single entity; the lexeme is skipped.
"$wd" "$fx/wikidata/wbgetentities-Q6-Q42-P31.json" "$fx/wikidata/wbgetentities-Q1.json" -o "$tmp/api.h5" \
  --stats "$tmp/api.stats" --tsv "$tmp/tsv-api" -q
[ "$(stat_of "$tmp/api.stats" items)" = 2 ] || fail "API: expected Q42 and Q1"
[ "$(stat_of "$tmp/api.stats" properties)" = 1 ] || fail "API: expected P31"
[ "$(stat_of "$tmp/api.stats" skipped_missing)" = 1 ] || fail "API: missing Q6 not counted"
"$wd" "$fx/wikidata/L3354-lexeme.json" "$fx/wikidata/Q42.json" -o "$tmp/q42.h5" --stats "$tmp/q42.stats" -q
[ "$(stat_of "$tmp/q42.stats" skipped_lexeme)" = 1 ] || fail "lexeme not skipped"
[ "$(stat_of "$tmp/q42.stats" items)" = 1 ] || fail "Q42 not extracted"
ok "wbgetentities responses, a single pretty-printed entity, lexeme skipped"

# 8. Filters: --entities, --relations, --min-sitelinks.
printf 'P19\nP27\n' > "$tmp/rels.txt"
"$wd" "$dev" -o "$tmp/filt.h5" --relations "$tmp/rels.txt" --stats "$tmp/filt.stats" --tsv "$tmp/tsv-filt" -q
[ "$(cut -f2 "$tmp/tsv-filt/triples.tsv" | tail -n +2 | sort -u | tr '\n' ' ')" = "P19 P27 " ] || fail "--relations"
[ "$(stat_of "$tmp/filt.stats" properties)" = 2 ] || fail "--relations keeps only the listed properties"
zcat "$dev" | sed -n '30,50p' | python3 -c "import json,sys; [print(json.loads(l.rstrip().rstrip(','))['id']) for l in sys.stdin]" | grep '^Q' > "$tmp/ents.txt"
"$wd" "$dev" -o "$tmp/ents.h5" --entities "$tmp/ents.txt" --stats "$tmp/ents.stats" --tsv "$tmp/tsv-ents" -q
[ "$(stat_of "$tmp/ents.stats" items)" = "$(wc -l < "$tmp/ents.txt")" ] || fail "--entities"
python3 - "$tmp/tsv-ents/triples.tsv" "$tmp/ents.txt" <<'PY'
import sys
keep = set(open(sys.argv[2]).read().split())
for line in open(sys.argv[1]):
    if line.startswith("#"): continue
    s, r, o, _ = line.rstrip("\n").split("\t")
    assert s in keep and o in keep, line
PY
"$wd" "$fx/wikidata/Q42.json" "$fx/wikidata/Q34987-item.json" -o "$tmp/ms.h5" --min-sitelinks 50 --stats "$tmp/ms.stats" -q
[ "$(stat_of "$tmp/ms.stats" skipped_min_sitelinks)" = 1 ] && [ "$(stat_of "$tmp/ms.stats" items)" = 1 ] || fail "--min-sitelinks"
ok "--relations, --entities (dangling triples dropped) and --min-sitelinks"

echo "$pass passed, 0 failed"
