// Range checks of index tensors (ids, targets, key masks) on the device: the first bad position
// is found with an integer atomicMin (exact, order-free), then read back.
#include <limits>
#include <string>

#include "core/error.hpp"
#include "nn/cuda/common.cuh"
#include "nn/cuda/kernels.hpp"

namespace kglm::nn::cuda {

namespace {

__global__ void first_bad_index_kernel(const int32_t* index, int64_t m, IndexRange range, unsigned long long* first) {
  for (int64_t i = global_thread(); i < m; i += grid_threads())
    if (!range.accepts(index[i])) atomicMin(first, static_cast<unsigned long long>(i));
}

}  // namespace

void check_indices(std::string_view op, std::string_view arg, const int32_t* index, int64_t m, IndexRange range) {
  if (m == 0) return;
  Context& c = Context::get();
  constexpr unsigned long long kNone = std::numeric_limits<unsigned long long>::max();
  unsigned long long* first = c.reset_word(kNone, op);
  first_bad_index_kernel<<<elementwise_blocks(m), kThreads, 0, c.stream()>>>(index, m, range, first);
  check_launch(op);
  const unsigned long long bad = c.read_word(op);
  if (bad == kNone) return;
  int32_t value = 0;
  read_back(index + bad, &value, 1, op);
  throw Error(std::string(op) + ": " + std::string(arg) + "[" + std::to_string(bad) + "] = " + std::to_string(value) +
              " is outside [0, " + std::to_string(range.n) + ")");
}

}  // namespace kglm::nn::cuda
