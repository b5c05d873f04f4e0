// The interface every masking objective implements (whole-word MLM today; KMLM's knowledge and
// reasoning maskers and EntityCS's WEP/PEP next): given one sequence of the token dataset, write
// its corrupted copy and say, for every position that carries a loss, what it was, what it became
// and which loss term it counts towards. The batch builder (mlm_batch.hpp) and `pretrain masks`
// see objectives only through this.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/rng.hpp"
#include "train/token_dataset.hpp"

namespace kglm::train {

// What a chosen token became in the model's input.
enum class Replacement : uint8_t { mask, random, same };

// KMLM's L = L_MLM + α(L_K + L_R): the term a masked token's loss belongs to.
enum class LossTerm : uint8_t { mlm, knowledge, reasoning };

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

}  // namespace kglm::train
