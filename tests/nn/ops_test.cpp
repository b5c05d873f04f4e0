// Tests of the ops: finite-difference gradient checks in double, F32 on every device (CPU, and
// CUDA where a GPU is present) against F64 on the CPU, the same random bits and reruns on every
// device, and the semantics the op headers promise (accumulation, aliasing, dropout masks,
// determinism across thread counts, padding, ignored targets, AdamW, argument errors).
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "nn/convert.hpp"
#include "nn/cpu/kernels.hpp"
#include "nn/cuda/runtime.hpp"
#include "nn/ops/activation.hpp"
#include "nn/ops/adamw.hpp"
#include "nn/ops/attention.hpp"
#include "nn/ops/biased_attention.hpp"
#include "nn/ops/cross_entropy.hpp"
#include "nn/ops/dropout.hpp"
#include "nn/ops/elementwise.hpp"
#include "nn/ops/embedding.hpp"
#include "nn/ops/index_range.hpp"
#include "nn/ops/layer_norm.hpp"
#include "nn/ops/linear.hpp"
#include "nn/ops/rms_norm.hpp"
#include "nn/t5.hpp"
#include "ops_test_util.hpp"

namespace kglm::nn {
namespace {

// --- finite-difference gradient checks (F64) -----------------------------------------------------

TEST(OpsGradient, Linear) {
  for (bool bias : {true, false}) {
    SCOPED_TRACE(bias ? "with bias" : "without bias");
    const int64_t n = 4, in = 5, out = 3;
    Tensor x = random({n, in}, 1), w = random({out, in}, 2), b = bias ? random({out}, 3) : Tensor();
    Tensor wy = random({n, out}, 4), y = Tensor::empty({n, out}, DType::F64);
    auto objective = [&] {
      linear_forward(x, w, b, y);
      return dot(wy, y);
    };
    Tensor dx = filled({n, in}, DType::F64, 9), dw = Tensor::zeros({out, in}, DType::F64);
    Tensor db = bias ? Tensor::zeros({out}, DType::F64) : Tensor();
    linear_backward(wy, x, w, dx, dw, db);
    expect_gradient("dx", x, dx, objective);
    expect_gradient("dw", w, dw, objective);
    if (bias) expect_gradient("db", b, db, objective);

    // Accumulate: dx adds to what is there; dw and db always add.
    Tensor base = random({n, in}, 5), dx_acc = base.clone();
    linear_backward(wy, x, w, dx_acc, dw, db, GradMode::Accumulate);
    for (int64_t i = 0; i < dx.numel(); ++i) EXPECT_NEAR(get(dx_acc, i), get(base, i) + get(dx, i), 1e-12);
    Tensor dw1 = Tensor::zeros({out, in}, DType::F64), none;
    linear_backward(wy, x, w, none, dw1, none);
    for (int64_t i = 0; i < dw.numel(); ++i) EXPECT_NEAR(get(dw, i), 2 * get(dw1, i), 1e-12);
  }
}

TEST(OpsGradient, Embedding) {
  const int64_t v = 6, h = 4;
  Tensor table = random({v, h}, 10), id = ids({7}, {1, 3, 1, 5, 1, 0, 3});
  Tensor wy = random({7, h}, 11), out = Tensor::empty({7, h}, DType::F64);
  auto objective = [&] {
    embedding_forward(id, table, out);
    return dot(wy, out);
  };
  Tensor dtable = Tensor::zeros({v, h}, DType::F64);
  embedding_backward(id, wy, dtable);
  expect_gradient("dtable", table, dtable, objective);
  for (int64_t j = 0; j < h; ++j) EXPECT_EQ(get(dtable, 2 * h + j), 0.0) << "row 2 is never looked up";

  Tensor base = random({7, h}, 12), acc = base.clone();
  embedding_forward(id, table, acc, GradMode::Accumulate);
  embedding_forward(id, table, out);
  for (int64_t i = 0; i < acc.numel(); ++i) EXPECT_EQ(get(acc, i), get(base, i) + get(out, i));
}

TEST(OpsGradient, LayerNorm) {
  const int64_t n = 3, h = 7;
  Tensor x = random({n, h}, 20, 1, 3), gamma = random({h}, 21, 0.5, 1.5), beta = random({h}, 22);
  Tensor wy = random({n, h}, 23), y = Tensor::empty({n, h}, DType::F64);
  Tensor mean = Tensor::empty({n}, DType::F64), rstd = Tensor::empty({n}, DType::F64);
  auto objective = [&] {
    layer_norm_forward(x, gamma, beta, 1e-5, y, mean, rstd);
    return dot(wy, y);
  };
  objective();
  Tensor dx = Tensor::empty({n, h}, DType::F64);
  Tensor dgamma = Tensor::zeros({h}, DType::F64), dbeta = Tensor::zeros({h}, DType::F64);
  layer_norm_backward(wy, x, gamma, mean, rstd, dx, dgamma, dbeta);
  expect_gradient("dx", x, dx, objective);
  expect_gradient("dgamma", gamma, dgamma, objective);
  expect_gradient("dbeta", beta, dbeta, objective);

  // dx Accumulate adds; dgamma and dbeta always add.
  objective();
  Tensor base = random({n, h}, 24), dx_acc = base.clone();
  layer_norm_backward(wy, x, gamma, mean, rstd, dx_acc, dgamma, dbeta, GradMode::Accumulate);
  for (int64_t i = 0; i < dx.numel(); ++i) EXPECT_NEAR(get(dx_acc, i), get(base, i) + get(dx, i), 1e-12);
  Tensor dgamma1 = Tensor::zeros({h}, DType::F64), dbeta1 = Tensor::zeros({h}, DType::F64);
  layer_norm_backward(wy, x, gamma, mean, rstd, dx, dgamma1, dbeta1);
  for (int64_t j = 0; j < h; ++j) {
    EXPECT_NEAR(get(dgamma, j), 2 * get(dgamma1, j), 1e-12);
    EXPECT_NEAR(get(dbeta, j), 2 * get(dbeta1, j), 1e-12);
  }
}

TEST(OpsGradient, RmsNorm) {
  const int64_t n = 3, h = 7;
  Tensor x = random({n, h}, 25, -2, 2), gamma = random({h}, 26, 0.5, 1.5);
  Tensor wy = random({n, h}, 27), y = Tensor::empty({n, h}, DType::F64), rstd = Tensor::empty({n}, DType::F64);
  auto objective = [&] {
    rms_norm_forward(x, gamma, 1e-6, y, rstd);
    return dot(wy, y);
  };
  objective();
  // y = x / sqrt(mean(x²) + eps) · γ, row by row.
  for (int64_t r = 0; r < n; ++r) {
    double ms = 0;
    for (int64_t j = 0; j < h; ++j) ms += get(x, r * h + j) * get(x, r * h + j) / h;
    for (int64_t j = 0; j < h; ++j)
      EXPECT_NEAR(get(y, r * h + j), get(x, r * h + j) / std::sqrt(ms + 1e-6) * get(gamma, j), 1e-12);
  }
  Tensor dx = Tensor::empty({n, h}, DType::F64), dgamma = Tensor::zeros({h}, DType::F64);
  rms_norm_backward(wy, x, gamma, rstd, dx, dgamma);
  expect_gradient("dx", x, dx, objective);
  expect_gradient("dgamma", gamma, dgamma, objective);
  Tensor base = random({n, h}, 28), dx_acc = base.clone(), none;
  rms_norm_backward(wy, x, gamma, rstd, dx_acc, none, GradMode::Accumulate);
  for (int64_t i = 0; i < dx.numel(); ++i) EXPECT_NEAR(get(dx_acc, i), get(base, i) + get(dx, i), 1e-12);
}

TEST(OpsGradient, ReluGeluTanhAndMultiply) {
  // Away from 0, where ReLU has no derivative.
  Tensor x = random({4, 6}, 32, 0.05, 3), wy = random({4, 6}, 33), y = Tensor::empty({4, 6}, DType::F64);
  for (int64_t i = 0; i < x.numel(); i += 2) set(x, i, -get(x, i));
  Tensor dx = Tensor::empty({4, 6}, DType::F64);
  auto relu = [&] {
    relu_forward(x, y);
    return dot(wy, y);
  };
  relu();
  relu_backward(wy, y, dx);
  expect_gradient("relu dx", x, dx, relu);
  auto gelu = [&] {
    gelu_tanh_forward(x, y);
    return dot(wy, y);
  };
  gelu();
  EXPECT_NEAR(get(y, 1),
              0.5 * get(x, 1) * (1 + std::tanh(std::sqrt(2 / M_PI) * (get(x, 1) + 0.044715 * std::pow(get(x, 1), 3)))),
              1e-15);
  gelu_tanh_backward(wy, x, dx);
  expect_gradient("gelu_tanh dx", x, dx, gelu);
  Tensor b = random({4, 6}, 34);
  multiply(x, b, y);
  for (int64_t i = 0; i < y.numel(); ++i) EXPECT_EQ(get(y, i), get(x, i) * get(b, i));
}

// T5 attention over packed batches: cross-attention (queries of 3 and 2 tokens against keys of 5
// and 3), with a bias larger than any sequence (each reads its corner), dropout; and causal
// self-attention; every input's gradient and the bias's.
TEST(OpsGradient, BiasedAttention) {
  const int64_t A = 2, d = 3, I = A * d;
  for (bool causal : {false, true}) {
    for (float p : {0.0f, 0.25f}) {
      SCOPED_TRACE(std::string(causal ? "causal" : "cross") + " dropout " + std::to_string(p));
      const PackedSequences queries =
          PackedSequences::from_lengths(causal ? std::vector<int64_t>{4, 2} : std::vector<int64_t>{3, 2});
      const PackedSequences keys = causal ? queries : PackedSequences::from_lengths({5, 3});
      const AttentionPairs pairs(queries, keys);
      const int64_t Nq = queries.tokens(), Nk = keys.tokens(), BQ = queries.max_len + 1, BK = keys.max_len + 2;
      BiasedAttentionShape s{A, d};
      s.causal = causal;
      s.scale = causal ? 1.0 : 0.5;
      Tensor q = random({Nq, I}, 60, -1.5, 1.5), k = random({Nk, I}, 61, -1.5, 1.5);
      Tensor v = random({Nk, I}, 62), bias = random({A, BQ, BK}, 63), wy = random({Nq, I}, 64);
      const int64_t P = pairs.score_elements(A);
      Tensor ctx = Tensor::empty({Nq, I}, DType::F64), probs = Tensor::empty({P}, DType::F64);
      Tensor mask = p > 0 ? Tensor::empty({P}, DType::U8) : Tensor();
      const DropoutKey key{7, 8};
      auto objective = [&] {
        biased_attention_forward(q, k, v, bias, pairs, s, p, key, ctx, probs, mask);
        return dot(wy, ctx);
      };
      objective();
      for (int64_t sq = 0; sq < 2; ++sq) {
        const int64_t Lq = queries.length(sq), Lk = keys.length(sq);
        for (int64_t h = 0; h < A; ++h)
          for (int64_t i = 0; i < Lq; ++i) {
            double row = 0;
            for (int64_t j = 0; j < Lk; ++j) {
              const double pr = get(probs, A * pairs.score_offsets[sq] + (h * Lq + i) * Lk + j);
              if (causal && j > i) {
                EXPECT_EQ(pr, 0.0);
              }
              row += pr;
            }
            EXPECT_NEAR(row, 1.0, 1e-12);
          }
      }
      Tensor dq = Tensor::empty({Nq, I}, DType::F64), dk = Tensor::empty({Nk, I}, DType::F64);
      Tensor dv = Tensor::empty({Nk, I}, DType::F64), dscores = Tensor::empty({P}, DType::F64);
      biased_attention_backward(wy, q, k, v, probs, mask, pairs, s, p, dq, dk, dv, dscores);
      expect_gradient("dq", q, dq, objective);
      expect_gradient("dk", k, dk, objective);
      expect_gradient("dv", v, dv, objective);
      // The bias gradient is each sequence's dscores, summed into the bias's corner.
      Tensor dbias = Tensor::zeros({A, BQ, BK}, DType::F64);
      for (int64_t sq = 0; sq < 2; ++sq) {
        const int64_t Lq = queries.length(sq), Lk = keys.length(sq);
        for (int64_t h = 0; h < A; ++h)
          for (int64_t i = 0; i < Lq; ++i)
            for (int64_t j = 0; j < Lk; ++j) {
              const int64_t at = (h * BQ + i) * BK + j;
              set(dbias, at, get(dbias, at) + get(dscores, A * pairs.score_offsets[sq] + (h * Lq + i) * Lk + j));
            }
      }
      expect_gradient("dbias", bias, dbias, objective);
    }
  }
  // Bad geometry is refused.
  const PackedSequences two = PackedSequences::from_lengths({2, 1}), one = PackedSequences::from_lengths({2});
  expect_error([&] { AttentionPairs(two, one); }, "attention");
  const AttentionPairs pairs(two, two);
  Tensor q = random({3, I}, 65), ctx = Tensor::empty({3, I}, DType::F64), probs = Tensor::empty({A * 5}, DType::F64);
  Tensor small_bias = random({A, 1, 2}, 66), none;
  expect_error(
      [&] {
        biased_attention_forward(q, q, q, small_bias, pairs, {A, d}, 0, {}, ctx, probs, none);
      },
      "biased_attention_forward");
  expect_error(
      [&] {
        biased_attention_forward(q, q, q, none, pairs, {A, d}, 0, {0, 0, 4}, ctx, probs, none);
      },
      "biased_attention_forward");
}

// A sequence's attention dropout depends on its number and positions alone, not on the batch it is
// packed in: the same source as sequence 0 of one batch and sequence 1 of another, numbered alike.
TEST(OpsSemantics, BiasedAttentionDropoutFollowsTheSequence) {
  const int64_t A = 2, d = 4, I = A * d;
  const float p = 0.3f;
  const DropoutKey key{11, 12};
  const PackedSequences q_alone = PackedSequences::from_lengths({3}, 7), k_alone = PackedSequences::from_lengths({4});
  const PackedSequences q_second = PackedSequences::from_lengths({5, 3}, 6),
                        k_second = PackedSequences::from_lengths({2, 4});
  Tensor q = random({3, I}, 90), k = random({4, I}, 91), v = random({4, I}, 92);
  Tensor q_pad = random({5, I}, 93), k_pad = random({2, I}, 94);
  auto stacked = [](const Tensor& a, const Tensor& b) {
    Tensor out = Tensor::empty({a.dim(0) + b.dim(0), a.dim(1)}, DType::F64);
    out.rows(0, a.dim(0)).copy_from(a);
    out.rows(a.dim(0), a.dim(0) + b.dim(0)).copy_from(b);
    return out;
  };
  Tensor bias = random({A, 5, 4}, 95);
  auto run = [&](const PackedSequences& qs, const PackedSequences& ks, const Tensor& qq, const Tensor& kk,
                 const Tensor& vv, Tensor& ctx, Tensor& mask) {
    const AttentionPairs pairs(qs, ks);
    Tensor probs = Tensor::empty({pairs.score_elements(A)}, DType::F64);
    ctx = Tensor::empty({qs.tokens(), I}, DType::F64);
    mask = Tensor::empty({pairs.score_elements(A)}, DType::U8);
    biased_attention_forward(qq, kk, vv, bias, pairs, {A, d}, p, key, ctx, probs, mask);
    return pairs;
  };
  Tensor ctx1, mask1, ctx2, mask2;
  run(q_alone, k_alone, q, k, v, ctx1, mask1);
  const AttentionPairs second =
      run(q_second, k_second, stacked(q_pad, q), stacked(k_pad, k), stacked(random({2, I}, 96), v), ctx2, mask2);
  const int64_t at = A * second.score_offsets[1];
  int dropped = 0;
  for (int64_t e = 0; e < A * 3 * 4; ++e) {
    EXPECT_EQ(mask1.data<uint8_t>()[e], mask2.data<uint8_t>()[at + e]) << e;
    dropped += mask1.data<uint8_t>()[e] == 0;
  }
  EXPECT_GT(dropped, 0);
  for (int64_t e = 0; e < 3 * I; ++e) EXPECT_NEAR(get(ctx1, e), get(ctx2, 5 * I + e), 1e-14);
}

// The relative-position bias: a table lookup per (query, key), its gradient the scatter-add of
// the score gradients over the sequences; and through attention, the table's gradient.
TEST(OpsGradient, RelativeBias) {
  const int64_t A = 2, T = 4, buckets = 5, d = 2;
  std::vector<int32_t> of(T * T);
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j)
      of[i * T + j] = static_cast<int32_t>(std::min<int64_t>(std::abs(j - i), 3) + (j > i));
  Tensor buckets_of = ids({T, T}, of);
  Tensor table = random({buckets, A}, 70), bias = Tensor::empty({A, T, T}, DType::F64);
  relative_bias_forward(buckets_of, table, bias);
  for (int64_t h = 0; h < A; ++h)
    for (int64_t e = 0; e < T * T; ++e) EXPECT_EQ(get(bias, h * T * T + e), get(table, of[e] * A + h));
  const PackedSequences seqs = PackedSequences::from_lengths({T, 3});
  const AttentionPairs pairs(seqs, seqs);
  const int64_t N = seqs.tokens();
  Tensor q = random({N, A * d}, 71), k = random({N, A * d}, 72), v = random({N, A * d}, 73);
  Tensor wy = random({N, A * d}, 74), ctx = Tensor::empty({N, A * d}, DType::F64);
  Tensor probs = Tensor::empty({pairs.score_elements(A)}, DType::F64), none;
  auto objective = [&] {
    relative_bias_forward(buckets_of, table, bias);
    biased_attention_forward(q, k, v, bias, pairs, {A, d}, 0, {}, ctx, probs, none);
    return dot(wy, ctx);
  };
  objective();
  Tensor dq = Tensor::empty({N, A * d}, DType::F64), dk = dq.clone(), dv = dq.clone();
  Tensor dscores = Tensor::empty({pairs.score_elements(A)}, DType::F64),
         dtable = Tensor::zeros({buckets, A}, DType::F64);
  biased_attention_backward(wy, q, k, v, probs, none, pairs, {A, d}, 0, dq, dk, dv, dscores);
  relative_bias_backward(dscores, pairs, buckets_of, dtable);
  expect_gradient("dtable", table, dtable, objective);
  expect_error([&] { relative_bias_forward(ids({1, 1}, {5}), table, bias); }, "relative_bias_forward");
  expect_error(
      [&] {
        relative_bias_backward(dscores, pairs, ids({2, 2}, {0, 0, 0, 0}), dtable);
      },
      "relative_bias_backward");
}

// A decode step reads k and v from a cache with more rows than keys in use, and sees the cached
// keys up to its own position: the same context as the full causal pass's row.
TEST(OpsSemantics, BiasedAttentionReadsACache) {
  const int64_t B = 2, A = 2, d = 4, I = A * d, T = 5, capacity = 8;
  const PackedSequences seqs = PackedSequences::from_lengths({T, T});
  Tensor q = random({B * T, I}, 80), k = random({B * T, I}, 81), v = random({B * T, I}, 82);
  Tensor bias = random({A, T, T}, 83), none;
  BiasedAttentionShape full{A, d};
  full.causal = true;
  const AttentionPairs full_pairs(seqs, seqs);
  Tensor ctx = Tensor::empty({B * T, I}, DType::F64), probs = Tensor::empty({full_pairs.score_elements(A)}, DType::F64);
  biased_attention_forward(q, k, v, bias, full_pairs, full, 0, {}, ctx, probs, none);
  Tensor kc = Tensor::zeros({B * capacity, I}, DType::F64), vc = kc.clone();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t c = 0; c < I; ++c) {
        set(kc, (b * capacity + t) * I + c, get(k, (b * T + t) * I + c));
        set(vc, (b * capacity + t) * I + c, get(v, (b * T + t) * I + c));
      }
  const PackedSequences one_each = PackedSequences::from_lengths({1, 1});
  for (int64_t t = 0; t < T; ++t) {
    const PackedSequences cached = PackedSequences::from_lengths({t + 1, t + 1});
    const AttentionPairs pairs(one_each, cached);
    BiasedAttentionShape step{A, d};
    step.causal = true;
    step.query_offset = t;
    step.key_stride = capacity;
    Tensor qt = Tensor::empty({B, I}, DType::F64), bt = Tensor::empty({A, 1, t + 1}, DType::F64);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t c = 0; c < I; ++c) set(qt, b * I + c, get(q, (b * T + t) * I + c));
    for (int64_t h = 0; h < A; ++h)
      for (int64_t j = 0; j <= t; ++j) set(bt, h * (t + 1) + j, get(bias, (h * T + t) * T + j));
    Tensor ct = Tensor::empty({B, I}, DType::F64), pt = Tensor::empty({pairs.score_elements(A)}, DType::F64);
    biased_attention_forward(qt, kc, vc, bt, pairs, step, 0, {}, ct, pt, none);
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t c = 0; c < I; ++c) EXPECT_NEAR(get(ct, b * I + c), get(ctx, (b * T + t) * I + c), 1e-14);
      for (int64_t h = 0; h < A; ++h)  // the saved probabilities: the full pass's row t
        for (int64_t j = 0; j <= t; ++j)
          EXPECT_NEAR(get(pt, A * b * (t + 1) + h * (t + 1) + j), get(probs, A * b * T * T + (h * T + t) * T + j),
                      1e-14);
    }
  }
  // More cached keys than the cache holds per sequence is refused.
  const PackedSequences too_many = PackedSequences::from_lengths({capacity + 1, 1});
  const AttentionPairs bad(one_each, too_many);
  BiasedAttentionShape step{A, d};
  step.key_stride = capacity;
  Tensor qt = Tensor::empty({B, I}, DType::F64), ct = qt.clone(),
         pt = Tensor::empty({bad.score_elements(A)}, DType::F64);
  expect_error([&] { biased_attention_forward(qt, kc, vc, none, bad, step, 0, {}, ct, pt, none); },
               "biased_attention_forward");
}

// One query row per sequence, as cross-attention reads the sources at a decoding step: keys of
// different lengths (one sequence has none: its context is 0), no mask, no bias, a scale; against
// softmax(scale·q·kᵀ)·v written out here.
TEST(OpsSemantics, BiasedAttentionOneQueryPerSequence) {
  const int64_t A = 3, d = 4, I = A * d;
  const std::vector<int64_t> lengths = {5, 0, 1, 7};
  const auto B = static_cast<int64_t>(lengths.size());
  const PackedSequences queries = PackedSequences::from_lengths(std::vector<int64_t>(lengths.size(), 1)),
                        keys = PackedSequences::from_lengths(lengths);
  const AttentionPairs pairs(queries, keys);
  Tensor q = random({B, I}, 84), k = random({keys.tokens(), I}, 85), v = random({keys.tokens(), I}, 86), none;
  BiasedAttentionShape shape{A, d};
  shape.scale = 0.5;
  Tensor ctx = Tensor::empty({B, I}, DType::F64), probs = Tensor::empty({pairs.score_elements(A)}, DType::F64);
  biased_attention_forward(q, k, v, none, pairs, shape, 0, {}, ctx, probs, none);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < A; ++h) {
      const int64_t L = lengths[static_cast<size_t>(b)], first = keys.offsets[static_cast<size_t>(b)];
      std::vector<double> w(static_cast<size_t>(L));
      double sum = 0;
      for (int64_t j = 0; j < L; ++j) {
        double score = 0;
        for (int64_t c = 0; c < d; ++c) score += get(q, b * I + h * d + c) * get(k, (first + j) * I + h * d + c);
        sum += w[static_cast<size_t>(j)] = std::exp(0.5 * score);
      }
      for (int64_t j = 0; j < L; ++j)
        EXPECT_NEAR(get(probs, A * pairs.score_offsets[static_cast<size_t>(b)] + h * L + j),
                    w[static_cast<size_t>(j)] / sum, 1e-14);
      for (int64_t c = 0; c < d; ++c) {
        double want = 0;
        for (int64_t j = 0; j < L; ++j) want += w[static_cast<size_t>(j)] / sum * get(v, (first + j) * I + h * d + c);
        EXPECT_NEAR(get(ctx, b * I + h * d + c), want, 1e-14) << b << " " << h << " " << c;
      }
    }
}

TEST(OpsGradient, GeluAndTanh) {
  Tensor x = random({4, 6}, 30, -3, 3), wy = random({4, 6}, 31), y = Tensor::empty({4, 6}, DType::F64);
  auto gelu = [&] {
    gelu_forward(x, y);
    return dot(wy, y);
  };
  Tensor dx = Tensor::empty({4, 6}, DType::F64);
  gelu_backward(wy, x, dx);
  expect_gradient("gelu dx", x, dx, gelu);

  auto tanh = [&] {
    tanh_forward(x, y);
    return dot(wy, y);
  };
  tanh();
  tanh_backward(wy, y, dx);
  expect_gradient("tanh dx", x, dx, tanh);
}

TEST(OpsGradient, Dropout) {
  const DropoutKey key{1234, 77};
  Tensor x = random({50}, 40), wy = random({50}, 41), y = Tensor::empty({50}, DType::F64);
  Tensor mask = Tensor::empty({50}, DType::U8);
  auto objective = [&] {
    dropout_forward(x, 0.3f, key, y, mask);
    return dot(wy, y);
  };
  objective();
  Tensor dx = Tensor::empty({50}, DType::F64);
  dropout_backward(wy, mask, 0.3f, dx);
  expect_gradient("dropout dx", x, dx, objective);
}

TEST(OpsGradient, Attention) {
  const AttentionShape s{2, 8};
  // Two packed sequences of 5 and 3 tokens: 8 rows, scores 2 · (25 + 9).
  const PackedSequences seqs = PackedSequences::from_lengths({5, 3});
  for (float p : {0.0f, 0.2f}) {
    SCOPED_TRACE("dropout " + std::to_string(p));
    const DropoutKey key{99, 5};
    Tensor qkv = random({8, 24}, 50, -1.5, 1.5), wy = random({8, 8}, 51);
    Tensor ctx = Tensor::empty({8, 8}, DType::F64), probs = Tensor::empty({68}, DType::F64);
    Tensor mask = p > 0 ? Tensor::empty({68}, DType::U8) : Tensor();
    auto objective = [&] {
      attention_forward(qkv, seqs, s, p, key, ctx, probs, mask);
      return dot(wy, ctx);
    };
    objective();
    Tensor dqkv = filled({8, 24}, DType::F64, 9);
    attention_backward(wy, qkv, probs, mask, seqs, s, p, dqkv);
    expect_gradient("dqkv", qkv, dqkv, objective);
  }
}

// Row-numbered dropout: a row's mask follows its number, wherever the row sits.
TEST(OpsSemantics, RowNumberedDropout) {
  const int64_t w = 6;  // not a multiple of 4: rows start inside Philox blocks
  const float p = 0.4f;
  const DropoutKey key{17, 3};
  Tensor x = random({3, w}, 52), y = Tensor::empty({3, w}, DType::F64), mask = Tensor::empty({3, w}, DType::U8);
  dropout_forward(x, p, key, Tensor::from<int64_t>({3}, {70000, 5, 123456789}), y, mask);
  Tensor swapped_x = Tensor::empty({3, w}, DType::F64), swapped_y = Tensor::empty({3, w}, DType::F64);
  Tensor swapped_mask = Tensor::empty({3, w}, DType::U8);
  for (int64_t j = 0; j < w; ++j) {
    swapped_x.data<double>()[j] = x.data<double>()[2 * w + j];
    swapped_x.data<double>()[w + j] = x.data<double>()[j];
    swapped_x.data<double>()[2 * w + j] = x.data<double>()[w + j];
  }
  dropout_forward(swapped_x, p, key, Tensor::from<int64_t>({3}, {123456789, 70000, 5}), swapped_y, swapped_mask);
  const int64_t numbers[3] = {70000, 5, 123456789}, moved[3] = {1, 2, 0};
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t j = 0; j < w; ++j) {
      const auto e = static_cast<uint64_t>(numbers[r] * w + j);
      EXPECT_EQ(mask.data<uint8_t>()[r * w + j] != 0, dropout_keeps(key, e, p)) << r << "," << j;
      EXPECT_EQ(mask.data<uint8_t>()[r * w + j], swapped_mask.data<uint8_t>()[moved[r] * w + j]);
      EXPECT_EQ(y.data<double>()[r * w + j], swapped_y.data<double>()[moved[r] * w + j]);
    }
  expect_error(
      [&] {
        dropout_forward(x, p, DropoutKey{17, 3, 4}, Tensor::from<int64_t>({3}, {0, 1, 2}), y, mask);
      },
      "row-numbered");
}

TEST(OpsGradient, CrossEntropy) {
  const int64_t m = 6, c = 5;
  Tensor logits = random({m, c}, 60, -2, 2), targets = ids({m}, {2, kIgnoreIndex, 0, 4, kIgnoreIndex, 1});
  const double grad_scale = 0.37;
  Tensor none;
  auto objective = [&] { return grad_scale * cross_entropy(logits, targets, none, 1.0).loss_sum; };
  Tensor dlogits = filled({m, c}, DType::F64, 9);
  const CrossEntropyResult r = cross_entropy(logits, targets, dlogits, grad_scale);
  EXPECT_EQ(r.counted, 4);
  expect_gradient("dlogits", logits, dlogits, objective);
  for (int64_t j = 0; j < c; ++j) EXPECT_EQ(get(dlogits, 1 * c + j), 0.0);

  // The loss and the argmax against a direct computation.
  double loss = 0;
  int64_t correct = 0;
  for (int64_t i = 0; i < m; ++i) {
    const int32_t t = targets.data<int32_t>()[i];
    if (t == kIgnoreIndex) continue;
    double z = 0;
    int64_t arg = 0;
    for (int64_t j = 0; j < c; ++j) {
      z += std::exp(get(logits, i * c + j));
      if (get(logits, i * c + j) > get(logits, i * c + arg)) arg = j;
    }
    loss += std::log(z) - get(logits, i * c + t);
    correct += arg == t;
  }
  EXPECT_NEAR(r.loss_sum, loss, 1e-12);
  EXPECT_EQ(r.correct, correct);
}

TEST(OpsGradient, GatherScatterRows) {
  Tensor src = random({5, 3}, 70), index = ids({6}, {4, 0, 4, 2, 4, 0});
  Tensor wy = random({6, 3}, 71), out = Tensor::empty({6, 3}, DType::F64);
  auto objective = [&] {
    gather_rows(src, index, out);
    return dot(wy, out);
  };
  Tensor dsrc = Tensor::zeros({5, 3}, DType::F64);
  scatter_add_rows(wy, index, dsrc);
  expect_gradient("dsrc", src, dsrc, objective);
}

// --- F32 against F64 -----------------------------------------------------------------------------

// The op tests that run on every device: the CPU always, CUDA where a GPU is present (skipped, not
// failed, without one). Each runs the ops in F32 on the device and compares with F64 on the CPU.

INSTANTIATE_TEST_SUITE_P(Devices, OpsOnDevice, ::testing::Values(Device::Cpu, Device::Cuda),
                         [](const ::testing::TestParamInfo<Device>& info) {
                           return std::string(device_name(info.param));
                         });

// T5's ops (RMS norm, ReLU, tanh-GELU, multiply, biased attention with its relative bias, the
// cache's strided row writes) in F32 on `dev` against F64 on the CPU.
void expect_t5_ops_match(Device dev) {
  const int64_t n = 48, h = 160;
  expect_f32_matches_f64(dev, "rms_norm", {random({n, h}, 90, -2, 3), random({h}, 91), random({n, h}, 92)},
                         {Tensor::empty({n, h}, DType::F64), Tensor::empty({n}, DType::F64),
                          Tensor::empty({n, h}, DType::F64), Tensor::zeros({h}, DType::F64), random({n, h}, 93)},
                         [](auto& in, auto& out) {
                           rms_norm_forward(in[0], in[1], 1e-6, out[0], out[1]);
                           rms_norm_backward(in[2], in[0], in[1], out[1], out[2], out[3]);
                           Tensor none;
                           rms_norm_backward(in[2], in[0], in[1], out[1], out[4], none, GradMode::Accumulate);
                         });
  expect_f32_matches_f64(
      dev, "t5 activations", {random({n, h}, 94, -4, 4), random({n, h}, 95), random({n, h}, 96)},
      {Tensor::empty({n, h}, DType::F64), Tensor::empty({n, h}, DType::F64), Tensor::empty({n, h}, DType::F64),
       Tensor::empty({n, h}, DType::F64), Tensor::empty({n, h}, DType::F64)},
      [](auto& in, auto& out) {
        relu_forward(in[0], out[0]);
        relu_backward(in[1], out[0], out[1]);
        gelu_tanh_forward(in[0], out[2]);
        gelu_tanh_backward(in[1], in[0], out[3]);
        multiply(in[0], in[2], out[4]);
      });
  expect_f32_matches_f64(dev, "copy_rows_strided", {random({3, h}, 97)}, {Tensor::zeros({12, h}, DType::F64)},
                         [](auto& in, auto& out) { copy_rows_strided(in[0], out[0], 2, 4); });
  // Packed causal self-attention with the relative bias and dropout, then cross-attention of query
  // sequences of 5, 3 and 0 tokens against key sequences of 9, 0 (nothing to attend to: the context
  // is 0) and 2 tokens.
  const int64_t A = 4, d = 8, I = A * d, T = 7, buckets = 32;
  std::vector<int32_t> of(T * T);
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j) of[i * T + j] = relative_position_bucket(j - i, false, buckets, 128);
  const Tensor buckets_of = ids({T, T}, of);
  const PackedSequences seqs = PackedSequences::from_lengths({T, 4}, 5);
  const AttentionPairs self_pairs(seqs, seqs);
  const int64_t N = seqs.tokens(), P = self_pairs.score_elements(A);
  for (float p : {0.0f, 0.2f}) {
    BiasedAttentionShape self{A, d};
    self.causal = true;
    expect_f32_matches_f64(
        dev, "biased self-attention",
        {random({N, I}, 100, -2, 2), random({N, I}, 101, -2, 2), random({N, I}, 102), random({buckets, A}, 103),
         random({N, I}, 104), buckets_of},
        {Tensor::empty({A, T, T}, DType::F64), Tensor::empty({N, I}, DType::F64), Tensor::empty({P}, DType::F64),
         Tensor::empty({P}, DType::U8), Tensor::empty({N, I}, DType::F64), Tensor::empty({N, I}, DType::F64),
         Tensor::empty({N, I}, DType::F64), Tensor::empty({P}, DType::F64), Tensor::zeros({buckets, A}, DType::F64)},
        [&](auto& in, auto& out) {
          relative_bias_forward(in[5], in[3], out[0]);
          Tensor mask = p > 0 ? out[3] : Tensor();
          biased_attention_forward(in[0], in[1], in[2], out[0], self_pairs, self, p, DropoutKey{3, 4}, out[1], out[2],
                                   mask);
          biased_attention_backward(in[4], in[0], in[1], in[2], out[2], mask, self_pairs, self, p, out[4], out[5],
                                    out[6], out[7]);
          relative_bias_backward(out[7], self_pairs, in[5], out[8]);
        },
        2e-5);
  }
  const PackedSequences queries = PackedSequences::from_lengths({5, 3, 0}),
                        keys = PackedSequences::from_lengths({9, 0, 2});
  const AttentionPairs cross_pairs(queries, keys);
  const int64_t Nq = queries.tokens(), Nk = keys.tokens(), Pc = cross_pairs.score_elements(A);
  BiasedAttentionShape cross{A, d};
  cross.scale = 0.5;
  expect_f32_matches_f64(
      dev, "biased cross-attention",
      {random({Nq, I}, 105, -2, 2), random({Nk, I}, 106, -2, 2), random({Nk, I}, 107), random({Nq, I}, 108)},
      {Tensor::empty({Nq, I}, DType::F64), Tensor::empty({Pc}, DType::F64), Tensor::empty({Nq, I}, DType::F64),
       Tensor::empty({Nk, I}, DType::F64), Tensor::empty({Nk, I}, DType::F64)},
      [&](auto& in, auto& out) {
        Tensor none;
        biased_attention_forward(in[0], in[1], in[2], none, cross_pairs, cross, 0, {}, out[0], out[1], none);
        biased_attention_backward(in[3], in[0], in[1], in[2], out[1], none, cross_pairs, cross, 0, out[2], out[3],
                                  out[4], none);
      });
  // A decode step: one query at position 4 against a cache of 8 rows per sequence, 5 in use.
  const PackedSequences one_each = PackedSequences::from_lengths({1, 1}),
                        cached = PackedSequences::from_lengths({5, 5});
  const AttentionPairs step_pairs(one_each, cached);
  BiasedAttentionShape step{A, d};
  step.causal = true;
  step.query_offset = 4;
  step.key_stride = 8;
  expect_f32_matches_f64(dev, "biased attention on a cache",
                         {random({2, I}, 109), random({16, I}, 110), random({16, I}, 111), random({A, 1, 5}, 112)},
                         {Tensor::empty({2, I}, DType::F64), Tensor::empty({step_pairs.score_elements(A)}, DType::F64)},
                         [&](auto& in, auto& out) {
                           Tensor none;
                           biased_attention_forward(in[0], in[1], in[2], in[3], step_pairs, step, 0, {}, out[0], out[1],
                                                    none);
                         });
}

TEST_P(OpsOnDevice, Float32MatchesFloat64) {
  const Device dev = device();
  const int64_t n = 64, h = 256, f = 96;
  expect_f32_matches_f64(dev, "linear", {random({n, h}, 1), random({f, h}, 2), random({f}, 3), random({n, f}, 4)},
                         {Tensor::empty({n, f}, DType::F64), Tensor::zeros({n, h}, DType::F64),
                          Tensor::zeros({f, h}, DType::F64), Tensor::zeros({f}, DType::F64)},
                         [](auto& in, auto& out) {
                           linear_forward(in[0], in[1], in[2], out[0]);
                           linear_backward(in[3], in[0], in[1], out[1], out[2], out[3]);
                         });
  Tensor id = ids({5}, {3, 0, 3, 9, 1});
  expect_f32_matches_f64(dev, "embedding", {random({10, h}, 5), random({5, h}, 6), id},
                         {Tensor::empty({5, h}, DType::F64), Tensor::zeros({10, h}, DType::F64)},
                         [&](auto& in, auto& out) {
                           embedding_forward(in[2], in[0], out[0]);
                           embedding_backward(in[2], in[1], out[1]);
                         });
  expect_f32_matches_f64(
      dev, "layer_norm", {random({n, h}, 7, -2, 4), random({h}, 8), random({h}, 9), random({n, h}, 10)},
      {Tensor::empty({n, h}, DType::F64), Tensor::empty({n}, DType::F64), Tensor::empty({n}, DType::F64),
       Tensor::empty({n, h}, DType::F64), Tensor::zeros({h}, DType::F64), Tensor::zeros({h}, DType::F64)},
      [](auto& in, auto& out) {
        layer_norm_forward(in[0], in[1], in[2], 1e-12, out[0], out[1], out[2]);
        layer_norm_backward(in[3], in[0], in[1], out[1], out[2], out[3], out[4], out[5]);
      });
  expect_f32_matches_f64(dev, "add_layer_norm",
                         {random({n, h}, 26, -2, 4), random({n, h}, 27), random({h}, 8), random({h}, 9)},
                         {Tensor::empty({n, h}, DType::F64), Tensor::empty({n, h}, DType::F64),
                          Tensor::empty({n}, DType::F64), Tensor::empty({n}, DType::F64)},
                         [](auto& in, auto& out) {
                           add_layer_norm_forward(in[0], in[1], in[2], in[3], 1e-12, out[0], out[1], out[2], out[3]);
                         });
  expect_f32_matches_f64(dev, "activations", {random({n, h}, 11, -4, 4), random({n, h}, 12)},
                         {Tensor::empty({n, h}, DType::F64), Tensor::empty({n, h}, DType::F64),
                          Tensor::empty({n, h}, DType::F64), Tensor::empty({n, h}, DType::F64)},
                         [](auto& in, auto& out) {
                           gelu_forward(in[0], out[0]);
                           gelu_backward(in[1], in[0], out[1]);
                           tanh_forward(in[0], out[2]);
                           tanh_backward(in[1], out[2], out[3]);
                         });
  expect_f32_matches_f64(
      dev, "dropout", {random({n, h}, 13), random({n, h}, 14)},
      {Tensor::empty({n, h}, DType::F64), Tensor::empty({n, h}, DType::U8), Tensor::empty({n, h}, DType::F64)},
      [](auto& in, auto& out) {
        dropout_forward(in[0], 0.1f, DropoutKey{5, 6}, out[0], out[1]);
        dropout_backward(in[1], out[1], 0.1f, out[2]);
      });
  const AttentionShape s{4, 64};
  const PackedSequences seqs = PackedSequences::from_lengths({16, 11});  // 27 rows, 4 · (256 + 121) scores
  for (float p : {0.0f, 0.1f}) {
    expect_f32_matches_f64(dev, "attention", {random({27, 192}, 15, -2, 2), random({27, 64}, 16)},
                           {Tensor::empty({27, 64}, DType::F64), Tensor::empty({1508}, DType::F64),
                            Tensor::empty({1508}, DType::U8), Tensor::empty({27, 192}, DType::F64)},
                           [&](auto& in, auto& out) {
                             attention_forward(in[0], seqs, s, p, DropoutKey{7, 8}, out[0], out[1], out[2]);
                             attention_backward(in[1], in[0], out[1], out[2], seqs, s, p, out[3]);
                           });
  }
  expect_t5_ops_match(dev);
  std::vector<int32_t> t(n);
  for (int64_t i = 0; i < n; ++i) t[i] = i % 7 == 3 ? kIgnoreIndex : static_cast<int32_t>((i * 37) % f);
  Tensor targets = ids({n}, t);
  Tensor logits64 = random({n, f}, 17, -5, 5);
  Tensor d64 = Tensor::empty({n, f}, DType::F64), d32 = Tensor::empty({n, f}, DType::F32, dev);
  const CrossEntropyResult r64 = cross_entropy(logits64, targets, d64, 0.5);
  const CrossEntropyResult r32 = cross_entropy(on_device(logits64), targets.to(dev), d32, 0.5);
  EXPECT_NEAR(r32.loss_sum, r64.loss_sum, 1e-5 * r64.loss_sum);
  EXPECT_EQ(r32.counted, r64.counted);
  EXPECT_EQ(r32.correct, r64.correct);
  EXPECT_LE(relative_error(d32.to(Device::Cpu), d64), 1e-5);
  expect_f32_matches_f64(
      dev, "elementwise", {random({n, h}, 18), random({n, h}, 19), random({5, h}, 20), id},
      {Tensor::empty({n, h}, DType::F64), Tensor::empty({n, h}, DType::F64), Tensor::zeros({10, h}, DType::F64)},
      [&](auto& in, auto& out) {
        add(in[0], in[1], out[0]);
        accumulate(out[0], in[1]);
        scale(out[0], 0.3);
        Tensor first = out[1].rows(0, 5);
        gather_rows(in[0], in[3], first);
        scatter_add_rows(in[2], in[3], out[2]);
      });
  Tensor sq = random({1000}, 21);
  EXPECT_NEAR(sum_of_squares(on_device(sq)), sum_of_squares(sq), 1e-5 * sum_of_squares(sq));
  expect_f32_matches_f64(
      dev, "adamw", {random({n, h}, 22)},
      {random({n, h}, 23), random({n, h}, 24, -0.1, 0.1), random({n, h}, 25, 0, 0.01)}, [](auto& in, auto& out) {
        adamw_update(out[0], in[0], out[1], out[2], AdamWHyper{1e-3, 0.9, 0.999, 1e-8, 0.01, 3}, 0.5);
      });
}

// A host F64 (or integer) tensor on `device` as `dtype` (F32, BF16 or F16; integers unchanged).
Tensor on_device_as(const Tensor& t, Device device, DType dtype) {
  if (t.dtype() != DType::F64) return t.clone().to(device);
  Tensor f = cast(t, DType::F32).to(device);
  if (dtype == DType::F32) return f;
  Tensor h = Tensor::empty(t.shape(), dtype, device);
  convert(f, h);
  return h;
}

// A device tensor of any floating dtype as a host F64 tensor.
Tensor host_f64(const Tensor& t) {
  Tensor f = t;
  if (t.dtype() == DType::BF16 || t.dtype() == DType::F16) {
    f = Tensor::empty(t.shape(), DType::F32, t.device());
    convert(t, f);
  }
  return cast(f.to(Device::Cpu), DType::F64);
}

// Like expect_f32_matches_f64, in half precision: inputs and outputs in `dtype` on the device,
// except the outputs listed in `wide` (parameter gradients, LayerNorm statistics), which are F32.
void expect_half_matches_f64(Device device, DType dtype, const char* what, std::vector<Tensor> inputs,
                             std::vector<Tensor> outputs, const std::vector<size_t>& wide,
                             const std::function<void(std::vector<Tensor>&, std::vector<Tensor>&)>& op, double tol) {
  std::vector<Tensor> in, out;
  for (const Tensor& t : inputs) in.push_back(on_device_as(t, device, dtype));
  for (size_t i = 0; i < outputs.size(); ++i)
    out.push_back(
        on_device_as(outputs[i], device, std::find(wide.begin(), wide.end(), i) != wide.end() ? DType::F32 : dtype));
  op(inputs, outputs);
  op(in, out);
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].dtype() != DType::F64) continue;
    EXPECT_LE(relative_error(host_f64(out[i]), outputs[i]), tol)
        << what << " output " << i << " in " << dtype_name(dtype);
  }
}

// Mixed precision: every op in BF16 (Ampere and newer) and F16 against the F64 CPU results, within
// 1e-2 and 4e-2 relative, with F32 parameter gradients and statistics. CUDA only.
TEST_P(OpsOnDevice, HalfPrecisionWithinTolerance) {
  if (device() != Device::Cuda) {
    Tensor x = Tensor::zeros({2, 4}, DType::BF16), w = Tensor::zeros({3, 4}, DType::BF16);
    Tensor y = Tensor::empty({2, 3}, DType::BF16), none;
    expect_error([&] { linear_forward(x, w, none, y); }, "BF16 compute runs on CUDA devices only");
    return;
  }
  const Device dev = device();
  const int64_t n = 64, h = 256, f = 96;
  for (auto [dtype, tol] : {std::pair{DType::BF16, 1e-2}, std::pair{DType::F16, 4e-2}}) {
    if (dtype == DType::BF16 && cuda::compute_capability() < 80) continue;
    expect_half_matches_f64(
        dev, dtype, "linear", {random({n, h}, 1), random({f, h}, 2), random({f}, 3), random({n, f}, 4)},
        {Tensor::empty({n, f}, DType::F64), Tensor::zeros({n, h}, DType::F64), Tensor::zeros({f, h}, DType::F64),
         Tensor::zeros({f}, DType::F64)},
        {2, 3},
        [](auto& in, auto& out) {
          linear_forward(in[0], in[1], in[2], out[0]);
          linear_backward(in[3], in[0], in[1], out[1], out[2], out[3]);
        },
        tol);
    Tensor id = ids({5}, {3, 0, 3, 9, 1});
    expect_half_matches_f64(
        dev, dtype, "embedding", {random({10, h}, 5), random({5, h}, 6), id},
        {Tensor::empty({5, h}, DType::F64), Tensor::zeros({10, h}, DType::F64)}, {1},
        [&](auto& in, auto& out) {
          embedding_forward(in[2], in[0], out[0]);
          embedding_backward(in[2], in[1], out[1]);
        },
        tol);
    expect_half_matches_f64(
        dev, dtype, "layer_norm", {random({n, h}, 7, -2, 4), random({h}, 8), random({h}, 9), random({n, h}, 10)},
        {Tensor::empty({n, h}, DType::F64), Tensor::empty({n}, DType::F64), Tensor::empty({n}, DType::F64),
         Tensor::empty({n, h}, DType::F64), Tensor::zeros({h}, DType::F64), Tensor::zeros({h}, DType::F64)},
        {1, 2, 4, 5},
        [](auto& in, auto& out) {
          layer_norm_forward(in[0], in[1], in[2], 1e-12, out[0], out[1], out[2]);
          layer_norm_backward(in[3], in[0], in[1], out[1], out[2], out[3], out[4], out[5]);
        },
        tol);
    expect_half_matches_f64(
        dev, dtype, "add_layer_norm", {random({n, h}, 26, -2, 4), random({n, h}, 27), random({h}, 8), random({h}, 9)},
        {Tensor::empty({n, h}, DType::F64), Tensor::empty({n, h}, DType::F64), Tensor::empty({n}, DType::F64),
         Tensor::empty({n}, DType::F64)},
        {2, 3},
        [](auto& in, auto& out) {
          add_layer_norm_forward(in[0], in[1], in[2], in[3], 1e-12, out[0], out[1], out[2], out[3]);
        },
        tol);
    expect_half_matches_f64(
        dev, dtype, "activations and dropout", {random({n, h}, 11, -4, 4), random({n, h}, 12)},
        {Tensor::empty({n, h}, DType::F64), Tensor::empty({n, h}, DType::F64), Tensor::empty({n, h}, DType::F64),
         Tensor::empty({n, h}, DType::F64), Tensor::empty({n, h}, DType::F64), Tensor::empty({n, h}, DType::U8)},
        {},
        [](auto& in, auto& out) {
          gelu_forward(in[0], out[0]);
          gelu_backward(in[1], in[0], out[1]);
          tanh_forward(in[0], out[2]);
          tanh_backward(in[1], out[2], out[3]);
          dropout_forward(in[0], 0.1f, DropoutKey{5, 6}, out[4], out[5]);
        },
        tol);
    const AttentionShape s{4, 64};
    const PackedSequences seqs = PackedSequences::from_lengths({16, 11});
    for (float p : {0.0f, 0.1f})
      expect_half_matches_f64(
          dev, dtype, "attention", {random({27, 192}, 15, -2, 2), random({27, 64}, 16)},
          {Tensor::empty({27, 64}, DType::F64), Tensor::empty({1508}, DType::F64), Tensor::empty({1508}, DType::U8),
           Tensor::empty({27, 192}, DType::F64)},
          {},
          [&](auto& in, auto& out) {
            attention_forward(in[0], seqs, s, p, DropoutKey{7, 8}, out[0], out[1], out[2]);
            attention_backward(in[1], in[0], out[1], out[2], seqs, s, p, out[3]);
          },
          tol);
    std::vector<int32_t> t(n);
    for (int64_t i = 0; i < n; ++i) t[i] = i % 7 == 3 ? kIgnoreIndex : static_cast<int32_t>((i * 37) % f);
    Tensor logits64 = random({n, f}, 17, -5, 5), d64 = Tensor::empty({n, f}, DType::F64);
    Tensor dhalf = Tensor::empty({n, f}, dtype, dev);
    const CrossEntropyResult r64 = cross_entropy(logits64, ids({n}, t), d64, 0.5);
    const CrossEntropyResult rh = cross_entropy(on_device_as(logits64, dev, dtype), ids({n}, t).to(dev), dhalf, 0.5);
    EXPECT_NEAR(rh.loss_sum, r64.loss_sum, tol * r64.loss_sum) << dtype_name(dtype);
    EXPECT_EQ(rh.counted, r64.counted);
    EXPECT_LE(relative_error(host_f64(dhalf), d64), tol) << "cross_entropy in " << dtype_name(dtype);
    expect_half_matches_f64(
        dev, dtype, "elementwise", {random({n, h}, 18), random({n, h}, 19), random({5, h}, 20), id},
        {Tensor::empty({n, h}, DType::F64), Tensor::empty({5, h}, DType::F64), Tensor::zeros({10, h}, DType::F64),
         Tensor::zeros({10, h}, DType::F64)},
        {3},
        [&](auto& in, auto& out) {
          add(in[0], in[1], out[0]);
          accumulate(out[0], in[1]);
          scale(out[0], 0.3);
          gather_rows(in[0], in[3], out[1]);
          scatter_add_rows(in[2], in[3], out[2]);  // half rows into half rows
          scatter_add_rows(in[2], in[3], out[3]);  // into an F32 gradient
        },
        tol);
    // T5's ops: RMS norm (F32 rstd and dγ), ReLU, tanh-GELU, multiply, and causal biased attention
    // with the relative bias (its table's gradient F32).
    expect_half_matches_f64(
        dev, dtype, "rms_norm and T5 activations",
        {random({n, h}, 90, -2, 3), random({h}, 91), random({n, h}, 92), random({n, h}, 94, -4, 4)},
        {Tensor::empty({n, h}, DType::F64), Tensor::empty({n}, DType::F64), Tensor::empty({n, h}, DType::F64),
         Tensor::zeros({h}, DType::F64), Tensor::empty({n, h}, DType::F64), Tensor::empty({n, h}, DType::F64),
         Tensor::empty({n, h}, DType::F64), Tensor::empty({n, h}, DType::F64), Tensor::empty({n, h}, DType::F64)},
        {1, 3},
        [](auto& in, auto& out) {
          rms_norm_forward(in[0], in[1], 1e-6, out[0], out[1]);
          rms_norm_backward(in[2], in[0], in[1], out[1], out[2], out[3]);
          relu_forward(in[3], out[4]);
          relu_backward(in[2], out[4], out[5]);
          gelu_tanh_forward(in[3], out[6]);
          gelu_tanh_backward(in[2], in[3], out[7]);
          multiply(in[3], in[2], out[8]);
        },
        tol);
    const int64_t A = 4, I = 32, T = 7, buckets = 32;
    std::vector<int32_t> of(T * T);
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < T; ++j) of[i * T + j] = relative_position_bucket(j - i, false, buckets, 128);
    const PackedSequences t5_seqs = PackedSequences::from_lengths({T, 5});
    const AttentionPairs pairs(t5_seqs, t5_seqs);
    const int64_t N = t5_seqs.tokens(), P = pairs.score_elements(A);
    BiasedAttentionShape self{A, I / A};
    self.causal = true;
    expect_half_matches_f64(
        dev, dtype, "biased attention",
        {random({N, I}, 100, -2, 2), random({N, I}, 101, -2, 2), random({N, I}, 102), random({buckets, A}, 103),
         random({N, I}, 104), ids({T, T}, of)},
        {Tensor::empty({A, T, T}, DType::F64), Tensor::empty({N, I}, DType::F64), Tensor::empty({P}, DType::F64),
         Tensor::empty({N, I}, DType::F64), Tensor::empty({N, I}, DType::F64), Tensor::empty({N, I}, DType::F64),
         Tensor::empty({P}, DType::F64), Tensor::zeros({buckets, A}, DType::F64)},
        {7},
        [&](auto& in, auto& out) {
          Tensor none;
          relative_bias_forward(in[5], in[3], out[0]);
          biased_attention_forward(in[0], in[1], in[2], out[0], pairs, self, 0, {}, out[1], out[2], none);
          biased_attention_backward(in[4], in[0], in[1], in[2], out[2], none, pairs, self, 0, out[3], out[4], out[5],
                                    out[6]);
          relative_bias_backward(out[6], pairs, in[5], out[7]);
        },
        tol);
  }
}

// convert: F32 to BF16 and F16 rounds to nearest even (the checkpoint converter's rounding), back
// to F32 is exact; other pairs are refused. On every device.
TEST_P(OpsOnDevice, ConvertRoundsToNearestEven) {
  const std::vector<float> values = {0.0f, -1.5f, 3.14159265f, 1e-8f, 65504.0f, 70000.0f, 1.0f + 1.0f / 256};
  Tensor x = Tensor::from<float>({7}, values).to(device());
  for (DType half : {DType::BF16, DType::F16}) {
    Tensor h = Tensor::empty({7}, half, device()), back = Tensor::empty({7}, DType::F32, device());
    convert(x, h);
    convert(h, back);
    const Tensor host_h = h.to(Device::Cpu), host_back = back.to(Device::Cpu);
    for (size_t i = 0; i < values.size(); ++i) {
      const uint16_t want = half == DType::BF16 ? f32_to_bf16(values[i]) : f32_to_f16(values[i]);
      EXPECT_EQ(static_cast<const uint16_t*>(host_h.raw())[i], want) << values[i] << " to " << dtype_name(half);
      EXPECT_EQ(host_back.data<float>()[i], half == DType::BF16 ? bf16_to_f32(want) : f16_to_f32(want));
    }
  }
  Tensor i32 = Tensor::empty({7}, DType::I32, device()), f64 = Tensor::empty({7}, DType::F64, device());
  expect_error([&] { convert(x, i32); }, "convert");
  expect_error([&] { convert(x, f64); }, "convert");
}

// The cross-entropy gradient written over the logits (the MLM head's one [M, V] buffer) is the
// gradient written elsewhere, bit for bit, with the same losses; on every device.
TEST_P(OpsOnDevice, CrossEntropyGradientInPlace) {
  const int64_t m = 37, c = 1000;
  std::vector<int32_t> t(m);
  for (int64_t i = 0; i < m; ++i) t[i] = i % 5 == 2 ? kIgnoreIndex : static_cast<int32_t>((i * 131) % c);
  const Tensor targets = ids({m}, t).to(device()), weights = random({m}, 41, 0.5, 2).to(device());
  Tensor logits = on_device(random({m, c}, 40, -6, 6)), apart = Tensor::empty({m, c}, DType::F32, device());
  Tensor losses_apart = Tensor::empty({m}, DType::F64, device()), losses = Tensor::empty({m}, DType::F64, device());
  const CrossEntropyResult a = cross_entropy(logits, targets, apart, 0.25, weights, losses_apart);
  const CrossEntropyResult b = cross_entropy(logits, targets, logits, 0.25, weights, losses);
  EXPECT_EQ(a.loss_sum, b.loss_sum);
  EXPECT_EQ(a.correct, b.correct);
  EXPECT_TRUE(bitwise_equal(logits.to(Device::Cpu), apart.to(Device::Cpu)));
  EXPECT_TRUE(bitwise_equal(losses.to(Device::Cpu), losses_apart.to(Device::Cpu)));
  Tensor shifted = logits.view({m * c}).rows(1, m * c - c + 1).view({m - 1, c});
  expect_error([&] { cross_entropy(logits.rows(0, m - 1), targets.rows(0, m - 1), shifted, 1.0); }, "cross_entropy");
}

// best_classes: each row's first maximum and its log-softmax, which is minus the cross-entropy of
// that class (both computed here in F64 on the host), on every device; ties go to the first.
TEST_P(OpsOnDevice, BestClassesAreTheArgmaxAndItsLogSoftmax) {
  const int64_t m = 29, c = 1000;
  Tensor logits64 = random({m, c}, 42, -6, 6);
  double* x = logits64.data<double>();
  x[3 * c + 10] = x[3 * c + 700] = 9;  // a tie: the first wins
  std::vector<int32_t> want(m);
  for (int64_t r = 0; r < m; ++r)
    want[r] = static_cast<int32_t>(std::max_element(x + r * c, x + (r + 1) * c) - (x + r * c));
  ASSERT_EQ(want[3], 10);
  Tensor losses = Tensor::empty({m}, DType::F64), none;
  cross_entropy(logits64, ids({m}, want), none, 1.0, none, losses);
  std::vector<int32_t> classes;
  std::vector<double> log_probs;
  best_classes(on_device(logits64), classes, log_probs);
  EXPECT_EQ(classes, want);
  for (int64_t r = 0; r < m; ++r) EXPECT_NEAR(log_probs[r], -losses.data<double>()[r], 1e-5) << r;
  best_classes(on_device(logits64.rows(0, 0)), classes, log_probs);
  EXPECT_TRUE(classes.empty());
}

// The multi-tensor AdamW (every parameter of a flat buffer in one call, a long one split into
// chunks) gives the per-parameter updates, with weight decay only where a segment asks for it.
TEST_P(OpsOnDevice, AdamWSegmentsMatchOneUpdatePerParameter) {
  const int64_t big = 2 * kAdamWChunkElements + 123;  // three chunks, the last partial
  const std::vector<AdamWSegment> segments = {
      {0, 0, 1000, true}, {1000, 1008, big, false}, {1000 + big, 1008 + big + 5, 77, true}};
  const int64_t params = 1000 + big + 77, state = 1008 + big + 5 + 77;
  Tensor values = cast(random({params}, 30), DType::F32), grads = cast(random({params}, 31), DType::F32);
  Tensor m = cast(random({state}, 32, -0.1, 0.1), DType::F32), v = cast(random({state}, 33, 0, 0.01), DType::F32);
  const AdamWHyper hyper{1e-3, 0.9, 0.999, 1e-8, 0.1, 4};

  Tensor want_values = values.clone(), want_m = m.clone(), want_v = v.clone();
  for (const AdamWSegment& s : segments) {
    Tensor p = want_values.rows(s.param_offset, s.param_offset + s.size);
    Tensor ms = want_m.rows(s.state_offset, s.state_offset + s.size),
           vs = want_v.rows(s.state_offset, s.state_offset + s.size);
    AdamWHyper h = hyper;
    h.weight_decay = s.decay ? hyper.weight_decay : 0.0;
    adamw_update(p, grads.rows(s.param_offset, s.param_offset + s.size), ms, vs, h, 0.25);
  }
  Tensor dv = values.to(device()), dg = grads.to(device()), dm = m.to(device()), dvv = v.to(device());
  const Tensor table = adamw_segment_table(segments, params, state, device());
  EXPECT_EQ(table.dim(0), 1 + 3 + 1);
  adamw_update_segments(dv, dg, dm, dvv, table, hyper, 0.25);
  // The CPU runs the same code per chunk; the GPU may contract multiply-adds into FMAs.
  const double tol = device() == Device::Cpu ? 0.0 : 1e-6;
  EXPECT_LE(relative_error(cast(dv.to(Device::Cpu), DType::F64), cast(want_values, DType::F64)), tol);
  EXPECT_LE(relative_error(cast(dm.to(Device::Cpu), DType::F64), cast(want_m, DType::F64)), tol);
  EXPECT_LE(relative_error(cast(dvv.to(Device::Cpu), DType::F64), cast(want_v, DType::F64)), tol);
  // The gap between segments' moments is never written.
  EXPECT_EQ(dm.to(Device::Cpu).data<float>()[1003], m.data<float>()[1003]);

  expect_error([&] { adamw_segment_table({{0, 0, params + 1, true}}, params, state, device()); }, "outside");
  expect_error([&] { adamw_update_segments(dv, dg, dm, dvv, table.view({20}), hyper); }, "adamw_update_segments");
}

// The dropout masks, of dropout and of attention, are the CPU's Philox bits on every device; the
// scatter-add of the embedding backward adds in the CPU's order, so it matches the CPU's bits.
TEST_P(OpsOnDevice, SameRandomBitsAndScatterAsTheCpu) {
  const int64_t n = 10007;  // not a multiple of 4: the last Philox block is partial
  const float p = 0.3f;
  const DropoutKey key{0x1234567890abcdefULL, 0xfeedULL << 33};
  Tensor x = on_device(random({n}, 90)), y = Tensor::empty({n}, DType::F32, device());
  Tensor mask = Tensor::empty({n}, DType::U8, device());
  dropout_forward(x, p, key, y, mask);
  Tensor host_mask = mask.to(Device::Cpu);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(host_mask.data<uint8_t>()[i] != 0, dropout_keeps(key, static_cast<uint64_t>(i), p)) << "element " << i;

  const AttentionShape s{2, 16};
  const PackedSequences seqs = PackedSequences::from_lengths({12, 5}, 40);
  const DropoutKey attention_key{key.seed, key.stream, 0};
  Tensor qkv = on_device(random({17, 48}, 91));
  Tensor ctx = Tensor::empty({17, 16}, DType::F32, device()), probs = Tensor::empty({338}, DType::F32, device());
  Tensor drop = Tensor::empty({338}, DType::U8, device());
  attention_forward(qkv, seqs, s, p, attention_key, ctx, probs, drop);
  Tensor host_drop = drop.to(Device::Cpu);
  for (int64_t sq = 0; sq < 2; ++sq) {
    const int64_t L = seqs.length(sq);
    for (int64_t hd = 0; hd < 2; ++hd)
      for (int64_t i = 0; i < L; ++i)
        for (int64_t j = 0; j < L; ++j) {
          const int64_t at = 2 * seqs.score_offsets[sq] + (hd * L + i) * L + j;
          const uint64_t e = attention_dropout_number(40 + sq, 2, hd, i) + j;
          ASSERT_EQ(host_drop.data<uint8_t>()[at] != 0, dropout_keeps(attention_key, e, p)) << at;
        }
  }
  Tensor rows_x = on_device(random({5, 6}, 89)), rows_y = Tensor::empty({5, 6}, DType::F32, device());
  Tensor rows_mask = Tensor::empty({5, 6}, DType::U8, device());
  const std::vector<int64_t> numbers{9, 1 << 20, 3, 0, 77777};
  dropout_forward(rows_x, p, attention_key, Tensor::from<int64_t>({5}, numbers).to(device()), rows_y, rows_mask);
  Tensor host_rows = rows_mask.to(Device::Cpu);
  for (int64_t i = 0; i < 30; ++i)
    ASSERT_EQ(host_rows.data<uint8_t>()[i] != 0,
              dropout_keeps(attention_key, static_cast<uint64_t>(numbers[i / 6] * 6 + i % 6), p))
        << "row-numbered element " << i;

  const int64_t m = 3000, v = 50, h = 70;
  std::vector<int32_t> id(m);
  Rng rng(5, 0);
  for (auto& i : id) i = static_cast<int32_t>(rng.below(v));
  Tensor ids_t = ids({m}, id), dout = cast(random({m, h}, 92), DType::F32),
         start = cast(random({v, h}, 93), DType::F32);
  Tensor cpu_table = start.clone(), dev_table = start.to(device());
  embedding_backward(ids_t, dout, cpu_table);
  embedding_backward(ids_t.to(device()), dout.to(device()), dev_table);
  EXPECT_TRUE(bitwise_equal(dev_table.to(Device::Cpu), cpu_table));
}

// Every reduction on the device is ordered: a rerun gives the same bits.
TEST_P(OpsOnDevice, RerunsAreBitIdentical) {
  const int64_t n = 777, h = 200, c = 301;
  Tensor x = on_device(random({n, h}, 94, -1, 3)), dy = on_device(random({n, h}, 95));
  Tensor w = on_device(random({c, h}, 96)), g = on_device(random({h}, 97)), b = on_device(random({h}, 98));
  std::vector<int32_t> tv(n);
  for (int64_t i = 0; i < n; ++i) tv[i] = static_cast<int32_t>((i * 13) % c);
  Tensor targets = ids({n}, tv).to(device());
  auto run = [&] {
    const Device d = device();
    Tensor y = Tensor::empty({n, h}, DType::F32, d), mean = Tensor::empty({n}, DType::F32, d);
    Tensor rstd = Tensor::empty({n}, DType::F32, d), dx = Tensor::empty({n, h}, DType::F32, d);
    Tensor dg = Tensor::zeros({h}, DType::F32, d), db = Tensor::zeros({h}, DType::F32, d);
    layer_norm_forward(x, g, b, 1e-5, y, mean, rstd);
    layer_norm_backward(dy, x, g, mean, rstd, dx, dg, db);
    Tensor logits = Tensor::empty({n, c}, DType::F32, d), dlogits = Tensor::empty({n, c}, DType::F32, d);
    linear_forward(y, w, Tensor(), logits);
    const double loss = cross_entropy(logits, targets, dlogits, 1.0).loss_sum;
    Tensor dw = Tensor::zeros({c, h}, DType::F32, d);
    Tensor none;
    linear_backward(dlogits, y, w, none, dw, none);
    return std::vector<Tensor>{dx.to(Device::Cpu), dg.to(Device::Cpu), db.to(Device::Cpu), dw.to(Device::Cpu),
                               Tensor::from<double>({2}, {loss, sum_of_squares(dw)})};
  };
  const std::vector<Tensor> one = run(), two = run();
  for (size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(bitwise_equal(one[i], two[i])) << "output " << i;
}

// Ids, targets and key masks are checked on the device too, and the error names the op.
// The one predicate behind every range check, CPU and CUDA: a table of n rows refuses n (one past
// its end) and every negative id; classes accept only their one skipped value besides [0, n).
TEST(OpsSemantics, IndexRangeRefusesOnePastTheEnd) {
  constexpr IndexRange rows = IndexRange::rows(4);
  EXPECT_TRUE(rows.accepts(0) && rows.accepts(3));
  EXPECT_FALSE(rows.accepts(4) || rows.accepts(-1) || rows.accepts(kIgnoreIndex));
  constexpr IndexRange classes = IndexRange::classes(5, kIgnoreIndex);
  EXPECT_TRUE(classes.accepts(kIgnoreIndex) && classes.accepts(4));
  EXPECT_FALSE(classes.accepts(5) || classes.accepts(-1));
}

TEST_P(OpsOnDevice, BadIndicesNameTheOp) {
  const Device d = device();
  Tensor table = Tensor::zeros({4, 8}, DType::F32, d), out = Tensor::empty({3, 8}, DType::F32, d);
  // 4 is one past the end: the CUDA check once let it through (a read past the table).
  expect_error([&] { embedding_forward(ids({3}, {0, 4, 1}).to(d), table, out); }, "embedding_forward");
  expect_error([&] { gather_rows(table, ids({3}, {0, 1, 4}).to(d), out); }, "gather_rows");
  Tensor dtable = Tensor::zeros({4, 8}, DType::F32, d);
  expect_error([&] { embedding_backward(ids({3}, {0, -1, 1}).to(d), out, dtable); }, "embedding_backward");
  Tensor logits = Tensor::zeros({2, 5}, DType::F32, d), dlogits = Tensor::empty({2, 5}, DType::F32, d);
  expect_error([&] { cross_entropy(logits, ids({2}, {1, 5}).to(d), dlogits, 1.0); }, "cross_entropy");
  const AttentionShape s{1, 4};
  Tensor qkv = Tensor::zeros({4, 12}, DType::F32, d), ctx = Tensor::empty({4, 4}, DType::F32, d);
  Tensor probs = Tensor::empty({16}, DType::F32, d), none;
  // Packed sequences of 5 tokens for 4 rows of qkv.
  expect_error([&] { attention_forward(qkv, PackedSequences::from_lengths({5}), s, 0.0f, {}, ctx, probs, none); },
               "attention_forward");
}

// Copies between devices, zero fills and clones; host access to device memory throws.
TEST_P(OpsOnDevice, TensorStorage) {
  Tensor host = cast(random({33, 7}, 99), DType::F32);
  Tensor there = host.to(device());
  EXPECT_EQ(there.device(), device());
  EXPECT_TRUE(bitwise_equal(there.clone().to(Device::Cpu), host));
  Tensor rows = there.rows(3, 10);
  rows.zero();
  Tensor back = there.to(Device::Cpu);
  for (int64_t i = 0; i < back.numel(); ++i) {
    const bool zeroed = i >= 3 * 7 && i < 10 * 7;
    ASSERT_EQ(back.data<float>()[i], zeroed ? 0.0f : host.data<float>()[i]) << i;
  }
  Tensor copy = Tensor::empty({33, 7}, DType::F32, device());
  copy.copy_from(host);
  host.copy_from(copy);
  EXPECT_TRUE(bitwise_equal(copy.to(Device::Cpu), host));
  if (device() == Device::Cuda) expect_error([&] { (void)there.data<float>(); }, "host access");
}

// Without a GPU (or without the backend) device tensors are refused with the reason, and ops on
// device tensors never reach a kernel.
TEST(CudaBackend, WithoutAGpuSaysWhy) {
  if (cuda::available()) GTEST_SKIP() << "a GPU is present: " << cuda::device_description();
  EXPECT_FALSE(cuda::unavailable_reason().empty());
  expect_error([] { (void)Tensor::empty({4}, DType::F32, Device::Cuda); }, "cuda");
  EXPECT_EQ(cuda::memory_stats().in_use, 0u);
}

// --- semantics ----------------------------------------------------------------------------------

TEST(OpsSemantics, ElementwiseAliasing) {
  Tensor x = random({33, 17}, 80, -3, 3), dy = random({33, 17}, 81);
  auto same_as = [](const Tensor& a, const Tensor& b) { return bitwise_equal(a, b); };
  Tensor y = Tensor::empty(x.shape(), DType::F64), inplace = x.clone();
  gelu_forward(x, y);
  gelu_forward(inplace, inplace);
  EXPECT_TRUE(same_as(inplace, y));
  Tensor dx = Tensor::empty(x.shape(), DType::F64), dyi = dy.clone();
  gelu_backward(dy, x, dx);
  gelu_backward(dyi, x, dyi);
  EXPECT_TRUE(same_as(dyi, dx));
  inplace = x.clone();
  tanh_forward(x, y);
  tanh_forward(inplace, inplace);
  EXPECT_TRUE(same_as(inplace, y));
  dyi = dy.clone();
  tanh_backward(dy, y, dx);
  tanh_backward(dyi, y, dyi);
  EXPECT_TRUE(same_as(dyi, dx));

  Tensor mask = Tensor::empty(x.shape(), DType::U8), mask2 = Tensor::empty(x.shape(), DType::U8);
  inplace = x.clone();
  dropout_forward(x, 0.25f, {3, 4}, y, mask);
  dropout_forward(inplace, 0.25f, {3, 4}, inplace, mask2);
  EXPECT_TRUE(same_as(inplace, y));
  EXPECT_TRUE(same_as(mask, mask2));
  dyi = dy.clone();
  dropout_backward(dy, mask, 0.25f, dx);
  dropout_backward(dyi, mask, 0.25f, dyi);
  EXPECT_TRUE(same_as(dyi, dx));

  Tensor a = random({33, 17}, 82), sum = Tensor::empty(x.shape(), DType::F64);
  add(a, x, sum);
  Tensor a1 = a.clone(), x1 = x.clone();
  add(a1, x, a1);
  add(a, x1, x1);
  EXPECT_TRUE(same_as(a1, sum));
  EXPECT_TRUE(same_as(x1, sum));

  // layer_norm_backward with dx = dy.
  Tensor g = random({17}, 83), b = random({17}, 84), mean = Tensor::empty({33}, DType::F64);
  Tensor rstd = Tensor::empty({33}, DType::F64), dg = Tensor::zeros({17}, DType::F64), db = dg.clone();
  layer_norm_forward(x, g, b, 1e-5, y, mean, rstd);
  layer_norm_backward(dy, x, g, mean, rstd, dx, dg, db);
  dyi = dy.clone();
  layer_norm_backward(dyi, x, g, mean, rstd, dyi, dg, db);
  EXPECT_TRUE(same_as(dyi, dx));

  // Partial overlaps are refused.
  Tensor big = random({10, 4}, 85), w = random({4, 4}, 86), none;
  Tensor in = big.rows(0, 6), out = big.rows(4, 10);
  expect_error([&] { linear_forward(in, w, none, out); }, "linear_forward");
  expect_error([&] { gelu_forward(in, out); }, "gelu_forward");
}

// The fused residual + LayerNorm is the add followed by the LayerNorm, bit for bit, with the sum
// written in place over x; y may not overlap the sum the backward pass reads.
TEST(OpsSemantics, AddLayerNormIsAddThenLayerNorm) {
  const int64_t n = 7, h = 40;
  Tensor x = cast(random({n, h}, 60, -3, 3), DType::F32), r = cast(random({n, h}, 61), DType::F32);
  Tensor g = cast(random({h}, 62), DType::F32), b = cast(random({h}, 63), DType::F32);
  Tensor sum = Tensor::empty({n, h}), y = Tensor::empty({n, h}), mean = Tensor::empty({n}), rstd = Tensor::empty({n});
  add(x, r, sum);
  layer_norm_forward(sum, g, b, 1e-5, y, mean, rstd);
  Tensor fused_y = Tensor::empty({n, h}), fused_mean = Tensor::empty({n}), fused_rstd = Tensor::empty({n});
  Tensor in_place = x.clone();
  add_layer_norm_forward(in_place, r, g, b, 1e-5, in_place, fused_y, fused_mean, fused_rstd);
  EXPECT_TRUE(bitwise_equal(in_place, sum));
  EXPECT_TRUE(bitwise_equal(fused_y, y));
  EXPECT_TRUE(bitwise_equal(fused_mean, mean));
  EXPECT_TRUE(bitwise_equal(fused_rstd, rstd));
  expect_error([&] { add_layer_norm_forward(x, r, g, b, 1e-5, sum, sum, mean, rstd); }, "add_layer_norm_forward");
}

TEST(OpsSemantics, LinearMatchesNaiveProductsAtAnyThreadCount) {
  // Large enough to run in parallel; the first shape splits y by columns and dw by rows, the
  // second y by rows and dw by columns (each thread packs the smaller shared operand).
  struct Case {
    int64_t n, in, out;
  };
  for (const Case c : {Case{300, 200, 700}, Case{700, 500, 64}}) {
    Tensor x = random({c.n, c.in}, 140), w = random({c.out, c.in}, 141), b = random({c.out}, 142);
    Tensor dy = random({c.n, c.out}, 143);
    std::vector<double> y(c.n * c.out), dx(c.n * c.in, 0.0), dw(c.out * c.in, 0.0), db(c.out, 0.0);
    for (int64_t i = 0; i < c.n; ++i)
      for (int64_t o = 0; o < c.out; ++o) {
        double s = get(b, o);
        for (int64_t k = 0; k < c.in; ++k) s += get(x, i * c.in + k) * get(w, o * c.in + k);
        y[i * c.out + o] = s;
        const double g = get(dy, i * c.out + o);
        db[o] += g;
        for (int64_t k = 0; k < c.in; ++k) {
          dx[i * c.in + k] += g * get(w, o * c.in + k);
          dw[o * c.in + k] += g * get(x, i * c.in + k);
        }
      }
    auto expect_close = [](const Tensor& got, const std::vector<double>& want, const char* what) {
      double worst = 0, scale = 0;
      for (size_t i = 0; i < want.size(); ++i) {
        worst = std::max(worst, std::abs(get(got, static_cast<int64_t>(i)) - want[i]));
        scale = std::max(scale, std::abs(want[i]));
      }
      EXPECT_LE(worst, 1e-12 * scale) << what;
    };
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(std::to_string(threads) + " threads, n " + std::to_string(c.n));
      with_threads(threads, [&] {
        Tensor yt = Tensor::empty({c.n, c.out}, DType::F64), dxt = Tensor::empty({c.n, c.in}, DType::F64);
        Tensor dwt = Tensor::zeros({c.out, c.in}, DType::F64), dbt = Tensor::zeros({c.out}, DType::F64);
        linear_forward(x, w, b, yt);
        linear_backward(dy, x, w, dxt, dwt, dbt);
        expect_close(yt, y, "y");
        expect_close(dxt, dx, "dx");
        expect_close(dwt, dw, "dw");
        expect_close(dbt, db, "db");
      });
    }
  }
}

TEST(OpsSemantics, DropoutMask) {
  const int64_t n = 100000;
  const float p = 0.3f;
  const DropoutKey key{0x1234567890abcdefULL, 0xfeedULL << 33};
  Tensor x = random({n}, 90), y = Tensor::empty({n}, DType::F64);
  Tensor mask1 = Tensor::empty({n}, DType::U8), mask2 = Tensor::empty({n}, DType::U8);
  with_threads(1, [&] { dropout_forward(x, p, key, y, mask1); });
  with_threads(2, [&] { dropout_forward(x, p, key, y, mask2); });
  EXPECT_TRUE(bitwise_equal(mask1, mask2));
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t m = mask2.data<uint8_t>()[i];
    kept += m;
    ASSERT_EQ(m != 0, dropout_keeps(key, static_cast<uint64_t>(i), p)) << "element " << i;
    ASSERT_EQ(get(y, i), m ? get(x, i) * (1.0 / (1.0 - p)) : 0.0);
  }
  // Binomial(1e5, 0.7): standard deviation 145 elements, so ±1000 is a 7-sigma bound.
  EXPECT_NEAR(static_cast<double>(kept), 0.7 * n, 1000);
  // Another stream gives another mask.
  Tensor other = Tensor::empty({n}, DType::U8);
  dropout_forward(x, p, DropoutKey{key.seed, key.stream + 1}, y, other);
  EXPECT_FALSE(bitwise_equal(mask1, other));
  // p = 0 keeps everything; the mask may be left out.
  Tensor none;
  dropout_forward(x, 0.0f, key, y, none);
  EXPECT_TRUE(bitwise_equal(x, y));
}

TEST(OpsSemantics, DeterministicAcrossThreadCounts) {
  const int64_t n = 4096, v = 100, h = 256;
  std::vector<int32_t> id(n);
  Rng rng(5, 0);
  for (auto& i : id) i = static_cast<int32_t>(rng.below(v));
  Tensor ids_t = ids({n}, id), dout = cast(random({n, h}, 100), DType::F32);
  Tensor x = cast(random({n, h}, 101, -1, 3), DType::F32), dy = cast(random({n, h}, 102), DType::F32);
  Tensor g = cast(random({h}, 103), DType::F32), b = cast(random({h}, 104), DType::F32);
  Tensor mean = Tensor::empty({n}), rstd = Tensor::empty({n}), y = Tensor::empty({n, h});
  layer_norm_forward(x, g, b, 1e-5, y, mean, rstd);
  Tensor logits = cast(random({n, 50}, 105, -3, 3), DType::F32);
  std::vector<int32_t> tv(n);
  for (int64_t i = 0; i < n; ++i) tv[i] = static_cast<int32_t>(i % 50);
  Tensor targets = ids({n}, tv);

  struct Result {
    Tensor dtable, dx, dgamma, dbeta, dlogits;
    double loss = 0, squares = 0;
  };
  auto run = [&] {
    Result r{Tensor::zeros({v, h}), Tensor::empty({n, h}), Tensor::zeros({h}), Tensor::zeros({h}),
             Tensor::empty({n, 50})};
    embedding_backward(ids_t, dout, r.dtable);
    layer_norm_backward(dy, x, g, mean, rstd, r.dx, r.dgamma, r.dbeta);
    r.loss = cross_entropy(logits, targets, r.dlogits, 1.0).loss_sum;
    r.squares = sum_of_squares(dout);
    return r;
  };
  Result one, two, three;
  with_threads(1, [&] { one = run(); });
  with_threads(2, [&] { two = run(); });
  with_threads(3, [&] { three = run(); });
  for (const Result* r : {&two, &three}) {
    EXPECT_TRUE(bitwise_equal(one.dtable, r->dtable));
    EXPECT_TRUE(bitwise_equal(one.dx, r->dx));
    EXPECT_TRUE(bitwise_equal(one.dgamma, r->dgamma));
    EXPECT_TRUE(bitwise_equal(one.dbeta, r->dbeta));
    EXPECT_TRUE(bitwise_equal(one.dlogits, r->dlogits));
    EXPECT_EQ(one.loss, r->loss);
    EXPECT_EQ(one.squares, r->squares);
  }
}

// Packed attention: every row of probabilities sums to 1 over its own sequence, the dropout mask
// follows attention_dropout_number, one thread gives the same bits, and a sequence computed alone
// (numbered as in the batch) gives the bits it gets packed with others: no result depends on the
// packing.
TEST(OpsSemantics, AttentionPackedAndDropoutMask) {
  const int64_t A = 4, H = 64;
  const AttentionShape s{A, H};
  const PackedSequences seqs = PackedSequences::from_lengths({24, 17, 9});
  const int64_t N = seqs.tokens(), P = seqs.score_elements(A);
  for (DType dtype : {DType::F64, DType::F32}) {
    Tensor qkv = cast(random({N, 3 * H}, 110, -3, 3), dtype), ctx = Tensor::empty({N, H}, dtype);
    Tensor probs = Tensor::empty({P}, dtype), mask = Tensor::empty({P}, DType::U8);
    const float p = 0.2f;
    const DropoutKey key{42, 4242};
    attention_forward(qkv, seqs, s, p, key, ctx, probs, mask);
    const double tol = dtype == DType::F64 ? 1e-12 : 1e-5;
    for (int64_t sq = 0; sq < 3; ++sq) {
      const int64_t L = seqs.length(sq);
      for (int64_t r = 0; r < A * L; ++r) {
        const int64_t at = A * seqs.score_offsets[sq] + r * L;
        double sum = 0;
        for (int64_t j = 0; j < L; ++j) {
          sum += get(probs, at + j);
          ASSERT_EQ(mask.data<uint8_t>()[at + j] != 0,
                    dropout_keeps(key, attention_dropout_number(sq, A, r / L, r % L) + j, p));
        }
        EXPECT_NEAR(sum, 1.0, tol);
      }
    }
    Tensor ctx1 = Tensor::empty({N, H}, dtype), probs1 = Tensor::empty({P}, dtype);
    Tensor mask1 = Tensor::empty({P}, DType::U8);
    with_threads(1, [&] { attention_forward(qkv, seqs, s, p, key, ctx1, probs1, mask1); });
    EXPECT_TRUE(bitwise_equal(mask, mask1));
    EXPECT_TRUE(bitwise_equal(probs, probs1));
    EXPECT_TRUE(bitwise_equal(ctx, ctx1));
    // Sequence 1 alone, numbered 1 as in the batch.
    const PackedSequences alone = PackedSequences::from_lengths({17}, 1);
    const int64_t L = 17, row0 = 24, block = A * seqs.score_offsets[1];
    Tensor qkv_alone = qkv.rows(row0, row0 + L).clone(), ctx_alone = Tensor::empty({L, H}, dtype);
    Tensor probs_alone = Tensor::empty({A * L * L}, dtype), mask_alone = Tensor::empty({A * L * L}, DType::U8);
    attention_forward(qkv_alone, alone, s, p, key, ctx_alone, probs_alone, mask_alone);
    EXPECT_TRUE(bitwise_equal(ctx_alone, ctx.rows(row0, row0 + L).clone()));
    EXPECT_TRUE(bitwise_equal(probs_alone, probs.rows(block, block + A * L * L).clone()));
    EXPECT_TRUE(bitwise_equal(mask_alone, mask.rows(block, block + A * L * L).clone()));
  }
}

TEST(OpsSemantics, VectorisedExpWithinOneUlp) {
  // The float exponential of the softmax and the cross-entropy, against double-precision exp.
  double worst = 0;
  for (float x = -87.0f; x <= 0.0f; x += 0.0037f) {
    const double exact = std::exp(static_cast<double>(x));
    const float rounded = static_cast<float>(exact);
    const double ulp = std::nextafter(rounded, INFINITY) - rounded;
    worst = std::max(worst, std::abs(cpu::exp_vec(x) - exact) / ulp);
  }
  EXPECT_LE(worst, 1.0);
  EXPECT_EQ(cpu::exp_vec(0.0f), 1.0f);
  EXPECT_EQ(cpu::exp_vec(-87.5f), 0.0f);
  EXPECT_EQ(cpu::exp_vec(std::numeric_limits<float>::lowest()), 0.0f);
  EXPECT_EQ(cpu::exp_vec(-INFINITY), 0.0f);
}

TEST(OpsSemantics, GeluFloatAccuracy) {
  // The float GELU (vector erf) against the formula in double. Its erf carries an error of about
  // an ulp of 1 (6e-8), which 0.5·x·(1 + erf) scales by |x|/2: the bound is 1.5e-7·|x| plus a few
  // ulp of the result.
  const int64_t n = 24001;
  Tensor x = Tensor::empty({n}), dy = Tensor::empty({n}), y = Tensor::empty({n}), dx = Tensor::empty({n});
  for (int64_t i = 0; i < n; ++i) {
    x.data<float>()[i] = -12.0f + 0.001f * static_cast<float>(i);
    dy.data<float>()[i] = 1.0f;
  }
  gelu_forward(x, y);
  gelu_backward(dy, x, dx);
  double worst_y = 0, worst_dx = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = x.data<float>()[i];
    const double cdf = 0.5 * (1 + std::erf(v / std::sqrt(2.0)));
    const double gelu = v * cdf, grad = cdf + v * std::exp(-0.5 * v * v) / std::sqrt(2 * M_PI);
    worst_y = std::max(worst_y, std::abs(y.data<float>()[i] - gelu) / (1.5e-7 * std::abs(v) + 3e-7 * std::abs(gelu)));
    worst_dx =
        std::max(worst_dx, std::abs(dx.data<float>()[i] - grad) / (1.5e-7 * std::abs(v) + 3e-7 * std::abs(grad)));
  }
  EXPECT_LE(worst_y, 1.0);
  EXPECT_LE(worst_dx, 1.0);
}

// Per-row weights (KMLM's terms, each the mean over its own rows): the gradient of
// grad_scale · Σ w_r · loss_r, row losses that add up to the total, and unit weights that change
// nothing at all.
TEST(OpsGradient, CrossEntropyRowWeights) {
  const int64_t m = 6, c = 5;
  Tensor logits = random({m, c}, 61, -2, 2), targets = ids({m}, {2, kIgnoreIndex, 0, 4, 3, 1});
  Tensor weights = Tensor::from<double>({m}, {0.5, 9.0, 0.25, 2.0, 1.0 / 3, 0.1});
  const double grad_scale = 0.37;
  Tensor none, losses = Tensor::zeros({m}, DType::F64);
  auto objective = [&] {
    Tensor row = Tensor::zeros({m}, DType::F64);
    cross_entropy(logits, targets, none, 1.0, none, row);
    double sum = 0;
    for (int64_t r = 0; r < m; ++r) sum += weights.data<double>()[r] * row.data<double>()[r];
    return grad_scale * sum;
  };
  Tensor dlogits = filled({m, c}, DType::F64, 9);
  const CrossEntropyResult r = cross_entropy(logits, targets, dlogits, grad_scale, weights, losses);
  expect_gradient("dlogits", logits, dlogits, objective);
  double total = 0;
  for (int64_t i = 0; i < m; ++i) total += losses.data<double>()[i];
  EXPECT_DOUBLE_EQ(total, r.loss_sum);
  EXPECT_EQ(losses.data<double>()[1], 0.0);  // the ignored row
  for (int64_t j = 0; j < c; ++j) EXPECT_EQ(get(dlogits, 1 * c + j), 0.0);

  // Unit weights: the very same bits as no weights, in float as in double.
  for (DType type : {DType::F32, DType::F64}) {
    Tensor x = cast(random({m, c}, 62, -3, 3), type);
    Tensor plain = Tensor::zeros({m, c}, type), weighted = Tensor::zeros({m, c}, type);
    Tensor ones = Tensor::from<double>({m}, std::vector<double>(static_cast<size_t>(m), 1.0));
    cross_entropy(x, targets, plain, 0.125);
    cross_entropy(x, targets, weighted, 0.125, ones, none);
    EXPECT_EQ(std::memcmp(plain.raw(), weighted.raw(), plain.nbytes()), 0) << dtype_name(type);
  }
  expect_error([&] { cross_entropy(logits, targets, none, 1.0, Tensor::zeros({m + 1}, DType::F64), none); },
               "cross_entropy");
}

TEST(OpsSemantics, CrossEntropyAllIgnored) {
  Tensor logits = random({4, 3}, 120), targets = ids({4}, {kIgnoreIndex, kIgnoreIndex, kIgnoreIndex, kIgnoreIndex});
  Tensor dlogits = filled({4, 3}, DType::F64, 7);
  const CrossEntropyResult r = cross_entropy(logits, targets, dlogits, 2.0);
  EXPECT_EQ(r.counted, 0);
  EXPECT_EQ(r.correct, 0);
  EXPECT_EQ(r.loss_sum, 0.0);
  EXPECT_EQ(max_abs(dlogits), 0.0);
  // Without a gradient tensor the loss is still computed.
  Tensor none, one = ids({4}, {kIgnoreIndex, 2, kIgnoreIndex, kIgnoreIndex});
  EXPECT_EQ(cross_entropy(logits, one, none, 1.0).counted, 1);
}

TEST(OpsSemantics, AdamWTwoSteps) {
  // lr 0.01, betas (0.9, 0.999), eps 1e-8, weight decay 0.1; the second gradient arrives doubled
  // with grad_scale 0.5. Step 1 by hand: m̂ = g, v̂ = g², so p₁ = p₀·(1 − 0.001) − 0.01·g/(|g| + 1e-8).
  // Step 2: the values torch.optim.AdamW gives (float64) for the same run.
  const std::vector<double> p0 = {0.5, -1.0, 2.0, 0.0}, g1 = {0.1, -0.2, 0.3, 0.0}, g2 = {-0.05, 0.4, 0.0, 1e-3};
  const std::vector<double> torch_p2 = {0.48634713093933907, -0.9916720356541037, 1.9793114181075822,
                                        -0.007441263026631013};
  for (DType dtype : {DType::F64, DType::F32}) {
    Tensor p = cast(Tensor::from<double>({4}, p0), dtype);
    Tensor m = Tensor::zeros({4}, dtype), v = Tensor::zeros({4}, dtype);
    AdamWHyper hyper{0.01, 0.9, 0.999, 1e-8, 0.1, 1};
    adamw_update(p, cast(Tensor::from<double>({4}, g1), dtype), m, v, hyper);
    const double tol = dtype == DType::F64 ? 1e-15 : 1e-7;
    for (int i = 0; i < 4; ++i) {
      const double expected = p0[i] * (1 - 0.01 * 0.1) - 0.01 * g1[i] / (std::abs(g1[i]) + 1e-8);
      EXPECT_NEAR(get(p, i), expected, tol) << i;
      EXPECT_NEAR(get(m, i), 0.1 * g1[i], tol) << i;
      EXPECT_NEAR(get(v, i), 0.001 * g1[i] * g1[i], tol) << i;
    }
    std::vector<double> doubled(4);
    for (int i = 0; i < 4; ++i) doubled[i] = 2 * g2[i];
    hyper.step = 2;
    adamw_update(p, cast(Tensor::from<double>({4}, doubled), dtype), m, v, hyper, 0.5);
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(get(p, i), torch_p2[i], dtype == DType::F64 ? 1e-14 : 1e-6) << i;
  }
}

TEST(OpsSemantics, BadArgumentsNameTheOp) {
  Tensor table = random({5, 3}, 130), out = Tensor::empty({2, 3}, DType::F64);
  expect_error([&] { embedding_forward(ids({2}, {1, 5}), table, out); }, "embedding_forward");
  expect_error([&] { embedding_forward(ids({2}, {-1, 0}), table, out); }, "embedding_forward");
  Tensor dtable = Tensor::zeros({5, 3}, DType::F64);
  expect_error([&] { embedding_backward(ids({2}, {0, 7}), out, dtable); }, "embedding_backward");
  EXPECT_EQ(max_abs(dtable), 0.0) << "nothing is written before the ids are checked";
  expect_error([&] { embedding_forward(cast(random({2}, 131), DType::F64), table, out); }, "embedding_forward");
  Tensor logits = random({2, 3}, 132), none;
  expect_error([&] { cross_entropy(logits, ids({2}, {0, 3}), none, 1.0); }, "cross_entropy");
  expect_error([&] { cross_entropy(logits, ids({2}, {-2, 0}), none, 1.0); }, "cross_entropy");
  expect_error([&] { cross_entropy(logits, ids({3}, {0, 0, 0}), none, 1.0); }, "cross_entropy");
  Tensor rows = Tensor::empty({2, 3}, DType::F64);
  expect_error([&] { gather_rows(table, ids({2}, {0, 5}), rows); }, "gather_rows");
  expect_error([&] { scatter_add_rows(rows, ids({2}, {0, 5}), dtable); }, "scatter_add_rows");
  Tensor x = random({4, 3}, 133), w = random({2, 4}, 134), y = Tensor::empty({4, 2}, DType::F64);
  expect_error([&] { linear_forward(x, w, none, y); }, "linear_forward");
  expect_error([&] { linear_forward(x, random({2, 3}, 135), Tensor::zeros({3}, DType::F64), y); }, "linear_forward");
  expect_error([&] { linear_forward(cast(x, DType::F32), random({2, 3}, 135), none, y); }, "linear_forward");
  Tensor dx, dw = Tensor::zeros({2, 3}, DType::F64);
  expect_error([&] { linear_backward(random({4, 3}, 136), x, random({2, 3}, 135), dx, dw, none); }, "linear_backward");
  Tensor mean = Tensor::empty({4}, DType::F64), rstd = Tensor::empty({4}, DType::F64);
  Tensor ln = Tensor::empty({4, 3}, DType::F64);
  expect_error([&] { layer_norm_forward(x, Tensor::zeros({3}), Tensor::zeros({3}, DType::F64), 1e-5, ln, mean, rstd); },
               "layer_norm_forward");
  expect_error(
      [&] {
        layer_norm_forward(x, Tensor::zeros({4}, DType::F64), Tensor::zeros({3}, DType::F64), 1e-5, ln, mean, rstd);
      },
      "layer_norm_forward");
  Tensor xi = Tensor::zeros({4, 3}, DType::I32);
  expect_error([&] { gelu_forward(xi, xi); }, "gelu_forward");
  expect_error([&] { tanh_backward(x, cast(x, DType::F32), ln); }, "tanh_backward");
  Tensor mask = Tensor::empty({4, 3}, DType::U8);
  expect_error([&] { dropout_forward(x, 1.0f, {}, ln, mask); }, "dropout_forward");
  expect_error([&] { dropout_forward(x, 0.5f, {}, ln, none); }, "dropout_forward");
  expect_error([&] { dropout_backward(x, none, 0.5f, ln); }, "dropout_backward");
  const AttentionShape s{2, 4};
  const PackedSequences two = PackedSequences::from_lengths({2});
  Tensor qkv = random({2, 12}, 137), ctx = Tensor::empty({2, 4}, DType::F64);
  Tensor probs = Tensor::empty({8}, DType::F64);
  expect_error(
      [&] {
        attention_forward(qkv, two, AttentionShape{3, 4}, 0.0f, {}, ctx, probs, none);
      },
      "attention_forward");
  Tensor bad_probs = Tensor::empty({4}, DType::F64);
  expect_error([&] { attention_forward(qkv, two, s, 0.0f, {}, ctx, bad_probs, none); }, "attention_forward");
  expect_error([&] { attention_forward(qkv, two, s, 0.1f, {0, 0, 4}, ctx, probs, none); }, "attention_forward");
  expect_error([&] { PackedSequences::from_lengths({3, int64_t{1} << 17}); }, "65536");
  Tensor dqkv = Tensor::empty({2, 8}, DType::F64);
  expect_error([&] { attention_backward(ctx, qkv, probs, none, two, s, 0.0f, dqkv); }, "attention_backward");
  Tensor p = random({3}, 138), g = random({3}, 139), m = Tensor::zeros({3}, DType::F64), v = m.clone();
  expect_error([&] { adamw_update(p, g, m, v, AdamWHyper{.step = 0}); }, "adamw_update");
  expect_error([&] { adamw_update(p, cast(g, DType::F32), m, v, AdamWHyper{}); }, "adamw_update");
  expect_error([&] { add(p, random({4}, 140), g); }, "add");
}

}  // namespace
}  // namespace kglm::nn
