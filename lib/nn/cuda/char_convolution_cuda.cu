// ELMo's character convolution and max-pool (nn/ops/char_convolution.hpp), the twin of
// cpu/char_convolution_cpu.cpp: blocks of words are copied window by window into a matrix
// (im2col), multiplied by the filters with cuBLASLt into fp32, and reduced to the maximum over
// positions with its position; the blocks are sized so that the product stays under 64 Mi values.
// The backward kernels give each output element to one thread, which adds its terms in a fixed
// order: deterministic, no atomics.
#include <algorithm>

#include "nn/cuda/common.cuh"
#include "nn/cuda/gemm.hpp"
#include "nn/cuda/kernels.hpp"

namespace kglm::nn::cuda {

namespace {

constexpr int64_t kMaxProduct = int64_t{64} << 20;

// cols[(n − n0)·P + p, j] = x[n, p·e + j] for j < w·e.
template <class T>
__global__ void windows_kernel(const T* x, CharConvolutionShape s, int64_t n0, int64_t count, T* cols) {
  const int64_t positions = s.positions(), k = s.width * s.embed, total = count * positions * k;
  for (int64_t i = global_thread(); i < total; i += grid_threads()) {
    const int64_t j = i % k, window = i / k, p = window % positions, n = n0 + window / positions;
    cols[i] = x[(n * s.chars + p) * s.embed + j];
  }
}

// One thread per (word, filter): the first maximum over the positions, plus the bias.
template <class T>
__global__ void max_over_positions_kernel(const float* product, const T* b, CharConvolutionShape s, int64_t n0,
                                          int64_t count, T* out, int32_t* argmax) {
  const int64_t positions = s.positions(), total = count * s.filters;
  for (int64_t i = global_thread(); i < total; i += grid_threads()) {
    const int64_t f = i % s.filters, local = i / s.filters;
    const float* column = product + local * positions * s.filters + f;
    float best = column[0];
    int32_t at = 0;
    for (int64_t p = 1; p < positions; ++p)
      if (column[p * s.filters] > best) best = column[p * s.filters], at = static_cast<int32_t>(p);
    const int64_t o = (n0 + local) * s.columns + s.first + f;
    out[o] = from_float<T>(best + to_float(b[f]));
    argmax[o] = at;
  }
}

// dw[f, j] += Σ_n dout[n, f] · x[n, at·e + j], words in order; db[f] += Σ_n dout[n, f] (j == 0).
template <class T>
__global__ void filter_grad_kernel(const T* dout, const T* x, const int32_t* argmax, CharConvolutionShape s, float* dw,
                                   float* db) {
  const int64_t k = s.width * s.embed, total = s.filters * k;
  for (int64_t i = global_thread(); i < total; i += grid_threads()) {
    const int64_t f = i / k, j = i % k;
    float sum = 0, bias_sum = 0;
    for (int64_t n = 0; n < s.words; ++n) {
      const int64_t o = n * s.columns + s.first + f;
      const float g = to_float(dout[o]);
      if (dw) sum += g * to_float(x[n * s.chars * s.embed + argmax[o] * s.embed + j]);
      bias_sum += g;
    }
    if (dw) dw[i] += sum;
    if (db && j == 0) db[f] += bias_sum;
  }
}

// dx[n, c] (c over the word's L·e values) += Σ_f dout[n, f] · w[f, c − at·e] where the window
// covers c, filters in order.
template <class T>
__global__ void input_grad_kernel(const T* dout, const T* w, const int32_t* argmax, CharConvolutionShape s, T* dx) {
  const int64_t k = s.width * s.embed, row = s.chars * s.embed, total = s.words * row;
  for (int64_t i = global_thread(); i < total; i += grid_threads()) {
    const int64_t n = i / row, c = i % row;
    float sum = 0;
    for (int64_t f = 0; f < s.filters; ++f) {
      const int64_t o = n * s.columns + s.first + f, offset = c - int64_t{argmax[o]} * s.embed;
      if (offset >= 0 && offset < k) sum += to_float(dout[o]) * to_float(w[f * k + offset]);
    }
    dx[i] = from_float<T>(to_float(dx[i]) + sum);
  }
}

}  // namespace

template <class T>
void char_convolution_forward(const T* x, const T* w, const T* b, const CharConvolutionShape& s, T* out,
                              int32_t* argmax) {
  constexpr std::string_view op = "char_convolution_forward";
  const int64_t positions = s.positions(), k = s.width * s.embed;
  const int64_t block = std::max<int64_t>(1, std::min(s.words, kMaxProduct / (positions * std::max(k, s.filters))));
  DeviceBuffer<T> cols(block * positions * k);
  DeviceBuffer<float> product(block * positions * s.filters);
  for (int64_t n0 = 0; n0 < s.words; n0 += block) {
    const int64_t count = std::min(block, s.words - n0);
    launch_elementwise(windows_kernel<native_t<T>>, op, count * positions * k, native(x), s, n0, count,
                       native(cols.get()));
    gemm<T, float>(op, false, true, count * positions, s.filters, k, 1.0f, cols.get(), k, w, k, 0.0f, product.get(),
                   s.filters);
    launch_elementwise(max_over_positions_kernel<native_t<T>>, op, count * s.filters, product.get(), native(b), s, n0,
                       count, native(out), argmax);
  }
}

template <class T>
void char_convolution_backward(const T* dout, const T* x, const T* w, const int32_t* argmax,
                               const CharConvolutionShape& s, T* dx, float* dw, float* db) {
  constexpr std::string_view op = "char_convolution_backward";
  if (dw || db)
    launch_elementwise(filter_grad_kernel<native_t<T>>, op, s.filters * s.width * s.embed, native(dout), native(x),
                       argmax, s, dw, db);
  if (dx)
    launch_elementwise(input_grad_kernel<native_t<T>>, op, s.words * s.chars * s.embed, native(dout), native(w), argmax,
                       s, native(dx));
}

#define KGLM_CHAR_CONVOLUTION_CUDA(T)                                                                                 \
  template void char_convolution_forward<T>(const T*, const T*, const T*, const CharConvolutionShape&, T*, int32_t*); \
  template void char_convolution_backward<T>(const T*, const T*, const T*, const int32_t*,                            \
                                             const CharConvolutionShape&, T*, float*, float*);
KGLM_FOR_STORAGE_TYPES(KGLM_CHAR_CONVOLUTION_CUDA)
#undef KGLM_CHAR_CONVOLUTION_CUDA

}  // namespace kglm::nn::cuda
