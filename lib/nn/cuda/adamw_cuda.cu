// AdamW step, elementwise; each element is updated in double and stored back in T, as on the CPU.
// adamw_update_segments is the multi-tensor form: every parameter of a model in one launch.
#include <cmath>

#include "nn/cuda/common.cuh"
#include "nn/cuda/kernels.hpp"

namespace kglm::nn::cuda {

namespace {

struct AdamWConstants {
  double b1, b2, lr, eps, correction1, correction2, decay, grad_scale;
};

AdamWConstants constants(const AdamWHyper& hyper, double grad_scale) {
  const double t = static_cast<double>(hyper.step);
  return {hyper.beta1,
          hyper.beta2,
          hyper.lr,
          hyper.eps,
          1.0 - std::pow(hyper.beta1, t),
          1.0 - std::pow(hyper.beta2, t),
          1.0 - hyper.lr * hyper.weight_decay,
          grad_scale};
}

// One element, in the CPU's order of operations; `decay` is 1 − lr·wd, or 1 without weight decay.
template <class T>
__device__ void adamw_element(T& param, T grad, T& m, T& v, const AdamWConstants& k, double decay) {
  const double g = static_cast<double>(grad) * k.grad_scale;
  const double mi = k.b1 * static_cast<double>(m) + (1.0 - k.b1) * g;
  const double vi = k.b2 * static_cast<double>(v) + (1.0 - k.b2) * g * g;
  const double p = static_cast<double>(param) * decay;
  param = static_cast<T>(p - k.lr * (mi / k.correction1) / (sqrt(vi / k.correction2) + k.eps));
  m = static_cast<T>(mi);
  v = static_cast<T>(vi);
}

template <class T>
__global__ void adamw_kernel(T* param, const T* grad, T* m, T* v, int64_t n, AdamWConstants k) {
  for (int64_t i = global_thread(); i < n; i += grid_threads())
    adamw_element(param[i], grad[i], m[i], v[i], k, k.decay);
}

// Block c updates chunk c of the table: (param offset, state offset, size, decay).
__global__ void adamw_segments_kernel(float* values, const float* grads, float* m, float* v, const int64_t* table,
                                      AdamWConstants k) {
  const int64_t* chunk = table + 4 * static_cast<int64_t>(blockIdx.x);
  const int64_t p0 = chunk[0], s0 = chunk[1], n = chunk[2];
  const double decay = chunk[3] ? k.decay : 1.0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    adamw_element(values[p0 + i], grads[p0 + i], m[s0 + i], v[s0 + i], k, decay);
}

}  // namespace

template <class T>
void adamw_update(T* param, const T* grad, T* m, T* v, int64_t n, const AdamWHyper& hyper, double grad_scale) {
  if (n == 0) return;
  adamw_kernel<<<elementwise_blocks(n), kThreads, 0, Context::get().stream()>>>(param, grad, m, v, n,
                                                                                constants(hyper, grad_scale));
  check_launch("adamw_update");
}

void adamw_update_segments(float* values, const float* grads, float* m, float* v, const int64_t* table, int64_t chunks,
                           const AdamWHyper& hyper, double grad_scale) {
  if (chunks == 0) return;
  adamw_segments_kernel<<<static_cast<unsigned>(chunks), kThreads * 2, 0, Context::get().stream()>>>(
      values, grads, m, v, table, constants(hyper, grad_scale));
  check_launch("adamw_update_segments");
}

template void adamw_update<float>(float*, const float*, float*, float*, int64_t, const AdamWHyper&, double);

}  // namespace kglm::nn::cuda
