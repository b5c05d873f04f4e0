#include "sample/language_sampler.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "sample/plan.hpp"

namespace kglm::sample {

namespace {
constexpr uint32_t kBatchLanguageStream = 0x4c414e47;  // "LANG"
}

LanguageSampler::LanguageSampler(std::vector<std::string> langs, std::span<const double> sizes, double alpha,
                                 uint64_t seed)
    : langs_(std::move(langs)), q_(smoothed_distribution(sizes, alpha)), seed_(seed) {
  if (langs_.size() != q_.size()) throw Error("LanguageSampler: one size per language is needed");
  double sum = 0;
  for (double q : q_) cumulative_.push_back(sum += q);
  // Rounding may leave the sum a hair below 1: the last language that can be drawn ends at 1 exactly.
  size_t last = q_.size();
  while (last > 0 && q_[last - 1] == 0) --last;
  for (size_t i = last - 1; i < cumulative_.size(); ++i) cumulative_[i] = 1.0;
}

size_t LanguageSampler::pick(uint64_t batch) const {
  double u = Rng(seed_, batch, kBatchLanguageStream).uniform();
  // The first language whose cumulative share passes u; empty languages add nothing, so never win.
  return static_cast<size_t>(std::upper_bound(cumulative_.begin(), cumulative_.end(), u) - cumulative_.begin());
}

}  // namespace kglm::sample
