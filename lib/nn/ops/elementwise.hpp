// Small elementwise and indexing ops used between the layers.
#pragma once

#include "nn/ops/linear.hpp"

namespace kglm::nn {

// out = a + b (same shapes; out may alias a or b).
void add(const Tensor& a, const Tensor& b, Tensor& out);
// out = a ⊙ b (same shapes; out may alias a or b): T5's gated feed-forward, and its backward.
void multiply(const Tensor& a, const Tensor& b, Tensor& out);
// acc += x.
void accumulate(Tensor& acc, const Tensor& x);
// x *= s.
void scale(Tensor& x, double s);
// Σ x² in double (for the global gradient norm).
double sum_of_squares(const Tensor& x);
// to = from in to's dtype, on their (common) device: F32 to BF16 or F16 rounds to nearest even
// (the compute copy of mixed-precision weights), BF16 or F16 to F32 is exact; same dtypes copy.
void convert(const Tensor& from, Tensor& to);

// src [N, H], index I32 [M] in [0, N): out [M, H] = src[index] (Overwrite).
void gather_rows(const Tensor& src, const Tensor& index, Tensor& out);
// dsrc[index[i]] += dout[i] (Accumulate, deterministic for repeated indices).
void scatter_add_rows(const Tensor& dout, const Tensor& index, Tensor& dsrc);
// dst[first + i·stride] = src[i] for the M rows of src [M, H], dst [N, H], stride ≥ 1: a decode
// step's keys and values written into a cache [B, capacity, H] in one pass (first = the step,
// stride = the capacity).
void copy_rows_strided(const Tensor& src, Tensor& dst, int64_t first, int64_t stride);

}  // namespace kglm::nn
