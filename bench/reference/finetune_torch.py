#!/usr/bin/env python3
"""The finetune benchmark's peer: token classification (NER) fine-tuning and evaluation of the same
XLM-R-shaped encoder in PyTorch (Debian's python3-torch) with transformers, on the same PAN-X data and thread count.

Words are split into pieces by Debian's spm_encode with the same SentencePiece model (once, before
any timing); a sentence is <s> pieces </s>, cut at --max-len, its label on each word's first piece
(-100 elsewhere), batches padded to their longest sequence rounded up to a multiple of 8, as kglm
pads. The model is transformers' own XLMRobertaForTokenClassification (dropout 0.1; run by the python of
`make references`). A step is
forward, cross-entropy, backward, clip_grad_norm_(1.0), AdamW and a linear warm-up/decay LambdaLR,
as the Hugging Face Trainer runs it; evaluation is a no_grad forward and an argmax per token.
--compile runs the model through torch.compile (current torch: bench/peers' environment), --dtype bf16
under torch.autocast, as the Trainer's --bf16 does; --warmup-batches N trains on N random batches before
the timer starts and evaluates the first N batches once untimed (the
compiler's first graphs; the timed loops still run every example).
Prints one JSON line: examples/s of training, sentences/s of evaluation, and the tokens trained (real,
and with the batches' padding).
"""
import argparse
import json
import random
import subprocess
import time

import torch
from torch import nn

from transformers import XLMRobertaConfig, XLMRobertaForTokenClassification

from hf_finetune_loop import adamw_linear, train_step


def read_panx(path):
    sentences, words, tags = [], [], []
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if not line:
            if words:
                sentences.append((words, tags))
            words, tags = [], []
            continue
        word, tag = line.split(":", 1)[1].rsplit("\t", 1)
        words.append(word)
        tags.append(tag)
    if words:
        sentences.append((words, tags))
    return sentences


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--spm", required=True)
    ap.add_argument("--vocab", type=int, required=True)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--max-len", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    ap.add_argument("--warmup-batches", type=int, default=0)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    train, test = read_panx(a.train), read_panx(a.test)
    labels = sorted({t for _, tags in train for t in tags})
    label_id = {t: i for i, t in enumerate(labels)}
    # Every distinct word's pieces through spm_encode, one word a line.
    vocabulary = sorted({w for s in train + test for w in s[0]})
    out = subprocess.run(["spm_encode", "--model", a.spm, "--output_format=id"], input="\n".join(vocabulary) + "\n",
                         capture_output=True, text=True, check=True).stdout.split("\n")
    pieces = {w: [(int(i) + 1) % a.vocab for i in out[k].split()] or [3] for k, w in enumerate(vocabulary)}
    pad, bos, eos = 1, 0, 2

    def encode(sentence):
        ids, targets = [bos], [-100]
        for w, t in zip(*sentence):
            p = pieces[w][: max(0, a.max_len - 1 - len(ids))]
            if not p:
                break
            ids += p
            targets += [label_id.get(t, -100)] + [-100] * (len(p) - 1)
        return ids + [eos], targets + [-100]

    def batch(examples):
        n = max(len(ids) for ids, _ in examples)
        n = (n + 7) // 8 * 8
        ids = torch.full((len(examples), n), pad, dtype=torch.long)
        tg = torch.full((len(examples), n), -100, dtype=torch.long)
        for r, (i, t) in enumerate(examples):
            ids[r, : len(i)] = torch.tensor(i)
            tg[r, : len(t)] = torch.tensor(t)
        return ids, tg

    train_enc, test_enc = [encode(s) for s in train], [encode(s) for s in test]
    model = XLMRobertaForTokenClassification(XLMRobertaConfig(
        vocab_size=a.vocab, hidden_size=a.hidden, num_hidden_layers=a.layers, num_attention_heads=a.heads,
        intermediate_size=a.ffn, max_position_embeddings=a.max_len + pad + 1, pad_token_id=pad, type_vocab_size=1,
        num_labels=len(labels), hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1))
    opt, sched = adamw_linear(model, 2e-5, (len(train_enc) + a.batch - 1) // a.batch * a.epochs)
    forward = torch.compile(model) if a.compile else model
    half = torch.bfloat16 if a.dtype == "bf16" else None

    def logits_of(ids):
        with torch.autocast("cpu", dtype=half, enabled=half is not None):
            return forward(input_ids=ids, attention_mask=ids.ne(pad)).logits

    def train_on(examples):
        ids, tg = batch(examples)
        logits = logits_of(ids)
        loss = nn.functional.cross_entropy(logits.float().reshape(-1, len(labels)), tg.reshape(-1), ignore_index=-100)
        train_step(model, loss, opt, sched)
        return ids

    rng = random.Random(0)
    model.train()
    for b in range(a.warmup_batches):
        train_on([train_enc[i] for i in rng.sample(range(len(train_enc)), a.batch)])
    tokens = padded = 0
    start = time.perf_counter()
    for _ in range(a.epochs):
        order = list(range(len(train_enc)))
        rng.shuffle(order)
        for b in range(0, len(order), a.batch):
            ids = train_on([train_enc[i] for i in order[b:b + a.batch]])
            tokens += int(ids.ne(pad).sum())
            padded += ids.numel()
    train_s = time.perf_counter() - start
    model.eval()
    with torch.no_grad():
        for b in range(0, min(a.warmup_batches, len(test_enc) // a.batch) * a.batch, a.batch):
            logits_of(batch(test_enc[b:b + a.batch])[0])
        start = time.perf_counter()
        for b in range(0, len(test_enc), a.batch):
            logits_of(batch(test_enc[b:b + a.batch])[0]).argmax(-1)
    test_s = time.perf_counter() - start
    print(json.dumps({"train_examples_per_s": len(train_enc) * a.epochs / train_s,
                      "test_sentences_per_s": len(test_enc) / test_s, "train_seconds": train_s,
                      "test_seconds": test_s, "train_tokens": tokens,
                      "train_padded_tokens": padded}))


main()
