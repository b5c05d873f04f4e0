#include "train/objectives/whole_word.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "train/token_dataset.hpp"

namespace kglm::train {

void check_masking_options(const MaskingOptions& options) {
  if (!(options.probability > 0 && options.probability <= 1)) throw Error("masking: probability must be in (0, 1]");
  if (options.mask_fraction < 0 || options.random_fraction < 0 || options.mask_fraction + options.random_fraction > 1)
    throw Error("masking: the mask and random fractions must be ≥ 0 and add up to at most 1");
}

WholeWordMasker::WholeWordMasker(const MaskingOptions& options, const Vocabulary& vocab, uint8_t candidates,
                                 LossTerm term)
    : options_(options), vocab_(vocab), candidates_(candidates), term_(term) {
  check_masking_options(options);
}

void WholeWordMasker::mask(const Sequence& seq, Rng& rng, std::span<int32_t> out,
                           std::vector<MaskedToken>& masked) const {
  const std::span<const int32_t> ids = seq.ids;
  const std::span<const uint8_t> flags = seq.flags;
  const size_t n = ids.size();
  std::copy(ids.begin(), ids.end(), out.begin());
  // Words as [begin, end) token ranges of candidates; a continuation token after a non-candidate
  // (special, link slot, outside the candidate spans) starts a word.
  std::vector<std::pair<uint32_t, uint32_t>> words;
  size_t maskable = 0;
  bool open = false;
  for (size_t i = 0; i < n; ++i) {
    if (vocab_.never_target(seq, i) || (candidates_ && !(flags[i] & candidates_))) {
      open = false;
      continue;
    }
    ++maskable;
    if (!open || (flags[i] & kWordStart)) {
      words.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(i + 1)});
      open = true;
    } else {
      words.back().second = static_cast<uint32_t>(i + 1);
    }
  }
  if (words.empty()) return;
  const size_t budget =
      std::max<size_t>(1, static_cast<size_t>(std::llround(static_cast<double>(maskable) * options_.probability)));
  // Fisher–Yates over the words, then take those that still fit the budget.
  for (size_t i = words.size() - 1; i > 0; --i) std::swap(words[i], words[rng.below(i + 1)]);
  size_t first = masked.size(), covered = 0;
  for (const auto& [b, e] : words) {
    if (covered >= budget) break;
    if (covered + (e - b) > budget) continue;
    covered += e - b;
    for (uint32_t i = b; i < e; ++i) masked.push_back({i, ids[i], Replacement::same, term_});
  }
  std::sort(masked.begin() + static_cast<std::ptrdiff_t>(first), masked.end(),
            [](const MaskedToken& a, const MaskedToken& b) { return a.position < b.position; });
  for (size_t k = first; k < masked.size(); ++k)
    corrupt(vocab_, options_.mask_fraction, options_.random_fraction, rng, out, masked[k]);
}

}  // namespace kglm::train
