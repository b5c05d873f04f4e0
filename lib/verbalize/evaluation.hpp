// verbalize evaluate: BLEU and chrF of generated sentences (verbalize generate's gen_sentence)
// against the references they were generated for (the records' "sentence"), beside the baseline
// that copies the model's input (serialized_triples) as the sentence.
#pragma once

#include <string>
#include <vector>

#include "core/error.hpp"

namespace kglm::verbalize {

struct EvaluationScores {
  int64_t sentences = 0, without_reference = 0;
  double bleu = 0, chrf = 0, copy_bleu = 0, copy_chrf = 0;
  std::string to_json() const;  // one line
};

// Throws when the inputs hold records but none has a reference; empty inputs give 0 sentences.
EvaluationScores evaluate_generated(const std::vector<std::string>& inputs, ErrorCounter& errors);

}  // namespace kglm::verbalize
