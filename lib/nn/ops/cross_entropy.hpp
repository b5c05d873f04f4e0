// Softmax cross-entropy over the last axis, fused with its gradient.
#pragma once

#include <vector>

#include "nn/tensor.hpp"

namespace kglm::nn {

inline constexpr int32_t kIgnoreIndex = -100;  // rows with this target carry no loss (as PyTorch)

struct CrossEntropyResult {
  double loss_sum = 0;  // Σ over counted rows of −log softmax(logits)[target]
  int64_t counted = 0;  // rows whose target is not kIgnoreIndex
  int64_t correct = 0;  // counted rows whose argmax equals the target
};

// The totals of per-row results, rows in order (so the sum does not depend on how the rows were
// computed): loss[r] and correct[r] count where targets[r] is not kIgnoreIndex. Host arrays.
CrossEntropyResult sum_row_results(const int32_t* targets, const double* loss, const uint8_t* correct, int64_t m);

// logits [M, C], targets I32 [M] in [0, C) or kIgnoreIndex (else kglm::Error). When dlogits
// [M, C] is defined it is overwritten with grad_scale · (softmax − onehot) (zero for ignored rows);
// it may be logits itself, which then holds the gradient afterwards (one [M, C] buffer: for a
// 250k vocabulary, that saves M × 250k values).
CrossEntropyResult cross_entropy(const Tensor& logits, const Tensor& targets, Tensor& dlogits, double grad_scale);

// Per-row form, for losses that are weighted sums of several means (KMLM's L_MLM + α(L_K + L_R),
// each term the mean over its own rows, in one call): row r's gradient is scaled by
// grad_scale · row_weights[r] (F64 [M], or undefined for 1), and row_losses (F64 [M], or undefined)
// receives each row's −log softmax[target] (0 for ignored rows). With no weights the gradient is
// bit-identical to the form above.
CrossEntropyResult cross_entropy(const Tensor& logits, const Tensor& targets, Tensor& dlogits, double grad_scale,
                                 const Tensor& row_weights, Tensor& row_losses);

// The most probable class of each row of logits [M, C] (the first of equal maxima, as
// torch.argmax) and its log-probability log softmax(logits)[class] = −log Σ exp(x − max), the
// sum in double: what a decoder needs of the MLM head without reading [M, C] back to the host.
// Overwrites classes and log_probs (host vectors of M).
void best_classes(const Tensor& logits, std::vector<int32_t>& classes, std::vector<double>& log_probs);

}  // namespace kglm::nn
