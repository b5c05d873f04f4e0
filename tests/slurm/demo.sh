#!/usr/bin/env bash
# pipelines/demo.sh --submit on a real one-node Slurm (tests/slurm/cluster.sh): every stage becomes a
# batch job chained by afterok; the outputs equal those of the local run, the logs are in the run's
# logs/, and a second --submit finds every stage complete and submits nothing.
# Usage: demo.sh BIN_DIR SOURCE_DIR FIXTURES_DIR [LOCAL_RUN]
# LOCAL_RUN: a finished local run of the demo to compare with (ctest: install_tree's run, which
# passed before this test starts: the fixture demo_run); without it, the test runs the demo first.
set -euo pipefail
bin=$1 src=$2 local_run=${4:-}
source "$src/tests/cli/common.sh" "$src/data"
source "$src/tests/slurm/common.sh"
# As a cluster user runs it: from install_tree's installed tree (the fixture demo_run), after
# `module load kglm`, KGLM_BIN unset (the tools on PATH); without that tree, from the source tree.
installed=$(ls -d "$bin"/../installed/kglm/*/ 2> /dev/null | head -1)
[ -n "$installed" ] && installed=$(cd "$installed" && pwd -P)  # the path the local run saw
if [ -n "$local_run" ] && [ -n "$installed" ] && [ -f /usr/share/lmod/lmod/init/bash ]; then
  # install_tree ran the local run in an empty environment: the variables that choose OpenBLAS's
  # kernels (OPENBLAS_CORETYPE=Haswell on some machines) go too, or the last bits differ.
  for var in $(compgen -e | grep -E '^(OPENBLAS|GOTO)_'); do unset "$var"; done
  set +u
  source /usr/share/lmod/lmod/init/bash
  module use "$installed/share/modulefiles" && module load kglm
  set -u
  unset KGLM_BIN
  demo=$KGLM_HOME/pipelines/demo.sh
  echo "submitting from the installed tree $KGLM_HOME, the tools from PATH: $(command -v pretrain)"
else
  export KGLM_BIN=$bin
  demo=$src/pipelines/demo.sh
fi

# same_outputs.py compares the two runs' files with one's path written as the other's (a model
# stores its tokenizer's path): the Slurm run's directory gets a path as long as the local run's.
tmp=$(cd "$tmp" && pwd -P)
slurm=$tmp/slurm
[ -n "$local_run" ] && [ -d "$local_run/figures" ] && local_run=$(cd "$local_run" && pwd -P) || local_run=""
if [ -n "$local_run" ] && [ ${#local_run} -gt $((${#tmp} + 1)) ]; then
  slurm=$tmp/$(printf 's%.0s' $(seq $((${#local_run} - ${#tmp} - 1))))
  echo "comparing with the local run $local_run"
  ln -s "$local_run" "$tmp/local"
else
  "$demo" "$tmp/local" > "$tmp/local.out" 2>&1 || fail "the local demo: $(tail "$tmp/local.out")"
fi
"$demo" --submit --sbatch-args "--mem=1G" "$slurm" > "$tmp/submit.out" 2>&1 ||
  fail "--submit: $(cat "$tmp/submit.out")"
stages=$(grep -c ': job [0-9]' "$tmp/submit.out")
[ "$stages" = 13 ] || fail "expected 13 jobs: $(cat "$tmp/submit.out")"
grep -q '^cs-gen: job [0-9]* after [0-9]* [0-9]*$' "$tmp/submit.out" || fail "no afterok chain: $(cat "$tmp/submit.out")"
jobs=$(run_jobs "$slurm")
"$demo" --submit "$slurm" > "$tmp/twice.out" 2>&1 && fail "a second chain was submitted"
grep -q "of an earlier submission of $slurm is \(PENDING\|RUNNING\); wait for it or scancel it first" \
  "$tmp/twice.out" || fail "second --submit while the first runs: $(cat "$tmp/twice.out")"
[ "$(run_jobs "$slurm")" = "$jobs" ] || fail "the refused submission submitted jobs"
ok "a --submit while the run's earlier jobs are queued or running is refused"
wait_jobs 600 $jobs
expect_completed $jobs
ok "demo --submit: $stages jobs chained by afterok, all completed"

for stage in wd-extract kg-align pretrain finetune elmo frozen; do
  grep -q "stage $stage: done" "$slurm/logs/$stage.log" || fail "log of $stage: $(cat "$slurm/logs/$stage.log")"
done
grep -q "token     f1 en" "$slurm/logs/finetune.log" || fail "the finetune stage's report is not in its log"
ok "one log per stage in the run's logs/"

python3 "$src/tests/slurm/same_outputs.py" "$tmp/local" "$slurm" || fail "the outputs differ"
ok "the outputs under Slurm equal the local run's"

"$demo" --submit "$slurm" > "$tmp/again.out" 2>&1 || fail "second --submit: $(cat "$tmp/again.out")"
[ "$(grep -c 'complete, not submitted' "$tmp/again.out")" = 13 ] || fail "resubmitted: $(cat "$tmp/again.out")"
ok "a second --submit finds every stage complete by its record and submits nothing"
echo "$pass checks passed"
