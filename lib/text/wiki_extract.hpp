// wiki-extract: MediaWiki XML dumps (or WikiExtractor JSON) -> cleaned articles as JSONL or the
// plain [[target|anchor]] form, optionally split into sentences, plus a redirects table. The
// tool in bin/ only parses options and calls extract_wiki().
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/cli.hpp"
#include "core/shard.hpp"
#include "core/stats.hpp"

namespace kglm::text {

struct WikiExtractOptions : RunOptions {
  enum class Input { xml, wikiextractor };
  enum class Format { json, plain };
  std::string redirects;  // optional TSV: # from<TAB>to
  Input input_format = Input::xml;
  Format format = Format::json;
  bool sentences = false;     // one record per sentence instead of per article
  std::string locale = "en";  // sentence-break rules
  std::unordered_set<int64_t> namespaces = {0};
  unsigned max_depth = 100;
  // --shard I/N: one input file, its pages from raw bytes [I*S/N, (I+1)*S/N) (text/dump_shard.hpp);
  // the parts record their shard (core/shard.hpp) for wiki-extract merge.
  Shard shard;
  std::string shard_run;
};

// Runs the extraction; returns the statistics. Throws Error on unusable input or more than
// max_errors bad pages; the outputs are then not created.
Stats extract_wiki(const WikiExtractOptions& options);

// wiki-extract merge: the parts of one --shard run, documents into output and, when redirects is
// given, their redirects into it; both put in place together.
Stats merge_wiki_parts(const std::vector<std::string>& parts, const std::string& output, const std::string& redirects);

}  // namespace kglm::text
