#!/usr/bin/python3
"""kglm's ELMo outputs recomputed in plain torch from a model directory's files alone.

    /usr/bin/python3 tests/reference/elmo_reference.py perplexity MODEL_DIR WORDS_H5 VOCAB_TXT --sentences N --rows R
    /usr/bin/python3 tests/reference/elmo_reference.py embed MODEL_DIR SENTENCES_TXT VECTORS_HDF5

The model is read the way AllenNLP's documentation lays the files out, independently of kglm's code:
options.json (n_characters 262: a zero row goes in front of char_embed and every character id is
shifted by one; 261, a model still training: as they are), weights.hdf5 (char_embed; CNN/W_cnn_i [1, w, e, F] and b_cnn_i; CNN_high_k/W_carry,
W_transform, b_carry, b_transform used as x·W; CNN_proj/W_proj [F, p], b_proj; per direction d and
layer l RNN_d/RNN/MultiRNNCell/Cell<l>/LSTMCell/W_0 [in + p, 4c] over [x; h] with gates i, j, f, o
and the forget bias +1 added at run time, B, W_P_0 [c, p]; cell and projection clipping), the
residual into every layer but the first. Characters are bilm-tf's: the word's UTF-8 bytes cut to
max − 2 between begin-of-word (258) and end-of-word (259), padded (260); <S> and </S> are
[258, 256 | 257, 259, 260 …].

perplexity: kglm's held-out stream with --eval-fraction 0.9999 --eval-max N (the dataset's first N
sentences): the sentences end to end, and each reversed for the backward model; the N·len − 1
predictions cut into R equal rows (the remainder dropped) read from a zero state with the full
softmax, which bilm-tf's weights.hdf5 leaves out and is read from kglm's elmo_state.safetensors.
Prints {"eval_ppl", "eval_ppl_forward", "eval_ppl_backward", "eval_tokens"}.

embed: every line's whitespace-separated words between <S> and </S>, each direction from a zero
state; checks VECTORS_HDF5 (pretrain embed --layers all) against [token; token], [forward; backward]
per layer for each word, and sentence_to_index. Prints {"sentences", "worst"}.
"""

import argparse
import json
import math
import os
import sys

import h5py
import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_min import read_safetensors  # noqa: E402

# bilm-tf's character ids, as the benchmark's torch peer writes them (training's 261 ids).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "reference"))
from elmo_torch import characters as bilm_characters  # noqa: E402

torch.set_default_dtype(torch.float64)


def characters(word, max_chars, shift):
    return [i + shift for i in bilm_characters(word, max_chars)]


class Elmo:
    """The model of a directory: encode(words) -> token vectors; lstm(d, x [T, R, p]) -> each layer's output."""

    def __init__(self, model_dir):
        self.dir = model_dir
        opt = json.load(open(os.path.join(model_dir, "options.json")))
        self.lstm_options, self.cnn = opt["lstm"], opt["char_cnn"]
        self.h5 = h5py.File(os.path.join(model_dir, "weights.hdf5"), "r")
        # 262 characters (a finished model): ids + 1 and a zero row in front, 0 the mask; 261: as they are.
        self.shift = 1 if self.cnn["n_characters"] == 262 else 0
        self.char_embed = self.w("char_embed")
        if self.shift:
            self.char_embed = torch.cat([torch.zeros(1, self.cnn["embedding"]["dim"]), self.char_embed])

    def w(self, name):
        return torch.tensor(np.array(self.h5[name]), dtype=torch.float64)

    def encode(self, words):
        cnn = self.cnn
        chars = torch.tensor([characters(word, cnn["max_characters_per_token"], self.shift) for word in words])
        x = self.char_embed[chars]
        pooled = []
        for k, _ in enumerate(cnn["filters"]):
            kernel = self.w(f"CNN/W_cnn_{k}")[0].permute(2, 1, 0)  # [w, e, F] -> torch's [F, e, w]
            pooled.append(torch.nn.functional.conv1d(x.transpose(1, 2), kernel, self.w(f"CNN/b_cnn_{k}")).max(2).values)
        x = torch.cat(pooled, 1)
        x = torch.relu(x) if cnn["activation"] == "relu" else torch.tanh(x)
        for k in range(cnn["n_highway"]):
            g = torch.sigmoid(x @ self.w(f"CNN_high_{k}/W_carry") + self.w(f"CNN_high_{k}/b_carry"))
            t = torch.relu(x @ self.w(f"CNN_high_{k}/W_transform") + self.w(f"CNN_high_{k}/b_transform"))
            x = g * t + (1 - g) * x
        if "CNN_proj/W_proj" in self.h5:
            x = x @ self.w("CNN_proj/W_proj") + self.w("CNN_proj/b_proj")
        return x

    def lstm(self, d, x):
        o = self.lstm_options
        c, p, rows = o["dim"], o["projection_dim"], x.shape[1]
        outputs = []
        for l in range(o["n_layers"]):
            cell = f"RNN_{d}/RNN/MultiRNNCell/Cell{l}/LSTMCell/"
            W, B, P = self.w(cell + "W_0"), self.w(cell + "B"), self.w(cell + "W_P_0")
            h, cs = torch.zeros(rows, p), torch.zeros(rows, c)
            out = []
            for t in range(x.shape[0]):
                i, j, fg, og = (torch.cat([x[t], h], 1) @ W + B).split(c, 1)
                cs = (torch.sigmoid(fg + 1.0) * cs + torch.sigmoid(i) * torch.tanh(j)).clamp(-o["cell_clip"], o["cell_clip"])
                h = ((torch.sigmoid(og) * torch.tanh(cs)) @ P).clamp(-o["proj_clip"], o["proj_clip"])
                out.append(h)
            out = torch.stack(out)
            x = out + x if l > 0 and o.get("use_skip_connections", True) else out
            outputs.append(x)
        return outputs


def perplexity(a):
    model = Elmo(a.model)
    state, _ = read_safetensors(os.path.join(a.model, "elmo_state.safetensors"))
    softmax_w, softmax_b = state["softmax/W"].double(), state["softmax/b"].double()
    vocab_size, p = softmax_w.shape
    words = open(a.vocab, encoding="utf-8").read().split("\n")[:-1]
    model_words = open(os.path.join(a.model, "vocab.txt"), encoding="utf-8").read().split("\n")[:-1]
    assert model_words == words[:vocab_size], "vocab.txt is the softmax's words"
    f = h5py.File(a.words, "r")
    ids, offsets = f["tokens/ids"][:].astype(np.int64), f["sequences/offsets"][:].astype(np.int64)
    forward, backward = [], []
    for s in range(a.sentences):
        seq = list(ids[offsets[s]:offsets[s + 1]])
        forward += seq
        backward += seq[::-1]
    predictions = len(forward) - 1
    rows = min(a.rows, predictions)
    length = predictions // rows
    losses = []
    for d, stream in enumerate((forward, backward)):
        inputs = [words[i] for r in range(rows) for i in stream[r * length:(r + 1) * length]]
        targets = torch.tensor([[t if t < vocab_size else 2 for t in stream[r * length + 1:(r + 1) * length + 1]]
                                for r in range(rows)])
        x = model.encode(inputs).reshape(rows, length, -1).transpose(0, 1)  # [T, R, p]
        top = model.lstm(d, x)[-1]
        logits = top.reshape(length * rows, p) @ softmax_w.T + softmax_b
        losses.append(float(torch.nn.functional.cross_entropy(logits, targets.T.reshape(-1))))
    print(json.dumps({"eval_ppl": math.exp(0.5 * sum(losses)), "eval_ppl_forward": math.exp(losses[0]),
                      "eval_ppl_backward": math.exp(losses[1]), "eval_tokens": rows * length}))


def embed(a):
    model = Elmo(a.model)
    vectors = h5py.File(a.vectors, "r")
    lines = [line.rstrip("\n") for line in open(a.sentences, encoding="utf-8")]
    index = json.loads(vectors["sentence_to_index"][0])
    assert index == {line: str(i) for i, line in enumerate(lines)}, "sentence_to_index"
    worst = 0.0
    for i, line in enumerate(lines):
        words = line.split()
        got = torch.tensor(np.array(vectors[str(i)]), dtype=torch.float64)
        if not words:
            assert got.shape[1] == 0, got.shape
            continue
        tokens = ["<S>"] + words + ["</S>"]
        x = model.encode(tokens)[:, None, :]  # [T, 1, p]
        forward = model.lstm(0, x)
        backward = [y.flip(0) for y in model.lstm(1, x.flip(0))]
        want = torch.stack([torch.cat([x, x], 2)] + [torch.cat([f, b], 2) for f, b in zip(forward, backward)])
        want = want[:, 1:-1, 0, :]  # <S> and </S> left out
        assert got.shape == want.shape, (i, got.shape, want.shape)
        worst = max(worst, float((got - want).abs().max() / want.abs().max()))
    print(json.dumps({"sentences": len(lines), "worst": worst}))
    assert worst < 1e-5, worst


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("perplexity")
    p.add_argument("model")
    p.add_argument("words")
    p.add_argument("vocab")
    p.add_argument("--sentences", type=int, required=True)
    p.add_argument("--rows", type=int, required=True)
    e = sub.add_parser("embed")
    e.add_argument("model")
    e.add_argument("sentences")
    e.add_argument("vectors")
    a = ap.parse_args()
    perplexity(a) if a.command == "perplexity" else embed(a)


if __name__ == "__main__":
    main()
