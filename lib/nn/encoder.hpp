// The BERT / XLM-RoBERTa encoder: embeddings (word + position + token type, LayerNorm, dropout)
// and N post-LN transformer layers, with an explicit forward that keeps what the backward needs
// and a hand-written backward. Padding-free: a batch is its sequences' real tokens one after the
// other, N rows of hidden size H, and attention runs within each sequence (nn/ops/attention.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "nn/model_config.hpp"
#include "nn/ops/attention.hpp"
#include "nn/ops/dropout.hpp"
#include "nn/parameters.hpp"
#include "nn/workspace.hpp"

namespace kglm::nn {

struct EncoderBatch {
  PackedSequences sequences;  // each sequence's rows (dropout numbers them from DropoutContext::first_row)
  Tensor input_ids;           // I32 [N]: every sequence's tokens, one after the other
  Tensor token_type_ids;      // I32 [N], or undefined for all zeros
  Tensor position_ids;        // I32 [N], or undefined: then each sequence is numbered from its start
                              // (BERT 0, 1, …; RoBERTa pad_id + 1, …, as fairseq's make_positions)
  int64_t tokens() const { return sequences.tokens(); }
};

// A packed batch of token sequences (ids and, when given, BERT segments: one vector per
// sequence). Throws when a sequence is longer than the model's positions allow.
EncoderBatch pack_sequences(std::span<const std::vector<int32_t>> ids, std::span<const std::vector<int32_t>> types,
                            const ModelConfig& config);

// A padded batch (input_ids and attention_mask I32 [batch · seq], token_type_ids the same or
// undefined) packed: the tokens whose mask is 1, in order; positions as the padded batch numbers
// them (position_ids below). packed_row[b · seq + t] receives the row of token (b, t), or -1. For
// callers that hold padded arrays (parity fixtures from PyTorch, the references' drivers).
EncoderBatch pack_padded(const Tensor& input_ids, const Tensor& attention_mask, const Tensor& token_type_ids,
                         int64_t batch, int64_t seq, const ModelConfig& config,
                         std::vector<int32_t>* packed_row = nullptr);

// The position ids of a padded host batch of input ids (I32 [batch · seq]): BERT counts 0, 1, …;
// RoBERTa numbers the non-padding tokens from pad_id + 1 and gives padding pad_id (fairseq's
// make_positions), independent of the attention mask. Throws when a sequence is longer than the
// model's positions allow.
Tensor position_ids(const Tensor& input_ids, int64_t batch, int64_t seq, const ModelConfig& config);

// Dropout randomness of one forward pass: every site draws from (seed, stream · 256 + site). The
// encoder numbers its rows by token (token_number(first_number + s, t), nn/ops/dropout.hpp), so a
// token draws the same whatever the batch's packing. Per-sequence tensors (the heads' [B, W])
// number their elements from first_row · W: a data-parallel rank whose batch is sequences
// [first_row, first_row + rows) of the global batch draws what one process holding it all draws.
struct DropoutContext {
  bool training = false;
  uint64_t seed = 0;
  uint64_t stream = 0;
  uint64_t first_row = 0;
  uint64_t rows = 0;  // the batch's rows (only read when first_row > 0)
  // The key of a site whose tensor has `elements` elements, rows() equal blocks of them.
  DropoutKey key(uint64_t site, int64_t elements) const;
  // The key of a row-numbered site (first element 0).
  DropoutKey site_key(uint64_t site) const { return {seed, stream * 256 + site, 0}; }
};

class Encoder {
 public:
  // Declares the encoder's parameters (HF names under config.prefix()) in `params`.
  Encoder(const ModelConfig& config, ParameterStore& params);

  // Runs the encoder; returns the last hidden states [N, H], valid until the next forward.
  const Tensor& forward(const EncoderBatch& batch, const DropoutContext& dropout);
  // dhidden [N, H]: gradient of the loss w.r.t. the last forward's output (clobbered).
  // Parameter gradients are accumulated.
  void backward(Tensor& dhidden);

  // Called by backward() with an offset into the store's flat gradients each time every gradient
  // at or above it has its final value for this pass: after each layer, top down, then 0. Gradient
  // buckets above it can then be reduced across ranks while the backward pass goes on.
  void set_gradients_final_hook(std::function<void(int64_t offset)> hook) { gradients_final_ = std::move(hook); }

  // Freezes every layer below the last `trained_layers` and, unless `train_embeddings`, the
  // embeddings (word, position, type, their LayerNorm; the word matrix is also the tied MLM
  // decoder). The backward pass then skips frozen weights' gradients and stops at the lowest
  // trained part. Call after the store is allocated and before the optimizer is made.
  void freeze_below(size_t trained_layers, bool train_embeddings);

  // 0 = the embeddings' output, l = the output of layer l (for parity tests and probing).
  const Tensor& hidden_state(size_t i) const;
  const ModelConfig& config() const { return config_; }
  size_t word_embeddings() const { return word_; }

 private:
  struct Layer {
    size_t qkv_w, qkv_b, out_w, out_b, ln1_g, ln1_b, up_w, up_b, down_w, down_b, ln2_g, ln2_b;
    std::array<size_t, 12> parameters() const {
      return {qkv_w, qkv_b, out_w, out_b, ln1_g, ln1_b, up_w, up_b, down_w, down_b, ln2_g, ln2_b};
    }
    // Saved activations.
    Tensor qkv, ctx, probs, probs_mask, sum1, attn_mask, ln1_mean, ln1_rstd, h1, ff_pre, ff_act, ff_mask, sum2,
        ln2_mean, ln2_rstd, out;
  };
  void ensure_buffers(int64_t tokens, int64_t scores);
  void embeddings_forward(const EncoderBatch& batch, const DropoutContext& dropout);
  void layer_forward(size_t l, const Tensor& x, const DropoutContext& dropout);
  // Row-numbered hidden dropout of x in place (numbers_), its mask into `mask`.
  void drop(Tensor& x, const DropoutContext& dropout, uint64_t site, Tensor& mask);
  // dx undefined: the input's gradient is not needed (nothing below is trained).
  void layer_backward(size_t l, const Tensor& x, Tensor& dout, Tensor& dx);
  Tensor& param(size_t i) { return params_[i].compute; }  // the weights as the ops read them
  Tensor& grad(size_t i) { return params_[i].grad; }

  ModelConfig config_;
  ParameterStore& params_;
  size_t word_, position_, token_type_, emb_ln_g_, emb_ln_b_;
  std::vector<Layer> layers_;
  size_t first_trained_layer_ = 0;
  std::function<void(int64_t)> gradients_final_;
  bool embeddings_trained_ = true;

  int64_t tokens_ = -1, scores_ = -1;  // the buffers' rows and attention probabilities per layer
  PackedSequences seqs_;
  float hidden_p_ = 0, attention_p_ = 0;  // of the last forward (0 when not training)
  Tensor ids_, positions_, types_, numbers_;
  Tensor emb_sum_, emb_mean_, emb_rstd_, emb_out_, emb_mask_;
  Workspace workspace_;  // storage behind the buffers below
  // Backward scratch.
  Tensor d_sum_, d_h1_, d_ff_, d_qkv_, d_ctx_, d_x_;
};

}  // namespace kglm::nn
