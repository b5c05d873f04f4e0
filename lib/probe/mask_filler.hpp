// What the cloze decoders ask of a masked language model: for token sequences with some
// positions masked, the most probable token at each asked position and its log-probability.
// An interface, so that the decoding rules are tested on hand-written distributions too.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace kglm::probe {

struct FillRequest {
  const std::vector<int32_t>* ids = nullptr;  // the whole sequence, special tokens included
  std::vector<int32_t> positions;             // where a prediction is wanted (masked positions)
};

struct TokenGuess {
  int32_t token = 0;
  double log_prob = 0;  // log softmax of the model's logits at that position
};

class MaskFiller {
 public:
  virtual ~MaskFiller() = default;
  // out[i][k]: the guess at requests[i].positions[k]. Overwrites out.
  virtual void fill(std::span<const FillRequest> requests, std::vector<std::vector<TokenGuess>>& out) = 0;
  virtual int32_t mask_id() const = 0;
};

}  // namespace kglm::probe
