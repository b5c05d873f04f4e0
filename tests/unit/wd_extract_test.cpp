#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "kg/entity_index.hpp"
#include "kg/kg_store.hpp"
#include "kg/wd_extract.hpp"
#include "test_paths.hpp"

namespace kglm::kg {
namespace {

ExtractOptions sample_options(const test::ScratchDir& dir) {
  ExtractOptions o;
  o.inputs = {std::string(KGLM_SOURCE_DIR) + "/data/wikidata-sample.json"};
  o.output = dir.file("kg.h5");
  o.parse.all_langs = true;
  o.parse.sites = {"enwiki"};
  return o;
}

std::string label_of(const KgStore& store, const std::string& lang, uint32_t entity) {
  TermTable t = store.terms("labels", lang);
  for (size_t i = 0; i < t.entity.size(); ++i) {
    if (t.entity[i] == entity) return std::string(t.text[i]);
  }
  return "";
}

// The embedded sample: the store holds what the sample's facts say.
TEST(EntityIndex, RowsByKeyWithItemsAndPropertiesApart) {
  kg::EntityIndex index;
  // Keys of 64 bits (a property's has the top bit), rows beyond 16 bits, and many of them.
  for (uint32_t i = 0; i < 300000; ++i) {
    EXPECT_TRUE(index.insert(kg::entity_key(kg::EntityType::item, uint64_t{i} * 7919 + 42), i + 70000).second);
    if (i % 1000 == 0) {
      EXPECT_TRUE(index.insert(kg::entity_key(kg::EntityType::property, uint64_t{i} * 7919 + 42), i).second);
    }
  }
  EXPECT_EQ(index.size(), 300300u);
  const auto again = index.insert(kg::entity_key(kg::EntityType::item, 5 * 7919 + 42), 1);
  EXPECT_EQ(again, std::make_pair(uint32_t{70005}, false));  // the first row stays
  EXPECT_EQ(index.find(kg::entity_key(kg::EntityType::item, 299999ull * 7919 + 42)), 299999u + 70000);
  EXPECT_EQ(index.find(kg::entity_key(kg::EntityType::property, 2000ull * 7919 + 42)), 2000u);
  EXPECT_FALSE(index.find(kg::entity_key(kg::EntityType::property, 5 * 7919 + 42)));
  EXPECT_FALSE(index.find(kg::entity_key(kg::EntityType::item, 43)));
}

TEST(WdExtract, SampleStoreHoldsTheFacts) {
  test::ScratchDir dir;
  Stats stats = extract_kg(sample_options(dir));
  KgStore store(dir.file("kg.h5"));
  EXPECT_EQ(store.entity_count(), static_cast<uint64_t>(stats.get("items") + stats.get("properties")));
  std::vector<std::string> ids = store.entity_ids();
  std::map<std::string, uint32_t> row;
  for (size_t i = 0; i < ids.size(); ++i) row[ids[i]] = static_cast<uint32_t>(i);
  EXPECT_EQ(label_of(store, "ja", row.at("Q90")), "パリ");
  EXPECT_EQ(label_of(store, "de", row.at("Q183")), "Deutschland");

  std::vector<uint64_t> rel = store.relation_numbers();
  std::vector<int64_t> rel_entity = store.relation_entities();
  TripleTable t = store.triples();
  bool paris_capital_of_france = false;
  for (size_t i = 0; i < t.subject.size(); ++i) {
    ASSERT_LT(t.object[i], store.entity_count());
    ASSERT_LT(t.relation[i], rel.size());
    if (ids[t.subject[i]] == "Q90" && rel[t.relation[i]] == 1376 && ids[t.object[i]] == "Q142")
      paris_capital_of_france = true;
  }
  EXPECT_TRUE(paris_capital_of_france);
  for (size_t r = 0; r < rel.size(); ++r) {
    ASSERT_GE(rel_entity[r], 0) << "P" << rel[r] << " has no property entity in the sample";
    EXPECT_EQ(ids[rel_entity[r]], "P" + std::to_string(rel[r]));
  }
  EXPECT_EQ(stats.get("deprecated_skipped"), 1);
  EXPECT_EQ(stats.get("novalue_skipped"), 1);
  EXPECT_GT(stats.get("qualifiers"), 0);
  Provenance p = h5::read_provenance(store.root());
  EXPECT_EQ(p.tool, "wd-extract");
}

// The sample is big enough for later stages: the item graph has 3-cycles and 4-cycles with a diagonal.
TEST(WdExtract, SampleGraphHasCycles) {
  test::ScratchDir dir;
  extract_kg(sample_options(dir));
  TripleTable t = KgStore(dir.file("kg.h5")).triples();
  std::set<std::pair<uint32_t, uint32_t>> edges;
  for (size_t i = 0; i < t.subject.size(); ++i) {
    if (t.subject[i] != t.object[i]) edges.insert(std::minmax(t.subject[i], t.object[i]));
  }
  std::map<uint32_t, std::set<uint32_t>> adj;
  for (auto [a, b] : edges) {
    adj[a].insert(b);
    adj[b].insert(a);
  }
  size_t triangles = 0;
  std::set<std::set<uint32_t>> diamonds;  // 4-node sets with a 4-cycle and a diagonal (a-b)
  for (auto [a, b] : edges) {
    std::vector<uint32_t> common;
    for (uint32_t c : adj[a]) {
      if (adj[b].count(c)) common.push_back(c);
    }
    for (uint32_t c : common) triangles += c > b;
    for (size_t i = 0; i < common.size(); ++i) {
      for (size_t j = i + 1; j < common.size(); ++j) diamonds.insert({a, b, common[i], common[j]});
    }
  }
  EXPECT_EQ(triangles, 144u);  // the sample as written by data/make-sample.py
  EXPECT_EQ(diamonds.size(), 271u);
}

TEST(WdExtract, ThreadsAndShardsGiveTheSameStore) {
  KGLM_REQUIRE_FIXTURES();
  test::ScratchDir dir;
  ExtractOptions o;
  // Line dumps, API responses and single-entity documents (Q42 twice: the first one wins).
  o.inputs = {test::fixture("wikidata/wdtk-mock-dump-with-bugs.json"),
              test::fixture("wikidata/wbgetentities-Q6-Q42-P31.json"), test::fixture("wikidata/Q42.json"),
              test::fixture("xfactr-kg-dev.json.gz"), test::fixture("wikidata/Q34987-item.json")};
  o.parse.all_langs = true;
  o.batch_bytes = 1 << 20;
  o.threads = 1;
  o.output = dir.file("one.h5");
  Stats one = extract_kg(o);
  o.threads = 3;
  o.output = dir.file("three.h5");
  extract_kg(o);
  o.threads = 2;
  std::vector<std::string> parts;
  for (uint32_t i = 0; i < 2; ++i) {
    o.shard = {i, 2};
    o.shard_run = "run-a";
    o.output = dir.file("part" + std::to_string(i) + ".h5");
    parts.push_back(o.output);
    extract_kg(o);
  }
  Stats merged = merge_kg(parts, dir.file("merged.h5"), "", "test");
  EXPECT_GE(one.get("duplicate_entities"), 1);  // Q42, and properties in both the mock and dev dumps
  EXPECT_EQ(merged.get("duplicate_entities"), one.get("duplicate_entities"));
  EXPECT_EQ(merged.get("errors"), one.get("errors"));
  EXPECT_EQ(merged.get("item_triples"), one.get("item_triples"));
  for (const char* name : {"three.h5", "merged.h5"}) {
    KgStore a(dir.file("one.h5")), b(dir.file(name));
    EXPECT_EQ(a.entity_numbers(), b.entity_numbers()) << name;
    EXPECT_EQ(a.relation_numbers(), b.relation_numbers()) << name;
    TripleTable ta = a.triples(), tb = b.triples();
    EXPECT_EQ(ta.subject, tb.subject) << name;
    EXPECT_EQ(ta.object, tb.object) << name;
    EXPECT_EQ(ta.relation, tb.relation) << name;
    EXPECT_EQ(a.keys("labels"), b.keys("labels")) << name;
    for (const auto& lang : a.keys("aliases")) {
      TermTable x = a.terms("aliases", lang), y = b.terms("aliases", lang);
      EXPECT_EQ(x.entity, y.entity) << name << " " << lang;
      EXPECT_EQ(x.text.blob, y.text.blob) << name << " " << lang;
    }
  }
  EXPECT_THROW(KgStore(dir.file("part0.h5")), Error);  // a shard store is not a KG store yet

  // A merge takes exactly shards 0..N-1 of one run: not a part short, twice, or of another run.
  auto refused = [&](const std::vector<std::string>& set, const std::string& why) {
    try {
      merge_kg(set, dir.file("bad.h5"), "", "test");
      ADD_FAILURE() << "merged: " << why;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(dir.file("bad.h5")));
  };
  refused({parts[0]}, "1 of 2 parts given; missing shard 1");
  refused({parts[0], parts[1], parts[1]}, "shard 1/2 a second time (also " + parts[1] + ")");
  o.shard = {1, 2};
  o.shard_run = "run-b";
  o.output = dir.file("other-run.h5");
  extract_kg(o);
  refused({parts[0], o.output}, "a shard of another run than " + parts[0]);
  o.shard = {1, 3};
  o.output = dir.file("of-three.h5");
  extract_kg(o);
  refused({parts[0], o.output}, "parts of two shard counts");
}

TEST(WdExtract, ByteOrderMarkAndCrLfLineEndings) {
  test::ScratchDir dir;
  std::string sample = test::read_file(std::string(KGLM_SOURCE_DIR) + "/data/wikidata-sample.json");
  std::string crlf = "\xEF\xBB\xBF";
  for (char c : sample) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  std::ofstream(dir.file("bom.json"), std::ios::binary) << crlf;
  ExtractOptions o = sample_options(dir);
  Stats plain = extract_kg(o);
  o.inputs = {dir.file("bom.json")};
  o.output = dir.file("bom.h5");
  Stats bom = extract_kg(o);
  EXPECT_EQ(bom.get("errors"), 0);
  EXPECT_EQ(bom.get("items"), plain.get("items"));
  EXPECT_EQ(bom.get("item_triples"), plain.get("item_triples"));
  EXPECT_EQ(bom.get("labels_ja"), plain.get("labels_ja"));
}

TEST(WdExtract, IdListsAndShardSpecs) {
  test::ScratchDir dir;
  std::ofstream(dir.file("ids.txt")) << "# Wikidata5M-style list\nQ1\tuniverse\nQ42\n\nQ5 extra\n";
  EXPECT_EQ(read_id_list(dir.file("ids.txt"), EntityType::item), (std::unordered_set<uint64_t>{1, 42, 5}));
  std::ofstream(dir.file("bad.txt")) << "Q1\nP31\n";
  try {
    read_id_list(dir.file("bad.txt"), EntityType::item);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.txt:2:"), std::string::npos) << e.what();
  }
  const Shard shard = parse_shard("3/8");
  EXPECT_EQ(shard.index, 3u);
  EXPECT_EQ(shard.count, 8u);
  for (const char* bad : {"8/8", "1/0", "x", "-1/4", "1/4x"}) EXPECT_THROW(parse_shard(bad), UsageError) << bad;
}

}  // namespace
}  // namespace kglm::kg
