// A bidirectional LSTM over sentences packed as rows (ESIM's input and composition encoders):
// sentence s is the next length_s rows of x; the forward LSTM reads it from its first word, the
// backward one from its last, each from a zero state; y [N, 2·hidden] = [forward; backward].
// The cell is PyTorch nn.LSTM's (no peepholes, projection or clipping; no forget bias added), run
// on ELMo's LSTM op (nn/ops/lstm.hpp) with its projection fixed to the identity — a constant, not a
// parameter, so the op needs no second variant; it costs one hidden×hidden GEMM per step. The
// sentences of a batch run as streams padded to the longest: padding follows each sentence's last
// step in both directions, so no valid output reads it and no gradient flows from it.
#pragma once

#include <span>
#include <string>

#include "nn/ops/lstm.hpp"
#include "nn/parameters.hpp"

namespace kglm::train::frozen {

class BiLstm {
 public:
  // "<name>.{forward,backward}.{weight_ih [4h, in], weight_hh [4h, h], bias [4h]}".
  BiLstm(nn::ParameterStore& params, const std::string& name, int64_t in, int64_t hidden);
  const nn::Tensor& forward(const nn::Tensor& x, std::span<const int32_t> lengths);
  // dx [N, in] is overwritten; the parameters' gradients are accumulated.
  void backward(const nn::Tensor& dy, nn::Tensor& dx);

 private:
  struct Direction {
    size_t weight_ih, weight_hh, bias;
    nn::Tensor in_index;    // I32 [T·B]: each padded step's row of the gates (row N: zeros)
    nn::Tensor out_index;   // I32 [N]: each row's padded step
    nn::Tensor half_index;  // I32 [N]: each row's half in y viewed as [2N, h]
    nn::Tensor gates, h, c_last;
    nn::LstmSaved saved;
  };
  nn::ParameterStore& params_;
  int64_t hidden_;
  Direction directions_[2];
  nn::Tensor identity_, dprojection_, zeros_h_, zeros_c_, y_;
  const nn::Tensor* x_ = nullptr;
  nn::LstmShape shape_;
};

}  // namespace kglm::train::frozen
