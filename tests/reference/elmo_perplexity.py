#!/usr/bin/python3
"""The held-out perplexity of a kglm ELMo checkpoint, computed in plain torch from the files alone.

    /usr/bin/python3 tests/reference/elmo_perplexity.py MODEL_DIR WORDS_H5 VOCAB_TXT --sentences N --rows R

The model is read the way AllenNLP's documentation lays the files out, independently of kglm's code:
options.json (n_characters 262: a zero row goes in front of char_embed and every character id is
shifted by one), weights.hdf5 (char_embed; CNN/W_cnn_i [1, w, e, F] and b_cnn_i; CNN_high_k/W_carry,
W_transform, b_carry, b_transform used as x·W; CNN_proj/W_proj [F, p], b_proj; per direction d and
layer l RNN_d/RNN/MultiRNNCell/Cell<l>/LSTMCell/W_0 [in + p, 4c] over [x; h] with gates i, j, f, o
and the forget bias +1 added at run time, B, W_P_0 [c, p]; cell and projection clipping), the
residual into every layer but the first. The softmax, which bilm-tf's weights.hdf5 leaves out, is
read from kglm's elmo_state.safetensors.

The text is kglm's held-out stream with --eval-fraction 1 --eval-max N: the dataset's first N
sentences (<S> … </S>) end to end, and each sentence reversed for the backward model; the N·len − 1
predictions are cut into R equal rows (the remainder dropped) read from a zero state with the full
softmax. Characters are bilm-tf's: the word's UTF-8 bytes cut to max − 2 between begin-of-word
(258) and end-of-word (259), padded (260); <S> and </S> are [258, 256 | 257, 259, 260 …].
Prints one JSON line: {"eval_ppl", "eval_ppl_forward", "eval_ppl_backward", "eval_tokens"}.
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

torch.set_default_dtype(torch.float64)


def characters(word, max_chars):
    ids = [260] * max_chars
    if word in ("<S>", "</S>"):
        ids[0:3] = [258, 256 if word == "<S>" else 257, 259]
    else:
        raw = list(word.encode("utf-8"))[: max_chars - 2]
        ids[0] = 258
        ids[1:1 + len(raw)] = raw
        ids[1 + len(raw)] = 259
    return [i + 1 for i in ids]  # 262 characters: 0 is the mask


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("words")
    ap.add_argument("vocab")
    ap.add_argument("--sentences", type=int, required=True)
    ap.add_argument("--rows", type=int, required=True)
    a = ap.parse_args()
    opt = json.load(open(os.path.join(a.model, "options.json")))
    assert opt["char_cnn"]["n_characters"] == 262, "a finished model has 262 characters"
    lstm, cnn = opt["lstm"], opt["char_cnn"]
    c, p, layers = lstm["dim"], lstm["projection_dim"], lstm["n_layers"]
    cell_clip, proj_clip = lstm["cell_clip"], lstm["proj_clip"]
    max_chars = cnn["max_characters_per_token"]
    h5 = h5py.File(os.path.join(a.model, "weights.hdf5"), "r")
    w = lambda name: torch.tensor(np.array(h5[name]), dtype=torch.float64)  # noqa: E731
    char_embed = torch.cat([torch.zeros(1, cnn["embedding"]["dim"]), w("char_embed")])
    state, _ = read_safetensors(os.path.join(a.model, "elmo_state.safetensors"))
    softmax_w, softmax_b = state["softmax/W"].double(), state["softmax/b"].double()
    vocab_size = softmax_w.shape[0]
    words = open(a.vocab, encoding="utf-8").read().split("\n")[:-1]
    model_words = open(os.path.join(a.model, "vocab.txt"), encoding="utf-8").read().split("\n")[:-1]
    assert model_words == words[:vocab_size], "vocab.txt is the softmax's words"

    def encode(ids):  # token vectors of word ids
        chars = torch.tensor([characters(words[i], max_chars) for i in ids])
        x = char_embed[chars]
        pooled = []
        for k, (width, n) in enumerate(cnn["filters"]):
            kernel = w(f"CNN/W_cnn_{k}")[0].permute(2, 1, 0)  # [w, e, F] -> torch's [F, e, w]
            pooled.append(torch.nn.functional.conv1d(x.transpose(1, 2), kernel, w(f"CNN/b_cnn_{k}")).max(2).values)
        x = torch.cat(pooled, 1)
        x = torch.relu(x) if cnn["activation"] == "relu" else torch.tanh(x)
        for k in range(cnn["n_highway"]):
            g = torch.sigmoid(x @ w(f"CNN_high_{k}/W_carry") + w(f"CNN_high_{k}/b_carry"))
            x = g * torch.relu(x @ w(f"CNN_high_{k}/W_transform") + w(f"CNN_high_{k}/b_transform")) + (1 - g) * x
        if "CNN_proj/W_proj" in h5:
            x = x @ w("CNN_proj/W_proj") + w("CNN_proj/b_proj")
        return x

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
    result = {}
    for d, stream in enumerate((forward, backward)):
        inputs = [stream[r * length:(r + 1) * length] for r in range(rows)]
        targets = torch.tensor([[t if t < vocab_size else 2 for t in stream[r * length + 1:(r + 1) * length + 1]]
                                for r in range(rows)])
        x = encode([i for row in inputs for i in row]).reshape(rows, length, -1).transpose(0, 1)  # [T, R, p]
        for l in range(layers):
            cell = f"RNN_{d}/RNN/MultiRNNCell/Cell{l}/LSTMCell/"
            W, B, P = w(cell + "W_0"), w(cell + "B"), w(cell + "W_P_0")
            h, cs = torch.zeros(rows, p), torch.zeros(rows, c)
            out = []
            for t in range(length):
                i, j, fg, o = (torch.cat([x[t], h], 1) @ W + B).split(c, 1)
                cs = (torch.sigmoid(fg + 1.0) * cs + torch.sigmoid(i) * torch.tanh(j)).clamp(-cell_clip, cell_clip)
                h = ((torch.sigmoid(o) * torch.tanh(cs)) @ P).clamp(-proj_clip, proj_clip)
                out.append(h)
            out = torch.stack(out)
            x = out + x if l > 0 and lstm.get("use_skip_connections", True) else out
        logits = x.reshape(length * rows, p) @ softmax_w.T + softmax_b
        loss = torch.nn.functional.cross_entropy(logits, targets.T.reshape(-1), reduction="mean")
        result["eval_ppl_" + ("forward" if d == 0 else "backward")] = math.exp(float(loss))
        result[d] = float(loss)
    result["eval_ppl"] = math.exp(0.5 * (result.pop(0) + result.pop(1)))
    result["eval_tokens"] = rows * length
    print(json.dumps(result))


if __name__ == "__main__":
    main()
