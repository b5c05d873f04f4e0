#include "train/frozen/feed_forward.hpp"

#include <cmath>
#include <cstdio>

#include "nn/ops/activation.hpp"
#include "nn/ops/linear.hpp"

namespace kglm::train::frozen {

namespace {

// (Re)allocates t as [rows, cols] F32 on the device when its shape differs.
void ensure(nn::Tensor& t, int64_t rows, int64_t cols, nn::Device device) {
  if (!t.defined() || t.dim(0) != rows || t.dim(1) != cols) t = nn::Tensor::empty({rows, cols}, nn::DType::F32, device);
}

}  // namespace

FeatureMix::FeatureMix(nn::ParameterStore& params, int64_t layers) {
  if (layers > 1) mix_.emplace(params, "mix", layers);
}

const nn::Tensor& FeatureMix::forward(const nn::Tensor& x) {
  if (mix_) return mix_->forward(x);
  view_ = x.view({x.dim(1), x.dim(2)});
  return view_;
}

void FeatureMix::backward(const nn::Tensor& dy) {
  if (mix_) mix_->backward(dy);
}

std::string FeatureMix::describe() const {
  if (!mix_) return "";
  std::string s = "mix";
  char buf[32];
  for (double w : mix_->weights()) {
    std::snprintf(buf, sizeof buf, "%s%.3f", s.size() == 3 ? " " : ",", w);
    s += buf;
  }
  std::snprintf(buf, sizeof buf, " gamma %.3f", mix_->gamma());
  return s + buf;
}

LinearParams add_linear(nn::ParameterStore& params, const std::string& name, int64_t in, int64_t out) {
  const LinearParams l{params.add(name + ".weight", {out, in}, nn::Parameter::Init::Normal, true),
                       params.add(name + ".bias", {out}, nn::Parameter::Init::Zeros, false)};
  // Glorot's normal initialisation (torch.nn.init.xavier_normal_): variance 2 / (in + out).
  params[l.weight].init_std = std::sqrt(2.0 / static_cast<double>(in + out));
  return l;
}

FeedForward::FeedForward(nn::ParameterStore& params, const std::string& name, int64_t in, int64_t out, float dropout,
                         Activation activation)
    : params_(params), out_(out), p_(dropout), activation_(activation) {
  const LinearParams l = add_linear(params, name, in, out);
  w_ = l.weight, b_ = l.bias;
}

const nn::Tensor& FeedForward::forward(const nn::Tensor& x, const nn::DropoutKey* key) {
  const int64_t n = x.dim(0);
  const nn::Device device = params_.device();
  ensure(pre_, n, out_, device);
  ensure(act_, n, out_, device);
  nn::linear_forward(x, params_[w_].compute, params_[b_].compute, pre_);
  if (activation_ == Activation::relu)
    nn::relu_forward(pre_, act_);
  else
    nn::tanh_forward(pre_, act_);
  x_ = &x;
  dropped_ = key != nullptr && p_ > 0;
  if (!dropped_) return act_;
  ensure(y_, n, out_, device);
  if (!mask_.defined() || mask_.numel() != n * out_) mask_ = nn::Tensor::empty({n, out_}, nn::DType::U8, device);
  nn::dropout_forward(act_, p_, *key, y_, mask_);
  return y_;
}

void FeedForward::backward(const nn::Tensor& dy, nn::Tensor& dx) {
  ensure(dpre_, dy.dim(0), out_, params_.device());
  if (dropped_)
    nn::dropout_backward(dy, mask_, p_, dpre_);
  else
    dpre_.copy_from(dy);
  if (activation_ == Activation::relu)
    nn::relu_backward(dpre_, act_, dpre_);
  else
    nn::tanh_backward(dpre_, act_, dpre_);
  nn::linear_backward(dpre_, *x_, params_[w_].compute, dx, params_[w_].grad, params_[b_].grad);
}

}  // namespace kglm::train::frozen
