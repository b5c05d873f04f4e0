// A scalar mix of a stack of frozen layers (Peters et al. 2018, eq. 1): y = γ · Σ_j softmax(s)_j h_j,
// with s [J] starting at zero (an even mix) and γ at one, as AllenNLP's ScalarMix (no layer norm).
// The layers are features computed without gradients; only s and γ learn.
#pragma once

#include <string>
#include <vector>

#include "nn/parameters.hpp"

namespace kglm::nn {

class ScalarMix {
 public:
  // Declares "<prefix>.scalar_parameters" [J] and "<prefix>.gamma" [1] (AllenNLP's names).
  ScalarMix(ParameterStore& params, const std::string& prefix, int64_t layers);

  // x [J, N, D] on the parameters' device; returns y [N, D] (valid until the next call).
  const Tensor& forward(const Tensor& x);
  // dy [N, D] of the last forward: adds the gradients of s and γ.
  void backward(const Tensor& dy);
  // The current mix, softmax(s) (host), for logs and reports.
  std::vector<double> weights() const;
  double gamma() const;

 private:
  std::vector<float> coefficients(std::vector<double>& w, double& gamma) const;
  ParameterStore& params_;
  size_t s_, gamma_;
  int64_t layers_;
  const Tensor* x_ = nullptr;
  Tensor y_;
};

}  // namespace kglm::nn
