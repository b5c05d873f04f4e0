#include "nn/ops/scalar_mix.hpp"

#include "nn/cpu/kernels.hpp"
#include "nn/ops/dispatch.hpp"

namespace kglm::nn {

using namespace detail;

namespace {

void check_stack(const Tensor& x, const Tensor& rows, std::string_view op, const char* name) {
  check_floating(x, op, "x");
  check_rank(x, 3, op, "x");
  if (x.dim(0) < 1 || x.dim(0) > kMaxMixedLayers)
    throw Error(std::string(op) + ": x holds " + std::to_string(x.dim(0)) + " layers; 1 to " +
                std::to_string(kMaxMixedLayers) + " can be mixed");
  check_like(rows, x, {x.dim(1), x.dim(2)}, op, name);
}

}  // namespace

void scalar_mix_forward(const Tensor& x, const std::vector<float>& coefficients, Tensor& y) {
  constexpr std::string_view op = "scalar_mix_forward";
  check_stack(x, y, op, "y");
  if (static_cast<int64_t>(coefficients.size()) != x.dim(0))
    throw Error(std::string(op) + ": " + std::to_string(coefficients.size()) + " coefficients for " +
                std::to_string(x.dim(0)) + " layers");
  check_disjoint(op, {{y, "y"}}, {{x, "x"}});
  const int64_t layers = x.dim(0), n = x.dim(1) * x.dim(2);
  on_device(
      x, op,
      [&] {
        with_floating(x.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::scalar_mix_forward<T>(x.data<T>(), coefficients.data(), y.data<T>(), layers, n);
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::scalar_mix_forward<T>(device_data<T>(x), coefficients.data(), device_data<T>(y), layers, n);
      });
}

std::vector<double> scalar_mix_dots(const Tensor& dy, const Tensor& x) {
  constexpr std::string_view op = "scalar_mix_dots";
  check_stack(x, dy, op, "dy");
  const int64_t layers = x.dim(0), n = x.dim(1) * x.dim(2);
  std::vector<double> dots(static_cast<size_t>(layers));
  on_device(
      x, op,
      [&] {
        with_floating(x.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::scalar_mix_dots<T>(dy.data<T>(), x.data<T>(), layers, n, dots.data());
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::scalar_mix_dots<T>(device_data<T>(dy), device_data<T>(x), layers, n, dots.data());
      });
  return dots;
}

}  // namespace kglm::nn
