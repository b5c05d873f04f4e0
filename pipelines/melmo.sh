#!/usr/bin/env bash
# Multilingual ELMo (Ravishankar et al., 2021): per-language corpora rebalanced with q_i ∝ p_i^α for
# each α given (the paper: 0.4 and 0.2), truncated to the smallest language, or one language alone
# at its α = 0.4 size (the paper's monolingual models) — one sample-lang array task per scheme —
# then per scheme the word vocabulary, the word dataset and an ELMo model trained as bilm-tf trains
# it (pretrain --architecture elmo; AllenNLP's options.json + weights.hdf5 + vocab.txt); then each
# model is evaluated frozen on every task and language it has data for (§3.3: UD PoS and parsing
# per language, PoS transfer from English, XNLI with ESIM trained on English and tested on every
# language, Tatoeba; finetune --task pos|parse|nli, finetune retrieve),
# and RUN/table1.tsv (task averages per model) and RUN/table4.tsv (task × model × language) are
# written in the paper's layout. Runs here, or as Slurm jobs with --submit (man 7 kglm-slurm).
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
pipeline_option ud-train KGLM_UD_TRAIN "" "UD training treebanks, LANG=FILE ... (CoNLL-U): PoS and parsing per language"
pipeline_option ud-test KGLM_UD_TEST "" "UD test treebanks, LANG=FILE ...: each scored after LANG's training treebank"
pipeline_option transfer-from KGLM_TRANSFER_FROM en "PoS transfer: trained on this language, tested on the others"
pipeline_option xnli-train KGLM_XNLI_TRAIN "" "XNLI training pairs, LANG=FILE (TSV): ESIM, tested on every --xnli-test"
pipeline_option xnli-test KGLM_XNLI_TEST "" "XNLI test pairs, LANG=FILE ... (zero-shot for the other languages)"
pipeline_option xnli-columns KGLM_XNLI_COLUMNS "1 2 3" \
  "the XNLI files' premise, hypothesis and label columns: numbers (no header, XTREME's files) or header names"
pipeline_option tatoeba KGLM_TATOEBA "" "Tatoeba pairs, LANG=XX_FILE,EN_FILE ... (finetune retrieve)"
pipeline_option eval-seeds KGLM_EVAL_SEEDS 1,2,3 "the runs of each trained task (the paper: three)"
pipeline_option eval-args KGLM_EVAL_ARGS "" "more finetune options for PoS, parsing and XNLI (--epochs, --batch, ...)"

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

# The file of LANG in a "LANG=FILE ..." list, or nothing.
file_of() {
  local item
  for item in $2; do [[ ${item%%=*} == "$1" ]] && echo "${item#*=}"; done
  return 0
}

# Frozen-feature evaluation of the scheme's model: every task and language it has data for.
stage_scheme_evaluate() {
  local scheme TRAIN_DIR model out lang train test mono= tests=() pairs=() extra=() item
  scheme_of_task
  [[ $scheme == mono:* ]] && mono=${scheme#mono:}
  model=$TRAIN_DIR/ckpt out=$TRAIN_DIR/eval
  read -r -a extra <<< "$KGLM_EVAL_ARGS"
  mkdir -p "$out"
  rm -rf "${out:?}"/pos-* "$out"/parse-* "$out"/xnli "$out"/tatoeba.* "$(tensorboard_dir "$scheme")"
  local frozen=("$bin/finetune" --init "$model" --seeds "$KGLM_EVAL_SEEDS" --threads "${SLURM_CPUS_PER_TASK:-$(nproc)}"
    --quiet "${extra[@]}")
  # frozen_eval NAME FINETUNE_OPTION...: one evaluation into $out/NAME, its TensorBoard runs beside the others'.
  frozen_eval() { local name=$1; shift; "${frozen[@]}" "$@" --out "$out/$name" --tensorboard "$(tensorboard_dir "$scheme/$name")"; }
  for item in $KGLM_UD_TRAIN; do
    lang=${item%%=*} train=${item#*=} test=$(file_of "$lang" "$KGLM_UD_TEST")
    [[ -n $test && ( -z $mono || $lang == "$mono" ) ]] || continue
    echo "== $scheme: PoS and parsing, $lang"
    frozen_eval pos-$lang --task pos --train "$lang=$train" --test "$lang=$test"
    frozen_eval parse-$lang --task parse --train "$lang=$train" --test "$lang=$test"
  done
  [[ -n $mono ]] && return 0  # a monolingual model: its own language only, as the paper's MONO rows
  train=$(file_of "$KGLM_TRANSFER_FROM" "$KGLM_UD_TRAIN")
  for item in $KGLM_UD_TEST; do [[ ${item%%=*} == "$KGLM_TRANSFER_FROM" ]] || tests+=(--test "$item"); done
  if [[ -n $train && ${#tests[@]} -gt 0 ]]; then
    echo "== $scheme: PoS transfer from $KGLM_TRANSFER_FROM"
    frozen_eval pos-transfer --task pos --train "$KGLM_TRANSFER_FROM=$train" "${tests[@]}"
  fi
  if [[ -n $KGLM_XNLI_TRAIN && -n $KGLM_XNLI_TEST ]]; then
    local columns xnli_tests=()
    read -r -a columns <<< "$KGLM_XNLI_COLUMNS"
    for item in $KGLM_XNLI_TEST; do xnli_tests+=(--test "$item"); done
    echo "== $scheme: XNLI (ESIM), trained on ${KGLM_XNLI_TRAIN%%=*}"
    frozen_eval xnli --task nli --train "$KGLM_XNLI_TRAIN" --text-column "${columns[0]}" --pair-column "${columns[1]}" \
      --label-column "${columns[2]}" "${xnli_tests[@]}"
  fi
  for item in $KGLM_TATOEBA; do pairs+=(--pairs "$item"); done
  if [[ ${#pairs[@]} -gt 0 ]]; then
    echo "== $scheme: Tatoeba"
    "$bin/finetune" retrieve --model "$model" "${pairs[@]}" --quiet -o "$out/tatoeba"
  fi
}

stage_tables() {
  echo "== the paper's Table 1 and Table 4: $RUN/table1.tsv, $RUN/table4.tsv"
  python3 "$here/pipelines/lib/melmo_tables.py" "$RUN" $KGLM_SCHEMES
  cat "$RUN/table1.tsv"
}

pipeline_start "$@"
[[ -n "$KGLM_CORPORA" ]] || pipeline_fail 2 "no corpora: --corpora DIR or 'LANG=FILE ...' (or \$KGLM_CORPORA)"
read -r -a schemes <<< "$KGLM_SCHEMES"
stage sample --array "${#schemes[@]}" --out "$RUN/scheme-{task}/corpus" -- stage_sample
stage words --array "${#schemes[@]}" --after sample --out "$RUN/scheme-{task}/vocab.txt" \
  --out "$RUN/scheme-{task}/tokens.h5" -- stage_scheme_words
stage pretrain --array "${#schemes[@]}" --after words --requeue --cpus 16 --time 24:00:00 \
  --out "$RUN/scheme-{task}/ckpt" --out "$RUN/scheme-{task}/metrics.jsonl" -- stage_scheme_pretrain
if [[ -n "$KGLM_UD_TRAIN$KGLM_TATOEBA$KGLM_XNLI_TRAIN" ]]; then
  stage evaluate --array "${#schemes[@]}" --after pretrain --cpus 8 --out "$RUN/scheme-{task}/eval" \
    -- stage_scheme_evaluate
  stage tables --after evaluate --out "$RUN/table1.tsv" --out "$RUN/table4.tsv" -- stage_tables
fi
pipeline_end
