// KMLM's synthetic sentences from KG triples (Liu et al. 2022, §3.1): code-switched
// "h [mask] r [mask] t." sentences, parallel renderings and alias-replaced variants. The tool in
// bin/ (cs-gen kmlm) only parses options and calls generate_kmlm().
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/cli.hpp"
#include "core/shard.hpp"
#include "core/stats.hpp"

namespace kglm::gen {

struct KmlmOptions : RunOptions {
  enum class Mode { code_switch, parallel };
  std::string kg;
  Mode mode = Mode::code_switch;
  std::vector<std::string> langs;  // target languages; English is the source and is skipped here
  bool all_pairs = false;          // code-switch into every language, not one drawn per triple
  double switch_prob = 0.5;
  bool alias = false;                                       // also alias-replaced records
  const std::unordered_set<uint64_t>* relations = nullptr;  // P numbers kept (nullptr: all)
  const std::unordered_set<uint64_t>* entities = nullptr;   // Q numbers kept as subject and object
  uint64_t max_per_subject = 0;                             // 0: no cap
  std::string split_dir;                                    // one file per language
  bool plain = false;                                       // text lines instead of JSONL
  Shard shard;            // --shard I/N: the rows [I*R/N, (I+1)*R/N) of the store's R triples
  std::string shard_run;  // the part's run identity, recorded beside it (core/shard.hpp)
};

// Throws Error on an unusable store; returns the statistics.
Stats generate_kmlm(const KmlmOptions& options);

}  // namespace kglm::gen
