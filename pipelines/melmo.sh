#!/usr/bin/env bash
# Multilingual ELMo's language sampling (Ravishankar et al., 2021): per-language corpora rebalanced
# with q_i ∝ p_i^α for each α given (the paper: 0.4 and 0.2), or truncated to the smallest language,
# one sample-lang array task per scheme -> a token dataset and a pre-trained model per scheme (one
# array task each), to compare the schemes. Runs here, or as Slurm jobs with --submit (man 7
# kglm-slurm).
#SBATCH --cpus-per-task=8
#SBATCH --mem=32G
#SBATCH --time=04:00:00
source "${KGLM_HOME:-$(cd "$(dirname "$0")/.." && pwd)}/pipelines/lib/pipeline.sh"
pipeline_use train

pipeline_option corpora KGLM_CORPORA "" \
  "per-language corpora: a directory of LANG.jsonl files, or LANG=FILE ... (sample-lang --input)"
pipeline_option schemes KGLM_SCHEMES "0.4 0.2 truncate" "sampling schemes, one array task each: an α, or truncate"
pipeline_option unit KGLM_UNIT lines "size unit of the sampling: lines, tokens or bytes"
train_options

# The scheme of array task TASK, and where its sample and model go.
scheme_of_task() {
  local schemes
  read -r -a schemes <<< "$KGLM_SCHEMES"
  scheme=${schemes[$TASK]}
  TRAIN_DIR=$RUN/scheme-$task_id
}

stage_sample() {
  local scheme TRAIN_DIR inputs=() smallest=()
  scheme_of_task
  read -r -a inputs <<< "$KGLM_CORPORA"
  [[ $scheme == truncate ]] || smallest=(--keep-smallest)
  echo "== sample-lang, scheme $scheme: $KGLM_CORPORA -> $TRAIN_DIR/corpus/"
  slurm_script sample-lang "$TRAIN_DIR/corpus/" "$scheme" "${inputs[@]}" --unit "$KGLM_UNIT" "${smallest[@]}"
}

stage_scheme_tokens() {
  local scheme TRAIN_DIR
  scheme_of_task
  train_tokens "$TRAIN_DIR/corpus"
}

stage_scheme_pretrain() {
  local scheme TRAIN_DIR
  scheme_of_task
  train_pretrain
}

pipeline_start "$@"
[[ -n "$KGLM_CORPORA" ]] || pipeline_fail 2 "no corpora: --corpora DIR or 'LANG=FILE ...' (or \$KGLM_CORPORA)"
read -r -a schemes <<< "$KGLM_SCHEMES"
stage sample --array "${#schemes[@]}" --out "$RUN/scheme-{task}/corpus" -- stage_sample
stage tokens --array "${#schemes[@]}" --after sample --out "$RUN/scheme-{task}/tokens.h5" -- stage_scheme_tokens
stage pretrain --array "${#schemes[@]}" --after tokens --requeue --cpus 16 --time 24:00:00 \
  --out "$RUN/scheme-{task}/ckpt" --out "$RUN/scheme-{task}/metrics.jsonl" -- stage_scheme_pretrain
pipeline_end
