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

AdamW::AdamW(ParameterStore& params, const OptimizerOptions& options, ParameterRange range)
    : params_(params), options_(options), range_(range) {
  if (!params.values().defined()) throw Error("optimizer: parameters are not allocated");
  if (range_.end < 0) range_.end = params.count();
  if (range_.begin < 0 || range_.begin > range_.end || range_.end > params.count())
    throw Error("optimizer: range [" + std::to_string(range_.begin) + ", " + std::to_string(range_.end) + ") of " +
                std::to_string(params.count()) + " parameters");
  whole_ = range_.begin == 0 && range_.end == params.count();
  int64_t range_state = 0;
  std::vector<AdamWSegment> segments;
  for (const Parameter& p : params.all()) {
    if (!p.trainable) continue;
    const int64_t n = p.value.numel();
    const int64_t lo = std::max(p.offset, range_.begin), hi = std::min(p.offset + n, range_.end);
    if (lo < hi) {
      segments.push_back({lo - range_.begin, range_state, hi - lo, p.weight_decay});
      moves_.push_back({full_state_ + (lo - p.offset), range_state, hi - lo});
      // Keeps the parameters' 64-byte alignment (and their layout when nothing is frozen).
      range_state += (hi - lo + 15) / 16 * 16;
    }
    full_state_ += (n + 15) / 16 * 16;
  }
  if (full_state_ == 0) throw Error("optimizer: every parameter is frozen");
  m_ = Tensor::zeros({range_state}, DType::F32, params.device());
  v_ = Tensor::zeros({range_state}, DType::F32, params.device());
  values_ = params.values().rows(range_.begin, range_.end);
  grads_ = whole_ ? params.grads() : Tensor::zeros({range_.end - range_.begin}, DType::F32, params.device());
  segments_ = adamw_segment_table(segments, range_.end - range_.begin, range_state, params.device());
}

double AdamW::local_sum_of_squares() const { return sum_of_squares(grads_); }

std::pair<Tensor, Tensor> AdamW::full_moments() const {
  if (whole_) return {m_, v_};
  Tensor m = Tensor::zeros({full_state_}, DType::F32, params_.device());
  Tensor v = Tensor::zeros({full_state_}, DType::F32, params_.device());
  for (const StateMove& s : moves_) {
    m.rows(s.full_offset, s.full_offset + s.size).copy_from(m_.rows(s.range_offset, s.range_offset + s.size));
    v.rows(s.full_offset, s.full_offset + s.size).copy_from(v_.rows(s.range_offset, s.range_offset + s.size));
  }
  return {m, v};
}

StepReport AdamW::step(double loss_scale, std::optional<double> squares) {
  StepReport report;
  report.grad_norm = std::sqrt(squares ? *squares : local_sum_of_squares()) / loss_scale;
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
  adamw_update_segments(values_, grads_, m_, v_, segments_, hyper, report.clip_scale / loss_scale);
  if (whole_) params_.refresh_compute();  // a range: after the trainer's all-gather
  ++steps_;
  return report;
}

void AdamW::restore(const Tensor& exp_avg, const Tensor& exp_avg_sq, int64_t steps_done) {
  if (exp_avg.numel() != full_state_ || exp_avg_sq.numel() != full_state_)
    throw Error("optimizer: the saved moments have " + std::to_string(exp_avg.numel()) + " elements, the model's " +
                std::to_string(full_state_));
  if (whole_) {
    m_.copy_from(exp_avg);
    v_.copy_from(exp_avg_sq);
  } else {
    for (const StateMove& s : moves_) {
      m_.rows(s.range_offset, s.range_offset + s.size).copy_from(exp_avg.rows(s.full_offset, s.full_offset + s.size));
      v_.rows(s.range_offset, s.range_offset + s.size)
          .copy_from(exp_avg_sq.rows(s.full_offset, s.full_offset + s.size));
    }
  }
  steps_ = steps_done;
}

}  // namespace kglm::nn
