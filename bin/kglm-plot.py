#!/usr/bin/python3
"""kglm-plot: figures of kglm's own outputs (man 1 kglm-plot).

  kglm-plot curves  METRICS.jsonl...  -o FIG   training curves; several runs overlaid
  kglm-plot results RESULTS.json...   -o FIG   finetune scores per language, std over seeds
  kglm-plot probe   PROBE.json|.tsv   -o FIG   probe accuracy, relation x language heat maps
  kglm-plot gain    KNOWLEDGE-GAIN.tsv -o FIG  knowledge-gain forest plot with the intervals
  kglm-plot dose    KNOWLEDGE-DOSE.tsv -o FIG  accuracy against dose, an arm a line, intervals as bands
  kglm-plot plan    PLAN.tsv...       -o FIG   sample-lang --write-plan: tokens before and after

Runs on Debian's python3-matplotlib, offline (the Agg and SVG backends). FIG's extension picks
the format (.png, .svg, .pdf; --format where the name has none, as /dev/fd/N). Written under
kglm's output policy (man 7 kglm): a regular file is replaced atomically, a symbolic link's target
is, a FIFO or character device is written in place. A record that cannot be read is reported with
its file and line and skipped; an input with no record of the kind asked for is refused.
"""
import argparse
import json
import math
import os
import signal
import stat
import sys

PROG = "kglm-plot"


class InputError(Exception):
    """An input that is not of the kind asked for (exit status 1)."""


def warn(msg):
    print(f"{PROG}: warning: {msg}", file=sys.stderr)


# ---------------------------------------------------------------------------------------- inputs

def read_jsonl(path):
    """The JSON objects of a JSON-lines file; a line that does not parse is reported and skipped."""
    records = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError as e:
                warn(f"{path}:{n}: not JSON ({e.msg}); line skipped")
                continue
            if not isinstance(r, dict):
                warn(f"{path}:{n}: not a JSON object; line skipped")
                continue
            records.append(r)
    return records


def read_tsv(path, required):
    """The rows of a TSV with a header (a leading '#' allowed) holding every column in required."""
    with open(path, encoding="utf-8") as f:
        header = f.readline().rstrip("\n").lstrip("#").split("\t")
        missing = [c for c in required if c not in header]
        if missing:
            raise InputError(f"{path}: not the TSV asked for: no column {', '.join(missing)} in its header")
        rows = []
        for n, line in enumerate(f, 2):
            cells = line.rstrip("\n").split("\t")
            if len(cells) != len(header):
                warn(f"{path}:{n}: {len(cells)} fields, the header has {len(header)}; line skipped")
                continue
            rows.append(dict(zip(header, cells)))
    if not rows:
        raise InputError(f"{path}: no rows")
    return rows


def number(row, key, path):
    try:
        return float(row[key])
    except ValueError:
        raise InputError(f"{path}: {key} '{row[key]}' is not a number") from None


def run_label(path):
    """A run's name in a legend: the directory of a file named as its tool names it, else the file."""
    base = os.path.basename(path)
    stem = base.split(".")[0]
    if stem in ("metrics", "results", "probe", "knowledge-gain") or stem.endswith("-metrics"):
        parent = os.path.basename(os.path.dirname(os.path.abspath(path)))
        return parent if stem in ("metrics", "results", "probe") else f"{parent}/{stem}"
    return stem


# ---------------------------------------------------------------------------------------- curves

# Keys that count things rather than measure the run: not curves unless asked for with --keys.
COUNTS = ("masked", "tokens", "examples", "pairs", "elapsed_s", "epoch", "eval_pairs", "eval_tokens",
          "eval_sequences", "eval_examples")


def curve_panel(key):
    """The panel a metrics key is drawn in, with its y label, or None for a count."""
    if key in COUNTS or key.startswith(("masked", "eval_masked")):
        return None
    if key == "loss" or key.startswith("loss_") or key == "eval_loss" or key.startswith("eval_loss_"):
        return ("loss", "loss (nats per prediction)")
    if key.startswith("eval_ppl"):
        return ("perplexity", "held-out perplexity (log scale)")
    if key == "lr":
        return ("lr", "learning rate")
    if key == "grad_norm":
        return ("grad_norm", "gradient norm (L2, before clipping)")
    if key in ("tokens_per_s", "examples_per_s", "pairs_per_s"):
        return ("throughput", key.replace("_per_s", "") + " per second")
    if key in ("loss_scale", "skipped_steps"):
        return (key, key.replace("_", " "))
    if key.startswith("comm") or key.endswith("comm_s"):
        return ("comm", "communication time (s)")
    if key.startswith(("eval_", "dev")):
        return ("held-out", "held-out score")
    return (key, key.replace("_", " "))


def smoothed(values, weight):
    """TensorBoard's smoothing: an exponential moving average, debiased at the start."""
    if weight <= 0:
        return values
    out, last, n = [], 0.0, 0
    for v in values:
        n += 1
        last = last * weight + (1 - weight) * v
        out.append(last / (1 - weight ** n))
    return out


def flatten(record, prefix=""):
    for k, v in record.items():
        if isinstance(v, dict):
            yield from flatten(v, f"{prefix}{k}/")
        elif isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            yield prefix + k, float(v)


def plot_curves(plt, args):
    runs = []
    for path in args.inputs:
        series = {}
        for r in read_jsonl(path):
            step = r.get("step")
            if not isinstance(step, int) or isinstance(step, bool):
                continue
            for k, v in flatten(r):
                if k != "step":
                    series.setdefault(k, {})[step] = v  # a repeated step (a resumed log): the last wins
        if not series:
            raise InputError(f"{path}: no metrics lines (JSON objects with an integer \"step\")")
        runs.append((args.labels.pop(0) if args.labels else run_label(path), series))
    keys = sorted({k for _, s in runs for k in s})
    if args.keys:
        wanted = args.keys.split(",")
        absent = [k for k in wanted if k not in keys]
        if absent:
            raise InputError(f"no run has {', '.join(absent)} (they have: {', '.join(keys)})")
        # One panel a key, its axis labelled with the unit of the key's kind.
        panels = {k: (k, (curve_panel(k) or (k, k.replace("_", " ")))[1]) for k in wanted}
    else:
        panels = {k: curve_panel(k) for k in keys}
    rank = ["loss", "held-out", "perplexity", "lr", "grad_norm", "throughput", "loss_scale", "skipped_steps", "comm"]
    order = []
    for k in keys if not args.keys else args.keys.split(","):
        p = panels.get(k)
        if p and p not in order:
            order.append(p)
    if not args.keys:
        order.sort(key=lambda p: rank.index(p[0]) if p[0] in rank else len(rank))
    if not order:
        raise InputError("nothing to draw: the runs have counts only (choose with --keys)")
    cols = min(3, len(order))
    rows = math.ceil(len(order) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.4 * cols, 4.4 * rows), squeeze=False, layout="constrained")
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    # One colour per run when runs are compared, else per term; a term's held-out twin (eval_loss_mlm
    # of loss_mlm) shares its colour, dashed with markers.
    terms = sorted({k.removeprefix("eval_") for k in keys})
    for i, (name, ylabel) in enumerate(order):
        ax = axes[i // cols][i % cols]
        members = [k for k in keys if panels.get(k) == (name, ylabel)]
        for r, (label, series) in enumerate(runs):
            for k in members:
                steps = sorted(series.get(k, {}))
                if not steps:
                    continue
                ys = [series[k][s] for s in steps]
                held_out = k.startswith(("eval_", "dev"))
                legend = " · ".join(x for x in (label if len(runs) > 1 else "", k if len(members) > 1 else "") if x) or k
                colour = colours[(r if len(runs) > 1 else terms.index(k.removeprefix("eval_"))) % len(colours)]
                if held_out:
                    ax.plot(steps, ys, "o--", ms=3, lw=1, color=colour, label=legend + " (held-out)" * (name == "loss"))
                elif args.smooth > 0 and k != "lr":  # the schedule is exact: not smoothed
                    ax.plot(steps, ys, lw=0.8, alpha=0.25, color=colour)
                    ax.plot(steps, smoothed(ys, args.smooth), lw=1.4, color=colour, label=legend)
                else:
                    ax.plot(steps, ys, lw=1.2, color=colour, label=legend)
        if name == "perplexity":
            ax.set_yscale("log")
        ax.set_xlabel("step")
        ax.set_ylabel(ylabel)
        ax.set_title(name.replace("_", " "))
        ax.grid(alpha=0.3)
        handles = ax.get_legend_handles_labels()[0]
        if len(handles) > 1:  # below the plot, never over the curves
            ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=min(3, len(handles)),
                      frameon=False)
    for j in range(len(order), rows * cols):
        axes[j // cols][j % cols].set_axis_off()
    names = ", ".join(label for label, _ in runs)
    fig.suptitle(args.title or f"Training curves: {names}" + (f" (smoothing {args.smooth})" if args.smooth else ""))
    return fig


# --------------------------------------------------------------------------------------- results

def plot_results(plt, args):
    runs = []
    for path in args.inputs:
        try:
            with open(path, encoding="utf-8") as f:
                r = json.load(f)
        except json.JSONDecodeError as e:
            raise InputError(f"{path}:{e.lineno}: not JSON ({e.msg})") from None
        if not isinstance(r, dict) or not isinstance(r.get("languages"), dict) or "metric" not in r:
            raise InputError(f"{path}: not a finetune results.json (no \"metric\" and \"languages\")")
        if not r["languages"]:
            raise InputError(f"{path}: no languages")
        runs.append((args.labels.pop(0) if args.labels else run_label(path), r))
    # Each run's own metric (pos: accuracy, parse: LAS), or --metric where its languages have it.
    def metric_of(r):
        if args.metric:
            if not any(args.metric in v for v in r["languages"].values()):
                raise InputError(f"no language of a {r.get('task')} run has the metric {args.metric}")
            return args.metric
        return r["metric"]
    metrics = [metric_of(r) for _, r in runs]
    metric = metrics[0] if len(set(metrics)) == 1 else "score"
    langs = []
    for _, r in runs:
        langs += [lang for lang in r["languages"] if lang not in langs]
    # English (the training language of zero-shot transfer) first, then the others alphabetically.
    langs.sort(key=lambda lang: (lang != "en", lang))
    fig, ax = plt.subplots(figsize=(max(5.0, 0.55 * len(langs) * len(runs) + 2.5), 4.2), layout="constrained")
    width = 0.8 / len(runs)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (label, r) in enumerate(runs):
        xs, means, stds = [], [], []
        for j, lang in enumerate(langs):
            score = (r["languages"].get(lang) or {}).get(metrics[i])
            if score:
                xs.append(j + (i - (len(runs) - 1) / 2) * width)
                means.append(100 * score["mean"])
                stds.append(100 * score["std"])
        seeds = len(r.get("seeds") or [])
        name = label if metric != "score" else f"{label} ({metrics[i].replace('_', ' ')})"
        ax.bar(xs, means, width * 0.92, yerr=stds, capsize=3, color=colours[i % len(colours)],
               label=f"{name}, {seeds} seed{'s' * (seeds != 1)}" if seeds else name)
        z = r.get("zero_shot")
        if z:
            ax.axhline(100 * z["mean"], color=colours[i % len(colours)], ls="--", lw=1.2,
                       label=f"{label}: zero-shot average {100 * z['mean']:.1f}" if len(runs) > 1
                       else f"zero-shot average {100 * z['mean']:.1f} ± {100 * z['std']:.1f}")
    ax.set_xticks(range(len(langs)), langs)
    ax.set_xlabel("language")
    ax.set_ylabel(f"{metric.replace('_', ' ')} (%, mean ± std over seeds)")
    ax.set_ylim(0, 100)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    tasks = ", ".join(dict.fromkeys(r.get("task", "") for _, r in runs))
    ax.set_title(args.title or f"finetune {tasks}: {metric.replace('_', ' ')} per language")
    return fig


# ----------------------------------------------------------------------------------------- probe

def probe_rows(path):
    """The probe's per-relation rows as dicts with accuracies in %: from probe.json or probe.tsv."""
    if path.endswith(".tsv"):
        rows = read_tsv(path, ("method", "lang", "relation", "all", "single", "multi"))
        # A class with no facts (no multi-token answers) is empty or "-": no cell.
        return [dict(r, **{k: number(r, k, path) if r[k] not in ("", "-", "nan", "NA") else float("nan")
                           for k in ("all", "single", "multi")}) for r in rows]
    try:
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}:{e.lineno}: not JSON ({e.msg}); give probe's --out JSON or TSV") from None
    if not isinstance(d, dict) or not isinstance(d.get("relations"), list) or not d["relations"]:
        raise InputError(f"{path}: not probe output (no \"relations\")")
    return [dict(r, **{k: float("nan") if r.get(k) is None else 100 * r[k] for k in ("all", "single", "multi")})
            for r in d["relations"]]


def plot_probe(plt, args):
    if len(args.inputs) != 1:
        raise InputError("probe takes one input")
    path = args.inputs[0]
    rows = probe_rows(path)
    methods = sorted({r["method"] for r in rows})
    method = args.method or ("independent" if "independent" in methods else methods[0])
    if method not in methods:
        raise InputError(f"{path}: no method {method} (it has {', '.join(methods)})")
    rows = [r for r in rows if r["method"] == method]
    langs = sorted({r["lang"] for r in rows}, key=lambda lang: (lang != "en", lang))
    relations = sorted({r["relation"] for r in rows}, key=lambda rel: (len(rel), rel))
    cell = {(r["relation"], r["lang"]): r for r in rows}
    fig, axes = plt.subplots(1, 3, figsize=(3 * max(2.6, 0.55 * len(langs) + 1.6), max(3.0, 0.32 * len(relations) + 1.6)),
                             squeeze=False, layout="constrained")
    image = None
    for ax, kind, what in zip(axes[0], ("all", "single", "multi"), ("all facts", "single-token answers", "multi-token answers")):
        grid = [[cell[(rel, lang)][kind] if (rel, lang) in cell else float("nan") for lang in langs] for rel in relations]
        image = ax.imshow(grid, vmin=0, vmax=100, cmap="viridis", aspect="auto")
        ax.set_xticks(range(len(langs)), langs)
        ax.set_yticks(range(len(relations)), relations if kind == "all" else [])
        ax.set_xlabel("language")
        ax.set_title(what, fontsize=10)
        if len(langs) * len(relations) <= 300:
            for i, row in enumerate(grid):
                for j, v in enumerate(row):
                    if not math.isnan(v):
                        ax.text(j, i, f"{v:.0f}", ha="center", va="center", fontsize=7,
                                color="white" if v < 50 else "black")
    axes[0][0].set_ylabel("relation")
    fig.colorbar(image, ax=list(axes[0]), label="accuracy (%)", shrink=0.9)
    fig.suptitle(args.title or f"X-FACTR probe, {method} decoding: {run_label(path)}")
    return fig


# ------------------------------------------------------------------------------------------ gain

def plot_gain(plt, args):
    if len(args.inputs) != 1:
        raise InputError("gain takes one input")
    path = args.inputs[0]
    cols = ("arm", "method", "lang", "relation", "side", "facts", "gain", "ci_low", "ci_high")
    rows = read_tsv(path, cols)
    arms = sorted({r["arm"] for r in rows})
    methods = sorted({r["method"] for r in rows})
    arm = args.arm or arms[0]
    method = args.method or ("independent" if "independent" in methods else methods[0])
    if arm not in arms or method not in methods:
        raise InputError(f"{path}: no arm {arm} with method {method} (arms {', '.join(arms)}; methods {', '.join(methods)})")
    rows = [r for r in rows if r["arm"] == arm and r["method"] == method]
    langs = sorted({r["lang"] for r in rows}, key=lambda lang: (lang != "en", lang))
    relations = sorted({r["relation"] for r in rows if r["relation"] != "overall"}, key=lambda rel: (len(rel), rel))
    labels = [(rel, lang) for lang in langs for rel in relations + ["overall"]]
    at = {(r["relation"], r["lang"], r["side"]): r for r in rows}
    fig, ax = plt.subplots(figsize=(7.5, 0.32 * len(labels) + 1.8), layout="constrained")
    sides = (("seen", "#1f77b4", -0.15), ("unseen", "#d62728", 0.15))
    for side, colour, offset in sides:
        ys, xs, lo, hi = [], [], [], []
        for i, (rel, lang) in enumerate(labels):
            r = at.get((rel, lang, side))
            if r:
                g = number(r, "gain", path)
                ys.append(i + offset)
                xs.append(g)
                lo.append(g - number(r, "ci_low", path))
                hi.append(number(r, "ci_high", path) - g)
        ax.errorbar(xs, ys, xerr=[lo, hi], fmt="o", color=colour, ms=4, capsize=2, lw=1.2,
                    label=f"{side} facts (95% bootstrap interval)")
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(range(len(labels)), [f"{rel} · {lang}" if len(langs) > 1 else rel for rel, lang in labels])
    for tick, (rel, _) in zip(ax.get_yticklabels(), labels):
        if rel == "overall":
            tick.set_fontweight("bold")
    ax.invert_yaxis()
    ax.set_xlabel(f"gain of arm ({arm}) over arm (a), accuracy points")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title(args.title or f"Knowledge gain, ({arm}) − (a), {method} decoding")
    return fig


# ------------------------------------------------------------------------------------------ dose

def plot_dose(plt, args):
    if len(args.inputs) != 1:
        raise InputError("dose takes one input")
    path = args.inputs[0]
    rows = read_tsv(path, ("method", "lang", "arm", "dose", "subset", "acc", "acc_low", "acc_high"))
    rows = [r for r in rows if r["dose"].isdigit()]  # not the rise rows ("64-0")
    methods = sorted({r["method"] for r in rows})
    method = args.method or ("independent" if "independent" in methods else (methods or [""])[0])
    subset = args.subset or "all"
    langs = sorted({r["lang"] for r in rows if r["method"] == method}, key=lambda lang: (lang != "en", lang))
    rows = [r for r in rows if r["method"] == method and r["subset"] == subset and langs and r["lang"] == langs[0]]
    if not rows:
        raise InputError(f"{path}: no rows of method {method} and subset {subset} (methods {', '.join(methods)})")
    doses = sorted({int(r["dose"]) for r in rows})
    # Dose 0 has no place on a log axis: it is drawn one step left of the smallest dose.
    positive = [d for d in doses if d > 0]
    zero_at = positive[0] / 4 if positive else 1
    x_of = lambda d: d if d > 0 else zero_at  # noqa: E731
    fig, ax = plt.subplots(figsize=(6.4, 4.2), layout="constrained")
    arms = [arm for arm in dict.fromkeys(r["arm"] for r in rows) if arm != "majority"]
    for i, arm in enumerate(arms):
        pts = sorted((int(r["dose"]), number(r, "acc", path), number(r, "acc_low", path), number(r, "acc_high", path))
                     for r in rows if r["arm"] == arm)
        xs = [x_of(d) for d, _, _, _ in pts]
        label = f"({arm}) {args.labels[i]}" if i < len(args.labels) else f"({arm})"
        line, = ax.plot(xs, [p[1] for p in pts], "o-", lw=1.6, ms=4, label=label)
        ax.fill_between(xs, [p[2] for p in pts], [p[3] for p in pts], color=line.get_color(), alpha=0.15, lw=0)
    prior = [number(r, "acc", path) for r in rows if r["arm"] == "majority"]
    if prior:
        ax.axhline(sum(prior) / len(prior), color="black", ls="--", lw=1,
                   label="majority object (prior baseline)")
    ax.set_xscale("log", base=2)
    ax.set_xticks([x_of(d) for d in doses], [str(d) for d in doses])
    ax.minorticks_off()
    ax.set_xlabel("dose: draws of each fact's knowledge records (log scale; 0 = unseen)")
    ax.set_ylabel("accuracy, % (95% bootstrap interval)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    ax.set_title(args.title or f"Accuracy by dose, {method} decoding, {subset} facts ({langs[0]})")
    return fig


# ------------------------------------------------------------------------------------------ plan

def plot_plan(plt, args):
    plans = []
    for path in args.inputs:
        rows = read_tsv(path, ("lang", "target", "ratio"))
        # The plan's unit is sample-lang's --unit: its column is named so.
        unit = next((u for u in ("tokens", "lines", "bytes") if u in rows[0]), None)
        if unit is None:
            raise InputError(f"{path}: not a sample-lang plan: no tokens, lines or bytes column")
        plans.append((args.labels.pop(0) if args.labels else run_label(path), path, rows, unit))
    fig, axes = plt.subplots(len(plans), 1, figsize=(max(6.0, 0.5 * max(len(p[2]) for p in plans) + 2.5), 3.8 * len(plans)),
                             squeeze=False, layout="constrained")
    for ax, (label, path, rows, unit) in zip(axes[:, 0], plans):
        rows.sort(key=lambda r: -number(r, unit, path))
        langs = [r["lang"] for r in rows]
        xs = range(len(langs))
        ax.bar([x - 0.2 for x in xs], [number(r, unit, path) for r in rows], 0.4, label=f"before sampling ({unit})")
        ax.bar([x + 0.2 for x in xs], [number(r, "target", path) for r in rows], 0.4, label=f"after sampling (target {unit})")
        ax.set_yscale("log")
        ax.set_xticks(list(xs), langs)
        ax.set_xlabel("language")
        ax.set_ylabel(f"{unit} (log scale)")
        ax.set_title(label, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8, loc="upper right")
    fig.suptitle(args.title or f"{'Tokens' if all(p[3] == 'tokens' for p in plans) else 'Data'} per language before and after sampling")
    return fig


KINDS = {"curves": plot_curves, "results": plot_results, "probe": plot_probe, "gain": plot_gain, "dose": plot_dose,
         "plan": plot_plan}


# ---------------------------------------------------------------------------------------- output

def save(fig, out, fmt, dpi):
    """Saves under man 7 kglm's output policy (see the module's docstring)."""
    target = os.path.realpath(out) if os.path.islink(out) else out
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = 0
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or out.startswith(("/dev/fd/", "/proc/self/fd/")):
        with open(out, "wb") as f:
            fig.savefig(f, format=fmt, dpi=dpi, bbox_inches="tight")
        return
    if stat.S_ISDIR(mode):
        raise InputError(f"-o {out}: a directory")
    tmp = f"{target}.tmp.{os.getpid()}"
    try:
        fig.savefig(tmp, format=fmt, dpi=dpi, bbox_inches="tight")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def main():
    ap = argparse.ArgumentParser(prog=PROG, description="Figures of kglm's outputs (man 1 kglm-plot).")
    ap.add_argument("kind", choices=sorted(KINDS))
    ap.add_argument("inputs", nargs="+", metavar="INPUT")
    ap.add_argument("-o", "--out", required=True, metavar="FIGURE", help="FIGURE.png, .svg or .pdf")
    ap.add_argument("--format", choices=("png", "svg", "pdf"), help="the format where FIGURE's name has no extension")
    ap.add_argument("--title", help="the figure's title instead of the kind's")
    ap.add_argument("--labels", help="curves, results, plan: the runs' names in the legend, comma-separated "
                    "(one per input; a name holds no comma); dose: the arms' names, in the table's order")
    ap.add_argument("--smooth", type=float, default=0.0, metavar="W",
                    help="curves: TensorBoard's exponential smoothing weight in [0, 1) (0: none)")
    ap.add_argument("--keys", help="curves: the metrics keys to draw, one panel each (default: every measure)")
    ap.add_argument("--metric", help="results: the score drawn (default: each run's own, results.json's \"metric\")")
    ap.add_argument("--method", help="probe, gain, dose: the decoding method (default: independent)")
    ap.add_argument("--subset", help="dose: all (default) or non-majority facts")
    ap.add_argument("--arm", help="gain: the arm compared with (a) (default: the first, b)")
    ap.add_argument("--dpi", type=int, default=110)
    args = ap.parse_args()
    ext = os.path.splitext(args.out)[1].lstrip(".").lower()
    fmt = args.format or ext
    if fmt not in ("png", "svg", "pdf"):
        ap.error(f"-o {args.out}: name it .png, .svg or .pdf, or give --format")
    if not 0 <= args.smooth < 1:
        ap.error("--smooth is a weight in [0, 1)")
    args.labels = args.labels.split(",") if args.labels else []
    if args.labels and len(args.labels) != len(args.inputs) and args.kind != "dose":  # dose: the arms
        ap.error(f"--labels names {len(args.labels)} runs, there are {len(args.inputs)} inputs")
    # An interrupted run leaves no temporary behind: SIGTERM unwinds like SIGINT.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        import matplotlib
    except ImportError:
        print(f"{PROG}: needs matplotlib (Debian: apt-get install python3-matplotlib)", file=sys.stderr)
        return 1
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    try:
        fig = KINDS[args.kind](plt, args)
        save(fig, args.out, fmt, args.dpi)
    except InputError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"{PROG}: {e.filename or args.out}: {e.strerror}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
