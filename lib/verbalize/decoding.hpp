// Decoding sentences from a T5 model with its key-value cache: greedy, beam search, and top-k
// sampling with a temperature (KELM's corpus: top 5, temperature 0.5), for a batch of sources.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nn/t5.hpp"
#include "verbalize/seq2seq_batch.hpp"

namespace kglm::verbalize {

enum class DecodeMethod : uint8_t { Greedy, Beam, Sample };

struct DecodeOptions {
  DecodeMethod method = DecodeMethod::Greedy;
  int64_t beams = 4;
  // Beam search ranks finished hypotheses by Σ log p / length^length_penalty (length: the tokens
  // generated, </s> included), as Hugging Face's generate does; it stops an example when `beams`
  // hypotheses have finished (early stopping), counting </s> only among the best `beams` candidates
  // of a step, so that beams = 1 is greedy decoding.
  double length_penalty = 1.0;
  int64_t top_k = 5;
  double temperature = 0.5;
  uint64_t seed = 0;
  int64_t max_len = 128;  // tokens generated at most, </s> included
};

// Each source's output tokens (without the decoder start token and </s>). keys: one number per
// source naming its random stream when sampling (the input's line), so that a sentence does not
// depend on the batch it was decoded in.
std::vector<std::vector<int32_t>> decode(nn::T5Model& model, const SourceBatch& sources, const DecodeOptions& options,
                                         std::span<const uint64_t> keys);

}  // namespace kglm::verbalize
