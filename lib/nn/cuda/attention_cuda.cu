// Multi-head self-attention, the floor of the plan: per head, cuBLASLt products batched over the
// sequences (q, k and v are read in place from the packed qkv rows through the leading dimension
// 3H, the context written in place into ctx), and one fused kernel for the key mask, the softmax
// and the dropout mask. Scores and their gradient are fp32 whatever the storage type (T: float,
// Bf16, Half); probabilities are stored in T. The CPU's results follow, with one difference in the work done: the CPU
// skips the trailing padding keys of each sequence, here they are computed and come out as exact
// zeros (their probabilities are 0). A fused flash-style kernel that skips them is the next step.
#include <cfloat>
#include <cmath>

#include "nn/cuda/common.cuh"
#include "nn/cuda/gemm.hpp"
#include "nn/cuda/kernels.hpp"
#include "nn/cuda/philox.cuh"
#include "nn/cuda/softmax_rows.cuh"

namespace kglm::nn::cuda {

namespace {

using namespace score_rows;

// The number of keys of sequence `real` (L flags) that can have a nonzero probability: up to the
// last real key, or all L when there is none (the softmax is then uniform). Warp-wide.
__device__ inline int live_keys(const int32_t* real, int L) {
  int last = 0;
  for (int j = threadIdx.x % 32; j < L; j += 32)
    if (real[j]) last = j + 1;
  last = warp_max(last);
  return last == 0 ? L : last;
}

// Row (bh, i) of the fp32 scores [B·A·L, L]: the key mask and the softmax into probs (T; zeros
// past the live keys), the dropout mask of the row and the weights that multiply v (T; null when
// p == 0). For T = float, scores may be probs itself: each element is read before it is written,
// by the same lane.
template <class T>
__global__ void softmax_dropout_kernel(const float* scores, T* probs, const int32_t* key_mask, int64_t rows, int L,
                                       int heads, PhiloxKey key, bool dropout, float keep_scale, uint8_t* drop_mask,
                                       T* weights) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x % 32;
  const int64_t b = row / (static_cast<int64_t>(heads) * L);
  const int32_t* real = key_mask + b * L;
  const int n = live_keys(real, L);
  const float* S = scores + row * L;
  T* P = probs + row * L;
  float max = -FLT_MAX;
  for (int j = lane; j < n; j += 32) max = fmaxf(max, real[j] ? S[j] : -FLT_MAX);
  max = warp_max(max);
  float sum = 0;
  for (int j = lane; j < n; j += 32) sum += expf((real[j] ? S[j] : -FLT_MAX) - max);
  const float inv = 1.0f / warp_sum(sum);
  // The dropout mask covers the whole row, padded keys included (it is an output, element by
  // element): element (row, j) is number row·L + j of the call's Philox stream.
  uint8_t* m = dropout ? drop_mask + row * L : nullptr;
  T* w = dropout ? weights + row * L : nullptr;
  const int64_t first = row * L;
  for (int j = lane; j < L; j += 32) {
    const float p = j < n ? expf((real[j] ? S[j] : -FLT_MAX) - max) * inv : 0.0f;
    P[j] = from_float<T>(p);
    if (!dropout) continue;
    const uint64_t e = static_cast<uint64_t>(first + j);
    const r123::Philox4x32::ctr_type words = philox_words(key, e / 4);
    const bool keep = philox_keeps(key, words.v[e % 4]);
    m[j] = keep ? 1 : 0;
    w[j] = from_float<T>(keep && j < n ? p * keep_scale : 0.0f);
  }
}

}  // namespace

template <class T>
void attention_forward(const T* qkv, const int32_t* key_mask, const AttentionShape& s, float p, const DropoutKey& key,
                       T* ctx, T* probs, uint8_t* drop_mask) {
  constexpr std::string_view op = "attention_forward";
  const int64_t B = s.batch, A = s.heads, L = s.seq, H = s.hidden, d = H / A, ld = 3 * H;
  if (B == 0 || L == 0) return;
  Context& c = Context::get();
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  const int64_t rows = B * A * L;
  Fp32Scratch<T> scores(probs, rows * L);
  // scores[b, h] = q·kᵀ / √d in fp32, one batched product per head.
  for (int64_t h = 0; h < A; ++h)
    gemm<T, float>(op, false, true, L, L, d, scale, qkv + h * d, ld, qkv + H + h * d, ld, 0.0f, scores.data + h * L * L,
                   L, nullptr, {B, L * ld, L * ld, A * L * L});
  DeviceBuffer<T> dropped(p > 0 ? rows * L : 0);
  softmax_dropout_kernel<<<row_blocks(rows), kThreads, 0, c.stream()>>>(
      scores.data, native(probs), key_mask, rows, static_cast<int>(L), static_cast<int>(A), philox_key(key, p), p > 0,
      keep_scale_of(p), drop_mask, native(dropped.get()));
  check_launch(op);
  const T* weights = p > 0 ? dropped.get() : probs;
  // ctx[b, :, head h] = weights[b, h] · v[b, head h]
  for (int64_t h = 0; h < A; ++h)
    gemm<T, T>(op, false, false, L, d, L, 1.0f, weights + h * L * L, L, qkv + 2 * H + h * d, ld, 0.0f, ctx + h * d, H,
               nullptr, {B, A * L * L, L * ld, L * H});
}

template <class T>
void attention_backward(const T* dctx, const T* qkv, const T* probs, const uint8_t* drop_mask, const AttentionShape& s,
                        float p, T* dqkv) {
  constexpr std::string_view op = "attention_backward";
  const int64_t B = s.batch, A = s.heads, L = s.seq, H = s.hidden, d = H / A, ld = 3 * H;
  if (B == 0 || L == 0) return;
  Context& c = Context::get();
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  const float keep_scale = keep_scale_of(p);
  const int64_t rows = B * A * L;
  DeviceBuffer<T> dropped(p > 0 ? rows * L : 0), dS(rows * L);
  Fp32Scratch<T> dweights(dS.get(), rows * L);
  const T* weights = dropped_weights(probs, drop_mask, p, rows * L, dropped, op);
  const GemmBatch heads_qkv{B, A * L * L, L * ld, L * ld};
  for (int64_t h = 0; h < A; ++h) {
    // dv = weightsᵀ · dctx;  d(weights) = dctx · vᵀ (fp32)
    gemm<T, T>(op, true, false, L, d, L, 1.0f, weights + h * L * L, L, dctx + h * d, H, 0.0f, dqkv + 2 * H + h * d, ld,
               nullptr, {B, A * L * L, L * H, L * ld});
    gemm<T, float>(op, false, true, L, L, d, 1.0f, dctx + h * d, H, qkv + 2 * H + h * d, ld, 0.0f,
                   dweights.data + h * L * L, L, nullptr, {B, L * H, L * ld, A * L * L});
  }
  softmax_backward_kernel<<<row_blocks(rows), kThreads, 0, c.stream()>>>(dweights.data, native(dS.get()), native(probs),
                                                                         rows, static_cast<int>(L),
                                                                         p > 0 ? drop_mask : nullptr, keep_scale);
  check_launch(op);
  for (int64_t h = 0; h < A; ++h) {
    // dq = scale · dS · k;  dk = scale · dSᵀ · q
    gemm<T, T>(op, false, false, L, d, L, scale, dS.get() + h * L * L, L, qkv + H + h * d, ld, 0.0f, dqkv + h * d, ld,
               nullptr, heads_qkv);
    gemm<T, T>(op, true, false, L, d, L, scale, dS.get() + h * L * L, L, qkv + h * d, ld, 0.0f, dqkv + H + h * d, ld,
               nullptr, heads_qkv);
  }
}

#define KGLM_ATTENTION_CUDA(T)                                                                                      \
  template void attention_forward<T>(const T*, const int32_t*, const AttentionShape&, float, const DropoutKey&, T*, \
                                     T*, uint8_t*);                                                                 \
  template void attention_backward<T>(const T*, const T*, const T*, const uint8_t*, const AttentionShape&, float, T*);
KGLM_FOR_STORAGE_TYPES(KGLM_ATTENTION_CUDA)
#undef KGLM_ATTENTION_CUDA

}  // namespace kglm::nn::cuda
