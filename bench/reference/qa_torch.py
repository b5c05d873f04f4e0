#!/usr/bin/env python3
"""The QA benchmark's peer: extractive QA fine-tuning and evaluation of the same XLM-R-shaped model
in PyTorch (Debian's python3-torch) with transformers' own XLMRobertaForQuestionAnswering, on the
same SQuAD-format data, initial weights and thread count.

Features are built before any timing as Hugging Face's run_qa.py builds them: the fast tokenizer
converted from the model's SentencePiece file, question then context, truncation of the context
only, --max-len 384, stride 128 (the windows' overlap), overflowing windows, offsets; training
targets as run_qa's prepare_train_features. A training step is forward with start and end positions
(transformers' loss), backward, clip_grad_norm_(1.0), AdamW and a linear warm-up/decay LambdaLR, on
batches padded to their longest window rounded up to 8 (the data collator's padding). Evaluation
times the no_grad forward and run_qa's post-processing (n-best 20 starts and ends of every window,
answers at most 30 tokens, the best start + end). Prints one JSON line: training windows/s,
evaluation questions/s, and the windows and padded positions trained.
"""
import argparse
import json
import random
import time

import numpy as np
import torch
from transformers import XLMRobertaForQuestionAnswering, XLMRobertaTokenizerFast

from hf_finetune_loop import adamw_linear, train_step


def read_squad(path):
    out = []
    for article in json.load(open(path, encoding="utf-8"))["data"]:
        for p in article["paragraphs"]:
            for q in p["qas"]:
                out.append((q["id"], q["question"].lstrip(), p["context"], q["answers"]))
    return out


def features(tok, examples, max_len, stride):
    enc = tok([q for _, q, _, _ in examples], [c for _, _, c, _ in examples], truncation="only_second",
              max_length=max_len, stride=stride, return_overflowing_tokens=True, return_offsets_mapping=True)
    out = []
    for i, ids in enumerate(enc["input_ids"]):
        example = enc["overflow_to_sample_mapping"][i]
        seq = enc.sequence_ids(i)
        offsets = [o if seq[k] == 1 else None for k, o in enumerate(enc["offset_mapping"][i])]
        answers = examples[example][3]
        start = end = 0
        if answers:
            s_char = answers[0]["answer_start"]
            e_char = s_char + len(answers[0]["text"])
            first = seq.index(1)
            last = len(seq) - 1 - seq[::-1].index(1)
            if offsets[first][0] <= s_char and offsets[last][1] >= e_char:
                start = first
                while start <= last and offsets[start][0] <= s_char:
                    start += 1
                start -= 1
                end = last
                while end >= first and offsets[end][1] >= e_char:
                    end -= 1
                end += 1
        out.append((example, ids, offsets, start, end))
    return out


def pad(batch, pad_id):
    n = (max(len(f[1]) for f in batch) + 7) // 8 * 8
    ids = torch.full((len(batch), n), pad_id, dtype=torch.long)
    for r, f in enumerate(batch):
        ids[r, : len(f[1])] = torch.tensor(f[1])
    return ids


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--train", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--max-len", type=int, default=384)
    ap.add_argument("--stride", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    tok = XLMRobertaTokenizerFast.from_pretrained(a.model)
    train, test = read_squad(a.train), read_squad(a.test)
    train_f, test_f = features(tok, train, a.max_len, a.stride), features(tok, test, a.max_len, a.stride)
    model = XLMRobertaForQuestionAnswering.from_pretrained(a.model)
    pad_id = model.config.pad_token_id
    opt, sched = adamw_linear(model, 3e-5, (len(train_f) + a.batch - 1) // a.batch * a.epochs)
    rng = random.Random(0)
    positions = padded = 0
    start = time.perf_counter()
    model.train()
    for _ in range(a.epochs):
        order = list(range(len(train_f)))
        rng.shuffle(order)
        for b in range(0, len(order), a.batch):
            batch = [train_f[i] for i in order[b:b + a.batch]]
            ids = pad(batch, pad_id)
            positions += sum(len(f[1]) for f in batch)
            padded += ids.numel()
            loss = model(input_ids=ids, attention_mask=ids.ne(pad_id),
                         start_positions=torch.tensor([f[3] for f in batch]),
                         end_positions=torch.tensor([f[4] for f in batch])).loss
            train_step(model, loss, opt, sched)
    train_s = time.perf_counter() - start
    start = time.perf_counter()
    model.eval()
    best = {}
    with torch.no_grad():
        for b in range(0, len(test_f), a.batch):
            batch = test_f[b:b + a.batch]
            ids = pad(batch, pad_id)
            out = model(input_ids=ids, attention_mask=ids.ne(pad_id))
            for r, (example, _, offsets, _, _) in enumerate(batch):
                s_logits, e_logits = out.start_logits[r].numpy(), out.end_logits[r].numpy()
                for s in np.argsort(s_logits)[-1:-21:-1]:
                    for e in np.argsort(e_logits)[-1:-21:-1]:
                        if s >= len(offsets) or e >= len(offsets) or offsets[s] is None or offsets[e] is None:
                            continue
                        if e < s or e - s + 1 > 30:
                            continue
                        score = s_logits[s] + e_logits[e]
                        if example not in best or score > best[example][0]:
                            best[example] = (score, test[example][2][offsets[s][0]:offsets[e][1]])
    test_s = time.perf_counter() - start
    print(json.dumps({"train_windows_per_s": len(train_f) * a.epochs / train_s, "test_questions_per_s": len(test) / test_s,
                      "train_seconds": train_s, "test_seconds": test_s, "train_windows": len(train_f),
                      "test_windows": len(test_f), "train_positions": positions, "train_padded_positions": padded}))


main()
