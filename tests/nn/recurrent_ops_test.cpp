// Tests of ELMo's ops: the projected LSTM with clipping (finite differences in double, a state
// carried across calls equal to one long call, F32 on every device against F64), the character
// convolution with its max-pool (against a direct loop, finite differences, F32 against F64), the
// highway gating, and the sampled softmax with its log-uniform sampler (the distribution, the loss
// against its definition with an accidental hit, finite differences, F32 against F64); and all of
// them against PyTorch in TensorFlow's weight layouts (tests/reference/make_elmo_fixtures.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "nn/ops/activation.hpp"
#include "nn/ops/char_convolution.hpp"
#include "nn/ops/embedding.hpp"
#include "nn/ops/highway.hpp"
#include "nn/ops/lstm.hpp"
#include "nn/ops/sampled_softmax.hpp"
#include "nn/safetensors.hpp"
#include "ops_test_util.hpp"
#include "unit/test_paths.hpp"

namespace kglm::nn {
namespace {

// --- LSTM ------------------------------------------------------------------------------------------

struct LstmCase {
  LstmShape shape;
  Tensor gates_x, w_h, w_proj, h0, c0;
  // Scaled so that both clips bind on some elements (the test checks that they do).
  static LstmCase make(int64_t steps, int64_t streams, uint64_t seed) {
    LstmCase c;
    c.shape = {steps, streams, 5, 4, 0.9f, 0.35f, 1.0f};
    const int64_t d = c.shape.cell, p = c.shape.projection;
    c.gates_x = random({steps * streams, 4 * d}, seed, -2, 2);
    c.w_h = random({4 * d, p}, seed + 1);
    c.w_proj = random({p, d}, seed + 2);
    c.h0 = random({streams, p}, seed + 3, -0.35, 0.35);
    c.c0 = random({streams, d}, seed + 4, -0.9, 0.9);
    return c;
  }
};

struct LstmRun {
  Tensor h, c_last;
  LstmSaved saved;
};

LstmRun run_lstm(const LstmCase& c, const Tensor& gates_x) {
  const LstmShape& s = c.shape;
  LstmRun r{Tensor::empty({s.steps * s.streams, s.projection}, gates_x.dtype()),
            Tensor::empty({s.streams, s.cell}, gates_x.dtype()), LstmSaved::allocate(s, gates_x)};
  lstm_forward(gates_x, c.w_h, c.w_proj, c.h0, c.c0, s, r.h, r.saved, r.c_last);
  return r;
}

TEST(OpsGradient, LstmWithProjectionAndClipping) {
  LstmCase c = LstmCase::make(4, 3, 200);
  const LstmShape& s = c.shape;
  const int64_t rows = s.steps * s.streams;
  Tensor wy = random({rows, s.projection}, 210);
  auto objective = [&] { return dot(wy, run_lstm(c, c.gates_x).h); };
  const LstmRun r = run_lstm(c, c.gates_x);
  // Both clips bind somewhere, and not everywhere.
  int64_t cells_clipped = 0, proj_clipped = 0;
  for (int64_t i = 0; i < r.saved.cell.numel(); ++i) cells_clipped += std::abs(get(r.saved.cell, i)) > s.cell_clip;
  for (int64_t i = 0; i < r.saved.projected.numel(); ++i)
    proj_clipped += std::abs(get(r.saved.projected, i)) > s.proj_clip;
  EXPECT_GT(cells_clipped, 0);
  EXPECT_LT(cells_clipped, r.saved.cell.numel());
  EXPECT_GT(proj_clipped, 0);
  EXPECT_LT(proj_clipped, r.saved.projected.numel());

  // Step 0 of stream 0 by hand, element 0 of h.
  {
    const int64_t d = s.cell, p = s.projection;
    auto z = [&](int64_t gate, int64_t k) {
      double v = get(c.gates_x, gate * d + k);
      for (int64_t q = 0; q < p; ++q) v += get(c.w_h, (gate * d + k) * p + q) * get(c.h0, q);
      return v;
    };
    auto sig = [](double x) { return 1 / (1 + std::exp(-x)); };
    double h00 = 0;
    for (int64_t k = 0; k < d; ++k) {
      const double cell = sig(z(2, k) + 1.0) * get(c.c0, k) + sig(z(0, k)) * std::tanh(z(1, k));
      const double clipped = std::clamp(cell, -0.9, 0.9);
      h00 += get(c.w_proj, k) * sig(z(3, k)) * std::tanh(clipped);
    }
    EXPECT_NEAR(get(r.h, 0), std::clamp(h00, -0.35, 0.35), 1e-12);
  }

  Tensor dgates = Tensor::empty({rows, 4 * s.cell}, DType::F64);
  Tensor dw_h = Tensor::zeros({4 * s.cell, s.projection}, DType::F64);
  Tensor dw_proj = Tensor::zeros({s.projection, s.cell}, DType::F64);
  lstm_backward(wy, c.w_h, c.w_proj, c.h0, c.c0, r.h, r.saved, s, dgates, dw_h, dw_proj);
  expect_gradient("dgates_x", c.gates_x, dgates, objective);
  expect_gradient("dw_h", c.w_h, dw_h, objective);
  expect_gradient("dw_proj", c.w_proj, dw_proj, objective);
}

// A window run as two calls, the state carried from the first into the second, gives the one
// call's outputs: what ELMo's stateful training does from batch to batch.
TEST(OpsSemantics, LstmStateCarriesAcrossCalls) {
  LstmCase whole = LstmCase::make(6, 2, 220);
  const LstmRun all = run_lstm(whole, whole.gates_x);
  const int64_t half_rows = 3 * 2;
  LstmCase first = whole, second = whole;
  first.shape.steps = second.shape.steps = 3;
  const LstmRun a = run_lstm(first, whole.gates_x.rows(0, half_rows));
  second.h0 = a.h.rows(half_rows - 2, half_rows).clone();
  second.c0 = a.c_last;
  const LstmRun b = run_lstm(second, whole.gates_x.rows(half_rows, 2 * half_rows));
  for (int64_t i = 0; i < a.h.numel(); ++i) EXPECT_EQ(get(a.h, i), get(all.h, i));
  for (int64_t i = 0; i < b.h.numel(); ++i) EXPECT_EQ(get(b.h, i), get(all.h, a.h.numel() + i)) << i;
  for (int64_t i = 0; i < b.c_last.numel(); ++i) EXPECT_EQ(get(b.c_last, i), get(all.c_last, i));
  // The cell state is clipped when it is carried.
  for (int64_t i = 0; i < all.c_last.numel(); ++i) EXPECT_LE(std::abs(get(all.c_last, i)), 0.9);
}

TEST_P(OpsOnDevice, LstmF32MatchesF64) {
  const LstmCase c = LstmCase::make(7, 5, 230);
  const LstmShape s = c.shape;
  const int64_t rows = s.steps * s.streams;
  expect_f32_matches_f64(
      device(), "lstm", {c.gates_x, c.w_h, c.w_proj, c.h0, c.c0, random({rows, s.projection}, 231)},
      {Tensor::empty({rows, s.projection}, DType::F64), Tensor::empty({s.streams, s.cell}, DType::F64),
       Tensor::empty({rows, 4 * s.cell}, DType::F64), Tensor::zeros({4 * s.cell, s.projection}, DType::F64),
       Tensor::zeros({s.projection, s.cell}, DType::F64)},
      [s](auto& in, auto& out) {
        LstmSaved saved = LstmSaved::allocate(s, in[0]);
        lstm_forward(in[0], in[1], in[2], in[3], in[4], s, out[0], saved, out[1]);
        lstm_backward(in[5], in[1], in[2], in[3], in[4], out[0], saved, s, out[2], out[3], out[4]);
      });
}

TEST(OpsSemantics, LstmArgumentsAreChecked) {
  LstmCase c = LstmCase::make(2, 2, 240);
  LstmShape bad = c.shape;
  bad.steps = 3;  // gates_x holds 2 steps
  Tensor h = Tensor::empty({6, 4}, DType::F64), c_last = Tensor::empty({2, 5}, DType::F64);
  LstmSaved saved = LstmSaved::allocate(bad, c.gates_x);
  expect_error([&] { lstm_forward(c.gates_x, c.w_h, c.w_proj, c.h0, c.c0, bad, h, saved, c_last); }, "gates_x");
  LstmShape negative = c.shape;
  negative.cell_clip = -1;
  expect_error([&] { lstm_forward(c.gates_x, c.w_h, c.w_proj, c.h0, c.c0, negative, h, saved, c_last); }, "clip");
}

// --- character convolution -------------------------------------------------------------------------

struct ConvCase {
  int64_t words = 3, chars = 7, embed = 3, filters = 4, width = 3, columns = 6, first = 1;
  Tensor x, w, b;
  explicit ConvCase(uint64_t seed) {
    x = random({words, chars, embed}, seed);
    w = random({filters, width * embed}, seed + 1);
    b = random({filters}, seed + 2);
  }
};

TEST(OpsGradient, CharConvolutionWithMaxPool) {
  ConvCase c(300);
  Tensor out = filled({c.words, c.columns}, DType::F64, 7), argmax = Tensor::zeros({c.words, c.columns}, DType::I32);
  auto objective_of = [&](const Tensor& wy) {
    return [&c, &out, &argmax, wy] {
      char_convolution_forward(c.x, c.w, c.b, c.width, c.first, out, argmax);
      return dot(wy, out);
    };
  };
  char_convolution_forward(c.x, c.w, c.b, c.width, c.first, out, argmax);
  // Against the definition, by a direct loop; the columns of other widths are left alone.
  for (int64_t n = 0; n < c.words; ++n) {
    EXPECT_EQ(get(out, n * c.columns), 7.0);
    EXPECT_EQ(get(out, n * c.columns + 5), 7.0);
    for (int64_t f = 0; f < c.filters; ++f) {
      double best = -1e300;
      int32_t at = -1;
      for (int64_t p = 0; p + c.width <= c.chars; ++p) {
        double v = get(c.b, f);
        for (int64_t q = 0; q < c.width; ++q)
          for (int64_t e = 0; e < c.embed; ++e)
            v += get(c.w, f * c.width * c.embed + q * c.embed + e) * get(c.x, (n * c.chars + p + q) * c.embed + e);
        if (v > best) best = v, at = static_cast<int32_t>(p);
      }
      EXPECT_NEAR(get(out, n * c.columns + c.first + f), best, 1e-12);
      EXPECT_EQ(argmax.data<int32_t>()[n * c.columns + c.first + f], at);
    }
  }
  // Only this width's columns of dout are read.
  Tensor wy = random({c.words, c.columns}, 310);
  Tensor dx = Tensor::zeros({c.words, c.chars, c.embed}, DType::F64);
  Tensor dw = Tensor::zeros({c.filters, c.width * c.embed}, DType::F64), db = Tensor::zeros({c.filters}, DType::F64);
  char_convolution_backward(wy, c.x, c.w, argmax, c.width, c.first, dx, dw, db);
  expect_gradient("dx", c.x, dx, objective_of(wy));
  expect_gradient("dw", c.w, dw, objective_of(wy));
  expect_gradient("db", c.b, db, objective_of(wy));
  // dx accumulates (every width adds into the one character gradient).
  Tensor base = random({c.words, c.chars, c.embed}, 311), acc = base.clone(), none;
  char_convolution_backward(wy, c.x, c.w, argmax, c.width, c.first, acc, none, none);
  for (int64_t i = 0; i < acc.numel(); ++i) EXPECT_NEAR(get(acc, i), get(base, i) + get(dx, i), 1e-12);
}

TEST_P(OpsOnDevice, CharConvolutionF32MatchesF64) {
  // Enough words for several blocks of the CPU kernel, the paper's 50 characters and 16 dimensions.
  const int64_t n = 70, chars = 50, e = 16, filters = 24, width = 5, columns = 40, first = 9;
  expect_f32_matches_f64(device(), "char_convolution",
                         {random({n, chars, e}, 320), random({filters, width * e}, 321, -0.2, 0.2),
                          random({filters}, 322), random({n, columns}, 323)},
                         {Tensor::zeros({n, columns}, DType::F64), Tensor::zeros({n, chars, e}, DType::F64),
                          Tensor::zeros({filters, width * e}, DType::F64), Tensor::zeros({filters}, DType::F64)},
                         [&](auto& in, auto& out) {
                           Tensor argmax = Tensor::zeros({n, columns}, DType::I32, in[0].device());
                           char_convolution_forward(in[0], in[1], in[2], width, first, out[0], argmax);
                           char_convolution_backward(in[3], in[0], in[1], argmax, width, first, out[1], out[2], out[3]);
                         });
}

TEST(OpsSemantics, CharConvolutionArgumentsAreChecked) {
  ConvCase c(330);
  Tensor out = Tensor::zeros({c.words, c.columns}, DType::F64),
         argmax = Tensor::zeros({c.words, c.columns}, DType::I32);
  expect_error([&] { char_convolution_forward(c.x, c.w, c.b, 8, c.first, out, argmax); }, "filter width 8");
  expect_error([&] { char_convolution_forward(c.x, c.w, c.b, c.width, 3, out, argmax); }, "columns [3, 7) of 6");
  expect_error([&] { char_convolution_forward(c.x, c.w, c.b, 2, c.first, out, argmax); }, "'w'");
}

// --- highway ---------------------------------------------------------------------------------------

TEST(OpsGradient, Highway) {
  const int64_t n = 3, h = 5;
  Tensor x = random({n, h}, 400), pre = random({n, 2 * h}, 401, 0.05, 2), wy = random({n, h}, 402);
  for (int64_t i = 0; i < pre.numel(); i += 3) set(pre, i, -get(pre, i));  // both sides of the ReLU
  Tensor y = Tensor::empty({n, h}, DType::F64);
  auto objective = [&] {
    highway_forward(x, pre, y);
    return dot(wy, y);
  };
  objective();
  auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
  for (int64_t r = 0; r < n; ++r)
    for (int64_t j = 0; j < h; ++j) {
      const double g = sig(get(pre, r * 2 * h + h + j)), t = std::max(get(pre, r * 2 * h + j), 0.0);
      EXPECT_NEAR(get(y, r * h + j), g * t + (1 - g) * get(x, r * h + j), 1e-14);
    }
  Tensor dx = filled({n, h}, DType::F64, 5), dpre = Tensor::empty({n, 2 * h}, DType::F64);
  highway_backward(wy, x, pre, dx, dpre);
  expect_gradient("dx (the direct path)", x, dx, objective);
  expect_gradient("dpre", pre, dpre, objective);
  Tensor acc = filled({n, h}, DType::F64, 5);
  highway_backward(wy, x, pre, acc, dpre, GradMode::Accumulate);
  for (int64_t i = 0; i < acc.numel(); ++i) EXPECT_NEAR(get(acc, i), 5 + get(dx, i), 1e-14);
}

TEST_P(OpsOnDevice, HighwayF32MatchesF64) {
  const int64_t n = 300, h = 64;
  expect_f32_matches_f64(
      device(), "highway", {random({n, h}, 410), random({n, 2 * h}, 411, -3, 3), random({n, h}, 412)},
      {Tensor::empty({n, h}, DType::F64), random({n, h}, 413), Tensor::empty({n, 2 * h}, DType::F64)},
      [](auto& in, auto& out) {
        highway_forward(in[0], in[1], out[0]);
        highway_backward(in[2], in[0], in[1], out[1], out[2], GradMode::Accumulate);
      });
}

// --- sampled softmax -------------------------------------------------------------------------------

TEST(OpsSemantics, LogUniformSamplerFollowsItsDistribution) {
  const int64_t v = 100;
  const LogUniform q{v, 1, 1};
  double total = 0;
  for (int64_t k = 0; k < v; ++k) total += q.probability(k);
  EXPECT_NEAR(total, 1.0, 1e-12);
  EXPECT_NEAR(q.probability(0), std::log(2.0) / std::log(101.0), 1e-15);
  // Single draws: the frequency of each of the first classes is P(k) (±4 standard deviations).
  const int draws = 20000;
  std::vector<int> seen(v, 0);
  Rng rng(11, 0);
  for (int i = 0; i < draws; ++i) ++seen[sample_log_uniform(1, v, rng).ids.data<int32_t>()[0]];
  for (int64_t k = 0; k < 5; ++k) {
    const double p = q.probability(k), sd = std::sqrt(p * (1 - p) / draws);
    EXPECT_NEAR(seen[k] / static_cast<double>(draws), p, 4 * sd) << "class " << k;
  }
  // A unique draw: distinct ids, as many tries as it took, TensorFlow's expected counts.
  const SampledClasses s = sample_log_uniform(40, v, rng);
  std::vector<int32_t> ids(s.ids.data<int32_t>(), s.ids.data<int32_t>() + 40);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::unique(ids.begin(), ids.end()), ids.end());
  EXPECT_GT(s.distribution.tries, 40);  // the frequent classes repeat
  const double p3 = q.probability(3);
  EXPECT_NEAR(s.distribution.log_expected_count(3), std::log(1 - std::pow(1 - p3, s.distribution.tries)), 1e-12);
  EXPECT_NEAR((LogUniform{v, 40, 40}.log_expected_count(3)), std::log(40 * p3), 1e-12);
  expect_error([&] { sample_log_uniform(101, v, rng); }, "sample_log_uniform");
}

struct SoftmaxCase {
  int64_t m = 4, p = 3, v = 12;
  Tensor h, w, b, targets;
  SampledClasses sample;
  SoftmaxCase() {
    h = random({m, p}, 500);
    w = random({v, p}, 501);
    b = random({v}, 502);
    // Row 1's target (7) is also sampled: an accidental hit.
    targets = ids({m}, {3, 7, 0, 11});
    sample = {ids({5}, {7, 2, 0, 9, 5}), LogUniform{v, 5, 8}};
  }
};

TEST(OpsGradient, SampledSoftmax) {
  SoftmaxCase c;
  Tensor none, dw = Tensor::zeros({c.v, c.p}, DType::F64), db = Tensor::zeros({c.v}, DType::F64);
  auto objective = [&] {
    Tensor scratch_w = Tensor::zeros({c.v, c.p}, DType::F64), scratch_b = Tensor::zeros({c.v}, DType::F64);
    return sampled_softmax_loss(c.h, c.w, c.b, c.targets, c.sample, 1.0, none, scratch_w, scratch_b).loss_sum;
  };
  // The loss against its definition.
  double want = 0;
  for (int64_t r = 0; r < c.m; ++r) {
    const int32_t t = c.targets.data<int32_t>()[r];
    auto logit = [&](int32_t k) {
      double z = get(c.b, k) - c.sample.distribution.log_expected_count(k);
      for (int64_t j = 0; j < c.p; ++j) z += get(c.h, r * c.p + j) * get(c.w, k * c.p + j);
      return z;
    };
    double sum = std::exp(logit(t));
    for (int64_t j = 0; j < 5; ++j) {
      const int32_t k = c.sample.ids.data<int32_t>()[j];
      if (k != t) sum += std::exp(logit(k));
    }
    want += std::log(sum) - logit(t);
  }
  Tensor dh = filled({c.m, c.p}, DType::F64, 3);
  const CrossEntropyResult got = sampled_softmax_loss(c.h, c.w, c.b, c.targets, c.sample, 1.0, dh, dw, db);
  EXPECT_NEAR(got.loss_sum, want, 1e-12);
  EXPECT_EQ(got.counted, c.m);
  expect_gradient("dh", c.h, dh, objective);
  expect_gradient("dw", c.w, dw, objective);
  expect_gradient("db", c.b, db, objective);
  // Rows of classes neither sampled nor targeted get nothing.
  for (int64_t j = 0; j < c.p; ++j) EXPECT_EQ(get(dw, 4 * c.p + j), 0.0);
  EXPECT_EQ(get(db, 4), 0.0);
  // dh accumulates when asked; grad_scale scales every gradient.
  Tensor acc = filled({c.m, c.p}, DType::F64, 3), dw2 = Tensor::zeros({c.v, c.p}, DType::F64);
  Tensor db2 = Tensor::zeros({c.v}, DType::F64);
  sampled_softmax_loss(c.h, c.w, c.b, c.targets, c.sample, 0.5, acc, dw2, db2, GradMode::Accumulate);
  for (int64_t i = 0; i < acc.numel(); ++i) EXPECT_NEAR(get(acc, i), 3 + 0.5 * get(dh, i), 1e-12);
  for (int64_t i = 0; i < dw.numel(); ++i) EXPECT_NEAR(get(dw2, i), 0.5 * get(dw, i), 1e-12);
}

TEST_P(OpsOnDevice, SampledSoftmaxF32MatchesF64) {
  const int64_t m = 60, p = 32, v = 500;
  Rng rng(7, 0);
  SampledClasses sample = sample_log_uniform(64, v, rng);
  std::vector<int32_t> t(m);
  for (int64_t r = 0; r < m; ++r)
    t[r] = r % 3 == 0 ? sample.ids.data<int32_t>()[r % 64] : static_cast<int32_t>(rng.below(v));
  const Tensor targets = ids({m}, t);
  std::vector<double> losses;
  expect_f32_matches_f64(
      device(), "sampled_softmax",
      {random({m, p}, 510), random({v, p}, 511, -0.3, 0.3), random({v}, 512), targets, sample.ids},
      {Tensor::empty({m, p}, DType::F64), Tensor::zeros({v, p}, DType::F64), Tensor::zeros({v}, DType::F64)},
      [&](auto& in, auto& out) {
        const SampledClasses here{in[4], sample.distribution};
        losses.push_back(
            sampled_softmax_loss(in[0], in[1], in[2], in[3], here, 1.0 / m, out[0], out[1], out[2]).loss_sum);
      });
  ASSERT_EQ(losses.size(), 2u);  // F64, then F32 on the device
  EXPECT_NEAR(losses[1], losses[0], 1e-5 * losses[0]);
}

// --- PyTorch parity, weights in TensorFlow's layouts -----------------------------------------------

// A 2-D host F32 tensor transposed (TensorFlow's [in, out] weights to linear's [out, in]).
Tensor transposed(const Tensor& t) {
  const Tensor host = t.to(Device::Cpu);
  Tensor out = Tensor::empty({host.dim(1), host.dim(0)});
  for (int64_t r = 0; r < host.dim(0); ++r)
    for (int64_t c = 0; c < host.dim(1); ++c)
      out.data<float>()[c * host.dim(0) + r] = host.data<float>()[r * host.dim(1) + c];
  return out;
}

// a with b under it, on the host (two weights stored as one).
Tensor stacked(const Tensor& a, const Tensor& b) {
  Tensor out = Tensor::empty({a.dim(0) + b.dim(0), a.dim(1)});
  out.rows(0, a.dim(0)).copy_from(a.to(Device::Cpu));
  out.rows(a.dim(0), a.dim(0) + b.dim(0)).copy_from(b.to(Device::Cpu));
  return out;
}

constexpr double kParity = 1e-4;

class ElmoOpsParity : public OpsOnDevice {
 protected:
  SafetensorsFile ref =
      SafetensorsFile::open(std::filesystem::path(test::source_dir()) / "tests/reference/data/elmo-ops.safetensors");
  Tensor f32(const std::string& name) const { return ref.read_f32(name).to(device()); }
  Tensor zeros(const Shape& shape) const { return Tensor::zeros(shape, DType::F32, device()); }
  void expect_close(const Tensor& got, const Tensor& want, const std::string& what) const {
    EXPECT_LE(relative_error(got.to(Device::Cpu).view(want.shape()), want), kParity) << what;
  }
};

TEST_P(ElmoOpsParity, LstmMatchesTorch) {
  const Tensor sizes = ref.read_i32("lstm.sizes"), clips = ref.read_f32("lstm.clips");
  const int32_t* z = sizes.data<int32_t>();
  const int64_t steps = z[0], streams = z[1], inputs = z[2], cell = z[3], proj = z[4], rows = steps * streams;
  const LstmShape s{steps, streams, cell, proj, clips.data<float>()[0], clips.data<float>()[1], 1.0f};
  const Tensor w0 = ref.read_f32("lstm.W_0");
  const Tensor w_x = transposed(w0.rows(0, inputs)).to(device()),
               w_h = transposed(w0.rows(inputs, inputs + proj)).to(device());
  const Tensor w_proj = transposed(ref.read_f32("lstm.W_P_0")).to(device()), bias = f32("lstm.B");
  const Tensor x = f32("lstm.x").view({rows, inputs});
  Tensor gates_x = zeros({rows, 4 * cell}), h = zeros({rows, proj}), c_last = zeros({streams, cell});
  linear_forward(x, w_x, bias, gates_x);
  LstmSaved saved = LstmSaved::allocate(s, gates_x);
  lstm_forward(gates_x, w_h, w_proj, f32("lstm.h0"), f32("lstm.c0"), s, h, saved, c_last);
  expect_close(h, ref.read_f32("lstm.h"), "h");
  expect_close(c_last, ref.read_f32("lstm.c_last"), "c_last");
  Tensor dgates = zeros({rows, 4 * cell}), dw_h = zeros({4 * cell, proj}), dw_proj = zeros({proj, cell});
  lstm_backward(f32("lstm.wy").view({rows, proj}), w_h, w_proj, f32("lstm.h0"), f32("lstm.c0"), h, saved, s, dgates,
                dw_h, dw_proj);
  Tensor dx = zeros({rows, inputs}), dw_x = zeros({4 * cell, inputs}), db = zeros({4 * cell});
  linear_backward(dgates, x, w_x, dx, dw_x, db);
  expect_close(dx, ref.read_f32("lstm.grad.x"), "dx");
  expect_close(stacked(transposed(dw_x), transposed(dw_h)), ref.read_f32("lstm.grad.W_0"), "dW_0");
  expect_close(db, ref.read_f32("lstm.grad.B"), "dB");
  expect_close(transposed(dw_proj), ref.read_f32("lstm.grad.W_P_0"), "dW_P_0");
}

TEST_P(ElmoOpsParity, CharEncoderMatchesTorch) {
  const Tensor char_ids = ref.read_i32("char.ids"), filters = ref.read_i32("char.filters");
  const int64_t words = char_ids.dim(0), chars = char_ids.dim(1), widths = filters.dim(0);
  const Tensor table = f32("char.char_embed");
  const int64_t embed = table.dim(1);
  int64_t total = 0;
  for (int64_t k = 0; k < widths; ++k) total += filters.data<int32_t>()[2 * k + 1];
  const Tensor flat_ids = char_ids.view({words * chars}).to(device());
  Tensor embedded = zeros({words * chars, embed});
  embedding_forward(flat_ids, table, embedded);
  const Tensor x3 = embedded.view({words, chars, embed});
  Tensor pooled = zeros({words, total}), argmax = Tensor::zeros({words, total}, DType::I32, device());
  std::vector<Tensor> conv_w;
  for (int64_t k = 0, first = 0; k < widths; first += filters.data<int32_t>()[2 * k + 1], ++k) {
    const int64_t width = filters.data<int32_t>()[2 * k], count = filters.data<int32_t>()[2 * k + 1];
    conv_w.push_back(
        transposed(ref.read_f32("char.W_cnn_" + std::to_string(k)).view({width * embed, count})).to(device()));
    char_convolution_forward(x3, conv_w[k], f32("char.b_cnn_" + std::to_string(k)), width, first, pooled, argmax);
  }
  Tensor x = zeros({words, total});
  relu_forward(pooled, x);
  // The highway's two products as one: [W_transform; W_carry] in linear's layout.
  const Tensor w_high =
      stacked(transposed(ref.read_f32("char.W_transform")), transposed(ref.read_f32("char.W_carry"))).to(device());
  Tensor b_high =
      stacked(ref.read_f32("char.b_transform").view({total, 1}), ref.read_f32("char.b_carry").view({total, 1}))
          .view({2 * total})
          .to(device());
  Tensor pre = zeros({words, 2 * total}), y = zeros({words, total});
  linear_forward(x, w_high, b_high, pre);
  highway_forward(x, pre, y);
  const Tensor w_proj = transposed(ref.read_f32("char.W_proj")).to(device());
  const int64_t projection = w_proj.dim(0);
  Tensor token = zeros({words, projection});
  linear_forward(y, w_proj, f32("char.b_proj"), token);
  expect_close(token, ref.read_f32("char.token"), "token");

  Tensor dy = zeros({words, total}), dw_proj = zeros({projection, total}), db_proj = zeros({projection});
  linear_backward(f32("char.wy"), y, w_proj, dy, dw_proj, db_proj);
  Tensor dx = zeros({words, total}), dpre = zeros({words, 2 * total});
  Tensor dw_high = zeros({2 * total, total}), db_high = zeros({2 * total});
  highway_backward(dy, x, pre, dx, dpre);
  linear_backward(dpre, x, w_high, dx, dw_high, db_high, GradMode::Accumulate);
  Tensor dpooled = zeros({words, total}), dembedded = zeros({words, chars, embed}), dtable = zeros(table.shape());
  relu_backward(dx, x, dpooled);
  for (int64_t k = 0, first = 0; k < widths; first += filters.data<int32_t>()[2 * k + 1], ++k) {
    const int64_t width = filters.data<int32_t>()[2 * k], count = filters.data<int32_t>()[2 * k + 1];
    Tensor dw = zeros({count, width * embed}), db = zeros({count});
    char_convolution_backward(dpooled, x3, conv_w[k], argmax, width, first, dembedded, dw, db);
    expect_close(transposed(dw), ref.read_f32("char.grad.W_cnn_" + std::to_string(k)), "dW_cnn_" + std::to_string(k));
    expect_close(db, ref.read_f32("char.grad.b_cnn_" + std::to_string(k)), "db_cnn_" + std::to_string(k));
  }
  embedding_backward(flat_ids, dembedded.view({words * chars, embed}), dtable);
  expect_close(dtable, ref.read_f32("char.grad.char_embed"), "dchar_embed");
  const Tensor dw_high_host = dw_high.to(Device::Cpu), db_high_host = db_high.to(Device::Cpu);
  expect_close(transposed(dw_high_host.rows(0, total)), ref.read_f32("char.grad.W_transform"), "dW_transform");
  expect_close(transposed(dw_high_host.rows(total, 2 * total)), ref.read_f32("char.grad.W_carry"), "dW_carry");
  expect_close(db_high_host.view({2 * total, 1}).rows(0, total), ref.read_f32("char.grad.b_transform"), "db_transform");
  expect_close(db_high_host.view({2 * total, 1}).rows(total, 2 * total), ref.read_f32("char.grad.b_carry"), "db_carry");
  expect_close(transposed(dw_proj), ref.read_f32("char.grad.W_proj"), "dW_proj");
  expect_close(db_proj, ref.read_f32("char.grad.b_proj"), "db_proj");
}

TEST_P(ElmoOpsParity, SampledSoftmaxMatchesTorch) {
  const Tensor h = f32("softmax.h"), w = f32("softmax.w"), b = f32("softmax.b");
  const Tensor targets = ref.read_i32("softmax.targets").to(device()), ids_ = ref.read_i32("softmax.sample");
  const SampledClasses sample{
      ids_.to(device()),
      LogUniform{w.dim(0), ids_.dim(0), static_cast<double>(ref.read_f32("softmax.tries").data<float>()[0])}};
  Tensor dh = zeros(h.shape()), dw = zeros(w.shape()), db = zeros(b.shape());
  const CrossEntropyResult r = sampled_softmax_loss(h, w, b, targets, sample, 1.0, dh, dw, db);
  const double want = ref.read_f32("softmax.loss").data<float>()[0];
  EXPECT_NEAR(r.loss_sum, want, kParity * want);
  expect_close(dh, ref.read_f32("softmax.grad.h"), "dh");
  expect_close(dw, ref.read_f32("softmax.grad.w"), "dw");
  expect_close(db, ref.read_f32("softmax.grad.b"), "db");
}

INSTANTIATE_TEST_SUITE_P(Devices, ElmoOpsParity, ::testing::Values(Device::Cpu, Device::Cuda),
                         [](const ::testing::TestParamInfo<Device>& info) {
                           return std::string(device_name(info.param));
                         });

}  // namespace
}  // namespace kglm::nn
