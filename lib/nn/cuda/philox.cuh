// The dropout keep decision on the GPU, from the same Philox4x32-10 words as the CPU
// (nn/ops/dropout.hpp): element i of a call keyed (seed, stream, first) is kept when word i%4 of
// Philox(key = seed, counter = {stream low, stream high, c high, c low}), c = (first + i)/4, is at
// least ⌈p·2³²⌉.
#pragma once

#include <Random123/philox.h>

#include <cmath>
#include <cstdint>

#include "nn/ops/dropout.hpp"

namespace kglm::nn::cuda {

struct PhiloxKey {
  uint32_t key0, key1, stream0, stream1;
  unsigned long long first_block;  // DropoutKey::first / 4
  unsigned long long threshold;    // ⌈p·2³²⌉ (2³² keeps nothing: p = 1 is rejected by the ops)
};

inline PhiloxKey philox_key(const DropoutKey& key, float p) {
  return {static_cast<uint32_t>(key.seed),
          static_cast<uint32_t>(key.seed >> 32),
          static_cast<uint32_t>(key.stream),
          static_cast<uint32_t>(key.stream >> 32),
          static_cast<unsigned long long>(key.first / 4),
          static_cast<unsigned long long>(std::ceil(static_cast<double>(p) * 4294967296.0))};
}

// The four words of block `block` (elements 4·block … 4·block + 3).
__device__ inline r123::Philox4x32::ctr_type philox_words(const PhiloxKey& k, uint64_t block) {
  r123::Philox4x32 philox;
  const r123::Philox4x32::key_type key = {{k.key0, k.key1}};
  const uint64_t c = k.first_block + block;
  const r123::Philox4x32::ctr_type counter = {
      {k.stream0, k.stream1, static_cast<uint32_t>(c >> 32), static_cast<uint32_t>(c)}};
  return philox(counter, key);
}

__device__ inline bool philox_keeps(const PhiloxKey& k, uint32_t word) { return word >= k.threshold; }

}  // namespace kglm::nn::cuda
