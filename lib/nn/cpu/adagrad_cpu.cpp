// Adagrad step (nn/ops/adagrad.hpp), elementwise, in double.
#include <cmath>

#include "nn/cpu/kernels.hpp"

namespace kglm::nn::cpu {

template <class T>
void adagrad_update(T* param, const T* grad, T* accum, int64_t n, double lr, double grad_scale) {
#pragma omp parallel for simd schedule(static) if (n >= kParallelGrain)
  for (int64_t i = 0; i < n; ++i) {
    const double g = static_cast<double>(grad[i]) * grad_scale;
    if (g == 0) continue;  // also keeps 0/0 away from an accumulator a caller left at 0
    const double a = static_cast<double>(accum[i]) + g * g;
    accum[i] = static_cast<T>(a);
    param[i] = static_cast<T>(static_cast<double>(param[i]) - lr * g / std::sqrt(a));
  }
}

template void adagrad_update<float>(float*, const float*, float*, int64_t, double, double);
template void adagrad_update<double>(double*, const double*, double*, int64_t, double, double);

}  // namespace kglm::nn::cpu
