// Multi-head scaled dot-product self-attention over packed q|k|v projections of a packed batch (no
// padding: each sequence's tokens are consecutive rows, and each attends only to its own tokens),
// with dropout on the attention probabilities (as BERT/RoBERTa in Hugging Face, whose padded keys
// have probability 0: the same numbers for the real tokens).
#pragma once

#include <cstdint>
#include <vector>

#include "nn/ops/dropout.hpp"

namespace kglm::nn {

// The sequences of a packed batch: rows [offsets[s], offsets[s + 1]) of every [tokens, ·] tensor
// are sequence s's tokens (FlashAttention's cu_seqlens). Sequence s's attention probabilities are
// the [heads, L, L] block that starts at element heads · score_offsets[s] (L its length).
struct PackedSequences {
  std::vector<int32_t> offsets{0};        // sequences + 1 entries
  std::vector<int64_t> score_offsets{0};  // sequences + 1 entries: Σ L² of the sequences before
  int64_t max_len = 0;
  uint64_t first_number = 0;  // the global batch's number of sequence 0 (dropout; data-parallel ranks)

  // Throws on a negative length, or one past kMaxPackedLength.
  static PackedSequences from_lengths(const std::vector<int64_t>& lengths, uint64_t first_number = 0);
  int64_t sequences() const { return static_cast<int64_t>(offsets.size()) - 1; }
  int64_t tokens() const { return offsets.back(); }
  int64_t length(int64_t s) const { return offsets[static_cast<size_t>(s) + 1] - offsets[static_cast<size_t>(s)]; }
  int64_t score_elements(int64_t heads) const { return heads * score_offsets.back(); }
  // token_number() of every row: I64 [tokens] on the host.
  std::vector<int64_t> token_numbers() const;
};

struct AttentionShape {
  int64_t heads = 0, hidden = 0;  // head size = hidden / heads
};

// The dropout number of probability (query i, key j) of head h of the sequence numbered g:
// ((g · heads + h) · 2¹⁶ + i) · 2¹⁶ + j, independent of the batch's packing.
inline uint64_t attention_dropout_number(uint64_t g, int64_t heads, int64_t h, int64_t i) {
  return ((g * static_cast<uint64_t>(heads) + static_cast<uint64_t>(h)) * kMaxPackedLength + static_cast<uint64_t>(i)) *
         kMaxPackedLength;
}

// qkv [N, 3H]: q = qkv[:, 0:H], k = qkv[:, H:2H], v = qkv[:, 2H:3H]; head h uses columns h·d …
// (h+1)·d of each. scores = q·kᵀ / √d within each sequence. probs [score_elements(heads)] saves the
// softmax output (before dropout); drop_mask U8 [same] the dropout mask (undefined when p == 0;
// key.first must be 0, numbered by attention_dropout_number). ctx [N, H] = dropout(probs) · v,
// heads concatenated.
void attention_forward(const Tensor& qkv, const PackedSequences& seqs, const AttentionShape& shape, float dropout_p,
                       const DropoutKey& key, Tensor& ctx, Tensor& probs, Tensor& drop_mask);

// dctx [N, H] → dqkv [N, 3H] (overwritten).
void attention_backward(const Tensor& dctx, const Tensor& qkv, const Tensor& probs, const Tensor& drop_mask,
                        const PackedSequences& seqs, const AttentionShape& shape, float dropout_p, Tensor& dqkv);

}  // namespace kglm::nn
