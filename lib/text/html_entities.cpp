#include "text/html_entities.hpp"

#include <libxml/HTMLparser.h>

#include "text/unicode.hpp"

namespace kglm::text {

namespace {

constexpr size_t kMaxEntityName = 32;

size_t decode_numeric(std::string_view s, uint32_t& cp) {
  // s = "&#..."
  size_t i = 2;
  bool hex = i < s.size() && (s[i] == 'x' || s[i] == 'X');
  if (hex) ++i;
  uint64_t value = 0;
  size_t digits = 0;
  for (; i < s.size() && digits < 8; ++i, ++digits) {
    int d = hex ? hex_digit_value(s[i]) : (s[i] >= '0' && s[i] <= '9' ? s[i] - '0' : -1);
    if (d < 0) break;
    value = value * (hex ? 16 : 10) + static_cast<uint64_t>(d);
  }
  if (digits == 0 || i >= s.size() || s[i] != ';') return 0;
  if (value == 0 || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) value = 0xFFFD;
  cp = static_cast<uint32_t>(value);
  return i + 1;
}

}  // namespace

size_t decode_entity(std::string_view s, uint32_t& cp) {
  if (s.size() < 3 || s[0] != '&') return 0;
  if (s[1] == '#') return decode_numeric(s, cp);
  char name[kMaxEntityName + 1];
  size_t n = 0;
  for (size_t i = 1; i < s.size() && n < kMaxEntityName; ++i) {
    char c = s[i];
    if (c == ';') {
      if (n == 0) return 0;
      name[n] = '\0';
      const htmlEntityDesc* desc = htmlEntityLookup(reinterpret_cast<const xmlChar*>(name));
      if (desc == nullptr) return 0;
      cp = desc->value;
      return i + 1;
    }
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) return 0;
    name[n++] = c;
  }
  return 0;
}

void append_entities_decoded(std::string& out, std::string_view s, bool nbsp_as_space) {
  for (size_t i = 0; i < s.size();) {
    uint32_t cp;
    size_t n = s[i] == '&' ? decode_entity(s.substr(i), cp) : 0;
    if (n == 0) {
      out.push_back(s[i++]);
      continue;
    }
    append_utf8(out, nbsp_as_space && cp == 0xA0 ? ' ' : cp);
    i += n;
  }
}

}  // namespace kglm::text
