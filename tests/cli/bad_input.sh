#!/usr/bin/env bash
# The reliability matrix of man 7 kglm, for every tool:
#   inputs  {missing, empty, random bytes, truncated gz/bz2/zst, invalid UTF-8 line, every record
#            bad, HDF5 of the wrong kind, the wrong text kind (JSONL where XML is expected, XML where
#            JSONL is)}
#   outputs {new path, existing file, symlink, scratch character device, FIFO with a reader,
#            /dev/fd/N from process substitution}
# For each run it checks the exit status, that a failure says so in one line naming the file, that
# no temporary is left (beside the output or in $TMPDIR), that an existing output is untouched on
# failure, and that special files stay special. Then SIGTERM during a long run of each streaming
# tool: exit 143, no temporary, the old output untouched. Last, side inputs (tables, lists, shard
# stores) of the wrong kind and --stats into a pipe and through a symlink.
# Usage: bad_input.sh BIN_DIR SOURCE_DIR [FIXTURES_DIR]
set -uo pipefail
bin=$1 src=$2 fixtures=${3:-}
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
export TMPDIR=$tmp/scratch
mkdir -p "$TMPDIR"
failures=0 checks=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
check() { checks=$((checks + 1)); }

# ---------------------------------------------------------------------------------------------
# Valid inputs, made from the embedded sample data.
d=$tmp/data
mkdir -p "$d"
"$bin/wd-extract" "$src/data/wikidata-sample.json" -o "$d/kg.h5" --langs all -q || exit 1
"$bin/wiki-extract" "$src/data/enwiki-sample.xml" -o "$d/docs.jsonl" -q || exit 1
"$bin/kg-align" --kg "$d/kg.h5" --cooc "$d/cooc.tsv" -o "$d/aligned.jsonl" "$d/docs.jsonl" -q || exit 1
"$bin/verbalize" subgraphs --kg "$d/kg.h5" --cooc "$d/cooc.tsv" -o "$d/subgraphs.jsonl" -q || exit 1
"$bin/kg-cycles" --kg "$d/kg.h5" -o "$d/cycles.h5" -q || exit 1
"$bin/cs-gen" kmlm --kg "$d/kg.h5" --langs fr,de -o "$d/kmlm.jsonl" -q || exit 1
python3 - "$d/docs.jsonl" "$d/wikiextractor.jsonl" <<'PY'
import json, sys
with open(sys.argv[2], "w") as out:
    for line in open(sys.argv[1]):
        doc = json.loads(line)
        out.write(json.dumps({"id": doc["id"], "title": doc["title"], "text": doc["text"]}) + "\n")
PY
# A tiny verbaliser (two steps on template pairs) and its output, for verbalize generate and evaluate.
if command -v spm_train > /dev/null; then
  "$bin/verbalize" render --kg "$d/kg.h5" --mode pairs --templates "$src/data/templates" --langs en \
    -o "$d/pairs.jsonl" -q "$d/subgraphs.jsonl" || exit 1
  python3 -c "import json,sys; [print(r['serialized_triples'] + '\n' + r['sentence']) for r in map(json.loads, open(sys.argv[1]))]" \
    "$d/pairs.jsonl" > "$d/spm.txt"
  spm_train --input="$d/spm.txt" --model_prefix="$d/spm" --vocab_size=200 --hard_vocab_limit=false --pad_id=0 \
    --eos_id=1 --unk_id=2 --bos_id=-1 > /dev/null 2>&1 || exit 1
  printf '{"model_type": "t5", "vocab_size": %d, "d_model": 16, "d_kv": 4, "d_ff": 32, "num_layers": 1, "num_heads": 4}\n' \
    "$(wc -l < "$d/spm.vocab")" > "$d/t5.json"
  "$bin/verbalize" train --config "$d/t5.json" --tokenizer "$d/spm.model" --steps 2 --out "$d/verbalizer" -q \
    "$d/pairs.jsonl" || exit 1
  "$bin/verbalize" generate --model "$d/verbalizer" --max-len 8 -o "$d/generated.jsonl" -q "$d/aligned.jsonl" || exit 1
else
  echo "note: no spm_train: verbalize generate and evaluate are left out"
fi
spm=""
[ -n "$fixtures" ] && [ -f "$fixtures/tokenizer/spm-test-vocab1000.model" ] && spm=$fixtures/tokenizer/spm-test-vocab1000.model
if [ -n "$spm" ]; then
  "$bin/pretrain" prepare --tokenizer "$spm" --max-len 128 -o "$d/tokens.h5" "$d/kmlm.jsonl" -q || exit 1
else
  echo "note: no fixture SentencePiece model: pretrain prepare and pretrain are left out"
fi

# ---------------------------------------------------------------------------------------------
# The tools: name | input kind (text: a stream of records; hdf5: a store) | valid input | the
# command with {IN} and {OUT} in place of the paths (braces: a temporary directory's random name
# may hold "IN" or "OUT").
tools=(
  "wd-extract|text|$src/data/wikidata-sample.json|wd-extract {IN} -o {OUT}"
  "wiki-extract|text|$src/data/enwiki-sample.xml|wiki-extract {IN} -o {OUT}"
  "wiki-extract-wikiextractor|text|$d/wikiextractor.jsonl|wiki-extract --input-format wikiextractor {IN} -o {OUT}"
  "cs-gen-entitycs|text|$d/docs.jsonl|cs-gen entitycs --kg $d/kg.h5 --langs fr,de -o {OUT} {IN}"
  "kg-align|text|$d/docs.jsonl|kg-align --kg $d/kg.h5 -o {OUT} {IN}"
  "kg-align-ner|text|$d/docs.jsonl|kg-align ner --kg $d/kg.h5 -o {OUT} {IN}"
  "verbalize-render|text|$d/subgraphs.jsonl|verbalize render --kg $d/kg.h5 --langs en,fr -o {OUT} {IN}"
  "sample-lang|text|$d/docs.jsonl|sample-lang en={IN} -o {OUT}"
  "cs-gen-kmlm|hdf5|$d/kg.h5|cs-gen kmlm --kg {IN} --langs fr -o {OUT}"
  "kg-cycles|hdf5|$d/kg.h5|kg-cycles --kg {IN} -o {OUT}"
  "kg-cycles-xlr|hdf5|$d/cycles.h5|kg-cycles xlr --kg $d/kg.h5 --cycles {IN} --langs en,fr -o {OUT}"
  "verbalize-subgraphs|hdf5|$d/kg.h5|verbalize subgraphs --kg {IN} --cooc $d/cooc.tsv -o {OUT}"
)
if [ -f "$d/verbalizer/model.safetensors" ]; then
  tools+=("verbalize-generate|text|$d/subgraphs.jsonl|verbalize generate --model $d/verbalizer --max-len 8 -o {OUT} {IN}")
  tools+=("verbalize-evaluate|text|$d/generated.jsonl|verbalize evaluate -o {OUT} {IN}")
fi
if [ -n "$spm" ]; then
  tools+=("pretrain-prepare|text|$d/kmlm.jsonl|pretrain prepare --tokenizer $spm --max-len 128 -o {OUT} {IN}")
  tools+=("pretrain|hdf5|$d/tokens.h5|pretrain --data {IN} --layers 1 --hidden 16 --heads 2 --ffn 32 --batch 2 --steps 1 --out {OUT}")
fi

# ---------------------------------------------------------------------------------------------
# Bad inputs, made from each tool's valid input.
make_inputs() {  # TOOL VALID KIND -> files in $in/
  local valid=$1 kind=$2
  in=$tmp/in/$3
  mkdir -p "$in"
  : > "$in/empty"
  printf '{"id": oops\n{"also": not JSON\n' > "$in/all-bad"
  head -c 65536 /dev/urandom > "$in/random.bin"
  local size
  size=$(stat -c %s "$valid")
  gzip -c "$valid" | head -c $(($(gzip -c "$valid" | wc -c) / 2)) > "$in/cut.gz"
  bzip2 -c "$valid" | head -c $(($(bzip2 -c "$valid" | wc -c) / 2)) > "$in/cut.bz2"
  zstd -q -c "$valid" | head -c $(($(zstd -q -c "$valid" | wc -c) / 2)) > "$in/cut.zst"
  if [ "$kind" = text ]; then
    # The valid input with one line of invalid UTF-8 (a lone continuation byte and an 0xff)
    # after its second line.
    { head -n 2 "$valid"; printf 'bad \x80\xff bytes\n'; tail -n +3 "$valid"; } > "$in/bad-utf8"
    cp "$d/kg.h5" "$in/wrong.h5"
    if [[ "$valid" == *.xml ]]; then cp "$d/docs.jsonl" "$in/wrong-text"; else cp "$src/data/enwiki-sample.xml" "$in/wrong-text"; fi
  else
    head -c $((size / 2)) "$valid" > "$in/cut.h5"
    printf 'bad \x80\xff bytes\n' > "$in/bad-utf8"
    if [[ "$valid" == *tokens.h5 ]] || [[ "$valid" == *cycles.h5 ]]; then cp "$d/kg.h5" "$in/wrong.h5"; else cp "$d/cycles.h5" "$in/wrong.h5"; fi
    cp "$d/docs.jsonl" "$in/wrong-text"
  fi
}

# Runs a tool command; sets rc, err (stderr file).
run_tool() {  # COMMAND INPUT OUTPUT
  local cmd=${1//"{IN}"/$2}
  cmd=${cmd//"{OUT}"/$3}
  err=$tmp/stderr
  # shellcheck disable=SC2086
  "$bin"/$cmd -q --threads 2 2> "$err" > "$tmp/stdout"
  rc=$?
}

# No NAME.tmp.PID beside the output, nothing left in $TMPDIR.
no_litter() {  # WHAT DIR
  check
  if ls -a "$2" | grep -q '\.tmp\.[0-9]'; then fail "$1: a temporary was left in $2: $(ls -a "$2" | grep '\.tmp\.')"; fi
  if [ -n "$(ls -A "$TMPDIR")" ]; then
    fail "$1: left in \$TMPDIR: $(ls -A "$TMPDIR")"
    rm -rf "${TMPDIR:?}"/*
  fi
}

# A failure: exit 1, exactly one error line, naming the input.
one_line_error() {  # WHAT INPUT_NAME
  check
  [ "$rc" = 1 ] || { fail "$1: exit $rc, expected 1: $(head -c 300 "$err")"; return; }
  local lines
  lines=$(wc -l < "$err")
  [ "$lines" = 1 ] && grep -q ': error: ' "$err" || fail "$1: $lines lines on stderr, expected one error: $(cat "$err")"
  grep ': error: ' "$err" | grep -qF "$2" || fail "$1: the error does not name $2: $(cat "$err")"
}

# ---------------------------------------------------------------------------------------------
# 1. Inputs × {new path, existing file}.
for entry in "${tools[@]}"; do
  IFS='|' read -r name kind valid cmd <<< "$entry"
  make_inputs "$valid" "$kind" "$name"
  out_dir=$tmp/out/$name
  mkdir -p "$out_dir"
  output=$out_dir/result
  [[ "$name" == pretrain-prepare || "$name" == wd-extract || "$name" == kg-cycles ]] && output=$out_dir/result.h5
  for case in missing empty random.bin cut.gz cut.bz2 cut.zst cut.h5 bad-utf8 all-bad wrong.h5 wrong-text; do
    input=$in/$case
    [ "$case" = missing ] && input=$in/no-such-file
    [ "$case" = cut.h5 ] && [ "$kind" != hdf5 ] && continue
    what="$name < $case"
    for existing in no yes; do
      rm -rf "$output"
      if [ $existing = yes ]; then printf 'precious\n' > "$output"; fi
      [ "$name" = kg-cycles-xlr ] || [ "$name" = pretrain ] && [ $existing = yes ] && { rm -f "$output"; mkdir -p "$output"; printf 'precious\n' > "$output/keep"; }
      run_tool "$cmd" "$input" "$output"
      expect=fail
      case "$case" in
        empty) [ "$kind" = text ] && expect=empty ;;
        bad-utf8) [ "$kind" = text ] && expect=ok ;;
      esac
      # Lines of text are records of their own for sample-lang LANG=FILE: nothing there is bad.
      [ "$case" = all-bad ] && [ "$name" = sample-lang ] && expect=ok
      # A MediaWiki dump is one XML document: a byte that is not UTF-8 makes it unreadable.
      [ "$case" = bad-utf8 ] && [ "$name" = wiki-extract ] && expect=fail
      case $expect in
        fail)
          if [ "$case" = all-bad ]; then
            # Each bad record is a located warning; then one error line says no record was valid.
            check
            grep -v ': error: ' "$err" | grep -v -q "$(basename "$input"):[0-9]*: " &&
              fail "$what: a warning without file:line: $(cat "$err")"
            tail -n 1 "$err" > "$err.last"
            [ "$(grep -c ': error: ' "$err")" = 1 ] || fail "$what: not one error line: $(cat "$err")"
            cp "$err.last" "$err"
          fi
          one_line_error "$what" "$(basename "$input")"
          check
          if [ $existing = yes ]; then
            if [ -d "$output" ]; then
              [ "$(cat "$output/keep" 2> /dev/null)" = precious ] || fail "$what: the existing output was touched"
            else
              [ "$(cat "$output" 2> /dev/null)" = precious ] || fail "$what: the existing output was touched"
            fi
          else
            [ ! -e "$output" ] || fail "$what: a failed run created its output"
          fi
          ;;
        empty)
          check
          [ "$rc" = 0 ] || fail "$what: exit $rc, expected 0: $(cat "$err")"
          grep -q "$(basename "$input"): empty input" "$err" || fail "$what: no 'empty input' warning: $(cat "$err")"
          [ -e "$output" ] || fail "$what: no output"
          if [ -f "$output" ] && [[ "$output" != *.h5 ]]; then
            [ ! -s "$output" ] || fail "$what: the output of an empty input is not empty"
          fi
          ;;
        ok)
          check
          [ "$rc" = 0 ] || fail "$what: exit $rc, expected 0: $(cat "$err")"
          [ -s "$output" ] || [ -d "$output" ] || fail "$what: the valid records were lost"
          # A bad line is reported with its location, or (for tools that take any bytes as text) kept.
          if grep -q 'warning' "$err"; then
            grep -q "$(basename "$input"):3" "$err" || fail "$what: the bad line is not located: $(cat "$err")"
          fi
          ;;
      esac
      no_litter "$what" "$out_dir"
    done
  done
done
echo "inputs: $checks checks"

# ---------------------------------------------------------------------------------------------
# 2. Valid input × special outputs. Streams receive the bytes in place; regular files and links
# are replaced atomically.
special=$tmp/special
mkdir -p "$special"
have_mknod=no
if mknod "$special/null" c 1 3 2> /dev/null && mknod "$special/full" c 1 7 2> /dev/null; then
  have_mknod=yes
else
  echo "note: mknod is not permitted here: the character-device cases are left out"
fi
before=$checks
for entry in "${tools[@]}"; do
  IFS='|' read -r name kind valid cmd <<< "$entry"
  [ "$name" = kg-cycles-xlr ] || [ "$name" = pretrain ] && continue  # directory outputs: below
  ext=""
  [[ "$name" == pretrain-prepare || "$name" == wd-extract || "$name" == kg-cycles ]] && ext=.h5
  out_dir=$tmp/outs/$name
  mkdir -p "$out_dir"
  # The reference: a plain new file.
  run_tool "$cmd" "$valid" "$out_dir/ref$ext"
  check
  [ "$rc" = 0 ] || { fail "$name: valid input failed: $(cat "$err")"; continue; }
  # An existing file is replaced, keeping its permissions.
  printf 'old\n' > "$out_dir/existing$ext"
  chmod 640 "$out_dir/existing$ext"
  run_tool "$cmd" "$valid" "$out_dir/existing$ext"
  check
  [ "$rc" = 0 ] && [ "$(stat -c %a "$out_dir/existing$ext")" = 640 ] && [ "$(head -c 4 "$out_dir/existing$ext")" != "old" ] ||
    fail "$name: existing file not replaced with its mode kept"
  # A symbolic link stays a link; its target gets the output.
  printf 'old\n' > "$out_dir/target$ext"
  ln -s "target$ext" "$out_dir/link$ext"
  run_tool "$cmd" "$valid" "$out_dir/link$ext"
  check
  [ "$rc" = 0 ] && [ -L "$out_dir/link$ext" ] && [ "$(head -c 4 "$out_dir/target$ext")" != "old" ] ||
    fail "$name: the symlink was not followed (rc $rc, $(ls -l "$out_dir"))"
  if [ "$ext" = "" ]; then
    cmp -s "$out_dir/ref" "$out_dir/target" || fail "$name: output through the symlink differs"
  fi
  # Character devices: written in place, still devices afterwards; a full device fails with exit 1.
  if [ $have_mknod = yes ]; then
    run_tool "$cmd" "$valid" "$special/null"
    check
    [ "$rc" = 0 ] && [ -c "$special/null" ] || fail "$name: -o chardev: rc $rc, $(ls -l "$special/null")"
    run_tool "$cmd" "$valid" "$special/full"
    one_line_error "$name > /dev/full twin" "full"
    check
    [ -c "$special/full" ] || fail "$name: the full device was replaced"
  fi
  # A FIFO with a reader: it gets the bytes, stays a FIFO, the reader ends.
  rm -f "$out_dir/fifo"
  mkfifo "$out_dir/fifo"
  timeout 60 cat "$out_dir/fifo" > "$out_dir/from-fifo" &
  reader=$!
  run_tool "$cmd" "$valid" "$out_dir/fifo"
  wait $reader
  check
  [ "$rc" = 0 ] && [ -p "$out_dir/fifo" ] || fail "$name: -o FIFO: rc $rc, $(ls -l "$out_dir/fifo")"
  # Process substitution: the output path is /dev/fd/N, a pipe.
  line=${cmd//"{IN}"/$valid}
  # shellcheck disable=SC2086
  "$bin"/${line%%"{OUT}"*} >(cat > "$out_dir/from-fd") ${line#*"{OUT}"} -q --threads 2 2> "$err"
  rc=$?
  wait $!
  check
  [ "$rc" = 0 ] || fail "$name: -o /dev/fd/N: rc $rc: $(cat "$err")"
  for got in from-fifo from-fd; do
    check
    if [ "$ext" = "" ]; then
      cmp -s "$out_dir/ref" "$out_dir/$got" || fail "$name: $got: other bytes than the file output"
    else
      head -c 8 "$out_dir/$got" | grep -q "HDF" || fail "$name: $got: no HDF5 file arrived"
    fi
  done
  no_litter "$name special outputs" "$out_dir"
done
echo "outputs: $((checks - before)) checks"

# ---------------------------------------------------------------------------------------------
# 3. SIGTERM (and once SIGHUP) during a run of each streaming tool: its input is a FIFO kept open, so the tool is
# still reading when the signal comes. Exit 143, one message, no temporary anywhere, the existing
# output untouched (and for HDF5 outputs the named temporary was there before the signal).
before=$checks
streaming=(
  "wd-extract|$src/data/wikidata-sample.json|wd-extract {IN} -o {OUT}.h5"
  "wiki-extract|$src/data/enwiki-sample.xml|wiki-extract {IN} -o {OUT}"
  "cs-gen-entitycs|$d/docs.jsonl|cs-gen entitycs --kg $d/kg.h5 --langs fr,de -o {OUT} {IN}"
  "kg-align|$d/docs.jsonl|kg-align --kg $d/kg.h5 -o {OUT} {IN}"
  "kg-align-ner|$d/docs.jsonl|kg-align ner --kg $d/kg.h5 -o {OUT} {IN}"
  "verbalize-render|$d/subgraphs.jsonl|verbalize render --kg $d/kg.h5 --langs en,fr -o {OUT} {IN}"
  "sample-lang|$d/docs.jsonl|sample-lang en={IN} -o {OUT}"
)
[ -n "$spm" ] && streaming+=("pretrain-prepare|$d/kmlm.jsonl|pretrain prepare --tokenizer $spm --max-len 128 -o {OUT}.h5 {IN}")
signal=TERM
for entry in "${streaming[@]}" "${streaming[0]}"; do
  IFS='|' read -r name valid cmd <<< "$entry"
  # The last run repeats the first tool with SIGHUP (SIGINT is ignored by a script's background jobs).
  [ -d "$tmp/sigterm/$name" ] && { signal=HUP; name=$name-hup; }
  dir=$tmp/sigterm/$name
  mkdir -p "$dir"
  mkfifo "$dir/input"
  out=$dir/result
  [[ "$cmd" == *"{OUT}.h5"* ]] && out=$dir/result.h5
  printf 'precious\n' > "$out"
  line=${cmd//"{IN}"/$dir/input}
  line=${line//"{OUT}.h5"/$out}
  line=${line//"{OUT}"/$out}
  # shellcheck disable=SC2086
  "$bin"/$line -q --threads 2 2> "$dir/err" &
  pid=$!
  exec 7> "$dir/input"
  cat "$valid" >&7
  sleep 1
  if [[ "$out" == *.h5 ]]; then
    check
    ls "$dir" | grep -q '\.tmp\.' || fail "$name: no named temporary while running (the test would prove nothing)"
  fi
  kill -$signal $pid
  wait $pid
  rc=$?
  exec 7>&-
  expected=$((128 + $(kill -l $signal)))
  check
  [ "$rc" = $expected ] || fail "$name: SIG$signal: exit $rc, expected $expected: $(cat "$dir/err")"
  check
  [ "$(wc -l < "$dir/err")" = 1 ] && grep -q "interrupted by SIG$signal" "$dir/err" || fail "$name: SIG$signal message: $(cat "$dir/err")"
  check
  [ "$(cat "$out")" = precious ] || fail "$name: SIG$signal: the existing output was touched"
  no_litter "$name SIG$signal" "$dir"
done
echo "signals: $((checks - before)) checks"

# ---------------------------------------------------------------------------------------------
# 4. Side inputs and outputs follow the same policy: tables and lists of the wrong kind, shard
# stores of the wrong kind, --stats into a pipe and through a symlink.
before=$checks
side=$tmp/side
mkdir -p "$side"
side_case() {  # NAME EXPECTED_FILE_IN_MESSAGE COMMAND...
  local what=$1 named=$2
  shift 2
  "$@" -q 2> "$err" > /dev/null
  rc=$?
  one_line_error "$what" "$named"
  no_litter "$what" "$side"
}
side_case "kg-align --redirects kg.h5" kg.h5 "$bin/kg-align" --kg "$d/kg.h5" --redirects "$d/kg.h5" -o "$side/a.jsonl" "$d/docs.jsonl"
side_case "verbalize --cooc random" random.bin "$bin/verbalize" subgraphs --kg "$d/kg.h5" --cooc "$tmp/in/kg-align/random.bin" -o "$side/s.jsonl"
side_case "cs-gen --entities HDF5" cycles.h5 "$bin/cs-gen" kmlm --kg "$d/kg.h5" --langs fr --entities "$d/cycles.h5" -o "$side/k.jsonl"
side_case "wd-extract merge of docs" docs.jsonl "$bin/wd-extract" merge "$d/docs.jsonl" -o "$side/m.h5"
side_case "wd-extract merge of a complete store" kg.h5 "$bin/wd-extract" merge "$d/kg.h5" -o "$side/m.h5"
side_case "sample-lang --counts HDF5" kg.h5 "$bin/sample-lang" --counts "$d/kg.h5" "en=$d/docs.jsonl" -o "$side/o.jsonl"
# --stats into a pipe, and through a symlink that stays one.
printf 'old\n' > "$side/stats-target.json"
ln -s stats-target.json "$side/stats-link.json"
"$bin/kg-align" --kg "$d/kg.h5" -o "$side/a.jsonl" --stats >(cat > "$side/stats-from-fd.json") "$d/docs.jsonl" -q
rc=$?
wait $!
"$bin/kg-align" --kg "$d/kg.h5" -o "$side/b.jsonl" --stats "$side/stats-link.json" "$d/docs.jsonl" -q
check
[ "$rc" = 0 ] && python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$side/stats-from-fd.json" ||
  fail "--stats /dev/fd/N: rc $rc, $(head -c 200 "$side/stats-from-fd.json")"
check
[ -L "$side/stats-link.json" ] && python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$side/stats-target.json" ||
  fail "--stats through a symlink: $(ls -l "$side")"
no_litter "--stats" "$side"
echo "side inputs and outputs: $((checks - before)) checks"
echo "$checks checks, $failures failures"
[ "$failures" = 0 ]
