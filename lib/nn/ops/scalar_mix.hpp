// The weighted sum of a stack of layers that a scalar mix computes (Peters et al. 2018:
// γ · Σ_j softmax(s)_j h_j; nn/scalar_mix.hpp turns s and γ into the coefficients), and the dot
// products its backward pass needs. The layers are frozen features: no gradient flows into them.
#pragma once

#include <vector>

#include "nn/tensor.hpp"

namespace kglm::nn {

inline constexpr int64_t kMaxMixedLayers = 64;

// x [J, N, D] (layer j's rows at x[j]); y [N, D] = Σ_j coefficients[j] · x[j]; J ≤ kMaxMixedLayers.
void scalar_mix_forward(const Tensor& x, const std::vector<float>& coefficients, Tensor& y);

// dots[j] = Σ dy ⊙ x[j], summed in double: the gradient of Σ dy ⊙ y by coefficient j.
std::vector<double> scalar_mix_dots(const Tensor& dy, const Tensor& x);

}  // namespace kglm::nn
