// T5's attention on the GPU over packed batches, the twin of cpu/biased_attention_cpu.cpp: per
// sequence, cuBLASLt products batched over the heads (q, k and v read in place through the leading
// dimension A·d, a head's columns d apart; k and v may be a decode cache, sequence s's keys at row
// s·key_stride), and one kernel for the bias, the causal mask, the softmax and the dropout mask of
// the sequence's [A·Lq, Lk] scores: no padded score exists. Scores and their gradient are fp32
// whatever the storage type; probabilities are stored in T. The relative-position bias is a gather
// from its table, and its gradient a deterministic two-pass reduction (no atomics).
#include <cfloat>

#include "nn/cuda/common.cuh"
#include "nn/cuda/gemm.hpp"
#include "nn/cuda/kernels.hpp"
#include "nn/cuda/philox.cuh"
#include "nn/cuda/softmax_rows.cuh"

namespace kglm::nn::cuda {

namespace {

using namespace score_rows;

// One sequence's geometry as the row kernel needs it (a row is one (head, query)).
struct RowShape {
  int queries, keys, heads;
  int64_t bias_queries, bias_keys;
  bool causal;
  int query_offset;
  uint64_t number;  // the sequence's number (dropout)
};

// Row `row` of one sequence's fp32 scores [A·Lq, Lk]: adds the bias row, hides the keys after the
// query's position when causal (probability 0; key 0 is always visible), and writes the softmax to
// probs (T) and, with dropout, the mask (numbers attention_dropout_number(g, A, h, query_offset +
// i) + j, as on the CPU) and the weights that multiply v. For T = float, scores may be probs
// itself (each element is read, then written, by the same lane).
template <class T>
__global__ void biased_softmax_kernel(const float* scores, const T* bias, T* probs, int64_t rows, RowShape s,
                                      PhiloxKey key, bool dropout, float keep_scale, uint8_t* drop_mask, T* weights) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x % 32, L = s.keys;
  const int i = static_cast<int>(row % s.queries);
  const int64_t h = row / s.queries;
  const T* brow = bias ? bias + (h * s.bias_queries + i) * s.bias_keys : nullptr;
  const float* S = scores + row * L;
  const int seen = s.causal ? min(L, s.query_offset + i + 1) : L;
  auto biased = [&](int j) { return S[j] + (brow ? to_float(brow[j]) : 0.0f); };
  float max = -FLT_MAX;
  for (int j = lane; j < seen; j += 32) max = fmaxf(max, biased(j));
  max = warp_max(max);
  float sum = 0;
  for (int j = lane; j < seen; j += 32) sum += expf(biased(j) - max);
  const float inv = 1.0f / warp_sum(sum);
  uint8_t* m = dropout ? drop_mask + row * L : nullptr;
  T* w = dropout ? weights + row * L : nullptr;
  T* P = probs + row * L;
  const uint64_t first = ((s.number * static_cast<uint64_t>(s.heads) + static_cast<uint64_t>(h)) * kMaxPackedLength +
                          static_cast<uint64_t>(s.query_offset + i)) *
                         kMaxPackedLength;
  for (int j = lane; j < L; j += 32) {
    const float p = j < seen ? expf(biased(j) - max) * inv : 0.0f;
    P[j] = from_float<T>(p);
    if (!dropout) continue;
    const uint64_t e = first + static_cast<uint64_t>(j);
    const bool keep = philox_keeps(key, philox_words(key, e / 4).v[e % 4]);
    m[j] = keep ? 1 : 0;
    w[j] = from_float<T>(keep ? p * keep_scale : 0.0f);
  }
}

// bias[h, e] = table[buckets_of[e], h], e over the Tq·Tk pairs (buckets checked by the caller).
template <class T>
__global__ void relative_bias_kernel(const int32_t* buckets_of, const T* table, int64_t heads, int64_t pairs, T* bias) {
  for (int64_t i = global_thread(); i < heads * pairs; i += grid_threads()) {
    const int64_t h = i / pairs, e = i % pairs;
    bias[i] = table[buckets_of[e] * heads + h];
  }
}

// summed[h, i, j] += dS[h, i, j] over one sequence's [A, Lq, Lk] block; summed is [A, BQ, BK].
template <class T>
__global__ void add_block_kernel(const T* dS, int64_t heads, int64_t lq, int64_t lk, int64_t bias_queries,
                                 int64_t bias_keys, float* summed) {
  for (int64_t e = global_thread(); e < heads * lq * lk; e += grid_threads()) {
    const int64_t h = e / (lq * lk), i = e / lk % lq, j = e % lk;
    summed[(h * bias_queries + i) * bias_keys + j] += to_float(dS[e]);
  }
}

// One block per (bucket, head): dtable[bucket, h] += Σ summed[h, e] over the pairs e in that
// bucket (each thread a fixed strided subset, then the block's fixed reduction).
__global__ void bucket_sums_kernel(const float* summed, const int32_t* buckets_of, int64_t pairs, int64_t heads,
                                   float* dtable) {
  __shared__ float scratch[32];
  const int64_t bucket = blockIdx.x / heads, h = blockIdx.x % heads;
  const float* g = summed + h * pairs;
  float s = 0;
  for (int64_t e = threadIdx.x; e < pairs; e += blockDim.x)
    if (buckets_of[e] == bucket) s += g[e];
  s = block_sum(s, scratch);
  if (threadIdx.x == 0) dtable[bucket * heads + h] += s;
}

}  // namespace

template <class T>
void biased_attention_forward(const T* q, const T* k, const T* v, const T* bias, int64_t bias_queries,
                              int64_t bias_keys, const AttentionPairs& pairs, const BiasedAttentionShape& s, float p,
                              const DropoutKey& key, T* ctx, T* probs, uint8_t* drop_mask) {
  constexpr std::string_view op = "biased_attention_forward";
  const PackedSequences &queries = *pairs.queries, &keys = *pairs.keys;
  const int64_t A = s.heads, I = s.inner(), d = s.head_size, most = A * queries.max_len * keys.max_len;
  if (queries.tokens() == 0) return;
  Context& c = Context::get();
  // Scratch for the largest sequence, reused by each.
  DeviceBuffer<float> fp32_scores(std::is_same_v<T, float> ? 0 : most);
  DeviceBuffer<T> dropped(p > 0 ? most : 0);
  for (int64_t sq = 0; sq < pairs.sequences(); ++sq) {
    const int64_t Lq = queries.length(sq), Lk = keys.length(sq);
    T* ctx_s = ctx + queries.offsets[static_cast<size_t>(sq)] * I;
    if (Lq == 0) continue;
    if (Lk == 0) {  // nothing to attend to
      check(cudaMemsetAsync(ctx_s, 0, static_cast<size_t>(Lq * I) * sizeof(T), c.stream()), op, "cudaMemsetAsync");
      continue;
    }
    const T* q_s = q + queries.offsets[static_cast<size_t>(sq)] * I;
    const int64_t key_row = pairs.key_row(sq, s), rows = A * Lq;
    T* P = probs + A * pairs.score_offsets[static_cast<size_t>(sq)];
    float* scores = std::is_same_v<T, float> ? reinterpret_cast<float*>(P) : fp32_scores.get();
    // scores[h] = scale · q_h · k_hᵀ in fp32, the heads one batch (columns d apart).
    gemm<T, float>(op, false, true, Lq, Lk, d, static_cast<float>(s.scale), q_s, I, k + key_row * I, I, 0.0f, scores,
                   Lk, nullptr, {A, d, d, Lq * Lk});
    const RowShape shape{static_cast<int>(Lq),
                         static_cast<int>(Lk),
                         static_cast<int>(A),
                         bias_queries,
                         bias_keys,
                         s.causal,
                         static_cast<int>(s.query_offset),
                         queries.first_number + static_cast<uint64_t>(sq)};
    biased_softmax_kernel<<<row_blocks(rows), kThreads, 0, c.stream()>>>(
        scores, native(bias), native(P), rows, shape, philox_key(key, p), p > 0, keep_scale_of(p),
        p > 0 ? drop_mask + (P - probs) : nullptr, native(dropped.get()));
    check_launch(op);
    const T* weights = p > 0 ? dropped.get() : P;
    // ctx[sequence, head h] = weights[h] · v_h
    gemm<T, T>(op, false, false, Lq, d, Lk, 1.0f, weights, Lk, v + key_row * I, I, 0.0f, ctx_s, I, nullptr,
               {A, Lq * Lk, d, d});
  }
}

template <class T>
void biased_attention_backward(const T* dctx, const T* q, const T* k, const T* v, const T* probs,
                               const uint8_t* drop_mask, const AttentionPairs& pairs, const BiasedAttentionShape& s,
                               float p, T* dq, T* dk, T* dv, T* dscores) {
  constexpr std::string_view op = "biased_attention_backward";
  const PackedSequences &queries = *pairs.queries, &keys = *pairs.keys;
  const int64_t A = s.heads, I = s.inner(), d = s.head_size, most = A * queries.max_len * keys.max_len;
  if (queries.tokens() == 0 && keys.tokens() == 0) return;
  Context& c = Context::get();
  DeviceBuffer<T> dropped(p > 0 ? most : 0), own_dS(dscores ? 0 : most);
  DeviceBuffer<float> fp32_dweights(std::is_same_v<T, float> ? 0 : most);
  const auto scale = static_cast<float>(s.scale);
  for (int64_t sq = 0; sq < pairs.sequences(); ++sq) {
    const int64_t Lq = queries.length(sq), Lk = keys.length(sq);
    const int64_t qrow = queries.offsets[static_cast<size_t>(sq)], krow = keys.offsets[static_cast<size_t>(sq)];
    if (Lq == 0 || Lk == 0) {  // no score: the gradients of the sequence's rows are 0
      const auto zero = [&](T* x, int64_t n) {
        if (n > 0)
          check(cudaMemsetAsync(x, 0, static_cast<size_t>(n * I) * sizeof(T), c.stream()), op, "cudaMemsetAsync");
      };
      zero(dq + qrow * I, Lq);
      zero(dk + krow * I, Lk);
      zero(dv + krow * I, Lk);
      continue;
    }
    const int64_t block = A * pairs.score_offsets[static_cast<size_t>(sq)], rows = A * Lq;
    const T* P = probs + block;
    const uint8_t* mask = p > 0 ? drop_mask + block : nullptr;
    T* dS = dscores ? dscores + block : own_dS.get();
    float* dweights = std::is_same_v<T, float> ? reinterpret_cast<float*>(dS) : fp32_dweights.get();
    const T* weights = dropped_weights(P, mask, p, rows * Lk, dropped, op);
    const T* dc = dctx + qrow * I;
    // dv_h = weights[h]ᵀ · dctx_h;  d(weights)[h] = dctx_h · v_hᵀ (fp32)
    gemm<T, T>(op, true, false, Lk, d, Lq, 1.0f, weights, Lk, dc, I, 0.0f, dv + krow * I, I, nullptr,
               {A, Lq * Lk, d, d});
    gemm<T, float>(op, false, true, Lq, Lk, d, 1.0f, dc, I, v + krow * I, I, 0.0f, dweights, Lk, nullptr,
                   {A, d, d, Lq * Lk});
    softmax_backward_kernel<<<row_blocks(rows), kThreads, 0, c.stream()>>>(
        dweights, native(dS), native(P), rows, static_cast<int>(Lk), mask, keep_scale_of(p));
    check_launch(op);
    // scores = scale · q·kᵀ + bias: dq_h = scale · dS[h] · k_h;  dk_h = scale · dS[h]ᵀ · q_h
    gemm<T, T>(op, false, false, Lq, d, Lk, scale, dS, Lk, k + krow * I, I, 0.0f, dq + qrow * I, I, nullptr,
               {A, Lq * Lk, d, d});
    gemm<T, T>(op, true, false, Lk, d, Lq, scale, dS, Lk, q + qrow * I, I, 0.0f, dk + krow * I, I, nullptr,
               {A, Lq * Lk, d, d});
  }
}

template <class T>
void relative_bias_forward(const int32_t* buckets_of, const T* table, int64_t heads, int64_t tq, int64_t tk, T* bias) {
  const int64_t n = heads * tq * tk;
  if (n == 0) return;
  relative_bias_kernel<<<elementwise_blocks(n), kThreads, 0, Context::get().stream()>>>(buckets_of, native(table),
                                                                                        heads, tq * tk, native(bias));
  check_launch("relative_bias_forward");
}

template <class T>
void relative_bias_backward(const T* dscores, const AttentionPairs& pairs, const int32_t* buckets_of,
                            int64_t bias_queries, int64_t bias_keys, int64_t heads, int64_t buckets, float* dtable) {
  constexpr std::string_view op = "relative_bias_backward";
  const int64_t positions = bias_queries * bias_keys;
  if (positions == 0 || heads == 0 || buckets == 0) return;
  Context& c = Context::get();
  // First the sequences' blocks summed per (head, query, key), one sequence after another (a fixed
  // order), then each (bucket, head)'s sum.
  DeviceBuffer<float> summed(heads * positions);
  check(cudaMemsetAsync(summed.get(), 0, static_cast<size_t>(heads * positions) * sizeof(float), c.stream()), op,
        "cudaMemsetAsync");
  const PackedSequences &queries = *pairs.queries, &keys = *pairs.keys;
  for (int64_t sq = 0; sq < pairs.sequences(); ++sq) {
    const int64_t Lq = queries.length(sq), Lk = keys.length(sq), n = heads * Lq * Lk;
    if (n == 0) continue;
    add_block_kernel<<<elementwise_blocks(n), kThreads, 0, c.stream()>>>(
        native(dscores + heads * pairs.score_offsets[static_cast<size_t>(sq)]), heads, Lq, Lk, bias_queries, bias_keys,
        summed.get());
    check_launch(op);
  }
  bucket_sums_kernel<<<static_cast<unsigned>(buckets * heads), kThreads, 0, c.stream()>>>(summed.get(), buckets_of,
                                                                                          positions, heads, dtable);
  check_launch(op);
}

#define KGLM_BIASED_ATTENTION_CUDA(T)                                                                                 \
  template void biased_attention_forward<T>(const T*, const T*, const T*, const T*, int64_t, int64_t,                 \
                                            const AttentionPairs&, const BiasedAttentionShape&, float,                \
                                            const DropoutKey&, T*, T*, uint8_t*);                                     \
  template void biased_attention_backward<T>(const T*, const T*, const T*, const T*, const T*, const uint8_t*,        \
                                             const AttentionPairs&, const BiasedAttentionShape&, float, T*, T*, T*,   \
                                             T*);                                                                     \
  template void relative_bias_forward<T>(const int32_t*, const T*, int64_t, int64_t, int64_t, T*);                    \
  template void relative_bias_backward<T>(const T*, const AttentionPairs&, const int32_t*, int64_t, int64_t, int64_t, \
                                          int64_t, float*);
KGLM_FOR_STORAGE_TYPES(KGLM_BIASED_ATTENTION_CUDA)
#undef KGLM_BIASED_ATTENTION_CUDA

}  // namespace kglm::nn::cuda
