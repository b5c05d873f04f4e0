// Tests of the frozen-feature heads' ops: the scalar mix (its weighted sum and dot products against
// their definitions, and the ScalarMix layer's gradients of s and γ by finite differences), the
// parser's block scores (against a direct loop, padding, finite differences) and the row-wise outer
// product (finite differences), ESIM's soft alignment (against its definition, finite differences)
// and segment pooling (its mean and max, finite differences); each F32 on every device against F64.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "nn/ops/block_scores.hpp"
#include "nn/ops/outer_product.hpp"
#include "nn/ops/scalar_mix.hpp"
#include "nn/ops/segment_pool.hpp"
#include "nn/ops/soft_align.hpp"
#include "nn/scalar_mix.hpp"
#include "ops_test_util.hpp"

namespace kglm::nn {
namespace {

// --- scalar mix ------------------------------------------------------------------------------------

TEST(OpsSemantics, ScalarMixIsTheWeightedSumOfItsLayers) {
  const int64_t layers = 3, n = 4, d = 5;
  const Tensor x = random({layers, n, d}, 600), dy = random({n, d}, 601);
  const std::vector<float> c{0.5f, -1.25f, 2.0f};
  Tensor y = Tensor::empty({n, d}, DType::F64);
  scalar_mix_forward(x, c, y);
  const std::vector<double> dots = scalar_mix_dots(dy, x);
  for (int64_t j = 0; j < layers; ++j) {
    double direct = 0;
    for (int64_t i = 0; i < n * d; ++i) direct += get(dy, i) * get(x, j * n * d + i);
    EXPECT_NEAR(dots[static_cast<size_t>(j)], direct, 1e-12);
  }
  for (int64_t i = 0; i < n * d; ++i) {
    double want = 0;
    for (int64_t j = 0; j < layers; ++j) want += c[static_cast<size_t>(j)] * get(x, j * n * d + i);
    EXPECT_NEAR(get(y, i), want, 1e-12);
  }
  expect_error([&] { scalar_mix_forward(x, std::vector<float>{1.0f}, y); }, "scalar_mix_forward");
}

TEST(OpsGradient, ScalarMixLayerLearnsItsWeightsAndScale) {
  const int64_t layers = 3, n = 6, d = 4;
  ParameterStore params(Device::Cpu);
  ScalarMix mix(params, "mix", layers);
  params.allocate(1, true);
  params.initialize(0, 0.02);
  const std::vector<float> s{0.3f, -0.7f, 0.1f};
  std::copy(s.begin(), s.end(), params.get("mix.scalar_parameters").value.data<float>());
  params.get("mix.gamma").value.data<float>()[0] = 1.5f;
  const Tensor x = cast(random({layers, n, d}, 610), DType::F32), dy = cast(random({n, d}, 611), DType::F32);
  // The objective Σ dy ⊙ y as a function of s and γ, in double.
  auto objective = [&](const std::vector<double>& sv, double gamma) {
    double top = sv[0], total = 0;
    for (double v : sv) top = std::max(top, v);
    for (double v : sv) total += std::exp(v - top);
    double f = 0;
    for (int64_t j = 0; j < layers; ++j)
      for (int64_t i = 0; i < n * d; ++i)
        f += get(dy, i) * gamma * std::exp(sv[static_cast<size_t>(j)] - top) / total * get(x, j * n * d + i);
    return f;
  };
  const Tensor& y = mix.forward(x);
  std::vector<double> sd(s.begin(), s.end());
  EXPECT_NEAR(dot(dy, y), objective(sd, 1.5), 1e-4);
  mix.backward(dy);
  const double h = 1e-5;
  for (size_t j = 0; j < s.size(); ++j) {
    std::vector<double> up = sd, down = sd;
    up[j] += h, down[j] -= h;
    EXPECT_NEAR(params.get("mix.scalar_parameters").grad.data<float>()[j],
                (objective(up, 1.5) - objective(down, 1.5)) / (2 * h), 1e-4);
  }
  EXPECT_NEAR(params.get("mix.gamma").grad.data<float>()[0],
              (objective(sd, 1.5 + h) - objective(sd, 1.5 - h)) / (2 * h), 1e-4);
}

TEST_P(OpsOnDevice, ScalarMixF32MatchesF64) {
  const int64_t layers = 4, n = 700, d = 96;
  const Tensor x = random({layers, n, d}, 620), dy = random({n, d}, 621);
  const std::vector<float> c{0.1f, 0.2f, 0.3f, 0.4f};
  Tensor y64 = Tensor::empty({n, d}, DType::F64);
  scalar_mix_forward(x, c, y64);
  Tensor y32 = Tensor::empty({n, d}, DType::F32, device());
  scalar_mix_forward(on_device(x), c, y32);
  EXPECT_LT(relative_error(cast(y32.to(Device::Cpu), DType::F64), y64), 1e-5);
  const std::vector<double> d64 = scalar_mix_dots(dy, x), d32 = scalar_mix_dots(on_device(dy), on_device(x));
  for (size_t j = 0; j < d64.size(); ++j) EXPECT_NEAR(d32[j], d64[j], 1e-4 * std::max(1.0, std::abs(d64[j])));
}

// --- block scores ----------------------------------------------------------------------------------

// Two blocks (lengths 3 and 4) of rows, padded to 5 columns.
struct Blocks {
  int64_t m = 7, a = 4, t = 5;
  Tensor starts = ids({7}, {0, 0, 0, 3, 3, 3, 3}), lengths = ids({7}, {3, 3, 3, 4, 4, 4, 4});
};

TEST(OpsSemantics, BlockScoresReadTheirOwnBlockAndPadTheRest) {
  const Blocks b;
  const Tensor q = random({b.m, b.a}, 630), k = random({b.m, b.a}, 631), bias = random({b.m}, 632);
  Tensor s = Tensor::empty({b.m, b.t}, DType::F64);
  block_scores_forward(q, k, bias, b.starts, b.lengths, s);
  for (int64_t i = 0; i < b.m; ++i) {
    const int64_t first = b.starts.data<int32_t>()[i], n = b.lengths.data<int32_t>()[i];
    for (int64_t j = 0; j < b.t; ++j) {
      if (j >= n) {
        EXPECT_EQ(get(s, i * b.t + j), static_cast<double>(kNoScore));
        continue;
      }
      double want = get(bias, first + j);
      for (int64_t c = 0; c < b.a; ++c) want += get(q, i * b.a + c) * get(k, (first + j) * b.a + c);
      EXPECT_NEAR(get(s, i * b.t + j), want, 1e-12);
    }
  }
}

TEST(OpsGradient, BlockScores) {
  const Blocks b;
  Tensor q = random({b.m, b.a}, 640), k = random({b.m, b.a}, 641), bias = random({b.m}, 642);
  Tensor ws = random({b.m, b.t}, 643), s = Tensor::empty({b.m, b.t}, DType::F64);
  // Padding carries no gradient: zero its weights so the objective stays finite.
  for (int64_t i = 0; i < b.m; ++i)
    for (int64_t j = b.lengths.data<int32_t>()[i]; j < b.t; ++j) set(ws, i * b.t + j, 0);
  auto objective = [&] {
    block_scores_forward(q, k, bias, b.starts, b.lengths, s);
    double f = 0;
    for (int64_t i = 0; i < b.m; ++i)
      for (int64_t j = 0; j < b.lengths.data<int32_t>()[i]; ++j) f += get(ws, i * b.t + j) * get(s, i * b.t + j);
    return f;
  };
  Tensor dq = Tensor::empty({b.m, b.a}, DType::F64), dk = Tensor::empty({b.m, b.a}, DType::F64),
         dbias = Tensor::empty({b.m}, DType::F64);
  block_scores_backward(ws, q, k, b.starts, b.lengths, dq, dk, dbias);
  expect_gradient("dq", q, dq, objective);
  expect_gradient("dk", k, dk, objective);
  expect_gradient("dbias", bias, dbias, objective);
}

TEST_P(OpsOnDevice, BlockScoresF32MatchesF64) {
  // Sentences of 1 to 40 words (blocks of 2 to 41 rows).
  std::vector<int32_t> starts, lengths;
  int64_t t = 0;
  for (int32_t n = 2; n <= 41; n += 3) {
    const auto first = static_cast<int32_t>(starts.size());
    for (int32_t i = 0; i < n; ++i) starts.push_back(first), lengths.push_back(n);
    t = std::max<int64_t>(t, n);
  }
  const auto m = static_cast<int64_t>(starts.size());
  const int64_t a = 48;
  expect_f32_matches_f64(device(), "block_scores",
                         {random({m, a}, 650), random({m, a}, 651), random({m}, 652), ids({m}, starts),
                          ids({m}, lengths), random({m, t}, 653)},
                         {Tensor::empty({m, t}, DType::F64), Tensor::empty({m, a}, DType::F64),
                          Tensor::empty({m, a}, DType::F64), Tensor::empty({m}, DType::F64)},
                         [](auto& in, auto& out) {
                           block_scores_forward(in[0], in[1], in[2], in[3], in[4], out[0]);
                           block_scores_backward(in[5], in[0], in[1], in[3], in[4], out[1], out[2], out[3]);
                         });
}

// --- outer product ---------------------------------------------------------------------------------

TEST(OpsGradient, OuterProduct) {
  const int64_t n = 3, p = 4, qd = 5;
  Tensor a = random({n, p}, 660), b = random({n, qd}, 661), wz = random({n, p * qd}, 662);
  Tensor z = Tensor::empty({n, p * qd}, DType::F64);
  auto objective = [&] {
    outer_product_forward(a, b, z);
    return dot(wz, z);
  };
  objective();
  EXPECT_NEAR(get(z, 1 * p * qd + 2 * qd + 3), get(a, 1 * p + 2) * get(b, 1 * qd + 3), 1e-15);
  Tensor da = Tensor::empty({n, p}, DType::F64), db = Tensor::empty({n, qd}, DType::F64);
  outer_product_backward(wz, a, b, da, db);
  expect_gradient("da", a, da, objective);
  expect_gradient("db", b, db, objective);
}

TEST_P(OpsOnDevice, OuterProductF32MatchesF64) {
  const int64_t n = 200, p = 30, qd = 20;
  expect_f32_matches_f64(
      device(), "outer_product", {random({n, p}, 670), random({n, qd}, 671), random({n, p * qd}, 672)},
      {Tensor::empty({n, p * qd}, DType::F64), Tensor::empty({n, p}, DType::F64), Tensor::empty({n, qd}, DType::F64)},
      [](auto& in, auto& out) {
        outer_product_forward(in[0], in[1], out[0]);
        outer_product_backward(in[2], in[0], in[1], out[1], out[2]);
      });
}

// --- soft alignment --------------------------------------------------------------------------------

// Three pairs of lengths (3, 2), (1, 4), (2, 2) and their layout.
struct Pairs {
  std::vector<int32_t> la{3, 1, 2}, lb{2, 4, 2};
  int64_t m = 14, d = 5, w = 0;
  Tensor layout = soft_align_layout(la, lb, w);
};

TEST(OpsSemantics, SoftAlignIsTheSoftmaxWeightedSumOfTheOtherSentence) {
  const Pairs p;
  EXPECT_EQ(p.w, 2 * (3 * 2 + 1 * 4 + 2 * 2));
  const Tensor x = random({p.m, p.d}, 680);
  Tensor weights = Tensor::empty({p.w}, DType::F64), aligned = Tensor::empty({p.m, p.d}, DType::F64);
  soft_align_forward(x, p.layout, weights, aligned);
  int64_t first = 0;
  for (size_t k = 0; k < p.la.size(); ++k) {
    const int64_t la = p.la[k], lb = p.lb[k];
    // Row r of one side against the other side's rows: softmax of the dot products, then the sum.
    auto check = [&](int64_t r, int64_t other, int64_t n) {
      std::vector<double> e(static_cast<size_t>(n));
      double top = -1e300, total = 0;
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t c = 0; c < p.d; ++c) s += get(x, r * p.d + c) * get(x, (other + j) * p.d + c);
        e[static_cast<size_t>(j)] = s, top = std::max(top, s);
      }
      for (double& v : e) total += (v = std::exp(v - top));
      for (int64_t c = 0; c < p.d; ++c) {
        double want = 0;
        for (int64_t j = 0; j < n; ++j) want += e[static_cast<size_t>(j)] / total * get(x, (other + j) * p.d + c);
        EXPECT_NEAR(get(aligned, r * p.d + c), want, 1e-12) << "pair " << k << " row " << r;
      }
    };
    for (int64_t i = 0; i < la; ++i) check(first + i, first + la, lb);
    for (int64_t j = 0; j < lb; ++j) check(first + la + j, first, la);
    first += la + lb;
  }
  int64_t size = 0;
  EXPECT_THROW(soft_align_layout(std::vector<int32_t>{2}, std::vector<int32_t>{0}, size), Error);
}

TEST(OpsGradient, SoftAlign) {
  const Pairs p;
  Tensor x = random({p.m, p.d}, 690);
  const Tensor wa = random({p.m, p.d}, 691);
  Tensor weights = Tensor::empty({p.w}, DType::F64), aligned = Tensor::empty({p.m, p.d}, DType::F64);
  auto objective = [&] {
    soft_align_forward(x, p.layout, weights, aligned);
    return dot(wa, aligned);
  };
  objective();
  Tensor dweights = Tensor::empty({p.w}, DType::F64), dx = Tensor::empty({p.m, p.d}, DType::F64);
  soft_align_backward(wa, x, p.layout, weights, dweights, dx);
  expect_gradient("dx", x, dx, objective);
}

TEST_P(OpsOnDevice, SoftAlignF32MatchesF64) {
  std::vector<int32_t> la, lb;
  for (int32_t k = 0; k < 24; ++k) la.push_back(1 + (k * 7) % 31), lb.push_back(1 + (k * 5) % 17);
  int64_t w = 0, m = 0;
  const Tensor layout = soft_align_layout(la, lb, w);
  for (size_t k = 0; k < la.size(); ++k) m += la[k] + lb[k];
  const int64_t d = 40;
  expect_f32_matches_f64(device(), "soft_align", {random({m, d}, 700, -0.5, 0.5), layout, random({m, d}, 701)},
                         {Tensor::empty({w}, DType::F64), Tensor::empty({m, d}, DType::F64),
                          Tensor::empty({w}, DType::F64), Tensor::empty({m, d}, DType::F64)},
                         [](auto& in, auto& out) {
                           soft_align_forward(in[0], in[1], out[0], out[1]);
                           soft_align_backward(in[2], in[0], in[1], out[0], out[2], out[3]);
                         });
}

// --- segment pooling -------------------------------------------------------------------------------

TEST(OpsSemantics, SegmentPoolTakesEachSegmentsMeanAndMax) {
  const Tensor x = Tensor::from({5, 2}, std::vector<double>{1, -4, 3, 2, -1, 0, 7, 7, 5, 8});
  const Tensor segments = ids({2, 2}, {0, 3, 3, 2});
  Tensor out = Tensor::empty({2, 4}, DType::F64), argmax = Tensor::empty({2, 2}, DType::I32);
  segment_pool_forward(x, segments, out, argmax);
  const std::vector<double> want{1, -2.0 / 3, 3, 2, 6, 7.5, 7, 8};
  for (int64_t i = 0; i < 8; ++i) EXPECT_NEAR(get(out, i), want[static_cast<size_t>(i)], 1e-15) << i;
  EXPECT_EQ(argmax.data<int32_t>()[0], 1);
  EXPECT_EQ(argmax.data<int32_t>()[1], 1);
  EXPECT_EQ(argmax.data<int32_t>()[2], 3);
  EXPECT_EQ(argmax.data<int32_t>()[3], 4);
}

TEST(OpsGradient, SegmentPool) {
  const int64_t n = 9, d = 3;
  Tensor x = random({n, d}, 710);
  const Tensor segments = ids({3, 2}, {0, 4, 4, 1, 5, 4}), wo = random({3, 2 * d}, 711);
  Tensor out = Tensor::empty({3, 2 * d}, DType::F64), argmax = Tensor::empty({3, d}, DType::I32);
  auto objective = [&] {
    segment_pool_forward(x, segments, out, argmax);
    return dot(wo, out);
  };
  objective();
  Tensor dx = Tensor::empty({n, d}, DType::F64);
  segment_pool_backward(wo, segments, argmax, dx);
  expect_gradient("dx", x, dx, objective);
}

TEST_P(OpsOnDevice, SegmentPoolF32MatchesF64) {
  std::vector<int32_t> segments;
  int64_t n = 0;
  for (int32_t k = 0; k < 40; ++k) {
    const int32_t length = 1 + (k * 11) % 23;
    segments.insert(segments.end(), {static_cast<int32_t>(n), length});
    n += length;
  }
  const int64_t s = 40, d = 64;
  expect_f32_matches_f64(
      device(), "segment_pool", {random({n, d}, 720), ids({s, 2}, segments), random({s, 2 * d}, 721)},
      {Tensor::empty({s, 2 * d}, DType::F64), Tensor::empty({s, d}, DType::I32), Tensor::empty({n, d}, DType::F64)},
      [](auto& in, auto& out) {
        segment_pool_forward(in[0], in[1], out[0], out[1]);
        segment_pool_backward(in[2], in[1], out[1], out[2]);
      });
}

}  // namespace
}  // namespace kglm::nn
