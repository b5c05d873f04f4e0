// T5's attention, one (batch, head) pair per loop iteration, the pairs spread over the OpenMP
// threads; each pair is computed whole by one thread, so results do not depend on the schedule.
// q, k and v of a head are read in place through the gemm leading dimension (A·d), and k and v
// may be a decode cache with more rows per sequence than keys in use.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "nn/cpu/kernels.hpp"

namespace kglm::nn::cpu {

namespace {

// Whether query i may see key j (padding and the causal mask).
bool visible(const BiasedAttentionShape& s, const int32_t* real, int64_t i, int64_t j) {
  return (!real || real[j]) && (!s.causal || j <= s.query_offset + i);
}

}  // namespace

template <class T>
void biased_attention_forward(const T* q, const T* k, const T* v, const int32_t* key_mask, const T* bias,
                              const BiasedAttentionShape& s, float p, const DropoutKey& key, T* ctx, T* probs,
                              uint8_t* drop_mask) {
  const int64_t Tq = s.queries, Tk = s.keys, R = s.rows(), I = s.inner(), d = s.head_size;
  if (key_mask)
    for (int64_t i = 0; i < s.batch * Tk; ++i)
      if (key_mask[i] != 0 && key_mask[i] != 1)
        throw Error("biased_attention_forward: key_mask[" + std::to_string(i / Tk) + ", " + std::to_string(i % Tk) +
                    "] = " + std::to_string(key_mask[i]) + ", expected 0 (padding) or 1");
  check_blas_dims("biased_attention_forward", {Tq, Tk, I});
  const T scale = static_cast<T>(s.scale);
  const T keep_scale = static_cast<T>(1.0 / (1.0 - static_cast<double>(p)));
  const int64_t pairs = s.batch * s.heads, block = Tq * Tk;
  std::vector<T> scratch(p > 0 ? static_cast<size_t>(omp_get_max_threads() * block) : 0);
#pragma omp parallel if (pairs > 1 && block * d * pairs >= kParallelGrain)
  {
    T* dropped = p > 0 ? scratch.data() + omp_get_thread_num() * block : nullptr;
#pragma omp for schedule(dynamic, 1)
    for (int64_t bh = 0; bh < pairs; ++bh) {
      const int64_t b = bh / s.heads, h = bh % s.heads;
      const T* qh = q + b * Tq * I + h * d;
      const T* kh = k + b * R * I + h * d;
      const T* vh = v + b * R * I + h * d;
      const int32_t* real = key_mask ? key_mask + b * Tk : nullptr;
      const T* bh_bias = bias ? bias + h * block : nullptr;
      T* P = probs + bh * block;
      gemm<T>(false, true, Tq, Tk, d, scale, qh, I, kh, I, T(0), P, Tk);
      for (int64_t i = 0; i < Tq; ++i) {
        T* row = P + i * Tk;
        const T* brow = bh_bias ? bh_bias + i * Tk : nullptr;
        T max = std::numeric_limits<T>::lowest();
        bool any = false;
        for (int64_t j = 0; j < Tk; ++j) {
          if (visible(s, real, i, j)) {
            row[j] += brow ? brow[j] : T(0);
            max = std::max(max, row[j]);
            any = true;
          } else {
            row[j] = std::numeric_limits<T>::lowest();
          }
        }
        if (!any) max = 0;  // nothing visible: a uniform row (lowest() − 0 underflows alike)
        T sum = 0;
        for (int64_t j = 0; j < Tk; ++j) {
          row[j] = any ? exp_of<T>(row[j] - max) : T(1);
          sum += row[j];
        }
        const T inv = T(1) / sum;
#pragma omp simd
        for (int64_t j = 0; j < Tk; ++j) row[j] *= inv;
      }
      const T* weights = P;
      if (p > 0) {
        uint8_t* mask = drop_mask + bh * block;
        dropout_mask(key, p, static_cast<uint64_t>(bh * block), block, mask);
        for (int64_t e = 0; e < block; ++e) dropped[e] = mask[e] ? P[e] * keep_scale : T(0);
        weights = dropped;
      }
      gemm<T>(false, false, Tq, d, Tk, T(1), weights, Tk, vh, I, T(0), ctx + b * Tq * I + h * d, I);
    }
  }
}

template <class T>
void biased_attention_backward(const T* dctx, const T* q, const T* k, const T* v, const T* probs,
                               const uint8_t* drop_mask, const BiasedAttentionShape& s, float p, T* dq, T* dk, T* dv,
                               T* dscores) {
  const int64_t Tq = s.queries, Tk = s.keys, I = s.inner(), d = s.head_size;
  check_blas_dims("biased_attention_backward", {Tq, Tk, I});
  const T scale = static_cast<T>(s.scale);
  const T keep_scale = static_cast<T>(1.0 / (1.0 - static_cast<double>(p)));
  const int64_t pairs = s.batch * s.heads, block = Tq * Tk;
  // Per thread: the score gradient, and the dropped-out probabilities.
  const int64_t per_thread = (p > 0 ? 2 : 1) * block;
  std::vector<T> scratch(static_cast<size_t>(omp_get_max_threads() * per_thread));
#pragma omp parallel if (pairs > 1 && block * d * pairs >= kParallelGrain)
  {
    T* dS = scratch.data() + omp_get_thread_num() * per_thread;
    T* dropped = p > 0 ? dS + block : nullptr;
#pragma omp for schedule(dynamic, 1)
    for (int64_t bh = 0; bh < pairs; ++bh) {
      const int64_t b = bh / s.heads, h = bh % s.heads;
      const int64_t qoff = b * Tq * I + h * d, koff = b * Tk * I + h * d;
      const T* P = probs + bh * block;
      const uint8_t* mask = p > 0 ? drop_mask + bh * block : nullptr;
      const T* weights = P;
      if (mask) {
        for (int64_t e = 0; e < block; ++e) dropped[e] = mask[e] ? P[e] * keep_scale : T(0);
        weights = dropped;
      }
      // dv = weightsᵀ · dctx; d(weights) = dctx · vᵀ
      gemm<T>(true, false, Tk, d, Tq, T(1), weights, Tk, dctx + qoff, I, T(0), dv + koff, I);
      gemm<T>(false, true, Tq, Tk, d, T(1), dctx + qoff, I, v + koff, I, T(0), dS, Tk);
      // Through dropout and the softmax: dS = P ⊙ (dP − Σⱼ P·dP); masked keys have P = 0.
      for (int64_t i = 0; i < Tq; ++i) {
        T* g = dS + i * Tk;
        const T* pr = P + i * Tk;
        if (mask) {
          const uint8_t* mr = mask + i * Tk;
          for (int64_t j = 0; j < Tk; ++j) g[j] = mr[j] ? g[j] * keep_scale : T(0);
        }
        T dot = 0;
        for (int64_t j = 0; j < Tk; ++j) dot += pr[j] * g[j];
        for (int64_t j = 0; j < Tk; ++j) g[j] = pr[j] * (g[j] - dot);
      }
      if (dscores) std::copy(dS, dS + block, dscores + bh * block);
      // scores = scale · q·kᵀ + bias: dq = scale · dS · k, dk = scale · dSᵀ · q
      gemm<T>(false, false, Tq, d, Tk, scale, dS, Tk, k + koff, I, T(0), dq + qoff, I);
      gemm<T>(true, false, Tk, d, Tq, scale, dS, Tk, q + qoff, I, T(0), dk + koff, I);
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
void relative_bias_backward(const T* dscores, const int32_t* buckets_of, int64_t batch, int64_t heads, int64_t tq,
                            int64_t tk, T* dtable) {
  // Column h of the table is written by head h alone, in a fixed order: deterministic.
#pragma omp parallel for schedule(static) if (heads > 1 && batch * heads * tq * tk >= kParallelGrain)
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t b = 0; b < batch; ++b) {
      const T* g = dscores + (b * heads + h) * tq * tk;
      for (int64_t e = 0; e < tq * tk; ++e) dtable[buckets_of[e] * heads + h] += g[e];
    }
}

#define KGLM_BIASED_ATTENTION_CPU(T)                                                                                  \
  template void biased_attention_forward<T>(const T*, const T*, const T*, const int32_t*, const T*,                   \
                                            const BiasedAttentionShape&, float, const DropoutKey&, T*, T*, uint8_t*); \
  template void biased_attention_backward<T>(const T*, const T*, const T*, const T*, const T*, const uint8_t*,        \
                                             const BiasedAttentionShape&, float, T*, T*, T*, T*);                     \
  template void relative_bias_forward<T>(const int32_t*, const T*, int64_t, int64_t, int64_t, int64_t, T*);           \
  template void relative_bias_backward<T>(const T*, const int32_t*, int64_t, int64_t, int64_t, int64_t, T*);
KGLM_BIASED_ATTENTION_CPU(float)
KGLM_BIASED_ATTENTION_CPU(double)
#undef KGLM_BIASED_ATTENTION_CPU

}  // namespace kglm::nn::cpu
