// y = x · wᵀ + b through cuBLASLt (the bias in its epilogue), and the backward products. GELU is
// not fused into the epilogue: cuBLASLt's GELU is the tanh approximation, and XLM-R's is erf's.
#include "nn/cuda/common.cuh"
#include "nn/cuda/gemm.hpp"
#include "nn/cuda/kernels.hpp"

namespace kglm::nn::cuda {

template <>
void linear_forward<float>(const float* x, const float* w, const float* b, float* y, int64_t n, int64_t in,
                           int64_t out) {
  gemm("linear_forward", false, true, n, out, in, 1.0f, x, in, w, in, 0.0f, y, out, b);
}

template <>
void linear_backward<float>(const float* dy, const float* x, const float* w, float* dx, float* dw, float* db, int64_t n,
                            int64_t in, int64_t out, bool dx_accumulate) {
  constexpr std::string_view op = "linear_backward";
  // dx[n, in] (=|+=) dy · w;  dw[out, in] += dyᵀ · x;  db[out] += Σ_rows dy.
  if (dx) gemm(op, false, false, n, in, out, 1.0f, dy, out, w, in, dx_accumulate ? 1.0f : 0.0f, dx, in);
  if (dw) gemm(op, true, false, out, in, n, 1.0f, dy, out, x, in, 1.0f, dw, in);
  if (db) add_column_sums(dy, n, out, db);
}

}  // namespace kglm::nn::cuda
