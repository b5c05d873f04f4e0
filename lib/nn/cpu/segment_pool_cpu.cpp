// Segment pooling (nn/ops/segment_pool.hpp) on the CPU: segments spread over the threads; each
// writes only its own rows, so the result does not depend on the thread count.
#include "nn/cpu/kernels.hpp"
#include "nn/ops/segment_pool.hpp"

namespace kglm::nn::cpu {

template <class T>
void segment_pool_forward(const T* x, const int32_t* segments, T* out, int32_t* argmax, int64_t n, int64_t s,
                          int64_t d) {
  (void)n;
#pragma omp parallel for schedule(static) if (s * d * 16 >= kParallelGrain)
  for (int64_t k = 0; k < s; ++k) {
    const int64_t first = segments[2 * k], length = segments[2 * k + 1];
    T* mean = out + k * 2 * d;
    T* max = mean + d;
    int32_t* at = argmax + k * d;
    for (int64_t c = 0; c < d; ++c) mean[c] = 0, max[c] = x[first * d + c], at[c] = static_cast<int32_t>(first);
    for (int64_t r = first; r < first + length; ++r)
      for (int64_t c = 0; c < d; ++c) {
        const T v = x[r * d + c];
        mean[c] += v;
        if (v > max[c]) max[c] = v, at[c] = static_cast<int32_t>(r);
      }
    for (int64_t c = 0; c < d; ++c) mean[c] /= static_cast<T>(length);
  }
}

template <class T>
void segment_pool_backward(const T* dout, const int32_t* segments, const int32_t* argmax, T* dx, int64_t n, int64_t s,
                           int64_t d) {
  (void)n;
#pragma omp parallel for schedule(static) if (s * d * 16 >= kParallelGrain)
  for (int64_t k = 0; k < s; ++k) {
    const int64_t first = segments[2 * k], length = segments[2 * k + 1];
    const T* dmean = dout + k * 2 * d;
    const T* dmax = dmean + d;
    for (int64_t r = first; r < first + length; ++r)
      for (int64_t c = 0; c < d; ++c) dx[r * d + c] += dmean[c] / static_cast<T>(length);
    for (int64_t c = 0; c < d; ++c) dx[int64_t{argmax[k * d + c]} * d + c] += dmax[c];
  }
}

template void segment_pool_forward<float>(const float*, const int32_t*, float*, int32_t*, int64_t, int64_t, int64_t);
template void segment_pool_forward<double>(const double*, const int32_t*, double*, int32_t*, int64_t, int64_t, int64_t);
template void segment_pool_backward<float>(const float*, const int32_t*, const int32_t*, float*, int64_t, int64_t,
                                           int64_t);
template void segment_pool_backward<double>(const double*, const int32_t*, const int32_t*, double*, int64_t, int64_t,
                                            int64_t);

}  // namespace kglm::nn::cpu
