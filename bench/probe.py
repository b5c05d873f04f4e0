#!/usr/bin/env python3
"""bench/probe: X-FACTR probing facts/s of `probe` with the independent and the confidence method
against the same decoding of the same checkpoint in Debian's python3-torch
(bench/reference/probe_torch.py), in one run, on the same facts, machine and thread count. The peer
runs twice: as X-FACTR's probe.py computes (--style xfactr: facts in file order, every sequence of a
batch in every pass, the full vocabulary at every position) and as kglm computes (--style lean:
sequences sorted by length, only the open ones, the head at the masks only).

Model: XLM-R-shaped, 4 layers, hidden 256, 4 heads, FFN 1024, with XLM-R's vocabulary of 250,002
rows (--vocab; the fixtures' SentencePiece model covers the first 1,002, the other rows repeat them
with a lower bias), random weights N(0, 0.1) (tests/cli/make_tiny_mlm.py; the decoding's cost does
not depend on them, and at this scale the model's attention is not so peaked that rounding flips
its predictions). Facts: the English X-FACTR fixture facts, the first --max-facts of each of the 23
relations, 1..5 masks each, batches of 64 sequences, confidence refining up to 10 times. kglm's time
is its --stats decode_milliseconds (building the clozes and decoding; loading is left out, as the
peer leaves it out). Each at --threads 1 and 2, the peer with OpenBLAS held to as many threads. The
two must make the same predictions: the agreement is printed. X-FACTR's way is slow: with the
default 2 facts per relation the whole benchmark takes about 10 minutes on 2 cores.

kglm also with --precision bf16 where the CPU has AVX512_BF16 or AMX: its speed against fp32 and
their agreement.

Against the strongest peers (issue 63), one table per method and thread count: kglm fp32 and bf16
(under the environment as it is and, where it sets OPENBLAS_CORETYPE, without it) against the lean
decoding of bench/reference/probe_torch.py with its encoder in current torch eager or torch.compile,
ONNX Runtime or CTranslate2 (--engine, the peers' environment of `make bench`; the MLM head in torch,
which no encoder engine runs at the masked rows alone); facts/s and agreement with kglm fp32's
predictions. --no-peers leaves them out.

--device cuda times kglm on the GPU against kglm on 2 CPU threads instead, with their agreement.

Usage: bench/probe.py [--bin build/bin] [--fixtures ../shared/fixtures] [--work out/bench] [--max-facts 2]
                      [--vocab 250002] [--device cpu|cuda] [--no-peers]
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (arguments, blas_line, blas_settings, cpu_has_bf16, machine_peak, peak_line,  # noqa: E402
                      peers_python, print_peer_table, run_peer, torch_python)

TORCH_PYTHON = torch_python()  # Debian's python3 with python3-torch, or $KGLM_TORCH_PYTHON
MODEL = ["--layers", "4", "--hidden", "256", "--heads", "4", "--ffn", "1024"]
STYLES = ("xfactr", "lean")
METHODS = ("independent", "confidence")
RELATIONS = ("P19,P20,P279,P37,P47,P138,P463,P106,P530,P27,P30,P1376,P131,P1412,P17,P276,P103,P31,P495,P159,P36,"
             "P740,P361")


def main():
    def extra(ap):
        ap.add_argument("--max-facts", type=int, default=2)
        ap.add_argument("--vocab", type=int, default=250002)
        ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
        ap.add_argument("--no-peers", action="store_true", help="leave out the strongest peers' tables")
    args = arguments(extra)
    if args.device == "cpu" and subprocess.run([TORCH_PYTHON, "-c", "import torch"], capture_output=True).returncode:
        sys.exit("the peer needs Debian's python3-torch: apt-get install python3-torch")
    root = os.path.join(args.work, "probe")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    b = lambda tool: os.path.join(args.bin, tool)  # noqa: E731
    fx = args.fixtures
    x = os.path.join(fx, "xfactr")
    spm = os.path.join(fx, "tokenizer", "spm-test-vocab1000.model")
    if not os.path.exists(os.path.join(x, "facts")):
        sys.exit("fixtures not found: " + fx)
    q = ["--quiet"]
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run([sys.executable, os.path.join(here, "..", "tests", "cli", "make_tiny_mlm.py")] + MODEL +
                   ["--positions", "130", "--vocab", str(args.vocab), "--std", "0.1", f"{root}/model", spm, "random", "1"],
                   check=True, capture_output=True)
    common = ["--facts", os.path.join(x, "facts"), "--relations", RELATIONS, "--max-facts", str(args.max_facts),
              "--method", ",".join(METHODS)]

    def kglm(threads, device="cpu", precision="fp32", env=None, tag=""):
        out = f"{root}/kglm-{threads}" + ("" if device == "cpu" else "-" + device) + (
            "" if precision == "fp32" else "-" + precision) + tag
        subprocess.run([b("probe"), "--model", f"{root}/model", "--templates", os.path.join(x, "templates"),
                        "--threads", str(threads), "--device", device, "--precision", precision, "-o", out, "--stats",
                        f"{out}.stats.json", "--predictions", f"{out}.jsonl"] + common + q, check=True, env=env)
        s = json.load(open(f"{out}.stats.json"))
        return {m: s["facts_probed." + m] / (s["decode_milliseconds." + m] / 1000) for m in METHODS}, \
            s["facts_probed." + METHODS[0]]

    def peer(style, threads, blas_threads):
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(blas_threads))
        out = f"{root}/torch-{style}-{threads}.jsonl"
        r = json.loads(subprocess.run(
            [TORCH_PYTHON, os.path.join(here, "reference", "probe_torch.py"), "--style", style,
             "--model", f"{root}/model", "--templates", os.path.join(x, "templates", "en.jsonl"),
             "--threads", str(threads), "--predictions", out] + common,
            check=True, capture_output=True, text=True, env=env).stdout)
        return {m: r[m + "_facts_per_second"] for m in METHODS}, r["facts"]

    if args.device == "cuda":
        return against_the_cpu(args, root, kglm)
    rows = []
    bf16 = cpu_has_bf16()
    for threads in (1, 2):
        rates, facts = kglm(threads)
        rows.append((f"kglm --threads {threads}", rates))
        if bf16:
            rows.append((f"kglm --threads {threads} --precision bf16", kglm(threads, precision="bf16")[0]))
        for style in STYLES:
            rates, peer_facts = peer(style, threads, threads)
            rows.append((f"torch {style} {threads} thread(s)", rates))
            assert peer_facts == facts, (peer_facts, facts)

    ours = predictions(f"{root}/kglm-1.jsonl")
    print_rates(args, facts, rows)
    for threads in (1, 2) if bf16 else ():
        k = next(r[1] for r in rows if r[0] == f"kglm --threads {threads}")
        h = next(r[1] for r in rows if r[0] == f"kglm --threads {threads} --precision bf16")
        print(f"--precision bf16 / fp32, {threads} thread(s): " + ", ".join(f"{m} {h[m] / k[m]:.2f}x" for m in METHODS))
    if bf16:
        halves = predictions(f"{root}/kglm-1-bf16.jsonl")
        same = sum(1 for k in ours if halves.get(k) == ours[k])
        print(f"agreement of bf16 with fp32: {same} of {len(ours)} predictions identical (a random model: near ties)")
    for style in STYLES:
        for threads in (1, 2):
            k = next(r[1] for r in rows if r[0] == f"kglm --threads {threads}")
            t = next(r[1] for r in rows if r[0] == f"torch {style} {threads} thread(s)")
            print(f"against torch {style}, {threads} core(s) each: " +
                  ", ".join(f"{m} {k[m] / t[m]:.2f}x" for m in METHODS))
        theirs = predictions(f"{root}/torch-{style}-1.jsonl")
        same = sum(1 for k in ours if theirs.get(k) == ours[k])
        print(f"agreement with torch {style}: {same} of {len(ours)} predictions identical (mask count and tokens)")
    if not args.no_peers:
        strongest_peers(args, root, common, kglm, ours)


def strongest_peers(args, root, common, kglm, ours):
    """Issue 63's tables, one per method and thread count: kglm fp32 and bf16 against the lean
    decoding of bench/reference/probe_torch.py with its encoder in current torch eager or
    torch.compile, ONNX Runtime or CTranslate2 (--engine, the peers' environment of `make bench`),
    the MLM head in torch; agreement with kglm fp32's predictions. No share of peak: the iterative
    decoding's flops depend on each fact's passes."""
    python, peak = peers_python(), machine_peak(args.work)
    x = os.path.join(args.fixtures, "xfactr")
    precisions = ["fp32"] + (["bf16"] if cpu_has_bf16() else [])
    print(f"against the strongest peers: probe_torch.py --style lean with the encoder in each engine (the head "
          f"in torch), from {python}; {blas_line(peak)}; peak: {peak_line(peak)}")
    for threads in (1, 2):
        rows = []
        for blas, env in blas_settings():
            for precision in precisions:
                rates, _ = kglm(threads, precision=precision, env=env, tag="-blas" if blas else "")
                rows.append(("kglm probe" + blas, precision, rates, None, ""))
        for engine in ("torch", "compile", "onnxruntime", "ctranslate2"):
            for precision in precisions:
                out = f"{root}/peers-{engine}-{threads}-{precision}.jsonl"
                name, r, why = run_peer("reference/probe_torch.py", engine, [
                    "--style", "lean", "--precision", precision, "--work", f"{root}/peers-{engine}", "--model",
                    f"{root}/model", "--templates", os.path.join(x, "templates", "en.jsonl"), "--threads",
                    str(threads), "--predictions", out] + common)
                if r is None:
                    rows.append((name, precision, None, None, why))
                    continue
                theirs = predictions(out)
                same = sum(1 for k in ours if theirs.get(k) == ours[k])
                rows.append((name, precision, {m: r[m + "_facts_per_second"] for m in METHODS}, None,
                             f"{same} of {len(ours)} as kglm fp32"))
        for m in METHODS:
            print(m, end=" ")
            print_peer_table(threads, "facts", [(n, p, r and r[m], mem, note) for n, p, r, mem, note in rows], peak,
                             None)


def predictions(path):
    """{(method, relation, subject, object): (mask count, token ids)} of a --predictions file."""
    return {(p["method"], p["relation"], p["sub_uri"], p["obj_uri"]): (p["num_mask"], p["token_ids"])
            for p in map(json.loads, open(path))}


def print_rates(args, facts, rows):
    print(f"data: {facts} English X-FACTR facts ({args.max_facts} per relation, 23 relations), 1..5 masks; "
          f"model 4x256, FFN 1024, vocabulary {args.vocab}")
    print(f"{'run':<32} " + " ".join(f"{m + ' facts/s':>22}" for m in METHODS))
    for name, rates in rows:
        print(f"{name:<32} " + " ".join(f"{rates[m]:>22.1f}" for m in METHODS))


def against_the_cpu(args, root, kglm):
    """--device cuda: kglm on the GPU against kglm on 2 CPU threads (the peer reads its inputs with
    Debian's spm_encode, which the GPU machine lacks), and their agreement."""
    cpu, facts = kglm(2)
    gpu, _ = kglm(2, "cuda")
    print_rates(args, facts, [("kglm --threads 2", cpu), ("kglm --device cuda", gpu)])
    print("GPU against 2 CPU threads: " + ", ".join(f"{m} {gpu[m] / cpu[m]:.2f}x" for m in METHODS))
    a, b = predictions(f"{root}/kglm-2.jsonl"), predictions(f"{root}/kglm-2-cuda.jsonl")
    print(f"agreement GPU/CPU: {sum(1 for k in a if b.get(k) == a[k])} of {len(a)} predictions identical")


main()
