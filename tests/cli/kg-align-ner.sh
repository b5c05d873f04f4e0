#!/usr/bin/env bash
# kg-align ner on real data (the X-FACTR dev KG with the Wikipedia excerpt), checked by an
# independent implementation of the typing and of the format (kg_align_ner_check.py); determinism
# across --threads; --split-dir deals whole documents; the nearest-root rule and its ties on a
# hand-made KG; --type; --relations of kg-align; bad input.
# Usage: kg-align-ner.sh BIN_DIR FIXTURES_DIR SOURCE_DIR
set -euo pipefail
bin=$1 fx=$2 src=$3
source "$src/tests/cli/common.sh" "$fx/xfactr-kg-dev.json.gz"
check="python3 $src/tests/cli/kg_align_ner_check.py"

"$bin/wd-extract" "$fx/xfactr-kg-dev.json.gz" -o "$tmp/kg.h5" --langs en --sites enwiki --tsv "$tmp/tsv" -q
"$bin/wiki-extract" "$fx/wikipedia/enwiki-sample-a.xml.bz2" -o "$tmp/docs.jsonl" --redirects "$tmp/redirects.tsv" -q
ner() { "$bin/kg-align" ner --kg "$tmp/kg.h5" --redirects "$tmp/redirects.tsv" -q "$@"; }

# 1. The typing, the tags and the format against the independent check, with and without propagation.
ner -o "$tmp/ner.panx" --stats "$tmp/ner.json" "$tmp/docs.jsonl"
$check "$tmp/tsv" "$tmp/docs.jsonl" "$tmp/redirects.tsv" "$tmp/ner.panx" "$tmp/ner.json"
ner --no-propagate -o "$tmp/linked.panx" --stats "$tmp/linked.json" "$tmp/docs.jsonl"
$check "$tmp/tsv" "$tmp/docs.jsonl" "$tmp/redirects.tsv" "$tmp/linked.panx" "$tmp/linked.json" --no-propagate
[ "$(stat_of "$tmp/linked.json" entities_propagated)" = 0 ] || fail "--no-propagate propagated"
[ "$(stat_of "$tmp/ner.json" entities_propagated)" -gt 0 ] || fail "nothing propagated"
grep -qP '^en:Alabama\tB-LOC$' "$tmp/ner.panx" || fail "Alabama is not a location"
grep -qP '^en:Plato\tB-PER$' "$tmp/ner.panx" || fail "Plato is not a person"
ok "silver NER: the typing, the tags and the counts agree with the independent check"

# 2. Threads; --split-dir deals whole documents and loses no sentence.
gzip -c "$tmp/docs.jsonl" > "$tmp/docs.jsonl.gz"
ner -o "$tmp/ner2.panx" --threads 2 "$tmp/docs.jsonl.gz"
cmp -s "$tmp/ner.panx" "$tmp/ner2.panx" || fail "output differs with --threads 2"
ner --split-dir "$tmp/split" --dev-share 0.2 --test-share 0.2 --seed 3 "$tmp/docs.jsonl"
python3 - "$tmp/ner.panx" "$tmp/split" <<'PY' || fail "--split-dir"
import sys
sents = lambda p: [s for s in open(p, encoding="utf-8").read().split("\n\n") if s.strip()]
whole = sents(sys.argv[1])
parts = {k: sents(f"{sys.argv[2]}/{k}.panx") for k in ("train", "dev", "test")}
assert sorted(whole) == sorted(parts["train"] + parts["dev"] + parts["test"])
assert all(parts.values()), {k: len(v) for k, v in parts.items()}
PY
ok "--threads 2 is byte-identical; --split-dir partitions the sentences"

# 3. The nearest root wins, ties go to the tag given first; deprecated statements do not count.
item() {  # id label [P31 targets] [P279 targets] [deprecated P31 target]
  local claims="" sep=""
  for p in P31 P279; do
    local targets=$([ $p = P31 ] && echo "${3:-}" || echo "${4:-}") list="" s2=""
    for t in $targets; do
      list+="$s2{\"mainsnak\":{\"snaktype\":\"value\",\"property\":\"$p\",\"datavalue\":{\"value\":{\"entity-type\":\"item\",\"numeric-id\":${t#Q},\"id\":\"$t\"},\"type\":\"wikibase-entityid\"}},\"type\":\"statement\",\"rank\":\"normal\"}"
      s2=,
    done
    if [ $p = P31 ] && [ -n "${5:-}" ]; then
      list+="$s2{\"mainsnak\":{\"snaktype\":\"value\",\"property\":\"P31\",\"datavalue\":{\"value\":{\"entity-type\":\"item\",\"numeric-id\":${5#Q},\"id\":\"$5\"},\"type\":\"wikibase-entityid\"}},\"type\":\"statement\",\"rank\":\"deprecated\"}"
    fi
    [ -n "$list" ] && { claims+="$sep\"$p\":[$list]"; sep=,; }
  done
  echo "{\"type\":\"item\",\"id\":\"$1\",\"labels\":{\"en\":{\"language\":\"en\",\"value\":\"$2\"}},\"sitelinks\":{\"enwiki\":{\"site\":\"enwiki\",\"title\":\"$2\"}},\"claims\":{$claims}},"
}
{
  echo "["
  item Q5 human; item Q43229 organization; item Q515 city; item Q3918 university
  item Q900 "campus site" "" "Q515 Q901"; item Q901 "body" "" "Q902"; item Q902 "collective" "" "Q43229"
  item Q903 "persona" "" "Q5 Q43229"
  item Q910 "Redbrick" "Q3918 Q900"          # ORG at 0, LOC at 1: ORG
  item Q911 "Millford" "Q900"                # LOC at 1, ORG at 3: LOC
  item Q912 "Ann Corp" "Q903"                # PER and ORG at 1: PER, given first
  item Q913 "Dep Town" "" "" "Q515"          # only a deprecated P31: untyped
  echo '{"type":"item","id":"Q914","labels":{},"claims":{}}'
  echo "]"
} > "$tmp/mini.json"
"$bin/wd-extract" "$tmp/mini.json" -o "$tmp/mini.h5" --langs en --sites enwiki -q
text="Redbrick is in Millford near Ann Corp and Dep Town. Later Millford grew."
python3 - "$text" > "$tmp/mini.jsonl" <<'PY'
import json, sys
t = sys.argv[1]
links = [[t.index(n), t.index(n) + len(n), n] for n in ("Redbrick", "Millford", "Ann Corp", "Dep Town")]
print(json.dumps({"id": "1", "title": "Redbrick", "text": t, "links": links, "sections": [], "root_end": len(t)}))
PY
"$bin/kg-align" ner --kg "$tmp/mini.h5" -o "$tmp/mini.panx" --stats "$tmp/mini-stats.json" -q "$tmp/mini.jsonl"
expected="en:Redbrick	B-ORG en:is	O en:in	O en:Millford	B-LOC en:near	O en:Ann	B-PER en:Corp	I-PER en:and	O en:Dep	O en:Town	O en:.	O  en:Later	O en:Millford	B-LOC en:grew	O en:.	O  "
[ "$(tr '\n' ' ' < "$tmp/mini.panx")" = "$expected" ] || fail "hand-made KG: $(tr '\n' ' ' < "$tmp/mini.panx")"
[ "$(stat_of "$tmp/mini-stats.json" kg_items_ambiguous)" = 3 ] || fail "ambiguous items"
"$bin/kg-align" ner --kg "$tmp/mini.h5" --type CAMPUS=Q900 --type ORG=Q43229 -o "$tmp/mini2.panx" -q "$tmp/mini.jsonl"
grep -qP '^en:Redbrick\tB-CAMPUS$' "$tmp/mini2.panx" && grep -qP '^en:Ann\tB-ORG$' "$tmp/mini2.panx" \
  || fail "--type: $(tr '\n' ' ' < "$tmp/mini2.panx")"
"$bin/kg-align" ner --kg "$tmp/mini.h5" --type PLACE=Q515 --type P=Q5 --type PLACE=Q3918 -o "$tmp/mini3.panx" -q \
  --stats "$tmp/mini3.json" "$tmp/mini.jsonl"
grep -qP '^en:Redbrick\tB-PLACE$' "$tmp/mini3.panx" && [ "$(stat_of "$tmp/mini3.json" kg_items_typed.PLACE)" = 2 ] \
  || fail "a tag given twice: $(tr '\n' ' ' < "$tmp/mini3.panx")"
ok "nearest root class wins, ties to the first tag, deprecated P31 ignored, --type (a tag given twice gathers its roots)"

# 4. kg-align --relations: subject and object spans of aligned item statements.
"$bin/kg-align" --kg "$tmp/kg.h5" --redirects "$tmp/redirects.tsv" -o "$tmp/aligned.jsonl" --relations "$tmp/rel.jsonl" \
  -q "$tmp/docs.jsonl"
python3 - "$tmp/rel.jsonl" "$tmp/tsv/triples.tsv" "$tmp/tsv/labels.tsv" "$tmp/tsv/aliases.tsv" <<'PY' || fail "--relations"
import json, sys
triples = {tuple(l.split("\t")[:3]) for l in open(sys.argv[2], encoding="utf-8") if not l.startswith("#")}
names = {}
for p in sys.argv[3:5]:
    for l in open(p, encoding="utf-8"):
        e, lang, text = l.rstrip("\n").split("\t")
        names.setdefault(e, set()).add(text.casefold())
n = 0
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line)
    text = r["text"].encode()
    assert (r["subject"], r["label"], r["object"]) in triples, r
    spans = {s[3]: text[s[0]:s[1]].decode().casefold() for s in r["spans"]}
    assert spans[r["subject"]] in names[r["subject"]] and spans[r["object"]] in names[r["object"]], r
    n += 1
assert n > 20, n
PY
ok "--relations: $(wc -l < "$tmp/rel.jsonl") examples, each a KG statement with its subject's and object's names"

# 5. Bad input.
code=0; "$bin/kg-align" ner --kg "$tmp/kg.h5" --type "PER" -o "$tmp/x.panx" "$tmp/docs.jsonl" 2> /dev/null || code=$?
[ $code -eq 2 ] || fail "--type without classes: exit $code"
code=0; "$bin/kg-align" ner --kg "$tmp/kg.h5" --lang de -o "$tmp/x.panx" "$tmp/docs.jsonl" 2> "$tmp/err" || code=$?
[ $code -eq 1 ] && grep -q "dewiki" "$tmp/err" || fail "no dewiki sitelinks: exit $code $(cat "$tmp/err")"
head -c 2000 /dev/urandom > "$tmp/garbage"
code=0; ner -o "$tmp/x.panx" "$tmp/garbage" 2> /dev/null || code=$?
[ $code -eq 1 ] && [ ! -e "$tmp/x.panx" ] || fail "binary input: exit $code"
ok "bad --type, a wiki without sitelinks, binary input: refused, no output"
echo "$pass passed"
