// Row lookup in an embedding table, and its scatter-add backward.
#pragma once

#include "nn/ops/linear.hpp"

namespace kglm::nn {

// ids I32 [N] (each in [0, V), else kglm::Error naming the id), table [V, H], out [N, H]:
// out[i] = table[ids[i]] (Overwrite) or out[i] += table[ids[i]] (Accumulate).
void embedding_forward(const Tensor& ids, const Tensor& table, Tensor& out, GradMode mode = GradMode::Overwrite);

// dtable[ids[i]] += dout[i]. Deterministic: the same result whatever the thread count.
void embedding_backward(const Tensor& ids, const Tensor& dout, Tensor& dtable);

}  // namespace kglm::nn
