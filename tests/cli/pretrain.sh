#!/usr/bin/env bash
# pretrain on real text (botchan.txt with the fixture SentencePiece model): prepare, train with
# dropout, checkpoint layout, bit-identical resume (2N steps = N + resume + N), init from a
# checkpoint, BERT architecture, and bad input.
set -euo pipefail
bin=$1 fixtures=$2 src=$3
spm=$fixtures/tokenizer/spm-test-vocab1000.model
text=$fixtures/tokenizer/botchan.txt
source "$src/tests/cli/common.sh" "$spm"

"$bin/pretrain" prepare --tokenizer "$spm" --max-len 48 -o "$tmp/data.h5" --quiet --stats "$tmp/prep.json" "en=$text"
python3 - "$tmp/prep.json" "$text" <<'PY' || fail "prepare statistics"
import json, sys
s = json.load(open(sys.argv[1]))
lines = sum(1 for l in open(sys.argv[2], encoding="utf-8") if l.strip())
assert s["sequences"] >= lines, (s, lines)
PY
ok "prepare: botchan tokenized"

model=(--layers 2 --hidden 32 --heads 4 --ffn 64 --batch 4 --accumulate 2 --lr 3e-3 --warmup 4 --threads 2 --seed 7 --quiet)
"$bin/pretrain" --data "$tmp/data.h5" "${model[@]}" --steps 12 --log "$tmp/full.jsonl" --out "$tmp/full"
# A run stopped at step 6 (its checkpoint) and resumed must reproduce the full run exactly.
"$bin/pretrain" --data "$tmp/data.h5" "${model[@]}" --steps 6 --decay-steps 12 --log "$tmp/first.jsonl" --out "$tmp/first"
"$bin/pretrain" --data "$tmp/data.h5" --resume "$tmp/first" --threads 2 --quiet --steps 12 --log "$tmp/first.jsonl" \
  --out "$tmp/resumed"
python3 - "$tmp/full.jsonl" "$tmp/first.jsonl" <<'PY' || fail "resumed losses differ"
import json, sys
def losses(p):
    return [(r["step"], r["loss"], r["grad_norm"]) for r in map(json.loads, open(p)) if "loss" in r]
a, b = losses(sys.argv[1]), losses(sys.argv[2])
assert len(a) == 12 and a == b, (a, b)
PY
# A log that went on past the checkpoint (here: all 12 steps) is cut back to its step on resume,
# so no step appears twice.
cp "$tmp/full.jsonl" "$tmp/past.jsonl"
"$bin/pretrain" --data "$tmp/data.h5" --resume "$tmp/first" --threads 2 --quiet --steps 12 --log "$tmp/past.jsonl" \
  --out "$tmp/resumed-past"
python3 - "$tmp/full.jsonl" "$tmp/past.jsonl" <<'PY' || fail "the metrics log repeats steps after a resume"
import json, sys
def losses(p):
    return [(r["step"], r["loss"]) for r in map(json.loads, open(p)) if "loss" in r]
assert losses(sys.argv[1]) == losses(sys.argv[2]), (losses(sys.argv[1]), losses(sys.argv[2]))
PY
cmp "$tmp/full/model.safetensors" "$tmp/resumed/model.safetensors" || fail "resumed weights differ"
cmp "$tmp/full/optimizer.safetensors" "$tmp/resumed/optimizer.safetensors" || fail "resumed optimizer state differs"
ok "resume: 6 + 6 steps = 12 steps, bit-identical losses, weights and AdamW moments"

# --device cuda: without a GPU, exit 1 with one line that says why and no checkpoint; with one, the
# same 12 steps as the CPU run within 1e-4 (ctest's TrainerOnCuda checks bit-identical reruns).
code=0; "$bin/pretrain" --data "$tmp/data.h5" "${model[@]}" --steps 12 --device cuda --log "$tmp/gpu.jsonl" \
  --out "$tmp/gpu" 2> "$tmp/err" || code=$?
if [ $code -eq 1 ]; then
  [ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -q -- "--device cuda: " "$tmp/err" || fail "no GPU: $(cat "$tmp/err")"
  [ ! -e "$tmp/gpu" ] || fail "a run without its GPU wrote a checkpoint"
  ok "--device cuda without a GPU: exit 1, '$(cat "$tmp/err")'"
else
  [ $code -eq 0 ] || fail "--device cuda: exit $code"
  python3 "$src/tests/cli/losses_match.py" "$tmp/full.jsonl" "$tmp/gpu.jsonl" 12 1e-4 ||
    fail "GPU losses differ from the CPU's"
  ok "--device cuda: 12 steps within 1e-4 of the CPU's losses"
fi
code=0; "$bin/pretrain" --data "$tmp/data.h5" --device gpu --out "$tmp/x" 2> /dev/null || code=$?
[ $code -eq 2 ] || fail "--device gpu: exit $code, expected 2"

# --save-dtype bf16: half the bytes, BF16 tensors that HF loads (and --init reads back), F32 moments.
"$bin/pretrain" --data "$tmp/data.h5" "${model[@]}" --steps 2 --save-dtype bf16 --out "$tmp/bf16"
python3 - "$tmp/bf16" <<'PY' || fail "--save-dtype bf16"
import json, struct, sys
def header(p):
    with open(p, "rb") as f:
        return json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
m, o = header(sys.argv[1] + "/model.safetensors"), header(sys.argv[1] + "/optimizer.safetensors")
assert all(v["dtype"] == "BF16" for k, v in m.items() if k != "__metadata__"), m
assert all(v["dtype"] == "F32" for k, v in o.items() if k != "__metadata__"), o
PY
"$bin/pretrain" --data "$tmp/data.h5" --init "$tmp/bf16" --steps 1 --threads 2 --quiet --out "$tmp/from-bf16"
ok "--save-dtype bf16: BF16 weights, F32 optimizer state, usable by --init"

# The checkpoint is a Hugging Face directory: names, shapes, tied decoder not stored, tokenizer files.
python3 - "$tmp/full" <<'PY' || fail "checkpoint layout"
import json, os, struct, sys
d = sys.argv[1]
cfg = json.load(open(os.path.join(d, "config.json")))
assert cfg["model_type"] == "xlm-roberta" and cfg["vocab_size"] == 1002 and cfg["hidden_size"] == 32, cfg
with open(os.path.join(d, "model.safetensors"), "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
assert header["roberta.encoder.layer.1.attention.self.query.weight"]["shape"] == [32, 32]
assert header["roberta.embeddings.word_embeddings.weight"]["shape"] == [1002, 32]
assert header["roberta.embeddings.position_embeddings.weight"]["shape"] == [50, 32]
assert header["lm_head.bias"]["shape"] == [1002]
assert "lm_head.decoder.weight" not in header
assert all(v["dtype"] == "F32" for k, v in header.items() if k != "__metadata__")
for f in ("sentencepiece.bpe.model", "tokenizer_config.json", "trainer_state.json", "optimizer.safetensors"):
    assert os.path.exists(os.path.join(d, f)), f
state = json.load(open(os.path.join(d, "trainer_state.json")))
assert state["step"] == 12 and state["seed"] == 7, state
PY
ok "checkpoint: Hugging Face layout"

# It learns: 60 steps bring the held-out perplexity well below the vocabulary's 1002.
"$bin/pretrain" --data "$tmp/data.h5" "${model[@]}" --steps 60 --eval-every 20 --log "$tmp/learn.jsonl" --out "$tmp/learn" \
  --drawn "$tmp/learn.drawn.tsv"
python3 - "$tmp/learn.jsonl" <<'PY' || fail "no learning"
import json, sys
ev = [r for r in map(json.loads, open(sys.argv[1])) if "eval_ppl" in r]
assert [e["step"] for e in ev] == [20, 40, 60], ev
assert ev[-1]["eval_ppl"] < 500 and ev[-1]["eval_ppl"] < ev[0]["eval_ppl"], ev
PY
ok "learning: held-out perplexity falls"

# --drawn: every draw of the 60 steps of 4 x 2 sequences, held-out sequences never, the others in
# epochs of a permutation (each E or E + 1 times); each row's record as the dataset states it.
/usr/bin/python3 - "$tmp/learn.drawn.tsv" "$tmp/data.h5" <<'PY' || fail "--drawn"
import csv, sys, h5py
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
seq = h5py.File(sys.argv[2])["sequences"]
assert [int(r["sequence"]) for r in rows] == list(range(len(seq["kind"]))), len(rows)
assert [int(r["source_line"]) for r in rows] == list(seq["source_line"][()]), "source_line"
assert [int(r["input"]) for r in rows] == list(seq["input"][()]), "input"
draws = [int(r["draws"]) for r in rows if r["held_out"] == "0"]
assert sum(draws) == 60 * 4 * 2, sum(draws)
assert all(int(r["draws"]) == 0 for r in rows if r["held_out"] == "1") and len(draws) < len(rows), "held out drawn"
epochs = 480 // len(draws)
assert set(draws) <= {epochs, epochs + 1}, sorted(set(draws))
PY
code=0 && "$bin/pretrain" --data "$tmp/data.h5" --resume "$tmp/learn" --steps 61 --drawn "$tmp/x.tsv" --out "$tmp/x" \
  2> "$tmp/drawn.err" || code=$?
[ "$code" = 2 ] && grep -q "not with --resume" "$tmp/drawn.err" || fail "--drawn with --resume: exit $code"
ok "--drawn: every draw counted, held-out sequences never drawn, refused with --resume"

# --init from a checkpoint, and the BERT architecture.
"$bin/pretrain" --data "$tmp/data.h5" --init "$tmp/learn" --steps 2 --threads 2 --quiet --out "$tmp/init"
"$bin/pretrain" --data "$tmp/data.h5" --architecture bert "${model[@]}" --steps 2 --out "$tmp/bert"
grep -q '"model_type": "bert"' "$tmp/bert/config.json" || fail "bert config"
ok "init from a checkpoint; BERT"

# Bad input: clear errors, exit 1 or 2, no checkpoint left half-written.
code=0; "$bin/pretrain" --data "$tmp/missing.h5" --out "$tmp/x" 2> "$tmp/err" || code=$?
[ $code -eq 1 ] && grep -q missing.h5 "$tmp/err" || fail "missing dataset: exit $code"
code=0; "$bin/pretrain" --data "$tmp/data.h5" --out "$tmp/x" --bogus 2> /dev/null || code=$?
[ $code -eq 2 ] || fail "unknown option: exit $code"
code=0; "$bin/pretrain" --data "$tmp/data.h5" --resume "$tmp/first" --batch 16 --out "$tmp/x" 2> "$tmp/err" || code=$?
[ $code -eq 2 ] && grep -q -- "--batch" "$tmp/err" || fail "resume with another batch: exit $code"
cp -r "$tmp/first" "$tmp/broken"
head -c 1000 "$tmp/first/model.safetensors" > "$tmp/broken/model.safetensors"
code=0; "$bin/pretrain" --data "$tmp/data.h5" --resume "$tmp/broken" --steps 8 --out "$tmp/x" 2> "$tmp/err" || code=$?
[ $code -eq 1 ] && grep -q "model.safetensors" "$tmp/err" || fail "truncated checkpoint: exit $code"
[ ! -e "$tmp/x" ] || fail "a failed run left $tmp/x"
ls "$tmp" | grep -q '\.tmp\.' && fail "temporary directory left"
ok "bad input"

# Paths: a dataset prepared with a relative tokenizer path is usable from anywhere; its tokenizer
# is recorded absolute with a checksum; a missing or different tokenizer is an error.
mkdir -p "$tmp/a" "$tmp/b"
cp "$spm" "$tmp/a/spm.model"
(cd "$tmp/a" && "$bin/pretrain" prepare --tokenizer spm.model --max-len 48 -o data.h5 --quiet "en=$text")
h5dump -a /tokenizer_source "$tmp/a/data.h5" | grep -q "\"$tmp/a/spm.model\"" || fail "tokenizer_source is not absolute"
h5dump -a /tokenizer_checksum "$tmp/a/data.h5" | grep -q 'fnv1a64:' || fail "no tokenizer checksum"
(cd "$tmp/b" && "$bin/pretrain" --data ../a/data.h5 "${model[@]}" --steps 1 --out ckpt)
[ -f "$tmp/b/ckpt/sentencepiece.bpe.model" ] || fail "run from elsewhere: no tokenizer files in the checkpoint"
mv "$tmp/a/spm.model" "$tmp/a/moved.model"
code=0; (cd "$tmp/b" && "$bin/pretrain" --data ../a/data.h5 "${model[@]}" --steps 1 --out ckpt2 2> "$tmp/err") || code=$?
[ $code -eq 1 ] && grep -q "spm.model" "$tmp/err" && grep -q -- "--tokenizer" "$tmp/err" || fail "missing tokenizer: exit $code"
[ ! -e "$tmp/b/ckpt2" ] || fail "a run without its tokenizer wrote a checkpoint"
python3 - "$tmp/vocab.txt" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + ["w%d" % i for i in range(997)]) + "\n")
PY
code=0; "$bin/pretrain" --data "$tmp/a/data.h5" --tokenizer "$tmp/vocab.txt" "${model[@]}" --steps 1 --out "$tmp/x" \
  2> "$tmp/err" || code=$?
[ $code -eq 1 ] && grep -q "not the tokenizer" "$tmp/err" || fail "a different tokenizer was accepted: exit $code"
ok "dataset paths are absolute, the tokenizer is checked by checksum, a missing one is an error"

# Sequence kinds: each generator's records, from real data (the X-FACTR KG, the Wikipedia excerpt),
# get the kind that will choose their objective; counted independently from the records' fields.
source "$src/tests/cli/generated_corpora.sh"
generated_corpora "$tmp" "$bin" "$fixtures"
"$bin/pretrain" prepare --tokenizer "$spm" --max-len 64 -o "$tmp/mixed.h5" --stats "$tmp/mixed.json" -q \
  "$tmp/k-cs.jsonl" "$tmp/k-par.jsonl" "$tmp/reason/en.jsonl" "$tmp/ecs.jsonl" "en=$text"
h5dump -d /sequences/kind -y -w 0 -o "$tmp/kinds.txt" "$tmp/mixed.h5" > /dev/null
h5dump -d /sequences/input -y -w 0 -o "$tmp/inputs.txt" "$tmp/mixed.h5" > /dev/null
python3 - "$tmp" "$text" <<'PY' || fail "sequence kinds"
import json, sys
t = sys.argv[1]
expected = {"kmlm": 0, "kmlm-alias": 0, "kmlm-parallel": 0, "reasoning-3": 0, "reasoning-4": 0, "entitycs": 0}
for line in open(t + "/k-cs.jsonl"):
    expected["kmlm-alias" if json.loads(line).get("alias") else "kmlm"] += 1
expected["kmlm-parallel"] = sum(1 for _ in open(t + "/k-par.jsonl"))
for line in open(t + "/reason/en.jsonl"):
    expected["reasoning-%d" % json.loads(line)["kind"]] += 1
expected["entitycs"] = sum(1 for _ in open(t + "/ecs.jsonl"))
stats = json.load(open(t + "/mixed.json"))
for k, n in expected.items():
    assert n > 0 and stats.get("records." + k) == n, (k, n, stats.get("records." + k))
assert stats.get("records.text") == sum(1 for l in open(sys.argv[2]) if l.strip()), stats.get("records.text")
# Per sequence: every sequence of an input has that input's kinds (the dataset's numbering).
allowed = {0: {2, 4}, 1: {3}, 2: {5, 6}, 3: {7}, 4: {0}}
kinds = [int(x) for x in open(t + "/kinds.txt").read().replace(",", " ").split()]
inputs = [int(x) for x in open(t + "/inputs.txt").read().replace(",", " ").split()]
assert len(kinds) == len(inputs) == stats["sequences"], (len(kinds), len(inputs))
for k, i in zip(kinds, inputs):
    assert k in allowed[i], (i, k)
PY
ok "sequence kinds from the generators' records: KMLM code-switched, alias, parallel; 3- and 4-cycles; EntityCS; text"

# Job-array parts (--shard I/N): the same five inputs in 4 parts, each the records that begin in
# its byte share; --data reads the parts as the one dataset (every masking decision of every row
# equal to the unsharded dataset's), a part's source_line counts from its shard_first_byte; a
# missing, misordered or other-run part and stdin are refused.
# The reasoning samples gzip-compressed: one unit, whole in one part.
gzip -c "$tmp/reason/en.jsonl" > "$tmp/reason-en.jsonl.gz"
mixed_inputs=("$tmp/k-cs.jsonl" "$tmp/k-par.jsonl" "$tmp/reason-en.jsonl.gz" "$tmp/ecs.jsonl" "en=$text")
for i in 3 1 0 2; do
  "$bin/pretrain" prepare --tokenizer "$spm" --max-len 64 --shard $i/4 -o "$tmp/part-$i.h5" -q "${mixed_inputs[@]}"
done
rows=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['sequences'])" "$tmp/mixed.json")
"$bin/pretrain" masks --data "$tmp/mixed.h5" -n "$rows" -o "$tmp/masks-one.jsonl" -q
"$bin/pretrain" masks --data "$tmp/part-*.h5" -n "$rows" -o "$tmp/masks-parts.jsonl" -q
cmp -s "$tmp/masks-one.jsonl" "$tmp/masks-parts.jsonl" || fail "4 prepare parts read as one differ from one run"
/usr/bin/python3 - "$tmp" "$text" <<'PY' || fail "parts' source lines"
import h5py, numpy as np, sys
t, text = sys.argv[1], sys.argv[2]
names = [t + "/k-cs.jsonl", t + "/k-par.jsonl", t + "/reason/en.jsonl", t + "/ecs.jsonl", text]
whole = h5py.File(t + "/mixed.h5")
lines = []
for i in range(4):
    f = h5py.File(t + "/part-%d.h5" % i)
    assert (f.attrs["shard_index"], f.attrs["shard_count"]) == (i, 4)
    first = f.attrs["shard_first_byte"]
    inputs, line = f["sequences/input"][()], f["sequences/source_line"][()]
    # Lines before the part's first byte of each input, counted here.
    before = [open(names[k], "rb").read()[:first[k]].count(b"\n") for k in range(5)]
    lines.append(line + np.array(before, dtype=np.uint64)[inputs])
assert np.array_equal(np.concatenate(lines), whole["sequences/source_line"][()])
PY
set +e
"$bin/pretrain" masks --data "$tmp/part-0.h5,$tmp/part-1.h5,$tmp/part-3.h5" -n 5 -o "$tmp/x.jsonl" -q 2> "$tmp/e1"
c1=$?
"$bin/pretrain" masks --data "$tmp/part-1.h5,$tmp/part-0.h5,$tmp/part-2.h5,$tmp/part-3.h5" -n 5 -o "$tmp/x.jsonl" -q \
  2> "$tmp/e2"
c2=$?
"$bin/pretrain" prepare --tokenizer "$spm" --max-len 63 --shard 2/4 -o "$tmp/other-2.h5" -q "${mixed_inputs[@]}"
"$bin/pretrain" masks --data "$tmp/part-0.h5,$tmp/part-1.h5,$tmp/other-2.h5,$tmp/part-3.h5" -n 5 -o "$tmp/x.jsonl" \
  -q 2> "$tmp/e3"
c3=$?
"$bin/pretrain" prepare --tokenizer "$spm" --shard 0/2 -o "$tmp/x.h5" -q - < "$tmp/ecs.jsonl" 2> "$tmp/e4"
c4=$?
"$bin/pretrain" prepare --tokenizer "$spm" --shard 0/2 --shards 2 -o "$tmp/x.h5" -q "$tmp/ecs.jsonl" 2> /dev/null
c5=$?
set -e
[ "$c1 $c2 $c3 $c4 $c5" = "1 1 1 2 2" ] || fail "bad part sets: exit $c1 $c2 $c3 $c4 $c5"
grep -q "3 of 4 parts given; missing shard 2" "$tmp/e1" || fail "missing part: $(cat "$tmp/e1")"
grep -q "give the parts in shard order" "$tmp/e2" || fail "misordered parts: $(cat "$tmp/e2")"
grep -q "stdin is not a regular file" "$tmp/e4" || fail "stdin: $(cat "$tmp/e4")"
[ ! -e "$tmp/x.jsonl" ] && [ ! -e "$tmp/x.h5" ] || fail "a refused run left an output"
ok "prepare --shard: 4 parts read as one dataset equal one run; bad part sets and stdin refused"

# prepare's memory is bounded (batches in flight, the tokenizer), whatever the size of its output:
# 10 times the records cost at most 16 MB more at the peak.
for i in 1 2 3 4 5 6 7 8 9 10; do cat "$tmp/k-cs.jsonl" "$tmp/ecs.jsonl"; done > "$tmp/ten.jsonl"
cat "$tmp/k-cs.jsonl" "$tmp/ecs.jsonl" > "$tmp/one.jsonl"
one=$(peak_rss_mb "$bin/pretrain" prepare --tokenizer "$spm" --max-len 64 -o "$tmp/one.h5" -q --threads 2 "$tmp/one.jsonl")
ten=$(peak_rss_mb "$bin/pretrain" prepare --tokenizer "$spm" --max-len 64 -o "$tmp/ten.h5" -q --threads 2 "$tmp/ten.jsonl")
[ "$(stat -c %s "$tmp/ten.h5")" -ge $((5 * $(stat -c %s "$tmp/one.h5"))) ] || fail "10x output expected"
[ "$ten" -le $((one + 16)) ] || fail "prepare: peak $one MB, $ten MB with 10 times the records"
ok "prepare: 10 times the records, peak memory $one -> $ten MB"

# Options: non-finite and out-of-range values are usage errors.
for bad in "--lr nan" "--lr -1" "--lr inf" "--beta2 1" "--dropout 1" "--warmup -1" "--max-errors 5x" \
  "--precision fp16" "--precision fp8" "--save-dtype f8"; do
  code=0; "$bin/pretrain" --data "$tmp/data.h5" --out "$tmp/x" $bad 2> /dev/null || code=$?
  [ $code -eq 2 ] || fail "$bad: exit $code, expected 2"
done
ok "non-finite and out-of-range options, and fp16 on the CPU, exit 2"
