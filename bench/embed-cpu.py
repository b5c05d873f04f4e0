#!/usr/bin/python3
"""bench/embed-cpu: sentences/s of `pretrain embed` (an XLM-R encoder's forward pass and mean pooling)
against the strongest inference engines (issue 63) on the same sentences, model, machine and threads,
in one run: current PyTorch eager and torch.compile, ONNX Runtime (the model exported with
torch.onnx.export) and CTranslate2 (converted with its own converter), from the benchmark peers'
environment of `make bench` (build/bench-venv; bench/peers/encoder_peers.py), fp32 and bf16.

Data: the first --sentences non-empty lines of the fixtures' botchan.txt (English prose), tokenised
by the fixtures' SentencePiece model (Debian's spm_encode with fairseq's id mapping for the peers;
kglm tokenises itself: the pooled vectors are compared, which checks both). Model: XLM-R-shaped,
--layers 6, --hidden 512, 8 heads, FFN 2048, random weights N(0, 0.05) (tests/cli/make_tiny_mlm.py;
the cost does not depend on them). Batches of 64, longest sentences first, in every engine; kglm packs
each batch's sentences without padding, the engines pad each batch to its longest sentence.

kglm runs under the environment as it is and, where it sets OPENBLAS_CORETYPE (which overrides
OpenBLAS's choice of kernels for the CPU), without it too: a row each.

Timed: kglm's --stats embed_milliseconds (encoding and pooling; no loading, tokenising or writing);
each peer's second pass over the batches (the first, untimed, compiles and warms its caches). Peak
memory: each process's maximum RSS (os.wait4 for kglm; the peer's own getrusage, its export or
conversion included). One table per thread count (1 and 2): sentences/s, peak MB, the ratio to the
best peer of the same precision, and the share of the machine's measured GEMM peak (bench/peak.py)
that the model's useful matrix-product flops per second reach (packed tokens: padding not counted).
Where an engine cannot run bf16 (ONNX Runtime's CPU provider, PyPI's CTranslate2) its row says why. Agreement: the
cosine of each engine's pooled vectors with kglm fp32's (the lowest over the sentences).

Usage: bench/embed-cpu.py [--bin build/bin] [--fixtures ../shared/fixtures] [--work out/bench]
                          [--sentences 1000] [--layers 6] [--hidden 512] [--ffn 2048]
"""
import json
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (arguments, blas_line, blas_settings, cpu_has_bf16, machine_peak, peak_line,  # noqa: E402
                      peers_python, print_peer_table, run, run_peer)

HERE = os.path.dirname(os.path.abspath(__file__))
ENGINES = ("torch", "compile", "onnxruntime", "ctranslate2")


def encoder_flops(lengths, layers, hidden, ffn):
    """The matrix-product flops of the encoder over sentences of these lengths (packed): the four
    attention projections and the two feed-forward products per token, and per sentence the scores
    and the weighted values (n x n x hidden each)."""
    tokens = sum(lengths)
    return layers * (2 * tokens * (4 * hidden * hidden + 2 * hidden * ffn) + sum(4 * n * n * hidden for n in lengths))


def main():
    def extra(ap):
        ap.add_argument("--sentences", type=int, default=1000)
        ap.add_argument("--layers", type=int, default=6)
        ap.add_argument("--hidden", type=int, default=512)
        ap.add_argument("--ffn", type=int, default=2048)
    args = arguments(extra)
    peers_python()  # exits saying how to install the peers when they are absent
    peak = machine_peak(args.work)
    if not shutil.which("spm_encode"):
        sys.exit("spm_encode not found: apt-get install sentencepiece")
    fx = args.fixtures
    spm = os.path.join(fx, "tokenizer", "spm-test-vocab1000.model")
    if not os.path.exists(spm):
        sys.exit("fixtures not found: " + fx)
    root = os.path.join(args.work, "embed-cpu")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    lines = [line.strip() for line in open(os.path.join(fx, "tokenizer", "botchan.txt"), encoding="utf-8")
             if line.strip()][:args.sentences]
    text = os.path.join(root, "sentences.txt")
    with open(text, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    model = os.path.join(root, "model")
    subprocess.run([sys.executable, os.path.join(HERE, "..", "tests", "cli", "make_tiny_mlm.py"),
                    "--layers", str(args.layers), "--hidden", str(args.hidden), "--heads", str(args.hidden // 64),
                    "--ffn", str(args.ffn), "--positions", "514", "--std", "0.05", model, spm, "random", "1"],
                   check=True, capture_output=True)
    # The peers' ids: <s> pieces </s>, SentencePiece id + 1 (fairseq's mapping; <unk> is 3).
    encoded = subprocess.run(["spm_encode", "--model", spm, "--output_format=id"], input="\n".join(lines) + "\n",
                             capture_output=True, text=True, check=True).stdout.splitlines()
    ids = [[0] + [int(x) + 1 if int(x) else 3 for x in row.split()] + [2] for row in encoded]
    with open(os.path.join(root, "ids.txt"), "w") as f:
        f.write("".join(" ".join(map(str, s)) + "\n" for s in ids))
    lengths = [len(s) for s in ids]
    flops = encoder_flops(lengths, args.layers, args.hidden, args.ffn)
    print(f"data: {len(lines)} sentences of botchan.txt, {sum(lengths)} tokens (mean {sum(lengths) / len(lengths):.1f}, "
          f"longest {max(lengths)}); model {args.layers}x{args.hidden}, {args.hidden // 64} heads, FFN {args.ffn}; "
          f"{flops / len(lines) / 1e6:.1f} MFLOP of matrix products per sentence; peak: {peak_line(peak)}; "
          f"{blas_line(peak)}")
    precisions = ["fp32"] + (["bf16"] if cpu_has_bf16() else [])

    def kglm(threads, precision, blas, env):
        out = os.path.join(root, f"kglm-{threads}-{precision}{'-blas' if blas else ''}")
        _, _, mem = run([os.path.join(args.bin, "pretrain"), "embed", "--model", model, "--pool", "mean", "--threads",
                         str(threads), "--precision", precision, "-o", out + ".h5", "--stats", out + ".json",
                         "--quiet", text], env)
        s = json.load(open(out + ".json"))
        assert s["tokens"] == sum(lengths), ("kglm and spm_encode tokenise differently", s["tokens"], sum(lengths))
        np.save(out + ".npy", h5py.File(out + ".h5")["embeddings"][:])
        return s["sentences"] / (s["embed_milliseconds"] / 1000), mem, out + ".npy"

    def peer(engine, threads, precision):
        out = os.path.join(root, f"{engine}-{threads}-{precision}.npy")
        name, r, why = run_peer("peers/encoder_peers.py", engine, [
            "--precision", precision, "--threads", str(threads), "--model", model, "--ids",
            os.path.join(root, "ids.txt"), "--work", os.path.join(root, engine), "--out", out])
        if r is None:
            return name, None, None, why
        return name, r["sentences"] / r["seconds"], r["peak_mb"], out

    def agreement(vectors, reference):
        a, b = np.load(vectors), np.load(reference)
        cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
        return f"cosine with kglm fp32 >= {cos.min():.6f}"

    for threads in (1, 2):
        rows, reference = [], None
        for blas, env in blas_settings():
            for precision in precisions:
                rate, mem, vectors = kglm(threads, precision, blas, env)
                reference = reference or vectors
                rows.append(("kglm pretrain embed" + blas, precision, rate, mem, agreement(vectors, reference)))
        for engine in ENGINES:
            for precision in precisions:
                name, rate, mem, vectors = peer(engine, threads, precision)
                note = agreement(vectors, reference) if rate else vectors  # else: why it cannot
                rows.append((name, precision, rate, mem, note))
        print_peer_table(threads, "sentences", rows, peak, flops / len(lines))


main()
