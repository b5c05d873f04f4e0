// The parser's block scores (nn/ops/block_scores.hpp) on the CPU: one gemm per block (sentence),
// the blocks spread over the threads; each output element is written by one block's gemm, so the
// result does not depend on the thread count.
#include <vector>

#include "nn/cpu/kernels.hpp"
#include "nn/ops/block_scores.hpp"

namespace kglm::nn::cpu {

namespace {

// The first row of every block, in order.
std::vector<int64_t> block_starts(const int32_t* starts, int64_t m) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < m; ++i)
    if (starts[i] == i) out.push_back(i);
  return out;
}

}  // namespace

template <class T>
void block_scores_forward(const T* q, const T* k, const T* bias, const int32_t* starts, const int32_t* lengths,
                          T* scores, int64_t m, int64_t a, int64_t t) {
  const std::vector<int64_t> blocks = block_starts(starts, m);
  const auto count = static_cast<int64_t>(blocks.size());
#pragma omp parallel for schedule(dynamic) if (m * a * 8 >= kParallelGrain)
  for (int64_t b = 0; b < count; ++b) {
    const int64_t first = blocks[static_cast<size_t>(b)], n = lengths[first];
    T* s = scores + first * t;
    gemm<T>(false, true, n, n, a, T(1), q + first * a, a, k + first * a, a, T(0), s, t);
    for (int64_t i = 0; i < n; ++i) {
      if (bias != nullptr)
        for (int64_t j = 0; j < n; ++j) s[i * t + j] += bias[first + j];
      for (int64_t j = n; j < t; ++j) s[i * t + j] = static_cast<T>(kNoScore);
    }
  }
}

template <class T>
void block_scores_backward(const T* dscores, const T* q, const T* k, const int32_t* starts, const int32_t* lengths,
                           T* dq, T* dk, T* dbias, int64_t m, int64_t a, int64_t t) {
  const std::vector<int64_t> blocks = block_starts(starts, m);
  const auto count = static_cast<int64_t>(blocks.size());
#pragma omp parallel for schedule(dynamic) if (m * a * 8 >= kParallelGrain)
  for (int64_t b = 0; b < count; ++b) {
    const int64_t first = blocks[static_cast<size_t>(b)], n = lengths[first];
    const T* ds = dscores + first * t;
    gemm<T>(false, false, n, a, n, T(1), ds, t, k + first * a, a, T(0), dq + first * a, a);
    gemm<T>(true, false, n, a, n, T(1), ds, t, q + first * a, a, T(0), dk + first * a, a);
    if (dbias != nullptr)
      for (int64_t j = 0; j < n; ++j) {
        T sum = 0;
        for (int64_t i = 0; i < n; ++i) sum += ds[i * t + j];
        dbias[first + j] = sum;
      }
  }
}

template void block_scores_forward<float>(const float*, const float*, const float*, const int32_t*, const int32_t*,
                                          float*, int64_t, int64_t, int64_t);
template void block_scores_forward<double>(const double*, const double*, const double*, const int32_t*, const int32_t*,
                                           double*, int64_t, int64_t, int64_t);
template void block_scores_backward<float>(const float*, const float*, const float*, const int32_t*, const int32_t*,
                                           float*, float*, float*, int64_t, int64_t, int64_t);
template void block_scores_backward<double>(const double*, const double*, const double*, const int32_t*, const int32_t*,
                                            double*, double*, double*, int64_t, int64_t, int64_t);

}  // namespace kglm::nn::cpu
