#!/usr/bin/env python3
"""bench/finetune-cpu: NER fine-tuning examples/s and evaluation sentences/s of `finetune --task token`
against the same model and head in Debian's python3-torch (bench/reference/finetune_torch.py), in one
run, on the same data, machine and thread count.

Data (built under --work): silver NER from the fixtures' Wikipedia excerpt typed through the X-FACTR
dev KG (`kg-align ner`, real PAN-X), the sentences repeated --copies times for training; the test set
is the sentences once. Model: XLM-R-shaped, 4 layers, hidden 256, 4 heads, FFN 1024, the fixtures'
SentencePiece model, --max-len 128, batch 32, dropout 0.1, AdamW with linear warm-up/decay,
clipping 1.0; `pretrain --steps 1` makes the initial checkpoint.

kglm's times are its --stats train_milliseconds (the training loop) and test_milliseconds (the test
file's evaluation); the peer times the same two loops. Each at --threads 1 and 2, the peer with
OpenBLAS held to as many threads (the same cores); and the peer's fastest setting here, 1 torch
thread with OpenBLAS on every core. kglm also with --precision bf16 where the CPU has AVX512_BF16
or AMX (its ratio to fp32; the summary lines compare fp32 with fp32).

Usage: bench/finetune-cpu.py [--bin build/bin] [--fixtures ../shared/fixtures] [--work out/bench]
                             [--epochs 1] [--copies 4]
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import arguments, cpu_has_bf16, op_times_env, print_op_times, torch_python  # noqa: E402

TORCH_PYTHON = torch_python()  # Debian's python3 with python3-torch, or $KGLM_TORCH_PYTHON
MODEL = ["--layers", "4", "--hidden", "256", "--heads", "4", "--ffn", "1024"]


def main():
    def extra(ap):
        ap.add_argument("--epochs", type=int, default=1)
        ap.add_argument("--copies", type=int, default=4)
    args = arguments(extra)
    if subprocess.run([TORCH_PYTHON, "-c", "import torch"], capture_output=True).returncode != 0:
        sys.exit("the peer needs Debian's python3-torch: apt-get install python3-torch")
    root = os.path.join(args.work, "finetune-cpu")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    b = lambda tool: os.path.join(args.bin, tool)  # noqa: E731
    fx = args.fixtures
    spm = os.path.join(fx, "tokenizer", "spm-test-vocab1000.model")
    if not os.path.exists(os.path.join(fx, "xfactr-kg-dev.json.gz")):
        sys.exit("fixtures not found: " + fx)
    q = ["--quiet"]
    subprocess.run([b("wd-extract"), os.path.join(fx, "xfactr-kg-dev.json.gz"), "-o", f"{root}/kg.h5", "--langs", "en"] + q,
                   check=True)
    subprocess.run([b("wiki-extract"), os.path.join(fx, "wikipedia", "enwiki-sample-a.xml.bz2"), "-o",
                    f"{root}/docs.jsonl", "--redirects", f"{root}/redirects.tsv"] + q, check=True)
    subprocess.run([b("kg-align"), "ner", "--kg", f"{root}/kg.h5", "--redirects", f"{root}/redirects.tsv", "-o",
                    f"{root}/test.panx", f"{root}/docs.jsonl"] + q, check=True)
    text = open(f"{root}/test.panx", encoding="utf-8").read()
    with open(f"{root}/train.panx", "w", encoding="utf-8") as f:
        f.write(text * args.copies)
    sentences = text.count("\n\n")
    subprocess.run([b("pretrain"), "prepare", "--tokenizer", spm, "--max-len", "128", "-o", f"{root}/data.h5",
                    os.path.join(fx, "tokenizer", "botchan.txt")] + q, check=True)
    subprocess.run([b("pretrain"), "--data", f"{root}/data.h5"] + MODEL +
                   ["--batch", "8", "--steps", "1", "--lr", "1e-4", "--out", f"{root}/init"] + q, check=True)
    vocab = json.load(open(f"{root}/init/config.json"))["vocab_size"]
    print(f"data: {sentences} silver NER sentences from the fixtures (kg-align ner), training on {args.copies} copies "
          f"({sentences * args.copies} examples) for {args.epochs} epoch(s); model 4x256, FFN 1024, vocabulary {vocab}")

    def peer(threads, blas_threads):
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(blas_threads))
        r = json.loads(subprocess.run(
            [TORCH_PYTHON, os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference", "finetune_torch.py"),
             "--train", f"{root}/train.panx", "--test", f"{root}/test.panx", "--spm", spm, "--vocab", str(vocab),
             "--epochs", str(args.epochs), "--threads", str(threads)],
            check=True, capture_output=True, text=True, env=env).stdout)
        padding.append(1 - r["train_tokens"] / r["train_padded_tokens"])
        return r["train_examples_per_s"], r["test_sentences_per_s"]

    rows, padding = [], []
    # --precision bf16 (the matrix products in bfloat16) where the CPU has AVX512_BF16 or AMX.
    precisions = ["fp32"] + (["bf16"] if cpu_has_bf16() else [])
    for threads in (1, 2):
        for precision in precisions:
            out = f"{root}/run-{threads}" + ("" if precision == "fp32" else "-" + precision)
            subprocess.run([b("finetune"), "--task", "token", "--init", f"{root}/init", "--train", f"{root}/train.panx",
                            "--test", f"de={root}/test.panx", "--epochs", str(args.epochs), "--batch", "32", "--lr",
                            "2e-5", "--max-len", "128", "--threads", str(threads), "--precision", precision, "-o", out,
                            "--stats", f"{out}.json"] + q, check=True, env=op_times_env(f"{out}-ops.json"))
            s = json.load(open(f"{out}.json"))
            rows.append((f"kglm --threads {threads}" + ("" if precision == "fp32" else " --precision " + precision),
                         threads, (s["train_examples"] * args.epochs / (s["train_milliseconds"] / 1000),
                                   s["test_examples"] / (s["test_milliseconds"] / 1000))))
        rows.append((f"torch {threads} thread(s), OpenBLAS {threads}", threads, peer(threads, threads)))
    # Debian's torch does its gemms in OpenBLAS's own thread pool: 1 torch thread with OpenBLAS on
    # every core is its fastest setting on a small machine (it uses more cores than it is told).
    cores = os.cpu_count() or 2
    rows.append((f"torch 1 thread, OpenBLAS {cores}", cores, peer(1, cores)))

    print(f"{'run':<32} {'train ex/s':>10} {'eval sent/s':>11}")
    for name, _, (train, evaluate) in rows:
        print(f"{name:<32} {train:>10.1f} {evaluate:>11.1f}")
    for threads in (1, 2):
        k = next(r[2] for r in rows if r[0] == f"kglm --threads {threads}")
        t = next(r[2] for r in rows if r[0].startswith(f"torch {threads} thread"))
        print(f"{threads} core(s) each: training {k[0] / t[0]:.2f}x torch, evaluation {k[1] / t[1]:.2f}x torch")
    print(f"padding: {100 * padding[0]:.0f}% of the peer's training token rows (it pads each batch to its longest "
          f"sequence, rounded up to 8, as Hugging Face's collator does); kglm packs its batches: 0%")
    for threads in (1, 2):
        print_op_times(f"kglm finetune --threads {threads} (training and test)", f"{root}/run-{threads}-ops.json")
    for threads in (1, 2):
        bf16 = next((r[2] for r in rows if r[0] == f"kglm --threads {threads} --precision bf16"), None)
        if bf16:
            k = next(r[2] for r in rows if r[0] == f"kglm --threads {threads}")
            print(f"--precision bf16 / fp32, {threads} thread(s): training {bf16[0] / k[0]:.2f}x, "
                  f"evaluation {bf16[1] / k[1]:.2f}x")
    best = lambda who, i: max(r[2][i] for r in rows if r[0].startswith(who) and "bf16" not in r[0])  # noqa: E731
    print(f"best of each: training {best('kglm', 0) / best('torch', 0):.2f}x torch, "
          f"evaluation {best('kglm', 1) / best('torch', 1):.2f}x torch")

main()
