// verbalize train: TEKGEN's triple-to-text model (Agarwal et al. 2021, §2.2) — a T5 encoder-decoder
// fine-tuned with teacher forcing on (serialized_triples, sentence) pairs: kg-align's aligned
// Wikipedia sentences and template-rendered pairs. The paper's two stages are two runs, the second
// starting from the first's model (--init). AdamW with linear warm-up and decay, held-out loss,
// checkpoints that --resume continues bit-identically, SIGUSR1 (checkpoint, exit 75), and data
// parallelism over the communicator's ranks (the global batch split by rows, gradients summed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "nn/optimizer.hpp"
#include "nn/tensor.hpp"

namespace kglm::verbalize {

// What the training commands (train, train-filter) take from the shared command line.
struct RunSettings {
  std::vector<std::string> data;  // the input files
  uint64_t seed = 0;
  nn::Device device = nn::Device::Cpu;
  unsigned threads = 1;
  bool quiet = false;
  ErrorLimit max_errors;
  std::string stats_file;
};

struct TrainOptions : RunSettings {
  // data: training pairs (JSON lines)
  std::string eval_data;  // held-out pairs; "" = eval_fraction of the training pairs
  double eval_fraction = 0.02;
  int64_t eval_max = 2000;
  std::string init;         // a T5 model directory to start from (stage 2, or a pre-trained T5)
  std::string config;       // a new model's config.json (model_type t5 or mt5)
  std::string tokenizer;    // a new model's SentencePiece .model (T5 ids: <pad> 0, </s> 1)
  std::string resume;       // a checkpoint directory of this command
  std::string out;          // the checkpoint directory, rewritten atomically at every save
  std::string log;          // metrics JSON lines ("" = none)
  std::string tensorboard;  // a directory of TensorBoard event files mirroring the log ("" = none)
  int64_t max_source_len = 128, max_target_len = 128;
  int64_t batch = 32, steps = 1000;
  nn::OptimizerOptions optimizer;  // lr 1e-3 (the paper's) unless given
  float dropout = -1;              // < 0: the model's dropout_rate
  int64_t eval_every = 0, save_every = 0, log_every = 10;
  int64_t stop_after = 0;  // > 0: checkpoint and stop (exit 75) after this many steps of this invocation
};

// Returns the exit status: 0, or 75 when stopped by SIGUSR1 or --stop-after after a checkpoint.
int run_train(const TrainOptions& options);

// The file beside a model that records the lengths it was trained with (generation's defaults).
inline constexpr const char* kVerbalizerFile = "verbalizer.json";

}  // namespace kglm::verbalize
