#include "nn/ops/highway.hpp"

#include "nn/cpu/kernels.hpp"
#include "nn/ops/dispatch.hpp"

namespace kglm::nn {

using namespace detail;

void highway_forward(const Tensor& x, const Tensor& pre, Tensor& y) {
  constexpr std::string_view op = "highway_forward";
  check_floating(x, op, "x");
  check_rank(x, 2, op, "x");
  const int64_t n = x.dim(0), h = x.dim(1);
  check_like(pre, x, {n, 2 * h}, op, "pre");
  check_like(y, x, {n, h}, op, "y");
  check_disjoint(op, {{y, "y"}}, {{x, "x"}, {pre, "pre"}});
  on_device(
      x, op,
      [&] {
        with_floating(x.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::highway_forward<T>(x.data<T>(), pre.data<T>(), y.data<T>(), n, h);
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::highway_forward<T>(device_data<T>(x), device_data<T>(pre), device_data<T>(y), n, h);
      });
}

void highway_backward(const Tensor& dy, const Tensor& x, const Tensor& pre, Tensor& dx, Tensor& dpre,
                      GradMode dx_mode) {
  constexpr std::string_view op = "highway_backward";
  check_floating(x, op, "x");
  check_rank(x, 2, op, "x");
  const int64_t n = x.dim(0), h = x.dim(1);
  check_like(dy, x, {n, h}, op, "dy");
  check_like(pre, x, {n, 2 * h}, op, "pre");
  check_like(dx, x, {n, h}, op, "dx");
  check_like(dpre, x, {n, 2 * h}, op, "dpre");
  check_disjoint(op, {{dx, "dx"}, {dpre, "dpre"}}, {{dy, "dy"}, {x, "x"}, {pre, "pre"}});
  const bool accumulate = dx_mode == GradMode::Accumulate;
  on_device(
      x, op,
      [&] {
        with_floating(x.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::highway_backward<T>(dy.data<T>(), x.data<T>(), pre.data<T>(), dx.data<T>(), dpre.data<T>(), n, h,
                                   accumulate);
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::highway_backward<T>(device_data<T>(dy), device_data<T>(x), device_data<T>(pre), device_data<T>(dx),
                                  device_data<T>(dpre), n, h, accumulate);
      });
}

}  // namespace kglm::nn
