// One micro-batch for masked-language-model training: sequences of the token dataset, corrupted by
// their objectives' maskers and packed (no padding). The masking of sequence r of batch b is keyed
// by (seed, b · rows + r), so it is the same on resume. A data-parallel rank builds only its
// sequences [begin, end) of the global batch: keyed and numbered as in the global batch, they are
// the sequences one process would build.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "nn/encoder.hpp"
#include "train/objectives/masker.hpp"
#include "train/token_dataset.hpp"

namespace kglm::train {

struct MlmBatch {
  nn::EncoderBatch encoder;
  nn::Tensor rows;              // I32 [M]: the packed row of every masked token
  nn::Tensor targets;           // I32 [M]: its original id
  std::vector<LossTerm> terms;  // [M]: the loss term each counts towards
  std::array<int64_t, kLossTermCount> term_counts{};
  MaskTally tally;
  int64_t tokens = 0;  // the batch's tokens (its rows)
  int64_t masked() const { return rows.numel(); }
};

// Randomness streams: training batches, evaluation batches.
inline constexpr uint32_t kTrainStream = 0x6d6c6d74;  // "mlmt"
inline constexpr uint32_t kEvalStream = 0x6d6c6d65;   // "mlme"

// Rows [begin, end) of a global batch (all of it by default).
struct BatchRows {
  size_t begin = 0, end = SIZE_MAX;
};

// `sequences`: the whole global batch. `stream` separates training batches from evaluation
// batches. The position ids are computed here, on the host, for `config`'s model.
MlmBatch make_mlm_batch(const TokenDataset& data, std::span<const uint32_t> sequences, const Masker& masker,
                        uint64_t seed, uint64_t batch_number, uint32_t stream, const nn::ModelConfig& config,
                        BatchRows rows = {});

}  // namespace kglm::train
