// X-FACTR's scores: accuracy per relation (correct facts / facts), over all facts and over the
// facts whose gold answer is one token (single) or several (multi) in the model's tokenizer, then
// macro-averaged over relations per method and language. A relation with no fact of a kind is
// left out of that kind's average (not counted as 0).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/output_stream.hpp"

namespace kglm::probe {

struct RelationScore {
  std::string method, lang;
  uint64_t relation = 0;
  int64_t facts = 0, correct = 0;
  int64_t single_facts = 0, single_correct = 0;
  int64_t multi_facts = 0, multi_correct = 0;

  void add(bool single_token, bool is_correct);
};

struct MacroScore {
  std::optional<double> all, single, multi;  // fractions; empty when no relation had such facts
  int64_t relations = 0, facts = 0;
};

// The macro averages of rows (those of one method and language).
MacroScore macro_average(const std::vector<RelationScore>& rows);

// Writes PREFIX.tsv (per method, language and relation, then each method and language's macro
// row; percentages with 2 decimals) and PREFIX.json (fractions); returns the TSV text. The files are
// one output with `predictions` (when given, written in full): all are put in place together.
std::string write_probe_results(const std::string& prefix, const std::vector<RelationScore>& rows,
                                OutputStream* predictions = nullptr);

}  // namespace kglm::probe
