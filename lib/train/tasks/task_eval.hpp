// Prediction and scoring of a fine-tuned model on one file: the forward pass only, batches of
// similar length (sorted, so little padding), and the task's scores as the papers report them:
// entity-level F1 (token), accuracy (sequence, choice), macro-F1 and accuracy (relation), token F1
// and exact match (qa, qa_scores.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "train/tasks/qa_windows.hpp"
#include "train/tasks/scores.hpp"
#include "train/tasks/task_model.hpp"

namespace kglm::train::tasks {

struct TaskPredictions {
  std::vector<int32_t> labels;                 // per example: a label id (choice: the choice)
  std::vector<std::vector<std::string>> tags;  // token task: per word (O where --max-len cut it)
  // The other tasks: per example, the softmax of its logits (the labels' or the choices' order).
  std::vector<std::vector<float>> probabilities;
  std::vector<std::string> answers;  // qa: per example, the best span's text ("" when none)
  std::vector<std::string> intents;  // slots with intents: per example, the predicted intent
};

// encoded: the examples' encoding (qa: their windows, in order); qa: how answers are decoded;
// intents: slots' intent names (none: tags only).
TaskPredictions predict(TaskModel& model, const TaskData& data, const std::vector<EncodedExample>& encoded,
                        const LabelSet& labels, int64_t batch, const QaDecodeOptions& qa = {},
                        const LabelSet* intents = nullptr);

struct TaskScore {
  std::string metric;  // the headline score's name: f1, accuracy or macro_f1
  double value = 0;
  std::vector<std::pair<std::string, double>> details;  // every score, the headline's first
  int64_t examples = 0;
};

// The metric of a task's headline score.
const char* task_metric(TaskKind kind);

// rules: how the token task reads entities (seqeval's default or strict mode).
TaskScore score(const TaskData& gold, const LabelSet& labels, const TaskPredictions& predicted,
                const EntityRules& rules = {});

}  // namespace kglm::train::tasks
