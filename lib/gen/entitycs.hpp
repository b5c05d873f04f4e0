// The EntityCS corpus (Whitehouse et al. 2022, §2.1): English Wikipedia sentences whose linked
// entities are all switched into one target language, with <e>…</e> entity markers. The tool in
// bin/ (cs-gen entitycs) only parses options and calls generate_entitycs().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/cli.hpp"
#include "core/stats.hpp"

namespace kglm::gen {

struct EntityCsOptions : RunOptions {
  std::string kg;
  std::string redirects;           // wiki-extract --redirects table, optional
  std::vector<std::string> langs;  // candidate target languages (English excluded)
  uint32_t min_links = 1;          // sentence filters (EntityCS: >= 1 link, <= 128 words, <= 10 links)
  uint32_t max_words = 128;
  uint32_t max_links = 10;
  uint32_t max_cs = 5;  // code-switched copies per English sentence
  std::string locale = "en";
  std::string split_dir;
  bool plain = false;  // marked sentences, one per line, instead of JSONL
};

Stats generate_entitycs(const EntityCsOptions& options);

}  // namespace kglm::gen
