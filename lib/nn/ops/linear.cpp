#include "nn/ops/linear.hpp"

#include "nn/cpu/kernels.hpp"
#include "nn/ops/dispatch.hpp"

namespace kglm::nn {

using namespace detail;

void linear_forward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y) {
  constexpr std::string_view op = "linear_forward";
  check_floating(x, op, "x");
  check_rank(x, 2, op, "x");
  check_rank(w, 2, op, "w");
  const int64_t n = x.dim(0), in = x.dim(1), out = w.dim(0);
  check_like(w, x, {out, in}, op, "w");
  if (b.defined()) check_like(b, x, {out}, op, "b");
  check_like(y, x, {n, out}, op, "y");
  check_disjoint(op, {{y, "y"}}, {{x, "x"}, {w, "w"}, {b, "b"}});
  on_device(
      x, op,
      [&] {
        with_floating(x.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::linear_forward<T>(x.data<T>(), w.data<T>(), data_or_null<T>(b), y.data<T>(), n, in, out);
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::linear_forward<T>(device_data<T>(x), device_data<T>(w), device_data<T>(b), device_data<T>(y), n, in, out);
      });
}

void linear_backward(const Tensor& dy, const Tensor& x, const Tensor& w, Tensor& dx, Tensor& dw, Tensor& db,
                     GradMode dx_mode) {
  constexpr std::string_view op = "linear_backward";
  check_floating(x, op, "x");
  check_rank(x, 2, op, "x");
  check_rank(w, 2, op, "w");
  const int64_t n = x.dim(0), in = x.dim(1), out = w.dim(0);
  check_like(w, x, {out, in}, op, "w");
  check_like(dy, x, {n, out}, op, "dy");
  if (dx.defined()) check_like(dx, x, {n, in}, op, "dx");
  if (dw.defined()) check_wide(dw, x, {out, in}, op, "dw");
  if (db.defined()) check_wide(db, x, {out}, op, "db");
  check_disjoint(op, {{dx, "dx"}, {dw, "dw"}, {db, "db"}}, {{dy, "dy"}, {x, "x"}, {w, "w"}});
  on_device(
      x, op,
      [&] {
        with_floating(x.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::linear_backward<T>(dy.data<T>(), x.data<T>(), w.data<T>(), data_or_null<T>(dx), data_or_null<T>(dw),
                                  data_or_null<T>(db), n, in, out, dx_mode == GradMode::Accumulate);
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::linear_backward<T>(device_data<T>(dy), device_data<T>(x), device_data<T>(w), device_data<T>(dx),
                                 device_data<float>(dw), device_data<float>(db), n, in, out,
                                 dx_mode == GradMode::Accumulate);
      });
}

}  // namespace kglm::nn
