// LayerNorm over the last axis: y = (x − mean) · rstd · γ + β, rstd = 1/sqrt(var + eps),
// biased variance (as torch.nn.LayerNorm).
#pragma once

#include "nn/ops/linear.hpp"

namespace kglm::nn {

// x [N, H], gamma/beta [H], y [N, H]; mean and rstd [N] are saved for the backward pass.
void layer_norm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps, Tensor& y, Tensor& mean,
                        Tensor& rstd);

// Post-LN's residual step in one pass over the rows: sum = x + residual (sum may be x or residual
// itself; it is the LayerNorm's input, which layer_norm_backward reads), y = LayerNorm(sum).
void add_layer_norm_forward(const Tensor& x, const Tensor& residual, const Tensor& gamma, const Tensor& beta,
                            double eps, Tensor& sum, Tensor& y, Tensor& mean, Tensor& rstd);

// dx [N, H] is written per dx_mode; dgamma and dbeta [H] are accumulated.
void layer_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean, const Tensor& rstd,
                         Tensor& dx, Tensor& dgamma, Tensor& dbeta, GradMode dx_mode = GradMode::Overwrite);

}  // namespace kglm::nn
