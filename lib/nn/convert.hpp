// Conversions between fp32 and the storage float types (BF16, F16, F64). Half-precision values are
// raw uint16_t bit patterns; Tensor has no typed accessor for them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "nn/tensor.hpp"

namespace kglm::nn {

// Exact widenings (every BF16 and F16 value is an fp32 value); NaN payloads and signs are kept.
float bf16_to_f32(uint16_t bits);
float f16_to_f32(uint16_t bits);
// Round to nearest, ties to even; values past the largest finite result become +-inf, NaN stays a
// (quiet) NaN.
uint16_t f32_to_bf16(float value);
uint16_t f32_to_f16(float value);
// F64 to F32 with IEEE rounding; magnitudes that round past FLT_MAX become +-inf (a plain cast of
// those is undefined behaviour in C++).
float f64_to_f32(double value);

// n elements of `from` (F32, F64, BF16 or F16) at `in`, which need not be aligned, into `out`.
// Throws Error for other dtypes.
void widen_to_f32(DType from, const std::byte* in, float* out, size_t n);
// n F32 values at `in` into `out` as `to` (F32, F64, BF16 or F16), rounded as above.
void narrow_from_f32(const float* in, DType to, std::byte* out, size_t n);

// A new F32 tensor with the values of a F32/F64/BF16/F16 CPU tensor (a copy for F32).
Tensor to_f32(const Tensor& t);
// A new tensor of dtype `to` (F32, F64, BF16 or F16) with the values of an F32 CPU tensor, e.g. to
// store a checkpoint in BF16.
Tensor from_f32(const Tensor& t, DType to);

}  // namespace kglm::nn
