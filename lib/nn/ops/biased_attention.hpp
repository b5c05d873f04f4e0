// Multi-head attention as T5 computes it, over packed batches: separate q, k and v (self-attention,
// or cross-attention whose keys come from other sequences: the decoder's queries of target s attend
// to the encoder's rows of source s), an additive bias per (head, query, key) shared by every
// sequence (T5's relative-position bias), an optional causal mask, and no 1/√d scaling unless asked.
// No padded score exists: sequence s's scores are its own [heads, Lq, Lk] block. A decoder's
// key-value cache is read in place: sequence s's cached keys start at row s · key_stride.
#pragma once

#include <vector>

#include "nn/ops/attention.hpp"
#include "nn/ops/dropout.hpp"

namespace kglm::nn {

struct BiasedAttentionShape {
  int64_t heads = 0, head_size = 0;
  bool causal = false;       // query i of a sequence, at position query_offset + i, sees keys 0 … that position
  int64_t query_offset = 0;  // (a decode step's query comes after the cached keys)
  int64_t key_stride = 0;    // > 0: sequence s's keys are rows s·key_stride … of k and v (a decode cache)
  double scale = 1.0;        // scores = scale · q·kᵀ + bias (T5: 1)
  int64_t inner() const { return heads * head_size; }
};

// Sequence s of `queries` attends to sequence s of `keys` (the same object for self-attention; both
// must outlive this). Sequence s's scores (and probabilities, dropout mask, score gradient) are the
// [heads, Lq, Lk] block at element heads · score_offsets[s].
struct AttentionPairs {
  const PackedSequences* queries;
  const PackedSequences* keys;
  std::vector<int64_t> score_offsets{0};  // sequences + 1 entries: Σ Lq·Lk of the sequences before

  // Throws when the two do not hold the same number of sequences.
  AttentionPairs(const PackedSequences& queries, const PackedSequences& keys);
  int64_t sequences() const { return queries->sequences(); }
  int64_t score_elements(int64_t heads) const { return heads * score_offsets.back(); }
  // Sequence s's first key row of k and v.
  int64_t key_row(int64_t s, const BiasedAttentionShape& shape) const {
    return shape.key_stride > 0 ? s * shape.key_stride : keys->offsets[static_cast<size_t>(s)];
  }
};

// q [Nq, A·d] (the queries' rows), k and v [Nk, A·d] (the keys' rows: keys->tokens() of them, or
// at least sequences · key_stride from a cache), bias [A, BQ, BK] or undefined (every sequence reads
// bias[h, i, j], i < Lq ≤ BQ, j < Lk ≤ BK). probs [score_elements(A)] saves the softmax (before
// dropout); keys hidden by the causal mask have probability exactly 0. drop_mask U8 [same]
// (undefined when p == 0; key.first must be 0): probability (i, j) of head h of the query sequence
// numbered g (queries->first_number + s) is number attention_dropout_number(g, A, h, query_offset +
// i) + j, independent of the batch's packing. ctx [Nq, A·d] = dropout(probs) · v, heads concatenated.
void biased_attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& bias,
                              const AttentionPairs& pairs, const BiasedAttentionShape& shape, float dropout_p,
                              const DropoutKey& key, Tensor& ctx, Tensor& probs, Tensor& drop_mask);

// dctx [Nq, A·d] → dq [Nq, A·d], dk and dv [Nk, A·d] (overwritten; not from a cache), and dscores
// [score_elements(A)], the gradient of the biased scores (skipped when undefined).
void biased_attention_backward(const Tensor& dctx, const Tensor& q, const Tensor& k, const Tensor& v,
                               const Tensor& probs, const Tensor& drop_mask, const AttentionPairs& pairs,
                               const BiasedAttentionShape& shape, float dropout_p, Tensor& dq, Tensor& dk, Tensor& dv,
                               Tensor& dscores);

// bias [A, Tq, Tk][h, i, j] = table [buckets, A][buckets_of[i, j], h], buckets_of I32 [Tq, Tk]
// (each in [0, buckets), else kglm::Error).
void relative_bias_forward(const Tensor& buckets_of, const Tensor& table, Tensor& bias);
// dtable[buckets_of[i, j], h] += Σ_s dscores_s[h, i, j] over the pairs' sequences (dscores as
// biased_attention_backward writes it; buckets_of [BQ, BK] covers every sequence's block).
void relative_bias_backward(const Tensor& dscores, const AttentionPairs& pairs, const Tensor& buckets_of,
                            Tensor& dtable);

}  // namespace kglm::nn
