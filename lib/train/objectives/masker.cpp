#include "train/objectives/masker.hpp"

#include "core/error.hpp"

namespace kglm::train {

const char* replacement_name(Replacement r) {
  switch (r) {
    case Replacement::mask:
      return "mask";
    case Replacement::random:
      return "random";
    case Replacement::same:
      return "same";
  }
  return "?";
}

const char* loss_term_name(LossTerm t) {
  switch (t) {
    case LossTerm::mlm:
      return "mlm";
    case LossTerm::knowledge:
      return "knowledge";
    case LossTerm::reasoning:
      return "reasoning";
  }
  return "?";
}

Vocabulary::Vocabulary(const tok::SpecialTokens& special, int32_t size) : special_(special), size_(size) {
  if (size <= 5) throw Error("masking: vocabulary too small");
  if (special.mask < 0) throw Error("masking: the tokenizer has no mask token");
}

int32_t Vocabulary::random_token(Rng& rng) const {
  for (;;) {
    auto id = static_cast<int32_t>(rng.below(static_cast<uint64_t>(size_)));
    if (!is_special(id)) return id;
  }
}

void corrupt(const Vocabulary& vocab, double mask_fraction, double random_fraction, Rng& rng, std::span<int32_t> out,
             MaskedToken& m) {
  const double r = rng.uniform();
  if (r < mask_fraction) {
    out[m.position] = vocab.mask_id();
    m.replacement = Replacement::mask;
  } else if (r < mask_fraction + random_fraction) {
    out[m.position] = vocab.random_token(rng);
    m.replacement = Replacement::random;
  } else {
    m.replacement = Replacement::same;
  }
}

}  // namespace kglm::train

namespace kglm::train {

const char* mask_category_name(MaskCategory c) {
  switch (c) {
    case MaskCategory::entity:
      return "entity";
    case MaskCategory::relation:
      return "relation";
    case MaskCategory::link_slot:
      return "link_slot";
    case MaskCategory::other:
      return "other";
  }
  return "?";
}

MaskCategory mask_category(uint8_t flags) {
  if (flags & kLinkSlot) return MaskCategory::link_slot;
  if (flags & kInEntity) return MaskCategory::entity;
  if (flags & kInRelation) return MaskCategory::relation;
  return MaskCategory::other;
}

MaskTally& MaskTally::operator+=(const MaskTally& o) {
  for (size_t k = 0; k < counts.size(); ++k)
    for (size_t c = 0; c < kMaskCategoryCount; ++c) counts[k][c] += o.counts[k][c];
  return *this;
}

}  // namespace kglm::train
