#!/usr/bin/env bash
# Fault injection (issue 59): a careful user's mistakes must not cost data. Here, model directory
# outputs (man 7 kglm, OUTPUTS):
# - `pretrain --out` naming an existing directory that is not an earlier checkpoint (a folder of
#   experiments, a folder of other files) is refused before training, in one line, exit 1, and the
#   directory is left as it was; ELMo's and `verbalize train`'s --out refuse the same way;
# - an empty directory, or an earlier checkpoint, is replaced (and a README put beside the weights
#   does not stop it);
# - `--out DIR/` (a trailing slash) writes DIR, with no temporary left inside or beside it;
# - an --out that cannot be written (its parent is a file) fails before the first step, naming the
#   system's reason;
# - a second run with the same --out is refused in one line naming the first one's host and pid, and
#   a lock left by a run killed with SIGKILL is taken over;
# - a metrics log that cannot be written (--log /dev/full) fails the run with the system's reason;
# - every file of a checkpoint, its directory and the directory above are fsynced before the save is
#   reported (seen with strace, where it runs);
# - a full disk under an HDF5 output (a 20 KiB tmpfs in a user and mount namespace, where one can be
#   made) fails with exit 1 and "No space left on device", leaves nothing, and does not crash at exit
#   (it did: exit 139 in HDF5's shutdown; the sanitized pass runs this under ASan);
# - a checkpoint that lacks an encoder tensor, holds a NaN weight, or whose config.json or
#   trainer_state.json holds an impossible number is refused in one line naming the tensor or field
#   (pretrain --init and --resume, finetune --init), before any model is built.
set -euo pipefail
bin=$1 fixtures=$2 src=$3
spm=$fixtures/tokenizer/spm-test-vocab1000.model
source "$src/tests/cli/common.sh" "$spm"
model=(--layers 2 --hidden 64 --heads 4 --ffn 128 --batch 8 --threads 1 --quiet)
"$bin/pretrain" prepare --tokenizer "$spm" --max-len 32 -o "$tmp/tok.h5" --quiet "en=$fixtures/tokenizer/botchan.txt"

# expect_refused NAME PATTERN COMMAND...: exit 1, one line on stderr that matches PATTERN, no step run.
expect_refused() {
  local name=$1 pattern=$2 code=0
  shift 2
  "$@" > "$tmp/out" 2> "$tmp/err" || code=$?
  [ "$code" = 1 ] || fail "$name: exit $code, not 1: $(cat "$tmp/err")"
  [ "$(wc -l < "$tmp/err")" = 1 ] || fail "$name: not one line: $(cat "$tmp/err")"
  grep -q -- "$pattern" "$tmp/err" || fail "$name: the message does not say '$pattern': $(cat "$tmp/err")"
}
no_litter() {
  local left
  left=$(find "$tmp" -name '*.tmp.*')
  [ -z "$left" ] || fail "temporaries left: $left"
}

# A folder of experiments, named by mistake (runs for runs/exp1).
mkdir -p "$tmp/runs/exp1"
echo notes > "$tmp/runs/README"
echo weights > "$tmp/runs/exp1/model.safetensors"
expect_refused "a folder of experiments" "runs: exists and holds exp1" \
  "$bin/pretrain" --data "$tmp/tok.h5" "${model[@]}" --steps 3 --out "$tmp/runs" --log "$tmp/runs.log"
[ "$(cat "$tmp/runs/README")" = notes ] && [ "$(cat "$tmp/runs/exp1/model.safetensors")" = weights ] ||
  fail "the refused directory changed: $(ls -R "$tmp/runs")"
[ ! -s "$tmp/runs.log" ] || fail "a step ran before the refusal: $(cat "$tmp/runs.log")"
ok "pretrain --out a folder of experiments: refused before the first step, its contents kept"

# A directory of other files (no model.safetensors).
mkdir -p "$tmp/papers"
echo draft > "$tmp/papers/draft.tex"
expect_refused "a directory of other files" "papers: exists and is not a model directory (no model.safetensors)" \
  "$bin/pretrain" --data "$tmp/tok.h5" "${model[@]}" --steps 3 --out "$tmp/papers/"
[ "$(cat "$tmp/papers/draft.tex")" = draft ] || fail "draft.tex changed"
ok "pretrain --out a directory of other files: refused, kept"

# An empty directory, then the checkpoint in it, are replaced; a README beside the weights is fine.
mkdir -p "$tmp/empty"
"$bin/pretrain" --data "$tmp/tok.h5" "${model[@]}" --steps 3 --out "$tmp/empty" || fail "an empty --out"
[ -f "$tmp/empty/model.safetensors" ] || fail "no checkpoint in the empty directory: $(ls "$tmp/empty")"
echo "run notes" > "$tmp/empty/README"
"$bin/pretrain" --data "$tmp/tok.h5" "${model[@]}" --steps 3 --seed 2 --out "$tmp/empty" ||
  fail "an earlier checkpoint as --out"
no_litter
ok "an empty directory and an earlier checkpoint (with a README) are replaced"

# A trailing slash names the directory itself.
"$bin/pretrain" --data "$tmp/tok.h5" "${model[@]}" --steps 3 --save-every 1 --out "$tmp/slash/" ||
  fail "--out with a trailing slash"
[ -f "$tmp/slash/model.safetensors" ] || fail "--out slash/: no checkpoint: $(ls -a "$tmp/slash")"
no_litter
ok "--out DIR/ writes DIR (3 saves), no temporary left"

# An unwritable location fails before the first step, with the system's reason.
echo file > "$tmp/plain"
expect_refused "a parent that is a file" "Not a directory" \
  "$bin/pretrain" --data "$tmp/tok.h5" "${model[@]}" --steps 3 --out "$tmp/plain/ckpt" --log "$tmp/plain.log"
[ ! -s "$tmp/plain.log" ] || fail "a step ran before the refusal"
ok "an --out under a regular file: refused before the first step (Not a directory)"

# The same rule for ELMo's and verbalize train's model directories (checked before any model is built).
"$bin/pretrain" vocab -q "en=$fixtures/tokenizer/botchan.txt" -o "$tmp/vocab.txt"
"$bin/pretrain" prepare --words --vocab "$tmp/vocab.txt" --max-len 32 -q "en=$fixtures/tokenizer/botchan.txt" \
  -o "$tmp/words.h5"
expect_refused "ELMo" "runs: exists and holds exp1" \
  "$bin/pretrain" --architecture elmo --options "$src/data/elmo/options-small.json" --data "$tmp/words.h5" \
  --steps 3 --threads 1 --quiet --out "$tmp/runs"
expect_refused "verbalize train" "runs: exists and holds exp1" \
  "$bin/verbalize" train --config "$tmp/missing.json" --tokenizer "$spm" --steps 3 --out "$tmp/runs" --quiet \
  "$tmp/missing.jsonl"
[ "$(cat "$tmp/runs/README")" = notes ] || fail "the refused directory changed"
ok "ELMo's and verbalize train's --out refuse a folder of experiments too"
no_litter

# Two runs, one --out: the second is refused naming the first (its host and pid), which goes on.
"$bin/pretrain" --data "$tmp/tok.h5" "${model[@]}" --steps 100000 --save-every 20 --out "$tmp/shared" \
  2> "$tmp/first.err" &
first=$!
for _ in $(seq 300); do [ -s "$tmp/shared.lock" ] && break; sleep 0.1; done
[ -s "$tmp/shared.lock" ] || fail "no lock file beside the first run's --out: $(ls "$tmp")"
expect_refused "a second run with the same --out" "another run writes this model directory (host .* pid $first" \
  "$bin/pretrain" --data "$tmp/tok.h5" "${model[@]}" --steps 3 --seed 2 --out "$tmp/shared"
kill -0 "$first" 2> /dev/null || fail "the first run stopped: $(cat "$tmp/first.err")"
kill -TERM "$first"
wait "$first" || true
[ ! -e "$tmp/shared.lock" ] || fail "SIGTERM left the lock file"
ok "a second run with the same --out: refused naming the first's pid; the lock goes with the first"

# A run killed with SIGKILL leaves its lock file, stale: the next run takes it over.
"$bin/pretrain" --data "$tmp/tok.h5" "${model[@]}" --steps 100000 --out "$tmp/killed" 2> /dev/null &
killed=$!
for _ in $(seq 300); do [ -s "$tmp/killed.lock" ] && break; sleep 0.1; done
kill -KILL "$killed"
wait "$killed" 2> /dev/null || true
[ -e "$tmp/killed.lock" ] || fail "SIGKILL removed the lock file (the test needs a stale one)"
"$bin/pretrain" --data "$tmp/tok.h5" "${model[@]}" --steps 3 --out "$tmp/killed" || fail "a stale lock refused"
[ ! -e "$tmp/killed.lock" ] && [ -f "$tmp/killed/model.safetensors" ] || fail "after a stale lock: $(ls "$tmp")"
ok "a lock left by SIGKILL is stale: the next run takes it over and removes it"

# A metrics log that cannot be written fails the run (it was: exit 0, an empty log).
expect_refused "--log /dev/full" "No space left on device" \
  "$bin/pretrain" --data "$tmp/tok.h5" "${model[@]}" --steps 3 --out "$tmp/full" --log /dev/full
ok "--log on a full disk (/dev/full): exit 1, No space left on device"

# Durability: every file of the checkpoint, the new directory and its parent are fsynced.
if strace -f -o /dev/null true 2> /dev/null; then
  # LeakSanitizer cannot run under ptrace: off for this one run (the sanitized pass).
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -y -e trace=fsync,fdatasync \
    -o "$tmp/sync.trace" "$bin/pretrain" --data "$tmp/tok.h5" "${model[@]}" --steps 2 --out "$tmp/durable/ck" ||
    fail "pretrain under strace"
  for f in "$tmp"/durable/ck/*; do
    grep -q "fsync([0-9]*<[^>]*/ck\.tmp\.[0-9]*/$(basename "$f")>" "$tmp/sync.trace" ||
      fail "$(basename "$f") was not fsynced: $(grep fsync "$tmp/sync.trace")"
  done
  grep -q "fsync([0-9]*<[^>]*/ck\.tmp\.[0-9]*>" "$tmp/sync.trace" || fail "the checkpoint directory was not fsynced"
  grep -q "fsync([0-9]*<$tmp/durable>" "$tmp/sync.trace" || fail "the directory above was not fsynced"
  ok "every file of the checkpoint ($(ls "$tmp/durable/ck" | wc -l)), its directory and the one above: fsynced"
else
  echo "strace cannot trace here: the fsync check skipped"
fi

# Shards of two prepare runs under one name (what a run interrupted between its renames left) are
# refused when read.
mkdir -p "$tmp/a" "$tmp/b"
for run in a b; do
  "$bin/pretrain" prepare --tokenizer "$spm" --max-len 32 --shards 2 -q -o "$tmp/$run/tok.h5" \
    "en=$fixtures/tokenizer/botchan.txt"
done
mkdir -p "$tmp/mixed"
cp "$tmp/a/tok-00000-of-00002.h5" "$tmp/b/tok-00001-of-00002.h5" "$tmp/mixed/"
expect_refused "shards of two runs" "tok-00001-of-00002.h5: a shard of another pretrain prepare run than" \
  "$bin/pretrain" --data "$tmp/mixed/tok-*" "${model[@]}" --steps 2 --out "$tmp/mixed-ck"
"$bin/pretrain" --data "$tmp/a/tok-*" "${model[@]}" --steps 2 --out "$tmp/a-ck" || fail "the shards of one run"
ok "pretrain --data with shards of two prepare runs: refused naming both; one run's shards train"

# Directories of several files (kg-cycles xlr, cs-gen --split-by-lang) are locked for the run too:
# a run holding the lock (here flock(1) on DIR.lock) makes the next one refuse, before any work.
# (The lock comes before any input is read: the refused xlr run needs no cycles. cli_kg_cycles runs
# xlr whole; under the sanitizers it takes a minute.)
"$bin/wd-extract" "$fixtures/xfactr-kg-dev.json.gz" -o "$tmp/kg.h5" --langs en -q
expect_refused "kg-cycles xlr, locked" "xlr: another run writes this XLR directory" flock "$tmp/xlr.lock" \
  "$bin/kg-cycles" xlr --kg "$tmp/kg.h5" --cycles "$tmp/cycles.h5" --langs en -o "$tmp/xlr" -q
[ ! -e "$tmp/xlr" ] || fail "the refused run wrote $(ls "$tmp/xlr")"
expect_refused "cs-gen --split-by-lang, locked" "split: another run writes this split directory" \
  flock "$tmp/split.lock" "$bin/cs-gen" kmlm --kg "$tmp/kg.h5" --langs en --split-by-lang "$tmp/split" -q
expect_refused "sample-lang --split-by-lang, locked" "langs: another run writes this split directory" \
  flock "$tmp/langs.lock" "$bin/sample-lang" "$fixtures/xfactr/alias" --truncate --split-by-lang "$tmp/langs" -q
"$bin/sample-lang" "$fixtures/xfactr/alias" --truncate --split-by-lang "$tmp/langs" -q || fail "sample-lang split"
[ "$(ls "$tmp/langs" | wc -l)" = "$(ls "$fixtures/xfactr/alias"/*.txt | wc -l)" ] && [ ! -e "$tmp/langs.lock" ] ||
  fail "sample-lang --split-by-lang: $(ls "$tmp/langs")"
"$bin/cs-gen" kmlm --kg "$tmp/kg.h5" --langs en --split-by-lang "$tmp/split" -q || fail "cs-gen --split-by-lang"
[ -s "$tmp/split/en.jsonl" ] && [ ! -e "$tmp/split.lock" ] || fail "cs-gen --split-by-lang: $(ls "$tmp" "$tmp/split")"
ok "kg-cycles xlr, cs-gen and sample-lang --split-by-lang refuse a directory another run holds; the latter two then write"

# A full disk under HDF5 outputs.
mkdir -p "$tmp/small"
if unshare -rm sh -c "mount -t tmpfs -o size=20k tmpfs '$tmp/small'" 2> /dev/null; then
  for tool in "kg-cycles --kg $tmp/kg.h5 -o $tmp/small/cycles.h5 -q" \
    "pretrain prepare --tokenizer $spm --max-len 32 -q -o $tmp/small/tok.h5 en=$fixtures/tokenizer/botchan.txt"; do
    code=0
    unshare -rm sh -c "mount -t tmpfs -o size=20k tmpfs '$tmp/small' && exec $bin/$tool" 2> "$tmp/err" || code=$?
    [ "$code" = 1 ] || fail "${tool%% *} on a full disk: exit $code, not 1: $(cat "$tmp/err")"
    grep -q "No space left on device" "$tmp/err" || fail "${tool%% *} on a full disk: no reason: $(cat "$tmp/err")"
    [ "$(wc -l < "$tmp/err")" = 1 ] || fail "${tool%% *} on a full disk: not one line: $(cat "$tmp/err")"
  done
  ok "kg-cycles and pretrain prepare on a full disk: exit 1, 'No space left on device', no crash at exit"
else
  echo "no user and mount namespace here (unshare -rm): the full-disk check skipped"
fi

# Damaged checkpoints: a missing encoder tensor, a NaN weight, impossible config and state numbers.
"$bin/pretrain" --data "$tmp/tok.h5" "${model[@]}" --steps 2 --out "$tmp/good" || fail "a checkpoint to damage"
# edit_checkpoint SRC DST drop|nan TENSOR: DST is SRC with TENSOR removed from model.safetensors, or
# its first value set to NaN (the safetensors layout rewritten by hand: json header, packed data).
edit_checkpoint() {
  cp -r "$1" "$2"
  python3 - "$2/model.safetensors" "$3" "$4" <<'PY'
import json, struct, sys
path, edit, name = sys.argv[1:]
raw = open(path, "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header, data = json.loads(raw[8:8 + n]), raw[8 + n:]
assert name in header, sorted(header)
out, blobs, at = {}, [], 0
for key, t in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0] if kv[0] != "__metadata__" else -1):
    if key == "__metadata__" or (edit == "drop" and key == name):
        if key == "__metadata__": out[key] = t
        continue
    b = bytearray(data[t["data_offsets"][0]:t["data_offsets"][1]])
    if edit == "nan" and key == name: b[0:4] = struct.pack("<f", float("nan"))
    out[key] = dict(t, data_offsets=[at, at + len(b)])
    blobs.append(bytes(b)); at += len(b)
h = json.dumps(out).encode()
h += b" " * (-len(h) % 8)
open(path, "wb").write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
PY
}
edit_checkpoint "$tmp/good" "$tmp/dropped" drop roberta.encoder.layer.1.output.dense.weight
edit_checkpoint "$tmp/good" "$tmp/nan" nan roberta.encoder.layer.0.attention.output.dense.weight
head -n 40 "$fixtures/tokenizer/botchan.txt" | awk 'NF { print NR "\t" $0 "\t" (NR % 2 ? "odd" : "even") }' |
  sed '1i id\tsentence1\tlabel' > "$tmp/seq.tsv"
finetune=(--task sequence --train "$tmp/seq.tsv" --epochs 1 --batch 8 --threads 1 --quiet)
expect_refused "finetune --init without an encoder tensor" \
  "tensor 'roberta.encoder.layer.1.output.dense.weight' of the encoder is missing" \
  "$bin/finetune" "${finetune[@]}" --init "$tmp/dropped" -o "$tmp/ft-dropped"
expect_refused "pretrain --init without an encoder tensor" "of the encoder is missing" \
  "$bin/pretrain" --data "$tmp/tok.h5" --init "$tmp/dropped" --batch 8 --threads 1 --quiet --steps 2 --out "$tmp/p1"
"$bin/finetune" "${finetune[@]}" --init "$tmp/good" -o "$tmp/ft-good" || fail "finetune from the whole checkpoint"
expect_refused "finetune -o a folder of experiments" "runs: exists and is not a fine-tuning run directory" \
  "$bin/finetune" "${finetune[@]}" --init "$tmp/good" -o "$tmp/runs"
[ "$(ls "$tmp/runs")" = "$(printf 'README\nexp1')" ] || fail "finetune changed the refused directory: $(ls "$tmp/runs")"
"$bin/finetune" "${finetune[@]}" --init "$tmp/good" --seeds 12 -o "$tmp/ft-good/" || fail "finetune into a run directory"
ok "a checkpoint without an encoder tensor: finetune and pretrain --init refuse it, naming it (a head may start random)"
expect_refused "finetune --init a NaN weight" \
  "tensor 'roberta.encoder.layer.0.attention.output.dense.weight' holds NaN (element 0" \
  "$bin/finetune" "${finetune[@]}" --init "$tmp/nan" -o "$tmp/ft-nan"
expect_refused "pretrain --resume a NaN weight" "holds NaN" \
  "$bin/pretrain" --data "$tmp/tok.h5" --resume "$tmp/nan" --steps 2 --threads 1 --quiet --out "$tmp/p2"
ok "a NaN weight: refused naming the tensor (was: exit 0 and -nan in JSON, or 'diverged')"
cp -r "$tmp/good" "$tmp/layers"
sed -i 's/"num_hidden_layers": *[0-9]*/"num_hidden_layers": 2000000000/' "$tmp/layers/config.json"
expect_refused "2000000000 layers" "num_hidden_layers is 2000000000; at most 1024" \
  timeout 60 "$bin/finetune" "${finetune[@]}" --init "$tmp/layers" -o "$tmp/ft-layers"
sed -i 's/"num_hidden_layers": *[0-9]*/"num_hidden_layers": 3/' "$tmp/layers/config.json"
expect_refused "3 layers over weights of 2" "num_hidden_layers is 3, but model.safetensors holds 2 layers" \
  "$bin/finetune" "${finetune[@]}" --init "$tmp/layers" -o "$tmp/ft-layers"
cp -r "$tmp/good" "$tmp/batch0"
sed -i 's/"batch": *[0-9]*/"batch": 0/' "$tmp/batch0/trainer_state.json"
expect_refused "trainer_state batch 0" '"batch" is 0, outside 1 to' \
  timeout 60 "$bin/pretrain" --data "$tmp/tok.h5" --resume "$tmp/batch0" --steps 2 --threads 1 --quiet --out "$tmp/p3"
ok "config.json of 2e9 or 3 layers over 2, trainer_state.json batch 0: refused naming the field (were: a hang)"
no_litter
echo "$pass checks passed"
