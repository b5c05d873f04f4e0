// Elementwise activations: exact-erf GELU (BERT/XLM-R "gelu") and tanh (poolers, classifier heads).
#pragma once

#include "nn/tensor.hpp"

namespace kglm::nn {

// y = x · Φ(x) = 0.5 · x · (1 + erf(x / √2)). Any shape; y may alias x.
void gelu_forward(const Tensor& x, Tensor& y);
// dx = dy · (Φ(x) + x · φ(x)); dx overwritten, may alias dy.
void gelu_backward(const Tensor& dy, const Tensor& x, Tensor& dx);

// y = tanh(x); y may alias x.
void tanh_forward(const Tensor& x, Tensor& y);
// dx = dy · (1 − y²), from the forward output y; dx may alias dy.
void tanh_backward(const Tensor& dy, const Tensor& y, Tensor& dx);

}  // namespace kglm::nn
