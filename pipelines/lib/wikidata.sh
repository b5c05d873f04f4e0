# The stages every paper pipeline starts with: the KG store from a Wikidata dump as a job array of
# shards and a merge, and Wikipedia dump parts cleaned as a job array (one task per part). Sourced
# after pipeline.sh; call wikidata_options (and wikipedia_options) before pipeline_start, then
# wikidata_stages (and wikipedia_stages) after it.

wikidata_options() {
  pipeline_option dump KGLM_DUMP "$here/data/wikidata-sample.json" "Wikidata JSON dump (gz, bz2, zst or plain)"
  pipeline_option shards KGLM_SHARDS 4 "wd-extract array tasks (task i parses the entities at line ordinals = i mod N)"
  pipeline_option extract-args KGLM_EXTRACT_ARGS "" "more wd-extract options (e.g. --min-sitelinks 5)"
}

wikipedia_options() {
  pipeline_option wiki KGLM_WIKI "$here/data/enwiki-sample.xml" \
    "Wikipedia dump parts, one wiki-extract array task each (paths or globs, space-separated)"
}

stage_kg_shard() {
  local extra=()
  read -r -a extra <<< "$KGLM_EXTRACT_ARGS"
  mkdir -p "$RUN/kg"
  echo "== wd-extract shard $TASK/$TASKS: $KGLM_DUMP -> $RUN/kg/part-$task_id.h5"
  "$bin/wd-extract" "$KGLM_DUMP" --shard "$TASK/$TASKS" --langs "en,$KGLM_LANGS" --threads "${SLURM_CPUS_PER_TASK:-$(nproc)}" \
    -o "$RUN/kg/part-$task_id.h5" --stats "$RUN/kg/part-$task_id.stats.json" --quiet "${extra[@]}"
}

stage_kg_merge() {
  local parts=() i
  for ((i = 0; i < KGLM_SHARDS; i++)); do parts+=("$RUN/kg/part-$(printf %04d "$i").h5"); done
  echo "== wd-extract merge: $KGLM_SHARDS shards -> $RUN/kg.h5"
  "$bin/wd-extract" merge "${parts[@]}" -o "$RUN/kg.h5" --stats "$RUN/kg.stats.json" --quiet
}

wikidata_stages() {
  stage kg-shard --array "$KGLM_SHARDS" --in "$KGLM_DUMP" --out "$RUN/kg/part-{task}.h5" -- stage_kg_shard
  stage kg --after kg-shard --out "$RUN/kg.h5" -- stage_kg_merge
}

stage_wiki_part() {
  local parts
  words parts "$KGLM_WIKI"
  mkdir -p "$RUN/wiki"
  echo "== wiki-extract part $TASK/$TASKS: ${parts[$TASK]} -> $RUN/wiki/docs-$task_id.jsonl"
  "$bin/wiki-extract" "${parts[$TASK]}" -o "$RUN/wiki/docs-$task_id.jsonl" --redirects "$RUN/wiki/redirects-$task_id.tsv" \
    --threads "${SLURM_CPUS_PER_TASK:-$(nproc)}" --stats "$RUN/wiki/docs-$task_id.stats.json" --quiet
}

# The redirects of every part, for a stage that resolves links (a redirect may point across parts).
all_redirects() { cat "$RUN"/wiki/redirects-*.tsv; }

wikipedia_stages() {
  local parts inputs=() part
  words parts "$KGLM_WIKI"
  for part in "${parts[@]}"; do inputs+=(--in "$part"); done
  stage wiki --array "${#parts[@]}" "${inputs[@]}" --out "$RUN/wiki/docs-{task}.jsonl" \
    --out "$RUN/wiki/redirects-{task}.tsv" -- stage_wiki_part
}
