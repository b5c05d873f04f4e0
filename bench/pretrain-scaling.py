#!/usr/bin/env python3
"""bench/pretrain-scaling: data-parallel pretrain at 1 and 2 MPI ranks on this machine's CPU, against
torch DistributedDataParallel (gloo) at 1 and 2 processes, and a model of multi-node scaling for
XLM-R base on 8 nodes x 4 V100 built from the all-reduce's measured cost.

Measured (this machine): weak scaling, each rank with 1 thread and 16 sequences of 128 tokens per
step (global batch 16 x ranks), the model of bench/pretrain-cpu (4 layers, hidden 256, FFN 1024,
a 32k SentencePiece vocabulary, its dataset): tokens/s, weak-scaling efficiency tokens/s(2) /
(2 tokens/s(1)), and kglm's communication share (the metrics log's comm_s, the time a step waits
for its gradients' reduction, over the step time). `pretrain comm-bench` under mpirun -np 2 gives
the all-reduce's latency (its per-call cost) and host bandwidth.

Model (XLM-R base: 12 layers, hidden 768, FFN 3072, 250,002-token vocabulary, 278M parameters,
laid out as kglm allocates them): the bytes a step all-reduces (fp32 gradients), split in 25 MB
buckets; a ring all-reduce moves 2(n-1)/n of them through each link: inside a node over NVLink
(--intra-gbps), across nodes through each node's NIC at 25, 100 or 200 Gb/s (4 GPUs behind one
NIC, reduced inside the node first), plus per bucket the measured latency of a 2-rank all-reduce
(2 hops) times (n - 1), a ring of n ranks taking 2(n - 1) hops. Compute per micro-step: FLOPs of the step (6 x non-embedding parameters per token,
attention at 512 tokens, the MLM head on the 15% masked rows) at --mfu of a V100's 125 TFLOP/s
fp16, or --gpu-tokens-per-s when measured (bench/pretrain-gpu). The buckets of the last micro-step
are reduced during its backward pass (2/3 of it), so a step exposes max(0, comm - backward) plus
one bucket; efficiency = step time on one GPU without communication / step time on N nodes.

Usage: bench/pretrain-scaling.py [--bin build/bin] [--fixtures ../shared/fixtures] [--work out/bench]
                                 [--steps 8] [--mfu 0.3] [--intra-gbps 100] [--gpu-tokens-per-s T]
"""
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import arguments, run, torch_python  # noqa: E402

TORCH_PYTHON = torch_python()  # Debian's python3 with python3-torch, or $KGLM_TORCH_PYTHON
HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = ["--layers", "4", "--hidden", "256", "--heads", "4", "--ffn", "1024"]
PER_RANK = 16
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def pretrain_cpu_dataset(args):
    """bench/pretrain-cpu's dataset (built there once, reused here)."""
    spec = importlib.util.spec_from_file_location("pretrain_cpu", os.path.join(HERE, "pretrain-cpu.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.dataset(args)


def kglm(args, root, data, ranks, warm=2):
    """tokens/s of the timed steps and the mean share of a step spent waiting for gradients."""
    ckpt, log = os.path.join(root, "scaling-ckpt"), os.path.join(root, "scaling-%d.jsonl" % ranks)
    shutil.rmtree(ckpt, ignore_errors=True)
    cmd = [os.path.join(args.bin, "pretrain"), "--data", data] + MODEL + [
        "--batch", str(PER_RANK * ranks), "--steps", str(args.steps + warm), "--lr", "1e-4", "--warmup", "2",
        "--eval-fraction", "0", "--threads", "1", "--log", log, "--out", ckpt, "--quiet"]
    if ranks > 1:
        cmd = ["mpirun", "-np", str(ranks), "--oversubscribe", "--bind-to", "core"] + cmd
    subprocess.run(cmd, check=True, env=MPI_ENV, stdout=subprocess.DEVNULL)
    steps = [json.loads(l) for l in open(log) if '"loss"' in l][warm:]
    tokens = sum(s["tokens"] for s in steps)
    seconds = sum(s["tokens"] / s["tokens_per_s"] for s in steps)
    comm = sum(s.get("comm_s", 0) for s in steps)
    return tokens / seconds, comm / seconds


def torch_ddp(args, root, data, ranks, warm=2):
    """tokens/s of bench/reference/pretrain_torch.py --ddp on `ranks` gloo processes (1 thread each)."""
    port = socket.socket()
    port.bind(("127.0.0.1", 0))
    address = str(port.getsockname()[1])
    port.close()
    out = os.path.join(root, "torch-ddp-%d.json" % ranks)
    procs = []
    for rank in range(ranks):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(ranks), MASTER_ADDR="127.0.0.1", MASTER_PORT=address,
                   OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
        cmd = [TORCH_PYTHON, os.path.join(HERE, "reference", "pretrain_torch.py"), "--data", data, "--ddp",
               "--batch", str(PER_RANK * ranks), "--steps", str(args.steps), "--warmup-steps", str(warm),
               "--threads", "1", "--head", "masked"] + MODEL
        procs.append(subprocess.Popen(cmd, env=env, stdout=open(out, "w") if rank == 0 else subprocess.DEVNULL))
    if any(p.wait() != 0 for p in procs):
        sys.exit("torch DDP failed")
    return json.load(open(out))["tokens_per_s"]


def comm_bench(args, root):
    stats = os.path.join(root, "comm-bench.json")
    subprocess.run(["mpirun", "-np", "2", "--oversubscribe", os.path.join(args.bin, "pretrain"), "comm-bench",
                    "--max-bytes", str(64 << 20), "--stats", stats], check=True, env=MPI_ENV)
    s = json.load(open(stats))
    return s["latency_ns"] / 1e9, s["bytes_per_s"]


def xlmr_base():
    """XLM-R base's parameters (count, as kglm lays them out, each padded to 16) and FLOPs per token."""
    v, h, f, layers, positions, t = 250002, 768, 3072, 12, 514, 512
    pad = lambda n: (n + 15) // 16 * 16  # noqa: E731
    shapes = [v * h, positions * h, h, h, h]  # word, position, type embeddings; LayerNorm
    for _ in range(layers):
        shapes += [3 * h * h, 3 * h, h * h, h, h, h, f * h, f, h * f, h, h, h]
    shapes += [h * h, h, h, h, v]  # head: dense, LayerNorm, decoder bias (weights tied)
    params = sum(shapes)
    padded = sum(pad(n) for n in shapes)
    non_embedding = params - v * h - positions * h - h - v
    flops = 6 * non_embedding + layers * 12 * t * h + 0.15 * 6 * h * v  # per token, forward + backward
    return params, padded * 4, flops


def scaling_model(args, latency):
    params, grad_bytes, flops = xlmr_base()
    tokens_micro = 32 * 512
    gpu_tps = args.gpu_tokens_per_s or args.mfu * 125e12 / flops
    t_micro = tokens_micro / gpu_tps
    bucket = 25 << 20
    buckets = -(-grad_bytes // bucket)
    gpus = 4
    t_adamw = params * 28 / 900e9  # reads and writes values, grads and both moments at HBM speed
    print("model: XLM-R base, %.1fM parameters, %.2f GB of fp32 gradients a step in %d buckets of 25 MB; "
          "%.2f GFLOP/token; V100 at %.0f tokens/s (%s), %d x 512 tokens a micro-step = %.0f ms; NVLink %g GB/s, "
          "all-reduce latency %.0f us a call (measured)" % (
              params / 1e6, grad_bytes / 1e9, buckets, flops / 1e9, gpu_tps,
              "given" if args.gpu_tokens_per_s else "%.0f%% of 125 TFLOP/s" % (args.mfu * 100),
              tokens_micro // 512, t_micro * 1e3, args.intra_gbps, latency * 1e6))
    print("%-9s %-10s %6s %12s %12s %12s %11s" % ("network", "accumulate", "nodes", "comm ms", "exposed ms",
                                                   "step ms", "efficiency"))
    rows = []
    for gbps in (25, 100, 200):
        for accumulate in (1, 4):
            single = accumulate * t_micro + t_adamw
            for nodes in (1, 2, 4, 8):
                n = nodes * gpus
                intra = 2 * (gpus - 1) / gpus * grad_bytes / (args.intra_gbps * 1e9)
                inter = 2 * (nodes - 1) / nodes * grad_bytes / (gbps / 8 * 1e9) if nodes > 1 else 0.0
                # The measured latency is a 2-rank ring's 2 hops; a ring of n ranks takes 2(n - 1).
                comm = intra + inter + buckets * latency * (n - 1)
                exposed = max(0.0, comm - 2 / 3 * t_micro) + comm / buckets
                step = single + exposed
                rows.append((gbps, accumulate, nodes, comm, exposed, step, single / step))
                print("%-9s %-10d %6d %12.1f %12.1f %12.1f %10.1f%%" % (
                    "%d Gb/s" % gbps, accumulate, nodes, comm * 1e3, exposed * 1e3, step * 1e3, 100 * single / step))
    for gbps in (25, 100, 200):
        eight = [r for r in rows if r[0] == gbps and r[2] == 8]
        print("8 nodes at %d Gb/s: %s" % (gbps, ", ".join("accumulate %d %.1f%%" % (r[1], 100 * r[6]) for r in eight)))


def main():
    def extra(ap):
        ap.add_argument("--steps", type=int, default=8)
        ap.add_argument("--threads", type=int, default=1)  # for pretrain-cpu's dataset builder
        ap.add_argument("--mfu", type=float, default=0.3)
        ap.add_argument("--intra-gbps", type=float, default=100.0)
        ap.add_argument("--gpu-tokens-per-s", type=float, default=0.0)
    args = arguments(extra)
    if not shutil.which("mpirun"):
        sys.exit("mpirun not found: apt-get install openmpi-bin libopenmpi-dev")
    root, data = pretrain_cpu_dataset(args)
    latency, host_bandwidth = comm_bench(args, root)
    print("comm-bench, 2 ranks on this host: %.1f us + bytes / %.2f GB/s" % (latency * 1e6, host_bandwidth / 1e9))
    rows = []
    for ranks in (1, 2):
        tps, comm_share = kglm(args, root, data, ranks)
        torch_tps = torch_ddp(args, root, data, ranks)
        rows.append((ranks, tps, comm_share, torch_tps))
    print("pretrain-scaling on this CPU: 4 layers, hidden 256, 16 x 128-token sequences a rank, 1 thread a rank, "
          "%d timed steps" % args.steps)
    print("%-6s %14s %12s %10s %18s %10s %10s" % ("ranks", "kglm tok/s", "comm share", "kglm eff", "torch DDP tok/s",
                                                  "torch eff", "kglm/torch"))
    for ranks, tps, comm_share, torch_tps in rows:
        print("%-6d %14.0f %11.1f%% %9.1f%% %18.0f %9.1f%% %9.2fx" % (
            ranks, tps, 100 * comm_share, 100 * tps / (ranks * rows[0][1]), torch_tps,
            100 * torch_tps / (ranks * rows[0][3]), tps / torch_tps))
    scaling_model(args, latency)


if __name__ == "__main__":
    main()
