// y = x · wᵀ + b through cuBLASLt (the bias in its epilogue), and the backward products. GELU is
// not fused into the epilogue: cuBLASLt's GELU is the tanh approximation, and XLM-R's is erf's.
#include "nn/cuda/common.cuh"
#include "nn/cuda/gemm.hpp"
#include "nn/cuda/kernels.hpp"

namespace kglm::nn::cuda {

template <class T>
void linear_forward(const T* x, const T* w, const T* b, T* y, int64_t n, int64_t in, int64_t out) {
  gemm<T, T>("linear_forward", false, true, n, out, in, 1.0f, x, in, w, in, 0.0f, y, out, b);
}

template <class T>
void linear_backward(const T* dy, const T* x, const T* w, T* dx, float* dw, float* db, int64_t n, int64_t in,
                     int64_t out, bool dx_accumulate) {
  constexpr std::string_view op = "linear_backward";
  // dx[n, in] (=|+=) dy · w;  dw[out, in] += dyᵀ · x (into fp32);  db[out] += Σ_rows dy.
  if (dx) gemm<T, T>(op, false, false, n, in, out, 1.0f, dy, out, w, in, dx_accumulate ? 1.0f : 0.0f, dx, in);
  if (dw) gemm<T, float>(op, true, false, out, in, n, 1.0f, dy, out, x, in, 1.0f, dw, in);
  if (db) add_column_sums(dy, n, out, db);
}

#define KGLM_LINEAR_CUDA(T)                                                                     \
  template void linear_forward<T>(const T*, const T*, const T*, T*, int64_t, int64_t, int64_t); \
  template void linear_backward<T>(const T*, const T*, const T*, T*, float*, float*, int64_t, int64_t, int64_t, bool);
KGLM_FOR_STORAGE_TYPES(KGLM_LINEAR_CUDA)
#undef KGLM_LINEAR_CUDA

}  // namespace kglm::nn::cuda
