// ELMo's optimisation step as bilm-tf takes it: TensorFlow's clip_by_global_norm (every gradient
// scaled by clip / max(‖g‖, clip)), then Adagrad (nn/ops/adagrad.hpp) at a constant learning rate
// with accumulators that start at initial_accumulator, over the whole flat parameter buffer in one
// call (frozen parameters and the buffer's padding have zero gradients, which leave them as they are).
#pragma once

#include <cstdint>
#include <optional>

#include "nn/optimizer.hpp"
#include "nn/parameters.hpp"

namespace kglm::nn {

struct AdagradOptions {
  double lr = 0.2;
  double initial_accumulator = 1.0;
  double clip_norm = 10.0;  // 0 = no clipping
};

class Adagrad {
 public:
  Adagrad(ParameterStore& params, const AdagradOptions& options);

  // One update from params.grads(), which the caller then zeroes. As AdamW::step: a loss scale
  // above 1 divides the gradients and a non-finite norm skips the step; sum_of_squares, when
  // given, is the squared norm of the whole gradient (summed across ranks).
  StepReport step(double loss_scale = 1.0, std::optional<double> sum_of_squares = std::nullopt);
  int64_t steps_done() const { return steps_; }

  // Checkpoint state: the accumulators, in the layout of the flat parameter buffer.
  Tensor& accumulators() { return accum_; }
  void restore(const Tensor& accumulators, int64_t steps_done);
  const AdagradOptions& options() const { return options_; }

 private:
  ParameterStore& params_;
  AdagradOptions options_;
  Tensor accum_;
  int64_t steps_ = 0;
};

}  // namespace kglm::nn
