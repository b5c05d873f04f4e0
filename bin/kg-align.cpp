// kg-align: TEKGEN's alignment of KG statements to the lead sentences of their subjects'
// Wikipedia articles, with relation co-occurrence counts. See man 1 kg-align.
#include "core/cli.hpp"
#include "core/error.hpp"
#include "gen/kg_align.hpp"

using namespace kglm;

int main(int argc, char** argv) {
  return run_tool("kg-align", [&] {
    ToolCli cli("kg-align", "kg-align --kg kg.h5 [--redirects R.tsv] [--cooc cooc.tsv] -o aligned.jsonl DOCS.jsonl...",
                "TEKGEN's triple-to-sentence alignment: every statement of an article's subject aligned to the lead\n"
                "sentences that write its object (names, quantities with units, dates, qualifiers), as KELM's\n"
                "quadruples JSONL, plus relation co-occurrence counts over the aligned sentences.");
    gen::KgAlignOptions o;
    std::string kinds;
    bool no_qualifiers = false, no_pronoun = false;
    // clang-format off
    cli.add()
        ("kg", po::value(&o.kg)->required(), "the KG store (wd-extract, with enwiki sitelinks and English names)")
        ("redirects", po::value(&o.redirects), "wiki-extract's redirects table, to map redirect titles")
        ("cooc", po::value(&o.cooc), "write relation co-occurrence counts (TSV) to FILE")
        ("kinds", po::value(&kinds)->default_value("item,quantity,time,string,monolingualtext"),
         "statement kinds to align, comma-separated")
        ("no-qualifiers", po::bool_switch(&no_qualifiers), "do not align qualifiers as sub-triples")
        ("no-pronoun", po::bool_switch(&no_pronoun), "keep pronouns (no subject-name replacement)")
        ("all-sections", po::bool_switch(&o.all_sections), "align to every section, not only the lead")
        ("locale", po::value(&o.locale)->default_value("en"), "locale of the sentence-break rules");
    // clang-format on
    if (!cli.parse(argc, argv)) return 0;
    cli.require_output();
    cli.require_inputs();
    o.kinds = kg::parse_fact_kinds(kinds);
    o.qualifiers = !no_qualifiers;
    o.replace_pronoun = !no_pronoun;
    fill_run_options(cli.common(), 1, o);
    report_stats(cli.common(), gen::align_kg(o));
    return 0;
  });
}
