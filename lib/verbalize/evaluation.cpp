#include "verbalize/evaluation.hpp"

#include <cstdio>

#include "core/json_writer.hpp"
#include "core/jsonl_records.hpp"
#include "verbalize/text_metrics.hpp"

namespace kglm::verbalize {

namespace {

struct Generated {
  std::string input, generated, reference;
  uint64_t line = 0;
};

}  // namespace

std::string EvaluationScores::to_json() const {
  return "{\"sentences\": " + std::to_string(sentences) +
         ", \"without_reference\": " + std::to_string(without_reference) + ", \"bleu\": " + json_fixed(bleu, 4) +
         ", \"chrf\": " + json_fixed(chrf, 4) + ", \"copy_bleu\": " + json_fixed(copy_bleu, 4) +
         ", \"copy_chrf\": " + json_fixed(copy_chrf, 4) + "}";
}

EvaluationScores evaluate_generated(const std::vector<std::string>& inputs, ErrorCounter& errors) {
  BleuStats bleu, copy_bleu;
  ChrfStats chrf, copy_chrf;
  EvaluationScores s;
  for (const std::string& path : inputs) {
    const std::vector<Generated> records = read_jsonl_records<Generated>(
        path, "generated sentences (verbalize generate's JSON lines)",
        [](simdjson::dom::element root) {
          return Generated{string_field(root, "serialized_triples"), string_field(root, "gen_sentence"),
                           string_field(root, "sentence", false)};
        },
        errors);
    for (const Generated& g : records) {
      if (g.reference.empty()) {
        ++s.without_reference;
        continue;
      }
      ++s.sentences;
      bleu.add(g.generated, g.reference);
      chrf.add(g.generated, g.reference);
      copy_bleu.add(g.input, g.reference);
      copy_chrf.add(g.input, g.reference);
    }
  }
  errors.finish(inputs);
  if (s.sentences == 0 && s.without_reference > 0)
    throw Error("no generated sentence has a reference (\"sentence\") to score against");
  s.bleu = bleu.score();
  s.chrf = chrf.score();
  s.copy_bleu = copy_bleu.score();
  s.copy_chrf = copy_chrf.score();
  return s;
}

}  // namespace kglm::verbalize
