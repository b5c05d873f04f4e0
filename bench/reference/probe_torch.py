#!/usr/bin/env python3
"""The probe benchmark's peer: X-FACTR's cloze decoding of the same checkpoint in PyTorch (Debian's
python3-torch), on the same English facts and thread count.

The checkpoint (a Hugging Face directory) is loaded into transformers' own XLMRobertaForMaskedLM
in eval mode (run by the python of `make references`); labels and
template text are tokenized by Debian's spm_encode with the checkpoint's SentencePiece model (ids
+ 1, fairseq's mapping; <mask> after the last piece) before any timing. English templates only
([X] and [Y], no markup). Each fact becomes 1..--num-mask candidates <s> prefix <mask>*m suffix
</s>. independent fills every mask at once, order the leftmost per pass, confidence the most
probable per pass and then re-masks the least probable until the prediction stays (--max-iter);
the mask count with the best summed log-probability wins.
--style xfactr computes as X-FACTR's probe.py does: batches of --batch / --num-mask facts in file
order with all their candidates padded together, every pass over every sequence of the batch until
the last is done, and the MLM head's full vocabulary at every position (XLMRobertaForMaskedLM's
logits). --style lean computes as kglm does: candidates sorted by length into batches of --batch
sequences, each pass over the sequences still open, the head at the asked positions only.
--engine (run by the peers' python of `make bench`) puts the encoder in current torch eager or
torch.compile, ONNX Runtime or CTranslate2 (bench/peers/encoder_peers.py; --precision bf16 where the
engine has it), the MLM head staying torch's (under torch.autocast for bf16): issue 63's peers; one
untimed pass of the confidence method first (torch.compile's compilations, the engines' first runs).
Prints one JSON line: facts/s per method; --predictions writes {method, relation, sub_uri,
obj_uri, num_mask, token_ids} per fact for comparison with kglm's.
"""
import argparse
import json
import os
import subprocess
import time

import torch

from safetensors.torch import load_file
from transformers import XLMRobertaConfig, XLMRobertaForMaskedLM

MASK_OFFSET = 1  # fairseq: SentencePiece id + 1; <mask> after the last piece


def load_checkpoint(directory):
    """The checkpoint in transformers' own XLMRobertaForMaskedLM (eval mode)."""
    # The weights through safetensors' own reader: files written without a "format" metadata entry
    # (tests/cli/make_tiny_mlm.py's) are refused by from_pretrained, not by safetensors.
    model = XLMRobertaForMaskedLM(XLMRobertaConfig.from_pretrained(directory))
    state = load_file(os.path.join(directory, "model.safetensors"))
    _, unexpected = model.load_state_dict(state, strict=False)
    assert not unexpected, unexpected
    model.tie_weights()  # the decoder is the word embeddings, stored once
    return model.eval(), json.load(open(os.path.join(directory, "config.json")))


def engine_encoder(a, model):
    """(encode(ids, mask) -> states of --engine over the checkpoint's encoder, the engine's version)."""
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))
    import encoder_peers
    os.makedirs(a.work, exist_ok=True)
    if a.engine == "ctranslate2":
        return encoder_peers.ctranslate2_engine(model.roberta, a.precision, a.threads, a.work)
    module = encoder_peers.Outputs(model.roberta, "embed")
    if a.engine == "onnxruntime":
        return encoder_peers.onnxruntime_engine(module, a.precision, a.threads, a.work)
    return encoder_peers.torch_engine(module, a.precision, a.engine == "compile")


def spm_ids(model_file, texts):
    out = subprocess.run(["spm_encode", "--model", model_file, "--output_format=id"], input="\n".join(texts) + "\n",
                         capture_output=True, text=True, check=True).stdout.split("\n")
    return {t: [int(x) + MASK_OFFSET if int(x) != 0 else 3 for x in out[i].split()] for i, t in enumerate(texts)}


class Decoder:
    def __init__(self, model, mask, pad, batch, style, encode=None, bf16=False):
        self.model, self.mask, self.pad, self.batch, self.style = model, mask, pad, batch, style
        # encode(ids, mask) -> states: another engine's encoder (--engine); the head stays torch's.
        self.encode, self.bf16 = encode, bf16

    def forward(self, seqs):
        t = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), t), self.pad, dtype=torch.long)
        for r, s in enumerate(seqs):
            ids[r, :len(s)] = torch.tensor(s)
        if self.encode:
            return torch.from_numpy(self.encode(ids.numpy(), ids.ne(self.pad).long().numpy()))
        return self.model.roberta(input_ids=ids, attention_mask=ids.ne(self.pad)).last_hidden_state

    def head(self, h):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16):
            return torch.log_softmax(self.model.lm_head(h).float(), -1).max(-1)

    def ask(self, seqs, positions):
        """Best token and its log-probability at each asked position (None where nothing is asked)."""
        out = [None] * len(seqs)
        with torch.no_grad():
            if self.style == "xfactr":
                # Every sequence, the full vocabulary at every position, as XLMRobertaForMaskedLM.
                best_lp, best = self.head(self.forward(seqs))
                for i, ps in enumerate(positions):
                    if ps:
                        out[i] = [(best[i, p].item(), best_lp[i, p].item()) for p in ps]
                return out
            live = sorted((i for i in range(len(seqs)) if positions[i]), key=lambda i: -len(seqs[i]))
            for b in range(0, len(live), self.batch):
                chunk = live[b:b + self.batch]
                h = self.forward([seqs[i] for i in chunk])
                rows = [r for r, i in enumerate(chunk) for _ in positions[i]]
                cols = [p for i in chunk for p in positions[i]]
                best_lp, best = self.head(h[rows, cols])
                k = 0
                for i in chunk:
                    n = len(positions[i])
                    out[i] = list(zip(best[k:k + n].tolist(), best_lp[k:k + n].tolist()))
                    k += n
        return out

    def decode(self, method, cands, max_iter):
        if self.style == "lean":
            return self.decode_group(method, cands, max_iter)
        per_batch = max(1, self.batch // self.num_mask) * self.num_mask
        for b in range(0, len(cands), per_batch):
            self.decode_group(method, cands[b:b + per_batch], max_iter)

    def decode_group(self, method, cands, max_iter):
        for c in cands:
            c["tokens"] = [self.mask] * c["m"]
            c["lps"] = [0.0] * c["m"]
            for s in range(c["m"]):
                c["ids"][c["first"] + s] = self.mask
        open_slots = [list(range(c["m"])) for c in cands]
        while any(open_slots):
            asked = [([o[0]] if method == "order" else list(o)) if o else [] for o in open_slots]
            guesses = self.ask([c["ids"] for c in cands], [[c["first"] + s for s in a] for c, a in zip(cands, asked)])
            for i, (slots, g) in enumerate(zip(asked, guesses)):
                if not slots:
                    continue
                picks = range(len(slots)) if method == "independent" else \
                    [0 if method == "order" else max(range(len(g)), key=lambda k: (g[k][1], -k))]
                for k in picks:
                    self.set(cands[i], slots[k], g[k])
                    open_slots[i].remove(slots[k])
        if method != "confidence":
            return
        live = {i for i, c in enumerate(cands) if c["m"] and max_iter > 0}
        changes = [0] * len(cands)
        while live:
            slot, previous = {}, {}
            for i in live:
                c = cands[i]
                s = min(range(c["m"]), key=lambda k: (c["lps"][k], k))
                slot[i], previous[i] = s, c["tokens"][s]
                c["ids"][c["first"] + s] = self.mask
            guesses = self.ask([c["ids"] for c in cands],
                               [[c["first"] + slot[i]] if i in live else [] for i, c in enumerate(cands)])
            for i in list(live):
                c, s, g = cands[i], slot[i], guesses[i][0]
                if g[0] == previous[i]:
                    c["ids"][c["first"] + s] = previous[i]
                    live.discard(i)
                    continue
                self.set(c, s, g)
                changes[i] += 1
                if changes[i] >= max_iter:
                    live.discard(i)

    @staticmethod
    def set(c, slot, guess):
        c["tokens"][slot], c["lps"][slot] = guess
        c["ids"][c["first"] + slot] = guess[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--facts", required=True)
    ap.add_argument("--templates", required=True, help="the en.jsonl templates")
    ap.add_argument("--relations", required=True)
    ap.add_argument("--max-facts", type=int, default=0)
    ap.add_argument("--method", default="independent")
    ap.add_argument("--num-mask", type=int, default=5)
    ap.add_argument("--max-iter", type=int, default=10)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--style", choices=["xfactr", "lean"], default="xfactr")
    ap.add_argument("--predictions")
    ap.add_argument("--engine", help="the encoder in torch, compile, onnxruntime or ctranslate2 (bench/peers/"
                    "encoder_peers.py, in the peers' environment of `make bench`); the MLM head stays torch's")
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16"], help="with --engine")
    ap.add_argument("--work", default=".", help="with --engine: where exports and conversions go")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    model, config = load_checkpoint(a.model)
    encode, version = engine_encoder(a, model) if a.engine else (None, torch.__version__)
    spm = os.path.join(a.model, "sentencepiece.bpe.model")
    # <mask> follows the tokenizer's last piece (the model's vocabulary may be larger).
    pieces = subprocess.run(["spm_export_vocab", "--model", spm], capture_output=True,
                            check=True).stdout.count(b"\n")  # bytes: a piece may be "\r"
    mask = pieces + MASK_OFFSET
    templates = {}
    for line in open(a.templates, encoding="utf-8"):
        t = json.loads(line)
        templates[t["relation"]] = t["template"]
    facts = []
    for rel in a.relations.split(","):
        rows = [json.loads(l) for l in open(os.path.join(a.facts, rel + ".jsonl"), encoding="utf-8") if l.strip()]
        facts += rows[:a.max_facts] if a.max_facts else rows
    queries = []
    for f in facts:
        tpl = templates[f["predicate_id"]].replace("[X]", f["sub_label"])
        prefix, suffix = tpl.split("[Y]", 1)
        queries.append((f, prefix.rstrip(), suffix.lstrip()))
    texts = sorted({t for f, p, s in queries for t in (p, s, f["sub_label"], f["obj_label"]) if t})
    ids = spm_ids(spm, texts)
    cands_of = []
    for f, p, s in queries:
        if 3 in ids[f["sub_label"]] or 3 in ids[f["obj_label"]] or not ids[f["obj_label"]]:
            continue
        pre, suf = ids.get(p, []), ids.get(s, [])
        cands_of.append((f, [{"ids": [0] + pre + [mask] * m + suf + [2], "first": 1 + len(pre), "m": m}
                             for m in range(1, a.num_mask + 1)]))
    decoder = Decoder(model, mask, config["pad_token_id"], a.batch, a.style, encode, a.precision == "bf16")
    decoder.num_mask = a.num_mask
    result, lines = {"facts": len(cands_of), "threads": a.threads, "style": a.style, "version": version}, []
    if a.engine:  # untimed: torch.compile's compilations, the engines' first runs
        decoder.decode("confidence", [dict(c, ids=list(c["ids"])) for _, cs in cands_of for c in cs], a.max_iter)
    for method in a.method.split(","):
        cands = [dict(c, ids=list(c["ids"])) for _, cs in cands_of for c in cs]
        start = time.perf_counter()
        decoder.decode(method, cands, a.max_iter)
        seconds = time.perf_counter() - start
        result[method + "_facts_per_second"] = len(cands_of) / seconds
        for i, (f, _) in enumerate(cands_of):
            group = cands[i * a.num_mask:(i + 1) * a.num_mask]
            best = max(range(len(group)), key=lambda k: (sum(group[k]["lps"]), -k))
            lines.append(json.dumps({"method": method, "relation": f["predicate_id"], "sub_uri": f["sub_uri"],
                                     "obj_uri": f["obj_uri"], "num_mask": group[best]["m"],
                                     "token_ids": group[best]["tokens"]}))
    if a.predictions:
        with open(a.predictions, "w") as out:
            out.write("\n".join(lines) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
