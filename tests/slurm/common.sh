# Sourced by the Slurm tests after tests/cli/common.sh (scratch directory, pass/fail helpers): a
# private one-node Slurm cluster (tests/slurm/cluster.sh), stopped on exit even on failure, and
# helpers to wait for jobs. Exits 77 (skip) with the reason when the daemons cannot start here.
source "$(dirname "${BASH_SOURCE[0]}")/cluster.sh"
chmod 755 "$tmp"
trap 'slurm_cluster_stop; [ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"' EXIT
slurm_cluster_start "$tmp/cluster" || exit $?
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# The job ids in a pipeline's RUN/.pipeline/jobs.tsv.
run_jobs() { cut -f1 "$1/.pipeline/jobs.tsv" | tr '\n' ' '; }

# wait_jobs SECONDS JOBID...: until none is queued or running; fails past SECONDS.
wait_jobs() {
  local limit=$1 ids
  shift
  ids=$(IFS=,; echo "$*")
  for _ in $(seq $((limit * 2))); do
    [ -z "$(squeue -h -j "$ids" -o %i 2> /dev/null)" ] && return 0
    sleep 0.5
  done
  squeue >&2
  fail "jobs $* still queued or running after ${limit}s"
}

# The final state of every job (and array task) of JOBID...: "JOBID_TASK STATE EXITCODE" lines.
job_states() {
  local id
  for id in "$@"; do
    scontrol show job -o "$id" | sed -E 's/.*JobId=([0-9]+).*ArrayTaskId=([0-9]+).*JobState=([A-Z_]+).*ExitCode=([0-9:]+).*/\1_\2 \3 \4/;
      t; s/.*JobId=([0-9]+).*JobState=([A-Z_]+).*ExitCode=([0-9:]+).*/\1 \2 \3/'
  done
}

# Every job of the list COMPLETED with exit 0.
expect_completed() {
  local bad
  bad=$(job_states "$@" | awk '$2 != "COMPLETED" || $3 != "0:0"')
  [ -z "$bad" ] || fail "jobs not completed: $bad"
}
