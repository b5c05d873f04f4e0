#!/usr/bin/env bash
# pipelines/kmlm.sh on a real one-node Slurm (tests/slurm/cluster.sh):
# - wd-extract as a job array of shards + a dependent merge. One task fails (its output path is taken
#   by a directory): the merge is cancelled; the next --submit resubmits that task alone and the
#   merge, and the merged store holds the same data as one unsharded wd-extract run.
# - pretrain requeued while it runs (scontrol requeue), then stopped by SIGUSR1 to the batch shell
#   (what --signal=B:USR1@120 sends before the time limit: it checkpoints and requeues itself): it
#   resumes each time, and its losses, one line per step, equal those of an uninterrupted local run.
set -euo pipefail
bin=$1 src=$2
source "$src/tests/cli/common.sh" "$src/data"
source "$src/tests/slurm/common.sh"
export KGLM_BIN=$bin
kmlm=$src/pipelines/kmlm.sh
langs=de,fr,es,ru

# --- the wd-extract array
mkdir -p "$tmp/array/kg/part-0001.h5"
"$kmlm" --submit --until kg --shards 3 --langs $langs --sbatch-args "--cpus-per-task=1 --mem=500M" "$tmp/array" \
  > "$tmp/array1.out" 2>&1 || fail "--submit: $(cat "$tmp/array1.out")"
grep -q '^kg-shard: job [0-9]* (array 0-2)$' "$tmp/array1.out" || fail "no array: $(cat "$tmp/array1.out")"
jobs=$(run_jobs "$tmp/array")
wait_jobs 120 $jobs
states=$(job_states $jobs | sort)
echo "$states" | grep -q '_1 FAILED 1:0' || fail "task 1 did not fail: $states"
[ "$(echo "$states" | grep -c '_[02] COMPLETED 0:0')" = 2 ] || fail "tasks 0 and 2: $states"
echo "$states" | grep -q 'CANCELLED' || fail "the merge was not cancelled: $states"
grep -q "is a directory" "$tmp/array/logs/kg-shard-0001.log" || fail "task 1's log: $(cat "$tmp/array/logs/kg-shard-0001.log")"
ok "a failed array task (its log in logs/kg-shard-0001.log) cancels the merge"

rmdir "$tmp/array/kg/part-0001.h5"
"$kmlm" --submit --until kg --shards 3 --langs $langs --sbatch-args "--cpus-per-task=1 --mem=500M" "$tmp/array" \
  > "$tmp/array2.out" 2>&1 || fail "second --submit: $(cat "$tmp/array2.out")"
grep -q '^kg-shard: job [0-9]* (array 1)$' "$tmp/array2.out" || fail "not task 1 alone: $(cat "$tmp/array2.out")"
grep -q '^kg: job [0-9]* after [0-9]*$' "$tmp/array2.out" || fail "no merge: $(cat "$tmp/array2.out")"
jobs=$(tail -n 2 "$tmp/array/.pipeline/jobs.tsv" | cut -f1)
wait_jobs 120 $jobs
expect_completed $jobs
ok "the next --submit resubmits the failed task alone (array 1), then the merge"

"$bin/wd-extract" "$src/data/wikidata-sample.json" --langs en,$langs -o "$tmp/unsharded.h5" --quiet
python3 "$src/tests/slurm/same_outputs.py" --store "$tmp/array/kg/kg.h5" "$tmp/unsharded.h5" || fail "merged != unsharded"
ok "the merged store of 3 array tasks holds the same data as the unsharded one"

# --- pretrain: requeued, then stopped by SIGUSR1, against an uninterrupted run
options=(--shards 2 --langs $langs --vocab 1000 --model "2 64 4 128" --steps 400 --save-every 20
  --pretrain-args "--batch 32 --lr 1e-3 --seed 7")
"$kmlm" "${options[@]}" "$tmp/local" > "$tmp/local.out" 2>&1 || fail "local run: $(tail "$tmp/local.out")"
"$kmlm" --submit "${options[@]}" --sbatch-args "--cpus-per-task=2 --mem=1G" "$tmp/queued" > "$tmp/queued.out" 2>&1 ||
  fail "--submit: $(cat "$tmp/queued.out")"
pretrain_job=$(awk '$1 == "pretrain:" { print $3 }' "$tmp/queued.out")
[ -n "$pretrain_job" ] || fail "no pretrain job: $(cat "$tmp/queued.out")"
grep -q -- "--requeue --signal=B:USR1@120" <("$kmlm" --dry-run "${options[@]}" "$tmp/queued") ||
  fail "the pretrain stage is not submitted with --requeue --signal=B:USR1@120"

# steps_logged: how many steps the run's metrics log holds now.
steps_logged() {
  local n
  n=$(grep -c '"loss"' "$tmp/queued/metrics.jsonl" 2> /dev/null || true)
  echo "${n:-0}"
}
wait_for_step() {
  for _ in $(seq 6000); do
    [ "$(steps_logged)" -ge "$1" ] && return 0
    sleep 0.1
  done
  fail "pretrain did not reach step $1: $(squeue) $(cat "$tmp/queued/logs/pretrain.log")"
}
wait_for_step 70
scontrol requeue "$pretrain_job" || fail "scontrol requeue $pretrain_job"
ok "pretrain job $pretrain_job requeued by scontrol at step $(steps_logged)"
for _ in $(seq 3000); do grep -q "resuming" "$tmp/queued/logs/pretrain.log" 2> /dev/null && break; sleep 0.1; done
grep -q "resuming .* at step" "$tmp/queued/logs/pretrain.log" || fail "no resume: $(cat "$tmp/queued/logs/pretrain.log")"
wait_for_step 250
scancel --batch --signal=USR1 "$pretrain_job" || fail "scancel --signal=USR1"
ok "SIGUSR1 to the batch shell at step $(steps_logged)"
wait_jobs 900 $(run_jobs "$tmp/queued")
expect_completed $(run_jobs "$tmp/queued")
grep -q "stopped after a checkpoint: requeueing job $pretrain_job" "$tmp/queued/logs/pretrain.log" ||
  fail "no self-requeue: $(cat "$tmp/queued/logs/pretrain.log")"
restarts=$(scontrol show job "$pretrain_job" | sed -n 's/.*Restarts=\([0-9]*\).*/\1/p')
[ "$restarts" = 2 ] || fail "restarts: $restarts"
[ "$(grep -c "resuming .* at step" "$tmp/queued/logs/pretrain.log")" = 2 ] || fail "two resumes expected"
ok "the job checkpointed, requeued itself and resumed (2 restarts, both in logs/pretrain.log)"

python3 - "$tmp/local/metrics.jsonl" "$tmp/queued/metrics.jsonl" << 'PY' || fail "the losses differ"
import json, sys
runs = [[r for r in map(json.loads, open(p)) if "loss" in r] for p in sys.argv[1:]]
assert [r["step"] for r in runs[1]] == list(range(1, 401)), "one line per step"
for a, b in zip(*runs):
    assert a["loss"] == b["loss"], (a, b)
PY
python3 "$src/tests/cli/compare_runs.py" "$tmp/local/metrics.jsonl" "$tmp/queued/metrics.jsonl" "$tmp/local/ckpt" \
  "$tmp/queued/ckpt" > /dev/null || fail "the checkpoints differ"
ok "the requeued and resumed run's 400 losses equal the uninterrupted run's, bit for bit, and so do its weights"
echo "$pass checks passed"
