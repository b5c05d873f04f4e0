#!/usr/bin/env python3
"""bench/parse-cpu: kglm's frozen-feature biaffine parser (`finetune --task parse`) against the same
parser in Debian's python3-torch (bench/reference/parser_torch.py: padded batches, a numpy
Chu-Liu/Edmonds) on the same frozen ELMo features, in one run, at 1 and 2 threads: training
sentences/s and decoding sentences/s (scores, maximum spanning trees, labels), with each one's
UAS/LAS on the test sentences as a check that both learn.

Data (built once under --work): an ELMo as wide as the paper's (LSTM cells 1024 projected to 512,
so 1024-wide features, 3 representations) initialised and trained 20 steps on UD English-EWT's
training words — its features only feed the heads, their quality does not matter for the timing —;
the first --train-sentences (2,000) of EWT train and EWT dev whole (2,001). kglm computes its
features itself (not timed: train_milliseconds and test_milliseconds count the head's work only);
the peer reads them from `pretrain embed --layers all`.

Usage: bench/parse-cpu.py [--bin build/bin] [--fixtures ../shared/fixtures] [--work out/bench]
                          [--epochs 1] [--train-sentences 2000]
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import arguments, root, torch_python  # noqa: E402

TORCH_PYTHON = torch_python()
PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference", "parser_torch.py")


def words_of(blocks):
    for block in blocks:
        words = [line.split("\t")[1] for line in block.split("\n") if line.split("\t")[0].isdigit()]
        if words:
            yield " ".join(words)


def data(args):
    work = os.path.join(args.work, "parse-cpu")
    ready = os.path.join(work, "ready")
    if os.path.exists(ready):
        return work
    os.makedirs(work, exist_ok=True)
    train_gz = os.path.join(args.fixtures, "ud", "en_ewt-ud-train.conllu.gz")
    dev = os.path.join(args.fixtures, "ud", "en_ewt-ud-dev.conllu")
    if not os.path.exists(train_gz):
        sys.exit("fixtures not found: " + train_gz)
    blocks = [b for b in gzip.open(train_gz, "rt", encoding="utf-8").read().split("\n\n") if b.strip()]
    with open(os.path.join(work, "ewt.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(words_of(blocks)) + "\n")
    with open(os.path.join(work, "train.conllu"), "w", encoding="utf-8") as f:
        f.write("\n\n".join(blocks[:args.train_sentences]) + "\n\n")
    dev_blocks = [b for b in open(dev, encoding="utf-8").read().split("\n\n") if b.strip()]
    with open(os.path.join(work, "test.conllu"), "w", encoding="utf-8") as f:
        f.write("\n\n".join(dev_blocks) + "\n\n")
    for name, blks in (("train", blocks[:args.train_sentences]), ("test", dev_blocks)):
        with open(os.path.join(work, name + ".txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(words_of(blks)) + "\n")
    options = json.load(open(os.path.join(root, "data", "elmo", "options-small.json")))
    options["lstm"].update({"dim": 1024, "projection_dim": 512})
    json.dump(options, open(os.path.join(work, "options.json"), "w"))
    pretrain = os.path.join(args.bin, "pretrain")
    sh = lambda *cmd: subprocess.run(list(cmd), check=True)
    sh(pretrain, "vocab", "-q", "en=" + os.path.join(work, "ewt.txt"), "-o", os.path.join(work, "vocab.txt"))
    sh(pretrain, "prepare", "--words", "--vocab", os.path.join(work, "vocab.txt"), "--max-len", "64", "-q",
       "en=" + os.path.join(work, "ewt.txt"), "-o", os.path.join(work, "words.h5"))
    sh(pretrain, "--architecture", "elmo", "--options", os.path.join(work, "options.json"), "--data",
       os.path.join(work, "words.h5"), "--batch", "16", "--steps", "20", "--threads", "2", "-q", "--out",
       os.path.join(work, "elmo"))
    for name in ("train", "test"):  # the peer's copy of the features
        sh(pretrain, "embed", "--model", os.path.join(work, "elmo"), os.path.join(work, name + ".txt"), "--threads",
           "2", "-q", "-o", os.path.join(work, name + ".h5"))
    open(ready, "w").close()
    return work


def kglm(args, work, threads):
    with tempfile.TemporaryDirectory() as out:
        stats = os.path.join(out, "stats.json")
        subprocess.run([os.path.join(args.bin, "finetune"), "--task", "parse", "--init", os.path.join(work, "elmo"),
                        "--train", "en=" + os.path.join(work, "train.conllu"), "--test",
                        "en=" + os.path.join(work, "test.conllu"), "--epochs", str(args.epochs), "--seeds", "1",
                        "--threads", str(threads), "-q", "--stats", stats, "--out", os.path.join(out, "run")],
                       check=True)
        s = json.load(open(stats))
        r = json.load(open(os.path.join(out, "run", "results.json")))["languages"]["en"]
        return (args.epochs * s["train_sentences"] / (s["train_milliseconds"] / 1000),
                s["test_sentences"] / (s["test_milliseconds"] / 1000), r["uas"]["mean"], r["las"]["mean"])


def peer(args, work, threads):
    p = subprocess.run([TORCH_PYTHON, PEER] + [os.path.join(work, n) for n in
                                               ("train.h5", "train.conllu", "test.h5", "test.conllu")] +
                       ["--epochs", str(args.epochs), "--threads", str(threads)], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("the torch peer failed:\n" + p.stderr)
    r = json.loads(p.stdout)
    return r["train_sentences_per_s"], r["decode_sentences_per_s"], r["uas"], r["las"]


def main():
    def extra(ap):
        ap.add_argument("--epochs", type=int, default=1)
        ap.add_argument("--train-sentences", type=int, default=2000)
    args = arguments(extra)
    if subprocess.run([TORCH_PYTHON, "-c", "import torch, h5py"], capture_output=True).returncode != 0:
        sys.exit("the peer needs Debian's python3-torch and python3-h5py: apt-get install python3-torch python3-h5py")
    work = data(args)
    print("parse-cpu: biaffine parser (arc 500, label 100) on frozen ELMo features (3 x 1024), %d training "
          "sentences x %d epoch(s), 2,001 test sentences" % (args.train_sentences, args.epochs))
    print("%-22s %14s %14s %8s %8s" % ("run", "train sent/s", "decode sent/s", "UAS", "LAS"))
    for threads in (1, 2):
        k, t = kglm(args, work, threads), peer(args, work, threads)
        print("%-22s %14.1f %14.1f %8.4f %8.4f" % ("kglm, %d thread(s)" % threads, *k))
        print("%-22s %14.1f %14.1f %8.4f %8.4f" % ("torch, %d thread(s)" % threads, *t))
        print("  ratio at %d thread(s): training %.2fx, decoding %.2fx" % (threads, k[0] / t[0], k[1] / t[1]))


if __name__ == "__main__":
    main()
