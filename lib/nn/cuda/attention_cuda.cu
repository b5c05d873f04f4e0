// Multi-head self-attention, the floor of the plan: per head, cuBLASLt products batched over the
// sequences (q, k and v are read in place from the packed qkv rows through the leading dimension
// 3H, the context written in place into ctx), and one fused kernel for the key mask, the softmax
// and the dropout mask. The CPU's results follow, with one difference in the work done: the CPU
// skips the trailing padding keys of each sequence, here they are computed and come out as exact
// zeros (their probabilities are 0). A fused flash-style kernel that skips them is the next step.
#include <cfloat>
#include <cmath>

#include "nn/cuda/common.cuh"
#include "nn/cuda/gemm.hpp"
#include "nn/cuda/kernels.hpp"
#include "nn/cuda/philox.cuh"

namespace kglm::nn::cuda {

namespace {

constexpr int kRowsPerBlock = kThreads / 32;  // one warp per row of scores

// The number of keys of sequence `real` (L flags) that can have a nonzero probability: up to the
// last real key, or all L when there is none (the softmax is then uniform). Warp-wide.
__device__ inline int live_keys(const int32_t* real, int L) {
  int last = 0;
  for (int j = threadIdx.x % 32; j < L; j += 32)
    if (real[j]) last = j + 1;
  last = warp_max(last);
  return last == 0 ? L : last;
}

// Row (bh, i) of scores [B·A·L, L]: the key mask, the softmax into probs (zeros past the live
// keys), the dropout mask of the row and the weights that multiply v (null when p == 0).
__global__ void softmax_dropout_kernel(float* probs, const int32_t* key_mask, int64_t rows, int L, int heads,
                                       PhiloxKey key, bool dropout, float keep_scale, uint8_t* drop_mask,
                                       float* weights) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x % 32;
  const int64_t b = row / (static_cast<int64_t>(heads) * L);
  const int32_t* real = key_mask + b * L;
  const int n = live_keys(real, L);
  float* P = probs + row * L;
  float max = -FLT_MAX;
  for (int j = lane; j < n; j += 32) {
    const float s = real[j] ? P[j] : -FLT_MAX;
    P[j] = s;
    max = fmaxf(max, s);
  }
  max = warp_max(max);
  float sum = 0;
  for (int j = lane; j < n; j += 32) {
    const float e = expf(P[j] - max);
    P[j] = e;
    sum += e;
  }
  const float inv = 1.0f / warp_sum(sum);
  for (int j = lane; j < L; j += 32) P[j] = j < n ? P[j] * inv : 0.0f;
  if (!dropout) return;
  // The mask covers the whole row, padded keys included (it is an output, element by element):
  // element (row, j) is number row·L + j of the call's Philox stream.
  uint8_t* m = drop_mask + row * L;
  float* w = weights + row * L;
  const int64_t first = row * L;
  for (int j = lane; j < L; j += 32) {
    const uint64_t e = static_cast<uint64_t>(first + j);
    const r123::Philox4x32::ctr_type words = philox_words(key, e / 4);
    const bool keep = philox_keeps(key, words.v[e % 4]);
    m[j] = keep ? 1 : 0;
    w[j] = keep && j < n ? P[j] * keep_scale : 0.0f;
  }
}

// Row (bh, i) of the score gradient dS [B·A·L, L], in place over d(weights): through the dropout
// mask, then the softmax: dS = P ⊙ (dP − Σⱼ P·dP).
__global__ void softmax_backward_kernel(float* dS, const float* probs, int64_t rows, int L, const uint8_t* drop_mask,
                                        float keep_scale) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x % 32;
  float* g = dS + row * L;
  const float* P = probs + row * L;
  const uint8_t* m = drop_mask ? drop_mask + row * L : nullptr;
  float dot = 0;
  for (int j = lane; j < L; j += 32) {
    const float v = m ? (m[j] ? g[j] * keep_scale : 0.0f) : g[j];
    g[j] = v;
    dot += P[j] * v;
  }
  dot = warp_sum(dot);
  for (int j = lane; j < L; j += 32) g[j] = P[j] * (g[j] - dot);
}

__global__ void apply_dropout_kernel(const float* probs, const uint8_t* mask, float keep_scale, int64_t n, float* out) {
  for (int64_t i = global_thread(); i < n; i += grid_threads()) out[i] = mask[i] ? probs[i] * keep_scale : 0.0f;
}

unsigned row_blocks(int64_t rows) { return static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock); }

float keep_scale_of(float p) { return static_cast<float>(1.0 / (1.0 - static_cast<double>(p))); }

}  // namespace

template <>
void attention_forward<float>(const float* qkv, const int32_t* key_mask, const AttentionShape& s, float p,
                              const DropoutKey& key, float* ctx, float* probs, uint8_t* drop_mask) {
  constexpr std::string_view op = "attention_forward";
  const int64_t B = s.batch, A = s.heads, L = s.seq, H = s.hidden, d = H / A, ld = 3 * H;
  if (B == 0 || L == 0) return;
  Context& c = Context::get();
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  // scores[b, h] = q·kᵀ / √d, one batched product per head.
  for (int64_t h = 0; h < A; ++h)
    gemm(op, false, true, L, L, d, scale, qkv + h * d, ld, qkv + H + h * d, ld, 0.0f, probs + h * L * L, L, nullptr,
         {B, L * ld, L * ld, A * L * L});
  const int64_t rows = B * A * L;
  DeviceBuffer<float> dropped(p > 0 ? rows * L : 0);
  softmax_dropout_kernel<<<row_blocks(rows), kThreads, 0, c.stream()>>>(probs, key_mask, rows, static_cast<int>(L),
                                                                        static_cast<int>(A), philox_key(key, p), p > 0,
                                                                        keep_scale_of(p), drop_mask, dropped.get());
  check_launch(op);
  const float* weights = p > 0 ? dropped.get() : probs;
  // ctx[b, :, head h] = weights[b, h] · v[b, head h]
  for (int64_t h = 0; h < A; ++h)
    gemm(op, false, false, L, d, L, 1.0f, weights + h * L * L, L, qkv + 2 * H + h * d, ld, 0.0f, ctx + h * d, H,
         nullptr, {B, A * L * L, L * ld, L * H});
}

template <>
void attention_backward<float>(const float* dctx, const float* qkv, const float* probs, const uint8_t* drop_mask,
                               const AttentionShape& s, float p, float* dqkv) {
  constexpr std::string_view op = "attention_backward";
  const int64_t B = s.batch, A = s.heads, L = s.seq, H = s.hidden, d = H / A, ld = 3 * H;
  if (B == 0 || L == 0) return;
  Context& c = Context::get();
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  const float keep_scale = keep_scale_of(p);
  const int64_t rows = B * A * L;
  DeviceBuffer<float> dropped(p > 0 ? rows * L : 0), dS(rows * L);
  if (p > 0) {
    apply_dropout_kernel<<<elementwise_blocks(rows * L), kThreads, 0, c.stream()>>>(probs, drop_mask, keep_scale,
                                                                                    rows * L, dropped.get());
    check_launch(op);
  }
  const float* weights = p > 0 ? dropped.get() : probs;
  const GemmBatch heads_qkv{B, A * L * L, L * ld, L * ld};
  for (int64_t h = 0; h < A; ++h) {
    // dv = weightsᵀ · dctx;  d(weights) = dctx · vᵀ
    gemm(op, true, false, L, d, L, 1.0f, weights + h * L * L, L, dctx + h * d, H, 0.0f, dqkv + 2 * H + h * d, ld,
         nullptr, {B, A * L * L, L * H, L * ld});
    gemm(op, false, true, L, L, d, 1.0f, dctx + h * d, H, qkv + 2 * H + h * d, ld, 0.0f, dS.get() + h * L * L, L,
         nullptr, {B, L * H, L * ld, A * L * L});
  }
  softmax_backward_kernel<<<row_blocks(rows), kThreads, 0, c.stream()>>>(dS.get(), probs, rows, static_cast<int>(L),
                                                                         p > 0 ? drop_mask : nullptr, keep_scale);
  check_launch(op);
  for (int64_t h = 0; h < A; ++h) {
    // dq = scale · dS · k;  dk = scale · dSᵀ · q
    gemm(op, false, false, L, d, L, scale, dS.get() + h * L * L, L, qkv + H + h * d, ld, 0.0f, dqkv + h * d, ld,
         nullptr, heads_qkv);
    gemm(op, true, false, L, d, L, scale, dS.get() + h * L * L, L, qkv + h * d, ld, 0.0f, dqkv + H + h * d, ld, nullptr,
         heads_qkv);
  }
}

}  // namespace kglm::nn::cuda
