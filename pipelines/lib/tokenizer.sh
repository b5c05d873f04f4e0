# train_tokenizer PREFIX VOCAB INPUT...: a SentencePiece model (PREFIX.model, PREFIX.vocab) trained
# with Debian's spm_train on the "text" of the JSONL files (plain or zstd; or directories of *.jsonl)
# given, so that a pipeline without a tokenizer of its own needs no download. PREFIX-corpus.txt
# keeps the text.
train_tokenizer() {
  local prefix=$1 vocab=$2
  shift 2
  local source
  for source in "$@"; do
    if [[ -d "$source" ]]; then zstd -dcfq "$source"/*.jsonl; else zstd -dcfq "$source"; fi
  done | python3 -c '
import json, sys
# A line per paragraph: spm_train skips lines longer than --max_sentence_length (a whole article).
for line in sys.stdin:
    for paragraph in json.loads(line)["text"].split("\n"):
        if paragraph.strip():
            sys.stdout.write(paragraph + "\n")
' > "$prefix-corpus.txt"
  spm_train --input="$prefix-corpus.txt" --model_prefix="$prefix" --vocab_size="$vocab" --hard_vocab_limit=false \
    --character_coverage=1.0 --max_sentence_length=65536 --num_threads="${SLURM_CPUS_PER_TASK:-2}" --minloglevel=2 \
    > /dev/null 2>&1 ||
    { echo "spm_train failed on $prefix-corpus.txt" >&2; return 1; }
}
