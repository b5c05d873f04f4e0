#include "train/tasks/task_model.hpp"

#include <algorithm>
#include <cmath>

#include "nn/ops/elementwise.hpp"

namespace kglm::train::tasks {

Pooling parse_pooling(const std::string& name) {
  if (name == "entity-start") return Pooling::entity_start;
  if (name == "cls") return Pooling::cls;
  throw UsageError("--pooling must be entity-start or cls, not '" + name + "'");
}

const char* pooling_name(Pooling pooling) { return pooling == Pooling::cls ? "cls" : "entity-start"; }

TaskModel::TaskModel(const nn::ModelConfig& config, TaskKind kind, Pooling pooling, int64_t labels, nn::Device device,
                     int64_t intents, bool gradients)
    : config_(config), kind_(kind), pooling_(pooling), params_(device), scratch_(device) {
  encoder_.emplace(config_, params_);
  switch (kind) {
    case TaskKind::slots:
      // The intent head on <s> beside the slot tagger, named apart from transformers' classifier.*
      if (intents > 0)
        intent_.emplace(config_, params_, intents, nn::SequenceClassificationHead::Pooling::Auto, "intent_classifier");
      [[fallthrough]];
    case TaskKind::token:
      head_ = &token_.emplace(config_, params_, labels);
      break;
    case TaskKind::wic:
      head_ = &pair_.emplace(config_, params_, labels);
      break;
    case TaskKind::relation:
      if (pooling == Pooling::entity_start) {
        head_ = &pair_.emplace(config_, params_, labels);
        break;
      }
      [[fallthrough]];
    case TaskKind::sequence:
      head_ = &sequence_.emplace(config_, params_, labels);
      break;
    case TaskKind::choice:
      head_ = &sequence_.emplace(config_, params_, 1, nn::SequenceClassificationHead::Pooling::Pooler);
      break;
    case TaskKind::qa:
      head_ = &qa_.emplace(config_, params_);
      break;
  }
  params_.allocate(1, gradients);
}

const nn::Tensor& TaskModel::forward(const TaskBatch& batch, const nn::DropoutContext& dropout) {
  const nn::Tensor& hidden = encoder_->forward(batch.encoder, dropout);
  if (intent_) intent_->forward(hidden, batch.encoder.sequences, dropout);
  if (token_) return token_->forward(hidden, batch.token_rows, batch.token_numbers, dropout);
  if (pair_) return pair_->forward(hidden, batch.entity_rows, dropout);
  if (qa_) return qa_->forward(hidden, batch.encoder.sequences);
  const nn::Tensor& logits = sequence_->forward(hidden, batch.encoder.sequences, dropout);
  if (kind_ != TaskKind::choice) return logits;
  grouped_ = logits.view({batch.examples, batch.choices});
  return grouped_;
}

nn::CrossEntropyResult TaskModel::loss(const TaskBatch& batch, bool need_grad, double grad_scale, double intent_scale) {
  if (intent_) intent_loss_ = intent_->loss(batch.intent_targets, need_grad, intent_scale);
  return head_->loss(batch.targets, need_grad, grad_scale, kind_ == TaskKind::choice ? batch.choices : 1);
}

const nn::Tensor& TaskModel::intent_logits() const {
  static const nn::Tensor none;
  return intent_ ? intent_->logits() : none;
}

void TaskModel::backward() {
  const nn::Tensor& hidden = encoder_->hidden_state(static_cast<size_t>(config_.layers));
  scratch_.begin();
  nn::Tensor dhidden = scratch_.buffer(hidden.shape(), hidden.dtype());
  dhidden.zero();
  if (token_) token_->backward(dhidden);
  if (pair_) pair_->backward(dhidden);
  if (sequence_) sequence_->backward(dhidden);
  if (qa_) qa_->backward(dhidden);
  if (intent_) intent_->backward(dhidden);
  encoder_->backward(dhidden);
}

std::string TaskModel::architecture_name() const {
  const std::string base = config_.architecture == nn::Architecture::Bert ? "Bert" : "XLMRoberta";
  switch (kind_) {
    case TaskKind::slots:
      // With intents a kglm class (the tagger loads in *ForTokenClassification alone).
      if (intent_) return base + "ForSlotFillingAndIntent";
      [[fallthrough]];
    case TaskKind::token:
      return base + "ForTokenClassification";
    case TaskKind::choice:
      return base + "ForMultipleChoice";
    case TaskKind::qa:
      return base + "ForQuestionAnswering";
    case TaskKind::wic:  // the word's two first tokens, as the relation task's entities
      return base + "ForEntityPairClassification";
    case TaskKind::relation:
      // transformers has no entity-start class: the weights load, the head is kglm's own.
      if (pooling_ == Pooling::entity_start) return base + "ForEntityPairClassification";
      [[fallthrough]];
    case TaskKind::sequence:
      return base + "ForSequenceClassification";
  }
  return base;
}

nn::Tensor host_logits(const nn::Tensor& logits) {
  nn::Tensor f32 = logits;
  if (logits.dtype() != nn::DType::F32) {
    f32 = nn::Tensor::empty(logits.shape(), nn::DType::F32, logits.device());
    nn::convert(logits, f32);
  }
  return f32.to(nn::Device::Cpu);
}

std::vector<int32_t> argmax_rows(const nn::Tensor& logits) {
  const nn::Tensor host = host_logits(logits);
  const int64_t m = host.dim(0), c = host.dim(1);
  std::vector<int32_t> out(static_cast<size_t>(m));
  const float* p = host.data<float>();
  for (int64_t r = 0; r < m; ++r) {
    int64_t best = 0;
    for (int64_t k = 1; k < c; ++k)
      if (p[r * c + k] > p[r * c + best]) best = k;
    out[static_cast<size_t>(r)] = static_cast<int32_t>(best);
  }
  return out;
}

std::vector<std::vector<float>> softmax_rows(const nn::Tensor& logits) {
  const nn::Tensor host = host_logits(logits);
  const int64_t m = host.dim(0), c = host.dim(1);
  std::vector<std::vector<float>> out(static_cast<size_t>(m), std::vector<float>(static_cast<size_t>(c)));
  const float* p = host.data<float>();
  for (int64_t r = 0; r < m; ++r) {
    const float* row = p + r * c;
    const double max = *std::max_element(row, row + c);
    double sum = 0;
    for (int64_t k = 0; k < c; ++k) sum += std::exp(row[k] - max);
    for (int64_t k = 0; k < c; ++k)
      out[static_cast<size_t>(r)][static_cast<size_t>(k)] = static_cast<float>(std::exp(row[k] - max) / sum);
  }
  return out;
}

}  // namespace kglm::train::tasks
