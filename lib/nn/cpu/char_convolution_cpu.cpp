// ELMo's character convolution and max-pool (nn/ops/char_convolution.hpp) on the CPU: blocks of
// words, each thread copying its words' windows into a matrix (im2col: a window of w characters is
// w·e contiguous values, but windows overlap, which a BLAS leading dimension cannot express) and
// multiplying it by the filters with one OpenBLAS gemm; the maximum over positions is taken from
// that product at once. The backward pass touches each (word, filter)'s winning window only.
#include <omp.h>

#include <vector>

#include "nn/cpu/kernels.hpp"

namespace kglm::nn::cpu {

namespace {

constexpr int64_t kBlockWords = 32;

}  // namespace

template <class T>
void char_convolution_forward(const T* x, const T* w, const T* b, const CharConvolutionShape& s, T* out,
                              int32_t* argmax) {
  const int64_t positions = s.positions(), k = s.width * s.embed, f_count = s.filters;
  check_blas_dims("char_convolution_forward", {kBlockWords * positions, k, f_count});
  const int64_t blocks = (s.words + kBlockWords - 1) / kBlockWords;
  const int64_t per_thread = kBlockWords * positions * (k + f_count);
  const double flops = 2.0 * static_cast<double>(s.words * positions) * static_cast<double>(k * f_count);
  const bool parallel = flops >= 4e6;
  std::vector<T> scratch(static_cast<size_t>((parallel ? omp_get_max_threads() : 1) * per_thread));
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    T* cols = scratch.data() + omp_get_thread_num() * per_thread;
    T* product = cols + kBlockWords * positions * k;
    const int64_t n0 = blk * kBlockWords, n1 = std::min(s.words, n0 + kBlockWords);
    for (int64_t n = n0; n < n1; ++n)
      for (int64_t p = 0; p < positions; ++p) {
        const T* window = x + (n * s.chars + p) * s.embed;
        std::copy(window, window + k, cols + ((n - n0) * positions + p) * k);
      }
    gemm(false, true, (n1 - n0) * positions, f_count, k, T(1), cols, k, w, k, T(0), product, f_count);
    for (int64_t n = n0; n < n1; ++n) {
      T* best = out + n * s.columns + s.first;
      int32_t* at = argmax + n * s.columns + s.first;
      const T* rows = product + (n - n0) * positions * f_count;
      std::copy(rows, rows + f_count, best);
      std::fill(at, at + f_count, 0);
      for (int64_t p = 1; p < positions; ++p) {
        const T* row = rows + p * f_count;
        for (int64_t f = 0; f < f_count; ++f)
          if (row[f] > best[f]) best[f] = row[f], at[f] = static_cast<int32_t>(p);  // the first maximum
      }
      for (int64_t f = 0; f < f_count; ++f) best[f] += b[f];
    }
  }
}

template <class T>
void char_convolution_backward(const T* dout, const T* x, const T* w, const int32_t* argmax,
                               const CharConvolutionShape& s, T* dx, T* dw, T* db) {
  const int64_t k = s.width * s.embed, f_count = s.filters, row = s.chars * s.embed;
  const bool parallel = s.words * f_count * k >= kParallelGrain;
  // dw and db: each thread owns a block of filters and adds the words in order.
  if (dw || db)
    for_blocks(f_count, parallel, 1, [&](int64_t f0, int64_t f1) {
      for (int64_t n = 0; n < s.words; ++n) {
        const T* g = dout + n * s.columns + s.first;
        const int32_t* at = argmax + n * s.columns + s.first;
        for (int64_t f = f0; f < f1; ++f) {
          if (db) db[f] += g[f];
          if (!dw) continue;
          const T* window = x + n * row + at[f] * s.embed;
          T* dwf = dw + f * k;
#pragma omp simd
          for (int64_t j = 0; j < k; ++j) dwf[j] += g[f] * window[j];
        }
      }
    });
  if (!dx) return;
    // dx: each word's characters get its filters' windows, filters in order.
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t n = 0; n < s.words; ++n) {
    const T* g = dout + n * s.columns + s.first;
    const int32_t* at = argmax + n * s.columns + s.first;
    for (int64_t f = 0; f < f_count; ++f) {
      T* window = dx + n * row + at[f] * s.embed;
      const T* wf = w + f * k;
#pragma omp simd
      for (int64_t j = 0; j < k; ++j) window[j] += g[f] * wf[j];
    }
  }
}

#define KGLM_CHAR_CONVOLUTION_CPU(T)                                                                                  \
  template void char_convolution_forward<T>(const T*, const T*, const T*, const CharConvolutionShape&, T*, int32_t*); \
  template void char_convolution_backward<T>(const T*, const T*, const T*, const int32_t*,                            \
                                             const CharConvolutionShape&, T*, T*, T*);
KGLM_CHAR_CONVOLUTION_CPU(float)
KGLM_CHAR_CONVOLUTION_CPU(double)

}  // namespace kglm::nn::cpu
