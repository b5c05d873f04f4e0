// libFuzzer target: the neural verbaliser's inputs on arbitrary bytes. The bytes as generation
// inputs (every input kept has a non-empty serialisation; one with triples has no empty member),
// as training pairs (both sides non-empty), as a T5 config.json (refused with an Error, or a
// config that validates), and split in two as a hypothesis and a reference for BLEU and chrF
// (scores in [0, 100], also on invalid UTF-8). Any abort() or sanitizer report is a bug. Seeds in
// tests/fuzz/verbalize-corpus.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/error.hpp"
#include "fuzz_file.hpp"
#include "nn/t5_config.hpp"
#include "verbalize/text_metrics.hpp"
#include "verbalize/verbalizer_records.hpp"

namespace {

void check_records(const char* path) {
  kglm::ErrorCounter errors(kglm::ErrorLimit(UINT64_MAX), 0);
  kglm::Stats stats;
  for (const kglm::verbalize::GenerationInput& in : kglm::verbalize::read_generation_inputs(path, errors, stats)) {
    if (in.serialized.empty() || in.skipped) std::abort();
    if (in.triples.empty() != in.triples_json.empty()) std::abort();
    for (const auto& t : in.triples) {
      if (t.size() < 3 || t.size() > 4) std::abort();
      for (const auto& member : t)
        if (member.empty()) std::abort();
    }
  }
  for (const kglm::verbalize::TrainingPair& p : kglm::verbalize::read_training_pairs(path, errors))
    if (p.source.empty() || p.target.empty()) std::abort();
}

void check_config(const char* path) {
  try {
    kglm::nn::read_t5_config(path).validate();
  } catch (const kglm::Error&) {
  }
}

void check_metrics(std::string_view bytes) {
  const std::string_view hypothesis = bytes.substr(0, bytes.size() / 2), reference = bytes.substr(bytes.size() / 2);
  kglm::verbalize::BleuStats bleu;
  kglm::verbalize::ChrfStats chrf;
  bleu.add(hypothesis, reference);
  chrf.add(hypothesis, reference);
  for (double s : {bleu.score(), chrf.score()})
    if (!(s >= 0 && s <= 100 + 1e-9)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  check_metrics(std::string_view(reinterpret_cast<const char*>(data), size));
  const kglm::fuzz::FuzzFile file(data, size);
  if (!file.made()) return 0;
  try {
    check_records(file.path());
  } catch (const kglm::Error&) {
  }
  check_config(file.path());
  return 0;
}
