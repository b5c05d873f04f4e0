#include "train/loss_terms.hpp"

#include <cmath>

#include "core/error.hpp"

namespace kglm::train {

LossTerms::LossTerms(const std::array<int64_t, kLossTermCount>& counts, double alpha) {
  if (!(alpha >= 0) || !std::isfinite(alpha)) throw Error("loss terms: α must be a finite number ≥ 0");
  for (size_t t = 0; t < kLossTermCount; ++t) {
    weight_[t] = static_cast<LossTerm>(t) == LossTerm::mlm ? 1.0 : alpha;
    row_weight_[t] = counts[t] > 0 ? weight_[t] / static_cast<double>(counts[t]) : 0.0;
  }
}

nn::Tensor LossTerms::row_weights(const std::vector<LossTerm>& terms) const {
  nn::Tensor w = nn::Tensor::empty({static_cast<int64_t>(terms.size())}, nn::DType::F64);
  double* p = w.data<double>();
  for (size_t i = 0; i < terms.size(); ++i) p[i] = row_weight_[static_cast<size_t>(terms[i])];
  return w;
}

void LossTerms::add(const std::vector<LossTerm>& terms, const nn::Tensor& row_losses) {
  if (row_losses.numel() != static_cast<int64_t>(terms.size())) throw Error("loss terms: one loss per row expected");
  const double* l = row_losses.data<double>();
  for (size_t i = 0; i < terms.size(); ++i) {
    sum_[static_cast<size_t>(terms[i])] += l[i];
    ++added_[static_cast<size_t>(terms[i])];
  }
}

void LossTerms::all_reduce(dist::Communicator& comm) {
  comm.all_reduce(sum_, dist::ReduceOp::Sum);
  comm.all_reduce(added_, dist::ReduceOp::Sum);
}

double LossTerms::mean(LossTerm t) const {
  const auto i = static_cast<size_t>(t);
  return added_[i] > 0 ? sum_[i] / static_cast<double>(added_[i]) : std::nan("");
}

double LossTerms::total() const {
  double total = 0;
  for (size_t t = 0; t < kLossTermCount; ++t)
    if (added_[t] > 0) total += weight_[t] * mean(static_cast<LossTerm>(t));
  return total;
}

TermLosses LossTerms::summary() const {
  TermLosses s;
  for (size_t t = 0; t < kLossTermCount; ++t) {
    s.loss[t] = mean(static_cast<LossTerm>(t));
    s.masked[t] = added_[t];
  }
  return s;
}

}  // namespace kglm::train
