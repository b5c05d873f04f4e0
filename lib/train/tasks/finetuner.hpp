// One seed of a fine-tuning run: the model from --init with a fresh head, AdamW with linear
// warm-up and decay over epochs of shuffled training examples, dev evaluation every --eval-every
// steps and at each epoch's end (the best model saved to SEED_DIR/best), checkpoints that
// --resume continues bit-identically, and data parallelism over the communicator's ranks (the
// global batch split by rows, gradients summed; every rank evaluates dev alike, rank 0 writes).
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

#include "dist/communicator.hpp"
#include "nn/optimizer.hpp"
#include "tok/tokenizer.hpp"
#include "train/finetune.hpp"
#include "train/metrics_log.hpp"
#include "train/tasks/results_table.hpp"
#include "train/tasks/task_config.hpp"

namespace kglm::train::tasks {

// A file of the run, read and encoded once for every seed.
struct TaskFile {
  std::string lang;  // LANG of LANG=PATH, or ""
  TaskData data;
  std::vector<EncodedExample> encoded;
};

// What every seed shares.
struct FinetuneSetup {
  nn::ModelConfig config;  // the pre-trained encoder's, with --dropout applied
  std::unique_ptr<tok::Tokenizer> tokenizer;
  TaskConfig task;
  LabelSet labels;
  LabelSet intents;  // slots with --intent
  TaskFile train;
  std::optional<TaskFile> dev;
  std::vector<TaskFile> tests;
};

class Finetuner {
 public:
  Finetuner(const FinetuneOptions& options, const FinetuneSetup& setup, uint64_t seed,
            std::shared_ptr<dist::Communicator> comm);

  // Trains to the end; false when stopped early (SIGUSR1 or --stop-after) after a checkpoint.
  bool train();
  // The test files' scores of the best model (the last one without dev).
  SeedResult test();

  static std::filesystem::path seed_dir(const std::string& run_dir, uint64_t seed);
  int64_t total_steps() const { return total_steps_; }

 private:
  void start_or_resume();
  double train_step();  // returns the step's mean loss over every rank
  double evaluate_dev();
  void save_model(const std::filesystem::path& dir, bool checkpoint);
  // The examples of the step's batch, in the order of its epoch (seeded per epoch).
  std::span<const uint32_t> batch_examples(int64_t step);
  void log(const std::string& json_line);
  bool verbose() const { return !options_.quiet && comm_->rank() == 0; }
  const LabelSet* intents() const { return setup_.intents.size() > 0 ? &setup_.intents : nullptr; }

  const FinetuneOptions& options_;
  const FinetuneSetup& setup_;
  uint64_t seed_;
  std::shared_ptr<dist::Communicator> comm_;
  std::filesystem::path dir_;
  std::unique_ptr<TaskModel> model_;
  std::unique_ptr<nn::AdamW> optimizer_;
  nn::OptimizerOptions schedule_;
  int64_t step_ = 0, total_steps_ = 0, steps_per_epoch_ = 0, steps_run_ = 0;
  double best_ = -1;
  int64_t best_step_ = -1;
  bool done_ = false;  // --resume of a seed that had finished
  int64_t order_epoch_ = -1;
  std::vector<uint32_t> order_;
  std::vector<std::vector<uint32_t>> token_batches_;  // --batch-tokens: the epoch's batches
  MetricsLog log_;
};

}  // namespace kglm::train::tasks
