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
transformers' own XLMRobertaForMaskedLM (bench/reference/pretrain_torch.py --hf, in the environment
of `make references`, where it exists); bench/reference/pretrain_torch.py's own module with --head full (the vocabulary projection at every position,
as Hugging Face's XLMRobertaForMaskedLM) and --head masked (the masked rows only, as kglm), each
with torch.set_num_threads(--threads) and with torch on 1 thread (its gemms still on OpenBLAS's own
--threads threads: the faster setting on a 2-core machine). The speed column divides by the
fastest full-head torch run. Peak RSS of each process from os.wait4.

Against the strongest peers (issue 63), at 1 and 2 threads: kglm with --precision fp32 and bf16 (the
matrix products in bfloat16 on CPUs with AVX512_BF16/AMX) against current PyTorch from the peers'
environment (`make bench`: build/bench-venv) eager and torch.compile, fp32 and bf16 under
torch.autocast, all with the masked-rows head; tokens/s, peak memory, the ratio to the best peer of
the same precision, and the share of the machine's measured GEMM peak (bench/peak.py) that the
model's matrix-product flops per second reach (train_flops_per_token: forward + 2x backward).
kglm runs under the environment as it is and, where it sets OPENBLAS_CORETYPE, without it too.

Objectives: on a second dataset mixing the generators' real output (KMLM code-switched and
parallel sentences, 3-/4-cycle reasoning samples, EntityCS sentences, made from the fixtures by
wd-extract, cs-gen, kg-cycles and wiki-extract) with the text above, `pretrain` with every kind on
plain MLM, with the mixed objectives (knowledge, reasoning, PEP_MS+MLM, L = L_MLM + 0.3(L_K + L_R)),
and with the mixed objectives training only the last 2 of the 4 layers (--train-layers last:2):
tokens/s of each and their ratios, same sequences in the same order.

Also `pretrain prepare` of the corpus (tokens with offsets and flags into HDF5) against Debian's
`spm_encode --output_format=id` (ids only, to a text file) on the same text and model.

Usage: bench/pretrain-cpu.py [--bin build/bin] [--fixtures ../shared/fixtures] [--work out/bench]
                             [--steps 10] [--threads 2] [--peers-only]
"""
import copy
import glob
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (arguments, blas_line, blas_settings, cpu_has_bf16, has_transformers, machine_peak,  # noqa: E402
                      module_version, peak_line, peers_python, print_op_times, print_peer_table, run, torch_python)

COMPILE_WARM_STEPS = 5  # torch.compile compiles again when the masked rows' count changes (dynamic shapes)
TORCH_PYTHON = torch_python()  # Debian's python3 with python3-torch, or $KGLM_TORCH_PYTHON
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


def mixed_dataset(args, root, model):
    """The generators' output on the fixtures plus the text corpus, as one token dataset."""
    mixed = os.path.join(root, "mixed")
    data = os.path.join(mixed, "mixed.h5")
    if os.path.exists(data):
        return data
    os.makedirs(mixed, exist_ok=True)
    tool = lambda name: os.path.join(args.bin, name)  # noqa: E731
    kg = os.path.join(mixed, "kg.h5")
    steps = [
        [tool("wd-extract"), os.path.join(args.fixtures, "xfactr-kg-dev.json.gz"), "-o", kg, "--langs", "all"],
        [tool("cs-gen"), "kmlm", "--kg", kg, "--langs", "fr,ru", "--alias", "-o", os.path.join(mixed, "k-cs.jsonl")],
        [tool("cs-gen"), "kmlm", "--kg", kg, "--langs", "fr", "--mode", "parallel", "-o",
         os.path.join(mixed, "k-par.jsonl")],
        [tool("kg-cycles"), "--kg", kg, "-o", os.path.join(mixed, "cycles.h5"), "--text", os.path.join(mixed, "reason"),
         "--langs", "en", "--sample", "3000", "--max-degree", "200"],
        [tool("wiki-extract"), os.path.join(args.fixtures, "wikipedia", "enwiki-sample-a.xml.bz2"), "-o",
         os.path.join(mixed, "docs.jsonl")],
        [tool("cs-gen"), "entitycs", "--kg", kg, "--langs", "fr,ru", "-o", os.path.join(mixed, "ecs.jsonl"),
         os.path.join(mixed, "docs.jsonl")],
        [tool("pretrain"), "prepare", "--tokenizer", model, "--max-len", "128", "-o", data + ".part",
         os.path.join(mixed, "k-cs.jsonl"), os.path.join(mixed, "k-par.jsonl"), os.path.join(mixed, "reason"),
         os.path.join(mixed, "ecs.jsonl"), "en=" + os.path.join(root, "corpus.txt")],
    ]
    for cmd in steps:
        subprocess.run(cmd + ["--quiet"], check=True)
    os.replace(data + ".part", data)
    return data


def kglm_tokens_per_s(args, root, data, extra, warm_steps=2, env=None):
    """Runs pretrain for warm + timed steps (in env, else this environment); tokens/s of the timed
    ones (from its metrics log)."""
    ckpt, log = os.path.join(root, "ckpt"), os.path.join(root, "metrics.jsonl")
    shutil.rmtree(ckpt, ignore_errors=True)
    # `env` execs pretrain (same process, so run()'s peak memory is pretrain's).
    cmd = ["env", "KGLM_OP_TIMES=" + os.path.join(root, "ops.json"), os.path.join(args.bin, "pretrain"), "--data",
           data] + MODEL + [
        "--steps", str(args.steps + warm_steps), "--lr", "1e-4", "--warmup", "2", "--eval-fraction", "0",
        "--threads", str(args.threads), "--log", log, "--out", ckpt, "--quiet"] + extra
    wall, cpu, peak = run(cmd, env)
    steps = [json.loads(l) for l in open(log) if '"loss"' in l]
    timed = steps[warm_steps:]
    seconds = timed[-1]["elapsed_s"] - steps[warm_steps - 1]["elapsed_s"]
    return sum(s["tokens"] for s in timed) / seconds, seconds, peak, wall


def dataset_vocab(data):
    """The vocabulary size of a token dataset (its vocab_size attribute)."""
    info = subprocess.run(["h5dump", "-a", "vocab_size", data], capture_output=True, text=True).stdout
    return int(next(l for l in info.splitlines() if "(0)" in l).split(":")[-1].strip())


def train_flops_per_token(vocab, seq=128, hidden=256, ffn=1024, layers=4, masked=0.15):
    """The model's matrix-product flops per token of a training step (forward, and backward at twice
    that): per layer the q/k/v, output and FFN projections and attention's two products over `seq`
    positions; the head (transform and vocabulary projection) at the masked rows only."""
    per_layer = 2 * (4 * hidden * hidden + 2 * hidden * ffn) + 2 * 2 * seq * hidden
    head = masked * (2 * hidden * hidden + 2 * hidden * vocab)
    return 3 * (layers * per_layer + head)


def strongest_peers(args, root, data, vocab, warm_steps):
    """Issue 63's table, one per thread count: kglm fp32 and bf16 against current PyTorch (the
    benchmark peers' environment) eager and torch.compile, fp32 and bf16 (torch.autocast), the same
    model with the masked-rows head; the ratio to the best peer of the same precision and the share
    of the machine's measured GEMM peak (bench/peak.py) that the model's products reach."""
    python, peak = peers_python(), machine_peak(args.work)
    torch_version = module_version(python, "torch")
    flops = train_flops_per_token(vocab)
    print("against the strongest peers: current torch in %s (masked-rows head as kglm; torch.compile warmed up "
          "for %d steps, its recompilations included; ONNX Runtime and CTranslate2 run inference only: no training "
          "row); %.1f MFLOP per token of a step; peak: %s; %s" % (
              python, COMPILE_WARM_STEPS, flops / 1e6, peak_line(peak), blas_line(peak)))
    for threads in (1, 2):
        run_args = copy.copy(args)
        run_args.threads = threads
        rows = []
        for blas, env in blas_settings():
            for precision in ("fp32", "bf16"):
                if precision == "bf16" and not cpu_has_bf16():
                    print("kglm bf16: this CPU has neither AVX512_BF16 nor AMX-BF16")
                    continue
                tps, _, mem, _ = kglm_tokens_per_s(run_args, root, data, ["--precision", precision], warm_steps, env)
                rows.append(("kglm pretrain" + blas, precision, tps, mem))
        for compiled in (False, True):
            for precision in ("fp32", "bf16"):
                name = "torch %s %s" % (torch_version, "torch.compile" if compiled else "eager")
                out = os.path.join(root, "peer-%d-%s-%s.json" % (threads, precision, compiled))
                cmd = ["bash", "-c", '"$0" "$@" > ' + out, python, os.path.join(os.path.dirname(__file__), "reference",
                       "pretrain_torch.py"), "--data", data, "--steps", str(args.steps), "--warmup-steps",
                       str(COMPILE_WARM_STEPS if compiled else warm_steps), "--threads", str(threads), "--head",
                       "masked", "--dtype", precision] + MODEL + (["--compile"] if compiled else [])
                _, _, mem = run(cmd)
                rows.append((name, precision, json.load(open(out))["tokens_per_s"], mem))
        print_peer_table(threads, "tokens", [r + ("",) for r in rows], peak, flops)


def main():
    def extra(ap):
        ap.add_argument("--steps", type=int, default=10)
        ap.add_argument("--threads", type=int, default=2)
        ap.add_argument("--peers-only", action="store_true", help="only the table against the strongest peers")
    args = arguments(extra)
    if subprocess.run([TORCH_PYTHON, "-c", "import torch, h5py"], capture_output=True).returncode != 0:
        sys.exit("the peer needs Debian's python3-torch and python3-h5py: apt-get install python3-torch python3-h5py")
    if not shutil.which("spm_train"):
        sys.exit("spm_train not found: apt-get install sentencepiece")
    root, data = dataset(args)
    if args.peers_only:
        return strongest_peers(args, root, data, dataset_vocab(data), 2)
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
    kglm_tps, seconds, peak, wall = kglm_tokens_per_s(args, root, data, [], warm_steps)
    rows = [("kglm pretrain", kglm_tps, seconds, peak, wall)]
    shutil.copyfile(os.path.join(root, "ops.json"), os.path.join(root, "ops-mlm.json"))

    # transformers' XLMRobertaForMaskedLM itself where the reference environment has it; the script's
    # own module beside it measures the masked-rows head (kglm's), which transformers' class lacks.
    peers = [("transformers XLMRobertaForMaskedLM", "full", t, ["--hf"]) for t in (args.threads, 1)
             if has_transformers(TORCH_PYTHON)]
    peers += [("torch %s head" % head, head, t, []) for head in ("full", "masked") for t in (args.threads, 1)]
    for name, head, torch_threads, extra in peers:
        out = os.path.join(root, "torch-%s-%s-%d.json" % ("hf" if extra else "own", head, torch_threads))
        cmd = ["bash", "-c", '"$0" "$@" > ' + out, TORCH_PYTHON, os.path.join(os.path.dirname(__file__), "reference",
               "pretrain_torch.py"), "--data", data, "--steps", str(args.steps), "--warmup-steps", str(warm_steps),
               "--threads", str(torch_threads), "--head", head] + MODEL + extra
        wall, cpu, peak = run(cmd)
        r = json.load(open(out))
        rows.append(("%s, %d thr" % (name, torch_threads), r["tokens_per_s"], r["seconds"], peak, wall))

    vocab = dataset_vocab(data)
    print("pretrain-cpu: 4 layers, hidden 256, 4 heads, FFN 1024, seq 128, batch 32, %d timed steps, %d threads;"
          " vocabulary %d" % (args.steps, args.threads, vocab))
    best_full = max(r[1] for r in rows[1:] if "masked" not in r[0])
    print("%-44s %12s %10s %10s %9s" % ("run", "tokens/s", "timed s", "peak MB", "speed"))
    for name, tps, secs, peak, _ in rows:
        print("%-44s %12.0f %10.2f %10.0f %8.2fx" % (name, tps, secs, peak, tps / best_full))
    print_op_times("kglm pretrain (MLM run)", os.path.join(root, "ops-mlm.json"))
    strongest_peers(args, root, data, vocab, warm_steps)

    mixed = mixed_dataset(args, root, model)
    plain = "text=mlm,annotated=mlm,kmlm-all=mlm,reasoning=mlm,entitycs=mlm"
    objective_rows = [(name, kglm_tokens_per_s(args, root, mixed, extra, warm_steps)) for name, extra in (
        ("plain MLM, every kind", ["--objective", plain]),
        ("mixed objectives", []),
        ("mixed, --train-layers last:2", ["--train-layers", "last:2"]))]
    base = objective_rows[0][1][0]
    print("objectives on the mixed dataset (KMLM, reasoning, EntityCS, text; same model and steps):")
    print("%-30s %12s %10s %10s %9s" % ("run", "tokens/s", "timed s", "peak MB", "vs MLM"))
    for name, (tps, secs, peak, _) in objective_rows:
        print("%-30s %12.0f %10.2f %10.0f %8.3fx" % (name, tps, secs, peak, tps / base))
    print("mixed objectives / plain MLM: %.3f; last:2 of 4 layers / all layers (mixed): %.2fx faster" % (
        objective_rows[1][1][0] / base, objective_rows[2][1][0] / objective_rows[1][1][0]))


if __name__ == "__main__":
    main()
