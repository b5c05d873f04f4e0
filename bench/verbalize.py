#!/usr/bin/env python3
"""bench/verbalize: sentences/s of `verbalize generate` (greedy and beam 4) against the same T5 model
decoding the same sources with transformers' own T5ForConditionalGeneration.generate() (in the
environment of `make references`; a hand-written loop over the same key-value cache where the python
lacks transformers: bench/reference/verbalize_torch.py), in one run, on the same machine and threads.

Data: template pairs of the X-FACTR dev KG's subgraphs (verbalize render --mode pairs, as
tests/cli/verbalize-quality.sh builds them); --sentences of them are verbalised. Model: a small T5
(4 + 4 blocks, d_model 256, 8 heads of 32, FFN 1024, ReLU, tied head), a 2,000-piece SentencePiece
vocabulary trained on the pairs, --train-steps steps of verbalize train so that sentences end the
way trained ones do (the decoding's cost depends on the lengths, not on the weights' quality). Both
decode in batches of 32 up to 64 tokens; kglm's time is its --stats decode_milliseconds (the
decode calls: no loading, tokenizing or writing), the peer's its decode loop alone. Each at
--threads 1 and 2. The outputs are compared token for token.

--device cuda adds rows for kglm on the GPU (verbalize generate --device cuda), against torch on the
GPU when its build has CUDA, else against torch's one-thread CPU rate (the row says which).

Against the strongest peers (issue 63), one table per decoding and thread count: kglm with
--precision fp32 and bf16 (under the environment as it is and, where it sets OPENBLAS_CORETYPE,
without it) against transformers' generate() on current PyTorch, eager and with torch.compile (bf16
under torch.autocast), and CTranslate2's translate_batch (the model converted by its own converter),
from the benchmark peers' environment of `make bench` (bench/peers/t5_peers.py); each peer decodes
one batch untimed first. Sentences/s, peak memory, the ratio to the best peer of the same
precision, the share of the machine's GEMM peak (bench/peak.py) that the decoding's matrix products
reach, and each peer's agreement with torch eager fp32. --no-peers leaves these tables out.

Usage: bench/verbalize.py [--bin build/bin] [--fixtures ../shared/fixtures] [--work out/bench] [--sentences 256]
                          [--train-steps 150] [--device cuda] [--no-peers]
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (arguments, blas_line, blas_settings, cpu_has_bf16, machine_peak, peak_line,  # noqa: E402
                      peers_python, print_peer_table, run, run_peer, torch_python)

TORCH_PYTHON = torch_python()  # Debian's python3 with python3-torch, or $KGLM_TORCH_PYTHON
CONFIG = {"model_type": "t5", "vocab_size": 2000, "d_model": 256, "d_kv": 32, "d_ff": 1024, "num_layers": 4,
          "num_decoder_layers": 4, "num_heads": 8, "relative_attention_num_buckets": 32,
          "relative_attention_max_distance": 128, "dropout_rate": 0.1, "feed_forward_proj": "relu",
          "tie_word_embeddings": True}


def main():
    def extra(ap):
        ap.add_argument("--sentences", type=int, default=256)
        ap.add_argument("--train-steps", type=int, default=150)
        ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
        ap.add_argument("--no-peers", action="store_true", help="leave out the strongest peers' tables")
    args = arguments(extra)
    if subprocess.run([TORCH_PYTHON, "-c", "import torch"], capture_output=True).returncode != 0:
        sys.exit("the peer needs Debian's python3-torch: apt-get install python3-torch")
    fx = args.fixtures
    if not os.path.exists(os.path.join(fx, "xfactr-kg-dev.json.gz")):
        sys.exit("fixtures not found: " + fx)
    root = os.path.join(args.work, "verbalize")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    b = lambda tool: os.path.join(args.bin, tool)  # noqa: E731
    q = ["--quiet", "--threads", "2"]
    run = lambda cmd: subprocess.run(cmd, check=True)  # noqa: E731
    run([b("wd-extract"), os.path.join(fx, "xfactr-kg-dev.json.gz"), "-o", f"{root}/kg.h5", "--langs", "en"] + q)
    run([b("wiki-extract"), os.path.join(fx, "wikipedia", "enwiki-sample-a.xml.bz2"), "-o", f"{root}/docs.jsonl"] + q)
    run([b("kg-align"), "--kg", f"{root}/kg.h5", "--cooc", f"{root}/cooc.tsv", "-o", f"{root}/aligned.jsonl",
         f"{root}/docs.jsonl"] + q)
    run([b("verbalize"), "subgraphs", "--kg", f"{root}/kg.h5", "--cooc", f"{root}/cooc.tsv", "--kinds", "item",
         "-o", f"{root}/subgraphs.jsonl"] + q)
    run([b("verbalize"), "render", "--kg", f"{root}/kg.h5", "--mode", "pairs", "--templates",
         os.path.join(fx, "xfactr", "templates"), "--langs", "en", "-o", f"{root}/pairs.jsonl",
         f"{root}/subgraphs.jsonl"] + q)
    pairs = [json.loads(line) for line in open(f"{root}/pairs.jsonl")]
    with open(f"{root}/spm.txt", "w") as f:
        for p in pairs:
            f.write(p["serialized_triples"] + "\n" + p["sentence"] + "\n")
    subprocess.run(["spm_train", f"--input={root}/spm.txt", f"--model_prefix={root}/spm", "--vocab_size=2000",
                    "--pad_id=0", "--eos_id=1", "--unk_id=2", "--bos_id=-1", "--character_coverage=1.0",
                    "--input_sentence_size=200000", "--shuffle_input_sentence=true"], check=True, capture_output=True)
    json.dump(CONFIG, open(f"{root}/config.json", "w"))
    run([b("verbalize"), "train", "--config", f"{root}/config.json", "--tokenizer", f"{root}/spm.model", "--steps",
         str(args.train_steps), "--batch", "32", "--lr", "2e-3", "--eval-fraction", "0", "--out", f"{root}/model",
         f"{root}/pairs.jsonl"] + q)
    # The sources: pairs from the end of the file (the training steps saw the first ones).
    inputs = pairs[-args.sentences:]
    with open(f"{root}/inputs.jsonl", "w") as f:
        for p in inputs:
            f.write(json.dumps({"serialized_triples": p["serialized_triples"]}) + "\n")
    with open(f"{root}/inputs.txt", "w") as f:
        for p in inputs:
            f.write(p["serialized_triples"] + "\n")
    ids = subprocess.run(["spm_encode", f"--model={root}/spm.model", "--output_format=id", f"{root}/inputs.txt"],
                         check=True, capture_output=True, text=True).stdout.splitlines()
    with open(f"{root}/inputs.ids", "w") as f:
        for line in ids:  # at most 127 pieces and </s>, as verbalize cuts them
            f.write(" ".join(line.split()[:127] + ["1"]) + "\n")

    here = os.path.dirname(os.path.abspath(__file__))
    torch_cuda = args.device == "cuda" and subprocess.run(
        [TORCH_PYTHON, "-c", "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"],
        capture_output=True).returncode == 0
    # (label of the threads column, kglm's --threads and --device, torch's --threads and --device)
    settings = [(str(t), t, "cpu", t, "cpu") for t in (1, 2)]
    if args.device == "cuda":
        settings.append(("gpu", 1, "cuda", 1, "cuda" if torch_cuda else "cpu"))
    rows, agreement = [], {}
    for beams in (0, 4):
        label = "beam 4" if beams else "greedy"
        for column, threads, device, peer_threads, peer_device in settings:
            out = f"{root}/kglm-{beams}-{column}"
            run([b("verbalize"), "generate", "--model", f"{root}/model", "--batch", "32", "--max-len", "64",
                 "--threads", str(threads), "--device", device, "-o", f"{out}.jsonl", "--stats",
                 f"{out}.stats.json", "--quiet", f"{root}/inputs.jsonl"] + (["--beams", str(beams)] if beams else []))
            s = json.load(open(f"{out}.stats.json"))
            ours = s["sentences"] / (s["decode_milliseconds"] / 1000)
            env = dict(os.environ, OPENBLAS_NUM_THREADS=str(peer_threads))
            peer_out = f"{root}/torch-{beams}-{column}.ids"
            r = json.loads(subprocess.run(
                [TORCH_PYTHON, os.path.join(here, "reference", "verbalize_torch.py"), "--model", f"{root}/model",
                 "--ids", f"{root}/inputs.ids", "--beams", str(beams), "--batch", "32", "--max-len", "64",
                 "--threads", str(peer_threads), "--device", peer_device, "--out", peer_out], check=True,
                capture_output=True, text=True, env=env).stdout)
            rows.append((label, column if peer_device == device else f"{column} (torch cpu)", ours,
                         r["sentences_per_second"]))
            if column != "2":
                theirs = subprocess.run(["spm_decode", f"--model={root}/spm.model", "--input_format=id", peer_out],
                                        check=True, capture_output=True, text=True).stdout.split("\n")
                mine = [json.loads(line)["gen_sentence"] for line in open(f"{out}.jsonl")]
                agreement[f"{label}, {column}"] = sum(1 for x, y in zip(mine, theirs) if x == y)
    print(f"data: {len(inputs)} X-FACTR template pairs' serialized triples; model T5 4+4 blocks, d_model 256, "
          f"8 heads, FFN 1024, vocabulary 2000, {args.train_steps} training steps; batches of 32, at most 64 tokens")
    print(f"{'decoding':<10} {'threads':>15} {'kglm sent/s':>12} {'torch sent/s':>13} {'ratio':>7}")
    for label, column, ours, theirs in rows:
        print(f"{label:<10} {column:>15} {ours:>12.1f} {theirs:>13.1f} {ours / theirs:>6.2f}x")
    for label, same in agreement.items():
        print(f"agreement ({label}): {same} of {len(inputs)} sentences identical")
    if args.device == "cpu" and not args.no_peers:
        strongest_peers(args, root, len(inputs))


def decoding_flops(sources, outputs, beams):
    """The matrix-product flops of decoding these sources into these outputs with the benchmark's T5
    (CONFIG): the encoder over each source; per decoder step and hypothesis (each output token and
    its </s>, times the beams) self-attention's four projections, cross-attention's query and output
    projections, the feed-forward and the vocabulary projection; cross-attention's keys and values once
    per source and hypothesis. Attention's scores are left out (short sequences: a few percent)."""
    d, inner, ff, vocab = CONFIG["d_model"], CONFIG["num_heads"] * CONFIG["d_kv"], CONFIG["d_ff"], CONFIG["vocab_size"]
    enc, dec, k = CONFIG["num_layers"], CONFIG["num_decoder_layers"], max(beams, 1)
    flops = 0
    for s, o in zip(sources, outputs):
        flops += 2 * len(s) * enc * (4 * d * inner + 2 * d * ff)
        flops += 2 * k * len(s) * dec * 2 * d * inner
        flops += 2 * k * (len(o) + 1) * (dec * (6 * d * inner + 2 * d * ff) + d * vocab)
    return flops


def strongest_peers(args, root, sentences):
    """Issue 63's tables, one per decoding and thread count: kglm fp32 and bf16 against transformers'
    generate() on current PyTorch, eager and with torch.compile, and CTranslate2's translate_batch, from
    the benchmark peers' environment (bench/peers/t5_peers.py); the ratio to the best peer of the same
    precision and the share of the machine's GEMM peak that the decoding's products reach."""
    python, peak = peers_python(), machine_peak(args.work)
    precisions = ["fp32"] + (["bf16"] if cpu_has_bf16() else [])
    sources = [[int(x) for x in line.split()] for line in open(f"{root}/inputs.ids")]
    print(f"against the strongest peers: current torch (transformers generate, eager and torch.compile) and "
          f"CTranslate2 in {python}; ONNX Runtime has no T5 generation of its own (Hugging Face's optimum "
          f"drives exported parts from Python): no row; peak: {peak_line(peak)}; {blas_line(peak)}")
    for beams in (0, 4):
        for threads in (1, 2):
            rows, flops = [], None
            for blas, env in blas_settings():
                for precision in precisions:
                    out = f"{root}/peers-kglm-{beams}-{threads}-{precision}{'-blas' if blas else ''}"
                    _, _, mem = run([os.path.join(args.bin, "verbalize"), "generate", "--model", f"{root}/model",
                                     "--batch", "32", "--max-len", "64", "--threads", str(threads), "--precision",
                                     precision, "-o", f"{out}.jsonl", "--stats", f"{out}.stats.json", "--quiet",
                                     f"{root}/inputs.jsonl"] + (["--beams", str(beams)] if beams else []), env)
                    s = json.load(open(f"{out}.stats.json"))
                    rows.append(("kglm verbalize generate" + blas, precision,
                                 s["sentences"] / (s["decode_milliseconds"] / 1000), mem, ""))
            reference = None
            for engine in ("torch", "compile", "ctranslate2"):
                for precision in precisions:
                    out = f"{root}/peers-{engine}-{beams}-{threads}-{precision}.ids"
                    name, r, why = run_peer("peers/t5_peers.py", engine, [
                        "--precision", precision, "--threads", str(threads), "--model", f"{root}/model", "--ids",
                        f"{root}/inputs.ids", "--beams", str(beams), "--work", f"{root}/peers-work", "--out", out])
                    if r is None:
                        rows.append((name, precision, None, None, why))
                        continue
                    outputs = [line.split() for line in open(out)]
                    if reference is None:
                        reference, flops = outputs, decoding_flops(sources, outputs, beams)
                    same = sum(1 for a, b in zip(outputs, reference) if a == b)
                    rows.append((name, precision, r["sentences"] / r["seconds"], r["peak_mb"],
                                 f"{same} of {len(outputs)} as torch eager fp32"))
            print("beam 4" if beams else "greedy", end=" ")
            print_peer_table(threads, "sentences", rows, peak, flops / sentences)


main()
