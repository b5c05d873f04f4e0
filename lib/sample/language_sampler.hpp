// Batch-level language sampling for training (XLM, EntityCS): every batch comes from one language,
// chosen with probability q_i ∝ p_i^α — the rule sample-lang applies to whole corpora. The choice
// for batch b depends only on (seed, b), so a run resumed at step b picks what it would have.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace kglm::sample {

class LanguageSampler {
 public:
  // sizes: each language's data size (any unit); α = 1 samples in proportion, α = 0 uniformly
  // over the non-empty languages. Throws Error when every size is 0.
  LanguageSampler(std::vector<std::string> langs, std::span<const double> sizes, double alpha, uint64_t seed);

  // The language (index into languages()) of batch `batch`.
  size_t pick(uint64_t batch) const;

  const std::vector<std::string>& languages() const { return langs_; }
  const std::vector<double>& probabilities() const { return q_; }

 private:
  std::vector<std::string> langs_;
  std::vector<double> q_;
  std::vector<double> cumulative_;
  uint64_t seed_;
};

}  // namespace kglm::sample
