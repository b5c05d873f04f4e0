"""kglm's entity scores against seqeval 1.2.2 (default mode, and strict mode with IOB1, IOE1, IOB2,
IOE2, IOBES and BILOU) and its accuracy and macro-F1 against scikit-learn, on thousands of random
tag sequences (fixed seed) and on the fixtures' real PAN-X tags with realistic prediction errors."""
import os
import random
import subprocess
import sys
import tempfile

from seqeval.metrics import f1_score, precision_score, recall_score
from seqeval.scheme import BILOU, IOB1, IOB2, IOBES, IOE1, IOE2
from sklearn.metrics import accuracy_score
from sklearn.metrics import f1_score as sk_f1

from common import Report, fixture

SCORE_TAGS = sys.argv[1]
SCHEMES = {"IOB1": IOB1, "IOE1": IOE1, "IOB2": IOB2, "IOE2": IOE2, "IOBES": IOBES, "BILOU": BILOU}
PREFIXES = {"IOB1": "IOB", "IOE1": "IOE", "IOB2": "IOB", "IOE2": "IOE", "IOBES": "IOBES", "BILOU": "BILOU"}
TYPES = ["PER", "LOC", "ORG", "MISC-X"]


def kglm_entities(corpora, work, scheme=None):
    """kglm's (P, R, F1) of each (gold, predicted) corpus, or the error it refused the corpus with."""
    path = os.path.join(work, "tags.tsv")
    with open(path, "w") as f:
        for gold, predicted in corpora:
            for g, p in zip(gold, predicted):
                f.write(" ".join(g) + "\t" + " ".join(p) + "\n")
            f.write("#\n")
    args = [SCORE_TAGS, "entities"] + (["--strict", scheme] if scheme else []) + [path]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(out) == len(corpora), (len(out), len(corpora))
    return [(None, line) if line.startswith("error") else ([float(x) for x in line.split()[3:]], None)
            for line in out]


def seqeval_scores(gold, predicted, scheme=None):
    kwargs = {"mode": "strict", "scheme": SCHEMES[scheme]} if scheme else {}
    try:
        return [precision_score(gold, predicted, zero_division=0, **kwargs),
                recall_score(gold, predicted, zero_division=0, **kwargs),
                f1_score(gold, predicted, zero_division=0, **kwargs)], None
    except ValueError as e:  # a prefix the scheme does not allow
        return None, str(e)


def random_tags(rng, prefixes, n):
    tags = []
    for _ in range(n):
        if rng.random() < 0.4:
            tags.append("O")
        else:
            prefix = rng.choice(prefixes)
            kind = rng.choice(TYPES + [""])  # "" gives a bare prefix, of type "_"
            tags.append(prefix + ("-" + kind if kind else ""))
    return tags


def compare_entities(name, corpora, work, report, scheme=None):
    """The largest difference of P, R and F1 over the corpora; a corpus one side refuses and the
    other scores is a failure."""
    worst = 0.0
    for i, ((ours, our_error), (gold, predicted)) in enumerate(zip(kglm_entities(corpora, work, scheme), corpora)):
        theirs, their_error = seqeval_scores(gold, predicted, scheme)
        if (ours is None) != (theirs is None):
            report.fail(f"{name}, corpus {i}: kglm {ours or our_error}, seqeval {theirs or their_error}")
        elif ours is not None:
            worst = max(worst, max(abs(a - b) for a, b in zip(ours, theirs)))
    return worst


def to_scheme(sentence, scheme):
    """IOB2 tags of a real sentence rewritten in another scheme."""
    spans, out = [], ["O"] * len(sentence)
    i = 0
    while i < len(sentence):
        if sentence[i] == "O":
            i += 1
            continue
        kind, j = sentence[i][2:], i + 1
        while j < len(sentence) and sentence[j] == "I-" + kind:
            j += 1
        spans.append((i, j, kind))
        i = j
    for a, b, kind in spans:
        for k in range(a, b):
            if scheme == "IOB2":
                out[k] = ("B-" if k == a else "I-") + kind
            elif scheme == "IOE2":
                out[k] = ("E-" if k == b - 1 else "I-") + kind
            elif scheme in ("IOBES", "BILOU"):
                single, first, last = ("S", "B", "E") if scheme == "IOBES" else ("U", "B", "L")
                out[k] = (single if b - a == 1 else first if k == a else last if k == b - 1 else "I") + "-" + kind
            elif scheme == "IOB1":  # B only where an entity follows one of the same type
                out[k] = ("B-" if k == a and a > 0 and out[a - 1] == "I-" + kind else "I-") + kind
            elif scheme == "IOE1":  # E only where an entity of the same type follows
                out[k] = ("E-" if k == b - 1 and (b, kind) in [(s[0], s[2]) for s in spans] else "I-") + kind
    return out


def perturb(rng, tags):
    """Prediction-like errors: a type swapped, a boundary moved, an entity dropped or invented."""
    out = list(tags)
    for k in range(len(out)):
        r = rng.random()
        if r < 0.04 and out[k] != "O":
            out[k] = out[k][:2] + rng.choice(["PER", "LOC", "ORG"])
        elif r < 0.07:
            out[k] = "O"
        elif r < 0.10 and out[k] == "O":
            out[k] = rng.choice(["B-", "I-"]) + rng.choice(["PER", "LOC", "ORG"])
    return out


def read_panx(path):
    sentences, current = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                if current:
                    sentences.append(current)
                current = []
            else:
                current.append(line.split("\t")[-1])
    if current:
        sentences.append(current)
    return sentences


def main():
    report = Report()
    rng = random.Random(20261127)
    with tempfile.TemporaryDirectory() as work:
        # Random sequences: corpora of 1 to 8 sentences, per mode and scheme.
        for scheme in [None] + list(SCHEMES):
            prefixes = PREFIXES[scheme] if scheme else "BIES"
            # In strict mode a tenth of the sentences may carry a prefix the scheme refuses: kglm must
            # refuse those corpora as seqeval does.
            allowed_only = 0.9 if scheme else 1.0
            corpora, tags = [], 0
            for _ in range(1000 if scheme else 2000):
                gold, predicted = [], []
                for _ in range(rng.randint(1, 8)):
                    n = rng.randint(0, 12)
                    gold.append(random_tags(rng, prefixes if rng.random() < allowed_only else "BIES", n))
                    predicted.append(random_tags(rng, prefixes, n))
                    tags += n
                corpora.append((gold, predicted))
            name = f"entity P/R/F1, {'strict ' + scheme if scheme else 'default mode'}, random tags"
            report.check(name, f"{len(corpora)} corpora, {tags} tags", compare_entities(name, corpora, work, report,
                                                                                       scheme), 1e-12)

        # The fixtures' real tags (PAN-X en, fi, zh dev), in every scheme, with prediction-like errors.
        for lang in ("en", "fi", "zh"):
            path = fixture("panx", f"dev-{lang}.tsv")
            if not path:
                print(f"note: PAN-X {lang} absent, not compared")
                continue
            sentences = read_panx(path)
            for scheme in ["IOB2", "IOE2", "IOBES", "BILOU", "IOB1", "IOE1"]:
                corpus = ([to_scheme(s, scheme) for s in sentences],
                          [to_scheme(perturb(rng, s), scheme) for s in sentences])
                name = f"entity P/R/F1, PAN-X {lang} dev in {scheme} with prediction errors"
                worst = max(compare_entities(name, [corpus], work, report, mode)
                            for mode in ([None, scheme] if scheme in ("IOB2", "IOE2", "IOBES", "IOB1") else [scheme]))
                report.check(name, f"{len(sentences)} sentences, {sum(map(len, sentences))} tags", worst, 1e-12)

        # Accuracy and macro-F1 against scikit-learn: 2,000 random label sequences.
        path, corpora = os.path.join(work, "labels.txt"), []
        with open(path, "w") as f:
            for _ in range(2000):
                n, k = rng.randint(1, 60), rng.randint(1, 8)
                gold = [rng.randrange(k) for _ in range(n)]
                predicted = [rng.randrange(k + 1) - (1 if rng.random() < 0.05 else 0) for _ in range(n)]
                corpora.append((gold, predicted))
                f.writelines(f"{g} {p}\n" for g, p in zip(gold, predicted))
                f.write("#\n")
        out = subprocess.run([SCORE_TAGS, "labels", path], capture_output=True, text=True, check=True)
        worst = 0.0
        for line, (gold, predicted) in zip(out.stdout.splitlines(), corpora):
            ours = [float(x) for x in line.split()]
            theirs = [accuracy_score(gold, predicted), sk_f1(gold, predicted, average="macro", zero_division=0)]
            worst = max(worst, max(abs(a - b) for a, b in zip(ours, theirs)))
        report.check("accuracy and macro-F1 against scikit-learn, random labels",
                     f"{len(corpora)} sequences, {sum(len(c[0]) for c in corpora)} labels", worst, 1e-12)
    report.finish()


if __name__ == "__main__":
    main()
