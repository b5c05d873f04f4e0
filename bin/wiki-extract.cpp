// wiki-extract: Wikipedia XML dump -> clean text with links, sections and redirects.
// See man 1 wiki-extract.
#include <boost/algorithm/string.hpp>

#include "core/cli.hpp"
#include "core/error.hpp"
#include "text/wiki_extract.hpp"

using namespace kglm;

namespace {

std::unordered_set<int64_t> parse_namespaces(const std::string& list) {
  std::unordered_set<int64_t> out;
  std::vector<std::string> parts;
  boost::split(parts, list, boost::is_any_of(","));
  for (std::string& p : parts) {
    boost::trim(p);
    try {
      size_t used = 0;
      long long ns = std::stoll(p, &used);
      if (used != p.size()) throw std::invalid_argument(p);
      out.insert(ns);
    } catch (const std::exception&) {
      throw UsageError("--ns: '" + p + "' is not a namespace number");
    }
  }
  return out;
}

// The value named `value` among `choices`, or a UsageError listing them.
template <class T>
T choose(const char* option, const std::string& value, std::initializer_list<std::pair<const char*, T>> choices) {
  std::string names;
  for (const auto& [name, choice] : choices) {
    if (value == name) return choice;
    names += names.empty() ? name : std::string(" or ") + name;
  }
  throw UsageError(std::string(option) + " must be " + names);
}

int merge_main(int argc, char** argv) {
  ToolCli cli("wiki-extract merge", "wiki-extract merge PART... -o docs.jsonl [--redirects redirects.tsv]",
              "Concatenate the parts 0..N-1 of one wiki-extract --shard I/N run, in order, into the unsharded\n"
              "documents and, with --redirects, the redirects the parts recorded beside them.");
  std::string redirects;
  cli.add()("redirects", po::value(&redirects), "also merge the parts' redirects tables into this TSV");
  if (!cli.parse(argc, argv)) return 0;
  cli.require_output();
  cli.require_inputs();
  report_stats(cli.common(), text::merge_wiki_parts(cli.common().inputs, cli.common().output, redirects));
  return 0;
}

int extract_main(int argc, char** argv) {
  ToolCli cli("wiki-extract", "wiki-extract [options] INPUT... -o docs.jsonl [--redirects redirects.tsv]",
              "Clean the articles of MediaWiki XML dumps (bzip2, gzip, zstd or plain; '-' = stdin) into text\n"
              "with link spans and sections, one JSONL record per article; redirects go to a TSV table.");
  std::string input_format, format, ns, redirects, shard;
  size_t batch_mb = 4;
  text::WikiExtractOptions o;
  // clang-format off
    cli.add()
        ("redirects", po::value(&redirects), "write redirect pages to this TSV (# from<TAB>to)")
        ("format", po::value(&format)->default_value("json"),
         "json: records with offsets; plain: <doc> blocks with [[target|anchor]] inline")
        ("input-format", po::value(&input_format)->default_value("xml"),
         "xml: MediaWiki export dump; wikiextractor: WikiExtractor --json --links output")
        ("sentences", po::bool_switch(&o.sentences), "one record per sentence (ICU, never inside a link)")
        ("locale", po::value(&o.locale)->default_value("en"), "locale of the sentence-break rules")
        ("ns", po::value(&ns)->default_value("0"), "namespaces of the pages kept, comma-separated")
        ("max-depth", po::value(&o.max_depth)->default_value(100),
         "deepest nesting of templates, tables or links; deeper pages are errors")
        ("batch-mb", po::value(&batch_mb)->default_value(4), "wikitext per worker task, in MB")
        ("shard", po::value(&shard),
         "write part I/N of one dump file (its pages from bytes I*S/N..(I+1)*S/N: plain XML or a bzip2 "
         "multistream dump) for wiki-extract merge");
  // clang-format on
  if (!cli.parse(argc, argv)) return 0;
  cli.require_output();
  cli.require_inputs();
  const CommonOptions& common = cli.common();
  o.format = choose<text::WikiExtractOptions::Format>(
      "--format", format,
      {{"json", text::WikiExtractOptions::Format::json}, {"plain", text::WikiExtractOptions::Format::plain}});
  o.input_format =
      choose<text::WikiExtractOptions::Input>("--input-format", input_format,
                                              {{"xml", text::WikiExtractOptions::Input::xml},
                                               {"wikiextractor", text::WikiExtractOptions::Input::wikiextractor}});
  if (o.max_depth == 0) throw UsageError("--max-depth must be at least 1");
  fill_run_options(common, batch_mb, o);
  o.namespaces = parse_namespaces(ns);
  o.redirects = redirects;
  if (!shard.empty()) {
    o.shard = parse_shard(shard);
    o.shard_run = shard_run_identity("wiki-extract", cli.result_options({"redirects"}), common.inputs);
  }
  Stats stats = text::extract_wiki(o);
  report_stats(common, stats);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_tool("wiki-extract", [&] {
    if (argc > 1 && std::string(argv[1]) == "merge") return merge_main(argc - 1, argv + 1);
    return extract_main(argc, argv);
  });
}
