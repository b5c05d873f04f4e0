#!/usr/bin/python3
"""Regenerate the PyTorch parity fixtures of kglm's T5 encoder-decoder.

    /usr/bin/python3 tests/reference/make_t5_fixtures.py [--out DIR]

Default DIR is tests/reference/data (next to this script). Plain torch only (Debian's
python3-torch, CPU; no `transformers`): the model is written here as nn.Modules whose
state_dict keys are Hugging Face's T5ForConditionalGeneration names, following its forward
pass (T5LayerNorm, T5Attention with relative-position buckets, T5DenseActDense /
T5DenseGatedActDense, the tied head's d_model^-1/2 scaling, _shift_right). Weights are
created in float32, the computation runs in float64, results are stored as F32. See
tests/reference/README.md (section "T5").

Self-checks before writing: a central finite difference of the loss along random directions
in the full parameter space against autograd, and the incremental decode (key-value cache)
against the full forward's logits.
"""

import argparse
import json
import math
import os
import sys
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_min import read_safetensors, write_safetensors  # noqa: E402

BATCH = 3
SOURCE_LENGTHS = [10, 7, 4]
TARGET_LENGTHS = [8, 5, 3]
IGNORE = -100

CASES = OrderedDict([
    # T5 v1.0: ReLU, tied embeddings and head (scaled by d_model^-1/2), more decoder than encoder
    # blocks, heads·d_kv (18) ≠ d_model (16).
    ("t5-tiny", dict(model_type="t5", vocab_size=64, d_model=16, d_kv=6, d_ff=24, num_layers=2,
                     num_decoder_layers=3, num_heads=3, relative_attention_num_buckets=8,
                     relative_attention_max_distance=12, feed_forward_proj="relu",
                     tie_word_embeddings=True, seed=20261126)),
    # mT5 / T5 v1.1: gated tanh-GELU, a separate LM head.
    ("mt5-tiny", dict(model_type="mt5", vocab_size=64, d_model=16, d_kv=4, d_ff=20, num_layers=2,
                      num_decoder_layers=2, num_heads=4, relative_attention_num_buckets=6,
                      relative_attention_max_distance=10, feed_forward_proj="gated-gelu",
                      tie_word_embeddings=False, seed=20261127)),
])


def relative_position_bucket(relative_position, bidirectional, num_buckets, max_distance):
    """Hugging Face's T5Attention._relative_position_bucket (float32 log, as there)."""
    relative_buckets = torch.zeros_like(relative_position)
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    large = max_exact + (
        torch.log(relative_position.float() / max_exact) / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return relative_buckets + torch.where(is_small, relative_position, large)


class LayerNorm(nn.Module):
    """T5LayerNorm: no mean subtraction, no bias."""

    def __init__(self, d, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class Attention(nn.Module):
    def __init__(self, c, has_bias, bidirectional):
        super().__init__()
        inner = c["num_heads"] * c["d_kv"]
        self.c, self.bidirectional = c, bidirectional
        self.q = nn.Linear(c["d_model"], inner, bias=False)
        self.k = nn.Linear(c["d_model"], inner, bias=False)
        self.v = nn.Linear(c["d_model"], inner, bias=False)
        self.o = nn.Linear(inner, c["d_model"], bias=False)
        if has_bias:
            self.relative_attention_bias = nn.Embedding(c["relative_attention_num_buckets"], c["num_heads"])

    def position_bias(self, q_len, k_len, q_offset=0):
        context = torch.arange(q_len, dtype=torch.long)[:, None] + q_offset
        memory = torch.arange(k_len, dtype=torch.long)[None, :]
        buckets = relative_position_bucket(memory - context, self.bidirectional,
                                           self.c["relative_attention_num_buckets"],
                                           self.c["relative_attention_max_distance"])
        return self.relative_attention_bias(buckets).permute([2, 0, 1]).unsqueeze(0)

    def split(self, x):
        b, t, _ = x.shape
        return x.view(b, t, self.c["num_heads"], self.c["d_kv"]).transpose(1, 2)

    def forward(self, x, kv, bias_and_mask):
        q, k, v = self.split(self.q(x)), self.split(self.k(kv)), self.split(self.v(kv))
        scores = q @ k.transpose(-1, -2) + bias_and_mask  # T5: no 1/sqrt(d) scaling
        ctx = torch.softmax(scores, dim=-1) @ v
        b, _, t, _ = ctx.shape
        return self.o(ctx.transpose(1, 2).reshape(b, t, -1))


class SelfAttentionLayer(nn.Module):
    def __init__(self, c, has_bias, bidirectional):
        super().__init__()
        self.SelfAttention = Attention(c, has_bias, bidirectional)
        self.layer_norm = LayerNorm(c["d_model"], c["eps"])

    def forward(self, x, bias_and_mask):
        h = self.layer_norm(x)
        return x + self.SelfAttention(h, h, bias_and_mask)


class CrossAttentionLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.EncDecAttention = Attention(c, False, True)
        self.layer_norm = LayerNorm(c["d_model"], c["eps"])

    def forward(self, x, encoded, mask):
        return x + self.EncDecAttention(self.layer_norm(x), encoded, mask)


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class DenseReluDense(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.gated = c["feed_forward_proj"] == "gated-gelu"
        if self.gated:
            self.wi_0 = nn.Linear(c["d_model"], c["d_ff"], bias=False)
            self.wi_1 = nn.Linear(c["d_model"], c["d_ff"], bias=False)
        else:
            self.wi = nn.Linear(c["d_model"], c["d_ff"], bias=False)
        self.wo = nn.Linear(c["d_ff"], c["d_model"], bias=False)

    def forward(self, x):
        h = gelu_new(self.wi_0(x)) * self.wi_1(x) if self.gated else F.relu(self.wi(x))
        return self.wo(h)


class FeedForwardLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.DenseReluDense = DenseReluDense(c)
        self.layer_norm = LayerNorm(c["d_model"], c["eps"])

    def forward(self, x):
        return x + self.DenseReluDense(self.layer_norm(x))


class Block(nn.Module):
    def __init__(self, c, first, decoder):
        super().__init__()
        layers = [SelfAttentionLayer(c, first, not decoder)]
        if decoder:
            layers.append(CrossAttentionLayer(c))
        layers.append(FeedForwardLayer(c))
        self.layer = nn.ModuleList(layers)
        self.decoder = decoder

    def forward(self, x, self_bias, encoded=None, cross_mask=None):
        x = self.layer[0](x, self_bias)
        if self.decoder:
            x = self.layer[1](x, encoded, cross_mask)
        return self.layer[-1](x)


class Stack(nn.Module):
    def __init__(self, c, decoder):
        super().__init__()
        n = c["num_decoder_layers"] if decoder else c["num_layers"]
        self.block = nn.ModuleList([Block(c, i == 0, decoder) for i in range(n)])
        self.final_layer_norm = LayerNorm(c["d_model"], c["eps"])
        self.decoder = decoder

    def forward(self, x, self_mask, encoded=None, cross_mask=None):
        t = x.shape[1]
        bias = self.block[0].layer[0].SelfAttention.position_bias(t, t) + self_mask
        for blk in self.block:
            x = blk(x, bias, encoded, cross_mask)
        return self.final_layer_norm(x)


def additive(mask):
    """[B, T] 1/0 key mask → [B, 1, 1, T] additive (0 or the dtype's min), as HF."""
    return (1.0 - mask[:, None, None, :].to(torch.float64)) * torch.finfo(torch.float64).min


class T5(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.shared = nn.Embedding(c["vocab_size"], c["d_model"])
        self.encoder = Stack(c, False)
        self.decoder = Stack(c, True)
        if not c["tie_word_embeddings"]:
            self.lm_head = nn.Linear(c["d_model"], c["vocab_size"], bias=False)

    def head(self, h):
        if self.c["tie_word_embeddings"]:
            return (h * self.c["d_model"] ** -0.5) @ self.shared.weight.t()
        return self.lm_head(h)

    def forward(self, input_ids, attention_mask, decoder_input_ids):
        mask = additive(attention_mask)
        encoded = self.encoder(self.shared(input_ids), mask)
        t = decoder_input_ids.shape[1]
        causal = torch.tril(torch.ones(t, t, dtype=torch.float64))
        causal = (1.0 - causal)[None, None] * torch.finfo(torch.float64).min
        decoded = self.decoder(self.shared(decoder_input_ids), causal, encoded, mask)
        return encoded, decoded, self.head(decoded)

    def decode_incremental(self, input_ids, attention_mask, decoder_input_ids):
        """Greedy-free incremental decode of given tokens with a key-value cache (self-check)."""
        mask = additive(attention_mask)
        encoded = self.encoder(self.shared(input_ids), mask)
        caches = [([], []) for _ in self.decoder.block]
        out = []
        for step in range(decoder_input_ids.shape[1]):
            x = self.shared(decoder_input_ids[:, step:step + 1])
            bias = self.decoder.block[0].layer[0].SelfAttention.position_bias(1, step + 1, q_offset=step)
            for blk, (ks, vs) in zip(self.decoder.block, caches):
                sa = blk.layer[0]
                h = sa.layer_norm(x)
                att = sa.SelfAttention
                ks.append(att.split(att.k(h)))
                vs.append(att.split(att.v(h)))
                q = att.split(att.q(h))
                scores = q @ torch.cat(ks, 2).transpose(-1, -2) + bias
                ctx = torch.softmax(scores, -1) @ torch.cat(vs, 2)
                x = x + att.o(ctx.transpose(1, 2).reshape(x.shape[0], 1, -1))
                x = blk.layer[1](x, encoded, mask)
                x = blk.layer[2](x)
            out.append(self.head(self.decoder.final_layer_norm(x)))
        return torch.cat(out, 1)


def shift_right(labels, c):
    shifted = torch.full_like(labels, 0)
    shifted[:, 1:] = labels[:, :-1]
    shifted[:, 0] = c["decoder_start_token_id"]
    return shifted.masked_fill(shifted == IGNORE, c["pad_token_id"])


def config_json(c):
    return OrderedDict([
        ("architectures", ["T5ForConditionalGeneration"]), ("model_type", c["model_type"]),
        ("vocab_size", c["vocab_size"]), ("d_model", c["d_model"]), ("d_kv", c["d_kv"]),
        ("d_ff", c["d_ff"]), ("num_layers", c["num_layers"]),
        ("num_decoder_layers", c["num_decoder_layers"]), ("num_heads", c["num_heads"]),
        ("relative_attention_num_buckets", c["relative_attention_num_buckets"]),
        ("relative_attention_max_distance", c["relative_attention_max_distance"]),
        ("dropout_rate", 0.0), ("layer_norm_epsilon", c["eps"]), ("initializer_factor", 1.0),
        ("feed_forward_proj", c["feed_forward_proj"]), ("tie_word_embeddings", c["tie_word_embeddings"]),
        ("is_encoder_decoder", True), ("pad_token_id", c["pad_token_id"]), ("eos_token_id", c["eos_token_id"]),
        ("decoder_start_token_id", c["decoder_start_token_id"]),
    ])


def generate_case(name, c, out_dir, summary):
    c = dict(c, eps=1e-6, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    g = torch.Generator().manual_seed(c["seed"])
    model = T5(c)
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if pname.endswith("layer_norm.weight"):
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
            elif pname == "shared.weight" or pname == "lm_head.weight":
                p.copy_(0.5 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.25 * torch.randn(p.shape, generator=g))
    weights = OrderedDict(sorted((k, v.detach().clone()) for k, v in model.state_dict().items()))
    model = model.double()

    V, S, T = c["vocab_size"], max(SOURCE_LENGTHS), max(TARGET_LENGTHS)
    input_ids = torch.zeros(BATCH, S, dtype=torch.long)
    attention_mask = torch.zeros(BATCH, S, dtype=torch.long)
    labels = torch.full((BATCH, T), IGNORE, dtype=torch.long)
    for b in range(BATCH):
        n = SOURCE_LENGTHS[b]
        input_ids[b, :n - 1] = torch.randint(2, V, (n - 1,), generator=g)
        input_ids[b, n - 1] = c["eos_token_id"]
        attention_mask[b, :n] = 1
        m = TARGET_LENGTHS[b]
        labels[b, :m - 1] = torch.randint(2, V, (m - 1,), generator=g)
        labels[b, m - 1] = c["eos_token_id"]
    decoder_input_ids = shift_right(labels, c)

    encoded, decoded, logits = model(input_ids, attention_mask, decoder_input_ids)
    loss = F.cross_entropy(logits.reshape(-1, V), labels.reshape(-1), ignore_index=IGNORE)
    model.zero_grad()
    loss.backward()
    grads = OrderedDict((k, p.grad.detach().clone()) for k, p in model.named_parameters())

    # Self-check 1: finite differences of the loss along random directions.
    params = [p for _, p in model.named_parameters()]
    for trial in range(3):
        dirs = [torch.randn(p.shape, generator=g, dtype=torch.float64) for p in params]
        analytic = sum((d * p.grad).sum() for d, p in zip(dirs, params)).item()
        h = 1e-6
        with torch.no_grad():
            def loss_at(sign):
                for d, p in zip(dirs, params):
                    p.add_(sign * h * d)
                _, _, lg = model(input_ids, attention_mask, decoder_input_ids)
                value = F.cross_entropy(lg.reshape(-1, V), labels.reshape(-1), ignore_index=IGNORE).item()
                for d, p in zip(dirs, params):
                    p.sub_(sign * h * d)
                return value
            fd = (loss_at(1) - loss_at(-1)) / (2 * h)
        assert abs(fd - analytic) <= 1e-6 * max(1.0, abs(analytic)), (name, trial, fd, analytic)
    # Self-check 2: the cached incremental decode gives the full forward's logits.
    with torch.no_grad():
        incremental = model.decode_incremental(input_ids, attention_mask, decoder_input_ids)
    assert (incremental - logits).abs().max().item() < 1e-10, name

    case_dir = os.path.join(out_dir, name)
    os.makedirs(case_dir, exist_ok=True)
    with open(os.path.join(case_dir, "config.json"), "w") as f:
        json.dump(config_json(c), f, indent=2)
        f.write("\n")
    write_safetensors(os.path.join(case_dir, "model.safetensors"), weights, {"format": "pt"})
    f32 = lambda t: t.detach().to(torch.float32).contiguous()  # noqa: E731
    data = OrderedDict([
        ("input_ids", input_ids), ("attention_mask", attention_mask),
        ("decoder_input_ids", decoder_input_ids), ("labels", labels),
        ("encoder_hidden", f32(encoded)), ("decoder_hidden", f32(decoded)),
        ("logits", f32(logits)), ("loss", f32(loss.reshape([]))),
    ])
    for k, gr in grads.items():
        data["grad." + k] = f32(gr)
    path = os.path.join(case_dir, "seq2seq.safetensors")
    write_safetensors(path, data, {"format": "pt"})
    back, _ = read_safetensors(path)
    for k, t in data.items():
        assert torch.equal(back[k], t), (path, k)
    summary.append((name, OrderedDict([("loss", loss.item()), ("max |logit|", logits.abs().max().item()),
                                       ("parameters", len(weights))])))


def generate_buckets(out_dir, summary):
    """HF's buckets of relative positions −300 … 300 for a few (buckets, max_distance) settings."""
    relative = torch.arange(-300, 301, dtype=torch.long)
    data = OrderedDict([("relative", relative)])
    for buckets, distance in [(32, 128), (8, 12), (6, 10), (64, 256)]:
        for bidirectional in (True, False):
            key = f"buckets.{buckets}.{distance}.{'bi' if bidirectional else 'uni'}"
            data[key] = relative_position_bucket(relative, bidirectional, buckets, distance)
    path = os.path.join(out_dir, "t5-buckets.safetensors")
    write_safetensors(path, data, {"format": "pt"})
    summary.append(("t5-buckets", OrderedDict([("settings", len(data) - 1)])))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data"))
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    summary = []
    for name, c in CASES.items():
        generate_case(name, c, a.out, summary)
    generate_buckets(a.out, summary)
    for name, s in summary:
        print(f"[{name}] " + ", ".join(f"{k} {v:.6g}" if isinstance(v, float) else f"{k} {v}" for k, v in s.items()))
    print("all self-checks passed")


if __name__ == "__main__":
    main()
