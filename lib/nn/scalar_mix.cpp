#include "nn/scalar_mix.hpp"

#include <cmath>

#include "core/error.hpp"
#include "nn/ops/elementwise.hpp"
#include "nn/ops/scalar_mix.hpp"

namespace kglm::nn {

namespace {

std::vector<double> host_values(const Tensor& t) {
  const Tensor host = t.to(Device::Cpu);
  std::vector<double> out(static_cast<size_t>(host.numel()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = host.data<float>()[i];
  return out;
}

}  // namespace

ScalarMix::ScalarMix(ParameterStore& params, const std::string& prefix, int64_t layers)
    : params_(params), layers_(layers) {
  if (layers < 1 || layers > kMaxMixedLayers)
    throw Error("a scalar mix takes 1 to " + std::to_string(kMaxMixedLayers) + " layers, not " +
                std::to_string(layers));
  s_ = params.add(prefix + ".scalar_parameters", {layers}, Parameter::Init::Zeros, false);
  gamma_ = params.add(prefix + ".gamma", {1}, Parameter::Init::Ones, false);
}

std::vector<float> ScalarMix::coefficients(std::vector<double>& w, double& gamma) const {
  w = host_values(params_[s_].value);
  gamma = host_values(params_[gamma_].value)[0];
  double top = w[0], total = 0;
  for (double v : w) top = std::max(top, v);
  for (double& v : w) total += (v = std::exp(v - top));
  std::vector<float> c(w.size());
  for (size_t j = 0; j < w.size(); ++j) c[j] = static_cast<float>(gamma * (w[j] /= total));
  return c;
}

std::vector<double> ScalarMix::weights() const {
  std::vector<double> w;
  double gamma = 0;
  coefficients(w, gamma);
  return w;
}

double ScalarMix::gamma() const { return host_values(params_[gamma_].value)[0]; }

const Tensor& ScalarMix::forward(const Tensor& x) {
  if (x.dim(0) != layers_)
    throw Error("scalar mix: " + std::to_string(x.dim(0)) + " layers given to a mix of " + std::to_string(layers_));
  std::vector<double> w;
  double gamma = 0;
  const std::vector<float> c = coefficients(w, gamma);
  if (!y_.defined() || y_.dim(0) != x.dim(1) || y_.dim(1) != x.dim(2) || y_.dtype() != x.dtype())
    y_ = Tensor::empty({x.dim(1), x.dim(2)}, x.dtype(), x.device());
  scalar_mix_forward(x, c, y_);
  x_ = &x;
  return y_;
}

void ScalarMix::backward(const Tensor& dy) {
  if (!params_[s_].grad.defined()) return;  // frozen
  std::vector<double> w;
  double gamma = 0;
  coefficients(w, gamma);
  // y = γ Σ w_j x_j with w = softmax(s): ∂/∂γ = Σ w_j d_j, ∂/∂s_j = γ w_j (d_j − Σ_k w_k d_k),
  // d_j = Σ dy ⊙ x_j.
  const std::vector<double> d = scalar_mix_dots(dy, *x_);
  double mean = 0;
  for (int64_t j = 0; j < layers_; ++j) mean += w[static_cast<size_t>(j)] * d[static_cast<size_t>(j)];
  std::vector<float> ds(static_cast<size_t>(layers_));
  for (size_t j = 0; j < ds.size(); ++j) ds[j] = static_cast<float>(gamma * w[j] * (d[j] - mean));
  accumulate(params_[s_].grad, Tensor::from({layers_}, ds).to(params_.device()));
  accumulate(params_[gamma_].grad,
             Tensor::from({1}, std::vector<float>{static_cast<float>(mean)}).to(params_.device()));
}

}  // namespace kglm::nn
