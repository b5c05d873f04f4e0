// Tests of ELMo's ops: the projected LSTM with clipping (finite differences in double, a state
// carried across calls equal to one long call, F32 on every device against F64), the character
// convolution with its max-pool (against a direct loop, finite differences, F32 against F64).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "nn/ops/char_convolution.hpp"
#include "nn/ops/lstm.hpp"
#include "ops_test_util.hpp"

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

}  // namespace
}  // namespace kglm::nn
