// Elementwise arithmetic between the layers, and the squared norm for gradient clipping.
#include <algorithm>
#include <vector>

#include "nn/cpu/kernels.hpp"

namespace kglm::nn::cpu {

namespace {

// sum_of_squares adds fixed-size blocks, then the block sums in order: the result does not
// depend on the thread count.
constexpr int64_t kSumBlock = 1 << 14;

}  // namespace

template <class T>
void add(const T* a, const T* b, T* out, int64_t n) {
#pragma omp parallel for simd schedule(static) if (n >= kParallelGrain)
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

template <class T>
void accumulate(T* acc, const T* x, int64_t n) {
#pragma omp parallel for simd schedule(static) if (n >= kParallelGrain)
  for (int64_t i = 0; i < n; ++i) acc[i] += x[i];
}

template <class T>
void multiply(const T* a, const T* b, T* out, int64_t n) {
#pragma omp parallel for simd schedule(static) if (n >= kParallelGrain)
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] * b[i];
}

template <class T>
void scale(T* x, double s, int64_t n) {
  const T f = static_cast<T>(s);
#pragma omp parallel for simd schedule(static) if (n >= kParallelGrain)
  for (int64_t i = 0; i < n; ++i) x[i] *= f;
}

template <class T>
double sum_of_squares(const T* x, int64_t n) {
  const int64_t blocks = (n + kSumBlock - 1) / kSumBlock;
  std::vector<double> partial(static_cast<size_t>(blocks), 0.0);
#pragma omp parallel for schedule(static) if (n >= kParallelGrain)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const T* p = x + blk * kSumBlock;
    const int64_t len = std::min(kSumBlock, n - blk * kSumBlock);
    double s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < len; ++i) s += static_cast<double>(p[i]) * static_cast<double>(p[i]);
    partial[blk] = s;
  }
  double total = 0;
  for (double s : partial) total += s;
  return total;
}

template <class T>
void copy_rows_strided(const T* src, int64_t m, int64_t h, T* dst, int64_t first, int64_t stride) {
  for (int64_t i = 0; i < m; ++i) std::copy(src + i * h, src + (i + 1) * h, dst + (first + i * stride) * h);
}

#define KGLM_ELEMENTWISE_CPU(T)                                                         \
  template void add<T>(const T*, const T*, T*, int64_t);                                \
  template void accumulate<T>(T*, const T*, int64_t);                                   \
  template void multiply<T>(const T*, const T*, T*, int64_t);                           \
  template void copy_rows_strided<T>(const T*, int64_t, int64_t, T*, int64_t, int64_t); \
  template void scale<T>(T*, double, int64_t);                                          \
  template double sum_of_squares<T>(const T*, int64_t);
KGLM_ELEMENTWISE_CPU(float)
KGLM_ELEMENTWISE_CPU(double)
#undef KGLM_ELEMENTWISE_CPU

}  // namespace kglm::nn::cpu
