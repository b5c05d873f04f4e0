// T5's RMS norm over rows, the mean square in double. The backward pass reduces dγ over fixed
// blocks of rows, combined in block order, so it does not depend on the thread count.
#include <cmath>
#include <vector>

#include "nn/cpu/kernels.hpp"

namespace kglm::nn::cpu {

namespace {

constexpr int64_t kBlockRows = 32;

}  // namespace

template <class T>
void rms_norm_forward(const T* x, const T* gamma, double eps, T* y, T* rstd, int64_t n, int64_t h) {
#pragma omp parallel for schedule(static) if (n * h >= kParallelGrain)
  for (int64_t r = 0; r < n; ++r) {
    const T* xr = x + r * h;
    double squares = 0;
#pragma omp simd reduction(+ : squares)
    for (int64_t j = 0; j < h; ++j) squares += static_cast<double>(xr[j]) * xr[j];
    const T k = static_cast<T>(1.0 / std::sqrt(squares / static_cast<double>(h) + eps));
    rstd[r] = k;
    T* yr = y + r * h;  // may be xr: each element is read before it is written
#pragma omp simd
    for (int64_t j = 0; j < h; ++j) yr[j] = xr[j] * k * gamma[j];
  }
}

template <class T>
void rms_norm_backward(const T* dy, const T* x, const T* gamma, const T* rstd, T* dx, T* dgamma, int64_t n, int64_t h,
                       bool dx_accumulate) {
  const int64_t blocks = (n + kBlockRows - 1) / kBlockRows;
  std::vector<double> partial(dgamma ? static_cast<size_t>(blocks * h) : 0, 0.0);
#pragma omp parallel for schedule(static) if (n * h >= kParallelGrain)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    double* pg = dgamma ? partial.data() + blk * h : nullptr;
    for (int64_t r = blk * kBlockRows; r < std::min(n, (blk + 1) * kBlockRows); ++r) {
      const T* dyr = dy + r * h;
      const T* xr = x + r * h;
      const T k = rstd[r];
      // x̂ = x·rstd; dx = rstd · (g − x̂ · mean(g · x̂)) with g = dy · γ.
      double sum_gx = 0;
#pragma omp simd reduction(+ : sum_gx)
      for (int64_t j = 0; j < h; ++j) sum_gx += static_cast<double>(dyr[j] * gamma[j]) * (xr[j] * k);
      if (pg)
        for (int64_t j = 0; j < h; ++j) pg[j] += static_cast<double>(dyr[j]) * (xr[j] * k);
      const T mean_gx = static_cast<T>(sum_gx / static_cast<double>(h));
      T* dxr = dx + r * h;  // may be dyr: each element is read before it is written
      for (int64_t j = 0; j < h; ++j) {
        const T v = k * (dyr[j] * gamma[j] - xr[j] * k * mean_gx);
        dxr[j] = dx_accumulate ? dxr[j] + v : v;
      }
    }
  }
  if (!dgamma) return;
  for (int64_t j = 0; j < h; ++j) {
    double total = 0;
    for (int64_t blk = 0; blk < blocks; ++blk) total += partial[blk * h + j];
    dgamma[j] = static_cast<T>(dgamma[j] + total);
  }
}

#define KGLM_RMS_NORM_CPU(T)                                                               \
  template void rms_norm_forward<T>(const T*, const T*, double, T*, T*, int64_t, int64_t); \
  template void rms_norm_backward<T>(const T*, const T*, const T*, const T*, T*, T*, int64_t, int64_t, bool);
KGLM_RMS_NORM_CPU(float)
KGLM_RMS_NORM_CPU(double)
#undef KGLM_RMS_NORM_CPU

}  // namespace kglm::nn::cpu
