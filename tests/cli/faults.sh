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
#   system's reason.
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
echo "$pass checks passed"
