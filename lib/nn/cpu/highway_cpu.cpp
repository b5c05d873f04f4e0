// The highway gating (nn/ops/highway.hpp) on the CPU, one row per iteration, vectorised (exp_vec).
#include <cmath>

#include "nn/cpu/kernels.hpp"

namespace kglm::nn::cpu {

template <class T>
void highway_forward(const T* x, const T* pre, T* y, int64_t n, int64_t h) {
#pragma omp parallel for schedule(static) if (n * h >= kParallelGrain)
  for (int64_t r = 0; r < n; ++r) {
    const T* transform = pre + r * 2 * h;
    const T* carry = transform + h;
#pragma omp simd
    for (int64_t j = 0; j < h; ++j) {
      const T g = sigmoid_of(carry[j]);
      const T t = transform[j] > T(0) ? transform[j] : T(0);
      y[r * h + j] = g * t + (T(1) - g) * x[r * h + j];
    }
  }
}

template <class T>
void highway_backward(const T* dy, const T* x, const T* pre, T* dx, T* dpre, int64_t n, int64_t h, bool accumulate) {
#pragma omp parallel for schedule(static) if (n * h >= kParallelGrain)
  for (int64_t r = 0; r < n; ++r) {
    const T* transform = pre + r * 2 * h;
    const T* carry = transform + h;
    T* dtransform = dpre + r * 2 * h;
    T* dcarry = dtransform + h;
#pragma omp simd
    for (int64_t j = 0; j < h; ++j) {
      const T g = sigmoid_of(carry[j]);
      const T t = transform[j] > T(0) ? transform[j] : T(0);
      const T d = dy[r * h + j];
      dtransform[j] = transform[j] > T(0) ? d * g : T(0);
      dcarry[j] = d * (t - x[r * h + j]) * g * (T(1) - g);
      const T direct = d * (T(1) - g);
      dx[r * h + j] = accumulate ? dx[r * h + j] + direct : direct;
    }
  }
}

template void highway_forward<float>(const float*, const float*, float*, int64_t, int64_t);
template void highway_forward<double>(const double*, const double*, double*, int64_t, int64_t);
template void highway_backward<float>(const float*, const float*, const float*, float*, float*, int64_t, int64_t, bool);
template void highway_backward<double>(const double*, const double*, const double*, double*, double*, int64_t, int64_t,
                                       bool);

}  // namespace kglm::nn::cpu
