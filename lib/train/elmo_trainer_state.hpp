// What an ELMo checkpoint needs beyond its weights to continue a run bit-identically: the step,
// the settings that shape the run and each row's place in its token stream, in
// trainer_state.json (format "kglm-elmo-trainer-state"; readable, diffable). The softmax, Adagrad's
// accumulators and the carried LSTM state are tensors, beside it in elmo_state.safetensors.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "nn/adagrad_optimizer.hpp"
#include "train/elmo_windows.hpp"

namespace kglm::train {

struct ElmoTrainerState {
  int64_t step = 0;  // optimizer steps done
  uint64_t seed = 0;
  int64_t batch = 0, accumulate = 1;  // windows (rows) per micro-batch; micro-batches per step
  int64_t unroll = 20;                // tokens per window
  int64_t negatives = 0;              // sampled classes per direction and window (0: full softmax)
  int64_t vocabulary = 0;             // the softmax's words
  nn::AdagradOptions adagrad;
  double eval_fraction = 0;
  std::string data;  // the dataset's path, for the record
  uint64_t data_sequences = 0;
  uint64_t tokens_seen = 0;  // predictions per direction
  std::string precision = "fp32";
  double loss_scale = 1;  // fp16's dynamic loss scale, and its clean steps so far
  int64_t clean_steps = 0;
  std::vector<ElmoRowCursor> cursors;
};

inline constexpr const char* kElmoTrainerStateFormat = "kglm-elmo-trainer-state";

void write_elmo_trainer_state(const std::filesystem::path& dir, const ElmoTrainerState& state);
// Reads DIR/trainer_state.json; kglm::Error naming the file when it is not an ELMo run's.
ElmoTrainerState read_elmo_trainer_state(const std::filesystem::path& dir);

}  // namespace kglm::train
