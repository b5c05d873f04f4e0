// cs-gen's library on the embedded demo data (data/): KG store from wd-extract, documents from
// wiki-extract. Needs no fixtures; the rules at scale are checked by tests/cli/cs-gen.sh.
#include <gtest/gtest.h>

#include <simdjson.h>

#include <sstream>

#include "core/error.hpp"
#include "demo_data.hpp"
#include "gen/annotated_text.hpp"
#include "gen/entitycs.hpp"
#include "gen/kmlm.hpp"
#include "gen/language_codes.hpp"
#include "gen/languages.hpp"
#include "kg/wd_extract.hpp"
#include "test_paths.hpp"
#include "text/wiki_extract.hpp"

using namespace kglm;

namespace {

std::string field(const std::string& line, const char* name) {
  simdjson::dom::parser parser;
  std::string_view value;
  if (parser.parse(line)[name].get(value) != simdjson::SUCCESS) return {};
  return std::string(value);
}

}  // namespace

TEST(Languages, Lists) {
  EXPECT_EQ(gen::xlmr_languages().size(), 94u);  // 93 besides English, as in EntityCS
  EXPECT_EQ(gen::parse_language_list("fr, de,fr"), (std::vector<std::string>{"fr", "de"}));
  EXPECT_THROW(gen::parse_language_list("fr,,de"), UsageError);
}

TEST(AnnotatedText, SpansMarkersAndJson) {
  gen::AnnotatedText t;
  t.append("Born in ");
  t.append_span("Ulm", "entity", "Q3820");
  t.append(" [");
  t.append_span("x", "link", "");
  t.append("].");
  EXPECT_EQ(t.with_entity_markers(), "Born in <e>Ulm</e> [x].");
  std::string json;
  t.append_json(json, "en", ",\"id\":1");
  EXPECT_EQ(json,
            "{\"text\":\"Born in Ulm [x].\",\"lang\":\"en\",\"spans\":[[8,11,\"entity\",\"Q3820\"],"
            "[13,14,\"link\",\"\"]],\"id\":1}\n");
}

TEST(Kmlm, DemoTriplesAndDeterminism) {
  test::ScratchDir dir;
  test::Demo demo(dir);
  gen::KmlmOptions o;
  o.kg = demo.kg;
  o.langs = {"de", "fr", "ja"};
  o.all_pairs = true;
  o.output = dir.file("a.jsonl");
  Stats stats = gen::generate_kmlm(o);
  EXPECT_EQ(stats.get("triples_selected"), 524);
  EXPECT_EQ(stats.get("records"), 3 * 524);
  EXPECT_GT(stats.get("switched.relation"), 0);  // the demo KG has property labels in these languages
  o.threads = 2;
  o.output = dir.file("b.jsonl");
  gen::generate_kmlm(o);
  EXPECT_EQ(test::read_file(dir.file("a.jsonl")), test::read_file(dir.file("b.jsonl")));
  o.seed = 9;
  o.output = dir.file("c.jsonl");
  gen::generate_kmlm(o);
  EXPECT_NE(test::read_file(dir.file("a.jsonl")), test::read_file(dir.file("c.jsonl")));
}

TEST(EntityCs, DemoSentencesRedirectsAndCapitalisation) {
  test::ScratchDir dir;
  test::Demo demo(dir);
  gen::EntityCsOptions o;
  o.kg = demo.kg;
  o.redirects = demo.redirects;
  o.langs = {"de", "fr", "ja", "zh", "ko", "ru", "ar", "es"};
  o.inputs = {demo.docs};
  o.output = dir.file("ecs.jsonl");
  Stats stats = gen::generate_entitycs(o);
  EXPECT_GT(stats.get("links_resolved_via_redirect"), 0);
  EXPECT_EQ(stats.get("max_cs_per_sentence"), 5);
  // "[[Einstein|Albert Einstein]] was born in Ulm in 1879." resolves Einstein through the redirect.
  bool found = false;
  for (const std::string& line : test::lines(o.output)) {
    if (field(line, "en_sentence") != "<e>Albert Einstein</e> was born in Ulm in 1879.") continue;
    if (field(line, "language") == "ja") {
      EXPECT_EQ(field(line, "cs_sentence"), "<e>アルベルト・アインシュタイン</e> was born in Ulm in 1879.");
      found = true;
    }
  }
  EXPECT_TRUE(found);
  // A plain-form document with a lower-case target resolves by capitalising it.
  std::ofstream(dir.file("plain.txt"))
      << "<doc id=\"1\" title=\"T\">\nHe lived in [[berlin|Berlin]] for years.\n</doc>\n";
  o.inputs = {dir.file("plain.txt")};
  o.output = dir.file("plain.jsonl");
  stats = gen::generate_entitycs(o);
  EXPECT_EQ(stats.get("links_resolved_via_capitalisation"), 1);
  auto records = test::lines(o.output);
  ASSERT_EQ(records.size(), 6u);  // English + 5 of the 8 languages with a Berlin label
  EXPECT_EQ(field(records[0], "en_sentence"), "He lived in <e>Berlin</e> for years.");
}

TEST(LanguageCodes, AcceptsWikidataCodesAndSuggestsForMistakes) {
  for (const std::string& code : gen::xlmr_languages()) EXPECT_EQ(gen::language_code_problem(code), "") << code;
  for (const char* code : {"en", "yue", "zh-hant", "pt-br", "sr-el", "simple", "be-x-old", "zh-min-nan", "tlh", "szl"})
    EXPECT_EQ(gen::language_code_problem(code), "") << code;
  const std::pair<const char*, const char*> suggested[] = {{"jp", "'ja'"},          {"cn", "'zh'"}, {"gr", "'el'"},
                                                           {"dk", "'da'"},          {"iw", "'he'"}, {"deu", "'de'"},
                                                           {"jp-kana", "'ja-kana'"}};
  for (const auto& [code, hint] : suggested)
    EXPECT_NE(gen::language_code_problem(code).find(std::string("did you mean ") + hint), std::string::npos)
        << code << ": " << gen::language_code_problem(code);
  for (const char* code : {"xx", "EN", "zh_hans", "e", "english", "en--us", "q1"})
    EXPECT_NE(gen::language_code_problem(code), "") << code;
  EXPECT_THROW(gen::parse_language_list("xx,fr"), UsageError);
  EXPECT_EQ(gen::parse_language_list("fr, de,fr").size(), 2u);
}
