# kglm pipelines: stages run here in order, or submitted to Slurm as a chain of batch jobs.
# A pipeline sources it, names the library modules it uses,
#
#   source "${KGLM_HOME:-$(cd "$(dirname "$0")/.." && pwd)}/pipelines/lib/pipeline.sh"
#   pipeline_use MODULE...
#
# (KGLM_HOME first: a submitted job runs a spooled copy of the script), declares its options
# (pipeline_option), defines one shell function per stage, then calls
#
#   pipeline_start "$@"
#   stage NAME [--array N] [--after "STAGE..."] [--in PATH]... [--out PATH]... [--cpus N] [--mem M]
#         [--time T] [--requeue] -- FUNCTION [ARGS...]
#   ...
#   pipeline_end
#
# Modes (man 7 kglm-slurm):
# - local (default): each stage runs in turn; an array stage runs its tasks one after another.
# - --submit: each stage becomes `sbatch PIPELINE --stage NAME RUN`, chained by
#   --dependency=afterok on the stages it reads; an array stage is a job array. The job ids are
#   printed and kept in RUN/.pipeline/jobs.tsv. --dry-run prints the sbatch commands instead.
# - --stage NAME (what a submitted job runs): only that stage, task $SLURM_ARRAY_TASK_ID.
#
# Every stage is idempotent. After it succeeds, RUN/.stages/NAME[.TASK] records its provenance: a
# digest of the stage's definition (the function's code, its arguments, the pipeline's options), the
# kglm version, every input's and output's size and modification time, and the records of the
# stages it reads. A stage whose record still matches the present state is skipped; anything else
# (a missing or changed output, a changed input, option or upstream stage) runs it again. File
# existence alone never counts as done.
#
# Inside a stage function: TASK (the array index, 0 when not an array) and TASKS (the array size),
# RUN (the run directory), bin (the tools) and here (the kglm tree) are set; `task_id` is TASK as %04d;
# STAGE_CONTINUES is 1 when the task starts again from the same inputs and definition after it was
# interrupted (requeued, stopped by SIGUSR1), so that a checkpoint it left may be resumed.

set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# pipeline_use MODULE...: the library modules the pipeline uses (train, wikidata: pipelines/lib/*.sh).
pipeline_use() {
  local module
  for module in "$@"; do
    [[ -f "$here/pipelines/lib/$module.sh" ]] || { echo "pipelines/lib: no module '$module'" >&2; exit 2; }
    source "$here/pipelines/lib/$module.sh"
  done
}

pipeline_name=$(basename "$0" .sh)
[[ -n "${KGLM_PIPELINE:-}" ]] && pipeline_name=$KGLM_PIPELINE # the spooled copy of a batch job is not named
pipeline_script=${KGLM_PIPELINE_SCRIPT:-$(cd "$(dirname "$0")" && pwd)/$(basename "$0")}
# The tools: KGLM_BIN; else a source checkout's build/bin; else the tools on PATH (an installed
# tree after `module load kglm`, man 7 kglm INSTALLATION).
bin=${KGLM_BIN:-$here/build/bin}
if [[ -z "${KGLM_BIN:-}" && ! -x "$bin/wd-extract" ]] && command -v wd-extract > /dev/null; then
  bin=$(dirname "$(command -v wd-extract)")
fi

pipeline_option_names=() # option names, in declaration order
pipeline_option_vars=()  # the shell variable of each
declare -A pipeline_option_help=()

# pipeline_option NAME VAR DEFAULT HELP: --NAME VALUE, or the environment's VAR, else DEFAULT.
pipeline_option() {
  pipeline_option_names+=("$1")
  pipeline_option_vars+=("$2")
  pipeline_option_help[$1]="$4 (\$$2, default: ${3:-none})"
  [[ -n "${!2+set}" ]] || printf -v "$2" '%s' "$3"
}

pipeline_usage() {
  local name
  sed -n '2,/^[^#]/{/^#SBATCH/d;/^#/s/^# \{0,1\}//p}' "$pipeline_script"
  echo
  echo "Usage: pipelines/$pipeline_name.sh [options] [RUN_DIR]"
  echo "Pipeline options (each also read from the environment variable named):"
  for name in "${pipeline_option_names[@]}"; do printf '  --%-22s %s\n' "$name" "${pipeline_option_help[$name]}"; done
  cat << 'EOF'
Scheduling:
  --submit                 submit the stages as Slurm batch jobs chained by afterok (print their ids)
  --dry-run                print the sbatch commands --submit would run, and submit nothing
  --partition P            sbatch --partition ($KGLM_PARTITION)
  --account A              sbatch --account ($KGLM_ACCOUNT)
  --qos Q                  sbatch --qos ($KGLM_QOS)
  --sbatch-args "ARGS"     more sbatch options for every stage, after the stage's own ($KGLM_SBATCH_ARGS);
                           $KGLM_SBATCH_ARGS_<STAGE> (upper case, '-' as '_') for one stage
  --signal-seconds S       SIGUSR1 this long before a training stage's time limit (default 120): it
                           checkpoints, requeues itself and resumes ($KGLM_SIGNAL_SECONDS)
  --force                  run or submit every stage, even those whose record is complete
  --until STAGE            stop after STAGE (the stages before it run or are submitted as usual)
  --stage NAME             run one stage (what a submitted job runs; array task $SLURM_ARRAY_TASK_ID)
  -h, --help               this help
Run directory: outputs, logs/ (one log per stage, or per array task), .stages/ (records), .pipeline/.
EOF
}

# Parses the command line, then creates the run directory and its layout.
pipeline_start() {
  pipeline_mode=local
  pipeline_force=0
  pipeline_only=""
  pipeline_until=""
  pipeline_past_until=0
  local name var run=""
  : "${KGLM_PARTITION:=}" "${KGLM_ACCOUNT:=}" "${KGLM_QOS:=}" "${KGLM_SBATCH_ARGS:=}" "${KGLM_SIGNAL_SECONDS:=120}"
  while [[ $# -gt 0 ]]; do
    case $1 in
      -h | --help) pipeline_usage; exit 0 ;;
      --submit) pipeline_mode=submit ;;
      --dry-run) pipeline_mode=dry-run ;;
      --force) pipeline_force=1 ;;
      --until) pipeline_until=${2:?--until needs a stage name}; shift ;;
      --stage) pipeline_mode=job pipeline_only=${2:?--stage needs a stage name}; shift ;;
      --partition) KGLM_PARTITION=${2:?}; shift ;;
      --account) KGLM_ACCOUNT=${2:?}; shift ;;
      --qos) KGLM_QOS=${2:?}; shift ;;
      --sbatch-args) KGLM_SBATCH_ARGS=${2?}; shift ;;
      --signal-seconds) KGLM_SIGNAL_SECONDS=${2:?}; shift ;;
      --*)
        var=""
        for name in "${!pipeline_option_names[@]}"; do
          [[ "--${pipeline_option_names[$name]}" == "$1" ]] && var=${pipeline_option_vars[$name]}
        done
        [[ -n "$var" ]] || pipeline_fail 2 "unknown option $1 (see --help)"
        [[ $# -ge 2 ]] || pipeline_fail 2 "$1 needs a value"
        printf -v "$var" '%s' "$2"
        shift
        ;;
      *) [[ -z "$run" ]] || pipeline_fail 2 "one run directory, not '$run' and '$1'"; run=$1 ;;
    esac
    shift
  done
  RUN=$(realpath -m "${run:-${RUN:-$here/out/$pipeline_name}}")
  if [[ $pipeline_mode == job ]]; then
    # A submitted job runs with the options of the submission, not whatever the environment says now.
    [[ -f "$RUN/.pipeline/options.sh" ]] || pipeline_fail 2 "$RUN/.pipeline/options.sh: not a submitted run"
    source "$RUN/.pipeline/options.sh"
  elif [[ $pipeline_mode != dry-run ]]; then
    mkdir -p "$RUN/logs" "$RUN/.stages" "$RUN/.pipeline"
    pipeline_save_options > "$RUN/.pipeline/options.sh.tmp"
    mv "$RUN/.pipeline/options.sh.tmp" "$RUN/.pipeline/options.sh"
  fi
  pipeline_version=$("$bin/wd-extract" --version 2> /dev/null) ||
    pipeline_fail 2 "no kglm tools in $bin (build them, set KGLM_BIN, or module load kglm)"
  declare -gA stage_job=()    # stage -> job id submitted by this invocation
  declare -gA stage_tasks=()  # stage -> array size
  [[ $pipeline_mode == submit ]] && pipeline_check_previous_jobs
  [[ $pipeline_mode == local ]] && echo "kglm $pipeline_name: run directory $RUN"
  return 0
}

pipeline_save_options() {
  local var
  for var in "${pipeline_option_vars[@]}"; do declare -p "$var" | sed 's/^declare -[-a-zA-Z]* /declare -g /'; done
}

pipeline_fail() {
  local status=$1
  shift
  echo "pipelines/$pipeline_name.sh: $*" >&2
  exit "$status"
}

pipeline_end() {
  case $pipeline_mode in
    local) echo "kglm $pipeline_name: finished, outputs in $RUN" ;;
    submit) echo "kglm $pipeline_name: submitted; logs in $RUN/logs, job ids in $RUN/.pipeline/jobs.tsv" ;;
    job) pipeline_fail 2 "no stage named '$pipeline_only'" ;;
  esac
  return 0
}

# One line per file under PATH (a file or a directory): KIND PATH SIZE MTIME, or "KIND PATH missing".
stage_file_lines() {
  local kind=$1 path=$2
  if [[ -d "$path" ]]; then
    find "$path" -type f -printf "$kind %p %s %T@\n" | LC_ALL=C sort
  elif [[ -e "$path" ]]; then
    stat -L -c "$kind %n %s %.9Y" "$path"
  else
    echo "$kind $path missing"
  fi
}

# tensorboard_dir [NAME]: where the running stage's training tools write TensorBoard event files
# (--tensorboard): RUN/tensorboard/STAGE, or RUN/tensorboard/STAGE/NAME for one of several runs
# (finetune tasks, array tasks). `tensorboard --logdir RUN/tensorboard` shows every stage's runs.
tensorboard_dir() { echo "$RUN/tensorboard/$stage_name${1:+/$1}"; }

stage_task_path() { local path=$1; printf '%s' "${path//\{task\}/$(printf %04d "$2")}"; }

# The record stage $stage_name task $2 would have now; compared with the stored one, or stored.
stage_record() {
  local task=$1 path dep
  echo "kglm stage record 1"
  echo "stage $stage_name task $task of ${stage_tasks[$stage_name]}"
  echo "version $pipeline_version"
  echo "definition $({ declare -f "${stage_command[0]}"; printf '%q ' "${stage_command[@]}"; pipeline_save_options; } |
    sha256sum | cut -d' ' -f1)"
  for dep in "${stage_after[@]}"; do
    echo "after $dep $(cat "$RUN/.stages/$dep" "$RUN/.stages/$dep".* 2> /dev/null | sha256sum | cut -d' ' -f1)"
  done
  for path in "${stage_inputs[@]}"; do stage_file_lines input "$(stage_task_path "$path" "$task")"; done
  for path in "${stage_outputs[@]}"; do stage_file_lines output "$(stage_task_path "$path" "$task")"; done
}

stage_record_path() {
  if [[ -n "$stage_array" ]]; then echo "$RUN/.stages/$stage_name.$(printf %04d "$1")"; else echo "$RUN/.stages/$stage_name"; fi
}

stage_complete() {
  local file
  file=$(stage_record_path "$1")
  [[ $pipeline_force == 0 && -f "$file" ]] && [[ "$(stage_record "$1")" == "$(cat "$file")" ]]
}

# Runs task $1 of the current stage unless its record is complete; records it on success.
# Returns the stage's status (75: stopped early after a checkpoint, to be continued).
stage_run_task() {
  local task=$1 record status
  record=$(stage_record_path "$task")
  if stage_complete "$task"; then
    echo "== $stage_name${stage_array:+ task $task}: complete (${record#"$RUN"/}), skipped"
    return 0
  fi
  rm -f "$record"
  # RECORD.started holds what the stage started from: the same again (a requeued job, a run stopped
  # by SIGUSR1) continues its work (STAGE_CONTINUES=1: resume the checkpoint); anything else starts over.
  local intent continues=0
  intent=$(stage_record "$task" | grep -v '^output ')
  [[ $pipeline_force == 0 && -f "$record.started" && "$(cat "$record.started")" == "$intent" ]] && continues=1
  echo "$intent" > "$record.started"
  # In the background, so that this shell can hand it SIGUSR1 (Slurm's --signal=B:USR1 reaches only
  # the batch shell); the stage's `checkpointing` passes it on to the tool.
  status_of status checkpointing stage_task_body "$task" "$continues"
  [[ $status == 0 ]] || return "$status"
  stage_record "$task" > "$record.tmp"
  mv "$record.tmp" "$record"
  rm -f "$record.started"
}

# status_of VAR COMMAND...: runs COMMAND with set -e off and puts its exit status in VAR. Never
# `COMMAND || status=$?`: bash ignores set -e in everything a || list starts, background subshells
# included, so a stage run from one would go on after a failed command.
status_of() {
  local -n into=$1
  local errexit=0
  shift
  [[ $- == *e* ]] && errexit=1
  set +e
  "$@"
  into=$?
  [[ $errexit == 0 ]] || set -e
}

# The work of task $1 of the current stage, in a subshell of its own (STAGE_CONTINUES=$2).
stage_task_body() {
  set -euo pipefail
  trap : USR1 # survive a SIGUSR1 outside `checkpointing`; the tools get the default action back
  export TASK=$1 TASKS=${stage_tasks[$stage_name]} RUN bin here STAGE_CONTINUES=$2
  task_id=$(printf %04d "$1")
  "${stage_command[@]}"
}

# Waits for the child $1 through any number of trapped signals; returns its exit status.
stage_wait() {
  local status
  while true; do
    status=0
    wait "$1" || status=$?
    kill -0 "$1" 2> /dev/null || break
  done
  return "$status"
}

# Runs a command (a tool, or a shell function in a subshell) in the background and hands it the
# SIGUSR1 this shell gets: for a training tool, which checkpoints and exits 75 on SIGUSR1. Returns
# the command's status.
checkpointing() {
  local child status=0
  "$@" &
  child=$!
  trap 'kill -USR1 $child 2> /dev/null || true' USR1
  stage_wait "$child" || status=$?
  trap - USR1
  return "$status"
}

stage_parse() {
  stage_name=$1
  shift
  stage_array="" stage_after=() stage_inputs=() stage_outputs=() stage_sbatch=() stage_requeue=0
  while [[ $# -gt 0 && $1 != -- ]]; do
    case $1 in
      --array) stage_array=$2 ;;
      --after) read -r -a stage_after <<< "$2" ;;
      --in) stage_inputs+=("$2") ;;
      --out) stage_outputs+=("$2") ;;
      --cpus) stage_sbatch+=("--cpus-per-task=$2") ;;
      --mem) stage_sbatch+=("--mem=$2") ;;
      --time) stage_sbatch+=("--time=$2") ;;
      --requeue) stage_requeue=1; shift; continue ;;
      *) pipeline_fail 2 "stage $stage_name: unknown stage option $1" ;;
    esac
    shift 2
  done
  [[ "${1:-}" == -- ]] || pipeline_fail 2 "stage $stage_name: no -- before the command"
  shift
  stage_command=("$@")
  stage_tasks[$stage_name]=${stage_array:-1}
}

stage() {
  [[ $pipeline_past_until == 0 ]] || return 0
  stage_parse "$@"
  [[ "$stage_name" == "$pipeline_until" ]] && pipeline_past_until=1
  case $pipeline_mode in
    local) stage_local ;;
    job) [[ "$stage_name" == "$pipeline_only" ]] && stage_job ;;
    *) stage_submit ;;
  esac
  return 0
}

stage_local() {
  local task status=0 log
  for ((task = 0; task < ${stage_tasks[$stage_name]}; task++)); do
    log=$RUN/logs/$stage_name${stage_array:+-$(printf %04d "$task")}.log
    set +e
    stage_run_task "$task" 2>&1 | tee "$log"
    status=${PIPESTATUS[0]}
    set -e
    if [[ $status == 75 ]]; then
      pipeline_fail 75 "stage $stage_name stopped after a checkpoint (SIGUSR1); run the pipeline again to continue"
    fi
    [[ $status == 0 ]] || pipeline_fail 1 "stage $stage_name${stage_array:+ task $task} failed (exit $status); log: $log"
  done
}

# A submitted job: this stage's task. A training stage stopped by SIGUSR1 (exit 75) requeues the job,
# which resumes from the checkpoint when it starts again.
stage_job() {
  local task=${SLURM_ARRAY_TASK_ID:-0} status=0
  echo "$(date -u +%FT%TZ) kglm $pipeline_name: stage $stage_name${stage_array:+ task $task}," \
    "job ${SLURM_JOB_ID:-?} on ${SLURMD_NODENAME:-$(hostname)} (start $((${SLURM_RESTART_COUNT:-0} + 1)))"
  status_of status stage_run_task "$task"
  if [[ $status == 75 && $stage_requeue == 1 && -n "${SLURM_JOB_ID:-}" ]]; then
    echo "$(date -u +%FT%TZ) stopped after a checkpoint: requeueing job $SLURM_JOB_ID"
    scontrol requeue "$SLURM_JOB_ID"
    exit 0
  fi
  [[ $status == 0 ]] && echo "$(date -u +%FT%TZ) stage $stage_name${stage_array:+ task $task}: done"
  exit "$status"
}

# "0-3,7,9" for the task list given.
stage_array_spec() {
  local out="" first="" last="" t
  for t in "$@" ""; do
    if [[ -n "$t" && -n "$last" && $t == $((last + 1)) ]]; then last=$t; continue; fi
    if [[ -n "$first" ]]; then
      out+="${out:+,}$first"
      [[ $last != "$first" ]] && out+="-$last"
    fi
    first=$t last=$t
  done
  echo "$out"
}

stage_submit() {
  local tasks=() task dep upstream_submitted=0 deps=() cmd jobid var extra
  for dep in "${stage_after[@]}"; do
    [[ -n "${stage_job[$dep]:-}" ]] && { upstream_submitted=1; deps+=("${stage_job[$dep]}"); }
  done
  for ((task = 0; task < ${stage_tasks[$stage_name]}; task++)); do
    if [[ $upstream_submitted == 1 || $pipeline_mode == dry-run ]] || ! stage_complete "$task"; then tasks+=("$task"); fi
  done
  if [[ ${#tasks[@]} == 0 ]]; then
    echo "$stage_name: complete, not submitted"
    return 0
  fi
  cmd=(sbatch --parsable --job-name="$pipeline_name-$stage_name"
    "--export=ALL,KGLM_HOME=$here,KGLM_BIN=$bin,KGLM_PIPELINE=$pipeline_name,KGLM_PIPELINE_SCRIPT=$pipeline_script")
  if [[ -n "$stage_array" ]]; then
    cmd+=("--array=$(stage_array_spec "${tasks[@]}")" "--output=$RUN/logs/$stage_name-%4a.log" --open-mode=append)
  else
    cmd+=("--output=$RUN/logs/$stage_name.log" --open-mode=append)
  fi
  [[ $stage_requeue == 1 ]] && cmd+=(--requeue "--signal=B:USR1@$KGLM_SIGNAL_SECONDS")
  [[ ${#deps[@]} -gt 0 ]] && cmd+=("--dependency=afterok:$(IFS=:; echo "${deps[*]}")" --kill-on-invalid-dep=yes)
  [[ -n "$KGLM_PARTITION" ]] && cmd+=("--partition=$KGLM_PARTITION")
  [[ -n "$KGLM_ACCOUNT" ]] && cmd+=("--account=$KGLM_ACCOUNT")
  [[ -n "$KGLM_QOS" ]] && cmd+=("--qos=$KGLM_QOS")
  cmd+=("${stage_sbatch[@]}")
  read -r -a extra <<< "$KGLM_SBATCH_ARGS"
  cmd+=("${extra[@]}")
  var=KGLM_SBATCH_ARGS_$(tr 'a-z-' 'A-Z_' <<< "$stage_name")
  read -r -a extra <<< "${!var:-}"
  cmd+=("${extra[@]}" "$pipeline_script" --stage "$stage_name" "$RUN")
  if [[ $pipeline_mode == dry-run ]]; then
    stage_job[$stage_name]="\$${stage_name//-/_}_job"
    printf '%s=$(' "${stage_name//-/_}_job"
    printf '%q ' "${cmd[@]}" | sed 's/ $//; s/\\\$\([a-z_]*_job\)/$\1/g'
    echo ")"
    return 0
  fi
  jobid=$("${cmd[@]}") || pipeline_fail 1 "sbatch refused stage $stage_name: ${cmd[*]}"
  jobid=${jobid%%;*}
  stage_job[$stage_name]=$jobid
  printf '%s\t%s\t%s\t%s\n' "$jobid" "$stage_name" "${stage_array:+$(stage_array_spec "${tasks[@]}")}" \
    "$(date -u +%FT%TZ)" >> "$RUN/.pipeline/jobs.tsv"
  echo "$stage_name: job $jobid${stage_array:+ (array $(stage_array_spec "${tasks[@]}"))}${deps[*]:+ after ${deps[*]}}"
}

# A run's earlier jobs still queued or running stop the submission: two chains would write the same
# outputs. (A job after a failed one does not linger: it is submitted with --kill-on-invalid-dep.)
pipeline_check_previous_jobs() {
  local array id state
  declare -A ours=()
  [[ -f "$RUN/.pipeline/jobs.tsv" ]] || return 0
  while read -r id _; do ours[$id]=1; done < "$RUN/.pipeline/jobs.tsv"
  while read -r array id state; do
    [[ -n "${ours[$array]:-}" ]] &&
      pipeline_fail 1 "job $id of an earlier submission of $RUN is $state; wait for it or scancel it first"
  done < <(squeue -h -o '%F %i %T' 2> /dev/null || true)
  return 0
}

# slurm_script NAME ARG...: slurm/NAME.sbatch, the batch script of one tool, as this stage's work:
# array task TASK, with the CPUs of the job (all of this machine's when run here).
slurm_script() {
  local name=$1
  shift
  SLURM_ARRAY_TASK_ID=$TASK SLURM_CPUS_PER_TASK=${SLURM_CPUS_PER_TASK:-$(nproc)} KGLM_BIN=$bin \
    bash "$here/slurm/$name.sbatch" "$@"
}
