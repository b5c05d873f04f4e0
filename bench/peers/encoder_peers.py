#!/usr/bin/env python3
"""The strongest peers of kglm's encoder inference (issue 63), in the environment of `make bench`
(build/bench-venv): one engine per run, so that each process's peak memory is its own.

  encoder_peers.py --engine torch|compile|onnxruntime|ctranslate2 --precision fp32|bf16 --threads N
                   --model CHECKPOINT --ids IDS [--batch 64] [--work DIR] [--out VECTORS.npy]

The checkpoint (a Hugging Face XLM-R directory, as kglm writes it) goes into transformers' own
XLMRobertaModel; IDS holds one sentence a line as space-separated ids, <s> and </s> included. The
sentences run as `pretrain embed` runs them: longest first, --batch at a time, each batch padded to
its longest sentence (the engines take rectangular batches; kglm packs them), and the last layer's
states mean-pooled over each sentence's tokens. The engines:
- torch: eager, in torch.inference_mode; bf16 under torch.autocast (the matrix products in bfloat16);
- compile: the same model through torch.compile(dynamic=True) (Inductor's C++ kernels on the CPU);
- onnxruntime: the model exported with torch.onnx.export (dynamic batch and length), run by an
  InferenceSession with ONNX Runtime's default graph optimisations and intra_op_num_threads N;
  ONNX Runtime's CPU provider has no bfloat16 matrix products: bf16 is refused;
- ctranslate2: converted with CTranslate2's own TransformersConverter, run by ctranslate2.Encoder
  with compute_type float32 or bfloat16 and intra_threads N (its vocabulary the ids themselves:
  bench/peers/ctranslate2_ids.py); bf16 is refused where its CPU build lacks it (PyPI's 4.8 wheels do).
An engine that cannot do the job exits 3 with the reason on the last line of standard error.
Each engine first runs every batch once untimed (compilation, the export's first run, the caches
warm), then the timed pass. Prints one JSON line: sentences, tokens (unpadded), seconds, peak_mb
(this process's maximum RSS, loading and conversion included) and the engine's version; --out saves
the pooled vectors for comparison with kglm's."""
import argparse
import json
import os
import resource
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_torch import load_checkpoint  # noqa: E402

REFUSED = 3  # the engine cannot do this job (the caller's table says so)


def refuse(why):
    """Exits with REFUSED, why on the last line of standard error."""
    print(why, file=sys.stderr)
    sys.exit(REFUSED)


def batches(sentences, batch):
    """Longest first, as kglm's embed: [(indices, ids [B, T] int64, mask [B, T] int64)]."""
    order = sorted(range(len(sentences)), key=lambda i: -len(sentences[i]))
    out = []
    for first in range(0, len(order), batch):
        chunk = order[first:first + batch]
        t = len(sentences[chunk[0]])
        ids = np.ones((len(chunk), t), dtype=np.int64)  # XLM-R's padding id is 1
        mask = np.zeros((len(chunk), t), dtype=np.int64)
        for r, i in enumerate(chunk):
            ids[r, :len(sentences[i])] = sentences[i]
            mask[r, :len(sentences[i])] = 1
        out.append((chunk, ids, mask))
    return out


def mean_pool(states, mask):
    m = mask[:, :, None].astype(np.float32)
    return (states.astype(np.float32) * m).sum(1) / m.sum(1)


def torch_engine(encoder, precision, compiled):
    model = torch.compile(encoder, dynamic=True) if compiled else encoder

    def forward(ids, mask):
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16"):
            states = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask)).last_hidden_state
            return states.float().numpy()
    return forward, torch.__version__


def onnxruntime_engine(encoder, precision, threads, work):
    import onnxruntime
    if precision != "fp32":
        refuse("ONNX Runtime's CPU provider has no bfloat16 MatMul (NOT_IMPLEMENTED)")

    class States(torch.nn.Module):
        def __init__(self, encoder):
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids, attention_mask):
            return self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    path = os.path.join(work, "encoder.onnx")
    example = (torch.ones((2, 8), dtype=torch.long), torch.ones((2, 8), dtype=torch.long))
    axes = {0: "batch", 1: "length"}
    torch.onnx.export(States(encoder), example, path, input_names=["input_ids", "attention_mask"],
                      output_names=["states"], dynamic_axes={"input_ids": axes, "attention_mask": axes, "states": axes},
                      dynamo=False)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])

    def forward(ids, mask):
        return session.run(["states"], {"input_ids": ids, "attention_mask": mask})[0]
    return forward, onnxruntime.__version__


def ctranslate2_engine(model_dir, precision, threads, work):
    import ctranslate2
    from ctranslate2_ids import convert
    if precision == "bf16" and "bfloat16" not in ctranslate2.get_supported_compute_types("cpu"):
        refuse("this build of CTranslate2 has no bf16 on this CPU (compute types: %s)" %
               ", ".join(sorted(ctranslate2.get_supported_compute_types("cpu"))))
    encoder = ctranslate2.Encoder(convert(model_dir, os.path.join(work, "ctranslate2")), device="cpu",
                                  compute_type="bfloat16" if precision == "bf16" else "float32",
                                  intra_threads=threads, inter_threads=1)

    def forward(ids, mask):
        lengths = mask.sum(1)
        return np.array(encoder.forward_batch([[str(t) for t in row[:n]] for row, n in zip(ids, lengths)])
                        .last_hidden_state)
    return forward, ctranslate2.__version__


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", required=True, choices=["torch", "compile", "onnxruntime", "ctranslate2"])
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--model", required=True)
    ap.add_argument("--ids", required=True)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--work", default=".", help="where the export and the conversion are written")
    ap.add_argument("--out")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    os.makedirs(a.work, exist_ok=True)
    sentences = [[int(x) for x in line.split()] for line in open(a.ids) if line.strip()]
    encoder = load_checkpoint(a.model)[0].roberta
    if a.engine == "ctranslate2":
        # The converter reads a transformers directory: the loaded encoder saved as one.
        hf = os.path.join(a.work, "transformers")
        if not os.path.exists(os.path.join(hf, "config.json")):
            load_checkpoint(a.model)[0].save_pretrained(hf)
            # CTranslate2 4.8's converter asserts position_embedding_type, which transformers 5 dropped.
            config = json.load(open(os.path.join(hf, "config.json")))
            json.dump(dict(config, position_embedding_type="absolute"), open(os.path.join(hf, "config.json"), "w"))
        forward, version = ctranslate2_engine(hf, a.precision, a.threads, a.work)
    elif a.engine == "onnxruntime":
        forward, version = onnxruntime_engine(encoder, a.precision, a.threads, a.work)
    else:
        forward, version = torch_engine(encoder, a.precision, a.engine == "compile")
    work = batches(sentences, a.batch)
    for _, ids, mask in work:  # untimed: compilation, first runs, caches
        forward(ids, mask)
    vectors = np.zeros((len(sentences), encoder.config.hidden_size), dtype=np.float32)
    start = time.perf_counter()
    for chunk, ids, mask in work:
        vectors[chunk] = mean_pool(forward(ids, mask), mask)
    seconds = time.perf_counter() - start
    if a.out:
        np.save(a.out, vectors)
    print(json.dumps({"engine": a.engine, "precision": a.precision, "threads": a.threads, "version": version,
                      "sentences": len(sentences), "tokens": sum(map(len, sentences)), "seconds": seconds,
                      "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


main()
