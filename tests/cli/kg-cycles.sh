#!/usr/bin/env bash
# CLI tests of kg-cycles: the demo KG's known counts, the dev KG's triangles against networkx,
# determinism, hub cap, sample, caps and exclusions.
# Usage: kg-cycles.sh BIN_DIR FIXTURES_DIR SOURCE_DIR
set -euo pipefail
bin=$1
fx=$2
src=$3
source "$src/tests/cli/common.sh" "$fx/xfactr-kg-dev.json.gz"
kc=$bin/kg-cycles
dump_cycles() { h5dump -g /cycles "$1" | grep -v "HDF5 \"" ; }

# 1. The demo KG: 144 triangles and 271 four-node sets with a 4-cycle and a diagonal (counted
#    independently when the sample was written; WdExtract.SampleGraphHasCycles).
"$bin/wd-extract" "$src/data/wikidata-sample.json" -o "$tmp/demo.h5" --langs all -q
"$kc" --kg "$tmp/demo.h5" -o "$tmp/demo-cycles.h5" --stats "$tmp/demo.json" -q
[ "$(stat_of "$tmp/demo.json" triangles)" = 144 ] || fail "demo triangles"
[ "$(stat_of "$tmp/demo.json" cycles4)" = 271 ] || fail "demo 4-cycles"
[ "$(stat_of "$tmp/demo.json" written)" = 415 ] || fail "demo written"
ok "demo KG: 144 triangles, 271 4-cycles with a diagonal"

# 2. The dev KG's triangles equal networkx's count, with and without a hub cap.
"$bin/wd-extract" "$fx/xfactr-kg-dev.json.gz" -o "$tmp/kg.h5" --langs en --tsv "$tmp/tsv" -q
for cap in 0 20; do
  "$kc" --kg "$tmp/kg.h5" -o "$tmp/c$cap.h5" --max-degree $cap --hub-edges 0 --stats "$tmp/c$cap.json" -q --threads 2
  expected=$(python3 - "$tmp/tsv/triples.tsv" $cap <<'PY'
import sys
import networkx as nx
g = nx.Graph()
with open(sys.argv[1]) as f:
    next(f)
    for line in f:
        s, r, o, _ = line.rstrip("\n").split("\t")
        if s != o:
            g.add_edge(s, o)
cap = int(sys.argv[2])
if cap:
    g.remove_nodes_from([n for n, d in list(g.degree()) if d > cap])
print(sum(nx.triangles(g).values()) // 3)
PY
)
  [ "$(stat_of "$tmp/c$cap.json" triangles)" = "$expected" ] || fail "max-degree $cap: triangles != networkx $expected"
done
[ "$(stat_of "$tmp/c20.json" excluded_hubs)" -gt 0 ] || fail "no hub excluded"
# The same graph as a TSV edge list (--edges), triangles only (--kinds 3).
tail -n +2 "$tmp/tsv/triples.tsv" | cut -f1-3 > "$tmp/edges.tsv"
"$kc" --edges "$tmp/edges.tsv" --kinds 3 --hub-edges 0 -o "$tmp/e.h5" --stats "$tmp/e.json" -q
[ "$(stat_of "$tmp/e.json" triangles)" = "$(stat_of "$tmp/c0.json" triangles)" ] || fail "--edges triangles"
[ "$(stat_of "$tmp/e.json" cycles4)" = 0 ] || fail "--kinds 3 listed 4-cycles"
[ "$(stat_of "$tmp/e.json" multi_relation_pairs)" = "$(stat_of "$tmp/c0.json" multi_relation_pairs)" ] || fail "--edges relations"
ok "dev KG triangles equal networkx's ($(stat_of "$tmp/c0.json" triangles); $(stat_of "$tmp/c20.json" triangles) with --max-degree 20)"

# 3. Identical tables for any --threads; caps and the sample keep the full counts.
"$kc" --kg "$tmp/kg.h5" -o "$tmp/t1.h5" --max-degree 20 --hub-edges 0 -q --threads 1
[ "$(dump_cycles "$tmp/t1.h5" | md5sum)" = "$(dump_cycles "$tmp/c20.h5" | md5sum)" ] || fail "--threads 1 and 2 differ"
"$kc" --kg "$tmp/kg.h5" -o "$tmp/s1.h5" --sample 1000 --hub-edges 0 --stats "$tmp/s1.json" -q --threads 1
"$kc" --kg "$tmp/kg.h5" -o "$tmp/s2.h5" --sample 1000 --hub-edges 0 -q --threads 2
[ "$(stat_of "$tmp/s1.json" written)" = 1000 ] || fail "sample size"
[ "$(stat_of "$tmp/s1.json" triangles)" = "$(stat_of "$tmp/c0.json" triangles)" ] || fail "counts under --sample"
[ "$(dump_cycles "$tmp/s1.h5" | md5sum)" = "$(dump_cycles "$tmp/s2.h5" | md5sum)" ] || fail "sample differs by threads"
"$kc" --kg "$tmp/kg.h5" -o "$tmp/m.h5" --max-cycles 100 --max-degree 20 --stats "$tmp/m.json" -q
[ "$(stat_of "$tmp/m.json" written)" = 100 ] || fail "--max-cycles"
"$kc" --kg "$tmp/kg.h5" -o "$tmp/n.h5" --max-per-node 1 --max-degree 20 --stats "$tmp/n.json" -q
[ "$(stat_of "$tmp/n.json" skipped_node_cap)" -gt 0 ] || fail "--max-per-node"
ok "deterministic tables; --sample, --max-cycles and --max-per-node keep the full counts"

# 4. --exclude drops listed cycles: exclude the demo's first three triangles.
python3 - "$tmp/demo-cycles.h5" "$tmp/demo.h5" > "$tmp/exclude.txt" <<'PY'
import subprocess, sys
def column(path, name):
    out = subprocess.run(["h5dump", "-d", name, "-y", "-w", "0", path], capture_output=True, text=True).stdout
    body = out[out.index("DATA {") + 6:out.rindex("}")]
    return [int(x) for x in body.replace("\n", " ").replace(",", " ").split() if x.strip().isdigit()]
nodes = [column(sys.argv[1], f"/cycles/node{i}")[:3] for i in range(3)]
numbers = column(sys.argv[2], "/entities/number")
for k in range(3):
    print(" ".join("Q%d" % numbers[nodes[i][k]] for i in range(3)))
PY
"$kc" --kg "$tmp/demo.h5" -o "$tmp/ex.h5" --exclude "$tmp/exclude.txt" --stats "$tmp/ex.json" -q
[ "$(stat_of "$tmp/ex.json" excluded_cycles)" = 3 ] || fail "--exclude: $(stat_of "$tmp/ex.json" excluded_cycles)"
[ "$(stat_of "$tmp/ex.json" written)" = 412 ] || fail "--exclude written"
ok "--exclude drops exactly the listed cycles"

# 5. --text: each sample is its cycle's 3 or 5 triples, real triples of the KG, in one language.
"$bin/wd-extract" "$src/data/wikidata-sample.json" -o "$tmp/demo2.h5" --langs all --tsv "$tmp/demo-tsv" -q
"$kc" --kg "$tmp/demo2.h5" -o "$tmp/dc.h5" --text "$tmp/text" --langs en,de,ja --stats "$tmp/text.json" -q
python3 - "$tmp/demo-tsv" "$tmp/text" "$tmp/text.json" <<'PY'
import collections, json, sys
tsv, text, stats = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
triples = set()
for line in open(f"{tsv}/triples.tsv"):
    if not line.startswith("#"):
        s, r, o, _ = line.rstrip("\n").split("\t")
        triples.add((s, r, o))
labels = collections.defaultdict(dict)
for line in open(f"{tsv}/labels.tsv"):
    if not line.startswith("#"):
        e, lang, t = line.rstrip("\n").split("\t", 2)
        labels[lang][e] = t
for lang in ("en", "de", "ja"):
    n = 0
    for line in open(f"{text}/{lang}.jsonl"):
        r = json.loads(line)
        assert r["lang"] == lang and len(r["triples"]) == (3 if r["kind"] == 3 else 5)
        nodes = {x for t in r["triples"] for x in (t[0], t[2])}
        assert len(nodes) == r["kind"], "a cycle's triples join its nodes"
        raw = r["text"].encode()
        spans = [(raw[b:e].decode(), k, i) for b, e, k, i in r["spans"]]
        assert len(spans) == 5 * len(r["triples"])
        for k, t in enumerate(r["triples"]):
            assert tuple(t) in triples, t
            h, _, rel, _, tail = spans[5 * k:5 * k + 5]
            assert (h[2], rel[2], tail[2]) == tuple(t)
            assert h[0] == labels[lang][t[0]] and rel[0] == labels[lang][t[1]] and tail[0] == labels[lang][t[2]]
        n += 1
    assert n == stats[f"samples.{lang}"]
    assert n + stats.get(f"skipped_missing_label.{lang}", 0) == stats["written"]
print("reasoning samples check out")
PY
ok "--text: every sample renders its cycle's real triples with the language's labels"

# 6. XLR: answers among 6 distinct choices, real triples, no second right answer, no cycle in
#    two splits, the test cycles excluded from a reasoning-data run, deterministic.
"$kc" xlr --kg "$tmp/kg.h5" --cycles "$tmp/c0.h5" --langs en -o "$tmp/xlr" --train 1000 --dev 300 --test 350 \
  --stats "$tmp/xlr.json" -q
"$kc" xlr --kg "$tmp/kg.h5" --cycles "$tmp/c0.h5" --langs en -o "$tmp/xlr2" --train 1000 --dev 300 --test 350 -q
diff -r "$tmp/xlr" "$tmp/xlr2" > /dev/null || fail "xlr is not deterministic"
python3 - "$tmp/tsv" "$tmp/xlr" "$tmp/xlr.json" <<'PY'
import json, sys
tsv, out, stats = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
triples, between = set(), {}
for line in open(f"{tsv}/triples.tsv"):
    if not line.startswith("#"):
        s, r, o, _ = line.rstrip("\n").split("\t")
        triples.add((s, r, o))
        between.setdefault(frozenset((s, o)), set()).add(r)
seen = {}
for split in ("train", "dev", "test"):
    n = 0
    for line in open(f"{out}/{split}.en.jsonl"):
        q = json.loads(line)
        ids = q["choice_ids"]
        assert len(ids) == 6 == len(set(ids)) == len(q["choices"]) and 0 <= q["label"] < 6
        answer = ids[q["label"]]
        assert (q["head"], answer, q["tail"]) in triples, "the answer is not a KG triple"
        assert between[frozenset((q["head"], q["tail"]))] & set(ids) == {answer}, "two right answers"
        raw = q["text"].encode()
        spans = [(raw[b:e].decode(), k, i) for b, e, k, i in q["spans"]]
        context = [tuple(x[2] for x in spans[k:k + 5:2]) for k in range(0, len(spans), 5)]
        assert len(context) == (2 if q["kind"] == 3 else 4) and all(t in triples for t in context)
        nodes = {x for t in context for x in (t[0], t[2])} | {q["head"], q["tail"]}
        assert len(nodes) == q["kind"]
        key = frozenset(nodes)
        assert seen.setdefault(key, split) == split, "a cycle in two splits"
        n += 1
    assert n == stats[f"questions.{split}"] and n > 0
test = {frozenset(line.split()) for line in open(f"{out}/test-cycles.txt")}
assert test == {k for k, v in seen.items() if v == "test"}
print("XLR invariants hold:", {s: stats[f"questions.{s}"] for s in ("train", "dev", "test")})
PY
"$kc" --kg "$tmp/kg.h5" --hub-edges 0 -o "$tmp/ex2.h5" --exclude "$tmp/xlr/test-cycles.txt" --stats "$tmp/ex2.json" -q
[ "$(stat_of "$tmp/ex2.json" excluded_cycles)" = "$(stat_of "$tmp/xlr.json" questions.test)" ] || fail "test exclusion"
"$kc" xlr --kg "$tmp/demo2.h5" --cycles "$tmp/dc.h5" --langs en,ja -o "$tmp/xlr-demo" --train 60 --dev 20 --test 20 \
  --max-entity-share 0.3 --max-answer-share 0.4 --stats "$tmp/xd.json" -q
[ "$(stat_of "$tmp/xd.json" records.test.ja)" -gt 0 ] || fail "no Japanese XLR records"
grep -q '"lang":"ja"' "$tmp/xlr-demo/test.ja.jsonl" || fail "ja rendering"
ok "XLR: 6 distinct choices, answer a KG triple and the only right one, disjoint splits, test exclusion honoured"

# 7. Bounded memory: the cycles stream to the table in chunks, so 10x the output (4-cycles added to
#    the triangles of a power-law graph) costs no more memory (before: every rank task's cycles, held).
/usr/bin/python3 "$src/bench/make-powerlaw-graph.py" 20000 150000 "$tmp/pl.tsv" --gamma 2.3 --seed 3
few=$(peak_rss_mb "$kc" --edges "$tmp/pl.tsv" --kinds 3 --hub-edges 0 -o "$tmp/pl3.h5" --stats "$tmp/pl3.json" -q --threads 2)
many=$(peak_rss_mb "$kc" --edges "$tmp/pl.tsv" --hub-edges 0 -o "$tmp/pl.h5" --stats "$tmp/pl.json" -q --threads 2)
[ "$(stat_of "$tmp/pl.json" written)" -ge $((10 * $(stat_of "$tmp/pl3.json" written))) ] || fail "not 10x the cycles"
# AddressSanitizer keeps freed blocks in quarantine: RSS says nothing there.
[ -n "${KGLM_TEST_SANITIZED:-}" ] || [ "$many" -le $((few + 24)) ] ||
  fail "peak RSS $many MB for $(stat_of "$tmp/pl.json" written) cycles, $few MB for $(stat_of "$tmp/pl3.json" written)"
"$kc" --edges "$tmp/pl.tsv" --hub-edges 0 --sample 1000 -o "$tmp/pls.h5" --stats "$tmp/pls.json" -q --threads 2
[ "$(stat_of "$tmp/pls.json" written)" = 1000 ] && [ "$(stat_of "$tmp/pls.json" cycles4)" = "$(stat_of "$tmp/pl.json" cycles4)" ] ||
  fail "--sample 1000 of the power-law graph"
"$kc" --edges "$tmp/pl.tsv" --hub-edges 0 --max-cycles 1000 -o "$tmp/plm.h5" --stats "$tmp/plm.json" -q --threads 2
[ "$(stat_of "$tmp/plm.json" written)" = 1000 ] && [ "$(stat_of "$tmp/plm.json" stopped_at_max_cycles)" = 1 ] &&
  [ "$(stat_of "$tmp/plm.json" triangles)" -lt "$(stat_of "$tmp/pl3.json" triangles)" ] ||
  fail "--max-cycles 1000 did not stop the enumeration"
ok "$(stat_of "$tmp/pl.json" written) cycles in $many MB, $(stat_of "$tmp/pl3.json" written) in $few MB; --max-cycles stops the enumeration"

# 8. Hub sampling (the default, --hub-edges auto: 1000 on this graph) keeps the hubs, with about
#    1000 neighbours each.
"$kc" --kg "$tmp/kg.h5" -o "$tmp/hubs.h5" --stats "$tmp/hubs.json" -q
[ "$(stat_of "$tmp/hubs.json" sampled_hubs)" -gt 0 ] && [ "$(stat_of "$tmp/hubs.json" excluded_hubs)" = 0 ] &&
  [ "$(stat_of "$tmp/hubs.json" hub_edges)" = 1000 ] &&
  [ "$(stat_of "$tmp/hubs.json" triangles)" -lt "$(stat_of "$tmp/c0.json" triangles)" ] &&
  [ "$(stat_of "$tmp/hubs.json" triangles)" -gt "$(stat_of "$tmp/c20.json" triangles)" ] || fail "hub sampling"
ok "--hub-edges auto: $(stat_of "$tmp/hubs.json" sampled_hubs) hubs sampled, $(stat_of "$tmp/hubs.json" triangles) triangles"

# 9. --shard I/N: 3 parts merged equal the unsharded table, with each selection (on the dev KG
#    with its hubs sampled: 40k cycles); a set that is not every part of one run, once, is refused.
same_table() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import sys, h5py
a, b = (h5py.File(p, "r")["cycles"] for p in sys.argv[1:3])
names = sorted(n for n in a if n != "rank")
assert names == sorted(b), (names, sorted(b))
for n in names:
    assert (a[n][()] == b[n][()]).all(), n
print(len(a["kind"]))
PY
}
graph=(--kg "$tmp/kg.h5" --max-degree 200 --hub-edges 60)
for select in "" "--sample 5000" "--max-cycles 3000" "--max-per-node 10" "--max-per-node 20 --sample 1000"; do
  "$kc" "${graph[@]}" $select -o "$tmp/whole.h5" --stats "$tmp/whole.json" -q
  parts=()
  for i in 2 0 1; do
    "$kc" "${graph[@]}" $select --shard $i/3 -o "$tmp/part$i.h5" -q --threads $((i + 1))
    parts+=("$tmp/part$i.h5")
  done
  "$kc" merge "${parts[@]}" -o "$tmp/merged.h5" --stats "$tmp/merged.json" -q
  rows=$(same_table "$tmp/merged.h5" "$tmp/whole.h5") || fail "shards merged differ from one run with '$select'"
  for key in written triangles cycles4 skipped_node_cap; do
    [ -n "$select" ] && [ "$key" != written ] && [ "$key" != skipped_node_cap ] && continue
    [ "$(stat_of "$tmp/merged.json" $key)" = "$(stat_of "$tmp/whole.json" $key)" ] || fail "$key with '$select'"
  done
  echo "  '$select': $rows cycles"
done
"$kc" --kg "$tmp/kg.h5" --max-degree 200 --hub-edges 50 --shard 1/3 -o "$tmp/other1.h5" -q
for set in "part0 part2:2 of 3 parts given; missing shard 1" "part0 part1 part1 part2:shard 1/3 a second time" \
  "part0 other1 part2:a shard of another run than"; do
  parts=() && for p in ${set%%:*}; do parts+=("$tmp/$p.h5"); done
  if "$kc" merge "${parts[@]}" -o "$tmp/bad.h5" -q 2> "$tmp/merge.err"; then fail "merged ${set%%:*}"; fi
  grep -qF -- "${set#*:}" "$tmp/merge.err" && [ ! -e "$tmp/bad.h5" ] || fail "merge of ${set%%:*}: $(cat "$tmp/merge.err")"
done
"$kc" merge "$tmp/part0.h5" "$tmp/part1.h5" "$tmp/part2.h5" -o "$tmp/mt.h5" --kg "$tmp/kg.h5" --text "$tmp/mtext" \
  --langs en --stats "$tmp/mt.json" -q
[ "$(stat_of "$tmp/mt.json" samples.en)" -gt 0 ] || fail "merge --text"
ok "--shard 0..2/3 merged equal one run (every cycle, --sample, --max-cycles, --max-per-node); bad sets refused"

# 10. Usage and input errors.
set +e
"$kc" -o "$tmp/x.h5" 2> /dev/null; rc1=$?
"$kc" --kg "$tmp/demo.h5" --edges "$tmp/edges.tsv" -o "$tmp/x.h5" 2> /dev/null; rc4=$?
"$kc" xlr --kg "$tmp/kg.h5" --cycles "$tmp/e.h5" -o "$tmp/x.h5" 2> /dev/null; rc6=$?
printf 'a\n' > "$tmp/bad-edges.tsv"
"$kc" --edges "$tmp/bad-edges.tsv" -o "$tmp/x.h5" 2> "$tmp/e.err"; rc5=$?
"$kc" --kg "$tmp/tsv/triples.tsv" -o "$tmp/x.h5" 2> /dev/null; rc2=$?
echo "Q1 Q2" > "$tmp/bad-exclude.txt"
"$kc" --kg "$tmp/demo.h5" -o "$tmp/x.h5" --exclude "$tmp/bad-exclude.txt" 2> "$tmp/x.err"; rc3=$?
set -e
[ $rc1 = 2 ] && [ $rc2 = 1 ] && [ $rc3 = 1 ] && [ $rc4 = 2 ] && [ $rc5 = 1 ] && [ $rc6 = 1 ] ||
  fail "exit codes $rc1 $rc2 $rc3 $rc4 $rc5 $rc6"
grep -q "bad-edges.tsv:1:" "$tmp/e.err" || fail "edge list error location"
grep -q "bad-exclude.txt:1:" "$tmp/x.err" || fail "exclusion error location"
[ ! -e "$tmp/x.h5" ] || fail "output left behind"
ok "usage errors exit 2, unusable inputs exit 1 with their location"

echo "$pass checks passed"
