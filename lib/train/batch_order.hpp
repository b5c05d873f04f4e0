// Which sequences go into which batch: epochs of seeded permutations, either over all training
// sequences or, with language sampling, one permutation per language and one language per batch
// (sample::LanguageSampler, q_i ∝ p_i^α). The state is a cursor (epoch, position) per group, saved
// in checkpoints, so a resumed run continues with exactly the batches it would have seen.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sample/language_sampler.hpp"

namespace kglm::train {

struct OrderCursor {
  uint64_t epoch = 0;
  uint64_t position = 0;
};

class BatchOrder {
 public:
  // groups: the sequence indices of each group (one group without language sampling; every group
  // non-empty unless the sampler never picks it). sampler: picks the group of each batch.
  BatchOrder(std::vector<std::vector<uint32_t>> groups, std::optional<sample::LanguageSampler> sampler, uint64_t seed);

  // Appends the `count` sequences of batch number `batch` (consecutive batch numbers must be
  // requested in order: the cursors advance).
  void next(uint64_t batch, size_t count, std::vector<uint32_t>& out);

  const std::vector<OrderCursor>& cursors() const { return cursors_; }
  void restore(const std::vector<OrderCursor>& cursors);
  size_t groups() const { return groups_.size(); }

 private:
  void shuffle(size_t group);

  std::vector<std::vector<uint32_t>> groups_;
  std::vector<std::vector<uint32_t>> order_;  // the current epoch's permutation of each group
  std::vector<OrderCursor> cursors_;
  std::optional<sample::LanguageSampler> sampler_;
  uint64_t seed_;
};

}  // namespace kglm::train
