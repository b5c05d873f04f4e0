#!/usr/bin/env bash
# slurm/pretrain-multinode.sbatch outside Slurm: `srun` and `scontrol` are stand-ins (srun starts
# the ranks with mpirun; scontrol records the requeue). SIGUSR1 to the ranks, as Slurm's --signal
# sends it before the time limit: the ranks checkpoint, the script requeues the job and exits 0;
# the requeued job resumes from the checkpoint and finishes.
set -euo pipefail
bin=$1 fixtures=$2 src=$3
spm=$fixtures/tokenizer/spm-test-vocab1000.model
source "$src/tests/cli/common.sh" "$spm"
command -v mpirun > /dev/null || { echo "no mpirun: skipped"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

mkdir -p "$tmp/fake" "$tmp/run"
cat > "$tmp/fake/srun" <<'SH'
#!/bin/bash
# srun's options (--mpi=pmix, --kill-on-bad-exit, ...) mean nothing here: the ranks come from mpirun.
while [[ "$1" == --* ]]; do shift; done
exec mpirun -np "$SLURM_NTASKS" --oversubscribe "$@"
SH
printf '#!/bin/bash\necho "$@" >> "%s/scontrol.log"\n' "$tmp" > "$tmp/fake/scontrol"
chmod +x "$tmp/fake/srun" "$tmp/fake/scontrol"
"$bin/pretrain" prepare --tokenizer "$spm" --max-len 48 --shards 2 -o "$tmp/run/data.h5" --quiet \
  "en=$fixtures/tokenizer/botchan.txt"

job() {
  PATH="$tmp/fake:$PATH" KGLM_BIN="$bin" DEVICE=cpu SAVE_EVERY=1000 EVAL_EVERY=0 SLURM_JOB_ID=4242 \
    SLURM_JOB_NUM_NODES=1 SLURM_NTASKS=2 SLURM_CPUS_PER_TASK=1 \
    bash "$src/slurm/pretrain-multinode.sbatch" "$tmp/run" -- --layers 2 --hidden 32 --heads 4 --ffn 64 --batch 8 \
    --quiet "$@"
}
job --steps 100000 > "$tmp/first.log" 2>&1 &
first=$!
pattern="^$bin/pretrain --data $tmp/run/data-"
for _ in $(seq 100); do
  [ "$(pgrep -f -- "$pattern" | wc -l)" -ge 2 ] && break
  sleep 0.1
done
sleep 2
pkill -USR1 -f -- "$pattern"
wait $first || fail "the first job exited $? $(cat "$tmp/first.log")"
grep -qx "requeue 4242" "$tmp/scontrol.log" || fail "the job did not requeue itself: $(cat "$tmp/first.log")"
step=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['step'])" "$tmp/run/ckpt/trainer_state.json")
ok "SIGUSR1: checkpoint at step $step, job requeued"

job --steps $((step + 3)) > "$tmp/second.log" 2>&1 || fail "the requeued job failed: $(cat "$tmp/second.log")"
grep -q -- "--resume $tmp/run/ckpt" "$tmp/second.log" || fail "no resume: $(cat "$tmp/second.log")"
python3 - "$tmp/run/metrics.jsonl" "$tmp/run/ckpt/trainer_state.json" $((step + 3)) <<'PY' || fail "the resumed run"
import json, sys
steps = [r["step"] for r in map(json.loads, open(sys.argv[1])) if "loss" in r]
assert json.load(open(sys.argv[2]))["step"] == int(sys.argv[3])
assert steps == list(range(1, int(sys.argv[3]) + 1)), steps[-5:]
PY
[ "$(wc -l < "$tmp/scontrol.log")" = 1 ] || fail "the finished job requeued itself"
ok "the requeued job resumed at step $step and finished at $((step + 3)), one metrics line a step"
echo "$pass checks passed"
