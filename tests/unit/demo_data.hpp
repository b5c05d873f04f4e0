// The embedded demo data (data/) as the generator tests use it: the KG store from wd-extract and
// the documents and redirects from wiki-extract, built in a scratch directory.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "kg/wd_extract.hpp"
#include "test_paths.hpp"
#include "text/wiki_extract.hpp"

namespace kglm::test {

// The demo KG and documents, built once per test in a scratch directory.
struct Demo {
  ScratchDir& dir;
  std::string kg = dir.file("kg.h5");
  std::string docs = dir.file("docs.jsonl");
  std::string redirects = dir.file("redirects.tsv");

  explicit Demo(ScratchDir& d) : dir(d) {
    kg::ExtractOptions k;
    k.inputs = {std::string(KGLM_SOURCE_DIR) + "/data/wikidata-sample.json"};
    k.output = kg;
    k.parse.all_langs = true;
    k.parse.sites = {"enwiki"};
    kg::extract_kg(k);
    text::WikiExtractOptions w;
    w.inputs = {std::string(KGLM_SOURCE_DIR) + "/data/enwiki-sample.xml"};
    w.output = docs;
    w.redirects = redirects;
    w.quiet = true;
    text::extract_wiki(w);
  }
};

inline std::vector<std::string> lines(const std::string& path) {
  std::vector<std::string> out;
  std::istringstream in(read_file(path));
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace kglm::test
