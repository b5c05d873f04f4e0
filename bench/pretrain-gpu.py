#!/usr/bin/env python3
"""bench/pretrain-gpu: pretrain's training step on one GPU at XLM-R base's shape against the same
model in PyTorch on the same GPU, in one run: tokens/s, MFU and peak memory.

Model: 12 layers, hidden 768, 12 heads, FFN 3072, a vocabulary of 250,002 (XLM-R's size), 15%
masking, dropout 0.1; forward, backward, clipping and AdamW. Shapes: batch 32 x 512 tokens and
128 x 128 tokens. kglm runs --precision bf16 (and fp16 with loss scaling); the peer runs
bench/reference/pretrain_torch.py under torch.autocast bf16 (fp16 with a GradScaler), eagerly and
with torch.compile, with the vocabulary projection at every position (--head full, as
XLMRobertaForMaskedLM) and at the masked rows only (--head masked, as kglm), and with transformers'
XLMRobertaForMaskedLM itself when it is installed.

Data (built once under --work, no network): a WordPiece vocabulary of exactly 250,002 entries
(specials, the words and characters of the fixtures' text, then unused fillers: the model's
embedding and projection have XLM-R's shape) and `pretrain prepare` of the fixtures' text (the
X-FACTR alias lines of 10 languages and botchan.txt) joined into lines long enough that nearly every
sequence is a full 512 (or 128) tokens.

MFU: training FLOPs per token (6 x the matmul parameters a token passes through, the attention's
12 x seq x hidden per layer, and the projection at the 15% masked rows) x tokens/s, over the GPU's
bf16 matmul peak measured in the same run with torch (an 8192^3 product), or --peak-tflops.
Peak memory: kglm's caching-allocator high-water mark (gpu_peak_mb of --stats), torch's
max_memory_allocated.

Usage: bench/pretrain-gpu.py [--bin build/bin] [--fixtures ../shared/fixtures] [--work out/bench]
                             [--steps 20] [--peak-tflops T] [--python $KGLM_TORCH_PYTHON or /usr/bin/python3]
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import arguments, torch_python  # noqa: E402

VOCAB = 250002
LAYERS, HIDDEN, HEADS, FFN = 12, 768, 12, 3072
SHAPES = ((32, 512), (128, 128))  # (batch, sequence length)
WARM_STEPS = 3


def vocabulary(root, lines):
    """vocab.txt with exactly VOCAB entries: specials, the text's characters and words, fillers."""
    path = os.path.join(root, "vocab.txt")
    if os.path.exists(path):
        return path
    entries = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    seen = set(entries)
    counts = {}
    for line in lines:
        for word in re.findall(r"\w+|[^\w\s]", line):  # as the (cased) WordPiece tokenizer splits
            counts[word] = counts.get(word, 0) + 1
            for ch in word:
                if ch not in seen:
                    seen.add(ch)
                    entries.append(ch)
    for word, _ in sorted(counts.items(), key=lambda kv: -kv[1])[:VOCAB // 2]:
        if word not in seen:
            seen.add(word)
            entries.append(word)
    entries += ["[unused%d]" % i for i in range(VOCAB - len(entries))]
    with open(path + ".part", "w", encoding="utf-8") as f:
        f.write("\n".join(entries[:VOCAB]) + "\n")
    os.replace(path + ".part", path)
    return path


def datasets(args):
    """{sequence length: token dataset} over the fixtures' text, with the VOCAB-entry vocabulary."""
    root = os.path.join(args.work, "pretrain-gpu")
    os.makedirs(root, exist_ok=True)
    sources = sorted(glob.glob(os.path.join(args.fixtures, "xfactr", "alias", "*.txt")))
    sources.append(os.path.join(args.fixtures, "tokenizer", "botchan.txt"))
    if len(sources) < 2 or not all(map(os.path.exists, sources)):
        sys.exit("fixtures not found: " + args.fixtures)
    lines = []
    for path in sources:
        lines += [l.strip() for l in open(path, encoding="utf-8") if l.strip()]
    vocab = vocabulary(root, lines)
    out = {}
    for _, seq in SHAPES:
        corpus, data = os.path.join(root, "corpus-%d.txt" % seq), os.path.join(root, "data-%d.h5" % seq)
        if not os.path.exists(data):
            per_line = seq  # several sequences' worth a line: prepare splits it into full ones
            with open(corpus, "w", encoding="utf-8") as f:
                for i in range(0, len(lines), per_line):
                    f.write(" ".join(lines[i:i + per_line]) + "\n")
            subprocess.run([os.path.join(args.bin, "pretrain"), "prepare", "--tokenizer", vocab, "--max-len", str(seq),
                            "-o", data + ".part", "--quiet", corpus], check=True)
            os.replace(data + ".part", data)
        out[seq] = data
    return root, out


def flops_per_token(seq, masked=0.15):
    """Training FLOPs (forward + backward = 3 x forward) per token of the model."""
    matmul = LAYERS * (4 * HIDDEN * HIDDEN + 2 * HIDDEN * FFN)  # q, k, v, out; up, down
    attention = LAYERS * 2 * seq * HIDDEN  # q.k and p.v, multiply-adds per token
    head = masked * (HIDDEN * HIDDEN + HIDDEN * VOCAB)  # dense + the tied projection, masked rows
    return 6 * (matmul + attention + head)


def kglm_run(args, root, data, batch, precision):
    ckpt, log, stats = (os.path.join(root, n) for n in ("ckpt", "metrics.jsonl", "stats.json"))
    shutil.rmtree(ckpt, ignore_errors=True)
    cmd = [os.path.join(args.bin, "pretrain"), "--data", data, "--device", "cuda", "--precision", precision,
           "--architecture", "xlm-roberta", "--layers", str(LAYERS), "--hidden", str(HIDDEN), "--heads", str(HEADS),
           "--ffn", str(FFN), "--batch", str(batch), "--steps", str(args.steps + WARM_STEPS), "--lr", "1e-4",
           "--warmup", "2", "--eval-fraction", "0", "--log", log, "--stats", stats, "--out", ckpt, "--quiet"]
    subprocess.run(cmd, check=True)
    steps = [json.loads(l) for l in open(log) if '"loss"' in l]
    timed = steps[WARM_STEPS:]
    seconds = timed[-1]["elapsed_s"] - steps[WARM_STEPS - 1]["elapsed_s"]
    return sum(s["tokens"] for s in timed) / seconds, json.load(open(stats)).get("gpu_peak_mb", 0)


def torch_run(args, root, data, batch, seq, dtype, head, compile_, hf=False):
    cmd = [args.python, os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference", "pretrain_torch.py"),
           "--data", data, "--device", "cuda", "--dtype", dtype, "--head", head, "--layers", str(LAYERS),
           "--hidden", str(HIDDEN), "--heads", str(HEADS), "--ffn", str(FFN), "--batch", str(batch),
           "--steps", str(args.steps), "--warmup-steps", str(WARM_STEPS)] + (["--compile"] if compile_ else []) + (
               ["--hf"] if hf else [])
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["failed"])[-1]
    r = json.loads(p.stdout.strip().splitlines()[-1])
    return (r["tokens_per_s"], r.get("peak_mb", 0)), None


def torch_peak_tflops(python):
    code = ("import torch, time\n"
            "a = torch.randn(8192, 8192, device='cuda', dtype=torch.bfloat16); b = torch.randn_like(a)\n"
            "for _ in range(3): a @ b\n"
            "torch.cuda.synchronize(); t = time.perf_counter()\n"
            "for _ in range(20): a @ b\n"
            "torch.cuda.synchronize(); print(20 * 2 * 8192**3 / (time.perf_counter() - t) / 1e12)\n")
    p = subprocess.run([python, "-c", code], capture_output=True, text=True)
    return float(p.stdout.strip()) if p.returncode == 0 and p.stdout.strip() else None


def main():
    def extra(ap):
        ap.add_argument("--steps", type=int, default=20)
        ap.add_argument("--peak-tflops", type=float, default=0)
        ap.add_argument("--python", default=torch_python())
    args = arguments(extra)
    root, data = datasets(args)
    has_torch = subprocess.run([args.python, "-c", "import torch, h5py; assert torch.cuda.is_available()"],
                               capture_output=True).returncode == 0
    has_hf = has_torch and subprocess.run([args.python, "-c", "import transformers"],
                                          capture_output=True).returncode == 0
    peak = args.peak_tflops or (torch_peak_tflops(args.python) if has_torch else None)
    print("pretrain-gpu: XLM-R base shape (12 x 768, 12 heads, FFN 3072, vocabulary %d), %d timed steps after %d;"
          " bf16 matmul peak %s" % (VOCAB, args.steps, WARM_STEPS, "%.0f TFLOP/s" % peak if peak else "unknown"))
    for batch, seq in SHAPES:
        d = data[seq]
        fpt = flops_per_token(seq)
        rows = []
        for precision in ("bf16", "fp16"):
            tps, mb = kglm_run(args, root, d, batch, precision)
            rows.append(("kglm pretrain " + precision, tps, mb))
        if has_torch:
            for dtype, head, compile_ in (("bf16", "full", False), ("bf16", "masked", False), ("bf16", "masked", True),
                                          ("fp16", "masked", False)):
                r, err = torch_run(args, root, d, batch, seq, dtype, head, compile_)
                name = "torch %s %s head%s" % (dtype, head, ", compiled" if compile_ else "")
                rows.append((name, r[0], r[1]) if r else (name + " (" + err + ")", 0, 0))
            if has_hf:
                r, err = torch_run(args, root, d, batch, seq, "bf16", "full", False, hf=True)
                rows.append(("HF XLMRobertaForMaskedLM bf16", r[0], r[1]) if r else ("HF (" + err + ")", 0, 0))
        else:
            rows.append(("torch peer: no CUDA torch + h5py for " + args.python, 0, 0))
        peers = [r[1] for r in rows if r[0].startswith(("torch", "HF")) and r[1] > 0]
        best = max(peers) if peers else 0
        print("batch %d x %d tokens (%.0f MFLOP per token):" % (batch, seq, fpt / 1e6))
        print("%-44s %12s %8s %10s %9s" % ("run", "tokens/s", "MFU", "peak MB", "vs best"))
        for name, tps, mb in rows:
            mfu = "%.1f%%" % (100 * tps * fpt / (peak * 1e12)) if peak and tps else "-"
            print("%-44s %12.0f %8s %10.0f %9s" % (name, tps, mfu, mb, "%.2fx" % (tps / best) if best and tps else "-"))


if __name__ == "__main__":
    main()
