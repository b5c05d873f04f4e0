// extract_wiki() on the embedded demo dump (data/enwiki-sample.xml), which needs no fixtures.
#include <gtest/gtest.h>

#include <sstream>

#include "test_paths.hpp"
#include "text/document.hpp"
#include "text/wiki_extract.hpp"

using namespace kglm;
using namespace kglm::text;

namespace {

const std::string kSample = std::string(KGLM_SOURCE_DIR) + "/data/enwiki-sample.xml";

std::vector<Document> read_docs(const std::string& path) {
  std::vector<Document> docs;
  std::istringstream in(test::read_file(path));
  for (std::string line; std::getline(in, line);) docs.push_back(parse_document_json(line));
  return docs;
}

WikiExtractOptions options(const test::ScratchDir& dir, const std::string& name) {
  WikiExtractOptions o;
  o.inputs = {kSample};
  o.output = dir.file(name);
  o.quiet = true;
  return o;
}

}  // namespace

TEST(WikiExtract, DemoSample) {
  test::ScratchDir dir;
  WikiExtractOptions o = options(dir, "docs.jsonl");
  o.redirects = dir.file("redirects.tsv");
  Stats stats = extract_wiki(o);
  EXPECT_EQ(stats.get("pages"), 30);
  EXPECT_EQ(stats.get("articles"), 18);
  EXPECT_EQ(stats.get("redirects"), 10);
  EXPECT_EQ(stats.get("errors"), 0);
  auto docs = read_docs(o.output);
  ASSERT_EQ(docs.size(), 18u);
  const Document& einstein = docs[0];
  EXPECT_EQ(einstein.title, "Albert Einstein");
  EXPECT_EQ(einstein.id, "101");
  EXPECT_EQ(
      einstein.text.substr(0, einstein.root_end).find("He was born in Ulm, in Germany, and studied at ETH Zurich."),
      130u);
  bool ulm = false;
  for (const Link& l : einstein.links)
    ulm |= l.target == "Ulm" && einstein.text.substr(l.begin, l.end - l.begin) == "Ulm";
  EXPECT_TRUE(ulm);
  ASSERT_EQ(einstein.sections.size(), 6u);
  EXPECT_EQ(einstein.sections[1].title, "Early life");
  EXPECT_EQ(einstein.sections[1].level, 3);
  std::string redirects = test::read_file(o.redirects);
  EXPECT_EQ(redirects.substr(0, 10), "# from\tto\n");
  EXPECT_NE(redirects.find("\nMaria Skłodowska\tMarie Curie\n"), std::string::npos);
  EXPECT_NE(redirects.find("\nETH Zürich\tETH Zurich\n"), std::string::npos);
}

TEST(WikiExtract, NamespacesThreadsAndSentences) {
  test::ScratchDir dir;
  WikiExtractOptions o = options(dir, "all.jsonl");
  o.namespaces = {0, 1, 14};
  EXPECT_EQ(extract_wiki(o).get("articles"), 20);
  WikiExtractOptions one = options(dir, "s1.jsonl"), two = options(dir, "s2.jsonl");
  one.sentences = two.sentences = true;
  one.batch_bytes = two.batch_bytes = 2048;  // many batches
  two.threads = 2;
  Stats s1 = extract_wiki(one);
  extract_wiki(two);
  EXPECT_EQ(test::read_file(one.output), test::read_file(two.output));
  EXPECT_GT(s1.get("sentences"), 80);
  std::string sentences = test::read_file(one.output);
  EXPECT_NE(sentences.find("\"text\":\"He was born in Ulm, in Germany, and studied at ETH Zurich.\","
                           "\"links\":[[15,18,\"Ulm\"],[23,30,\"Germany\"],[47,57,\"ETH Zurich\"]]"),
            std::string::npos);
}
