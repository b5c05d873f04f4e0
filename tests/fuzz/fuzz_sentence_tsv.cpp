// libFuzzer target: the sentence-pair TSV reader (finetune --task sequence, and nli on frozen
// features) on arbitrary bytes, with named columns (a header line) and with numbered ones (none).
// Every record read has a non-empty text, pair and label holding no TAB or line break; read_pairs
// splits both sides into words (ICU) with at least one word each, none holding whitespace, two
// feature sentences per pair. Any abort() or sanitizer report is a bug. Seeds in
// tests/fuzz/tsv-corpus.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "fuzz_file.hpp"
#include "train/frozen/frozen_data.hpp"
#include "train/tasks/example_readers.hpp"

namespace {

using kglm::train::tasks::SentenceExample;
using kglm::train::tasks::TsvColumns;

bool clean(const std::string& s) { return !s.empty() && s.find_first_of("\t\r\n") == std::string::npos; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const kglm::fuzz::FuzzFile file(data, size);
  if (!file.made()) return 0;
  for (const TsvColumns& columns : {TsvColumns{"sentence1", "sentence2", "label"}, TsvColumns{"1", "2", "3"}}) {
    kglm::ErrorCounter errors(kglm::ErrorLimit(UINT64_MAX));
    try {
      for (const SentenceExample& e : kglm::train::tasks::read_sentence_tsv(file.path(), columns, errors))
        if (!clean(e.text) || !clean(e.pair) || !clean(e.label) || e.line == 0) std::abort();
      const kglm::train::frozen::FrozenData t = kglm::train::frozen::read_pairs("en", file.path(), columns, errors);
      if (t.pair_words.size() != 2 * t.pairs.size() || t.first.size() != t.pair_words.size() + 1) std::abort();
      for (const kglm::train::frozen::Words& words : t.pair_words) {
        if (words.empty()) std::abort();
        for (const std::string& w : words)
          if (w.empty() || w.find_first_of(" \t\r\n") != std::string::npos) std::abort();
      }
    } catch (const kglm::Error&) {
      // not text, no header with those names, or no valid record: refused, not a crash
    }
  }
  return 0;
}
