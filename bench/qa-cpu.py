#!/usr/bin/env python3
"""bench/qa-cpu: extractive QA fine-tuning (windows/s) and evaluation (questions/s, decoding included)
of `finetune --task qa` against transformers' XLMRobertaForQuestionAnswering in Debian's python3-torch
(bench/reference/qa_torch.py), in one run, on the same data, initial weights, machine and threads.

Data: the fixtures' XQuAD — the first --train-articles English articles for training (1 epoch), the
last --test-articles German articles for evaluation. Model: XLM-R-shaped, 4 layers, hidden 256, 4 heads,
FFN 1024, the fixtures' SentencePiece model, run_qa's windows (--max-len 384, --doc-stride 128),
batch 16, AdamW with linear warm-up/decay, clipping 1.0; `pretrain --steps 1` makes the initial
checkpoint, which both sides load.

kglm's times are its --stats train_milliseconds and test_milliseconds (the evaluation of the test
file: forward and decoding); the peer times the same two loops with its features built beforehand.
Each at --threads 1 and 2, the peer with OpenBLAS held to as many threads, and the peer's fastest
setting here, 1 torch thread with OpenBLAS on every core.

Usage: bench/qa-cpu.py [--bin build/bin] [--fixtures ../shared/fixtures] [--work out/bench]
                       [--train-articles 12] [--test-articles 12]
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import arguments, has_transformers, op_times_env, print_op_times, torch_python  # noqa: E402

TORCH_PYTHON = torch_python()
MODEL = ["--layers", "4", "--hidden", "256", "--heads", "4", "--ffn", "1024"]


def main():
    def extra(ap):
        ap.add_argument("--train-articles", type=int, default=12)
        ap.add_argument("--test-articles", type=int, default=12)
    args = arguments(extra)
    if not has_transformers(TORCH_PYTHON):
        sys.exit("the peer needs python3-torch with transformers: make references")
    root = os.path.join(args.work, "qa-cpu")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    b = lambda tool: os.path.join(args.bin, tool)  # noqa: E731
    fx = args.fixtures
    spm = os.path.join(fx, "tokenizer", "spm-test-vocab1000.model")
    en, de = os.path.join(fx, "xquad", "xquad.en.json"), os.path.join(fx, "xquad", "xquad.de.json")
    if not os.path.exists(en):
        sys.exit("fixtures not found: " + fx)
    data = json.load(open(en, encoding="utf-8"))["data"][: args.train_articles]
    train = f"{root}/train.json"
    json.dump({"version": "1.1", "data": data}, open(train, "w", encoding="utf-8"), ensure_ascii=False)
    questions = sum(len(p["qas"]) for a in data for p in a["paragraphs"])
    test_data = json.load(open(de, encoding="utf-8"))["data"][-args.test_articles:]
    de = f"{root}/test.json"
    json.dump({"version": "1.1", "data": test_data}, open(de, "w", encoding="utf-8"), ensure_ascii=False)
    test_questions = sum(len(p["qas"]) for a in test_data for p in a["paragraphs"])
    q = ["--quiet"]
    subprocess.run([b("pretrain"), "prepare", "--tokenizer", spm, "--max-len", "128", "-o", f"{root}/data.h5",
                    os.path.join(fx, "tokenizer", "botchan.txt")] + q, check=True)
    subprocess.run([b("pretrain"), "--data", f"{root}/data.h5"] + MODEL +
                   ["--batch", "8", "--steps", "1", "--lr", "1e-4", "--max-positions", "386", "--out", f"{root}/init"]
                   + q, check=True)
    print(f"data: XQuAD, {questions} English questions ({args.train_articles} articles) for training, 1 epoch; "
          f"{test_questions} German questions ({args.test_articles} articles) for evaluation; model 4x256, FFN 1024, windows of 384 tokens, stride 128")

    def peer(threads, blas_threads):
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(blas_threads))
        r = json.loads(subprocess.run(
            [TORCH_PYTHON, os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference", "qa_torch.py"),
             "--model", f"{root}/init", "--train", train, "--test", de, "--threads", str(threads)],
            check=True, capture_output=True, text=True, env=env).stdout)
        padding.append(1 - r["train_positions"] / r["train_padded_positions"])
        windows.append((r["train_windows"], r["test_windows"]))
        return r["train_windows_per_s"], r["test_questions_per_s"]

    rows, padding, windows, ours = [], [], [], []
    for threads in (1, 2):
        out = f"{root}/run-{threads}"
        subprocess.run([b("finetune"), "--task", "qa", "--init", f"{root}/init", "--train", f"en={train}", "--test",
                        f"de={de}", "--epochs", "1", "--batch", "16", "--threads", str(threads), "-o", out, "--stats",
                        f"{out}.json"] + q, check=True, env=op_times_env(f"{out}-ops.json"))
        s = json.load(open(f"{out}.json"))
        ours.append((s["train_examples"], s["test_examples"]))
        rows.append((f"kglm --threads {threads}", (s["train_examples"] / (s["train_milliseconds"] / 1000),
                                                  test_questions / (s["test_milliseconds"] / 1000))))
        rows.append((f"torch {threads} thread(s), OpenBLAS {threads}", peer(threads, threads)))
    cores = os.cpu_count() or 2
    rows.append((f"torch 1 thread, OpenBLAS {cores}", peer(1, cores)))

    print(f"windows (training, evaluation): kglm {ours[0]}, transformers' fast tokenizer {windows[0]}")
    print(f"{'run':<32} {'train win/s':>11} {'eval q/s':>9}")
    for name, (tr, ev) in rows:
        print(f"{name:<32} {tr:>11.2f} {ev:>9.2f}")
    for threads in (1, 2):
        k = next(r[1] for r in rows if r[0] == f"kglm --threads {threads}")
        t = next(r[1] for r in rows if r[0].startswith(f"torch {threads} thread"))
        print(f"{threads} core(s) each: training {k[0] / t[0]:.2f}x torch, evaluation {k[1] / t[1]:.2f}x torch")
    print(f"padding: {100 * padding[0]:.0f}% of the peer's training positions; kglm packs its batches: 0%")
    for threads in (1, 2):
        print_op_times(f"kglm finetune --task qa --threads {threads}", f"{root}/run-{threads}-ops.json")
    best = lambda who, i: max(r[1][i] for r in rows if r[0].startswith(who))  # noqa: E731
    print(f"best of each: training {best('kglm', 0) / best('torch', 0):.2f}x torch, "
          f"evaluation {best('kglm', 1) / best('torch', 1):.2f}x torch")


main()
