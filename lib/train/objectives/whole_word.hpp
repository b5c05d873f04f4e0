// Masked-language-model corruption with whole-word masking (BERT's wwm, as Hugging Face's
// DataCollatorForWholeWordMask): a word is a word-start token plus the continuation tokens after
// it (SentencePiece '▁' / WordPiece without '##', flagged kWordStart in the token dataset). Words are
// taken in random order while they fit the budget of round(p · candidate tokens) (at least 1), and
// each token of a chosen word becomes <mask> with probability 0.8, a random token with 0.1, and stays
// with 0.1 (the 80/10/10 rule). Special tokens and KMLM's [mask] linking slots (kLinkSlot: inputs
// that never carry a loss) are never chosen, and random replacements are drawn from the
// non-special vocabulary.
//
// The same masker gives KMLM's knowledge objective (§3.2): candidates restricted to the entity and
// relation tokens of a code-switched or parallel sentence, loss term L_K.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/rng.hpp"
#include "tok/tokenizer.hpp"
#include "train/objectives/masker.hpp"

namespace kglm::train {

struct MaskingOptions {
  double probability = 0.15;
  double mask_fraction = 0.8;    // of the chosen tokens: replaced by <mask>
  double random_fraction = 0.1;  // replaced by a random token; the rest are kept
};

class WholeWordMasker : public Masker {
 public:
  // `candidates`: TokenFlag bits of which a token needs one to be chosen (0: any token).
  WholeWordMasker(const MaskingOptions& options, const Vocabulary& vocab, uint8_t candidates = 0,
                  LossTerm term = LossTerm::mlm);

  void mask(const Sequence& seq, Rng& rng, std::span<int32_t> out, std::vector<MaskedToken>& masked) const override;

 private:
  MaskingOptions options_;
  Vocabulary vocab_;
  uint8_t candidates_;
  LossTerm term_;
};

void check_masking_options(const MaskingOptions& options);

}  // namespace kglm::train
