#include "nn/ops/dropout.hpp"

#include <Random123/philox.h>

#include <string>

#include "core/error.hpp"
#include "nn/cpu/kernels.hpp"
#include "nn/ops/dispatch.hpp"

namespace kglm::nn {

using namespace detail;

namespace {

void check_p(float p, std::string_view op) {
  if (!(p >= 0 && p < 1)) throw Error(std::string(op) + ": p = " + std::to_string(p) + " is outside [0, 1)");
}

}  // namespace

void check_dropout_key(const DropoutKey& key, std::string_view op) {
  // A block of 4 elements shares one Philox call: the call's elements must start a block.
  if (key.first % 4 != 0)
    throw Error(std::string(op) + ": dropout key's first element " + std::to_string(key.first) +
                " is not a multiple of 4");
}

bool dropout_keeps(const DropoutKey& key, uint64_t i, float p) {
  r123::Philox4x32 philox;
  const r123::Philox4x32::key_type k = {{static_cast<uint32_t>(key.seed), static_cast<uint32_t>(key.seed >> 32)}};
  const uint64_t block = (key.first + i) / 4;
  const r123::Philox4x32::ctr_type counter = {{static_cast<uint32_t>(key.stream),
                                               static_cast<uint32_t>(key.stream >> 32),
                                               static_cast<uint32_t>(block >> 32), static_cast<uint32_t>(block)}};
  return philox(counter, k).v[i % 4] >= cpu::dropout_threshold(p);
}

void dropout_forward(const Tensor& x, float p, const DropoutKey& key, Tensor& y, Tensor& mask) {
  constexpr std::string_view op = "dropout_forward";
  check_floating(x, op, "x");
  check_p(p, op);
  check_dropout_key(key, op);
  check_like(y, x, x.shape(), op, "y");
  if (p > 0 || mask.defined()) check_index(mask, DType::U8, x, x.shape(), op, "mask");
  check_same_or_disjoint(y, x, op, "y", "x");
  check_disjoint(op, {{mask, "mask"}}, {{x, "x"}, {y, "y"}});
  on_device(
      x, op,
      [&] {
        with_floating(x.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::dropout_forward<T>(x.data<T>(), p, key, y.data<T>(), data_or_null<uint8_t>(mask), x.numel());
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::dropout_forward<T>(device_data<T>(x), p, key, device_data<T>(y), device_data<uint8_t>(mask), x.numel());
      });
}

void dropout_forward(const Tensor& x, float p, const DropoutKey& key, const Tensor& numbers, Tensor& y, Tensor& mask) {
  constexpr std::string_view op = "dropout_forward";
  check_floating(x, op, "x");
  check_rank(x, 2, op, "x");
  check_p(p, op);
  if (key.first != 0) throw Error(std::string(op) + ": a row-numbered key starts at element 0");
  if (p > 0) check_index(numbers, DType::I64, x, {x.dim(0)}, op, "numbers");
  check_like(y, x, x.shape(), op, "y");
  if (p > 0 || mask.defined()) check_index(mask, DType::U8, x, x.shape(), op, "mask");
  check_same_or_disjoint(y, x, op, "y", "x");
  check_disjoint(op, {{mask, "mask"}}, {{x, "x"}, {y, "y"}, {numbers, "numbers"}});
  const int64_t rows = x.dim(0), width = x.dim(1);
  on_device(
      x, op,
      [&] {
        with_floating(x.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::dropout_rows_forward<T>(x.data<T>(), p, key, data_or_null<int64_t>(numbers), y.data<T>(),
                                       data_or_null<uint8_t>(mask), rows, width);
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::dropout_rows_forward<T>(device_data<T>(x), p, key, device_data<int64_t>(numbers), device_data<T>(y),
                                      device_data<uint8_t>(mask), rows, width);
      });
}

void dropout_backward(const Tensor& dy, const Tensor& mask, float p, Tensor& dx) {
  constexpr std::string_view op = "dropout_backward";
  check_floating(dy, op, "dy");
  check_p(p, op);
  check_like(dx, dy, dy.shape(), op, "dx");
  if (p > 0) check_index(mask, DType::U8, dy, dy.shape(), op, "mask");
  check_same_or_disjoint(dx, dy, op, "dx", "dy");
  check_disjoint(op, {{dx, "dx"}}, {{mask, "mask"}});
  on_device(
      dy, op,
      [&] {
        with_floating(dy.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::dropout_backward<T>(dy.data<T>(), p > 0 ? mask.data<uint8_t>() : nullptr, p, dx.data<T>(), dy.numel());
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::dropout_backward<T>(device_data<T>(dy), p > 0 ? device_data<uint8_t>(mask) : nullptr, p,
                                  device_data<T>(dx), dy.numel());
      });
}

}  // namespace kglm::nn
