#include "nn/ops/attention.hpp"

#include <string>

#include "core/error.hpp"
#include "nn/cpu/kernels.hpp"
#include "nn/ops/dispatch.hpp"

namespace kglm::nn {

using namespace detail;

PackedSequences PackedSequences::from_lengths(const std::vector<int64_t>& lengths, uint64_t first_number) {
  PackedSequences p;
  p.first_number = first_number;
  p.offsets.reserve(lengths.size() + 1);
  p.score_offsets.reserve(lengths.size() + 1);
  for (int64_t n : lengths) {
    if (n < 0 || static_cast<uint64_t>(n) > kMaxPackedLength)
      throw Error("packed batch: a sequence of " + std::to_string(n) + " tokens (at most " +
                  std::to_string(kMaxPackedLength) + ")");
    if (p.offsets.back() + n > INT32_MAX) throw Error("packed batch: more than 2³¹ tokens");
    p.offsets.push_back(static_cast<int32_t>(p.offsets.back() + n));
    p.score_offsets.push_back(p.score_offsets.back() + n * n);
    p.max_len = std::max(p.max_len, n);
  }
  return p;
}

std::vector<int64_t> PackedSequences::token_numbers() const {
  std::vector<int64_t> numbers(static_cast<size_t>(tokens()));
  for (int64_t s = 0; s < sequences(); ++s)
    for (int64_t t = 0; t < length(s); ++t)
      numbers[static_cast<size_t>(offsets[static_cast<size_t>(s)] + t)] =
          static_cast<int64_t>(token_number(first_number + static_cast<uint64_t>(s), static_cast<uint64_t>(t)));
  return numbers;
}

namespace {

void check_attention(const PackedSequences& seqs, const AttentionShape& s, float p, const DropoutKey& key,
                     std::string_view op) {
  if (s.heads <= 0 || s.hidden <= 0 || s.hidden % s.heads != 0)
    throw Error(std::string(op) + ": bad shape (heads " + std::to_string(s.heads) + ", hidden " +
                std::to_string(s.hidden) + "): hidden must be a positive multiple of heads");
  if (!(p >= 0 && p < 1)) throw Error(std::string(op) + ": dropout p = " + std::to_string(p) + " is outside [0, 1)");
  if (key.first != 0) throw Error(std::string(op) + ": the dropout key's first element must be 0");
  if (seqs.offsets.empty() || seqs.offsets.front() != 0 || seqs.score_offsets.size() != seqs.offsets.size())
    throw Error(std::string(op) + ": malformed packed sequences");
}

}  // namespace

void attention_forward(const Tensor& qkv, const PackedSequences& seqs, const AttentionShape& shape, float dropout_p,
                       const DropoutKey& key, Tensor& ctx, Tensor& probs, Tensor& drop_mask) {
  constexpr std::string_view op = "attention_forward";
  check_attention(seqs, shape, dropout_p, key, op);
  const int64_t N = seqs.tokens(), H = shape.hidden, P = seqs.score_elements(shape.heads);
  check_floating(qkv, op, "qkv");
  check_shape(qkv, {N, 3 * H}, op, "qkv");
  check_like(ctx, qkv, {N, H}, op, "ctx");
  check_like(probs, qkv, {P}, op, "probs");
  if (dropout_p > 0) check_index(drop_mask, DType::U8, qkv, {P}, op, "drop_mask");
  check_disjoint(op, {{ctx, "ctx"}, {probs, "probs"}, {drop_mask, "drop_mask"}}, {{qkv, "qkv"}});
  on_device(
      qkv, op,
      [&] {
        with_floating(qkv.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::attention_forward<T>(qkv.data<T>(), seqs, shape, dropout_p, key, ctx.data<T>(), probs.data<T>(),
                                    dropout_p > 0 ? drop_mask.data<uint8_t>() : nullptr);
        });
      },
      [&](auto tag) {
        using Storage = decltype(tag);
        cuda::attention_forward<Storage>(device_data<Storage>(qkv), seqs, shape, dropout_p, key,
                                         device_data<Storage>(ctx), device_data<Storage>(probs),
                                         dropout_p > 0 ? device_data<uint8_t>(drop_mask) : nullptr);
      });
}

void attention_backward(const Tensor& dctx, const Tensor& qkv, const Tensor& probs, const Tensor& drop_mask,
                        const PackedSequences& seqs, const AttentionShape& shape, float dropout_p, Tensor& dqkv) {
  constexpr std::string_view op = "attention_backward";
  check_attention(seqs, shape, dropout_p, DropoutKey{}, op);
  const int64_t N = seqs.tokens(), H = shape.hidden, P = seqs.score_elements(shape.heads);
  check_floating(qkv, op, "qkv");
  check_shape(qkv, {N, 3 * H}, op, "qkv");
  check_like(dctx, qkv, {N, H}, op, "dctx");
  check_like(probs, qkv, {P}, op, "probs");
  if (dropout_p > 0) check_index(drop_mask, DType::U8, qkv, {P}, op, "drop_mask");
  check_like(dqkv, qkv, {N, 3 * H}, op, "dqkv");
  check_disjoint(op, {{dqkv, "dqkv"}}, {{dctx, "dctx"}, {qkv, "qkv"}, {probs, "probs"}, {drop_mask, "drop_mask"}});
  on_device(
      qkv, op,
      [&] {
        with_floating(qkv.dtype(), [&](auto zero) {
          using T = decltype(zero);
          cpu::attention_backward<T>(dctx.data<T>(), qkv.data<T>(), probs.data<T>(),
                                     dropout_p > 0 ? drop_mask.data<uint8_t>() : nullptr, seqs, shape, dropout_p,
                                     dqkv.data<T>());
        });
      },
      [&](auto tag) {
        using Storage = decltype(tag);
        cuda::attention_backward<Storage>(device_data<Storage>(dctx), device_data<Storage>(qkv),
                                          device_data<Storage>(probs),
                                          dropout_p > 0 ? device_data<uint8_t>(drop_mask) : nullptr, seqs, shape,
                                          dropout_p, device_data<Storage>(dqkv));
      });
}

}  // namespace kglm::nn
