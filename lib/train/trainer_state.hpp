// What a checkpoint needs beyond the model to continue a run bit-identically: the step, the
// settings that shape the run (seed, batch, schedule, masking, sampling), the data cursors and the
// AdamW moments. trainer_state.json holds the first three (readable, diffable); optimizer.safetensors
// the moments, flat in the parameters' layout.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "nn/optimizer.hpp"
#include "train/batch_order.hpp"
#include "train/objectives/whole_word.hpp"

namespace kglm::train {

struct TrainerState {
  int64_t step = 0;  // optimizer steps done
  uint64_t seed = 0;
  int64_t batch = 0, accumulate = 1;
  nn::OptimizerOptions optimizer;
  MaskingOptions masking;
  std::string objectives;  // ObjectiveTable::to_string(); empty in checkpoints of older kglm (defaults)
  double kmlm_alpha = 0.3;
  std::string train_layers = "all";
  double lang_alpha = -1;  // < 0: no language-per-batch sampling
  double eval_fraction = 0;
  std::string data;  // the token dataset's path, for the record
  uint64_t data_sequences = 0;
  uint64_t tokens_seen = 0;
  std::string precision = "fp32";  // fp32, bf16 or fp16
  double loss_scale = 1;           // fp16's dynamic loss scale, and its clean steps so far
  int64_t clean_steps = 0;
  std::vector<OrderCursor> cursors;
};

// exp_avg, exp_avg_sq: AdamW's moments in the full layout (AdamW::full_moments()).
void write_trainer_state(const std::filesystem::path& dir, const TrainerState& state, const nn::Tensor& exp_avg,
                         const nn::Tensor& exp_avg_sq);
// Reads DIR/trainer_state.json (the moments are restored separately by restore_optimizer).
TrainerState read_trainer_state(const std::filesystem::path& dir);
void restore_optimizer(const std::filesystem::path& dir, nn::AdamW& optimizer, int64_t steps_done);

}  // namespace kglm::train
