// What a fine-tuned model directory says about its task, in finetune.json beside config.json:
// the task, its labels in id order, the relation pooling and the sequence length it was trained
// with. config.json also gets Hugging Face's id2label and label2id.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "train/tasks/task_model.hpp"

namespace kglm::train::tasks {

struct TaskConfig {
  TaskKind kind = TaskKind::token;
  std::vector<std::string> labels;
  Pooling pooling = Pooling::entity_start;
  int64_t max_len = 128;
};

void write_task_config(const std::filesystem::path& path, const TaskConfig& config);
// Throws Error naming the path when it is missing or not a task configuration.
TaskConfig read_task_config(const std::filesystem::path& path);

// The task of a model directory fine-tuned elsewhere (transformers' Trainer, run_ner.py, …), from
// its config.json: architectures[0] *ForTokenClassification (token), *ForSequenceClassification
// (sequence) or *ForMultipleChoice (choice); the labels from id2label in id order; max_len from the
// positions (at most 512). Throws Error naming the path when it is not such a model.
TaskConfig task_config_from_hf(const std::filesystem::path& config_json);

// config.json's "id2label" and "label2id" members (JSON text) for these labels.
std::vector<std::pair<std::string, std::string>> hf_label_fields(const std::vector<std::string>& labels);

}  // namespace kglm::train::tasks
