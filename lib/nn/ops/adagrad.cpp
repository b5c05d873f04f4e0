#include "nn/ops/adagrad.hpp"

#include <cmath>
#include <string>

#include "nn/cpu/kernels.hpp"
#include "nn/ops/dispatch.hpp"

namespace kglm::nn {

using namespace detail;

void adagrad_update(Tensor& param, const Tensor& grad, Tensor& accum, double lr, double grad_scale) {
  constexpr std::string_view op = "adagrad_update";
  check_floating(param, op, "param");
  check_like(grad, param, param.shape(), op, "grad");
  check_like(accum, param, param.shape(), op, "accum");
  check_disjoint(op, {{param, "param"}, {accum, "accum"}}, {{grad, "grad"}});
  if (!(lr >= 0) || !std::isfinite(grad_scale))
    throw Error(std::string(op) + ": lr and grad_scale must be finite, lr ≥ 0");
  on_device(
      param, op,
      [&] {
        with_floating(param.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::adagrad_update<T>(param.data<T>(), grad.data<T>(), accum.data<T>(), param.numel(), lr, grad_scale);
        });
      },
      [&](auto tag) {
        f32_only<decltype(tag)>(op, [&] {
          cuda::adagrad_update(device_data<float>(param), device_data<float>(grad), device_data<float>(accum),
                               param.numel(), lr, grad_scale);
        });
      });
}

}  // namespace kglm::nn
