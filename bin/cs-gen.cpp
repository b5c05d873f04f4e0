// cs-gen: code-switched and parallel corpora — KMLM sentences from KG triples (cs-gen kmlm) and
// the EntityCS corpus from Wikipedia sentences (cs-gen entitycs). See man 1 cs-gen.
#include <filesystem>
#include <iostream>

#include "core/cli.hpp"
#include "core/error.hpp"
#include "gen/entitycs.hpp"
#include "gen/kmlm.hpp"
#include "gen/languages.hpp"
#include "kg/wd_extract.hpp"

using namespace kglm;

namespace {

constexpr const char* kUsage =
    "cs-gen kmlm --kg kg.h5 --langs L1,L2,... [--mode code-switch|parallel] [--alias] -o out.jsonl\n"
    "       cs-gen entitycs --kg kg.h5 [--redirects redirects.tsv] [--langs ...] -o out.jsonl DOCS.jsonl...\n"
    "       cs-gen merge PART... -o out.jsonl | cs-gen merge PARTDIR... --split-by-lang DIR";

bool format_is_plain(const std::string& format) {
  if (format != "json" && format != "plain") throw UsageError("--format must be json or plain");
  return format == "plain";
}

int kmlm_main(int argc, char** argv) {
  ToolCli cli("cs-gen kmlm", "cs-gen kmlm --kg kg.h5 --langs L1,L2,... [options] -o out.jsonl",
              "KMLM's synthetic sentences 'h [mask] r [mask] t.' from every item triple of a KG store:\n"
              "code-switched (each item switched with --switch-prob), parallel, and alias-replaced.");
  gen::KmlmOptions o;
  std::string mode, pairs, langs, relations, entities, format, shard;
  // clang-format off
  cli.add()
      ("kg", po::value(&o.kg)->required(), "the KG store (wd-extract)")
      ("langs", po::value(&langs)->required(), "target languages, comma-separated, or 'xlmr'")
      ("mode", po::value(&mode)->default_value("code-switch"), "code-switch or parallel")
      ("pairs", po::value(&pairs)->default_value("one"),
       "one: one target language drawn per triple; all: a record for every target language")
      ("switch-prob", po::value(&o.switch_prob)->default_value(0.5), "probability of switching each item")
      ("alias", po::bool_switch(&o.alias), "also write alias-replaced records")
      ("relations", po::value(&relations), "keep only triples whose relation is listed in FILE (P ids)")
      ("entities", po::value(&entities), "keep only triples whose subject and object are listed in FILE (Q ids)")
      ("max-per-subject", po::value(&o.max_per_subject)->default_value(0), "at most N triples per subject, 0 = all")
      ("split-by-lang", po::value(&o.split_dir), "write DIR/LANG.jsonl per language instead of -o")
      ("format", po::value(&format)->default_value("json"), "json (annotated text) or plain (the sentences)")
      ("shard", po::value(&shard),
       "write part I/N (the triples of rows I*R/N..(I+1)*R/N; a file, or a --split-by-lang directory) for cs-gen merge");
  // clang-format on
  if (!cli.parse(argc, argv)) return 0;
  if (o.split_dir.empty()) cli.require_output();
  if (!shard.empty()) {
    o.shard = parse_shard(shard);
    if (o.split_dir.empty()) require_part_file(cli.common().output);
    o.shard_run = shard_run_identity("cs-gen kmlm", cli.result_options({"split-by-lang"}), {o.kg});
  }
  if (mode != "code-switch" && mode != "parallel") throw UsageError("--mode must be code-switch or parallel");
  if (pairs != "one" && pairs != "all") throw UsageError("--pairs must be one or all");
  o.mode = mode == "parallel" ? gen::KmlmOptions::Mode::parallel : gen::KmlmOptions::Mode::code_switch;
  o.all_pairs = pairs == "all";
  o.plain = format_is_plain(format);
  o.langs = gen::parse_language_list(langs);
  std::unordered_set<uint64_t> relation_ids, entity_ids;
  if (!relations.empty()) {
    relation_ids = kg::read_id_list(relations, kg::EntityType::property);
    o.relations = &relation_ids;
  }
  if (!entities.empty()) {
    entity_ids = kg::read_id_list(entities, kg::EntityType::item);
    o.entities = &entity_ids;
  }
  fill_run_options(cli.common(), 1, o);
  report_stats(cli.common(), gen::generate_kmlm(o));
  return 0;
}

int entitycs_main(int argc, char** argv) {
  ToolCli cli("cs-gen entitycs", "cs-gen entitycs --kg kg.h5 [options] -o out.jsonl DOCS.jsonl...",
              "The EntityCS corpus: sentences of wiki-extract documents (JSONL or plain) with >= 1 link, each\n"
              "with all its linked entities switched into one language that has labels for all of them.");
  gen::EntityCsOptions o;
  std::string langs, format;
  // clang-format off
  cli.add()
      ("kg", po::value(&o.kg)->required(), "the KG store (wd-extract, with enwiki sitelinks)")
      ("redirects", po::value(&o.redirects), "wiki-extract's redirects table, to resolve links to redirects")
      ("langs", po::value(&langs)->default_value("xlmr"), "candidate languages, or 'xlmr' (XLM-R's 93 besides English)")
      ("min-links", po::value(&o.min_links)->default_value(1), "keep sentences with at least N links")
      ("max-links", po::value(&o.max_links)->default_value(10), "keep sentences with at most N links")
      ("max-words", po::value(&o.max_words)->default_value(128), "keep sentences with at most N words")
      ("max-cs", po::value(&o.max_cs)->default_value(5), "code-switched copies per English sentence")
      ("locale", po::value(&o.locale)->default_value("en"), "locale of the sentence-break rules")
      ("split-by-lang", po::value(&o.split_dir), "write DIR/LANG.jsonl per language instead of -o")
      ("format", po::value(&format)->default_value("json"), "json (records) or plain (<e>-marked sentences)");
  // clang-format on
  if (!cli.parse(argc, argv)) return 0;
  if (o.split_dir.empty()) cli.require_output();
  cli.require_inputs();
  o.plain = format_is_plain(format);
  o.langs = gen::parse_language_list(langs);
  fill_run_options(cli.common(), 1, o);
  report_stats(cli.common(), gen::generate_entitycs(o));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_tool("cs-gen", [&] {
    std::string command = argc > 1 ? argv[1] : "";
    if (command == "kmlm") return kmlm_main(argc - 1, argv + 1);
    if (command == "merge") return merge_parts_command("cs-gen kmlm", argc - 1, argv + 1);
    if (command == "entitycs") return entitycs_main(argc - 1, argv + 1);
    if (command == "--help" || command == "-h") {
      std::cout << "Usage: " << kUsage << "\nSee cs-gen kmlm --help, cs-gen entitycs --help, man 1 cs-gen.\n";
      return 0;
    }
    if (command == "--version") {
      std::cout << "cs-gen (kglm) " << kglm_version() << "\n";
      return 0;
    }
    throw UsageError("expected a command, kmlm, entitycs or merge\nusage: " + std::string(kUsage));
  });
}
