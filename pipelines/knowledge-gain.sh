#!/usr/bin/env bash
#SBATCH --job-name=kglm-knowledge-gain
#SBATCH --cpus-per-task=2
#SBATCH --mem=8G
#SBATCH --time=01:00:00
#SBATCH --output=knowledge-gain-%j.out
# Does pre-training on the knowledge graph put facts into the model? Two identical small XLM-R
# models are pre-trained from scratch for the same steps on the same natural text: (a) the
# fixtures' Wikipedia excerpt and X-FACTR-template sentences of the *other* relations of the
# X-FACTR dev KG; (b) the same plus KMLM's code-switched and parallel knowledge sentences of the
# probed relations, with the knowledge loss. Both are probed (X-FACTR) on the facts of the probed
# relations and of an untouched control relation, in English and two more languages; the report
# gives each arm's accuracy, the gain, the seeds and a paired bootstrap 95% interval over facts.
#
# Usage: pipelines/knowledge-gain.sh [OUTDIR]            (or: sbatch pipelines/knowledge-gain.sh OUTDIR)
# Settings (environment, with defaults): KGLM_BIN (build/bin), KGLM_FIXTURES (../shared/fixtures),
# PROBED (P30,P37,P36), CONTROL (P1412), LANGS (en,fr,es), SEEDS ("1 2"), STEPS (3000), BATCH (32),
# LAYERS (2), HIDDEN (128), HEADS (4), FFN (512), MAX_LEN (64), LR (2e-3), VOCAB (4000), THREADS (all),
# FACTS (200: the X-FACTR facts probed per relation, the first of each file; arm (b)'s knowledge is
# the store's statements of the probed relations between their subjects and objects), OTHER_MAX
# (3000: template sentences of the other relations), DRAWS (5: code-switched draws of each
# knowledge triple), ALPHA (0.5: KMLM's knowledge-loss weight α), METHODS (independent,confidence),
# BOOTSTRAP (2000).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
[ -n "${SLURM_SUBMIT_DIR:-}" ] && here=$SLURM_SUBMIT_DIR
bin=${KGLM_BIN:-$here/build/bin}
fx=${KGLM_FIXTURES:-$here/../shared/fixtures}
out=${1:-$here/out/knowledge-gain}
probed=${PROBED:-P30,P37,P36} control=${CONTROL:-P1412} langs=${LANGS:-en,fr,es} seeds=${SEEDS:-1 2}
steps=${STEPS:-3000} batch=${BATCH:-32} layers=${LAYERS:-2} hidden=${HIDDEN:-128} heads=${HEADS:-4} ffn=${FFN:-512}
max_len=${MAX_LEN:-64} lr=${LR:-2e-3} vocab=${VOCAB:-4000} methods=${METHODS:-independent,confidence}
threads=${THREADS:-$(nproc)} bootstrap=${BOOTSTRAP:-2000} other_max=${OTHER_MAX:-3000} draws=${DRAWS:-5}
facts=${FACTS:-200} alpha=${ALPHA:-0.5}
for f in xfactr-kg-dev.json.gz wikipedia/enwiki-sample-a.xml.bz2 xfactr/facts xfactr/templates xfactr/alias; do
  [ -e "$fx/$f" ] || { echo "knowledge-gain: $fx/$f is missing (KGLM_FIXTURES)" >&2; exit 1; }
done
mkdir -p "$out"
q=(--quiet --threads "$threads")
start=$(date +%s)
stage() { echo "== [$(( $(date +%s) - start ))s] $*"; }
others=${langs#en}
others=${others#,}

stage "the X-FACTR dev KG in $langs, the Wikipedia excerpt, relation co-occurrence"
"$bin/wd-extract" "$fx/xfactr-kg-dev.json.gz" -o "$out/kg.h5" --langs "$langs" "${q[@]}"
"$bin/wiki-extract" "$fx/wikipedia/enwiki-sample-a.xml.bz2" -o "$out/docs.jsonl" --redirects "$out/redirects.tsv" "${q[@]}"
"$bin/kg-align" --kg "$out/kg.h5" --redirects "$out/redirects.tsv" --cooc "$out/cooc.tsv" -o "$out/aligned.jsonl" \
  "$out/docs.jsonl" "${q[@]}"

stage "natural text for both arms: X-FACTR-template sentences of every relation but $probed,$control"
"$bin/verbalize" subgraphs --kg "$out/kg.h5" --cooc "$out/cooc.tsv" --kinds item -o "$out/subgraphs.jsonl" "${q[@]}"
python3 - "$out/subgraphs.jsonl" "$out/subgraphs-other.jsonl" "$probed,$control" "$other_max" <<'PY'
import json, sys
held = set(sys.argv[3].split(","))
kept = 0
with open(sys.argv[2], "w") as out:
    for line in open(sys.argv[1]):
        if kept == int(sys.argv[4]):
            break
        g = json.loads(line)
        keep = [i for i, f in enumerate(g["facts"]) if f[0] not in held]
        g["facts"] = [g["facts"][i] for i in keep]
        g["triples"] = [g["triples"][i] for i in keep]
        if g["facts"]:
            out.write(json.dumps(g) + "\n")
            kept += 1
print(f"   {kept} subgraphs without the probed and control relations (at most {sys.argv[4]})")
PY
"$bin/verbalize" render --kg "$out/kg.h5" --mode template --templates "$fx/xfactr/templates" --langs "$langs" \
  -o "$out/other-relations.jsonl" "$out/subgraphs-other.jsonl" "${q[@]}"

stage "arm (b)'s knowledge: KMLM code-switched and parallel sentences of $probed"
tr ',' '\n' <<< "$probed" > "$out/probed.txt"
python3 - "$fx/xfactr/facts" "$probed" "$facts" "$out/probed-entities.txt" <<'PY'
import json, os, sys
entities = set()
for rel in sys.argv[2].split(","):
    for i, line in enumerate(open(os.path.join(sys.argv[1], rel + ".jsonl"), encoding="utf-8")):
        if i == int(sys.argv[3]):
            break
        f = json.loads(line)
        entities.update((f["sub_uri"], f["obj_uri"]))
open(sys.argv[4], "w").write("\n".join(sorted(entities)) + "\n")
print(f"   {len(entities)} entities in the first {sys.argv[3]} facts of each probed relation")
PY
# Each triple code-switched $draws times (other seeds switch other items), and in every language.
: > "$out/kmlm-cs.jsonl"
for draw in $(seq "$draws"); do
  "$bin/cs-gen" kmlm --kg "$out/kg.h5" --langs "$others" --relations "$out/probed.txt" \
    --entities "$out/probed-entities.txt" --seed "$draw" -o - \
    "${q[@]}" >> "$out/kmlm-cs.jsonl"
done
"$bin/cs-gen" kmlm --kg "$out/kg.h5" --langs "$others" --relations "$out/probed.txt" \
  --entities "$out/probed-entities.txt" --mode parallel --pairs all \
  -o "$out/kmlm-parallel.jsonl" "${q[@]}"
for f in docs other-relations kmlm-cs kmlm-parallel; do printf '   %-16s %7d records\n' $f "$(wc -l < "$out/$f.jsonl")"; done

stage "a SentencePiece model of all the text (vocabulary $vocab), token datasets of both arms"
python3 - "$out/spm-corpus.txt" "$out/docs.jsonl" "$out/other-relations.jsonl" "$out/kmlm-cs.jsonl" \
  "$out/kmlm-parallel.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w", encoding="utf-8") as out:
    for path in sys.argv[2:]:
        for line in open(path, encoding="utf-8"):
            for text in json.loads(line)["text"].split("\n"):
                if text.strip():
                    out.write(text.replace("[mask]", " ") + "\n")
PY
spm_train --input="$out/spm-corpus.txt" --model_prefix="$out/spm" --vocab_size="$vocab" --hard_vocab_limit=false \
  --character_coverage=1.0 --num_threads="$threads" --minloglevel=2 > /dev/null 2>&1
"$bin/pretrain" prepare --tokenizer "$out/spm.model" --max-len "$max_len" -o "$out/a.h5" \
  "$out/docs.jsonl" "$out/other-relations.jsonl" "${q[@]}"
"$bin/pretrain" prepare --tokenizer "$out/spm.model" --max-len "$max_len" -o "$out/b.h5" \
  "$out/docs.jsonl" "$out/other-relations.jsonl" "$out/kmlm-cs.jsonl" "$out/kmlm-parallel.jsonl" "${q[@]}"

for seed in $seeds; do
  for arm in a b; do
    stage "pre-training arm ($arm), seed $seed: ${layers}x$hidden, $steps steps of $batch x $max_len"
    "$bin/pretrain" --data "$out/$arm.h5" --layers "$layers" --hidden "$hidden" --heads "$heads" --ffn "$ffn" \
      --batch "$batch" --steps "$steps" --lr "$lr" --warmup $((steps / 10)) --eval-fraction 0.02 --seed "$seed" \
      --kmlm-alpha "$alpha" \
      --out "$out/model-$arm-$seed" --stats "$out/pretrain-$arm-$seed.json" "${q[@]}"
    stage "probing arm ($arm), seed $seed on $probed and the control $control in $langs"
    "$bin/probe" --model "$out/model-$arm-$seed" --facts "$fx/xfactr/facts" --templates "$fx/xfactr/templates" \
      --aliases "$fx/xfactr/alias" --kg "$out/kg.h5" --langs "$langs" --relations "$probed,$control" --max-facts "$facts" \
      --method "$methods" -o "$out/probe-$arm-$seed" --predictions "$out/probe-$arm-$seed.jsonl" \
      --stats "$out/probe-$arm-$seed.stats.json" "${q[@]}"
    # Again without the short lower-case aliases (language codes such as "de", "en", which a
    # model says as words): what is left is what the model says about the entity.
    "$bin/probe" --model "$out/model-$arm-$seed" --facts "$fx/xfactr/facts" --templates "$fx/xfactr/templates" \
      --aliases "$fx/xfactr/alias" --kg "$out/kg.h5" --langs "$langs" --relations "$probed,$control" --max-facts "$facts" \
      --method "$methods" --skip-short-aliases -o "$out/strict-$arm-$seed" --predictions "$out/strict-$arm-$seed.jsonl" \
      "${q[@]}"
  done
done

stage "the report: accuracy of each arm, the gain and its paired bootstrap 95% interval over facts"
python3 "$here/pipelines/knowledge-gain-report.py" --probed "$probed" --control "$control" --seeds "$seeds" \
  --bootstrap "$bootstrap" --out "$out/knowledge-gain" "$out"
stage "the same without short lower-case aliases (probe --skip-short-aliases)"
python3 "$here/pipelines/knowledge-gain-report.py" --probed "$probed" --control "$control" --seeds "$seeds" \
  --bootstrap "$bootstrap" --runs strict --out "$out/knowledge-gain-strict" "$out"
stage "done"
