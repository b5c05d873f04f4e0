#!/usr/bin/env bash
# CLI tests of wiki-extract on the real enwiki excerpt: counts against an independent XML count,
# no markup left, link spans = anchors, golden pages, compressions, UTF-16, threads, plain and
# sentence output, WikiExtractor input, bad input, --shard parts and their merge.
# Usage: wiki-extract.sh WIKI_EXTRACT FIXTURES_DIR SOURCE_DIR [--redo]
set -euo pipefail
we=$1
fx=$2
src=$3
redo=${4:-}
xml=$fx/wikipedia/enwiki-sample-a.xml.bz2
source "$src/tests/cli/common.sh" "$xml"
check() { python3 "$src/tests/cli/wiki_extract_check.py" "$@"; }

# 1. Counts, markup, link spans.
"$we" "$xml" -o "$tmp/docs.jsonl" --redirects "$tmp/red.tsv" --stats "$tmp/stats.json" -q
check counts "$xml" "$tmp/docs.jsonl" "$tmp/red.tsv"
[ "$(head -1 "$tmp/red.tsv")" = "# from	to" ] || fail "redirects header"
grep -q "^AccessibleComputing	Computer accessibility$" "$tmp/red.tsv" || fail "redirect row"
[ "$(stat_of "$tmp/stats.json" pages)" = 103 ] || fail "stats pages"
[ "$(stat_of "$tmp/stats.json" articles)" = 49 ] || fail "stats articles"
[ "$(stat_of "$tmp/stats.json" redirects)" = 54 ] || fail "stats redirects"
ok "49 articles and 54 redirects as in the XML; no markup left; every link span is a written anchor"

# 2. Three pages against golden output (regenerate with --redo after checking the diff by eye).
golden=$src/tests/golden/wiki-extract
for title in "Actrius" "Aa River" "Affirming the consequent"; do
  python3 - "$tmp/docs.jsonl" "$title" > "$tmp/page.json" <<'PY'
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    if json.loads(line)["title"] == sys.argv[2]:
        sys.stdout.write(line)
PY
  if [ "$redo" = --redo ]; then cp "$tmp/page.json" "$golden/$title.jsonl"; fi
  cmp -s "$tmp/page.json" "$golden/$title.jsonl" || fail "golden page '$title' differs"
done
ok "three pages equal their golden output"

# 3. Compressions, stdin, threads and batch sizes give identical output.
bzcat "$xml" > "$tmp/a.xml"
gzip -c "$tmp/a.xml" > "$tmp/a.xml.gz"
zstd -q -c "$tmp/a.xml" > "$tmp/a.xml.zst"
for f in "$tmp/a.xml" "$tmp/a.xml.gz" "$tmp/a.xml.zst"; do
  "$we" "$f" -o "$tmp/c.jsonl" --threads 2 --batch-mb 1 -q
  cmp -s "$tmp/c.jsonl" "$tmp/docs.jsonl" || fail "$(basename "$f") differs"
done
"$we" - -o - --threads 1 -q < "$tmp/a.xml.zst" > "$tmp/stdin.jsonl"
cmp -s "$tmp/stdin.jsonl" "$tmp/docs.jsonl" || fail "stdin differs"
ok "plain, gzip, zstd, stdin, --threads 1/2 and --batch-mb 1 give byte-identical output"

# 4. The same dump in UTF-16 (declared) gives the same output.
python3 -c "
import sys
xml = open(sys.argv[1], encoding='utf-8').read()
open(sys.argv[2], 'wb').write(('<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n' + xml).encode('utf-16'))
" "$tmp/a.xml" "$tmp/a16.xml"
"$we" "$tmp/a16.xml" -o "$tmp/u16.jsonl" -q
cmp -s "$tmp/u16.jsonl" "$tmp/docs.jsonl" || fail "UTF-16 input differs"
ok "UTF-16 input gives identical output"

# 5. --format plain reads back to the same text and links.
"$we" "$xml" -o "$tmp/plain.txt" --format plain -q
check plain "$tmp/docs.jsonl" "$tmp/plain.txt"
ok "--format plain round-trips"

# 6. --sentences: offsets, links inside, no link cut.
"$we" "$xml" -o "$tmp/sent.jsonl" --sentences --stats "$tmp/sent.json" -q --threads 2
check sentences "$tmp/docs.jsonl" "$tmp/sent.jsonl"
[ "$(wc -l < "$tmp/sent.jsonl")" = "$(stat_of "$tmp/sent.json" sentences)" ] || fail "sentence count"
ok "--sentences never cuts a link"

# 7. WikiExtractor --json --links records give the same documents.
check to-wikiextractor "$tmp/docs.jsonl" "$tmp/wx.json"
"$we" --input-format wikiextractor "$tmp/wx.json" -o "$tmp/wx.jsonl" -q
check same-text "$tmp/docs.jsonl" "$tmp/wx.jsonl"
ok "WikiExtractor input gives the same text and links"

# 8. Bad input: a page nested too deep is counted and skipped; truncated dumps keep earlier pages.
python3 - "$tmp/a.xml" "$tmp/deep.xml" <<'PY'
import sys
xml = open(sys.argv[1], encoding="utf-8").read()
page = "<page><title>Deep</title><ns>0</ns><id>1</id><revision><id>2</id><text>" + \
       "{{x|" * 150 + "}}" * 150 + "</text></revision></page>\n"
i = xml.index("<page>")
open(sys.argv[2], "w", encoding="utf-8").write(xml[:i] + page + xml[i:])
PY
"$we" "$tmp/deep.xml" -o "$tmp/deep.jsonl" --stats "$tmp/deep.json" -q 2> "$tmp/deep.err"
[ "$(stat_of "$tmp/deep.json" errors)" = 1 ] || fail "deep page not counted"
grep -q "deep.xml:[0-9]*: page 'Deep' (id 1): templates nested deeper than 100" "$tmp/deep.err" || fail "deep message"
cmp -s "$tmp/deep.jsonl" "$tmp/docs.jsonl" || fail "other pages changed"
if "$we" "$tmp/deep.xml" -o "$tmp/strict.jsonl" --max-errors 0 -q 2> /dev/null; then fail "--max-errors 0"; fi
[ ! -e "$tmp/strict.jsonl" ] || fail "output left behind past --max-errors"
head -c 1500000 "$tmp/a.xml" > "$tmp/cut.xml"
"$we" "$tmp/cut.xml" -o "$tmp/cut.jsonl" --stats "$tmp/cut.json" -q 2> "$tmp/cut.err"
grep -q "cut.xml:[0-9]*: XML error" "$tmp/cut.err" || fail "truncated XML not reported"
n=$(wc -l < "$tmp/cut.jsonl")
[ "$n" -gt 10 ] && head -n "$n" "$tmp/docs.jsonl" | cmp -s - "$tmp/cut.jsonl" || fail "pages before the cut"
head -c 300000 "$xml" > "$tmp/cut.xml.bz2"
"$we" "$tmp/cut.xml.bz2" -o "$tmp/cutbz.jsonl" -q 2> "$tmp/cutbz.err" || true
grep -q "cut.xml.bz2" "$tmp/cutbz.err" || fail "truncated bzip2 not reported"
echo '{"not": "xml"}' > "$tmp/x.json"
set +e
"$we" "$tmp/x.json" -o "$tmp/x.jsonl" -q 2> "$tmp/x.err"; rc1=$?
"$we" "$tmp/missing.xml" -o "$tmp/x.jsonl" -q 2> /dev/null; rc2=$?
"$we" "$xml" -o "$tmp/x.jsonl" --format html 2> /dev/null; rc3=$?
set -e
[ $rc1 = 1 ] && [ $rc2 = 1 ] && [ $rc3 = 2 ] || fail "exit codes $rc1 $rc2 $rc3"
grep -q "x.json: is JSON; expected a MediaWiki XML dump" "$tmp/x.err" || fail "not-XML message: $(cat "$tmp/x.err")"
[ ! -e "$tmp/x.jsonl" ] || fail "output left behind"
ok "bad pages counted with their location, truncated inputs keep earlier pages, exit codes 1/2"

# 9. --shard I/N: the parts of a multistream dump (one bzip2 stream per 7 pages, as Wikimedia writes
# them per 100) and of plain XML, merged, are the unsharded output byte for byte (documents and
# redirects); each shard decompresses only its own streams; a set that is not every part of one run
# once, and inputs that cannot be split by pages, are refused.
python3 "$src/bench/make-multistream.py" "$xml" "$tmp/ms.xml.bz2" --pages-per-stream 7 > /dev/null
for n in 24 5; do
  for ((i = 0; i < n; i++)); do
    "$we" "$tmp/ms.xml.bz2" --shard $i/$n -o "$tmp/ms$i.jsonl" --redirects "$tmp/msr$i.tsv" --threads $((i % 2 + 1)) \
      --stats "$tmp/ms$n-$i.json" -q 2> /dev/null
  done
  "$we" merge $(for ((i = n - 1; i >= 0; i--)); do echo "$tmp/ms$i.jsonl"; done) -o "$tmp/msm.jsonl" \
    --redirects "$tmp/msm.tsv" -q
  cmp -s "$tmp/msm.jsonl" "$tmp/docs.jsonl" && cmp -s "$tmp/msm.tsv" "$tmp/red.tsv" || fail "$n multistream shards differ"
done
python3 - "$tmp/ms.xml.bz2" "$tmp"/ms5-{0..4}.json <<'PY' || fail "shards do not divide the streams"
import json, os, sys
size = os.path.getsize(sys.argv[1])
parts = [json.load(open(p))["shard_bytes"] for p in sys.argv[2:]]
assert sum(parts) == size and max(parts) < size / 3, (parts, size)
PY
for i in 0 1 2; do
  "$we" "$tmp/a.xml" --shard $i/3 -o "$tmp/pl$i.jsonl.zst" --redirects "$tmp/plr$i.tsv" -q
done
"$we" merge "$tmp"/pl{0,1,2}.jsonl.zst -o "$tmp/plm.jsonl.zst" --redirects "$tmp/plm.tsv" -q
zstd -dc "$tmp/plm.jsonl.zst" | cmp -s - "$tmp/docs.jsonl" && cmp -s "$tmp/plm.tsv" "$tmp/red.tsv" || fail "plain shards"
"$we" merge "$tmp"/pl{0,1,2}.jsonl.zst -o "$tmp/plm.jsonl" --redirects "$tmp/plm.tsv.gz" -q  # decoded, encoded
cmp -s "$tmp/plm.jsonl" "$tmp/docs.jsonl" && zcat "$tmp/plm.tsv.gz" | cmp -s - "$tmp/red.tsv" || fail "merge recompressed"
"$we" "$tmp/a.xml" --shard 1/3 --ns 0,1 -o "$tmp/other1.jsonl" --redirects "$tmp/otherr1.tsv" -q
for set in "ms0 ms2 ms3 ms4:4 of 5 parts given; missing shard 1" "ms0 ms1 ms1 ms2 ms3 ms4:shard 1/5 a second time" \
  "pl0 other1 pl2:a shard of another run"; do
  names=${set%%:*}
  if "$we" merge $(for p in $names; do ls "$tmp/$p".jsonl*; done | grep -v shard.json) -o "$tmp/bad.jsonl" \
    --redirects "$tmp/bad.tsv" 2> "$tmp/bad.err"; then fail "merged: $names"; fi
  grep -q "${set#*:}" "$tmp/bad.err" || fail "message for $names: $(cat "$tmp/bad.err")"
  [ ! -e "$tmp/bad.jsonl" ] && [ ! -e "$tmp/bad.tsv" ] || fail "output left behind: $names"
done
rm "$tmp/msr3.tsv.shard.json"
if "$we" merge "$tmp"/ms{0,1,2,3,4}.jsonl -o "$tmp/bad.jsonl" --redirects "$tmp/bad.tsv" 2> "$tmp/bad.err"; then
  fail "merged without a redirects record"
fi
grep -q "msr3.tsv: not a part of a --shard run" "$tmp/bad.err" || fail "redirects record: $(cat "$tmp/bad.err")"
python3 -c "
import bz2, sys
xml = open(sys.argv[1], 'rb').read()
open(sys.argv[2], 'wb').write(b''.join(bz2.compress(xml[i:i + 50000]) for i in range(0, len(xml), 50000)))
" "$tmp/a.xml" "$tmp/blocks.xml.bz2"
set +e
"$we" "$tmp/blocks.xml.bz2" --shard 1/4 -o "$tmp/x.jsonl" -q 2> "$tmp/blocks.err"; rc1=$?
"$we" "$tmp/a.xml.zst" --shard 1/4 -o "$tmp/x.jsonl" -q 2> "$tmp/zst.err"; rc2=$?
"$we" - --shard 1/4 -o "$tmp/x.jsonl" -q < "$tmp/a.xml" 2> "$tmp/stdin.err"; rc3=$?
"$we" "$tmp/a.xml" --shard 1/4 -o - -q > /dev/null 2> "$tmp/out.err"; rc4=$?
set -e
[ "$rc1$rc2$rc3$rc4" = 1112 ] || fail "--shard refusals exit $rc1 $rc2 $rc3 $rc4"
grep -q "stream at byte [0-9]* does not begin with a <page>" "$tmp/blocks.err" || fail "$(cat "$tmp/blocks.err")"
grep -q "a zstd file: --shard splits plain XML or a bzip2 multistream dump" "$tmp/zst.err" || fail "$(cat "$tmp/zst.err")"
grep -q "not of a stream" "$tmp/stdin.err" && grep -q "not to stdout" "$tmp/out.err" || fail "stream refusals"
[ ! -e "$tmp/x.jsonl" ] || fail "output left behind by a refused shard"
ok "--shard parts of a multistream dump (5 and 24 shards) and of plain XML merge into the one-run output (as the output's name compresses it); bad sets refused"

# 10. The synthetic Wikipedia of bench/scale.py (matched to a synthetic Wikidata of 2,000 items, a
# multistream dump): the pages, articles, redirects and links the generator counted, and 3 shards
# merged equal to the one pass.
/usr/bin/python3 "$src/bench/make-synthetic-wikidata.py" 2000 "$tmp/wd.json" 2> /dev/null
/usr/bin/python3 "$src/bench/make-synthetic-wikipedia.py" "$tmp/wd.json" "$tmp/syn.xml.bz2" \
  --counts "$tmp/syn.counts.json" 2> /dev/null
"$we" "$tmp/syn.xml.bz2" -o "$tmp/syn.jsonl" --redirects "$tmp/syn.tsv" --stats "$tmp/syn.stats.json" -q
python3 - "$tmp/syn.counts.json" "$tmp/syn.stats.json" <<'PY' || fail "synthetic Wikipedia counts"
import json, sys
want, got = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
wrong = {k: (want[k], got.get(k)) for k in ("pages", "articles", "redirects", "links") if got.get(k) != want[k]}
assert not wrong and want["links"] > 1000, wrong
PY
for i in 0 1 2; do
  "$we" "$tmp/syn.xml.bz2" --shard $i/3 -o "$tmp/syn$i.jsonl" --redirects "$tmp/syn$i.tsv" -q
done
"$we" merge "$tmp"/syn{0,1,2}.jsonl -o "$tmp/synm.jsonl" --redirects "$tmp/synm.tsv" -q
cmp -s "$tmp/synm.jsonl" "$tmp/syn.jsonl" && cmp -s "$tmp/synm.tsv" "$tmp/syn.tsv" || fail "synthetic shards"
ok "a synthetic Wikipedia: the generator's page, article, redirect and link counts; 3 shards merge to one pass"

echo "$pass checks passed"
