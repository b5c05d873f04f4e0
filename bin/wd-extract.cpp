// wd-extract: Wikidata JSON dump -> KG store (HDF5). See man 1 wd-extract.
#include <boost/algorithm/string.hpp>

#include "core/cli.hpp"
#include "core/error.hpp"
#include "gen/languages.hpp"
#include "kg/wd_extract.hpp"

using namespace kglm;

namespace {

constexpr const char* kDefaultLangs = "en,vi,nl,de,fr,it,es,ja,ko,zh";  // the 10 KMLM languages

void fill_set(const std::string& list, bool& all, kg::StringSet& set) {
  all = list == "all";
  if (all) return;
  std::vector<std::string> parts;
  boost::split(parts, list, boost::is_any_of(","));
  for (auto& p : parts) {
    boost::trim(p);
    if (!p.empty()) set.insert(p);
  }
}

// The KG store is an HDF5 file: it needs a real path, not stdout.
void require_file_output(const ToolCli& cli) {
  cli.require_output();
  if (cli.common().output == "-") throw UsageError("-o -: the KG store is an HDF5 file and needs a path");
}

int merge_main(int argc, char** argv) {
  ToolCli cli("wd-extract merge", "wd-extract merge [options] PART.h5... -o kg.h5",
              "Merge the shard stores written with --shard I/N, 0..N-1 of one run, into one KG store.");
  std::string tsv;
  cli.add()("tsv", po::value(&tsv), "also write the tables as TSV files into DIR");
  if (!cli.parse(argc, argv)) return 0;
  require_file_output(cli);
  cli.require_inputs();
  Stats stats =
      kg::merge_kg(cli.common().inputs, cli.common().output, tsv, cli.common().command_line, cli.common().threads);
  report_stats(cli.common(), stats);
  return 0;
}

int extract_main(int argc, char** argv) {
  ToolCli cli("wd-extract", "wd-extract [options] INPUT... -o kg.h5\n       wd-extract merge PART.h5... -o kg.h5",
              "Read a Wikidata JSON dump (or wbgetentities response; gzip, bzip2, zstd or plain; '-' = stdin)\n"
              "and write the KG store: entities, labels, descriptions, aliases, sitelinks, item triples,\n"
              "literal claims and qualifiers.");
  std::string langs, sites, entities, relations, shard, tsv;
  uint32_t min_sitelinks = 0;
  size_t batch_mb = 4;
  kg::ExtractOptions o;
  // clang-format off
  cli.add()
      ("langs", po::value(&langs)->default_value(kDefaultLangs), "languages of labels/descriptions/aliases, comma-separated, or 'xlmr' or 'all'")
      ("sites", po::value(&sites)->default_value("enwiki"), "sitelink sites kept, or 'all'")
      ("entities", po::value(&entities), "keep only the items listed in FILE (one Q id per line)")
      ("relations", po::value(&relations), "keep only the properties and claims listed in FILE (one P id per line)")
      ("min-sitelinks", po::value(&min_sitelinks), "keep only items with at least N sitelinks (any site)")
      ("keep-deprecated", po::bool_switch(&o.parse.keep_deprecated), "keep deprecated-rank statements")
      ("shard", po::value(&shard), "process shard I/N (line ordinal % N == I) into a shard store for merge")
      ("tsv", po::value(&tsv), "also write the tables as TSV files into DIR")
      ("batch-mb", po::value(&batch_mb)->default_value(4), "input batch size per worker task, in MB")
      ("compression", po::value(&o.compression_level)->default_value(1),
       "deflate level of the store's columns: 1 fast .. 12 smallest, 0 none");
  // clang-format on
  if (!cli.parse(argc, argv)) return 0;
  require_file_output(cli);
  cli.require_inputs();
  const CommonOptions& common = cli.common();
  // --langs as every tool reads it (a list, or 'xlmr'), plus 'all'.
  o.parse.all_langs = langs == "all";
  if (!o.parse.all_langs)
    for (const std::string& lang : gen::parse_language_list(langs)) o.parse.langs.insert(lang);
  fill_set(sites, o.parse.all_sites, o.parse.sites);
  std::unordered_set<uint64_t> entity_ids, relation_ids;
  if (!entities.empty()) {
    entity_ids = kg::read_id_list(entities, kg::EntityType::item);
    o.parse.items = &entity_ids;
  }
  if (!relations.empty()) {
    relation_ids = kg::read_id_list(relations, kg::EntityType::property);
    o.parse.relations = &relation_ids;
  }
  o.parse.min_sitelinks = min_sitelinks;
  if (!shard.empty()) o.shard = parse_shard(shard);
  o.shard_run = shard_run_identity("wd-extract", cli.result_options(), common.inputs);
  if (o.shard.active() && !tsv.empty()) throw UsageError("--tsv applies to the merged store, not to a shard");
  if (o.compression_level < 0 || o.compression_level > 12) throw UsageError("--compression must be 0..12");
  fill_run_options(common, batch_mb, o);
  o.tsv_dir = tsv;
  Stats stats = kg::extract_kg(o);
  report_stats(common, stats);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_tool("wd-extract", [&] {
    if (argc > 1 && std::string(argv[1]) == "merge") return merge_main(argc - 1, argv + 1);
    return extract_main(argc, argv);
  });
}
