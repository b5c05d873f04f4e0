// Matrix products on the GPU through cuBLASLt, in the row-major convention of the CPU's
// cpu::gemm (nn/cpu/kernels.hpp), so that the kernels read alike on both devices. Private to
// lib/nn/cuda.
#pragma once

#include <cstdint>
#include <string_view>

namespace kglm::nn::cuda {

// C[m, n] = alpha · op(A) · op(B) + beta · C, row-major, op(X) = Xᵀ when trans_x; `batch`
// products at the given element strides. bias (or null) of n values is added to every row of C
// (cuBLASLt's bias epilogue). fp32 in, out and compute (no TF32: results match the CPU's to
// rounding). cuBLASLt's plans and its heuristic's choice are cached per shape, so a shape's
// algorithm is fixed and reruns give the same bits.
struct GemmBatch {
  int64_t count = 1, stride_a = 0, stride_b = 0, stride_c = 0;
};
void gemm(std::string_view op, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const float* bias = nullptr,
          const GemmBatch& batch = {});

}  // namespace kglm::nn::cuda
