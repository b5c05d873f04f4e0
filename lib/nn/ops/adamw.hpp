// AdamW (Loshchilov & Hutter) with decoupled weight decay, as torch.optim.AdamW:
//   p ← p − lr·wd·p;  m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²;
//   p ← p − lr · (m / (1−β1ᵗ)) / (sqrt(v / (1−β2ᵗ)) + eps).
#pragma once

#include <cstdint>

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

}  // namespace kglm::nn
