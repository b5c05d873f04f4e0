// Which values an index tensor may hold: [0, n), plus one value that an op skips where it has one
// (cross-entropy's kIgnoreIndex). One predicate for the CPU kernels and the CUDA range check, so
// that the two refuse the same ids.
#pragma once

#include <cstdint>

#include "nn/ops/host_device.hpp"

namespace kglm::nn {

struct IndexRange {
  int64_t n = 0;
  bool has_skipped = false;
  int32_t skipped = 0;

  // Row numbers of a table of n rows: every value outside [0, n) is refused.
  static constexpr IndexRange rows(int64_t n) { return {n, false, 0}; }
  // Classes [0, n), and `skipped` for rows that carry no target.
  static constexpr IndexRange classes(int64_t n, int32_t skipped) { return {n, true, skipped}; }

  KGLM_HOST_DEVICE constexpr bool accepts(int32_t v) const {
    return (v >= 0 && v < n) || (has_skipped && v == skipped);
  }
};

}  // namespace kglm::nn
