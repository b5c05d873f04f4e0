// Row gather and scatter-add: the embedding lookup and its backward, and gather/scatter_add_rows.
#include <string>

#include "core/error.hpp"
#include "nn/cpu/kernels.hpp"
#include "nn/ops/index_range.hpp"

namespace kglm::nn::cpu {

namespace {

// Column blocks of the scatter are whole cache lines, so threads never write the same line.
constexpr int64_t kColumnAlign = 16;

void check_indices(std::string_view op, std::string_view arg, const int32_t* index, int64_t m, int64_t n) {
  for (int64_t i = 0; i < m; ++i) {
    if (!IndexRange::rows(n).accepts(index[i]))
      throw Error(std::string(op) + ": " + std::string(arg) + "[" + std::to_string(i) +
                  "] = " + std::to_string(index[i]) + " is outside [0, " + std::to_string(n) + ")");
  }
}

}  // namespace

template <class T>
void gather_rows(std::string_view op, std::string_view arg, const int32_t* index, int64_t m, const T* src, int64_t n,
                 int64_t h, T* out, bool accumulate) {
  check_indices(op, arg, index, m, n);
#pragma omp parallel for schedule(static) if (m * h >= kParallelGrain)
  for (int64_t i = 0; i < m; ++i) {
    const T* from = src + index[i] * h;
    T* to = out + i * h;
    if (accumulate) {
      for (int64_t j = 0; j < h; ++j) to[j] += from[j];
    } else {
      std::copy(from, from + h, to);
    }
  }
}

template <class T>
void scatter_add_rows(std::string_view op, std::string_view arg, const int32_t* index, int64_t m, const T* dout,
                      int64_t n, int64_t h, T* dsrc) {
  check_indices(op, arg, index, m, n);
  // Threads own column ranges and every one walks the rows in order: repeated indices add up in
  // the same order whatever the thread count, with no atomics.
  for_blocks(h, m * h >= kParallelGrain, kColumnAlign, [&](int64_t c0, int64_t c1) {
    for (int64_t i = 0; i < m; ++i) {
      const T* from = dout + i * h;
      T* to = dsrc + index[i] * h;
      for (int64_t j = c0; j < c1; ++j) to[j] += from[j];
    }
  });
}

#define KGLM_EMBEDDING_CPU(T)                                                                                       \
  template void gather_rows<T>(std::string_view, std::string_view, const int32_t*, int64_t, const T*, int64_t,      \
                               int64_t, T*, bool);                                                                  \
  template void scatter_add_rows<T>(std::string_view, std::string_view, const int32_t*, int64_t, const T*, int64_t, \
                                    int64_t, T*);
KGLM_EMBEDDING_CPU(float)
KGLM_EMBEDDING_CPU(double)
#undef KGLM_EMBEDDING_CPU

}  // namespace kglm::nn::cpu
