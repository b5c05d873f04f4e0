// Multi-head scaled dot-product self-attention over packed q|k|v projections, with a key padding
// mask and dropout on the attention probabilities (as BERT/RoBERTa in Hugging Face).
#pragma once

#include "nn/ops/dropout.hpp"

namespace kglm::nn {

struct AttentionShape {
  int64_t batch = 0, seq = 0, heads = 0, hidden = 0;  // head size = hidden / heads
};

// qkv [B, T, 3H]: q = qkv[..., 0:H], k = qkv[..., H:2H], v = qkv[..., 2H:3H]; head h uses columns
// h·d … (h+1)·d of each. key_mask I32 [B, T]: 1 = real token, 0 = padding; a padded key gets score
// lowest() before the softmax (so probability exactly 0). scores = q·kᵀ / √d.
// probs [B, A, T, T] saves the softmax output (before dropout); drop_mask U8 [B, A, T, T] the
// dropout mask (undefined when p == 0). ctx [B, T, H] = dropout(probs) · v, heads concatenated.
void attention_forward(const Tensor& qkv, const Tensor& key_mask, const AttentionShape& shape, float dropout_p,
                       const DropoutKey& key, Tensor& ctx, Tensor& probs, Tensor& drop_mask);

// dctx [B, T, H] → dqkv [B, T, 3H] (overwritten).
void attention_backward(const Tensor& dctx, const Tensor& qkv, const Tensor& probs, const Tensor& drop_mask,
                        const AttentionShape& shape, float dropout_p, Tensor& dqkv);

}  // namespace kglm::nn
