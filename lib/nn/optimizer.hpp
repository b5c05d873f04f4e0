// The optimisation step: global-norm gradient clipping, a linear warm-up / linear decay learning
// rate, and AdamW over every trainable parameter (weight decay only where Parameter::weight_decay),
// with its moments kept in two flat buffers laid out like the trainable parameters, in order (one
// call to save or restore; the same layout as the parameters' when nothing is frozen). Frozen
// parameters have no moments and are never updated or decayed.
#pragma once

#include <cstdint>
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

class AdamW {
 public:
  AdamW(ParameterStore& params, const OptimizerOptions& options);

  // One update from the gradients in params.grads() (which the caller then zeroes). With a loss
  // scale above 1 (fp16), the gradients are those of the loss times loss_scale: they are divided
  // by it, and a non-finite gradient norm skips the step (report.skipped) instead of failing.
  StepReport step(double loss_scale = 1.0);
  int64_t steps_done() const { return steps_; }

  // State for checkpoints: the moments (flat, like ParameterStore::values()) and the step count.
  Tensor& exp_avg() { return m_; }
  Tensor& exp_avg_sq() { return v_; }
  void restore(const Tensor& exp_avg, const Tensor& exp_avg_sq, int64_t steps_done);
  const OptimizerOptions& options() const { return options_; }

 private:
  ParameterStore& params_;
  OptimizerOptions options_;
  Tensor m_, v_;
  Tensor segments_;  // the trainable parameters' table for adamw_update_segments, on their device
  int64_t steps_ = 0;
};

}  // namespace kglm::nn
