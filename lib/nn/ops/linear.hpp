// y = x · wᵀ + b (PyTorch nn.Linear layout: w is [out, in]). On the CPU: OpenBLAS sgemm/dgemm.
#pragma once

#include "nn/tensor.hpp"

namespace kglm::nn {

// Whether a gradient output is overwritten or added to (parameter gradients always add, so that
// micro-batches accumulate; input gradients add where a tensor feeds several consumers).
enum class GradMode : uint8_t { Overwrite, Accumulate };

// x [N, in], w [out, in], b [out] or undefined, y [N, out] (overwritten).
void linear_forward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y);

// dy [N, out]. dx [N, in] (skipped when undefined) is written per dx_mode; dw [out, in] and
// db [out] (skipped when undefined) are accumulated.
void linear_backward(const Tensor& dy, const Tensor& x, const Tensor& w, Tensor& dx, Tensor& dw, Tensor& db,
                     GradMode dx_mode = GradMode::Overwrite);

}  // namespace kglm::nn
