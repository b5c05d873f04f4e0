"""The peer of bench/parse-cpu.py: kglm's frozen-feature biaffine parser written in PyTorch the way a
researcher would (padded batches), on the same frozen features (`pretrain embed --layers all`'s
HDF5: dataset "<i>" [layers, words, width] per sentence) and the same CoNLL-U sentences: a scalar mix
of the layers, a learned ROOT vector, four ReLU MLPs with dropout, biaffine arc scores
dep·U·head + head·u, torch.nn.Bilinear label scores, cross-entropy over heads plus over labels at
the gold heads, Adam (lr 2e-3, β 0.9/0.9) with clipping at 5. The label scores are torch.nn.Bilinear's
(weight [labels, label, label] and bias) computed with einsum: torch 1.13's Bilinear backward on the
CPU took 3.3 s for one batch (32 × 40 positions, 100 → 50) where einsum takes 0.12 s, and a fair peer
should not pay for that; decoding: per sentence, the maximum
spanning tree of the heads' log-softmax scores with one word under ROOT (Chu-Liu/Edmonds in numpy,
written here), labels at those heads.

Prints JSON: training sentences/s, decoding sentences/s (forward + MST + labels), UAS and LAS.
Usage: parser_torch.py TRAIN_H5 TRAIN_CONLLU TEST_H5 TEST_CONLLU [--epochs E] [--batch B]
                       [--threads T] [--arc 500] [--label 100]"""
import argparse
import json
import time

import h5py
import numpy as np
import torch
import torch.nn.functional as F


def read_conllu(path):
    sentences, current = [], []
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if not line:
            if current:
                sentences.append(current)
            current = []
            continue
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            current.append((int(cols[6]), cols[7]))
    if current:
        sentences.append(current)
    return sentences


def read_features(path, count):
    f = h5py.File(path, "r")
    return [torch.from_numpy(np.asarray(f[str(i)], dtype=np.float32)) for i in range(count)]


class Parser(torch.nn.Module):
    def __init__(self, layers, width, arc, label, relations, dropout):
        super().__init__()
        self.mix = torch.nn.Parameter(torch.zeros(layers))
        self.gamma = torch.nn.Parameter(torch.ones(1))
        self.root = torch.nn.Parameter(torch.randn(width) * 0.02)
        self.arc_dep, self.arc_head = torch.nn.Linear(width, arc), torch.nn.Linear(width, arc)
        self.label_dep, self.label_head = torch.nn.Linear(width, label), torch.nn.Linear(width, label)
        self.U = torch.nn.Parameter(torch.zeros(arc, arc))
        self.u = torch.nn.Parameter(torch.zeros(arc))
        self.bilinear_weight = torch.nn.Parameter(torch.zeros(relations, label, label))
        self.bilinear_bias = torch.nn.Parameter(torch.zeros(relations))
        self.dropout = torch.nn.Dropout(dropout)

    def forward(self, x, lengths):
        """x [B, layers, T, width] padded; returns the arc scores [B, T+1, T+1] and the label MLPs' rows."""
        w = torch.softmax(self.mix, 0)
        mixed = self.gamma * torch.einsum("l,bltd->btd", w, x)
        h = torch.cat([self.root.expand(x.shape[0], 1, -1), mixed], 1)
        mlp = lambda layer: self.dropout(F.relu(layer(h)))
        ad, ah, ld, lh = mlp(self.arc_dep), mlp(self.arc_head), mlp(self.label_dep), mlp(self.label_head)
        scores = (ad @ self.U) @ ah.transpose(1, 2) + (ah @ self.u).unsqueeze(1)
        positions = torch.arange(h.shape[1])
        scores = scores.masked_fill(positions[None, None, :] > lengths[:, None, None], float("-inf"))
        return scores, ld, lh


def batch_of(features, sentences, ids, relations):
    lengths = torch.tensor([len(sentences[i]) for i in ids])
    t = int(lengths.max())
    x = torch.zeros(len(ids), features[ids[0]].shape[0], t, features[ids[0]].shape[2])
    heads = torch.full((len(ids), t + 1), -100, dtype=torch.long)
    labels = torch.full((len(ids), t + 1), -100, dtype=torch.long)
    for b, i in enumerate(ids):
        n = len(sentences[i])
        x[b, :, :n] = features[i]
        heads[b, 1:n + 1] = torch.tensor([h for h, _ in sentences[i]])
        labels[b, 1:n + 1] = torch.tensor([relations.get(r, -100) for _, r in sentences[i]])
    return x, lengths, heads, labels


def label_scores(model, ld, lh, heads):
    """The label scores of every position with the head given (heads [B, T+1], -100 where none)."""
    index = heads.clamp(min=0).unsqueeze(-1).expand(-1, -1, lh.shape[-1])
    head_rows = torch.gather(lh, 1, index)
    return torch.einsum("bti,lij,btj->btl", ld, model.bilinear_weight, head_rows) + model.bilinear_bias


def spanning_tree(scores):
    """Heads of words 1..n from scores [n+1, n+1] (dependent, head): Chu-Liu/Edmonds, one root edge."""
    n = scores.shape[0] - 1
    w = scores.astype(np.float64).copy()
    finite = w[1:][np.isfinite(w[1:])]
    w[1:, 0] -= n * (finite.max() - finite.min()) + 1
    np.fill_diagonal(w, -np.inf)
    w[0, :] = -np.inf
    return arborescence(w)[1:]


def arborescence(w):
    m = w.shape[0]
    head = np.full(m, -1)
    head[1:] = w[1:].argmax(1)
    # find a cycle
    cycle = None
    for start in range(1, m):
        seen, v = [], start
        while v > 0 and v not in seen:
            seen.append(v)
            v = head[v]
        if v > 0 and v in seen:
            cycle = seen[seen.index(v):]
            break
    if cycle is None:
        return head
    in_cycle = np.zeros(m, bool)
    in_cycle[cycle] = True
    outside = [v for v in range(m) if not in_cycle[v]]
    k = len(outside) + 1
    c = k - 1
    cw = np.full((k, k), -np.inf)
    enter, leave = np.full(k, -1), np.full(k, -1)
    for a, d in enumerate(outside):
        for b, h in enumerate(outside):
            if h != d:
                cw[a, b] = w[d, h]
        gains = [(w[v, d] - w[v, head[v]], v) for v in cycle]
        gain, v = max(gains)
        cw[c, a], enter[a] = gain, v
        best = max(cycle, key=lambda u: w[d, u])
        cw[a, c], leave[a] = w[d, best], best
    ch = arborescence(cw)
    out = head.copy()
    for a, d in enumerate(outside):
        if a > 0:
            out[d] = leave[a] if ch[a] == c else outside[ch[a]]
    out[enter[ch[c]]] = outside[ch[c]]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("train_h5")
    ap.add_argument("train_conllu")
    ap.add_argument("test_h5")
    ap.add_argument("test_conllu")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--arc", type=int, default=500)
    ap.add_argument("--label", type=int, default=100)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    train, test = read_conllu(a.train_conllu), read_conllu(a.test_conllu)
    train_x, test_x = read_features(a.train_h5, len(train)), read_features(a.test_h5, len(test))
    relations = {r: i for i, r in enumerate(sorted({r for s in train for _, r in s}))}
    layers, width = train_x[0].shape[0], train_x[0].shape[2]
    model = Parser(layers, width, a.arc, a.label, len(relations), 0.33)
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3, betas=(0.9, 0.9))
    order = list(range(len(train)))
    start = time.perf_counter()
    model.train()
    for epoch in range(a.epochs):
        np.random.default_rng(epoch).shuffle(order)
        for first in range(0, len(order), a.batch):
            ids = order[first:first + a.batch]
            x, lengths, heads, labels = batch_of(train_x, train, ids, relations)
            scores, ld, lh = model(x, lengths)
            words = int(lengths.sum())
            arc_loss = F.cross_entropy(scores.reshape(-1, scores.shape[-1]), heads.reshape(-1), ignore_index=-100,
                                       reduction="sum") / words
            label_loss = F.cross_entropy(label_scores(model, ld, lh, heads).reshape(-1, len(relations)),
                                         labels.reshape(-1), ignore_index=-100, reduction="sum") / words
            optimizer.zero_grad()
            (arc_loss + label_loss).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
    train_seconds = time.perf_counter() - start

    names = sorted(relations, key=relations.get)
    start = time.perf_counter()
    model.eval()
    words = uas = las = 0
    with torch.no_grad():
        for first in range(0, len(test), a.batch):
            ids = list(range(first, min(first + a.batch, len(test))))
            x, lengths, _, _ = batch_of(test_x, test, ids, relations)
            scores, ld, lh = model(x, lengths)
            log_probs = torch.log_softmax(scores, -1).numpy()
            predicted = torch.full((len(ids), scores.shape[1]), -100, dtype=torch.long)
            for b, i in enumerate(ids):
                n = len(test[i])
                predicted[b, 1:n + 1] = torch.from_numpy(spanning_tree(log_probs[b, :n + 1, :n + 1]))
            best = label_scores(model, ld, lh, predicted).argmax(-1)
            for b, i in enumerate(ids):
                for k, (gold_head, gold_rel) in enumerate(test[i]):
                    words += 1
                    if predicted[b, k + 1] == gold_head:
                        uas += 1
                        las += names[best[b, k + 1]].split(":")[0] == gold_rel.split(":")[0]
    test_seconds = time.perf_counter() - start
    print(json.dumps({"train_sentences_per_s": a.epochs * len(train) / train_seconds,
                      "decode_sentences_per_s": len(test) / test_seconds, "uas": uas / words, "las": las / words}))


if __name__ == "__main__":
    main()
