#include "nn/ops/char_convolution.hpp"

#include <string>

#include "core/error.hpp"
#include "nn/cpu/kernels.hpp"
#include "nn/ops/dispatch.hpp"

namespace kglm::nn {

using namespace detail;

namespace {

// The arguments both passes share; `out` is out or dout (out_name), of x's dtype and device.
CharConvolutionShape check_conv(const Tensor& x, const Tensor& w, int64_t width, int64_t first, const Tensor& out,
                                std::string_view out_name, const Tensor& argmax, std::string_view op) {
  check_floating(x, op, "x");
  check_rank(x, 3, op, "x");
  check_rank(w, 2, op, "w");
  check_rank(out, 2, op, out_name);
  const CharConvolutionShape d{x.dim(0), x.dim(1), x.dim(2), w.dim(0), width, out.dim(1), first};
  if (width < 1 || width > d.chars)
    throw Error(std::string(op) + ": filter width " + std::to_string(width) + " for words of " +
                std::to_string(d.chars) + " characters");
  check_like(w, x, {d.filters, width * d.embed}, op, "w");
  if (first < 0 || first + d.filters > d.columns)
    throw Error(std::string(op) + ": columns [" + std::to_string(first) + ", " + std::to_string(first + d.filters) +
                ") of " + std::to_string(d.columns));
  check_like(out, x, {d.words, d.columns}, op, out_name);
  check_index(argmax, DType::I32, x, {d.words, d.columns}, op, "argmax");
  return d;
}

}  // namespace

void char_convolution_forward(const Tensor& x, const Tensor& w, const Tensor& b, int64_t width, int64_t first,
                              Tensor& out, Tensor& argmax) {
  constexpr std::string_view op = "char_convolution_forward";
  const CharConvolutionShape d = check_conv(x, w, width, first, out, "out", argmax, op);
  check_like(b, x, {d.filters}, op, "b");
  check_disjoint(op, {{out, "out"}, {argmax, "argmax"}}, {{x, "x"}, {w, "w"}, {b, "b"}});
  on_device(
      x, op,
      [&] {
        with_floating(x.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::char_convolution_forward<T>(x.data<T>(), w.data<T>(), b.data<T>(), d, out.data<T>(),
                                           argmax.data<int32_t>());
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::char_convolution_forward<T>(device_data<T>(x), device_data<T>(w), device_data<T>(b), d,
                                          device_data<T>(out), device_data<int32_t>(argmax));
      });
}

void char_convolution_backward(const Tensor& dout, const Tensor& x, const Tensor& w, const Tensor& argmax,
                               int64_t width, int64_t first, Tensor& dx, Tensor& dw, Tensor& db) {
  constexpr std::string_view op = "char_convolution_backward";
  const CharConvolutionShape d = check_conv(x, w, width, first, dout, "dout", argmax, op);
  if (dx.defined()) check_like(dx, dout, {d.words, d.chars, d.embed}, op, "dx");
  if (dw.defined()) check_wide(dw, dout, {d.filters, width * d.embed}, op, "dw");
  if (db.defined()) check_wide(db, dout, {d.filters}, op, "db");
  check_disjoint(op, {{dx, "dx"}, {dw, "dw"}, {db, "db"}}, {{dout, "dout"}, {x, "x"}, {w, "w"}, {argmax, "argmax"}});
  on_device(
      dout, op,
      [&] {
        with_floating(dout.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::char_convolution_backward<T>(dout.data<T>(), x.data<T>(), w.data<T>(), argmax.data<int32_t>(), d,
                                            data_or_null<T>(dx), data_or_null<T>(dw), data_or_null<T>(db));
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::char_convolution_backward<T>(device_data<T>(dout), device_data<T>(x), device_data<T>(w),
                                           device_data<int32_t>(argmax), d, device_data<T>(dx), device_data<float>(dw),
                                           device_data<float>(db));
      });
}

}  // namespace kglm::nn
