#!/usr/bin/env bash
# Stage sm70 (a kit packed with --sm70): the V100 build of `make cuda12` (CUDA 12, sm_70 cubins and
# compute_70 PTX) on the lent GPU. A newer GPU cannot run sm_70 cubins: its driver JIT-compiles the
# compute_70 PTX (CUDA_FORCE_PTX_JIT=1 makes that explicit), so the kernels run as the V100 build has
# them (no sm_80 instruction, bf16 arithmetic in software). Checks: every op on CUDA against the CPU
# in fp32, bf16 and fp16 (nn_ops_test's Devices/OpsOnDevice.*/cuda), and a short pretrain run with
# --precision fp16 and fp32 within tolerance of the CPU's losses.
# CUDA 12's runtime travels in the kit (sm70/lib). Its cuBLAS (libcublas.so.12 and libcublasLt.so.12,
# 854 MB) does not fit a device call's 64 MiB: it is looked for on this machine (KGLM_CUDA12_LIBS,
# /usr/local/cuda-12*, the nvidia-cublas-cu12 Python package); without it the stage skips, saying so.
source "$(dirname "$0")/lib.sh"
dir=$KIT/sm70
[ -x "$dir/pretrain" ] || { fail "sm70: the kit has no sm70/pretrain (pack.sh --sm70)"; exit 0; }

cublas=""
roots=$(python3 -c 'import nvidia; print("\n".join(nvidia.__path__))' 2> /dev/null)
for d in ${KGLM_CUDA12_LIBS:-} /usr/local/cuda-12*/lib64 /usr/local/cuda-12*/targets/x86_64-linux/lib \
         $(find $roots /usr/local /opt -maxdepth 6 -name libcublasLt.so.12 -printf '%h\n' 2> /dev/null); do
  [ -f "$d/libcublas.so.12" ] && [ -f "$d/libcublasLt.so.12" ] && { cublas=$d; break; }
done
if [ -z "$cublas" ]; then
  skip "sm70: CUDA 12's cuBLAS (libcublas.so.12, libcublasLt.so.12) is not on this machine and does not fit the kit; set KGLM_CUDA12_LIBS to a folder that has it"
  exit 0
fi
export LD_LIBRARY_PATH=$dir/lib:$cublas:$LD_LIBRARY_PATH CUDA_FORCE_PTX_JIT=1
missing=$(ldd "$dir"/pretrain "$dir"/nn_ops_test 2> /dev/null | awk '/not found/ {print $1}' | sort -u | tr '\n' ' ')
[ -z "$missing" ] || { fail "sm70: libraries not found: $missing"; exit 0; }
ok "sm70: CUDA 12's cuBLAS from $cublas, its runtime from the kit"

if [ -x "$dir/nn_ops_test" ]; then
  ( cd "$WORK" && capped 50 "$dir/nn_ops_test" --gtest_filter='Devices/OpsOnDevice.*/cuda' \
      --gtest_output="json:$WORK/nn_ops_test.json" > "$WORK/nn_ops_test.log" 2>&1 )
  python3 "$(dirname "$0")/gtest_lines.py" "$WORK/nn_ops_test.json" "$WORK/nn_ops_test.log" | sed 's/^\(ok\|FAIL\|skip\): /\1: sm70 /'
else
  skip "sm70: no nn_ops_test in the kit (packed from the cuda12 check's build, which links pretrain only)"
fi

spm=$fixtures/tokenizer/spm-test-vocab1000.model
data=$WORK/data.h5
model=(--data "$data" --layers 2 --hidden 32 --heads 4 --ffn 64 --batch 4 --lr 3e-3 --warmup 4 --threads "$threads"
  --seed 7 --quiet --steps 8)
cpu prepare "$dir/pretrain" prepare --tokenizer "$spm" --max-len 48 -o "$data" --quiet \
  "en=$fixtures/tokenizer/botchan.txt" &&
  cpu pretrain "$dir/pretrain" "${model[@]}" --log "$WORK/cpu.jsonl" --out "$WORK/cpu" || exit 0
for precision in fp32 fp16; do
  tolerance=1e-4
  [ $precision = fp16 ] && tolerance=5e-2
  on_device "sm70-pretrain-$precision" "$dir/pretrain" "${model[@]}" --device cuda --precision $precision \
    --log "$WORK/$precision.jsonl" --out "$WORK/$precision"
  compared && check "$(labelled "sm70 pretrain --device cuda --precision $precision: 8 steps within $tolerance of the CPU's")" \
    python3 "$src/tests/cli/losses_match.py" "$WORK/cpu.jsonl" "$(gpu_or_cpu "$WORK/$precision.jsonl" "$WORK/cpu.jsonl")" \
      8 $tolerance
done
