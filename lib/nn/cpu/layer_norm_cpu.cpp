// LayerNorm over rows, statistics in double. The backward pass reduces dγ and dβ over fixed
// blocks of rows, combined in block order, so they do not depend on the thread count.
#include <cmath>
#include <vector>

#include "nn/cpu/kernels.hpp"

namespace kglm::nn::cpu {

namespace {

constexpr int64_t kBlockRows = 32;

}  // namespace

template <class T>
void layer_norm_forward(const T* x, const T* residual, T* sum_out, const T* gamma, const T* beta, double eps, T* y,
                        T* mean, T* rstd, int64_t n, int64_t h) {
#pragma omp parallel for schedule(static) if (n * h >= kParallelGrain)
  for (int64_t r = 0; r < n; ++r) {
    const T* xr = x + r * h;
    if (residual) {  // the fused residual: the row's sum first, then its LayerNorm
      const T* rr = residual + r * h;
      T* sr = sum_out + r * h;
      for (int64_t j = 0; j < h; ++j) sr[j] = xr[j] + rr[j];
      xr = sr;
    }
    double sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < h; ++j) sum += xr[j];
    const double mu = sum / static_cast<double>(h);
    // Two passes: the one-pass Σx² − (Σx)² form loses precision when |mean| ≫ std.
    double squares = 0;
#pragma omp simd reduction(+ : squares)
    for (int64_t j = 0; j < h; ++j) {
      const double d = xr[j] - mu;
      squares += d * d;
    }
    const double rs = 1.0 / std::sqrt(squares / static_cast<double>(h) + eps);
    mean[r] = static_cast<T>(mu);
    rstd[r] = static_cast<T>(rs);
    const T m = static_cast<T>(mu), k = static_cast<T>(rs);
    T* yr = y + r * h;  // may be xr: each element is read before it is written
    for (int64_t j = 0; j < h; ++j) yr[j] = (xr[j] - m) * k * gamma[j] + beta[j];
  }
}

template <class T>
void layer_norm_backward(const T* dy, const T* x, const T* gamma, const T* mean, const T* rstd, T* dx, T* dgamma,
                         T* dbeta, int64_t n, int64_t h, bool dx_accumulate) {
  const int64_t blocks = (n + kBlockRows - 1) / kBlockRows;
  const bool params = dgamma || dbeta;
  // Per block: Σ dy·x̂ (h values), then Σ dy (h values).
  std::vector<double> partial(params ? static_cast<size_t>(2 * blocks * h) : 0, 0.0);
#pragma omp parallel for schedule(static) if (n * h >= kParallelGrain)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    double* pg = params ? partial.data() + 2 * blk * h : nullptr;
    double* pb = params ? pg + h : nullptr;
    for (int64_t r = blk * kBlockRows; r < std::min(n, (blk + 1) * kBlockRows); ++r) {
      const T* dyr = dy + r * h;
      const T* xr = x + r * h;
      const T m = mean[r], k = rstd[r];
      // dx = rstd · (g − mean(g) − x̂ · mean(g · x̂)) with g = dy · γ.
      double sum_g = 0, sum_gx = 0;
#pragma omp simd reduction(+ : sum_g, sum_gx)
      for (int64_t j = 0; j < h; ++j) {
        const T xhat = (xr[j] - m) * k;
        const T g = dyr[j] * gamma[j];
        sum_g += g;
        sum_gx += g * xhat;
      }
      if (params) {
        for (int64_t j = 0; j < h; ++j) {
          pg[j] += static_cast<double>(dyr[j]) * ((xr[j] - m) * k);
          pb[j] += dyr[j];
        }
      }
      const T mean_g = static_cast<T>(sum_g / static_cast<double>(h));
      const T mean_gx = static_cast<T>(sum_gx / static_cast<double>(h));
      T* dxr = dx + r * h;  // may be dyr: each element is read before it is written
      for (int64_t j = 0; j < h; ++j) {
        const T xhat = (xr[j] - m) * k;
        const T v = k * (dyr[j] * gamma[j] - mean_g - xhat * mean_gx);
        dxr[j] = dx_accumulate ? dxr[j] + v : v;
      }
    }
  }
  if (!params) return;
  std::vector<double> total(static_cast<size_t>(2 * h), 0.0);
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const double* p = partial.data() + 2 * blk * h;
    for (int64_t j = 0; j < 2 * h; ++j) total[j] += p[j];
  }
  for (int64_t j = 0; j < h; ++j) {
    if (dgamma) dgamma[j] = static_cast<T>(dgamma[j] + total[j]);
    if (dbeta) dbeta[j] = static_cast<T>(dbeta[j] + total[h + j]);
  }
}

#define KGLM_LAYER_NORM_CPU(T)                                                                                         \
  template void layer_norm_forward<T>(const T*, const T*, T*, const T*, const T*, double, T*, T*, T*, int64_t,         \
                                      int64_t);                                                                        \
  template void layer_norm_backward<T>(const T*, const T*, const T*, const T*, const T*, T*, T*, T*, int64_t, int64_t, \
                                       bool);
KGLM_LAYER_NORM_CPU(float)
KGLM_LAYER_NORM_CPU(double)
#undef KGLM_LAYER_NORM_CPU

}  // namespace kglm::nn::cpu
