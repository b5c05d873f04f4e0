"""Shared helpers of the benchmark scripts."""
import argparse
import os
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)


def run(cmd, env=None):
    """Runs cmd; returns (wall seconds, CPU seconds, peak RSS in MB) of that process alone (os.wait4)."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(p.pid, 0)
    secs = time.perf_counter() - start
    if status != 0:
        sys.exit("failed: " + " ".join(cmd))
    return secs, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def torch_python():
    """The python3 that has torch: $KGLM_TORCH_PYTHON (the GPU machine's, tests/gpu/run.sh), else the
    reference environment of `make references` (Debian's python3-torch with transformers), else
    Debian's /usr/bin/python3 with python3-torch."""
    venv = os.path.join(root, "build", "references-venv", "bin", "python")
    return os.environ.get("KGLM_TORCH_PYTHON", venv if os.path.exists(venv) else "/usr/bin/python3")


def peers_python():
    """The python of the strongest peers (current torch, ONNX Runtime, CTranslate2; `make bench`
    installs them, cmake/bench-peers.sh): $KGLM_PEERS_PYTHON, else build/bench-venv/bin/python; exits
    saying how to get it when absent."""
    python = os.environ.get("KGLM_PEERS_PYTHON", os.path.join(root, "build", "bench-venv", "bin", "python"))
    if not os.path.exists(python):
        sys.exit(f"no benchmark peers at {python}: run make bench (or cmake/bench-peers.sh build/bench-venv)")
    return python


def module_version(python, module):
    """module.__version__ as that python imports it ("?" when it cannot)."""
    out = subprocess.run([python, "-c", f"import {module}; print({module}.__version__)"], capture_output=True, text=True)
    return out.stdout.strip() or "?"


def cpu_has_bf16():
    """Whether this CPU has bf16 dot products (AVX512_BF16 or AMX-BF16): where kglm's --precision bf16
    runs and the bf16 peak is measured."""
    flags = next((line.split(":", 1)[1].split() for line in open("/proc/cpuinfo") if line.startswith("flags")), [])
    return "avx512_bf16" in flags or "amx_bf16" in flags


def machine_peak(work):
    """This machine's measured GEMM peak in GFLOP/s ({"fp32": {"1": .., "2": ..}, "bf16": {...}}):
    WORK/peak.json of bench/peak.py, measured now when absent."""
    import json
    path = os.path.join(work, "peak.json")
    if not os.path.exists(path):
        subprocess.run(["/usr/bin/python3", os.path.join(here, "peak.py"), "--work", work], check=True)
    return json.load(open(path))


def has_transformers(python):
    """Whether that python imports transformers (then the peer is transformers' own model class)."""
    return subprocess.run([python, "-c", "import transformers"], capture_output=True).returncode == 0


def references_python():
    """The python of `make references` (the field's own tools as peers): $KGLM_REFERENCES_PYTHON, else
    build/references-venv/bin/python; exits saying how to get it when absent."""
    python = os.environ.get("KGLM_REFERENCES_PYTHON", os.path.join(root, "build", "references-venv", "bin", "python"))
    if not os.path.exists(python):
        sys.exit(f"no reference environment at {python}: run make references")
    return python


def warm(path):
    """Reads path once so that the first timed run does not pay for the disk."""
    subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)


def arguments(extra):
    """The options every benchmark takes (--bin, --fixtures, --work) plus extra(parser)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.environ.get("KGLM_BIN", os.path.join(root, "build", "bin")))
    ap.add_argument("--fixtures", default=os.path.join(root, "..", "shared", "fixtures"))
    ap.add_argument("--work", default=os.path.join(root, "out", "bench"))
    extra(ap)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    return args


def dev_kg(args, name, langs):
    """The dev KG fixture through wd-extract: (kg.h5, TSV dir) under args.work."""
    dev = os.path.join(args.fixtures, "xfactr-kg-dev.json.gz")
    if not os.path.exists(dev):
        sys.exit("fixtures not found: " + args.fixtures)
    kg, tsv = os.path.join(args.work, name + ".h5"), os.path.join(args.work, name + "-tsv")
    subprocess.run([os.path.join(args.bin, "wd-extract"), dev, "-o", kg, "--langs", langs, "--tsv", tsv, "--quiet"],
                   check=True)
    return kg, tsv


def runs_by_threads(label, command):
    """[(label --threads N, wall, cpu, peak MB)] for N = 1 and 2; command(N) gives the argv."""
    return [("%s --threads %d" % (label, n),) + run(command(n)) for n in (1, 2)]


def op_times_env(path, env=None):
    """The environment that makes a kglm tool write its CPU time per op class to path at exit
    (KGLM_OP_TIMES, lib/nn/ops/op_times.hpp)."""
    return dict(env or os.environ, KGLM_OP_TIMES=path)


def print_op_times(label, path):
    """One line: the share of the op time that each class (linear, attention, elementwise, head,
    optimizer, other) took in the run that wrote path, and the seconds."""
    import json
    if not os.path.exists(path):
        return
    classes = json.load(open(path))["classes"]
    total = sum(classes.values()) or 1.0
    parts = ", ".join(f"{c} {100 * s / total:.0f}%" for c, s in sorted(classes.items(), key=lambda kv: -kv[1]))
    print(f"op time, {label}: {total:.1f} s in ops: {parts}")


def print_peer_table(threads, unit, rows, peak, flops_per_unit):
    """Issue 63's table for one thread count: rows of (name, precision, rate in units/s or None when
    the engine cannot do the job, peak MB or None, note); the ratio to the best peer (a row not starting
    with "kglm") of the same precision, and the share of the machine's measured GEMM peak of that
    precision (bench/peak.py) that rate x flops_per_unit reaches."""
    print("%d thread%s: %-46s %-5s %12s %9s %12s %14s  %s" % (threads, "s" if threads > 1 else " ", "run", "dtype",
                                                               unit + "/s", "peak MB", "vs best peer", "share of peak",
                                                               "note"))
    for name, precision, rate, mem, note in rows:
        if rate is None:
            print("           %-46s %-5s %12s %9s %12s %14s  %s" % (name, precision, "-", "-", "-", "-", note))
            continue
        peers = [r[2] for r in rows if r[1] == precision and not r[0].startswith("kglm") and r[2]]
        versus = "%11.2fx" % (rate / max(peers)) if peers else "%12s" % "-"
        top = peak.get(precision, {}).get(str(threads))
        share = "%13.0f%%" % (100 * rate * flops_per_unit / 1e9 / top) if top and flops_per_unit else "%14s" % "-"
        memory = "%9.0f" % mem if mem is not None else "%9s" % "-"
        print("           %-46s %-5s %12.1f %s %s %s  %s" % (name, precision, rate, memory, versus, share, note))
    for name in dict.fromkeys(r[0] for r in rows if r[0].startswith("kglm")):
        kglm = {r[1]: r[2] for r in rows if r[0] == name and r[2]}
        if "bf16" in kglm and "fp32" in kglm:
            print("           %s: bf16 / fp32 %.2fx" % (name, kglm["bf16"] / kglm["fp32"]))


def peak_line(peak):
    """The measured peaks of bench/peak.py in one phrase."""
    return ", ".join("%s %s thr %.0f GFLOP/s" % (p, t, v) for p in ("fp32", "bf16")
                     for t, v in sorted(peak.get(p, {}).items()))


def blas_settings():
    """[(label, environment)] to run kglm under: the environment as it is, and, where it sets
    OPENBLAS_CORETYPE (the development machines set Haswell: AVX2 kernels on AVX-512 cores), the
    same without it, so OpenBLAS chooses its kernels for the CPU as it does for most users."""
    settings = [("", dict(os.environ))]
    if "OPENBLAS_CORETYPE" in os.environ:
        settings.append((", OPENBLAS_CORETYPE unset", {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}))
    return settings


def blas_line(peak):
    """Which kernels kglm's fp32 products run under this environment, in one phrase."""
    set_to = os.environ.get("OPENBLAS_CORETYPE")
    return ("kglm's fp32 products run on oneDNN's sgemm, one-row products (and those within OpenBLAS's "
            "small-matrix path, where its kernels have one) on OpenBLAS's %s kernels%s") % (
        peak.get("openblas_kernels", "?"), " (OPENBLAS_CORETYPE=%s in the environment)" % set_to if set_to else "")


PEER_NAMES = {"torch": "torch %s eager", "compile": "torch %s torch.compile", "onnxruntime": "onnxruntime %s",
              "ctranslate2": "ctranslate2 %s"}
PEER_REFUSED = 3  # bench/peers/peerlib.py: the engine cannot do the job


def run_peer(script, engine, argv):
    """bench/SCRIPT --engine ENGINE ARGV in the peers' python: (the row's name, the dict of its JSON
    line, "") or, where the engine cannot do the job, (name, None, the reason it gave)."""
    import json
    p = subprocess.run([peers_python(), os.path.join(here, script), "--engine", engine] + argv,
                       capture_output=True, text=True)
    if p.returncode == PEER_REFUSED:
        return PEER_NAMES[engine] % "", None, p.stderr.strip().splitlines()[-1]
    if p.returncode:
        sys.exit(f"{script} --engine {engine} failed:\n{p.stderr[-3000:]}")
    r = json.loads(p.stdout.splitlines()[-1])
    return PEER_NAMES[engine] % r["version"], r, ""
