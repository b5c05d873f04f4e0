// Pieces of the attention kernels shared by the encoder's attention (attention_cuda.cu) and T5's
// biased attention (biased_attention_cuda.cu): one warp per row of scores, the softmax's and the
// dropout's backward, and fp32 scratch for scores. Private to lib/nn/cuda.
#pragma once

#include "nn/cuda/common.cuh"

namespace kglm::nn::cuda::score_rows {

constexpr int kRowsPerBlock = kThreads / 32;  // one warp per row of scores

inline unsigned row_blocks(int64_t rows) { return static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock); }

inline float keep_scale_of(float p) { return static_cast<float>(1.0 / (1.0 - static_cast<double>(p))); }

// Row `row` of the score gradient dS [rows, L] from d(weights) (fp32): through the dropout mask,
// then the softmax: dS = P ⊙ (dP − Σⱼ P·dP). For T = float, dS may be dweights itself.
template <class T>
__global__ void softmax_backward_kernel(const float* dweights, T* dS, const T* probs, int64_t rows, int L,
                                        const uint8_t* drop_mask, float keep_scale) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x % 32;
  const float* g = dweights + row * L;
  const T* P = probs + row * L;
  const uint8_t* m = drop_mask ? drop_mask + row * L : nullptr;
  auto dP = [&](int j) { return m ? (m[j] ? g[j] * keep_scale : 0.0f) : g[j]; };
  float dot = 0;
  for (int j = lane; j < L; j += 32) dot += to_float(P[j]) * dP(j);
  dot = warp_sum(dot);
  T* out = dS + row * L;
  for (int j = lane; j < L; j += 32) out[j] = from_float<T>(to_float(P[j]) * (dP(j) - dot));
}

template <class T>
__global__ void apply_dropout_kernel(const T* probs, const uint8_t* mask, float keep_scale, int64_t n, T* out) {
  for (int64_t i = global_thread(); i < n; i += grid_threads())
    out[i] = from_float<T>(mask[i] ? to_float(probs[i]) * keep_scale : 0.0f);
}

// fp32 scratch for the scores or their gradient: `in_place` itself when T is float (the kernels
// allow it), else a buffer of `count` floats.
template <class T>
struct Fp32Scratch {
  DeviceBuffer<float> buffer;
  float* data;
  Fp32Scratch(T* in_place, int64_t count)
      : buffer(std::is_same_v<T, float> ? 0 : count),
        data(std::is_same_v<T, float> ? reinterpret_cast<float*>(in_place) : buffer.get()) {}
};

// The weights that multiply v in the backward pass: the probabilities after the dropout mask
// (written to `scratch`), or the probabilities themselves when p == 0.
template <class T>
const T* dropped_weights(const T* probs, const uint8_t* drop_mask, float p, int64_t n, DeviceBuffer<T>& scratch,
                         std::string_view op) {
  if (p == 0) return probs;
  apply_dropout_kernel<<<elementwise_blocks(n), kThreads, 0, Context::get().stream()>>>(
      native(probs), drop_mask, keep_scale_of(p), n, native(scratch.get()));
  check_launch(op);
  return scratch.get();
}

}  // namespace kglm::nn::cuda::score_rows
