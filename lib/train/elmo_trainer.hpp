// pretrain --architecture elmo: ELMo's bidirectional language model (nn/elmo.hpp) trained as bilm-tf
// trains it, on a word-level token dataset (pretrain prepare --words). Each optimizer step runs
// --accumulate windows of `unroll_steps` tokens over `batch_size` rows (train/elmo_windows.hpp),
// the LSTM state carried from window to window; each direction's loss is the sampled softmax over
// negatives drawn for it per window from the log-uniform distribution over the frequency-sorted
// vocabulary; the objective is unroll_steps × the mean of both directions' mean losses (bilm-tf
// differentiates loss · unroll_steps), Adagrad with global clipping takes the step. The held-out
// perplexity is the full softmax's, exp of the mean of both directions' cross-entropies over every
// held-out token, read as one stream per row with the state carried (bilm-tf's run_test).
//
// The softmax covers the first n_tokens_vocab words of the dataset's vocabulary (all of them when
// it is 0 or larger): a word beyond is read through its characters like any other but predicted as
// <UNK>, so a dataset prepared with every word of the corpus trains a model whose inputs are never
// unknown.
//
// Checkpoints are AllenNLP's model directory — options.json (n_characters 262, the inference
// convention), weights.hdf5 (bilm-tf's datasets), vocab.txt (the softmax's words) — plus what
// --resume needs to continue bit-identically: the softmax, Adagrad's accumulators and the carried
// LSTM state (elmo_state.safetensors) and the run's settings and row cursors (trainer_state.json).
#pragma once

#include <array>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "core/output_lock.hpp"
#include "core/stats.hpp"
#include "dist/communicator.hpp"
#include "nn/adagrad_optimizer.hpp"
#include "nn/elmo.hpp"
#include "nn/loss_scaler.hpp"
#include "train/elmo_trainer_state.hpp"
#include "train/elmo_windows.hpp"
#include "train/metrics_log.hpp"
#include "train/pretrain.hpp"
#include "train/token_dataset.hpp"
#include "train/trainer_support.hpp"

namespace kglm::train {

struct ElmoStepResult {
  int64_t step = 0;
  double loss = 0;                     // 0.5 · (forward + backward mean sampled losses)
  std::array<double, 2> directions{};  // each direction's mean sampled loss
  double loss_scale = 1;
  nn::StepReport report;
  int64_t tokens = 0;  // predictions per direction, over every rank
  double seconds = 0;
  bool stop_requested = false;
};

struct ElmoEvalResult {
  double loss = 0;                     // 0.5 · (forward + backward mean cross-entropy)
  std::array<double, 2> directions{};  // each direction's
  int64_t tokens = 0;                  // predictions per direction
};

class ElmoTrainer {
 public:
  explicit ElmoTrainer(const PretrainOptions& options, std::shared_ptr<dist::Communicator> comm = nullptr);
  ~ElmoTrainer();

  int64_t steps_done() const { return state_.step; }
  bool done() const { return state_.step >= options_.steps; }
  ElmoStepResult step();
  ElmoEvalResult evaluate();
  void save();
  Stats stats() const;

 private:
  void settle_settings();
  void build_model();
  void load_words();
  void split_data();
  void open_log();
  // Fills one direction's characters and targets for `windows` × `steps` step-major rows from
  // row-major [windows][steps + 1] ids.
  void fill_stream(const int32_t* ids, int64_t windows, int64_t steps, size_t width, nn::ElmoStream& out) const;
  bool verbose() const { return !options_.quiet && comm_->rank() == 0; }

  const PretrainOptions options_;
  std::shared_ptr<dist::Communicator> comm_;
  std::vector<std::string> data_paths_;
  TokenDataset data_;
  ElmoTrainerState state_;
  nn::ElmoOptions elmo_;
  std::unique_ptr<nn::ParameterStore> params_;
  std::unique_ptr<nn::ElmoModel> model_;
  std::unique_ptr<nn::Adagrad> optimizer_;
  nn::LossScaler scaler_;
  std::vector<std::string> words_;  // the dataset's vocabulary, for the characters of each id
  std::vector<uint32_t> eval_;
  std::array<std::vector<int32_t>, 2> eval_streams_;  // the held-out sentences end to end; each reversed
  std::unique_ptr<ElmoWindows> windows_;
  size_t first_row_ = 0, rows_ = 0;  // this rank's rows of each window
  OutputLock output_lock_;           // rank 0: the --out directory, for the whole run
  MetricsLog log_;
  int64_t steps_run_ = 0;
  double comm_seconds_ = 0;
  TrainClock::time_point start_;
};

}  // namespace kglm::train
