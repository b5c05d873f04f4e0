// kg-align: TEKGEN's alignment of KG statements to the lead sentences of their subjects'
// Wikipedia articles, with relation co-occurrence counts; kg-align ner: silver named-entity data
// from Wikipedia links typed through the KG (WikiANN); kg-align qa: silver extractive QA (SQuAD
// JSON) from the same alignments, in the wiki's language. See man 1 kg-align.

#include <algorithm>

#include "core/cli.hpp"
#include "core/error.hpp"
#include "core/shipped_data.hpp"
#include "gen/kg_align.hpp"
#include "gen/silver_ner.hpp"

using namespace kglm;

namespace {

int align_main(int argc, char** argv) {
  ToolCli cli("kg-align",
              "kg-align --kg kg.h5 [--redirects R.tsv] [--cooc cooc.tsv] [--relations REL.jsonl] -o aligned.jsonl "
              "DOCS.jsonl...\n"
              "       kg-align ner --kg kg.h5 [--lang LANG] [--type TAG=Q1,Q2 ...] -o OUT.panx DOCS.jsonl...\n"
              "       kg-align qa --kg kg.h5 [--lang LANG] [--questions DIR] -o OUT.json DOCS.jsonl...",
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
      ("relations", po::value(&o.relations),
       "write relation classification examples to FILE: annotated-text JSONL, subject and object spans, the "
       "relation as \"label\" (finetune --task relation)")
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
}

int qa_main(int argc, char** argv) {
  ToolCli cli("kg-align qa", "kg-align qa --kg kg.h5 [options] -o OUT.json DOCS.jsonl...",
              "Silver extractive QA (beyond the papers): every statement of an article's subject that TEKGEN's rules\n"
              "align to a lead sentence becomes a question about the subject (a per-relation form, or \"<subject>\n"
              "<relation label>?\"), answered by the object's mention; the context is the sentence's paragraph. One\n"
              "SQuAD v1.1 JSON file, as finetune --task qa and the official evaluators read it.");
  gen::KgAlignOptions o;
  std::string kinds, context, locale;
  // clang-format off
  cli.add()
      ("kg", po::value(&o.kg)->required(), "the KG store (wd-extract, with the wiki's sitelinks and names in LANG)")
      ("redirects", po::value(&o.redirects), "wiki-extract's redirects table, to map redirect titles")
      ("lang", po::value(&o.lang)->default_value("en"),
       "the wiki's language: titles resolve through LANG + \"wiki\" sitelinks, names and relation labels in LANG")
      ("questions", po::value(&o.questions),
       "directory of LANG.jsonl question forms ({\"relation\": \"P19\", \"question\": \"Where was [X] born?\"}); "
       "relations without one are asked as \"<subject> <relation label>?\"; a relative DIR not found here is looked up in "
       "the shipped data: `questions` names kglm's own)")
      ("context", po::value(&context)->default_value("paragraph"),
       "the context of a question: the aligned sentence's paragraph, or the sentence")
      ("kinds", po::value(&kinds)->default_value("item,time,string,monolingualtext"),
       "statement kinds to ask about, comma-separated (quantities are not asked)")
      ("all-sections", po::bool_switch(&o.all_sections), "align to every section, not only the lead")
      ("locale", po::value(&locale), "locale of the sentence-break rules (default: LANG)");
  // clang-format on
  if (!cli.parse(argc, argv)) return 0;
  cli.require_output();
  cli.require_inputs();
  o.qa = true;
  o.qualifiers = false;  // a sub-triple has no question of its own
  o.replace_pronoun = false;
  o.kinds = kg::parse_fact_kinds(kinds);
  o.locale = locale.empty() ? o.lang : locale;
  if (context != "paragraph" && context != "sentence")
    throw UsageError("--context is paragraph or sentence, not '" + context + "'");
  o.qa_sentence_context = context == "sentence";
  o.questions = find_data_path(o.questions, "questions");
  fill_run_options(cli.common(), 1, o);
  report_stats(cli.common(), gen::align_kg(o));
  return 0;
}

int ner_main(int argc, char** argv) {
  ToolCli cli("kg-align ner", "kg-align ner --kg kg.h5 [options] -o OUT.panx DOCS.jsonl...",
              "Silver NER data as WikiANN made it: the links of wiki-extract documents resolved to KG items through\n"
              "the wiki's sitelinks, typed by the nearest root class of their P31/P279 chain (PER, ORG, LOC by\n"
              "default), later mentions of typed names in the same article propagated; BIO-tagged words in PAN-X\n"
              "format (LANG:word<TAB>tag, a blank line after each sentence).");
  gen::SilverNerOptions o;
  std::vector<std::string> types;
  std::string split_unit;
  bool no_propagate = false;
  // clang-format off
  cli.add()
      ("kg", po::value(&o.kg)->required(), "the KG store (wd-extract, with the wiki's sitelinks and P31/P279)")
      ("redirects", po::value(&o.redirects), "wiki-extract's redirects table, to resolve links to redirects")
      ("lang", po::value(&o.lang)->default_value("en"),
       "the documents' language: the PAN-X prefix, and the sentence and word rules")
      ("site", po::value(&o.site), "the sitelinks that resolve link targets (default: LANG + wiki, e.g. dewiki)")
      ("type", po::value(&types)->composing(),
       "TAG=Q1,Q2,...: a tag and its root classes, repeatable, earlier tags winning ties (default: PER, ORG, LOC "
       "as in man 1 kg-align)")
      ("max-depth", po::value(&o.max_depth)->default_value(10), "P279 steps from a root class at most")
      ("min-entities", po::value(&o.min_entities)->default_value(1), "keep sentences with at least N entities")
      ("max-words", po::value(&o.max_words)->default_value(128), "keep sentences with at most N words")
      ("no-propagate", po::bool_switch(&no_propagate), "tag linked mentions only")
      ("split-dir", po::value(&o.split_dir),
       "deal documents to DIR/train.panx, dev.panx and test.panx (by a seeded hash of their id) instead of -o")
      ("dev-share", po::value(&o.dev_share)->default_value(0.1), "--split-dir: the documents' share in dev")
      ("test-share", po::value(&o.test_share)->default_value(0.1), "--split-dir: the documents' share in test")
      ("split-unit", po::value(&split_unit)->default_value("document"),
       "--split-dir deals whole documents (no article in two splits), or single sentences");
  // clang-format on
  if (!cli.parse(argc, argv)) return 0;
  if (o.split_dir.empty()) cli.require_output();
  cli.require_inputs();
  if (!types.empty()) {
    o.types.clear();
    for (const std::string& t : types) {  // a tag given twice gathers both lists of roots
      gen::TypeRoot root = gen::parse_type_root(t);
      auto same = std::find_if(o.types.begin(), o.types.end(), [&](const auto& r) { return r.tag == root.tag; });
      if (same == o.types.end())
        o.types.push_back(std::move(root));
      else
        same->classes.insert(same->classes.end(), root.classes.begin(), root.classes.end());
    }
  }
  o.propagate = !no_propagate;
  if (split_unit != "document" && split_unit != "sentence")
    throw UsageError("--split-unit is document or sentence, not '" + split_unit + "'");
  o.split_sentences = split_unit == "sentence";
  fill_run_options(cli.common(), 1, o);
  report_stats(cli.common(), gen::generate_silver_ner(o));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "ner")
    return run_tool("kg-align ner", [&] { return ner_main(argc - 1, argv + 1); });
  if (argc > 1 && std::string_view(argv[1]) == "qa")
    return run_tool("kg-align qa", [&] { return qa_main(argc - 1, argv + 1); });
  return run_tool("kg-align", [&] { return align_main(argc, argv); });
}
