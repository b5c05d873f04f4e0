// The CPU's matrix products. fp32 (nn/cpu/linear_cpu.cpp): oneDNN's sgemm for most, OpenBLAS's for
// small ones, each the product in double to fp32 rounding, in every orientation, also inside a
// parallel region. --precision bf16 (nn/cpu_precision.hpp, nn/cpu/gemm_bf16_cpu.cpp): a product is
// the exact product of the operands rounded to bfloat16, summed in fp32 — checked against that
// product in double, and against the fp32 one, which it must differ from (else bf16 did not run);
// the transposes, alpha and beta of every caller; the refusals.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "nn/convert.hpp"
#include "nn/cpu/kernels.hpp"
#include "nn/cpu_precision.hpp"
#include "nn/ops/linear.hpp"
#include "nn/parameters.hpp"
#include "ops_test_util.hpp"

namespace kglm::nn {
namespace {

std::vector<float> uniform_floats(size_t n, uint64_t seed) {
  Rng rng(seed, 0);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(2 * rng.uniform() - 1);
  return v;
}

double as_bf16(float x) { return bf16_to_f32(f32_to_bf16(x)); }

struct Product {
  bool trans_a, trans_b;
  int64_t m, n, k;
  float alpha, beta;
};

// C = alpha·op(A)·op(B) + beta·C0 in double, from the operands as given (`round` false) or rounded
// to bf16; also Σ|alpha·a·b| per element, the scale of the rounding error.
struct Reference {
  std::vector<double> c, magnitude;
};
Reference reference(const Product& p, const std::vector<float>& a, const std::vector<float>& b,
                    const std::vector<float>& c0, bool round) {
  const int64_t lda = p.trans_a ? p.m : p.k, ldb = p.trans_b ? p.k : p.n;
  Reference r{std::vector<double>(c0.size()), std::vector<double>(c0.size())};
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) {
      double sum = 0, magnitude = 0;
      for (int64_t l = 0; l < p.k; ++l) {
        const float x = p.trans_a ? a[l * lda + i] : a[i * lda + l];
        const float y = p.trans_b ? b[j * ldb + l] : b[l * ldb + j];
        const double term = round ? as_bf16(x) * as_bf16(y) : double(x) * double(y);
        sum += term;
        magnitude += std::abs(term);
      }
      r.c[i * p.n + j] = p.alpha * sum + p.beta * double(c0[i * p.n + j]);
      r.magnitude[i * p.n + j] = std::abs(p.alpha) * magnitude + std::abs(p.beta * double(c0[i * p.n + j]));
    }
  return r;
}

// The largest |got − want| relative to the element's magnitude.
double worst_relative(const std::vector<float>& got, const Reference& want) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::abs(double(got[i]) - want.c[i]) / std::max(want.magnitude[i], 1e-30));
  return worst;
}

// C = alpha·op(A)·op(B) + beta·C0 through gemm_parallel (on the OpenMP threads) and through gemm
// inside a parallel region (as attention calls it), with leading dimensions wider than the operands.
std::vector<std::vector<float>> products(const Product& p, const std::vector<float>& a, const std::vector<float>& b,
                                         const std::vector<float>& c0, int threads) {
  const int64_t lda = p.trans_a ? p.m : p.k, ldb = p.trans_b ? p.k : p.n;
  std::vector<float> c = c0, nested = c0;
  with_threads(threads, [&] {
    cpu::gemm_parallel(p.trans_a, p.trans_b, p.m, p.n, p.k, p.alpha, a.data(), lda, b.data(), ldb, p.beta, c.data(),
                       p.n);
#pragma omp parallel num_threads(threads)
    {
#pragma omp single
      cpu::gemm(p.trans_a, p.trans_b, p.m, p.n, p.k, p.alpha, a.data(), lda, b.data(), ldb, p.beta, nested.data(), p.n);
    }
  });
  return {c, nested};
}

TEST(CpuGemm, Fp32ProductsOnOneDnnAndOpenBlasAreTheProduct) {
  // Layer-sized products and attention's per-head shapes (oneDNN), a few rows and short sequences'
  // attention (oneDNN, or OpenBLAS's small-matrix path where its kernels have one), one row (a
  // decoding step's attention: OpenBLAS's sgemv or sgemm, by its kernels), k = 0 (C = beta·C):
  // every orientation, plain, scaled and accumulating, at 1 and 2 threads.
  for (const Product p :
       {Product{false, true, 200, 320, 192, 1.0f, 0.0f}, Product{false, false, 300, 256, 160, 1.0f, 1.0f},
        Product{true, false, 256, 288, 200, 0.125f, 1.0f}, Product{true, true, 72, 256, 224, -2.0f, 0.5f},
        Product{false, true, 128, 128, 64, 0.125f, 0.0f}, Product{false, false, 128, 64, 128, 1.0f, 0.0f},
        Product{false, true, 4, 256, 256, 1.0f, 1.0f}, Product{false, true, 1, 20, 64, 0.125f, 0.0f},
        Product{false, false, 32, 64, 32, 1.0f, 1.0f}, Product{true, false, 24, 7, 256, 0.5f, 0.0f},
        Product{false, false, 1, 64, 20, 1.0f, 1.0f}, Product{true, false, 1, 64, 20, 0.5f, 0.0f},
        Product{true, true, 1, 30, 40, -2.0f, 0.5f}, Product{false, true, 16, 40, 0, 1.0f, 0.5f}}) {
    SCOPED_TRACE(std::string("trans ") + (p.trans_a ? "T" : "N") + (p.trans_b ? "T" : "N") + " " + std::to_string(p.m) +
                 "x" + std::to_string(p.n) + "x" + std::to_string(p.k));
    const std::vector<float> a = uniform_floats(p.m * p.k, 11), b = uniform_floats(p.k * p.n, 12),
                             c0 = uniform_floats(p.m * p.n, 13);
    const Reference exact = reference(p, a, b, c0, false);
    for (int threads : {1, 2})
      for (const std::vector<float>& c : products(p, a, b, c0, threads))
        EXPECT_LE(worst_relative(c, exact), 1e-6) << threads << " threads";
  }
}

TEST(CpuGemm, Fp32ProductsRepeatBitForBit) {
  // The same product twice at a thread count gives the same bits (a run's reproducibility); one
  // thread's equals the nested call's (both run each product whole on one thread).
  const Product p{false, true, 300, 512, 256, 1.0f, 0.0f};
  const std::vector<float> a = uniform_floats(p.m * p.k, 14), b = uniform_floats(p.k * p.n, 15), c0(p.m * p.n);
  for (int threads : {1, 2}) EXPECT_EQ(products(p, a, b, c0, threads), products(p, a, b, c0, threads)) << threads;
  const auto one = products(p, a, b, c0, 1);
  EXPECT_EQ(one[0], one[1]);
}

class CpuBf16 : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cpu_has_bf16()) GTEST_SKIP() << cpu_model_name() << " has neither AVX512_BF16 nor AMX-BF16";
  }
};

TEST_F(CpuBf16, ProductsAreTheBf16RoundedOperandsSummedInFp32) {
  ScopedCpuGemmDType bf16(DType::BF16);
  // Every orientation (linear's forward NT, dx NN and dw TN, and TT), plain, scaled and
  // accumulating, on the OpenMP threads (gemm_parallel) and inside a parallel region on
  // one thread (gemm, as attention calls it); large enough to gain from bf16 (gemm_bf16_cpu.cpp).
  for (const Product p :
       {Product{false, true, 256, 320, 192, 1.0f, 0.0f}, Product{false, false, 300, 256, 160, 1.0f, 1.0f},
        Product{true, false, 256, 288, 200, 0.125f, 1.0f}, Product{true, true, 272, 256, 224, -2.0f, 0.5f}}) {
    SCOPED_TRACE(std::string("trans ") + (p.trans_a ? "T" : "N") + (p.trans_b ? "T" : "N") + " m " +
                 std::to_string(p.m) + " alpha " + std::to_string(p.alpha) + " beta " + std::to_string(p.beta));
    const std::vector<float> a = uniform_floats(p.m * p.k, 1), b = uniform_floats(p.k * p.n, 2),
                             c0 = uniform_floats(p.m * p.n, 3);
    const int64_t lda = p.trans_a ? p.m : p.k, ldb = p.trans_b ? p.k : p.n;
    const Reference rounded = reference(p, a, b, c0, true), exact = reference(p, a, b, c0, false);
    for (int threads : {1, 2}) {
      with_threads(threads, [&] {
        std::vector<float> c = c0;
        cpu::gemm_parallel(p.trans_a, p.trans_b, p.m, p.n, p.k, p.alpha, a.data(), lda, b.data(), ldb, p.beta, c.data(),
                           p.n);
        // fp32 accumulation of k terms: a few ulp of fp32 per term at most.
        EXPECT_LE(worst_relative(c, rounded), 1e-5) << threads << " threads";
        // ...and not the fp32 product: bf16 rounding leaves about 2^-9 of relative error.
        EXPECT_GT(worst_relative(c, exact), 1e-4) << threads << " threads: the product was not rounded to bf16";
        std::vector<float> nested = c0;
#pragma omp parallel num_threads(threads)
        {
#pragma omp single
          cpu::gemm(p.trans_a, p.trans_b, p.m, p.n, p.k, p.alpha, a.data(), lda, b.data(), ldb, p.beta, nested.data(),
                    p.n);
        }
        EXPECT_LE(worst_relative(nested, rounded), 1e-5) << "inside a parallel region";
      });
    }
  }
}

TEST_F(CpuBf16, SmallProductsStayFp32AndF64IsUntouched) {
  // Where rounding the operands costs more than bf16 saves (attention's 128x128 per-head products, a
  // few rows against a wide matrix) a product is sgemm's, bit for bit; F64 never changes.
  for (const Product p : {Product{false, true, 16, 16, 32, 1.0f, 0.0f}, Product{false, true, 128, 128, 64, 1.0f, 0.0f},
                          Product{false, true, 90, 20000, 64, 1.0f, 0.0f}}) {
    const std::vector<float> a = uniform_floats(p.m * p.k, 4), b = uniform_floats(p.k * p.n, 5);
    std::vector<float> fp32(p.m * p.n), bf16(p.m * p.n);
    cpu::gemm(false, true, p.m, p.n, p.k, 1.0f, a.data(), p.k, b.data(), p.k, 0.0f, fp32.data(), p.n);
    {
      ScopedCpuGemmDType scope(DType::BF16);
      cpu::gemm(false, true, p.m, p.n, p.k, 1.0f, a.data(), p.k, b.data(), p.k, 0.0f, bf16.data(), p.n);
    }
    EXPECT_EQ(fp32, bf16) << p.m << "x" << p.n << "x" << p.k;
  }
  Tensor x = random({200, 300}, 6), w = random({400, 300}, 7), y64 = Tensor::empty({200, 400}, DType::F64),
         y64_bf16 = Tensor::empty({200, 400}, DType::F64);
  linear_forward(x, w, Tensor(), y64);
  {
    ScopedCpuGemmDType scope(DType::BF16);
    linear_forward(x, w, Tensor(), y64_bf16);
  }
  for (int64_t i = 0; i < y64.numel(); ++i) ASSERT_EQ(get(y64, i), get(y64_bf16, i)) << i;
}

// y = x · wᵀ for a weight of a store (gradients or not), at the CPU's current gemm dtype.
std::vector<float> linear_of(const Tensor& x, const Parameter& w) {
  Tensor y = Tensor::empty({x.dim(0), w.shape[0]}, DType::F32);
  linear_forward(x, w.compute, Tensor(), y);
  return std::vector<float>(y.data<float>(), y.data<float>() + y.numel());
}

TEST_F(CpuBf16, APredictingModelsWeightsAreRoundedOnceAndFollowRefreshCompute) {
  // A model that only predicts (no gradients) keeps each weight's bf16 copy from its first product:
  // the same bits as rounding it at every product, until refresh_compute() says the values changed.
  const Tensor x = Tensor::from<float>({256, 384}, uniform_floats(256 * 384, 21));
  std::vector<float> expected;
  {
    ParameterStore training;
    training.add("w", {512, 384}, Parameter::Init::Normal, true);
    training.allocate();
    training.initialize(3, 0.5);
    ScopedCpuGemmDType bf16(DType::BF16);
    expected = linear_of(x, training[0]);  // rounded at every product: training stores keep no copy
    training[0].value.data<float>()[0] += 1.0f;
    EXPECT_NE(linear_of(x, training[0]), expected) << "a training store's weights were taken as frozen";
    training[0].value.data<float>()[0] -= 1.0f;
  }
  ParameterStore predicting;
  predicting.add("w", {512, 384}, Parameter::Init::Normal, true);
  predicting.allocate(1, false);
  predicting.initialize(3, 0.5);
  predicting.refresh_compute();
  ScopedCpuGemmDType bf16(DType::BF16);
  EXPECT_EQ(linear_of(x, predicting[0]), expected);
  EXPECT_EQ(linear_of(x, predicting[0]), expected);  // from the kept copy
  std::vector<float> fp32;
  {
    ScopedCpuGemmDType f32(DType::F32);
    fp32 = linear_of(x, predicting[0]);
  }
  EXPECT_NE(fp32, expected);  // bf16 did run
  // New values: the kept copy answers until refresh_compute() declares them (as after loading).
  predicting[0].value.data<float>()[5] += 1.0f;
  EXPECT_EQ(linear_of(x, predicting[0]), expected) << "no copy was kept";
  predicting.refresh_compute();
  const std::vector<float> changed = linear_of(x, predicting[0]);
  EXPECT_NE(changed, expected);
  const Tensor w = predicting[0].value.clone();
  Tensor y = Tensor::empty({256, 512}, DType::F32);
  linear_forward(x, w, Tensor(), y);  // the same values outside the store: rounded afresh
  EXPECT_EQ(changed, std::vector<float>(y.data<float>(), y.data<float>() + y.numel()));
}

TEST(CpuPrecision, RefusalsSayWhy) {
  try {
    require_bf16_cpu(false, "AMD EPYC 7B12 64-Core Processor");
    ADD_FAILURE() << "a CPU without bf16 was accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "--precision bf16 on the CPU needs AVX512_BF16 or AMX-BF16, which AMD EPYC 7B12 64-Core Processor "
                 "lacks: use --precision fp32");
  }
  EXPECT_NO_THROW(require_bf16_cpu(true, "any"));
  EXPECT_THROW(set_cpu_gemm_dtype(DType::F16), Error);
  EXPECT_THROW(use_precision("fp16", Device::Cpu), UsageError);
  EXPECT_THROW(use_precision("bf16", Device::Cuda), UsageError);
  EXPECT_THROW(use_precision("BF16", Device::Cpu), UsageError);
  EXPECT_NO_THROW(use_precision("fp32", Device::Cpu));
  EXPECT_EQ(cpu_gemm_dtype(), DType::F32);
  if (!cpu_has_bf16()) {
    EXPECT_THROW(use_precision("bf16", Device::Cpu), Error);
  } else {
    use_precision("bf16", Device::Cpu);
    EXPECT_EQ(cpu_gemm_dtype(), DType::BF16);
    use_precision("fp32", Device::Cpu);
    EXPECT_EQ(cpu_gemm_dtype(), DType::F32);
  }
}

}  // namespace
}  // namespace kglm::nn
