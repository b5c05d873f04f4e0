// The entity and relation mentions of one sequence, from the token dataset's per-token span index
// and flags: what the reasoning and entity-prediction objectives choose among.
#pragma once

#include <cstdint>
#include <vector>

#include "train/objectives/masker.hpp"

namespace kglm::train {

struct Mention {
  int32_t span = -1;                // index in the record's "spans" list
  bool relation = false;            // a relation mention; else an entity mention
  std::vector<uint32_t> positions;  // its tokens that may be targets (link slots, specials excluded)
};

// The mentions with at least one target token, in span order. A token overlapping several spans
// belongs to the first (as pretrain prepare records it); a mention is a relation when one of its
// tokens is flagged relation and not entity.
void collect_mentions(const Sequence& seq, const Vocabulary& vocab, std::vector<Mention>& out);

}  // namespace kglm::train
