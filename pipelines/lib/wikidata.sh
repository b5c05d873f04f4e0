# The stages every paper pipeline starts with, done by the tools' batch scripts in slurm/: the KG
# store from a Wikidata dump as a job array of shards and a merge (slurm/wd-extract.sbatch), and
# the parts of a Wikipedia dump cleaned as a job array, one task per part (slurm/wiki-extract.sbatch).
# Call wikidata_options (and wikipedia_options) before pipeline_start, wikidata_stages (and
# wikipedia_stages) after it. KG is the store's path; WIKI_PARTS the number of dump parts.

wikidata_options() {
  pipeline_option dump KGLM_DUMP "$here/data/wikidata-sample.json" "Wikidata JSON dump (gz, bz2, zst or plain)"
  pipeline_option shards KGLM_SHARDS 4 "array tasks of wd-extract and of the stages that split as it does (kg-cycles, cs-gen kmlm, verbalize render)"
  pipeline_option extract-args KGLM_EXTRACT_ARGS "" "more wd-extract options (e.g. --min-sitelinks 5)"
}

wikipedia_options() {
  pipeline_option wiki KGLM_WIKI "$here/data/enwiki-sample.xml" \
    "Wikipedia dump parts, one wiki-extract array task each (a glob, or paths, in version order)"
  pipeline_option wiki-shards KGLM_WIKI_SHARDS 1 \
    "array tasks over a --wiki of one file (plain XML or the multistream dump: wiki-extract --shard)"
}

stage_kg_shard() {
  local extra=()
  read -r -a extra <<< "$KGLM_EXTRACT_ARGS"
  echo "== wd-extract shard $TASK/$TASKS: $KGLM_DUMP -> $RUN/kg/part-$task_id.h5"
  SHARDS=$TASKS slurm_script wd-extract "$KGLM_DUMP" "$RUN/kg" --langs "en,$KGLM_LANGS" "${extra[@]}"
}

stage_kg_merge() {
  echo "== wd-extract merge: $KGLM_SHARDS shards -> $KG"
  SHARDS=$KGLM_SHARDS slurm_script wd-extract "$KGLM_DUMP" "$RUN/kg" --merge
}

wikidata_stages() {
  KG=$RUN/kg/kg.h5
  stage kg-shard --array "$KGLM_SHARDS" --in "$KGLM_DUMP" --out "$RUN/kg/part-{task}.h5" -- stage_kg_shard
  stage kg --after kg-shard --out "$KG" -- stage_kg_merge
}

stage_wiki_part() {
  echo "== wiki-extract part $TASK/$TASKS of $KGLM_WIKI -> $RUN/wiki/docs-$task_id.jsonl.zst"
  SHARDS=$TASKS slurm_script wiki-extract "$KGLM_WIKI" "$RUN/wiki"
}

# FORMAT's paths for the dump parts 0..WIKI_PARTS-1 (FORMAT has one %04d).
wiki_part_files() {
  local i
  for ((i = 0; i < WIKI_PARTS; i++)); do printf "$1\n" "$i"; done
}

wikipedia_stages() {
  local parts=() part inputs=()
  # The parts as slurm/wiki-extract.sbatch lists them.
  mapfile -t parts < <(ls -1 $KGLM_WIKI 2> /dev/null | sort -V)
  [[ ${#parts[@]} -gt 0 ]] || pipeline_fail 2 "no Wikipedia dump part matches '$KGLM_WIKI' (--wiki)"
  WIKI_PARTS=${#parts[@]}
  [[ $WIKI_PARTS -eq 1 && $KGLM_WIKI_SHARDS -gt 1 ]] && WIKI_PARTS=$KGLM_WIKI_SHARDS
  for part in "${parts[@]}"; do inputs+=(--in "$part"); done
  stage wiki --array "$WIKI_PARTS" "${inputs[@]}" --out "$RUN/wiki/docs-{task}.jsonl.zst" \
    --out "$RUN/wiki/redirects-{task}.tsv" -- stage_wiki_part
}
