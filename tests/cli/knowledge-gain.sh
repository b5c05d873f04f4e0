#!/usr/bin/env bash
# pipelines/knowledge-gain.sh end to end at a tiny size (its numbers mean nothing here: the real
# run's table is in man 1 probe): every stage runs, both arms probe the same facts, and the report
# has a row with a bootstrap interval around the gain for every relation and language, and the
# macro rows of the probed and the control relations.
# Usage: knowledge-gain.sh BIN_DIR FIXTURES_DIR SOURCE_DIR
set -euo pipefail
bin=$1 fx=$2 src=$3
source "$src/tests/cli/common.sh" "$fx/xfactr-kg-dev.json.gz"
KGLM_BIN=$bin KGLM_FIXTURES=$fx SEEDS="3 4" STEPS=12 BATCH=8 FACTS=15 OTHER_MAX=300 DRAWS=1 VOCAB=1500 BOOTSTRAP=200 \
  METHODS=independent,order THREADS=2 "$src/pipelines/knowledge-gain.sh" "$tmp/run" > "$tmp/log"
for report in knowledge-gain knowledge-gain-strict; do
python3 - "$tmp/run/$report.tsv" <<'PY' || fail "the report: $(cat "$tmp/run/$report.tsv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
cells = {(r["method"], r["lang"], r["relation"]) for r in rows}
for m in ("independent", "order"):
    for lang in ("en", "fr", "es", "all"):
        for kind in ("probed", "control"):
            assert any(r["method"] == m and r["lang"] == lang and r["relation"] == "macro" and r["kind"] == kind
                       for r in rows), (m, lang, kind)
    for rel in ("P30", "P37", "P36", "P1412"):
        assert (m, "en", rel) in cells, (m, rel)
for r in rows:
    lo, gain, hi = float(r["ci_low"]), float(r["gain"]), float(r["ci_high"])
    assert lo <= gain + 1e-9 and gain <= hi + 1e-9, r
    assert abs(float(r["acc_b"]) - float(r["acc_a"]) - gain) < 0.02, r
    assert int(r["facts"]) > 0
en = [r for r in rows if r["lang"] == "en" and r["relation"] not in ("macro",)]
assert all(int(r["facts"]) == 15 for r in en), en
PY
done
grep -q "seeds 3 4" "$tmp/log" || fail "the report does not name the seeds"
for arm in a b; do
  for seed in 3 4; do
    [ -f "$tmp/run/model-$arm-$seed/model.safetensors" ] || fail "no model $arm-$seed"
  done
done
ok "knowledge-gain pipeline: both arms, two seeds, the report with bootstrap intervals"
