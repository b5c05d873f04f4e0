// T5's LayerNorm: RMS normalisation without mean subtraction or bias, y = x · rstd · γ with
// rstd = 1/sqrt(mean(x²) + eps) (Hugging Face's T5LayerNorm, statistics in double here).
#pragma once

#include "nn/ops/linear.hpp"

namespace kglm::nn {

// x [N, H], gamma [H], y [N, H] (may be x); rstd [N] is saved for the backward pass.
void rms_norm_forward(const Tensor& x, const Tensor& gamma, double eps, Tensor& y, Tensor& rstd);

// dx [N, H] is written per dx_mode (may be dy when overwritten); dgamma [H] (skipped when
// undefined) is accumulated.
void rms_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& rstd, Tensor& dx,
                       Tensor& dgamma, GradMode dx_mode = GradMode::Overwrite);

}  // namespace kglm::nn
