#include "nn/ops/biased_attention.hpp"

#include <string>

#include "core/error.hpp"
#include "nn/cpu/kernels.hpp"
#include "nn/ops/dispatch.hpp"

namespace kglm::nn {

using namespace detail;

namespace {

void check_biased_shape(const BiasedAttentionShape& s, float p, std::string_view op) {
  if (s.batch < 0 || s.queries < 0 || s.keys <= 0 || s.heads <= 0 || s.head_size <= 0 || s.rows() < s.keys ||
      s.query_offset < 0)
    throw Error(std::string(op) + ": bad shape (batch " + std::to_string(s.batch) + ", queries " +
                std::to_string(s.queries) + ", keys " + std::to_string(s.keys) + " of " + std::to_string(s.rows()) +
                " rows, heads " + std::to_string(s.heads) + ", head size " + std::to_string(s.head_size) +
                ", query offset " + std::to_string(s.query_offset) + ")");
  if (!(p >= 0 && p < 1)) throw Error(std::string(op) + ": dropout p = " + std::to_string(p) + " is outside [0, 1)");
}

}  // namespace

void biased_attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_mask,
                              const Tensor& bias, const BiasedAttentionShape& shape, float dropout_p,
                              const DropoutKey& key, Tensor& ctx, Tensor& probs, Tensor& drop_mask) {
  constexpr std::string_view op = "biased_attention_forward";
  check_biased_shape(shape, dropout_p, op);
  check_dropout_key(key, op);
  const int64_t B = shape.batch, Tq = shape.queries, Tk = shape.keys, A = shape.heads, I = shape.inner();
  check_floating(q, op, "q");
  check_shape(q, {B, Tq, I}, op, "q");
  check_like(k, q, {B, shape.rows(), I}, op, "k");
  check_like(v, q, {B, shape.rows(), I}, op, "v");
  if (key_mask.defined()) check_index(key_mask, DType::I32, q, {B, Tk}, op, "key_mask");
  if (bias.defined()) check_like(bias, q, {A, Tq, Tk}, op, "bias");
  check_like(ctx, q, {B, Tq, I}, op, "ctx");
  check_like(probs, q, {B, A, Tq, Tk}, op, "probs");
  if (dropout_p > 0) check_index(drop_mask, DType::U8, q, {B, A, Tq, Tk}, op, "drop_mask");
  check_disjoint(op, {{ctx, "ctx"}, {probs, "probs"}, {drop_mask, "drop_mask"}},
                 {{q, "q"}, {k, "k"}, {v, "v"}, {key_mask, "key_mask"}, {bias, "bias"}});
  on_device(
      q, op,
      [&] {
        with_floating(q.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::biased_attention_forward<T>(q.data<T>(), k.data<T>(), v.data<T>(), data_or_null<int32_t>(key_mask),
                                           data_or_null<T>(bias), shape, dropout_p, key, ctx.data<T>(), probs.data<T>(),
                                           dropout_p > 0 ? drop_mask.data<uint8_t>() : nullptr);
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        const int32_t* mask = device_data<int32_t>(key_mask);
        if (mask) cuda::check_indices(op, "key_mask", mask, B * Tk, 2, 2);  // 0 (padding) or 1
        cuda::biased_attention_forward<T>(
            device_data<T>(q), device_data<T>(k), device_data<T>(v), mask, device_data<T>(bias), shape, dropout_p, key,
            device_data<T>(ctx), device_data<T>(probs), dropout_p > 0 ? device_data<uint8_t>(drop_mask) : nullptr);
      });
}

void biased_attention_backward(const Tensor& dctx, const Tensor& q, const Tensor& k, const Tensor& v,
                               const Tensor& probs, const Tensor& drop_mask, const BiasedAttentionShape& shape,
                               float dropout_p, Tensor& dq, Tensor& dk, Tensor& dv, Tensor& dscores) {
  constexpr std::string_view op = "biased_attention_backward";
  check_biased_shape(shape, dropout_p, op);
  if (shape.rows() != shape.keys)
    throw Error(std::string(op) + ": keys read from a cache (" + std::to_string(shape.keys) + " of " +
                std::to_string(shape.rows()) + " rows) have no backward pass");
  const int64_t B = shape.batch, Tq = shape.queries, Tk = shape.keys, A = shape.heads, I = shape.inner();
  check_floating(q, op, "q");
  check_shape(q, {B, Tq, I}, op, "q");
  check_like(k, q, {B, Tk, I}, op, "k");
  check_like(v, q, {B, Tk, I}, op, "v");
  check_like(dctx, q, {B, Tq, I}, op, "dctx");
  check_like(probs, q, {B, A, Tq, Tk}, op, "probs");
  if (dropout_p > 0) check_index(drop_mask, DType::U8, q, {B, A, Tq, Tk}, op, "drop_mask");
  check_like(dq, q, {B, Tq, I}, op, "dq");
  check_like(dk, q, {B, Tk, I}, op, "dk");
  check_like(dv, q, {B, Tk, I}, op, "dv");
  if (dscores.defined()) check_like(dscores, q, {B, A, Tq, Tk}, op, "dscores");
  check_disjoint(op, {{dq, "dq"}, {dk, "dk"}, {dv, "dv"}, {dscores, "dscores"}},
                 {{dctx, "dctx"}, {q, "q"}, {k, "k"}, {v, "v"}, {probs, "probs"}, {drop_mask, "drop_mask"}});
  on_device(
      q, op,
      [&] {
        with_floating(q.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::biased_attention_backward<T>(dctx.data<T>(), q.data<T>(), k.data<T>(), v.data<T>(), probs.data<T>(),
                                            dropout_p > 0 ? drop_mask.data<uint8_t>() : nullptr, shape, dropout_p,
                                            dq.data<T>(), dk.data<T>(), dv.data<T>(), data_or_null<T>(dscores));
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::biased_attention_backward<T>(
            device_data<T>(dctx), device_data<T>(q), device_data<T>(k), device_data<T>(v), device_data<T>(probs),
            dropout_p > 0 ? device_data<uint8_t>(drop_mask) : nullptr, shape, dropout_p, device_data<T>(dq),
            device_data<T>(dk), device_data<T>(dv), device_data<T>(dscores));
      });
}

void relative_bias_forward(const Tensor& buckets_of, const Tensor& table, Tensor& bias) {
  constexpr std::string_view op = "relative_bias_forward";
  check_floating(table, op, "table");
  check_rank(table, 2, op, "table");
  check_rank(buckets_of, 2, op, "buckets_of");
  const int64_t tq = buckets_of.dim(0), tk = buckets_of.dim(1), heads = table.dim(1);
  check_index(buckets_of, DType::I32, table, {tq, tk}, op, "buckets_of");
  check_like(bias, table, {heads, tq, tk}, op, "bias");
  check_disjoint(op, {{bias, "bias"}}, {{table, "table"}, {buckets_of, "buckets_of"}});
  on_device(
      table, op,
      [&] {
        with_floating(table.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::relative_bias_forward<T>(buckets_of.data<int32_t>(), table.data<T>(), table.dim(0), heads, tq, tk,
                                        bias.data<T>());
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        const int32_t* b = device_data<int32_t>(buckets_of);
        cuda::check_indices(op, "buckets_of", b, tq * tk, table.dim(0), static_cast<int32_t>(table.dim(0)));
        cuda::relative_bias_forward<T>(b, device_data<T>(table), heads, tq, tk, device_data<T>(bias));
      });
}

void relative_bias_backward(const Tensor& dscores, const Tensor& buckets_of, Tensor& dtable) {
  constexpr std::string_view op = "relative_bias_backward";
  check_floating(dscores, op, "dscores");
  check_rank(dscores, 4, op, "dscores");
  const int64_t batch = dscores.dim(0), heads = dscores.dim(1), tq = dscores.dim(2), tk = dscores.dim(3);
  check_index(buckets_of, DType::I32, dscores, {tq, tk}, op, "buckets_of");
  check_rank(dtable, 2, op, "dtable");
  const int64_t buckets = dtable.dim(0);
  check_wide(dtable, dscores, {buckets, heads}, op, "dtable");  // a parameter gradient
  check_disjoint(op, {{dtable, "dtable"}}, {{dscores, "dscores"}, {buckets_of, "buckets_of"}});
  on_device(
      dscores, op,
      [&] {
        with_floating(dscores.dtype(), [&](auto zero) {
          using T = decltype(zero);
          const int32_t* b = buckets_of.data<int32_t>();
          // Checked here so that a bad bucket fails before anything is accumulated.
          for (int64_t i = 0; i < tq * tk; ++i)
            if (b[i] < 0 || b[i] >= buckets)
              throw Error(std::string(op) + ": bucket " + std::to_string(b[i]) + " is outside [0, " +
                          std::to_string(buckets) + ")");
          cpu::relative_bias_backward<T>(dscores.data<T>(), b, batch, heads, tq, tk, dtable.data<T>());
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        const int32_t* b = device_data<int32_t>(buckets_of);
        cuda::check_indices(op, "buckets_of", b, tq * tk, buckets, static_cast<int32_t>(buckets));
        cuda::relative_bias_backward<T>(device_data<T>(dscores), b, batch, heads, tq, tk, buckets,
                                        device_data<float>(dtable));
      });
}

}  // namespace kglm::nn
