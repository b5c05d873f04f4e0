// The parser's block scores (nn/ops/block_scores.hpp), the twin of cpu/block_scores_cpu.cpp: one
// thread per output element, each a dot product over the attention width or the block, in fp32.
#include "nn/cuda/common.cuh"
#include "nn/cuda/kernels.hpp"
#include "nn/ops/block_scores.hpp"

namespace kglm::nn::cuda {

namespace {

template <class T>
__global__ void block_scores_forward_kernel(const T* q, const T* k, const T* bias, const int32_t* starts,
                                            const int32_t* lengths, T* scores, int64_t m, int64_t a, int64_t t) {
  for (int64_t e = global_thread(); e < m * t; e += grid_threads()) {
    const int64_t i = e / t, j = e % t, n = lengths[i];
    if (j >= n) {
      scores[e] = from_float<T>(kNoScore);
      continue;
    }
    const int64_t r = starts[i] + j;
    float s = bias != nullptr ? to_float(bias[r]) : 0.0f;
    for (int64_t c = 0; c < a; ++c) s += to_float(q[i * a + c]) * to_float(k[r * a + c]);
    scores[e] = from_float<T>(s);
  }
}

// dq[i, c] = Σ_j ds[i, j] k[start + j, c].
template <class T>
__global__ void block_scores_dq_kernel(const T* ds, const T* k, const int32_t* starts, const int32_t* lengths, T* dq,
                                       int64_t m, int64_t a, int64_t t) {
  for (int64_t e = global_thread(); e < m * a; e += grid_threads()) {
    const int64_t i = e / a, c = e % a, first = starts[i], n = lengths[i];
    float s = 0;
    for (int64_t j = 0; j < n; ++j) s += to_float(ds[i * t + j]) * to_float(k[(first + j) * a + c]);
    dq[e] = from_float<T>(s);
  }
}

// dk[r, c] = Σ_i ds[first + i, r − first] q[first + i, c]; dbias[r] the same without q (c = 0 writes it).
template <class T>
__global__ void block_scores_dk_kernel(const T* ds, const T* q, const int32_t* starts, const int32_t* lengths, T* dk,
                                       T* dbias, int64_t m, int64_t a, int64_t t) {
  for (int64_t e = global_thread(); e < m * a; e += grid_threads()) {
    const int64_t r = e / a, c = e % a, first = starts[r], n = lengths[r], j = r - first;
    float s = 0, sb = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float d = to_float(ds[(first + i) * t + j]);
      s += d * to_float(q[(first + i) * a + c]);
      sb += d;
    }
    dk[e] = from_float<T>(s);
    if (c == 0 && dbias != nullptr) dbias[r] = from_float<T>(sb);
  }
}

}  // namespace

template <class T>
void block_scores_forward(const T* q, const T* k, const T* bias, const int32_t* starts, const int32_t* lengths,
                          T* scores, int64_t m, int64_t a, int64_t t) {
  launch_elementwise(block_scores_forward_kernel<native_t<T>>, "block_scores_forward", m * t, native(q), native(k),
                     native(bias), starts, lengths, native(scores), m, a, t);
}

template <class T>
void block_scores_backward(const T* dscores, const T* q, const T* k, const int32_t* starts, const int32_t* lengths,
                           T* dq, T* dk, T* dbias, int64_t m, int64_t a, int64_t t) {
  launch_elementwise(block_scores_dq_kernel<native_t<T>>, "block_scores_backward", m * a, native(dscores), native(k),
                     starts, lengths, native(dq), m, a, t);
  launch_elementwise(block_scores_dk_kernel<native_t<T>>, "block_scores_backward", m * a, native(dscores), native(q),
                     starts, lengths, native(dk), native(dbias), m, a, t);
}

#define KGLM_BLOCK_SCORES_CUDA(T)                                                                                  \
  template void block_scores_forward<T>(const T*, const T*, const T*, const int32_t*, const int32_t*, T*, int64_t, \
                                        int64_t, int64_t);                                                         \
  template void block_scores_backward<T>(const T*, const T*, const T*, const int32_t*, const int32_t*, T*, T*, T*, \
                                         int64_t, int64_t, int64_t);
KGLM_FOR_STORAGE_TYPES(KGLM_BLOCK_SCORES_CUDA)
#undef KGLM_BLOCK_SCORES_CUDA

}  // namespace kglm::nn::cuda
