#include "nn/ops/adamw.hpp"

#include <string>

#include "core/error.hpp"
#include "nn/cpu/kernels.hpp"
#include "nn/ops/dispatch.hpp"

namespace kglm::nn {

using namespace detail;

void adamw_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamWHyper& hyper, double grad_scale) {
  constexpr std::string_view op = "adamw_update";
  check_floating(param, op, "param");
  check_like(grad, param, param.shape(), op, "grad");
  check_like(m, param, param.shape(), op, "m");
  check_like(v, param, param.shape(), op, "v");
  check_disjoint(op, {{param, "param"}, {m, "m"}, {v, "v"}}, {{grad, "grad"}});
  if (hyper.step < 1) throw Error("adamw_update: step must be >= 1 (1-based), got " + std::to_string(hyper.step));
  if (!(hyper.beta1 >= 0 && hyper.beta1 < 1 && hyper.beta2 >= 0 && hyper.beta2 < 1))
    throw Error("adamw_update: betas must be in [0, 1)");
  if (!(hyper.eps > 0)) throw Error("adamw_update: eps must be > 0");
  on_device(
      param, op,
      [&] {
        with_floating(param.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::adamw_update<T>(param.data<T>(), grad.data<T>(), m.data<T>(), v.data<T>(), param.numel(), hyper,
                               grad_scale);
        });
      },
      [&] {
        cuda::adamw_update<float>(device_data<float>(param), device_data<float>(grad), device_data<float>(m),
                                  device_data<float>(v), param.numel(), hyper, grad_scale);
      });
}

}  // namespace kglm::nn
