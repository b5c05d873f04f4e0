#!/usr/bin/env python3
"""bench/elmo-cpu: tokens/s and peak memory of `pretrain --architecture elmo` (the character CNN,
projected LSTMs, sampled softmax, Adagrad: a whole training step) against the same model trained
the same way in Debian's python3-torch (bench/reference/elmo_torch.py: nn.LSTM with proj_size per
direction and layer, the residual by hand, TensorFlow's sampled softmax), in one run, on the same
word dataset, at 1 and 2 threads — or, with --device cuda (the GPU kit's stage bench), both on the
GPU, the peer's LSTMs on cuDNN, with each one's peak GPU memory.

Data (built once under --work): the words (ICU) of the fixtures' real text — botchan.txt and the
UD treebanks' English, Italian, Swedish and Chinese sentences — through `pretrain vocab` and
`pretrain prepare --words`.

Model (--size): "bench" (default) a mid-size ELMo: LSTM cells 1024 projected to 256, 2 layers,
the character CNN's 7 widths with 1024 filters, 2 highways, 64 windows of 20 tokens, 2048
negatives; "paper" data/elmo/options-paper.json (4096 negatives, 2048 cells; slow on a laptop).
The softmax covers the dataset's vocabulary.

Against the strongest peers (issue 63, the CPU only): one table per thread count, kglm fp32 and
--precision bf16 (where the CPU has AVX512_BF16 or AMX) against elmo_torch.py on current torch, eager
and torch.compile, fp32 and bf16 (torch.autocast), from the peers' environment of `make bench`; peak
memory of each whole process; share of the machine's GEMM peak (bench/peak.py) from the model's
matrix-product flops per token (elmo_flops_per_token: forward and backward of both directions).
--no-peers leaves it out.

Usage: bench/elmo-cpu.py [--bin build/bin] [--fixtures ../shared/fixtures] [--work out/bench]
                         [--steps 10] [--size bench|paper] [--device cpu|cuda] [--no-peers]
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (arguments, blas_line, cpu_has_bf16, machine_peak, peak_line, peers_python,  # noqa: E402
                      print_peer_table, root, run, torch_python)

TORCH_PYTHON = torch_python()
PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference", "elmo_torch.py")
BENCH_OPTIONS = {
    "lstm": {"dim": 1024, "projection_dim": 256, "n_layers": 2, "cell_clip": 3, "proj_clip": 3,
             "use_skip_connections": True},
    "char_cnn": {"activation": "relu", "filters": [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 256], [7, 256]],
                 "n_highway": 2, "embedding": {"dim": 16}, "n_characters": 261, "max_characters_per_token": 50},
    "bidirectional": True, "dropout": 0.1, "all_clip_norm_val": 10.0, "n_epochs": 1, "n_train_tokens": 0,
    "batch_size": 64, "n_tokens_vocab": 0, "unroll_steps": 20, "n_negative_samples_batch": 2048}


def conllu_text(path, out):
    sentence = []
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if not line:
            if sentence:
                out.write(" ".join(sentence) + "\n")
            sentence = []
        elif not line.startswith("#"):
            cols = line.split("\t")
            if cols[0].isdigit():
                sentence.append(cols[1])


def dataset(args):
    work = os.path.join(args.work, "elmo-cpu")
    words, vocab = os.path.join(work, "words.h5"), os.path.join(work, "vocab.txt")
    if os.path.exists(words):
        return work, words, vocab
    os.makedirs(work, exist_ok=True)
    inputs = ["en=" + os.path.join(args.fixtures, "tokenizer", "botchan.txt")]
    for tb in ("en_ewt", "it_isdt", "sv_talbanken", "zh_gsd"):
        src = os.path.join(args.fixtures, "ud", tb + "-ud-dev.conllu")
        if not os.path.exists(src):
            sys.exit("fixtures not found: " + src)
        text = os.path.join(work, tb + ".txt")
        with open(text, "w", encoding="utf-8") as out:
            conllu_text(src, out)
        inputs.append(tb[:2] + "=" + text)
    pretrain = os.path.join(args.bin, "pretrain")
    subprocess.run([pretrain, "vocab", "-o", vocab, "--quiet"] + inputs, check=True)
    subprocess.run([pretrain, "prepare", "--words", "--vocab", vocab, "--max-len", "100", "-o", words + ".part",
                    "--quiet"] + inputs, check=True)
    os.replace(words + ".part", words)
    return work, words, vocab


def kglm(args, work, options, words, threads, warm=2, precision="fp32"):
    """tokens/s of the timed steps, peak memory (host RSS, or the GPU's with --device cuda), last loss."""
    ckpt, log, stats = (os.path.join(work, n) for n in ("ckpt", "metrics.jsonl", "stats.json"))
    shutil.rmtree(ckpt, ignore_errors=True)
    wall, cpu, peak = run([os.path.join(args.bin, "pretrain"), "--architecture", "elmo", "--options", options,
                           "--data", words, "--steps", str(args.steps + warm), "--eval-fraction", "0",
                           "--threads", str(threads), "--device", args.device, "--precision", precision,
                           "--log", log, "--out", ckpt,
                           "--stats", stats, "--quiet"])
    steps = [json.loads(line) for line in open(log) if '"loss"' in line]
    seconds = steps[-1]["elapsed_s"] - steps[warm - 1]["elapsed_s"]
    if args.device == "cuda":
        peak = json.load(open(stats))["gpu_peak_mb"]
    return sum(s["tokens"] for s in steps[warm:]) / seconds, peak, steps[-1]["loss"]


def torch_peer(args, work, options, words, vocab, batch, threads, warm=2):
    out = os.path.join(work, "torch.json")
    cmd = [TORCH_PYTHON, PEER, options, words, vocab, "--batch", str(batch), "--threads", str(threads), "--device",
           args.device]
    with open(out, "w") as fh:
        p = subprocess.run(cmd + ["--steps", str(args.steps), "--warm", str(warm)], stdout=fh)
    if p.returncode != 0:
        sys.exit("the torch peer failed")
    r = json.load(open(out))
    if args.device == "cuda":
        peak = r["gpu_peak_mb"]
    else:  # run it again under run(): os.wait4 of that process alone
        _, _, peak = run(cmd + ["--steps", "1", "--warm", "1"])
    return r["tokens_per_s"], peak, r["loss"]


def elmo_flops_per_token(o):
    """The matrix-product flops of a training step per token (one window position of one row): per
    direction the character CNN (every width over the token's characters), the highways, the
    projection, the LSTM layers (gates over input and recurrent state, the cell's projection) and the
    sampled softmax's logits; forward and backward (3x), both directions."""
    cnn, lstm = o["char_cnn"], o["lstm"]
    chars, dim, filters = cnn["max_characters_per_token"], cnn["embedding"]["dim"], cnn["filters"]
    f = sum(n for _, n in filters)
    c, p = lstm["dim"], lstm["projection_dim"]
    forward = (sum(2 * w * dim * n * (chars - w + 1) for w, n in filters) + cnn["n_highway"] * 2 * f * 2 * f
               + 2 * f * p + lstm["n_layers"] * (2 * 4 * c * 2 * p + 2 * c * p)
               + 2 * p * (o["n_negative_samples_batch"] + 1))
    return 2 * 3 * forward


def strongest_peers(args, work, options, words, vocab, settings):
    python, peak = peers_python(), machine_peak(args.work)
    version = subprocess.run([python, "-c", "import torch; print(torch.__version__.split('+')[0])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    precisions = ["fp32"] + (["bf16"] if cpu_has_bf16() else [])
    flops = elmo_flops_per_token(settings)
    print("against the strongest peers: current torch in %s (elmo_torch.py; torch.compile of each direction, "
          "warmed up for 3 steps); %.1f MFLOP of matrix products per token of a step; peak: %s; %s" % (
              python, flops / 1e6, peak_line(peak), blas_line(peak)))
    for threads in (1, 2):
        rows = []
        for precision in precisions:
            rate, mem, loss = kglm(args, work, options, words, threads, precision=precision)
            rows.append(("kglm pretrain --architecture elmo", precision, rate, mem, "loss %.3f" % loss))
        for compiled in (False, True):
            for precision in precisions:
                out = os.path.join(work, "peer-%d-%s-%s.json" % (threads, precision, compiled))
                _, _, mem = run(["bash", "-c", '"$0" "$@" > ' + out, python, PEER, options, words, vocab, "--batch",
                                 str(settings["batch_size"]), "--threads", str(threads), "--steps", str(args.steps),
                                 "--warm", "3" if compiled else "2", "--dtype", precision] +
                                (["--compile"] if compiled else []))
                r = json.load(open(out))
                rows.append(("torch %s %s" % (version, "torch.compile" if compiled else "eager"), precision,
                             r["tokens_per_s"], mem, "loss %.3f" % r["loss"]))
        print_peer_table(threads, "tokens", rows, peak, flops)


def main():
    def extra(ap):
        ap.add_argument("--steps", type=int, default=10)
        ap.add_argument("--size", choices=("bench", "paper"), default="bench")
        ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
        ap.add_argument("--no-peers", action="store_true", help="leave out the strongest peers' table")
    args = arguments(extra)
    if subprocess.run([TORCH_PYTHON, "-c", "import torch, h5py"], capture_output=True).returncode != 0:
        sys.exit("the peer needs Debian's python3-torch and python3-h5py: apt-get install python3-torch python3-h5py")
    work, words, vocab = dataset(args)
    options = os.path.join(work, "options-%s.json" % args.size)
    settings = dict(BENCH_OPTIONS) if args.size == "bench" else json.load(
        open(os.path.join(root, "data", "elmo", "options-paper.json")))
    settings["n_tokens_vocab"] = 0  # the dataset's whole vocabulary
    json.dump(settings, open(options, "w"))
    batch = settings["batch_size"]
    words_count = sum(1 for _ in open(vocab, encoding="utf-8"))
    print("elmo-cpu: %s model (cells %d -> %d, %d filters), %d windows x %d tokens, %d negatives, %d words, "
          "%d timed steps" % (args.size, settings["lstm"]["dim"], settings["lstm"]["projection_dim"],
                              sum(n for _, n in settings["char_cnn"]["filters"]), batch, settings["unroll_steps"],
                              settings["n_negative_samples_batch"], words_count, args.steps))
    print("%-28s %12s %10s %10s" % ("run", "tokens/s", "GPU MB" if args.device == "cuda" else "peak MB", "loss"))
    for threads in (1, 2) if args.device == "cpu" else (2,):
        k = kglm(args, work, options, words, threads)
        t = torch_peer(args, work, options, words, vocab, batch, threads)
        where = "the GPU" if args.device == "cuda" else "%d thread(s)" % threads
        print("%-28s %12.0f %10.0f %10.3f" % ("kglm, " + where, k[0], k[1], k[2]))
        print("%-28s %12.0f %10.0f %10.3f" % ("torch%s, %s" % (" (cuDNN)" if args.device == "cuda" else "", where),
                                              t[0], t[1], t[2]))
        print("  ratio on %s: %.2fx the tokens/s, %.2fx the memory" % (where, k[0] / t[0], k[1] / t[1]))
    if args.device == "cpu" and not args.no_peers:
        strongest_peers(args, work, options, words, vocab, settings)


if __name__ == "__main__":
    main()
