#!/usr/bin/env bash
# pretrain's objectives on real generator output (KMLM, reasoning cycles, EntityCS made from
# ../shared/fixtures): the masking rates over ≥ 1M decisions (objectives_test's ObjectiveRates),
# the rules of every row of `pretrain masks` (objectives_check.py), a mixed-objective run with its
# per-term losses and mask statistics, frozen layers, and bit-identical --resume.
# Usage: objectives.sh BIN_DIR FIXTURES_DIR SOURCE_DIR OBJECTIVES_TEST
set -euo pipefail
bin=$1 fixtures=$2 src=$3 rates_test=$4
spm=$fixtures/tokenizer/spm-test-vocab1000.model
source "$src/tests/cli/common.sh" "$spm"
source "$src/tests/cli/generated_corpora.sh"
check="python3 $src/tests/cli/objectives_check.py"

generated_corpora "$tmp" "$bin" "$fixtures"
prepare() { "$bin/pretrain" prepare --tokenizer "$spm" -q "$@"; }
prepare --max-len 64 -o "$tmp/entitycs.h5" "$tmp/ecs.jsonl"
# Reasoning samples must not be cut (a cut cycle loses its sentences): 512 holds the longest.
prepare --max-len 512 -o "$tmp/reasoning.h5" "$tmp/reason/en.jsonl"
prepare --max-len 64 -o "$tmp/kmlm.h5" "$tmp/k-cs.jsonl" "$tmp/k-par.jsonl"
# A structured record longer than --max-len is dropped whole, never cut into pieces that could hold a
# relation without its entities or nothing to predict; plain text is still split.
"$bin/pretrain" prepare --tokenizer "$spm" --max-len 170 -o "$tmp/reason170.h5" --stats "$tmp/reason170.json" \
  "$tmp/reason/en.jsonl" "en=$fixtures/tokenizer/botchan.txt" 2> "$tmp/reason170.err"
python3 - "$tmp/reason170.json" "$tmp/reason170.err" <<'PY' || fail "structured records are dropped whole"
import json, re, sys
s = json.load(open(sys.argv[1]))
cycles = s.get("records.reasoning-3", 0) + s.get("records.reasoning-4", 0)
dropped = s.get("records_too_long.reasoning-3", 0) + s.get("records_too_long.reasoning-4", 0)
assert dropped > 0 and s["longest_dropped_tokens"] > 170, s
assert s["sequences"] == s["records"] - dropped, s  # one sequence per kept cycle and line
err = open(sys.argv[2]).read()
assert re.search(r"%d structured record\(s\) longer than --max-len 170 tokens dropped whole, never split \(.*reasoning-4 \d+.*the longest: %d tokens" % (dropped, s["longest_dropped_tokens"]), err), err
PY
"$bin/pretrain" masks --data "$tmp/reason170.h5" -n 5000 --seed 3 -o - -q | $check masks ||
  fail "pretrain masks rules (reasoning at --max-len 170)"
ok "structured records longer than --max-len are dropped whole and counted; the rest keep their rules"
prepare --max-len 256 -o "$tmp/mixed.h5" "$tmp/k-cs.jsonl" "$tmp/k-par.jsonl" "$tmp/reason/en.jsonl" \
  "$tmp/ecs.jsonl" "en=$fixtures/tokenizer/botchan.txt"

# Rates, in C++ (1M+ decisions per rate take seconds there, gigabytes as JSON).
KGLM_OBJECTIVE_DATA=$tmp "$rates_test" --gtest_filter='ObjectiveRates.*' > "$tmp/rates.log" 2>&1 ||
  { cat "$tmp/rates.log"; fail "masking rates"; }
grep -q "SKIPPED" "$tmp/rates.log" && fail "the rate tests were skipped"
grep -q "PASSED.*4 tests" "$tmp/rates.log" || fail "the rate tests did not all run"
ok "masking rates within ±0.5% over ≥ 1M decisions each (WEP, PEP, +MLM, 4-cycles, knowledge)"

# Every row's rules, read back from `pretrain masks` by an independent checker.
prepare --max-len 64 -o "$tmp/text.h5" "en=$fixtures/tokenizer/botchan.txt"
for data in entitycs:30000 reasoning:20000 kmlm:30000 text:5000; do
  "$bin/pretrain" masks --data "$tmp/${data%:*}.h5" -n "${data#*:}" --seed 3 -o - -q | $check masks ||
    fail "pretrain masks rules (${data%:*})"
done
"$bin/pretrain" masks --data "$tmp/mixed.h5" -n 10 --seed 3 -o "$tmp/m1.jsonl" -q
"$bin/pretrain" masks --data "$tmp/mixed.h5" -n 10 --seed 3 -o "$tmp/m2.jsonl" -q
cmp -s "$tmp/m1.jsonl" "$tmp/m2.jsonl" || fail "pretrain masks is not deterministic"
ok "pretrain masks: every row follows its objective's rules; link slots never carry a loss"

# EntityCS: the model sees the sentence without its <e> … </e> markers.
python3 - "$tmp/ecs.jsonl" <<'PY' || fail "entity markers reach the model"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert rows and all("<e>" not in r["text"] and "</e>" not in r["text"] for r in rows)
assert sum("<e>" in r["en_sentence"] for r in rows) > len(rows) // 2
PY
ok "EntityCS markers are removed from the text the model is trained on"

# Bad objectives are usage errors, before any data is read.
for bad in "--objective text=reasoning" "--objective tweets=mlm" "--objective kmlm" "--entity-objective pep" \
  "--kmlm-alpha -1" "--train-layers last:x" "--train-layers first:2"; do
  code=0; "$bin/pretrain" --data "$tmp/mixed.h5" --out "$tmp/x" --steps 1 $bad 2> "$tmp/err" || code=$?
  [ $code -eq 2 ] || { cat "$tmp/err"; fail "$bad: exit $code, expected 2"; }
done
ok "unknown kinds and objectives, reasoning on non-cycles, bad --kmlm-alpha/--train-layers exit 2"

# A mixed run: every objective at once, the per-term losses in the log, the mask statistics.
train() {
  "$bin/pretrain" --data "$tmp/mixed.h5" --layers 4 --hidden 32 --heads 2 --ffn 64 --batch 8 --lr 1e-3 \
    --lang-alpha 0.5 --eval-fraction 0.02 --eval-max 40 --seed 5 --decay-steps 6 --quiet "$@"
}
train --steps 6 --out "$tmp/full" --log "$tmp/full.jsonl" --stats "$tmp/full.stats.json" --accumulate 2
$check metrics "$tmp/full.jsonl" || fail "per-term losses"
python3 - "$tmp/full.stats.json" <<'PY' || fail "mask statistics"
import json, sys
s = json.load(open(sys.argv[1]))
links = {k: v for k, v in s.items() if k.startswith("masked.") and k.endswith(".link_slot")}
assert links and not any(links.values()), links
assert s.get("masked.kmlm-parallel.other", 0) == 0 and s.get("masked.kmlm-parallel.entity", 0) > 0, s
assert s.get("masked.text.other", 0) > 0, s
PY
ok "a mixed-objective run logs L_MLM, L_K, L_R and L = L_MLM + 0.3(L_K + L_R); no link slot masked"

# --resume with mixed objectives is bit-identical; a changed objective is refused.
train --steps 3 --out "$tmp/half" --log "$tmp/resumed.jsonl" --accumulate 2
train --steps 6 --resume "$tmp/half" --out "$tmp/resumed" --log "$tmp/resumed.jsonl"
for f in model.safetensors optimizer.safetensors; do
  cmp -s "$tmp/full/$f" "$tmp/resumed/$f" || fail "--resume: $f differs from the uninterrupted run"
done
python3 - "$tmp/full.jsonl" "$tmp/resumed.jsonl" <<'PY' || fail "--resume: metrics differ"
import json, sys
strip = lambda p: [{k: v for k, v in json.loads(l).items() if k not in ("tokens_per_s", "elapsed_s")} for l in open(p)]
a, b = strip(sys.argv[1]), strip(sys.argv[2])
assert [r for r in a if "loss" in r] == [r for r in b if "loss" in r], "step lines differ"
PY
code=0; train --steps 6 --resume "$tmp/half" --out "$tmp/x" --objective entitycs=wep 2> "$tmp/err" || code=$?
[ $code -eq 2 ] && grep -q "differs from the checkpoint" "$tmp/err" || fail "a changed objective was accepted on resume"
ok "--resume with mixed objectives is bit-identical (weights, AdamW moments, metrics)"

# --train-layers: frozen parameters stay bit-identical, get no AdamW moments.
for spec in last:2 last:2,frozen-embeddings; do
  train --steps 3 --init "$tmp/full" --train-layers "$spec" --out "$tmp/frozen" --stats "$tmp/frozen.json"
  $check frozen "$tmp/full/model.safetensors" "$tmp/frozen/model.safetensors" "$spec" 4 || fail "frozen layers"
  python3 - "$tmp/frozen.json" "$tmp/frozen/optimizer.safetensors" <<'PY' || fail "optimizer state of frozen layers"
import json, struct, sys
s = json.load(open(sys.argv[1]))
with open(sys.argv[2], "rb") as f:
    header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
moments = header["exp_avg"]["shape"][0]
assert s["trainable_parameters"] < s["parameters"], s
assert s["trainable_parameters"] <= moments < s["parameters"], (moments, s)
PY
done
ok "--train-layers last:2 (and frozen embeddings): frozen tensors bit-identical, no moments for them"

echo "objectives: $pass checks passed"
