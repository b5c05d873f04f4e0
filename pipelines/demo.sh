#!/usr/bin/env bash
# The whole kglm pipeline on the embedded sample in data/, stage by stage: here (the default), or as
# Slurm batch jobs chained by their dependencies (--submit; --dry-run prints the sbatch commands).
# Tools are taken from $KGLM_BIN (default: build/bin). Each stage prints what it wrote; a stage whose
# outputs are complete (checked by provenance) is skipped when the pipeline runs again.
#SBATCH --cpus-per-task=2
#SBATCH --mem=4G
#SBATCH --time=00:30:00
source "${KGLM_HOME:-$(cd "$(dirname "$0")/.." && pwd)}/pipelines/lib/pipeline.sh"
pipeline_use train
demo_langs=de,fr,es,it,nl,vi,ja,zh,ko,ru,ar

stage_wd_extract() {
  echo "== wd-extract: data/wikidata-sample.json -> $RUN/kg.h5 (+ TSV tables)"
  "$bin/wd-extract" "$here/data/wikidata-sample.json" -o "$RUN/kg.h5" --langs all --tsv "$RUN/kg-tsv" \
    --stats "$RUN/wd-extract.stats.json" --quiet
  for t in entities labels aliases triples literals qualifiers; do
    printf '   %-12s %6d rows\n' "$t" $(( $(wc -l < "$RUN/kg-tsv/$t.tsv") - 1 ))
  done
}

stage_wiki_extract() {
  echo "== wiki-extract: data/enwiki-sample.xml -> $RUN/docs.jsonl, $RUN/sentences.jsonl, $RUN/redirects.tsv"
  "$bin/wiki-extract" "$here/data/enwiki-sample.xml" -o "$RUN/docs.jsonl" --redirects "$RUN/redirects.tsv" \
    --stats "$RUN/wiki-extract.stats.json" --quiet
  "$bin/wiki-extract" "$here/data/enwiki-sample.xml" -o "$RUN/sentences.jsonl" --sentences --quiet
  printf '   %-12s %6d\n' articles "$(wc -l < "$RUN/docs.jsonl")" redirects "$(( $(wc -l < "$RUN/redirects.tsv") - 1 ))" \
    sentences "$(wc -l < "$RUN/sentences.jsonl")"
}

stage_cs_gen() {
  echo "== cs-gen: KMLM code-switched + parallel sentences, EntityCS corpus -> $RUN/kmlm-*.jsonl, $RUN/entitycs.jsonl"
  "$bin/cs-gen" kmlm --kg "$RUN/kg.h5" --langs $demo_langs --alias -o "$RUN/kmlm-cs.jsonl" --quiet
  "$bin/cs-gen" kmlm --kg "$RUN/kg.h5" --langs $demo_langs --mode parallel -o "$RUN/kmlm-parallel.jsonl" --quiet
  "$bin/cs-gen" entitycs --kg "$RUN/kg.h5" --redirects "$RUN/redirects.tsv" --langs $demo_langs \
    -o "$RUN/entitycs.jsonl" --stats "$RUN/entitycs.stats.json" --quiet "$RUN/docs.jsonl"
  printf '   %-12s %6d\n' kmlm-cs "$(wc -l < "$RUN/kmlm-cs.jsonl")" kmlm-parallel "$(wc -l < "$RUN/kmlm-parallel.jsonl")" \
    entitycs "$(wc -l < "$RUN/entitycs.jsonl")"
}

stage_kg_cycles() {
  echo "== kg-cycles: triangles and 4-cycles with a diagonal -> $RUN/cycles.h5, reasoning samples -> $RUN/reasoning/"
  "$bin/kg-cycles" --kg "$RUN/kg.h5" -o "$RUN/cycles.h5" --text "$RUN/reasoning" --langs en,$demo_langs \
    --stats "$RUN/kg-cycles.stats.json" --quiet
  python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print('   triangles %6d\n   cycles4   %6d' % (s['triangles'], s['cycles4']))" \
    "$RUN/kg-cycles.stats.json"
  printf '   %-12s %6d\n' reasoning-en "$(wc -l < "$RUN/reasoning/en.jsonl")"
  "$bin/kg-cycles" xlr --kg "$RUN/kg.h5" --cycles "$RUN/cycles.h5" --langs en,$demo_langs -o "$RUN/xlr" \
    --train 60 --dev 20 --test 20 --max-entity-share 0.3 --max-answer-share 0.4 --quiet
  printf '   %-12s %6d\n' xlr-test-en "$(wc -l < "$RUN/xlr/test.en.jsonl")"
}

stage_kg_align() {
  echo "== kg-align: KG statements aligned to the lead sentences (TEKGEN) -> $RUN/aligned.jsonl, $RUN/cooc.tsv"
  "$bin/kg-align" --kg "$RUN/kg.h5" --redirects "$RUN/redirects.tsv" --cooc "$RUN/cooc.tsv" -o "$RUN/aligned.jsonl" \
    --relations "$RUN/relations.jsonl" --stats "$RUN/kg-align.stats.json" --quiet "$RUN/docs.jsonl"
  printf '   %-12s %6d\n' aligned "$(wc -l < "$RUN/aligned.jsonl")" relation-pairs "$(( $(wc -l < "$RUN/cooc.tsv") - 1 ))" \
    relation-examples "$(wc -l < "$RUN/relations.jsonl")"
  echo "== kg-align ner: silver NER, links typed through P31/P279 (WikiANN) -> $RUN/ner/{train,dev,test}.panx"
  "$bin/kg-align" ner --kg "$RUN/kg.h5" --redirects "$RUN/redirects.tsv" --split-dir "$RUN/ner" --split-unit sentence \
    --dev-share 0.15 --test-share 0.15 --stats "$RUN/kg-align-ner.stats.json" --quiet "$RUN/docs.jsonl"
  python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print('   sentences %6d, entities PER %d ORG %d LOC %d (%d propagated)' % (s['sentences_written'], s.get('entities.PER', 0), s.get('entities.ORG', 0), s.get('entities.LOC', 0), s['entities_propagated']))" \
    "$RUN/kg-align-ner.stats.json"
}

stage_verbalize() {
  echo "== verbalize: KELM entity subgraphs -> $RUN/subgraphs.jsonl, rendered in $RUN/kelm-*"
  "$bin/verbalize" subgraphs --kg "$RUN/kg.h5" --cooc "$RUN/cooc.tsv" -o "$RUN/subgraphs.jsonl" --quiet
  "$bin/verbalize" render --kg "$RUN/kg.h5" --mode kmlm --langs en,$demo_langs --split-by-lang "$RUN/kelm-kmlm" \
    --quiet "$RUN/subgraphs.jsonl"
  "$bin/verbalize" render --kg "$RUN/kg.h5" --mode linearize --langs en --group-by-subject -o "$RUN/kelm-linear.jsonl" \
    --quiet "$RUN/subgraphs.jsonl"
  "$bin/verbalize" render --kg "$RUN/kg.h5" --mode template --templates "$here/data/templates" --langs en,de,fr \
    -o "$RUN/kelm-template.jsonl" --quiet "$RUN/subgraphs.jsonl"
  printf '   %-12s %6d\n' subgraphs "$(wc -l < "$RUN/subgraphs.jsonl")" template "$(wc -l < "$RUN/kelm-template.jsonl")"
}

stage_verbalizer() {
  echo "== verbalize train/generate: TEKGEN's neural verbaliser, a tiny T5 trained on template pairs and the aligned"
  echo "   sentences, decoding every subgraph -> $RUN/tekgen/, $RUN/kelm-neural.jsonl"
  "$bin/verbalize" render --kg "$RUN/kg.h5" --mode pairs --templates "$here/data/templates" --langs en \
    -o "$RUN/kelm-pairs.jsonl" --quiet "$RUN/subgraphs.jsonl"
  python3 -c "
import json, sys
with open(sys.argv[3], 'w') as out:
    for path in sys.argv[1:3]:
        for r in map(json.loads, open(path)):
            out.write(r['serialized_triples'] + '\n' + r['sentence'] + '\n')
" "$RUN/kelm-pairs.jsonl" "$RUN/aligned.jsonl" "$RUN/t5-spm.txt"
  # T5's ids: <pad> 0, </s> 1, <unk> 2, no <s>.
  spm_train --input="$RUN/t5-spm.txt" --model_prefix="$RUN/t5-spm" --vocab_size=400 --hard_vocab_limit=false \
    --pad_id=0 --eos_id=1 --unk_id=2 --bos_id=-1 --character_coverage=1.0 > "$RUN/t5-spm.log" 2>&1 ||
    { echo "spm_train failed: $(tail -3 "$RUN/t5-spm.log")" >&2; return 1; }
  printf '{"model_type": "t5", "vocab_size": %d, "d_model": 32, "d_kv": 8, "d_ff": 64, "num_layers": 2, "num_heads": 4}\n' \
    "$(wc -l < "$RUN/t5-spm.vocab")" > "$RUN/t5-config.json"
  rm -rf "$(tensorboard_dir)"
  "$bin/verbalize" train --config "$RUN/t5-config.json" --tokenizer "$RUN/t5-spm.model" --steps 400 --batch 16 \
    --lr 3e-3 --eval-fraction 0.1 --log "$RUN/tekgen-metrics.jsonl" --tensorboard "$(tensorboard_dir)" \
    --out "$RUN/tekgen" --stats "$RUN/tekgen.stats.json" --quiet "$RUN/kelm-pairs.jsonl" "$RUN/aligned.jsonl"
  "$bin/verbalize" generate --model "$RUN/tekgen" --beams 2 -o "$RUN/kelm-neural.jsonl" \
    --text-output "$RUN/kelm-neural.text.jsonl" --quiet "$RUN/subgraphs.jsonl"
  "$bin/verbalize" generate --model "$RUN/tekgen" -o "$RUN/tekgen-aligned.jsonl" --quiet "$RUN/aligned.jsonl"
  "$bin/verbalize" evaluate -o "$RUN/tekgen-scores.json" --quiet "$RUN/tekgen-aligned.jsonl"
  python3 -c "
import json, sys
s = json.load(open(sys.argv[1]))
e = json.load(open(sys.argv[2]))
print('   %d steps, held-out loss %.2f -> %.2f; %d sentences' % (s['steps'], s['first_eval_loss_milli'] / 1000,
      s['last_eval_loss_milli'] / 1000, sum(1 for _ in open(sys.argv[3]))))
print('   aligned sentences: BLEU %.1f, chrF %.1f (copying the triples: %.1f, %.1f)' % (e['bleu'], e['chrf'],
      e['copy_bleu'], e['copy_chrf']))
" "$RUN/tekgen.stats.json" "$RUN/tekgen-scores.json" "$RUN/kelm-neural.jsonl"
}

stage_sample_lang() {
  echo "== sample-lang: per-language corpora rebalanced with q ∝ p^alpha -> $RUN/kelm-balanced.jsonl, $RUN/kmlm-balanced/"
  "$bin/sample-lang" "$RUN/kelm-kmlm" --alpha 0.3 --keep-smallest -o "$RUN/kelm-balanced.jsonl" \
    --write-plan "$RUN/kelm-balanced.plan.tsv" --quiet
  "$bin/sample-lang" "$RUN/kmlm-parallel.jsonl" --unit tokens --alpha 0.7 --split-by-lang "$RUN/kmlm-balanced" \
    --write-plan "$RUN/kmlm-balanced.plan.tsv" --quiet
  echo "   KELM kmlm sentences, alpha 0.3, smallest language kept whole:"
  awk -F'\t' 'NR > 1 { printf "   %-4s %5d lines -> %5d\n", $1, $3, $6 }' "$RUN/kelm-balanced.plan.tsv"
  printf '   %-12s %6d\n' kelm-balanced "$(wc -l < "$RUN/kelm-balanced.jsonl")" \
    kmlm-balanced "$(cat "$RUN/kmlm-balanced"/*.jsonl | wc -l)"
}

stage_pretrain() {
  echo "== pretrain: a SentencePiece model of the demo corpus, a token dataset of every generator's output, a tiny"
  echo "   XLM-R pre-trained with all objectives mixed (MLM, KMLM knowledge + reasoning, EntityCS PEP_MS+MLM) -> $RUN/ckpt/"
  # The tokenizer is trained here on the generated text, so the demo needs no download.
  train_tokenizer "$RUN/spm" 2000 "$RUN/kmlm-cs.jsonl" "$RUN/kmlm-parallel.jsonl" "$RUN/entitycs.jsonl" \
    "$RUN/kelm-balanced.jsonl" "$RUN/reasoning/en.jsonl"
  # --max-len 192 keeps every reasoning sample (up to five sentences) whole.
  "$bin/pretrain" prepare --tokenizer "$RUN/spm.model" --max-len 192 -o "$RUN/tokens.h5" --stats "$RUN/prepare.stats.json" \
    --quiet "$RUN/kmlm-cs.jsonl" "$RUN/entitycs.jsonl" "$RUN/kelm-balanced.jsonl" "$RUN/kmlm-balanced" "$RUN/reasoning"
  rm -rf "$(tensorboard_dir)"
  "$bin/pretrain" --data "$RUN/tokens.h5" --layers 2 --hidden 64 --heads 4 --ffn 256 --batch 16 --steps 300 \
    --lr 2e-3 --warmup 30 --lang-alpha 0.5 --eval-fraction 0.05 --eval-every 100 --log "$RUN/pretrain-metrics.jsonl" \
    --tensorboard "$(tensorboard_dir)" --out "$RUN/ckpt" --stats "$RUN/pretrain.stats.json" --quiet
  "$bin/pretrain" masks --data "$RUN/tokens.h5" -n 2000 -o "$RUN/masks.jsonl" --quiet
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
" "$RUN/pretrain-metrics.jsonl" "$RUN/pretrain.stats.json"
  printf '   %-12s %6d rows of masking decisions\n' masks "$(wc -l < "$RUN/masks.jsonl")"
}

stage_finetune() {
  echo "== finetune: the pre-trained model on silver NER, relation classification and XLR; XLR tested zero-shot"
  echo "   in the other languages -> $RUN/finetune-*/results.tsv"
  train_finetune "$RUN/finetune-ner" --task token --init "$RUN/ckpt" --train "en=$RUN/ner/train.panx" \
    --dev "en=$RUN/ner/dev.panx" --test "en=$RUN/ner/test.panx" --epochs 20 --batch 16 --lr 3e-3 --max-len 96 \
    --seeds 11,22 --quiet
  train_finetune "$RUN/finetune-relation" --task relation --init "$RUN/ckpt" --train "$RUN/relations.jsonl" \
    --test "en=$RUN/relations.jsonl" --epochs 30 --batch 8 --lr 3e-3 --quiet
  xlr_tests=()
  for f in "$RUN"/xlr/test.*.jsonl; do l=${f##*/test.}; [ -s "$f" ] && xlr_tests+=(--test "${l%.jsonl}=$f"); done
  train_finetune "$RUN/finetune-xlr" --task choice --init "$RUN/ckpt" --train "$RUN/xlr/train.en.jsonl" \
    --dev "$RUN/xlr/dev.en.jsonl" "${xlr_tests[@]}" --epochs 10 --batch 8 --lr 2e-3 --max-len 96 --quiet
  python3 -c "
import json, sys
for name in sys.argv[1:]:
    r = json.load(open(name + '/results.json'))
    m, langs = r['metric'], r['languages']
    line = ', '.join('%s %.1f' % (l, 100 * v[m]['mean']) for l, v in sorted(langs.items()))
    zs = r.get('zero_shot')
    print('   %-9s %s %s%s' % (r['task'], m, line, ('; zero-shot average %.1f' % (100 * zs['mean'])) if zs else ''))
" "$RUN/finetune-ner" "$RUN/finetune-relation" "$RUN/finetune-xlr"
}

stage_elmo() {
  echo "== ELMo: a word vocabulary and dataset of the language-balanced KMLM corpora, a small multilingual ELMo"
  echo "   (data/elmo/options-small.json) trained as bilm-tf trains one -> $RUN/elmo/ckpt/ (AllenNLP's layout)"
  mkdir -p "$RUN/elmo"
  "$bin/pretrain" vocab -o "$RUN/elmo/vocab.txt" --counts "$RUN/elmo/counts.tsv" --quiet "$RUN/kmlm-balanced"
  "$bin/pretrain" prepare --words --vocab "$RUN/elmo/vocab.txt" --max-len 64 -o "$RUN/elmo/words.h5" --quiet \
    "$RUN/kmlm-balanced"
  rm -rf "$(tensorboard_dir)"
  "$bin/pretrain" --architecture elmo --options "$here/data/elmo/options-small.json" --data "$RUN/elmo/words.h5" \
    --batch 16 --steps 120 --eval-fraction 0.05 --eval-every 60 --log "$RUN/elmo/metrics.jsonl" \
    --tensorboard "$(tensorboard_dir)" --out "$RUN/elmo/ckpt" --stats "$RUN/elmo/pretrain.stats.json" --quiet 2> /dev/null
  head -3 "$RUN/kmlm-balanced"/en.jsonl | python3 -c "
import json, sys
for line in sys.stdin: print(json.loads(line)['text'])" > "$RUN/elmo/sentences.txt"
  "$bin/pretrain" embed --model "$RUN/elmo/ckpt" -o "$RUN/elmo/vectors.hdf5" --stats "$RUN/elmo/embed.stats.json" \
    --quiet "$RUN/elmo/sentences.txt"
  python3 -c "
import json, math, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
steps = [r for r in rows if 'loss' in r]
evals = [r for r in rows if 'eval_ppl' in r]
counts = [int(l.split('	')[1]) for l in list(open(sys.argv[2]))[1:]]
n = sum(counts)
unigram = math.exp(-sum(c * math.log(c / n) for c in counts) / n)
print('   %d words (%d tokens); steps %d, sampled loss %.2f -> %.2f' % (len(counts), n, len(steps), steps[0]['loss'],
      steps[-1]['loss']))
print('   held-out perplexity %s (the corpus words\' unigram perplexity: %.1f)' % (
      ' -> '.join('%.1f' % e['eval_ppl'] for e in evals), unigram))
e = json.load(open(sys.argv[3]))
print('   ELMo vectors of %d sentences (%d words): %d layers of %d -> %s' % (e['sentences'], e['words'], e['layers'],
      e['dim'], sys.argv[4]))
" "$RUN/elmo/metrics.jsonl" "$RUN/elmo/counts.tsv" "$RUN/elmo/embed.stats.json" "$RUN/elmo/vectors.hdf5"
}

stage_frozen() {
  echo "== frozen features: the demo ELMo frozen, a PoS tagger and a biaffine parser trained on data/ud/en-demo.conllu's"
  echo "   first 24 sentences (a UD sample written for kglm), scored on its last 8 -> $RUN/frozen/{pos,parse}/"
  mkdir -p "$RUN/frozen"
  awk 'BEGIN { RS = ""; ORS = "\n\n" } NR <= 24' "$here/data/ud/en-demo.conllu" > "$RUN/frozen/train.conllu"
  awk 'BEGIN { RS = ""; ORS = "\n\n" } NR > 24' "$here/data/ud/en-demo.conllu" > "$RUN/frozen/test.conllu"
  rm -rf "$RUN/frozen/pos" "$RUN/frozen/parse" "$(tensorboard_dir)"
  for task in pos parse; do
    "$bin/finetune" --task $task --frozen --init "$RUN/elmo/ckpt" --train "en=$RUN/frozen/train.conllu" \
      --test "en=$RUN/frozen/test.conllu" --epochs 8 --batch 8 --seeds 1 --out "$RUN/frozen/$task" --quiet \
      --tensorboard "$(tensorboard_dir $task)"
  done
  "$bin/finetune" predict --model "$RUN/frozen/parse/seed-1/best" "$RUN/frozen/test.conllu" \
    -o "$RUN/frozen/test.parsed.conllu" --quiet
  python3 -c "
import json, sys
pos, parse = (json.load(open(p))['languages']['en'] for p in sys.argv[1:3])
print('   UPOS accuracy %.1f%%, UAS %.1f%%, LAS %.1f%% on 8 sentences (the predicted trees: %s)' % (
      100 * pos['accuracy']['mean'], 100 * parse['uas']['mean'], 100 * parse['las']['mean'], sys.argv[3]))
" "$RUN/frozen/pos/results.json" "$RUN/frozen/parse/results.json" "$RUN/frozen/test.parsed.conllu"
}

stage_figures() {
  echo "== kglm-plot: the demo's figures -> $RUN/figures/"
  local fig=$RUN/figures
  mkdir -p "$fig"
  "$bin/kglm-plot" curves "$RUN/pretrain-metrics.jsonl" --smooth 0.6 -o "$fig/pretrain-curves.png" \
    --title "pretrain on the demo sample: MLM, knowledge and reasoning losses (smoothing 0.6)"
  "$bin/kglm-plot" curves "$RUN/tekgen-metrics.jsonl" --smooth 0.6 -o "$fig/verbalizer-curves.png"
  "$bin/kglm-plot" curves "$RUN/elmo/metrics.jsonl" --smooth 0.6 -o "$fig/elmo-curves.png"
  local task
  for task in ner relation xlr; do
    "$bin/kglm-plot" results "$RUN/finetune-$task/results.json" -o "$fig/finetune-$task.png"
  done
  "$bin/kglm-plot" results "$RUN/frozen/pos/results.json" "$RUN/frozen/parse/results.json" --labels "PoS,parsing" \
    -o "$fig/frozen-elmo.png" --title "ELMo frozen features: UPOS accuracy and LAS (English)"
  "$bin/kglm-plot" plan "$RUN/kmlm-balanced.plan.tsv" "$RUN/kelm-balanced.plan.tsv" \
    --labels "KMLM parallel text (tokens; alpha 0.7),KELM sentences (lines; alpha 0.3)" -o "$fig/sample-lang.png"
  ls "$fig" | sed 's/^/   /'
}

pipeline_start "$@"
data=$here/data
stage wd-extract --in "$data/wikidata-sample.json" --out "$RUN/kg.h5" --out "$RUN/kg-tsv" -- stage_wd_extract
stage wiki-extract --in "$data/enwiki-sample.xml" --out "$RUN/docs.jsonl" --out "$RUN/sentences.jsonl" \
  --out "$RUN/redirects.tsv" -- stage_wiki_extract
stage cs-gen --after "wd-extract wiki-extract" --out "$RUN/kmlm-cs.jsonl" --out "$RUN/kmlm-parallel.jsonl" \
  --out "$RUN/entitycs.jsonl" -- stage_cs_gen
stage kg-cycles --after wd-extract --out "$RUN/cycles.h5" --out "$RUN/reasoning" --out "$RUN/xlr" -- stage_kg_cycles
stage kg-align --after "wd-extract wiki-extract" --out "$RUN/aligned.jsonl" --out "$RUN/cooc.tsv" \
  --out "$RUN/relations.jsonl" --out "$RUN/ner" -- stage_kg_align
stage verbalize --after "wd-extract kg-align" --in "$data/templates" --out "$RUN/subgraphs.jsonl" \
  --out "$RUN/kelm-kmlm" --out "$RUN/kelm-linear.jsonl" --out "$RUN/kelm-template.jsonl" -- stage_verbalize
stage verbalizer --after "verbalize kg-align" --in "$data/templates" --out "$RUN/kelm-pairs.jsonl" \
  --out "$RUN/t5-spm.model" --out "$RUN/tekgen" --out "$RUN/kelm-neural.jsonl" --out "$RUN/tekgen-scores.json" \
  -- stage_verbalizer
stage sample-lang --after "cs-gen verbalize" --out "$RUN/kelm-balanced.jsonl" --out "$RUN/kmlm-balanced" \
  -- stage_sample_lang
stage pretrain --after "cs-gen kg-cycles sample-lang" --out "$RUN/spm.model" --out "$RUN/tokens.h5" \
  --out "$RUN/ckpt" --out "$RUN/pretrain-metrics.jsonl" --out "$RUN/masks.jsonl" -- stage_pretrain
stage finetune --after "pretrain kg-align kg-cycles" --requeue --out "$RUN/finetune-ner" --out "$RUN/finetune-relation" \
  --out "$RUN/finetune-xlr" -- stage_finetune
stage elmo --after sample-lang --out "$RUN/elmo" -- stage_elmo
stage frozen --after elmo --in "$data/ud/en-demo.conllu" --out "$RUN/frozen" -- stage_frozen
stage figures --after "pretrain verbalizer finetune elmo frozen sample-lang" --in "$bin/kglm-plot" \
  --out "$RUN/figures" -- stage_figures
pipeline_end
