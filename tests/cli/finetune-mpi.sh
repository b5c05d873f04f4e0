#!/usr/bin/env bash
# Data-parallel finetune over MPI ranks on the CPU: 2 ranks share the global batch and give the run
# of 1 process (token, relation, qa, slots with intents and wic; dropout on, dev evaluation: logs
# within 1e-6, the best model and the optimizer state within 1e-5, the same scores); a global batch
# smaller than the ranks is a usage error.
set -euo pipefail
bin=$1 fixtures=$2 src=$3
spm=$fixtures/tokenizer/spm-test-vocab1000.model
text=$fixtures/tokenizer/botchan.txt
source "$src/tests/cli/common.sh" "$spm"
command -v mpirun > /dev/null || { echo "no mpirun: skipped"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
compare="python3 $src/tests/cli/compare_runs.py"

"$bin/pretrain" prepare --tokenizer "$spm" --max-len 48 -o "$tmp/data.h5" --quiet "en=$text"
"$bin/pretrain" --data "$tmp/data.h5" --layers 2 --hidden 32 --heads 4 --ffn 64 --batch 8 --steps 5 --lr 3e-3 \
  --threads 1 --quiet --out "$tmp/init"
python3 - "$text" "$tmp" <<'PY'
import random, sys
random.seed(3)
lines = [l.strip() for l in open(sys.argv[1], encoding="utf-8") if len(l.split()) > 5 and "\t" not in l][:400]
with open(f"{sys.argv[2]}/tags.panx", "w", encoding="utf-8") as f:
    for l in lines:
        for w in l.split()[:20]:
            f.write(f"en:{w}\t{'B-CAP' if w[0].isupper() else 'O'}\n")
        f.write("\n")
with open(f"{sys.argv[2]}/rel.relx", "w", encoding="utf-8") as f:
    for i, l in enumerate(lines):
        ws = l.split()[:10]
        a, b = sorted(random.sample(range(len(ws)), 2))
        ws[a], ws[b] = f"<e1>{ws[a]}</e1>", f"<e2>{ws[b]}</e2>"
        f.write(f"{i}\t\"{' '.join(ws)}\"\n{'near' if b - a < 3 else 'far'}\n\n")
import json
# qa: which word is third (SQuAD JSON); slots: capitalised words as a slot, an intent by length (MASSIVE).
paragraphs = [{"context": l, "qas": [{"id": str(i), "question": "which word is third?",
              "answers": [{"text": l.split()[2], "answer_start": l.index(l.split()[2])}]}]} for i, l in enumerate(lines)]
json.dump({"version": "1.1", "data": [{"title": "botchan", "paragraphs": paragraphs}]},
          open(f"{sys.argv[2]}/qa.json", "w", encoding="utf-8"))
with open(f"{sys.argv[2]}/slots.jsonl", "w", encoding="utf-8") as f:
    for l in lines:
        ws = [f"[cap : {w}]" if w[0].isupper() and w.isalpha() else w.replace("[", "(").replace("]", ")")
              for w in l.split()[:15]]
        f.write(json.dumps({"locale": "en-US", "intent": "long" if len(l.split()) > 12 else "short",
                            "annot_utt": " ".join(ws)}) + "\n")
PY
head -400 "$src/tests/data/wic/train.data.txt" > "$tmp/wic.data.txt"
head -400 "$src/tests/data/wic/train.gold.txt" > "$tmp/wic.gold.txt"

for task in token relation qa slots wic; do
  extra=() weights=() files=()
  case $task in
    token) data=$tmp/tags.panx ;;
    relation) data=$tmp/rel.relx ;;
    qa) data=$tmp/qa.json extra=(--doc-stride 8)
      # A bias added to every position's start (or end) score cancels in the softmax over a window's
      # positions: the loss gradient of qa_outputs.bias, and of the last LayerNorm's bias through it,
      # is zero but for rounding, which Adam turns into steps that differ with the summation order
      # (of no effect on any score). Those two are left out, and so is the optimizer state (one
      # tensor for every parameter); the logs and scores must agree as for the other tasks.
      weights=(--ignore qa_outputs.bias --ignore roberta.encoder.layer.1.output.LayerNorm.bias)
      files=(model.safetensors) ;;
    slots) data=$tmp/slots.jsonl extra=(--intent)
      # The attention key biases (their gradient, a shift of every score of a softmax row, is zero but
      # for rounding) and rarely seen word embeddings move by Adam steps of rounding noise: up to
      # 1.5e-5 in this run, two heads' gradients summed.
      weights=(--weights-within 5e-5) ;;
    wic) data=$tmp/wic.data.txt ;;
  esac
  run=(--task $task --init "$tmp/init" --train "$data" --dev "en=$data" --epochs 1 --batch 8 --lr 2e-3 --dropout 0.1
    --eval-every 10 --save-every 25 --seeds 4 --threads 1 --quiet "${extra[@]}")
  "$bin/finetune" "${run[@]}" --stop-after 25 -o "$tmp/one-$task" || [ $? -eq 75 ] || fail "1 process, $task"
  cp -r "$tmp/one-$task/seed-4/checkpoint" "$tmp/one-$task-ckpt"
  cp "$tmp/one-$task/seed-4/metrics.jsonl" "$tmp/one-$task-stopped.jsonl"
  "$bin/finetune" "${run[@]}" --resume -o "$tmp/one-$task"
  timeout 300 mpirun -np 2 "$bin/finetune" "${run[@]}" --stop-after 25 -o "$tmp/two-$task" || [ $? -eq 75 ] \
    || fail "2 ranks, $task"
  $compare "${weights[@]}" "$tmp/one-$task-stopped.jsonl" "$tmp/two-$task/seed-4/metrics.jsonl" "$tmp/one-$task-ckpt" \
    "$tmp/two-$task/seed-4/checkpoint" "${files[@]}" || fail "2 ranks differ from 1 process at the checkpoint ($task)"
  timeout 300 mpirun -np 2 "$bin/finetune" "${run[@]}" --resume -o "$tmp/two-$task" || fail "2 ranks resumed, $task"
  $compare "${weights[@]}" "$tmp/one-$task/seed-4/metrics.jsonl" "$tmp/two-$task/seed-4/metrics.jsonl" \
    "$tmp/one-$task/seed-4/best" "$tmp/two-$task/seed-4/best" model.safetensors || fail "2 ranks differ from 1 process ($task)"
  python3 - "$tmp/one-$task/results.json" "$tmp/two-$task/results.json" <<'PY' || fail "scores differ ($task)"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert abs(a["dev"]["mean"] - b["dev"]["mean"]) < 1e-9 and a["languages"] == b["languages"], (a, b)
PY
  ok "$task: 2 ranks x 4 examples = 1 process x 8 (dropout, dev evaluation, a checkpoint and --resume)"
done

code=0; timeout 300 mpirun -np 2 "$bin/finetune" --task token --init "$tmp/init" --train "$tmp/tags.panx" --batch 1 \
  -o "$tmp/bad" 2> "$tmp/err" || code=$?
[ $code -ne 0 ] && grep -q "global batch" "$tmp/err" || fail "--batch 1 on 2 ranks: exit $code $(cat "$tmp/err")"
ok "a global batch smaller than the ranks is refused"
echo "$pass passed"
