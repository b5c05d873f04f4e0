#!/usr/bin/env bash
# Stage bench (run.sh --bench): bench/pretrain-gpu.py (XLM-R base shape, bf16 and fp16, 32x512 and
# 128x128, against PyTorch eager, masked-head and torch.compile on the same GPU: tokens/s, MFU, peak
# memory), bench/verbalize.py --device cuda (T5 greedy and beam decoding against transformers' T5
# on the GPU), bench/probe.py --device cuda (probe on the GPU against the CPU), bench/elmo-cpu.py
# --device cuda --size paper (the paper's ELMo against the same model in torch with cuDNN's LSTM). Each bench's table
# goes to the log; the summary keeps the lines that carry its figures. Without a GPU (--local) each
# script is only started with --help.
source "$(dirname "$0")/lib.sh"
export KGLM_TORCH_PYTHON=${KGLM_TORCH_PYTHON:-$(command -v python3)}
benches=("pretrain-gpu.py --steps ${BENCH_STEPS:-10}" "verbalize.py --device cuda --train-steps 100"
  "probe.py --device cuda" "elmo-cpu.py --device cuda --size paper --steps ${BENCH_STEPS:-10}")
for b in "${benches[@]}"; do
  read -r script args <<< "$b"
  name=${script%.py}
  if [ "$LOCAL" = 1 ]; then
    if $KGLM_TORCH_PYTHON "$src/bench/$script" --help > "$WORK/$name.help" 2>&1; then skip "bench $name: no GPU here (--help ran)"
    else fail "bench $name --help: $(tail -2 "$WORK/$name.help" | tr '\n' ' ')"; fi
    continue
  fi
  start=$SECONDS
  # shellcheck disable=SC2086 # the arguments are words
  if PYTHONUNBUFFERED=1 $KGLM_TORCH_PYTHON "$src/bench/$script" $args --bin "$bin" --fixtures "$fixtures" \
       --work "$WORK/$name" > "$WORK/$name.out" 2>&1; then
    ok "bench $name ($((SECONDS - start)) s)"
  else
    fail "bench $name: $(tail -3 "$WORK/$name.out" | tr '\n' ' ' | cut -c1-400)"
  fi
  sed "s/^/$name: /" "$WORK/$name.out"
done
