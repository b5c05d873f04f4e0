// The arc scores of a graph-based parser over packed sentences (Dozat & Manning 2017's biaffine
// attention, the bilinear part precomputed by the caller as q = dep · U): the rows of a batch form
// blocks, one per sentence (its ROOT row, then its words), and row i of a block of length n gets
//   scores[i, j] = q_i · k_{start_i + j} + bias_{start_i + j}   for j < n,
// kNoScore for j ≥ n (padding up to the batch's longest block; a softmax gives it no weight).
#pragma once

#include "nn/tensor.hpp"

namespace kglm::nn {

inline constexpr float kNoScore = -1e30f;

// q, k [M, A]; bias [M] (k's term, k · u) or undefined; starts and lengths I32 [M] (each row's
// block: its first row and its length); scores [M, T] with T ≥ every length.
void block_scores_forward(const Tensor& q, const Tensor& k, const Tensor& bias, const Tensor& starts,
                          const Tensor& lengths, Tensor& scores);

// From dscores [M, T]: dq, dk [M, A] and dbias [M] (skipped when undefined), all overwritten.
void block_scores_backward(const Tensor& dscores, const Tensor& q, const Tensor& k, const Tensor& starts,
                           const Tensor& lengths, Tensor& dq, Tensor& dk, Tensor& dbias);

}  // namespace kglm::nn
