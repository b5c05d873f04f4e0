#include "nn/ops/biased_attention.hpp"

#include <string>

#include "core/error.hpp"
#include "nn/cpu/kernels.hpp"
#include "nn/ops/dispatch.hpp"
#include "nn/ops/index_range.hpp"

namespace kglm::nn {

using namespace detail;

AttentionPairs::AttentionPairs(const PackedSequences& q, const PackedSequences& k) : queries(&q), keys(&k) {
  if (q.sequences() != k.sequences())
    throw Error("attention: " + std::to_string(q.sequences()) + " query sequences and " +
                std::to_string(k.sequences()) + " key sequences");
  score_offsets.reserve(q.offsets.size());
  for (int64_t s = 0; s < q.sequences(); ++s) score_offsets.push_back(score_offsets.back() + q.length(s) * k.length(s));
}

namespace {

// The checks both passes share; returns the rows k and v must have.
int64_t check_biased(const AttentionPairs& pairs, const BiasedAttentionShape& s, float p, std::string_view op) {
  const PackedSequences &queries = *pairs.queries, &keys = *pairs.keys;
  if (s.heads <= 0 || s.head_size <= 0 || s.query_offset < 0 || s.key_stride < 0)
    throw Error(std::string(op) + ": bad shape (heads " + std::to_string(s.heads) + ", head size " +
                std::to_string(s.head_size) + ", query offset " + std::to_string(s.query_offset) + ", key stride " +
                std::to_string(s.key_stride) + ")");
  if (!(p >= 0 && p < 1)) throw Error(std::string(op) + ": dropout p = " + std::to_string(p) + " is outside [0, 1)");
  for (const PackedSequences* seqs : {&queries, &keys})
    if (seqs->offsets.empty() || seqs->offsets.front() != 0)
      throw Error(std::string(op) + ": malformed packed sequences");
  if (pairs.score_offsets.size() != queries.offsets.size())
    throw Error(std::string(op) + ": the attention pairs were made for other sequences");
  if (s.key_stride == 0) return keys.tokens();
  if (keys.max_len > s.key_stride)
    throw Error(std::string(op) + ": " + std::to_string(keys.max_len) + " keys in a cache of " +
                std::to_string(s.key_stride) + " rows per sequence");
  return keys.sequences() * s.key_stride;
}

}  // namespace

void biased_attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& bias,
                              const AttentionPairs& pairs, const BiasedAttentionShape& shape, float dropout_p,
                              const DropoutKey& key, Tensor& ctx, Tensor& probs, Tensor& drop_mask) {
  constexpr std::string_view op = "biased_attention_forward";
  const int64_t key_rows = check_biased(pairs, shape, dropout_p, op);
  check_dropout_key(key, op);
  if (key.first != 0) throw Error(std::string(op) + ": the dropout key's first element must be 0");
  const int64_t Nq = pairs.queries->tokens(), A = shape.heads, I = shape.inner(), P = pairs.score_elements(A);
  check_floating(q, op, "q");
  check_shape(q, {Nq, I}, op, "q");
  check_like(k, q, {key_rows, I}, op, "k");
  check_like(v, q, {key_rows, I}, op, "v");
  int64_t bias_queries = 0, bias_keys = 0;
  if (bias.defined()) {
    check_rank(bias, 3, op, "bias");
    bias_queries = bias.dim(1);
    bias_keys = bias.dim(2);
    check_like(bias, q, {A, bias_queries, bias_keys}, op, "bias");
    if (bias_queries < pairs.queries->max_len || bias_keys < pairs.keys->max_len)
      throw Error(std::string(op) + ": a bias of " + std::to_string(bias_queries) + " × " + std::to_string(bias_keys) +
                  " for sequences of up to " + std::to_string(pairs.queries->max_len) + " queries and " +
                  std::to_string(pairs.keys->max_len) + " keys");
  }
  check_like(ctx, q, {Nq, I}, op, "ctx");
  check_like(probs, q, {P}, op, "probs");
  if (dropout_p > 0) check_index(drop_mask, DType::U8, q, {P}, op, "drop_mask");
  check_disjoint(op, {{ctx, "ctx"}, {probs, "probs"}, {drop_mask, "drop_mask"}},
                 {{q, "q"}, {k, "k"}, {v, "v"}, {bias, "bias"}});
  on_device(
      q, op,
      [&] {
        with_floating(q.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::biased_attention_forward<T>(q.data<T>(), k.data<T>(), v.data<T>(), data_or_null<T>(bias), bias_queries,
                                           bias_keys, pairs, shape, dropout_p, key, ctx.data<T>(), probs.data<T>(),
                                           dropout_p > 0 ? drop_mask.data<uint8_t>() : nullptr);
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::biased_attention_forward<T>(device_data<T>(q), device_data<T>(k), device_data<T>(v), device_data<T>(bias),
                                          bias_queries, bias_keys, pairs, shape, dropout_p, key, device_data<T>(ctx),
                                          device_data<T>(probs),
                                          dropout_p > 0 ? device_data<uint8_t>(drop_mask) : nullptr);
      });
}

void biased_attention_backward(const Tensor& dctx, const Tensor& q, const Tensor& k, const Tensor& v,
                               const Tensor& probs, const Tensor& drop_mask, const AttentionPairs& pairs,
                               const BiasedAttentionShape& shape, float dropout_p, Tensor& dq, Tensor& dk, Tensor& dv,
                               Tensor& dscores) {
  constexpr std::string_view op = "biased_attention_backward";
  check_biased(pairs, shape, dropout_p, op);
  if (shape.key_stride != 0) throw Error(std::string(op) + ": keys read from a cache have no backward pass");
  const int64_t Nq = pairs.queries->tokens(), Nk = pairs.keys->tokens(), I = shape.inner(),
                P = pairs.score_elements(shape.heads);
  check_floating(q, op, "q");
  check_shape(q, {Nq, I}, op, "q");
  check_like(k, q, {Nk, I}, op, "k");
  check_like(v, q, {Nk, I}, op, "v");
  check_like(dctx, q, {Nq, I}, op, "dctx");
  check_like(probs, q, {P}, op, "probs");
  if (dropout_p > 0) check_index(drop_mask, DType::U8, q, {P}, op, "drop_mask");
  check_like(dq, q, {Nq, I}, op, "dq");
  check_like(dk, q, {Nk, I}, op, "dk");
  check_like(dv, q, {Nk, I}, op, "dv");
  if (dscores.defined()) check_like(dscores, q, {P}, op, "dscores");
  check_disjoint(op, {{dq, "dq"}, {dk, "dk"}, {dv, "dv"}, {dscores, "dscores"}},
                 {{dctx, "dctx"}, {q, "q"}, {k, "k"}, {v, "v"}, {probs, "probs"}, {drop_mask, "drop_mask"}});
  on_device(
      q, op,
      [&] {
        with_floating(q.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::biased_attention_backward<T>(dctx.data<T>(), q.data<T>(), k.data<T>(), v.data<T>(), probs.data<T>(),
                                            dropout_p > 0 ? drop_mask.data<uint8_t>() : nullptr, pairs, shape,
                                            dropout_p, dq.data<T>(), dk.data<T>(), dv.data<T>(),
                                            data_or_null<T>(dscores));
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        cuda::biased_attention_backward<T>(
            device_data<T>(dctx), device_data<T>(q), device_data<T>(k), device_data<T>(v), device_data<T>(probs),
            dropout_p > 0 ? device_data<uint8_t>(drop_mask) : nullptr, pairs, shape, dropout_p, device_data<T>(dq),
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
        cuda::check_indices(op, "buckets_of", b, tq * tk, IndexRange::rows(table.dim(0)));
        cuda::relative_bias_forward<T>(b, device_data<T>(table), heads, tq, tk, device_data<T>(bias));
      });
}

void relative_bias_backward(const Tensor& dscores, const AttentionPairs& pairs, const Tensor& buckets_of,
                            Tensor& dtable) {
  constexpr std::string_view op = "relative_bias_backward";
  check_floating(dscores, op, "dscores");
  check_rank(dtable, 2, op, "dtable");
  const int64_t buckets = dtable.dim(0), heads = dtable.dim(1);
  check_shape(dscores, {pairs.score_elements(heads)}, op, "dscores");
  check_rank(buckets_of, 2, op, "buckets_of");
  const int64_t tq = buckets_of.dim(0), tk = buckets_of.dim(1);
  check_index(buckets_of, DType::I32, dscores, {tq, tk}, op, "buckets_of");
  if (tq < pairs.queries->max_len || tk < pairs.keys->max_len)
    throw Error(std::string(op) + ": buckets for " + std::to_string(tq) + " × " + std::to_string(tk) +
                " positions, sequences of up to " + std::to_string(pairs.queries->max_len) + " × " +
                std::to_string(pairs.keys->max_len));
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
            if (!IndexRange::rows(buckets).accepts(b[i]))
              throw Error(std::string(op) + ": bucket " + std::to_string(b[i]) + " is outside [0, " +
                          std::to_string(buckets) + ")");
          cpu::relative_bias_backward<T>(dscores.data<T>(), pairs, b, tk, heads, dtable.data<T>());
        });
      },
      [&](auto tag) {
        using T = decltype(tag);
        const int32_t* b = device_data<int32_t>(buckets_of);
        cuda::check_indices(op, "buckets_of", b, tq * tk, IndexRange::rows(buckets));
        cuda::relative_bias_backward<T>(device_data<T>(dscores), pairs, b, tq, tk, heads, buckets,
                                        device_data<float>(dtable));
      });
}

}  // namespace kglm::nn
