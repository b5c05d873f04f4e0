// The Trainer: one training run's state and its three actions — step(), evaluate(), save() — so
// that the driver (run_pretrain; finetune, probe and verbalize train later) is only the schedule
// of when to do which. The constructor sets the run up: settings (from the options, or from the
// checkpoint when resuming), the model and its weights, AdamW, the tokenizer whose files go into
// checkpoints, the held-out split, the batch order and the metrics log.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <vector>

#include "core/output_lock.hpp"
#include "core/stats.hpp"
#include "dist/communicator.hpp"
#include "dist/gradient_buckets.hpp"
#include "nn/heads.hpp"
#include "nn/loss_scaler.hpp"
#include "nn/optimizer.hpp"
#include "sample/language_sampler.hpp"
#include "tok/tokenizer.hpp"
#include "train/batch_order.hpp"
#include "train/loss_terms.hpp"
#include "train/metrics_log.hpp"
#include "train/mlm_batch.hpp"
#include "train/objectives/objective_table.hpp"
#include "train/pretrain.hpp"
#include "train/token_dataset.hpp"
#include "train/trainer_state.hpp"

namespace kglm::train {

// The model being trained: parameters, encoder and MLM head.
struct MlmModel {
  nn::ModelConfig config;
  nn::ParameterStore params;
  std::optional<nn::Encoder> encoder;
  std::optional<nn::MlmHead> head;
  nn::Workspace scratch;    // the hidden states' gradient, whose shape follows the batch
  int64_t head_offset = 0;  // the MLM head's first parameter in the flat buffers (after the encoder's)

  // compute: F32, or BF16/F16 for mixed precision (F32 master weights, gradients and moments).
  // shards: the flat buffers' length is a multiple of 16 · shards (ZeRO's ranks).
  MlmModel(const nn::ModelConfig& c, nn::Device device, nn::DType compute, int64_t shards = 1);
};

struct StepResult {
  int64_t step = 0;       // steps done after this one
  double loss = 0;        // L = L_MLM + α(L_K + L_R) over the step's masked tokens
  double loss_scale = 1;  // fp16: the dynamic loss scale the step ran with
  TermLosses terms;
  nn::StepReport report;
  int64_t masked = 0, tokens = 0;  // over every rank
  double seconds = 0;
  double comm_seconds = 0;      // waiting for the gradients' reduction across ranks
  bool stop_requested = false;  // a rank got the stop signal (SIGUSR1): every rank sees it at this step
};

struct EvalResult {
  double loss = 0, accuracy = 0;  // over every held-out masked token, unweighted
  int64_t masked = 0;
  TermLosses terms;
};

// Data parallelism: every rank of `comm` builds a Trainer with the same options. --batch is the
// global batch; rank r computes rows [r·B/W, (r+1)·B/W) of each micro-batch, gradients are summed
// across ranks, and every rank takes the same optimizer step. Only rank 0 logs and writes.
class Trainer {
 public:
  // comm: the ranks of a data-parallel run; null = this process alone.
  explicit Trainer(const PretrainOptions& options, std::shared_ptr<dist::Communicator> comm = nullptr);

  int64_t steps_done() const { return state_.step; }
  bool done() const { return state_.step >= options_.steps; }
  // One optimizer step over --accumulate micro-batches; appends its line to the metrics log.
  StepResult step();
  // The held-out loss and accuracy (nothing held out: masked = 0); appends its line to the log.
  EvalResult evaluate();
  // A checkpoint of the run as it is after steps_done() steps, to --out.
  void save();
  // The run's summary statistics (steps, tokens, parameters, sequences, time).
  Stats stats() const;
  // --drawn: how often each sequence was drawn into this run's batches (rank 0 writes it).
  void write_drawn() const;

 private:
  void settle_settings();
  void build_model();
  void load_tokenizer();
  void split_data();
  void open_log();

  void reduce_gradients();
  nn::StepReport optimizer_step(double loss_scale);
  bool verbose() const { return !options_.quiet && comm_->rank() == 0; }
  void warn(const std::string& message) const;  // rank 0's warnings stand for every rank's

  const PretrainOptions options_;  // a copy: a Trainer may outlive the options it was made from
  std::shared_ptr<dist::Communicator> comm_;
  std::vector<std::string> data_paths_;  // --data's files (a glob expanded once)
  TokenDataset data_;
  TrainerState state_;
  std::unique_ptr<MlmModel> model_;
  std::unique_ptr<nn::AdamW> optimizer_;
  std::unique_ptr<dist::GradientBuckets> buckets_;  // several ranks: the gradients' reduction
  nn::LossScaler scaler_;                           // fp16 only; a fixed scale of 1 otherwise
  std::unique_ptr<tok::Tokenizer> tokenizer_;
  std::vector<uint32_t> eval_;
  std::unique_ptr<BatchOrder> order_;
  std::unique_ptr<ObjectiveMasker> masker_;
  MaskTally tally_;         // masked tokens of this invocation's steps, for stats()
  OutputLock output_lock_;  // rank 0: the --out directory, for the whole run
  MetricsLog log_;
  std::vector<uint32_t> sequences_;  // reused by step()
  std::vector<uint32_t> drawn_;      // --drawn: draws of each sequence
  std::vector<MlmBatch> micro_;      // reused by step()
  int64_t steps_run_ = 0;
  double comm_seconds_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace kglm::train
