// Softmax cross-entropy over the last axis, fused with its gradient.
#pragma once

#include "nn/tensor.hpp"

namespace kglm::nn {

inline constexpr int32_t kIgnoreIndex = -100;  // rows with this target carry no loss (as PyTorch)

struct CrossEntropyResult {
  double loss_sum = 0;  // Σ over counted rows of −log softmax(logits)[target]
  int64_t counted = 0;  // rows whose target is not kIgnoreIndex
  int64_t correct = 0;  // counted rows whose argmax equals the target
};

// logits [M, C], targets I32 [M] in [0, C) or kIgnoreIndex (else kglm::Error). When dlogits
// [M, C] is defined it is overwritten with grad_scale · (softmax − onehot) (zero for ignored rows).
CrossEntropyResult cross_entropy(const Tensor& logits, const Tensor& targets, Tensor& dlogits, double grad_scale);

}  // namespace kglm::nn
