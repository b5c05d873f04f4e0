// Multi-head attention as T5 computes it: separate q, k and v (self-attention, or cross-attention
// whose keys come from another sequence), an additive bias per (head, query, key) shared by the
// batch (T5's relative-position bias), an optional causal mask, and no 1/√d scaling unless asked.
// A decoder's key-value cache is read in place: k and v may hold more rows per sequence than the
// keys in use.
#pragma once

#include "nn/ops/dropout.hpp"

namespace kglm::nn {

struct BiasedAttentionShape {
  int64_t batch = 0, queries = 0, keys = 0, heads = 0, head_size = 0;
  int64_t key_rows = 0;      // rows per sequence in k and v (≥ keys: a cache's capacity); 0 = keys
  bool causal = false;       // query i, at position query_offset + i, sees keys 0 … that position
  int64_t query_offset = 0;  // (a decode step's queries come after the cached keys)
  double scale = 1.0;        // scores = scale · q·kᵀ + bias (T5: 1)
  int64_t inner() const { return heads * head_size; }
  int64_t rows() const { return key_rows > 0 ? key_rows : keys; }
};

// q [B, Tq, A·d], k and v [B, R, A·d] (R = rows(); the first `keys` rows of each sequence are
// used), key_mask I32 [B, keys] (1 = real, 0 = padding: probability exactly 0) or undefined (all
// real), bias [A, Tq, keys] or undefined. probs [B, A, Tq, keys] saves the softmax (before
// dropout), drop_mask U8 [B, A, Tq, keys] the dropout mask (undefined when p == 0).
// ctx [B, Tq, A·d] = dropout(probs) · v, heads concatenated.
void biased_attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_mask,
                              const Tensor& bias, const BiasedAttentionShape& shape, float dropout_p,
                              const DropoutKey& key, Tensor& ctx, Tensor& probs, Tensor& drop_mask);

// dctx [B, Tq, A·d] → dq [B, Tq, A·d], dk and dv [B, keys, A·d] (overwritten; R must be keys),
// and dscores [B, A, Tq, keys], the gradient of the biased scores (= of the bias per batch row;
// skipped when undefined).
void biased_attention_backward(const Tensor& dctx, const Tensor& q, const Tensor& k, const Tensor& v,
                               const Tensor& probs, const Tensor& drop_mask, const BiasedAttentionShape& shape,
                               float dropout_p, Tensor& dq, Tensor& dk, Tensor& dv, Tensor& dscores);

// bias [A, Tq, Tk][h, i, j] = table [buckets, A][buckets_of[i, j], h], buckets_of I32 [Tq, Tk]
// (each in [0, buckets), else kglm::Error).
void relative_bias_forward(const Tensor& buckets_of, const Tensor& table, Tensor& bias);
// dtable[buckets_of[i, j], h] += Σ_b dscores[b, h, i, j], dscores [B, A, Tq, Tk].
void relative_bias_backward(const Tensor& dscores, const Tensor& buckets_of, Tensor& dtable);

}  // namespace kglm::nn
