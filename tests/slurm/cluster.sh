#!/usr/bin/env bash
# A one-node Slurm cluster for the tests, private to a temporary directory: munged, slurmctld and
# slurmd run in the foreground (as children of the test, stopped by pid on exit, even on failure)
# from a generated slurm.conf, with their state, spool, logs, sockets and ports (picked free) under
# the directory. A requeued job waits cred_expire (10 s here, 120 s by default) before it starts again.
# The scheduler runs as soon as it has work (Slurm's defaults suit thousands of jobs, not a test's
# dozen): batch_sched_delay=0 starts a job whose dependency was met at once, not up to 3 s later;
# sched_interval=1 and bf_interval=1 start a requeued job when its wait ends, not at the next
# 30-60 s pass. Measured alone (ctest -R): slurm_kmlm 82 -> 56 s, slurm_demo 54 -> 44 s.
# Source it, then `slurm_cluster_start DIR`; SLURM_CONF points the clients at it.
# Returns 77 (skip) with the reason on stdout when the daemons are missing or cannot start.

slurm_daemon_pids=()

slurm_cluster_stop() {
  local pid
  for pid in "${slurm_daemon_pids[@]}"; do kill "$pid" 2> /dev/null || true; done
  for pid in "${slurm_daemon_pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2> /dev/null || true
  done
  slurm_daemon_pids=()
}

# A TCP port nobody listens on now (the daemons bind it a moment later).
slurm_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

slurm_cluster_start() {
  local dir=$1
  local tool
  for tool in munged slurmctld slurmd sbatch squeue scontrol; do
    command -v "$tool" > /dev/null || [ -x "/usr/sbin/$tool" ] ||
      { echo "skipped: $tool is not installed (Debian: munge, slurm-wlm; make deps installs them)"; return 77; }
  done
  PATH=$PATH:/usr/sbin
  mkdir -p "$dir"/{munge,state,spool,log}
  chmod 711 "$dir/munge"
  dd if=/dev/urandom of="$dir/munge/key" bs=1024 count=1 status=none
  chmod 400 "$dir/munge/key"
  munged --foreground --force --key-file="$dir/munge/key" --socket="$dir/munge/socket" \
    --pid-file="$dir/munge/pid" --seed-file="$dir/munge/seed" --log-file="$dir/log/munged.log" \
    > "$dir/log/munged.out" 2>&1 &
  slurm_daemon_pids+=($!)

  local host user cpus memory_mb
  host=$(hostname -s)
  user=$(id -un)
  cpus=$(getconf _NPROCESSORS_ONLN)  # the machine's (nproc would give a test's OMP_NUM_THREADS)
  memory_mb=$(( $(awk '/^MemTotal/ { print $2 }' /proc/meminfo) / 1024 * 9 / 10 ))
  cat > "$dir/slurm.conf" <<CONF
ClusterName=kglmtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(slurm_free_port)
SlurmdPort=$(slurm_free_port)
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
AuthInfo=socket=$dir/munge/socket,cred_expire=10
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_interval=1,bf_interval=1
ReturnToService=2
KillWait=10
MinJobAge=600
InactiveLimit=0
MailProg=/bin/true
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory_mb State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -D -f "$SLURM_CONF" > "$dir/log/slurmctld.out" 2>&1 &
  slurm_daemon_pids+=($!)
  slurmd -D -f "$SLURM_CONF" -N "$host" > "$dir/log/slurmd.out" 2>&1 &
  slurm_daemon_pids+=($!)

  local state=""
  for _ in $(seq 150); do
    state=$(sinfo -h -N -o %t 2> /dev/null || true)
    [[ "$state" == idle* ]] && return 0
    sleep 0.2
  done
  echo "skipped: the Slurm daemons did not come up (node state '${state:-none}'):"
  tail -n 5 "$dir"/log/*.log "$dir"/log/*.out 2> /dev/null | sed 's/^/  /'
  slurm_cluster_stop
  return 77
}
