// GELU (exact, erf; and T5's tanh approximation), tanh and ReLU, elementwise, in fp32 whatever the storage type.
// Outputs may alias inputs: element i is read, then written.
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

template <class T>
__global__ void relu_forward_kernel(const T* x, T* y, int64_t n) {
  for (int64_t i = global_thread(); i < n; i += grid_threads()) {
    const float v = to_float(x[i]);
    y[i] = from_float<T>(v > 0.0f ? v : 0.0f);
  }
}

// Through ReLU from its output: y > 0 exactly where the input passed.
template <class T>
__global__ void relu_backward_kernel(const T* dy, const T* y, T* dx, int64_t n) {
  for (int64_t i = global_thread(); i < n; i += grid_threads())
    dx[i] = from_float<T>(to_float(y[i]) > 0.0f ? to_float(dy[i]) : 0.0f);
}

constexpr float kSqrt2OverPi = 0.79788456080286535588f;
constexpr float kGeluCubic = 0.044715f;

template <class T>
__global__ void gelu_tanh_forward_kernel(const T* x, T* y, int64_t n) {
  for (int64_t i = global_thread(); i < n; i += grid_threads()) {
    const float v = to_float(x[i]);
    y[i] = from_float<T>(0.5f * v * (1.0f + tanhf(kSqrt2OverPi * (v + kGeluCubic * v * v * v))));
  }
}

// d/dx ½x(1 + t) = ½(1 + t) + ½x(1 − t²)·c(1 + 3a·x²), t = tanh(c(x + a·x³))
template <class T>
__global__ void gelu_tanh_backward_kernel(const T* dy, const T* x, T* dx, int64_t n) {
  for (int64_t i = global_thread(); i < n; i += grid_threads()) {
    const float v = to_float(x[i]);
    const float t = tanhf(kSqrt2OverPi * (v + kGeluCubic * v * v * v));
    const float g = 0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * v * v);
    dx[i] = from_float<T>(to_float(dy[i]) * g);
  }
}

}  // namespace

template <class T>
void gelu_forward(const T* x, T* y, int64_t n) {
  launch_elementwise(gelu_forward_kernel<native_t<T>>, "gelu_forward", n, native(x), native(y), n);
}

template <class T>
void gelu_backward(const T* dy, const T* x, T* dx, int64_t n) {
  launch_elementwise(gelu_backward_kernel<native_t<T>>, "gelu_backward", n, native(dy), native(x), native(dx), n);
}

template <class T>
void tanh_forward(const T* x, T* y, int64_t n) {
  launch_elementwise(tanh_forward_kernel<native_t<T>>, "tanh_forward", n, native(x), native(y), n);
}

template <class T>
void tanh_backward(const T* dy, const T* y, T* dx, int64_t n) {
  launch_elementwise(tanh_backward_kernel<native_t<T>>, "tanh_backward", n, native(dy), native(y), native(dx), n);
}

template <class T>
void relu_forward(const T* x, T* y, int64_t n) {
  launch_elementwise(relu_forward_kernel<native_t<T>>, "relu_forward", n, native(x), native(y), n);
}

template <class T>
void relu_backward(const T* dy, const T* y, T* dx, int64_t n) {
  launch_elementwise(relu_backward_kernel<native_t<T>>, "relu_backward", n, native(dy), native(y), native(dx), n);
}

template <class T>
void gelu_tanh_forward(const T* x, T* y, int64_t n) {
  launch_elementwise(gelu_tanh_forward_kernel<native_t<T>>, "gelu_tanh_forward", n, native(x), native(y), n);
}

template <class T>
void gelu_tanh_backward(const T* dy, const T* x, T* dx, int64_t n) {
  launch_elementwise(gelu_tanh_backward_kernel<native_t<T>>, "gelu_tanh_backward", n, native(dy), native(x), native(dx),
                     n);
}

#define KGLM_ACTIVATION_CUDA(T)                                    \
  template void gelu_forward<T>(const T*, T*, int64_t);            \
  template void gelu_backward<T>(const T*, const T*, T*, int64_t); \
  template void tanh_forward<T>(const T*, T*, int64_t);            \
  template void tanh_backward<T>(const T*, const T*, T*, int64_t); \
  template void relu_forward<T>(const T*, T*, int64_t);            \
  template void relu_backward<T>(const T*, const T*, T*, int64_t); \
  template void gelu_tanh_forward<T>(const T*, T*, int64_t);       \
  template void gelu_tanh_backward<T>(const T*, const T*, T*, int64_t);
KGLM_FOR_STORAGE_TYPES(KGLM_ACTIVATION_CUDA)
#undef KGLM_ACTIVATION_CUDA

}  // namespace kglm::nn::cuda
