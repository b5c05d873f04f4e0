// Inverted dropout: one thread per group of four elements, the group's Philox block.
#include "nn/cuda/common.cuh"
#include "nn/cuda/kernels.hpp"
#include "nn/cuda/philox.cuh"

namespace kglm::nn::cuda {

namespace {

template <class T>
__global__ void dropout_forward_kernel(const T* x, PhiloxKey key, float scale, T* y, uint8_t* mask, int64_t n) {
  const int64_t groups = (n + 3) / 4;
  for (int64_t g = global_thread(); g < groups; g += grid_threads()) {
    const r123::Philox4x32::ctr_type words = philox_words(key, static_cast<uint64_t>(g));
    for (int w = 0; w < 4; ++w) {
      const int64_t i = 4 * g + w;
      if (i >= n) break;
      const bool keep = philox_keeps(key, words.v[w]);
      mask[i] = keep ? 1 : 0;
      y[i] = from_float<T>(keep ? to_float(x[i]) * scale : 0.0f);
    }
  }
}

// One thread per element: element j of row r is number numbers[r] · width + j (key.first is 0).
template <class T>
__global__ void dropout_rows_kernel(const T* x, PhiloxKey key, float scale, const int64_t* numbers, T* y, uint8_t* mask,
                                    int64_t rows, int64_t width) {
  const int64_t n = rows * width;
  for (int64_t i = global_thread(); i < n; i += grid_threads()) {
    const uint64_t e =
        static_cast<uint64_t>(numbers[i / width]) * static_cast<uint64_t>(width) + static_cast<uint64_t>(i % width);
    const bool keep = philox_keeps(key, philox_words(key, e / 4).v[e % 4]);
    mask[i] = keep ? 1 : 0;
    y[i] = from_float<T>(keep ? to_float(x[i]) * scale : 0.0f);
  }
}

template <class T>
__global__ void dropout_backward_kernel(const T* dy, const uint8_t* mask, float scale, T* dx, int64_t n) {
  for (int64_t i = global_thread(); i < n; i += grid_threads())
    dx[i] = from_float<T>(mask[i] ? to_float(dy[i]) * scale : 0.0f);
}

// 1/(1 − p) rounded to T as the CPU does (through double).
float keep_scale(float p) { return static_cast<float>(1.0 / (1.0 - static_cast<double>(p))); }

}  // namespace

template <class T>
void dropout_forward(const T* x, float p, const DropoutKey& key, T* y, uint8_t* mask, int64_t n) {
  constexpr std::string_view op = "dropout_forward";
  if (n == 0) return;
  Context& c = Context::get();
  if (p == 0) {
    if (y != x)
      check(cudaMemcpyAsync(y, x, n * sizeof(T), cudaMemcpyDeviceToDevice, c.stream()), op, "cudaMemcpyAsync");
    if (mask) check(cudaMemsetAsync(mask, 1, static_cast<size_t>(n), c.stream()), op, "cudaMemsetAsync");
    return;
  }
  dropout_forward_kernel<<<elementwise_blocks((n + 3) / 4), kThreads, 0, c.stream()>>>(
      native(x), philox_key(key, p), keep_scale(p), native(y), mask, n);
  check_launch(op);
}

template <class T>
void dropout_rows_forward(const T* x, float p, const DropoutKey& key, const int64_t* numbers, T* y, uint8_t* mask,
                          int64_t rows, int64_t width) {
  constexpr std::string_view op = "dropout_forward";
  if (p == 0 || rows * width == 0) return dropout_forward(x, p, key, y, mask, rows * width);
  dropout_rows_kernel<<<elementwise_blocks(rows * width), kThreads, 0, Context::get().stream()>>>(
      native(x), philox_key(key, p), keep_scale(p), numbers, native(y), mask, rows, width);
  check_launch(op);
}

template <class T>
void dropout_backward(const T* dy, const uint8_t* mask, float p, T* dx, int64_t n) {
  constexpr std::string_view op = "dropout_backward";
  if (n == 0) return;
  Context& c = Context::get();
  if (p == 0) {
    if (dx != dy)
      check(cudaMemcpyAsync(dx, dy, n * sizeof(T), cudaMemcpyDeviceToDevice, c.stream()), op, "cudaMemcpyAsync");
    return;
  }
  dropout_backward_kernel<<<elementwise_blocks(n), kThreads, 0, c.stream()>>>(native(dy), mask, keep_scale(p),
                                                                              native(dx), n);
  check_launch(op);
}

#define KGLM_DROPOUT_CUDA(T)                                                                                       \
  template void dropout_forward<T>(const T*, float, const DropoutKey&, T*, uint8_t*, int64_t);                     \
  template void dropout_backward<T>(const T*, const uint8_t*, float, T*, int64_t);                                 \
  template void dropout_rows_forward<T>(const T*, float, const DropoutKey&, const int64_t*, T*, uint8_t*, int64_t, \
                                        int64_t);
KGLM_FOR_STORAGE_TYPES(KGLM_DROPOUT_CUDA)
#undef KGLM_DROPOUT_CUDA

}  // namespace kglm::nn::cuda
