// Word tokens of a text span with ICU's word BreakIterator (UAX #29 with the locale's rules):
// the segments between boundaries that are not all whitespace, as byte ranges. Punctuation marks
// are tokens of their own, as in CoNLL and WikiANN. kg-align ner tags these words.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <unicode/brkiter.h>

namespace kglm::text {

struct WordSpan {
  uint32_t begin = 0;  // byte offsets into the text given to split()
  uint32_t end = 0;
};

// Not thread-safe: use one per thread.
class WordSplitter {
 public:
  explicit WordSplitter(const std::string& locale = "en");
  ~WordSplitter();
  WordSplitter(const WordSplitter&) = delete;
  WordSplitter& operator=(const WordSplitter&) = delete;

  // The words of text, in order; a word never holds a space, tab or line break.
  void split(std::string_view text, std::vector<WordSpan>& out);

 private:
  std::unique_ptr<icu::BreakIterator> iterator_;
};

}  // namespace kglm::text
