#!/usr/bin/env python3
"""bench/pretrain-cpu: tokens/s and peak memory of pretrain's training step (forward, backward,
clipping, AdamW) against the same model in Debian's python3-torch, in one run, on the same token
dataset, machine and thread count.

Model: XLM-R-shaped encoder, 4 layers, hidden 256, 4 heads, FFN 1024, a 32k SentencePiece
vocabulary, sequences of 128 tokens, batch 32, dropout 0.1.

Data (built once under --work): a 32,000-piece SentencePiece unigram model trained with Debian's
spm_train on the real text of the fixtures (X-FACTR alias lines of 10 languages, botchan.txt),
and `pretrain prepare --max-len 128` of the same text joined 64 lines to a line, so that nearly
every sequence is a full 128 tokens (the peer pads to the longest sequence of its batch too).

Runs: `pretrain` for --steps timed steps after 2 untimed ones (tokens/s from its metrics log);
bench/reference/pretrain_torch.py with --head full (the vocabulary projection at every position,
as Hugging Face's XLMRobertaForMaskedLM) and --head masked (the masked rows only, as kglm), each
with torch.set_num_threads(--threads) and with torch on 1 thread (its gemms still on OpenBLAS's own
--threads threads: the faster setting on a 2-core machine). The speed column divides by the
fastest full-head torch run. Peak RSS of each process from os.wait4.

Also `pretrain prepare` of the corpus (tokens with offsets and flags into HDF5) against Debian's
`spm_encode --output_format=id` (ids only, to a text file) on the same text and model.

Usage: bench/pretrain-cpu.py [--bin build/bin] [--fixtures ../shared/fixtures] [--work out/bench]
                             [--steps 10] [--threads 2]
"""
import glob
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import arguments, run  # noqa: E402

TORCH_PYTHON = "/usr/bin/python3"  # Debian's python3 with python3-torch and python3-h5py
MODEL = ["--layers", "4", "--hidden", "256", "--heads", "4", "--ffn", "1024", "--batch", "32"]


def dataset(args):
    root = os.path.join(args.work, "pretrain-cpu")
    data = os.path.join(root, "data.h5")
    if os.path.exists(data):
        return root, data
    sources = sorted(glob.glob(os.path.join(args.fixtures, "xfactr", "alias", "*.txt")))
    sources.append(os.path.join(args.fixtures, "tokenizer", "botchan.txt"))
    if not all(map(os.path.exists, sources)) or len(sources) < 2:
        sys.exit("fixtures not found: " + args.fixtures)
    os.makedirs(root, exist_ok=True)
    corpus = os.path.join(root, "corpus.txt")
    with open(corpus, "w", encoding="utf-8") as out:
        for path in sources:
            lines = [l.strip() for l in open(path, encoding="utf-8") if l.strip()]
            for i in range(0, len(lines), 64):
                out.write(" ".join(lines[i:i + 64]) + "\n")
    subprocess.run(["spm_train", "--input=" + corpus, "--model_prefix=" + os.path.join(root, "spm32k"),
                    "--vocab_size=32000", "--character_coverage=0.9995", "--num_threads=%d" % args.threads,
                    "--input_sentence_size=2000000", "--shuffle_input_sentence=true", "--minloglevel=2"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run([os.path.join(args.bin, "pretrain"), "prepare", "--tokenizer", os.path.join(root, "spm32k.model"),
                    "--max-len", "128", "-o", data + ".part", "--quiet", corpus], check=True)
    os.replace(data + ".part", data)
    return root, data


def main():
    def extra(ap):
        ap.add_argument("--steps", type=int, default=10)
        ap.add_argument("--threads", type=int, default=2)
    args = arguments(extra)
    if subprocess.run([TORCH_PYTHON, "-c", "import torch, h5py"], capture_output=True).returncode != 0:
        sys.exit("the peer needs Debian's python3-torch and python3-h5py: apt-get install python3-torch python3-h5py")
    if not shutil.which("spm_train"):
        sys.exit("spm_train not found: apt-get install sentencepiece")
    root, data = dataset(args)
    corpus, model = os.path.join(root, "corpus.txt"), os.path.join(root, "spm32k.model")
    prep = run([os.path.join(args.bin, "pretrain"), "prepare", "--tokenizer", model, "--max-len", "128", "-o",
                os.path.join(root, "prepare-bench.h5"), "--quiet", "--threads", str(args.threads), corpus])
    spm = run(["bash", "-c", 'spm_encode --model="$0" --output_format=id < "$1" > "$2"', model, corpus,
               os.path.join(root, "spm-ids.txt")])
    mb = os.path.getsize(corpus) / 1e6
    print("prepare: %.1f MB of text; pretrain prepare %.2f s (%.1f MB/s, %.0f MB peak), spm_encode %.2f s "
          "(%.1f MB/s, %.0f MB peak): %.2fx" % (mb, prep[0], mb / prep[0], prep[2], spm[0], mb / spm[0], spm[2],
                                                 spm[0] / prep[0]))
    warm_steps = 2
    ckpt, log = os.path.join(root, "ckpt"), os.path.join(root, "metrics.jsonl")
    shutil.rmtree(ckpt, ignore_errors=True)
    kglm_cmd = [os.path.join(args.bin, "pretrain"), "--data", data] + MODEL + [
        "--steps", str(args.steps + warm_steps), "--lr", "1e-4", "--warmup", "2", "--eval-fraction", "0",
        "--threads", str(args.threads), "--log", log, "--out", ckpt, "--quiet"]
    wall, cpu, peak = run(kglm_cmd)
    steps = [json.loads(l) for l in open(log) if '"loss"' in l]
    timed = steps[warm_steps:]
    seconds = timed[-1]["elapsed_s"] - steps[warm_steps - 1]["elapsed_s"]
    kglm_tps = sum(s["tokens"] for s in timed) / seconds
    rows = [("kglm pretrain", kglm_tps, seconds, peak, wall)]

    for head, torch_threads in (("full", args.threads), ("full", 1), ("masked", args.threads), ("masked", 1)):
        out = os.path.join(root, "torch-%s-%d.json" % (head, torch_threads))
        cmd = ["bash", "-c", '"$0" "$@" > ' + out, TORCH_PYTHON, os.path.join(os.path.dirname(__file__), "reference",
               "pretrain_torch.py"), "--data", data, "--steps", str(args.steps), "--warmup-steps", str(warm_steps),
               "--threads", str(torch_threads), "--head", head] + MODEL
        wall, cpu, peak = run(cmd)
        r = json.load(open(out))
        rows.append(("torch %s head, %d thr" % (head, torch_threads), r["tokens_per_s"], r["seconds"], peak, wall))

    info = subprocess.run(["h5dump", "-a", "vocab_size", data], capture_output=True, text=True).stdout
    vocab = [l for l in info.splitlines() if "(0)" in l]
    print("pretrain-cpu: 4 layers, hidden 256, 4 heads, FFN 1024, seq 128, batch 32, %d timed steps, %d threads;"
          " vocabulary %s" % (args.steps, args.threads, vocab[0].split(":")[-1].strip() if vocab else "?"))
    best_full = max(rows[1][1], rows[2][1])
    print("%-26s %12s %10s %10s %9s" % ("run", "tokens/s", "timed s", "peak MB", "speed"))
    for name, tps, secs, peak, _ in rows:
        print("%-26s %12.0f %10.2f %10.0f %8.2fx" % (name, tps, secs, peak, tps / best_full))


if __name__ == "__main__":
    main()
