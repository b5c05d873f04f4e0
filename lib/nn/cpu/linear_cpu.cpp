// Linear layer on oneDNN's and OpenBLAS's gemm, single-threaded per call, with the rows of each
// product split over the OpenMP threads (see kernels.hpp for why).
//
// fp32 products go to oneDNN's sgemm (fp32_on_onednn): it picks its kernels from the CPU alone,
// while OpenBLAS's follow OPENBLAS_CORETYPE when the environment sets it (the development machines
// set Haswell on an AVX-512 Zen 5, which halves OpenBLAS's sgemm: 126 against 250 GFLOP/s, one
// core, 4096^3). tests/nn/gemm_microbench.cpp measures the rule, one thread: oneDNN is 1.0-3.2x
// OpenBLAS-Haswell on every product of two rows or more (1.7-2.0x on layer-sized and attention
// products, 1.0x on 16 x 64 x 16), 0.9-1.2x OpenBLAS's own AVX-512 (Cooperlake) kernels on
// layer-sized and attention products, 1.4x on decoding's 32-row ones. OpenBLAS keeps what its
// AVX-512 small-matrix path runs (m·n·k <= 64^3: 1.1-2.5x oneDNN there), one-row products (sgemv,
// or that path) and every double product.
#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include <cctype>
#include <climits>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "nn/cpu/kernels.hpp"
#include "nn/cpu_precision.hpp"

namespace kglm::nn::cpu {

namespace {

// Below this many flops a product runs on one thread (~0.1 ms of work).
constexpr double kGemmParallelFlops = 4e6;
// Row (column) blocks are multiples of the gemm kernels' register tile.
constexpr int64_t kRowAlign = 16;

CBLAS_TRANSPOSE transpose(bool t) { return t ? CblasTrans : CblasNoTrans; }

// Whether OpenBLAS runs its AVX-512 kernels, which have a small-matrix path: one row against 20 keys
// of 64 (attention at a decoding step) 48 ns by sgemm against 67 by sgemv on a Zen 5; its other
// kernels (Haswell's there) pack both operands for sgemm: 375 ns against 70.
bool openblas_small_matrix_kernels() {
  static const bool small = [] {
    std::string core = openblas_get_corename();
    for (char& ch : core) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return core == "skylakex" || core == "cooperlake" || core == "sapphirerapids";
  }();
  return small;
}

// Whether an fp32 product runs on oneDNN (see the top of the file): a function of the shape and of
// OpenBLAS's kernels, fixed for a run, so that its results do not depend on timing.
bool fp32_on_onednn(int64_t m, int64_t n, int64_t k) {
  constexpr double kOpenBlasSmallMatrix = 64.0 * 64.0 * 64.0;  // its small-matrix path's reach (measured)
  if (m < 2 || k == 0) return false;
  return !openblas_small_matrix_kernels() || static_cast<double>(m) * n * k > kOpenBlasSmallMatrix;
}

// One row of C (m = 1) as a matrix-vector product: c = alpha · op(B)ᵀ · op(A)ᵀ + beta · c.
template <class T>
void gemv_row(bool trans_a, bool trans_b, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
              int64_t ldb, T beta, T* c) {
  auto i = [](int64_t v) { return static_cast<int>(v); };
  // op(B)ᵀ is B [n, k] itself when transposed, else Bᵀ of B [k, n]; op(A)'s row is A's column when transposed.
  const CBLAS_TRANSPOSE t = trans_b ? CblasNoTrans : CblasTrans;
  const int64_t rows = trans_b ? n : k, cols = trans_b ? k : n, inc_a = trans_a ? lda : 1;
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemv(CblasRowMajor, t, i(rows), i(cols), alpha, b, i(ldb), a, i(inc_a), beta, c, 1);
  } else {
    cblas_dgemv(CblasRowMajor, t, i(rows), i(cols), alpha, b, i(ldb), a, i(inc_a), beta, c, 1);
  }
}

// oneDNN's sgemm on the calling thread alone, as OpenBLAS's (blas_single_thread): inside a parallel
// region it is so already; outside one it would use every OpenMP thread, so the calling task's
// thread count is set to 1 for the call.
bool sgemm_onednn(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  if (threads > 1) omp_set_num_threads(1);
  const dnnl_status_t status =
      dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (threads > 1) omp_set_num_threads(threads);
  return status == dnnl_success;
}

}  // namespace

void blas_single_thread() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

void check_blas_dims(std::string_view op, std::initializer_list<int64_t> dims) {
  for (int64_t d : dims)
    if (d > INT_MAX)
      throw Error(std::string(op) + ": dimension " + std::to_string(d) + " is too large for OpenBLAS (32-bit int)");
}

template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_gemm_dtype() == DType::BF16 && gemm_bf16(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))
      return;
  }
  if constexpr (std::is_same_v<T, float>) {
    if (fp32_on_onednn(m, n, k) && sgemm_onednn(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)) return;
  }
  blas_single_thread();
  if (m == 1 && k > 0 && !openblas_small_matrix_kernels()) {  // (sgemv with k = 0 would skip beta)
    gemv_row(trans_a, trans_b, n, k, alpha, a, lda, b, ldb, beta, c);
    return;
  }
  auto i = [](int64_t v) { return static_cast<int>(v); };
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, transpose(trans_a), transpose(trans_b), i(m), i(n), i(k), alpha, a, i(lda), b, i(ldb),
                beta, c, i(ldc));
  } else {
    cblas_dgemm(CblasRowMajor, transpose(trans_a), transpose(trans_b), i(m), i(n), i(k), alpha, a, i(lda), b, i(ldb),
                beta, c, i(ldc));
  }
}

template <class T>
void gemm_parallel(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
                   const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if constexpr (std::is_same_v<T, float>) {
    if (m != 0 && n != 0 && cpu_gemm_dtype() == DType::BF16 &&
        gemm_bf16(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))
      return;  // oneDNN split it over the threads
  }
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const bool parallel = flops >= kGemmParallelFlops;
  // Each thread packs the whole of the operand it shares: op(B) (k × n) when C is split by rows,
  // op(A) (m × k) when split by columns. Split so that the shared one is the smaller (a weight
  // gradient dyᵀ·x with few outputs and wide inputs splits by columns, the vocabulary projection
  // of a few rows too).
  if (n <= m) {
    for_blocks(m, parallel, kRowAlign, [&](int64_t r0, int64_t r1) {
      // Row r of op(A) is row r of A, or column r of A when transposed.
      const T* a_rows = trans_a ? a + r0 : a + r0 * lda;
      gemm(trans_a, trans_b, r1 - r0, n, k, alpha, a_rows, lda, b, ldb, beta, c + r0 * ldc, ldc);
    });
  } else {
    for_blocks(n, parallel, kRowAlign, [&](int64_t c0, int64_t c1) {
      // Column j of op(B) is column j of B, or row j of B when transposed.
      const T* b_cols = trans_b ? b + c0 * ldb : b + c0;
      gemm(trans_a, trans_b, m, c1 - c0, k, alpha, a, lda, b_cols, ldb, beta, c + c0, ldc);
    });
  }
}

template <class T>
void linear_forward(const T* x, const T* w, const T* b, T* y, int64_t n, int64_t in, int64_t out) {
  check_blas_dims("linear_forward", {n, in, out});
  // The bias goes in first and the gemm adds to it (beta = 1): OpenBLAS would make a pass over y
  // for beta = 0 anyway.
  if (b) {
#pragma omp parallel for schedule(static) if (n * out >= kParallelGrain)
    for (int64_t r = 0; r < n; ++r) std::copy(b, b + out, y + r * out);
  }
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_gemm_dtype() == DType::BF16 && linear_bf16_frozen(x, w, b ? 1.0f : 0.0f, y, n, in, out)) return;
  }
  gemm_parallel(false, true, n, out, in, T(1), x, in, w, in, b ? T(1) : T(0), y, out);
}

template <class T>
void linear_backward(const T* dy, const T* x, const T* w, T* dx, T* dw, T* db, int64_t n, int64_t in, int64_t out,
                     bool dx_accumulate) {
  check_blas_dims("linear_backward", {n, in, out});
  // dx [n, in] = dy [n, out] · w [out, in]
  if (dx) gemm_parallel(false, false, n, in, out, T(1), dy, out, w, in, dx_accumulate ? T(1) : T(0), dx, in);
  // dw [out, in] += dyᵀ · x; each element is summed over all n rows by one thread.
  if (dw) gemm_parallel(true, false, out, in, n, T(1), dy, out, x, in, T(1), dw, in);
  // db [out] += column sums of dy, split over columns (deterministic), summed in double.
  if (db) {
    std::vector<double> sum(static_cast<size_t>(out), 0.0);  // outside the parallel region: may throw
    for_blocks(out, static_cast<double>(n) * static_cast<double>(out) >= kParallelGrain, kRowAlign,
               [&](int64_t c0, int64_t c1) {
                 for (int64_t r = 0; r < n; ++r) {
                   const T* row = dy + r * out;
#pragma omp simd
                   for (int64_t j = c0; j < c1; ++j) sum[j] += row[j];
                 }
                 for (int64_t j = c0; j < c1; ++j) db[j] = static_cast<T>(db[j] + sum[j]);
               });
  }
}

#define KGLM_LINEAR_CPU(T)                                                                                          \
  template void gemm<T>(bool, bool, int64_t, int64_t, int64_t, T, const T*, int64_t, const T*, int64_t, T, T*,      \
                        int64_t);                                                                                   \
  template void gemm_parallel<T>(bool, bool, int64_t, int64_t, int64_t, T, const T*, int64_t, const T*, int64_t, T, \
                                 T*, int64_t);                                                                      \
  template void linear_forward<T>(const T*, const T*, const T*, T*, int64_t, int64_t, int64_t);                     \
  template void linear_backward<T>(const T*, const T*, const T*, T*, T*, T*, int64_t, int64_t, int64_t, bool);
KGLM_LINEAR_CPU(float)
KGLM_LINEAR_CPU(double)
#undef KGLM_LINEAR_CPU

}  // namespace kglm::nn::cpu
