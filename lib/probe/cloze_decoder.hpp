// X-FACTR's decoding of a cloze with m consecutive mask tokens (Jiang et al. 2020, §4):
//   independent  one forward pass; every mask takes its own most probable token;
//   order        left to right: each pass fills the leftmost mask left, the others stay masked;
//   confidence   each pass fills the mask whose best token is the most probable; then, up to
//                max_iter times, the least probable token is masked again and predicted anew,
//                stopping as soon as the new prediction is the token it replaces.
// A token keeps the log-probability it had when it was (last) predicted. Candidates of every fact
// and mask count advance together, so that each pass is one batch of forward passes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "probe/mask_filler.hpp"

namespace kglm::probe {

enum class DecodeMethod : uint8_t { independent, order, confidence };
DecodeMethod parse_decode_method(const std::string& name);  // UsageError for another name
const char* decode_method_name(DecodeMethod method);

// One way to fill a cloze: the sequence with `masks` mask tokens from position `first`.
struct ClozeCandidate {
  std::vector<int32_t> ids;  // special tokens included; the masks are replaced as they are filled
  int32_t first = 0, masks = 0;
  std::vector<int32_t> tokens;    // [masks]: the prediction
  std::vector<double> log_probs;  // [masks]
  int32_t refinements = 0;        // confidence: tokens changed after the first complete filling

  double sum_log_prob() const;
  // The score that chooses among a fact's mask counts: the sum, or with normalise the mean.
  double score(bool normalise) const;
};

// Decodes every candidate (ids with masks at [first, first + masks)).
void decode(DecodeMethod method, MaskFiller& filler, std::vector<ClozeCandidate>& candidates, int32_t max_iter);

}  // namespace kglm::probe
