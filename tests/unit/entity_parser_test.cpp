#include <gtest/gtest.h>

#include <map>

#include "core/error.hpp"
#include "kg/entity_parser.hpp"
#include "test_paths.hpp"

namespace kglm::kg {
namespace {

ParseOptions all_options() {
  ParseOptions o;
  o.all_langs = true;
  o.all_sites = true;
  return o;
}

ParseResult parse(const std::string& json, const ParseOptions& o) {
  EntityParser parser(o);
  ParseResult r;
  parser.parse(json, r);
  return r;
}

// Q42's terms and claims counted with simdjson's DOM API, independently of the parser under test.
TEST(EntityParser, Q42MatchesAnIndependentCount) {
  KGLM_REQUIRE_FIXTURES();
  const std::string json = test::read_file(test::fixture("wikidata/Q42.json"));
  simdjson::dom::parser dom;
  simdjson::dom::element doc = dom.parse(json);
  size_t labels = doc["labels"].get_object().size();
  size_t descriptions = doc["descriptions"].get_object().size();
  size_t sitelinks = doc["sitelinks"].get_object().size();
  size_t aliases = 0;
  for (auto [lang, list] : doc["aliases"].get_object()) aliases += list.get_array().size();
  std::map<std::string, size_t> by_type;
  size_t qualifiers = 0, special = 0;
  for (auto [prop, statements] : doc["claims"].get_object()) {
    for (auto st : statements.get_array()) {
      if (std::string_view(st["rank"]) == "deprecated") continue;
      if (std::string_view(st["mainsnak"]["snaktype"]) != "value") {
        ++special;
        continue;
      }
      std::string_view type = st["mainsnak"]["datavalue"]["type"];
      std::string_view datatype = st["mainsnak"]["datatype"];
      by_type[std::string(datatype == "external-id" ? "external-id" : type)]++;
      simdjson::dom::object quals;
      if (st["qualifiers"].get(quals) == simdjson::SUCCESS) {
        for (auto [qp, snaks] : quals) {
          for (auto q : snaks.get_array()) qualifiers += std::string_view(q["snaktype"]) == "value";
        }
      }
    }
  }

  ParseResult r = parse(json, all_options());
  ASSERT_EQ(r.status, ParseStatus::kept) << r.reason;
  const EntityRecord& e = r.record;
  EXPECT_EQ(e.type, EntityType::item);
  EXPECT_EQ(e.number, 42u);
  EXPECT_EQ(e.labels.size(), labels);
  EXPECT_EQ(labels, 138u);  // as the fixture README says
  EXPECT_EQ(e.descriptions.size(), descriptions);
  EXPECT_EQ(e.aliases.size(), aliases);
  EXPECT_EQ(e.sitelinks.size(), sitelinks);
  EXPECT_EQ(e.sitelink_total, sitelinks);
  std::map<std::string, size_t> got;
  size_t got_qualifiers = 0;
  for (const auto& st : e.statements) {
    ValueType t = st.value.type;
    std::string key = t == ValueType::item || t == ValueType::property ? "wikibase-entityid"
                      : t == ValueType::globe_coordinate               ? "globecoordinate"
                                                                       : value_type_name(t);
    got[key]++;
    got_qualifiers += st.qualifiers.size();
  }
  EXPECT_EQ(got, by_type);
  EXPECT_EQ(got_qualifiers, qualifiers);
  EXPECT_EQ(r.counts.novalue + r.counts.somevalue, special);

  // Label values themselves.
  auto label = [&](const std::string& lang) {
    for (const auto& t : e.labels) {
      if (t.lang == lang) return std::string(t.text);
    }
    return std::string("<none>");
  };
  EXPECT_EQ(label("en"), std::string(doc["labels"]["en"]["value"]));
  EXPECT_EQ(label("ru"), std::string(doc["labels"]["ru"]["value"]));
}

TEST(EntityParser, LanguageAndSiteFiltersAndValueShapes) {
  const std::string json =
      R"J({"type":"item","id":"Q7","labels":{"en":{"language":"en","value":"seven"},"xx":{"language":"xx","value":"?"}},
    "sitelinks":{"enwiki":{"site":"enwiki","title":"7 (number)"},"dewiki":{"site":"dewiki","title":"Sieben"}},
    "claims":{"P2048":[{"mainsnak":{"snaktype":"value","property":"P2048","datavalue":{"value":{"amount":"+1.96","unit":"http://www.wikidata.org/entity/Q11573","upperBound":"+1.97","lowerBound":"+1.95"},"type":"quantity"},"datatype":"quantity"},"rank":"preferred"}],
    "P569":[{"mainsnak":{"snaktype":"value","property":"P569","datavalue":{"value":{"time":"+1952-03-11T00:00:00Z","timezone":0,"before":0,"after":0,"precision":11,"calendarmodel":"http://www.wikidata.org/entity/Q1985727"},"type":"time"}},"rank":"normal"}],
    "P625":[{"mainsnak":{"snaktype":"value","property":"P625","datavalue":{"value":{"latitude":52.5,"longitude":13,"altitude":null,"precision":null,"globe":"http://www.wikidata.org/entity/Q2"},"type":"globecoordinate"}},"rank":"normal"}],
    "P1559":[{"mainsnak":{"snaktype":"value","property":"P1559","datavalue":{"value":{"text":"Sieben","language":"de"},"type":"monolingualtext"}},"rank":"normal"}],
    "P214":[{"mainsnak":{"snaktype":"value","property":"P214","datavalue":{"value":"113230702","type":"string"},"datatype":"external-id"},"rank":"normal"}],
    "P5":[{"mainsnak":{"snaktype":"value","property":"P5","datavalue":{"value":{"entity-type":"lexeme","id":"L1"},"type":"wikibase-entityid"}},"rank":"normal"}],
    "P31":[{"mainsnak":{"snaktype":"value","property":"P31","datavalue":{"value":{"entity-type":"item","numeric-id":5},"type":"wikibase-entityid"}},"rank":"deprecated"},
           {"mainsnak":{"snaktype":"somevalue","property":"P31"},"rank":"normal"}]}})J";
  ParseOptions o;
  o.langs = {"en"};
  o.sites = {"enwiki"};
  ParseResult r = parse(json, o);
  ASSERT_EQ(r.status, ParseStatus::kept) << r.reason;
  ASSERT_EQ(r.record.labels.size(), 1u);
  EXPECT_EQ(r.record.sitelinks.size(), 1u);
  EXPECT_EQ(r.record.sitelink_total, 2u);
  ASSERT_EQ(r.record.statements.size(), 5u);
  const Value& q = r.record.statements[0].value;
  EXPECT_EQ(q.type, ValueType::quantity);
  EXPECT_EQ(q.text, "+1.96");
  EXPECT_EQ(q.number, 11573u);
  EXPECT_EQ(q.lower, "+1.95");
  EXPECT_EQ(r.record.statements[0].rank, Rank::preferred);
  const Value& t = r.record.statements[1].value;
  EXPECT_EQ(t.type, ValueType::time);
  EXPECT_EQ(t.precision, 11);
  EXPECT_EQ(t.number, 1985727u);
  const Value& g = r.record.statements[2].value;
  EXPECT_EQ(g.type, ValueType::globe_coordinate);
  EXPECT_DOUBLE_EQ(g.longitude, 13.0);
  EXPECT_EQ(g.number, 2u);
  EXPECT_EQ(r.record.statements[3].value.lower, "de");
  EXPECT_EQ(r.record.statements[4].value.type, ValueType::external_id);
  EXPECT_EQ(r.counts.unsupported_value, 1u);
  EXPECT_EQ(r.counts.deprecated, 1u);
  EXPECT_EQ(r.counts.somevalue, 1u);
  o.keep_deprecated = true;
  EXPECT_EQ(parse(json, o).record.statements.size(), 6u);
}

TEST(EntityParser, MalformedEntitiesAreErrorsWithTheirField) {
  const ParseOptions o = all_options();
  struct Case {
    const char* json;
    const char* reason;
  } cases[] = {
      {R"({"type":"item","id":"Q1","labels":[]})", "labels"},
      {R"({"type":"item","id":"Q1","claims":[]})", "claims"},
      {R"({"type":"item","id":"Q1","labels":{"en":{"language":"en","value":"x"})", ""},  // truncated
      {"{\"type\":\"item\",\"id\":\"Q1\",\"labels\":{\"en\":{\"language\":\"en\",\"value\":\"\xff\xfe\"}}}",
       ""},  // bad UTF-8
      {R"({"type":"item","id":"X1"})", "id"},
      {R"({"type":"item","labels":{}})", "without id"},
      {R"({"type":"property","id":"Q5"})", "does not match"},
      {R"({"type":"item","id":"Q1","claims":{"P31":[{"mainsnak":{"snaktype":"value","property":"P31","datavalue":{"value":{"amount":5},"type":"quantity"}},"rank":"normal"}]}})",
       "claims.P31"},
      {R"({"type":"item","id":"Q1","claims":{"P31":[{"rank":"normal"}]}})", "mainsnak"},
      {R"({"type":"item","id":"Q1","claims":{"P31":[{"mainsnak":{"snaktype":"value","property":"P31","datavalue":{"value":"x","type":"string"}},"rank":"odd"}]}})",
       "rank"},
      {R"([1,2,3])", ""},
  };
  for (const auto& c : cases) {
    ParseResult r = parse(c.json, o);
    EXPECT_EQ(r.status, ParseStatus::error) << c.json;
    EXPECT_NE(r.reason.find(c.reason), std::string::npos) << c.json << " -> " << r.reason;
  }
}

TEST(EntityParser, LexemesMediaInfoAndFilters) {
  KGLM_REQUIRE_FIXTURES();
  ParseOptions o = all_options();
  ParseResult r = parse(test::read_file(test::fixture("wikidata/L3354-lexeme.json")), o);
  EXPECT_EQ(r.status, ParseStatus::skipped);
  EXPECT_EQ(r.reason, "skipped_lexeme");
  EXPECT_EQ(parse(R"({"type":"mediainfo","id":"M5"})", o).reason, "skipped_mediainfo");
  std::unordered_set<uint64_t> items = {1};
  o.items = &items;
  EXPECT_EQ(parse(test::read_file(test::fixture("wikidata/Q42.json")), o).reason, "skipped_entity_filter");
  o.items = nullptr;
  o.min_sitelinks = 1000;
  EXPECT_EQ(parse(test::read_file(test::fixture("wikidata/Q42.json")), o).reason, "skipped_min_sitelinks");
  ParseResult p = parse(test::read_file(test::fixture("wikidata/P279.json")), o);
  ASSERT_EQ(p.status, ParseStatus::kept) << p.reason;  // min-sitelinks applies to items only
  EXPECT_EQ(p.record.type, EntityType::property);
  EXPECT_EQ(p.record.labels.size(), 112u);
}

TEST(EntityParser, OldFormatNumericIdOnly) {
  KGLM_REQUIRE_FIXTURES();
  std::ifstream in(test::fixture("wikidata/wdtk-mock-dump.json"));
  std::string line;
  std::getline(in, line);
  std::getline(in, line);
  line.pop_back();  // trailing comma
  ParseResult r = parse(line, all_options());
  ASSERT_EQ(r.status, ParseStatus::kept) << r.reason;
  ASSERT_FALSE(r.record.statements.empty());
  EXPECT_EQ(r.record.statements[0].value.type, ValueType::item);
  EXPECT_EQ(r.record.statements[0].value.number, 1454986u);
}

TEST(EntitySerialization, RoundTripsAndRejectsCorruption) {
  KGLM_REQUIRE_FIXTURES();
  ParseResult r = parse(test::read_file(test::fixture("wikidata/Q42.json")), all_options());
  std::string bytes;
  serialize(r.record, bytes);
  std::string again;
  StringArena arena;
  serialize(deserialize(bytes, arena), again);
  EXPECT_EQ(again, bytes);
  EXPECT_THROW(deserialize(bytes.substr(0, bytes.size() / 2), arena), Error);
  EXPECT_THROW(deserialize(bytes + "x", arena), Error);
}

}  // namespace
}  // namespace kglm::kg
