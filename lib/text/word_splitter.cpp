#include "text/word_splitter.hpp"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include "core/error.hpp"
#include "text/break_text.hpp"

namespace kglm::text {

WordSplitter::WordSplitter(const std::string& locale) {
  UErrorCode status = U_ZERO_ERROR;
  iterator_.reset(icu::BreakIterator::createWordInstance(icu::Locale(locale.c_str()), status));
  if (U_FAILURE(status) || !iterator_)
    throw Error("ICU word break iterator for locale '" + locale + "': " + u_errorName(status));
}

WordSplitter::~WordSplitter() = default;

void WordSplitter::split(std::string_view text, std::vector<WordSpan>& out) {
  out.clear();
  if (text.empty()) return;
  const BreakText bound(*iterator_, text, "word splitting");
  int32_t begin = iterator_->first();
  for (int32_t end = iterator_->next(); end != icu::BreakIterator::DONE; begin = end, end = iterator_->next()) {
    // A run of white space (no-break spaces included) is a segment of its own: not a word.
    bool blank = true;
    for (int32_t i = begin; i < end && blank;) {
      UChar32 c;
      U8_NEXT(text.data(), i, end, c);
      blank = c >= 0 && u_isUWhiteSpace(c);
    }
    if (!blank) out.push_back({static_cast<uint32_t>(begin), static_cast<uint32_t>(end)});
  }
}

}  // namespace kglm::text
