// The interface every masking objective implements — whole-word MLM, KMLM's knowledge and
// reasoning maskers, EntityCS's WEP/PEP — and what they share: given one sequence of the token
// dataset, write its corrupted copy and say, for every position that carries a loss, what it was,
// what it became and which loss term it counts towards. The batch builder (mlm_batch.hpp) and
// `pretrain masks` see objectives only through this.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "core/rng.hpp"
#include "tok/tokenizer.hpp"
#include "train/token_dataset.hpp"

namespace kglm::train {

// What a chosen token became in the model's input.
enum class Replacement : uint8_t { mask, random, same };
const char* replacement_name(Replacement r);  // "mask", "random", "same"

// KMLM's L = L_MLM + α(L_K + L_R): the term a masked token's loss belongs to. EntityCS's entity
// prediction is a masked-LM loss of weight 1 and counts as mlm.
enum class LossTerm : uint8_t { mlm, knowledge, reasoning };
inline constexpr size_t kLossTermCount = 3;
const char* loss_term_name(LossTerm t);  // "mlm", "knowledge", "reasoning"

struct MaskedToken {
  uint32_t position;  // in the sequence
  int32_t target;     // the original id
  Replacement replacement = Replacement::same;
  LossTerm term = LossTerm::mlm;
};

class Masker {
 public:
  virtual ~Masker() = default;
  // Writes the corrupted copy of seq.ids into `out` (same size) and appends the positions that
  // carry a loss, in increasing order, to `masked`. Randomness comes from `rng` only, which the
  // caller keys by (seed, global row), so a sequence is masked the same way on resume.
  virtual void mask(const Sequence& seq, Rng& rng, std::span<int32_t> out, std::vector<MaskedToken>& masked) const = 0;
};

// The vocabulary as maskers see it: which ids are special (never a target, never drawn as a
// random replacement) and a uniform draw among the others.
class Vocabulary {
 public:
  Vocabulary(const tok::SpecialTokens& special, int32_t size);
  bool is_special(int32_t id) const {
    return id == special_.bos || id == special_.eos || id == special_.pad || id == special_.mask || id == special_.unk;
  }
  // A token never chosen by any objective: special, or one of KMLM's [mask] linking slots.
  bool never_target(const Sequence& seq, size_t i) const {
    return (seq.flags[i] & (kSpecialToken | kLinkSlot)) || is_special(seq.ids[i]);
  }
  int32_t random_token(Rng& rng) const;
  int32_t mask_id() const { return special_.mask; }

 private:
  tok::SpecialTokens special_;
  int32_t size_;
};

// The BERT corruption of one chosen token: <mask> with probability mask_fraction, a random token
// with random_fraction, else kept; writes out[m.position] and m.replacement.
void corrupt(const Vocabulary& vocab, double mask_fraction, double random_fraction, Rng& rng, std::span<int32_t> out,
             MaskedToken& m);

}  // namespace kglm::train

namespace kglm::train {

// What masked tokens were, counted per sequence kind and category — for --stats, and to show
// from outside that no link slot ever carries a loss.
enum class MaskCategory : uint8_t { entity, relation, link_slot, other };
inline constexpr size_t kMaskCategoryCount = 4;
const char* mask_category_name(MaskCategory c);  // "entity", "relation", "link_slot", "other"
MaskCategory mask_category(uint8_t flags);

struct MaskTally {
  std::array<std::array<uint64_t, kMaskCategoryCount>, kSequenceKindCount> counts{};
  void add(const Sequence& seq, const MaskedToken& m) {
    ++counts[static_cast<size_t>(seq.kind)][static_cast<size_t>(mask_category(seq.flags[m.position]))];
  }
  MaskTally& operator+=(const MaskTally& o);
};

}  // namespace kglm::train
