// Sentence boundaries of a Document with ICU's BreakIterator (with the locale's abbreviation
// suppressions, e.g. "Dr." in English), never inside a link span. cs-gen and kg-align use it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "text/document.hpp"

#include <unicode/brkiter.h>

namespace kglm::text {

struct Sentence {
  uint32_t begin = 0;  // byte offsets into Document::text, without surrounding whitespace
  uint32_t end = 0;
  int section = -1;         // index into Document::sections, -1 = root (lead) section
  uint32_t first_link = 0;  // Document::links[first_link, last_link) lie inside the sentence
  uint32_t last_link = 0;
};

// Not thread-safe: use one per thread.
class SentenceSplitter {
 public:
  explicit SentenceSplitter(const std::string& locale = "en");
  ~SentenceSplitter();
  SentenceSplitter(const SentenceSplitter&) = delete;
  SentenceSplitter& operator=(const SentenceSplitter&) = delete;

  // Sentences in text order. Line breaks always end a sentence.
  void split(const Document& doc, std::vector<Sentence>& out);

 private:
  std::unique_ptr<icu::BreakIterator> iterator_;
};

}  // namespace kglm::text
