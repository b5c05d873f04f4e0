#!/usr/bin/env python3
"""The strongest peers of kglm's T5 decoding (`verbalize generate`, issue 63), in the environment of
`make bench` (build/bench-venv): one engine per run, so that each process's peak memory is its own.

  t5_peers.py --engine torch|compile|ctranslate2 --precision fp32|bf16 --threads N --model DIR
              --ids IDS [--beams 0|4] [--batch 32] [--max-len 64] [--work DIR] [--out OUT]

DIR is a kglm T5 checkpoint (a transformers directory); IDS holds one source a line as
space-separated ids, </s> included. Batches of --batch sources in file order, greedy (--beams 0) or
beam search with early stopping, at most --max-len new tokens, as bench/verbalize.py runs kglm.
- torch: transformers' T5ForConditionalGeneration.generate() in torch.inference_mode, bf16 under
  torch.autocast;
- compile: the same with the model's forward through torch.compile(dynamic=True);
- ctranslate2: converted with CTranslate2's own TransformersConverter (its vocabulary the ids:
  ctranslate2_ids.py), ctranslate2.Translator.translate_batch with beam_size 1 or --beams,
  compute_type float32 or bfloat16, intra_threads N; bf16 is refused where its CPU build lacks it.
ONNX Runtime has no encoder-decoder generation of its own (Hugging Face's optimum exports T5 in
parts and drives them from Python); it is not run. Each engine decodes the first batch once
untimed (compilation, conversion caches), then every batch timed. Prints one JSON line (sentences,
seconds, peak_mb, version); --out writes the generated ids, one line per source, </s> left out.
An engine that cannot do the job exits 3 with the reason on the last line of standard error."""
import argparse
import json
import os
import resource
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
from peerlib import refuse  # noqa: E402
from verbalize_torch import transformers_generate  # noqa: E402  (generate() as the torch 1.13 row runs it)


def torch_engine(model_dir, precision, compiled, beams, max_len):
    from transformers import T5ForConditionalGeneration
    model = T5ForConditionalGeneration.from_pretrained(model_dir).eval()
    if compiled:
        model.forward = torch.compile(model.forward, dynamic=True)
    eos = model.config.eos_token_id

    def decode(sources):
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16"):
            return transformers_generate(model, sources, max_len, beams, eos)
    return decode, torch.__version__


def ctranslate2_engine(model_dir, precision, threads, beams, max_len, work):
    import ctranslate2
    from ctranslate2_ids import convert
    if precision == "bf16" and "bfloat16" not in ctranslate2.get_supported_compute_types("cpu"):
        refuse("this build of CTranslate2 has no bf16 on this CPU (compute types: %s)" %
               ", ".join(sorted(ctranslate2.get_supported_compute_types("cpu"))))
    translator = ctranslate2.Translator(convert(model_dir, os.path.join(work, "ctranslate2")), device="cpu",
                                        compute_type="bfloat16" if precision == "bf16" else "float32",
                                        intra_threads=threads, inter_threads=1)

    def decode(sources):
        results = translator.translate_batch([[str(t) for t in s] for s in sources], beam_size=beams or 1,
                                             max_decoding_length=max_len, max_batch_size=len(sources))
        return [[int(t) for t in r.hypotheses[0]] for r in results]
    return decode, ctranslate2.__version__


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", required=True, choices=["torch", "compile", "ctranslate2"])
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--model", required=True)
    ap.add_argument("--ids", required=True)
    ap.add_argument("--beams", type=int, default=0)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--max-len", type=int, default=64)
    ap.add_argument("--work", default=".")
    ap.add_argument("--out")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    os.makedirs(a.work, exist_ok=True)
    sources = [[int(x) for x in line.split()] for line in open(a.ids) if line.strip()]
    if a.engine == "ctranslate2":
        decode, version = ctranslate2_engine(a.model, a.precision, a.threads, a.beams, a.max_len, a.work)
    else:
        decode, version = torch_engine(a.model, a.precision, a.engine == "compile", a.beams, a.max_len)
    batches = [sources[i:i + a.batch] for i in range(0, len(sources), a.batch)]
    decode(batches[0])  # untimed: compilation, first-call caches
    outputs = []
    start = time.perf_counter()
    for batch in batches:
        outputs += decode(batch)
    seconds = time.perf_counter() - start
    if a.out:
        with open(a.out, "w") as f:
            f.write("".join(" ".join(map(str, o)) + "\n" for o in outputs))
    print(json.dumps({"engine": a.engine, "precision": a.precision, "threads": a.threads, "version": version,
                      "sentences": len(sources), "seconds": seconds,
                      "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


if __name__ == "__main__":
    main()
