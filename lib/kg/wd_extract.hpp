// wd-extract: Wikidata JSON dump (or wbgetentities response) -> KG store, and the merge of shard
// stores. The tool in bin/ only parses options and calls these.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/cli.hpp"
#include "core/shard.hpp"
#include "core/stats.hpp"
#include "kg/entity_parser.hpp"

namespace kglm::kg {

struct ExtractOptions : RunOptions {
  std::string tsv_dir;  // optional TSV tables
  ParseOptions parse;
  Shard shard;                // --shard I/N: keep the entities whose line ordinal % N == I
  std::string shard_run;      // the part's run identity (core/shard.hpp), recorded for the merge
  int compression_level = 1;  // deflate level of the store's columns, 0 = none
};

// Runs the extraction; returns the statistics (also in the store). Throws Error when the input
// is unusable or has more than max_errors bad records.
Stats extract_kg(const ExtractOptions& options);

// Merges shard stores (written with --shard) into one store, equal to a single pass. Refuses a set
// that is not exactly the shards 0..N-1 of one run. `threads` compress the store's chunks.
Stats merge_kg(const std::vector<std::string>& parts, const std::string& output, const std::string& tsv_dir,
               const std::string& command_line, unsigned threads = 1);

// Reads an id list (one Q/P id per line, first tab-separated field; '#' lines and blank lines
// ignored) into numbers of the expected type.
std::unordered_set<uint64_t> read_id_list(const std::string& path, EntityType expected);

}  // namespace kglm::kg
