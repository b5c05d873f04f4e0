#include "train/objectives/reasoning.hpp"

#include <algorithm>

#include "train/objectives/spans.hpp"

namespace kglm::train {

namespace {

// One of `candidates`, uniformly.
size_t pick(const std::vector<size_t>& candidates, Rng& rng) { return candidates[rng.below(candidates.size())]; }

}  // namespace

ReasoningMasker::ReasoningMasker(const ReasoningOptions& options, const Vocabulary& vocab)
    : options_(options), vocab_(vocab) {}

void ReasoningMasker::mask(const Sequence& seq, Rng& rng, std::span<int32_t> out,
                           std::vector<MaskedToken>& masked) const {
  std::copy(seq.ids.begin(), seq.ids.end(), out.begin());
  thread_local std::vector<Mention> mentions;
  collect_mentions(seq, vocab_, mentions);
  std::vector<size_t> relations, entities;
  for (size_t i = 0; i < mentions.size(); ++i) (mentions[i].relation ? relations : entities).push_back(i);
  std::vector<size_t> chosen;  // indices into mentions
  if (seq.kind == SequenceKind::reasoning_4 && rng.uniform() >= options_.relation_and_entities) {
    // A whole sentence: the entity mentions around one random relation, which stays as the hint.
    if (!relations.empty()) {
      const size_t r = pick(relations, rng);
      for (size_t e = r; e-- > 0;)
        if (!mentions[e].relation) {
          chosen.push_back(e);
          break;
        }
      for (size_t e = r + 1; e < mentions.size(); ++e)
        if (!mentions[e].relation) {
          chosen.push_back(e);
          break;
        }
    }
  } else {
    if (!relations.empty()) chosen.push_back(pick(relations, rng));
    if (seq.kind == SequenceKind::reasoning_4) {
      const size_t want = rng.uniform() < options_.two_entities ? 2 : 1;
      // Partial Fisher–Yates: `want` distinct entity mentions.
      for (size_t k = 0; k < want && k < entities.size(); ++k) {
        std::swap(entities[k], entities[k + rng.below(entities.size() - k)]);
        chosen.push_back(entities[k]);
      }
    }
  }
  const size_t first = masked.size();
  for (size_t c : chosen)
    for (uint32_t p : mentions[c].positions) {
      out[p] = vocab_.mask_id();
      masked.push_back({p, seq.ids[p], Replacement::mask, LossTerm::reasoning});
    }
  std::sort(masked.begin() + static_cast<std::ptrdiff_t>(first), masked.end(),
            [](const MaskedToken& a, const MaskedToken& b) { return a.position < b.position; });
}

}  // namespace kglm::train
