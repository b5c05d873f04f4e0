"""kglm's frozen-feature PoS accuracy and UAS/LAS against Universal Dependencies' official evaluator
(udtools 0.2.9's udeval: the CoNLL 2018 shared task's conll18_ud_eval.py as the UD project now
ships it), on the fixtures' treebanks: `finetune predict` labels EWT dev and Italian-ISDT dev
(multiword tokens, an empty node) with a PoS tagger and a biaffine parser on a frozen ELMo, and the
evaluator's UPOS, UAS and LAS of those files must equal what kglm reported for them in results.json
(the first seed's score).

The models: cli_frozen's runs when KGLM_FROZEN_RUNS names them (ctest: the fixture frozen_runs; an
ELMo of 300 steps on EWT's training words, the tagger and the parser trained on 3,000 of its
sentences, tested on en, sv and it), else trained here the same way at a smaller size (150 steps,
1,500 sentences): the claim is the equality of the two scorers on any model."""
import gzip
import json
import os
import sys
import tempfile

import udtools.udeval as udeval

from common import Report, fixture, run, skip, tool

REPORTED_DIGITS = 1e-8  # results.json writes scores with 9 significant digits

train_gz = fixture("ud", "en_ewt-ud-train.conllu.gz")
dev = fixture("ud", "en_ewt-ud-dev.conllu")
italian = fixture("ud", "it_isdt-ud-dev.conllu")
if not (train_gz and dev and italian):
    skip("the fixtures' UD treebanks are missing")
options = os.path.join(os.path.dirname(__file__), "../../data/elmo/options-small.json")
report = Report()
tests = {"en": dev, "it": italian}


def first_seed_model(directory):
    """The saved model of a run's first seed (results.json's per_seed[0]) and the run's results."""
    results = json.load(open(os.path.join(directory, "results.json")))
    return os.path.join(directory, f"seed-{results['seeds'][0]}", "best"), results


with tempfile.TemporaryDirectory() as work:
    def path(name):
        return os.path.join(work, name)

    runs = os.environ.get("KGLM_FROZEN_RUNS", "")
    if runs and all(os.path.exists(os.path.join(runs, task, "results.json")) for task in ("pos", "parse")):
        print(f"the models of cli_frozen's runs in {runs}")
    else:
        runs = work
        blocks = gzip.open(train_gz, "rt", encoding="utf-8").read().split("\n\n")
        with open(path("ewt.txt"), "w", encoding="utf-8") as f:
            for block in blocks:
                words = [line.split("\t")[1] for line in block.split("\n") if line.split("\t")[0].isdigit()]
                if words:
                    f.write(" ".join(words) + "\n")
        with open(path("train.conllu"), "w", encoding="utf-8") as f:
            f.write("\n\n".join(blocks[:1500]) + "\n\n")
        run([tool("pretrain"), "vocab", "-q", "en=" + path("ewt.txt"), "-o", path("vocab.txt")])
        run([tool("pretrain"), "prepare", "--words", "--vocab", path("vocab.txt"), "--max-len", "64", "-q",
             "en=" + path("ewt.txt"), "-o", path("words.h5")])
        run([tool("pretrain"), "--architecture", "elmo", "--options", options, "--data", path("words.h5"), "--batch",
             "16", "-q", "--threads", "2", "--steps", "150", "--out", path("elmo")])
        for task in ("pos", "parse"):
            args = [tool("finetune"), "--task", task, "--init", path("elmo"), "--train", "en=" + path("train.conllu"),
                    "--epochs", "2", "--seeds", "3", "--threads", "2", "-q", "--out", path(task)]
            for lang, file in tests.items():
                args += ["--test", f"{lang}={file}"]
            run(args)
    for task in ("pos", "parse"):
        model, results = first_seed_model(os.path.join(runs, task))
        for lang, gold_path in tests.items():
            predicted = path(f"{task}-{lang}.conllu")
            run([tool("finetune"), "predict", "--model", model, gold_path, "-q", "-o", predicted])
            scores = udeval.evaluate(udeval.load_conllu_file(gold_path), udeval.load_conllu_file(predicted))
            words = scores["Words"].gold_total
            if scores["Words"].f1 != 1.0:
                report.fail(f"{task} {lang}: predict changed the words (udeval Words F1 {scores['Words'].f1})")
            mine = results["languages"][lang]
            pairs = [("accuracy", "UPOS")] if task == "pos" else [("uas", "UAS"), ("las", "LAS")]
            for name, official in pairs:
                report.check(f"{task} {lang}: kglm's {name} = udeval's {official} ({scores[official].f1:.4f})",
                             f"{words} words", abs(mine[name]["per_seed"][0] - scores[official].f1), REPORTED_DIGITS)
report.finish()
