#!/usr/bin/env python3
"""The strongest peers of kglm's encoder inference (issue 63), in the environment of `make bench`
(build/bench-venv): one engine per run, so that each process's peak memory is its own.

  encoder_peers.py --engine torch|compile|onnxruntime|ctranslate2 --precision fp32|bf16 --threads N
                   --model CHECKPOINT --ids IDS [--head embed|token] [--batch 64] [--work DIR] [--out OUT.npy]

The checkpoint (a Hugging Face XLM-R directory, as kglm writes it) goes into transformers' own
XLMRobertaModel (--head embed: `pretrain embed`'s job, the last layer's states mean-pooled over each
sentence's tokens) or XLMRobertaForTokenClassification with the file's classifier (--head token:
`finetune evaluate`'s job, the best label of each token). IDS holds one sentence a line as
space-separated ids, <s> and </s> included. The sentences run longest first, --batch at a time,
each batch padded to its longest sentence (the engines take rectangular batches; kglm packs them).
The engines:
- torch: eager, in torch.inference_mode; bf16 under torch.autocast (the matrix products in bfloat16);
- compile: the same model through torch.compile(dynamic=True) (Inductor's C++ kernels on the CPU);
- onnxruntime: the model exported with torch.onnx.export (dynamic batch and length), run by an
  InferenceSession with ONNX Runtime's default graph optimisations and intra_op_num_threads N;
  bf16 is refused, with the error ONNX Runtime gives for a one-node bfloat16 MatMul (1.31: no kernel);
- ctranslate2: converted with CTranslate2's own TransformersConverter, run by ctranslate2.Encoder
  with compute_type float32 or bfloat16 and intra_threads N (its vocabulary the ids themselves:
  bench/peers/ctranslate2_ids.py; a token classifier's linear layer in numpy on its states); bf16
  is refused where its CPU build lacks it (PyPI's 4.8 wheels do).
An engine that cannot do the job exits 3 with the reason on the last line of standard error.
Each engine first runs every batch once untimed (compilation, the export's first run, the caches
warm), then the timed pass. Prints one JSON line: sentences, tokens (unpadded), seconds, peak_mb
(this process's maximum RSS, loading and conversion included) and the engine's version; --out saves
the pooled vectors [sentences, hidden] or every sentence's labels one after the other."""
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
from peerlib import refuse  # noqa: E402
from probe_torch import load_checkpoint  # noqa: E402



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


class Outputs(torch.nn.Module):
    """The model with one tensor out: the last layer's states (--head embed) or the token
    classifier's logits (--head token)."""

    def __init__(self, model, head):
        super().__init__()
        self.model, self.head = model, head

    def forward(self, input_ids, attention_mask):
        out = self.model(input_ids=input_ids, attention_mask=attention_mask)
        return out.logits if self.head == "token" else out.last_hidden_state


def load(directory, head):
    """The checkpoint in transformers' own classes: XLMRobertaModel (embed) or
    XLMRobertaForTokenClassification with the classifier of the file (token), in eval mode."""
    if head == "embed":
        return load_checkpoint(directory)[0].roberta
    from safetensors.torch import load_file
    from transformers import XLMRobertaConfig, XLMRobertaForTokenClassification
    state = load_file(os.path.join(directory, "model.safetensors"))
    config = XLMRobertaConfig.from_pretrained(directory)
    config.num_labels = state["classifier.weight"].shape[0]
    model = XLMRobertaForTokenClassification(config)
    missing, _ = model.load_state_dict(state, strict=False)
    assert not [k for k in missing if "pooler" not in k], missing
    return model.eval()


def torch_engine(module, precision, compiled):
    model = torch.compile(module, dynamic=True) if compiled else module

    def forward(ids, mask):
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16"):
            return model(torch.from_numpy(ids), torch.from_numpy(mask)).float().numpy()
    return forward, torch.__version__


def onnxruntime_bf16_matmul():
    """Why there is no bf16 row for ONNX Runtime, asked of it: a one-node bfloat16 MatMul model on
    its CPU provider (1.31: NOT_IMPLEMENTED, no kernel)."""
    import onnxruntime
    from onnx import TensorProto, helper
    io = [helper.make_tensor_value_info(n, TensorProto.BFLOAT16, [2, 2]) for n in ("a", "b", "c")]
    graph = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["c"])], "bf16", io[:2], io[2:])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=9)
    try:
        onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 (ONNX Runtime's own exception classes vary)
        return "ONNX Runtime %s's CPU provider has no bfloat16 MatMul: %s" % (
            onnxruntime.__version__, str(e).split(":")[-1].strip()[:80])
    return "ONNX Runtime %s runs a bfloat16 MatMul, but this benchmark exports fp32 models only" % onnxruntime.__version__


def onnxruntime_engine(module, precision, threads, work):
    import onnxruntime
    if precision != "fp32":
        refuse(onnxruntime_bf16_matmul())
    path = os.path.join(work, "model.onnx")
    example = (torch.ones((2, 8), dtype=torch.long), torch.ones((2, 8), dtype=torch.long))
    axes = {0: "batch", 1: "length"}
    torch.onnx.export(module, example, path, input_names=["input_ids", "attention_mask"], output_names=["out"],
                      dynamic_axes={"input_ids": axes, "attention_mask": axes, "out": axes}, dynamo=False)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])

    def forward(ids, mask):
        return session.run(["out"], {"input_ids": ids, "attention_mask": mask})[0]
    return forward, onnxruntime.__version__


def ctranslate2_engine(model, precision, threads, work):
    """CTranslate2's encoder (its converter reads a transformers directory: the loaded model saved as
    one); a token classifier's linear layer runs in numpy on its states (CTranslate2's encoders end
    at the states or a pooler)."""
    import ctranslate2
    from ctranslate2_ids import convert
    if precision == "bf16" and "bfloat16" not in ctranslate2.get_supported_compute_types("cpu"):
        refuse("this build of CTranslate2 has no bf16 on this CPU (compute types: %s)" %
               ", ".join(sorted(ctranslate2.get_supported_compute_types("cpu"))))
    hf = os.path.join(work, "transformers")
    if not os.path.exists(os.path.join(hf, "config.json")):
        model.save_pretrained(hf)
        # CTranslate2 4.8's converter asserts position_embedding_type, which transformers 5 dropped.
        config = json.load(open(os.path.join(hf, "config.json")))
        json.dump(dict(config, position_embedding_type="absolute"), open(os.path.join(hf, "config.json"), "w"))
    encoder = ctranslate2.Encoder(convert(hf, os.path.join(work, "ctranslate2")), device="cpu",
                                  compute_type="bfloat16" if precision == "bf16" else "float32",
                                  intra_threads=threads, inter_threads=1)
    classifier = getattr(model, "classifier", None)
    if classifier is not None:
        weight, bias = classifier.weight.detach().numpy().T.copy(), classifier.bias.detach().numpy()

    def forward(ids, mask):
        lengths = mask.sum(1)
        states = np.array(encoder.forward_batch([[str(t) for t in row[:n]] for row, n in zip(ids, lengths)])
                          .last_hidden_state)
        return states @ weight + bias if classifier is not None else states
    return forward, ctranslate2.__version__


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", required=True, choices=["torch", "compile", "onnxruntime", "ctranslate2"])
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--model", required=True)
    ap.add_argument("--head", default="embed", choices=["embed", "token"])
    ap.add_argument("--ids", required=True)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--work", default=".", help="where the export and the conversion are written")
    ap.add_argument("--out")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    os.makedirs(a.work, exist_ok=True)
    sentences = [[int(x) for x in line.split()] for line in open(a.ids) if line.strip()]
    model = load(a.model, a.head)
    if a.engine == "ctranslate2":
        forward, version = ctranslate2_engine(model, a.precision, a.threads, a.work)
    elif a.engine == "onnxruntime":
        forward, version = onnxruntime_engine(Outputs(model, a.head), a.precision, a.threads, a.work)
    else:
        forward, version = torch_engine(Outputs(model, a.head), a.precision, a.engine == "compile")
    work = batches(sentences, a.batch)
    for _, ids, mask in work:  # untimed: compilation, first runs, caches
        forward(ids, mask)
    results = [None] * len(sentences)
    start = time.perf_counter()
    for chunk, ids, mask in work:
        out = forward(ids, mask)
        if a.head == "embed":
            for i, v in zip(chunk, mean_pool(out, mask)):
                results[i] = v
        else:
            labels = out.argmax(-1)
            for r, i in enumerate(chunk):
                results[i] = labels[r, :len(sentences[i])]
    seconds = time.perf_counter() - start
    if a.out:  # embed: [sentences, hidden]; token: every sentence's labels, one after the other
        np.save(a.out, np.stack(results) if a.head == "embed" else np.concatenate(results))
    print(json.dumps({"engine": a.engine, "precision": a.precision, "threads": a.threads, "version": version,
                      "sentences": len(sentences), "tokens": sum(map(len, sentences)), "seconds": seconds,
                      "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


if __name__ == "__main__":
    main()
