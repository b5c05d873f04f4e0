// Batches by a token budget, as fairseq's --max-tokens: the examples in a seeded order, stably
// sorted longest first (ties keep the seeded order), cut greedily into batches of at most `budget`
// tokens (an example longer than the budget makes a batch of its own), the batches then in a
// seeded order. Batches of similar lengths keep attention's per-sequence work even and, for a
// padded peer, the padding low; the number of batches depends only on the lengths, so it is the
// same for every epoch and seed.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/rng.hpp"

namespace kglm::train {

// order: a permutation of the examples (indices into lengths); lengths: tokens per example.
std::vector<std::vector<uint32_t>> token_budget_batches(std::span<const uint32_t> order,
                                                        std::span<const int64_t> lengths, int64_t budget, Rng& rng);

}  // namespace kglm::train
