// XLR, KMLM's cross-lingual logical-reasoning benchmark (Appendix A.2), from a cycles table: a
// question asks for the relation between two entities of a cycle, given the cycle's other
// triples as context, with 6 distinct relation choices. The tool in bin/ (kg-cycles xlr) calls
// make_xlr().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/stats.hpp"

namespace kglm::gen {

struct XlrOptions {
  std::string kg;
  std::string cycles;
  std::vector<std::string> langs;  // the first is the pivot: every question renders in it
  std::string dir;                 // DIR/{train,dev,test}.LANG.jsonl and DIR/test-cycles.txt
  uint64_t train = 3000, dev = 1000, test = 1050;
  double max_entity_share = 0.02;  // of a split's questions mentioning one entity
  double max_answer_share = 0.2;   // of a split's questions with one answer relation
  uint64_t seed = 0;
};

// Statistics: questions per split, rendered records per split and language, skipped cycles by
// reason, and the largest entity / relation / answer share per split (in thousandths).
Stats make_xlr(const XlrOptions& options);

}  // namespace kglm::gen
