// `pretrain masks`: the masking decisions of the training objectives, written out so that every
// rule can be checked from outside (man 1 pretrain). Row i masks sequence i mod N of the dataset
// with the randomness a training row i gets, (seed, i, the training stream); rows past N go round
// the dataset again with fresh draws.
//
// One JSON line per row: {"row", "sequence", "kind", "objective", "lang", "ids", "flags", "spans",
// "input", "positions", "became", "terms"}: the original ids, their TokenFlag bits and span indices
// (-1: none), the corrupted ids the model would see, and for every position carrying a loss what
// it became (mask, random, same) and its loss term.
#pragma once

#include <cstdint>
#include <string>

#include "core/stats.hpp"
#include "train/objectives/whole_word.hpp"

namespace kglm::train {

struct MaskDumpOptions {
  std::string data;
  std::string objectives;        // as pretrain --objective
  std::string entity_objective;  // as pretrain --entity-objective
  MaskingOptions masking;
  uint64_t rows = 1000;
  uint64_t seed = 0;
  std::string output;
};

Stats run_mask_dump(const MaskDumpOptions& options);

}  // namespace kglm::train
