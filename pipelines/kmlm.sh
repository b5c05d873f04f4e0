#!/usr/bin/env bash
# KMLM (Liu et al., EMNLP 2022): a Wikidata dump -> the KG store (wd-extract, one array task per
# shard, then the merge) -> code-switched, alias-replaced and parallel knowledge sentences (cs-gen
# kmlm, one array task per shard, then the merge) and reasoning samples from 3- and 4-cycles (kg-cycles, one array task per shard, then the
# merge) -> a SentencePiece model (none given) -> a token dataset (pretrain prepare, one array task
# per shard; pre-training reads the parts as one) -> pre-training
# with L = L_MLM + α(L_K + L_R). Runs here, or as Slurm jobs with --submit (man 7 kglm-slurm).
#SBATCH --cpus-per-task=8
#SBATCH --mem=32G
#SBATCH --time=04:00:00
source "${KGLM_HOME:-$(cd "$(dirname "$0")/.." && pwd)}/pipelines/lib/pipeline.sh"
pipeline_use train wikidata

wikidata_options
pipeline_option langs KGLM_LANGS de,fr,es,it,nl,vi,ja,zh,ko,ru,ar "target languages of the code-switched text"
pipeline_option cycles-args KGLM_CYCLES_ARGS "" "more kg-cycles options (default: hubs keep about 1000 edges)"
pipeline_option text KGLM_TEXT "" "Wikipedia text for L_MLM: LANG=FILE ... (none: knowledge and reasoning only)"
train_options

stage_kmlm_text_shard() {
  echo "== cs-gen kmlm shard $TASK/$TASKS: code-switched (+ alias) and parallel sentences -> $RUN/kmlm-*-parts/part-$task_id/"
  SHARDS=$TASKS slurm_script cs-gen kmlm "$KG" "$RUN" --langs "$KGLM_LANGS"
}

stage_kmlm_text() {
  echo "== cs-gen merge: $KGLM_SHARDS parts -> $RUN/kmlm-cs/, $RUN/kmlm-parallel/"
  SHARDS=$KGLM_SHARDS slurm_script cs-gen kmlm "$KG" "$RUN" --merge
}

stage_cycles_shard() {
  local extra=()
  read -r -a extra <<< "$KGLM_CYCLES_ARGS"
  echo "== kg-cycles shard $TASK/$TASKS: 3-cycles and 4-cycles with a diagonal -> $RUN/cycles-part-$task_id.h5"
  SHARDS=$TASKS slurm_script kg-cycles "$KG" "$RUN" "${extra[@]}"
}

stage_cycles() {
  echo "== kg-cycles merge: $KGLM_SHARDS parts -> $RUN/cycles.h5, reasoning samples -> $RUN/reasoning/"
  SHARDS=$KGLM_SHARDS slurm_script kg-cycles "$KG" "$RUN" --merge --text "$RUN/reasoning" --langs "en,$KGLM_LANGS"
}

kmlm_corpora() {
  local text=()
  read -r -a text <<< "$KGLM_TEXT"
  corpora=("$RUN/kmlm-cs" "$RUN/kmlm-parallel" "$RUN/reasoning" "${text[@]}")
}

stage_kmlm_tokenizer() {
  kmlm_corpora
  train_tokens_tokenizer "${corpora[@]}"
}

stage_kmlm_tokens() {
  kmlm_corpora
  train_tokens_part "${corpora[@]}"
}

stage_kmlm_pretrain() {
  TOKENS_PARTS=$KGLM_SHARDS train_pretrain
}

pipeline_start "$@"
wikidata_stages
stage kmlm-text-shard --array "$KGLM_SHARDS" --after kg --out "$RUN/kmlm-cs-parts/part-{task}" \
  --out "$RUN/kmlm-parallel-parts/part-{task}" -- stage_kmlm_text_shard
stage kmlm-text --after kmlm-text-shard --out "$RUN/kmlm-cs" --out "$RUN/kmlm-parallel" -- stage_kmlm_text
stage cycles-shard --array "$KGLM_SHARDS" --after kg --out "$RUN/cycles-part-{task}.h5" -- stage_cycles_shard
stage cycles --after cycles-shard --out "$RUN/cycles.h5" --out "$RUN/reasoning" -- stage_cycles
tokens_after="kmlm-text cycles"
if [[ -z $KGLM_TOKENIZER ]]; then
  stage tokenizer --after "kmlm-text cycles" --out "$RUN/spm.model" -- stage_kmlm_tokenizer
  tokens_after+=" tokenizer"
fi
stage tokens --array "$KGLM_SHARDS" --after "$tokens_after" --out "$RUN/tokens-part-{task}.h5" -- stage_kmlm_tokens
stage pretrain --after tokens --requeue --cpus 16 --time 24:00:00 --out "$RUN/ckpt" --out "$RUN/metrics.jsonl" \
  -- stage_kmlm_pretrain
pipeline_end
