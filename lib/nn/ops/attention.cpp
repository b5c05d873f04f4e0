#include "nn/ops/attention.hpp"

#include <string>

#include "core/error.hpp"
#include "nn/cpu/kernels.hpp"
#include "nn/ops/dispatch.hpp"

namespace kglm::nn {

using namespace detail;

namespace {

void check_attention_shape(const AttentionShape& s, float p, std::string_view op) {
  if (s.batch < 0 || s.seq < 0 || s.heads <= 0 || s.hidden <= 0 || s.hidden % s.heads != 0)
    throw Error(std::string(op) + ": bad shape (batch " + std::to_string(s.batch) + ", seq " + std::to_string(s.seq) +
                ", heads " + std::to_string(s.heads) + ", hidden " + std::to_string(s.hidden) +
                "): hidden must be a positive multiple of heads");
  if (!(p >= 0 && p < 1)) throw Error(std::string(op) + ": dropout p = " + std::to_string(p) + " is outside [0, 1)");
}

}  // namespace

void attention_forward(const Tensor& qkv, const Tensor& key_mask, const AttentionShape& shape, float dropout_p,
                       const DropoutKey& key, Tensor& ctx, Tensor& probs, Tensor& drop_mask) {
  constexpr std::string_view op = "attention_forward";
  check_attention_shape(shape, dropout_p, op);
  check_dropout_key(key, op);
  const int64_t B = shape.batch, T = shape.seq, A = shape.heads, H = shape.hidden;
  check_floating(qkv, op, "qkv");
  check_shape(qkv, {B, T, 3 * H}, op, "qkv");
  check_index(key_mask, DType::I32, qkv, {B, T}, op, "key_mask");
  check_like(ctx, qkv, {B, T, H}, op, "ctx");
  check_like(probs, qkv, {B, A, T, T}, op, "probs");
  if (dropout_p > 0) check_index(drop_mask, DType::U8, qkv, {B, A, T, T}, op, "drop_mask");
  check_disjoint(op, {{ctx, "ctx"}, {probs, "probs"}, {drop_mask, "drop_mask"}},
                 {{qkv, "qkv"}, {key_mask, "key_mask"}});
  on_device(
      qkv, op,
      [&] {
        with_floating(qkv.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::attention_forward<T>(qkv.data<T>(), key_mask.data<int32_t>(), shape, dropout_p, key, ctx.data<T>(),
                                    probs.data<T>(), dropout_p > 0 ? drop_mask.data<uint8_t>() : nullptr);
        });
      },
      [&](auto tag) {
        using Storage = decltype(tag);
        const int32_t* mask = device_data<int32_t>(key_mask);
        cuda::check_indices(op, "key_mask", mask, B * T, 2, 2);  // 0 (padding) or 1
        cuda::attention_forward<Storage>(device_data<Storage>(qkv), mask, shape, dropout_p, key,
                                         device_data<Storage>(ctx), device_data<Storage>(probs),
                                         dropout_p > 0 ? device_data<uint8_t>(drop_mask) : nullptr);
      });
}

void attention_backward(const Tensor& dctx, const Tensor& qkv, const Tensor& probs, const Tensor& drop_mask,
                        const AttentionShape& shape, float dropout_p, Tensor& dqkv) {
  constexpr std::string_view op = "attention_backward";
  check_attention_shape(shape, dropout_p, op);
  const int64_t B = shape.batch, T = shape.seq, A = shape.heads, H = shape.hidden;
  check_floating(qkv, op, "qkv");
  check_shape(qkv, {B, T, 3 * H}, op, "qkv");
  check_like(dctx, qkv, {B, T, H}, op, "dctx");
  check_like(probs, qkv, {B, A, T, T}, op, "probs");
  if (dropout_p > 0) check_index(drop_mask, DType::U8, qkv, {B, A, T, T}, op, "drop_mask");
  check_like(dqkv, qkv, {B, T, 3 * H}, op, "dqkv");
  check_disjoint(op, {{dqkv, "dqkv"}}, {{dctx, "dctx"}, {qkv, "qkv"}, {probs, "probs"}, {drop_mask, "drop_mask"}});
  on_device(
      qkv, op,
      [&] {
        with_floating(qkv.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::attention_backward<T>(dctx.data<T>(), qkv.data<T>(), probs.data<T>(),
                                     dropout_p > 0 ? drop_mask.data<uint8_t>() : nullptr, shape, dropout_p,
                                     dqkv.data<T>());
        });
      },
      [&](auto tag) {
        using Storage = decltype(tag);
        cuda::attention_backward<Storage>(
            device_data<Storage>(dctx), device_data<Storage>(qkv), device_data<Storage>(probs),
            dropout_p > 0 ? device_data<uint8_t>(drop_mask) : nullptr, shape, dropout_p, device_data<Storage>(dqkv));
      });
}

}  // namespace kglm::nn
