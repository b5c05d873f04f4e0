// The optimisation step: global-norm gradient clipping, a linear warm-up / linear decay learning
// rate, and AdamW over every trainable parameter (weight decay only where Parameter::weight_decay),
// with its moments kept in two flat buffers laid out like the trainable parameters, in order (one
// call to save or restore; the same layout as the parameters' when nothing is frozen). Frozen
// parameters have no moments and are never updated or decayed.
//
// ZeRO stage 1: an AdamW may own only a range of the flat parameters (one rank's shard). It keeps
// the moments of that range alone, reads the range's gradients from shard_gradients() (which the
// trainer fills by a reduce-scatter) and updates the range's values; the trainer then all-gathers
// the values. Checkpoints hold the moments in the full layout whatever the sharding.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "nn/ops/adamw.hpp"
#include "nn/parameters.hpp"

namespace kglm::nn {

struct OptimizerOptions {
  double lr = 1e-4;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.01;
  double max_grad_norm = 1.0;  // 0 = no clipping
  int64_t warmup_steps = 0;
  int64_t total_steps = 0;  // the decay reaches 0 here; 0 = constant after warm-up
};

// The learning rate of 0-based optimizer step `step` (torch LambdaLR with HF's
// get_linear_schedule_with_warmup): base·step/warmup while step < warmup, then
// base·max(0, (total − step)/(total − warmup)).
double scheduled_lr(const OptimizerOptions& options, int64_t step);

struct StepReport {
  double lr = 0;
  double grad_norm = 0;  // before clipping (of the unscaled gradients)
  double clip_scale = 1;
  bool skipped = false;  // loss scaling: the gradients overflowed, nothing was updated
};

// Elements [begin, end) of the parameters' flat buffers; end < 0: to the end.
struct ParameterRange {
  int64_t begin = 0, end = -1;
};

class AdamW {
 public:
  AdamW(ParameterStore& params, const OptimizerOptions& options, ParameterRange range = {});

  // One update from the gradients (params.grads(), or shard_gradients() for a range), which the
  // caller then zeroes. With a loss scale above 1 (fp16), the gradients are those of the loss times
  // loss_scale: they are divided by it, and a non-finite gradient norm skips the step
  // (report.skipped) instead of failing. sum_of_squares: the squared norm of the whole gradient
  // (every shard's, summed across ranks); by default, that of the gradients this optimizer reads.
  StepReport step(double loss_scale = 1.0, std::optional<double> sum_of_squares = std::nullopt);
  int64_t steps_done() const { return steps_; }

  // The gradients step() reads: the range of params.grads(), or a buffer of its own for a range.
  Tensor& gradients() { return grads_; }
  double local_sum_of_squares() const;  // of gradients()
  const ParameterRange& range() const { return range_; }

  // The moments of the range (the full layout when the range is everything).
  Tensor& exp_avg() { return m_; }
  Tensor& exp_avg_sq() { return v_; }
  // Checkpoint state: the moments in the full layout (every trainable parameter, in order, each
  // padded to 16), zero outside the range; and restore() from that layout.
  int64_t full_state_size() const { return full_state_; }
  std::pair<Tensor, Tensor> full_moments() const;
  void restore(const Tensor& exp_avg, const Tensor& exp_avg_sq, int64_t steps_done);
  const OptimizerOptions& options() const { return options_; }

 private:
  struct StateMove {  // a piece of the moments: where it is in the full layout and in the range's
    int64_t full_offset = 0, range_offset = 0, size = 0;
  };

  ParameterStore& params_;
  OptimizerOptions options_;
  ParameterRange range_;
  bool whole_ = true;      // the range is every parameter: the moments are in the full layout
  Tensor values_, grads_;  // the range's
  Tensor m_, v_;
  int64_t full_state_ = 0;
  std::vector<StateMove> moves_;
  Tensor segments_;  // the trainable parameters' table for adamw_update_segments, on their device
  int64_t steps_ = 0;
};

}  // namespace kglm::nn
