// ESIM's parts on their own: the BiLSTM over packed sentences of several lengths gives each
// sentence what it gives it alone (forward and backward, parameter gradients included), and its
// backward direction reads a sentence reversed; the whole ESIM head's gradients match finite
// differences of its loss for every parameter tensor.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "train/frozen/bilstm.hpp"
#include "train/frozen/frozen_head.hpp"

namespace kglm::train::frozen {
namespace {

using nn::DType;
using nn::Tensor;

Tensor random_rows(int64_t rows, int64_t cols, uint64_t seed) {
  Rng rng(seed, 0, 0);
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (float& x : v) x = static_cast<float>(2 * rng.uniform() - 1);
  return Tensor::from({rows, cols}, v);
}

float at(const Tensor& t, int64_t row, int64_t col) { return t.data<float>()[row * t.dim(1) + col]; }

struct Lstm {
  nn::ParameterStore params{nn::Device::Cpu};
  BiLstm lstm{params, "l", 6, 5};
  Lstm() {
    params.allocate(1, true);
    params.initialize(3, 0.1);
  }
};

TEST(EsimBiLstm, APackedBatchGivesEachSentenceWhatItGivesItAlone) {
  Lstm l;
  const std::vector<int32_t> lengths{3, 1, 4};
  const Tensor x = random_rows(8, 6, 1), dy = random_rows(8, 10, 2);
  const Tensor y = l.lstm.forward(x, lengths).clone();
  Tensor dx = Tensor::empty({8, 6});
  l.lstm.backward(dy, dx);
  const Tensor grads = l.params.grads().clone();
  l.params.zero_grads();
  int64_t first = 0;
  for (int32_t n : lengths) {
    const Tensor xs = x.rows(first, first + n).clone(), dys = dy.rows(first, first + n).clone();
    const Tensor& ys = l.lstm.forward(xs, std::vector<int32_t>{n});
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < 10; ++c) EXPECT_NEAR(at(ys, r, c), at(y, first + r, c), 1e-6) << r << "," << c;
    Tensor dxs = Tensor::empty({n, 6});
    l.lstm.backward(dys, dxs);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < 6; ++c) EXPECT_NEAR(at(dxs, r, c), at(dx, first + r, c), 1e-6) << r << "," << c;
    first += n;
  }
  // The parameter gradients of the sentences alone add up to the batch's.
  const float* a = grads.data<float>();
  const float* b = l.params.grads().data<float>();
  for (int64_t i = 0; i < grads.numel(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5) << i;
}

TEST(EsimBiLstm, TheBackwardDirectionReadsTheSentenceFromItsEnd) {
  Lstm l;
  const Tensor x = random_rows(4, 6, 5);
  const Tensor y = l.lstm.forward(x, std::vector<int32_t>{4}).clone();
  // The backward half of the last word has read that word alone, as has the forward half of the
  // first: each equals the output of a one-word sentence.
  const Tensor last = x.rows(3, 4).clone(), first = x.rows(0, 1).clone();
  const Tensor y_last = l.lstm.forward(last, std::vector<int32_t>{1}).clone();
  const Tensor& y_first = l.lstm.forward(first, std::vector<int32_t>{1});
  for (int64_t c = 0; c < 5; ++c) {
    EXPECT_NEAR(at(y, 3, 5 + c), at(y_last, 0, 5 + c), 1e-6);
    EXPECT_NEAR(at(y, 0, c), at(y_first, 0, c), 1e-6);
  }
  // ... and the backward half of the first word has read all four.
  double differ = 0;
  for (int64_t c = 0; c < 5; ++c) differ += std::abs(at(y, 0, 5 + c) - at(y_first, 0, 5 + c));
  EXPECT_GT(differ, 1e-3);
}

// An encoder of fixed pseudo-random vectors per word, for the head's test.
class WordHashEncoder final : public FrozenEncoder {
 public:
  WordHashEncoder() {
    kind_ = "test";
    layers_ = 2;
    width_ = 8;
  }

 protected:
  void encode_batch(std::span<const Words> sentences, std::span<const size_t> batch, const Take& take) override {
    for (size_t i : batch) {
      const Words& w = sentences[i];
      std::vector<float> v(static_cast<size_t>(layers_ * width_) * w.size());
      for (int64_t l = 0; l < layers_; ++l)
        for (size_t k = 0; k < w.size(); ++k) {
          Rng rng(std::hash<std::string>()(w[k]), static_cast<uint64_t>(l), 7);
          for (int64_t c = 0; c < width_; ++c)
            v[(static_cast<size_t>(l) * w.size() + k) * static_cast<size_t>(width_) + static_cast<size_t>(c)] =
                static_cast<float>(2 * rng.uniform() - 1);
        }
      take(i, v.data());
    }
  }
  bool equal_lengths() const override { return false; }
};

TEST(EsimHead, GradientsMatchFiniteDifferencesOfTheLoss) {
  FrozenData t;
  const std::vector<std::vector<std::string>> words{{"a", "cat", "sat"},         {"it", "sat"}, {"dogs", "bark"},
                                                    {"no", "dog", "barks", "."}, {"x"},         {"y", "z"}};
  for (size_t i = 0; i < words.size(); i += 2) {
    t.pairs.push_back({"p", "h", "label", i / 2 + 1});
    t.pair_words.push_back(words[i]);
    t.pair_words.push_back(words[i + 1]);
  }
  t.labels = {0, 2, 1};
  t.first = {0};
  for (const Words& w : t.pair_words) t.first.push_back(t.first.back() + static_cast<int64_t>(w.size()));
  WordHashEncoder encoder;
  t.features = std::make_unique<FeatureCache>(encoder, t.pair_words, -1);
  HeadShape shape;
  shape.layers = 2, shape.width = 8, shape.tags = 3, shape.mlp = 4, shape.dropout = 0;
  std::unique_ptr<FrozenHead> head = make_frozen_head(FrozenTask::nli, shape, nn::Device::Cpu);
  nn::ParameterStore& params = head->params();
  params.allocate(1, true);
  params.initialize(11, 0.3);
  const std::vector<uint32_t> examples{0, 1, 2};
  const Tensor x = t.features->gather(t.feature_sentences(examples), nn::Device::Cpu);
  int64_t counted = 0;
  auto loss = [&] {
    const double l = head->train_batch(t, examples, x, 1, 0, counted);
    return l;
  };
  params.zero_grads();
  loss();
  EXPECT_EQ(counted, 3);
  const Tensor analytic = params.grads().clone();
  int checked = 0;
  for (nn::Parameter& p : params.all()) {
    float* v = p.value.data<float>();
    const int64_t offset = p.grad.data<float>() - params.grads().data<float>();
    for (int64_t i : {int64_t{0}, p.value.numel() / 2, p.value.numel() - 1}) {
      const float keep = v[i];
      const double h = 1e-3;
      v[i] = keep + static_cast<float>(h);
      const double up = loss();
      v[i] = keep - static_cast<float>(h);
      const double down = loss();
      v[i] = keep;
      const double numeric = (up - down) / (2 * h), want = analytic.data<float>()[offset + i];
      EXPECT_NEAR(want, numeric, 2e-3 + 0.05 * std::abs(numeric)) << p.name << "[" << i << "]";
      ++checked;
    }
  }
  EXPECT_GE(checked, 3 * 20);
}

}  // namespace
}  // namespace kglm::train::frozen
