// Inverted dropout with counter-based randomness: element i of a call keyed (seed, stream, first)
// is kept when u(i) ≥ p, where, with c = (first + i) / 4, u(i) is word i%4 of Philox4x32-10(key =
// seed, counter = {stream low, stream high, c high, c low}) scaled by 2⁻³². The mask is therefore
// the same whatever the thread count, a resumed run reproduces it from the key alone, and a
// data-parallel rank holding rows [r0, r1) of a batch draws what one process holding the whole
// batch draws for those rows (first = r0 · elements per row).
#pragma once

#include <cstdint>
#include <string_view>

#include "nn/tensor.hpp"

namespace kglm::nn {

struct DropoutKey {
  uint64_t seed = 0;
  uint64_t stream = 0;  // unique per (step, micro-batch, site) — chosen by the caller
  uint64_t first = 0;   // the element number of the call's element 0; a multiple of 4
};

// Packed batches number their tokens, not their rows: token t of the batch's sequence number g (its
// number in the global batch, so that data-parallel ranks agree) is token_number(g, t). A token's
// dropout draws depend on that number alone, so they do not change with how the batch is packed,
// split across ranks or ordered; no sequence is longer than kMaxPackedLength tokens.
inline constexpr uint64_t kMaxPackedLength = uint64_t{1} << 16;
inline uint64_t token_number(uint64_t sequence, uint64_t position) { return sequence * kMaxPackedLength + position; }

// Throws unless key.first is a multiple of 4 (each op checks its key with it).
void check_dropout_key(const DropoutKey& key, std::string_view op);

// Keep-or-drop of element i as defined above (shared by every dropout site, and by tests).
bool dropout_keeps(const DropoutKey& key, uint64_t i, float p);

// y = x · keep / (1 − p); mask U8 [same shape] records keep (1) or drop (0). p in [0, 1).
// With p == 0, y = x and the mask may be undefined. y may alias x.
void dropout_forward(const Tensor& x, float p, const DropoutKey& key, Tensor& y, Tensor& mask);
// Row-numbered dropout of x [N, W]: element j of row r is element number numbers[r] · W + j of the
// key's stream (key.first must be 0), numbers I64 [N] on x's device (token_number() of each row's
// token; may be undefined when p == 0). Otherwise as dropout_forward.
void dropout_forward(const Tensor& x, float p, const DropoutKey& key, const Tensor& numbers, Tensor& y, Tensor& mask);
// dx = dy · mask / (1 − p) (dx = dy when p == 0); dx may alias dy.
void dropout_backward(const Tensor& dy, const Tensor& mask, float p, Tensor& dx);

}  // namespace kglm::nn
