#!/usr/bin/env bash
# Sharded, streaming token data: prepare --shards 4 of a 100 MB token dataset (botchan.txt × 100),
# --data as a glob; with --cache-mb 8 (the tokens are 12× that) a rank's peak RSS stays within the
# cache, the per-sequence index and a fixed allowance of the run on a tiny dataset, far below the
# whole-in-memory run's, with bit-identical losses; 2 MPI ranks streaming equal 1 process.
set -euo pipefail
bin=$1 fixtures=$2 src=$3
spm=$fixtures/tokenizer/spm-test-vocab1000.model
text=$fixtures/tokenizer/botchan.txt
source "$src/tests/cli/common.sh" "$spm"

python3 - "$text" "$tmp/big.txt" <<'PY'
import sys
lines = [l for l in open(sys.argv[1], encoding="utf-8") if l.strip()]
with open(sys.argv[2], "w", encoding="utf-8") as f:
    for copy in range(100):
        f.writelines(f"{copy} {l}" for l in lines)
PY
"$bin/pretrain" prepare --tokenizer "$spm" --max-len 64 --threads 2 --shards 4 -o "$tmp/big.h5" --quiet \
  --stats "$tmp/prep.json" "en=$tmp/big.txt"
"$bin/pretrain" prepare --tokenizer "$spm" --max-len 64 -o "$tmp/small.h5" --quiet "en=$text"
[ "$(ls "$tmp"/big-0000?-of-00004.h5 | wc -l)" = 4 ] && [ ! -e "$tmp/big.h5" ] || fail "prepare --shards 4: $(ls "$tmp")"
tokens=$(stat_of "$tmp/prep.json" tokens) sequences=$(stat_of "$tmp/prep.json" sequences)
ok "prepare --shards 4: $sequences sequences, $tokens tokens ($((tokens * 9 >> 20)) MB of token columns)"

model=(--layers 2 --hidden 32 --heads 4 --ffn 64 --batch 16 --accumulate 2 --lr 3e-3 --threads 1 --seed 3 --quiet
  --steps 12 --eval-max 64 --eval-every 6)
# run COMMAND...: runs it and prints the peak RSS (MB) of its largest process.
run() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
PY
}
glob="$tmp/big-*-of-00004.h5"
small=$(run "$bin/pretrain" --data "$tmp/small.h5" "${model[@]}" --out "$tmp/o-small")
stream=$(run "$bin/pretrain" --data "$glob" --cache-mb 8 "${model[@]}" --out "$tmp/o-stream" \
  --log "$tmp/stream.jsonl" --stats "$tmp/stream.json")
whole=$(run "$bin/pretrain" --data "$glob" "${model[@]}" --out "$tmp/o-whole" --log "$tmp/whole.jsonl" \
  --stats "$tmp/whole.json")
echo "peak RSS: tiny dataset $small MB, streaming through 8 MB $stream MB, whole $whole MB"
[ "$(stat_of "$tmp/stream.json" data_streaming)" = 1 ] && [ "$(stat_of "$tmp/whole.json" data_streaming)" = 0 ] ||
  fail "--cache-mb 8 should stream and the default hold the whole dataset"
[ "$(stat_of "$tmp/stream.json" data_files)" = 4 ] || fail "the glob should name 4 files"
[ "$(stat_of "$tmp/stream.json" token_cache_peak_mb)" -le 9 ] || fail "the cache held more than 8 MB + one block"
index=$((sequences * 21 >> 20))
# AddressSanitizer keeps freed blocks in quarantine (256 MB): RSS says nothing there.
bounded() { [ -n "${KGLM_TEST_SANITIZED:-}" ] || [ "$1" -le $((small + 8 + index + 40)) ]; }
bounded "$stream" || fail "streaming peak RSS $stream MB > tiny run $small + cache 8 + index $index + 40 MB"
[ -n "${KGLM_TEST_SANITIZED:-}" ] || [ "$whole" -ge $((stream + 50)) ] ||
  fail "the whole dataset ($whole MB) should cost far more than streaming ($stream MB)"
python3 - "$tmp/stream.jsonl" "$tmp/whole.jsonl" <<'PY' || fail "streaming changes the losses"
import json, sys
a, b = ([(r["step"], r.get("loss"), r.get("eval_loss")) for r in map(json.loads, open(p))] for p in sys.argv[1:])
assert a == b, (a, b)
PY
ok "--cache-mb 8: peak RSS $stream MB (whole dataset: $whole MB), the same losses"

if command -v mpirun > /dev/null; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  ranks=$(run timeout 300 mpirun -np 2 --oversubscribe "$bin/pretrain" --data "$glob" --cache-mb 8 "${model[@]}" \
    --out "$tmp/o-mpi" --log "$tmp/mpi.jsonl")
  python3 - "$tmp/stream.jsonl" "$tmp/mpi.jsonl" <<'PY' || fail "2 streaming ranks differ from 1 process"
import json, sys
a, b = ([(r["step"], r.get("loss", r.get("eval_loss"))) for r in map(json.loads, open(p))] for p in sys.argv[1:])
assert [s for s, _ in a] == [s for s, _ in b] and max(abs(x - y) for (_, x), (_, y) in zip(a, b)) <= 1e-6, (a, b)
PY
  bounded "$ranks" || fail "a streaming rank's peak RSS is $ranks MB"
  ok "2 ranks streaming the glob: the same losses, peak RSS $ranks MB a rank"
fi
echo "$pass checks passed"
