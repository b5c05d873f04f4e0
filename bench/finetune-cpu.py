#!/usr/bin/python3
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

Against the strongest peers (issue 63): training against the same model in current torch, eager and
torch.compile (bench/reference/finetune_torch.py in the peers' environment; ONNX Runtime and
CTranslate2 do not train); evaluation: `finetune evaluate` of the fine-tuned model on
the --copies copies of the test sentences against the same model's token classification in
current torch eager and torch.compile, ONNX Runtime and CTranslate2 from the peers' environment of
`make bench` (bench/peers/encoder_peers.py --head token), fp32 and bf16, one table per thread count
with the share of the machine's GEMM peak (bench/peak.py). --no-peers leaves it out.

Usage: bench/finetune-cpu.py [--bin build/bin] [--fixtures ../shared/fixtures] [--work out/bench]
                             [--epochs 1] [--copies 4] [--no-peers]
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (arguments, blas_line, blas_settings, cpu_has_bf16, machine_peak, op_times_env,  # noqa: E402
                      peak_line, peers_python, print_op_times, print_peer_table, run, run_peer, torch_python)

TORCH_PYTHON = torch_python()  # Debian's python3 with python3-torch, or $KGLM_TORCH_PYTHON
MODEL = ["--layers", "4", "--hidden", "256", "--heads", "4", "--ffn", "1024"]


def main():
    def extra(ap):
        ap.add_argument("--epochs", type=int, default=1)
        ap.add_argument("--copies", type=int, default=4)
        ap.add_argument("--no-peers", action="store_true", help="leave out the strongest peers' table")
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

    rows, padding, training = [], [], {}
    # --precision bf16 (the matrix products in bfloat16) where the CPU has AVX512_BF16 or AMX.
    precisions = ["fp32"] + (["bf16"] if cpu_has_bf16() else [])
    for threads in (1, 2):
        for precision in precisions:
            out = f"{root}/run-{threads}" + ("" if precision == "fp32" else "-" + precision)
            _, _, mem = run([b("finetune"), "--task", "token", "--init", f"{root}/init", "--train",
                             f"{root}/train.panx", "--test", f"de={root}/test.panx", "--epochs", str(args.epochs),
                             "--batch", "32", "--lr", "2e-5", "--max-len", "128", "--threads", str(threads),
                             "--precision", precision, "-o", out, "--stats", f"{out}.json"] + q,
                            op_times_env(f"{out}-ops.json"))
            s = json.load(open(f"{out}.json"))
            training[(threads, precision)] = (s["train_examples"] * args.epochs / (s["train_milliseconds"] / 1000), mem)
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
    if not args.no_peers:
        strongest_peers(args, root, spm, vocab, precisions, training)


def panx_ids(path, spm, vocab, max_len):
    """Each sentence of a PAN-X file as XLM-R ids, as kglm's token task encodes it: <s>, each word's
    SentencePiece pieces (+1, fairseq's mapping; an unknown word <unk>), cut at max_len - 1, </s>."""
    sentences, words = [], []
    for line in list(open(path, encoding="utf-8")) + [""]:
        if line.strip():
            words.append(line.split(":", 1)[1].rsplit("\t", 1)[0])
        elif words:
            sentences.append(words)
            words = []
    distinct = sorted({w for s in sentences for w in s})
    out = subprocess.run(["spm_encode", "--model", spm, "--output_format=id"], input="\n".join(distinct) + "\n",
                         capture_output=True, text=True, check=True).stdout.split("\n")
    pieces = {w: [(int(i) + 1) % vocab for i in out[k].split()] or [3] for k, w in enumerate(distinct)}
    return [([0] + [p for w in s for p in pieces[w]])[:max_len - 1] + [2] for s in sentences]


def strongest_peers(args, root, spm, vocab, precisions, training):
    """Issue 63's tables, one per thread count. Training: the kglm runs above (training examples/s
    and peak memory, the environment as it is) against bench/reference/finetune_torch.py on current
    torch, eager and torch.compile, fp32 and bf16 (torch.autocast), after 8 untimed batches.
    Evaluation: `finetune evaluate` of the fine-tuned model on the --copies copies of the test
    sentences (its --stats predict_milliseconds) against the same model's token classification in
    current torch eager and torch.compile, ONNX Runtime and CTranslate2 (bench/peers/encoder_peers.py
    --head token, batches of 32 longest first), fp32 and bf16; agreement: the share of tokens
    labelled as torch eager fp32 labels them."""
    import glob
    import numpy as np
    peak = machine_peak(args.work)
    model = sorted(glob.glob(f"{root}/run-1/seed-*/best"))[0]
    config = json.load(open(f"{model}/config.json"))
    layers, hidden, ffn = config["num_hidden_layers"], config["hidden_size"], config["intermediate_size"]
    ids = panx_ids(f"{root}/train.panx", spm, vocab, 128)
    with open(f"{root}/eval.ids", "w") as f:
        f.write("".join(" ".join(map(str, s)) + "\n" for s in ids))
    lengths = [len(s) for s in ids]
    flops = layers * (2 * sum(lengths) * (4 * hidden * hidden + 2 * hidden * ffn) + sum(4 * n * n * hidden for n in lengths))
    python = peers_python()
    version = subprocess.run([python, "-c", "import torch; print(torch.__version__.split('+')[0])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    print(f"against the strongest peers, training: {len(ids)} examples an epoch, batches of 32; forward and "
          f"backward {3 * flops / len(ids) / 1e6:.1f} MFLOP of matrix products per example; ONNX Runtime and "
          f"CTranslate2 do not train: no row")
    for threads in (1, 2):
        rows = [("kglm finetune", precision, *training[(threads, precision)], "") for precision in precisions]
        for compiled in (False, True):
            for precision in precisions:
                out = f"{root}/peers-train-{threads}-{precision}-{compiled}.json"
                _, _, mem = run(["bash", "-c", '"$0" "$@" > ' + out, python,
                                 os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference",
                                              "finetune_torch.py"), "--train", f"{root}/train.panx", "--test",
                                 f"{root}/test.panx", "--spm", spm, "--vocab", str(vocab), "--epochs",
                                 str(args.epochs), "--threads", str(threads), "--dtype", precision,
                                 "--warmup-batches", "8"] + (["--compile"] if compiled else []))
                rows.append((f"torch {version} " + ("torch.compile" if compiled else "eager"), precision,
                             json.load(open(out))["train_examples_per_s"], mem, ""))
        print_peer_table(threads, "examples", rows, peak, 3 * flops / len(ids))
    print(f"against the strongest peers, evaluation: {len(ids)} sentences ({sum(lengths)} tokens) in batches of 32; "
          f"{flops / len(ids) / 1e6:.1f} MFLOP of matrix products per sentence; peak: {peak_line(peak)}; "
          f"{blas_line(peak)}")
    for threads in (1, 2):
        rows, reference = [], None
        for blas, env in blas_settings():
            for precision in precisions:
                out = f"{root}/peers-kglm-{threads}-{precision}{'-blas' if blas else ''}"
                _, _, mem = run([os.path.join(args.bin, "finetune"), "evaluate", "--model", model, "--test",
                                 f"de={root}/train.panx", "--batch", "32", "--threads", str(threads), "--precision",
                                 precision, "-o", out, "--stats", f"{out}.json", "--quiet"], env)
                s = json.load(open(f"{out}.json"))
                rows.append(("kglm finetune evaluate" + blas, precision,
                             s["test_examples"] / (s["predict_milliseconds"] / 1000), mem, ""))
        for engine in ("torch", "compile", "onnxruntime", "ctranslate2"):
            for precision in precisions:
                out = f"{root}/peers-{engine}-{threads}-{precision}.npy"
                name, r, why = run_peer("peers/encoder_peers.py", engine, [
                    "--head", "token", "--precision", precision, "--threads", str(threads), "--model", model, "--ids",
                    f"{root}/eval.ids", "--batch", "32", "--work", f"{root}/peers-{engine}", "--out", out])
                if r is None:
                    rows.append((name, precision, None, None, why))
                    continue
                labels = np.load(out)
                reference = labels if reference is None else reference
                rows.append((name, precision, r["sentences"] / r["seconds"], r["peak_mb"],
                             f"{100 * (labels == reference).mean():.2f}% of tokens as torch eager fp32"))
        print_peer_table(threads, "sentences", rows, peak, flops / len(ids))


main()
