#include "nn/ops/rms_norm.hpp"

#include <string>

#include "core/error.hpp"
#include "nn/cpu/kernels.hpp"
#include "nn/ops/dispatch.hpp"

namespace kglm::nn {

using namespace detail;

void rms_norm_forward(const Tensor& x, const Tensor& gamma, double eps, Tensor& y, Tensor& rstd) {
  constexpr std::string_view op = "rms_norm_forward";
  check_floating(x, op, "x");
  check_rank(x, 2, op, "x");
  const int64_t n = x.dim(0), h = x.dim(1);
  check_like(gamma, x, {h}, op, "gamma");
  check_like(y, x, {n, h}, op, "y");
  check_wide(rstd, x, {n}, op, "rstd");
  if (!(eps >= 0)) throw Error(std::string(op) + ": eps must be >= 0, got " + std::to_string(eps));
  check_same_or_disjoint(y, x, op, "y", "x");  // each row is read before it is written
  check_disjoint(op, {{y, "y"}, {rstd, "rstd"}}, {{gamma, "gamma"}});
  check_disjoint(op, {{rstd, "rstd"}}, {{x, "x"}});
  on_device(
      x, op,
      [&] {
        with_floating(x.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::rms_norm_forward<T>(x.data<T>(), gamma.data<T>(), eps, y.data<T>(), rstd.data<T>(), n, h);
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::rms_norm_forward<T>(device_data<T>(x), device_data<T>(gamma), eps, device_data<T>(y),
                                  device_data<float>(rstd), n, h);
      });
}

void rms_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& rstd, Tensor& dx,
                       Tensor& dgamma, GradMode dx_mode) {
  constexpr std::string_view op = "rms_norm_backward";
  check_floating(x, op, "x");
  check_rank(x, 2, op, "x");
  const int64_t n = x.dim(0), h = x.dim(1);
  check_like(dy, x, {n, h}, op, "dy");
  check_like(gamma, x, {h}, op, "gamma");
  check_wide(rstd, x, {n}, op, "rstd");
  check_like(dx, x, {n, h}, op, "dx");
  if (dgamma.defined()) check_wide(dgamma, x, {h}, op, "dgamma");
  if (dx_mode == GradMode::Overwrite) {
    check_same_or_disjoint(dx, dy, op, "dx", "dy");
  } else {
    check_disjoint(dx, dy, op, "dx", "dy");
  }
  check_disjoint(op, {{dx, "dx"}, {dgamma, "dgamma"}}, {{x, "x"}, {gamma, "gamma"}, {rstd, "rstd"}});
  on_device(
      x, op,
      [&] {
        with_floating(x.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::rms_norm_backward<T>(dy.data<T>(), x.data<T>(), gamma.data<T>(), rstd.data<T>(), dx.data<T>(),
                                    data_or_null<T>(dgamma), n, h, dx_mode == GradMode::Accumulate);
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::rms_norm_backward<T>(device_data<T>(dy), device_data<T>(x), device_data<T>(gamma),
                                   device_data<float>(rstd), device_data<T>(dx), device_data<float>(dgamma), n, h,
                                   dx_mode == GradMode::Accumulate);
      });
}

}  // namespace kglm::nn
