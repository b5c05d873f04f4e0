# train_tokenizer PREFIX VOCAB INPUT...: a SentencePiece model (PREFIX.model, PREFIX.vocab) trained
# with Debian's spm_train on the "text" of the JSONL files (or directories of them) given, so that a
# pipeline without a tokenizer of its own needs no download. PREFIX-corpus.txt keeps the text.
train_tokenizer() {
  local prefix=$1 vocab=$2
  shift 2
  python3 - "$prefix-corpus.txt" "$@" << 'PY'
import json, os, sys
with open(sys.argv[1], "w", encoding="utf-8") as out:
    for source in sys.argv[2:]:
        paths = sorted(os.path.join(source, n) for n in os.listdir(source) if n.endswith(".jsonl")) if os.path.isdir(source) else [source]
        for path in paths:
            for line in open(path, encoding="utf-8"):
                out.write(json.loads(line)["text"].replace("\n", " ") + "\n")
PY
  spm_train --input="$prefix-corpus.txt" --model_prefix="$prefix" --vocab_size="$vocab" --hard_vocab_limit=false \
    --character_coverage=1.0 --num_threads="${SLURM_CPUS_PER_TASK:-2}" --minloglevel=2 > /dev/null 2>&1 ||
    { echo "spm_train failed on $prefix-corpus.txt" >&2; return 1; }
}
