// probe: X-FACTR factual cloze probing of a masked language model across languages. See man 1 probe.
#include <string>
#include <vector>

#include "core/cli.hpp"
#include "core/comma_list.hpp"
#include "core/error.hpp"
#include "core/shipped_data.hpp"
#include "gen/languages.hpp"
#include "nn/cpu_precision.hpp"
#include "probe/probe.hpp"
#include "probe/probe_facts.hpp"

using namespace kglm;

namespace {

int probe_main(int argc, char** argv) {
  ToolCli cli("probe",
              "probe --model MODEL_DIR --facts XFACTR/facts --templates XFACTR/templates [--aliases XFACTR/alias]\n"
              "             [--kg kg.h5] [--langs en,fr,ru] [--method independent,confidence] -o PREFIX\n"
              "       probe --model MODEL_DIR --kg kg.h5 --relations P19,P36 --templates DIR -o PREFIX",
              "Probes a masked language model for facts with X-FACTR's multilingual cloze templates and multi-token\n"
              "answers (1..--num-mask masks; independent, order or confidence decoding); writes accuracy per\n"
              "language and relation, macro-averaged over relations for all, single- and multi-token answers.");
  probe::ProbeOptions o;
  std::string langs, lang_alias, methods, relations, device;
  // clang-format off
  cli.add()
      ("model", po::value(&o.model), "a model directory (Hugging Face layout with its MLM head: pretrain's checkpoints)")
      ("facts", po::value(&o.facts), "X-FACTR fact files P<n>.jsonl (default: facts drawn from --kg)")
      ("templates", po::value(&o.templates), "DIR of relation templates <lang>.jsonl (X-FACTR's or verbalize's format; a relative DIR not found here is "
       "looked up in the shipped data: `templates` names kglm's own)")
      ("aliases", po::value(&o.aliases), "X-FACTR alias files <lang>.txt: more accepted answers")
      ("kg", po::value(&o.kg), "KG store: labels in every language, aliases, genders (P21), classes (P31), other objects")
      ("inflections", po::value(&o.inflections),
       "UniMorph noun tables (DIR/rus, DIR/ell, DIR/tur, ...): case-marked slots ([Y.Gen]) take the label's form")
      ("langs", po::value(&langs), "languages, comma-separated, or 'xlmr' (default: en)")
      ("lang", po::value(&lang_alias), "the same as --langs (its former name)")
      ("relations", po::value(&relations), "relations to probe, e.g. P19,P36 (default: every fact file)")
      ("max-facts", po::value(&o.max_facts)->default_value(0), "facts per relation (0: all; from --kg a seeded sample)")
      ("method", po::value(&methods)->default_value("independent"), "independent, order, confidence; comma-separated")
      ("num-mask", po::value(&o.num_mask)->default_value(5), "the most mask tokens an answer may take")
      ("max-iter", po::value(&o.max_iter)->default_value(10), "confidence: the most tokens refinement replaces")
      ("norm", po::bool_switch(&o.norm), "choose the mask count by mean log-probability (default: the sum)")
      ("skip-short-aliases", po::bool_switch(&o.skip_short_aliases),
       "do not accept aliases of at most 3 characters without a capital (language codes: de, en)")
      ("predictions", po::value(&o.predictions), "write every fact's prediction as JSONL here")
      ("batch", po::value(&o.batch)->default_value(64), "sequences per forward pass")
      ("batch-tokens", po::value(&o.batch_tokens)->default_value(0),
       "forward passes of at most N tokens (the sequences sorted by length) instead of --batch sequences")
      ("device", po::value(&device)->default_value("cpu"), "cpu, or cuda")
      ("precision", po::value(&o.precision)->default_value("fp32"), nn::kPrecisionHelp);
  // clang-format on
  if (!cli.parse(argc, argv)) return 0;
  cli.require_output();
  const CommonOptions& c = cli.common();
  if (!c.inputs.empty()) throw UsageError("unexpected argument '" + c.inputs.front() + "'");
  if (o.model.empty()) throw UsageError("--model is required");
  if (o.templates.empty()) throw UsageError("--templates is required");
  o.templates = find_data_path(o.templates, "templates");
  if (o.batch < 1) throw UsageError("--batch must be at least 1");
  if (o.batch_tokens < 0) throw UsageError("--batch-tokens must be 0 (off) or a token budget");
  if (!lang_alias.empty()) {
    if (!langs.empty()) throw UsageError("--lang is --langs: give one of them");
    langs = lang_alias;
  }
  o.langs = gen::parse_language_list(langs.empty() ? "en" : langs);
  o.methods.clear();
  for (const std::string& m : comma_list_option(methods, "--method"))
    o.methods.push_back(probe::parse_decode_method(m));
  if (!relations.empty()) o.relations = probe::parse_relation_list(relations);
  o.device = nn::parse_device(device);
  o.out = c.output;
  o.threads = c.threads;
  o.seed = c.seed;
  o.quiet = c.quiet;
  o.stats_file = c.stats_file;
  o.max_errors = c.max_errors;
  o.command_line = c.command_line;
  return probe::run_probe(o);
}

}  // namespace

int main(int argc, char** argv) {
  return run_tool("probe", [&] { return probe_main(argc, argv); });
}
