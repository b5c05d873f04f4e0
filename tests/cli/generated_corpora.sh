# Sourced by CLI tests: generated_corpora DIR BIN FIXTURES writes into DIR the training corpora the
# generators make from the real fixtures (the X-FACTR KG, the Wikipedia excerpt): KMLM code-switched
# with aliases (k-cs.jsonl, fr/ru), parallel (k-par.jsonl, fr), 3- and 4-cycle reasoning samples
# (reason/en.jsonl) and EntityCS sentences (ecs.jsonl, fr/ru).
generated_corpora() {
  local dir=$1 bin=$2 fx=$3
  "$bin/wd-extract" "$fx/xfactr-kg-dev.json.gz" -o "$dir/kgx.h5" --langs all -q
  "$bin/cs-gen" kmlm --kg "$dir/kgx.h5" --langs fr,ru --alias --max-per-subject 1 -o "$dir/k-cs.jsonl" -q
  "$bin/cs-gen" kmlm --kg "$dir/kgx.h5" --langs fr --mode parallel --max-per-subject 1 -o "$dir/k-par.jsonl" -q
  "$bin/kg-cycles" --kg "$dir/kgx.h5" -o "$dir/cyc.h5" --text "$dir/reason" --langs en --sample 3000 --max-degree 200 -q
  "$bin/wiki-extract" "$fx/wikipedia/enwiki-sample-a.xml.bz2" -o "$dir/docsx.jsonl" -q
  "$bin/cs-gen" entitycs --kg "$dir/kgx.h5" --langs fr,ru -o "$dir/ecs.jsonl" "$dir/docsx.jsonl" -q
}
