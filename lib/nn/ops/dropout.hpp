// Inverted dropout with counter-based randomness: element i of a call keyed (seed, stream) is kept
// when u(i) ≥ p, where u(i) is word i%4 of Philox4x32-10(key = seed, counter = {stream low, stream
// high, 0, i/4}) scaled by 2⁻³². The mask is therefore the same whatever the thread count, and a
// resumed run reproduces it from (seed, stream) alone.
#pragma once

#include <cstdint>

#include "nn/tensor.hpp"

namespace kglm::nn {

struct DropoutKey {
  uint64_t seed = 0;
  uint64_t stream = 0;  // unique per (step, micro-batch, site) — chosen by the caller
};

// Keep-or-drop of element i as defined above (shared by every dropout site, and by tests).
bool dropout_keeps(const DropoutKey& key, uint64_t i, float p);

// y = x · keep / (1 − p); mask U8 [same shape] records keep (1) or drop (0). p in [0, 1).
// With p == 0, y = x and the mask may be undefined. y may alias x.
void dropout_forward(const Tensor& x, float p, const DropoutKey& key, Tensor& y, Tensor& mask);
// dx = dy · mask / (1 − p) (dx = dy when p == 0); dx may alias dy.
void dropout_backward(const Tensor& dy, const Tensor& mask, float p, Tensor& dx);

}  // namespace kglm::nn
