// Elementwise activations: exact-erf GELU (BERT/XLM-R "gelu"), tanh (poolers, classifier heads),
// and T5's feed-forward activations: ReLU (T5 v1.0) and tanh-approximated GELU (v1.1 / mT5's
// gated "gelu_new").
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

// y = max(x, 0); y may alias x.
void relu_forward(const Tensor& x, Tensor& y);
// dx = dy where y > 0, else 0, from the forward output y; dx may alias dy.
void relu_backward(const Tensor& dy, const Tensor& y, Tensor& dx);

// y = 0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³))) (Hugging Face's "gelu_new"); y may alias x.
void gelu_tanh_forward(const Tensor& x, Tensor& y);
// dx = dy · d/dx of the above; dx may alias dy.
void gelu_tanh_backward(const Tensor& dy, const Tensor& x, Tensor& dx);

}  // namespace kglm::nn
