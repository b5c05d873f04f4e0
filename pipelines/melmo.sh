#!/usr/bin/env bash
# Multilingual ELMo (Ravishankar et al., 2021): per-language corpora rebalanced with q_i ∝ p_i^α for
# each α given (the paper: 0.4 and 0.2), truncated to the smallest language, or one language alone
# at its α = 0.4 size (the paper's monolingual models) — one sample-lang array task per scheme —
# then per scheme the word vocabulary, the word dataset and an ELMo model trained as bilm-tf trains
# it (pretrain --architecture elmo; AllenNLP's options.json + weights.hdf5 + vocab.txt). Runs here,
# or as Slurm jobs with --submit (man 7 kglm-slurm).
#SBATCH --cpus-per-task=8
#SBATCH --mem=32G
#SBATCH --time=04:00:00
source "${KGLM_HOME:-$(cd "$(dirname "$0")/.." && pwd)}/pipelines/lib/pipeline.sh"
pipeline_use train

pipeline_option corpora KGLM_CORPORA "" \
  "per-language corpora: a directory of LANG.jsonl files, or LANG=FILE ... (sample-lang --input)"
pipeline_option schemes KGLM_SCHEMES "0.4 0.2 truncate" \
  "sampling schemes, one array task each: an α, truncate, or mono:LANG (LANG alone at its α = 0.4 size)"
pipeline_option unit KGLM_UNIT lines "size unit of the sampling: lines, tokens or bytes"
elmo_options

# The scheme of array task TASK, and where its sample and model go.
scheme_of_task() {
  local schemes
  read -r -a schemes <<< "$KGLM_SCHEMES"
  scheme=${schemes[$TASK]}
  TRAIN_DIR=$RUN/scheme-$task_id
}

stage_sample() {
  local scheme TRAIN_DIR inputs=() smallest=() alpha lang
  scheme_of_task
  read -r -a inputs <<< "$KGLM_CORPORA"
  alpha=$scheme lang=
  [[ $scheme == mono:* ]] && alpha=0.4 lang=${scheme#mono:}
  [[ $alpha == truncate ]] || smallest=(--keep-smallest)
  echo "== sample-lang, scheme $scheme: $KGLM_CORPORA -> $TRAIN_DIR/corpus/"
  slurm_script sample-lang "$TRAIN_DIR/corpus/" "$alpha" "${inputs[@]}" --unit "$KGLM_UNIT" "${smallest[@]}"
  if [[ -n $lang ]]; then  # the same α = 0.4 sample (same seed), this language's part alone
    [[ -n $(find "$TRAIN_DIR/corpus" -type f -name "$lang.*" -size +0) ]] ||
      pipeline_fail 1 "$scheme: no '$lang' corpus among $KGLM_CORPORA"
    find "$TRAIN_DIR/corpus" -type f ! -name "$lang.*" -delete
  fi
}

stage_scheme_words() {
  local scheme TRAIN_DIR
  scheme_of_task
  elmo_words "$TRAIN_DIR/corpus"
}

stage_scheme_pretrain() {
  local scheme TRAIN_DIR
  scheme_of_task
  elmo_pretrain
  python3 -c "
import json, sys
evals = [l for l in map(json.loads, open(sys.argv[1])) if 'eval_ppl' in l]
print('   scheme %s: held-out perplexity %s' % (sys.argv[2], ' -> '.join('%.1f' % e['eval_ppl'] for e in evals)))
" "$TRAIN_DIR/metrics.jsonl" "$scheme"
}

pipeline_start "$@"
[[ -n "$KGLM_CORPORA" ]] || pipeline_fail 2 "no corpora: --corpora DIR or 'LANG=FILE ...' (or \$KGLM_CORPORA)"
read -r -a schemes <<< "$KGLM_SCHEMES"
stage sample --array "${#schemes[@]}" --out "$RUN/scheme-{task}/corpus" -- stage_sample
stage words --array "${#schemes[@]}" --after sample --out "$RUN/scheme-{task}/vocab.txt" \
  --out "$RUN/scheme-{task}/tokens.h5" -- stage_scheme_words
stage pretrain --array "${#schemes[@]}" --after words --requeue --cpus 16 --time 24:00:00 \
  --out "$RUN/scheme-{task}/ckpt" --out "$RUN/scheme-{task}/metrics.jsonl" -- stage_scheme_pretrain
pipeline_end
