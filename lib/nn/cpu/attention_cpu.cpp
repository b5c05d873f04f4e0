// Multi-head self-attention of a packed batch, one (sequence, head) pair per loop iteration, the
// pairs spread over the OpenMP threads. q, k and v of a head are read in place from the packed qkv
// rows through the gemm leading dimension (3H), and the head's context is written in place into
// ctx (H). Every key is a real token: no mask, no padded scores.
#include <cmath>
#include <limits>
#include <vector>

#include "nn/cpu/kernels.hpp"

namespace kglm::nn::cpu {

namespace {

// probs · keep / (1 − p) over L×L: the weights that multiply v.
template <class T>
void apply_dropout(const T* probs, const uint8_t* mask, T scale, int64_t n, T* out) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) out[j] = mask[j] ? probs[j] * scale : T(0);
}

// The (sequence, head) pairs in order of decreasing cost, so that the dynamic schedule does not
// end on a long sequence. Each pair is computed whole by one thread: the results do not depend on
// the schedule.
std::vector<int64_t> pairs_by_cost(const PackedSequences& seqs, int64_t heads) {
  std::vector<int64_t> order(static_cast<size_t>(seqs.sequences() * heads));
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return seqs.length(a / heads) > seqs.length(b / heads); });
  return order;
}

}  // namespace

template <class T>
void attention_forward(const T* qkv, const PackedSequences& seqs, const AttentionShape& s, float p,
                       const DropoutKey& key, T* ctx, T* probs, uint8_t* drop_mask) {
  const int64_t A = s.heads, H = s.hidden, d = H / A, ld = 3 * H, Lmax = seqs.max_len;
  check_blas_dims("attention_forward", {Lmax, ld});
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(d)));
  const T keep_scale = static_cast<T>(1.0 / (1.0 - static_cast<double>(p)));
  const std::vector<int64_t> order = pairs_by_cost(seqs, A);
  const auto pairs = static_cast<int64_t>(order.size());
  // Scratch for the dropped-out probabilities, one block per thread, allocated here: an exception
  // must not leave a parallel region.
  std::vector<T> scratch(p > 0 ? static_cast<size_t>(omp_get_max_threads() * Lmax * Lmax) : 0);
#pragma omp parallel if (pairs > 1 && seqs.score_elements(A) * d >= kParallelGrain)
  {
    T* dropped = p > 0 ? scratch.data() + omp_get_thread_num() * Lmax * Lmax : nullptr;
#pragma omp for schedule(dynamic, 1)
    for (int64_t k = 0; k < pairs; ++k) {
      const int64_t sh = order[static_cast<size_t>(k)], sq = sh / A, h = sh % A, L = seqs.length(sq);
      if (L == 0) continue;
      const int64_t row0 = seqs.offsets[static_cast<size_t>(sq)];
      const T* q = qkv + row0 * ld + h * d;
      const T* kk = q + H;
      const T* v = q + 2 * H;
      T* P = probs + A * seqs.score_offsets[static_cast<size_t>(sq)] + h * L * L;
      // scores = q · kᵀ / √d
      gemm<T>(false, true, L, L, d, scale, q, ld, kk, ld, T(0), P, L);
      for (int64_t i = 0; i < L; ++i) {
        T* row = P + i * L;
        T max = std::numeric_limits<T>::lowest();
#pragma omp simd reduction(max : max)
        for (int64_t j = 0; j < L; ++j) max = std::max(max, row[j]);
        T sum = 0;
#pragma omp simd reduction(+ : sum)
        for (int64_t j = 0; j < L; ++j) {
          row[j] = exp_of<T>(row[j] - max);
          sum += row[j];
        }
        const T inv = T(1) / sum;
#pragma omp simd
        for (int64_t j = 0; j < L; ++j) row[j] *= inv;
      }
      const T* weights = P;
      if (p > 0) {
        uint8_t* mask = drop_mask + (P - probs);
        const uint64_t g = seqs.first_number + static_cast<uint64_t>(sq);
        for (int64_t i = 0; i < L; ++i) dropout_mask(key, p, attention_dropout_number(g, A, h, i), L, mask + i * L);
        apply_dropout(P, mask, keep_scale, L * L, dropped);
        weights = dropped;
      }
      // ctx[sequence, head h] = weights · v
      gemm<T>(false, false, L, d, L, T(1), weights, L, v, ld, T(0), ctx + row0 * H + h * d, H);
    }
  }
}

template <class T>
void attention_backward(const T* dctx, const T* qkv, const T* probs, const uint8_t* drop_mask,
                        const PackedSequences& seqs, const AttentionShape& s, float p, T* dqkv) {
  const int64_t A = s.heads, H = s.hidden, d = H / A, ld = 3 * H, Lmax = seqs.max_len;
  check_blas_dims("attention_backward", {Lmax, ld});
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(d)));
  const T keep_scale = static_cast<T>(1.0 / (1.0 - static_cast<double>(p)));
  const std::vector<int64_t> order = pairs_by_cost(seqs, A);
  const auto pairs = static_cast<int64_t>(order.size());
  // Per thread: the gradient of the scores and the dropped-out probabilities.
  const int64_t per_thread = (p > 0 ? 2 : 1) * Lmax * Lmax;
  std::vector<T> scratch(static_cast<size_t>(omp_get_max_threads() * per_thread));
#pragma omp parallel if (pairs > 1 && seqs.score_elements(A) * d >= kParallelGrain)
  {
    T* dS = scratch.data() + omp_get_thread_num() * per_thread;
    T* dropped = p > 0 ? dS + Lmax * Lmax : nullptr;
#pragma omp for schedule(dynamic, 1)
    for (int64_t k = 0; k < pairs; ++k) {
      const int64_t sh = order[static_cast<size_t>(k)], sq = sh / A, h = sh % A, L = seqs.length(sq);
      if (L == 0) continue;
      const int64_t row0 = seqs.offsets[static_cast<size_t>(sq)];
      const int64_t head = row0 * ld + h * d;
      const T *q = qkv + head, *kk = q + H, *v = q + 2 * H;
      T *dq = dqkv + head, *dk = dq + H, *dv = dq + 2 * H;
      const T* dc = dctx + row0 * H + h * d;
      const int64_t block = A * seqs.score_offsets[static_cast<size_t>(sq)] + h * L * L;
      const T* P = probs + block;
      const uint8_t* mask = p > 0 ? drop_mask + block : nullptr;
      const T* weights = P;
      if (mask) {
        apply_dropout(P, mask, keep_scale, L * L, dropped);
        weights = dropped;
      }
      // dv = weightsᵀ · dctx
      gemm<T>(true, false, L, d, L, T(1), weights, L, dc, H, T(0), dv, ld);
      // d(weights) = dctx · vᵀ, turned into dS in place below
      gemm<T>(false, true, L, L, d, T(1), dc, H, v, ld, T(0), dS, L);
      // Through dropout, then the softmax: dS = P ⊙ (dP − Σⱼ P·dP).
      for (int64_t i = 0; i < L; ++i) {
        T* g = dS + i * L;
        const T* pr = P + i * L;
        if (mask) {
          const uint8_t* mr = mask + i * L;
#pragma omp simd
          for (int64_t j = 0; j < L; ++j) g[j] = mr[j] ? g[j] * keep_scale : T(0);
        }
        T dot = 0;
#pragma omp simd reduction(+ : dot)
        for (int64_t j = 0; j < L; ++j) dot += pr[j] * g[j];
#pragma omp simd
        for (int64_t j = 0; j < L; ++j) g[j] = pr[j] * (g[j] - dot);
      }
      // scores = scale · q · kᵀ:  dq = scale · dS · k;  dk = scale · dSᵀ · q
      gemm<T>(false, false, L, d, L, scale, dS, L, kk, ld, T(0), dq, ld);
      gemm<T>(true, false, L, d, L, scale, dS, L, q, ld, T(0), dk, ld);
    }
  }
}

#define KGLM_ATTENTION_CPU(T)                                                                               \
  template void attention_forward<T>(const T*, const PackedSequences&, const AttentionShape&, float,        \
                                     const DropoutKey&, T*, T*, uint8_t*);                                  \
  template void attention_backward<T>(const T*, const T*, const T*, const uint8_t*, const PackedSequences&, \
                                      const AttentionShape&, float, T*);
KGLM_ATTENTION_CPU(float)
KGLM_ATTENTION_CPU(double)
#undef KGLM_ATTENTION_CPU

}  // namespace kglm::nn::cpu
