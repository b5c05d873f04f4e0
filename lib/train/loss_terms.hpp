// KMLM's loss (Liu et al. 2022, eq. 1): L = L_MLM + α(L_K + L_R), where each term is the mean
// cross-entropy over its own masked tokens. One head call computes it: a token of term t gets the
// gradient weight w_t / n_t (w = 1, α, α; n_t the term's masked tokens in the optimizer step), and
// the per-row losses are summed back into the terms. Evaluation uses the same sums with no weights.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "dist/communicator.hpp"
#include "nn/tensor.hpp"
#include "train/objectives/masker.hpp"

namespace kglm::train {

// Per loss term (LossTerm order): the mean loss over its masked tokens (NaN when none) and how many.
struct TermLosses {
  std::array<double, kLossTermCount> loss{};
  std::array<int64_t, kLossTermCount> masked{};
};

class LossTerms {
 public:
  // counts: masked tokens per term over the whole step (all micro-batches), for the gradient
  // weights; all zero when only losses are summed (evaluation).
  LossTerms(const std::array<int64_t, kLossTermCount>& counts, double alpha);

  // F64 [M]: each row's gradient weight, for MlmHead::forward.
  nn::Tensor row_weights(const std::vector<LossTerm>& terms) const;
  // Adds per-row losses (F64 [M], from the head) into the terms' sums and counts.
  void add(const std::vector<LossTerm>& terms, const nn::Tensor& row_losses);

  // Sums the rows added on every rank (data parallelism), so that every rank has the step's terms.
  void all_reduce(dist::Communicator& comm);

  double mean(LossTerm t) const;  // the term's mean loss over the rows added; NaN without any
  double total() const;           // Σ w_t · mean_t over the terms that have rows
  TermLosses summary() const;     // every term's mean and row count

 private:
  std::array<double, kLossTermCount> weight_{}, row_weight_{}, sum_{};
  std::array<int64_t, kLossTermCount> added_{};
};

}  // namespace kglm::train
