// Row-wise outer products, z[n] = vec(a[n] ⊗ b[n]): with a linear layer over z this is a bilinear
// layer (torch.nn.Bilinear: y_l = a · W_l · b + c_l, W viewed [L, P·Q]), the label scorer of
// Dozat & Manning's parser.
#pragma once

#include "nn/tensor.hpp"

namespace kglm::nn {

// a [N, P], b [N, Q], z [N, P·Q] with z[n, p·Q + q] = a[n, p] · b[n, q].
void outer_product_forward(const Tensor& a, const Tensor& b, Tensor& z);
// da [N, P] = Σ_q dz[n, p·Q + q] b[n, q]; db [N, Q] = Σ_p dz[n, p·Q + q] a[n, p]; overwritten.
void outer_product_backward(const Tensor& dz, const Tensor& a, const Tensor& b, Tensor& da, Tensor& db);

}  // namespace kglm::nn
