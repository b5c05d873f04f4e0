// KMLM's logical-reasoning samples (§3.2) from a cycles table: every cycle rendered as its 3
// (triangle) or 5 (4 edges + diagonal) triples, "h [mask] r [mask] t." each, in one annotated-
// text record per language that has every label.
#pragma once

#include <string>
#include <vector>

#include "core/stats.hpp"

namespace kglm::gen {

struct ReasoningTextOptions {
  std::string kg;      // the KG store the cycles come from
  std::string cycles;  // kg-cycles' table
  std::vector<std::string> langs;
  std::string dir;  // DIR/LANG.jsonl
};

// Statistics: samples.LANG and skipped_missing_label.LANG.
Stats write_reasoning_text(const ReasoningTextOptions& options);

}  // namespace kglm::gen
