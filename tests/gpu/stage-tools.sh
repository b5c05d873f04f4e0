#!/usr/bin/env bash
# Stage tools: pretrain (the masked LM and ELMo), finetune (fine-tuned and frozen heads), probe and verbalize
# with --device cuda against --device cpu on
# the kit's fixture data (the GPU branches of tests/cli/*.sh, in one place), pretrain's bit-identical
# GPU reruns and --resume, bf16 and fp16, SIGUSR1 checkpoint-and-resume on the GPU, NCCL with one
# rank (nccl_test and pretrain under mpirun -np 1 against one process), pretrain comm-bench --device
# cuda. The seven groups run side by side, each in its own scratch directory.
source "$(dirname "$0")/lib.sh"
here=$(dirname "$0")
py=python3
spm=$fixtures/tokenizer/spm-test-vocab1000.model
text=$fixtures/tokenizer/botchan.txt
model=(--layers 2 --hidden 32 --heads 4 --ffn 64 --batch 4 --accumulate 2 --lr 3e-3 --warmup 4 --threads "$threads" --seed 7
  --quiet)

# same_run LOG_A LOG_B DIR_A DIR_B: the same training steps (losses, gradient norms, rates), the same
# weights and AdamW moments byte for byte.
same_run() {
  $py "$src/tests/cli/compare_runs.py" --train-lines "$1" "$2" && cmp "$3/model.safetensors" "$4/model.safetensors" &&
    cmp "$3/optimizer.safetensors" "$4/optimizer.safetensors"
}

pretrain_group() {
  local m=(--data "$data" "${model[@]}") w=$WORK code
  on_device pretrain-cuda "$bin/pretrain" "${m[@]}" --steps 12 --device cuda --log "$w/cuda.jsonl" --out "$w/cuda"
  compared && check "$(labelled "pretrain --device cuda: 12 steps within 1e-4 of the CPU's losses")" \
    $py "$src/tests/cli/losses_match.py" "$reference.jsonl" "$(gpu_or_cpu "$w/cuda.jsonl" "$reference.jsonl")" 12 1e-4
  # On the GPU the reference is the GPU run above; without one, the CPU run.
  local ref ref_dir
  ref=$(gpu_or_cpu "$w/cuda.jsonl" "$reference.jsonl") ref_dir=$(gpu_or_cpu "$w/cuda" "$reference")
  on_device pretrain-rerun "$bin/pretrain" "${m[@]}" --steps 12 --device cuda --log "$w/rerun.jsonl" --out "$w/rerun"
  compared && check "$(labelled "pretrain --device cuda: a rerun is bit-identical (losses, weights, AdamW moments)")" \
    same_run "$ref" "$(gpu_or_cpu "$w/rerun.jsonl" "$ref")" "$ref_dir" "$(gpu_or_cpu "$w/rerun" "$ref_dir")"
  on_device pretrain-first "$bin/pretrain" "${m[@]}" --steps 6 --decay-steps 12 --device cuda --log "$w/first.jsonl" \
    --out "$w/first" &&
    on_device pretrain-resume "$bin/pretrain" --data "$data" --resume "$w/first" --threads "$threads" --quiet --steps 12 \
      --device cuda --log "$w/first.jsonl" --out "$w/resumed"
  compared && check "$(labelled "pretrain --device cuda: 6 steps + --resume 6 = 12 steps, bit-identical")" \
    same_run "$ref" "$(gpu_or_cpu "$w/first.jsonl" "$ref")" "$ref_dir" "$(gpu_or_cpu "$w/resumed" "$ref_dir")"
  for precision in bf16 fp16; do
    on_device "pretrain-$precision" "$bin/pretrain" "${m[@]}" --steps 12 --device cuda --precision $precision \
      --log "$w/$precision.jsonl" --out "$w/$precision"
    compared && check "$(labelled "pretrain --precision $precision: 12 steps within 5e-2 of fp32 on the GPU")" \
      $py "$src/tests/cli/losses_match.py" "$ref" "$(gpu_or_cpu "$w/$precision.jsonl" "$ref")" 12 5e-2
  done
  # SIGUSR1: a checkpoint at the step in flight, exit 75, and --resume on the GPU goes on from it.
  code=0
  "$bin/pretrain" "${m[@]}" --steps 100000 --device cuda --log "$w/usr1.jsonl" --out "$w/usr1" > /dev/null \
    2> "$w/usr1.err" &
  local job=$! waited=0
  while kill -0 $job 2> /dev/null && [ "$(cat "$w/usr1.jsonl" 2> /dev/null | grep -c '"loss"')" -lt 3 ] &&
        [ $waited -lt 300 ]; do sleep 0.1; waited=$((waited + 1)); done
  kill -USR1 $job 2> /dev/null
  wait $job || code=$?
  if [ $code -eq 1 ] && [ "$LOCAL" = 1 ] && grep -q -- "--device cuda: " "$w/usr1.err"; then
    skip "pretrain SIGUSR1 on the GPU: no GPU here"
  elif [ $code -ne 75 ]; then
    fail "pretrain SIGUSR1 on the GPU: exit $code (75 expected): $(tail -2 "$w/usr1.err" | tr '\n' ' ')"
  else
    local step
    step=$($py -c "import json,sys; print(json.load(open(sys.argv[1]))['step'])" "$w/usr1/trainer_state.json")
    if on_device pretrain-usr1-resume "$bin/pretrain" --data "$data" --resume "$w/usr1" --threads "$threads" --quiet \
         --steps $((step + 2)) --device cuda --out "$w/usr1-more"; then
      ok "pretrain SIGUSR1 on the GPU: checkpoint at step $step, exit 75, --resume ran 2 more steps"
    fi
  fi
}

mpi_group() {
  local m=(--data "$data" "${model[@]}") w=$WORK
  if ! command -v mpirun > /dev/null; then fail "mpirun: not in the kit"; return; fi
  cpu mpirun-cpu capped 120 mpirun -np 1 "$bin/pretrain" "${m[@]}" --steps 4 --log "$w/mpi-cpu.jsonl" \
    --out "$w/mpi-cpu" && ok "the kit's mpirun starts a rank (pretrain on the CPU, MPI world size 1)"
  on_device single "$bin/pretrain" "${m[@]}" --steps 12 --device cuda --log "$w/single.jsonl" --out "$w/single" &&
    on_device nccl-1 capped 180 mpirun -np 1 "$bin/pretrain" "${m[@]}" --steps 12 --device cuda \
      --log "$w/nccl.jsonl" --out "$w/nccl"
  compared && check "$(labelled "NCCL, 1 rank under mpirun = 1 process on the GPU")" \
    $py "$src/tests/cli/compare_runs.py" "$(gpu_or_cpu "$w/single.jsonl" "$w/mpi-cpu.jsonl")" \
      "$(gpu_or_cpu "$w/nccl.jsonl" "$w/mpi-cpu.jsonl")" "$(gpu_or_cpu "$w/single" "$w/mpi-cpu")" \
      "$(gpu_or_cpu "$w/nccl" "$w/mpi-cpu")"
  ( cd "$w" && capped 120 mpirun -np 1 "$KIT/tests/nccl_test" --gtest_output="json:$w/nccl_test.json" \
      > "$w/nccl_test.log" 2>&1 )
  $py "$here/gtest_lines.py" "$w/nccl_test.json" "$w/nccl_test.log"
  if on_device comm-bench capped 120 mpirun -np 1 "$bin/pretrain" comm-bench --device cuda --max-bytes $((64 << 20)) \
       --iterations 10; then
    ok "$(labelled "pretrain comm-bench --device cuda: $(grep '^fit:' "$w/comm-bench.out")")"
    sed 's/^/comm-bench: /' "$w/comm-bench.out"
  fi
}

finetune_group() {
  local w=$WORK
  cpu init "$bin/pretrain" --data "$data" --layers 2 --hidden 64 --heads 4 --ffn 128 --batch 16 --steps 30 \
    --lr 3e-3 --threads "$threads" --quiet --out "$w/init" || return
  # PAN-X English from the fixtures: the first 2,000 sentences to train on, the next 300 as dev.
  awk -v RS= -v ORS='\n\n' 'NR <= 2000' "$fixtures/panx/dev-en.tsv" > "$w/train.panx"
  awk -v RS= -v ORS='\n\n' 'NR > 2000 && NR <= 2300' "$fixtures/panx/dev-en.tsv" > "$w/dev.panx"
  local t=(--task token --init "$w/init" --train "$w/train.panx" --dev "$w/dev.panx" --batch 16 --lr 1e-3
    --eval-every 40 --epochs 1 --seeds 5 --threads "$threads" --quiet)
  cpu finetune "$bin/finetune" "${t[@]}" -o "$w/cpu" || return
  on_device finetune-cuda "$bin/finetune" "${t[@]}" --device cuda -o "$w/cuda"
  compared && check "$(labelled "finetune --device cuda: PAN-X en losses and dev F1 within 1e-3 of the CPU's")" \
    $py "$src/tests/cli/metrics_match.py" "$w/cpu/seed-5/metrics.jsonl" \
      "$(gpu_or_cpu "$w/cuda/seed-5/metrics.jsonl" "$w/cpu/seed-5/metrics.jsonl")" 1e-3 loss dev_f1
  # The qa, slots --intent and wic heads: XQuAD en (its first article to train, the second as dev), the
  # NLU Evaluation Data's first fold as MASSIVE JSON lines (600 to train, 200 as dev), English WiC.
  $py - "$fixtures/xquad/xquad.en.json" "$src/tests/data/slots/hwu-fold1.csv" "$w" <<'PY' || fail "qa/slots data"
import csv, json, sys
xquad, hwu, w = sys.argv[1:]
articles = json.load(open(xquad, encoding="utf-8"))["data"]
for name, part in (("qa-train", articles[:1]), ("qa-dev", articles[1:2])):
    with open(f"{w}/{name}.json", "w", encoding="utf-8") as f:
        json.dump({"version": "1.1", "data": part}, f, ensure_ascii=False)
rows = list(csv.DictReader(open(hwu, encoding="utf-8"), delimiter=";"))
for name, part in (("slots-train", rows[:600]), ("slots-dev", rows[600:800])):
    with open(f"{w}/{name}.jsonl", "w", encoding="utf-8") as f:
        for r in part:
            f.write(json.dumps({"id": r["answerid"], "locale": "en-US", "intent": f"{r['scenario']}_{r['intent']}",
                                "annot_utt": r["answer_annotation"]}) + "\n")
PY
  local task
  for task in qa slots wic; do
    local t=(--task "$task" --init "$w/init" --batch 16 --lr 1e-3 --max-len 64 --epochs 1 --seeds 5 --threads "$threads" --quiet)
    case $task in
      qa) t+=(--train "$w/qa-train.json" --dev "$w/qa-dev.json" --doc-stride 16 --max-query-len 24) ;;
      slots) t+=(--intent --train "$w/slots-train.jsonl" --dev "$w/slots-dev.jsonl") ;;
      wic) t+=(--train "$src/tests/data/wic/train.data.txt" --dev "$src/tests/data/wic/dev.data.txt") ;;
    esac
    cpu "finetune-$task" "$bin/finetune" "${t[@]}" -o "$w/cpu-$task" || continue
    on_device "finetune-$task-cuda" "$bin/finetune" "${t[@]}" --device cuda -o "$w/cuda-$task"
    compared && check "$(labelled "finetune --task $task --device cuda: losses and dev scores within 1e-3 of the CPU's")" \
      $py "$src/tests/cli/metrics_match.py" "$w/cpu-$task/seed-5/metrics.jsonl" \
        "$(gpu_or_cpu "$w/cuda-$task/seed-5/metrics.jsonl" "$w/cpu-$task/seed-5/metrics.jsonl")" 1e-3 loss dev_f1 \
        dev_accuracy
  done
}

# The frozen-feature heads (finetune --task pos|parse|nli --frozen) on the 12-step reference encoder,
# no dropout: the GPU's losses and dev scores against the CPU's (the scalar mix, block scores, outer
# product, soft alignment and segment pooling CUDA kernels, ESIM's BiLSTMs on the LSTM op).
frozen_group() {
  local w=$WORK task
  awk -v RS= -v ORS='\n\n' 'NR <= 300' "$fixtures/ud/en_ewt-ud-dev.conllu" > "$w/train.conllu"
  awk -v RS= -v ORS='\n\n' 'NR > 300 && NR <= 400' "$fixtures/ud/en_ewt-ud-dev.conllu" > "$w/dev.conllu"
  head -n 90 "$fixtures/xnli/dev-en.first600.tsv" > "$w/train.tsv"
  sed -n 91,150p "$fixtures/xnli/dev-en.first600.tsv" > "$w/dev.tsv"
  for task in pos parse nli; do
    local t=(--task "$task" --frozen --init "$reference" --seeds 3 --epochs 2 --batch 16 --dropout 0 --threads "$threads" --quiet)
    if [ "$task" = nli ]; then
      t+=(--train "en=$w/train.tsv" --dev "en=$w/dev.tsv" --text-column 1 --pair-column 2 --label-column 3
        --mlp-size 32)
    else
      t+=(--train "en=$w/train.conllu" --dev "en=$w/dev.conllu")
    fi
    cpu "frozen-$task" "$bin/finetune" "${t[@]}" --out "$w/cpu-$task" || continue
    on_device "frozen-$task-cuda" "$bin/finetune" "${t[@]}" --device cuda --out "$w/cuda-$task"
    compared &&
      check "$(labelled "finetune --task $task --frozen --device cuda: losses and dev scores within 1e-3 of the CPU's")" \
        $py "$src/tests/cli/metrics_match.py" "$w/cpu-$task/seed-3/metrics.jsonl" \
          "$(gpu_or_cpu "$w/cuda-$task/seed-3/metrics.jsonl" "$w/cpu-$task/seed-3/metrics.jsonl")" 1e-3 loss \
          dev_accuracy dev_las
  done
}

probe_group() {
  local w=$WORK
  local p=(--model "$reference" --facts "$fixtures/xfactr/facts" --templates "$fixtures/xfactr/templates"
    --aliases "$fixtures/xfactr/alias" --langs en --relations P19,P36,P27,P103 --max-facts 60
    --method independent,order,confidence -q)
  cpu probe "$bin/probe" "${p[@]}" -o "$w/cpu" --predictions "$w/cpu.jsonl" || return
  on_device probe-cuda "$bin/probe" "${p[@]}" --device cuda -o "$w/cuda" --predictions "$w/cuda.jsonl"
  compared && check "$(labelled "probe --device cuda: the CPU's predictions (3 methods, 4 relations)")" \
    $py "$src/tests/cli/same_records.py" "$w/cpu.jsonl" "$(gpu_or_cpu "$w/cuda.jsonl" "$w/cpu.jsonl")" \
      token_ids,num_mask,correct 0.98
}

# ELMo (pretrain --architecture elmo, data/elmo/options-small.json) on botchan's words: the GPU's 12
# steps against the CPU's (the LSTM, character CNN, highway and sampled-softmax CUDA kernels, the
# same negatives), a bit-identical rerun and 6 + --resume 6 on the GPU (the carried LSTM state and
# Adagrad's accumulators in elmo_state.safetensors), bf16 and fp16, pretrain embed on the GPU.
elmo_group() {
  local w=$WORK
  cpu elmo-vocab "$bin/pretrain" vocab -q "en=$text" -o "$w/vocab.txt" &&
    cpu elmo-words "$bin/pretrain" prepare --words --vocab "$w/vocab.txt" --max-len 64 -q "en=$text" \
      -o "$w/words.h5" || return
  local e=(--architecture elmo --options "$src/data/elmo/options-small.json" --data "$w/words.h5" --batch 16
    --eval-fraction 0.05 --eval-every 6 --threads "$threads" --quiet)
  cpu elmo-cpu "$bin/pretrain" "${e[@]}" --steps 12 --log "$w/cpu.jsonl" --out "$w/cpu" || return
  on_device elmo-cuda "$bin/pretrain" "${e[@]}" --steps 12 --device cuda --log "$w/cuda.jsonl" --out "$w/cuda"
  compared && check "$(labelled "pretrain --architecture elmo --device cuda: 12 steps within 1e-3 of the CPU's losses")" \
    $py "$src/tests/cli/losses_match.py" "$w/cpu.jsonl" "$(gpu_or_cpu "$w/cuda.jsonl" "$w/cpu.jsonl")" 12 1e-3
  local ref ref_dir
  ref=$(gpu_or_cpu "$w/cuda.jsonl" "$w/cpu.jsonl") ref_dir=$(gpu_or_cpu "$w/cuda" "$w/cpu")
  on_device elmo-rerun "$bin/pretrain" "${e[@]}" --steps 12 --device cuda --log "$w/rerun.jsonl" --out "$w/rerun"
  compared && check "$(labelled "ELMo --device cuda: a rerun is bit-identical (losses, softmax, Adagrad, LSTM state)")" \
    elmo_same "$ref" "$(gpu_or_cpu "$w/rerun.jsonl" "$ref")" "$ref_dir" "$(gpu_or_cpu "$w/rerun" "$ref_dir")"
  on_device elmo-first "$bin/pretrain" "${e[@]}" --steps 6 --device cuda --log "$w/first.jsonl" --out "$w/first" &&
    on_device elmo-resume "$bin/pretrain" --architecture elmo --data "$w/words.h5" --resume "$w/first" --steps 12 \
      --eval-every 6 --threads "$threads" --quiet --device cuda --log "$w/first.jsonl" --out "$w/resumed"
  compared && check "$(labelled "ELMo --device cuda: 6 steps + --resume 6 = 12 steps, bit-identical")" \
    elmo_same "$ref" "$(gpu_or_cpu "$w/first.jsonl" "$ref")" "$ref_dir" "$(gpu_or_cpu "$w/resumed" "$ref_dir")"
  # ELMo at Adagrad's learning rate 0.2 is chaotic at this size (fp32's own loss jumps to 10.4 at step
  # 7): a half-precision run's trajectory parts from fp32's after a few steps while what it learns
  # does not (bf16 on the CPU: a spike at step 12, 8.60 against 6.97, held-out loss 7.46 against
  # 7.62). So: the first 6 steps, and the held-out losses at steps 6 and 12.
  for precision in bf16 fp16; do
    on_device "elmo-$precision" "$bin/pretrain" "${e[@]}" --steps 12 --device cuda --precision $precision \
      --log "$w/$precision.jsonl" --out "$w/$precision"
    compared && check "$(labelled "ELMo --precision $precision: 6 steps and the held-out losses within 5e-2 of fp32's")" \
      $py "$src/tests/cli/losses_match.py" "$ref" "$(gpu_or_cpu "$w/$precision.jsonl" "$ref")" 12 5e-2 --first 6 \
      --held-out
  done
  awk 'NF > 3' "$text" | sed -n 1,50p > "$w/sentences.txt"
  cpu elmo-embed "$bin/pretrain" embed --model "$w/cpu" -q -o "$w/vectors-cpu.hdf5" "$w/sentences.txt" &&
    on_device elmo-embed-cuda "$bin/pretrain" embed --model "$w/cpu" -q --device cuda -o "$w/vectors-cuda.hdf5" \
      "$w/sentences.txt" && ok "$(labelled "pretrain embed --model ELMO_DIR --device cuda: 50 sentences' vectors")"
}

# The same training steps and ELMo state (softmax, accumulators, carried LSTM state) byte for byte.
elmo_same() {
  $py "$src/tests/cli/compare_runs.py" --train-lines "$1" "$2" && cmp "$3/elmo_state.safetensors" "$4/elmo_state.safetensors"
}

# A T5 SentencePiece model as verbalize needs it (pad 0, </s> 1, <unk> 2), by the kit's spm_train.
train_spm() {
  spm_train --input="$1" --model_prefix="$2" --vocab_size=400 --hard_vocab_limit=false --pad_id=0 --eos_id=1 \
    --unk_id=2 --bos_id=-1 --character_coverage=1.0
}

verbalize_group() {
  local w=$WORK q=(--quiet) d=$src/data
  cpu kg "$bin/wd-extract" "$d/wikidata-sample.json" -o "$w/kg.h5" --langs all "${q[@]}" &&
    cpu docs "$bin/wiki-extract" "$d/enwiki-sample.xml" -o "$w/docs.jsonl" --redirects "$w/redirects.tsv" "${q[@]}" &&
    cpu cooc "$bin/kg-align" --kg "$w/kg.h5" --redirects "$w/redirects.tsv" --cooc "$w/cooc.tsv" -o "$w/aligned.jsonl" \
      "${q[@]}" "$w/docs.jsonl" &&
    cpu subgraphs "$bin/verbalize" subgraphs --kg "$w/kg.h5" --cooc "$w/cooc.tsv" -o "$w/subgraphs.jsonl" "${q[@]}" &&
    cpu pairs "$bin/verbalize" render --kg "$w/kg.h5" --mode pairs --templates "$d/templates" --langs en \
      -o "$w/pairs.jsonl" "${q[@]}" "$w/subgraphs.jsonl" || return
  $py -c "import json, sys
with open(sys.argv[2], 'w') as out:
    for r in map(json.loads, open(sys.argv[1])):
        out.write(r['serialized_triples'] + '\n' + r['sentence'] + '\n')" "$w/pairs.jsonl" "$w/spm.txt"
  cpu spm train_spm "$w/spm.txt" "$w/spm" || return
  local vocab
  vocab=$(wc -l < "$w/spm.vocab")
  cat > "$w/config.json" <<JSON
{"model_type": "t5", "vocab_size": $vocab, "d_model": 32, "d_kv": 8, "d_ff": 64, "num_layers": 2,
 "num_decoder_layers": 2, "num_heads": 4, "relative_attention_num_buckets": 16, "relative_attention_max_distance": 64,
 "dropout_rate": 0.1, "feed_forward_proj": "gated-gelu", "tie_word_embeddings": false}
JSON
  local t=(--config "$w/config.json" --tokenizer "$w/spm.model" --batch 16 --lr 3e-3 --threads "$threads" --seed 3 "${q[@]}")
  cpu t5 "$bin/verbalize" train "${t[@]}" --steps 20 --out "$w/cpu" --log "$w/cpu.log" "$w/pairs.jsonl" || return
  on_device t5-cuda "$bin/verbalize" train "${t[@]}" --steps 20 --device cuda --out "$w/cuda" --log "$w/cuda.log" \
    "$w/pairs.jsonl"
  compared && check "$(labelled "verbalize train --device cuda: 20 T5 steps (dropout on) within 1e-3 of the CPU's losses")" \
    $py "$src/tests/cli/losses_match.py" "$w/cpu.log" "$(gpu_or_cpu "$w/cuda.log" "$w/cpu.log")" 20 1e-3
  local g=(--model "$w/cpu" --threads "$threads" --max-len 24 "${q[@]}")
  for how in greedy beam4; do
    local extra=(); [ $how = beam4 ] && extra=(--beams 4)
    cpu "gen-$how" "$bin/verbalize" generate "${g[@]}" "${extra[@]}" -o "$w/$how.jsonl" "$w/subgraphs.jsonl" || continue
    on_device "gen-$how-cuda" "$bin/verbalize" generate "${g[@]}" "${extra[@]}" --device cuda -o "$w/$how-cuda.jsonl" \
      "$w/subgraphs.jsonl"
    compared && check "$(labelled "verbalize generate --device cuda, $how: the CPU's sentences")" \
      $py "$src/tests/cli/same_records.py" "$w/$how.jsonl" "$(gpu_or_cpu "$w/$how-cuda.jsonl" "$w/$how.jsonl")" \
        gen_sentence 0.9
  done
}

# Shared by the groups: the token dataset, and the CPU's 12-step run that pretrain's GPU runs are
# compared with and probe probes.
data=$WORK/data.h5 reference=$WORK/cpu
cpu prepare "$bin/pretrain" prepare --tokenizer "$spm" --max-len 48 -o "$data" --quiet "en=$text" &&
  cpu pretrain "$bin/pretrain" --data "$data" "${model[@]}" --steps 12 --log "$reference.jsonl" --out "$reference" ||
  exit 0  # the FAIL line is out; the groups have nothing to start from
groups=(pretrain elmo mpi finetune frozen probe verbalize)
for g in "${groups[@]}"; do
  ( WORK=$WORK/$g; mkdir -p "$WORK"; "${g}_group" > "$WORK.lines" 2>&1 ) &
done
wait
for g in "${groups[@]}"; do sed "s/^\(ok\|FAIL\|skip\): /\1: [$g] /" "$WORK/$g.lines"; done
