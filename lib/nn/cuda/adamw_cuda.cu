// AdamW step, elementwise; each element is updated in double and stored back in T, as on the CPU.
#include <cmath>

#include "nn/cuda/common.cuh"
#include "nn/cuda/kernels.hpp"

namespace kglm::nn::cuda {

namespace {

struct AdamWConstants {
  double b1, b2, lr, eps, correction1, correction2, decay, grad_scale;
};

template <class T>
__global__ void adamw_kernel(T* param, const T* grad, T* m, T* v, int64_t n, AdamWConstants k) {
  for (int64_t i = global_thread(); i < n; i += grid_threads()) {
    const double g = static_cast<double>(grad[i]) * k.grad_scale;
    const double mi = k.b1 * static_cast<double>(m[i]) + (1.0 - k.b1) * g;
    const double vi = k.b2 * static_cast<double>(v[i]) + (1.0 - k.b2) * g * g;
    const double p = static_cast<double>(param[i]) * k.decay;
    param[i] = static_cast<T>(p - k.lr * (mi / k.correction1) / (sqrt(vi / k.correction2) + k.eps));
    m[i] = static_cast<T>(mi);
    v[i] = static_cast<T>(vi);
  }
}

}  // namespace

template <class T>
void adamw_update(T* param, const T* grad, T* m, T* v, int64_t n, const AdamWHyper& hyper, double grad_scale) {
  if (n == 0) return;
  const double t = static_cast<double>(hyper.step);
  const AdamWConstants k{hyper.beta1,
                         hyper.beta2,
                         hyper.lr,
                         hyper.eps,
                         1.0 - std::pow(hyper.beta1, t),
                         1.0 - std::pow(hyper.beta2, t),
                         1.0 - hyper.lr * hyper.weight_decay,
                         grad_scale};
  adamw_kernel<<<elementwise_blocks(n), kThreads, 0, Context::get().stream()>>>(param, grad, m, v, n, k);
  check_launch("adamw_update");
}

template void adamw_update<float>(float*, const float*, float*, float*, int64_t, const AdamWHyper&, double);

}  // namespace kglm::nn::cuda
