#include "train/token_batches.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"

namespace kglm::train {

std::vector<std::vector<uint32_t>> token_budget_batches(std::span<const uint32_t> order,
                                                        std::span<const int64_t> lengths, int64_t budget, Rng& rng) {
  if (budget < 1) throw UsageError("--batch-tokens must be at least 1, not " + std::to_string(budget));
  std::vector<uint32_t> sorted(order.begin(), order.end());
  std::stable_sort(sorted.begin(), sorted.end(), [&](uint32_t a, uint32_t b) { return lengths[a] > lengths[b]; });
  std::vector<std::vector<uint32_t>> batches;
  int64_t tokens = 0;
  for (uint32_t i : sorted) {
    if (batches.empty() || tokens + lengths[i] > budget) {
      batches.emplace_back();
      tokens = 0;
    }
    batches.back().push_back(i);
    tokens += lengths[i];
  }
  for (size_t i = batches.size(); i > 1; --i) std::swap(batches[i - 1], batches[rng.below(i)]);
  return batches;
}

}  // namespace kglm::train
