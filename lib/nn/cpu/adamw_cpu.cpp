// AdamW step, elementwise; each element is updated in double and stored back in T.
#include <cmath>

#include "nn/cpu/kernels.hpp"

namespace kglm::nn::cpu {

template <class T>
void adamw_update(T* param, const T* grad, T* m, T* v, int64_t n, const AdamWHyper& hyper, double grad_scale) {
  const double b1 = hyper.beta1, b2 = hyper.beta2, lr = hyper.lr, eps = hyper.eps;
  const double t = static_cast<double>(hyper.step);
  const double correction1 = 1.0 - std::pow(b1, t);
  const double correction2 = 1.0 - std::pow(b2, t);
  const double decay = 1.0 - lr * hyper.weight_decay;  // decoupled: p ← p − lr·wd·p
#pragma omp parallel for simd schedule(static) if (n >= kParallelGrain)
  for (int64_t i = 0; i < n; ++i) {
    const double g = static_cast<double>(grad[i]) * grad_scale;
    const double mi = b1 * static_cast<double>(m[i]) + (1.0 - b1) * g;
    const double vi = b2 * static_cast<double>(v[i]) + (1.0 - b2) * g * g;
    const double p = static_cast<double>(param[i]) * decay;
    param[i] = static_cast<T>(p - lr * (mi / correction1) / (std::sqrt(vi / correction2) + eps));
    m[i] = static_cast<T>(mi);
    v[i] = static_cast<T>(vi);
  }
}

template void adamw_update<float>(float*, const float*, float*, float*, int64_t, const AdamWHyper&, double);
template void adamw_update<double>(double*, const double*, double*, double*, int64_t, const AdamWHyper&, double);

}  // namespace kglm::nn::cpu
