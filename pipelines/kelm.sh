#!/usr/bin/env bash
# KELM / TEKGEN (Agarwal et al., NAACL 2021): a Wikidata dump -> the KG store (wd-extract shards +
# merge), a Wikipedia dump -> documents (wiki-extract, one array task per part) -> KG statements
# aligned to the subject's lead sentences and relation co-occurrence counts (kg-align, one task per
# part) -> entity subgraphs built greedily from the summed counts (verbalize subgraphs) -> the
# subgraphs verbalized, one file per language (verbalize render, --shards array tasks and their
# merge). Runs here, or as Slurm jobs with
# --submit (man 7 kglm-slurm).
#SBATCH --cpus-per-task=8
#SBATCH --mem=32G
#SBATCH --time=04:00:00
source "${KGLM_HOME:-$(cd "$(dirname "$0")/.." && pwd)}/pipelines/lib/pipeline.sh"
pipeline_use wikidata

wikidata_options
wikipedia_options
pipeline_option langs KGLM_LANGS en,de,fr "languages of the KG labels kept and of the verbalized text"
pipeline_option mode KGLM_MODE template "verbalize render --mode: template, kmlm or linearize"
pipeline_option templates KGLM_TEMPLATES "$here/data/templates" "template mode: directory of LANG.jsonl templates"

stage_align_part() {
  echo "== kg-align part $TASK/$TASKS: $RUN/wiki/docs-$task_id.jsonl.zst -> $RUN/aligned/aligned-$task_id.jsonl.zst"
  slurm_script kg-align align "$KG" "$RUN/wiki" "$RUN/aligned"
}

stage_subgraphs() {
  echo "== verbalize subgraphs: co-occurrence counts of $WIKI_PARTS part(s) -> $RUN/aligned/subgraphs.jsonl"
  PARTS=$WIKI_PARTS slurm_script kg-align subgraphs "$KG" "$RUN/aligned"
}

stage_render_shard() {
  local templates=-
  [[ $KGLM_MODE == template ]] && templates=$KGLM_TEMPLATES
  echo "== verbalize render --mode $KGLM_MODE shard $TASK/$TASKS: $RUN/aligned/subgraphs.jsonl -> $RUN/kelm-parts/part-$task_id/"
  SHARDS=$TASKS slurm_script verbalize "$KG" "$RUN/aligned/subgraphs.jsonl" "$RUN/kelm" "$KGLM_MODE" "$templates" \
    "$KGLM_LANGS"
}

stage_render() {
  echo "== verbalize merge: $KGLM_SHARDS parts -> $RUN/kelm/LANG.jsonl"
  SHARDS=$KGLM_SHARDS slurm_script verbalize --merge "$RUN/kelm"
}

pipeline_start "$@"
wikidata_stages
wikipedia_stages
stage align --array "$WIKI_PARTS" --after "kg wiki" --out "$RUN/aligned/aligned-{task}.jsonl.zst" \
  --out "$RUN/aligned/cooc-{task}.tsv" -- stage_align_part
stage subgraphs --after "kg align" --out "$RUN/aligned/subgraphs.jsonl" -- stage_subgraphs
stage render-shard --array "$KGLM_SHARDS" --after "kg subgraphs" --in "$KGLM_TEMPLATES" \
  --out "$RUN/kelm-parts/part-{task}" -- stage_render_shard
stage render --after render-shard --out "$RUN/kelm" -- stage_render
pipeline_end
