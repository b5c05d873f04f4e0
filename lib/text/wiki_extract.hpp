// wiki-extract: MediaWiki XML dumps (or WikiExtractor JSON) -> cleaned articles as JSONL or the
// plain [[target|anchor]] form, optionally split into sentences, plus a redirects table. The
// tool in bin/ only parses options and calls extract_wiki().
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/cli.hpp"
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
};

// Runs the extraction; returns the statistics. Throws Error on unusable input or more than
// max_errors bad pages; the outputs are then not created.
Stats extract_wiki(const WikiExtractOptions& options);

}  // namespace kglm::text
