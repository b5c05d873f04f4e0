#include "nn/ops/cross_entropy.hpp"

#include "nn/cpu/kernels.hpp"
#include "nn/ops/dispatch.hpp"

namespace kglm::nn {

using namespace detail;

CrossEntropyResult cross_entropy(const Tensor& logits, const Tensor& targets, Tensor& dlogits, double grad_scale) {
  constexpr std::string_view op = "cross_entropy";
  check_floating(logits, op, "logits");
  check_rank(logits, 2, op, "logits");
  const int64_t m = logits.dim(0), c = logits.dim(1);
  check_index(targets, DType::I32, logits, {m}, op, "targets");
  if (dlogits.defined()) check_like(dlogits, logits, {m, c}, op, "dlogits");
  check_disjoint(op, {{dlogits, "dlogits"}}, {{logits, "logits"}, {targets, "targets"}});
  if (logits.device() == Device::Cuda) no_backend(op);
  return with_floating(logits.dtype(), [&](auto zero) {
    using T = decltype(zero);
    return cpu::cross_entropy<T>(logits.data<T>(), targets.data<int32_t>(), m, c, data_or_null<T>(dlogits), grad_scale);
  });
}

}  // namespace kglm::nn
