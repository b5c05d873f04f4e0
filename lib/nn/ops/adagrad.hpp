// Adagrad as TensorFlow's ApplyAdagrad, which bilm-tf trains ELMo with (no epsilon; the
// accumulator starts at initial_accumulator_value, 1.0 in bilm-tf):
//   g ← grad_scale · grad;  accum ← accum + g²;  p ← p − lr · g / sqrt(accum).
#pragma once

#include "nn/tensor.hpp"

namespace kglm::nn {

// param, grad, accum: same shape, F32 (F64 on the CPU). A zero gradient leaves the element as it
// is, so a flat buffer's padding and frozen parameters (whose gradients stay zero) are safe.
void adagrad_update(Tensor& param, const Tensor& grad, Tensor& accum, double lr, double grad_scale = 1.0);

}  // namespace kglm::nn
