// Inverted dropout. The keep decision of element i depends only on (key, i) (see dropout.hpp), so
// chunks of the array can be filled by any thread in any order.
#include <Random123/philox.h>

#include <cmath>

#include "nn/cpu/kernels.hpp"

namespace kglm::nn::cpu {

namespace {

// Elements per chunk of the parallel loop: a multiple of 4, so no Philox block is split.
constexpr int64_t kChunk = 4096;

template <class T>
T keep_scale(float p) {
  return static_cast<T>(1.0 / (1.0 - static_cast<double>(p)));
}

}  // namespace

uint64_t dropout_threshold(float p) {
  // u = w · 2⁻³² ≥ p  ⇔  w ≥ p · 2³² ⇔ w ≥ ⌈p · 2³²⌉ (w an integer; p · 2³² is exact in double).
  return static_cast<uint64_t>(std::ceil(static_cast<double>(p) * 4294967296.0));
}

void dropout_mask(const DropoutKey& key, float p, uint64_t first, int64_t n, uint8_t* mask) {
  const uint64_t threshold = dropout_threshold(p);
  r123::Philox4x32 philox;
  const r123::Philox4x32::key_type k = {{static_cast<uint32_t>(key.seed), static_cast<uint32_t>(key.seed >> 32)}};
  r123::Philox4x32::ctr_type counter = {
      {static_cast<uint32_t>(key.stream), static_cast<uint32_t>(key.stream >> 32), 0, 0}};
  const uint64_t end = first + static_cast<uint64_t>(n);
  for (uint64_t i = first; i < end;) {
    const uint64_t block = (key.first + i) / 4;
    counter.v[2] = static_cast<uint32_t>(block >> 32);
    counter.v[3] = static_cast<uint32_t>(block);
    const r123::Philox4x32::ctr_type words = philox(counter, k);
    for (uint64_t w = (key.first + i) % 4; w < 4 && i < end; ++w, ++i)
      mask[i - first] = words.v[w] >= threshold ? 1 : 0;
  }
}

template <class T>
void dropout_forward(const T* x, float p, const DropoutKey& key, T* y, uint8_t* mask, int64_t n) {
  if (p == 0) {
    if (y != x) std::copy(x, x + n, y);
    if (mask) std::fill(mask, mask + n, uint8_t{1});
    return;
  }
  const T scale = keep_scale<T>(p);
  const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (n >= kParallelGrain)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * kChunk, end = std::min(n, begin + kChunk);
    uint8_t* m = mask + begin;
    dropout_mask(key, p, static_cast<uint64_t>(begin), end - begin, m);
    for (int64_t i = begin; i < end; ++i) y[i] = m[i - begin] ? x[i] * scale : T(0);
  }
}

template <class T>
void dropout_rows_forward(const T* x, float p, const DropoutKey& key, const int64_t* numbers, T* y, uint8_t* mask,
                          int64_t rows, int64_t width) {
  if (p == 0) return dropout_forward(x, p, key, y, mask, rows * width);
  const T scale = keep_scale<T>(p);
#pragma omp parallel for schedule(static) if (rows * width >= kParallelGrain)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t at = r * width;
    dropout_mask(key, p, static_cast<uint64_t>(numbers[r]) * static_cast<uint64_t>(width), width, mask + at);
    for (int64_t j = at; j < at + width; ++j) y[j] = mask[j] ? x[j] * scale : T(0);
  }
}

template <class T>
void dropout_backward(const T* dy, const uint8_t* mask, float p, T* dx, int64_t n) {
  if (p == 0) {
    if (dx != dy) std::copy(dy, dy + n, dx);
    return;
  }
  const T scale = keep_scale<T>(p);
#pragma omp parallel for schedule(static) if (n >= kParallelGrain)
  for (int64_t i = 0; i < n; ++i) dx[i] = mask[i] ? dy[i] * scale : T(0);
}

#define KGLM_DROPOUT_CPU(T)                                                                                        \
  template void dropout_forward<T>(const T*, float, const DropoutKey&, T*, uint8_t*, int64_t);                     \
  template void dropout_backward<T>(const T*, const uint8_t*, float, T*, int64_t);                                 \
  template void dropout_rows_forward<T>(const T*, float, const DropoutKey&, const int64_t*, T*, uint8_t*, int64_t, \
                                        int64_t);
KGLM_DROPOUT_CPU(float)
KGLM_DROPOUT_CPU(double)
#undef KGLM_DROPOUT_CPU

}  // namespace kglm::nn::cpu
