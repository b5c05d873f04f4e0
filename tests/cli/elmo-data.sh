#!/usr/bin/env bash
# ELMo's data on real text. pretrain vocab: UD treebanks' word forms (en, it, sv, zh; pre-tokenised,
# --whitespace) against an independent count in Python (collections.Counter, bilm-tf's
# vocabulary.py's way, with ties put in byte order), per-language counts that add up, --max-words
# and --min-count; ICU word breaks on botchan.txt (English prose) and on Chinese; bad input and
# atomic outputs. pretrain prepare --words: every line's words as vocabulary ids (<UNK> for the
# others) between <S> and </S>, read back with h5py; the subword trainer refuses the dataset.
# Usage: elmo-data.sh BIN_DIR FIXTURES_DIR SOURCE_DIR
set -euo pipefail
bin=$1 fx=$2 src=$3
source "$src/tests/cli/common.sh" "$fx/ud/en_ewt-ud-dev.conllu"

# Sentences as their word forms separated by spaces (UD's tokenisation, as UDPipe's output).
for lang in en_ewt it_isdt sv_talbanken zh_gsd; do
  awk -F'\t' '/^#/ { next } NF == 0 { if (s != "") print s; s = ""; next }
              $1 ~ /^[0-9]+$/ { s = s == "" ? $2 : s " " $2 } END { if (s != "") print s }' \
    "$fx/ud/$lang-ud-dev.conllu" > "$tmp/${lang%%_*}.txt"
done
inputs=(en="$tmp/en.txt" it="$tmp/it.txt" sv="$tmp/sv.txt" zh="$tmp/zh.txt")
"$bin/pretrain" vocab --whitespace -q "${inputs[@]}" -o "$tmp/vocab.txt" --counts "$tmp/counts.tsv" \
  --stats "$tmp/stats.json"
python3 - "$tmp/vocab.txt" "$tmp/counts.tsv" "$tmp"/{en,it,sv,zh}.txt <<'PY' || fail "whitespace vocabulary"
import collections, sys
vocab = open(sys.argv[1], encoding="utf-8").read().split("\n")[:-1]
per_lang, total = {}, collections.Counter()
for path in sys.argv[3:]:
    c = collections.Counter(w for line in open(path, encoding="utf-8") for w in line.split())
    per_lang[path.rsplit("/", 1)[1][:-4]] = c
    total.update(c)
want = ["<S>", "</S>", "<UNK>"] + [w for w, n in sorted(total.items(), key=lambda x: (-x[1], x[0].encode()))]
assert vocab == want, (vocab[:20], want[:20], len(vocab), len(want))
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[2], encoding="utf-8")]
assert rows[0] == ["word", "total", "en", "it", "sv", "zh"], rows[0]
for word, n, *langs in rows[1:]:
    assert int(n) == total[word] == sum(map(int, langs)), word
    assert [int(x) for x in langs] == [per_lang[l][word] for l in ("en", "it", "sv", "zh")], word
assert [r[0] for r in rows[1:]] == vocab[3:]
print(len(vocab), "words")
PY
[ "$(stat_of "$tmp/stats.json" languages)" = 4 ] || fail "languages"
[ "$(stat_of "$tmp/stats.json" words)" -eq $(($(wc -l < "$tmp/vocab.txt") - 3)) ] || fail "stats words"
ok "--whitespace: the vocabulary and per-language counts of Python's Counter (4 UD treebanks)"

"$bin/pretrain" vocab --whitespace -q "${inputs[@]}" -o "$tmp/top.txt" --max-words 100
[ "$(wc -l < "$tmp/top.txt")" = 103 ] && cmp <(head -103 "$tmp/vocab.txt") "$tmp/top.txt" || fail "--max-words"
"$bin/pretrain" vocab --whitespace -q "${inputs[@]}" -o "$tmp/min.txt" --min-count 5 --counts "$tmp/min.tsv"
awk -F'\t' 'NR > 1 && $2 < 5 { exit 1 }' "$tmp/min.tsv" || fail "--min-count"
ok "--max-words keeps the most frequent words, --min-count drops rare ones"

# ICU word breaks: punctuation is its own token, words keep their apostrophes; Chinese is segmented
# into words (ICU's dictionary), not kept as whole lines.
"$bin/pretrain" vocab -q "en=$fx/tokenizer/botchan.txt" -o "$tmp/icu.txt" --counts "$tmp/icu.tsv"
head -3 "$tmp/icu.txt" | tr '\n' ' ' | grep -qx '<S> </S> <UNK> ' || fail "markers first"
sed -n 4,6p "$tmp/icu.txt" | grep -qx 'the\|,\|\.' || fail "the most frequent tokens: $(sed -n 4,6p "$tmp/icu.txt" | tr '\n' ' ')"
grep -qx "don't" "$tmp/icu.txt" || fail "ICU keeps don't whole"
awk -F'\t' 'NR > 2 && $2 > last { exit 1 } NR > 1 { last = $2 }' "$tmp/icu.tsv" || fail "counts not falling"
sed 's/ //g' "$tmp/zh.txt" > "$tmp/zh-joined.txt"  # no spaces at all: ICU must find the words
"$bin/pretrain" vocab -q "zh=$tmp/zh-joined.txt" -o "$tmp/zh-icu.txt"
[ "$(wc -l < "$tmp/zh-icu.txt")" -gt 1000 ] || fail "Chinese was not segmented: $(wc -l < "$tmp/zh-icu.txt") words"
grep -qx '公司' "$tmp/zh-icu.txt" || fail "公司 (company) is not a word"
ok "ICU word breaks: English punctuation and contractions, Chinese without spaces"

# Bad input: no words, a missing file, no output; a failed run leaves no vocab.txt.
printf '\n\n' > "$tmp/blank.txt"
code=0; "$bin/pretrain" vocab -q "en=$tmp/blank.txt" -o "$tmp/none.txt" 2> "$tmp/err" || code=$?
[ $code -eq 1 ] && grep -q "no words" "$tmp/err" && [ ! -e "$tmp/none.txt" ] || fail "no words: exit $code"
code=0; "$bin/pretrain" vocab -q "en=$tmp/missing.txt" -o "$tmp/none.txt" 2> "$tmp/err" || code=$?
[ $code -eq 1 ] && grep -q missing.txt "$tmp/err" || fail "missing input: exit $code"
code=0; "$bin/pretrain" vocab -q "en=$tmp/en.txt" 2> "$tmp/err" || code=$?
[ $code -eq 2 ] || fail "no -o: exit $code"
ls "$tmp" | grep -q '\.tmp\.' && fail "temporary file left"
ok "bad input: clear errors, no output left"
# pretrain prepare --words: the ids of each line's words, framed, lines longer than --max-len split.
"$bin/pretrain" vocab --whitespace -q "${inputs[@]}" -o "$tmp/v2k.txt" --max-words 2000
"$bin/pretrain" prepare --words --whitespace --vocab "$tmp/v2k.txt" --max-len 40 -q "${inputs[@]}" \
  -o "$tmp/words.h5" --stats "$tmp/prep.json"
/usr/bin/python3 - "$tmp/words.h5" "$tmp/v2k.txt" "$tmp"/{en,it,sv,zh}.txt <<'PY' || fail "word dataset"
import h5py, sys
f = h5py.File(sys.argv[1], "r")
vocab = open(sys.argv[2], encoding="utf-8").read().split("\n")[:-1]
index = {w: i for i, w in enumerate(vocab)}
assert f.attrs["tokenizer_kind"] in (b"words", "words"), f.attrs["tokenizer_kind"]
assert int(f.attrs["vocab_size"]) == len(vocab) == 2003
ids, offsets = f["tokens/ids"][:], f["sequences/offsets"][:]
words = [index.get(w, 2) for path in sys.argv[3:] for line in open(path, encoding="utf-8") for w in line.split()]
inner = []
for s in range(len(offsets) - 1):
    seq = list(ids[offsets[s]:offsets[s + 1]])
    assert seq[0] == 0 and seq[-1] == 1 and len(seq) <= 40, seq
    inner += seq[1:-1]
assert inner == words, (len(inner), len(words))
assert 2 in inner and max(inner) == 2002
print(len(offsets) - 1, "sequences")
PY
[ "$(stat_of "$tmp/prep.json" split_lines)" -gt 0 ] || fail "no line was split at --max-len 40"
code=0; "$bin/pretrain" --data "$tmp/words.h5" --steps 1 --out "$tmp/mlm" -q 2> "$tmp/err" || code=$?
[ $code -eq 2 ] && grep -q "word-level" "$tmp/err" || fail "the MLM trainer took a word dataset: exit $code"
code=0; "$bin/pretrain" prepare --words --vocab "$fx/tokenizer/botchan.txt" -q "en=$tmp/en.txt" -o "$tmp/x.h5" \
  2> "$tmp/err" || code=$?
[ $code -eq 1 ] && grep -q "starts with <S>, </S>, <UNK>" "$tmp/err" && [ ! -e "$tmp/x.h5" ] || fail "not a vocabulary: exit $code"
code=0; "$bin/pretrain" prepare --words --tokenizer "$tmp/v2k.txt" -q "en=$tmp/en.txt" -o "$tmp/x.h5" 2> /dev/null || code=$?
[ $code -eq 2 ] || fail "--words with --tokenizer: exit $code"
ok "prepare --words: ids of the words (<UNK> beyond the vocabulary), <S> … </S>, split at --max-len; MLM refuses it"
echo "$pass checks passed"
