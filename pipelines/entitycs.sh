#!/usr/bin/env bash
# EntityCS (Whitehouse et al., 2022): a Wikidata dump -> the KG store (wd-extract shards + merge), a
# Wikipedia dump -> documents with wikilinks (wiki-extract, one array task per dump part) -> English
# sentences with every linked entity switched to a target language, <e>…</e> marked (cs-gen
# entitycs, one task per part) -> a token dataset -> pre-training with an entity-prediction
# objective (PEP_MS + MLM by default), the embeddings and the last two layers trained, one language
# per batch. Runs here, or as Slurm jobs with --submit (man 7 kglm-slurm).
#SBATCH --cpus-per-task=8
#SBATCH --mem=32G
#SBATCH --time=04:00:00
source "${KGLM_HOME:-$(cd "$(dirname "$0")/.." && pwd)}/pipelines/lib/pipeline.sh"
pipeline_use train wikidata

wikidata_options
wikipedia_options
pipeline_option langs KGLM_LANGS de,fr,es,it,nl,vi,ja,zh,ko,ru,ar "candidate target languages of the switch"
pipeline_option entity-objective KGLM_ENTITY_OBJECTIVE pep-ms+mlm "pretrain --entity-objective"
pipeline_option train-layers KGLM_TRAIN_LAYERS last:2 "pretrain --train-layers (the paper: embeddings + last two)"
train_options

stage_entitycs_part() {
  echo "== cs-gen entitycs part $TASK/$TASKS: $RUN/wiki/docs-$task_id.jsonl.zst -> $RUN/entitycs/entitycs-$task_id.jsonl.zst"
  slurm_script cs-gen entitycs "$KG" "$RUN/entitycs" "$RUN/wiki" --langs "$KGLM_LANGS"
}

stage_entitycs_pretrain() {
  TOKENS_PARTS=$KGLM_SHARDS train_pretrain --entity-objective "$KGLM_ENTITY_OBJECTIVE" --train-layers "$KGLM_TRAIN_LAYERS" --lang-alpha 1
}

pipeline_start "$@"
wikidata_stages
wikipedia_stages
# The corpora as files: in a directory, pretrain prepare would take each file name for a language.
mapfile -t corpora < <(wiki_part_files "$RUN/entitycs/entitycs-%04d.jsonl.zst")
stage entitycs --array "$WIKI_PARTS" --after "kg wiki" --out "$RUN/entitycs/entitycs-{task}.jsonl.zst" \
  -- stage_entitycs_part
tokens_after=entitycs
if [[ -z $KGLM_TOKENIZER ]]; then
  stage tokenizer --after entitycs --out "$RUN/spm.model" -- train_tokens_tokenizer "${corpora[@]}"
  tokens_after+=" tokenizer"
fi
# Each task the EntityCS parts whose first byte is in its share (pretrain prepare --shard).
stage tokens --array "$KGLM_SHARDS" --after "$tokens_after" --out "$RUN/tokens-part-{task}.h5" \
  -- train_tokens_part "${corpora[@]}"
stage pretrain --after tokens --requeue --cpus 16 --time 24:00:00 --out "$RUN/ckpt" --out "$RUN/metrics.jsonl" \
  -- stage_entitycs_pretrain
pipeline_end
