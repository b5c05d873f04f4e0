// UTF-8 text given to an ICU BreakIterator without a UTF-16 copy (a UText over the bytes, so the
// boundaries are byte offsets), closed when it goes out of scope. The sentence and word
// splitters use it.
#pragma once

#include <string_view>

#include <unicode/brkiter.h>
#include <unicode/utext.h>

namespace kglm::text {

class BreakText {
 public:
  // Throws Error naming `what` when ICU refuses the text.
  BreakText(icu::BreakIterator& iterator, std::string_view text, const char* what);
  ~BreakText();
  BreakText(const BreakText&) = delete;
  BreakText& operator=(const BreakText&) = delete;

 private:
  UText* text_ = nullptr;
};

}  // namespace kglm::text
