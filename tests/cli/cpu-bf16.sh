#!/usr/bin/env bash
# --precision bf16 on the CPU (the matrix products in bfloat16, fp32 accumulation; man 7 kglm) on the
# models make demo trained (install_tree's run, fixture demo_run) and real data:
# - probe on the X-FACTR fixtures (4 languages, 4 relations, 3 decoding methods): at least 98% of
#   the predictions identical to fp32's, and the scores not all fp32's (else bf16 did not run);
# - finetune on PAN-X en (2,000 sentences of the fixture's dev-en.tsv; the next 1,000 as dev): the
#   dev F1 within 0.5 points of the fp32 run's, the runs not identical; evaluate and predict too;
# - pretrain embed: the encoder's sentence embeddings and the ELMo vectors within bf16's tolerance;
# - verbalize generate runs (the demo's T5 is below the size where products switch to bf16);
# - fp16 on the CPU is a usage error; on a CPU without AVX512_BF16/AMX-BF16 bf16 is refused in one
#   line (then the rest is skipped).
# Usage: cpu-bf16.sh BIN_DIR FIXTURES_DIR SOURCE_DIR DEMO_RUN
set -euo pipefail
bin=$1 fx=$2 src=$3 run=$4
source "$src/tests/cli/common.sh" "$fx/panx/dev-en.tsv"
[ -d "$run/ckpt" ] || { echo "no demo run at $run (install_tree makes it): skipped"; exit 77; }
x=$fx/xfactr

code=0; "$bin/finetune" evaluate --model "$run/finetune-ner" --test "en=$fx/panx/dev-en.tsv" -o "$tmp/x" \
  --precision fp16 2> "$tmp/err" || code=$?
[ $code -eq 2 ] || fail "--precision fp16 on the CPU: exit $code, expected 2: $(cat "$tmp/err")"
if ! grep -qw -e avx512_bf16 -e amx_bf16 /proc/cpuinfo; then
  code=0; "$bin/probe" --model "$run/ckpt" --kg "$run/kg.h5" --relations P19 --templates "$x/templates" \
    --precision bf16 -o "$tmp/p" 2> "$tmp/err" || code=$?
  [ $code -eq 1 ] && [ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -q "needs AVX512_BF16 or AMX-BF16" "$tmp/err" ||
    fail "bf16 on a CPU without it: exit $code: $(cat "$tmp/err")"
  echo "this CPU has no bf16 instructions: refused in one line ($(cat "$tmp/err")); the rest is skipped"
  exit 77
fi

# 1. probe
"$bin/wd-extract" "$fx/xfactr-kg-dev.json.gz" -o "$tmp/kg.h5" --langs en,fr,ru,es -q
for p in fp32 bf16; do
  "$bin/probe" -q --model "$run/ckpt" --facts "$x/facts" --templates "$x/templates" --aliases "$x/alias" \
    --kg "$tmp/kg.h5" --lang en,fr,ru,es --relations P19,P36,P27,P103 --max-facts 60 \
    --method independent,order,confidence -o "$tmp/probe-$p" --predictions "$tmp/probe-$p.jsonl" --precision $p
done
agreement=$(python3 - "$tmp/probe-fp32.jsonl" "$tmp/probe-bf16.jsonl" <<'PY'
import json, sys
a, b = ([json.loads(l) for l in open(p)] for p in sys.argv[1:])
key = lambda r: (r["method"], r["lang"], r["relation"], r["sub_uri"], r["obj_uri"])
assert [key(r) for r in a] == [key(r) for r in b] and len(a) > 1000, (len(a), len(b))
same = sum((r["num_mask"], r["token_ids"]) == (s["num_mask"], s["token_ids"]) for r, s in zip(a, b))
moved = sum(r["score"] != s["score"] for r, s in zip(a, b))
assert same >= 0.98 * len(a), f"{same} of {len(a)} predictions identical"
assert moved >= len(a) // 2, f"only {moved} of {len(a)} scores differ from fp32's: bf16 did not run"
print(f"{same} of {len(a)} ({100 * same / len(a):.1f}%)")
PY
) || fail "probe: bf16 against fp32"
ok "probe on the X-FACTR fixtures: $agreement predictions identical to fp32's"

# 2. finetune on PAN-X en
awk 'BEGIN { n = 0 } /^$/ { n++ } n < 2000' "$fx/panx/dev-en.tsv" > "$tmp/train.tsv"
awk 'BEGIN { n = 0 } /^$/ { n++ } n >= 2000 && n < 3000' "$fx/panx/dev-en.tsv" | sed '1{/^$/d}' > "$tmp/dev.tsv"
for p in fp32 bf16; do
  "$bin/finetune" --task token --init "$run/ckpt" --train "en=$tmp/train.tsv" --dev "en=$tmp/dev.tsv" --epochs 3 \
    --batch 16 --lr 3e-3 --max-len 64 --seeds 11 --out "$tmp/ner-$p" --quiet --precision $p
done
f1() { python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['dev']['mean'])" "$1"; }
fp32=$(f1 "$tmp/ner-fp32/results.json") bf16=$(f1 "$tmp/ner-bf16/results.json")
python3 -c "import sys; a, b = map(float, sys.argv[1:]); assert abs(a - b) <= 0.005 and a > 0.05, (a, b)" "$fp32" "$bf16" ||
  fail "finetune PAN-X en dev F1: fp32 $fp32, bf16 $bf16"
cmp -s "$tmp/ner-fp32/seed-11/best/model.safetensors" "$tmp/ner-bf16/seed-11/best/model.safetensors" &&
  fail "the bf16 fine-tuning ended with fp32's weights: bf16 did not run"
"$bin/finetune" evaluate --model "$tmp/ner-bf16" --test "en=$tmp/dev.tsv" -o "$tmp/eval" --precision bf16 --quiet
"$bin/finetune" predict --model "$tmp/ner-bf16/seed-11/best" "$tmp/dev.tsv" -o "$tmp/pred.tsv" --precision bf16 --quiet
[ "$(grep -c . "$tmp/pred.tsv")" = "$(grep -c . "$tmp/dev.tsv")" ] || fail "finetune predict --precision bf16"
points=$(python3 -c "import sys; print('fp32 %.2f, bf16 %.2f' % tuple(100 * float(v) for v in sys.argv[1:]))" "$fp32" "$bf16")
ok "finetune on PAN-X en: dev F1 $points; evaluate and predict in bf16"

# 3. pretrain embed (the encoder and ELMo)
head -300 "$run/spm-corpus.txt" > "$tmp/sentences.txt"
sed -n 1,200p "$run/kmlm-balanced/en.jsonl" | python3 -c "
import json, sys
for l in sys.stdin: print(' '.join(json.loads(l)['text'].split()[:30]))" > "$tmp/words.txt"
for p in fp32 bf16; do
  "$bin/pretrain" embed --model "$run/ckpt" -o "$tmp/emb-$p.h5" --precision $p --quiet "$tmp/sentences.txt"
  "$bin/pretrain" embed --model "$run/elmo/ckpt" -o "$tmp/elmo-$p.hdf5" --precision $p --quiet "$tmp/words.txt"
done
/usr/bin/python3 - "$tmp" <<'PY' || fail "pretrain embed: bf16 against fp32"
import sys
import h5py
import numpy as np
t = sys.argv[1]
a, b = (h5py.File(f"{t}/emb-{p}.h5")["embeddings"][()] for p in ("fp32", "bf16"))
cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
assert a.shape == b.shape and a.shape[0] == 300 and cos.min() > 0.999 and not np.array_equal(a, b), (a.shape, cos.min())
e32, e16 = (h5py.File(f"{t}/elmo-{p}.hdf5") for p in ("fp32", "bf16"))
worst = max(np.abs(e32[k][()] - e16[k][()]).max() / np.abs(e32[k][()]).max() for k in e32 if k != "sentence_to_index")
assert worst < 0.05, worst
print(f"encoder cosine >= {cos.min():.5f}; ELMo vectors within {worst:.4f} of the largest")
PY
ok "pretrain embed: encoder embeddings and ELMo vectors follow fp32's"

# 4. verbalize generate
head -40 "$run/subgraphs.jsonl" > "$tmp/subgraphs.jsonl"
"$bin/verbalize" generate --model "$run/tekgen" -o "$tmp/gen.jsonl" --precision bf16 --quiet "$tmp/subgraphs.jsonl"
[ "$(wc -l < "$tmp/gen.jsonl")" -eq 40 ] || fail "verbalize generate --precision bf16"
ok "verbalize generate --precision bf16"
echo "passed $pass"
