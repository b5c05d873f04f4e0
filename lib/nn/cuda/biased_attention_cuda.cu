// T5's attention on the GPU, the twin of cpu/biased_attention_cpu.cpp: per head, cuBLASLt products
// batched over the sequences (q, k and v read in place through the leading dimension A·d; k and v
// may be a decode cache with more rows per sequence than keys in use), and one fused kernel for the
// bias, the key and causal masks, the softmax and the dropout mask. Scores and their gradient are
// fp32 whatever the storage type; probabilities are stored in T. The relative-position bias is a
// gather from its table, and its gradient a deterministic two-pass reduction (no atomics).
#include <cfloat>

#include "nn/cuda/common.cuh"
#include "nn/cuda/gemm.hpp"
#include "nn/cuda/kernels.hpp"
#include "nn/cuda/philox.cuh"
#include "nn/cuda/softmax_rows.cuh"

namespace kglm::nn::cuda {

namespace {

using namespace score_rows;

// The scores' geometry as the row kernel needs it (a row is one (sequence, head, query)).
struct RowShape {
  int queries, keys, heads;
  bool causal;
  int query_offset;
};

// Row `row` of the fp32 scores [B·A·Tq, Tk]: adds the bias (shared by the batch), masks padding
// keys and, when causal, the keys after the query's position; the softmax goes to probs (T) and,
// with dropout, the mask and the weights that multiply v. A row with no visible key is uniform,
// as on the CPU. For T = float, scores may be probs itself (each element is read, then written,
// by the same lane).
template <class T>
__global__ void biased_softmax_kernel(const float* scores, const T* bias, const int32_t* key_mask, T* probs,
                                      int64_t rows, RowShape s, PhiloxKey key, bool dropout, float keep_scale,
                                      uint8_t* drop_mask, T* weights) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x % 32, L = s.keys;
  const int i = static_cast<int>(row % s.queries);
  const int64_t bh = row / s.queries, b = bh / s.heads, h = bh % s.heads;
  const int32_t* real = key_mask ? key_mask + b * L : nullptr;
  const T* brow = bias ? bias + (h * s.queries + i) * static_cast<int64_t>(L) : nullptr;
  const float* S = scores + row * L;
  auto visible = [&](int j) { return (!real || real[j]) && (!s.causal || j <= s.query_offset + i); };
  auto biased = [&](int j) { return S[j] + (brow ? to_float(brow[j]) : 0.0f); };
  float max = -FLT_MAX;
  int seen = 0;
  for (int j = lane; j < L; j += 32)
    if (visible(j)) {
      max = fmaxf(max, biased(j));
      seen = 1;
    }
  max = warp_max(max);
  const bool any = warp_max(seen) != 0;
  float sum = 0;
  for (int j = lane; j < L; j += 32) sum += any ? (visible(j) ? expf(biased(j) - max) : 0.0f) : 1.0f;
  const float inv = 1.0f / warp_sum(sum);
  // Element (row, j) is number row·Tk + j of the call's Philox stream, as on the CPU.
  uint8_t* m = dropout ? drop_mask + row * L : nullptr;
  T* w = dropout ? weights + row * L : nullptr;
  T* P = probs + row * L;
  for (int j = lane; j < L; j += 32) {
    const float p = (any ? (visible(j) ? expf(biased(j) - max) : 0.0f) : 1.0f) * inv;
    P[j] = from_float<T>(p);
    if (!dropout) continue;
    const uint64_t e = static_cast<uint64_t>(row * L + j);
    const r123::Philox4x32::ctr_type words = philox_words(key, e / 4);
    const bool keep = philox_keeps(key, words.v[e % 4]);
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

// summed[h, e] = Σ_b dscores[b, h, e], the batch in order.
template <class T>
__global__ void sum_over_batch_kernel(const T* dscores, int64_t batch, int64_t per_sequence, float* summed) {
  for (int64_t i = global_thread(); i < per_sequence; i += grid_threads()) {
    float s = 0;
    for (int64_t b = 0; b < batch; ++b) s += to_float(dscores[b * per_sequence + i]);
    summed[i] = s;
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
void biased_attention_forward(const T* q, const T* k, const T* v, const int32_t* key_mask, const T* bias,
                              const BiasedAttentionShape& s, float p, const DropoutKey& key, T* ctx, T* probs,
                              uint8_t* drop_mask) {
  constexpr std::string_view op = "biased_attention_forward";
  const int64_t B = s.batch, A = s.heads, Tq = s.queries, Tk = s.keys, R = s.rows(), I = s.inner(), d = s.head_size;
  if (B == 0 || Tq == 0) return;
  Context& c = Context::get();
  const int64_t rows = B * A * Tq, block = Tq * Tk;
  Fp32Scratch<T> scores(probs, rows * Tk);
  // scores[b, h] = scale · q·kᵀ in fp32, one product per head batched over the sequences.
  for (int64_t h = 0; h < A; ++h)
    gemm<T, float>(op, false, true, Tq, Tk, d, static_cast<float>(s.scale), q + h * d, I, k + h * d, I, 0.0f,
                   scores.data + h * block, Tk, nullptr, {B, Tq * I, R * I, A * block});
  DeviceBuffer<T> dropped(p > 0 ? rows * Tk : 0);
  const RowShape shape{static_cast<int>(Tq), static_cast<int>(Tk), static_cast<int>(A), s.causal,
                       static_cast<int>(s.query_offset)};
  biased_softmax_kernel<<<row_blocks(rows), kThreads, 0, c.stream()>>>(
      scores.data, native(bias), key_mask, native(probs), rows, shape, philox_key(key, p), p > 0, keep_scale_of(p),
      drop_mask, native(dropped.get()));
  check_launch(op);
  const T* weights = p > 0 ? dropped.get() : probs;
  // ctx[b, :, head h] = weights[b, h] · v[b, head h]
  for (int64_t h = 0; h < A; ++h)
    gemm<T, T>(op, false, false, Tq, d, Tk, 1.0f, weights + h * block, Tk, v + h * d, I, 0.0f, ctx + h * d, I, nullptr,
               {B, A * block, R * I, Tq * I});
}

template <class T>
void biased_attention_backward(const T* dctx, const T* q, const T* k, const T* v, const T* probs,
                               const uint8_t* drop_mask, const BiasedAttentionShape& s, float p, T* dq, T* dk, T* dv,
                               T* dscores) {
  constexpr std::string_view op = "biased_attention_backward";
  const int64_t B = s.batch, A = s.heads, Tq = s.queries, Tk = s.keys, I = s.inner(), d = s.head_size;
  if (B == 0 || Tq == 0) return;
  Context& c = Context::get();
  const int64_t rows = B * A * Tq, block = Tq * Tk;
  DeviceBuffer<T> dropped(p > 0 ? rows * Tk : 0), own_dS(dscores ? 0 : rows * Tk);
  T* dS = dscores ? dscores : own_dS.get();  // the score gradient is dscores itself when asked for
  Fp32Scratch<T> dweights(dS, rows * Tk);
  const T* weights = dropped_weights(probs, drop_mask, p, rows * Tk, dropped, op);
  for (int64_t h = 0; h < A; ++h) {
    // dv = weightsᵀ · dctx;  d(weights) = dctx · vᵀ (fp32)
    gemm<T, T>(op, true, false, Tk, d, Tq, 1.0f, weights + h * block, Tk, dctx + h * d, I, 0.0f, dv + h * d, I, nullptr,
               {B, A * block, Tq * I, Tk * I});
    gemm<T, float>(op, false, true, Tq, Tk, d, 1.0f, dctx + h * d, I, v + h * d, I, 0.0f, dweights.data + h * block, Tk,
                   nullptr, {B, Tq * I, Tk * I, A * block});
  }
  softmax_backward_kernel<<<row_blocks(rows), kThreads, 0, c.stream()>>>(dweights.data, native(dS), native(probs), rows,
                                                                         static_cast<int>(Tk),
                                                                         p > 0 ? drop_mask : nullptr, keep_scale_of(p));
  check_launch(op);
  // scores = scale · q·kᵀ + bias: dq = scale · dS · k, dk = scale · dSᵀ · q
  const auto scale = static_cast<float>(s.scale);
  for (int64_t h = 0; h < A; ++h) {
    gemm<T, T>(op, false, false, Tq, d, Tk, scale, dS + h * block, Tk, k + h * d, I, 0.0f, dq + h * d, I, nullptr,
               {B, A * block, Tk * I, Tq * I});
    gemm<T, T>(op, true, false, Tk, d, Tq, scale, dS + h * block, Tk, q + h * d, I, 0.0f, dk + h * d, I, nullptr,
               {B, A * block, Tq * I, Tk * I});
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
void relative_bias_backward(const T* dscores, const int32_t* buckets_of, int64_t batch, int64_t heads, int64_t tq,
                            int64_t tk, int64_t buckets, float* dtable) {
  constexpr std::string_view op = "relative_bias_backward";
  const int64_t pairs = tq * tk;
  if (pairs == 0 || heads == 0 || buckets == 0) return;
  Context& c = Context::get();
  DeviceBuffer<float> summed(heads * pairs);
  sum_over_batch_kernel<<<elementwise_blocks(heads * pairs), kThreads, 0, c.stream()>>>(native(dscores), batch,
                                                                                        heads * pairs, summed.get());
  check_launch(op);
  bucket_sums_kernel<<<static_cast<unsigned>(buckets * heads), kThreads, 0, c.stream()>>>(summed.get(), buckets_of,
                                                                                          pairs, heads, dtable);
  check_launch(op);
}

#define KGLM_BIASED_ATTENTION_CUDA(T)                                                                                 \
  template void biased_attention_forward<T>(const T*, const T*, const T*, const int32_t*, const T*,                   \
                                            const BiasedAttentionShape&, float, const DropoutKey&, T*, T*, uint8_t*); \
  template void biased_attention_backward<T>(const T*, const T*, const T*, const T*, const T*, const uint8_t*,        \
                                             const BiasedAttentionShape&, float, T*, T*, T*, T*);                     \
  template void relative_bias_forward<T>(const int32_t*, const T*, int64_t, int64_t, int64_t, T*);                    \
  template void relative_bias_backward<T>(const T*, const int32_t*, int64_t, int64_t, int64_t, int64_t, int64_t,      \
                                          float*);
KGLM_FOR_STORAGE_TYPES(KGLM_BIASED_ATTENTION_CUDA)
#undef KGLM_BIASED_ATTENTION_CUDA

}  // namespace kglm::nn::cuda
