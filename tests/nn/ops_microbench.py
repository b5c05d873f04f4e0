#!/usr/bin/python3
"""The ops of one encoder layer in PyTorch (CPU, F32), timed op by op, as ops_microbench.cpp does.

B=16, T=128, H=256, A=4, F=1024; attention as Hugging Face BERT (additive mask, softmax, dropout,
matmuls), q|k|v from one packed projection. Each op is its own autograd graph so that its backward
can be timed alone; "layer (one graph)" times the usual single graph for comparison.

    /usr/bin/python3 tests/nn/ops_microbench.py [attention dropout p = 0.1] [iterations = 20] [threads = 2]

Debian's torch does its gemms in the pthread OpenBLAS, whose own pool (OPENBLAS_NUM_THREADS, default
the core count) runs beside torch's OpenMP threads (the threads argument). Torch is fastest here with
threads = 1 (the gemms still use 2 cores through OpenBLAS); threads = 2 oversubscribes the cores.
OPENBLAS_CORETYPE=SkylakeX selects OpenBLAS's AVX-512 kernels, for both programs.
"""
import math
import statistics
import sys
import time

import torch
import torch.nn.functional as F

p = float(sys.argv[1]) if len(sys.argv) > 1 else 0.1
iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 20
threads = int(sys.argv[3]) if len(sys.argv) > 3 else 2
torch.set_num_threads(threads)
torch.manual_seed(0)

B, T, H, A, FF = 16, 128, 256, 4, 1024
N, d = B * T, H // A


def param(*shape, scale):
    return ((torch.rand(*shape) * 2 - 1) * scale).requires_grad_()


x0 = torch.rand(N, H) * 2 - 1
w_qkv, b_qkv = param(3 * H, H, scale=0.0625), param(3 * H, scale=0.1)
w_out, b_out = param(H, H, scale=0.0625), param(H, scale=0.1)
w_up, b_up = param(FF, H, scale=0.0625), param(FF, scale=0.1)
w_down, b_down = param(H, FF, scale=0.03125), param(H, scale=0.1)
g1, be1, g2, be2 = param(H, scale=1.0), param(H, scale=0.1), param(H, scale=1.0), param(H, scale=0.1)
mask = torch.ones(B, T)
for b in range(B):  # the same padding as the C++ benchmark
    mask[b, T - (b * 7) % 48:] = 0
additive = ((1.0 - mask) * torch.finfo(torch.float32).min)[:, None, None, :]
dout = torch.rand(N, H) * 2 - 1


def attention(qkv):
    q, k, v = qkv.view(B, T, 3, A, d).permute(2, 0, 3, 1, 4)
    scores = q @ k.transpose(-1, -2) / math.sqrt(d) + additive
    probs = F.dropout(torch.softmax(scores, dim=-1), p=p, training=True)
    return (probs @ v).permute(0, 2, 1, 3).reshape(N, H)


ops = [
    ("linear qkv", lambda t: F.linear(t, w_qkv, b_qkv)),
    ("attention", attention),
    ("linear out", lambda t: F.linear(t, w_out, b_out)),
    ("layer_norm 1", lambda t: F.layer_norm(t, (H,), g1, be1, 1e-12)),
    ("linear up", lambda t: F.linear(t, w_up, b_up)),
    ("gelu", F.gelu),
    ("linear down", lambda t: F.linear(t, w_down, b_down)),
    ("layer_norm 2", lambda t: F.layer_norm(t, (H,), g2, be2, 1e-12)),
]

samples = {}


def record(name, ms):
    samples.setdefault(name, []).append(ms)


for it in range(-3, iterations):
    keep = it >= 0
    for w in (w_qkv, b_qkv, w_out, b_out, w_up, b_up, w_down, b_down, g1, be1, g2, be2):
        w.grad = None
    inputs, outputs = [], []
    t = x0
    start = time.perf_counter()
    for name, f in ops:
        t = t.detach().requires_grad_()
        t0 = time.perf_counter()
        y = f(t)
        ms = (time.perf_counter() - t0) * 1e3
        if keep:
            record("fwd " + name, ms)
        inputs.append(t)
        outputs.append(y)
        t = y
    mid = time.perf_counter()
    grad = dout
    for (name, _), t, y in reversed(list(zip(ops, inputs, outputs))):
        t0 = time.perf_counter()
        y.backward(grad)
        ms = (time.perf_counter() - t0) * 1e3
        if keep:
            record("bwd " + name, ms)
        grad = t.grad
    end = time.perf_counter()
    if keep:
        record("total forward", (mid - start) * 1e3)
        record("total backward", (end - mid) * 1e3)
        record("total fwd+bwd", (end - start) * 1e3)
    # The usual way: one graph for the layer.
    t0 = time.perf_counter()
    y = x0
    for _, f in ops:
        y = f(y)
    y.backward(dout)
    if keep:
        record("layer (one graph)", (time.perf_counter() - t0) * 1e3)

print(f"torch {torch.__version__} ops, F32, B={B} T={T} H={H} A={A} F={FF}, attention dropout {p:.2f}, "
      f"{torch.get_num_threads()} threads, median of {iterations}")
order = ["fwd " + n for n, _ in ops] + ["bwd " + n for n, _ in reversed(ops)]
for name in order + ["total forward", "total backward", "total fwd+bwd", "layer (one graph)"]:
    print(f"  {name:18s} {statistics.median(samples[name]):8.3f} ms")
