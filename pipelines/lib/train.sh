# The training stages the paper pipelines share: a token dataset of their corpora, then pre-training
# that checkpoints, requeues itself under Slurm and resumes. Sourced after pipeline.sh; call
# train_options before pipeline_start.
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

# stage_tokens OBJECTIVE_ARGS -- CORPUS...: RUN/tokens.h5 (+ RUN/spm.model when no tokenizer is given).
stage_tokens() {
  local tokenizer=$KGLM_TOKENIZER
  if [[ -z "$tokenizer" ]]; then
    echo "== tokenizer: SentencePiece, $KGLM_VOCAB pieces, trained on $* -> $RUN/spm.model"
    train_tokenizer "$RUN/spm" "$KGLM_VOCAB" "$@"
    tokenizer=$RUN/spm.model
  fi
  echo "== pretrain prepare: $* -> $RUN/tokens.h5"
  "$bin/pretrain" prepare --tokenizer "$tokenizer" --max-len "$KGLM_MAX_LEN" --threads "${SLURM_CPUS_PER_TASK:-$(nproc)}" \
    -o "$RUN/tokens.h5" --stats "$RUN/prepare.stats.json" --quiet "$@"
}

# stage_pretrain [PRETRAIN_OPTION...]: trains RUN/ckpt from RUN/tokens.h5; continues the checkpoint a
# stopped or requeued run left (--resume keeps the original settings).
stage_pretrain() {
  local start=() model
  if [[ -f "$RUN/ckpt/trainer_state.json" ]]; then
    start=(--resume "$RUN/ckpt")
    echo "== pretrain: resuming $RUN/ckpt at step $(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["step"])' \
      "$RUN/ckpt/trainer_state.json")"
  elif [[ -n "$KGLM_INIT" ]]; then
    start=(--init "$KGLM_INIT")
  else
    read -r -a model <<< "$KGLM_MODEL"
    start=(--layers "${model[0]}" --hidden "${model[1]}" --heads "${model[2]}" --ffn "${model[3]}")
  fi
  [[ ${#start[@]} == 2 && ${start[0]} == --resume ]] || echo "== pretrain: $KGLM_STEPS steps -> $RUN/ckpt"
  local extra=()
  read -r -a extra <<< "$KGLM_PRETRAIN_ARGS"
  checkpointing "$bin/pretrain" --data "$RUN/tokens.h5" "${start[@]}" --steps "$KGLM_STEPS" \
    --save-every "$KGLM_SAVE_EVERY" --threads "${SLURM_CPUS_PER_TASK:-$(nproc)}" --log "$RUN/metrics.jsonl" \
    --out "$RUN/ckpt" --stats "$RUN/pretrain.stats.json" --quiet "${extra[@]}" "$@"
}
