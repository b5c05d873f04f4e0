"""verbalize evaluate's BLEU and chrF against sacrebleu's corpus_bleu and corpus_chrf (defaults: 13a
tokenisation, exponential smoothing, chrF beta 2 and character order 6), to 0.01, on the fixtures'
real multilingual text and on random corpora with empty, numeric, HTML-escaped and Unicode-heavy
lines. The copy baseline (serialized_triples as the sentence) is scored the same way."""
import json
import os
import random
import tempfile

import sacrebleu

from common import Report, fixture, run, tool

WORDS = ["the", "a", "Paris", "is", "capital", "of", "France", "born", "in", "1952", "3.5", "1,000", "5.", "-3",
         "2-3", "U.S.", "e.g.", "don't", "l'homme", "(", ")", "\"", "'", ",", ".", "!", "?", ";", ":", "-", "--",
         "&amp;", "&quot;", "&lt;b&gt;", "&", "<skipped>", "a/b", "x+y", "50%", "$5", "#1", "@user", "{", "}", "[", "]",
         "~", "^", "_", "`", "|", "\\", "Αθήνα", "είναι", "πρωτεύουσα", "서울은", "수도이다", "東京", "は", "首都",
         "です。", "Zürich", "naïve", "İstanbul", "ß", "ﬁ", "٣", "١٢", "مرحبا", "שלום", "🙂", "🇫🇷", "e\u0301",
         "\u00a0", "\u2009", "\u3000", "\t", "3.", ".5", "1.2.3", "a.b", "x,y", "9-", "-9"]


def random_line(rng):
    n = rng.choice([0, 0, 1, 2, 3, 5, 8, 13, 21])
    out = ""
    for _ in range(n):
        out += rng.choice(WORDS) + rng.choice(["", " ", " ", " ", "  "])
    return out


def scores_of(records, work):
    path = os.path.join(work, "generated.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        for hyp, ref, copy in records:
            f.write(json.dumps({"serialized_triples": copy, "gen_sentence": hyp, "sentence": ref}, ensure_ascii=False)
                    + "\n")
    scores = os.path.join(work, "scores.json")
    run([tool("verbalize"), "evaluate", "-q", "-o", scores, path])
    with open(scores, encoding="utf-8") as f:
        return json.load(f)


def reference_scores(records):
    kept = [r for r in records if r[1] != ""]  # verbalize evaluate counts records without a reference apart
    hyps, refs, copies = [r[0] for r in kept], [r[1] for r in kept], [r[2] for r in kept]
    return {"bleu": sacrebleu.corpus_bleu(hyps, [refs]).score, "chrf": sacrebleu.corpus_chrf(hyps, [refs]).score,
            "copy_bleu": sacrebleu.corpus_bleu(copies, [refs]).score,
            "copy_chrf": sacrebleu.corpus_chrf(copies, [refs]).score}


def compare(name, records, work, report, worst):
    ours, theirs = scores_of(records, work), reference_scores(records)
    largest = max(abs(ours[k] - theirs[k]) for k in theirs)
    if largest > 0.01:
        report.fail(f"{name}: kglm {ours} sacrebleu {theirs}")
    worst[0] = max(worst[0], largest)
    return len(records)


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def main():
    report = Report()
    with tempfile.TemporaryDirectory() as work:
        # The fixtures' real text: Tatoeba translations against their English side, XNLI hypotheses
        # against their premises (shared words, so every n-gram order has matches).
        worst, lines, corpora = [0.0], 0, 0
        for lang in ("fin", "swe", "kor"):
            src, eng = fixture("tatoeba", f"tatoeba.{lang}-eng.{lang}"), fixture("tatoeba", f"tatoeba.{lang}-eng.eng")
            if src and eng:
                a, b = read_lines(src), read_lines(eng)
                lines += compare(f"tatoeba {lang}", list(zip(a, b, b[1:] + b[:1])), work, report, worst)
                corpora += 1
        for lang in ("en", "de", "el"):
            path = fixture("xnli", f"dev-{lang}.first600.tsv")
            if path:
                rows = [line.split("\t") for line in read_lines(path)]
                lines += compare(f"xnli {lang}", [(r[1], r[0], r[0][: len(r[0]) // 2]) for r in rows], work, report,
                                 worst)
                corpora += 1
        if corpora:
            report.check("fixtures' text (Tatoeba, XNLI), BLEU/chrF/copy", f"{corpora} corpora, {lines} lines", worst[0],
                         0.01)
        else:
            print("note: ../shared/fixtures absent, fixture corpora not compared")

        # Random corpora, seeded: 150 of 1 to 40 lines, and the corner cases.
        rng = random.Random(20261127)
        worst, lines = [0.0], 0
        for i in range(150):
            records = [(random_line(rng), random_line(rng), random_line(rng)) for _ in range(rng.randint(1, 40))]
            if all(r[1] == "" for r in records):
                records.append(("x", "x", "y"))
            lines += compare(f"random corpus {i}", records, work, report, worst)
        corner = {
            "empty hypotheses": [("", "the cat sat on the mat .", "")] * 3,
            "no 4-gram match": [("the cat sat", "the cat sat on the mat", "cat the")],
            "one word": [("cat", "cat", "dog")],
            "longer hypothesis": [("a b c d e f g h", "a b c", "a")],
            "digits and separators": [("It cost 3.5 , not 1,000 . 5.", "It cost 3.5, not 1,000. 5.", "3-4 9- -9")],
        }
        for name, records in corner.items():
            lines += compare(name, records, work, report, worst)
        report.check("random corpora and corner cases, BLEU/chrF/copy", f"{150 + len(corner)} corpora, {lines} lines",
                     worst[0], 0.01)
    report.finish()


if __name__ == "__main__":
    main()
