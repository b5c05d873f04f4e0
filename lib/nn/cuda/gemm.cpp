#include "nn/cuda/gemm.hpp"

#include <map>
#include <string>
#include <tuple>
#include <type_traits>

#include "core/error.hpp"
#include "nn/cuda/context.hpp"
#include "nn/cuda/kernels.hpp"

namespace kglm::nn::cuda {

namespace {

template <class T>
constexpr cudaDataType_t data_type() {
  if constexpr (std::is_same_v<T, Bf16>) {
    return CUDA_R_16BF;
  } else if constexpr (std::is_same_v<T, Half>) {
    return CUDA_R_16F;
  } else {
    static_assert(std::is_same_v<T, float>);
    return CUDA_R_32F;
  }
}

// A column-major problem, as cuBLASLt takes it, plus what the heuristic depends on.
struct Problem {
  cudaDataType_t ab, c;
  bool trans_a, trans_b, bias;
  int64_t m, n, k, lda, ldb, ldc, count, stride_a, stride_b, stride_c;
  unsigned alignment;  // the largest power of two (≤ 256) that divides every pointer
  auto key() const {
    return std::tie(ab, c, trans_a, trans_b, bias, m, n, k, lda, ldb, ldc, count, stride_a, stride_b, stride_c,
                    alignment);
  }
  bool operator<(const Problem& o) const { return key() < o.key(); }
};

struct Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
};

unsigned alignment_of(std::initializer_list<const void*> pointers) {
  unsigned alignment = 256;
  for (const void* p : pointers) {
    if (!p) continue;
    const auto address = reinterpret_cast<uintptr_t>(p);
    while (alignment > 2 && address % alignment != 0) alignment /= 2;
  }
  return alignment;
}

cublasLtMatrixLayout_t layout(cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld, int64_t count,
                              int64_t stride, std::string_view op) {
  cublasLtMatrixLayout_t l = nullptr;
  check(cublasLtMatrixLayoutCreate(&l, type, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld), op,
        "cublasLtMatrixLayoutCreate");
  if (count > 1) {
    const int32_t batch = static_cast<int32_t>(count);
    check(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch), op,
          "cublasLtMatrixLayoutSetAttribute");
    check(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride), op,
          "cublasLtMatrixLayoutSetAttribute");
  }
  return l;
}

const Plan& plan_for(const Problem& p, std::string_view op) {
  static std::map<Problem, Plan>* plans = new std::map<Problem, Plan>();  // lives as long as the context
  if (auto it = plans->find(p); it != plans->end()) return it->second;
  Context& context = Context::get();
  Plan plan;
  check(cublasLtMatmulDescCreate(&plan.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), op, "cublasLtMatmulDescCreate");
  const cublasOperation_t ta = p.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = p.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  check(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), op,
        "cublasLtMatmulDescSetAttribute");
  check(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), op,
        "cublasLtMatmulDescSetAttribute");
  if (p.bias) {
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    check(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue), op,
          "cublasLtMatmulDescSetAttribute");
    const int32_t bias_type = p.c;  // the bias is of C's type
    check(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type),
          op, "cublasLtMatmulDescSetAttribute");
  }
  // Stored shapes: A is m×k (k×m when transposed), B k×n (n×k), C m×n.
  plan.a = p.trans_a ? layout(p.ab, p.k, p.m, p.lda, p.count, p.stride_a, op)
                     : layout(p.ab, p.m, p.k, p.lda, p.count, p.stride_a, op);
  plan.b = p.trans_b ? layout(p.ab, p.n, p.k, p.ldb, p.count, p.stride_b, op)
                     : layout(p.ab, p.k, p.n, p.ldb, p.count, p.stride_b, op);
  plan.c = layout(p.c, p.m, p.n, p.ldc, p.count, p.stride_c, op);

  cublasLtMatmulPreference_t preference = nullptr;
  check(cublasLtMatmulPreferenceCreate(&preference), op, "cublasLtMatmulPreferenceCreate");
  const uint64_t workspace = context.gemm_workspace_bytes();
  check(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                             sizeof workspace),
        op, "cublasLtMatmulPreferenceSetAttribute");
  const uint32_t alignment = p.alignment;
  for (auto attribute : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                         CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    check(cublasLtMatmulPreferenceSetAttribute(preference, attribute, &alignment, sizeof alignment), op,
          "cublasLtMatmulPreferenceSetAttribute");
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(context.lt(), plan.desc, plan.a, plan.b, plan.c, plan.c,
                                                               preference, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(preference);
  check(status, op, "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0)
    throw Error(std::string(op) + ": cuBLASLt has no algorithm for a " + std::to_string(p.m) + "x" +
                std::to_string(p.n) + "x" + std::to_string(p.k) + " product");
  plan.algo = result.algo;
  return plans->emplace(p, plan).first->second;
}

}  // namespace

template <class AB, class C>
void gemm(std::string_view op, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const AB* a,
          int64_t lda, const AB* b, int64_t ldb, float beta, C* c, int64_t ldc, const C* bias, const GemmBatch& batch) {
  if (m == 0 || n == 0) return;
  if (k == 0 && beta == 1.0f && !bias) return;  // nothing to add (cuBLASLt rejects k = 0)
  if (k == 0) throw Error(std::string(op) + ": a product with an empty inner dimension");
  Context& context = Context::get();
  // Row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: the operands swap places.
  const Problem p{data_type<AB>(),
                  data_type<C>(),
                  trans_b,
                  trans_a,
                  bias != nullptr,
                  n,
                  m,
                  k,
                  ldb,
                  lda,
                  ldc,
                  batch.count,
                  batch.stride_b,
                  batch.stride_a,
                  batch.stride_c,
                  alignment_of({a, b, c, bias})};
  const Plan& plan = plan_for(p, op);
  if (bias)
    check(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias), op,
          "cublasLtMatmulDescSetAttribute");
  check(cublasLtMatmul(context.lt(), plan.desc, &alpha, b, plan.a, a, plan.b, &beta, c, plan.c, c, plan.c, &plan.algo,
                       context.gemm_workspace(), context.gemm_workspace_bytes(), context.stream()),
        op, "cublasLtMatmul");
}

#define KGLM_GEMM(AB, C)                                                                                        \
  template void gemm<AB, C>(std::string_view, bool, bool, int64_t, int64_t, int64_t, float, const AB*, int64_t, \
                            const AB*, int64_t, float, C*, int64_t, const C*, const GemmBatch&);
KGLM_GEMM(float, float)
KGLM_GEMM(Bf16, Bf16)
KGLM_GEMM(Bf16, float)
KGLM_GEMM(Half, Half)
KGLM_GEMM(Half, float)
#undef KGLM_GEMM

}  // namespace kglm::nn::cuda
