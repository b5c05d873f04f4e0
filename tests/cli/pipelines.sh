#!/usr/bin/env bash
# The paper pipelines run here on data/ (tiny settings): kmlm, entitycs, kelm, then melmo on kelm's
# per-language output. Each finishes with its outputs; a second run skips every stage by its
# provenance record; a changed input reruns the stages that read it and the stages after them, and
# only those; --dry-run prints afterok-chained sbatch commands with job arrays and writes nothing.
set -euo pipefail
bin=$1 src=$2
source "$src/tests/cli/common.sh" "$src/data/wikidata-sample.json"
export KGLM_BIN=$bin
train=(--vocab 800 --model "2 32 4 64" --steps 20 --save-every 10 --pretrain-args "--batch 8")

"$src/pipelines/kmlm.sh" --shards 2 --langs de,fr,es "${train[@]}" "$tmp/kmlm" > "$tmp/kmlm.out" 2>&1 ||
  fail "kmlm: $(tail "$tmp/kmlm.out")"
[ -s "$tmp/kmlm/kmlm-cs/de.jsonl" ] && [ -s "$tmp/kmlm/reasoning/en.jsonl" ] && [ -f "$tmp/kmlm/ckpt/model.safetensors" ] ||
  fail "kmlm outputs: $(ls -R "$tmp/kmlm")"
[ "$(grep -c '"loss"' "$tmp/kmlm/metrics.jsonl")" = 20 ] || fail "kmlm: 20 steps expected"
ok "kmlm: 2 shards merged, code-switched and reasoning text, 20 steps of pre-training"

"$src/pipelines/entitycs.sh" --shards 2 --wiki-shards 2 --langs de,fr,es "${train[@]}" "$tmp/entitycs" \
  > "$tmp/entitycs.out" 2>&1 || fail "entitycs: $(tail "$tmp/entitycs.out")"
"$bin/wiki-extract" merge "$tmp"/entitycs/wiki/docs-000{1,0}.jsonl.zst -o "$tmp/wiki-merged.jsonl" -q
"$bin/wiki-extract" "$src/data/enwiki-sample.xml" -o "$tmp/wiki-one.jsonl" -q
cmp -s "$tmp/wiki-merged.jsonl" "$tmp/wiki-one.jsonl" || fail "entitycs: the 2 wiki-extract shards differ from one run"
# Decompressed to a file first: grep -q stops reading at the first match, and under pipefail the
# writer's SIGPIPE would fail the check.
zstd -dcq "$tmp/entitycs/entitycs/entitycs-0000.jsonl.zst" -o "$tmp/entitycs-0000.jsonl"
grep -q '<e>' "$tmp/entitycs-0000.jsonl" || fail "entitycs: no marked entities"
python3 - "$tmp"/entitycs/tokens-part-000{0,1}.stats.json << 'PY' || fail "entitycs: the token dataset's languages"
import json, sys
langs = {k.split(".", 1)[1] for f in sys.argv[1:] for k in json.load(open(f)) if k.startswith("sequences.")}
assert len(langs) > 1 and all(len(l) == 2 for l in langs), langs  # the records' languages, not file names
PY
grep -q '"train_layers": "last:2"' "$tmp/entitycs/ckpt/trainer_state.json" || fail "entitycs: not last:2"
ok "entitycs: 2 wiki-extract shards of one dump, code-switched entity sentences in their languages, pre-training of the last two layers"

"$src/pipelines/kelm.sh" --shards 3 --langs en,de,fr "$tmp/kelm" > "$tmp/kelm.out" 2>&1 || fail "kelm: $(tail "$tmp/kelm.out")"
for l in en de fr; do [ -s "$tmp/kelm/kelm/$l.jsonl" ] || fail "kelm: no $l text"; done
"$bin/verbalize" render --kg "$tmp/kelm/kg/kg.h5" --mode template --templates "$src/data/templates" --langs en,de,fr \
  --group-by-subject --split-by-lang "$tmp/kelm-one" -q "$tmp/kelm/aligned/subgraphs.jsonl"
diff -r "$tmp/kelm-one" "$tmp/kelm/kelm" > /dev/null || fail "kelm: the 3 render parts merged differ from one run"
ok "kelm: aligned statements, subgraphs, verbalized in en, de, fr (3 render array tasks merged = one run)"

# The frozen-feature evaluation on the fixtures' UD treebanks, XNLI and Tatoeba pairs (cut small), when
# present; one run each (the option's default is the paper's three).
evaluation=()
ud=$src/../shared/fixtures/ud tatoeba=$src/../shared/fixtures/tatoeba xnli=$src/../shared/fixtures/xnli
if [ -d "$ud" ] && [ -d "$tatoeba" ] && [ -d "$xnli" ]; then
  zcat "$ud/en_ewt-ud-train.conllu.gz" | awk 'BEGIN { RS = ""; ORS = "\n\n" } NR <= 200' > "$tmp/en-train.conllu"
  for l in en_ewt sv_talbanken it_isdt; do
    awk 'BEGIN { RS = ""; ORS = "\n\n" } NR <= 100' "$ud/$l-ud-dev.conllu" > "$tmp/${l%_*}-test.conllu"
  done
  head -100 "$tatoeba/tatoeba.swe-eng.swe" > "$tmp/swe" && head -100 "$tatoeba/tatoeba.swe-eng.eng" > "$tmp/eng"
  head -60 "$xnli/dev-en.first600.tsv" > "$tmp/xnli-train.tsv" && tail -60 "$xnli/dev-en.first600.tsv" > "$tmp/xnli-en.tsv"
  tail -60 "$xnli/dev-de.first600.tsv" > "$tmp/xnli-de.tsv"
  evaluation=(--ud-train "en=$tmp/en-train.conllu" --ud-test "en=$tmp/en-test.conllu sv=$tmp/sv-test.conllu it=$tmp/it-test.conllu"
    --xnli-train "en=$tmp/xnli-train.tsv" --xnli-test "en=$tmp/xnli-en.tsv de=$tmp/xnli-de.tsv"
    --tatoeba "sv=$tmp/swe,$tmp/eng" --eval-seeds 1
    --eval-args "--epochs 1 --batch 16 --mlp-size 32 --arc-size 64 --label-size 32")
fi
"$src/pipelines/melmo.sh" --corpora "$tmp/kelm/kelm" --schemes "0.4 0.2 truncate mono:de" --steps 20 --save-every 10 \
  --pretrain-args "--batch 4" "${evaluation[@]}" "$tmp/melmo" > "$tmp/melmo.out" 2>&1 ||
  fail "melmo: $(tail "$tmp/melmo.out")"
if [ ${#evaluation[@]} -gt 0 ]; then
  python3 - "$tmp/melmo" << 'PY' || fail "melmo tables: $(cat "$tmp/melmo/table4.tsv")"
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1] + "/table4.tsv") if not l.startswith("#")]
header = rows[0]
rows = {(r[0], r[1]): dict(zip(header[2:], r[2:])) for r in rows[1:]}
assert header[2:] == ["de", "en", "it", "sv"], header
for model in ("M0.4", "M0.2", "TRUNC"):
    for task in ("PoS", "UAS", "LAS"):
        assert 0 <= float(rows[(task, model)]["en"]) <= 1 and rows[(task, model)]["sv"] == "-", (task, model)
    assert rows[("PoS (trf.)", model)]["en"] == "-" and float(rows[("PoS (trf.)", model)]["it"]) >= 0
    assert float(rows[("Tatoeba", model)]["sv"]) >= 0
    assert 0 <= float(rows[("XNLI", model)]["de"]) <= 1 and rows[("XNLI", model)]["it"] == "-", rows[("XNLI", model)]
assert ("PoS (trf.)", "MONO-de") not in rows and ("PoS", "MONO-de") not in rows  # no German treebank given
assert ("XNLI", "MONO-de") not in rows  # multilingual models only
table1 = [l.split("\t") for l in open(sys.argv[1] + "/table1.tsv") if not l.startswith("#")]
assert table1[0][1:] == ["PoS", "UAS", "LAS", "PoS (trf.)", "XNLI", "Tatoeba\n"], table1[0]
assert [r[0] for r in table1[1:]] == ["M0.4", "M0.2", "TRUNC", "MONO-de"], table1
PY
  ok "melmo: every model evaluated frozen (PoS, parsing, PoS transfer, XNLI, Tatoeba), Table 1 and Table 4 written"
fi
python3 - "$tmp/melmo" << 'PY' || fail "melmo plans"
import sys
def plan(i):
    rows = [l.rstrip("\n").split("\t") for l in open("%s/scheme-%04d/corpus.plan.tsv" % (sys.argv[1], i)) if not l.startswith("#")]
    return {r[0]: (int(r[2]), int(r[5])) for r in rows}
smallest = min(lines for lines, _ in plan(2).values())
assert all(target == smallest for _, target in plan(2).values()), plan(2)  # truncate
for i, alpha in ((0, 0.4), (1, 0.2)):
    p = plan(i)
    total = sum(l ** alpha for l, _ in p.values())
    s = min(p, key=lambda l: p[l][0])
    assert p[s][1] == p[s][0], p  # --keep-smallest
    for l, (lines, target) in p.items():  # q ∝ p^α, scaled to keep the smallest whole
        assert abs(target - p[s][0] * (lines / p[s][0]) ** alpha) <= 1, (l, lines, target)
PY
for i in 0 1 2 3; do
  d=$tmp/melmo/scheme-000$i
  [ -f "$d/ckpt/weights.hdf5" ] && [ -f "$d/ckpt/options.json" ] && [ "$(grep -c '"loss"' "$d/metrics.jsonl")" = 20 ] ||
    fail "melmo: no ELMo model of scheme $i"
done
[ "$(ls "$tmp/melmo/scheme-0003/corpus")" = de.jsonl ] || fail "mono:de: $(ls "$tmp/melmo/scheme-0003/corpus")"
ok "melmo: α 0.4, α 0.2 and truncation plans follow q ∝ p^α; an ELMo model per scheme and a German one"

"$src/pipelines/kmlm.sh" --shards 2 --langs de,fr,es "${train[@]}" "$tmp/kmlm" > "$tmp/again.out" 2>&1 || fail "rerun"
[ "$(grep -c ': complete (.stages/.*), skipped' "$tmp/again.out")" = 13 ] || fail "rerun ran stages: $(cat "$tmp/again.out")"
ok "a second kmlm run skips its 13 stage tasks by their records"

touch "$tmp/kmlm/reasoning/en.jsonl"
"$src/pipelines/kmlm.sh" --shards 2 --langs de,fr,es "${train[@]}" "$tmp/kmlm" > "$tmp/third.out" 2>&1 || fail "third run"
ran=$(grep '^== ' "$tmp/third.out" | grep -v skipped | cut -d: -f1 | tr '\n' ' ')
[ "$ran" = "== kg-cycles merge == tokenizer == pretrain prepare --shard 0/2 == pretrain prepare --shard 1/2 == pretrain " ] ||
  fail "a touched output reran: $ran"
grep -q "== pretrain: 20 steps" "$tmp/third.out" || fail "pretrain resumed a checkpoint of other data"
ok "a changed output of the cycles stage reruns it and the stages after it only (pretrain from scratch)"

"$src/pipelines/kmlm.sh" --dry-run --shards 5 --partition cpu --account nlp "$tmp/dry" > "$tmp/dry.out" || fail "--dry-run"
[ ! -e "$tmp/dry" ] || fail "--dry-run wrote $tmp/dry"
grep -q -- "--array=0-4 .*--partition=cpu --account=nlp .*kmlm.sh --stage kg-shard $tmp/dry" "$tmp/dry.out" ||
  fail "dry-run array: $(cat "$tmp/dry.out")"
grep -q -- '--dependency=afterok:$kg_shard_job ' "$tmp/dry.out" || fail "dry-run chain: $(cat "$tmp/dry.out")"
grep -q -- '--requeue --signal=B:USR1@120 .*--cpus-per-task=16 --time=24:00:00' "$tmp/dry.out" || fail "pretrain job"
KGLM_SBATCH_ARGS_PRETRAIN="--gres=gpu:1" "$src/pipelines/kmlm.sh" --dry-run --sbatch-args "--mem=8G" "$tmp/dry" \
  > "$tmp/dry2.out" || fail "--dry-run with KGLM_SBATCH_ARGS_PRETRAIN"
[ "$(grep -c -- '--gres=gpu:1' "$tmp/dry2.out")" = 1 ] && grep -q -- '--mem=8G --gres=gpu:1 .*--stage pretrain' "$tmp/dry2.out" ||
  fail "per-stage sbatch options: $(cat "$tmp/dry2.out")"
[ "$(grep -c -- '--mem=8G' "$tmp/dry2.out")" = 9 ] || fail "--sbatch-args not on every stage"
ok "--dry-run: the sbatch commands, a job array of 5 shards, afterok chains, pretrain with --requeue, --sbatch-args on every stage and KGLM_SBATCH_ARGS_PRETRAIN on pretrain's only"
# A stage stops at its first failed command, here and as a submitted job runs it (--stage): bash
# ignores set -e in a function called from a || list, so the driver must not run stages from one.
cat > "$tmp/two-steps.sh" << EOF
#!/usr/bin/env bash
source "$src/pipelines/lib/pipeline.sh"
stage_two_steps() { false; touch "\$RUN/after-false"; }
pipeline_start "\$@"
stage two-steps --out "\$RUN/after-false" -- stage_two_steps
pipeline_end
EOF
chmod +x "$tmp/two-steps.sh"
"$tmp/two-steps.sh" "$tmp/two" > "$tmp/two.out" 2>&1 && fail "a stage with a failed command succeeded"
grep -q "stage two-steps failed (exit 1)" "$tmp/two.out" || fail "local: $(cat "$tmp/two.out")"
status=0
"$tmp/two-steps.sh" --stage two-steps "$tmp/two" > "$tmp/two-job.out" 2>&1 || status=$?
[ $status = 1 ] || fail "the job of a failed stage: exit $status $(cat "$tmp/two-job.out")"
[ ! -e "$tmp/two/after-false" ] || fail "a stage went on after a failed command"
[ ! -e "$tmp/two/.stages/two-steps" ] || fail "a failed stage was recorded"
ok "a stage stops at its first failed command, locally and as a job (--stage), and is not recorded"

# finetune stopped by SIGUSR1 in the demo's finetune stage: exit 75, and the next run resumes it
"$src/pipelines/demo.sh" --until pretrain "$tmp/demo" > /dev/null 2>&1 || fail "demo up to pretrain"
"$src/pipelines/demo.sh" "$tmp/demo" > "$tmp/stopped.out" 2>&1 &
demo=$!
# finetune creates its run directory after it has set up its SIGUSR1 handling.
for _ in $(seq 600); do [ -d "$tmp/demo/finetune-ner" ] && break; sleep 0.05; done
pkill -USR1 -f "bin/finetune --task token" || fail "no finetune to stop"
status=0
wait $demo || status=$?
[ $status = 75 ] || fail "stopped demo: exit $status $(tail "$tmp/stopped.out")"
"$src/pipelines/demo.sh" "$tmp/demo" > "$tmp/resumed.out" 2>&1 || fail "resumed: $(tail "$tmp/resumed.out")"
grep -q "resuming $tmp/demo/finetune-ner" "$tmp/resumed.out" || fail "not resumed: $(cat "$tmp/resumed.out")"
cp "$tmp/demo/finetune-ner/results.tsv" "$tmp/resumed.tsv"
rm -rf "$tmp/demo/.stages/finetune" "$tmp/demo"/finetune-*
"$src/pipelines/demo.sh" "$tmp/demo" > "$tmp/whole.out" 2>&1 || fail "uninterrupted: $(tail "$tmp/whole.out")"
cmp -s "$tmp/resumed.tsv" "$tmp/demo/finetune-ner/results.tsv" || fail "resumed finetune results differ"
ok "finetune stopped by SIGUSR1 (exit 75) resumes on the next run, with the uninterrupted run's results"
echo "$pass checks passed"
