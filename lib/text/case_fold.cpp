#include "text/case_fold.hpp"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include "text/unicode.hpp"

namespace kglm::text {

namespace {

UChar32 fold_code_point(UChar32 c) {
  if (c < 0x80) return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
  if (u_isUWhiteSpace(c)) return ' ';
  if (c == 0x2019 || c == 0x2018 || c == 0x02BC) return '\'';
  return u_foldCase(c, U_FOLD_CASE_DEFAULT);
}

}  // namespace

void FoldedText::assign(std::string_view text) {
  folded_.clear();
  origin_.clear();
  const int32_t n = static_cast<int32_t>(text.size());
  int32_t i = 0;
  while (i < n) {
    const int32_t start = i;
    UChar32 c;
    U8_NEXT(text.data(), i, n, c);
    const size_t before = folded_.size();
    if (c < 0)
      folded_.append(text.substr(static_cast<size_t>(start), static_cast<size_t>(i - start)));
    else if (c < 0x80)
      folded_.push_back(static_cast<char>(fold_code_point(c)));
    else
      append_utf8(folded_, static_cast<uint32_t>(fold_code_point(c)));
    origin_.insert(origin_.end(), folded_.size() - before, static_cast<uint32_t>(start));
  }
  origin_.push_back(static_cast<uint32_t>(n));
}

std::string fold_case(std::string_view s) {
  FoldedText f;
  f.assign(s);
  return f.folded();
}

NameMatch classify_name(std::string_view name) {
  const int32_t n = static_cast<int32_t>(name.size());
  int32_t i = 0, code_points = 0;
  bool lower = false, upper = false;
  while (i < n) {
    UChar32 c;
    U8_NEXT(name.data(), i, n, c);
    ++code_points;
    if (c >= 0 && u_islower(c)) lower = true;
    if (c >= 0 && (u_isupper(c) || u_istitle(c))) upper = true;
  }
  if (code_points <= 3 && !upper) return NameMatch::unused;
  return code_points <= 3 || !lower ? NameMatch::exact : NameMatch::folded;
}

}  // namespace kglm::text
