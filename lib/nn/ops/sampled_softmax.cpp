#include "nn/ops/sampled_softmax.hpp"

#include <string>
#include <unordered_set>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "nn/cpu/kernels.hpp"
#include "nn/ops/dispatch.hpp"
#include "nn/ops/elementwise.hpp"

namespace kglm::nn {

using namespace detail;

SampledClasses sample_log_uniform(int64_t count, int64_t vocabulary, Rng& rng, Device device) {
  if (count < 1 || count > vocabulary)
    throw Error("sample_log_uniform: " + std::to_string(count) + " distinct classes of a vocabulary of " +
                std::to_string(vocabulary));
  // As TensorFlow's LogUniformSampler: k = ⌊exp(u · log(V + 1))⌋ − 1, which has probability P(k).
  const double log_range = std::log(static_cast<double>(vocabulary) + 1.0);
  std::vector<int32_t> ids;
  ids.reserve(static_cast<size_t>(count));
  std::unordered_set<int32_t> seen;
  double tries = 0;
  while (static_cast<int64_t>(ids.size()) < count) {
    const int64_t k = static_cast<int64_t>(std::exp(rng.uniform() * log_range)) - 1;
    const auto id = static_cast<int32_t>(std::min(k, vocabulary - 1));
    ++tries;
    if (seen.insert(id).second) ids.push_back(id);
  }
  return {Tensor::from<int32_t>({count}, ids).to(device), LogUniform{vocabulary, count, tries}};
}

CrossEntropyResult sampled_softmax_loss(const Tensor& h, const Tensor& w, const Tensor& b, const Tensor& targets,
                                        const SampledClasses& sample, double grad_scale, Tensor& dh, Tensor& dw,
                                        Tensor& db, GradMode dh_mode) {
  constexpr std::string_view op = "sampled_softmax_loss";
  check_floating(h, op, "h");
  check_rank(h, 2, op, "h");
  check_rank(w, 2, op, "w");
  const int64_t m = h.dim(0), p = h.dim(1), v = w.dim(0);
  check_like(w, h, {v, p}, op, "w");
  check_like(b, h, {v}, op, "b");
  check_index(targets, DType::I32, h, {m}, op, "targets");
  check_rank(sample.ids, 1, op, "sample.ids");
  const int64_t s = sample.ids.dim(0);
  check_index(sample.ids, DType::I32, h, {s}, op, "sample.ids");
  if (sample.distribution.vocabulary != v || sample.distribution.count != s)
    throw Error(std::string(op) + ": a sample of " + std::to_string(sample.distribution.count) + " from " +
                std::to_string(sample.distribution.vocabulary) + " classes for " + std::to_string(s) + " ids and " +
                std::to_string(v) + " classes");
  if (dh.defined()) check_like(dh, h, {m, p}, op, "dh");
  check_wide(dw, h, {v, p}, op, "dw");
  check_wide(db, h, {v}, op, "db");
  check_disjoint(op, {{dh, "dh"}, {dw, "dw"}, {db, "db"}},
                 {{h, "h"}, {w, "w"}, {b, "b"}, {targets, "targets"}, {sample.ids, "sample.ids"}});
  const Device device = h.device();
  const DType dtype = h.dtype(), wide = wide_dtype(dtype);
  // The rows of the classes involved (gather_rows checks the ids' range), then the sampled logits
  // as one product.
  Tensor w_sampled = Tensor::empty({s, p}, dtype, device), b_sampled = Tensor::empty({s, 1}, dtype, device);
  Tensor w_true = Tensor::empty({m, p}, dtype, device), b_true = Tensor::empty({m, 1}, dtype, device);
  gather_rows(w, sample.ids, w_sampled);
  gather_rows(b.view({v, 1}), sample.ids, b_sampled);
  gather_rows(w, targets, w_true);
  gather_rows(b.view({v, 1}), targets, b_true);
  Tensor logits = Tensor::empty({m, s}, dtype, device);
  linear_forward(h, w_sampled, b_sampled.view({s}), logits);
  // Row by row: the loss, the logits' gradient in place, and the true class's terms.
  Tensor scaled_h = Tensor::empty({m, p}, dtype, device), dtrue = Tensor::empty({m, 1}, dtype, device);
  Tensor dh_true = dh.defined() && dh_mode == GradMode::Overwrite ? dh : Tensor::empty({m, p}, dtype, device);
  const CrossEntropyResult result = on_device(
      h, op,
      [&] {
        return with_floating(dtype, [&](auto zero) {
          using T = decltype(zero);
          return cpu::sampled_softmax_rows<T>(h.data<T>(), w_true.data<T>(), b_true.data<T>(), targets.data<int32_t>(),
                                              sample.ids.data<int32_t>(), logits.data<T>(), m, s, p,
                                              sample.distribution, grad_scale, dh_true.data<T>(),
                                              scaled_h.data<T>(), dtrue.data<T>());
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        return cuda::sampled_softmax_rows<T>(device_data<T>(h), device_data<T>(w_true), device_data<T>(b_true),
                                             device_data<int32_t>(targets), device_data<int32_t>(sample.ids),
                                             device_data<T>(logits), m, s, p, sample.distribution, grad_scale,
                                             device_data<T>(dh_true), device_data<T>(scaled_h), device_data<T>(dtrue));
      });
  // dh (=|+=) dtrue · w[t] + dlogits · w_sampled; dw and db on the sampled rows and the targets'.
  if (dh.defined() && dh_mode == GradMode::Accumulate) accumulate(dh, dh_true);
  Tensor none, db_rows = db.view({v, 1});
  Tensor dw_sampled = Tensor::zeros({s, p}, wide, device), db_sampled = Tensor::zeros({s, 1}, wide, device);
  Tensor db_sampled_flat = db_sampled.view({s});
  linear_backward(logits, h, w_sampled, dh.defined() ? dh : none, dw_sampled, db_sampled_flat, GradMode::Accumulate);
  scatter_add_rows(dw_sampled, sample.ids, dw);
  scatter_add_rows(db_sampled, sample.ids, db_rows);
  scatter_add_rows(scaled_h, targets, dw);
  scatter_add_rows(dtrue, targets, db_rows);
  return result;
}

}  // namespace kglm::nn
