#include "nn/ops/block_scores.hpp"

#include "nn/cpu/kernels.hpp"
#include "nn/ops/dispatch.hpp"

namespace kglm::nn {

using namespace detail;

namespace {

void check_blocks(const Tensor& q, const Tensor& k, const Tensor& starts, const Tensor& lengths, std::string_view op) {
  check_floating(q, op, "q");
  check_rank(q, 2, op, "q");
  check_like(k, q, q.shape(), op, "k");
  check_index(starts, DType::I32, q, {q.dim(0)}, op, "starts");
  check_index(lengths, DType::I32, q, {q.dim(0)}, op, "lengths");
}

}  // namespace

void block_scores_forward(const Tensor& q, const Tensor& k, const Tensor& bias, const Tensor& starts,
                          const Tensor& lengths, Tensor& scores) {
  constexpr std::string_view op = "block_scores_forward";
  check_blocks(q, k, starts, lengths, op);
  const int64_t m = q.dim(0), a = q.dim(1);
  check_rank(scores, 2, op, "scores");
  const int64_t t = scores.dim(1);
  check_like(scores, q, {m, t}, op, "scores");
  if (bias.defined()) check_like(bias, q, {m}, op, "bias");
  check_disjoint(op, {{scores, "scores"}}, {{q, "q"}, {k, "k"}, {bias, "bias"}});
  on_device(
      q, op,
      [&] {
        with_floating(q.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::block_scores_forward<T>(q.data<T>(), k.data<T>(), data_or_null<T>(bias), starts.data<int32_t>(),
                                       lengths.data<int32_t>(), scores.data<T>(), m, a, t);
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::block_scores_forward<T>(device_data<T>(q), device_data<T>(k), device_data<T>(bias),
                                      device_data<int32_t>(starts), device_data<int32_t>(lengths),
                                      device_data<T>(scores), m, a, t);
      });
}

void block_scores_backward(const Tensor& dscores, const Tensor& q, const Tensor& k, const Tensor& starts,
                           const Tensor& lengths, Tensor& dq, Tensor& dk, Tensor& dbias) {
  constexpr std::string_view op = "block_scores_backward";
  check_blocks(q, k, starts, lengths, op);
  const int64_t m = q.dim(0), a = q.dim(1);
  check_rank(dscores, 2, op, "dscores");
  const int64_t t = dscores.dim(1);
  check_like(dscores, q, {m, t}, op, "dscores");
  check_like(dq, q, {m, a}, op, "dq");
  check_like(dk, q, {m, a}, op, "dk");
  if (dbias.defined()) check_like(dbias, q, {m}, op, "dbias");
  check_disjoint(op, {{dq, "dq"}, {dk, "dk"}, {dbias, "dbias"}}, {{dscores, "dscores"}, {q, "q"}, {k, "k"}});
  on_device(
      q, op,
      [&] {
        with_floating(q.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::block_scores_backward<T>(dscores.data<T>(), q.data<T>(), k.data<T>(), starts.data<int32_t>(),
                                        lengths.data<int32_t>(), dq.data<T>(), dk.data<T>(), data_or_null<T>(dbias), m,
                                        a, t);
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::block_scores_backward<T>(device_data<T>(dscores), device_data<T>(q), device_data<T>(k),
                                       device_data<int32_t>(starts), device_data<int32_t>(lengths), device_data<T>(dq),
                                       device_data<T>(dk), device_data<T>(dbias), m, a, t);
      });
}

}  // namespace kglm::nn
