#!/usr/bin/env bash
# `make demo`'s pipeline end to end (pipelines/demo.sh --force RUN), then its figures: each one
# kglm-plot drew is a PNG of a readable size and not blank (figure_check.py).
# Usage: demo.sh BIN_DIR SOURCE_DIR RUN
set -euo pipefail
bin=$1 src=$2 run=$3
KGLM_BIN=$bin "$src/pipelines/demo.sh" --force "$run"
figures=(pretrain-curves verbalizer-curves elmo-curves finetune-ner finetune-relation finetune-xlr frozen-elmo sample-lang)
paths=()
for f in "${figures[@]}"; do paths+=("$run/figures/$f.png"); done
/usr/bin/python3 "$src/tests/cli/figure_check.py" "${paths[@]}"
[ "$(ls "$run/figures" | wc -l)" = ${#figures[@]} ] || { echo "FAIL: figures: $(ls "$run/figures")" >&2; exit 1; }
echo "ok: the demo and its ${#figures[@]} figures"
