// The small layers of the frozen-feature heads: the features' mix (a scalar mix of every layer, or
// the one layer kept) and a feed-forward layer (linear, ReLU, dropout), each with its backward pass.
// The heads hold their own parameters; the encoder has none here (it is frozen: no gradients and no
// optimizer state for it).
#pragma once

#include <optional>
#include <string>

#include "nn/ops/dropout.hpp"
#include "nn/parameters.hpp"
#include "nn/scalar_mix.hpp"

namespace kglm::train::frozen {

// x [J, N, D] → [N, D]: γ · Σ softmax(s)_j x_j when J > 1, else x itself.
class FeatureMix {
 public:
  FeatureMix(nn::ParameterStore& params, int64_t layers);
  const nn::Tensor& forward(const nn::Tensor& x);
  void backward(const nn::Tensor& dy);
  // "mix 0.12,0.30,0.58 γ 1.04", or "" for one layer.
  std::string describe() const;

 private:
  std::optional<nn::ScalarMix> mix_;
  nn::Tensor view_;
};

enum class Activation : uint8_t { relu, tanh };

// y = dropout(act(x · Wᵀ + b)), act ReLU (the taggers' and parsers' MLPs) or tanh (ESIM's output
// MLP); "<name>.weight" [out, in], "<name>.bias" [out].
class FeedForward {
 public:
  FeedForward(nn::ParameterStore& params, const std::string& name, int64_t in, int64_t out, float dropout,
              Activation activation = Activation::relu);
  // key: this site's dropout key when training, nullptr otherwise.
  const nn::Tensor& forward(const nn::Tensor& x, const nn::DropoutKey* key);
  // dx (overwritten; skipped when undefined) from dy of the last forward.
  void backward(const nn::Tensor& dy, nn::Tensor& dx);

 private:
  nn::ParameterStore& params_;
  size_t w_, b_;
  int64_t out_;
  float p_;
  Activation activation_;
  const nn::Tensor* x_ = nullptr;
  nn::Tensor pre_, act_, y_, mask_, dpre_;
  bool dropped_ = false;
};

// A linear layer's parameters (weight [out, in] Glorot normal, bias zero).
struct LinearParams {
  size_t weight, bias;
};
LinearParams add_linear(nn::ParameterStore& params, const std::string& name, int64_t in, int64_t out);

}  // namespace kglm::train::frozen
