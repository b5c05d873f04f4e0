#!/usr/bin/env bash
# Data-parallel pretrain over MPI ranks on the CPU (botchan.txt, the fixture SentencePiece model):
# 2 ranks with batch B/2 each = 1 process with batch B (losses within 1e-6, weights within 1e-5,
# dropout and accumulation on); --zero 1 = without it; resuming a 2-rank checkpoint on 1 rank and
# a 1-rank one on 2 ranks continues the same loss curve; a bad global batch, a rank that dies and
# a rank that hangs end the whole job with an error instead of a hang.
set -euo pipefail
bin=$1 fixtures=$2 src=$3
spm=$fixtures/tokenizer/spm-test-vocab1000.model
text=$fixtures/tokenizer/botchan.txt
source "$src/tests/cli/common.sh" "$spm"
if ! command -v mpirun > /dev/null; then
  echo "no mpirun: skipped"
  exit 77
fi
# CI runs as root; OpenMPI refuses that unless told. Slots: this machine may have fewer cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpi() { local n=$1; shift; timeout 300 mpirun -np "$n" --oversubscribe "$bin/pretrain" "$@"; }

"$bin/pretrain" prepare --tokenizer "$spm" --max-len 48 -o "$tmp/data.h5" --quiet "en=$text"
net=(--data "$tmp/data.h5" --layers 2 --hidden 32 --heads 4 --ffn 64 --accumulate 2 --lr 3e-3 --warmup 4 --threads 1
  --seed 7 --quiet --dropout 0.1 --eval-every 6)
model=("${net[@]}" --batch 8)

compare="python3 $src/tests/cli/compare_runs.py"  # A.jsonl B.jsonl [A_dir B_dir]

"$bin/pretrain" "${model[@]}" --steps 12 --log "$tmp/one.jsonl" --out "$tmp/one"
mpi 2 "${model[@]}" --steps 12 --log "$tmp/two.jsonl" --out "$tmp/two" --stats "$tmp/two.json"
$compare "$tmp/one.jsonl" "$tmp/two.jsonl" "$tmp/one" "$tmp/two" || fail "2 ranks differ from 1 process"
[ "$(stat_of "$tmp/two.json" ranks)" = 2 ] || fail "the statistics do not say 2 ranks"
ok "2 ranks × batch 4 = 1 process × batch 8 (dropout, accumulation, evaluation)"

mpi 2 "${model[@]}" --steps 12 --zero 1 --log "$tmp/zero.jsonl" --out "$tmp/zero"
$compare "$tmp/two.jsonl" "$tmp/zero.jsonl" "$tmp/two" "$tmp/zero" || fail "--zero 1 differs"
ok "2 ranks --zero 1 = 2 ranks without it"

# Resuming at another world size: the first 6 steps on 2 ranks, the rest on 1; and the reverse.
mpi 2 "${model[@]}" --steps 6 --decay-steps 12 --log "$tmp/a.jsonl" --out "$tmp/a"
"$bin/pretrain" --data "$tmp/data.h5" --resume "$tmp/a" --threads 1 --quiet --steps 12 --eval-every 6 \
  --log "$tmp/a.jsonl" --out "$tmp/a-done"
$compare "$tmp/one.jsonl" "$tmp/a.jsonl" "$tmp/one" "$tmp/a-done" || fail "resume 2 → 1 rank"
"$bin/pretrain" "${model[@]}" --steps 6 --decay-steps 12 --log "$tmp/b.jsonl" --out "$tmp/b"
mpi 2 --data "$tmp/data.h5" --resume "$tmp/b" --threads 1 --quiet --steps 12 --eval-every 6 --zero 1 \
  --log "$tmp/b.jsonl" --out "$tmp/b-done"
$compare "$tmp/one.jsonl" "$tmp/b.jsonl" "$tmp/one" "$tmp/b-done" || fail "resume 1 → 2 ranks"
ok "resume: 2 ranks → 1 and 1 → 2 ranks (--zero 1) continue the same losses"

# A global batch the ranks cannot share: a usage error, no checkpoint.
code=0; mpi 2 "${net[@]}" --batch 7 --steps 2 --out "$tmp/odd" 2> "$tmp/err" || code=$?
[ $code -ne 0 ] && grep -q "multiple of the 2 ranks" "$tmp/err" || fail "--batch 7 on 2 ranks: exit $code $(cat "$tmp/err")"
[ ! -e "$tmp/odd" ] || fail "a refused run wrote a checkpoint"
ok "--batch 7 on 2 ranks: exit $code"

# A rank that dies (SIGKILL) or hangs (SIGSTOP) mid-run: the job ends with an error within the
# collective timeout (KGLM_DIST_TIMEOUT) instead of waiting forever.
for signal in KILL STOP; do
  start=$SECONDS
  code=0
  KGLM_DIST_TIMEOUT=5 mpi 2 "${model[@]}" --steps 100000 --out "$tmp/dead-$signal" 2> "$tmp/err" &
  job=$!
  rank_pattern="^$bin/pretrain --data .* --out $tmp/dead-$signal"  # the ranks, not mpirun or timeout
  for _ in $(seq 100); do
    [ "$(pgrep -f -- "$rank_pattern" | wc -l)" -ge 2 ] && break
    sleep 0.1
  done
  sleep 1
  victim=$(pgrep -f -- "$rank_pattern" | tail -1)
  kill -s "$signal" "$victim"
  wait $job || code=$?
  [ $code -ne 0 ] || fail "SIG$signal to a rank: the job exited 0"
  elapsed=$((SECONDS - start))
  [ $elapsed -lt 60 ] || fail "SIG$signal to a rank: the job took $elapsed s to end"
  [ "$signal" = KILL ] || grep -q "has waited 5 s for the other ranks" "$tmp/err" || fail "SIGSTOP: $(cat "$tmp/err")"
  pkill -KILL -f -- "$rank_pattern" 2> /dev/null || true
  ok "SIG$signal to rank pid $victim: the job ended with exit $code after $elapsed s"
done
# SIGUSR1 (Slurm's --signal before the time limit) to one rank: every rank stops at the same step,
# rank 0 writes the checkpoint, the job exits 75, and --resume continues from it.
for ranks in 1 2; do
  out="$tmp/usr1-$ranks"
  rank_pattern="^$bin/pretrain --data .* --out $out"
  code=0
  mpi $ranks "${model[@]}" --steps 100000 --out "$out" 2> "$tmp/err" &
  job=$!
  for _ in $(seq 100); do
    [ "$(pgrep -f -- "$rank_pattern" | wc -l)" -ge $ranks ] && break
    sleep 0.1
  done
  sleep 2
  kill -USR1 "$(pgrep -f -- "$rank_pattern" | tail -1)"
  wait $job || code=$?
  [ $code -eq 75 ] || fail "SIGUSR1 on $ranks ranks: exit $code $(cat "$tmp/err")"
  step=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['step'])" "$out/trainer_state.json")
  [ "$step" -gt 0 ] && [ "$step" -lt 100000 ] || fail "SIGUSR1: checkpoint at step $step"
  "$bin/pretrain" --data "$tmp/data.h5" --resume "$out" --threads 1 --quiet --steps $((step + 2)) --out "$out-more"
  ok "SIGUSR1 to one of $ranks ranks: checkpoint at step $step, exit 75, resumed"
done
# With a GPU: NCCL at world size 1 (and 2 ranks on 2 GPUs when the host has them) against one
# process on the GPU; without one, the launch must fail with the usual one-line reason.
code=0
"$bin/pretrain" "${model[@]}" --steps 12 --device cuda --log "$tmp/gpu.jsonl" --out "$tmp/gpu" 2> "$tmp/err" || code=$?
if [ $code -eq 0 ]; then
  gpus=$(nvidia-smi -L 2> /dev/null | wc -l)
  for ranks in 1 2; do
    [ "$ranks" -le "$gpus" ] || continue
    mpi $ranks "${model[@]}" --steps 12 --device cuda --log "$tmp/nccl-$ranks.jsonl" --out "$tmp/nccl-$ranks"
    $compare "$tmp/gpu.jsonl" "$tmp/nccl-$ranks.jsonl" || fail "NCCL on $ranks ranks"
    ok "NCCL, $ranks rank(s) on the GPU = 1 process on the GPU"
  done
else
  code=0
  mpi 1 "${model[@]}" --steps 2 --device cuda --out "$tmp/nccl" 2> "$tmp/err" || code=$?
  [ $code -eq 1 ] && grep -q "cuda" "$tmp/err" || fail "--device cuda under mpirun without a GPU: exit $code"
  ok "no GPU: mpirun ... --device cuda exits 1 ($(grep -m1 error "$tmp/err"))"
fi
echo "$pass checks passed"
