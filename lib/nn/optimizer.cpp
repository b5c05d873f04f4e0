#include "nn/optimizer.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "nn/ops/elementwise.hpp"

namespace kglm::nn {

double scheduled_lr(const OptimizerOptions& o, int64_t step) {
  if (step < o.warmup_steps) return o.lr * static_cast<double>(step) / static_cast<double>(o.warmup_steps);
  if (o.total_steps <= 0) return o.lr;
  if (o.total_steps <= o.warmup_steps) return 0.0;
  return o.lr *
         std::max(0.0, static_cast<double>(o.total_steps - step) / static_cast<double>(o.total_steps - o.warmup_steps));
}

AdamW::AdamW(ParameterStore& params, const OptimizerOptions& options) : params_(params), options_(options) {
  if (!params.values().defined()) throw Error("optimizer: parameters are not allocated");
  int64_t total = 0;
  std::vector<AdamWSegment> segments;
  for (const Parameter& p : params.all()) {
    if (!p.trainable) continue;
    segments.push_back({p.offset, total, p.value.numel(), p.weight_decay});
    // Keeps the parameters' 64-byte alignment (and their layout when nothing is frozen).
    total += (p.value.numel() + 15) / 16 * 16;
  }
  if (total == 0) throw Error("optimizer: every parameter is frozen");
  m_ = Tensor::zeros({total}, DType::F32, params.device());
  v_ = Tensor::zeros({total}, DType::F32, params.device());
  segments_ = adamw_segment_table(segments, params.count(), total, params.device());
}

StepReport AdamW::step(double loss_scale) {
  StepReport report;
  report.grad_norm = std::sqrt(sum_of_squares(params_.grads())) / loss_scale;
  report.lr = scheduled_lr(options_, steps_);
  if (!std::isfinite(report.grad_norm) && loss_scale > 1.0) {
    report.skipped = true;
    return report;
  }
  if (!std::isfinite(report.grad_norm))
    throw Error("optimizer: the gradient norm is not finite at step " + std::to_string(steps_ + 1) +
                " (diverged; lower --lr or raise --warmup)");
  // As torch.nn.utils.clip_grad_norm_: scale by max_norm / (norm + 1e-6) when that is below 1.
  if (options_.max_grad_norm > 0) {
    double coef = options_.max_grad_norm / (report.grad_norm + 1e-6);
    if (coef < 1) report.clip_scale = coef;
  }
  const AdamWHyper hyper{report.lr, options_.beta1, options_.beta2, options_.eps, options_.weight_decay, steps_ + 1};
  adamw_update_segments(params_.values(), params_.grads(), m_, v_, segments_, hyper, report.clip_scale / loss_scale);
  params_.refresh_compute();
  ++steps_;
  return report;
}

void AdamW::restore(const Tensor& exp_avg, const Tensor& exp_avg_sq, int64_t steps_done) {
  m_.copy_from(exp_avg);
  v_.copy_from(exp_avg_sq);
  steps_ = steps_done;
}

}  // namespace kglm::nn
