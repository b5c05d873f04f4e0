// Segment pooling (nn/ops/segment_pool.hpp), the twin of cpu/segment_pool_cpu.cpp: one thread per
// (segment, column), in fp32; segments do not overlap, so no two threads write one element.
#include "nn/cuda/common.cuh"
#include "nn/cuda/kernels.hpp"
#include "nn/ops/segment_pool.hpp"

namespace kglm::nn::cuda {

namespace {

template <class T>
__global__ void segment_pool_forward_kernel(const T* x, const int32_t* segments, T* out, int32_t* argmax, int64_t s,
                                            int64_t d) {
  for (int64_t e = global_thread(); e < s * d; e += grid_threads()) {
    const int64_t k = e / d, c = e % d, first = segments[2 * k], length = segments[2 * k + 1];
    float sum = 0, top = to_float(x[first * d + c]);
    int64_t at = first;
    for (int64_t r = first; r < first + length; ++r) {
      const float v = to_float(x[r * d + c]);
      sum += v;
      if (v > top) top = v, at = r;
    }
    out[k * 2 * d + c] = from_float<T>(sum / static_cast<float>(length));
    out[k * 2 * d + d + c] = from_float<T>(top);
    argmax[e] = static_cast<int32_t>(at);
  }
}

template <class T>
__global__ void segment_pool_backward_kernel(const T* dout, const int32_t* segments, const int32_t* argmax, T* dx,
                                             int64_t s, int64_t d) {
  for (int64_t e = global_thread(); e < s * d; e += grid_threads()) {
    const int64_t k = e / d, c = e % d, first = segments[2 * k], length = segments[2 * k + 1];
    const float mean = to_float(dout[k * 2 * d + c]) / static_cast<float>(length);
    const float top = to_float(dout[k * 2 * d + d + c]);
    for (int64_t r = first; r < first + length; ++r)
      dx[r * d + c] = from_float<T>(mean + (r == argmax[e] ? top : 0.0f));
  }
}

}  // namespace

template <class T>
void segment_pool_forward(const T* x, const int32_t* segments, T* out, int32_t* argmax, int64_t n, int64_t s,
                          int64_t d) {
  (void)n;
  launch_elementwise(segment_pool_forward_kernel<native_t<T>>, "segment_pool_forward", s * d, native(x), segments,
                     native(out), argmax, s, d);
}

template <class T>
void segment_pool_backward(const T* dout, const int32_t* segments, const int32_t* argmax, T* dx, int64_t n, int64_t s,
                           int64_t d) {
  (void)n;
  launch_elementwise(segment_pool_backward_kernel<native_t<T>>, "segment_pool_backward", s * d, native(dout), segments,
                     argmax, native(dx), s, d);
}

#define KGLM_SEGMENT_POOL_CUDA(T)                                                                           \
  template void segment_pool_forward<T>(const T*, const int32_t*, T*, int32_t*, int64_t, int64_t, int64_t); \
  template void segment_pool_backward<T>(const T*, const int32_t*, const int32_t*, T*, int64_t, int64_t, int64_t);
KGLM_FOR_STORAGE_TYPES(KGLM_SEGMENT_POOL_CUDA)
#undef KGLM_SEGMENT_POOL_CUDA

}  // namespace kglm::nn::cuda
