// ELMo's character convolution with its max-pool over positions (bilm-tf's char CNN: a VALID
// convolution over each word's characters, then the maximum over the positions; the activation
// comes after, as a separate op). For word n and filter f of width w:
//   out[n, f] = b[f] + max over p ≤ L − w of Σ_{q < w, c < e} w[f, q·e + c] · x[n, p + q, c]
// x [N, L, e]: the embedded characters; w [F, w·e]: TensorFlow's W_cnn [1, w, e, F] transposed;
// b [F]. The product runs as a GEMM over the windows of a block of words at a time (im2col), and
// only the maximum is kept (with its position), so no [N, positions, F] tensor ever exists: at the
// paper's sizes that would be gigabytes. The backward pass uses the positions: each (word, filter)
// contributes at one window only, so dw and dx cost one window's products, not a GEMM over all.
#pragma once

#include "nn/ops/linear.hpp"

namespace kglm::nn {

// The sizes the kernels take: N words of L characters embedded in e dimensions, F filters of one
// width writing columns [first, first + F) of C.
struct CharConvolutionShape {
  int64_t words = 0, chars = 0, embed = 0, filters = 0, width = 0, columns = 0, first = 0;
  constexpr int64_t positions() const { return chars - width + 1; }  // constexpr: callable in kernels
};

// The F filters of one width write columns [first, first + F) of out and argmax [N, C] (the filters
// of every width side by side, as ELMo concatenates them). argmax (I32) keeps each maximum's position.
void char_convolution_forward(const Tensor& x, const Tensor& w, const Tensor& b, int64_t width, int64_t first,
                              Tensor& out, Tensor& argmax);

// dout [N, C] (columns [first, first + F) are this width's); dx [N, L, e] is accumulated (every
// width adds into it); dw [F, w·e] and db [F] (wide dtype) are accumulated.
void char_convolution_backward(const Tensor& dout, const Tensor& x, const Tensor& w, const Tensor& argmax,
                               int64_t width, int64_t first, Tensor& dx, Tensor& dw, Tensor& db);

}  // namespace kglm::nn
