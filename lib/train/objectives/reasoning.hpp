// KMLM's logical-reasoning objective (Liu et al. 2022, §3.2) on kg-cycles --text samples, where
// every sentence is "head [mask] relation [mask] tail." and the sentence of relation r is r with
// the entity mentions just before and after it:
// - a 3-cycle masks exactly one random relation (all of its tokens): masking entities would let
//   the model count appearances, since each entity appears exactly twice;
// - a 4-cycle with its diagonal, 80% of the time, masks one random relation plus one or two random
//   entity mentions (equal chance); the other 20% it masks both entities of one random sentence and
//   keeps that sentence's relation as a hint.
// Chosen tokens all become <mask>; their loss is L_R. Link slots are never chosen.
#pragma once

#include "train/objectives/masker.hpp"

namespace kglm::train {

struct ReasoningOptions {
  double relation_and_entities = 0.8;  // 4-cycles: share of samples masking a relation + entities
  double two_entities = 0.5;           // of those: share masking two entity mentions (else one)
};

class ReasoningMasker : public Masker {
 public:
  ReasoningMasker(const ReasoningOptions& options, const Vocabulary& vocab);
  // A 3-cycle rule for SequenceKind::reasoning_3, the 4-cycle rule for reasoning_4; any other kind
  // is a usage error caught when objectives are assigned (objective_table.hpp).
  void mask(const Sequence& seq, Rng& rng, std::span<int32_t> out, std::vector<MaskedToken>& masked) const override;

 private:
  ReasoningOptions options_;
  Vocabulary vocab_;
};

}  // namespace kglm::train
