#!/usr/bin/env python3
"""bench/sample-lang: sample-lang rebalancing a skewed multilingual corpus against a coreutils
pipeline (wc -l, cat, shuf) doing the same job, in one run.

Input: the real alias lines of --fixtures/xfactr/alias/<lang>.txt (10 languages), each file
replicated a different number of times (en x45 ... vi x1, scaled so the total is about --mb MB)
into one LANG.txt per language under --work; built once and reused.

Peer: one `bash -c` script, timed as one process tree (os.wait4 counts the CPU of the children the
shell waits for; peak MB is that of the largest single process). It counts every file with
`wc -l`, then per language takes `shuf -n TARGET` of the file when down-sampling, or `cat`s it
floor(TARGET/n) times plus `shuf -n (TARGET mod n)` when up-sampling. The TARGETs come from
`sample-lang --plan`, run once outside the timings, so both tools do the same job and both read the
input twice (a counting pass, then the sampling). Interleaved cases pipe everything into a final
`shuf` to the output file; that shuf holds the whole output in memory, where sample-lang's external
shuffle is bounded by --memory-mb and spills shuffled runs to disk. In the split case a language that
is up-sampled goes through its own `shuf`; a down-sampled one needs none (shuf -n already writes
its pick in random order).

Cases: 1) interleaved, --alpha 0.3 with the input's total (large languages down-, small ones
up-sampled); 2) --split-by-lang, --alpha 0.3 --keep-smallest (down-sampling only); 3) case 1 with
--memory-mb 64. sample-lang runs with its default --threads (all cores). After each case the
outputs' line counts (per language file in the split case) are checked against each other and
the plan; the script exits non-zero on a mismatch.

Usage: bench/sample-lang.py [--bin build/bin] [--fixtures ../shared/fixtures] [--work out/bench]
                            [--mb 500]
"""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import arguments, run, warm  # noqa: E402

WEIGHTS = {"en": 45, "es": 20, "fr": 15, "nl": 8, "ru": 6, "ja": 4, "zh": 3, "ko": 2, "tr": 1, "vi": 1}
SEED = 1234

# $1: file, $2: its target, $3: seed; the sizes come from the counting pass into the array N.
PEER_LIB = r"""set -eo pipefail
declare -A N
while read -r n f; do N[$f]=$n; done < <(wc -l "$@" | head -n -1)
pick() {
  local n=${N[$1]}
  if (( $2 <= n )); then shuf -n "$2" --random-source=<(yes "$3") "$1"; return; fi
  for ((i = 0; i < $2 / n; i++)); do cat "$1"; done
  shuf -n $(( $2 % n )) --random-source=<(yes "$3") "$1"
}
"""


def corpus(args):
    """The skewed corpus under args.work: (dir, {lang: path}, total bytes); built if missing."""
    alias = os.path.join(args.fixtures, "xfactr", "alias")
    if not all(os.path.exists(os.path.join(alias, lang + ".txt")) for lang in WEIGHTS):
        sys.exit("fixtures not found: %s (needs xfactr/alias/<lang>.txt for %s)" % (alias, " ".join(WEIGHTS)))
    sizes = {lang: os.path.getsize(os.path.join(alias, lang + ".txt")) for lang in WEIGHTS}
    scale = args.mb * 1e6 / sum(WEIGHTS[lang] * sizes[lang] for lang in WEIGHTS)
    copies = {lang: max(1, round(w * scale)) for lang, w in WEIGHTS.items()}
    root = os.path.join(args.work, "sample-lang-%dmb" % args.mb)
    paths = {lang: os.path.join(root, lang + ".txt") for lang in WEIGHTS}
    os.makedirs(root, exist_ok=True)
    for lang, path in paths.items():
        if not os.path.exists(path) or os.path.getsize(path) != copies[lang] * sizes[lang]:
            with open(os.path.join(alias, lang + ".txt"), "rb") as f:
                text = f.read()
            with open(path + ".part", "wb") as out:
                for _ in range(copies[lang]):
                    out.write(text)
            os.replace(path + ".part", path)
    print("input: %s, %.1f MB in %d languages, copies of the fixture: %s" % (
        root, sum(map(os.path.getsize, paths.values())) / 1e6, len(paths),
        " ".join("%s x%d" % (lang, c) for lang, c in copies.items())))
    return root, paths, sum(map(os.path.getsize, paths.values()))


def plan(sl, root, flags, work):
    """{lang: (records, target)} from sample-lang --plan."""
    path = os.path.join(work, "sample-lang.plan.tsv")
    run([sl, root, *flags, "--plan", "-o", path, "-q"])
    rows = [line.rstrip("\n").split("\t") for line in open(path) if not line.startswith("#")]
    return {r[0]: (int(r[1]), int(r[5])) for r in rows}


def lines(path):
    n = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            n += chunk.count(b"\n")
    return n


def peer(paths, body):
    """argv of the peer: PEER_LIB, then body, with the input files as $@."""
    return ["bash", "-c", PEER_LIB + body, "peer", *paths.values()]


def picks(paths, targets):
    return ["pick %s %d %d" % (paths[lang], targets[lang][1], SEED + i) for i, lang in enumerate(sorted(paths))]


def report(title, paths, in_bytes, rows, checks):
    for p in paths.values():
        warm(p)
    print("\n" + title)
    results = [(name,) + run(argv) for name, argv in rows]
    print("%-28s %8s %8s %9s %10s" % ("run", "wall s", "cpu s", "peak MB", "in MB/s"))
    for name, wall, cpu, rss in results:
        print("%-28s %8.2f %8.2f %9.0f %10.1f" % (name, wall, cpu, rss, in_bytes / 1e6 / wall))
    (_, sw, sc, _), (_, pw, pc, _) = results
    print("sample-lang vs peer: %.2fx the speed (wall), %.2fx the CPU time" % (pw / sw, sc / pc))
    ok = True
    for what, want, got_sl, got_peer in checks():
        good = want == got_sl == got_peer
        ok &= good
        print("check %-14s target %9d  sample-lang %9d  peer %9d  %s" % (what, want, got_sl, got_peer,
                                                                      "ok" if good else "MISMATCH"))
    return ok


def main():
    args = arguments(lambda ap: ap.add_argument("--mb", type=int, default=500))
    sl = os.path.join(args.bin, "sample-lang")
    root, paths, in_bytes = corpus(args)
    stats = os.path.join(args.work, "sample-lang.stats.json")
    print("sample-lang --threads default (%d cores); peer: bash -c with wc -l, cat, shuf (GNU coreutils)" %
          os.cpu_count())
    mixed = plan(sl, root, ["--alpha", "0.3"], args.work)
    small = plan(sl, root, ["--alpha", "0.3", "--keep-smallest"], args.work)
    out, peer_out = os.path.join(args.work, "sample-lang.out.txt"), os.path.join(args.work, "sample-lang.peer.txt")
    split, peer_split = os.path.join(args.work, "sample-lang.split"), os.path.join(args.work, "sample-lang.peer-split")
    total = sum(t for _, t in mixed.values())

    def interleaved(case, memory):
        title = "%s, --alpha 0.3: %d lines in, %d out (%d languages down-, %d up-sampled)" % (
            case, sum(n for n, _ in mixed.values()), total, sum(t < n for n, t in mixed.values()),
            sum(t > n for n, t in mixed.values()))
        good = report(title, paths, in_bytes, [
            ("sample-lang --memory-mb %d" % memory,
             [sl, root, "--alpha", "0.3", "--memory-mb", str(memory), "-o", out, "--stats", stats, "-q"]),
            ("coreutils peer", peer(paths, "{ %s; } | shuf --random-source=<(yes %d) > %s" % (
                "; ".join(picks(paths, mixed)), SEED, peer_out)))],
            lambda: [("all", total, lines(out), lines(peer_out))])
        print("sample-lang shuffle_runs: %d" % json.load(open(stats))["shuffle_runs"])
        return good

    ok = interleaved("1. interleaved", 512)

    for d in (split, peer_split):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    body = []
    for lang, pick in zip(sorted(paths), picks(paths, small)):
        n, t = small[lang]
        body.append("%s %s> %s/%s.txt" % (pick, "" if t <= n else "| shuf --random-source=<(yes %d) " % SEED,
                                          peer_split, lang))
    title = "2. split-by-lang, --alpha 0.3 --keep-smallest: %d lines in, %d out" % (
        sum(n for n, _ in small.values()), sum(t for _, t in small.values()))
    ok &= report(title, paths, in_bytes, [
        ("sample-lang --split-by-lang", [sl, root, "--alpha", "0.3", "--keep-smallest", "--split-by-lang", split,
                                         "-q"]),
        ("coreutils peer", peer(paths, "\n".join(body)))],
        lambda: [("lang " + lang, small[lang][1], lines(os.path.join(split, lang + ".txt")),
                  lines(os.path.join(peer_split, lang + ".txt"))) for lang in sorted(paths)])

    ok &= interleaved("3. interleaved, --memory-mb 64", 64)
    if not ok:
        sys.exit("line counts differ")

if __name__ == "__main__":
    main()
