// Matrix products on the GPU through cuBLASLt, in the row-major convention of the CPU's
// cpu::gemm (nn/cpu/kernels.hpp), so that the kernels read alike on both devices. Private to
// lib/nn/cuda.
#pragma once

#include <cstdint>
#include <string_view>

namespace kglm::nn::cuda {

// C[m, n] = alpha · op(A) · op(B) + beta · C, row-major, op(X) = Xᵀ when trans_x; `batch`
// products at the given element strides. bias (or null) of n values, of C's type, is added to
// every row of C (cuBLASLt's bias epilogue). A and B are of type AB, C of type C: float with float
// (fp32 compute, no TF32: results match the CPU's to rounding), Bf16 or Half with themselves or
// with a float C (a parameter gradient accumulated in fp32 from half-precision activations);
// always fp32 accumulation. cuBLASLt's plans and its heuristic's choice are cached per shape and
// types, so a shape's algorithm is fixed and reruns give the same bits.
struct GemmBatch {
  int64_t count = 1, stride_a = 0, stride_b = 0, stride_c = 0;
};
template <class AB, class C>
void gemm(std::string_view op, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const AB* a,
          int64_t lda, const AB* b, int64_t ldb, float beta, C* c, int64_t ldc, const C* bias = nullptr,
          const GemmBatch& batch = {});

}  // namespace kglm::nn::cuda
