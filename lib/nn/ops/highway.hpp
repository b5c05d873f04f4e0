// The gating of one highway layer of ELMo's character encoder (Srivastava et al. 2015, as bilm-tf
// builds it). With the transform and carry pre-activations in one [N, 2H] tensor — x·[W_t; W_c]ᵀ +
// [b_t; b_c], one GEMM by the caller (linear_forward) —:
//   g = σ(pre[:, H:]),  t = relu(pre[:, :H]),  y = g·t + (1 − g)·x
// The transform is ReLU whatever the character CNN's activation (bilm-tf's choice).
#pragma once

#include "nn/ops/linear.hpp"

namespace kglm::nn {

// x [N, H], pre [N, 2H], y [N, H] (overwritten; not x: the backward pass reads x).
void highway_forward(const Tensor& x, const Tensor& pre, Tensor& y);

// dx [N, H] gets the direct part dy·(1 − g) per dx_mode (the caller adds the GEMM's part with
// linear_backward in Accumulate mode); dpre [N, 2H] is overwritten.
void highway_backward(const Tensor& dy, const Tensor& x, const Tensor& pre, Tensor& dx, Tensor& dpre,
                      GradMode dx_mode = GradMode::Overwrite);

}  // namespace kglm::nn
