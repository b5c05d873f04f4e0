// ESIM's soft alignment (Chen et al. 2017, §3.2, "local inference modelling") over pairs of
// sequences packed as rows: pair p is its first sequence a (la rows) then its second b (lb rows).
//   e_ij = a_i · b_j,   ã_i = Σ_j softmax_j(e_i·) b_j,   b̃_j = Σ_i softmax_i(e_·j) a_i
// Each row of a gets ã in `aligned`, each row of b gets b̃. The two softmaxes are kept in
// `weights` for the backward pass: per pair its [la, lb] row softmax, then its [lb, la] one.
#pragma once

#include <cstdint>
#include <vector>

#include "nn/tensor.hpp"

namespace kglm::nn {

// The layout of the pairs, I32 [P, 4]: (first row, la, lb, offset in the weights), built on the
// host from the pairs' lengths (each ≥ 1), consecutive from row 0; weights_size gets Σ 2·la·lb.
Tensor soft_align_layout(const std::vector<int32_t>& first_lengths, const std::vector<int32_t>& second_lengths,
                         int64_t& weights_size);

// x [M, D]; layout I32 [P, 4] (on x's device; M = Σ la + lb); weights [W]; aligned [M, D].
void soft_align_forward(const Tensor& x, const Tensor& layout, Tensor& weights, Tensor& aligned);

// daligned [M, D] → dx [M, D] (overwritten); dweights [W] is scratch.
void soft_align_backward(const Tensor& daligned, const Tensor& x, const Tensor& layout, const Tensor& weights,
                         Tensor& dweights, Tensor& dx);

}  // namespace kglm::nn
