#include "nn/ops/layer_norm.hpp"

#include <string>

#include "core/error.hpp"
#include "nn/cpu/kernels.hpp"
#include "nn/ops/dispatch.hpp"

namespace kglm::nn {

using namespace detail;

namespace {

// The LayerNorm of x, or (residual defined) of x + residual, that sum written to `sum`.
void layer_norm_forward_checked(std::string_view op, const Tensor& x, const Tensor& residual, Tensor& sum,
                                const Tensor& gamma, const Tensor& beta, double eps, Tensor& y, Tensor& mean,
                                Tensor& rstd) {
  check_floating(x, op, "x");
  check_rank(x, 2, op, "x");
  const int64_t n = x.dim(0), h = x.dim(1);
  check_like(gamma, x, {h}, op, "gamma");
  check_like(beta, x, {h}, op, "beta");
  check_like(y, x, {n, h}, op, "y");
  check_wide(mean, x, {n}, op, "mean");
  check_wide(rstd, x, {n}, op, "rstd");
  if (!(eps >= 0)) throw Error(std::string(op) + ": eps must be >= 0, got " + std::to_string(eps));
  const bool fused = residual.defined();
  if (fused) {
    check_like(residual, x, {n, h}, op, "residual");
    check_like(sum, x, {n, h}, op, "sum");
    // sum may be x or residual itself (each element is read before it is written); y is saved
    // apart from the sum, which the backward pass reads.
    check_same_or_disjoint(sum, x, op, "sum", "x");
    check_same_or_disjoint(sum, residual, op, "sum", "residual");
    check_disjoint(op, {{y, "y"}}, {{x, "x"}, {residual, "residual"}, {sum, "sum"}});
  } else {
    check_same_or_disjoint(y, x, op, "y", "x");  // each row is read before it is written
  }
  check_disjoint(op, {{y, "y"}, {mean, "mean"}, {rstd, "rstd"}}, {{gamma, "gamma"}, {beta, "beta"}});
  check_disjoint(op, {{mean, "mean"}, {rstd, "rstd"}}, {{x, "x"}, {residual, "residual"}, {sum, "sum"}});
  on_device(
      x, op,
      [&] {
        with_floating(x.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::layer_norm_forward<T>(x.data<T>(), data_or_null<T>(residual), fused ? sum.data<T>() : nullptr,
                                     gamma.data<T>(), beta.data<T>(), eps, y.data<T>(), mean.data<T>(), rstd.data<T>(),
                                     n, h);
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::layer_norm_forward<T>(device_data<T>(x), device_data<T>(residual), fused ? device_data<T>(sum) : nullptr,
                                    device_data<T>(gamma), device_data<T>(beta), eps, device_data<T>(y),
                                    device_data<float>(mean), device_data<float>(rstd), n, h);
      });
}

}  // namespace

void layer_norm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps, Tensor& y, Tensor& mean,
                        Tensor& rstd) {
  Tensor none;
  layer_norm_forward_checked("layer_norm_forward", x, none, none, gamma, beta, eps, y, mean, rstd);
}

void add_layer_norm_forward(const Tensor& x, const Tensor& residual, const Tensor& gamma, const Tensor& beta,
                            double eps, Tensor& sum, Tensor& y, Tensor& mean, Tensor& rstd) {
  check_defined(residual, "add_layer_norm_forward", "residual");
  layer_norm_forward_checked("add_layer_norm_forward", x, residual, sum, gamma, beta, eps, y, mean, rstd);
}

void layer_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean, const Tensor& rstd,
                         Tensor& dx, Tensor& dgamma, Tensor& dbeta, GradMode dx_mode) {
  constexpr std::string_view op = "layer_norm_backward";
  check_floating(x, op, "x");
  check_rank(x, 2, op, "x");
  const int64_t n = x.dim(0), h = x.dim(1);
  check_like(dy, x, {n, h}, op, "dy");
  check_like(gamma, x, {h}, op, "gamma");
  check_wide(mean, x, {n}, op, "mean");
  check_wide(rstd, x, {n}, op, "rstd");
  check_like(dx, x, {n, h}, op, "dx");
  if (dgamma.defined()) check_wide(dgamma, x, {h}, op, "dgamma");
  if (dbeta.defined()) check_wide(dbeta, x, {h}, op, "dbeta");
  // dx may be dy itself (each row of dy is read before it is written).
  check_same_or_disjoint(dx, dy, op, "dx", "dy");
  check_disjoint(op, {{dx, "dx"}, {dgamma, "dgamma"}, {dbeta, "dbeta"}},
                 {{x, "x"}, {gamma, "gamma"}, {mean, "mean"}, {rstd, "rstd"}});
  check_disjoint(op, {{dgamma, "dgamma"}, {dbeta, "dbeta"}}, {{dy, "dy"}});
  on_device(
      x, op,
      [&] {
        with_floating(x.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::layer_norm_backward<T>(dy.data<T>(), x.data<T>(), gamma.data<T>(), mean.data<T>(), rstd.data<T>(),
                                      dx.data<T>(), data_or_null<T>(dgamma), data_or_null<T>(dbeta), n, h,
                                      dx_mode == GradMode::Accumulate);
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::layer_norm_backward<T>(device_data<T>(dy), device_data<T>(x), device_data<T>(gamma),
                                     device_data<float>(mean), device_data<float>(rstd), device_data<T>(dx),
                                     device_data<float>(dgamma), device_data<float>(dbeta), n, h,
                                     dx_mode == GradMode::Accumulate);
      });
}

}  // namespace kglm::nn
