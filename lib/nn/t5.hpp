// The T5 encoder-decoder (T5 v1.0 / v1.1 / mT5, Hugging Face's T5ForConditionalGeneration):
// shared token embeddings, pre-norm blocks with RMS norms and residual additions, relative-position
// attention bias (computed by each stack's first block and shared by all its blocks), decoder
// blocks with causal self-attention and cross-attention over the encoder output, a ReLU or gated
// tanh-GELU feed-forward, and an LM head tied to the embeddings (decoder output scaled by
// d_model^-½) or separate. An explicit forward keeps what the hand-written backward needs;
// incremental decoding keeps a key-value cache per decoder block.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "nn/encoder.hpp"
#include "nn/ops/attention.hpp"
#include "nn/ops/cross_entropy.hpp"
#include "nn/parameters.hpp"
#include "nn/t5_config.hpp"

namespace kglm::nn {

// T5's bucket of a relative position (key position − query position): exact buckets for small
// distances, logarithmic ones up to max_distance, the last bucket beyond; bidirectional (the
// encoder) gives half the buckets to keys after the query. Computed in float as Hugging Face does,
// so that a checkpoint sees the buckets it was trained with.
int32_t relative_position_bucket(int64_t relative, bool bidirectional, int64_t buckets, int64_t max_distance);

// A packed batch (nn/ops/attention.hpp): example s is source sequence s and target sequence s; no
// padding anywhere. The decoder's self-attention is causal within each target, its cross-attention
// reads its own source's encoder rows.
struct Seq2SeqBatch {
  PackedSequences sources, targets;  // the same number of sequences
  Tensor input_ids;                  // I32 [sources.tokens()]
  Tensor decoder_input_ids;          // I32 [targets.tokens()]: from shift_right(labels)
  Tensor labels;                     // I32 [targets.tokens()]: target tokens (kIgnoreIndex: not scored)
};

// The decoder's teacher-forced input (host, I32 [targets.tokens()]): per target,
// decoder_start_token_id, then its labels shifted right by one, ignored labels replaced by the pad
// id (Hugging Face's _shift_right).
Tensor shift_right(const Tensor& labels, const PackedSequences& targets, const T5Config& config);

class T5Model {
 public:
  // Declares the parameters (Hugging Face names) in `params`.
  T5Model(const T5Config& config, ParameterStore& params);
  ~T5Model();
  T5Model(const T5Model&) = delete;
  T5Model& operator=(const T5Model&) = delete;

  // Sets each parameter's initial standard deviation as Hugging Face's T5 does (embeddings and
  // head factor·1, q factor·(d_model·d_kv)^-½, k and v factor·d_model^-½, o factor·(heads·d_kv)^-½,
  // wi factor·d_model^-½, wo factor·d_ff^-½, norms 1), then fills the store from the seed.
  void initialize(uint64_t seed);

  // Teacher-forced pass over a batch (its sequences numbered from dropout.first_row when
  // training: a token's dropout draws depend on that number and its position alone). Returns the cross-entropy totals
  // over the labelled positions. With grad_scale > 0 the logits' gradient, grad_scale · (softmax − one-hot), replaces
  // the logits for backward(); with 0 (evaluation) logits() holds them.
  CrossEntropyResult forward(const Seq2SeqBatch& batch, const DropoutContext& dropout, double grad_scale);
  // Accumulates every trainable parameter's gradient of the last forward(grad_scale > 0).
  void backward();
  const Tensor& logits() const { return logits_; }  // [targets.tokens(), V]
  // The stacks' outputs after their final norm and dropout: [sources.tokens(), d_model],
  // [targets.tokens(), d_model].
  const Tensor& encoder_output() const;
  const Tensor& decoder_output() const;

  // Incremental decoding: encodes a packed batch of sources (input_ids I32 [sources.tokens()], no
  // dropout) and prepares a key-value cache for up to max_steps decoder positions (room for
  // first_capacity at first, doubled when full; reorder_cache moves each sequence's steps so far and
  // leaves room for one more). Then
  // decode_step(tokens I32 [B]) feeds one token per sequence (first decoder_start_token_id) and returns the next-token
  // logits [B, V], valid until the next call; reorder_cache(rows) makes sequence i continue sequence rows[i], the batch
  // becoming rows.size(): beam search widens a batch of sources to their beams and reorders them, and finished
  // sequences leave the batch so that no step is spent on them.
  void start_decoding(const Tensor& input_ids, const PackedSequences& sources, int64_t max_steps,
                      int64_t first_capacity = 16);
  const Tensor& decode_step(const Tensor& tokens);
  void reorder_cache(const std::vector<int32_t>& rows);
  int64_t decoded_steps() const;
  int64_t decoding_batch() const;  // the sequences decoded now

  const T5Config& config() const { return config_; }
  size_t shared_embeddings() const { return shared_; }

 private:
  class Stack;
  struct DecodeState;
  T5Config config_;
  ParameterStore& params_;
  size_t shared_ = 0, lm_head_ = 0;  // lm_head_ == shared_ when tied
  std::unique_ptr<Stack> encoder_, decoder_;
  std::unique_ptr<DecodeState> decode_;
  Workspace workspace_;
  Tensor labels_, head_in_, logits_, d_decoder_, d_encoder_;
};

}  // namespace kglm::nn
