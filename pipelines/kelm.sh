#!/usr/bin/env bash
# KELM / TEKGEN (Agarwal et al., NAACL 2021): a Wikidata dump -> the KG store (wd-extract shards +
# merge), a Wikipedia dump -> documents (wiki-extract, one array task per part) -> KG statements
# aligned to the subject's lead sentences and relation co-occurrence counts (kg-align, one task per
# part) -> entity subgraphs built greedily from the summed counts (verbalize subgraphs) -> the
# subgraphs verbalized, one file per language (verbalize render). Runs here, or as Slurm jobs with
# --submit (man 7 kglm-slurm).
#SBATCH --cpus-per-task=8
#SBATCH --mem=32G
#SBATCH --time=04:00:00
set -euo pipefail
here=${KGLM_HOME:-$(cd "$(dirname "$0")/.." && pwd)}
source "$here/pipelines/lib/pipeline.sh"
source "$here/pipelines/lib/wikidata.sh"

wikidata_options
wikipedia_options
pipeline_option langs KGLM_LANGS en,de,fr "languages of the KG labels kept and of the verbalized text"
pipeline_option mode KGLM_MODE template "verbalize render --mode: template, kmlm or linearize"
pipeline_option templates KGLM_TEMPLATES "$here/data/templates" "template mode: directory of LANG.jsonl templates"

stage_align_part() {
  mkdir -p "$RUN/aligned"
  echo "== kg-align part $TASK/$TASKS: $RUN/wiki/docs-$task_id.jsonl -> $RUN/aligned/part-$task_id.jsonl"
  "$bin/kg-align" --kg "$RUN/kg.h5" --redirects <(all_redirects) --cooc "$RUN/aligned/cooc-$task_id.tsv" \
    -o "$RUN/aligned/part-$task_id.jsonl" --threads "${SLURM_CPUS_PER_TASK:-$(nproc)}" \
    --stats "$RUN/aligned/part-$task_id.stats.json" --quiet "$RUN/wiki/docs-$task_id.jsonl"
}

stage_subgraphs() {
  local parts counts=() i
  words parts "$KGLM_WIKI"
  for ((i = 0; i < ${#parts[@]}; i++)); do counts+=("$RUN/aligned/cooc-$(printf %04d "$i").tsv"); done
  echo "== verbalize subgraphs: co-occurrence counts of ${#parts[@]} part(s) -> $RUN/subgraphs.jsonl"
  "$bin/verbalize" subgraphs --kg "$RUN/kg.h5" --cooc "${counts[@]}" -o "$RUN/subgraphs.jsonl" \
    --threads "${SLURM_CPUS_PER_TASK:-$(nproc)}" --stats "$RUN/subgraphs.stats.json" --quiet
}

stage_render() {
  local templates=()
  [[ $KGLM_MODE == template ]] && templates=(--templates "$KGLM_TEMPLATES")
  echo "== verbalize render --mode $KGLM_MODE: $RUN/subgraphs.jsonl -> $RUN/kelm/LANG.jsonl"
  "$bin/verbalize" render --kg "$RUN/kg.h5" --mode "$KGLM_MODE" "${templates[@]}" --langs "$KGLM_LANGS" \
    --split-by-lang "$RUN/kelm" --threads "${SLURM_CPUS_PER_TASK:-$(nproc)}" --stats "$RUN/kelm.stats.json" --quiet \
    "$RUN/subgraphs.jsonl"
}

pipeline_start "$@"
words wiki_parts "$KGLM_WIKI"
wikidata_stages
wikipedia_stages
stage align --array "${#wiki_parts[@]}" --after "kg wiki" --out "$RUN/aligned/part-{task}.jsonl" \
  --out "$RUN/aligned/cooc-{task}.tsv" -- stage_align_part
stage subgraphs --after "kg align" --out "$RUN/subgraphs.jsonl" -- stage_subgraphs
stage render --after "kg subgraphs" --in "$KGLM_TEMPLATES" --out "$RUN/kelm" -- stage_render
pipeline_end
