#!/usr/bin/env bash
# sample-lang's memory stays bounded on a large input: 1.1 GB of real multilingual text (the X-FACTR
# alias lines of 10 languages, joined 8 to a line and repeated with a skew) sampled with α = 1 into
# one shuffled stream with --memory-mb 64. Peak RSS must stay under 300 MB (the buffer plus the
# reader's in-flight batches), the shuffle must have spilled, and the output must hold exactly the
# input's lines (α = 1 at the input's total keeps every record once) in a different order.
# Usage: sample-lang-memory.sh BIN_DIR FIXTURES_DIR SOURCE_DIR
set -euo pipefail
bin=$1
fx=$2
src=$3
source "$src/tests/cli/common.sh" "$fx/xfactr/alias"

python3 - "$fx/xfactr/alias" "$tmp/corpus" <<'PY'
import os, sys
src, out = sys.argv[1], sys.argv[2]
os.makedirs(out)
copies = {"en": 220, "es": 100, "fr": 70, "nl": 40, "ru": 28, "ja": 20, "zh": 14, "ko": 8, "tr": 4, "vi": 4}
for lang, n in copies.items():
    lines = [l for l in open(os.path.join(src, lang + ".txt"), "rb").read().split(b"\n") if l]
    joined = b"".join(b" ".join(lines[i:i + 8]).replace(b"\t", b" ") + b"\n" for i in range(0, len(lines), 8))
    with open(os.path.join(out, lang + ".txt"), "wb") as f:
        for c in range(n):
            f.write(b"%d " % c)  # copies differ in their first line, so the multiset check sees copies
            f.write(joined)
PY
size=$(du -sb "$tmp/corpus" | cut -f1)
[ "$size" -gt 1000000000 ] || fail "the generated corpus has only $size bytes"

peak_kb=$(python3 - "$bin/sample-lang" "$tmp/corpus" "$tmp/out.txt" "$tmp/stats.json" <<'PY'
import resource, subprocess, sys
sl, corpus, out, stats = sys.argv[1:]
subprocess.run([sl, corpus, "--alpha", "1", "-o", out, "--memory-mb", "64", "--threads", "2", "--stats", stats, "-q"],
               check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
)
echo "input $size bytes, peak RSS $((peak_kb / 1024)) MB, $(stat_of "$tmp/stats.json" shuffle_runs) shuffle runs"
[ "$peak_kb" -lt $((300 * 1024)) ] || fail "peak RSS $((peak_kb / 1024)) MB with --memory-mb 64"
[ "$(stat_of "$tmp/stats.json" shuffle_runs)" -ge 10 ] || fail "the shuffle should have spilled"
ok "1.1 GB sampled in $((peak_kb / 1024)) MB of memory"

python3 - "$tmp/out.txt" "$tmp/corpus" <<'PY' || fail "the output is not a shuffle of the input"
import os, sys
def lines(paths):
    for p in paths:
        with open(p, "rb") as f:
            yield from f
out, corpus = sys.argv[1], sys.argv[2]
ins = [os.path.join(corpus, n) for n in sorted(os.listdir(corpus))]
def digest(paths):
    total, count = 0, 0
    for l in lines(paths):
        total = (total + hash(l)) & (2 ** 64 - 1)  # an order-independent hash of the multiset
        count += 1
    return total, count
a, b = digest([out]), digest(ins)
print("output %d lines, input %d lines" % (a[1], b[1]))
head_out = [l for _, l in zip(range(1000), lines([out]))]
head_in = [l for _, l in zip(range(1000), lines(ins))]
sys.exit(0 if a == b and head_out != head_in else 1)
PY
ok "the output holds exactly the input's lines, shuffled"
echo "sample-lang-memory: $pass groups passed"
