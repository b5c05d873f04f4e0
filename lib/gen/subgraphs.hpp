// KELM's entity subgraphs (Agarwal et al. 2021, §2.2, Fig. 4): each subject's statements cut into
// groups of at most 5 that are likely to be expressed together. A group starts from a random
// remaining statement and grows greedily with the remaining statement whose relation co-occurs
// most often with the previously added one; it closes at 5 statements or when no remaining
// statement co-occurs with it at all. Every statement lands in exactly one subgraph.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/cli.hpp"
#include "core/stats.hpp"
#include "kg/facts.hpp"

namespace kglm::gen {

class CooccurrenceTable;

struct SubgraphOptions : RunOptions {
  std::string kg;
  std::vector<std::string> cooc;  // one or more co-occurrence tables, counts added
  std::vector<kg::FactKind> kinds = {kg::FactKind::item, kg::FactKind::quantity, kg::FactKind::time,
                                     kg::FactKind::string, kg::FactKind::monolingualtext};
  uint32_t max_size = 5;
  bool qualifiers = true;  // write each statement's qualifiers with it
};

// The subgraphs of one subject's statements (indexes into facts, each used once), in the order
// they are built; relation_number maps a fact to its P number. Deterministic in (seed, subject).
std::vector<std::vector<uint32_t>> build_subgraphs(const std::vector<uint64_t>& relation_numbers,
                                                   const CooccurrenceTable& cooc, uint32_t max_size, uint64_t seed,
                                                   uint64_t subject);

Stats generate_subgraphs(const SubgraphOptions& options);

}  // namespace kglm::gen
