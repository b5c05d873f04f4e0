#!/usr/bin/env python3
"""The pretrain benchmarks' peer: the same XLM-R-shaped encoder and MLM step in PyTorch (Debian's
python3-torch on the CPU; any CUDA build of torch with --device cuda), on the same token dataset
(read with h5py).

The model is torch's own post-LN nn.TransformerEncoderLayer (exact GELU, dropout 0.1) under
embeddings (word + RoBERTa positions + token type, LayerNorm, dropout) and the RoBERTa MLM head
(dense, GELU, LayerNorm, decoder tied to the word embeddings, bias). A step is forward, backward,
clip_grad_norm_(1.0), AdamW (decay on weights only) and a linear warm-up/decay LambdaLR, as the
Hugging Face Trainer runs it. Masking: 15% of the non-special tokens, 80/10/10.

--threads sets torch.set_num_threads; Debian's torch runs its gemms in the pthread build of OpenBLAS,
whose own pool (OPENBLAS_NUM_THREADS, default all cores) competes with torch's OpenMP threads, so
on a small machine --threads 1 (OpenBLAS still on all cores) can be the faster setting.
--head full computes the vocabulary projection at every position, as XLMRobertaForMaskedLM does;
--head masked gathers the masked rows first, as kglm does.
--device cuda runs on the GPU, --dtype bf16|fp16 under torch.autocast (fp16 with a GradScaler,
as the Hugging Face Trainer does), --compile through torch.compile, --hf with transformers'
XLMRobertaForMaskedLM itself when it is installed (the full head; labels at every position).
--ddp wraps the model in DistributedDataParallel over gloo (one process per rank, started with
RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set), --batch then being the global batch.
Prints one JSON line (rank 0): tokens/s over the timed steps (after --warmup-steps untimed ones), seconds,
and on a GPU the peak memory torch allocated.
"""
import argparse
import json
import math
import time

import h5py
import numpy as np
import torch
from torch import nn


class MaskedLM(nn.Module):
    def __init__(self, vocab, hidden, layers, heads, ffn, positions, pad):
        super().__init__()
        self.pad = pad
        self.word = nn.Embedding(vocab, hidden, padding_idx=pad)
        self.position = nn.Embedding(positions, hidden, padding_idx=pad)
        self.token_type = nn.Embedding(1, hidden)
        self.emb_norm = nn.LayerNorm(hidden, eps=1e-5)
        self.drop = nn.Dropout(0.1)
        layer = nn.TransformerEncoderLayer(hidden, heads, ffn, dropout=0.1, activation="gelu", batch_first=True,
                                           norm_first=False, layer_norm_eps=1e-5)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.dense = nn.Linear(hidden, hidden)
        self.head_norm = nn.LayerNorm(hidden, eps=1e-5)
        self.bias = nn.Parameter(torch.zeros(vocab))
        # Hugging Face's initialisation: N(0, 0.02) weights, zero biases, padding rows zero.
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.zeros_(m.bias)
        with torch.no_grad():
            self.word.weight[pad].zero_()
            self.position.weight[pad].zero_()

    def encode(self, ids):
        """The encoder's hidden states [B, T, H] (padding masked out of attention)."""
        real = ids.ne(self.pad)
        pos = torch.cumsum(real, 1) * real + self.pad
        x = self.word(ids) + self.position(pos) + self.token_type(torch.zeros_like(ids))
        x = self.drop(self.emb_norm(x))
        return self.encoder(x, src_key_padding_mask=~real)

    def forward(self, ids, labels, masked_only):
        x = self.encode(ids)
        if masked_only:
            rows = labels.ne(-100)
            x, labels = x[rows], labels[rows]
        h = self.head_norm(torch.nn.functional.gelu(self.dense(x)))
        logits = h @ self.word.weight.t() + self.bias
        return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                                           ignore_index=-100)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup-steps", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--head", choices=["full", "masked"], default="full")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--dtype", choices=["fp32", "bf16", "fp16"], default="fp32")
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--hf", action="store_true")
    ap.add_argument("--ddp", action="store_true",
                    help="DistributedDataParallel over gloo (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT from the "
                         "environment); --batch is then the global batch, each rank taking its rows")
    a = ap.parse_args()
    rank, world = 0, 1
    if a.ddp:
        import torch.distributed as dist
        dist.init_process_group("gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    device = torch.device(a.device)

    with h5py.File(a.data, "r") as f:
        ids = f["tokens/ids"][:]
        flags = f["tokens/flags"][:]
        offsets = f["sequences/offsets"][:]
        vocab = int(f.attrs["vocab_size"])
        pad, mask = int(f.attrs["pad_id"]), int(f.attrs["mask_id"])
        max_len = int(f.attrs["max_len"])
    if a.hf:
        from transformers import XLMRobertaConfig, XLMRobertaForMaskedLM
        hf = XLMRobertaForMaskedLM(XLMRobertaConfig(
            vocab_size=vocab, hidden_size=a.hidden, num_hidden_layers=a.layers, num_attention_heads=a.heads,
            intermediate_size=a.ffn, max_position_embeddings=max_len + pad + 1, pad_token_id=pad))

        class HfStep(nn.Module):
            def __init__(self):
                super().__init__()
                self.hf = hf

            def forward(self, ids, labels, masked_only):
                return self.hf(input_ids=ids, attention_mask=ids.ne(pad), labels=labels).loss
        model = HfStep()
    else:
        model = MaskedLM(vocab, a.hidden, a.layers, a.heads, a.ffn, max_len + pad + 1, pad)
    model = model.to(device)
    step_target = model
    if a.ddp:
        # DDP's default 25 MB buckets, reduced while the backward pass runs (as kglm's --bucket-mb 25).
        step_target = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=25)
    decay = [p for n, p in model.named_parameters() if p.dim() > 1]
    no_decay = [p for n, p in model.named_parameters() if p.dim() <= 1]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-4)
    total = a.steps + a.warmup_steps
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda t: min(1.0, (t + 1) / 2) * max(0.0, (total - t) / total))
    rng = np.random.default_rng(0)
    n_seq = len(offsets) - 1
    step_model = torch.compile(step_target) if a.compile else step_target
    half = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(a.dtype)
    # torch.amp.GradScaler since torch 2.3; Debian's 1.13 has the CUDA one only.
    scaler = (torch.amp.GradScaler(a.device, enabled=a.dtype == "fp16") if hasattr(torch.amp, "GradScaler")
              else torch.cuda.amp.GradScaler(enabled=a.dtype == "fp16"))

    def batch(step):
        rows = [(step * a.batch + r) % n_seq for r in range(a.batch)]
        longest = max(offsets[r + 1] - offsets[r] for r in rows)
        mine = a.batch // world
        rows = rows[rank * mine:(rank + 1) * mine]
        x = np.full((len(rows), longest), pad, dtype=np.int64)
        special = np.ones((len(rows), longest), dtype=bool)
        for i, r in enumerate(rows):
            seq = ids[offsets[r]:offsets[r + 1]]
            x[i, :len(seq)] = seq
            special[i, :len(seq)] = (flags[offsets[r]:offsets[r + 1]] & 32) != 0
        labels = np.full_like(x, -100)
        chosen = (rng.random(x.shape) < 0.15) & ~special
        labels[chosen] = x[chosen]
        r = rng.random(x.shape)
        x[chosen & (r < 0.8)] = mask
        rand = chosen & (r >= 0.8) & (r < 0.9)
        x[rand] = rng.integers(4, vocab - 1, size=rand.sum())
        return torch.from_numpy(x), torch.from_numpy(labels), int((~special).sum() + (special & (x != pad)).sum())

    timed_tokens, start = 0, None
    for step in range(total):
        if step == a.warmup_steps:
            start = time.perf_counter()
        x, labels, tokens = batch(step)
        x, labels = x.to(device, non_blocking=True), labels.to(device, non_blocking=True)
        with torch.autocast(a.device, dtype=half, enabled=half is not None):
            loss = step_model(x, labels, a.head == "masked")
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        sched.step()
        opt.zero_grad(set_to_none=True)
        if step >= a.warmup_steps:
            timed_tokens += tokens
        if not math.isfinite(loss.item()):
            raise SystemExit("loss is not finite")
    if a.device == "cuda":
        torch.cuda.synchronize()
    secs = time.perf_counter() - start
    if a.ddp:  # every rank's tokens, timed by rank 0
        total = torch.tensor([timed_tokens], dtype=torch.int64)
        dist.all_reduce(total)
        timed_tokens = int(total.item())
        if rank != 0:
            return
    result = {"tokens_per_s": timed_tokens / secs, "seconds": secs, "steps": a.steps, "loss": loss.item()}
    if a.device == "cuda":
        result["peak_mb"] = torch.cuda.max_memory_allocated() / 2**20
    print(json.dumps(result))


if __name__ == "__main__":
    main()
