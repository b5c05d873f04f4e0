// Task heads on top of the encoder's hidden states [N, H]:
// - MlmHead: dense + GELU + LayerNorm + decoder tied to the word embeddings + bias, evaluated only
//   at the masked rows (the vocabulary projection dominates the cost of XLM-R's 250k vocabulary);
// - SequenceClassificationHead: on each sequence's first token (XLM-R: dense, tanh, out_proj;
//   BERT: pooler dense + tanh, classifier); with one label and groups, multiple choice;
// - EntityPairClassificationHead: relations, on the two entities' first tokens;
// - TokenClassificationHead: a linear classifier on the rows that carry labels;
// - QuestionAnsweringHead: a start and an end score on every row (extractive QA).
// Hidden states are the encoder's packed rows; each head gathers the rows it reads.
// The MLM head's forward computes its loss (predict() its logits only); the classification heads' forward computes
// logits only, and loss() the loss sum (and, when training, the logits' gradient scaled by grad_scale). backward() then
// adds the hidden states' gradient into dhidden.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
  // The logits [M, V] at `rows` of hidden, with no targets and no loss (a probe's forward pass);
  // valid until the next call.
  const Tensor& predict(const Tensor& hidden, const Tensor& rows);
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

// What the classification heads share: forward() leaves the logits, so that predicting needs no
// targets; loss() then scores them and, when training, writes their gradient for backward().
class ClassifierLogits {
 public:
  const Tensor& logits() const { return logits_; }
  // targets I32 [rows of the logits / group] (kIgnoreIndex allowed). group > 1 (multiple choice,
  // one logit per choice): each run of `group` consecutive logits is one example's distribution.
  CrossEntropyResult loss(const Tensor& targets, bool need_grad, double grad_scale, int64_t group = 1);

 protected:
  Tensor logits_, dlogits_;
};

// The classifier on each sequence's first token. XLM-R: dropout, dense, tanh, dropout, out_proj
// (classifier.dense / classifier.out_proj). Pooled (BERT's heads, and multiple choice in both
// architectures): the encoder's pooler (dense + tanh), dropout, classifier.
class SequenceClassificationHead : public ClassifierLogits {
 public:
  enum class Pooling : uint8_t { Auto, Pooler };  // Auto: the architecture's own sequence head
  // name: the head's parameters' prefix ("classifier": transformers'; the joint slot and intent
  // model's intent head is "intent_classifier").
  SequenceClassificationHead(const ModelConfig& config, ParameterStore& params, int64_t labels,
                             Pooling pooling = Pooling::Auto, const std::string& name = "classifier");

  // hidden [N, H]: classifies each sequence's first row; returns the logits [sequences, labels].
  const Tensor& forward(const Tensor& hidden, const PackedSequences& seqs, const DropoutContext& dropout);
  void backward(Tensor& dhidden);

 private:
  ModelConfig config_;
  ParameterStore& params_;
  int64_t labels_;
  bool dropout_first_;  // XLM-R drops out the <s> state before its dense layer; a pooler does not
  size_t dense_w_, dense_b_, out_w_, out_b_;
  std::vector<int32_t> first_rows_;  // of the last forward's sequences
  float p_ = 0;
  Workspace workspace_;
  Tensor rows_, first_, first_mask_, pooled_, pooled_drop_, pooled_mask_, dpooled_, dfirst_;
};

// Relation classification on the two entities' first tokens: their hidden states concatenated
// [h(e1); h(e2)], dropout, a linear classifier (classifier.weight [labels, 2H]).
class EntityPairClassificationHead : public ClassifierLogits {
 public:
  EntityPairClassificationHead(const ModelConfig& config, ParameterStore& params, int64_t labels);

  // rows I32 [2B]: e1's and e2's row of each example, in that order; returns the logits [B, labels].
  const Tensor& forward(const Tensor& hidden, const Tensor& rows, const DropoutContext& dropout);
  void backward(Tensor& dhidden);

 private:
  ModelConfig config_;
  ParameterStore& params_;
  int64_t labels_;
  size_t w_, b_;
  int64_t batch_ = -1;
  float p_ = 0;
  Workspace workspace_;
  Tensor rows_, pair_, dropped_, mask_, ddropped_;
};

// A linear classifier (classifier.weight [labels, H]) on the rows that carry labels (the words'
// first sub-tokens), gathered.
class TokenClassificationHead : public ClassifierLogits {
 public:
  TokenClassificationHead(const ModelConfig& config, ParameterStore& params, int64_t labels);

  // hidden [N, H]; rows I32 [M] the rows to classify, numbers I64 [M] their tokens' dropout numbers
  // (token_number()); returns the logits [M, labels].
  const Tensor& forward(const Tensor& hidden, const Tensor& rows, const Tensor& numbers, const DropoutContext& dropout);
  void backward(Tensor& dhidden);

 private:
  ModelConfig config_;
  ParameterStore& params_;
  int64_t labels_;
  size_t w_, b_;
  float p_ = 0;
  Workspace workspace_;
  Tensor rows_, numbers_, gathered_, dropped_, mask_, ddropped_;
};

// Extractive QA (transformers' *ForQuestionAnswering): qa_outputs.weight [2, H] scores every row
// as an answer's start and end, with no dropout. The logits are laid out per sequence for a
// softmax over its positions: row b holds sequence b's start scores, row B + b its end scores,
// [2B, T] with T the longest sequence and kNoScore past each sequence's end; the targets of
// loss() are then [starts of the B sequences; their ends], and the loss sum / 2B is
// transformers' (start loss + end loss) / 2.
class QuestionAnsweringHead : public ClassifierLogits {
 public:
  QuestionAnsweringHead(const ModelConfig& config, ParameterStore& params);

  const Tensor& forward(const Tensor& hidden, const PackedSequences& seqs);
  void backward(Tensor& dhidden);

 private:
  ModelConfig config_;
  ParameterStore& params_;
  size_t w_, b_;
  std::vector<int32_t> offsets_;  // of the last forward's sequences
  Workspace workspace_;
  Tensor hidden_, index_, scores_, dscores_;  // scores_ [N + 1, 2]: every row's, then kNoScore twice
};

}  // namespace kglm::nn
