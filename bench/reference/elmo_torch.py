#!/usr/bin/python3
"""bench/reference/elmo_torch.py: the peer of `pretrain --architecture elmo` for bench/elmo-cpu.py —
the same ELMo trained the same way in PyTorch, on the same word dataset.

    elmo_torch.py OPTIONS_JSON WORDS_H5 VOCAB_TXT --batch B --steps N --warm W --threads T [--device cpu|cuda]
                  [--compile] [--dtype fp32|bf16]

Model, per ../shared/notes/elmo.md §4: the character encoder (embedding, conv1d per width, max over
positions, ReLU, highways, projection); per direction and layer a one-direction nn.LSTM(p, c,
proj_size=p) — PyTorch's fused projected LSTM (cuDNN on a GPU), which has no cell or projection
clipping (TensorFlow's LSTMCell and kglm clip at 3) and applies bilm-tf's forget bias through
its bias — with the residual added by hand into every layer but the first (bidirectional=True
would concatenate the directions between layers, which ELMo does not do); the softmax shared by
both directions as tf.nn.sampled_softmax_loss computes it: per direction and window, the given
number of distinct classes drawn log-uniformly over the frequency-ranked words, the log of
TensorFlow's expected counts subtracted, accidental hits removed; dropout on each layer's input and
the top output; the LSTM state carried from window to window (detached); loss · unroll_steps,
torch.nn.utils.clip_grad_norm_ at the options' all_clip_norm_val, Adagrad (lr 0.2, accumulators
from 1, eps 0 as TensorFlow's). Windows: `batch` rows each reading the sentences end to end.

--compile runs each direction's encoder and LSTMs through torch.compile (current torch: bench/peers'
environment; the LSTMs stay ATen's fused kernels), --dtype bf16 the step under torch.autocast.

Prints one JSON line: tokens/s over the timed steps (tokens = windows · unroll_steps, as kglm's
log counts them), the seconds, the last loss.
"""
import argparse
import json
import math
import time
import warnings

import h5py
import numpy as np
import torch


def characters(word, max_chars):
    ids = [260] * max_chars
    if word in ("<S>", "</S>"):
        ids[0:3] = [258, 256 if word == "<S>" else 257, 259]
    else:
        raw = list(word.encode("utf-8"))[: max_chars - 2]
        ids[0] = 258
        ids[1:1 + len(raw)] = raw
        ids[1 + len(raw)] = 259
    return ids


class Elmo(torch.nn.Module):
    def __init__(self, o, vocab):
        super().__init__()
        cnn, lstm = o["char_cnn"], o["lstm"]
        e, self.p, c = cnn["embedding"]["dim"], lstm["projection_dim"], lstm["dim"]
        self.embed = torch.nn.Embedding(261, e)
        self.convs = torch.nn.ModuleList(torch.nn.Conv1d(e, n, w) for w, n in cnn["filters"])
        f = sum(n for _, n in cnn["filters"])
        self.highways = torch.nn.ModuleList(torch.nn.Linear(f, 2 * f) for _ in range(cnn["n_highway"]))
        self.proj = torch.nn.Linear(f, self.p)
        self.lstms = torch.nn.ModuleList(
            torch.nn.ModuleList(torch.nn.LSTM(self.p, c, proj_size=self.p) for _ in range(lstm["n_layers"]))
            for _ in range(2))
        for direction in self.lstms:
            for layer in direction:
                with torch.no_grad():  # bilm-tf's forget bias of 1
                    layer.bias_ih_l0[c:2 * c] += 1.0
        self.softmax_w = torch.nn.Parameter(torch.randn(vocab, self.p) / math.sqrt(self.p))
        self.softmax_b = torch.nn.Parameter(torch.zeros(vocab))
        self.dropout = o.get("dropout", 0.1)

    def tokens(self, chars):  # chars [T, B, max] -> [T, B, p]
        t, b, m = chars.shape
        x = self.embed(chars.reshape(t * b, m)).transpose(1, 2)
        x = torch.relu(torch.cat([conv(x).max(dim=2).values for conv in self.convs], 1))
        for h in self.highways:
            transform, carry = h(x).chunk(2, dim=1)
            g = torch.sigmoid(carry)
            x = g * torch.relu(transform) + (1 - g) * x
        return self.proj(x).reshape(t, b, self.p)

    def direction(self, d, chars, state):
        x = self.tokens(chars)
        new_state = []
        for l, lstm in enumerate(self.lstms[d]):
            inp = torch.nn.functional.dropout(x, self.dropout, self.training)
            out, (h, c) = lstm(inp, state[l])
            x = out + inp if l > 0 else out
            new_state.append((h.detach(), c.detach()))
        return torch.nn.functional.dropout(x, self.dropout, self.training), new_state


def log_uniform_sample(count, vocab, rng):
    """TensorFlow's log_uniform_candidate_sampler(unique=True): the draws and each class's expected count."""
    chosen, tries = set(), 0
    while len(chosen) < count:
        k = int(math.exp(rng.random() * math.log(vocab + 1))) - 1
        tries += 1
        chosen.add(min(k, vocab - 1))
    ids = np.fromiter(chosen, dtype=np.int64)
    return ids, tries


def expected(ids, vocab, tries):
    p = (np.log(ids + 2.0) - np.log(ids + 1.0)) / math.log(vocab + 1)
    return -np.expm1(tries * np.log1p(-p))


def sampled_loss(h, w, b, targets, sample, tries, vocab):
    ids = torch.from_numpy(sample).to(h.device)
    true_logit = (h * w[targets]).sum(1) + b[targets] - torch.log(
        torch.from_numpy(expected(targets.cpu().numpy(), vocab, tries)).to(h))
    sampled = h @ w[ids].T + b[ids] - torch.log(torch.from_numpy(expected(sample, vocab, tries)).to(h))
    sampled = sampled.masked_fill(targets[:, None] == ids[None, :], -1e30)
    logits = torch.cat([true_logit[:, None], sampled], 1)
    return torch.nn.functional.cross_entropy(logits, torch.zeros_like(targets), reduction="mean")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("options")
    ap.add_argument("words")
    ap.add_argument("vocab")
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--warm", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    a = ap.parse_args()
    # Current torch says at every window that its oneDNN LSTM has no projections (it runs ATen's).
    warnings.filterwarnings("ignore", message="LSTM with projections is not supported with oneDNN")
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    o = json.load(open(a.options))
    words = open(a.vocab, encoding="utf-8").read().split("\n")[:-1]
    vocab = min(o.get("n_tokens_vocab") or len(words), len(words))
    negatives = o["n_negative_samples_batch"]
    unroll, max_chars = o["unroll_steps"], o["char_cnn"]["max_characters_per_token"]
    table = torch.tensor([characters(w, max_chars) for w in words])
    f = h5py.File(a.words, "r")
    ids = f["tokens/ids"][:].astype(np.int64)
    offsets = f["sequences/offsets"][:].astype(np.int64)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(offsets) - 1)
    streams = []
    for r in range(a.batch):  # row r: sentences r, r + B, ... of the permutation, end to end
        forward = np.concatenate([ids[offsets[s]:offsets[s + 1]] for s in order[r::a.batch]])
        backward = np.concatenate([ids[offsets[s]:offsets[s + 1]][::-1] for s in order[r::a.batch]])
        streams.append((forward, backward))
    device = torch.device(a.device)
    model = Elmo(o, vocab).to(device)
    model.train()
    opt = torch.optim.Adagrad(model.parameters(), lr=0.2, initial_accumulator_value=1.0, eps=0.0)
    c, p, layers = o["lstm"]["dim"], o["lstm"]["projection_dim"], o["lstm"]["n_layers"]
    zero = lambda: [(torch.zeros(1, a.batch, p, device=device), torch.zeros(1, a.batch, c, device=device))  # noqa: E731
                    for _ in range(layers)]
    state = [zero(), zero()]
    sample_rng = np.random.default_rng(1)
    direction = torch.compile(model.direction) if a.compile else model.direction
    half = torch.bfloat16 if a.dtype == "bf16" else None
    start, losses = None, []
    for step in range(a.warm + a.steps):
        if step == a.warm:
            if device.type == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
        at = step * unroll
        total = 0
        for d in range(2):
            window = np.stack([s[d][at % (len(s[d]) - unroll - 1):][:unroll + 1] for s in streams])  # [B, T + 1]
            chars = table[torch.from_numpy(window[:, :unroll].T.copy())].to(device)  # [T, B, max]
            targets = torch.from_numpy(np.minimum(window[:, 1:].T.reshape(-1), vocab - 1)).to(device)
            sample, tries = log_uniform_sample(negatives, vocab, sample_rng)
            with torch.autocast(device.type, dtype=half, enabled=half is not None):
                top, state[d] = direction(d, chars, state[d])
                loss = sampled_loss(top.reshape(-1, p), model.softmax_w, model.softmax_b, targets, sample, tries,
                                    vocab)
            total = total + 0.5 * loss.float()
        opt.zero_grad(set_to_none=True)
        (total * unroll).backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), o.get("all_clip_norm_val", 10.0))
        opt.step()
        losses.append((round(float(total.detach()), 4), round(float(norm), 2)))
    if device.type == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    peak = torch.cuda.max_memory_allocated() / 2**20 if device.type == "cuda" else 0
    print(json.dumps({"tokens_per_s": a.steps * a.batch * unroll / seconds, "seconds": seconds,
                      "loss": losses[-1][0], "losses_and_gradient_norms": losses, "gpu_peak_mb": peak}))


if __name__ == "__main__":
    main()
