#!/usr/bin/env bash
# --tensorboard checked with TensorBoard itself (its EventAccumulator, from the references
# environment): every event file pretrain, finetune and verbalize train write holds the same tags,
# steps and values as the metrics log (float32 equality, tensorboard_match.py), also across a
# SIGUSR1 stop and --resume, and a resume from an earlier checkpoint (TensorBoard drops the steps the
# new file starts again, as the log does); /dev/null and a FIFO work.
# Usage: tensorboard.sh BIN_DIR FIXTURES_DIR SOURCE_DIR
set -euo pipefail
bin=$1 fx=$2 src=$3
spm=$fx/tokenizer/spm-test-vocab1000.model
source "$src/tests/cli/common.sh" "$spm"
py=$bin/../references-venv/bin/python
if ! [ -x "$py" ] || ! "$py" -c "import tensorboard" 2> /dev/null; then
  echo "no TensorBoard in the references environment (make references): skipped"
  exit 77
fi
match() { "$py" "$src/tests/cli/tensorboard_match.py" "$@" || fail "TensorBoard and the metrics log differ: $*"; }

"$bin/pretrain" prepare --tokenizer "$spm" --max-len 48 -o "$tmp/data.h5" --quiet "en=$fx/tokenizer/botchan.txt"
model=(--data "$tmp/data.h5" --layers 2 --hidden 32 --heads 4 --ffn 64 --batch 8 --lr 3e-3 --warmup 4 --threads 2
  --seed 7 --eval-fraction 0.1 --eval-every 4 --quiet)

# 1. A run: every number of every line (losses per objective, lr, grad norm, tokens/s, held-out).
"$bin/pretrain" "${model[@]}" --steps 12 --log "$tmp/full.jsonl" --tensorboard "$tmp/tb-full" --out "$tmp/full"
[ "$(ls "$tmp/tb-full" | grep -c '^events\.out\.tfevents\.[0-9]*\..*\.[0-9]*$')" = 1 ] || fail "event file: $(ls "$tmp/tb-full")"
match "$tmp/tb-full" "$tmp/full.jsonl"
ok "pretrain: the event file holds the metrics log"

# 2. Stopped by SIGUSR1 (a checkpoint at that step, exit 75), resumed into the same log and directory.
"$bin/pretrain" "${model[@]}" --steps 100000 --log "$tmp/usr1.jsonl" --tensorboard "$tmp/tb-usr1" --out "$tmp/usr1" &
job=$!
for _ in $(seq 600); do [ -s "$tmp/usr1.jsonl" ] && [ "$(wc -l < "$tmp/usr1.jsonl")" -ge 6 ] && break; sleep 0.05; done
kill -USR1 $job
code=0; wait $job || code=$?
[ $code = 75 ] || fail "SIGUSR1: exit $code"
step=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['step'])" "$tmp/usr1/trainer_state.json")
"$bin/pretrain" --data "$tmp/data.h5" --resume "$tmp/usr1" --steps $((step + 6)) --threads 2 --quiet \
  --log "$tmp/usr1.jsonl" --tensorboard "$tmp/tb-usr1" --out "$tmp/usr1-more"
[ "$(ls "$tmp/tb-usr1" | wc -l)" = 2 ] || fail "a resumed run did not add an event file: $(ls "$tmp/tb-usr1")"
match "$tmp/tb-usr1" "$tmp/usr1.jsonl"
ok "SIGUSR1 at step $step and --resume: two event files, the curves continue"

# 3. Resumed twice from the step-6 checkpoint: the second resume repeats steps 7..12, which the log
# drops and TensorBoard purges (the new file starts with a restart at step 7): no step twice.
"$bin/pretrain" "${model[@]}" --steps 6 --decay-steps 12 --log "$tmp/past.jsonl" --tensorboard "$tmp/tb-past" \
  --out "$tmp/first"
for again in 1 2; do
  "$bin/pretrain" --data "$tmp/data.h5" --resume "$tmp/first" --steps 12 --threads 2 --quiet --log "$tmp/past.jsonl" \
    --tensorboard "$tmp/tb-past" --out "$tmp/resumed-$again"
done
match "$tmp/tb-past" "$tmp/past.jsonl"
match "$tmp/tb-past" "$tmp/full.jsonl" --values-of loss
ok "a resume from an earlier checkpoint: the repeated steps once, as in the uninterrupted run"

# 4. finetune: one TensorBoard run per seed (DIR/seed-S) with the dev scores.
awk -v RS= -v ORS='\n\n' 'NR <= 120' "$fx/panx/dev-en.tsv" > "$tmp/train.panx"
awk -v RS= -v ORS='\n\n' 'NR > 120 && NR <= 160' "$fx/panx/dev-en.tsv" > "$tmp/dev.panx"
"$bin/finetune" --task token --init "$tmp/full" --train "en=$tmp/train.panx" --dev "en=$tmp/dev.panx" --epochs 2 \
  --batch 16 --eval-every 5 --seeds 5,6 --threads 2 --quiet -o "$tmp/ner" --tensorboard "$tmp/tb-ner"
for seed in 5 6; do match "$tmp/tb-ner/seed-$seed" "$tmp/ner/seed-$seed/metrics.jsonl"; done
grep -q dev_f1 "$tmp/ner/seed-5/metrics.jsonl" || fail "no dev scores in the finetune log"
ok "finetune: a run per seed, with its dev scores"

# 5. verbalize train on pairs of the fixtures' text (source: a line, target: its words reversed),
# with a T5 SentencePiece model trained on them (<pad> 0, </s> 1, <unk> 2, as T5's).
python3 - "$fx/tokenizer/botchan.txt" "$tmp/pairs.jsonl" "$tmp/t5-spm.txt" <<'PY'
import json, sys
lines = [l.strip() for l in open(sys.argv[1], encoding="utf-8") if 3 < len(l.split()) < 14][:300]
with open(sys.argv[2], "w", encoding="utf-8") as out, open(sys.argv[3], "w", encoding="utf-8") as text:
    for l in lines:
        out.write(json.dumps({"serialized_triples": l, "sentence": " ".join(reversed(l.split()))}) + "\n")
        text.write(l + "\n")
PY
spm_train --input="$tmp/t5-spm.txt" --model_prefix="$tmp/t5-spm" --vocab_size=400 --hard_vocab_limit=false --pad_id=0 \
  --eos_id=1 --unk_id=2 --bos_id=-1 --character_coverage=1.0 > "$tmp/spm.log" 2>&1 || fail "spm_train: $(tail -3 "$tmp/spm.log")"
cat > "$tmp/t5.json" <<JSON
{"model_type": "t5", "vocab_size": $(wc -l < "$tmp/t5-spm.vocab"), "d_model": 32, "d_kv": 8, "d_ff": 64, "num_layers": 1,
 "num_decoder_layers": 1, "num_heads": 4, "relative_attention_num_buckets": 16, "relative_attention_max_distance": 64,
 "dropout_rate": 0.1, "feed_forward_proj": "gated-gelu", "tie_word_embeddings": false}
JSON
t5=(--config "$tmp/t5.json" --tokenizer "$tmp/t5-spm.model" --batch 16 --lr 3e-3 --threads 2 --seed 3 --eval-every 5
  --eval-fraction 0.1 --quiet)
code=0
"$bin/verbalize" train "${t5[@]}" --steps 16 --stop-after 8 --out "$tmp/t5" --log "$tmp/t5.jsonl" \
  --tensorboard "$tmp/tb-t5" "$tmp/pairs.jsonl" || code=$?
[ $code = 75 ] || fail "verbalize train --stop-after: exit $code"
"$bin/verbalize" train "${t5[@]}" --steps 16 --resume "$tmp/t5" --out "$tmp/t5" --log "$tmp/t5.jsonl" \
  --tensorboard "$tmp/tb-t5" "$tmp/pairs.jsonl"
match "$tmp/tb-t5" "$tmp/t5.jsonl"
ok "verbalize train: stopped, resumed, one curve"

# 6. Special outputs: /dev/null, and a FIFO whose reader gets a readable event stream.
"$bin/pretrain" "${model[@]}" --steps 4 --tensorboard /dev/null --out "$tmp/null"
mkfifo "$tmp/fifo"
mkdir "$tmp/tb-fifo"
cat "$tmp/fifo" > "$tmp/tb-fifo/events.out.tfevents.0.fifo" &
reader=$!
"$bin/pretrain" "${model[@]}" --steps 4 --log "$tmp/fifo.jsonl" --tensorboard "$tmp/fifo" --out "$tmp/via-fifo"
wait $reader
[ -p "$tmp/fifo" ] || fail "the FIFO was replaced"
match "$tmp/tb-fifo" "$tmp/fifo.jsonl"
ok "--tensorboard /dev/null and a FIFO"
echo "tensorboard: $pass checks passed"
