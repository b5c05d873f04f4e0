#!/usr/bin/env bash
# Stage ops: every GoogleTest case that runs on the GPU, from the kit's test binaries — each op on
# CUDA against the CPU in fp32, bf16 and fp16 (Devices/OpsOnDevice.*/cuda, best_classes and the
# cross-entropy among them), the PyTorch parity fixtures on CUDA (XLM-R, BERT, T5, mT5: forward,
# loss, gradients, cached decoding), AdamW and clipping on the GPU, the trainer's 50 steps against
# the CPU, bit-identical reruns, --resume in fp32 and fp16, loss scaling, decoding on the GPU;
# ELMo's ops and whole model against PyTorch (ElmoOpsParity, ElmoModelParity) and Adagrad.
# The binaries run side by side (one GPU, 16 cores), each within the stage's time cap.
source "$(dirname "$0")/lib.sh"
filter='*cuda*:*Cuda*:*CUDA*:LossScaling.*'
cap=${STAGE_CAP:-100}
export KGLM_TEST_SOURCE_DIR=$src  # the parity fixtures (tests/reference/data)
tests=(nn_ops_test nn_model_test nn_elmo_test trainer_class_test verbalize_test)
for test in "${tests[@]}"; do
  exe=$KIT/tests/$test
  if [ ! -x "$exe" ]; then fail "$test: not in the kit"; continue; fi
  ( cd "$WORK" && capped $((cap - 10)) "$exe" --gtest_filter="$filter" --gtest_output="json:$WORK/$test.json" \
      > "$WORK/$test.log" 2>&1 ) &
done
wait
for test in "${tests[@]}"; do
  [ -x "$KIT/tests/$test" ] || continue
  python3 "$(dirname "$0")/gtest_lines.py" "$WORK/$test.json" "$WORK/$test.log"
done
