#!/usr/bin/env bash
# kglm-plot renders each kind from real outputs: two pretrain runs on botchan.txt overlaid (curves,
# smoothed), probe on the X-FACTR fixtures in four languages (JSON and TSV), the knowledge-gain
# report in docs/results, sample-lang plans of the fixtures' alias lists (tokens and lines); each
# figure is checked for size and for not being blank (figure_check.py). The output policy (man 7
# kglm): /dev/null and a FIFO written in place, a symbolic link's target replaced, no temporary
# left; wrong inputs refused with their name, a bad line skipped with its place.
# (finetune results.json: the demo's figures, tests/cli/demo.sh.)
# Usage: kglm-plot.sh BIN_DIR FIXTURES_DIR SOURCE_DIR
set -euo pipefail
bin=$1 fx=$2 src=$3
source "$src/tests/cli/common.sh" "$fx/xfactr/facts"
/usr/bin/python3 -c "import matplotlib" 2> /dev/null || { echo "no python3-matplotlib: skipped"; exit 77; }
plot=$bin/kglm-plot
check() { /usr/bin/python3 "$src/tests/cli/figure_check.py" "$@" || fail "figure check: $*"; }
spm=$fx/tokenizer/spm-test-vocab1000.model

# Curves: two runs that differ in their learning rate, overlaid, with TensorBoard's smoothing.
"$bin/pretrain" prepare --tokenizer "$spm" --max-len 48 -o "$tmp/data.h5" --quiet "en=$fx/tokenizer/botchan.txt"
for lr in 3e-3 1e-3; do
  mkdir -p "$tmp/lr-$lr"
  "$bin/pretrain" --data "$tmp/data.h5" --layers 2 --hidden 32 --heads 4 --ffn 64 --batch 8 --steps 40 --lr $lr \
    --warmup 4 --eval-fraction 0.1 --eval-every 20 --threads 2 --seed 7 --quiet --log "$tmp/lr-$lr/metrics.jsonl" \
    --out "$tmp/lr-$lr/ckpt"
done
"$plot" curves "$tmp/lr-3e-3/metrics.jsonl" "$tmp/lr-1e-3/metrics.jsonl" --smooth 0.6 -o "$tmp/curves.png"
"$plot" curves "$tmp/lr-3e-3/metrics.jsonl" --keys loss,lr --labels "lr 3e-3" -o "$tmp/curves-keys.svg"
check "$tmp/curves.png" "$tmp/curves-keys.svg"
ok "curves: two pretrain runs overlaid and smoothed (PNG); chosen keys (SVG)"

# Probe: a random tiny model on four languages (the heat maps; labels from the KG), its JSON and TSV.
python3 "$src/tests/cli/make_tiny_mlm.py" "$tmp/random" "$spm" random 7 > /dev/null
"$bin/wd-extract" "$fx/xfactr-kg-dev.json.gz" -o "$tmp/kg.h5" --langs en,fr,ru,es -q
"$bin/probe" -q --model "$tmp/random" --facts "$fx/xfactr/facts" --templates "$fx/xfactr/templates" --kg "$tmp/kg.h5" \
  --aliases "$fx/xfactr/alias" --lang en,fr,ru,es --relations P19,P36,P27,P103,P37 --max-facts 40 --method independent,order -o "$tmp/probe"
"$plot" probe "$tmp/probe.json" -o "$tmp/probe.png"
"$plot" probe "$tmp/probe.tsv" --method order -o "$tmp/probe-order.svg"
check "$tmp/probe.png" "$tmp/probe-order.svg"
ok "probe: relation x language heat maps from probe's JSON and TSV"

# Gain: the knowledge-gain report of docs/results (a real run), both arms.
for arm in b c; do
  "$plot" gain "$src/docs/results/knowledge-gain/knowledge-gain.tsv" --arm $arm --method confidence -o "$tmp/gain-$arm.png"
done
check "$tmp/gain-b.png" "$tmp/gain-c.png"
ok "gain: forest plots of the knowledge-gain report"

# Dose: the dose-response report of docs/results (a real run), all and non-majority facts.
"$plot" dose "$src/docs/results/knowledge-gain/dose/knowledge-dose.tsv" -o "$tmp/dose.png" \
  --labels "text,KMLM,other templates,X-FACTR's"
"$plot" dose "$src/docs/results/knowledge-gain/dose/knowledge-dose.tsv" --subset non-majority --method confidence \
  -o "$tmp/dose-nm.svg"
check "$tmp/dose.png" "$tmp/dose-nm.svg"
ok "dose: accuracy against dose with bands and the prior baseline"

# Plan: sample-lang plans of the fixtures' alias lists, in tokens and in lines, stacked.
"$bin/sample-lang" "$fx/xfactr/alias" --plan --unit tokens --alpha 0.3 -q -o "$tmp/plan-tokens.tsv"
"$bin/sample-lang" "$fx/xfactr/alias" --plan --alpha 0 --total 100000 -q -o "$tmp/plan-lines.tsv"
"$plot" plan "$tmp/plan-tokens.tsv" "$tmp/plan-lines.tsv" --labels "alpha 0.3 (tokens),alpha 0 (lines)" -o "$tmp/plan.png"
check --min-height 500 "$tmp/plan.png"
ok "plan: tokens and lines per language before and after sampling"

# The output policy.
"$plot" gain "$src/docs/results/knowledge-gain/knowledge-gain.tsv" -o /dev/null --format png
mkfifo "$tmp/fifo"
cat "$tmp/fifo" > "$tmp/from-fifo" &
"$plot" gain "$src/docs/results/knowledge-gain/knowledge-gain.tsv" -o "$tmp/fifo" --format png
wait
[ "$(head -c 4 "$tmp/from-fifo" | tail -c 3)" = PNG ] || fail "the FIFO's reader got no PNG"
[ -p "$tmp/fifo" ] || fail "the FIFO was replaced"
mkdir "$tmp/target"
ln -s target/fig.png "$tmp/link.png"
"$plot" plan "$tmp/plan-tokens.tsv" -o "$tmp/link.png"
[ -L "$tmp/link.png" ] && check "$tmp/target/fig.png"
[ -z "$(find "$tmp" -name '*.tmp.*')" ] || fail "temporaries left: $(find "$tmp" -name '*.tmp.*')"
ok "outputs: /dev/null and a FIFO in place, a symbolic link's target replaced, no temporary left"

# Wrong inputs: refused with the file named; a bad metrics line costs that line only.
refused() {
  local code=0
  "$plot" "$@" -o "$tmp/bad.png" 2> "$tmp/err" || code=$?
  [ "$code" = 1 ] && [ -s "$tmp/err" ] && [ ! -e "$tmp/bad.png" ] || fail "kglm-plot $* was not refused (exit $code): $(cat "$tmp/err")"
}
refused curves "$tmp/probe.json"
refused results "$tmp/lr-3e-3/metrics.jsonl"
refused probe "$tmp/plan-tokens.tsv"
refused plan "$src/docs/results/knowledge-gain/knowledge-gain.tsv"
refused dose "$src/docs/results/knowledge-gain/knowledge-gain.tsv"
refused gain "$tmp/probe.tsv"
grep -q "probe.tsv" "$tmp/err" || fail "the error does not name the file: $(cat "$tmp/err")"
{ head -5 "$tmp/lr-3e-3/metrics.jsonl"; echo '{"step": 6, "loss": '; tail -n +6 "$tmp/lr-3e-3/metrics.jsonl"; } > "$tmp/bad.jsonl"
"$plot" curves "$tmp/bad.jsonl" -o "$tmp/bad-line.png" 2> "$tmp/err"
grep -q "bad.jsonl:6: not JSON" "$tmp/err" || fail "the bad line is not reported with its place: $(cat "$tmp/err")"
check "$tmp/bad-line.png"
code=0; "$plot" curves "$tmp/lr-3e-3/metrics.jsonl" -o "$tmp/fig.gif" 2> /dev/null || code=$?
[ "$code" = 2 ] || fail "an unknown figure format was not a usage error ($code)"
ok "wrong inputs refused, a bad metrics line skipped with its place, an unknown format a usage error"
echo "kglm-plot: $pass checks passed"
