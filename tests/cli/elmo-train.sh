#!/usr/bin/env bash
# pretrain --architecture elmo on real text (botchan.txt and the fixtures' Wikipedia through wiki-extract,
# ICU words; data/elmo/options-small.json):
# the held-out perplexity falls well below the unigram model's; the checkpoint is AllenNLP's layout
# and an independent torch model built from its files alone (tests/reference/elmo_perplexity.py)
# gets kglm's held-out perplexity; --resume (with accumulation and dropout) continues
# bit-identically; 2 MPI ranks = 1 process; SIGUSR1 stops with a checkpoint that resumes; bad
# settings and the wrong kind of dataset are refused without output.
# Usage: elmo-train.sh BIN_DIR FIXTURES_DIR SOURCE_DIR
set -euo pipefail
bin=$1 fx=$2 src=$3
text=$fx/tokenizer/botchan.txt
source "$src/tests/cli/common.sh" "$text"
options=$src/data/elmo/options-small.json
py=/usr/bin/python3  # Debian's torch and h5py (cmake/install-deps.sh)

"$bin/pretrain" vocab -q "en=$text" -o "$tmp/vocab.txt"
"$bin/pretrain" prepare --words --vocab "$tmp/vocab.txt" --max-len 64 -q "en=$text" -o "$tmp/words.h5"
elmo=(--architecture elmo --options "$options" --data "$tmp/words.h5" --batch 16 -q)

# Perplexity: 300 steps (about 1.4 epochs of botchan's 66k tokens, 1 of Wikipedia's) against the
# unigram model fitted on every token of the dataset (its own test data included: a lower bound of
# any unigram model's), with the targets the model has (words beyond n_tokens_vocab are <UNK>).
"$bin/wiki-extract" "$fx/wikipedia/enwiki-sample-a.xml.bz2" --sentences -q -o "$tmp/wiki.jsonl"
"$bin/pretrain" vocab -q "en=$tmp/wiki.jsonl" -o "$tmp/wiki-vocab.txt"
"$bin/pretrain" prepare --words --vocab "$tmp/wiki-vocab.txt" --max-len 64 -q "en=$tmp/wiki.jsonl" -o "$tmp/wiki.h5"
for corpus in botchan wiki; do
  data=$tmp/words.h5
  [ $corpus = wiki ] && data=$tmp/wiki.h5
  "$bin/pretrain" --architecture elmo --options "$options" --data "$data" --batch 16 -q --threads 2 --steps 300 \
    --eval-every 150 --eval-fraction 0.05 --log "$tmp/ppl-$corpus.jsonl" --out "$tmp/ppl-$corpus" 2> /dev/null
  $py - "$data" "$tmp/ppl-$corpus.jsonl" "$tmp/ppl-$corpus/options.json" <<'PY' || fail "perplexity on $corpus"
import h5py, json, math, sys
import numpy as np
f = h5py.File(sys.argv[1], "r")
ids, offsets = f["tokens/ids"][:].astype(np.int64), f["sequences/offsets"][:].astype(np.int64)
ids = np.where(ids < json.load(open(sys.argv[3]))["n_tokens_vocab"], ids, 2)
counts = np.bincount(ids).astype(float)
targets = np.concatenate([ids[offsets[s] + 1:offsets[s + 1]] for s in range(len(offsets) - 1)])
unigram = math.exp(-np.mean(np.log(counts[targets] / counts.sum())))
evals = [l for l in map(json.loads, open(sys.argv[2])) if "eval_ppl" in l]
ppl = [e["eval_ppl"] for e in evals]
print("held-out perplexity", [round(p, 1) for p in ppl], "unigram", round(unigram, 1))
assert [e["step"] for e in evals] == [150, 300], evals
assert ppl[1] < ppl[0] and ppl[1] < 0.65 * unigram, (ppl, unigram)
assert evals[1]["eval_tokens"] > 2500, evals[1]
PY
done
mv "$tmp/ppl-botchan" "$tmp/ppl"
ok "held-out perplexity well below the unigram model's after 300 steps (botchan; Wikipedia through wiki-extract)"

# The checkpoint: AllenNLP's options.json (262 characters), weights.hdf5, vocab.txt (the softmax's
# words); a torch model built from those files gets kglm's held-out perplexity.
$py - "$tmp/ppl" "$tmp/vocab.txt" <<'PY' || fail "checkpoint layout"
import h5py, json, sys
d = sys.argv[1]
o = json.load(open(d + "/options.json"))
assert o["char_cnn"]["n_characters"] == 262 and o["lstm"]["dim"] == 256 and o["n_tokens_vocab"] == 6100, o
names = []
h5py.File(d + "/weights.hdf5", "r").visit(lambda n: names.append(n))
want = ["char_embed", "CNN/W_cnn_0", "CNN_high_0/W_carry", "CNN_high_0/b_transform", "CNN_proj/W_proj",
        "RNN_0/RNN/MultiRNNCell/Cell0/LSTMCell/W_0", "RNN_1/RNN/MultiRNNCell/Cell1/LSTMCell/W_P_0"]
assert all(n in names for n in want) and not any(n.startswith("softmax") for n in names), names
assert h5py.File(d + "/weights.hdf5", "r")["RNN_0/RNN/MultiRNNCell/Cell0/LSTMCell/W_0"].shape == (128, 1024)
assert open(d + "/vocab.txt").read() == open(sys.argv[2]).read()
PY
"$bin/pretrain" "${elmo[@]}" --steps 30 --eval-fraction 0.9999 --eval-max 40 --log "$tmp/ref.jsonl" --out "$tmp/ref" \
  2> /dev/null
$py "$src/tests/reference/elmo_reference.py" perplexity "$tmp/ref" "$tmp/words.h5" "$tmp/vocab.txt" --sentences 40 --rows 16 \
  > "$tmp/torch.json"
$py - "$tmp/ref.jsonl" "$tmp/torch.json" <<'PY' || fail "torch perplexity"
import json, sys
kglm = [l for l in map(json.loads, open(sys.argv[1])) if "eval_ppl" in l][-1]
torch = json.load(open(sys.argv[2]))
assert kglm["eval_tokens"] == torch["eval_tokens"], (kglm, torch)
for key in ("eval_ppl", "eval_ppl_forward", "eval_ppl_backward"):
    assert abs(kglm[key] - torch[key]) <= 1e-5 * torch[key], (key, kglm[key], torch[key])
print("kglm", kglm["eval_ppl"], "torch", torch["eval_ppl"])
PY
ok "AllenNLP's files; a torch model read from them alone has kglm's held-out perplexity"

# pretrain embed: AllenNLP's elmo layout ("<i>" [layers, words, dim], sentence_to_index) for UD's
# tokenised English (an empty line too), each word's vectors those of the torch model; average and
# top are the mean and the last of all.
awk -F'\t' '/^#/ { next } NF == 0 { if (s != "") print s; s = ""; next }
            $1 ~ /^[0-9]+$/ { s = s == "" ? $2 : s " " $2 }' "$fx/ud/en_ewt-ud-dev.conllu" | sed -n 1,40p > "$tmp/sentences.txt"
printf '\n' >> "$tmp/sentences.txt"
for layers in all average top; do
  "$bin/pretrain" embed --model "$tmp/ppl" --layers $layers -q --batch 8 -o "$tmp/$layers.hdf5" "$tmp/sentences.txt" \
    --stats "$tmp/embed.json"
done
[ "$(stat_of "$tmp/embed.json" sentences)" = 41 ] && [ "$(stat_of "$tmp/embed.json" empty_sentences)" = 1 ] ||
  fail "embed statistics"
$py "$src/tests/reference/elmo_reference.py" embed "$tmp/ppl" "$tmp/sentences.txt" "$tmp/all.hdf5" || fail "ELMo vectors"
$py - "$tmp"/{all,average,top}.hdf5 <<'PY' || fail "--layers average/top"
import h5py, sys
import numpy as np
a, avg, top = (h5py.File(p, "r") for p in sys.argv[1:])
for k in a:
    if k == "sentence_to_index":
        continue
    assert a[k].shape[0] == 3 and a[k].shape[2] == 128, a[k].shape
    assert np.allclose(avg[k][()], a[k][()].mean(0), atol=1e-6) and np.array_equal(top[k][()], a[k][()][-1]), k
PY
# A model written as bilm-tf's dump_weights writes one (h5py, 261 characters: the parity fixture).
"$bin/pretrain" embed --model "$src/tests/reference/data/elmo-tiny" -q -o "$tmp/tiny.hdf5" "$tmp/sentences.txt"
$py "$src/tests/reference/elmo_reference.py" embed "$src/tests/reference/data/elmo-tiny" "$tmp/sentences.txt" \
  "$tmp/tiny.hdf5" || fail "ELMo vectors of the h5py-written model"
code=0; "$bin/pretrain" embed --model "$tmp/ppl" --layers middle -o "$tmp/x.hdf5" "$tmp/sentences.txt" 2> "$tmp/err" ||
  code=$?
[ $code -eq 2 ] && grep -q "all, average or top" "$tmp/err" && [ ! -e "$tmp/x.hdf5" ] || fail "--layers middle: $code"
code=0; "$bin/pretrain" embed --model "$tmp/ppl" --pool max -o "$tmp/x.hdf5" "$tmp/sentences.txt" 2> "$tmp/err" || code=$?
[ $code -eq 2 ] && grep -q "per word" "$tmp/err" && [ ! -e "$tmp/x.hdf5" ] || fail "--pool with ELMo: $code"
mkdir "$tmp/noweights" && cp "$tmp/ppl/options.json" "$tmp/noweights/"
code=0; "$bin/pretrain" embed --model "$tmp/noweights" -o "$tmp/x.hdf5" "$tmp/sentences.txt" 2> "$tmp/err" || code=$?
[ $code -eq 1 ] && grep -q "needs weights.hdf5" "$tmp/err" && [ ! -e "$tmp/x.hdf5" ] || fail "no weights: $code"
ok "pretrain embed: AllenNLP's elmo layout, the torch model's vectors (kglm's model and an h5py-written one), --layers average and top, errors (--pool with ELMo)"

# --resume: 10 steps + 10 more = 20 steps straight, bit for bit (accumulation 2, dropout 0.1).
same_lines() { diff <(grep '"loss"' "$1" | sed 's/, "tokens_per_s.*//') <(grep '"loss"' "$2" | sed 's/, "tokens_per_s.*//'); }
"$bin/pretrain" "${elmo[@]}" --accumulate 2 --steps 20 --log "$tmp/straight.jsonl" --out "$tmp/straight"
"$bin/pretrain" "${elmo[@]}" --accumulate 2 --steps 10 --log "$tmp/resumed.jsonl" --out "$tmp/half"
"$bin/pretrain" --architecture elmo --data "$tmp/words.h5" --resume "$tmp/half" --steps 20 --threads 2 -q \
  --log "$tmp/resumed.jsonl" --out "$tmp/resumed"
same_lines "$tmp/straight.jsonl" "$tmp/resumed.jsonl" || fail "resumed run differs"
[ "$(grep -c '"loss"' "$tmp/resumed.jsonl")" = 20 ] || fail "resumed log lines"
cmp "$tmp/straight/elmo_state.safetensors" "$tmp/resumed/elmo_state.safetensors" || fail "resumed state differs"
$py - "$tmp/straight/weights.hdf5" "$tmp/resumed/weights.hdf5" <<'PY' || fail "resumed weights differ"
import h5py, sys
import numpy as np
a, b = (h5py.File(p, "r") for p in sys.argv[1:])
names = []
a.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
assert len(names) > 10 and all(np.array_equal(a[n][()], b[n][()]) for n in names)
PY
ok "--resume continues bit-identically (accumulation 2, dropout, carried LSTM state)"

# Data parallelism: 2 ranks × 8 windows = 1 process × 16 windows.
if command -v mpirun > /dev/null; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  mpi=(timeout 300 mpirun -np 2 --oversubscribe "$bin/pretrain")
  "$bin/pretrain" "${elmo[@]}" --threads 1 --steps 12 --eval-every 6 --log "$tmp/one.jsonl" --out "$tmp/one"
  "${mpi[@]}" "${elmo[@]}" --threads 1 --steps 12 --eval-every 6 --log "$tmp/two.jsonl" --out "$tmp/two"
  # Not bit for bit: a rank's GEMMs over 8 rows round otherwise than one over 16, and Adagrad at lr
  # 0.2 on a fresh model (gradient norms up to 180, clipped) amplifies that to ~1e-5 in 12 steps.
  python3 "$src/tests/cli/compare_runs.py" --logs-within 1e-4 --weights-within 1e-4 "$tmp/one.jsonl" "$tmp/two.jsonl" "$tmp/one" "$tmp/two" \
    elmo_state.safetensors || fail "2 ranks differ from 1 process"
  ok "2 MPI ranks × 8 windows = 1 process × 16 windows (losses, perplexity, softmax, Adagrad, LSTM state)"
else
  echo "no mpirun: the data-parallel check skipped"
fi

# SIGUSR1: a checkpoint at the step it arrives, exit 75, and --resume goes on from it.
"$bin/pretrain" "${elmo[@]}" --steps 100000 --out "$tmp/usr1" 2> "$tmp/err" &
job=$!
sleep 3
kill -USR1 $job
code=0; wait $job || code=$?
[ $code -eq 75 ] || fail "SIGUSR1: exit $code $(cat "$tmp/err")"
step=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['step'])" "$tmp/usr1/trainer_state.json")
[ "$step" -gt 0 ] && [ "$step" -lt 100000 ] || fail "SIGUSR1: checkpoint at step $step"
"$bin/pretrain" --architecture elmo --data "$tmp/words.h5" --resume "$tmp/usr1" --steps $((step + 2)) -q \
  --out "$tmp/usr1-more"
ok "SIGUSR1: checkpoint at step $step, exit 75, resumed"

# Refused: a subword dataset, no --options, --options without elmo, a bad options file, more
# windows than sentences; no checkpoint is left.
"$bin/pretrain" prepare --tokenizer "$fx/tokenizer/spm-test-vocab1000.model" --max-len 48 -q "en=$text" \
  -o "$tmp/subwords.h5"
refused() {
  local want=$1 pattern=$2; shift 2
  local code=0
  "$bin/pretrain" "$@" --steps 2 --out "$tmp/refused" -q 2> "$tmp/err" || code=$?
  [ $code -eq "$want" ] && grep -q -- "$pattern" "$tmp/err" && [ ! -e "$tmp/refused" ] ||
    fail "$* : exit $code $(cat "$tmp/err")"
}
refused 2 "word-level dataset" --architecture elmo --options "$options" --data "$tmp/subwords.h5"
refused 2 "needs --options" --architecture elmo --data "$tmp/words.h5"
refused 2 "give --architecture elmo" --options "$options" --data "$tmp/words.h5"
printf '{"lstm": {"dim": "big"}}\n' > "$tmp/bad.json"
refused 1 "bad.json" --architecture elmo --options "$tmp/bad.json" --data "$tmp/words.h5"
refused 1 "cannot fill 100000 windows" --architecture elmo --options "$options" --data "$tmp/words.h5" --batch 100000
refused 2 "differs from the checkpoint" --architecture elmo --data "$tmp/words.h5" --resume "$tmp/half" --batch 8
ok "refused: a subword dataset, no --options, --options alone, a bad options.json, too many windows, another --batch"
echo "$pass checks passed"
