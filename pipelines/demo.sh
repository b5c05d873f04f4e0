#!/usr/bin/env bash
# The whole kglm pipeline on the embedded sample in data/. Usage: pipelines/demo.sh [OUTDIR]
# Tools are taken from $KGLM_BIN (default: build/bin). Each stage prints what it wrote.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${KGLM_BIN:-$here/build/bin}
out=${1:-$here/out/demo}
mkdir -p "$out"

echo "== wd-extract: data/wikidata-sample.json -> $out/kg.h5 (+ TSV tables)"
"$bin/wd-extract" "$here/data/wikidata-sample.json" -o "$out/kg.h5" --langs all --tsv "$out/kg-tsv" \
  --stats "$out/wd-extract.stats.json" --quiet
for t in entities labels aliases triples literals qualifiers; do
  printf '   %-12s %6d rows\n' "$t" $(( $(wc -l < "$out/kg-tsv/$t.tsv") - 1 ))
done

echo "== wiki-extract: data/enwiki-sample.xml -> $out/docs.jsonl, $out/sentences.jsonl, $out/redirects.tsv"
"$bin/wiki-extract" "$here/data/enwiki-sample.xml" -o "$out/docs.jsonl" --redirects "$out/redirects.tsv" \
  --stats "$out/wiki-extract.stats.json" --quiet
"$bin/wiki-extract" "$here/data/enwiki-sample.xml" -o "$out/sentences.jsonl" --sentences --quiet
printf '   %-12s %6d\n' articles "$(wc -l < "$out/docs.jsonl")" redirects "$(( $(wc -l < "$out/redirects.tsv") - 1 ))" \
  sentences "$(wc -l < "$out/sentences.jsonl")"

echo "== cs-gen: KMLM code-switched + parallel sentences, EntityCS corpus -> $out/kmlm-*.jsonl, $out/entitycs.jsonl"
demo_langs=de,fr,es,it,nl,vi,ja,zh,ko,ru,ar
"$bin/cs-gen" kmlm --kg "$out/kg.h5" --langs $demo_langs --alias -o "$out/kmlm-cs.jsonl" --quiet
"$bin/cs-gen" kmlm --kg "$out/kg.h5" --langs $demo_langs --mode parallel -o "$out/kmlm-parallel.jsonl" --quiet
"$bin/cs-gen" entitycs --kg "$out/kg.h5" --redirects "$out/redirects.tsv" --langs $demo_langs \
  -o "$out/entitycs.jsonl" --stats "$out/entitycs.stats.json" --quiet "$out/docs.jsonl"
printf '   %-12s %6d\n' kmlm-cs "$(wc -l < "$out/kmlm-cs.jsonl")" kmlm-parallel "$(wc -l < "$out/kmlm-parallel.jsonl")" \
  entitycs "$(wc -l < "$out/entitycs.jsonl")"

echo "== kg-cycles: triangles and 4-cycles with a diagonal -> $out/cycles.h5, reasoning samples -> $out/reasoning/"
"$bin/kg-cycles" --kg "$out/kg.h5" -o "$out/cycles.h5" --text "$out/reasoning" --langs en,$demo_langs \
  --stats "$out/kg-cycles.stats.json" --quiet
python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print('   triangles %6d\n   cycles4   %6d' % (s['triangles'], s['cycles4']))" \
  "$out/kg-cycles.stats.json"
printf '   %-12s %6d\n' reasoning-en "$(wc -l < "$out/reasoning/en.jsonl")"
"$bin/kg-cycles" xlr --kg "$out/kg.h5" --cycles "$out/cycles.h5" --langs en,$demo_langs -o "$out/xlr" \
  --train 60 --dev 20 --test 20 --max-entity-share 0.3 --max-answer-share 0.4 --quiet
printf '   %-12s %6d\n' xlr-test-en "$(wc -l < "$out/xlr/test.en.jsonl")"
echo "== kg-align: KG statements aligned to the lead sentences (TEKGEN) -> $out/aligned.jsonl, $out/cooc.tsv"
"$bin/kg-align" --kg "$out/kg.h5" --redirects "$out/redirects.tsv" --cooc "$out/cooc.tsv" -o "$out/aligned.jsonl" \
  --relations "$out/relations.jsonl" --stats "$out/kg-align.stats.json" --quiet "$out/docs.jsonl"
printf '   %-12s %6d\n' aligned "$(wc -l < "$out/aligned.jsonl")" relation-pairs "$(( $(wc -l < "$out/cooc.tsv") - 1 ))" \
  relation-examples "$(wc -l < "$out/relations.jsonl")"
echo "== kg-align ner: silver NER, links typed through P31/P279 (WikiANN) -> $out/ner/{train,dev,test}.panx"
"$bin/kg-align" ner --kg "$out/kg.h5" --redirects "$out/redirects.tsv" --split-dir "$out/ner" --split-unit sentence \
  --dev-share 0.15 --test-share 0.15 --stats "$out/kg-align-ner.stats.json" --quiet "$out/docs.jsonl"
python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print('   sentences %6d, entities PER %d ORG %d LOC %d (%d propagated)' % (s['sentences_written'], s.get('entities.PER', 0), s.get('entities.ORG', 0), s.get('entities.LOC', 0), s['entities_propagated']))" \
  "$out/kg-align-ner.stats.json"

echo "== verbalize: KELM entity subgraphs -> $out/subgraphs.jsonl, rendered in $out/kelm-*"
"$bin/verbalize" subgraphs --kg "$out/kg.h5" --cooc "$out/cooc.tsv" -o "$out/subgraphs.jsonl" --quiet
"$bin/verbalize" render --kg "$out/kg.h5" --mode kmlm --langs en,$demo_langs --split-by-lang "$out/kelm-kmlm" \
  --quiet "$out/subgraphs.jsonl"
"$bin/verbalize" render --kg "$out/kg.h5" --mode linearize --langs en --group-by-subject -o "$out/kelm-linear.jsonl" \
  --quiet "$out/subgraphs.jsonl"
"$bin/verbalize" render --kg "$out/kg.h5" --mode template --templates "$here/data/templates" --langs en,de,fr \
  -o "$out/kelm-template.jsonl" --quiet "$out/subgraphs.jsonl"
printf '   %-12s %6d\n' subgraphs "$(wc -l < "$out/subgraphs.jsonl")" template "$(wc -l < "$out/kelm-template.jsonl")"

echo "== sample-lang: per-language corpora rebalanced with q ∝ p^alpha -> $out/kelm-balanced.jsonl, $out/kmlm-balanced/"
"$bin/sample-lang" "$out/kelm-kmlm" --alpha 0.3 --keep-smallest -o "$out/kelm-balanced.jsonl" \
  --write-plan "$out/kelm-balanced.plan.tsv" --quiet
"$bin/sample-lang" "$out/kmlm-parallel.jsonl" --unit tokens --alpha 0.7 --split-by-lang "$out/kmlm-balanced" \
  --write-plan "$out/kmlm-balanced.plan.tsv" --quiet
echo "   KELM kmlm sentences, alpha 0.3, smallest language kept whole:"
awk -F'\t' 'NR > 1 { printf "   %-4s %5d lines -> %5d\n", $1, $3, $6 }' "$out/kelm-balanced.plan.tsv"
printf '   %-12s %6d\n' kelm-balanced "$(wc -l < "$out/kelm-balanced.jsonl")" \
  kmlm-balanced "$(cat "$out/kmlm-balanced"/*.jsonl | wc -l)"
echo "== pretrain: a SentencePiece model of the demo corpus, a token dataset of every generator's output, a tiny"
echo "   XLM-R pre-trained with all objectives mixed (MLM, KMLM knowledge + reasoning, EntityCS PEP_MS+MLM) -> $out/ckpt/"
# The tokenizer is trained here (Debian's spm_train) on the generated text, so the demo needs no download.
python3 -c "
import json, sys
with open(sys.argv[1], 'w') as out:
    for path in sys.argv[2:]:
        for line in open(path, encoding='utf-8'):
            out.write(json.loads(line)['text'].replace('\\n', ' ') + '\\n')
" "$out/spm-corpus.txt" "$out/kmlm-cs.jsonl" "$out/kmlm-parallel.jsonl" "$out/entitycs.jsonl" "$out/kelm-balanced.jsonl" \
  "$out/reasoning/en.jsonl"
spm_train --input="$out/spm-corpus.txt" --model_prefix="$out/spm" --vocab_size=2000 --hard_vocab_limit=false \
  --character_coverage=1.0 --num_threads=2 --minloglevel=2 > /dev/null 2>&1
# --max-len 192 keeps every reasoning sample (up to five sentences) whole.
"$bin/pretrain" prepare --tokenizer "$out/spm.model" --max-len 192 -o "$out/tokens.h5" --stats "$out/prepare.stats.json" \
  --quiet "$out/kmlm-cs.jsonl" "$out/entitycs.jsonl" "$out/kelm-balanced.jsonl" "$out/kmlm-balanced" "$out/reasoning"
"$bin/pretrain" --data "$out/tokens.h5" --layers 2 --hidden 64 --heads 4 --ffn 256 --batch 16 --steps 300 \
  --lr 2e-3 --warmup 30 --lang-alpha 0.5 --eval-fraction 0.05 --eval-every 100 --log "$out/pretrain-metrics.jsonl" \
  --out "$out/ckpt" --stats "$out/pretrain.stats.json" --quiet
"$bin/pretrain" masks --data "$out/tokens.h5" -n 2000 -o "$out/masks.jsonl" --quiet
python3 -c "
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
steps = [r for r in rows if 'loss' in r]
evals = [r for r in rows if 'eval_ppl' in r]
print('   steps %d, loss %.2f -> %.2f, held-out perplexity %s' % (len(steps), steps[0]['loss'], steps[-1]['loss'],
      ' -> '.join('%.1f' % e['eval_ppl'] for e in evals)))
for term in ('mlm', 'knowledge', 'reasoning'):
    seen = [s['loss_' + term] for s in steps if s['loss_' + term] is not None]
    print('   L_%-10s %.2f -> %.2f over %d steps' % (term, seen[0], seen[-1], len(seen)))
stats = json.load(open(sys.argv[2]))
kinds = sorted({k.split('.')[1] for k in stats if k.startswith('masked.')})
print('   masked tokens (entity/relation/link slot/other): ' + ', '.join(
    '%s %s' % (k, '/'.join(str(stats['masked.%s.%s' % (k, c)]) for c in ('entity', 'relation', 'link_slot', 'other')))
    for k in kinds))
" "$out/pretrain-metrics.jsonl" "$out/pretrain.stats.json"
printf '   %-12s %6d rows of masking decisions\n' masks "$(wc -l < "$out/masks.jsonl")"

echo "== finetune: the pre-trained model on silver NER, relation classification and XLR; XLR tested zero-shot"
echo "   in the other languages -> $out/finetune-*/results.tsv"
rm -rf "$out"/finetune-*  # a run directory is continued only with --resume
"$bin/finetune" --task token --init "$out/ckpt" --train "en=$out/ner/train.panx" --dev "en=$out/ner/dev.panx" \
  --test "en=$out/ner/test.panx" --epochs 20 --batch 16 --lr 3e-3 --max-len 96 --seeds 11,22 \
  -o "$out/finetune-ner" --quiet
"$bin/finetune" --task relation --init "$out/ckpt" --train "$out/relations.jsonl" --test "en=$out/relations.jsonl" \
  --epochs 30 --batch 8 --lr 3e-3 -o "$out/finetune-relation" --quiet
xlr_tests=()
for f in "$out"/xlr/test.*.jsonl; do l=${f##*/test.}; [ -s "$f" ] && xlr_tests+=(--test "${l%.jsonl}=$f"); done
"$bin/finetune" --task choice --init "$out/ckpt" --train "$out/xlr/train.en.jsonl" --dev "$out/xlr/dev.en.jsonl" \
  "${xlr_tests[@]}" --epochs 10 --batch 8 --lr 2e-3 --max-len 96 -o "$out/finetune-xlr" --quiet
python3 -c "
import json, sys
for name in sys.argv[1:]:
    r = json.load(open(name + '/results.json'))
    m, langs = r['metric'], r['languages']
    line = ', '.join('%s %.1f' % (l, 100 * v[m]['mean']) for l, v in sorted(langs.items()))
    zs = r.get('zero_shot')
    print('   %-9s %s %s%s' % (r['task'], m, line, ('; zero-shot average %.1f' % (100 * zs['mean'])) if zs else ''))
" "$out/finetune-ner" "$out/finetune-relation" "$out/finetune-xlr"
# Later stages (probe) are added here as they land.
echo "demo finished: outputs in $out"
