// verbalize: KELM's entity subgraphs (verbalize subgraphs) and their rendering as text in several
// languages (verbalize render). See man 1 verbalize.
#include <iostream>

#include "core/cli.hpp"
#include "core/error.hpp"
#include "gen/languages.hpp"
#include "gen/render.hpp"
#include "gen/subgraphs.hpp"

using namespace kglm;

namespace {

constexpr const char* kUsage =
    "verbalize subgraphs --kg kg.h5 --cooc cooc.tsv -o subgraphs.jsonl\n"
    "       verbalize render --kg kg.h5 --mode kmlm|linearize|template --langs L1,... -o out.jsonl SUBGRAPHS.jsonl...";

int subgraphs_main(int argc, char** argv) {
  ToolCli cli("verbalize subgraphs", "verbalize subgraphs --kg kg.h5 --cooc cooc.tsv [options] -o subgraphs.jsonl",
              "KELM's entity subgraphs: every subject's statements in groups of at most --max-size, each grown\n"
              "greedily by relation co-occurrence (kg-align --cooc) from a random start.");
  gen::SubgraphOptions o;
  std::string kinds;
  bool no_qualifiers = false;
  // clang-format off
  cli.add()
      ("kg", po::value(&o.kg)->required(), "the KG store (wd-extract)")
      ("cooc", po::value(&o.cooc)->required()->multitoken(), "relation co-occurrence counts (kg-align --cooc); several add up")
      ("kinds", po::value(&kinds)->default_value("item,quantity,time,string,monolingualtext"),
       "statement kinds to group, comma-separated")
      ("max-size", po::value(&o.max_size)->default_value(5), "statements per subgraph at most")
      ("no-qualifiers", po::bool_switch(&no_qualifiers), "leave the statements' qualifiers out");
  // clang-format on
  if (!cli.parse(argc, argv)) return 0;
  cli.require_output();
  o.kinds = kg::parse_fact_kinds(kinds);
  o.qualifiers = !no_qualifiers;
  fill_run_options(cli.common(), 1, o);
  report_stats(cli.common(), gen::generate_subgraphs(o));
  return 0;
}

int render_main(int argc, char** argv) {
  ToolCli cli("verbalize render",
              "verbalize render --kg kg.h5 --mode MODE --langs L1,... [options] -o out.jsonl SUBGRAPHS...",
              "Subgraphs as annotated text per language: kmlm ('h [mask] r [mask] t.' per statement), linearize\n"
              "(TEKGEN's 's r1 o1, r2 o2') or template (X-FACTR-format relation templates, kmlm form where none).");
  gen::RenderOptions o;
  std::string mode, langs;
  // clang-format off
  cli.add()
      ("kg", po::value(&o.kg)->required(), "the KG store the subgraphs come from (labels)")
      ("mode", po::value(&mode)->default_value("kmlm"), "kmlm, linearize or template")
      ("langs", po::value(&langs)->default_value("en"), "languages to render, comma-separated, or 'xlmr'")
      ("templates", po::value(&o.templates), "template mode: DIR with LANG.jsonl relation templates")
      ("group-by-subject", po::bool_switch(&o.group_by_subject), "one document per subject and language (KELM)")
      ("split-by-lang", po::value(&o.split_dir), "write DIR/LANG.jsonl per language instead of -o");
  // clang-format on
  if (!cli.parse(argc, argv)) return 0;
  if (o.split_dir.empty()) cli.require_output();
  cli.require_inputs();
  if (mode == "kmlm")
    o.mode = gen::RenderOptions::Mode::kmlm;
  else if (mode == "linearize")
    o.mode = gen::RenderOptions::Mode::linearize;
  else if (mode == "template")
    o.mode = gen::RenderOptions::Mode::templates;
  else
    throw UsageError("--mode must be kmlm, linearize or template");
  o.langs = gen::parse_language_list(langs);
  fill_run_options(cli.common(), 1, o);
  report_stats(cli.common(), gen::render_subgraphs(o));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_tool("verbalize", [&] {
    std::string command = argc > 1 ? argv[1] : "";
    if (command == "subgraphs") return subgraphs_main(argc - 1, argv + 1);
    if (command == "render") return render_main(argc - 1, argv + 1);
    if (command == "--help" || command == "-h") {
      std::cout << "Usage: " << kUsage
                << "\nSee verbalize subgraphs --help, verbalize render --help, man 1 verbalize.\n";
      return 0;
    }
    if (command == "--version") {
      std::cout << "verbalize (kglm) " << kglm_version() << "\n";
      return 0;
    }
    throw UsageError("expected a command, subgraphs or render\nusage: " + std::string(kUsage));
  });
}
