#include "nn/ops/outer_product.hpp"

#include "nn/cpu/kernels.hpp"
#include "nn/ops/dispatch.hpp"

namespace kglm::nn {

using namespace detail;

namespace {

// a [N, P] and b [N, Q] on one device; z (or dz) [N, P·Q].
void check_factors(const Tensor& a, const Tensor& b, const Tensor& z, std::string_view op, const char* z_name) {
  check_floating(a, op, "a");
  check_rank(a, 2, op, "a");
  check_rank(b, 2, op, "b");
  check_like(b, a, {a.dim(0), b.dim(1)}, op, "b");
  check_like(z, a, {a.dim(0), a.dim(1) * b.dim(1)}, op, z_name);
}

}  // namespace

void outer_product_forward(const Tensor& a, const Tensor& b, Tensor& z) {
  constexpr std::string_view op = "outer_product_forward";
  check_factors(a, b, z, op, "z");
  const int64_t n = a.dim(0), p = a.dim(1), q = b.dim(1);
  check_disjoint(op, {{z, "z"}}, {{a, "a"}, {b, "b"}});
  on_device(
      a, op,
      [&] {
        with_floating(a.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::outer_product_forward<T>(a.data<T>(), b.data<T>(), z.data<T>(), n, p, q);
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::outer_product_forward<T>(device_data<T>(a), device_data<T>(b), device_data<T>(z), n, p, q);
      });
}

void outer_product_backward(const Tensor& dz, const Tensor& a, const Tensor& b, Tensor& da, Tensor& db) {
  constexpr std::string_view op = "outer_product_backward";
  check_factors(a, b, dz, op, "dz");
  const int64_t n = a.dim(0), p = a.dim(1), q = b.dim(1);
  check_like(da, a, {n, p}, op, "da");
  check_like(db, a, {n, q}, op, "db");
  check_disjoint(op, {{da, "da"}, {db, "db"}}, {{dz, "dz"}, {a, "a"}, {b, "b"}});
  on_device(
      a, op,
      [&] {
        with_floating(a.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::outer_product_backward<T>(dz.data<T>(), a.data<T>(), b.data<T>(), da.data<T>(), db.data<T>(), n, p, q);
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::outer_product_backward<T>(device_data<T>(dz), device_data<T>(a), device_data<T>(b), device_data<T>(da),
                                        device_data<T>(db), n, p, q);
      });
}

}  // namespace kglm::nn
