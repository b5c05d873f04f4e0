// Micro benchmark (run by hand, not a test): the fp32 products of kglm's models, one thread, in
// oneDNN's sgemm and OpenBLAS's sgemm (and sgemv for one row): GFLOP/s of each and their ratio —
// what nn/cpu/linear_cpu.cpp's choice of library rests on (fp32_on_onednn, gemv_row). Run it under
// the OPENBLAS_CORETYPE to compare (e.g. unset and Haswell): OpenBLAS follows it, oneDNN does not.
//
//   OMP_NUM_THREADS=1 nn_gemm_microbench [seconds per product = 0.3]
#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "core/rng.hpp"

namespace {

struct Shape {
  const char* what;
  bool trans_a, trans_b;
  int m, n, k;
};

// Seconds per call of f, over about `budget` seconds.
double seconds_per_call(const std::function<void()>& f, double budget) {
  f();
  int calls = 0;
  const auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  do {
    f();
    ++calls;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } while (elapsed < budget);
  return elapsed / calls;
}

}  // namespace

int main(int argc, char** argv) {
  const double budget = argc > 1 ? std::atof(argv[1]) : 0.3;
  openblas_set_num_threads(1);
  const Shape shapes[] = {
      {"encoder q|k|v, 800 rows", false, true, 800, 1536, 512},
      {"encoder FFN up", false, true, 800, 2048, 512},
      {"encoder FFN down", false, true, 800, 512, 2048},
      {"training forward", false, true, 2048, 1024, 256},
      {"training dx", false, false, 2048, 256, 1024},
      {"training dw", true, false, 1024, 256, 2048},
      {"vocabulary, 180 masked rows", false, true, 180, 32000, 256},
      {"decoding step, 32 rows", false, true, 32, 256, 256},
      {"decoding FFN, 32 rows", false, true, 32, 1024, 256},
      {"beam step, 128 rows", false, true, 128, 256, 256},
      {"attention scores 128x128", false, true, 128, 128, 64},
      {"attention context (n 64)", false, false, 128, 64, 128},
      {"attention dQ (n 64)", false, false, 128, 64, 128},
      {"attention dK (n 64)", true, false, 128, 64, 128},
      {"scores, 32 tokens", false, true, 32, 32, 64},
      {"context, 32 tokens (k 32)", false, false, 32, 64, 32},
      {"context, 16 tokens (k 16)", false, false, 16, 64, 16},
      {"tagging head (n 7)", false, true, 800, 7, 256},
      {"decoding step, 8 rows", false, true, 8, 64, 256},
      {"16 rows", false, true, 16, 256, 256},
      {"8 rows", false, true, 8, 256, 256},
      {"4 rows", false, true, 4, 256, 256},
      {"scores, 64 tokens", false, true, 64, 64, 64},
      {"scores, 100 tokens", false, true, 100, 100, 64},
      {"1 row: scores, 20 keys", false, true, 1, 20, 64},
      {"1 row: context, 20 keys", false, false, 1, 64, 20},
  };
  kglm::Rng rng(1, 0);
  std::printf("OpenBLAS kernels: %s\n%-30s %16s %10s %10s %10s %8s\n", openblas_get_corename(), "product", "m x n x k",
              "OpenBLAS", "oneDNN", "sgemv", "oneDNN/");
  for (const Shape& s : shapes) {
    std::vector<float> a(static_cast<size_t>(s.m) * s.k), b(static_cast<size_t>(s.k) * s.n),
        c(static_cast<size_t>(s.m) * s.n);
    for (float& x : a) x = static_cast<float>(rng.uniform() - 0.5);
    for (float& x : b) x = static_cast<float>(rng.uniform() - 0.5);
    const int lda = s.trans_a ? s.m : s.k, ldb = s.trans_b ? s.k : s.n;
    const double flops = 2.0 * s.m * s.n * s.k;
    const double openblas = seconds_per_call(
        [&] {
          cblas_sgemm(CblasRowMajor, s.trans_a ? CblasTrans : CblasNoTrans, s.trans_b ? CblasTrans : CblasNoTrans, s.m,
                      s.n, s.k, 1.0f, a.data(), lda, b.data(), ldb, 0.0f, c.data(), s.n);
        },
        budget);
    const double onednn = seconds_per_call(
        [&] {
          dnnl_sgemm(s.trans_a ? 'T' : 'N', s.trans_b ? 'T' : 'N', s.m, s.n, s.k, 1.0f, a.data(), lda, b.data(), ldb,
                     0.0f, c.data(), s.n);
        },
        budget);
    char gemv[16] = "-";
    if (s.m == 1) {  // as linear_cpu.cpp's gemv_row (op(A) not transposed here)
      const double t = seconds_per_call(
          [&] {
            cblas_sgemv(CblasRowMajor, s.trans_b ? CblasNoTrans : CblasTrans, s.trans_b ? s.n : s.k,
                        s.trans_b ? s.k : s.n, 1.0f, b.data(), ldb, a.data(), 1, 0.0f, c.data(), 1);
          },
          budget);
      std::snprintf(gemv, sizeof gemv, "%.1f", flops / t / 1e9);
    }
    char dims[32];
    std::snprintf(dims, sizeof dims, "%s%dx%dx%d", s.trans_a ? "T" : "", s.m, s.n, s.k);
    std::printf("%-30s %16s %10.1f %10.1f %10s %7.2fx\n", s.what, dims, flops / openblas / 1e9, flops / onednn / 1e9,
                gemv, openblas / onednn);
  }
  std::printf("GFLOP/s, one thread; the last column: oneDNN's speed over OpenBLAS's sgemm\n");
}
