#include "text/break_text.hpp"

#include <string>

#include "core/error.hpp"

namespace kglm::text {

BreakText::BreakText(icu::BreakIterator& iterator, std::string_view text, const char* what) {
  UErrorCode status = U_ZERO_ERROR;
  text_ = utext_openUTF8(nullptr, text.data(), static_cast<int64_t>(text.size()), &status);
  if (U_SUCCESS(status)) iterator.setText(text_, status);
  if (U_FAILURE(status)) {
    utext_close(text_);
    throw Error(std::string("ICU ") + what + ": " + u_errorName(status));
  }
}

BreakText::~BreakText() { utext_close(text_); }

}  // namespace kglm::text
