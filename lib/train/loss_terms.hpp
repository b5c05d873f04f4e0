// KMLM's loss (Liu et al. 2022, eq. 1): L = L_MLM + α(L_K + L_R), where each term is the mean
// cross-entropy over its own masked tokens. One head call computes it: a token of term t gets the
// gradient weight w_t / n_t (w = 1, α, α; n_t the term's masked tokens in the optimizer step), and
// the per-row losses are summed back into the terms.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "nn/tensor.hpp"
#include "train/objectives/masker.hpp"

namespace kglm::train {

class LossTerms {
 public:
  // counts: masked tokens per term over the whole step (all micro-batches).
  LossTerms(const std::array<int64_t, kLossTermCount>& counts, double alpha);

  // F64 [M]: each row's gradient weight, for MlmHead::forward.
  nn::Tensor row_weights(const std::vector<LossTerm>& terms) const;
  // Adds per-row losses (F64 [M], from the head) into the terms' sums.
  void add(const std::vector<LossTerm>& terms, const nn::Tensor& row_losses);

  double mean(LossTerm t) const;  // the term's mean loss; NaN without tokens
  double total() const;           // Σ w_t · mean_t over the terms that have tokens
  int64_t count(LossTerm t) const { return counts_[static_cast<size_t>(t)]; }

 private:
  std::array<int64_t, kLossTermCount> counts_;
  std::array<double, kLossTermCount> weight_{}, row_weight_{}, sum_{};
};

}  // namespace kglm::train
