// Task heads on top of the encoder's hidden states [N, H]:
// - MlmHead: dense + GELU + LayerNorm + decoder tied to the word embeddings + bias, evaluated only
//   at the masked rows (the vocabulary projection dominates the cost of XLM-R's 250k vocabulary);
// - SequenceClassificationHead: on each sequence's first token (XLM-R: dense, tanh, out_proj;
//   BERT: pooler dense + tanh, classifier);
// - TokenClassificationHead: a linear classifier on every row.
// Each forward computes the loss sum (and, when training, the logits' gradient scaled by
// grad_scale); backward() then adds the hidden states' gradient into dhidden.
#pragma once

#include <cstdint>
#include <string>

#include "nn/encoder.hpp"
#include "nn/ops/cross_entropy.hpp"
#include "nn/workspace.hpp"

namespace kglm::nn {

class MlmHead {
 public:
  MlmHead(const ModelConfig& config, ParameterStore& params, size_t word_embeddings);

  // hidden [N, H]; rows I32 [M] (which rows of hidden are masked); targets I32 [M]. With
  // row_weights (F64 [M]) row r's gradient is scaled by grad_scale · row_weights[r], and row_losses
  // (F64 [M], when given) receives each row's loss: one call for a weighted sum of several means.
  CrossEntropyResult forward(const Tensor& hidden, const Tensor& rows, const Tensor& targets, bool need_grad,
                             double grad_scale, const Tensor& row_weights = Tensor(), Tensor* row_losses = nullptr);
  // Adds into dhidden [N, H] (only the masked rows change).
  void backward(Tensor& dhidden);
  // [M, V] of the last forward without need_grad; a training forward writes the logits' gradient
  // over them (the vocabulary projection's one big buffer serves both).
  const Tensor& logits() const { return logits_; }

 private:
  void ensure(int64_t m);
  ModelConfig config_;
  ParameterStore& params_;
  size_t dense_w_, dense_b_, ln_g_, ln_b_, bias_, word_;
  int64_t m_ = -1;
  Workspace workspace_;
  Tensor rows_, x_, pre_, act_, mean_, rstd_, normed_, logits_, dx_, dpre_;
};

class SequenceClassificationHead {
 public:
  SequenceClassificationHead(const ModelConfig& config, ParameterStore& params, int64_t labels);

  // hidden [B·T, H]: classifies row b·T of each sequence; targets I32 [B] (kIgnoreIndex allowed).
  CrossEntropyResult forward(const Tensor& hidden, int64_t batch, int64_t seq, const Tensor& targets,
                             const DropoutContext& dropout, bool need_grad, double grad_scale);
  void backward(Tensor& dhidden);
  const Tensor& logits() const { return logits_; }  // [B, labels]

 private:
  ModelConfig config_;
  ParameterStore& params_;
  int64_t labels_;
  bool dropout_first_;  // XLM-R drops out the <s> state before its dense layer; BERT's pooler does not
  size_t dense_w_, dense_b_, out_w_, out_b_;
  int64_t batch_ = 0, seq_ = 0;
  float p_ = 0;
  Workspace workspace_;
  Tensor rows_, first_, first_mask_, pooled_, pooled_drop_, pooled_mask_, logits_, dlogits_, dpooled_, dfirst_;
};

class TokenClassificationHead {
 public:
  TokenClassificationHead(const ModelConfig& config, ParameterStore& params, int64_t labels);

  // hidden [N, H]; targets I32 [N] (kIgnoreIndex on padding and special tokens).
  CrossEntropyResult forward(const Tensor& hidden, const Tensor& targets, const DropoutContext& dropout, bool need_grad,
                             double grad_scale);
  void backward(Tensor& dhidden);
  const Tensor& logits() const { return logits_; }  // [N, labels]

 private:
  ModelConfig config_;
  ParameterStore& params_;
  int64_t labels_;
  size_t w_, b_;
  float p_ = 0;
  Workspace workspace_;
  Tensor dropped_, mask_, logits_, dlogits_, ddropped_;
};

}  // namespace kglm::nn
