// AdamW (Loshchilov & Hutter) with decoupled weight decay, as torch.optim.AdamW:
//   p ← p − lr·wd·p;  m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²;
//   p ← p − lr · (m / (1−β1ᵗ)) / (sqrt(v / (1−β2ᵗ)) + eps).
#pragma once

#include <cstdint>
#include <vector>

#include "nn/tensor.hpp"

namespace kglm::nn {

struct AdamWHyper {
  double lr = 1e-4, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.01;
  int64_t step = 1;  // t, 1-based, for the bias corrections
};

// param, grad, m, v: same shape F32. grad is scaled by grad_scale first (clipping and the mean
// over accumulated micro-batches fold into it).
void adamw_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamWHyper& hyper,
                  double grad_scale = 1.0);

// The multi-tensor form, for a model whose parameters share flat buffers: a segment is elements
// [param_offset, +size) of the values and the gradients and [state_offset, +size) of the moments,
// with weight decay or without.
struct AdamWSegment {
  int64_t param_offset = 0, state_offset = 0, size = 0;
  bool decay = true;
};

// The segments as the table adamw_update_segments reads, on `device`: I64 [C, 4] rows of (param
// offset, state offset, size, decay), a long segment split into chunks of at most
// kAdamWChunkElements (one GPU block each). Checks every segment against the buffers' sizes.
inline constexpr int64_t kAdamWChunkElements = 1 << 16;
Tensor adamw_segment_table(const std::vector<AdamWSegment>& segments, int64_t param_count, int64_t state_count,
                           Device device);

// AdamW over every segment of `table` (from adamw_segment_table) at once: one kernel launch on a
// GPU. values and grads: F32 [param_count]; m, v: F32 [state_count]. hyper.weight_decay applies to
// the segments with decay.
void adamw_update_segments(Tensor& values, const Tensor& grads, Tensor& m, Tensor& v, const Tensor& table,
                           const AdamWHyper& hyper, double grad_scale = 1.0);

}  // namespace kglm::nn
