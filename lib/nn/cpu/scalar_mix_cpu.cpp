// The scalar mix's weighted sum and dot products (nn/ops/scalar_mix.hpp) on the CPU. The dot
// products add fixed-size blocks in double, then the block sums in order: the result does not
// depend on the thread count.
#include <algorithm>
#include <vector>

#include "nn/cpu/kernels.hpp"

namespace kglm::nn::cpu {

namespace {
constexpr int64_t kDotBlock = 1 << 14;
}  // namespace

template <class T>
void scalar_mix_forward(const T* x, const float* coefficients, T* y, int64_t layers, int64_t n) {
#pragma omp parallel for schedule(static) if (n * layers >= kParallelGrain)
  for (int64_t blk = 0; blk < (n + kDotBlock - 1) / kDotBlock; ++blk) {
    const int64_t first = blk * kDotBlock, last = std::min(n, first + kDotBlock);
    const T c0 = static_cast<T>(coefficients[0]);
#pragma omp simd
    for (int64_t i = first; i < last; ++i) y[i] = c0 * x[i];
    for (int64_t j = 1; j < layers; ++j) {
      const T c = static_cast<T>(coefficients[j]);
      const T* xj = x + j * n;
#pragma omp simd
      for (int64_t i = first; i < last; ++i) y[i] += c * xj[i];
    }
  }
}

template <class T>
void scalar_mix_dots(const T* dy, const T* x, int64_t layers, int64_t n, double* dots) {
  const int64_t blocks = (n + kDotBlock - 1) / kDotBlock;
  std::vector<double> partial(static_cast<size_t>(blocks * layers), 0.0);
#pragma omp parallel for schedule(static) if (n * layers >= kParallelGrain)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t first = blk * kDotBlock, last = std::min(n, first + kDotBlock);
    for (int64_t j = 0; j < layers; ++j) {
      const T* xj = x + j * n;
      double s = 0;
      for (int64_t i = first; i < last; ++i) s += static_cast<double>(dy[i]) * static_cast<double>(xj[i]);
      partial[static_cast<size_t>(blk * layers + j)] = s;
    }
  }
  for (int64_t j = 0; j < layers; ++j) {
    double s = 0;
    for (int64_t blk = 0; blk < blocks; ++blk) s += partial[static_cast<size_t>(blk * layers + j)];
    dots[j] = s;
  }
}

template void scalar_mix_forward<float>(const float*, const float*, float*, int64_t, int64_t);
template void scalar_mix_forward<double>(const double*, const float*, double*, int64_t, int64_t);
template void scalar_mix_dots<float>(const float*, const float*, int64_t, int64_t, double*);
template void scalar_mix_dots<double>(const double*, const double*, int64_t, int64_t, double*);

}  // namespace kglm::nn::cpu
