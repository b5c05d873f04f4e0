#!/usr/bin/env bash
# Stage device: the machine (nvidia-smi: GPU, driver, compute capability, free memory), the kit
# (its build, every executable's shared libraries resolved), and the GPU as kglm's runtime sees it.
source "$(dirname "$0")/lib.sh"
echo "host: $(uname -srm), $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
sed 's/^/kit: /' "$KIT/MANIFEST"
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
if command -v nvidia-smi > /dev/null; then
  if nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total,memory.free --format=csv > "$WORK/smi.csv" \
       2> "$WORK/smi.err"; then
    sed 's/^/nvidia-smi: /' "$WORK/smi.csv"
    ok "nvidia-smi: $(tail -1 "$WORK/smi.csv")"
  else
    fail "nvidia-smi: $(cat "$WORK/smi.err")"
  fi
elif [ "$LOCAL" = 1 ]; then
  skip "nvidia-smi: not installed here"
else
  fail "nvidia-smi: not found on a machine that should have a GPU"
fi

# Every executable of the kit finds every library (run.sh looked them up): the kit's own, the C
# runtime and CUDA's.
if [ -z "${KGLM_KIT_UNRESOLVED:-}" ]; then ok "every executable of the kit resolves its shared libraries"
else fail "unresolved libraries (searched LD_LIBRARY_PATH above): $(echo "$KGLM_KIT_UNRESOLVED" | tr '\n' ' ')"; fi

# The runtime's own view: with a GPU, CudaBackend.WithoutAGpuSaysWhy skips naming the device;
# without one it passes, having checked the refusal.
log=$WORK/runtime.log
capped 60 "$KIT/tests/nn_ops_test" --gtest_filter='CudaBackend.*' > "$log" 2>&1
if grep -q "a GPU is present" "$log"; then
  ok "kglm's CUDA runtime: $(grep -m1 -o 'a GPU is present: .*' "$log")"
elif [ "$LOCAL" = 1 ] && grep -q "PASSED" "$log"; then
  skip "kglm's CUDA runtime: no GPU here (the refusal checked)"
else
  fail "kglm's CUDA runtime: $(tail -5 "$log" | tr '\n' ' ')"
fi
