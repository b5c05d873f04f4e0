#include "train/objectives/entity_prediction.hpp"

#include <algorithm>

#include "train/objectives/spans.hpp"

namespace kglm::train {

EntityPredictionMasker::EntityPredictionMasker(const EntityPredictionOptions& options, const Vocabulary& vocab)
    : options_(options), vocab_(vocab) {}

bool EntityPredictionMasker::partial(Rng& rng, std::span<int32_t> out, MaskedToken& m) const {
  switch (options_.strategy) {
    case EntityStrategy::pep_mrs:
      corrupt(vocab_, 0.8, 0.1, rng, out, m);
      return true;
    case EntityStrategy::pep_ms: {
      const double r = rng.uniform();
      if (r >= 0.9) return false;
      if (r < 0.8) {
        out[m.position] = vocab_.mask_id();
        m.replacement = Replacement::mask;
      }
      return true;
    }
    case EntityStrategy::pep_m:
      if (rng.uniform() >= 0.8) return false;
      out[m.position] = vocab_.mask_id();
      m.replacement = Replacement::mask;
      return true;
    case EntityStrategy::wep:
      break;
  }
  return false;
}

void EntityPredictionMasker::mask(const Sequence& seq, Rng& rng, std::span<int32_t> out,
                                  std::vector<MaskedToken>& masked) const {
  std::copy(seq.ids.begin(), seq.ids.end(), out.begin());
  const size_t first = masked.size();
  const double p = options_.entity_probability();
  thread_local std::vector<Mention> mentions;
  collect_mentions(seq, vocab_, mentions);
  for (const Mention& e : mentions) {
    if (e.relation) continue;
    if (options_.strategy == EntityStrategy::wep) {
      if (p < 1 && rng.uniform() >= p) continue;
      const bool all_masked = rng.uniform() < 0.8;
      for (uint32_t i : e.positions) {
        if (all_masked) out[i] = vocab_.mask_id();
        masked.push_back({i, seq.ids[i], all_masked ? Replacement::mask : Replacement::same, LossTerm::mlm});
      }
      continue;
    }
    for (uint32_t i : e.positions) {
      if (p < 1 && rng.uniform() >= p) continue;
      MaskedToken m{i, seq.ids[i], Replacement::same, LossTerm::mlm};
      if (partial(rng, out, m)) masked.push_back(m);
    }
  }
  if (options_.with_mlm) {
    for (size_t i = 0; i < seq.size(); ++i) {
      if (vocab_.never_target(seq, i) || (seq.flags[i] & kInEntity)) continue;
      if (rng.uniform() >= options_.non_entity_probability) continue;
      MaskedToken m{static_cast<uint32_t>(i), seq.ids[i], Replacement::same, LossTerm::mlm};
      corrupt(vocab_, 0.8, 0.1, rng, out, m);
      masked.push_back(m);
    }
  }
  std::sort(masked.begin() + static_cast<std::ptrdiff_t>(first), masked.end(),
            [](const MaskedToken& a, const MaskedToken& b) { return a.position < b.position; });
}

}  // namespace kglm::train
