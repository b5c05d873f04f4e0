#!/usr/bin/python3
"""bench/peak: this machine's measured GEMM peak, the yardstick of every CPU benchmark's "share of
peak" (issue 63). Measured, not computed from the data sheet: the best of 5 timed products after 2
warm-ups, square N×N×N (default 4096: 137 GFLOP, long enough that the call's overhead vanishes), at
1 and 2 threads, each library in a process of its own.

- fp32: the best of OpenBLAS's cblas_sgemm (through ctypes, from the very library kglm links,
  libopenblas.so.0 of the loader's path; openblas_set_num_threads) with the kernels the environment
  gives it, the same without OPENBLAS_CORETYPE where the environment sets one (OpenBLAS then chooses
  for the CPU: the development machines set Haswell, which halves sgemm on their Zen 5 cores), and
  oneDNN's dnnl_sgemm (libdnnl.so.2, which kglm links for bf16; OMP_NUM_THREADS). Each is printed;
  "openblas_kernels" records the kernels kglm's processes run under this environment.
- bf16 (where the CPU has AVX512_BF16 or AMX): the bf16 matrix product of the benchmark peers'
  current PyTorch (oneDNN underneath), torch.set_num_threads; fp32 accumulation.

Prints one line per library, precision and thread count and writes the best of each precision and
thread count to WORK/peak.json, which the other benchmarks read (benchlib.machine_peak) rather than
measure again.

Usage: bench/peak.py [--work out/bench] [--n 4096] [--peers-python build/bench-venv/bin/python]
"""
import ctypes
import ctypes.util
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import arguments, cpu_has_bf16, peers_python  # noqa: E402

ROW_MAJOR, NO_TRANS = 101, 111


def sgemm_gflops(library, n, threads, repeats=5):
    """GFLOP/s of the best of `repeats` n×n×n sgemms of library (openblas or onednn) in this process,
    and the kernels it ran (OpenBLAS's core name; "" for oneDNN)."""
    import numpy as np
    a = np.random.default_rng(1).standard_normal((n, n), dtype=np.float32)
    b = np.random.default_rng(2).standard_normal((n, n), dtype=np.float32)
    c = np.zeros((n, n), dtype=np.float32)
    ptr = ctypes.POINTER(ctypes.c_float)
    if library == "openblas":
        blas = ctypes.CDLL("libopenblas.so.0")
        blas.openblas_set_num_threads(threads)
        blas.openblas_get_corename.restype = ctypes.c_char_p
        kernels = blas.openblas_get_corename().decode()
        call = lambda: blas.cblas_sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, n, n, n, ctypes.c_float(1.0),  # noqa: E731
                                        a.ctypes.data_as(ptr), n, b.ctypes.data_as(ptr), n, ctypes.c_float(0.0),
                                        c.ctypes.data_as(ptr), n)
    else:
        dnnl, kernels = ctypes.CDLL("libdnnl.so.2"), ""
        call = lambda: dnnl.dnnl_sgemm(ctypes.c_char(b"N"), ctypes.c_char(b"N"), ctypes.c_int64(n),  # noqa: E731
                                       ctypes.c_int64(n), ctypes.c_int64(n), ctypes.c_float(1.0),
                                       a.ctypes.data_as(ptr), ctypes.c_int64(n), b.ctypes.data_as(ptr),
                                       ctypes.c_int64(n), ctypes.c_float(0.0), c.ctypes.data_as(ptr), ctypes.c_int64(n))
    best = float("inf")
    for i in range(repeats + 2):
        start = time.perf_counter()
        call()
        seconds = time.perf_counter() - start
        if i >= 2:
            best = min(best, seconds)
    return 2.0 * n ** 3 / best / 1e9, kernels


def sgemm_in_process(library, n, threads, env):
    """sgemm_gflops in a process of its own (OpenBLAS reads OPENBLAS_CORETYPE as it loads)."""
    out = subprocess.run(["/usr/bin/python3", os.path.abspath(__file__), "--one", library, str(n), str(threads)],
                         capture_output=True, text=True, check=True, env=dict(env, OMP_NUM_THREADS=str(threads)))
    gflops, _, kernels = out.stdout.strip().partition(" ")
    return float(gflops), kernels


BF16_SCRIPT = r"""
import sys, time, torch
n, threads = int(sys.argv[1]), int(sys.argv[2])
torch.set_num_threads(threads)
g = torch.Generator().manual_seed(1)
a = torch.randn(n, n, generator=g).to(torch.bfloat16)
b = torch.randn(n, n, generator=g).to(torch.bfloat16)
best = float("inf")
for i in range(7):
    start = time.perf_counter()
    torch.matmul(a, b)
    seconds = time.perf_counter() - start
    if i >= 2:
        best = min(best, seconds)
print(2.0 * n ** 3 / best / 1e9, torch.__version__)
"""


def main():
    if sys.argv[1:2] == ["--one"]:  # sgemm_in_process's child
        gflops, kernels = sgemm_gflops(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return print(gflops, kernels)
    args = arguments(lambda ap: (ap.add_argument("--n", type=int, default=4096),
                                 ap.add_argument("--peers-python", default=None)))
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    peak = {"cpu": model, "n": args.n, "fp32": {}, "bf16": {}, "fp32_by": {}}
    print(f"peak: {model}; {os.cpu_count()} CPUs; GEMM {args.n}^3, best of 5")
    chosen = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    fp32 = [("OpenBLAS", "openblas", os.environ)] + (
        [("OpenBLAS, OPENBLAS_CORETYPE unset", "openblas", chosen)] if "OPENBLAS_CORETYPE" in os.environ else []) + [
        ("oneDNN dnnl_sgemm", "onednn", os.environ)]
    for threads in (1, 2):
        for name, library, env in fp32:
            gflops, kernels = sgemm_in_process(library, args.n, threads, env)
            if env is os.environ and library == "openblas":
                peak["openblas_kernels"] = kernels
            label = f"{name}: {kernels} kernels" if kernels else name
            print(f"peak: fp32 sgemm ({label}), {threads} thread{'s' if threads > 1 else ''}: {gflops:.1f} GFLOP/s")
            if gflops > peak["fp32"].get(str(threads), 0):
                peak["fp32"][str(threads)], peak["fp32_by"][str(threads)] = gflops, label
    if cpu_has_bf16():
        try:
            python = args.peers_python or peers_python()
        except SystemExit as absent:
            python = None
            print(f"peak: bf16 not measured: {absent}")
        for threads in (1, 2) if python else ():
            out = subprocess.run([python, "-c", BF16_SCRIPT, str(args.n), str(threads)], capture_output=True, text=True)
            if out.returncode != 0:
                print(f"peak: bf16: the peers' torch failed: {out.stderr.strip().splitlines()[-1:]}")
                break
            gflops, version = out.stdout.split()
            peak["bf16"][str(threads)] = float(gflops)
            peak["bf16_by"] = f"torch {version}"
            print(f"peak: bf16 GEMM (torch {version}, oneDNN), {threads} thread{'s' if threads > 1 else ''}: "
                  f"{float(gflops):.1f} GFLOP/s")
    else:
        print("peak: bf16: this CPU has neither AVX512_BF16 nor AMX")
    with open(os.path.join(args.work, "peak.json"), "w") as f:
        json.dump(peak, f, indent=1)


if __name__ == "__main__":
    main()
