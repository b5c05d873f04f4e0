// T5's attention over packed batches, one (sequence, head) pair per loop iteration, the pairs
// spread over the OpenMP threads, the costliest first; each pair is computed whole by one thread, so
// results do not depend on the schedule. q, k and v of a head are read in place through the gemm
// leading dimension (A·d), and k and v may be a decode cache (sequence s's keys at s·key_stride).
#include <algorithm>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "nn/cpu/kernels.hpp"

namespace kglm::nn::cpu {

namespace {

// The (sequence, head) pairs in order of decreasing Lq·Lk (a stable order: deterministic), for the
// threads' balance; in their own order where one thread runs them or every pair costs the same (a
// decoding step's self-attention: the sort cost more than the pairs at one query row each).
std::vector<int64_t> pairs_by_cost(const AttentionPairs& pairs, int64_t heads) {
  std::vector<int64_t> order(static_cast<size_t>(pairs.sequences() * heads));
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  auto cost = [&](int64_t sh) {
    const auto s = static_cast<size_t>(sh / heads);
    return pairs.score_offsets[s + 1] - pairs.score_offsets[s];
  };
  const bool one_thread = omp_in_parallel() || omp_get_max_threads() == 1;
  const bool uniform = std::all_of(order.begin(), order.end(), [&](int64_t sh) { return cost(sh) == cost(0); });
  if (!one_thread && !uniform)
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return cost(a) > cost(b); });
  return order;
}

// The longest query and key sequences: the per-thread scratch's size.
int64_t largest_block(const AttentionPairs& pairs) {
  int64_t most = 0;
  for (size_t s = 0; s + 1 < pairs.score_offsets.size(); ++s)
    most = std::max(most, pairs.score_offsets[s + 1] - pairs.score_offsets[s]);
  return most;
}

template <class T>
void apply_dropout(const T* probs, const uint8_t* mask, T scale, int64_t n, T* out) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) out[j] = mask[j] ? probs[j] * scale : T(0);
}

// One row of scores in place: + the bias row (if any), softmax over the `seen` visible keys, 0 for
// the keys the causal mask hides.
template <class T>
void biased_softmax_row(T* row, const T* brow, int64_t seen, int64_t keys) {
  if (brow)
#pragma omp simd
    for (int64_t j = 0; j < seen; ++j) row[j] += brow[j];
  T max = std::numeric_limits<T>::lowest();
#pragma omp simd reduction(max : max)
  for (int64_t j = 0; j < seen; ++j) max = std::max(max, row[j]);
  T sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < seen; ++j) {
    row[j] = exp_of<T>(row[j] - max);
    sum += row[j];
  }
  const T inv = T(1) / sum;
#pragma omp simd
  for (int64_t j = 0; j < seen; ++j) row[j] *= inv;
  std::fill(row + seen, row + keys, T(0));
}

// A decoding step: every sequence has one query row. One sequence per iteration, all its heads in
// one pass over its keys' rows (a row holds every head's key, A·d values side by side), where two
// BLAS calls per head (sgemv, ~2·Lk·d flops each) cost more to make than to compute: T5 beam search
// makes 8,192 such pairs a step. Written by hand: BLAS has no call that batches them. A static
// schedule: a sequence's work is under a microsecond and about the same for all, and dynamic
// scheduling cost more than it balanced (beam 4 at 2 threads: 0.22 s against 0.13).
template <class T>
void one_query_per_sequence(const T* q, const T* k, const T* v, const T* bias, int64_t bias_queries, int64_t bias_keys,
                            const AttentionPairs& pairs, const BiasedAttentionShape& s, T* ctx, T* probs) {
  const int64_t A = s.heads, I = s.inner(), d = s.head_size, count = pairs.sequences();
  const T scale = static_cast<T>(s.scale);
#pragma omp parallel for schedule(static) if (count > 1 && pairs.score_elements(A) * d >= kParallelGrain)
  for (int64_t sq = 0; sq < count; ++sq) {
    const int64_t Lk = pairs.keys->length(sq), row = pairs.queries->offsets[static_cast<size_t>(sq)];
    const T* qs = q + row * I;
    T* cs = ctx + row * I;
    std::fill_n(cs, I, T(0));
    if (Lk == 0) continue;  // nothing to attend to
    const T* ks = k + pairs.key_row(sq, s) * I;
    const T* vs = v + pairs.key_row(sq, s) * I;
    T* P = probs + A * pairs.score_offsets[static_cast<size_t>(sq)];  // [A, 1, Lk]
    const int64_t seen = s.causal ? std::min(Lk, s.query_offset + 1) : Lk;
    for (int64_t j = 0; j < seen; ++j)
      for (int64_t h = 0; h < A; ++h) {
        const T *qh = qs + h * d, *kh = ks + j * I + h * d;
        T sum = 0;
#pragma omp simd reduction(+ : sum)
        for (int64_t c = 0; c < d; ++c) sum += qh[c] * kh[c];
        P[h * Lk + j] = scale * sum;
      }
    for (int64_t h = 0; h < A; ++h)
      biased_softmax_row(P + h * Lk, bias ? bias + h * bias_queries * bias_keys : nullptr, seen, Lk);
    for (int64_t j = 0; j < seen; ++j)
      for (int64_t h = 0; h < A; ++h) {
        const T w = P[h * Lk + j];
        const T* vh = vs + j * I + h * d;
        T* ch = cs + h * d;
#pragma omp simd
        for (int64_t c = 0; c < d; ++c) ch[c] += w * vh[c];
      }
  }
}

}  // namespace

template <class T>
void biased_attention_forward(const T* q, const T* k, const T* v, const T* bias, int64_t bias_queries,
                              int64_t bias_keys, const AttentionPairs& pairs, const BiasedAttentionShape& s, float p,
                              const DropoutKey& key, T* ctx, T* probs, uint8_t* drop_mask) {
  const int64_t A = s.heads, I = s.inner(), d = s.head_size;
  const PackedSequences &queries = *pairs.queries, &keys = *pairs.keys;
  check_blas_dims("biased_attention_forward", {queries.max_len, keys.max_len, I});
  const T scale = static_cast<T>(s.scale);
  const T keep_scale = static_cast<T>(1.0 / (1.0 - static_cast<double>(p)));
  if (p == 0 && queries.max_len == 1 && queries.tokens() == queries.sequences()) {
    one_query_per_sequence(q, k, v, bias, bias_queries, bias_keys, pairs, s, ctx, probs);
    return;
  }
  const std::vector<int64_t> order = pairs_by_cost(pairs, A);
  const auto count = static_cast<int64_t>(order.size());
  const int64_t block_max = largest_block(pairs);
  // Allocated here: an exception must not leave a parallel region.
  std::vector<T> scratch(p > 0 ? static_cast<size_t>(omp_get_max_threads() * block_max) : 0);
#pragma omp parallel if (count > 1 && pairs.score_elements(A) * d >= kParallelGrain)
  {
    T* dropped = p > 0 ? scratch.data() + omp_get_thread_num() * block_max : nullptr;
#pragma omp for schedule(dynamic, 1)
    for (int64_t n = 0; n < count; ++n) {
      const int64_t sh = order[static_cast<size_t>(n)], sq = sh / A, h = sh % A;
      const int64_t Lq = queries.length(sq), Lk = keys.length(sq);
      T* ctx_h = ctx + queries.offsets[static_cast<size_t>(sq)] * I + h * d;
      if (Lq == 0) continue;
      if (Lk == 0) {  // nothing to attend to
        for (int64_t i = 0; i < Lq; ++i) std::fill_n(ctx_h + i * I, d, T(0));
        continue;
      }
      const T* qh = q + queries.offsets[static_cast<size_t>(sq)] * I + h * d;
      const int64_t key_row = pairs.key_row(sq, s);
      const T* kh = k + key_row * I + h * d;
      const T* vh = v + key_row * I + h * d;
      T* P = probs + A * pairs.score_offsets[static_cast<size_t>(sq)] + h * Lq * Lk;
      gemm<T>(false, true, Lq, Lk, d, scale, qh, I, kh, I, T(0), P, Lk);
      for (int64_t i = 0; i < Lq; ++i) {
        const T* brow = bias ? bias + (h * bias_queries + i) * bias_keys : nullptr;
        // The causal mask hides keys after the query's position (key 0 is always visible).
        biased_softmax_row(P + i * Lk, brow, s.causal ? std::min(Lk, s.query_offset + i + 1) : Lk, Lk);
      }
      const T* weights = P;
      if (p > 0) {
        uint8_t* mask = drop_mask + (P - probs);
        const uint64_t g = queries.first_number + static_cast<uint64_t>(sq);
        for (int64_t i = 0; i < Lq; ++i)
          dropout_mask(key, p, attention_dropout_number(g, A, h, s.query_offset + i), Lk, mask + i * Lk);
        apply_dropout(P, mask, keep_scale, Lq * Lk, dropped);
        weights = dropped;
      }
      gemm<T>(false, false, Lq, d, Lk, T(1), weights, Lk, vh, I, T(0), ctx_h, I);
    }
  }
}

template <class T>
void biased_attention_backward(const T* dctx, const T* q, const T* k, const T* v, const T* probs,
                               const uint8_t* drop_mask, const AttentionPairs& pairs, const BiasedAttentionShape& s,
                               float p, T* dq, T* dk, T* dv, T* dscores) {
  const int64_t A = s.heads, I = s.inner(), d = s.head_size;
  const PackedSequences &queries = *pairs.queries, &keys = *pairs.keys;
  check_blas_dims("biased_attention_backward", {queries.max_len, keys.max_len, I});
  const T scale = static_cast<T>(s.scale);
  const T keep_scale = static_cast<T>(1.0 / (1.0 - static_cast<double>(p)));
  const std::vector<int64_t> order = pairs_by_cost(pairs, A);
  const auto count = static_cast<int64_t>(order.size());
  const int64_t block_max = largest_block(pairs);
  // Per thread: the score gradient (unless it goes to dscores), and the dropped-out probabilities.
  const int64_t per_thread = (p > 0 ? 2 : 1) * block_max;
  std::vector<T> scratch(static_cast<size_t>(omp_get_max_threads() * per_thread));
#pragma omp parallel if (count > 1 && pairs.score_elements(A) * d >= kParallelGrain)
  {
    T* own_dS = scratch.data() + omp_get_thread_num() * per_thread;
    T* dropped = p > 0 ? own_dS + block_max : nullptr;
#pragma omp for schedule(dynamic, 1)
    for (int64_t n = 0; n < count; ++n) {
      const int64_t sh = order[static_cast<size_t>(n)], sq = sh / A, h = sh % A;
      const int64_t Lq = queries.length(sq), Lk = keys.length(sq);
      const int64_t qoff = queries.offsets[static_cast<size_t>(sq)] * I + h * d;
      const int64_t koff = keys.offsets[static_cast<size_t>(sq)] * I + h * d;
      if (Lq == 0 || Lk == 0) {  // no score: the keys' gradient is 0, and so is the queries'
        for (int64_t i = 0; i < Lq; ++i) std::fill_n(dq + qoff + i * I, d, T(0));
        for (int64_t j = 0; j < Lk; ++j) {
          std::fill_n(dk + koff + j * I, d, T(0));
          std::fill_n(dv + koff + j * I, d, T(0));
        }
        continue;
      }
      const int64_t block = A * pairs.score_offsets[static_cast<size_t>(sq)] + h * Lq * Lk;
      const T* P = probs + block;
      const uint8_t* mask = p > 0 ? drop_mask + block : nullptr;
      T* dS = dscores ? dscores + block : own_dS;
      const T* weights = P;
      if (mask) {
        apply_dropout(P, mask, keep_scale, Lq * Lk, dropped);
        weights = dropped;
      }
      // dv = weightsᵀ · dctx; d(weights) = dctx · vᵀ, turned into dS in place below
      gemm<T>(true, false, Lk, d, Lq, T(1), weights, Lk, dctx + qoff, I, T(0), dv + koff, I);
      gemm<T>(false, true, Lq, Lk, d, T(1), dctx + qoff, I, v + koff, I, T(0), dS, Lk);
      // Through dropout and the softmax: dS = P ⊙ (dP − Σⱼ P·dP); hidden keys have P = 0.
      for (int64_t i = 0; i < Lq; ++i) {
        T* g = dS + i * Lk;
        const T* pr = P + i * Lk;
        if (mask) {
          const uint8_t* mr = mask + i * Lk;
#pragma omp simd
          for (int64_t j = 0; j < Lk; ++j) g[j] = mr[j] ? g[j] * keep_scale : T(0);
        }
        T dot = 0;
#pragma omp simd reduction(+ : dot)
        for (int64_t j = 0; j < Lk; ++j) dot += pr[j] * g[j];
#pragma omp simd
        for (int64_t j = 0; j < Lk; ++j) g[j] = pr[j] * (g[j] - dot);
      }
      // scores = scale · q·kᵀ + bias: dq = scale · dS · k, dk = scale · dSᵀ · q
      gemm<T>(false, false, Lq, d, Lk, scale, dS, Lk, k + koff, I, T(0), dq + qoff, I);
      gemm<T>(true, false, Lk, d, Lq, scale, dS, Lk, q + qoff, I, T(0), dk + koff, I);
    }
  }
}

template <class T>
void relative_bias_forward(const int32_t* buckets_of, const T* table, int64_t buckets, int64_t heads, int64_t tq,
                           int64_t tk, T* bias) {
  for (int64_t e = 0; e < tq * tk; ++e)
    if (buckets_of[e] < 0 || buckets_of[e] >= buckets)
      throw Error("relative_bias_forward: bucket " + std::to_string(buckets_of[e]) + " is outside [0, " +
                  std::to_string(buckets) + ")");
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t e = 0; e < tq * tk; ++e) bias[h * tq * tk + e] = table[buckets_of[e] * heads + h];
}

template <class T>
void relative_bias_backward(const T* dscores, const AttentionPairs& pairs, const int32_t* buckets_of, int64_t bias_keys,
                            int64_t heads, T* dtable) {
  const PackedSequences &queries = *pairs.queries, &keys = *pairs.keys;
  // Column h of the table is written by head h alone, in a fixed order: deterministic.
#pragma omp parallel for schedule(static) if (heads > 1 && pairs.score_elements(heads) >= kParallelGrain)
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t sq = 0; sq < pairs.sequences(); ++sq) {
      const int64_t Lq = queries.length(sq), Lk = keys.length(sq);
      const T* g = dscores + heads * pairs.score_offsets[static_cast<size_t>(sq)] + h * Lq * Lk;
      for (int64_t i = 0; i < Lq; ++i)
        for (int64_t j = 0; j < Lk; ++j) dtable[buckets_of[i * bias_keys + j] * heads + h] += g[i * Lk + j];
    }
}

#define KGLM_BIASED_ATTENTION_CPU(T)                                                                                \
  template void biased_attention_forward<T>(const T*, const T*, const T*, const T*, int64_t, int64_t,               \
                                            const AttentionPairs&, const BiasedAttentionShape&, float,              \
                                            const DropoutKey&, T*, T*, uint8_t*);                                   \
  template void biased_attention_backward<T>(const T*, const T*, const T*, const T*, const T*, const uint8_t*,      \
                                             const AttentionPairs&, const BiasedAttentionShape&, float, T*, T*, T*, \
                                             T*);                                                                   \
  template void relative_bias_forward<T>(const int32_t*, const T*, int64_t, int64_t, int64_t, int64_t, T*);         \
  template void relative_bias_backward<T>(const T*, const AttentionPairs&, const int32_t*, int64_t, int64_t, T*);
KGLM_BIASED_ATTENTION_CPU(float)
KGLM_BIASED_ATTENTION_CPU(double)
#undef KGLM_BIASED_ATTENTION_CPU

}  // namespace kglm::nn::cpu
