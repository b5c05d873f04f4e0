// What a fine-tuned model directory says about its task, in finetune.json beside config.json:
// the task, its labels in id order, the relation pooling and the sequence length it was trained
// with, and for qa the windows and the decoding. config.json also gets Hugging Face's id2label and
// label2id.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "train/tasks/qa_windows.hpp"
#include "train/tasks/task_model.hpp"

namespace kglm::train::tasks {

struct TaskConfig {
  TaskKind kind = TaskKind::token;
  std::vector<std::string> labels;
  Pooling pooling = Pooling::entity_start;
  int64_t max_len = 128;
  QaWindowOptions qa_windows;  // qa only
  QaDecodeOptions qa_decode;
  std::vector<std::string> intents;  // slots: the intents in id order (none: no intent head)
  double intent_weight = 1.0;        // slots: the intent loss's weight beside the slot loss
};

void write_task_config(const std::filesystem::path& path, const TaskConfig& config);
// Throws Error naming the path when it is missing or not a task configuration.
TaskConfig read_task_config(const std::filesystem::path& path);

// The task of a model directory fine-tuned elsewhere (transformers' Trainer, run_ner.py, …), from
// its config.json: architectures[0] *ForTokenClassification (token), *ForSequenceClassification
// (sequence), *ForMultipleChoice (choice) or *ForQuestionAnswering (qa); the labels from id2label
// in id order; max_len from the positions (at most 512; qa 384, run_qa's default). Throws Error naming the path when it
// is not such a model.
TaskConfig task_config_from_hf(const std::filesystem::path& config_json);

// config.json's "id2label" and "label2id" members (JSON text) for the task's labels; qa, whose
// qa_outputs transformers sizes by num_labels, gets its two (LABEL_0 and LABEL_1, transformers'
// default names), and choice none.
std::vector<std::pair<std::string, std::string>> hf_label_fields(const TaskConfig& task);

}  // namespace kglm::train::tasks
