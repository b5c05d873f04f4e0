#include "train/frozen/bilstm.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "nn/ops/elementwise.hpp"
#include "nn/ops/linear.hpp"

namespace kglm::train::frozen {

using nn::DType;
using nn::Tensor;

BiLstm::BiLstm(nn::ParameterStore& params, const std::string& name, int64_t in, int64_t hidden)
    : params_(params), hidden_(hidden) {
  const char* names[2] = {".forward", ".backward"};
  for (int d = 0; d < 2; ++d) {
    const std::string prefix = name + names[d];
    Direction& dir = directions_[d];
    // PyTorch's initialisation: U(−1/√h, 1/√h) for every weight and bias.
    const double a = 1.0 / std::sqrt(static_cast<double>(hidden));
    dir.weight_ih = params.add(prefix + ".weight_ih", {4 * hidden, in}, nn::Parameter::Init::Uniform, true);
    dir.weight_hh = params.add(prefix + ".weight_hh", {4 * hidden, hidden}, nn::Parameter::Init::Uniform, true);
    dir.bias = params.add(prefix + ".bias", {4 * hidden}, nn::Parameter::Init::Uniform, false);
    for (size_t p : {dir.weight_ih, dir.weight_hh, dir.bias}) params[p].init_std = a;
  }
}

const Tensor& BiLstm::forward(const Tensor& x, std::span<const int32_t> lengths) {
  const nn::Device device = params_.device();
  const auto b = static_cast<int64_t>(lengths.size());
  const int64_t n = x.dim(0), steps = *std::max_element(lengths.begin(), lengths.end());
  if (!identity_.defined()) {
    std::vector<float> eye(static_cast<size_t>(hidden_ * hidden_), 0.0f);
    for (int64_t i = 0; i < hidden_; ++i) eye[static_cast<size_t>(i * hidden_ + i)] = 1.0f;
    identity_ = Tensor::from({hidden_, hidden_}, eye).to(device);
    dprojection_ = Tensor::zeros({hidden_, hidden_}, DType::F32, device);
  }
  shape_ = nn::LstmShape{steps, b, hidden_, hidden_, 0.0f, 0.0f, 0.0f};
  zeros_h_ = Tensor::zeros({b, hidden_}, DType::F32, device);
  zeros_c_ = Tensor::zeros({b, hidden_}, DType::F32, device);
  y_ = Tensor::empty({n, 2 * hidden_}, DType::F32, device);
  Tensor y_halves = y_.view({2 * n, hidden_});
  x_ = &x;
  for (int d = 0; d < 2; ++d) {
    Direction& dir = directions_[d];
    std::vector<int32_t> in_index(static_cast<size_t>(steps * b), static_cast<int32_t>(n));
    std::vector<int32_t> out_index(static_cast<size_t>(n)), half_index(static_cast<size_t>(n));
    int64_t first = 0;
    for (int64_t s = 0; s < b; ++s) {
      const int64_t len = lengths[static_cast<size_t>(s)];
      for (int64_t t = 0; t < len; ++t) {
        const int64_t row = first + (d == 0 ? t : len - 1 - t);
        in_index[static_cast<size_t>(t * b + s)] = static_cast<int32_t>(row);
        out_index[static_cast<size_t>(row)] = static_cast<int32_t>(t * b + s);
        half_index[static_cast<size_t>(row)] = static_cast<int32_t>(2 * row + d);
      }
      first += len;
    }
    dir.in_index = Tensor::from({steps * b}, in_index).to(device);
    dir.out_index = Tensor::from({n}, out_index).to(device);
    dir.half_index = Tensor::from({n}, half_index).to(device);
    // The input GEMM over the real rows only, then a zero row that the padded steps read.
    Tensor gates_x = Tensor::empty({n + 1, 4 * hidden_}, DType::F32, device);
    Tensor real = gates_x.rows(0, n);
    nn::linear_forward(x, params_[dir.weight_ih].compute, params_[dir.bias].compute, real);
    gates_x.rows(n, n + 1).zero();
    dir.gates = Tensor::empty({steps * b, 4 * hidden_}, DType::F32, device);
    nn::gather_rows(gates_x, dir.in_index, dir.gates);
    dir.saved = nn::LstmSaved::allocate(shape_, dir.gates);
    dir.h = Tensor::empty({steps * b, hidden_}, DType::F32, device);
    dir.c_last = Tensor::empty({b, hidden_}, DType::F32, device);
    nn::lstm_forward(dir.gates, params_[dir.weight_hh].compute, identity_, zeros_h_, zeros_c_, shape_, dir.h, dir.saved,
                     dir.c_last);
    Tensor mine = Tensor::empty({n, hidden_}, DType::F32, device);
    nn::gather_rows(dir.h, dir.out_index, mine);
    nn::copy_rows_strided(mine, y_halves, d, 2);
  }
  return y_;
}

void BiLstm::backward(const Tensor& dy, Tensor& dx) {
  const nn::Device device = params_.device();
  const int64_t n = dy.dim(0), padded = shape_.steps * shape_.streams;
  const Tensor dy_halves = dy.view({2 * n, hidden_});
  for (int d = 0; d < 2; ++d) {
    Direction& dir = directions_[d];
    Tensor mine = Tensor::empty({n, hidden_}, DType::F32, device);
    nn::gather_rows(dy_halves, dir.half_index, mine);
    Tensor dh = Tensor::zeros({padded, hidden_}, DType::F32, device);
    nn::scatter_add_rows(mine, dir.out_index, dh);
    Tensor dgates = Tensor::empty({padded, 4 * hidden_}, DType::F32, device);
    dprojection_.zero();  // the identity's gradient, discarded
    nn::lstm_backward(dh, params_[dir.weight_hh].compute, identity_, zeros_h_, zeros_c_, dir.h, dir.saved, shape_,
                      dgates, params_[dir.weight_hh].grad, dprojection_);
    Tensor dgates_x = Tensor::zeros({n + 1, 4 * hidden_}, DType::F32, device);
    nn::scatter_add_rows(dgates, dir.in_index, dgates_x);
    nn::linear_backward(dgates_x.rows(0, n), *x_, params_[dir.weight_ih].compute, dx, params_[dir.weight_ih].grad,
                        params_[dir.bias].grad, d == 0 ? nn::GradMode::Overwrite : nn::GradMode::Accumulate);
  }
}

}  // namespace kglm::train::frozen
