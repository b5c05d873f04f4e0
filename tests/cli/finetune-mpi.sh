#!/usr/bin/env bash
# Data-parallel finetune over MPI ranks on the CPU: 2 ranks share the global batch and give the run
# of 1 process (token and relation tasks, dropout on, dev evaluation: logs within 1e-6, the best
# model and the optimizer state within 1e-5, the same scores); a global batch smaller than the
# ranks is a usage error.
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
PY

for task in token relation; do
  data=$([ $task = token ] && echo "$tmp/tags.panx" || echo "$tmp/rel.relx")
  run=(--task $task --init "$tmp/init" --train "$data" --dev "en=$data" --epochs 1 --batch 8 --lr 2e-3 --dropout 0.1
    --eval-every 10 --save-every 25 --seeds 4 --threads 1 --quiet)
  "$bin/finetune" "${run[@]}" --stop-after 25 -o "$tmp/one-$task" || [ $? -eq 75 ] || fail "1 process, $task"
  cp -r "$tmp/one-$task/seed-4/checkpoint" "$tmp/one-$task-ckpt"
  cp "$tmp/one-$task/seed-4/metrics.jsonl" "$tmp/one-$task-stopped.jsonl"
  "$bin/finetune" "${run[@]}" --resume -o "$tmp/one-$task"
  timeout 300 mpirun -np 2 "$bin/finetune" "${run[@]}" --stop-after 25 -o "$tmp/two-$task" || [ $? -eq 75 ] \
    || fail "2 ranks, $task"
  $compare "$tmp/one-$task-stopped.jsonl" "$tmp/two-$task/seed-4/metrics.jsonl" "$tmp/one-$task-ckpt" \
    "$tmp/two-$task/seed-4/checkpoint" || fail "2 ranks differ from 1 process at the checkpoint ($task)"
  timeout 300 mpirun -np 2 "$bin/finetune" "${run[@]}" --resume -o "$tmp/two-$task" || fail "2 ranks resumed, $task"
  $compare "$tmp/one-$task/seed-4/metrics.jsonl" "$tmp/two-$task/seed-4/metrics.jsonl" "$tmp/one-$task/seed-4/best" \
    "$tmp/two-$task/seed-4/best" model.safetensors || fail "2 ranks differ from 1 process ($task)"
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
