#!/usr/bin/python3
"""The peer of bench/verbalize.py: the same T5 verbaliser decoded by transformers' own
T5ForConditionalGeneration.generate() (greedy, or beam search with early_stopping=True, as kglm's)
where the python has transformers (the environment of `make references`); elsewhere (a GPU
machine's torch without transformers, or --own-loop) in python3-torch, decoding the same
sources with a hand-written loop over the same key-value cache (per decoder block, self-attention
keys and values appended each step, cross-attention keys and values computed once), greedy or beam
search as kglm's (the best 2K candidates per step, </s> finishing a hypothesis only among the best
K, an example done when K have finished, Σ log p / length ranking). The model is the module of
tests/reference/make_t5_fixtures.py (Hugging Face's T5 forward), weights from model.safetensors.

Prints one JSON line: sentences, seconds (decoding only), sentences_per_second; --out writes the
token ids, one line per source.
"""
import argparse
import json
import math
import os
import sys
import time

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "tests", "reference"))
from make_t5_fixtures import T5  # noqa: E402
from safetensors_min import read_safetensors  # noqa: E402


def additive(mask):
    """[B, S] 1/0 key mask → [B, 1, 1, S] additive float32 mask (0 or float32's min), as HF's."""
    return (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min


def load(model_dir):
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    c = {k: cfg[k] for k in ("vocab_size", "d_model", "d_kv", "d_ff", "num_layers", "num_heads",
                             "relative_attention_num_buckets", "relative_attention_max_distance",
                             "feed_forward_proj", "tie_word_embeddings")}
    c["num_decoder_layers"] = cfg.get("num_decoder_layers") or cfg["num_layers"]
    c["eps"] = cfg.get("layer_norm_epsilon", 1e-6)
    model = T5(c)
    weights, _ = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    model.load_state_dict(weights)
    return model.eval(), cfg


class Cache:
    """Per decoder block: self-attention K, V [rows, heads, capacity, d_kv], cross K, V [rows, heads, S, d_kv]."""

    def __init__(self, model, encoded, rows, capacity):
        blocks = model.decoder.block
        c = model.c
        shape = (rows, c["num_heads"], capacity, c["d_kv"])
        self.k = [torch.zeros(shape) for _ in blocks]
        self.v = [torch.zeros(shape) for _ in blocks]
        self.ck = [b.layer[1].EncDecAttention.split(b.layer[1].EncDecAttention.k(encoded)) for b in blocks]
        self.cv = [b.layer[1].EncDecAttention.split(b.layer[1].EncDecAttention.v(encoded)) for b in blocks]
        self.bias = blocks[0].layer[0].SelfAttention.position_bias(capacity, capacity)  # [1, A, T, T]

    def reorder(self, index):
        for lst in (self.k, self.v, self.ck, self.cv):
            for i, t in enumerate(lst):
                lst[i] = t.index_select(0, index)


def step(model, cache, tokens, t, cross_mask):
    x = model.shared(tokens)[:, None, :]
    for i, blk in enumerate(model.decoder.block):
        sa = blk.layer[0]
        att = sa.SelfAttention
        h = sa.layer_norm(x)
        cache.k[i][:, :, t:t + 1] = att.split(att.k(h))
        cache.v[i][:, :, t:t + 1] = att.split(att.v(h))
        q = att.split(att.q(h))
        scores = q @ cache.k[i][:, :, :t + 1].transpose(-1, -2) + cache.bias[:, :, t:t + 1, :t + 1]
        ctx = torch.softmax(scores, -1) @ cache.v[i][:, :, :t + 1]
        x = x + att.o(ctx.transpose(1, 2).reshape(x.shape[0], 1, -1))
        ca = blk.layer[1]
        cross = ca.EncDecAttention
        q = cross.split(cross.q(ca.layer_norm(x)))
        ctx = torch.softmax(q @ cache.ck[i].transpose(-1, -2) + cross_mask, -1) @ cache.cv[i]
        x = x + cross.o(ctx.transpose(1, 2).reshape(x.shape[0], 1, -1))
        x = blk.layer[2](x)
    return model.head(model.decoder.final_layer_norm(x))[:, 0, :]


def pad(sources):
    length = max(len(s) for s in sources)
    ids = torch.zeros(len(sources), length, dtype=torch.long)
    mask = torch.zeros(len(sources), length, dtype=torch.long)
    for i, s in enumerate(sources):
        ids[i, :len(s)] = torch.tensor(s)
        mask[i, :len(s)] = 1
    return ids, mask


def greedy(model, cfg, sources, max_len):
    ids, mask = pad(sources)
    encoded = model.encoder(model.shared(ids), additive(mask))
    cache = Cache(model, encoded, len(sources), max_len)
    cross = additive(mask)
    tokens = torch.full((len(sources),), cfg["decoder_start_token_id"], dtype=torch.long)
    out = [[] for _ in sources]
    done = [False] * len(sources)
    for t in range(max_len):
        logits = step(model, cache, tokens, t, cross)
        nxt = logits.argmax(-1)
        for i in range(len(sources)):
            if done[i]:
                nxt[i] = cfg["pad_token_id"]
            elif nxt[i].item() == cfg["eos_token_id"]:
                done[i] = True
            else:
                out[i].append(nxt[i].item())
        if all(done):
            break
        tokens = nxt
    return out


def beam(model, cfg, sources, max_len, k):
    b = len(sources)
    rows = [s for s in sources for _ in range(k)]
    ids, mask = pad(rows)
    encoded = model.encoder(model.shared(ids), additive(mask))
    cache = Cache(model, encoded, b * k, max_len)
    cross = additive(mask)
    eos = cfg["eos_token_id"]
    score = torch.full((b * k,), -math.inf, dtype=torch.float64)
    score[::k] = 0
    beams = [[] for _ in range(b * k)]
    finished = [[] for _ in range(b)]
    done = [False] * b
    tokens = torch.full((b * k,), cfg["decoder_start_token_id"], dtype=torch.long)
    for t in range(max_len):
        logp = torch.log_softmax(step(model, cache, tokens, t, cross).double(), -1)
        order = list(range(b * k))
        new_score = score.clone()
        new_beams = list(beams)
        for i in range(b):
            if done[i]:
                tokens[i * k:(i + 1) * k] = cfg["pad_token_id"]
                continue
            cand = (score[i * k:(i + 1) * k, None] + logp[i * k:(i + 1) * k]).flatten()
            top = torch.topk(cand, 2 * k)
            filled = 0
            for rank, (s, flat) in enumerate(zip(top.values.tolist(), top.indices.tolist())):
                if filled == k or s == -math.inf:
                    break
                j, tok = divmod(flat, logp.shape[1])
                hist = beams[i * k + j]
                if tok == eos:
                    if rank < k:
                        finished[i].append((s / (len(hist) + 1), hist))
                    continue
                r = i * k + filled
                order[r] = i * k + j
                new_score[r] = s
                new_beams[r] = hist + [tok]
                tokens[r] = tok
                filled += 1
            new_score[i * k + filled:(i + 1) * k] = -math.inf
            if len(finished[i]) >= k or filled == 0:
                done[i] = True
        score, beams = new_score, new_beams
        if all(done):
            break
        cache.reorder(torch.tensor(order))
    out = []
    for i in range(b):
        f = finished[i]
        if not done[i]:
            f += [(score[i * k + j].item() / len(beams[i * k + j]), beams[i * k + j]) for j in range(k)
                  if score[i * k + j] != -math.inf]
        out.append(max(f, key=lambda x: x[0])[1] if f else [])
    return out


def transformers_generate(model, sources, max_len, beams, eos):
    """transformers' own generate() (greedy, or beam search with early stopping as kglm's) on a batch:
    each source's tokens without the decoder start token, </s> and padding."""
    ids, mask = pad(sources)
    generated = model.generate(input_ids=ids.to(model.device), attention_mask=mask.to(model.device),
                               max_new_tokens=max_len, num_beams=beams or 1, do_sample=False,
                               **({"early_stopping": True} if beams > 1 else {}))
    outputs = []
    for row in generated.tolist():
        out = []
        for t in row[1:]:
            if t == eos:
                break
            out.append(t)
        outputs.append(out)
    return outputs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--ids", required=True, help="sources: one line of space-separated ids each, </s> included")
    ap.add_argument("--beams", type=int, default=0)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--max-len", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu", help="cpu or cuda (a CUDA build of torch)")
    ap.add_argument("--out")
    ap.add_argument("--own-loop", action="store_true",
                    help="the hand-written decoding loop even where transformers is installed")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    try:  # transformers' T5ForConditionalGeneration and generate() where the python has them
        if a.own_loop:
            raise ImportError
        from transformers import T5ForConditionalGeneration
        hf = T5ForConditionalGeneration.from_pretrained(a.model).eval().to(a.device)
    except ImportError:
        hf = None
    model, cfg = load(a.model)
    if a.device != "cpu":  # every tensor the loops make lands there too
        model.to(a.device)
        torch.set_default_device(a.device)
    sources = [[int(x) for x in line.split()] for line in open(a.ids)]
    outputs = []
    start = time.perf_counter()
    with torch.inference_mode():
        for first in range(0, len(sources), a.batch):
            chunk = sources[first:first + a.batch]
            if hf is not None:
                outputs += transformers_generate(hf, chunk, a.max_len, a.beams, hf.config.eos_token_id)
            else:
                outputs += (beam(model, cfg, chunk, a.max_len, a.beams) if a.beams else
                            greedy(model, cfg, chunk, a.max_len))
    if a.device != "cpu":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    if a.out:
        with open(a.out, "w") as f:
            for o in outputs:
                f.write(" ".join(map(str, o)) + "\n")
    print(json.dumps({"sentences": len(sources), "seconds": seconds, "sentences_per_second": len(sources) / seconds,
                      "peer": "transformers generate" if hf is not None else "own loop"}))


if __name__ == "__main__":
    main()
