// The highway gating (nn/ops/highway.hpp), the twin of cpu/highway_cpu.cpp: one thread per element,
// in fp32 whatever the storage type.
#include "nn/cuda/common.cuh"
#include "nn/cuda/kernels.hpp"

namespace kglm::nn::cuda {

namespace {

template <class T>
__global__ void highway_forward_kernel(const T* x, const T* pre, T* y, int64_t n, int64_t h) {
  for (int64_t i = global_thread(); i < n * h; i += grid_threads()) {
    const int64_t r = i / h, j = i % h;
    const float g = 1.0f / (1.0f + expf(-to_float(pre[r * 2 * h + h + j])));
    const float t = fmaxf(to_float(pre[r * 2 * h + j]), 0.0f);
    y[i] = from_float<T>(g * t + (1.0f - g) * to_float(x[i]));
  }
}

template <class T>
__global__ void highway_backward_kernel(const T* dy, const T* x, const T* pre, T* dx, T* dpre, int64_t n, int64_t h,
                                        bool accumulate) {
  for (int64_t i = global_thread(); i < n * h; i += grid_threads()) {
    const int64_t r = i / h, j = i % h;
    const float transform = to_float(pre[r * 2 * h + j]);
    const float g = 1.0f / (1.0f + expf(-to_float(pre[r * 2 * h + h + j])));
    const float d = to_float(dy[i]);
    dpre[r * 2 * h + j] = from_float<T>(transform > 0 ? d * g : 0.0f);
    dpre[r * 2 * h + h + j] = from_float<T>(d * (fmaxf(transform, 0.0f) - to_float(x[i])) * g * (1.0f - g));
    const float direct = d * (1.0f - g);
    dx[i] = from_float<T>(accumulate ? to_float(dx[i]) + direct : direct);
  }
}

}  // namespace

template <class T>
void highway_forward(const T* x, const T* pre, T* y, int64_t n, int64_t h) {
  launch_elementwise(highway_forward_kernel<native_t<T>>, "highway_forward", n * h, native(x), native(pre), native(y),
                     n, h);
}

template <class T>
void highway_backward(const T* dy, const T* x, const T* pre, T* dx, T* dpre, int64_t n, int64_t h, bool accumulate) {
  launch_elementwise(highway_backward_kernel<native_t<T>>, "highway_backward", n * h, native(dy), native(x),
                     native(pre), native(dx), native(dpre), n, h, accumulate);
}

#define KGLM_HIGHWAY_CUDA(T)                                                   \
  template void highway_forward<T>(const T*, const T*, T*, int64_t, int64_t); \
  template void highway_backward<T>(const T*, const T*, const T*, T*, T*, int64_t, int64_t, bool);
KGLM_FOR_STORAGE_TYPES(KGLM_HIGHWAY_CUDA)
#undef KGLM_HIGHWAY_CUDA

}  // namespace kglm::nn::cuda
