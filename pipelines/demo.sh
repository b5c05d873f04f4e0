#!/usr/bin/env bash
# The whole kglm pipeline on the embedded sample in data/. Usage: pipelines/demo.sh [OUTDIR]
# Tools are taken from $KGLM_BIN (default: build/bin). Each stage prints what it wrote.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${KGLM_BIN:-$here/build/bin}
out=${1:-$here/out/demo}
mkdir -p "$out"

echo "== wd-extract: data/wikidata-sample.json -> $out/kg.h5 (+ TSV tables)"
"$bin/wd-extract" "$here/data/wikidata-sample.json" -o "$out/kg.h5" --langs all --tsv "$out/kg-tsv" \
  --stats "$out/wd-extract.stats.json" --quiet
for t in entities labels aliases triples literals qualifiers; do
  printf '   %-12s %6d rows\n' "$t" $(( $(wc -l < "$out/kg-tsv/$t.tsv") - 1 ))
done
# Later stages (wiki-extract, cs-gen, kg-cycles, kg-align, verbalize, sample-lang, pretrain, ...)
# are added here as they land.
echo "demo finished: outputs in $out"
