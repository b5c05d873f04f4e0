// Average and max pooling over segments of rows (ESIM's pooling of each sentence's composed
// states, Chen et al. 2017 §3.3): segment s is rows [first, first + length) of x, length ≥ 1.
#pragma once

#include "nn/tensor.hpp"

namespace kglm::nn {

// x [N, D]; segments I32 [S, 2] (first, length); out [S, 2·D]: the mean, then the max, of each
// column; argmax I32 [S, D]: the row that gave each max (the first of equal ones).
void segment_pool_forward(const Tensor& x, const Tensor& segments, Tensor& out, Tensor& argmax);

// dout [S, 2·D] → dx [N, D] (overwritten; rows in no segment get 0). Segments must not overlap.
void segment_pool_backward(const Tensor& dout, const Tensor& segments, const Tensor& argmax, Tensor& dx);

}  // namespace kglm::nn
