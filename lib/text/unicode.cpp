#include "text/unicode.hpp"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

namespace kglm::text {

void append_utf8(std::string& out, uint32_t cp) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  char buf[4];
  int32_t n = 0;
  U8_APPEND_UNSAFE(buf, n, cp);  // cp is a valid scalar value, at most 4 bytes
  out.append(buf, static_cast<size_t>(n));
}

std::string upper_first(std::string_view s) {
  if (s.empty()) return {};
  if (static_cast<unsigned char>(s[0]) < 0x80) {
    std::string out(s);
    if (out[0] >= 'a' && out[0] <= 'z') out[0] = static_cast<char>(out[0] - 'a' + 'A');
    return out;
  }
  int32_t i = 0;
  UChar32 cp;
  U8_NEXT(s.data(), i, static_cast<int32_t>(s.size()), cp);
  if (cp < 0) return std::string(s);
  std::string out;
  append_utf8(out, static_cast<uint32_t>(u_toupper(cp)));
  out.append(s.substr(static_cast<size_t>(i)));
  return out;
}

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

int hex_digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_valid_utf8(std::string_view s) {
  int32_t i = 0;
  const int32_t n = static_cast<int32_t>(s.size());
  while (i < n) {
    UChar32 c;
    U8_NEXT(s.data(), i, n, c);
    if (c < 0) return false;
  }
  return true;
}

bool word_char_before(std::string_view text, size_t pos) {
  if (pos == 0 || pos > text.size()) return false;
  const unsigned char c = static_cast<unsigned char>(text[pos - 1]);
  if (c < 0x80) return is_ascii_alnum(static_cast<char>(c));
  // Decode within a 4-byte window so that ICU's int32 indices never see a huge text.
  const size_t start = pos >= 4 ? pos - 4 : 0;
  const std::string_view window = text.substr(start, pos - start);
  int32_t i = static_cast<int32_t>(window.size());
  UChar32 cp;
  U8_PREV(window.data(), 0, i, cp);
  return cp >= 0 && u_isalnum(cp);
}

bool word_char_at(std::string_view text, size_t pos) {
  if (pos >= text.size()) return false;
  const unsigned char c = static_cast<unsigned char>(text[pos]);
  if (c < 0x80) return is_ascii_alnum(static_cast<char>(c));
  const std::string_view window = text.substr(pos, 4);
  int32_t i = 0;
  UChar32 cp;
  U8_NEXT(window.data(), i, static_cast<int32_t>(window.size()), cp);
  return cp >= 0 && u_isalnum(cp);
}

std::string_view trim(std::string_view s) {
  auto blank = [](char c) { return is_space(c) || c == '\n'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace kglm::text
