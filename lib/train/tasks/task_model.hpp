// A fine-tuning model: the encoder and the task's head in one parameter store, the head's weights
// under Hugging Face's names (XLMRobertaForTokenClassification's classifier.weight, …), so that a
// saved model loads in transformers with the matching *For… class.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nn/encoder.hpp"
#include "nn/heads.hpp"
#include "train/tasks/task_data.hpp"

namespace kglm::train::tasks {

// relation: the entities' first tokens concatenated, or the first token's sequence head.
enum class Pooling : uint8_t { entity_start, cls };
Pooling parse_pooling(const std::string& name);  // "entity-start" | "cls"
const char* pooling_name(Pooling pooling);

class TaskModel {
 public:
  // labels: the classes (the choice task has one score per choice and ignores it); intents: slots'
  // intent classes (0: slot filling alone, no intent head); gradients: false for a model that only
  // predicts (no gradient buffers).
  TaskModel(const nn::ModelConfig& config, TaskKind kind, Pooling pooling, int64_t labels, nn::Device device,
            int64_t intents = 0, bool gradients = true);

  const nn::ModelConfig& config() const { return config_; }
  nn::ParameterStore& params() { return params_; }
  nn::Encoder& encoder() { return *encoder_; }

  // The logits of a batch: token [B·T, labels], sequence and relation [B, labels], choice [B, C],
  // qa [2B, T] (each sequence's start scores, then each one's end scores; QuestionAnsweringHead).
  const nn::Tensor& forward(const TaskBatch& batch, const nn::DropoutContext& dropout);
  // The loss sum over the batch's counted targets; when training, the logits' gradient (× grad_scale).
  // slots with intents: the intent loss's gradient × intent_scale, its sum in intent_loss().
  nn::CrossEntropyResult loss(const TaskBatch& batch, bool need_grad, double grad_scale, double intent_scale = 0);
  const nn::CrossEntropyResult& intent_loss() const { return intent_loss_; }
  // slots with intents: the intent logits [B, intents] of the last forward; undefined otherwise.
  const nn::Tensor& intent_logits() const;
  // The gradients of the last training forward, accumulated into the parameters'.
  void backward();
  // The Hugging Face class a saved model is loaded with.
  std::string architecture_name() const;

 private:
  nn::ModelConfig config_;
  TaskKind kind_;
  Pooling pooling_;
  nn::ParameterStore params_;
  std::optional<nn::Encoder> encoder_;
  std::optional<nn::TokenClassificationHead> token_;
  std::optional<nn::SequenceClassificationHead> sequence_;  // sequence, relation by [CLS], choice
  std::optional<nn::EntityPairClassificationHead> pair_;
  std::optional<nn::QuestionAnsweringHead> qa_;
  std::optional<nn::SequenceClassificationHead> intent_;  // slots with intents
  nn::CrossEntropyResult intent_loss_;
  nn::ClassifierLogits* head_ = nullptr;
  nn::Workspace scratch_;
  nn::Tensor grouped_;  // choice: the logits viewed [B, C]
};

// logits as F32 on the host.
nn::Tensor host_logits(const nn::Tensor& logits);
// The predicted class of each row of logits [M, C] (the first of equal maxima).
std::vector<int32_t> argmax_rows(const nn::Tensor& logits);
// softmax of each row of logits [M, C], computed in double on the host.
std::vector<std::vector<float>> softmax_rows(const nn::Tensor& logits);

}  // namespace kglm::train::tasks
