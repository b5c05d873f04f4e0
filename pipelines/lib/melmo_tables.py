"""The multilingual ELMo paper's result tables from a melmo.sh run: table4.tsv (Table 4: a row per
task and model, a column per language, each cell the mean over the runs) and table1.tsv (Table 1:
a row per model, a column per task, each cell the mean over the languages of Table 4's row).
Scores are fractions with 2 decimals as the paper prints them; "-" where a model has no score.
Usage: melmo_tables.py RUN SCHEME..."""
import json
import os
import sys

TASKS = [  # (the paper's column, the run directory under eval/, the metric)
    ("PoS", "pos-{lang}", "accuracy"),
    ("UAS", "parse-{lang}", "uas"),
    ("LAS", "parse-{lang}", "las"),
    ("PoS (trf.)", "pos-transfer", "accuracy"),
    ("XNLI", "xnli", "accuracy"),
    ("Tatoeba", "tatoeba", "accuracy"),
]


def model_name(scheme):
    if scheme == "truncate":
        return "TRUNC"
    if scheme.startswith("mono:"):
        return "MONO-" + scheme[5:]
    return "M" + scheme


def results(path):
    """{lang: mean} of a results.json (or PREFIX.json), or {} when the run did not happen."""
    if not os.path.exists(path):
        return {}
    data = json.load(open(path))
    return {lang: scores for lang, scores in data["languages"].items()}


def scores_of(run, index, task):
    """{lang: mean score} of one task for the model of scheme number index."""
    _, pattern, metric = task
    base = os.path.join(run, "scheme-%04d" % index, "eval")
    out = {}
    if "{lang}" in pattern:
        prefix = pattern.split("{lang}")[0]
        for entry in sorted(os.listdir(base)) if os.path.isdir(base) else []:
            if entry.startswith(prefix) and entry != "pos-transfer":
                for lang, s in results(os.path.join(base, entry, "results.json")).items():
                    out[lang] = s[metric]["mean"]
    else:
        path = os.path.join(base, pattern, "results.json")
        if not os.path.exists(path):
            path = os.path.join(base, pattern + ".json")
        for lang, s in results(path).items():
            out[lang] = s[metric]["mean"]
    return out


def cell(value):
    return "-" if value is None else "%.2f" % value


def main():
    run, schemes = sys.argv[1], sys.argv[2:]
    models = [model_name(s) for s in schemes]
    table = {(task[0], m): scores_of(run, i, task) for task in TASKS for i, m in enumerate(models)}
    langs = sorted({lang for scores in table.values() for lang in scores})
    with open(os.path.join(run, "table4.tsv.tmp"), "w") as f:
        f.write("# Table 4: mean over runs per task, model and language\ntask\tmodel\t" + "\t".join(langs) + "\n")
        for task in TASKS:
            for m in models:
                scores = table[(task[0], m)]
                if scores:
                    f.write(f"{task[0]}\t{m}\t" + "\t".join(cell(scores.get(lang)) for lang in langs) + "\n")
    with open(os.path.join(run, "table1.tsv.tmp"), "w") as f:
        f.write("# Table 1: mean over languages per model and task\nmodel\t" + "\t".join(t[0] for t in TASKS) + "\n")
        for m in models:
            row = []
            for task in TASKS:
                scores = table[(task[0], m)]
                row.append(cell(sum(scores.values()) / len(scores) if scores else None))
            f.write(m + "\t" + "\t".join(row) + "\n")
    for name in ("table1.tsv", "table4.tsv"):
        os.replace(os.path.join(run, name + ".tmp"), os.path.join(run, name))


if __name__ == "__main__":
    main()
