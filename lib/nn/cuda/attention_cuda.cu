// Multi-head self-attention of a packed batch, the floor of the plan: per sequence, cuBLASLt
// products batched over the heads (q, k and v are read in place from the packed qkv rows through
// the leading dimension 3H, a head's columns d apart; the context is written in place into ctx),
// and one kernel for the softmax and the dropout mask of the sequence's [heads · L, L] scores. No
// padded score is ever computed. Scores and their gradient are fp32 whatever the storage type (T:
// float, Bf16, Half); probabilities are stored in T. A fused flash-style kernel that keeps the
// log-sum-exp instead of the probabilities is the next step.
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

// Row (h, i) of one sequence's fp32 scores [A·L, L]: the softmax into probs (T), the dropout mask
// of the row (numbers attention_dropout_number(g, A, h, i) + j) and the weights that multiply v (T;
// null when p == 0). For T = float, scores may be probs itself: each element is read before it is
// written, by the same lane.
template <class T>
__global__ void softmax_dropout_kernel(const float* scores, T* probs, int64_t rows, int L, int heads, uint64_t g,
                                       PhiloxKey key, bool dropout, float keep_scale, uint8_t* drop_mask, T* weights) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x % 32;
  const float* S = scores + row * L;
  T* P = probs + row * L;
  float max = -FLT_MAX;
  for (int j = lane; j < L; j += 32) max = fmaxf(max, S[j]);
  max = warp_max(max);
  float sum = 0;
  for (int j = lane; j < L; j += 32) sum += expf(S[j] - max);
  const float inv = 1.0f / warp_sum(sum);
  uint8_t* m = dropout ? drop_mask + row * L : nullptr;
  T* w = dropout ? weights + row * L : nullptr;
  const int64_t h = row / L, i = row % L;
  const uint64_t first =
      ((g * static_cast<uint64_t>(heads) + static_cast<uint64_t>(h)) * kMaxPackedLength + static_cast<uint64_t>(i)) *
      kMaxPackedLength;
  for (int j = lane; j < L; j += 32) {
    const float p = expf(S[j] - max) * inv;
    P[j] = from_float<T>(p);
    if (!dropout) continue;
    const uint64_t e = first + static_cast<uint64_t>(j);
    const bool keep = philox_keeps(key, philox_words(key, e / 4).v[e % 4]);
    m[j] = keep ? 1 : 0;
    w[j] = from_float<T>(keep ? p * keep_scale : 0.0f);
  }
}

}  // namespace

template <class T>
void attention_forward(const T* qkv, const PackedSequences& seqs, const AttentionShape& s, float p,
                       const DropoutKey& key, T* ctx, T* probs, uint8_t* drop_mask) {
  constexpr std::string_view op = "attention_forward";
  const int64_t A = s.heads, H = s.hidden, d = H / A, ld = 3 * H, Lmax = seqs.max_len;
  if (seqs.tokens() == 0) return;
  Context& c = Context::get();
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  // Scratch for the longest sequence, reused by each.
  DeviceBuffer<float> fp32_scores(std::is_same_v<T, float> ? 0 : A * Lmax * Lmax);
  DeviceBuffer<T> dropped(p > 0 ? A * Lmax * Lmax : 0);
  for (int64_t sq = 0; sq < seqs.sequences(); ++sq) {
    const int64_t L = seqs.length(sq);
    if (L == 0) continue;
    const int64_t row0 = seqs.offsets[static_cast<size_t>(sq)], rows = A * L;
    const T* q = qkv + row0 * ld;
    T* P = probs + A * seqs.score_offsets[static_cast<size_t>(sq)];
    float* scores = std::is_same_v<T, float> ? reinterpret_cast<float*>(P) : fp32_scores.get();
    // scores[h] = q_h · k_hᵀ / √d in fp32, the heads one batch (columns d apart).
    gemm<T, float>(op, false, true, L, L, d, scale, q, ld, q + H, ld, 0.0f, scores, L, nullptr, {A, d, d, L * L});
    softmax_dropout_kernel<<<row_blocks(rows), kThreads, 0, c.stream()>>>(
        scores, native(P), rows, static_cast<int>(L), static_cast<int>(A),
        seqs.first_number + static_cast<uint64_t>(sq), philox_key(key, p), p > 0, keep_scale_of(p),
        p > 0 ? drop_mask + (P - probs) : nullptr, native(dropped.get()));
    check_launch(op);
    const T* weights = p > 0 ? dropped.get() : P;
    // ctx[sequence, head h] = weights[h] · v_h
    gemm<T, T>(op, false, false, L, d, L, 1.0f, weights, L, q + 2 * H, ld, 0.0f, ctx + row0 * H, H, nullptr,
               {A, L * L, d, d});
  }
}

template <class T>
void attention_backward(const T* dctx, const T* qkv, const T* probs, const uint8_t* drop_mask,
                        const PackedSequences& seqs, const AttentionShape& s, float p, T* dqkv) {
  constexpr std::string_view op = "attention_backward";
  const int64_t A = s.heads, H = s.hidden, d = H / A, ld = 3 * H, Lmax = seqs.max_len;
  if (seqs.tokens() == 0) return;
  Context& c = Context::get();
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  const float keep_scale = keep_scale_of(p);
  DeviceBuffer<T> dropped(p > 0 ? A * Lmax * Lmax : 0), dS(A * Lmax * Lmax);
  Fp32Scratch<T> dweights(dS.get(), A * Lmax * Lmax);
  for (int64_t sq = 0; sq < seqs.sequences(); ++sq) {
    const int64_t L = seqs.length(sq);
    if (L == 0) continue;
    const int64_t row0 = seqs.offsets[static_cast<size_t>(sq)], rows = A * L, block = A * seqs.score_offsets[sq];
    const T* P = probs + block;
    const uint8_t* mask = p > 0 ? drop_mask + block : nullptr;
    const T* weights = dropped_weights(P, mask, p, rows * L, dropped, op);
    const T* q = qkv + row0 * ld;
    T* dq = dqkv + row0 * ld;
    const T* dc = dctx + row0 * H;
    // dv_h = weights[h]ᵀ · dctx_h;  d(weights)[h] = dctx_h · v_hᵀ (fp32)
    gemm<T, T>(op, true, false, L, d, L, 1.0f, weights, L, dc, H, 0.0f, dq + 2 * H, ld, nullptr, {A, L * L, d, d});
    gemm<T, float>(op, false, true, L, L, d, 1.0f, dc, H, q + 2 * H, ld, 0.0f, dweights.data, L, nullptr,
                   {A, d, d, L * L});
    softmax_backward_kernel<<<row_blocks(rows), kThreads, 0, c.stream()>>>(dweights.data, native(dS.get()), native(P),
                                                                           rows, static_cast<int>(L), mask, keep_scale);
    check_launch(op);
    // dq_h = scale · dS[h] · k_h;  dk_h = scale · dS[h]ᵀ · q_h
    gemm<T, T>(op, false, false, L, d, L, scale, dS.get(), L, q + H, ld, 0.0f, dq, ld, nullptr, {A, L * L, d, d});
    gemm<T, T>(op, true, false, L, d, L, scale, dS.get(), L, q, ld, 0.0f, dq + H, ld, nullptr, {A, L * L, d, d});
  }
}

#define KGLM_ATTENTION_CUDA(T)                                                                              \
  template void attention_forward<T>(const T*, const PackedSequences&, const AttentionShape&, float,        \
                                     const DropoutKey&, T*, T*, uint8_t*);                                  \
  template void attention_backward<T>(const T*, const T*, const T*, const uint8_t*, const PackedSequences&, \
                                      const AttentionShape&, float, T*);
KGLM_FOR_STORAGE_TYPES(KGLM_ATTENTION_CUDA)
#undef KGLM_ATTENTION_CUDA

}  // namespace kglm::nn::cuda
