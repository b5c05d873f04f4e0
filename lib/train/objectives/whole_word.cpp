#include "train/objectives/whole_word.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "train/token_dataset.hpp"

namespace kglm::train {

WholeWordMasker::WholeWordMasker(const MaskingOptions& options, const tok::SpecialTokens& special, int32_t vocab_size)
    : options_(options), special_(special), vocab_size_(vocab_size) {
  if (!(options.probability > 0 && options.probability <= 1)) throw Error("masking: probability must be in (0, 1]");
  if (options.mask_fraction < 0 || options.random_fraction < 0 || options.mask_fraction + options.random_fraction > 1)
    throw Error("masking: the mask and random fractions must be ≥ 0 and add up to at most 1");
  if (vocab_size <= 5) throw Error("masking: vocabulary too small");
}

bool WholeWordMasker::is_special(int32_t id) const {
  return id == special_.bos || id == special_.eos || id == special_.pad || id == special_.mask || id == special_.unk;
}

int32_t WholeWordMasker::random_token(Rng& rng) const {
  for (;;) {
    auto id = static_cast<int32_t>(rng.below(static_cast<uint64_t>(vocab_size_)));
    if (!is_special(id)) return id;
  }
}

void WholeWordMasker::mask(const Sequence& seq, Rng& rng, std::span<int32_t> out,
                           std::vector<MaskedToken>& masked) const {
  const std::span<const int32_t> ids = seq.ids;
  const std::span<const uint8_t> flags = seq.flags;
  const size_t n = ids.size();
  std::copy(ids.begin(), ids.end(), out.begin());
  // Words as [begin, end) token ranges; a continuation token after a special one (or after a link
  // slot, which is never a target) starts a word.
  std::vector<std::pair<uint32_t, uint32_t>> words;
  size_t maskable = 0;
  bool open = false;
  for (size_t i = 0; i < n; ++i) {
    if ((flags[i] & (kSpecialToken | kLinkSlot)) || is_special(ids[i])) {
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
    for (uint32_t i = b; i < e; ++i) masked.push_back({i, ids[i]});
  }
  std::sort(masked.begin() + static_cast<std::ptrdiff_t>(first), masked.end(),
            [](const MaskedToken& a, const MaskedToken& b) { return a.position < b.position; });
  for (size_t k = first; k < masked.size(); ++k) {
    double r = rng.uniform();
    uint32_t i = masked[k].position;
    if (r < options_.mask_fraction) {
      out[i] = special_.mask;
      masked[k].replacement = Replacement::mask;
    } else if (r < options_.mask_fraction + options_.random_fraction) {
      out[i] = random_token(rng);
      masked[k].replacement = Replacement::random;
    }
  }
}

}  // namespace kglm::train
