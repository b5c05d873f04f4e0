// kg-cycles: 3-cycles and 4-cycles with a diagonal of the KG's item graph (KMLM reasoning data).
// See man 1 kg-cycles.
#include "core/cli.hpp"
#include "core/error.hpp"
#include "gen/languages.hpp"
#include "gen/reasoning.hpp"
#include "gen/xlr.hpp"
#include "kg/kg_cycles.hpp"
#include "kg/wd_extract.hpp"

using namespace kglm;

namespace {

int xlr_main(int argc, char** argv) {
  ToolCli cli("kg-cycles xlr", "kg-cycles xlr --kg kg.h5 --cycles cycles.h5 --langs L1,... -o DIR",
              "The XLR multiple-choice reasoning dataset (KMLM Appendix A.2) from a cycles table: train/dev/test\n"
              "questions asking for the relation between two entities of a cycle, rendered per language.");
  gen::XlrOptions o;
  std::string langs;
  // clang-format off
  cli.add()
      ("kg", po::value(&o.kg)->required(), "the KG store the cycles come from")
      ("cycles", po::value(&o.cycles)->required(), "the cycles table (kg-cycles)")
      ("langs", po::value(&langs)->default_value("en"), "languages to render, comma-separated")
      ("train", po::value(&o.train)->default_value(3000), "questions in the train split")
      ("dev", po::value(&o.dev)->default_value(1000), "questions in the dev split")
      ("test", po::value(&o.test)->default_value(1050), "questions in the test split")
      ("max-entity-share", po::value(&o.max_entity_share)->default_value(0.02),
       "at most this share of a split's questions mention one entity")
      ("max-answer-share", po::value(&o.max_answer_share)->default_value(0.2),
       "at most this share of a split's questions have one answer");
  // clang-format on
  if (!cli.parse(argc, argv)) return 0;
  cli.require_output();
  o.dir = cli.common().output;
  o.langs = gen::parse_language_list(langs);
  o.seed = cli.common().seed;
  report_stats(cli.common(), gen::make_xlr(o));
  return 0;
}

int merge_main(int argc, char** argv) {
  ToolCli cli("kg-cycles merge", "kg-cycles merge PART.h5... -o cycles.h5 [--kg kg.h5 --text DIR --langs L1,...]",
              "Merge the parts 0..N-1 of one kg-cycles --shard I/N run into the table the unsharded run writes.");
  kg::CyclesMergeOptions o;
  std::string kg, text_dir, langs;
  // clang-format off
  cli.add()
      ("compression", po::value(&o.compression_level)->default_value(1), "deflate level 0..12")
      ("kg", po::value(&kg), "the KG store, for --text")
      ("text", po::value(&text_dir), "also write KMLM reasoning samples to DIR/LANG.jsonl")
      ("langs", po::value(&langs)->default_value("en"), "languages of the --text samples, comma-separated");
  // clang-format on
  if (!cli.parse(argc, argv)) return 0;
  cli.require_output();
  cli.require_inputs();
  if (cli.common().output == "-") throw UsageError("-o -: the cycles table is an HDF5 file and needs a path");
  if (!text_dir.empty() && kg.empty()) throw UsageError("--text needs --kg, the KG store the cycles come from");
  if (o.compression_level < 0 || o.compression_level > 12) throw UsageError("--compression must be 0..12");
  o.parts = cli.common().inputs;
  o.output = cli.common().output;
  o.command_line = cli.common().command_line;
  Stats stats = kg::merge_cycles(o);
  if (!text_dir.empty())
    stats.merge(gen::write_reasoning_text({kg, o.output, gen::parse_language_list(langs), text_dir}));
  report_stats(cli.common(), stats);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_tool("kg-cycles", [&] {
    if (argc > 1 && std::string(argv[1]) == "xlr") return xlr_main(argc - 1, argv + 1);
    if (argc > 1 && std::string(argv[1]) == "merge") return merge_main(argc - 1, argv + 1);
    ToolCli cli(
        "kg-cycles",
        "kg-cycles --kg kg.h5 [options] -o cycles.h5\n       kg-cycles --edges edges.tsv [options] -o cycles.h5\n"
        "       kg-cycles merge PART.h5... -o cycles.h5\n       kg-cycles xlr --kg kg.h5 --cycles cycles.h5 -o DIR",
        "Every triangle and every 4-cycle with a diagonal (each once by node set) of the KG store's item\n"
        "triples as an undirected graph, with one relation per edge, into a cycles table.");
    kg::CyclesOptions o;
    std::string relations, deny, text_dir, langs, kinds, shard, hub_edges;
    // clang-format off
    cli.add()
        ("kg", po::value(&o.kg), "the KG store (wd-extract)")
        ("edges", po::value(&o.edges), "instead of --kg: a TSV edge list (subject [relation] object per line)")
        ("kinds", po::value(&kinds)->default_value("3,4"), "cycles to list: 3 (triangles), 4 (with a diagonal), or 3,4")
        ("relations", po::value(&relations), "use only the relations listed in FILE (P ids)")
        ("deny-relations", po::value(&deny), "leave out the relations listed in FILE (P ids)")
        ("max-degree", po::value(&o.graph.max_degree)->default_value(0),
         "leave out nodes with more than D neighbours (hubs); 0 = no cap")
        ("hub-edges", po::value(&hub_edges)->default_value("auto"),
         "a node with d > K neighbours keeps about K of them (a seeded sample); auto = max(1000, sqrt(2 x edges)); "
         "0 = every edge, every cycle")
        ("max-cycles", po::value(&o.max_cycles)->default_value(0), "stop after writing N cycles; 0 = all")
        ("max-per-node", po::value(&o.max_per_node)->default_value(0), "a node is in at most N written cycles")
        ("sample", po::value(&o.sample)->default_value(0), "write a seeded uniform sample of N cycles")
        ("exclude", po::value(&o.exclude), "drop the cycles listed in FILE (entity ids per line, e.g. XLR test)")
        ("compression", po::value(&o.compression_level)->default_value(1), "deflate level 0..12")
        ("shard", po::value(&shard), "list the cycles whose first rank is I modulo N into a part for kg-cycles merge")
        ("text", po::value(&text_dir), "also write KMLM reasoning samples to DIR/LANG.jsonl")
        ("langs", po::value(&langs)->default_value("en"), "languages of the --text samples, comma-separated");
    // clang-format on
    if (!cli.parse(argc, argv)) return 0;
    if (!shard.empty()) o.shard = parse_shard(shard);
    if (hub_edges == "auto") {
      o.graph.hub_edges = kg::kHubEdgesAuto;
    } else {
      char* end = nullptr;
      o.graph.hub_edges = std::strtoull(hub_edges.c_str(), &end, 10);
      if (hub_edges.empty() || *end != '\0' || hub_edges[0] == '-' || o.graph.hub_edges == kg::kHubEdgesAuto)
        throw UsageError("--hub-edges expects a number or 'auto', got '" + hub_edges + "'");
    }
    o.shard_run = shard_run_identity("kg-cycles", cli.result_options(), {o.kg.empty() ? o.edges : o.kg});
    if (o.shard.active() && !text_dir.empty())
      throw UsageError("--text applies to the merged table: kg-cycles merge PARTS --kg KG --text DIR");
    cli.require_output();
    if (o.kg.empty() == o.edges.empty()) throw UsageError("give either --kg or --edges");
    if (!o.edges.empty() && (!relations.empty() || !deny.empty() || !text_dir.empty()))
      throw UsageError("--relations, --deny-relations and --text need --kg");
    if (kinds != "3" && kinds != "4" && kinds != "3,4" && kinds != "4,3")
      throw UsageError("--kinds must be 3, 4 or 3,4");
    o.triangles = kinds.find('3') != std::string::npos;
    o.quads = kinds.find('4') != std::string::npos;
    if (cli.common().output == "-") throw UsageError("-o -: the cycles table is an HDF5 file and needs a path");
    if (o.compression_level < 0 || o.compression_level > 12) throw UsageError("--compression must be 0..12");
    std::unordered_set<uint64_t> allow, denied;
    if (!relations.empty()) {
      allow = kg::read_id_list(relations, kg::EntityType::property);
      o.graph.allow_relations = &allow;
    }
    if (!deny.empty()) {
      denied = kg::read_id_list(deny, kg::EntityType::property);
      o.graph.deny_relations = &denied;
    }
    fill_run_options(cli.common(), 1, o);
    Stats stats = kg::find_cycles(o);
    if (!text_dir.empty()) {
      gen::ReasoningTextOptions t{o.kg, o.output, gen::parse_language_list(langs), text_dir};
      stats.merge(gen::write_reasoning_text(t));
    }
    report_stats(cli.common(), stats);
    return 0;
  });
}
