#!/usr/bin/env bash
# Every pending GPU check in one command, on a lent GPU machine (tests/gpu/README.md).
#
# Usage (from the repository root, with the kit of `make gpu-kit` carried):
#   tests/gpu/run.sh [--quick | --bench] [--local] [--kit ARCHIVE|DIR] [--out DIR] [--stages a,b,...]
#     --quick   stages device, ops, tools (the default; under 4 minutes on an H100), and sm70 when
#               the kit holds the V100 build (pack.sh --sm70)
#     --bench   the same, then bench (under 9 minutes)
#     --local   on a machine without a GPU: GPU cases must report "skipped", never "failed"
#     --kit     the archive (default build/gpu-kit/kglm-gpu-kit.tar.xz) or an unpacked kit
#     --out     where the logs and the summary go (default $OUT, else gpu-out)
# Writes one log per stage and summary.md (at most 8 files: what a device call brings back); prints
# the summary; exits 1 if any check failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=quick local=0 kit="" out=${OUT:-gpu-out} only=""
while [ $# -gt 0 ]; do
  case $1 in
    --quick) mode=quick ;;
    --bench) mode=bench ;;
    --local) local=1 ;;
    --kit) kit=$2; shift ;;
    --out) out=$2; shift ;;
    --stages) only=$2; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$out" && out=$(cd "$out" && pwd)

# The kit: this script's own when it runs from an unpacked kit, else the archive, unpacked to /tmp.
if [ -z "$kit" ] && [ -f "$here/../../../MANIFEST" ]; then kit=$(cd "$here/../../.." && pwd)
elif [ -z "$kit" ]; then kit=build/gpu-kit/kglm-gpu-kit.tar.xz; fi
if [ -f "$kit" ]; then
  unpacked=${TMPDIR:-/tmp}/kglm-gpu-kit.$$
  mkdir -p "$unpacked"
  if xz --version > /dev/null 2>&1; then tar -xJf "$kit" -C "$unpacked"
  else python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$kit" "$unpacked"  # no xz-utils
  fi || { echo "run.sh: cannot unpack $kit" >&2; exit 2; }
  export KGLM_GPU_KIT_UNPACKED=$unpacked  # removed at the end by the kit's run.sh
  kit=$unpacked/kglm-gpu-kit
fi
[ -f "$kit/MANIFEST" ] || { echo "run.sh: no kit at $kit: build it with make gpu-kit" >&2; exit 2; }
kit=$(cd "$kit" && pwd)
# The kit's own scripts run, so that they match its binaries.
[ "$here" = "$kit/src/tests/gpu" ] || exec "$kit/src/tests/gpu/run.sh" --$mode $([ $local = 1 ] && echo --local) \
  --kit "$kit" --out "$out" ${only:+--stages "$only"}
work=${TMPDIR:-/tmp}/kglm-gpu-work.$$
trap 'rm -rf "$work" ${KGLM_GPU_KIT_UNPACKED:+"$KGLM_GPU_KIT_UNPACKED"}' EXIT

# Libraries: the kit's, then CUDA's (cudart, cuBLAS, cuBLASLt, NCCL) from the toolkit or, where it
# lacks one (NCCL is not part of the toolkit), from the nvidia-* Python packages of PyTorch.
ld=$kit/lib
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do [ -d "$d" ] && ld=$ld:$d; done
# unresolved: "EXECUTABLE: LIBRARY" for each library an executable of the kit does not find.
unresolved() {
  for exe in "$kit"/bin/* "$kit"/tests/* "$kit"/helpers/* "$kit"/mpi/bin/*; do
    LD_LIBRARY_PATH=$ld ldd "$exe" 2> /dev/null | awk -v e="${exe##*/}" '/not found/ {print e ": " $1}'
  done | sort -u
}
missing=$(unresolved | awk '{print $2}' | sort -u)
if [ -n "$missing" ]; then
  roots=$(python3 -c 'import nvidia; print("\n".join(nvidia.__path__))' 2> /dev/null)
  for soname in $missing; do
    found=$(find $roots /usr/local /usr/lib/x86_64-linux-gnu /opt -maxdepth 6 -name "$soname" 2> /dev/null | head -1)
    [ -n "$found" ] && ld=$ld:$(dirname "$found")
  done
fi
# What is still missing: the device stage reports it.
KGLM_KIT_UNRESOLVED=$(unresolved)
export KGLM_KIT_UNRESOLVED
export LD_LIBRARY_PATH=$ld${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# OpenMPI, relocated into the kit (its components and help files under the prefix).
# One node: the isolated launcher, which needs no ssh (the GPU machine may have none); root allowed.
export OPAL_PREFIX=$kit/mpi PATH=$kit/mpi/bin:$kit/bin:$kit/helpers:$PATH OMPI_MCA_plm=isolated
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export KIT=$kit LOCAL=$local
# Each stage's OpenMP/OpenBLAS threads: the tests pass --threads themselves.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}

# stage NAME CAP: runs stage-NAME.sh under a time cap, its log in $out/NAME.log; one summary row.
# The caps fit the GPU machine (16 cores), where the lease is short and a hung stage must not eat it.
# --local runs the CPU halves of the checks on the machine at hand (2 cores in CI, shared with other
# tests): there the cap only reports (a loaded machine is not a failure); ctest's TIMEOUT is the
# one clock the gpu_kit test obeys.
rows=() failed_total=0
stage() {
  local name=$1 cap=$2 start=$SECONDS code=0
  [ -n "$only" ] && [[ ",$only," != *",$name,"* ]] && return
  echo "== stage $name (cap ${cap} s$([ "$local" = 1 ] && echo ", reported only: --local"))"
  if [ "$local" = 1 ]; then
    WORK=$work/$name STAGE_CAP=$cap "$kit/src/tests/gpu/stage-$name.sh" > "$out/$name.log" 2>&1 || code=$?
  else
    WORK=$work/$name STAGE_CAP=$cap timeout -k 10 "$cap" "$kit/src/tests/gpu/stage-$name.sh" \
      > "$out/$name.log" 2>&1 || code=$?
  fi
  local secs=$((SECONDS - start))
  if [ "$local" = 1 ] && [ $secs -gt "$cap" ]; then
    echo "note: stage $name took ${secs} s, over its ${cap} s cap on a GPU machine (--local: not a failure)"
  elif [ $code -eq 124 ] || [ $code -eq 137 ]; then
    echo "FAIL: stage $name passed its ${cap} s cap" >> "$out/$name.log"
  fi
  local passed failed skipped
  passed=$(grep -c '^ok: ' "$out/$name.log") failed=$(grep -c '^FAIL: ' "$out/$name.log")
  skipped=$(grep -c '^skip: ' "$out/$name.log")
  [ $((passed + failed + skipped)) -gt 0 ] || { echo "FAIL: stage $name reported no check" >> "$out/$name.log"; failed=1; }
  failed_total=$((failed_total + failed))
  rows+=("| $name | $passed | $failed | $skipped | $secs |")
  grep '^FAIL: ' "$out/$name.log" | head -20 | sed 's/^/   /'
}
start_all=$SECONDS
stage device 30
stage ops 100
stage tools 110
[ -d "$kit/sm70" ] && stage sm70 60  # a kit packed with --sm70: the V100 build, its PTX JIT-compiled
[ $mode = bench ] && stage bench 330

{
  echo "# kglm GPU checks ($mode$([ $local = 1 ] && echo ", --local: no GPU expected"))"
  echo
  sed 's/^/    /' "$kit/MANIFEST"
  grep -h '^nvidia-smi: ' "$out/device.log" 2> /dev/null | sed 's/^nvidia-smi: /    /'
  echo
  echo "| stage | passed | failed | skipped | seconds |"
  echo "|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "total: $((SECONDS - start_all)) s; $failed_total failed"
  if grep -q '^FAIL: ' "$out"/*.log 2> /dev/null; then
    echo; echo "## failures"; echo
    grep -h '^FAIL: ' "$out"/*.log | head -40 | sed 's/^/- /'
  fi
  if [ -f "$out/bench.log" ]; then
    echo; echo "## bench figures"; echo
    grep -E '^(pretrain-gpu|verbalize|probe): ' "$out/bench.log" | sed 's/^/    /'
  fi
  if grep -q '^comm-bench: ' "$out/tools.log" 2> /dev/null; then
    echo; echo "## NCCL all-reduce, 1 rank"; echo
    grep '^comm-bench: ' "$out/tools.log" | sed 's/^comm-bench: /    /'
  fi
} > "$out/summary.md"
cat "$out/summary.md"
[ $failed_total -eq 0 ]
