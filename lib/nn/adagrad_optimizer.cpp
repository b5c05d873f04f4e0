#include "nn/adagrad_optimizer.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "nn/ops/adagrad.hpp"
#include "nn/ops/elementwise.hpp"

namespace kglm::nn {

Adagrad::Adagrad(ParameterStore& params, const AdagradOptions& options) : params_(params), options_(options) {
  if (!params.values().defined() || !params.grads().defined())
    throw Error("optimizer: parameters are not allocated with gradients");
  if (!(options.lr > 0) || !(options.initial_accumulator > 0) || options.clip_norm < 0)
    throw Error("optimizer: Adagrad needs lr > 0, an initial accumulator > 0 and a clip norm ≥ 0");
  Tensor host = Tensor::empty({params.count()});
  for (int64_t i = 0; i < host.numel(); ++i) host.data<float>()[i] = static_cast<float>(options.initial_accumulator);
  accum_ = host.to(params.device());
}

StepReport Adagrad::step(double loss_scale, std::optional<double> squares) {
  StepReport report;
  report.lr = options_.lr;
  report.grad_norm = std::sqrt(squares ? *squares : sum_of_squares(params_.grads())) / loss_scale;
  if (!std::isfinite(report.grad_norm) && loss_scale > 1.0) {
    report.skipped = true;
    return report;
  }
  if (!std::isfinite(report.grad_norm))
    throw Error("optimizer: the gradient norm is not finite at step " + std::to_string(steps_ + 1) +
                " (diverged; lower --lr)");
  // TensorFlow's clip_by_global_norm: scale by clip / max(norm, clip).
  if (options_.clip_norm > 0 && report.grad_norm > options_.clip_norm)
    report.clip_scale = options_.clip_norm / report.grad_norm;
  adagrad_update(params_.values(), params_.grads(), accum_, options_.lr, report.clip_scale / loss_scale);
  params_.refresh_compute();
  ++steps_;
  return report;
}

void Adagrad::restore(const Tensor& accumulators, int64_t steps_done) {
  if (accumulators.numel() != accum_.numel())
    throw Error("optimizer: the saved accumulators have " + std::to_string(accumulators.numel()) +
                " elements, the model's " + std::to_string(accum_.numel()));
  accum_.copy_from(accumulators.view(accum_.shape()));
  steps_ = steps_done;
}

}  // namespace kglm::nn
