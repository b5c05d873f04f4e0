# The training stages the pipelines share: a token dataset of their corpora, then pre-training that
# checkpoints, requeues itself under Slurm and resumes; fine-tuning that does the same. A pipeline.sh
# module: call train_options before pipeline_start.
source "$here/pipelines/lib/tokenizer.sh"

train_options() {
  pipeline_option tokenizer KGLM_TOKENIZER "" \
    "tokenizer (HF directory, .model or vocab.txt); none: a SentencePiece model trained on the corpora"
  pipeline_option vocab KGLM_VOCAB 8000 "vocabulary of the SentencePiece model trained when --tokenizer is none"
  pipeline_option max-len KGLM_MAX_LEN 128 "tokens per sequence (pretrain prepare --max-len)"
  pipeline_option init KGLM_INIT "" "Hugging Face model to continue pre-training (none: a new model)"
  pipeline_option model KGLM_MODEL "4 256 4 1024" "layers, hidden size, heads, FFN size of a new model"
  pipeline_option steps KGLM_STEPS 10000 "optimizer steps"
  pipeline_option save-every KGLM_SAVE_EVERY 500 "checkpoint every N steps (a requeued job resumes from the last)"
  pipeline_option pretrain-args KGLM_PRETRAIN_ARGS "--batch 32 --lr 1e-4 --warmup 500" "more pretrain options"
}

# train_tokens_tokenizer CORPUS...: TRAIN_DIR/spm.model, a SentencePiece model of the corpora, when
# no tokenizer is given: a stage of its own before a tokens array, whose tasks share it.
train_tokens_tokenizer() {
  local out=${TRAIN_DIR:-$RUN}
  mkdir -p "$out"
  echo "== tokenizer: SentencePiece, $KGLM_VOCAB pieces, trained on $* -> $out/spm.model"
  train_tokenizer "$out/spm" "$KGLM_VOCAB" "$@"
}

# train_tokens_part CORPUS...: array task TASK of TASKS: the records in its byte share of the corpora
# (pretrain prepare --shard; a compressed file whole in one part) -> TRAIN_DIR/tokens-part-NNNN.h5.
# train_pretrain reads the TOKENS_PARTS parts as the one dataset.
train_tokens_part() {
  local out=${TRAIN_DIR:-$RUN} tokenizer=${KGLM_TOKENIZER:-${TRAIN_DIR:-$RUN}/spm.model}
  mkdir -p "$out"
  echo "== pretrain prepare --shard $TASK/$TASKS: $* -> $out/tokens-part-$task_id.h5"
  "$bin/pretrain" prepare --tokenizer "$tokenizer" --max-len "$KGLM_MAX_LEN" --shard "$TASK/$TASKS" \
    --threads "${SLURM_CPUS_PER_TASK:-$(nproc)}" -o "$out/tokens-part-$task_id.h5" \
    --stats "$out/tokens-part-$task_id.stats.json" --quiet "$@"
}

# The token dataset train_pretrain reads: the TOKENS_PARTS parts of train_tokens_part, listed (not a
# glob: a part left by an earlier run with more tasks stays out).
tokens_data() {
  local out=${TRAIN_DIR:-$RUN} list="" i
  for ((i = 0; i < ${TOKENS_PARTS:?the number of token dataset parts}; i++)); do
    list+="${list:+,}$(printf '%s/tokens-part-%04d.h5' "$out" "$i")"
  done
  echo "$list"
}

# train_pretrain [PRETRAIN_OPTION...]: trains TRAIN_DIR/ckpt from tokens_data; continues the
# checkpoint that this stage left when it was stopped or requeued (--resume keeps the original
# settings), and starts over from anything else.
train_pretrain() {
  local start=() model=() extra=() out=${TRAIN_DIR:-$RUN}
  read -r -a model <<< "$KGLM_MODEL"
  read -r -a extra <<< "$KGLM_PRETRAIN_ARGS"
  if [[ ${STAGE_CONTINUES:-0} == 1 && -f "$out/ckpt/trainer_state.json" ]]; then
    start=(--resume "$out/ckpt")
    echo "== pretrain: resuming $out/ckpt at step $(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["step"])' \
      "$out/ckpt/trainer_state.json")"
  else
    rm -rf "$out/ckpt" "$out/metrics.jsonl" "$(tensorboard_dir)" # another run's: its data or settings differ
    start=(--layers "${model[0]}" --hidden "${model[1]}" --heads "${model[2]}" --ffn "${model[3]}")
    [[ -n "$KGLM_INIT" ]] && start=(--init "$KGLM_INIT")
    echo "== pretrain: $KGLM_STEPS steps -> $out/ckpt"
  fi
  checkpointing "$bin/pretrain" --data "$(tokens_data)" "${start[@]}" --steps "$KGLM_STEPS" \
    --save-every "$KGLM_SAVE_EVERY" --threads "${SLURM_CPUS_PER_TASK:-$(nproc)}" --log "$out/metrics.jsonl" \
    --tensorboard "$(tensorboard_dir)" --out "$out/ckpt" --stats "$out/pretrain.stats.json" --quiet "${extra[@]}" "$@"
}

# train_finetune DIR FINETUNE_OPTION...: `finetune -o DIR` that hands on SIGUSR1 (checkpoint, exit 75),
# its TensorBoard runs in $(tensorboard_dir DIR's name)/seed-S.
# When the stage continues after a stop or requeue, a DIR with its results is kept and a DIR without
# them is resumed (--resume); otherwise DIR is started over.
train_finetune() {
  local dir=$1 tb
  shift
  tb=$(tensorboard_dir "$(basename "$dir")")
  if [[ ${STAGE_CONTINUES:-0} == 1 && -f "$dir/results.json" ]]; then
    return 0
  elif [[ ${STAGE_CONTINUES:-0} == 1 && -d "$dir" ]]; then
    echo "   resuming $dir"
    checkpointing "$bin/finetune" "$@" -o "$dir" --tensorboard "$tb" --resume
  else
    rm -rf "$dir" "$tb"
    checkpointing "$bin/finetune" "$@" -o "$dir" --tensorboard "$tb"
  fi
}

# ELMo (pipelines/melmo.sh): call elmo_options before pipeline_start.
elmo_options() {
  pipeline_option elmo-options KGLM_ELMO_OPTIONS "$here/data/elmo/options-small.json" \
    "ELMo's options.json (data/elmo/options-paper.json: the paper's model)"
  pipeline_option words KGLM_WORDS icu "word segmentation: icu, or whitespace for pre-tokenised text (UDPipe's)"
  pipeline_option max-len KGLM_MAX_LEN 400 "words per sequence (pretrain prepare --max-len; longer lines are split)"
  pipeline_option steps KGLM_STEPS 10000 "optimizer steps"
  pipeline_option save-every KGLM_SAVE_EVERY 500 "checkpoint every N steps (a requeued job resumes from the last)"
  pipeline_option pretrain-args KGLM_PRETRAIN_ARGS "" "more pretrain options (--batch, --precision, ...)"
}

# elmo_words CORPUS...: TRAIN_DIR/vocab.txt (every word of the corpora, by frequency: the options'
# n_tokens_vocab most frequent are the softmax's, the others are read through their characters)
# and the word dataset TRAIN_DIR/tokens.h5.
elmo_words() {
  local out=${TRAIN_DIR:-$RUN} split=()
  [[ $KGLM_WORDS == whitespace ]] && split=(--whitespace)
  [[ $KGLM_WORDS == icu || $KGLM_WORDS == whitespace ]] || pipeline_fail 2 "--words must be icu or whitespace"
  mkdir -p "$out"
  echo "== pretrain vocab + prepare --words: $* -> $out/vocab.txt, $out/tokens.h5"
  "$bin/pretrain" vocab "${split[@]}" -o "$out/vocab.txt" --counts "$out/vocab-counts.tsv" --quiet "$@"
  "$bin/pretrain" prepare --words "${split[@]}" --vocab "$out/vocab.txt" --max-len "$KGLM_MAX_LEN" \
    --threads "${SLURM_CPUS_PER_TASK:-$(nproc)}" -o "$out/tokens.h5" --stats "$out/prepare.stats.json" --quiet "$@"
}

# elmo_pretrain: trains TRAIN_DIR/ckpt (AllenNLP's options.json + weights.hdf5 + vocab.txt) from
# TRAIN_DIR/tokens.h5, resuming this stage's own checkpoint after a stop or requeue.
elmo_pretrain() {
  local start=() extra=() out=${TRAIN_DIR:-$RUN}
  read -r -a extra <<< "$KGLM_PRETRAIN_ARGS"
  if [[ ${STAGE_CONTINUES:-0} == 1 && -f "$out/ckpt/trainer_state.json" ]]; then
    start=(--resume "$out/ckpt")
    echo "== pretrain --architecture elmo: resuming $out/ckpt"
  else
    rm -rf "$out/ckpt" "$out/metrics.jsonl" "$(tensorboard_dir)"
    start=(--options "$KGLM_ELMO_OPTIONS")
    echo "== pretrain --architecture elmo: $KGLM_STEPS steps ($KGLM_ELMO_OPTIONS) -> $out/ckpt"
  fi
  checkpointing "$bin/pretrain" --architecture elmo --data "$out/tokens.h5" "${start[@]}" --steps "$KGLM_STEPS" \
    --save-every "$KGLM_SAVE_EVERY" --threads "${SLURM_CPUS_PER_TASK:-$(nproc)}" --log "$out/metrics.jsonl" \
    --tensorboard "$(tensorboard_dir)" --out "$out/ckpt" --stats "$out/pretrain.stats.json" --quiet "${extra[@]}" "$@"
}
