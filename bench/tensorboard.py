#!/usr/bin/env python3
"""bench/tensorboard: what --tensorboard costs a training run, against PyTorch's SummaryWriter
(torch.utils.tensorboard, the writer Hugging Face's Trainer uses) writing the same scalars.

Input: the fixtures' botchan.txt through `pretrain prepare` (SentencePiece, 48 tokens a sequence).
kglm: `pretrain` of a one-layer model small enough that its steps take about a millisecond (the
writer's share is then as large as it gets), --steps N with --eval-every N/10, run alternately
with --log only and with --log and --tensorboard, --repeats times each; the cost is the difference
of the fastest runs, per scalar written (every number of the metrics log is one). Peer: the
metrics log of the last run, every scalar of it written with SummaryWriter.add_scalar in the
references environment's python (transformers' torch 1.13 with tensorboard), timed in-process from
the first add_scalar to close(). Both event files are read back with TensorBoard's
EventAccumulator and must hold the same tags and values.

Usage: bench/tensorboard.py [--bin build/bin] [--fixtures ../shared/fixtures] [--work out/bench]
                            [--steps 10000] [--repeats 5]
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import arguments, references_python, run  # noqa: E402

PEER = r"""
import json, sys, time
from torch.utils.tensorboard import SummaryWriter
lines = [json.loads(l) for l in open(sys.argv[1])]
scalars = [(k, float(v), r["step"]) for r in lines for k, v in r.items()
           if k != "step" and isinstance(v, (bool, int, float))]
start = time.perf_counter()
w = SummaryWriter(sys.argv[2])
for tag, value, step in scalars:
    w.add_scalar(tag, value, step)
w.close()
print(json.dumps({"seconds": time.perf_counter() - start, "scalars": len(scalars)}))
"""

CHECK = r"""
import sys
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
def load(d):
    a = EventAccumulator(d, size_guidance={"scalars": 0}); a.Reload()
    return {t: [(e.step, e.value) for e in a.Scalars(t)] for t in a.Tags()["scalars"]}
k, p = load(sys.argv[1]), load(sys.argv[2])
assert k == p, sorted(set(k) ^ set(p))
print(sum(map(len, k.values())))
"""


def main():
    args = arguments(lambda ap: (ap.add_argument("--steps", type=int, default=10000),
                                 ap.add_argument("--repeats", type=int, default=5)))
    python = references_python()
    if subprocess.run([python, "-c", "import tensorboard, torch.utils.tensorboard"], capture_output=True).returncode:
        sys.exit("the references environment has no tensorboard: make references")
    work = os.path.join(args.work, "tensorboard")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    spm = os.path.join(args.fixtures, "tokenizer", "spm-test-vocab1000.model")
    text = os.path.join(args.fixtures, "tokenizer", "botchan.txt")
    data = os.path.join(work, "data.h5")
    subprocess.run([os.path.join(args.bin, "pretrain"), "prepare", "--tokenizer", spm, "--max-len", "48", "-o", data,
                    "--quiet", "en=" + text], check=True)
    log = os.path.join(work, "metrics.jsonl")
    base = [os.path.join(args.bin, "pretrain"), "--data", data, "--layers", "1", "--hidden", "16", "--heads", "2",
            "--ffn", "32", "--batch", "2", "--steps", str(args.steps), "--eval-every", str(args.steps // 10),
            "--eval-fraction", "0.01", "--threads", "1", "--quiet", "--log", log, "--out", os.path.join(work, "ckpt")]
    plain, with_tb = [], []
    for _ in range(args.repeats):
        plain.append(run(base)[0])
        shutil.rmtree(os.path.join(work, "kglm-tb"), ignore_errors=True)
        with_tb.append(run(base + ["--tensorboard", os.path.join(work, "kglm-tb")])[0])
    scalars = sum(1 for line in open(log) for k, v in json.loads(line).items()
                  if k != "step" and isinstance(v, (bool, int, float)))
    peer = json.loads(subprocess.run([python, "-c", PEER, log, os.path.join(work, "peer-tb")], check=True,
                                     capture_output=True, text=True).stdout)
    assert peer["scalars"] == scalars, (peer, scalars)
    same = subprocess.run([python, "-c", CHECK, os.path.join(work, "kglm-tb"), os.path.join(work, "peer-tb")],
                          check=True, capture_output=True, text=True).stdout.strip()
    extra = min(with_tb) - min(plain)
    spread = max(max(plain) - min(plain), max(with_tb) - min(with_tb))
    peer_us = 1e6 * peer["seconds"] / scalars
    print(f"pretrain, {args.steps} steps of a 1-layer model, {scalars} scalars in the metrics log (TensorBoard read "
          f"back both files: {same} scalars, equal)")
    print(f"  --log only:                   {min(plain):7.2f} s (fastest of {args.repeats}; spread {spread:.2f} s)")
    print(f"  --log --tensorboard:          {min(with_tb):7.2f} s   {100 * extra / min(plain):+.1f}%")
    print(f"  SummaryWriter, the same scalars: {peer['seconds']:.3f} s, {peer_us:.2f} µs a scalar")
    if extra > 0:
        kglm_us = 1e6 * extra / scalars
        print(f"  kglm: {kglm_us:.2f} µs a scalar; ratio: the peer takes {peer_us / kglm_us:.1f}x kglm's time")
    else:
        # The writer's cost is below what two runs of the same command differ by.
        print(f"  kglm: below the run-to-run noise ({1e6 * spread / scalars:.2f} µs a scalar); ratio: the peer takes "
              f"more than {peer_us / (1e6 * spread / scalars):.1f}x kglm's time")

if __name__ == "__main__":
    main()
