#include "nn/ops/segment_pool.hpp"

#include "nn/cpu/kernels.hpp"
#include "nn/ops/dispatch.hpp"

namespace kglm::nn {

using namespace detail;

void segment_pool_forward(const Tensor& x, const Tensor& segments, Tensor& out, Tensor& argmax) {
  constexpr std::string_view op = "segment_pool_forward";
  check_floating(x, op, "x");
  check_rank(x, 2, op, "x");
  check_rank(segments, 2, op, "segments");
  const int64_t s = segments.dim(0), n = x.dim(0), d = x.dim(1);
  check_index(segments, DType::I32, x, {s, 2}, op, "segments");
  check_like(out, x, {s, 2 * d}, op, "out");
  check_index(argmax, DType::I32, x, {s, d}, op, "argmax");
  check_disjoint(op, {{out, "out"}, {argmax, "argmax"}}, {{x, "x"}, {segments, "segments"}});
  on_device(
      x, op,
      [&] {
        with_floating(x.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::segment_pool_forward<T>(x.data<T>(), segments.data<int32_t>(), out.data<T>(), argmax.data<int32_t>(), n,
                                       s, d);
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::segment_pool_forward<T>(device_data<T>(x), device_data<int32_t>(segments), device_data<T>(out),
                                      device_data<int32_t>(argmax), n, s, d);
      });
}

void segment_pool_backward(const Tensor& dout, const Tensor& segments, const Tensor& argmax, Tensor& dx) {
  constexpr std::string_view op = "segment_pool_backward";
  check_floating(dout, op, "dout");
  check_rank(dout, 2, op, "dout");
  check_rank(segments, 2, op, "segments");
  check_rank(dx, 2, op, "dx");
  const int64_t s = segments.dim(0), n = dx.dim(0), d = dx.dim(1);
  check_index(segments, DType::I32, dout, {s, 2}, op, "segments");
  check_like(dout, dx, {s, 2 * d}, op, "dout");
  check_index(argmax, DType::I32, dout, {s, d}, op, "argmax");
  check_disjoint(op, {{dx, "dx"}}, {{dout, "dout"}, {segments, "segments"}, {argmax, "argmax"}});
  dx.zero();
  on_device(
      dout, op,
      [&] {
        with_floating(dout.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::segment_pool_backward<T>(dout.data<T>(), segments.data<int32_t>(), argmax.data<int32_t>(), dx.data<T>(),
                                        n, s, d);
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::segment_pool_backward<T>(device_data<T>(dout), device_data<int32_t>(segments),
                                       device_data<int32_t>(argmax), device_data<T>(dx), n, s, d);
      });
}

}  // namespace kglm::nn
