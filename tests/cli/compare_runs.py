#!/usr/bin/env python3
"""compare_runs.py [--weights-within X] [--logs-within Y] [--train-lines] [--ignore TENSOR ...] A.jsonl B.jsonl
[A_DIR B_DIR [FILE ...]]:
two training runs' metrics logs have the same lines (steps and keys) and their numbers agree within Y (1e-6), relative
above 1 (losses, learning rates, gradient norms, counts, dev scores; the timing fields aside); the
F32 tensors of FILE (default model.safetensors and optimizer.safetensors) in the two directories
agree within X (default 1e-5). --train-lines compares the training steps' lines only (those with
a loss): a run stopped and resumed has evaluated where it stopped, the run it is compared with has
not. --ignore leaves a tensor out (a parameter whose loss gradient is zero in exact arithmetic, which
Adam turns into steps of rounding noise that no two summation orders share). Used by the MPI tests of pretrain, finetune and verbalize (ranks
against one process)."""
import array
import json
import struct
import sys

TIMING = {"comm_s", "elapsed_s", "seconds", "tokens_per_s", "examples_per_s", "step_s"}


def lines(path):
    return [json.loads(line) for line in open(path)]


def tensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        assert e["dtype"] == "F32", e
        begin, end = e["data_offsets"]
        out[name] = array.array("f", raw[8 + n + begin:8 + n + end])
    return out


within, logs_within, train_lines, ignored = 1e-5, 1e-6, False, set()
while sys.argv[1].startswith("--"):
    if sys.argv[1] == "--weights-within":
        within = float(sys.argv[2])
        del sys.argv[1:3]
    elif sys.argv[1] == "--logs-within":
        logs_within = float(sys.argv[2])
        del sys.argv[1:3]
    elif sys.argv[1] == "--ignore":
        ignored.add(sys.argv[2])
        del sys.argv[1:3]
    elif sys.argv[1] == "--train-lines":
        train_lines = True
        del sys.argv[1]
    else:
        sys.exit(f"compare_runs.py: unknown option {sys.argv[1]}")
a, b = lines(sys.argv[1]), lines(sys.argv[2])
if train_lines:
    a, b = [r for r in a if "loss" in r], [r for r in b if "loss" in r]
assert [r["step"] for r in a] == [r["step"] for r in b], (a, b)
worst = 0.0
for x, y in zip(a, b):
    assert x.keys() - TIMING == y.keys() - TIMING, (x, y)
    for k in x:
        if k in TIMING or not isinstance(x[k], (int, float)) or x[k] is None or y[k] is None:
            continue
        worst = max(worst, abs(x[k] - y[k]) / max(1.0, abs(x[k])))
assert worst <= logs_within, f"logs differ by {worst}: {a} {b}"
if len(sys.argv) > 3:
    files = sys.argv[5:] or ["model.safetensors", "optimizer.safetensors"]
    for f in files:
        x, y = tensors(f"{sys.argv[3]}/{f}"), tensors(f"{sys.argv[4]}/{f}")
        assert x.keys() == y.keys(), f
        w = max(max((abs(p - q) for p, q in zip(x[k], y[k])), default=0.0) for k in x if k not in ignored)
        assert w <= within, f"{f}: differs by {w} (more than {within})"
        print(f"{f}: max difference {w:.3g}")
print(f"{len(a)} log lines, numbers within {worst:.3g}")
