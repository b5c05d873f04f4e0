#!/usr/bin/env bash
# slurm/pretrain-multinode.sbatch under a real Slurm (tests/slurm/cluster.sh): a 2-task job on the
# local node runs pretrain on 2 MPI ranks (LAUNCH=mpirun inside the allocation; LAUNCH=srun too
# where Slurm has PMIx), CPU backend. Its losses and weights agree with one process's run of the
# same global batch (tests/cli/compare_runs.py), and the log is where --output says.
set -euo pipefail
bin=$1 src=$2 fixtures=${3:-}
source "$src/tests/cli/common.sh" "$src/data"
source "$src/tests/slurm/common.sh"
command -v mpirun > /dev/null || { echo "skipped: no mpirun"; exit 77; }
model=(--layers 2 --hidden 32 --heads 4 --ffn 64 --batch 8 --steps 12 --lr 1e-3 --eval-fraction 0.1 --seed 5)

mkdir -p "$tmp/run" "$tmp/one"
python3 -c "
import json
with open('$tmp/text.jsonl', 'w') as out:
    for line in open('$src/data/enwiki-sample.xml', encoding='utf-8'):
        line = line.strip()
        if len(line) > 40 and not line.startswith('<'):
            out.write(json.dumps({'lang': 'en', 'text': line}) + '\n')
"
spm_train --input=<(python3 -c "import json,sys; [print(json.loads(l)['text']) for l in open('$tmp/text.jsonl')]") \
  --model_prefix="$tmp/spm" --vocab_size=600 --hard_vocab_limit=false --minloglevel=2 > /dev/null 2>&1
"$bin/pretrain" prepare --tokenizer "$tmp/spm.model" --max-len 48 --shards 2 -o "$tmp/run/data.h5" --quiet \
  "$tmp/text.jsonl"
"$bin/pretrain" --data "$tmp/run/data-*-of-*.h5" "${model[@]}" --threads 1 --log "$tmp/one/metrics.jsonl" \
  --out "$tmp/one/ckpt" --quiet || fail "the one-process run"

submit() {
  sbatch --parsable --nodes=1 --ntasks=2 --ntasks-per-node=2 --cpus-per-task=1 --gpus-per-node=0 --mem=0 \
    --time=00:10:00 --output="$tmp/$1.log" \
    --export="ALL,KGLM_BIN=$bin,LAUNCH=$1,DEVICE=cpu,SAVE_EVERY=0,EVAL_EVERY=0" \
    "$src/slurm/pretrain-multinode.sbatch" "$tmp/run" -- "${model[@]}" --quiet
}
job=$(submit mpirun) || fail "sbatch refused the job"
wait_jobs 300 "$job"
expect_completed "$job"
ranks() { python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['ranks'])" "$tmp/run/pretrain.stats.json"; }
[ "$(ranks)" = 2 ] || fail "not 2 ranks: $(cat "$tmp/mpirun.log")"
python3 "$src/tests/cli/compare_runs.py" "$tmp/one/metrics.jsonl" "$tmp/run/metrics.jsonl" "$tmp/one/ckpt" \
  "$tmp/run/ckpt" > /dev/null || fail "2 ranks under Slurm differ from one process"
ok "a 2-task job (LAUNCH=mpirun) trains on 2 ranks; losses and weights match one process"

if srun --mpi=list 2>&1 | grep -q pmix; then
  rm -rf "$tmp/run/ckpt" "$tmp/run/metrics.jsonl"
  job=$(submit srun) || fail "sbatch refused the srun job"
  wait_jobs 300 "$job"
  expect_completed "$job"
  python3 "$src/tests/cli/compare_runs.py" "$tmp/one/metrics.jsonl" "$tmp/run/metrics.jsonl" > /dev/null ||
    fail "srun --mpi=pmix"
  [ "$(ranks)" = 2 ] || fail "srun: not 2 ranks: $(cat "$tmp/srun.log")"
  ok "LAUNCH=srun (--mpi=pmix) as well"
else
  echo "note: this Slurm has no PMIx plugin (srun --mpi=list): LAUNCH=srun not run"
fi
echo "$pass checks passed"
