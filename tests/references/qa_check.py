"""kglm's QA scores against transformers' SQuAD metrics (transformers.data.metrics.squad_metrics: the
normalisation, exact match and token F1 of SQuAD's official evaluation script), first answer by
answer: the English gold answers of XQuAD, MLQA and TyDiQA-GoldP, each against itself and against
seeded edits of itself (words dropped or added, case, punctuation, articles, another question's
answer), through kglm's own scorer (score_tags answers en).

Then finetune --task qa end to end: a small XLM-R pre-trained here is fine-tuned on
XQuAD English questions, `finetune predict` writes {id: answer} for held-out English questions, and
transformers' SQuAD metrics (transformers.data.metrics.squad_metrics: the normalisation, exact match
and token F1 of SQuAD's official evaluation script, best over the gold answers) score those
predictions as `finetune evaluate` and the run's own test table did, to 1e-6. (MLQA's script is on
no package: its rules are tested by tasks_qa_test's hand-worked cases.) Also: every answer is a span
of its context, the German test file (zero-shot, MLQA's rules) is scored, the training loss falls,
and a question with a bad answer_start costs that question only, reported with its place."""
import json
import os
import random
import subprocess
import sys
import tempfile

from transformers.data.metrics.squad_metrics import compute_exact, compute_f1, get_tokens

from common import Report, fixture, run, skip, tool


def split_xquad(path, work, first, name):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)["data"]
    parts = {"train": data[:first], "test": data[first:]}
    out = {}
    for part, articles in parts.items():
        out[part] = os.path.join(work, f"{name}.{part}.json")
        with open(out[part], "w", encoding="utf-8") as f:
            json.dump({"version": "1.1", "data": articles}, f, ensure_ascii=False)
    return out


def questions(path):
    with open(path, encoding="utf-8") as f:
        for article in json.load(f)["data"]:
            for p in article["paragraphs"]:
                for q in p["qas"]:
                    yield p["context"], q


SCORE_TAGS = sys.argv[1]


def edits(answer, others, rng):
    """The answer and edits of it that a scorer must tell apart or see through."""
    words = answer.split()
    out = [answer, answer.upper(), f"the {answer}.", f"({answer})", answer.replace(" ", "  "), rng.choice(others),
           " ".join(words[1:]), " ".join(words[:-1]), answer + " " + rng.choice(others), f"«{answer}»",
           answer.replace("-", " "), "a " + " ".join(reversed(words))]
    return [e.replace("\t", " ").replace("\n", " ") for e in out]


def compare_scorers(report, work):
    golds = []
    for parts in (("xquad", "xquad.en.json"), ("mlqa", "dev-context-en-question-en.json"),
                  ("tydiqa", "tydiqa.goldp.en.train.first500.json")):
        path = fixture(*parts)
        if path:
            golds += [a["text"].replace("\t", " ").replace("\n", " ") for _, qa in questions(path)
                      for a in qa["answers"]]
    rng = random.Random(20261128)
    pairs = [(p, g) for g in golds for p in edits(g, golds, rng)]
    # transformers scores an empty answer by its own rule (1 when both are empty), SQuAD v1.1's
    # script gives F1 0: pairs with an empty side are left out.
    pairs = [(p, g) for p, g in pairs if get_tokens(p) and get_tokens(g)]
    path = os.path.join(work, "answers.tsv")
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(f"{p}\t{g}\n" for p, g in pairs)
    out = subprocess.run([SCORE_TAGS, "answers", "en", path], capture_output=True, text=True, check=True)
    ours = [tuple(map(float, line.split())) for line in out.stdout.splitlines()]
    if len(ours) != len(pairs):
        report.fail(f"score_tags answers: {len(ours)} scores for {len(pairs)} pairs")
        return
    em = max(abs(o[0] - compute_exact(g, p)) for o, (p, g) in zip(ours, pairs))
    f1 = max(abs(o[1] - compute_f1(g, p)) for o, (p, g) in zip(ours, pairs))
    report.check("exact match and F1 of answer pairs = transformers' SQuAD metrics",
                 f"{len(pairs)} pairs from {len(golds)} gold answers", max(em, f1), 1e-12)


def main():
    spm, text = fixture("tokenizer", "spm-test-vocab1000.model"), fixture("tokenizer", "botchan.txt")
    en, de = fixture("xquad", "xquad.en.json"), fixture("xquad", "xquad.de.json")
    if not (spm and text and en and de):
        skip("../shared/fixtures lacks the tokenizer or XQuAD files")
    report = Report()
    pretrain, finetune = tool("pretrain"), tool("finetune")
    with tempfile.TemporaryDirectory() as work:
        compare_scorers(report, work)
        q = ["--quiet", "--threads", "2"]
        data = os.path.join(work, "data.h5")
        run([pretrain, "prepare", "--tokenizer", spm, "--max-len", "64", "-o", data, "--quiet", f"en={text}"])
        init = os.path.join(work, "init")
        run([pretrain, "--data", data, "--layers", "2", "--hidden", "64", "--heads", "4", "--ffn", "128", "--batch",
             "16", "--steps", "30", "--lr", "3e-3", "--max-positions", "194", "--out", init] + q)
        en_files = split_xquad(en, work, 12, "en")
        de_files = split_xquad(de, work, 12, "de")
        out = os.path.join(work, "run")
        run([finetune, "--task", "qa", "--init", init, "--train", "en=" + en_files["train"], "--test",
             "en=" + en_files["test"], "--test", "de=" + de_files["test"], "--max-len", "192", "--doc-stride", "64",
             "--epochs", "1", "--batch", "16", "--lr", "1e-3", "--seeds", "3", "-o", out] + q)
        model = os.path.join(out, "seed-3", "best")
        predictions = os.path.join(work, "predictions.json")
        run([finetune, "predict", "--model", model, "en=" + en_files["test"], "-o", predictions] + q)
        run([finetune, "evaluate", "--model", model, "--test", "en=" + en_files["test"], "--test",
             "de=" + de_files["test"], "-o", os.path.join(work, "evaluation")] + q)
        with open(predictions, encoding="utf-8") as f:
            answers = json.load(f)
        with open(os.path.join(work, "evaluation.json")) as f:
            evaluated = json.load(f)["languages"]
        with open(os.path.join(out, "results.json")) as f:
            tested = json.load(f)["languages"]

        gold = list(questions(en_files["test"]))
        if set(answers) != {qa["id"] for _, qa in gold}:
            report.fail("predict: the ids of the predictions are not the test file's")
        outside = [qa["id"] for context, qa in gold if answers.get(qa["id"], "") not in context]
        if outside:
            report.fail(f"predict: {len(outside)} answers are not spans of their context ({outside[:3]})")
        texts = [[a["text"] for a in qa["answers"]] for _, qa in gold]
        exact = sum(max(compute_exact(t, answers[qa["id"]]) for t in ts) for (_, qa), ts in zip(gold, texts)) / len(gold)
        f1 = sum(max(compute_f1(t, answers[qa["id"]]) for t in ts) for (_, qa), ts in zip(gold, texts)) / len(gold)
        for name, scores in (("finetune evaluate", evaluated["en"]), ("the run's test table", tested["en"])):
            ours = (scores["exact_match"]["mean"], scores["f1"]["mean"])
            report.check(f"{name}: English exact match and F1 = transformers' SQuAD metrics on predict's answers "
                         f"(EM {100 * exact:.2f}, F1 {100 * f1:.2f})", f"{len(gold)} questions",
                         max(abs(ours[0] - exact), abs(ours[1] - f1)), 1e-6)
        if evaluated["de"]["examples"] != sum(1 for _ in questions(de_files["test"])):
            report.fail("finetune evaluate: the German questions are not all scored")
        print(f"zero-shot German: EM {100 * evaluated['de']['exact_match']['mean']:.2f}, "
              f"F1 {100 * evaluated['de']['f1']['mean']:.2f}")
        with open(os.path.join(out, "seed-3", "metrics.jsonl")) as f:
            losses = [json.loads(line)["loss"] for line in f if '"loss"' in line]
        first, last = sum(losses[:5]) / 5, sum(losses[-5:]) / 5
        report.check(f"training: the loss falls (first five steps {first:.3f}, last five {last:.3f})",
                     f"{len(losses)} steps", last / first, 0.8)

        # A bad answer_start costs its question only, reported where it is.
        with open(en_files["test"], encoding="utf-8") as f:
            bad = json.load(f)
        bad["data"][0]["paragraphs"][1]["qas"][0]["answers"][0]["answer_start"] = 10 ** 6
        bad_path = os.path.join(work, "bad.json")
        with open(bad_path, "w", encoding="utf-8") as f:
            json.dump(bad, f, ensure_ascii=False)
        p = run([finetune, "evaluate", "--model", model, "--test", "en=" + bad_path, "-o",
                 os.path.join(work, "bad-evaluation")])
        if "data[0].paragraphs[1].qas[0]" not in p.stderr or "outside the context" not in p.stderr:
            report.fail(f"a bad answer_start is not reported with its place: {p.stderr[-400:]}")
        with open(os.path.join(work, "bad-evaluation.json")) as f:
            if json.load(f)["languages"]["en"]["examples"] != len(gold) - 1:
                report.fail("a bad question cost more than itself")
    report.finish()


if __name__ == "__main__":
    sys.exit(main())
