# Sourced by the stages of tests/gpu/run.sh: result lines and the device-or-skip rule.
# A stage prints one line per check: "ok: ...", "FAIL: ..." or "skip: ..."; run.sh counts them.
# The environment (set by run.sh): KIT (the unpacked kit), WORK (this stage's scratch directory),
# LOCAL (1 on a machine without a GPU: GPU cases must be skipped, never failed).
set -uo pipefail
: "${KIT:?run the stages through tests/gpu/run.sh}" "${WORK:?}" "${LOCAL:?}"
bin=$KIT/bin fixtures=$KIT/fixtures src=$KIT/src
mkdir -p "$WORK"
# The OpenMP threads of each run: 2 on the GPU machine (16 cores); 1 with --local, where the tools
# stage's seven groups share a CI machine's 2 cores (with 2 each, 14 OpenMP threads spin-wait on each
# other there). The checks compare runs made with the same count.
threads=2
[ "$LOCAL" = 1 ] && threads=1
ok() { echo "ok: $*"; }
# capped SECONDS CMD...: CMD under a time cap on the GPU machine (its lease is short: a hang must not
# eat it); with --local (LOCAL=1) uncapped, so that a loaded CI machine is not a failure: there
# ctest's TIMEOUT of gpu_kit is the clock.
capped() {
  local seconds=$1; shift
  if [ "$LOCAL" = 1 ]; then "$@"; else timeout -k 5 "$seconds" "$@"; fi
}
fail() { echo "FAIL: $*"; }
skip() { echo "skip: $*"; }

# on_device NAME CMD...: runs a --device cuda command, stderr kept in $WORK/NAME.err. Returns 0 when
# it succeeded; 2 when this machine has no usable GPU and LOCAL=1 (the command refused in one line,
# "--device cuda: <why>", as every tool does), after a skip line; 1 otherwise, after a FAIL line
# with the command's last words. Refused for want of a GPU, the same command runs once more with
# --device cpu, writing the same files, and on_device returns 0 if that ran: the checks after it
# then compare real outputs here too (a check that cannot pass on the GPU fails here first); where
# the CPU cannot run it either (half precision), 2, and the checks compare the CPU's reference
# with itself.
# The outcome is also left in $ran, for gpu_or_cpu and labelled below.
ran=1
on_device() {
  local name=$1; shift
  local code=0
  "$@" > "$WORK/$name.out" 2> "$WORK/$name.err" || code=$?
  if [ $code -eq 0 ]; then ran=0; return 0; fi
  if [ "$LOCAL" = 1 ] && grep -q -- "--device cuda: " "$WORK/$name.err"; then
    skip "$name: no GPU here ($(grep -m1 -- "--device cuda: " "$WORK/$name.err" | cut -c1-160))"
    local on_cpu=() previous="" word
    for word in "$@"; do
      [ "$previous" = --device ] && [ "$word" = cuda ] && word=cpu
      on_cpu+=("$word") previous=$word
    done
    if "${on_cpu[@]}" > "$WORK/$name.out" 2> "$WORK/$name.cpu.err"; then ran=3; return 0; fi
    ran=2; return 2
  fi
  fail "$name: exit $code: $(tail -3 "$WORK/$name.err" | tr '\n' ' ' | cut -c1-400)"
  ran=1; return 1
}

# After on_device: whether to compare (it ran, or it was refused for want of a GPU), what to compare
# with (gpu_or_cpu GPU_OUTPUT CPU_OUTPUT: the GPU's output, also when --device cpu ran in its place;
# else the CPU's reference, so that each check's command runs here too, on the CPU's output twice)
# and the check's name (labelled).
compared() { [ "$ran" != 1 ]; }
gpu_or_cpu() { if [ "$ran" = 2 ]; then echo "$2"; else echo "$1"; fi; }
labelled() {
  case $ran in
    2) echo "$1 [no GPU: the check ran on the CPU's output twice]" ;;
    3) echo "$1 [no GPU: --device cpu in its place]" ;;
    *) echo "$1" ;;
  esac
}

# cpu NAME CMD...: a reference run on the CPU; a failure is the kit's (a library, a path, a file).
cpu() {
  local name=$1; shift
  if "$@" > "$WORK/$name.out" 2> "$WORK/$name.err"; then return 0; fi
  fail "$name (CPU): $(tail -3 "$WORK/$name.err" | tr '\n' ' ' | cut -c1-400)"
  return 1
}

# check NAME CMD...: a comparison; ok or FAIL with its output.
check() {
  local name=$1; shift
  local out
  if out=$("$@" 2>&1); then ok "$name${out:+ ($(echo "$out" | tail -1 | cut -c1-200))}"
  else fail "$name: $(echo "$out" | tail -4 | tr '\n' ' ' | cut -c1-600)"; fi
}
