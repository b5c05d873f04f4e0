#!/usr/bin/env bash
# pipelines/knowledge-gain.sh --submit on a real one-node Slurm (tests/slurm/cluster.sh), at the quick
# test's tiny size: the stages become batch jobs chained by afterok, the arms and the probes job
# arrays of (arm, seed) tasks; every job completes, the report and the predictions are written, and
# the report equals the local run's (the same seeds: the same models, the same verdicts); and the
# same for --preset dose.
set -euo pipefail
bin=$1 src=$2 fx=${3:-}
source "$src/tests/cli/common.sh" "$fx/xfactr-kg-dev.json.gz"
source "$src/tests/slurm/common.sh"
export KGLM_BIN=$bin
options=(--preset small --fixtures "$fx" --seeds 3 --steps 12 --warmup-steps 6 --batch 8 --facts 16 --draws 1
  --vocab 1500 --bootstrap 200 --methods independent --threads 1)
kg=$src/pipelines/knowledge-gain.sh
"$kg" "${options[@]}" "$tmp/local" > "$tmp/local.out" 2>&1 || fail "the local run: $(tail "$tmp/local.out")"
"$kg" --submit "${options[@]}" --sbatch-args "--cpus-per-task=1 --mem=1G" "$tmp/slurm" > "$tmp/submit.out" 2>&1 ||
  fail "--submit: $(cat "$tmp/submit.out")"
[ "$(grep -c ': job [0-9]' "$tmp/submit.out")" = 8 ] || fail "expected 8 jobs: $(cat "$tmp/submit.out")"
grep -q '^arm: job [0-9]* (array 0-2) after [0-9]* [0-9]*$' "$tmp/submit.out" || fail "no arm array: $(cat "$tmp/submit.out")"
grep -q '^probe: job [0-9]* (array 0-2) after ' "$tmp/submit.out" || fail "no probe array: $(cat "$tmp/submit.out")"
jobs=$(run_jobs "$tmp/slurm")
wait_jobs 600 $jobs
expect_completed $jobs
ok "knowledge-gain --submit: 8 jobs (arms and probes as arrays of 3 tasks), all completed"
for arm in a b c; do
  [ -s "$tmp/slurm/predictions/probe-$arm-3.jsonl" ] || fail "no predictions of arm $arm"
done
cmp "$tmp/local/knowledge-gain.tsv" "$tmp/slurm/knowledge-gain.tsv" ||
  fail "the report differs from the local run's: $(diff "$tmp/local/knowledge-gain.tsv" "$tmp/slurm/knowledge-gain.tsv" | head)"
ok "the report under Slurm equals the local run's; the predictions of every arm are kept"

# --preset dose the same way: four arms, the exposures counted in the arm jobs, the dose report.
dose=(--preset dose --fixtures "$fx" --seeds 3 --model "2 64 4 128" --relations P17,P36,P37 --facts 12 --doses 1,4
  --warmup-steps 10 --start-batch 8 --vocab 1000 --bootstrap 100 --methods independent --threads 1)
"$kg" "${dose[@]}" "$tmp/dose-local" > "$tmp/dose-local.out" 2>&1 || fail "the local dose run: $(tail "$tmp/dose-local.out")"
"$kg" --submit "${dose[@]}" --sbatch-args "--cpus-per-task=1 --mem=1G" "$tmp/dose-slurm" > "$tmp/dose-submit.out" 2>&1 ||
  fail "--submit --preset dose: $(cat "$tmp/dose-submit.out")"
grep -q '^arm: job [0-9]* (array 0-3) after [0-9]* [0-9]*$' "$tmp/dose-submit.out" || fail "no arm array: $(cat "$tmp/dose-submit.out")"
jobs=$(run_jobs "$tmp/dose-slurm")
wait_jobs 600 $jobs
expect_completed $jobs
cmp "$tmp/dose-local/knowledge-dose.tsv" "$tmp/dose-slurm/knowledge-dose.tsv" ||
  fail "the dose report differs: $(diff "$tmp/dose-local/knowledge-dose.tsv" "$tmp/dose-slurm/knowledge-dose.tsv" | head)"
ok "knowledge-gain --submit --preset dose: arms and probes as arrays of 4, the report equals the local run's"
echo "$pass checks passed"
