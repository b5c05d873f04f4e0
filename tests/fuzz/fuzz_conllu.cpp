// libFuzzer target: the CoNLL-U reader on arbitrary bytes. Every sentence read has words; their
// IDs were consecutive (word_lines point at lines in order); heads are _ on all or none and within
// the sentence; rewriting a sentence and reading the text back gives the same words. Any abort()
// or sanitizer report is a bug. Seeds in tests/fuzz/conllu-corpus.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "fuzz_file.hpp"
#include "train/tasks/conllu.hpp"

using kglm::train::tasks::ConlluSentence;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const kglm::fuzz::FuzzFile file(data, size);
  if (!file.made()) return 0;
  kglm::ErrorCounter errors(kglm::ErrorLimit(UINT64_MAX));
  try {
    for (const ConlluSentence& s : kglm::train::tasks::read_conllu(file.path(), errors)) {
      if (s.words.empty() || s.words.size() != s.word_lines.size()) std::abort();
      const bool annotated = s.words.front().head != kglm::train::tasks::kNoHead;
      for (size_t i = 0; i < s.words.size(); ++i) {
        if (s.word_lines[i] >= s.lines.size() || (i > 0 && s.word_lines[i] <= s.word_lines[i - 1])) std::abort();
        const int32_t head = s.words[i].head;
        if ((head != kglm::train::tasks::kNoHead) != annotated) std::abort();
        if (head > static_cast<int32_t>(s.words.size()) || head == static_cast<int32_t>(i + 1)) std::abort();
        (void)s.universal_deprel(i);
      }
      const std::string text = kglm::train::tasks::write_conllu_sentence(s);
      const ConlluSentence again = kglm::train::tasks::parse_conllu_sentence(text);
      if (again.words.size() != s.words.size() || again.lines != s.lines) std::abort();
    }
  } catch (const kglm::Error&) {
    // not text, or no valid sentence: refused, not a crash
  }
  return 0;
}
