#include "nn/ops/soft_align.hpp"

#include "core/error.hpp"
#include "nn/cpu/kernels.hpp"
#include "nn/ops/dispatch.hpp"

namespace kglm::nn {

using namespace detail;

Tensor soft_align_layout(const std::vector<int32_t>& first_lengths, const std::vector<int32_t>& second_lengths,
                         int64_t& weights_size) {
  if (first_lengths.size() != second_lengths.size()) throw Error("soft_align_layout: lengths of unequal counts");
  std::vector<int32_t> layout;
  int64_t row = 0;
  weights_size = 0;
  for (size_t p = 0; p < first_lengths.size(); ++p) {
    const int32_t la = first_lengths[p], lb = second_lengths[p];
    if (la < 1 || lb < 1) throw Error("soft_align_layout: pair " + std::to_string(p) + " has an empty sequence");
    layout.insert(layout.end(), {static_cast<int32_t>(row), la, lb, static_cast<int32_t>(weights_size)});
    row += la + lb;
    weights_size += 2 * int64_t{la} * lb;
  }
  return Tensor::from({static_cast<int64_t>(first_lengths.size()), 4}, layout);
}

namespace {

// Checks x and layout; returns the pairs' count.
int64_t check_pairs(const Tensor& x, const Tensor& layout, const Tensor& weights, std::string_view op) {
  check_floating(x, op, "x");
  check_rank(x, 2, op, "x");
  check_rank(layout, 2, op, "layout");
  check_index(layout, DType::I32, x, {layout.dim(0), 4}, op, "layout");
  check_rank(weights, 1, op, "weights");
  check_like(weights, x, {weights.dim(0)}, op, "weights");
  return layout.dim(0);
}

}  // namespace

void soft_align_forward(const Tensor& x, const Tensor& layout, Tensor& weights, Tensor& aligned) {
  constexpr std::string_view op = "soft_align_forward";
  const int64_t pairs = check_pairs(x, layout, weights, op);
  const int64_t m = x.dim(0), d = x.dim(1);
  check_like(aligned, x, {m, d}, op, "aligned");
  check_disjoint(op, {{aligned, "aligned"}, {weights, "weights"}}, {{x, "x"}, {layout, "layout"}});
  on_device(
      x, op,
      [&] {
        with_floating(x.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::soft_align_forward<T>(x.data<T>(), layout.data<int32_t>(), weights.data<T>(), aligned.data<T>(), pairs,
                                     d);
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::soft_align_forward<T>(device_data<T>(x), device_data<int32_t>(layout), device_data<T>(weights),
                                    device_data<T>(aligned), pairs, m, d, weights.dim(0));
      });
}

void soft_align_backward(const Tensor& daligned, const Tensor& x, const Tensor& layout, const Tensor& weights,
                         Tensor& dweights, Tensor& dx) {
  constexpr std::string_view op = "soft_align_backward";
  const int64_t pairs = check_pairs(x, layout, weights, op);
  const int64_t m = x.dim(0), d = x.dim(1);
  check_like(daligned, x, {m, d}, op, "daligned");
  check_like(dweights, x, weights.shape(), op, "dweights");
  check_like(dx, x, {m, d}, op, "dx");
  check_disjoint(op, {{dx, "dx"}, {dweights, "dweights"}},
                 {{daligned, "daligned"}, {x, "x"}, {layout, "layout"}, {weights, "weights"}});
  on_device(
      x, op,
      [&] {
        with_floating(x.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::soft_align_backward<T>(daligned.data<T>(), x.data<T>(), layout.data<int32_t>(), weights.data<T>(),
                                      dweights.data<T>(), dx.data<T>(), pairs, d);
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::soft_align_backward<T>(device_data<T>(daligned), device_data<T>(x), device_data<int32_t>(layout),
                                     device_data<T>(weights), device_data<T>(dweights), device_data<T>(dx), pairs, m, d,
                                     weights.dim(0));
      });
}

}  // namespace kglm::nn
