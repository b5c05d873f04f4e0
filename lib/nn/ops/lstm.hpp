// One direction of one layer of ELMo's projected LSTM: TensorFlow's LSTMCell with num_proj,
// cell_clip and proj_clip and no peepholes, as bilm-tf trains it. For stream b at step t:
//   z = gates_x[t, b] + w_h · h[t−1, b]          gates_x = x · W_xᵀ + bias, one GEMM over every
//                                                step, made by the caller (linear_forward)
//   i, j, f, o = the four quarters of z          (TensorFlow's order; AllenNLP reorders on load)
//   c[t] = clip(σ(f + forget_bias) · c[t−1] + σ(i) · tanh(j), ±cell_clip)
//   m[t] = σ(o) · tanh(c[t])
//   h[t] = clip(w_proj · m[t], ±proj_clip)
// Rows are step-major: row t·B + b is stream b at step t. The state of the window before comes in
// as h0, c0 (ELMo carries it from batch to batch: truncated back-propagation, so no gradient flows
// into it). Per step: one GEMM for the recurrence, one fused kernel for the cell, one GEMM for the
// projection; the backward pass does the weight gradients as two GEMMs over all steps at the end.
#pragma once

#include "nn/ops/linear.hpp"

namespace kglm::nn {

struct LstmShape {
  int64_t steps = 0, streams = 0, cell = 0, projection = 0;
  float cell_clip = 0, proj_clip = 0;  // 0: no clipping
  float forget_bias = 1.0f;            // added to f at run time (TensorFlow's, not in the bias)
};

// What the forward pass keeps for the backward one. gates [T·B, 4·cell]: σ(i), tanh(j),
// σ(f + forget_bias), σ(o); memory [T·B, cell]: m; projected [T·B, projection]: w_proj · m before the
// clip; cell [T·B, cell]: c before the clip, in the wide dtype (F32 for half precision: the cell
// state is a running sum).
struct LstmSaved {
  Tensor gates, memory, projected, cell;
  // Allocated for `s` in the dtype and on the device of `like`.
  static LstmSaved allocate(const LstmShape& s, const Tensor& like);
};

// gates_x [T·B, 4·cell]; w_h [4·cell, projection]; w_proj [projection, cell]; h0 [B, projection];
// c0 [B, cell] (wide dtype). h [T·B, projection] is written, and c_last [B, cell] (wide; may be c0):
// the clipped cell state after the last step (h's last B rows are the other half of the state).
void lstm_forward(const Tensor& gates_x, const Tensor& w_h, const Tensor& w_proj, const Tensor& h0, const Tensor& c0,
                  const LstmShape& s, Tensor& h, LstmSaved& saved, Tensor& c_last);

// dh [T·B, projection]: the loss gradient of h. dgates_x [T·B, 4·cell] is written (the gradient of
// z, which the caller takes through the input GEMM with linear_backward: dx, dW_x, dbias); dw_h and
// dw_proj (wide dtype) are accumulated.
void lstm_backward(const Tensor& dh, const Tensor& w_h, const Tensor& w_proj, const Tensor& h0, const Tensor& c0,
                   const Tensor& h, const LstmSaved& saved, const LstmShape& s, Tensor& dgates_x, Tensor& dw_h,
                   Tensor& dw_proj);

}  // namespace kglm::nn
