// GELU (exact, erf) and tanh, elementwise, in fp32 whatever the storage type. Outputs may alias
// inputs: element i is read, then written.
#include "nn/cuda/common.cuh"
#include "nn/cuda/kernels.hpp"

namespace kglm::nn::cuda {

namespace {

constexpr float kInvSqrt2 = 0.70710678118654752440f;
constexpr float kInvSqrt2Pi = 0.39894228040143267794f;

template <class T>
__global__ void gelu_forward_kernel(const T* x, T* y, int64_t n) {
  for (int64_t i = global_thread(); i < n; i += grid_threads()) {
    const float v = to_float(x[i]);
    y[i] = from_float<T>(0.5f * v * (1.0f + erff(v * kInvSqrt2)));
  }
}

template <class T>
__global__ void gelu_backward_kernel(const T* dy, const T* x, T* dx, int64_t n) {
  // d/dx x·Φ(x) = Φ(x) + x·φ(x)
  for (int64_t i = global_thread(); i < n; i += grid_threads()) {
    const float v = to_float(x[i]);
    const float pdf = kInvSqrt2Pi * expf(-0.5f * v * v);
    dx[i] = from_float<T>(to_float(dy[i]) * (0.5f * (1.0f + erff(v * kInvSqrt2)) + v * pdf));
  }
}

template <class T>
__global__ void tanh_forward_kernel(const T* x, T* y, int64_t n) {
  for (int64_t i = global_thread(); i < n; i += grid_threads()) y[i] = from_float<T>(tanhf(to_float(x[i])));
}

template <class T>
__global__ void tanh_backward_kernel(const T* dy, const T* y, T* dx, int64_t n) {
  for (int64_t i = global_thread(); i < n; i += grid_threads()) {
    const float v = to_float(y[i]);
    dx[i] = from_float<T>(to_float(dy[i]) * (1.0f - v * v));
  }
}

}  // namespace

template <class T>
void gelu_forward(const T* x, T* y, int64_t n) {
  if (n == 0) return;
  gelu_forward_kernel<<<elementwise_blocks(n), kThreads, 0, Context::get().stream()>>>(native(x), native(y), n);
  check_launch("gelu_forward");
}

template <class T>
void gelu_backward(const T* dy, const T* x, T* dx, int64_t n) {
  if (n == 0) return;
  gelu_backward_kernel<<<elementwise_blocks(n), kThreads, 0, Context::get().stream()>>>(native(dy), native(x),
                                                                                        native(dx), n);
  check_launch("gelu_backward");
}

template <class T>
void tanh_forward(const T* x, T* y, int64_t n) {
  if (n == 0) return;
  tanh_forward_kernel<<<elementwise_blocks(n), kThreads, 0, Context::get().stream()>>>(native(x), native(y), n);
  check_launch("tanh_forward");
}

template <class T>
void tanh_backward(const T* dy, const T* y, T* dx, int64_t n) {
  if (n == 0) return;
  tanh_backward_kernel<<<elementwise_blocks(n), kThreads, 0, Context::get().stream()>>>(native(dy), native(y),
                                                                                        native(dx), n);
  check_launch("tanh_backward");
}

#define KGLM_ACTIVATION_CUDA(T)                                    \
  template void gelu_forward<T>(const T*, T*, int64_t);            \
  template void gelu_backward<T>(const T*, const T*, T*, int64_t); \
  template void tanh_forward<T>(const T*, T*, int64_t);            \
  template void tanh_backward<T>(const T*, const T*, T*, int64_t);
KGLM_FOR_STORAGE_TYPES(KGLM_ACTIVATION_CUDA)
#undef KGLM_ACTIVATION_CUDA

}  // namespace kglm::nn::cuda
