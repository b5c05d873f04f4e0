#include "nn/ops/cross_entropy.hpp"

#include <string>
#include <vector>

#include "core/error.hpp"

#include "nn/cpu/kernels.hpp"
#include "nn/ops/dispatch.hpp"
#include "nn/ops/index_range.hpp"

namespace kglm::nn {

using namespace detail;

CrossEntropyResult sum_row_results(const int32_t* targets, const double* loss, const uint8_t* correct, int64_t m) {
  CrossEntropyResult result;
  for (int64_t r = 0; r < m; ++r) {
    if (targets[r] == kIgnoreIndex) continue;
    result.loss_sum += loss[r];
    ++result.counted;
    result.correct += correct[r];
  }
  return result;
}

CrossEntropyResult cross_entropy(const Tensor& logits, const Tensor& targets, Tensor& dlogits, double grad_scale) {
  Tensor none;
  return cross_entropy(logits, targets, dlogits, grad_scale, none, none);
}

CrossEntropyResult cross_entropy(const Tensor& logits, const Tensor& targets, Tensor& dlogits, double grad_scale,
                                 const Tensor& row_weights, Tensor& row_losses) {
  constexpr std::string_view op = "cross_entropy";
  check_floating(logits, op, "logits");
  check_rank(logits, 2, op, "logits");
  const int64_t m = logits.dim(0), c = logits.dim(1);
  check_index(targets, DType::I32, logits, {m}, op, "targets");
  if (dlogits.defined()) check_like(dlogits, logits, {m, c}, op, "dlogits");
  for (const Tensor* rows : {&row_weights, static_cast<const Tensor*>(&row_losses)}) {
    if (!rows->defined()) continue;
    if (rows->dtype() != DType::F64 || rows->shape() != std::vector<int64_t>{m})
      throw Error(std::string(op) + ": row weights and losses must be F64 [" + std::to_string(m) + "]");
    check_same_device(*rows, logits, op);
  }
  // dlogits may be logits itself (the gradient written in place: one [M, C] buffer for both).
  check_same_or_disjoint(dlogits, logits, op, "dlogits", "logits");
  check_disjoint(op, {{dlogits, "dlogits"}, {row_losses, "row_losses"}},
                 {{targets, "targets"}, {row_weights, "row_weights"}});
  check_disjoint(row_losses, logits, op, "row_losses", "logits");
  return on_device(
      logits, op,
      [&] {
        const double* weights = row_weights.defined() ? row_weights.data<double>() : nullptr;
        double* losses = row_losses.defined() ? row_losses.data<double>() : nullptr;
        return with_floating(logits.dtype(), [&](auto zero) {
          using T = decltype(zero);
          return cpu::cross_entropy<T>(logits.data<T>(), targets.data<int32_t>(), m, c, data_or_null<T>(dlogits),
                                       grad_scale, weights, losses);
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        const int32_t* t = device_data<int32_t>(targets);
        cuda::check_indices(op, "targets", t, m, IndexRange::classes(c, kIgnoreIndex));
        return cuda::cross_entropy<T>(device_data<T>(logits), t, m, c, device_data<T>(dlogits), grad_scale,
                                      device_data<double>(row_weights), device_data<double>(row_losses));
      });
}

void best_classes(const Tensor& logits, std::vector<int32_t>& classes, std::vector<double>& log_probs) {
  constexpr std::string_view op = "best_classes";
  check_floating(logits, op, "logits");
  check_rank(logits, 2, op, "logits");
  const int64_t m = logits.dim(0), c = logits.dim(1);
  if (c < 1) throw Error(std::string(op) + ": logits have no classes");
  classes.assign(static_cast<size_t>(m), 0);
  log_probs.assign(static_cast<size_t>(m), 0.0);
  on_device(
      logits, op,
      [&] {
        with_floating(logits.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::best_classes<T>(logits.data<T>(), m, c, classes.data(), log_probs.data());
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::best_classes<T>(device_data<T>(logits), m, c, classes.data(), log_probs.data());
      });
}

}  // namespace kglm::nn
