// Multi-head self-attention, one (batch, head) pair per loop iteration, the pairs spread over the
// OpenMP threads. q, k and v of a head are read in place from the packed qkv rows through the
// gemm leading dimension (3H), and the head's context is written in place into ctx (H).
//
// Keys past the last real key of a sequence (trailing padding) have probability exactly 0, so the
// gemms skip them: with dynamic padding that is a large share of the work. Padding elsewhere is
// handled by the lowest() scores.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "nn/cpu/kernels.hpp"

namespace kglm::nn::cpu {

namespace {

void check_key_mask(const int32_t* key_mask, const AttentionShape& s) {
  for (int64_t i = 0; i < s.batch * s.seq; ++i) {
    if (key_mask[i] != 0 && key_mask[i] != 1)
      throw Error("attention_forward: key_mask[" + std::to_string(i / s.seq) + ", " + std::to_string(i % s.seq) +
                  "] = " + std::to_string(key_mask[i]) + ", expected 0 (padding) or 1");
  }
}

// Keys [0, n) that can have a nonzero probability: up to the last real key, or all of them when
// there is none (then every score is lowest() and the softmax is uniform).
int64_t live_keys(const int32_t* real, int64_t seq) {
  int64_t n = seq;
  while (n > 0 && !real[n - 1]) --n;
  return n == 0 ? seq : n;
}

// probs · keep / (1 − p) over the first n columns of L-wide rows: the weights that multiply v.
template <class T>
void apply_dropout(const T* probs, const uint8_t* mask, T scale, int64_t rows, int64_t n, int64_t L, T* out) {
  for (int64_t i = 0; i < rows; ++i) {
    const T* p = probs + i * L;
    const uint8_t* m = mask + i * L;
    T* o = out + i * L;
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) o[j] = m[j] ? p[j] * scale : T(0);
  }
}

}  // namespace

template <class T>
void attention_forward(const T* qkv, const int32_t* key_mask, const AttentionShape& s, float p, const DropoutKey& key,
                       T* ctx, T* probs, uint8_t* drop_mask) {
  check_key_mask(key_mask, s);
  const int64_t L = s.seq, H = s.hidden, d = H / s.heads, ld = 3 * H;
  check_blas_dims("attention_forward", {L, ld});
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(d)));
  const T keep_scale = static_cast<T>(1.0 / (1.0 - static_cast<double>(p)));
  const int64_t pairs = s.batch * s.heads;
  // Pairs differ in cost (padding), so they are handed out dynamically; each is computed whole by
  // one thread, so the results do not depend on the schedule.
  // Scratch for the dropped-out probabilities, one L×L block per thread, allocated here: an
  // exception must not leave a parallel region.
  std::vector<T> scratch(p > 0 ? static_cast<size_t>(omp_get_max_threads() * L * L) : 0);
#pragma omp parallel if (pairs > 1 && L * L * d * pairs >= kParallelGrain)
  {
    T* dropped = p > 0 ? scratch.data() + omp_get_thread_num() * L * L : nullptr;
#pragma omp for schedule(dynamic, 1)
    for (int64_t bh = 0; bh < pairs; ++bh) {
      const int64_t b = bh / s.heads, h = bh % s.heads;
      const T* q = qkv + b * L * ld + h * d;
      const T* k = q + H;
      const T* v = q + 2 * H;
      const int32_t* real = key_mask + b * L;
      const int64_t n = live_keys(real, L);
      T* P = probs + bh * L * L;
      // scores[:, :n] = q · k[:n]ᵀ / √d
      gemm<T>(false, true, L, n, d, scale, q, ld, k, ld, T(0), P, L);
      for (int64_t i = 0; i < L; ++i) {
        T* row = P + i * L;
        T max = std::numeric_limits<T>::lowest();
#pragma omp simd reduction(max : max)
        for (int64_t j = 0; j < n; ++j) {
          row[j] = real[j] ? row[j] : std::numeric_limits<T>::lowest();
          max = std::max(max, row[j]);
        }
        T sum = 0;
#pragma omp simd reduction(+ : sum)
        for (int64_t j = 0; j < n; ++j) {
          row[j] = exp_of<T>(row[j] - max);
          sum += row[j];
        }
        const T inv = T(1) / sum;
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) row[j] *= inv;
        std::fill(row + n, row + L, T(0));
      }
      const T* weights = P;
      if (p > 0) {
        // The whole mask is drawn, padded keys included: it is an output, defined element by element.
        uint8_t* mask = drop_mask + bh * L * L;
        dropout_mask(key, p, static_cast<uint64_t>(bh * L * L), L * L, mask);
        apply_dropout(P, mask, keep_scale, L, n, L, dropped);
        weights = dropped;
      }
      // ctx[b, :, head h] = weights[:, :n] · v[:n]
      gemm<T>(false, false, L, d, n, T(1), weights, L, v, ld, T(0), ctx + b * L * H + h * d, H);
    }
  }
}

template <class T>
void attention_backward(const T* dctx, const T* qkv, const T* probs, const uint8_t* drop_mask, const AttentionShape& s,
                        float p, T* dqkv) {
  const int64_t L = s.seq, H = s.hidden, d = H / s.heads, ld = 3 * H;
  check_blas_dims("attention_backward", {L, ld});
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(d)));
  const T keep_scale = static_cast<T>(1.0 / (1.0 - static_cast<double>(p)));
  const int64_t pairs = s.batch * s.heads;
  // Per thread: the dropped-out probabilities and the gradient of the scores, L×L each.
  const int64_t per_thread = (p > 0 ? 2 : 1) * L * L;
  std::vector<T> scratch(static_cast<size_t>(omp_get_max_threads() * per_thread));
#pragma omp parallel if (pairs > 1 && L * L * d * pairs >= kParallelGrain)
  {
    T* dS = scratch.data() + omp_get_thread_num() * per_thread;
    T* dropped = p > 0 ? dS + L * L : nullptr;
#pragma omp for schedule(dynamic, 1)
    for (int64_t bh = 0; bh < pairs; ++bh) {
      const int64_t b = bh / s.heads, h = bh % s.heads;
      const int64_t head = b * L * ld + h * d;
      const T *q = qkv + head, *k = q + H, *v = q + 2 * H;
      T *dq = dqkv + head, *dk = dq + H, *dv = dq + 2 * H;
      const T* dc = dctx + b * L * H + h * d;
      const T* P = probs + bh * L * L;
      const uint8_t* mask = p > 0 ? drop_mask + bh * L * L : nullptr;
      // The live keys, read off the saved probabilities: trailing columns that are 0 in every row
      // (the forward pass zeroed them; a real key's probability is > 0 unless it underflowed, and
      // then its gradient P ⊙ (…) is 0 anyway).
      int64_t n = L;
      for (; n > 0; --n) {
        bool zero = true;
        for (int64_t i = 0; i < L && zero; ++i) zero = P[i * L + n - 1] == T(0);
        if (!zero) break;
      }
      const T* weights = P;
      if (mask) {
        apply_dropout(P, mask, keep_scale, L, n, L, dropped);
        weights = dropped;
      }
      // dv[:n] = weights[:, :n]ᵀ · dctx;  dv[n:] = 0
      gemm<T>(true, false, n, d, L, T(1), weights, L, dc, H, T(0), dv, ld);
      for (int64_t j = n; j < L; ++j) std::fill(dv + j * ld, dv + j * ld + d, T(0));
      // d(weights)[:, :n] = dctx · v[:n]ᵀ, turned into dS in place below
      gemm<T>(false, true, L, n, d, T(1), dc, H, v, ld, T(0), dS, L);
      // Through dropout, then the softmax: dS = P ⊙ (dP − Σⱼ P·dP). A padded key has P = 0, so
      // no gradient, unless its sequence has no real key at all (P uniform): then, like Hugging
      // Face's additive mask, the gradient passes as if the padding were added to the score.
      for (int64_t i = 0; i < L; ++i) {
        T* g = dS + i * L;
        const T* pr = P + i * L;
        if (mask) {
          const uint8_t* mr = mask + i * L;
#pragma omp simd
          for (int64_t j = 0; j < n; ++j) g[j] = mr[j] ? g[j] * keep_scale : T(0);
        }
        T dot = 0;
#pragma omp simd reduction(+ : dot)
        for (int64_t j = 0; j < n; ++j) dot += pr[j] * g[j];
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) g[j] = pr[j] * (g[j] - dot);
      }
      // scores = scale · q · kᵀ:  dq = scale · dS[:, :n] · k[:n];  dk[:n] = scale · dS[:, :n]ᵀ · q
      gemm<T>(false, false, L, d, n, scale, dS, L, k, ld, T(0), dq, ld);
      gemm<T>(true, false, n, d, L, scale, dS, L, q, ld, T(0), dk, ld);
      for (int64_t j = n; j < L; ++j) std::fill(dk + j * ld, dk + j * ld + d, T(0));
    }
  }
}

#define KGLM_ATTENTION_CPU(T)                                                                                       \
  template void attention_forward<T>(const T*, const int32_t*, const AttentionShape&, float, const DropoutKey&, T*, \
                                     T*, uint8_t*);                                                                 \
  template void attention_backward<T>(const T*, const T*, const T*, const uint8_t*, const AttentionShape&, float, T*);
KGLM_ATTENTION_CPU(float)
KGLM_ATTENTION_CPU(double)
#undef KGLM_ATTENTION_CPU

}  // namespace kglm::nn::cpu
